"""How the model is parameterised for NUTS, and the moves that run beside it.

The model (SPEC section 2, seed 000 (Hardy et al. 2026) Eq. 2 and Eq. 6)::

    successes_c ~ Binomial(trials_c, logistic(eta_c)),   eta_c = mu + sum_k u_k[level_k(c)]
    u_k ~ N(0, sigma_k^2 I),  sigma_k ~ half-Student-t(3, 0, 2.5),  mu ~ Student-t(3, 0, 2.5)

is sampled exactly, in coordinates chosen so that a cheap mass matrix fits the posterior (the
one numerical approximation, a checked 1-D quadrature for one weakly identified term, is item
10).  This module builds those coordinates (:class:`_Layout`, :func:`_make_layout`), the
potential, the map back to (sigma, mu, u) and the collapsed move (:func:`_make_functions`), and
the chains' starting points (:func:`_initial_point`, :func:`_initial_gibbs`); the scale moves
(item 7) run inside the chunked runner, :func:`.chains._run_chains`.  What each idea bought,
measured: docs/sampler-measurements.md.

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
   runs it without a vmap (:func:`.chains._per_device`): a batch of one doubled the cost of every
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
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .design_matrix import DesignMatrix
from .devices import _to_device
from .formula import ModelSpec
from .geometry import (MIN_ABSORBED_RATIO, CollapsedGroup, RoughFit, host_chains, level_scales, log_scale,
                       nested_information)
from .quadrature import MarginalTerm, make_log_likelihood

#: The opt-in levers on the potential's cost, read when the functions are built: "segdot" (per-term
#: sums and per-level broadcasts as products with one (K, L) 0/1 matrix, :func:`_term_indicator`).
#: The empty set is the code before (slice sums and concatenated broadcasts); the potential is the
#: same up to float32 rounding (tests/model/test_gradient.py).  Off by default: on one device it cut
#: TB2's value-and-gradient to 0.63-0.76x, but in default TB2 fits (4 chains on 2 shared cores) the
#: wall per leapfrog step was 0.63-1.04x (median 0.89) over 5 seeds and the fit's CPU 0.78-1.31x,
#: which does not show a gain (docs/sampler-measurements.md, "The potential's gradient on CPU").
#: A switch for bench/investigations/bench_gradient.py, to re-measure on a quiet box.
LEVERS: set = set()
#: The indicator products do K x L multiply-adds where the slice sums do L: used up to this many
#: entries (TB2 26,400; the HAL-scale pooled model with its integrated term about 41,000), not for
#: the same model sampled level by level (K = 10, L = 32,014: 320,140, not measured here).
SEGDOT_MAX_ENTRIES = 100_000


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
                 nested: bool = True, min_ratio: float = MIN_ABSORBED_RATIO, chains=None) -> _Layout:
    """The coordinates NUTS samples for ``terms`` (see the module docstring).

    ``chains`` fixes the host chains of nested centring (item 11) instead of choosing them from
    ``rough``: the refits of one parent (:mod:`.refit`) keep the parent's, so that they share the
    potential's structure and one compile; the rest is recomputed from ``rough``.
    """
    J = design.n_levels[terms].astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(J)])
    cols = [spec.term(nm).columns for nm in design.term_names]
    if chains is None:
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

    @classmethod
    def split(cls, design: DesignMatrix, spec: ModelSpec, settings) -> tuple["CollapsedGroup | None", list[int]]:
        """The collapsed group of ``design`` under ``settings.collapsed`` and the terms it takes out of NUTS
        (``"gibbs"``: every group term but the run term T; ``"joint"``: none), shared by the fit
        (:func:`.sampler.sampler_layout`) and the refits (:func:`.refit._structure`)."""
        from .geometry import collapsed_group

        cols = [spec.term(n).columns for n in design.term_names]
        group = collapsed_group(design, cols) if settings.collapsed in ("joint", "gibbs") else None
        inner = list(group.terms[1:]) if group is not None and settings.collapsed == "gibbs" else []
        return group, inner

    @classmethod
    def build(cls, design: DesignMatrix, spec: ModelSpec, group: "CollapsedGroup", inner: list[int],
              nuts_terms: list[int]) -> "_GibbsBlock":
        """The block of ``group`` with ``inner`` outside NUTS, placed among the ``nuts_terms`` (design indices
        in NUTS order), with its terms' sigma priors."""
        Jin = design.n_levels[inner].astype(np.int64)
        pri = [spec.priors.for_term(design.term_names[k]) for k in group.terms]
        return cls(group=group, top_pos=nuts_terms.index(group.terms[0]),
                   nuts_pos=[nuts_terms.index(k) if k in nuts_terms else None for k in group.terms],
                   inner=inner, J=Jin, offsets=np.concatenate([[0], np.cumsum(Jin)]),
                   sigma_df=np.array([p.df for p in pri]), sigma_scale=np.array([p.scale for p in pri]))

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


def _term_indicator(J) -> np.ndarray:
    """(K, sum J) 0/1 matrix: row k marks term k's levels, so ``M @ v`` sums v per term and
    ``w @ M`` repeats w[k] over term k's levels (``LEVERS`` "segdot")."""
    M = np.zeros((len(J), int(np.sum(J))))
    off = np.concatenate([[0], np.cumsum(J)]).astype(int)
    for k in range(len(J)):
        M[k, off[k]:off[k + 1]] = 1.0
    return M


def _per_level_broadcaster(J):
    """v (K,) -> (sum J,) with v[k] repeated J[k] times, as a concatenation of broadcasts
    (cheaper on XLA CPU than a gather by a level-to-term index, and its gradient is slice sums)."""
    import jax.numpy as jnp

    sizes = [int(j) for j in J]

    def per_level(v):
        return jnp.concatenate([jnp.broadcast_to(v[k], (sz,)) for k, sz in enumerate(sizes)])

    return per_level


#: The opt-in lever on the scale moves' loop: "incremental" evaluates each proposal's potential
#: from the loop's carried per-level state in closed form (:func:`_make_functions`'s
#: ``potential_gen.incremental``) instead of the full potential: the same potential up to float
#: rounding (tests/model/test_scale_moves.py).  Off by default: the loop itself is 0.70-0.88x on TB2,
#: but it is ~30% of a chain-iteration on 4 chains sharing 2 cores, and default TB2 fits (six pairs,
#: CPU 0.85-1.05, mean 0.95) and hold-out refits (CPU per chain-iteration 0.98 and 0.99 in the
#: rounds the load held) did not show a gain beyond the shared box's noise, against ~1 s more compile
#: (docs/sampler-measurements.md, "The scale-move loop's potential in closed form").  A switch for
#: bench/investigations/bench_gradient.py (rows c', c4), ``--fits --levers old,incremental`` and
#: investigations/bench_refit_reported.py ``--ab``; the empty set is the code before.
SCALE_LEVERS: set = set()


def _incremental_gen(K, Jf, c0, c1, per_level, segment_sum, pi_mean, eta_of, priors, loglik, uniform):
    """The scale moves' potential in closed form from the loop's carried state (``incremental(s)``).

    A scale move (item 7) changes each log sigma_k by dls_k and multiplies x by exp(log_fx) per level,
    so a(sigma) x changes by a known factor per level: e^(dl) for the u-scaling repeats (u_k e^(dls_k)),
    and exp((gamma + 1) dl) sqrt(q / q') for the gamma repeats, q = c0 + c1 sigma^2 (geometry.log_scale).
    The loop carries (a x, dev, log q) per level and (pi'(a x), |dev|^2, sum dev) per term (x is
    a x / a(sigma) at the end), so a
    u-scaling proposal costs one log per level (log q', the log-Jacobian) and the linear predictor
    (dev e^(dl): the deviations scale with their term, and so do the three per-term sums), and a
    gamma proposal one exp and one log per level, the per-term sums and the linear predictor; neither
    recomputes x -> a x or the centring from scratch.  The potential is the full one's formula
    (``_priors``, ``_loglik`` and item 8's gather ``_eta`` are shared), so the value is the same up to
    float rounding.  Not for nested centring (item 11b: a host's deviations enter its hosted terms'
    with a weight that changes with sigma, so no per-term factor exists): the caller falls back to
    the full potential there.
    """
    import jax
    import jax.numpy as jnp

    def gen(s):
        def enter(z):
            g, x = z["g"], z["x"]
            ls = g[1:K + 1]
            sigma = jnp.exp(ls)
            lq = jnp.log(c0 + c1 * per_level(sigma * sigma))
            ax = per_level(sigma) * jnp.exp(-0.5 * lq) * x
            ubar = pi_mean(ax)
            dev = ax - per_level(ubar)
            return {"g": g, "ax": ax, "dev": dev, "lq": lq, "ubar": ubar, "ss": segment_sum(dev * dev),
                    "sd": jnp.zeros_like(ubar) if uniform else segment_sum(dev)}

        def propose(st, dls, full, gam):
            """(U at the proposal, the proposal's state, sum of log_fx: the group's log-Jacobian)."""
            g = st["g"]
            ls_new = g[1:K + 1] + dls
            sigma = jnp.exp(ls_new)
            lq = jnp.log(c0 + c1 * per_level(sigma * sigma))

            def u_scaling(_):
                # x' = x e^(dl) a(sigma) / a(sigma'): a x and dev scale by e^(dl); log_fx = (lq' - lq) / 2
                e = jnp.exp(dls)
                el = per_level(e)
                return (st["ax"] * el, st["dev"] * el, st["ubar"] * e, st["ss"] * (e * e), st["sd"] * e,
                        0.5 * (jnp.sum(lq) - jnp.sum(st["lq"])))

            def gamma(_):
                # x' = x e^(gamma dl): a x changes by e^(gamma dl) a(sigma') / a(sigma)
                dl = per_level(dls)
                lf = gam * dl
                ax = st["ax"] * jnp.exp(lf + dl + 0.5 * (st["lq"] - lq))
                ubar = pi_mean(ax)
                dev = ax - per_level(ubar)
                sd = st["sd"] if uniform else segment_sum(dev)
                return ax, dev, ubar, segment_sum(dev * dev), sd, jnp.sum(lf)

            ax, dev, ubar, ss, sd, slf = jax.lax.cond(full, u_scaling, gamma, None)
            g = g.at[1:K + 1].set(ls_new)
            alpha, w = g[0], g[K + 1:2 * K + 1]
            sum_log_a = jnp.sum(Jf * ls_new) - 0.5 * jnp.sum(lq)
            lp_u, lp_sigma, lp_w, lp_mu = priors(alpha, ls_new, sigma, w, ubar, ss, None if uniform else sd, sum_log_a)
            U = -(loglik(eta_of(alpha, dev, s), g) + lp_u + lp_sigma + lp_w + lp_mu)
            return U, {"g": g, "ax": ax, "dev": dev, "lq": lq, "ubar": ubar, "ss": ss, "sd": sd}, slf

        def leave(st):
            # x = a x / a(sigma), a = sigma exp(-lq / 2): equal to the old loop's products of
            # exp(log_fx) up to float rounding (a few ulps after 36 moves)
            return {"g": st["g"], "x": st["ax"] * jnp.exp(0.5 * st["lq"] - per_level(st["g"][1:K + 1]))}

        ns = type("IncrementalScalePotential", (), {})()
        ns.enter, ns.propose, ns.leave = enter, propose, leave
        return ns

    return gen


def _make_functions(design: DesignMatrix, lay: _Layout, dtype, term_columns, gibbs: _GibbsBlock | None,
                    mh_steps: int, marg: "_Marginal | None" = None, consts: dict | None = None):
    """The potential generator, the map to (sigma, mu, u) and the collapsed move.

    NUTS samples z = {"g": (1+2K+M,), "x": (L,)} for the terms of ``lay`` (M = 1 when a term is
    integrated out: its log sigma is the last global coordinate); the inner terms of the Gibbs
    block enter the likelihood as a fixed offset ``s`` on the run term's levels.

    ``consts`` replaces the constants that depend on the counts (``y``, ``n``, ``c0``, ``c1``,
    ``pi``, ``pi_norm``, ``sref2``, and ``tmask``, the integrated term's trial mask; arrays shaped
    like ``design``'s and ``lay``'s, possibly traced): the refits of one parent (:mod:`.refit`)
    pass them as arguments of one compiled function.  The centring weights are then not assumed
    uniform.
    """
    import jax
    import jax.numpy as jnp

    K, J, off = lay.K, lay.J, lay.offsets
    if consts is None:
        consts = {"y": design.successes, "n": design.trials, "c0": lay.c0, "c1": lay.c1, "pi": lay.pi,
                  "pi_norm": lay.pi_norm, "sref2": lay.sref ** 2}
        uniform = lay.uniform_pi
    else:
        uniform = False
    y = _to_device(consts["y"], dtype)
    n = _to_device(consts["n"], dtype)
    c0 = _to_device(consts["c0"], dtype)
    c1 = _to_device(consts["c1"], dtype)
    Jf = _to_device(J, dtype)
    # centring weights pi (per level, summing to 1 per term) and |pi_k|: the deviations are
    # pi-centred and m_k = pi_k'u_k = sigma_k |pi_k| w_k (uniform pi: plain means, item 1)
    piw = _to_device(consts["pi"], dtype)
    pinorm = _to_device(consts["pi_norm"], dtype)
    sref2 = _to_device(consts["sref2"], dtype)
    sdf = _to_device(lay.sigma_df, dtype)
    ssc = _to_device(lay.sigma_scale, dtype)
    slices = [(int(off[k]), int(off[k + 1])) for k in range(K)]
    per_level = _per_level_broadcaster(J)
    # Hierarchical gather: a term whose columns lie inside another term's ("host") is constant
    # within the host's levels, so it is added to the host's level values first and only the
    # root terms are gathered per cell (pooled Eq. 6: 3 gathers per cell instead of 10; 3x
    # faster gradients measured).
    order, hosts, roots = _gather_forest(design, term_columns, lay.terms)
    host_maps = {p: _to_device(m, jnp.int32) for p, (q, m) in hosts.items()}
    root_codes = _to_device(design.codes[[lay.terms[p] for p in roots]], jnp.int32)
    top = gibbs.top_pos if gibbs is not None else None
    if marg is not None:
        # a refit on the parent's trial layout keeps its own trials by a mask (``consts["tmask"]``, :mod:`.refit`)
        marg_loglik = make_log_likelihood(marg.term, dtype, mask=consts.get("tmask"))
        m_df, m_sc = float(marg.sigma_df), float(marg.sigma_scale)

    if "segdot" in LEVERS and K * int(off[-1]) <= SEGDOT_MAX_ENTRIES:
        # per-term sums and per-level broadcasts as one product each with the (K, L) term indicator:
        # the slice sums, their staged reductions and the broadcasts' transposes were most of the
        # 127 XLA kernels of a TB2 value-and-gradient (45 with the products; see LEVERS)
        seg_mat = _to_device(_term_indicator(J), dtype)

        def _segment_sum(v):
            return jnp.dot(seg_mat, v, precision=jax.lax.Precision.HIGHEST)

        def per_level(v):  # noqa: F811
            return jnp.dot(v, seg_mat, precision=jax.lax.Precision.HIGHEST)
    else:
        def _segment_sum(v):
            # per-term sums as slice sums: a segment_sum into K segments is a scatter with K-fold
            # collisions that XLA CPU fuses badly with its producer (pooled Eq. 6: 3.1 ms of a
            # 4.3 ms gradient; slice sums 20 us)
            return jnp.stack([jnp.sum(v[a:b]) for a, b in slices])

    def _pi_mean(v):
        return _segment_sum(piw * v)

    chain_maps = [[(q, _to_device(m, jnp.int32)) for q, m in ch] for ch in lay.chains] if lay.nested else None
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
            loglik = _loglik(eta, z["g"])
            ss = _segment_sum(dev * dev)
            lp_u, lp_sigma, lp_w, lp_mu = _priors(alpha, log_sigma, sigma, w, ubar, ss,
                                                  None if uniform else _segment_sum(dev), sum_log_a)
            return -(loglik + lp_u + lp_sigma + lp_w + lp_mu)  # summed in this order since before the levers

        return potential

    def _priors(alpha, log_sigma, sigma, w, ubar, ss, sum_dev, sum_log_a):
        # u_k = dev_k + m_k 1 ~ N(0, sigma^2 I) with m_k = sigma |pi| w_k (log-Jacobian log sigma),
        # so |u|^2 = |dev|^2 + 2 m sum(dev) + J m^2; the auxiliary pi'(a x) ~ N(0, sref^2 / J);
        # log-Jacobian of x -> a(sigma) x.  ss: |dev_k|^2 per term; sum_dev: sum(dev_k) (None: uniform pi)
        lp_u = (jnp.sum(-(Jf - 1.0) * log_sigma - 0.5 * ss / sigma ** 2 - 0.5 * Jf * ubar ** 2 / sref2)
                + sum_log_a)
        # half-Student-t on sigma, plus the log-Jacobian of sigma = exp(log_sigma)
        lp_sigma = jnp.sum(-0.5 * (sdf + 1.0) * jnp.log1p((sigma / ssc) ** 2 / sdf) + log_sigma)
        if sum_dev is None:  # uniform pi: sum(dev) = 0 and J |pi|^2 = 1
            lp_w = -0.5 * jnp.sum(w ** 2)
        else:
            lp_w = -jnp.sum(pinorm * w * sum_dev / sigma + 0.5 * Jf * pinorm ** 2 * w ** 2)
        mu = alpha - jnp.sum(sigma * pinorm * w)
        lp_mu = -0.5 * (lay.mu_df + 1.0) * jnp.log1p(((mu - lay.mu_loc) / lay.mu_scale) ** 2 / lay.mu_df)
        return lp_u, lp_sigma, lp_w, lp_mu

    def _loglik(eta, g):
        # the integrated term (item 10): its levels by quadrature, its sigma half-t with the
        # log-Jacobian of sigma = exp(log sigma)
        if marg is None:
            return jnp.sum(y * eta - n * jax.nn.softplus(eta))
        ls_m = g[2 * K + 1]
        s_m = jnp.exp(ls_m)
        return marg_loglik(eta, s_m) - 0.5 * (m_df + 1.0) * jnp.log1p((s_m / m_sc) ** 2 / m_df) + ls_m

    def constrain(z):
        alpha, log_sigma, sigma, w, ubar, dev, _ = _parts(z)
        mean_u = sigma * pinorm * w
        mu = alpha - jnp.sum(mean_u)
        u = dev + per_level(mean_u)
        return sigma, mu, u

    potential_gen.eta = _eta  # for tests: the linear predictor from (alpha, dev, s)
    potential_gen.parts = _parts
    potential_gen.incremental = (_incremental_gen(K, Jf, c0, c1, per_level, _segment_sum, _pi_mean, _eta, _priors,
                                                  _loglik, uniform)
                                 if "incremental" in SCALE_LEVERS and chain_maps is None else None)
    if gibbs is None:
        return potential_gen, constrain, None, None

    grp = gibbs.group
    nG = len(grp.terms)
    run_lv = [_to_device(rl, jnp.int32) for rl in grp.run_levels]  # level of each group term per run
    overlap = _to_device(grp.overlap, dtype)
    g_df = _to_device(gibbs.sigma_df, dtype)
    g_sc = _to_device(gibbs.sigma_scale, dtype)
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
