"""NUTS for the crossed random-intercept binomial-logit model (seed 000 Eq. 2 and Eq. 6).

The model (SPEC section 2)::

    successes_c ~ Binomial(trials_c, logistic(eta_c)),   eta_c = mu + sum_k u_k[level_k(c)]
    u_k ~ N(0, sigma_k^2 I),  sigma_k ~ half-Student-t(3, 0, 2.5),  mu ~ Student-t(3, 0, 2.5)

is sampled exactly with numpyro's NUTS on JAX, in coordinates chosen so that a cheap mass
matrix fits the posterior (the one numerical approximation, a checked 1-D quadrature for one
weakly identified term, is item 10).  See ``PARAMETERISATION`` below for the maths
and ``MEASUREMENTS`` for what each idea bought.

PARAMETERISATION AND MOVES
--------------------------
1. Intercept ridge removed exactly.  In a crossed design the likelihood depends on mu and
   the u_k only through ``alpha = mu + sum_k mean(u_k)`` and the deviations
   ``u_k - mean(u_k)``: shifting every level of a term by c and mu by -c changes nothing.
   That flat direction is spread over thousands of coordinates, which a diagonal mass
   matrix cannot see.  We sample alpha directly and write each term as::

       u*_k = a_k(sigma_k) * x_k                     (per level, see 2.)
       u_k  = (u*_k - mean(u*_k)) + sigma_k w_k / sqrt(J_k)

   with one scalar w_k ~ N(0, 1) carrying the mean of u_k (so mean(u_k) ~ N(0, sigma_k^2/J_k)
   exactly), and ``mu = alpha - sum_k sigma_k w_k / sqrt(J_k)`` (unit Jacobian), whose
   Student-t prior is evaluated there.  The deviations get the density of
   N(0, sigma_k^2 (I - 11'/J_k)) on the sum-zero subspace; the one direction of x_k the
   likelihood never sees, mean(u*_k), gets an auxiliary N(0, s_k^2 / J_k) with s_k matched
   to the posterior width of the other coordinates.  The distribution of (mu, u) is
   exactly the model's.  (This is the plain-mean form; item 11 weights the means by
   information and centres nested terms on their hosts.)
2. Per-level partial centring (:mod:`.geometry`): ``a_kj(sigma) = sigma / sqrt(1 + sigma^2 I_kj)``
   with I_kj the Fisher information of level j at a quick penalised fit: the conditional
   posterior sd of u_kj given sigma in the Gaussian approximation.  Centred where the data
   pin a level down, non-centred where the prior dominates, and it follows sigma, so there
   is no funnel at either end.
3. Dense mass matrix over the global block only (alpha, log sigma_k, w_k: 1 + 2K numbers),
   diagonal over the random effects.
4. Start near the mode: chains start at the penalised fit plus about one posterior sd of
   jitter (sigmas spread by a factor ~1.3), the inverse mass matrix starts at the
   conditional variances, so 300 warmup iterations suffice.
5. Cross-chain adaptation: before each slow adaptation window closes every chain gets the
   pooled Welford (co)variance of all chains, and sampling uses the median adapted step size.
6. Partially collapsed Gibbs step after every NUTS transition (``collapsed="joint"``).  The
   terms nested in one small "run" term T (T = model:scaffold per benchmark, with model and
   scaffold; T = benchmark:model:scaffold pooled, with benchmark, model, scaffold,
   benchmark:model, benchmark:scaffold, model:scaffold) enter the likelihood only through
   mu + r, r = sum_k Z_k u_k on T's levels (81 / 416 runs).  Given mu + r, the prior makes
   r ~ N(0, C), C = sum_k sigma_k^2 Z_k Z_k', so we run ``collapsed_steps`` adaptive
   Metropolis steps on (log sigma_G, mu) under p(sigma_G) p(mu) N(mu + r - mu; 0, C) (one
   n_runs x n_runs Cholesky each; 30 to 200 of them, as many as about 5% of a NUTS transition
   buys: :func:`collapsed_steps_for`) and redraw u_G | r, sigma_G by conditioning by kriging.
   It moves the split between confounded terms (a scaffold used on one benchmark only has
   identical scaffold and benchmark:scaffold columns) in one step, which no diagonal mass
   matrix can.
7. Scale moves (``scale_steps``): Metropolis on d along one-parameter groups
   (log sigma + v d, x_kj e^(gamma_j v_k d)), gamma_j = d log a_j / d log sigma, with the
   group's Jacobian e^(d sum_k v_k sum_j gamma_kj) (Liu and Sabatti 2000), for v each
   eigenvector of the adapted covariance of log sigma.  This follows the ridge that ties
   the sigmas to their many weakly informed levels, which NUTS crosses slowly.  Every second
   repeat uses the u-scaling group instead, (log sigma + v d, u_kj e^(v_k d)) in u-space,
   i.e. x_kj -> x_kj e^(v_k d) a_kj(sigma) / a_kj(sigma'), Jacobian prod_j e^(v_k d) a_kj(sigma) /
   a_kj(sigma'): it also rescales the levels the data pin down (the logit's latent-scale ridge).
   Kept after measurement (TB2: no post-warmup divergence in 11,600 draws over five seeds).
8. Hierarchical gather: a term nested in another is summed onto the host's levels first,
   so the likelihood gathers 3 terms per cell instead of 10 (pooled: 1.2 ms instead of 3.8 ms
   per gradient on one core).
9. One CPU device per chain (``XLA_FLAGS=--xla_force_host_platform_device_count``, set by
   :mod:`ddr_explorer.core.model` when imported before jax), chains pmapped: 4 chains on 2
   cores never wait for each other's trees, which vmapped chains do.  A device with one chain
   runs it without a vmap (:func:`_per_device`): a batch of one doubled the cost of every
   gradient.  float32.
10. One term integrated out (``marginalise="auto"``, :mod:`.quadrature`).  A term whose many
   levels the data barely inform (sigma^2 I <= 2 at every level, at least 1,000 levels: the
   pooled model's benchmark:task:model, 27,427 levels of 1.5 single-trial cells) is integrated
   out of the likelihood level by level by Gauss-Hermite quadrature, after a check that the
   rule is accurate on the data; its log sigma becomes the last global coordinate.  Its sigma
   no longer has to drag thousands of coordinates along the ridge they form with it, and NUTS
   has that many fewer coordinates.  Its random effects are not drawn (nothing downstream but
   PSIS-LOO uses a task-level term's effects, and LOO refits with ``marginalise="off"``).  The
   rule's accuracy is checked again at the posterior, and a fit where it fails is reported as
   not converged.
11. Centring on the data (``nested_centring=True``, the default).  (a) Each term's deviations are
   centred with its levels' information shares pi_kj = I_kj / sum_j I_kj (I: Fisher
   information at the rough fit) instead of plain means, with m_k = pi_k'u_k = sigma_k |pi_k| w_k
   and the auxiliary on pi_k'(a_k x_k).  Then alpha = mu + sum_k m_k is the information-weighted
   mean of eta: the number the data pin down (to about 1/sqrt(sum n p (1-p))), which no
   deviation moves.  With plain means a level that holds most of the data (BRIDGE's swebench:
   79,000 of 85,000 trials) tied alpha to its own deviation along a direction far narrower than
   either coordinate's posterior width.  The prior is still N(0, sigma^2 I) on u_k = dev_k + m_k,
   evaluated exactly.  (b) Nested centring: a term C is centred on its host chain,
   ``u*_C = a_C x_C - omega_C S_C`` with S_C the deviations of C's host, its host's host, ...
   (the host: the term with most levels among those whose facets C's contain) and
   omega = c1 a^2 = sigma^2 I / (1 + sigma^2 I) the level's own centring weight: partial
   hierarchical centring (Gelfand, Sahu and Carlin 1995; Papaspiliopoulos, Roberts and Skold
   2003).  A task its data pin down then carries the total of its chain and its benchmark
   leaves the likelihood, whose information it only ever had through its tasks; the host's own
   scale a uses the information its hosted terms leave it (:func:`.geometry.nested_information`).
   A host is used only where its information drops at least
   :data:`.geometry.MIN_ABSORBED_RATIO`-fold (benchmark:task on benchmark in the pooled model;
   no pair in the per-benchmark model, where centring task:model and task:scaffold on task cost
   a third of TB2's bulk ESS).  Both are exact changes of variables
   (tests/model/test_parameterisation.py checks the density and the Jacobian at random points).

The run is split into jitted chunks of ``chunk_size`` iterations (a ``lax.fori_loop`` over
numpyro's functional ``sample_kernel`` and the moves above), so the caller sees progress and
can cancel between chunks; adaptation state travels in the kernel state across chunks and
the draws do not depend on the chunk size.  Same seed and settings -> identical draws.

MEASUREMENTS
------------
Measured 2026-11-30 on the shared 2-core box: rows marked "idle" with nothing else running, the
others while four other engineers ran fits and GUI tests (load average 7-11: wall times inflated
2-5x and noisy); "CPU" is the fit process's CPU seconds
(all threads), which on 2 idle cores is close to 2x the wall of the parallel phases plus the
single-threaded compile.  Defaults: 4 chains x (300 warmup + 500 draws) in the rows below up to
the evening session (700 draws since, :data:`DEFAULT_DRAWS`), target_accept 0.85,
float32, collapsed="joint", scale_steps=6 (rows not marked "scale_steps 6" or "defaults (scale_steps
6)" used the earlier default, 2), marginalise="auto" where a row says "integrated", 30 collapsed
steps.  The TB2 and HAL-scale tables were measured before item 11 (nested_centring) and the
automatic collapsed steps, which leave both corpora at 30 steps; their effect is in the BRIDGE
paragraph at the end.  ESS: min bulk ESS over
the variance components; R-hat: max split R-hat; div: post-warmup divergences.

======================================  =======  =====  =======  =====  =======  ===  ==========
config (TB2, per-benchmark, Eq. 2)      wall s   CPU s  min ESS  ESS/s  max R^   div  vs ref
======================================  =======  =====  =======  =====  =======  ===  ==========
defaults, lone chain without vmap, idle  32.6     58     1140     35.0   1.003    0    7.3x
plain numpyro NUTS, SAME RUN, idle       53.8     --     256      4.76   1.012    0    1x
defaults (scale_steps 6), idle          42.4     73     1122     26.5   1.001    0    6.0x
plain numpyro NUTS, that run, idle       58.3     --     256      4.39   1.012    0    1x
scale_steps 2, before the speed-ups     40.5     72     1046     25.8   1.005    0    5.8x
plain numpyro NUTS, that run             57.6     --     256      4.45   1.012    0    1x
collapsed off, scale_steps 0, idle      29.6     --     159      5.4    1.026    0
  same, 4 x (500 + 1000), idle           43.7     --     472      10.8   1.010    0
defaults, seed 0                        142.5    74     1046     7.3    1.0045   0    --
defaults without u-scaling, seed 0      147.5    --     1115     7.6    1.0028   0    --
draws 300, seed 1                       60.4     --     589      9.8    1.0057   0
draws 300, seed 2                       67.8     --     708      10.4   1.0055   0
draws 300, seed 4 (load 11)             404.3    65     667      1.7    1.011    0
draws 1500, seed 3                      304.0    --     3454     11.4   1.0023   0
plain numpyro NUTS (PERF-NOTES, idle)   269      --     377      1.40   --       --   1x
======================================  =======  =====  =======  =====  =======  ===  ==========

The idle-box rows were measured after the others had finished.  Latest (top row, session of
2026-11-30 evening, one chain per device run without a vmap): compile 8.8 s, warmup 8.8 s, sampling
12.9 s, 32.6 s in all: the 60 s target is met on 2 idle cores, and plain numpyro NUTS measured in
the same run (bench_sampler.py --corpus tb2; every term non-centred, diagonal mass,
4 x (500 + 500), 127 leapfrog steps per draw at step size 0.030-0.036) took 53.8 s and did not
converge (ESS 256, R-hat 1.012): ours is 7.3x in ESS/s (6.0x before the vmap change: compile 14.0 s,
warmup 9.9 s, sampling 15.3 s).  (An earlier version of the benchmark
stopped the reference's clock when ``MCMC.run`` returned, before JAX had computed the draws, and
reported 7.8 s; the clock now stops on ``block_until_ready`` of the draws.)  Per leapfrog step
the two cost about the same (in numpyro's kernel, one chain, before the slice sums described
below: ours 200-216 us per gradient, plain 171 us; a standalone value-and-gradient after them:
ours 129 us, plain 99 us): ours wins by needing 63 steps per draw instead of 127 and by mixing
the sigmas better.  PERF-NOTES' 270 s is 4.7x the 57.6 s measured here (conditions unknown).
Post-warmup divergences: none in 11,600 TB2 draws over five seeds with
the u-scaling repeat (and none in 2,000 without it); the one divergence measured earlier did not
reproduce.  Warmup divergences (about 20 per fit, 5 per chain) sit at iteration 1 and at the
first iterations after each slow adaptation window closes (iterations 101, 151, 251 of 300):
numpyro restarts dual averaging there with its prox centre at log(10 eps), so the first
proposals after a restart use a step several times too large; they are rejected, the step
shrinks within a few iterations, and warmup draws are discarded, so they do not bias anything.
Every TB2 draw used exactly 63 leapfrog steps (tree depth 6) at a step size of 0.077-0.083.
300 draws per chain is not enough for a reliable verdict: seed 4 ended with R-hat(scaffold)
1.011 (ESS 667): split R-hat on 8 half-chains of 150 still fluctuates by about 0.005, so the
default stays at 500 draws (ESS >= 1000 in both 500-draw runs).

HAL-scale pooled corpus (bench/simulate.py seed 0: 9 benchmarks, 54 models, 13 scaffolds,
1,117 tasks, 41,354 cells, 32,014 random effects; pooled preset, Eq. 6), idle 2-core box:

============================================  ======  =======  =====  ======  =========================
config (pooled, Eq. 6)                        wall s  min ESS  ESS/s  max R^  converged
============================================  ======  =======  =====  ======  =========================
4 x (300 + 700), integrated (defaults)        426     697      1.64   1.004   yes (7.1 min)
4 x (300 + 600), integrated                   401     526      1.31   1.004   yes (6.7 min)
4 x (300 + 500), integrated                   355     381      1.07   1.008   no (ESS 381, bms)
4 x (300 + 600), integrated, autodiff, vmap   634     461      0.73   1.008   yes
4 x (300 + 1000), not integrated, no vmap     640     506      0.79   1.006   yes
4 x (300 + 1000), before the vmap change      742     465      0.63   1.006   yes (12.4 min)
2 x (300 + 2000), defaults                    791     332      0.42   1.003   no (ESS)
4 x (300 + 1000), max_tree_depth 6           451     163      0.36   1.012   no (ESS, R-hat)
4 x (300 + 500), scale_steps 6 (defaults)     422     264      0.63   1.022   no (ESS, R-hat)
4 x (300 + 500), scale_steps 2                412     158      0.38   1.008   no (ESS)
4 x (300 + 500), scale_steps 16               551     245      0.44   1.005   no (ESS)
same before the BLAS-thread limit             829     159      0.19   1.014   no
first version (loaded box, 2026-11-30 a.m.)   4,071   158      0.04   1.019   no
============================================  ======  =======  =====  ======  =========================

The defaults row (bench_sampler.py --corpus pooled --no-reference): compile 2.2 s (from the disk
cache; 10-13 s cold), warmup 135.6 s, sampling 284.9 s, no divergence; the 10-minute target is met
on 2 idle cores.  Sampled level by level, the slowest component was always benchmark:task:model (27,427 levels,
about 1.5 single-trial cells each, 0.12 effective draws per draw); neither two longer chains (less
oversubscription) nor shorter trees (63 steps instead of 127) bought ESS per second for it (0.42
and 0.36 against 0.63).  Integrated out by quadrature (item 10) it gets 0.52 effective draws per
draw (ESS 1,231 of 2,400), and the slowest components become those of the collapsed block
(benchmark:model:scaffold, model:scaffold: about 0.2 per draw), hence the 700 default draws.  Per
iteration the integrated fit costs 0.42 s of the 2 cores in sampling against 0.47 s sampled level
by level: the quadrature's gradient (0.9 ms, written out; autodiff through the products took
2.6x as long, and that version's 634 s row shows it) is paid back by NUTS on 4,587 coordinates
instead of 32,014.  Running a lone chain per device without a vmap (item 9) took the level-by-level
fit from 742 s to 640 s with the same draws.  What bought the first
10x: the gradient went from 4.1 ms to 0.8 ms per evaluation on one core once the per-term sums
became slice sums (a ``segment_sum`` into K segments fused badly with its producer on XLA CPU),
and the collapsed move from 158 ms to 43 ms per chain once OpenBLAS ran one thread per chain
device (:func:`_single_threaded_blas`).  Per NUTS step a chain now costs about 0.8 ms of the 2
cores (4 chains; 1.2 ms for one chain alone: numpyro's tree building adds about 0.4 ms per step on
32,014 coordinates), 127 steps per draw, plus about 40 ms per iteration for the collapsed move.
Posterior means next to the truth (the 412 s run): benchmark 1.78 (2.45, 9 levels), benchmark:task
2.46 (2.41), model 0.73 (0.78), scaffold 0.66 (0.79), benchmark:model 0.67 (0.52),
benchmark:scaffold 0.65 (0.69), model:scaffold 0.30 (0.36), benchmark:task:model 0.85 (0.88),
benchmark:task:scaffold 1.05 (1.03), benchmark:model:scaffold 0.51 (0.55).  The plain-NUTS
reference was not run on this corpus (PERF-NOTES: unfinished after 50 minutes; the issue: R-hat up
to 5 with 2 x (250 + 250)).  The integrated fits agree with them: posterior means of sigma from the
401 s run 1.786, 2.461, 0.730, 0.651, 0.665, 0.651, 0.300, 0.851, 1.047, 0.514 in the order above
(the 640 s level-by-level run: 1.792, 2.460, 0.730, 0.654, 0.664, 0.651, 0.290, 0.848, 1.048,
0.518).  Quadrature accuracy on this corpus: 8 nodes, summed log-likelihood error 3.3e-3 nats at
the rough sigma 0.81 and 1.5 times it.

On a small pooled data set (4 benchmarks, 1,495 single-trial cells, 4 x (250 + 250), measured with
scale_steps 2 before the speed-ups) the same picture: the collapsed block mixes well (bulk ESS
220-500), benchmark:task (ESS 40), benchmark:task:model (17) and benchmark:task:scaffold (19) trade
variance among themselves slowly: with one Bernoulli trial per cell the two cell-level interactions
are barely identified.

Parameter recovery (bench/bench_recovery.py, 4 chains x (250 + 250)): per-benchmark shape (30
tasks, 8 models, 5 scaffolds, 16 runs, 3 trials, TB2 truth), 10 data sets: coverage of the 90%
central intervals of sigma^2 0.92 +- 0.04 over 60 intervals (task 0.80, model 1.00, scaffold
0.90, task:model 1.00, task:scaffold 0.80, model:scaffold 1.00, each +- <= 0.13), median
log(posterior median / truth) within -0.27..+0.07; min bulk ESS 192-499 per fit (1,000 draws),
max R-hat 1.007-1.024, no divergence.  Pooled shape (4 benchmarks, 16 models, 7 scaffolds,
165 tasks, about 1,500 single-trial cells, HAL truth of seed 000 Table 8), 10 data sets: coverage
0.92 +- 0.03 over 100 intervals (benchmark 0.90, benchmark:task 0.70 +- 0.14, benchmark:task:scaffold
and benchmark:task:model 0.80 +- 0.13, the other six 1.00), but NONE of the 10 short fits
converged (max R-hat 1.03-1.33, min bulk ESS 10-69 of 1,000 draws): on small single-trial pooled
data the cell-level interactions (benchmark:task:model ~ one level per cell) and benchmark:task
mix slowly, and their posterior medians sit above the truth (median log ratio of sigma^2 +1.00 for
benchmark:task:model: with one Bernoulli trial per cell that term is barely identified, so the
posterior is wide and prior-led).  Coverage is still near nominal, so the posterior the chains
explore is right; the chains are too short for it.  Rerun with 20 data sets per shape (evening of
2026-11-30, benchmark:task:model of the pooled shape integrated out, 1,210 levels): per-benchmark
0.91 +- 0.03 over 120 intervals (task 0.85, model 0.95, scaffold 0.90, task:model 1.00,
task:scaffold 0.80, model:scaffold 0.95; 1 of 20 short fits converged); pooled 0.935 +- 0.017 over
200 intervals (benchmark 0.90, benchmark:task 0.80, model 0.95, benchmark:task:scaffold 0.85,
benchmark:task:model 0.85, the other five 1.00; none of the short fits converged, min bulk ESS
16-122 of 1,000 draws).  With longer chains (2026-11-30, night; bench_recovery.py now prints the
coverage of the converged fits alone): per-benchmark at the app's defaults 4 x (300 + 700), 10.7 s
per fit: 15 of 20 fits converged (the other five: max R-hat 1.011-1.024, min bulk ESS 193-636;
task:scaffold the slowest term in the two inspected), coverage 0.91 +- 0.03 over all 120
intervals, 0.92 +- 0.03 over the 90 of converged fits.  Pooled at 4 x (300 + 1500), 35 s per
fit: 9 of 20 converged (min bulk ESS 104-389 in the others), coverage 0.925 +- 0.019 over 200 intervals (benchmark:task 0.75 +- 0.10, the lowest),
0.944 +- 0.024 over the 90 of converged fits.  The slow direction is the one the three task-level
sigmas (benchmark:task, benchmark:task:scaffold, benchmark:task:model) share: their log sigmas
correlate +0.5 to +0.8 a posteriori (one Bernoulli trial per cell scales them together).  On
the hardest data set (seed 1003, 4 x (300 + 700)) the slowest term's bulk ESS was 56 at the
defaults, 129 with scale_steps 16, 151 with 1,000 warmup iterations and 159 with 2,100 draws;
such a fit is reported not converged with the number of draws to ask for.  With item 11
(2026-12-01, same 20 pooled data sets and settings, 37 s per fit): 7 of 20 converged (min bulk ESS
236-941, max R-hat up to 1.020), coverage 0.94 +- 0.02 over 200 intervals (benchmark:task,
benchmark:task:model 0.80 +- 0.09, the lowest), 0.94 +- 0.03 over the 70 of converged fits.

BRIDGE (shared corpora, all_a_pyirt.jsonl: 5 benchmarks, 943 tasks, 132 models, 27 scaffolds,
82,453 cells of 85,453 trials; swebench holds 79,000 of them), pooled, 2 cores:

=================================================  ======  =====  =======  =======  ======  =========
config (pooled, Eq. 6)                             wall s  steps  step sz  min ESS  max R^  converged
=================================================  ======  =====  =======  =======  ======  =========
defaults (items 1-11, 200 collapsed steps)         1,570   127    0.027    525      1.005   yes
items 1-11 with 30 collapsed steps                 1,515   127    0.026    62       1.054   no
before item 11, 4 x (300 + 200), integrated        967     255    0.011    28       1.102   no
before item 11, 4 x (400 + 700), btm sampled       3,937   255    --       46       1.062   no
=================================================  ======  =====  =======  =======  ======  =========

(steps: leapfrog steps per draw; the two "before" rows partly shared the cores with other work.)
The defaults row (2026-12-01, seed 0, 4 x (300 + 700)): warmup 497 s, sampling 1,057 s, no
divergence (the same draws again through ``ddr fit … --design pooled --json``: 1,552 s, quadrature
error at the posterior 4.7e-3 nats); the slowest components benchmark:task:scaffold (ESS 525) and benchmark:task:model
(802), the run-level block 1,021-1,144.  Posterior means of sigma: benchmark 3.29, benchmark:task
3.49, model 1.43, scaffold 0.87, benchmark:model 0.68, benchmark:scaffold 1.05, model:scaffold 0.66,
benchmark:task:model 0.93, benchmark:task:scaffold 0.52, benchmark:model:scaffold 0.95.
How the saturated trees were found (bench/bench_geometry.py: the largest eigenvalues of the
Hessian in the coordinates the adapted mass matrix whitens, 2 x 300 warmup): 8,229 before item 11,
the top eigenvector alpha (35%) and the benchmark levels (49%): with plain-mean centring the data
pin alpha + (swebench's deviation) + (its tasks' mean) to about 0.008 while each is wide, a
correlation no diagonal mass can hold, so the step size fell to 0.011 and every tree hit depth 8.
Nested centring alone (all candidate hosts) brought it to 4,061 (step 0.017, still 255 steps);
with the information-weighted centring 633 (step 0.029, 127 steps); with hosts only where the
host is absorbed (item 11) 789, same steps.  What remained was the run-level block: 103 of 132
models have a single run, so the sigmas of model, benchmark:model, model:scaffold and
benchmark:model:scaffold trade off along a curved ridge; the collapsed move's 30 random-walk steps
left sigma[benchmark:model:scaffold] at lag-1 autocorrelation 0.86-0.95 in two chains (ESS 62), and
200 steps (:func:`collapsed_steps_for`, 4% more time) gave ESS 1,104.  On TB2 no host qualifies and
the information weights alone changed the smallest bulk ESS from 1,373 to 1,624 (same run
conditions); on the HAL-scale corpus (benchmark:task hosted on benchmark) the defaults converged in
478 s (min ESS 723, R-hat 1.004).
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from .design_matrix import DesignMatrix, build_design
from .formula import ModelSpec, as_spec
from .geometry import (MIN_ABSORBED_RATIO, CollapsedGroup, RoughFit, collapsed_group, host_chains, level_scales,
                       log_scale, nested_information, rough_fit)
from .quadrature import NO_CANDIDATE, MarginalTerm, choose_marginal_term, eta_without, make_log_likelihood, rule_error

ProgressCallback = Callable[[str, int, int, "float | None"], None]
CancelCallback = Callable[[], bool]


#: Post-warmup draws per chain by default: 4 x 700 draws bring the slowest component of the HAL-scale
#: pooled fit to bulk ESS of about 530 (it had 381 with 500: 0.19 effective draws per draw, measured),
#: and cost TB2 about 5 s more than 500.
DEFAULT_DRAWS = 700


#: Called once after warmup as ``WARMUP_HOOK(state=, aux=, potential_gen=, offset=, layout=)`` with the
#: chains' kernel states (adapted mass matrix and step size included): bench/bench_geometry.py uses it
#: to find the direction that limits the step size.  None in the app.
WARMUP_HOOK: Callable | None = None


class FitCancelled(RuntimeError):
    """The user cancelled the fit (raised between sampler chunks)."""


@dataclass(frozen=True)
class SamplerSettings:
    """Settings of :func:`fit`.

    Attributes
    ----------
    draws, warmup, chains
        Post-warmup draws per chain, warmup iterations per chain, number of chains.
    seed
        Same seed and settings -> identical draws.
    target_accept
        NUTS target acceptance probability (Stan's adapt_delta).
    max_tree_depth
        NUTS maximum tree depth (at most 2^depth - 1 leapfrog steps per draw).
    device
        ``"auto"`` (GPU when JAX sees one, else CPU), ``"cpu"`` or ``"gpu"``.
    parameterisation
        ``"auto"`` (per-level partial centring), ``"term"`` (centred or non-centred per
        term), ``"centered"`` or ``"noncentered"``.
    dense_globals
        Dense mass matrix over (alpha, log sigma, w); diagonal otherwise.
    chunk_size
        NUTS transitions per jitted chunk (progress and cancellation granularity).
    keep_random_effects
        Keep the draws of every random effect (needed for ranks).
    float64
        Sample in double precision (slower; float32 is accurate enough for these sums).
    collapsed, collapsed_steps
        ``"joint"`` (default): after every NUTS transition, a partially collapsed Gibbs step
        updates mu and the variance components of the terms nested in one small "run" term
        (model:scaffold per benchmark; benchmark:model:scaffold pooled) with
        ``collapsed_steps`` Metropolis steps on their marginal given the run sums, then
        redraws those terms' random effects exactly.  ``"gibbs"``: the same, with the nested
        terms (other than the run term) taken out of NUTS.  ``"off"``: NUTS alone.
        ``collapsed_steps=None`` (default): :func:`collapsed_steps_for` chooses 30 to 200
        steps, about 5% of a NUTS transition's time.
    scale_steps
        Repeats of the scale moves (module docstring, item 7) after every NUTS transition, one
        Metropolis step per eigen-direction of the log-sigma covariance each; odd repeats use
        the u-scaling group.  6 by default: on the HAL-scale pooled corpus 6 repeats instead of
        2 raised the bulk ESS of benchmark:task:model from 158 to 264 and of benchmark:task
        from 548 to 1,046 for 2.4% more wall time; 16 gave no more (245).
    pool_adaptation
        Pool the warmup (co)variance estimates of all chains at each adaptation window and
        give every chain the median adapted step size (cross-chain adaptation).
    marginalise
        ``"auto"`` (default): integrate one term with many weakly informed levels (the pooled
        model's benchmark:task:model) out of the likelihood by Gauss-Hermite quadrature per level
        when :func:`.quadrature.choose_marginal_term` finds the quadrature accurate on the data
        (module docstring, item 10); its sigma is sampled, its random effects are not kept.
        ``"off"``: sample every term's levels.
    nested_centring
        Centre on the data (module docstring, item 11): each term's deviations centred with its
        levels' information shares, so that alpha is the number the data pin down, and a term
        centred on its host where the host is absorbed by it (benchmark:task on benchmark in
        the pooled model), so that a coarse level its nested levels explain leaves the
        likelihood.  False: plain means and each term on its own (items 1-2 only).
    """

    draws: int = DEFAULT_DRAWS
    warmup: int = 300
    chains: int = 4
    seed: int = 0
    target_accept: float = 0.85
    max_tree_depth: int = 8
    device: str = "auto"
    parameterisation: str = "auto"
    dense_globals: bool = True
    chunk_size: int = 25
    keep_random_effects: bool = True
    float64: bool = False
    collapsed: str = "joint"
    collapsed_steps: int | None = None
    scale_steps: int = 6
    pool_adaptation: bool = True
    marginalise: str = "auto"
    nested_centring: bool = True

    def __post_init__(self):
        if self.draws < 1 or self.warmup < 0 or self.chains < 1:
            raise ValueError(f"need draws >= 1, warmup >= 0 and chains >= 1; got draws={self.draws}, "
                             f"warmup={self.warmup}, chains={self.chains}.")
        if not 0 < self.target_accept < 1:
            raise ValueError(f"target_accept must lie in (0, 1), got {self.target_accept}.")
        if self.device not in ("auto", "cpu", "gpu"):
            raise ValueError(f"device must be 'auto', 'cpu' or 'gpu', got '{self.device}'.")
        if self.chunk_size < 1:
            raise ValueError("chunk_size must be at least 1.")
        if self.collapsed_steps is not None and self.collapsed_steps < 1:
            raise ValueError(f"collapsed_steps must be at least 1 (or None: automatic), got {self.collapsed_steps}.")
        if self.collapsed not in ("joint", "gibbs", "off"):
            raise ValueError(f"collapsed must be 'joint', 'gibbs' or 'off', got '{self.collapsed}'.")
        if self.parameterisation not in ("auto", "term", "centered", "noncentered"):
            raise ValueError(f"parameterisation must be auto, term, centered or noncentered, got "
                             f"'{self.parameterisation}'.")
        if self.marginalise not in ("auto", "off"):
            raise ValueError(f"marginalise must be 'auto' or 'off', got '{self.marginalise}'.")


@dataclass
class Posterior:
    """Draws of the model of a :class:`~.formula.ModelSpec` and how they were obtained.

    Attributes
    ----------
    sigma
        Term name -> (chains, draws) standard deviations sigma_F on the logit scale.
    mu
        (chains, draws) intercept.
    random_effects
        Term name -> (chains, draws, n_levels) random intercepts u_F (empty when not kept).
    levels
        Term name -> DataFrame of the identifying columns of each level (row j = index j).
    spec, settings
        The model and the sampler settings.
    device
        Where it ran (``"cpu"`` with the number of devices, or the GPU's name).
    wall_seconds
        Wall time of :func:`fit`, design to diagnostics.
    timings
        Seconds per phase (design, rough_fit, compile, warmup, sampling, diagnostics).
    sample_stats
        (chains, draws) arrays: diverging, energy, num_steps, tree_depth, accept_prob, step_size.
    diagnostics
        :class:`~.diagnostics.Diagnostics` of the variance components.
    n_cells, n_trials
        Size of the data.
    notes
        Design remarks (folded terms, ...).
    integrated
        Terms integrated out of the likelihood by quadrature (``SamplerSettings.marginalise``):
        their sigma is sampled, their random effects have no draws.
    quadrature_error
        For an integrated term: the quadrature's summed log-likelihood error (nats) at the last
        draw and the 97.5% quantile of its sigma (:func:`.quadrature.rule_error`); None otherwise.
    """

    sigma: dict[str, np.ndarray]
    mu: np.ndarray
    random_effects: dict[str, np.ndarray]
    levels: dict[str, pd.DataFrame]
    spec: ModelSpec
    settings: SamplerSettings
    device: str
    wall_seconds: float
    timings: dict[str, float]
    sample_stats: dict[str, np.ndarray]
    diagnostics: "object | None" = None
    n_cells: int = 0
    n_trials: int = 0
    notes: list[str] = field(default_factory=list)
    integrated: list[str] = field(default_factory=list)
    quadrature_error: "float | None" = None

    @property
    def term_names(self) -> tuple[str, ...]:
        return tuple(self.sigma)

    @property
    def variance_components(self) -> dict[str, np.ndarray]:
        """Term name -> (chains, draws) sigma_F^2, plus ``"residual"`` = pi^2/3."""
        out = {k: v.astype(np.float64) ** 2 for k, v in self.sigma.items()}
        out["residual"] = np.full_like(self.mu, self.spec.residual_variance, dtype=np.float64)
        return out

    def variance_draws(self) -> dict[str, np.ndarray]:
        """Term name -> (chains x draws,) sigma_F^2 draws, chains concatenated (for
        :class:`ddr_explorer.core.reliability.VarianceComponents`)."""
        return {k: (v.astype(np.float64) ** 2).ravel() for k, v in self.sigma.items()}

    @property
    def converged(self) -> bool:
        return bool(self.diagnostics is not None and self.diagnostics.converged)

    def summary(self) -> pd.DataFrame:
        """Posterior mean, sd and 95% equal-tailed interval of each sigma (and mu)."""
        rows = []
        for name, d in [*self.sigma.items(), ("mu", self.mu)]:
            f = np.asarray(d, np.float64).ravel()
            rows.append({"term": name, "mean": f.mean(), "sd": f.std(ddof=1),
                         "q2.5": np.quantile(f, 0.025), "q97.5": np.quantile(f, 0.975)})
        df = pd.DataFrame(rows).set_index("term")
        if self.diagnostics is not None:
            df = df.join(self.diagnostics.table[["r_hat", "ess_bulk", "ess_tail"]], how="left")
        return df

    def to_inference_data(self, random_effects: bool = True):
        """An ``arviz.InferenceData`` with posterior (sigma_<term>, mu, u_<term>) and sample_stats."""
        from .diagnostics import to_inference_data

        return to_inference_data(self, random_effects=random_effects)


# -- compiled-code cache -------------------------------------------------------------------
#: Upper bound of the compiled-sampler cache on disk (JAX evicts least recently used entries).
COMPILATION_CACHE_BYTES = 512 * 2 ** 20


def _enable_compilation_cache() -> str | None:
    """Keep JAX's compiled samplers on disk, so that a refit of the same shapes (another seed,
    prior or number of draws; the app restarted) skips most of the compile: TB2's chunk compiles
    in 11.4 s cold and 3.5 s from the cache (measured).  The folder is ``$DDR_JAX_CACHE_DIR``,
    else ``jax-compiled`` in the fit cache folder; ``DDR_JAX_CACHE_DIR=off`` disables it, and a
    cache folder the user configured in JAX is left alone.  JAX stores serialised executables,
    not pickles, and recompiles when an entry cannot be read.
    """
    import os

    import jax

    env = os.environ.get("DDR_JAX_CACHE_DIR", "")
    if env.lower() in ("off", "0", "none"):
        return None
    current = jax.config.jax_compilation_cache_dir
    if current:
        return current
    if env:
        path = env
    else:
        from ..files import default_cache_dir

        path = str(default_cache_dir() / "jax-compiled")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:  # a read-only home: compile every time, as before
        return None
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)
    try:  # JAX bounds the folder only with filelock installed (about 1 MB per compiled shape)
        import filelock  # noqa: F401
    except ImportError:
        pass
    else:
        jax.config.update("jax_compilation_cache_max_size", COMPILATION_CACHE_BYTES)
    return path


# -- where the chains run ------------------------------------------------------------------
def _single_threaded_blas():
    """Limit OpenBLAS (which JAX's CPU Cholesky and triangular solves call) to one thread.

    The chains run as parallel CPU devices, one thread each; a multi-threaded BLAS inside each
    of them oversubscribes the cores and spins: the collapsed move of the pooled model (a
    416 x 416 Cholesky per Metropolis step) took 158 ms per chain with the default threads and
    43 ms with one (2 chains on 2 cores, measured).
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a declared dependency; without it only slower
        return contextlib.nullcontext()
    # threadpoolctl limits the libraries loaded when it is entered: load the LAPACK that jaxlib's
    # CPU kernels use (scipy's) first, or the limit misses it
    import scipy.linalg.cython_lapack  # noqa: F401

    return threadpool_limits(limits=1, user_api="blas")


def _devices(kind: str):
    import jax

    if kind in ("auto", "gpu"):
        try:
            gpus = jax.devices("gpu")
        except RuntimeError:
            gpus = []
        if gpus:
            return gpus, "gpu"
        if kind == "gpu":
            raise RuntimeError("device='gpu' was asked for but JAX sees no GPU; use device='auto' or 'cpu'.")
    return jax.devices("cpu"), "cpu"


def _chain_layout(chains: int, n_devices: int) -> int:
    """Devices to spread the chains over: the largest divisor of chains not above n_devices."""
    for d in range(min(chains, n_devices), 0, -1):
        if chains % d == 0:
            return d
    return 1


# -- the parameterised log density --------------------------------------------------------
@dataclass
class _Layout:
    """The terms NUTS samples: their coordinates and the potential's constants."""

    terms: list[int]  # design indices, in design order
    J: np.ndarray  # (K,) levels per NUTS term
    offsets: np.ndarray  # (K+1,)
    c0: np.ndarray  # (L,) scale constants per level: a = sigma / sqrt(c0 + c1 sigma^2)
    c1: np.ndarray
    sref: np.ndarray  # (K,) auxiliary width of mean(u*_k)
    sigma_df: np.ndarray
    sigma_scale: np.ndarray
    mu_df: float
    mu_loc: float
    mu_scale: float
    # nested centring (item 11): per NUTS position, its host chain as (ancestor position, map
    # from this term's levels to the ancestor's), closest ancestor first; empty for a root term
    chains: list = field(default_factory=list)
    precision: np.ndarray | None = None  # (L,) conditional precision of each level at the rough fit
    pi: np.ndarray | None = None  # (L,) centring weights, summing to 1 per term (item 11)

    @property
    def pi_norm(self) -> np.ndarray:
        return np.array([np.sqrt(np.sum(self.pi[a:b] ** 2)) for a, b in zip(self.offsets[:-1], self.offsets[1:])])

    @property
    def uniform_pi(self) -> bool:
        return all(np.allclose(self.pi[a:b], 1.0 / (b - a), rtol=0, atol=1e-15)
                   for a, b in zip(self.offsets[:-1], self.offsets[1:]))

    @property
    def K(self) -> int:
        return len(self.terms)

    @property
    def nested(self) -> bool:
        return any(self.chains)

    @property
    def L(self) -> int:
        return int(self.offsets[-1])


def _make_layout(design: DesignMatrix, spec: ModelSpec, rough: RoughFit, mode: str, terms: list[int],
                 nested: bool = True, min_ratio: float = MIN_ABSORBED_RATIO) -> _Layout:
    J = design.n_levels[terms].astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(J)])
    cols = [spec.term(nm).columns for nm in design.term_names]
    chains = host_chains(design, cols, list(terms), rough, min_ratio) if nested else [[] for _ in terms]
    info = list(rough.info)
    if nested and any(chains):
        # a host level's information is what its hosted terms leave it (item 11)
        for i, eff in enumerate(nested_information(design, rough, list(terms), chains)):
            info[terms[i]] = eff
    scales_all = level_scales(rough, mode, info)
    scales = [scales_all[k] for k in terms]
    sref = np.empty(len(terms))
    prec0 = []
    for i, k in enumerate(terms):
        a0 = np.exp(log_scale(np.log(rough.sigma[k]), *scales[i]))
        prec0.append(info[k] + 1.0 / rough.sigma[k] ** 2)
        sd_x = np.sqrt(1.0 / prec0[-1]) / a0
        # the auxiliary width of mean(a_k x_k): as wide, in x-space, as a typical level
        sref[i] = float(np.median(sd_x) / np.sqrt(np.mean(1.0 / a0 ** 2)))
    if nested:
        # the deviations are centred with the levels' information shares, so that alpha is the
        # information-weighted mean of eta, the number the data pin down (item 11)
        pis = []
        for k in terms:
            inf = rough.info[k] + 1e-3 * np.mean(rough.info[k]) + 1e-12
            pis.append(inf / inf.sum())
        pi = np.concatenate(pis)
    else:
        pi = np.concatenate([np.full(int(j), 1.0 / j) for j in J])
    pri = [spec.priors.for_term(design.term_names[k]) for k in terms]
    return _Layout(terms=list(terms), J=J, offsets=offsets, c0=np.concatenate([c[0] for c in scales]),
                   c1=np.concatenate([c[1] for c in scales]), sref=sref,
                   sigma_df=np.array([p.df for p in pri]), sigma_scale=np.array([p.scale for p in pri]),
                   mu_df=spec.priors.intercept.df, mu_loc=spec.priors.intercept.loc,
                   mu_scale=spec.priors.intercept.scale, chains=chains, precision=np.concatenate(prec0),
                   pi=pi)


def _gather_forest(design: DesignMatrix, term_columns, terms: list[int]):
    """Host of each term (the term with fewest levels whose columns contain it) and the roots.

    Over the positions 0..len(terms)-1 of ``terms``.  Returns (order, hosts, roots): ``order``
    lists positions children-first; ``hosts[p] = (q, map)`` with ``map[level of q] = level of p``;
    ``roots`` are the positions without a host.
    """
    J = design.n_levels
    cols = [set(term_columns[k]) for k in terms]
    hosts = {}
    for p, k in enumerate(terms):
        cands = [q for q in range(len(terms)) if q != p and cols[p] < cols[q]]
        if not cands:
            continue
        q = min(cands, key=lambda q: (J[terms[q]], len(cols[q])))
        m = np.zeros(int(J[terms[q]]), np.int32)
        m[design.codes[terms[q]]] = design.codes[k]
        hosts[p] = (q, m)
    order = sorted(range(len(terms)), key=lambda p: (J[terms[p]], len(cols[p])))
    roots = [p for p in range(len(terms)) if p not in hosts]
    return order, hosts, roots


@dataclass
class _GibbsBlock:
    """The collapsed block: the run term T and the terms nested in it.

    In mode "joint" NUTS samples every term and the collapsed move also updates the group's
    NUTS coordinates; in mode "gibbs" the group's terms other than T (``inner``) live outside
    NUTS, as a fixed offset on T's levels during each NUTS transition.
    """

    group: CollapsedGroup
    top_pos: int  # position of T among the NUTS terms
    nuts_pos: list  # per group term (T first): its position among the NUTS terms, or None
    inner: list[int]  # design indices of the group terms outside NUTS
    J: np.ndarray  # levels of the inner terms
    offsets: np.ndarray
    sigma_df: np.ndarray  # priors of the whole group, T first
    sigma_scale: np.ndarray

    @property
    def n_inner(self) -> int:
        return len(self.inner)

    @property
    def L(self) -> int:
        return int(self.offsets[-1])


@dataclass
class _Marginal:
    """The term integrated out by quadrature (:mod:`.quadrature`) and its sigma's prior."""

    term: MarginalTerm
    sigma_df: float
    sigma_scale: float
    sigma0: float  # rough sigma: the chains' start


def _per_level_broadcaster(J):
    """v (K,) -> (sum J,) with v[k] repeated J[k] times, as a concatenation of broadcasts
    (cheaper on XLA CPU than a gather by a level-to-term index, and its gradient is slice sums)."""
    import jax.numpy as jnp

    sizes = [int(j) for j in J]

    def per_level(v):
        return jnp.concatenate([jnp.broadcast_to(v[k], (sz,)) for k, sz in enumerate(sizes)])

    return per_level


def _make_functions(design: DesignMatrix, lay: _Layout, dtype, term_columns, gibbs: _GibbsBlock | None,
                    mh_steps: int, marg: "_Marginal | None" = None):
    """The potential generator, the map to (sigma, mu, u) and the collapsed move.

    NUTS samples z = {"g": (1+2K+M,), "x": (L,)} for the terms of ``lay`` (M = 1 when a term is
    integrated out: its log sigma is the last global coordinate); the inner terms of the Gibbs
    block enter the likelihood as a fixed offset ``s`` on the run term's levels.
    """
    import jax
    import jax.numpy as jnp

    K, J, off = lay.K, lay.J, lay.offsets
    y = jnp.asarray(design.successes, dtype)
    n = jnp.asarray(design.trials, dtype)
    c0 = jnp.asarray(lay.c0, dtype)
    c1 = jnp.asarray(lay.c1, dtype)
    Jf = jnp.asarray(J, dtype)
    # centring weights pi (per level, summing to 1 per term) and |pi_k|: the deviations are
    # pi-centred and m_k = pi_k'u_k = sigma_k |pi_k| w_k (uniform pi: plain means, item 1)
    piw = jnp.asarray(lay.pi, dtype)
    pinorm = jnp.asarray(lay.pi_norm, dtype)
    uniform = lay.uniform_pi
    sref2 = jnp.asarray(lay.sref ** 2, dtype)
    sdf = jnp.asarray(lay.sigma_df, dtype)
    ssc = jnp.asarray(lay.sigma_scale, dtype)
    slices = [(int(off[k]), int(off[k + 1])) for k in range(K)]
    per_level = _per_level_broadcaster(J)
    # Hierarchical gather: a term whose columns lie inside another term's ("host") is constant
    # within the host's levels, so it is added to the host's level values first and only the
    # root terms are gathered per cell (pooled Eq. 6: 3 gathers per cell instead of 10; 3x
    # faster gradients measured).
    order, hosts, roots = _gather_forest(design, term_columns, lay.terms)
    host_maps = {p: jnp.asarray(m, jnp.int32) for p, (q, m) in hosts.items()}
    root_codes = jnp.asarray(design.codes[[lay.terms[p] for p in roots]], jnp.int32)
    top = gibbs.top_pos if gibbs is not None else None
    if marg is not None:
        marg_loglik = make_log_likelihood(marg.term, dtype)
        m_df, m_sc = float(marg.sigma_df), float(marg.sigma_scale)

    def _segment_sum(v):
        # per-term sums as slice sums: a segment_sum into K segments is a scatter with K-fold
        # collisions that XLA CPU fuses badly with its producer (pooled Eq. 6: 3.1 ms of a
        # 4.3 ms gradient; slice sums 20 us)
        return jnp.stack([jnp.sum(v[a:b]) for a, b in slices])

    def _pi_mean(v):
        return _segment_sum(piw * v)

    chain_maps = [[(q, jnp.asarray(m, jnp.int32)) for q, m in ch] for ch in lay.chains] if lay.nested else None
    # hosts before the terms they host: a host's chain is one shorter
    topo = sorted(range(K), key=lambda p: len(lay.chains[p])) if lay.nested else None

    def _host_sum(devs, p):
        # S_p: the deviations of p's host chain at p's levels
        return sum(devs[q][m] for q, m in chain_maps[p])

    def _parts(z):
        g, x = z["g"], z["x"]
        alpha, log_sigma, w = g[0], g[1:K + 1], g[K + 1:2 * K + 1]
        sigma = jnp.exp(log_sigma)
        # a = sigma / sqrt(c0 + c1 sigma^2) (geometry.log_scale), with the per-term factors
        # computed once per term: one rsqrt and one log per level instead of exp, log and exp
        s2 = per_level(sigma * sigma)
        q = c0 + c1 * s2
        ax = per_level(sigma) * jax.lax.rsqrt(q) * x
        sum_log_a = jnp.sum(Jf * log_sigma) - 0.5 * jnp.sum(jnp.log(q))
        # the auxiliary coordinate of each term: pi'(a x), the one direction of x the
        # likelihood never sees (items 1, 11)
        ubar = _pi_mean(ax)
        if chain_maps is None:
            dev = ax - per_level(ubar)
        else:
            # nested centring (item 11): u*_p = a x_p - omega_p S_p with S_p the host chain's
            # deviations and omega = c1 a^2 = sigma^2 I / (1 + sigma^2 I) the level's centring weight
            om = c1 * s2 / q
            devs = [None] * K
            for p in topo:
                a_, b_ = slices[p]
                if chain_maps[p]:
                    v = ax[a_:b_] - om[a_:b_] * _host_sum(devs, p)
                    devs[p] = v - jnp.sum(piw[a_:b_] * v)
                else:
                    devs[p] = ax[a_:b_] - ubar[p]
            dev = jnp.concatenate(devs)
        return alpha, log_sigma, sigma, w, ubar, dev, sum_log_a

    def _eta(alpha, dev, s):
        acc = {p: dev[a:b] for p, (a, b) in enumerate(slices)}
        if top is not None:
            acc[top] = acc[top] + s
        for p in order:
            if p in hosts:
                q = hosts[p][0]
                acc[q] = acc[q] + acc[p][host_maps[p]]
        return alpha + sum(acc[p][root_codes[i]] for i, p in enumerate(roots))

    def potential_gen(s):
        def potential(z):
            alpha, log_sigma, sigma, w, ubar, dev, sum_log_a = _parts(z)
            eta = _eta(alpha, dev, s)
            if marg is None:
                loglik = jnp.sum(y * eta - n * jax.nn.softplus(eta))
            else:
                # the integrated term: its levels by quadrature (item 10), its sigma half-t
                # with the log-Jacobian of sigma = exp(log sigma)
                ls_m = z["g"][2 * K + 1]
                s_m = jnp.exp(ls_m)
                loglik = (marg_loglik(eta, s_m) - 0.5 * (m_df + 1.0) * jnp.log1p((s_m / m_sc) ** 2 / m_df)
                          + ls_m)
            ss = _segment_sum(dev * dev)
            # u_k = dev_k + m_k 1 ~ N(0, sigma^2 I) with m_k = sigma |pi| w_k (log-Jacobian log sigma),
            # so |u|^2 = |dev|^2 + 2 m sum(dev) + J m^2; the auxiliary pi'(a x) ~ N(0, sref^2 / J);
            # log-Jacobian of x -> a(sigma) x
            lp_u = (jnp.sum(-(Jf - 1.0) * log_sigma - 0.5 * ss / sigma ** 2 - 0.5 * Jf * ubar ** 2 / sref2)
                    + sum_log_a)
            # half-Student-t on sigma, plus the log-Jacobian of sigma = exp(log_sigma)
            lp_sigma = jnp.sum(-0.5 * (sdf + 1.0) * jnp.log1p((sigma / ssc) ** 2 / sdf) + log_sigma)
            if uniform:  # sum(dev) = 0 and J |pi|^2 = 1
                lp_w = -0.5 * jnp.sum(w ** 2)
            else:
                lp_w = -jnp.sum(pinorm * w * _segment_sum(dev) / sigma + 0.5 * Jf * pinorm ** 2 * w ** 2)
            mu = alpha - jnp.sum(sigma * pinorm * w)
            lp_mu = -0.5 * (lay.mu_df + 1.0) * jnp.log1p(((mu - lay.mu_loc) / lay.mu_scale) ** 2 / lay.mu_df)
            return -(loglik + lp_u + lp_sigma + lp_w + lp_mu)

        return potential

    def constrain(z):
        alpha, log_sigma, sigma, w, ubar, dev, _ = _parts(z)
        mean_u = sigma * pinorm * w
        mu = alpha - jnp.sum(mean_u)
        u = dev + per_level(mean_u)
        return sigma, mu, u

    potential_gen.eta = _eta  # for tests: the linear predictor from (alpha, dev, s)
    potential_gen.parts = _parts
    if gibbs is None:
        return potential_gen, constrain, None, None

    grp = gibbs.group
    nG = len(grp.terms)
    run_lv = [jnp.asarray(rl, jnp.int32) for rl in grp.run_levels]  # level of each group term per run
    overlap = jnp.asarray(grp.overlap, dtype)
    g_df = jnp.asarray(gibbs.sigma_df, dtype)
    g_sc = jnp.asarray(gibbs.sigma_scale, dtype)
    in_sl = [(int(gibbs.offsets[i]), int(gibbs.offsets[i + 1])) for i in range(gibbs.n_inner)]
    # where each group term lives: ("nuts", position) or ("aux", slice of u_in)
    where_ = []
    j = 0
    for p in gibbs.nuts_pos:
        if p is None:
            where_.append(("aux", in_sl[j]))
            j += 1
        else:
            where_.append(("nuts", p))
    aux_idx = [i for i, (kind, _) in enumerate(where_) if kind == "aux"]
    # NUTS positions whose x the collapsed move must rewrite: the group's, and those hosted by them
    moved = {loc for kind, loc in where_ if kind == "nuts"}
    remap = [p for p in range(K) if p in moved or any(q in moved for q, _ in lay.chains[p])]

    def offset(u_in):
        """s = sum over the group terms outside NUTS of u_k at each run (the run term's levels)."""
        if not aux_idx:
            return jnp.zeros((), dtype)
        return sum(u_in[a:b][run_lv[i]] for i, (a, b) in ((i, where_[i][1]) for i in aux_idx))

    mu_df, mu_loc, mu_sc = lay.mu_df, lay.mu_loc, lay.mu_scale

    def _log_marginal(th, rt):
        # th = (log sigma_G..., mu); rt = mu + r on the runs.
        # log p(sigma_G) + log p(mu) + log N(rt - mu; 0, C(sigma_G)) + log-Jacobian,
        # C = sum_k sigma_k^2 Z_k Z_k'
        ls_g, mu = th[:nG], th[nG]
        C = jnp.tensordot(jnp.exp(2.0 * ls_g), overlap, axes=1)
        Lc = jnp.linalg.cholesky(C)
        v = jax.scipy.linalg.solve_triangular(Lc, rt - mu, lower=True)
        lp = -jnp.sum(jnp.log(jnp.diag(Lc))) - 0.5 * jnp.dot(v, v)
        lp += jnp.sum(-0.5 * (g_df + 1.0) * jnp.log1p((jnp.exp(ls_g) / g_sc) ** 2 / g_df) + ls_g)
        lp += -0.5 * (mu_df + 1.0) * jnp.log1p(((mu - mu_loc) / mu_sc) ** 2 / mu_df)
        lp = jnp.where(jnp.isfinite(lp), lp, -jnp.inf)
        return lp, Lc

    def collapsed_move(z, u_in, ls_in, key, prop_chol):
        """Partially collapsed Gibbs step on (mu, sigma_G, u_G) given mu + r on the runs and the rest.

        With r = sum_{k in G} Z_k u_k the run sums of the group's terms, the likelihood depends on
        (mu, u_G) only through mu + r.  Metropolis on (log sigma_G, mu) under
        p(sigma_G) p(mu) N(mu + r - mu; 0, C(sigma_G)), then u_G | r, sigma_G by conditioning by
        kriging; everything the likelihood sees is unchanged.  mu belongs to the block because
        it is confounded with the means of the group's terms.
        """
        g, x = z["g"], z["x"]
        alpha, log_sigma, sigma, w, ubar, dev, _ = _parts(z)
        mean_u = sigma * pinorm * w
        mu = alpha - jnp.sum(mean_u)
        u_g, ls_g = [], []
        for kind, loc in where_:
            if kind == "nuts":
                a, b = slices[loc]
                u_g.append(dev[a:b] + mean_u[loc])
                ls_g.append(log_sigma[loc])
            else:
                u_g.append(u_in[loc[0]:loc[1]])
        ls_g = jnp.stack(ls_g) if ls_g else jnp.zeros((0,), dtype)
        # group log-sds in group order (T first)
        ls_all, j = [], 0
        for i, (kind, loc) in enumerate(where_):
            if kind == "nuts":
                ls_all.append(log_sigma[loc])
            else:
                ls_all.append(ls_in[j])
                j += 1
        rt = mu + sum(u[rl] for u, rl in zip(u_g, run_lv))
        th0 = jnp.concatenate([jnp.stack(ls_all), mu[None]])
        lp0, L0 = _log_marginal(th0, rt)

        def mh(i, carry):
            th, lp, Lc, key, nacc = carry
            key, k1, k2 = jax.random.split(key, 3)
            prop = th + prop_chol @ jax.random.normal(k1, (nG + 1,), dtype)
            lp_new, L_new = _log_marginal(prop, rt)
            acc = jnp.log(jax.random.uniform(k2, (), dtype)) < lp_new - lp
            return (jnp.where(acc, prop, th), jnp.where(acc, lp_new, lp), jnp.where(acc, L_new, Lc), key,
                    nacc + acc)

        th, _, Lc, key, nacc = jax.lax.fori_loop(0, mh_steps, mh, (th0, lp0, L0, key, jnp.zeros((), dtype)))
        ls_new, mu_new = th[:nG], th[nG]
        s_new = jnp.exp(ls_new)
        r = rt - mu_new
        # u_G | r, sigma_G: u = u0 + D Z' C^-1 (r - Z u0), u0 ~ N(0, D)
        keys = jax.random.split(key, nG)
        u0 = [s_new[i] * jax.random.normal(keys[i], (u.shape[0],), dtype) for i, u in enumerate(u_g)]
        e = r - sum(a[rl] for a, rl in zip(u0, run_lv))
        v = jax.scipy.linalg.cho_solve((Lc, True), e)
        u_new = [a + s_new[i] ** 2 * jax.ops.segment_sum(v, run_lv[i], num_segments=a.shape[0])
                 for i, a in enumerate(u0)]
        # back to NUTS coordinates: new mu and sigmas, same auxiliary mean(a_k x_k); the terms
        # hosted by a group term are re-expressed too, so that their u is unchanged
        log_sigma_new, w_new, x_new, mean_new = log_sigma, w, x, mean_u
        ls_in_new, u_in_new = [], []
        devs = [dev[a:b] for a, b in slices]
        for i, (kind, loc) in enumerate(where_):
            if kind == "nuts":
                a, b = slices[loc]
                m = jnp.sum(piw[a:b] * u_new[i])
                log_sigma_new = log_sigma_new.at[loc].set(ls_new[i])
                w_new = w_new.at[loc].set(m / (s_new[i] * pinorm[loc]))
                mean_new = mean_new.at[loc].set(m)
                devs[loc] = u_new[i] - m
            else:
                ls_in_new.append(ls_new[i])
                u_in_new.append(u_new[i])
        for p in remap:
            a, b = slices[p]
            a_k = jnp.exp(log_scale(log_sigma_new[p], c0[a:b], c1[a:b], jnp))
            y = devs[p]
            if chain_maps is not None and chain_maps[p]:
                y = y + c1[a:b] * a_k * a_k * _host_sum(devs, p)
                y = y - jnp.sum(piw[a:b] * y)
            x_new = x_new.at[a:b].set((y + ubar[p]) / a_k)
        alpha_new = mu_new + jnp.sum(mean_new)
        g_new = jnp.concatenate([alpha_new[None], log_sigma_new, w_new, g[2 * K + 1:]])
        u_in_new = jnp.concatenate(u_in_new) if u_in_new else u_in
        ls_in_new = jnp.stack(ls_in_new) if ls_in_new else ls_in
        return {"g": g_new, "x": x_new}, u_in_new, ls_in_new, nacc / mh_steps

    return potential_gen, constrain, collapsed_move, offset


def _mh_steps(settings, gibbs, design, lay, marg) -> int:
    if gibbs is None:
        return 0
    return settings.collapsed_steps or collapsed_steps_for(gibbs.group.n_runs, design.n_cells, lay.L, marg)


def collapsed_steps_for(n_runs: int, n_cells: int, n_levels: int, marg: "_Marginal | None" = None) -> int:
    """Metropolis steps of the collapsed move per transition (``collapsed_steps=None``).

    The move gets about 5% of a NUTS transition's time, with at least 30 and at most 200 steps.
    Costs, measured on the 2-core box: a step is one n_runs x n_runs Cholesky and solve,
    about ``16 us + 2e-11 s * n_runs^3`` (81 runs: 27 us; 416 runs: 1.4 ms); a transition is
    about 100 gradients of ``8 ns * (cells * quadrature nodes + 2 * levels)`` each
    (TB2 0.13 ms, HAL-scale 2.7 ms, BRIDGE 8 ms).  So TB2 and the HAL-scale corpus keep 30
    steps, and BRIDGE (203 runs under 82,453 cells) gets 200: its run block is small next to its
    data, and its main effects are aliased with single runs (103 of 132 models have one run),
    so their sigmas trade off along a curved ridge of p(sigma_G | runs) that random-walk
    Metropolis crosses slowly.  Measured on BRIDGE, 4 x (300 + 700): bulk ESS of
    sigma[benchmark:model:scaffold] 62 with 30 steps and 1,104 with 200, for 4% more wall time.
    On TB2 200 steps raised the smallest bulk ESS from 1,624 to 1,993 but cost 50% more time.
    """
    nodes = 1 if marg is None else len(marg.term.nodes)
    transition = 100 * 8e-9 * (n_cells * nodes + 2 * n_levels)
    step = 16e-6 + 2e-11 * float(n_runs) ** 3
    return int(np.clip(round(0.05 * transition / step), 30, 200))


def _initial_point(lay: _Layout, rough: RoughFit, chains: int, seed: int, jitter: float = 1.0,
                   marg: _Marginal | None = None):
    """Chain starts near the rough mode and the initial inverse mass matrix (conditional variances)."""
    K = lay.K
    rng = np.random.default_rng([seed, 7919])
    sig = rough.sigma[lay.terms]
    log_s0 = np.log(sig)
    sl = [slice(lay.offsets[i], lay.offsets[i + 1]) for i in range(K)]
    a0 = [np.exp(log_scale(log_s0[i], lay.c0[sl[i]], lay.c1[sl[i]])) for i in range(K)]
    if lay.nested:
        # nested centring: a x = u + omega S - pi'(omega S), so the auxiliary pi'(a x) is pi'u
        dev0 = [rough.u[k] - np.dot(lay.pi[sl[i]], rough.u[k]) for i, k in enumerate(lay.terms)]
        ys = []
        for i, k in enumerate(lay.terms):
            y = rough.u[k].astype(float)
            if lay.chains[i]:
                oS = lay.c1[sl[i]] * a0[i] ** 2 * sum(dev0[q][m] for q, m in lay.chains[i])
                y = y + oS - np.dot(lay.pi[sl[i]], oS)
            ys.append(y / a0[i])
        x0 = np.concatenate(ys)
    else:
        x0 = np.concatenate([rough.u[k] / a0[i] for i, k in enumerate(lay.terms)])
    var_x = np.concatenate([(1.0 / lay.precision[sl[i]]) / a0[i] ** 2 for i in range(K)])
    m0 = np.array([np.dot(lay.pi[sl[i]], rough.u[k]) for i, k in enumerate(lay.terms)])
    alpha0 = rough.mu + float(m0.sum())
    w0 = m0 / (sig * lay.pi_norm)
    var_g = np.concatenate([[1.0 / max(rough.total_info, 1.0)], np.minimum(1.0, 1.0 / (2.0 * lay.J) + 0.02),
                            np.ones(K)])
    g0 = np.concatenate([[alpha0], log_s0, w0])
    gs = g0[None, :] + jitter * rng.standard_normal((chains, g0.size)) * np.sqrt(var_g)[None, :]
    # sigma starts are spread on purpose (about a factor 1.3 either way): R-hat needs overdispersed starts
    gs[:, 1:K + 1] = log_s0[None, :] + jitter * 0.25 * rng.standard_normal((chains, K))
    xs = x0[None, :] + jitter * rng.standard_normal((chains, x0.size)) * np.sqrt(var_x)[None, :]
    if marg is not None:
        # the integrated term's log sigma, last global coordinate; drawn after the others so that
        # the other starts do not depend on whether a term is integrated
        ls_m = np.log(marg.sigma0) + jitter * 0.25 * rng.standard_normal((chains, 1))
        gs = np.concatenate([gs, ls_m], axis=1)
        var_g = np.concatenate([var_g, [1.0 / (2.0 * marg.term.n_levels) + 0.02]])
    return {"g": gs, "x": xs}, {"g": var_g, "x": var_x}


def _initial_gibbs(gibbs: _GibbsBlock, rough: RoughFit, chains: int, seed: int, jitter: float = 1.0):
    rng = np.random.default_rng([seed, 104729])
    if not gibbs.inner:
        u = sd = np.zeros(0)
    else:
        u = np.concatenate([rough.u[k] for k in gibbs.inner])
        sd = np.concatenate([np.sqrt(1.0 / rough.precision[k]) for k in gibbs.inner])
    ls = np.log(rough.sigma[gibbs.inner])
    us = u[None, :] + jitter * rng.standard_normal((chains, u.size)) * sd[None, :]
    lss = ls[None, :] + jitter * 0.25 * rng.standard_normal((chains, ls.size))
    # initial proposal for log sigma_G (T first): about the posterior width of a log-sd from J levels
    Jg = np.array([rough.u[k].size for k in gibbs.group.terms], float)
    prop_var = np.concatenate([1.0 / (2.0 * Jg) + 0.02, [0.25]])  # last: mu
    return us, lss, prop_var


# -- the chunked runner --------------------------------------------------------------------
def _per_device(f, in_axes, per: int):
    """``f`` over the ``per`` chains of one device: vmapped, or, for one chain, called directly.

    A vmap over a batch of one is not free on XLA CPU: it changes the layout of every
    intermediate, and the pooled potential's value and gradient took 1.94 ms under it against
    0.84 ms without (one core, measured); so a lone chain is squeezed, run, and given its
    batch axis back.
    """
    import jax

    if per != 1:
        return jax.vmap(f, in_axes=in_axes)

    def one(*args):
        args = [jax.tree.map(lambda a: a[0], x) if ax == 0 else x for x, ax in zip(args, in_axes)]
        return jax.tree.map(lambda a: a[None], f(*args))

    return one


_STATS = ("diverging", "energy", "num_steps", "accept_prob", "step_size", "potential_energy")


def _run_chains(design, spec, lay, gibbs, rough, settings: SamplerSettings, devices, dtype,
                progress: ProgressCallback | None, cancel: CancelCallback | None, timings: dict,
                marg: _Marginal | None = None, mh_steps: int = 0):
    import jax
    import jax.numpy as jnp
    from numpyro.infer.hmc import hmc
    from numpyro.infer.hmc_util import build_adaptation_schedule

    C = settings.chains
    D = _chain_layout(C, len(devices))
    devs = devices[:D]
    per = C // D
    K = design.n_terms
    cols = [spec.term(nm).columns for nm in design.term_names]
    potential_gen, constrain, move, offset = _make_functions(design, lay, dtype, cols, gibbs, mh_steps, marg)
    init_kernel, sample_kernel = hmc(potential_fn_gen=potential_gen, algo="NUTS")
    dense = [("g",)] if settings.dense_globals else []
    init_z, inv_mass = _initial_point(lay, rough, C, settings.seed, marg=marg)
    imm = {("g",): jnp.diag(jnp.asarray(inv_mass["g"], dtype)) if settings.dense_globals
           else jnp.asarray(inv_mass["g"], dtype),
           ("x",): jnp.asarray(inv_mass["x"], dtype)}
    W = settings.warmup
    nG = 0 if gibbs is None else len(gibbs.group.terms)
    if gibbs is not None:
        u_in0, ls_in0, prop_var0 = _initial_gibbs(gibbs, rough, C, settings.seed)

    else:
        u_in0, ls_in0, prop_var0 = np.zeros((C, 0)), np.zeros((C, 0)), np.zeros(0)
    # auxiliary (Gibbs) state per chain: inner random effects and log-sds, the Welford
    # accumulator of log sigma_G that tunes the Metropolis proposal during warmup, its rate
    nP = nG + 1 if nG else 0  # Metropolis dimension: log sigma_G and mu
    aux0 = {"u": u_in0, "ls": ls_in0, "wm": np.zeros((C, nP)), "w2": np.zeros((C, nP, nP)), "wn": np.zeros(C),
            "acc": np.zeros(C), "lscale": np.zeros(C),
            "sm_lstep": np.zeros((C, lay.K)), "sm_acc": np.zeros((C, lay.K))}
    prop0 = jnp.asarray(np.diag(prop_var0), dtype)
    welford_from = int(0.15 * W)
    step0 = float((init_z["x"].shape[1] + init_z["g"].shape[1]) ** -0.25)

    def _s(aux):
        return offset(aux["u"]) if gibbs is not None else jnp.zeros((), dtype)

    def _init_one(z, key, aux):
        # no heuristic step-size search: numpyro's would capture the potential of the first
        # offset s; the initial step is the usual d^(-1/4) scaling for a preconditioned target
        return init_kernel(z, num_warmup=W, step_size=step0, inverse_mass_matrix=imm, dense_mass=dense,
                           target_accept_prob=settings.target_accept, max_tree_depth=settings.max_tree_depth,
                           find_heuristic_step_size=False, rng_key=key, model_args=(_s(aux),))

    keys = jax.random.split(jax.random.PRNGKey(settings.seed), C).reshape(D, per, -1)
    shard = lambda a: jnp.asarray(a, dtype).reshape(D, per, *np.shape(a)[1:])  # noqa: E731
    z0 = {k: shard(v) for k, v in init_z.items()}
    aux = {k: shard(v) for k, v in aux0.items()}
    S = settings.chunk_size
    grad_gen = lambda s: jax.value_and_grad(potential_gen(s))  # noqa: E731

    # Scale moves along the sigma ridge (Liu and Sabatti 2000 group moves): for term k,
    # (log sigma_k, x_kj) -> (log sigma_k + d, x_kj exp(gamma_j d)) is a one-parameter group;
    # a Metropolis step on d with target exp(-U) exp(d sum_j gamma_j) leaves the posterior
    # invariant.  gamma_j = d log a_j / d log sigma at the rough sigma is the slope of the
    # conditional mean of x_j in log sigma (Gaussian approximation), so the move travels
    # along the ridge that couples a term's many weakly informed levels to its sigma, which
    # NUTS crosses only slowly (benchmark:task:model in the pooled model: 27,000 levels).
    sl_pos = [(int(lay.offsets[i]), int(lay.offsets[i + 1])) for i in range(lay.K)]
    sig0 = rough.sigma[lay.terms]
    gam_np = np.concatenate([lay.c0[a:b] / (lay.c0[a:b] + lay.c1[a:b] * sig0[i] ** 2)
                             for i, (a, b) in enumerate(sl_pos)])
    gam = jnp.asarray(gam_np, dtype)
    gam_sum = jnp.asarray([gam_np[a:b].sum() for a, b in sl_pos], dtype)
    n_scale = settings.scale_steps if settings.scale_steps > 0 else 0

    per_level = _per_level_broadcaster(lay.J)
    c0v = jnp.asarray(lay.c0, dtype)
    c1v = jnp.asarray(lay.c1, dtype)

    def _scale_moves(z, aux, key, pot, cov_g):
        # Directions: the eigenvectors of the adapted covariance of log sigma (the dense mass
        # block; fixed after warmup), so that terms whose sigmas move together (the task-level
        # interactions of the pooled model, correlation +0.4) move together.  One fori_loop
        # over (direction, repeat): a single copy of the potential in the compiled chunk.
        cov_ls = cov_g[1:lay.K + 1, 1:lay.K + 1] if cov_g.ndim == 2 else jnp.diag(cov_g[1:lay.K + 1])
        evals, evecs = jnp.linalg.eigh(cov_ls)
        dirs = evecs * jnp.sqrt(jnp.maximum(evals, 1e-12))[None, :]  # columns: scaled directions
        lstep = aux["sm_lstep"]

        def one(t, carry):
            z, U, key, nacc = carry
            p = t // n_scale
            # odd repeats: the u-scaling group (log sigma_k + dls_k, u_k e^(dls_k)), which also
            # scales the data-pinned levels: the logit's latent-scale ridge (attenuation of
            # single-trial cells traded against larger effects)
            full = (t % n_scale) % 2 == 1
            key, k1, k2 = jax.random.split(key, 3)
            v = dirs[:, p] * jnp.exp(lstep[p])
            d = jax.random.normal(k1, (), dtype)
            dls = v * d  # change of each log sigma_k
            dl = per_level(dls)
            ls_lv = per_level(z["g"][1:lay.K + 1])
            # x' = x e^(gamma dl)  or  x' = x e^(dl) a(sigma) / a(sigma')
            log_fx = jnp.where(full, dl + log_scale(ls_lv, c0v, c1v, jnp) - log_scale(ls_lv + dl, c0v, c1v, jnp),
                               gam * dl)
            zp = {"g": z["g"].at[1:lay.K + 1].add(dls), "x": z["x"] * jnp.exp(log_fx)}
            Up = pot(zp)
            log_r = U - Up + jnp.sum(log_fx)
            acc = (jnp.log(jax.random.uniform(k2, (), dtype)) < log_r) & jnp.isfinite(Up)
            z = jax.tree.map(lambda new, old: jnp.where(acc, new, old), zp, z)
            return z, jnp.where(acc, Up, U), key, nacc.at[p].add(acc.astype(dtype))

        z, _, key, nacc = jax.lax.fori_loop(0, lay.K * n_scale, one,
                                            (z, pot(z), key, jnp.zeros((lay.K,), dtype)))
        return z, nacc / n_scale, key

    def _extra_moves(st, aux):
        """Scale moves and the collapsed Gibbs step after a NUTS transition, then fresh U and grad."""
        key = st.rng_key
        z = st.z
        if n_scale:
            z, rates, key = _scale_moves(z, aux, key, potential_gen(_s(aux)),
                                         st.adapt_state.inverse_mass_matrix[("g",)])
            warm = st.i <= W
            lstep = aux["sm_lstep"] + (rates - 0.44) / jnp.sqrt(st.i + 10.0)
            aux = {**aux, "sm_lstep": jnp.where(warm, jnp.clip(lstep, -8.0, 1.0), aux["sm_lstep"]),
                   "sm_acc": rates}
        st = st._replace(z=z, rng_key=key)
        if gibbs is not None:
            return _gibbs_step(st, aux)
        pe, zg = grad_gen(_s(aux))(z)
        ok = jnp.isfinite(pe)
        return st._replace(z=z, potential_energy=jnp.where(ok, pe, st.potential_energy),
                           z_grad=jax.tree.map(lambda a, b: jnp.where(ok, a, b), zg, st.z_grad)), aux

    def _gibbs_step(st, aux):
        key, sub = jax.random.split(st.rng_key)
        n = aux["wn"]
        cov = jnp.where(n > 20, aux["w2"] / jnp.maximum(n - 1.0, 1.0), prop0)
        prop = (jnp.exp(aux["lscale"]) * 2.38 / math.sqrt(nP)) * jnp.linalg.cholesky(
            cov + 1e-5 * jnp.eye(nP, dtype=dtype))
        z, u_in, ls_in, rate = move(st.z, aux["u"], aux["ls"], sub, prop)
        pe, zg = grad_gen(offset(u_in))(z)
        ok = jnp.isfinite(pe)
        pick = lambda a, b: jnp.where(ok, a, b)  # noqa: E731
        st = st._replace(z=jax.tree.map(pick, z, st.z), potential_energy=pick(pe, st.potential_energy),
                         z_grad=jax.tree.map(pick, zg, st.z_grad), rng_key=key)
        u_in, ls_in = pick(u_in, aux["u"]), pick(ls_in, aux["ls"])
        # Welford of log sigma_G during warmup only (the proposal is frozen while sampling)
        _, mu_now, _ = constrain(st.z)
        lsg, j = [], 0
        for p in gibbs.nuts_pos:
            if p is None:
                lsg.append(ls_in[j])
                j += 1
            else:
                lsg.append(st.z["g"][1 + p])
        lsg = jnp.concatenate([jnp.stack(lsg), mu_now[None]])
        upd = (st.i > welford_from) & (st.i <= W)
        n1 = aux["wn"] + 1.0
        d0 = lsg - aux["wm"]
        wm = aux["wm"] + d0 / n1
        w2 = aux["w2"] + jnp.outer(d0, lsg - wm)
        # Robbins-Monro on the proposal's log-scale towards 25% acceptance, warmup only
        warm = st.i <= W
        lscale = jnp.where(warm, aux["lscale"] + (rate - 0.25) / jnp.sqrt(st.i + 10.0), aux["lscale"])
        aux = {**aux, "u": u_in, "ls": ls_in, "wm": jnp.where(upd, wm, aux["wm"]),
               "w2": jnp.where(upd, w2, aux["w2"]), "wn": jnp.where(upd, n1, aux["wn"]), "acc": rate,
               "lscale": jnp.clip(lscale, -3.0, 1.0)}
        return st, aux

    def _record(st, aux):
        sigma, mu, u = constrain(st.z)
        rec = {"diverging": st.diverging, "energy": st.energy, "num_steps": st.num_steps,
               "accept_prob": st.accept_prob, "step_size": st.adapt_state.step_size,
               "potential_energy": st.potential_energy, "nuts_sigma": sigma, "mu": mu, "gibbs_ls": aux["ls"],
               "marg_sigma": jnp.exp(st.z["g"][2 * lay.K + 1:]),
               "gibbs_accept": aux["acc"], "scale_accept": aux["sm_acc"]}
        if settings.keep_random_effects:
            rec["nuts_u"] = u.astype(jnp.float32)
            rec["gibbs_u"] = aux["u"].astype(jnp.float32)
        return rec

    def chunk_one(state, aux, n_iter):
        proto = jax.eval_shape(_record, state, aux)
        buf0 = jax.tree.map(lambda a: jnp.zeros((S, *a.shape), a.dtype), proto)

        def body(i, carry):
            st, ax, buf = carry
            st = sample_kernel(st, model_args=(_s(ax),))
            if gibbs is not None or n_scale:
                st, ax = _extra_moves(st, ax)
            rec = _record(st, ax)
            buf = jax.tree.map(lambda b, r: b.at[i].set(r), buf, rec)
            return st, ax, buf

        return jax.lax.fori_loop(0, n_iter, body, (state, aux, buf0))

    t0 = time.perf_counter()
    if progress:
        progress("compile", 0, 1, None)
    init_p = jax.pmap(_per_device(_init_one, (0, 0, 0), per), devices=devs)
    state = init_p(z0, keys, aux)
    jax.block_until_ready(state)
    timings["compile_init"] = time.perf_counter() - t0
    n_arg = jnp.asarray(S, jnp.int32)
    # one compiled chunk serves warmup and sampling (compiling two cost as much as a short TB2 run)
    chunk = jax.pmap(_per_device(chunk_one, (0, 0, None), per), in_axes=(0, 0, None), devices=devs)
    chunk = chunk.lower(state, aux, n_arg).compile()
    timings["compile"] = time.perf_counter() - t0
    if progress:
        progress("compile", 1, 1, None)

    def _phase(total, name, keep, stops=()):
        """Run ``total`` iterations in chunks, stopping also at ``stops`` to pool adaptation across chains."""
        nonlocal state, aux
        done = 0
        out = []
        t_phase = time.perf_counter()
        stops = sorted(s for s in stops if 0 < s < total)
        while done < total:
            if cancel is not None and cancel():
                raise FitCancelled(f"fit cancelled by the user during {name} ({done} of {total} iterations).")
            nxt = min([s for s in stops if s > done] + [total])
            m = min(S, nxt - done)
            state, aux, buf = chunk(state, aux, jnp.asarray(m, jnp.int32))
            buf = jax.device_get(buf)
            if keep:
                out.append(jax.tree.map(lambda a: np.asarray(a)[:, :, :m], buf))
            else:
                out.append({k: np.asarray(buf[k])[:, :, :m] for k in (*_STATS, "nuts_sigma", "gibbs_ls",
                                                                        "gibbs_accept")})
            done += m
            if done in stops and settings.pool_adaptation and C > 1:
                state, aux = _pool_welford(state, aux)
            if progress:
                el = time.perf_counter() - t_phase
                progress(name, done, total, el / done * (total - done))
        timings[name] = time.perf_counter() - t_phase
        # (D, per, m, ...) chunks -> (C, total, ...)
        return jax.tree.map(lambda *a: np.concatenate(a, axis=2).reshape(C, total, *a[0].shape[3:]), *out)

    def _pooled(mean, m2, n):
        mean = np.asarray(mean, np.float64).reshape(C, -1)
        m2 = np.asarray(m2, np.float64).reshape(C, *np.shape(m2)[2:])
        n = np.asarray(n, np.float64).reshape(C)
        N = n.sum()
        mu = (n[:, None] * mean).sum(0) / max(N, 1.0)
        d = mean - mu[None, :]
        if m2.ndim == 3:
            m2p = m2.sum(0) + np.einsum("c,ci,cj->ij", n, d, d)
        else:
            m2p = m2.sum(0) + (n[:, None] * d * d).sum(0)
        return mu, m2p, N

    def _rep(a, dt):
        a = np.asarray(a)
        return np.broadcast_to(a.astype(dt), (D, per, *a.shape)).copy()

    def _pool_welford(st, ax):
        # Cross-chain adaptation: before a slow window closes, every chain gets the Welford
        # (co)variance accumulator of all chains together, so each mass matrix is estimated from
        # C times more warmup draws and all chains leave warmup with the same metric.
        st = jax.device_get(st)
        mm = st.adapt_state.mm_state
        pooled = {}
        for blk, (mean, m2, n) in mm.items():
            mu, m2p, N = _pooled(mean, m2, n)
            if N < 2:
                return st, ax
            dt = np.asarray(mean).dtype
            pooled[blk] = (_rep(mu, dt), _rep(m2p, dt), np.full((D, per), int(N), np.asarray(n).dtype))
        st = st._replace(adapt_state=st.adapt_state._replace(mm_state=pooled))
        if nG:
            ax = jax.device_get(ax)
            mu, m2p, N = _pooled(ax["wm"], ax["w2"], ax["wn"])
            if N > 1:
                dt = np.asarray(ax["wm"]).dtype
                ax = {**ax, "wm": _rep(mu, dt), "w2": _rep(m2p, dt), "wn": np.full((D, per), N, dt)}
        return st, ax

    def _pool_step_size(st):
        # the sampling phase uses one step size for all chains (the median of the adapted ones):
        # a chain that adapted in an unusual region must not run 3x deeper trees than the others
        st = jax.device_get(st)
        eps = np.asarray(st.adapt_state.step_size)
        return st._replace(adapt_state=st.adapt_state._replace(step_size=np.full_like(eps, np.median(eps))))

    sched = build_adaptation_schedule(W) if W > 0 else []
    stops = [w.end for w in sched[1:-1]]  # pool just before each slow window's last iteration
    warm = _phase(W, "warmup", False, stops) if W > 0 else None
    if WARMUP_HOOK is not None:
        WARMUP_HOOK(state=state, aux=aux, potential_gen=potential_gen, offset=_s, layout=lay)
    if settings.pool_adaptation and C > 1 and W > 0:
        state = _pool_step_size(state)
    samp = _phase(settings.draws, "sampling", True)
    return warm, samp, D


def fit(data, spec: ModelSpec | str = "per-benchmark", settings: SamplerSettings | None = None,
        progress: ProgressCallback | None = None, cancel: CancelCallback | None = None) -> Posterior:
    """Sample the posterior of a crossed random-intercept binomial-logit model with NUTS.

    Implements seed 000 Eq. 2 (per benchmark) and Eq. 6 (pooled), or any random-intercept
    formula (SPEC section 2), with the parameterisation described in this module's
    docstring.  The result is exact MCMC; whether it converged is in
    ``Posterior.diagnostics`` (split R-hat <= 1.01, bulk ESS >= 400, no divergences).

    Parameters
    ----------
    data
        A :class:`~ddr_explorer.core.corpus.corpus.Corpus`, a DataFrame of records
        (facet columns, ``successes``, ``trials``), or a :class:`~.design_matrix.DesignMatrix`.
    spec
        A :class:`~.formula.ModelSpec`, a preset name or a formula.
    settings
        :class:`SamplerSettings` (defaults when omitted).
    progress
        Called as ``progress(phase, iteration, total, eta_seconds)`` with phase one of
        ``"compile"``, ``"warmup"``, ``"sampling"``, ``"diagnostics"``.
    cancel
        Polled between chunks; when it returns True the fit stops with :class:`FitCancelled`.

    Returns
    -------
    Posterior
    """
    from .diagnostics import diagnose

    settings = settings or SamplerSettings()
    t_start = time.perf_counter()
    timings: dict[str, float] = {}
    spec = as_spec(spec)
    design = data if isinstance(data, DesignMatrix) else build_design(data, spec)
    timings["design"] = time.perf_counter() - t_start
    if cancel is not None and cancel():
        raise FitCancelled("fit cancelled by the user before sampling.")

    t = time.perf_counter()
    rough = rough_fit(design)
    cols = [spec.term(n).columns for n in design.term_names]
    group = collapsed_group(design, cols) if settings.collapsed in ("joint", "gibbs") else None
    inner = list(group.terms[1:]) if group is not None and settings.collapsed == "gibbs" else []
    marg, marg_note = None, ""
    if settings.marginalise == "auto":
        in_group = set(group.terms) if group is not None else set()
        mt, marg_note = choose_marginal_term(design, rough, [k for k in range(design.n_terms) if k not in in_group])
        if mt is not None:
            p = spec.priors.for_term(design.term_names[mt.term])
            marg = _Marginal(term=mt, sigma_df=p.df, sigma_scale=p.scale, sigma0=float(rough.sigma[mt.term]))
    nuts_terms = [k for k in range(design.n_terms) if k not in inner and (marg is None or k != marg.term.term)]
    lay = _make_layout(design, spec, rough, settings.parameterisation, nuts_terms, nested=settings.nested_centring)
    gibbs = None
    if group is not None:
        Jin = design.n_levels[inner].astype(np.int64)
        pri = [spec.priors.for_term(design.term_names[k]) for k in group.terms]
        gibbs = _GibbsBlock(group=group, top_pos=nuts_terms.index(group.terms[0]),
                            nuts_pos=[nuts_terms.index(k) if k in nuts_terms else None for k in group.terms],
                            inner=inner, J=Jin,
                            offsets=np.concatenate([[0], np.cumsum(Jin)]),
                            sigma_df=np.array([p.df for p in pri]), sigma_scale=np.array([p.scale for p in pri]))
    timings["rough_fit"] = time.perf_counter() - t
    mh_steps = _mh_steps(settings, gibbs, design, lay, marg)

    import jax

    devices, kind = _devices(settings.device)
    _enable_compilation_cache()
    ctx = jax.enable_x64(True) if settings.float64 else contextlib.nullcontext()
    try:
        with ctx, jax.default_device(devices[0]), _single_threaded_blas():
            import jax.numpy as jnp

            dtype = jnp.float64 if settings.float64 else jnp.float32
            warm, samp, n_dev = _run_chains(design, spec, lay, gibbs, rough, settings, devices, dtype, progress,
                                            cancel, timings, marg, mh_steps)
    finally:
        # Every fit compiles fresh closures over its own data, so its executables can never be
        # reused in memory (the disk cache serves refits); JAX keeps them anyway, and their JIT code
        # holds about 1,550 memory maps per fit: a process ran out of maps (vm.max_map_count
        # 65,530) after 32 fits in a row ("LLVM compilation error: Cannot allocate memory").  With
        # the caches cleared the count stays flat (measured: 1,503-1,507 maps over 6 fits).
        jax.clear_caches()

    t = time.perf_counter()
    if progress:
        progress("diagnostics", 0, 1, None)
    names = design.term_names
    sigma, effects = {}, {}
    for i, k in enumerate(lay.terms):
        sigma[names[k]] = samp["nuts_sigma"][:, :, i].astype(np.float64)
        if settings.keep_random_effects:
            effects[names[k]] = samp["nuts_u"][:, :, lay.offsets[i]:lay.offsets[i + 1]]
    if gibbs is not None:
        for i, k in enumerate(gibbs.inner):
            sigma[names[k]] = np.exp(samp["gibbs_ls"][:, :, i].astype(np.float64))
            if settings.keep_random_effects:
                effects[names[k]] = samp["gibbs_u"][:, :, gibbs.offsets[i]:gibbs.offsets[i + 1]]
    if marg is not None:
        sigma[names[marg.term.term]] = samp["marg_sigma"][:, :, 0].astype(np.float64)
    sigma = {nm: sigma[nm] for nm in names}
    effects = {nm: effects[nm] for nm in names if nm in effects}
    stats = {k: samp[k] for k in _STATS}
    stats["tree_depth"] = np.floor(np.log2(np.maximum(stats["num_steps"], 1))).astype(np.int64) + 1
    if gibbs is not None:
        stats["gibbs_accept"] = samp["gibbs_accept"]
    if settings.scale_steps:
        stats["scale_accept"] = samp["scale_accept"]
    if warm is not None:
        stats["warmup_num_steps"] = warm["num_steps"]
        stats["warmup_diverging"] = warm["diverging"]
    device = (f"cpu x{n_dev}" if kind == "cpu" else f"{kind}: {devices[0].device_kind}")
    post = Posterior(sigma=sigma, mu=samp["mu"].astype(np.float64), random_effects=effects,
                     levels={nm: design.level_labels[k] for k, nm in enumerate(names)}, spec=spec,
                     settings=settings, device=device, wall_seconds=float("nan"), timings=timings,
                     sample_stats=stats, n_cells=design.n_cells, n_trials=design.n_trials,
                     notes=list(design.notes))
    if gibbs is not None:
        post.notes.append("collapsed block: " + ", ".join(names[k] for k in group.terms) +
                          f" (run term {names[group.terms[0]]}, {group.n_runs} runs; "
                          f"{mh_steps} Metropolis steps per transition)")
    if marg is None and marg_note and marg_note != NO_CANDIDATE:
        post.notes.append(marg_note)  # a candidate refused because the quadrature was not accurate
    if marg is not None:
        post.notes.append(marg.term.describe())
        post.integrated = [names[marg.term.term]]
        if settings.keep_random_effects:
            # accuracy where the posterior is: eta at chain 0's last draw, sigma at its 97.5% quantile
            mt = marg.term
            eta = eta_without(design, mt.term, post.mu[0, -1],
                              [effects[nm][0, -1] if nm in effects else None for nm in names])
            s_hi = float(np.quantile(sigma[mt.name], 0.975))
            post.quadrature_error = rule_error(mt, eta, s_hi)
            post.notes.append(f"quadrature error at the posterior (last draw, sigma[{mt.name}] = {s_hi:.2f}): "
                              f"{post.quadrature_error:.1e} nats")
    post.diagnostics = diagnose(post)
    timings["diagnostics"] = time.perf_counter() - t
    if progress:
        progress("diagnostics", 1, 1, 0.0)
    post.wall_seconds = time.perf_counter() - t_start
    return post
