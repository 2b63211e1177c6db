"""Bayesian linear mixed model on the observed scale (seed 000 (Hardy et al. 2026) App. C.2 and G.5).

The model is the Gaussian, identity-link twin of the Bayesian GLMM (same formula, same terms,
same priors: "all linear estimations use the same hyperparameters as above, except that the
family is Gaussian with an identity link", seed 000 C.2)::

    y_t = mu + sum_k u_k[level_k(t)] + e_t,   e_t ~ N(0, sigma_e^2),   u_k ~ N(0, sigma_k^2 I),
    sigma_k, sigma_e ~ half-Student-t(3, 0, 2.5),   mu ~ Student-t(3, 0, 2.5)

for every trial result ``y_t`` in {0, 1} (or numeric score).  Its draws give the variance
components on the score scale, and from them, per draw, the *score* reliabilities of seed 000
G.5: absolute reliability Phi (Eq. 20 / 21) and relative reliability Erho2 at the corpus's
observed design, through :func:`~ddr_explorer.core.reliability.generalizability` (the D-study's
function).  Phi <= Erho2 draw by draw (Eq. 22): rankings can be reliable while scores are not.

Why a blocked Gibbs sampler in JAX, not NUTS
--------------------------------------------
The Gaussian model is conditionally conjugate, and its likelihood depends on the data only through
each cell's count ``n_c``, total ``s_c`` and sum of squares ``q_c`` (:mod:`.design`): the
within-cell sum of squares ``W = sum_c (q_c - s_c^2 / n_c)`` is a constant and the rest is
``sum_c n_c (ybar_c - eta_c)^2``.  Every full conditional is therefore a closed-form Normal or
inverse-gamma over cells, so one sweep costs a few passes over the cells (7,209 on the TB2 demo)
and no gradient, no leapfrog steps and no step-size adaptation; NUTS on the same 4,400 random
effects needs tens of gradient evaluations per draw and the reparameterisation machinery of
:mod:`ddr_explorer.core.model.parameterisation` (written for the logit likelihood) to avoid
funnels.  Measured on the TB2 demo (``ddr methods``, 2 cores shared with other jobs, one run):
4 chains x 1,000 kept draws (thinned by 4 from 4,000 sweeps after 500 of warm-up) passed the gate
(max R-hat 1.003, min bulk ESS 631, the scaffold variance the slowest) in 211 s wall, against 110 s for
the Laplace fit and 14 s for REML in the same run.  Exactness: every step below leaves the posterior invariant; there is
no approximation beyond Monte Carlo error, which the convergence gate (core/gate.py) checks.

One sweep (all chains vectorised with ``jax.vmap``):

1. For each term k, ``(mu, u_k)`` jointly given the rest (the *collapsed* Gibbs step of
   Papaspiliopoulos, Roberts & Zanella 2020, Biometrika 107(1), which, unlike updating mu and
   u_k separately, does not slow down as crossed designs grow): ``mu`` from its conditional with
   ``u_k`` integrated out, then ``u_k | mu``, level by level.
2. Translation moves for nested pairs (a term h whose facets are a subset of term k's, e.g.
   task and task:model): the likelihood is unchanged by ``u_h[i] + c, u_k[i, .] - c``, and
   ``c_i`` is drawn from its exact (Normal) conditional (a generalised Gibbs step, Liu & Sabatti
   2000).  This removes the ridge between a main effect and its interactions.
3. ``sigma_k^2 | u_k`` and ``sigma_e^2 | mu, u`` from inverse-gamma conditionals: the
   half-Student-t is written as a scale mixture, ``sigma^2 | a ~ IG(nu/2, nu/a)``,
   ``a ~ IG(1/2, 1/A^2)`` (Huang & Wand 2013, Bayesian Analysis 8(2)), and ``a`` is updated too;
   the Student-t of ``mu`` likewise (``mu | l ~ N(loc, l)``, ``l ~ IG(nu/2, nu A^2 / 2)``).
4. A scale move per term (the non-centred half of an interweaving, Yu & Meng 2011):
   Metropolis on ``d`` for ``(sigma_k, u_k) -> e^d (sigma_k, u_k)``; it moves a variance that
   the centred step 3 moves slowly (a component near zero, levels the data barely inform).
5. A likelihood-free scale move per nested pair: ``u_h -> e^d u_h`` with the levels of k under
   level i of h shifted by ``-(e^d - 1) u_h[i]``, so no prediction changes; only the priors of
   ``u_k`` and ``sigma_h`` enter the Metropolis ratio.  It moves a variance whose levels the data
   pin down only jointly with their interactions (TB2's scaffold variance mixes slowest of all).

The proposal scales of 4 and 5 are adapted during warm-up only.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field

import numpy as np

from .design import EstimationCancelled, MixedDesign

#: Kept draws per compiled chunk: warm-up and draws are rounded up to whole chunks; cancel and
#: progress are checked between chunks.
CHUNK = 250


@dataclass
class BayesLmmSettings:
    """Sampler settings of the Bayesian LMM.

    Attributes
    ----------
    chains
        Independent chains (R-hat needs several).
    warmup
        Sweeps discarded at the start of each chain (the scale moves adapt there).
    draws
        Kept draws per chain.
    thin
        Sweeps per kept draw.
    max_draws
        When the gate fails on ESS, the chains are continued (draws doubled) up to this many kept
        draws per chain.
    seed
        Random seed.
    """

    chains: int = 4
    warmup: int = 500
    draws: int = 1000
    thin: int = 4
    max_draws: int = 8000
    seed: int = 0

    def to_dict(self) -> dict:
        return {"chains": self.chains, "warmup": self.warmup, "draws": self.draws, "thin": self.thin,
                "max_draws": self.max_draws, "seed": self.seed}


@dataclass
class BayesLmmFit:
    """Posterior draws of the Bayesian LMM on the observed scale.

    Attributes
    ----------
    term_names
        Terms in formula order.
    variances
        Term (and ``"residual"``) -> sigma^2 draws, shape (chains, draws).
    mu
        Intercept draws (chains, draws): the grand mean score.
    diagnostics
        :class:`~ddr_explorer.core.model.diagnostics.Diagnostics` of the sigmas (and mu): the
        convergence gate's verdict is ``diagnostics.converged``.
    settings
        The settings used (``draws`` is the final number per chain after any extension).
    seconds
        Wall time of the whole fit, compilation included.
    """

    term_names: tuple[str, ...]
    variances: dict[str, np.ndarray]
    mu: np.ndarray
    diagnostics: object
    settings: BayesLmmSettings
    seconds: float = 0.0
    acceptance: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def converged(self) -> bool:
        return bool(self.diagnostics.converged)

    def components(self):
        """All draws as :class:`~ddr_explorer.core.reliability.VarianceComponents` (residual = sigma_e^2 draws)."""
        from ..reliability import VarianceComponents

        flat = {t: self.variances[t].ravel() for t in self.term_names}
        return VarianceComponents.from_mapping(flat, residual=self.variances["residual"].ravel(),
                                               source="Bayesian LMM")

    def posterior_means(self) -> dict[str, float]:
        """Posterior mean of each sigma^2 (residual included)."""
        return {t: float(np.mean(v)) for t, v in self.variances.items()}

    def shares(self) -> dict[str, float]:
        """Posterior mean of each per-draw share sigma_k^2 / total (seed 000 Table 20's convention)."""
        total = sum(self.variances.values())
        return {t: float(np.mean(v / total)) for t, v in self.variances.items()}


def _pairs(term_names, codes, n_levels):
    """Nested pairs (h, k): facets of h a proper subset of facets of k, with k's level -> h's level."""
    facets = [frozenset(t.split(":")) for t in term_names]
    out = []
    for h, fh in enumerate(facets):
        for k, fk in enumerate(facets):
            if h != k and fh < fk:
                parent = np.zeros(int(n_levels[k]), dtype=np.int64)
                parent[codes[k]] = codes[h]
                out.append((h, k, parent))
    return out


def _sampler_data(design: MixedDesign, priors) -> tuple[tuple, dict]:
    """The static structure (shapes, nested pairs) and the numeric inputs of the sampler.

    The data are arguments of the compiled functions, not constants baked into them, so one
    compilation serves every data set of the same shape (and the persistent compilation cache of
    :mod:`ddr_explorer.core.model.devices` keeps it across runs).
    """
    K = design.n_terms
    L = tuple(int(x) for x in design.n_levels)
    n_np = design.n
    pairs = _pairs(design.term_names, design.codes, design.n_levels)
    pri = [priors.for_term(t) for t in design.term_names]
    pe, pm = priors.for_term("residual"), priors.intercept
    n_obs = float(n_np.sum())
    mean0 = float(np.sum(design.s) / n_obs)
    data = {
        "codes": tuple(design.codes[k].astype(np.int32) for k in range(K)),
        "n": n_np.astype(np.float32), "ybar": (design.s / n_np).astype(np.float32),
        # the within-cell sum of squares W, exact in float64 before the float32 sampler sees it
        "within": np.float32(np.sum(np.maximum(design.q - design.s * design.s / n_np, 0.0))),
        "n_obs": np.float32(n_obs),
        "n_lev": tuple(np.bincount(design.codes[k], weights=n_np, minlength=L[k]).astype(np.float32)
                       for k in range(K)),
        "parent": tuple(p.astype(np.int32) for _, _, p in pairs),
        "count": tuple(np.bincount(p, minlength=L[h]).astype(np.float32) for h, _, p in pairs),
        "nu": np.asarray([p.df for p in pri], np.float32), "a2": np.asarray([p.scale ** 2 for p in pri], np.float32),
        "pe": np.asarray([pe.df, pe.scale ** 2], np.float32),
        "pm": np.asarray([pm.df, pm.loc, pm.scale ** 2], np.float32),
        "var0": np.float32(max(float(np.sum(design.q) / n_obs - mean0 ** 2), 1e-6)), "mean0": np.float32(mean0),
    }
    return (K, L, tuple((h, k) for h, k, _ in pairs)), data


@functools.lru_cache(maxsize=8)
def _build_sampler(structure: tuple):
    """The jitted, chain-vectorised ``init(keys, data)`` and ``run(state, keys, data, n_keep, thin, adapt, it0)``."""
    import jax
    import jax.numpy as jnp

    K, L, pair_idx = structure
    dtype = jnp.float32

    def inv_gamma(key, shape_, rate):
        return rate / jax.random.gamma(key, shape_, dtype=dtype)

    def sweep(st, key, adapt, it, D):
        codes, n, ybar = D["codes"], D["n"], D["ybar"]
        nu, a2 = D["nu"], D["a2"]
        pe_df, pe_a2 = D["pe"][0], D["pe"][1]
        pm_df, pm_loc, pm_a2 = D["pm"][0], D["pm"][1], D["pm"][2]

        def sse(eta):
            return D["within"] + jnp.sum(n * (ybar - eta) ** 2)

        keys = jax.random.split(key, 6 * K + 3 * len(pair_idx) + 4)
        ki = iter(range(keys.shape[0]))
        mu, us, s2, a, s2e, ae, lam, tot, logstep = (st["mu"], list(st["u"]), st["s2"], st["a"], st["s2e"],
                                                     st["ae"], st["lam"], st["tot"], st["logstep"])
        # 1. (mu, u_k) jointly, for each term: mu with u_k integrated out, then u_k | mu level by level
        for k in range(K):
            other = tot - us[k][codes[k]]
            big_s = jax.ops.segment_sum(n * (ybar - other), codes[k], num_segments=L[k])
            big_n = D["n_lev"][k]
            den = big_n * s2[k] + s2e
            prec_mu = 1.0 / lam + jnp.sum(big_n / den)
            mean_mu = (pm_loc / lam + jnp.sum(big_s / den)) / prec_mu
            mu = mean_mu + jax.random.normal(keys[next(ki)], (), dtype) / jnp.sqrt(prec_mu)
            prec = big_n / s2e + 1.0 / s2[k]
            mean = (big_s - big_n * mu) / s2e / prec
            us[k] = mean + jax.random.normal(keys[next(ki)], (L[k],), dtype) / jnp.sqrt(prec)
            tot = other + us[k][codes[k]]
        # 2. translations between a term and the terms nested under its facets (likelihood unchanged)
        for (h, k), parent, count in zip(pair_idx, D["parent"], D["count"]):
            p_i = 1.0 / s2[h] + count / s2[k]
            m_i = (-us[h] / s2[h] + jax.ops.segment_sum(us[k], parent, num_segments=L[h]) / s2[k]) / p_i
            c = m_i + jax.random.normal(keys[next(ki)], (L[h],), dtype) / jnp.sqrt(p_i)
            us[h] = us[h] + c
            us[k] = us[k] - c[parent]
        # 3. variances (centred), their mixing scales, the residual and mu's scale
        new_s2, new_a = [], []
        for k in range(K):
            ss = jnp.sum(us[k] ** 2)
            v = inv_gamma(keys[next(ki)], 0.5 * (nu[k] + L[k]), nu[k] / a[k] + 0.5 * ss)
            new_s2.append(v)
            new_a.append(inv_gamma(keys[next(ki)], 0.5 * (nu[k] + 1.0), nu[k] / v + 1.0 / a2[k]))
        s2, a = jnp.stack(new_s2), jnp.stack(new_a)
        s2e = inv_gamma(keys[next(ki)], 0.5 * (pe_df + D["n_obs"]), pe_df / ae + 0.5 * sse(mu + tot))
        ae = inv_gamma(keys[next(ki)], 0.5 * (pe_df + 1.0), pe_df / s2e + 1.0 / pe_a2)
        lam = inv_gamma(keys[next(ki)], 0.5 * (pm_df + 1.0), 0.5 * (pm_df * pm_a2 + (mu - pm_loc) ** 2))
        # 4. scale moves (sigma_k, u_k) -> e^d (sigma_k, u_k): the u-prior and its Jacobian cancel, leaving
        #    the likelihood, the IG(nu/2, nu/a) density of sigma^2 and the Jacobian e^(2d) of sigma^2
        accs = []
        s2_list = [s2[k] for k in range(K)]
        for k in range(K):
            d = jnp.exp(logstep[k]) * jax.random.normal(keys[next(ki)], (), dtype)
            shift = (jnp.exp(d) - 1.0) * us[k][codes[k]]
            # the change of the residual sum of squares, summed directly (a difference of two large float32
            # sums would lose it)
            delta = jnp.sum(n * shift * (shift - 2.0 * (ybar - mu - tot)))
            log_r = (-delta / (2.0 * s2e) - nu[k] * d
                     - nu[k] / a[k] * (jnp.exp(-2.0 * d) - 1.0) / s2_list[k])
            acc = jnp.log(jax.random.uniform(keys[next(ki)], (), dtype)) < log_r
            us[k] = jnp.where(acc, us[k] * jnp.exp(d), us[k])
            s2_list[k] = jnp.where(acc, s2_list[k] * jnp.exp(2.0 * d), s2_list[k])
            tot = jnp.where(acc, tot + shift, tot)
            accs.append(jnp.exp(jnp.minimum(log_r, 0.0)))
        # 5. likelihood-free scale moves for each nested pair (h, k): u_h -> e^d u_h with every level of k
        #    under level i of h shifted by -(e^d - 1) u_h[i], so eta does not change.  A one-parameter group
        #    (T_d T_d' = T_(d + d')) with Jacobian e^(d L_h) on u and e^(2d) on sigma_h^2: what moves a variance
        #    whose levels the data pin down only jointly with their interactions (TB2's scaffold).
        for j, ((h, k), parent) in enumerate(zip(pair_idx, D["parent"])):
            d = jnp.exp(logstep[K + j]) * jax.random.normal(keys[next(ki)], (), dtype)
            g = jnp.exp(d) - 1.0
            uk_new = us[k] - g * us[h][parent]
            log_r = (-(jnp.sum(uk_new ** 2) - jnp.sum(us[k] ** 2)) / (2.0 * s2_list[k]) - nu[h] * d
                     - nu[h] / a[h] * (jnp.exp(-2.0 * d) - 1.0) / s2_list[h])
            acc = jnp.log(jax.random.uniform(keys[next(ki)], (), dtype)) < log_r
            us[h] = jnp.where(acc, us[h] * jnp.exp(d), us[h])
            us[k] = jnp.where(acc, uk_new, us[k])
            s2_list[h] = jnp.where(acc, s2_list[h] * jnp.exp(2.0 * d), s2_list[h])
            accs.append(jnp.exp(jnp.minimum(log_r, 0.0)))
        acc_p = jnp.stack(accs)
        # Robbins-Monro towards 44% acceptance, in warm-up only (frozen afterwards: exact sampling)
        logstep = jnp.where(adapt, logstep + (acc_p - 0.44) / jnp.sqrt(it + 10.0), logstep)
        return {"mu": mu, "u": tuple(us), "s2": jnp.stack(s2_list), "a": a, "s2e": s2e, "ae": ae, "lam": lam,
                "tot": tot, "logstep": logstep, "acc": st["acc"] + acc_p}

    def init_one(key, D):
        k1, k2, k3 = jax.random.split(key, 3)
        # over-dispersed starts (each variance a factor e^(+-1) from a flat split) so R-hat can see a stuck chain
        s2 = D["var0"] / (K + 1) * jnp.exp(jax.random.normal(k1, (K,), dtype))
        s2e = D["var0"] / (K + 1) * jnp.exp(jax.random.normal(k2, (), dtype))
        mu = D["mean0"] + 0.1 * jax.random.normal(k3, (), dtype)
        return {"mu": mu, "u": tuple(jnp.zeros((L[k],), dtype) for k in range(K)), "s2": s2,
                "a": jnp.ones((K,), dtype), "s2e": s2e, "ae": jnp.ones((), dtype),
                "lam": D["pm"][2], "tot": jnp.zeros_like(D["n"]),
                "logstep": jnp.full((K + len(pair_idx),), math.log(0.3), dtype),
                "acc": jnp.zeros((K + len(pair_idx),), dtype)}

    def run_one(st, key, D, n_keep, thin, adapt, it0):
        def keep(carry, i):
            def inner(j, c):
                st, key = c
                key, sub = jax.random.split(key)
                return sweep(st, sub, adapt, it0 + i * thin + j, D), key

            st, key = jax.lax.fori_loop(0, thin, inner, carry)
            return (st, key), (st["s2"], st["s2e"], st["mu"])

        (st, key), out = jax.lax.scan(keep, (st, key), jnp.arange(n_keep))
        return st, key, out  # the key goes on to the next chunk: a chunk never replays another's noise

    # one compilation per shape: the chunk length is static; thinning, warm-up flag and data are traced
    run = jax.jit(jax.vmap(run_one, in_axes=(0, 0, None, None, None, None, None)), static_argnums=(3,))
    init = jax.jit(jax.vmap(init_one, in_axes=(0, None)))
    return init, run


def bayes_lmm(design: MixedDesign, priors=None, settings: BayesLmmSettings | None = None, *,
              progress=None, cancel=None) -> BayesLmmFit:
    """Sample the Bayesian LMM on the observed scale (seed 000 App. C.2) and check the gate.

    Parameters
    ----------
    design
        Cells and terms (:meth:`MixedDesign.from_spec` for a corpus and formula; the 0/1 trial
        results are the scores).
    priors
        :class:`~ddr_explorer.core.model.formula.Priors` (default: seed 000's, half-Student-t(3, 0, 2.5)
        for every sigma, the residual's included, and Student-t(3, 0, 2.5) for mu).
    settings
        :class:`BayesLmmSettings`.
    progress, cancel
        ``progress(phase, i, n, eta)`` between chunks of sweeps; ``cancel()`` polled there
        (raises :class:`EstimationCancelled`).

    Returns
    -------
    BayesLmmFit
        Draws of every sigma^2 and of mu, and the convergence diagnostics (core/gate.py thresholds:
        R-hat <= 1.01 and bulk ESS >= 400 for every sigma; a Gibbs sampler has no divergences).
        When the first ``draws`` fall short of the ESS, the chains are continued, doubling the
        draws, up to ``max_draws``; a fit still short is returned with ``converged`` False.
    """
    import jax
    import jax.numpy as jnp

    from ..model.formula import Priors

    t0 = time.perf_counter()
    settings = settings or BayesLmmSettings()
    priors = priors or Priors()
    if design.n_obs <= 2:
        raise ValueError("the Bayesian LMM needs more than two observations.")
    from ..model.devices import _enable_compilation_cache

    _enable_compilation_cache()
    structure, data = _sampler_data(design, priors)
    init, run = _build_sampler(structure)
    dtype = jnp.float32
    key = jax.random.PRNGKey(settings.seed)
    k_init, k_run = jax.random.split(key)
    state = init(jax.random.split(k_init, settings.chains), data)
    keys = jax.random.split(k_run, settings.chains)
    chunk = CHUNK
    total_planned = settings.warmup + settings.draws * settings.thin
    done = 0

    def tick(phase):
        if cancel is not None and cancel():
            raise EstimationCancelled(f"Bayesian LMM cancelled by the user after {done} sweeps.")
        if progress is not None:
            progress(phase, min(done, total_planned - 1), total_planned, None)

    # warm-up in chunks of sweeps (adaptation on); draws discarded
    w = 0
    while w < settings.warmup:
        m = chunk  # warm-up rounded up to whole chunks (one compiled chunk length)
        state, keys, _ = run(state, keys, data, m, jnp.asarray(1), jnp.asarray(True), jnp.asarray(w, dtype))
        w += m
        done += m
        tick("Bayes LMM warm-up")
    state = dict(state, acc=jnp.zeros_like(state["acc"]))
    kept: list = []
    n_kept = 0
    target = settings.draws
    sampled_sweeps = 0
    diag = None
    while True:
        while n_kept < target:
            m = chunk
            state, keys, out = run(state, keys, data, m, jnp.asarray(settings.thin), jnp.asarray(False),
                             jnp.asarray(0.0, dtype))
            kept.append(tuple(np.asarray(x, dtype=np.float64) for x in out))
            n_kept += m
            done += m * settings.thin
            sampled_sweeps += m * settings.thin
            tick("Bayes LMM sampling")
        s2 = np.concatenate([k[0] for k in kept], axis=1)  # (chains, draws, K)
        s2e = np.concatenate([k[1] for k in kept], axis=1)
        mu = np.concatenate([k[2] for k in kept], axis=1)
        variances = {t: s2[:, :, k] for k, t in enumerate(design.term_names)}
        variances["residual"] = s2e
        diag = _diagnose(variances, mu)
        # a Gibbs sampler has no divergences: a fit short of the gate is a run too short, so continue it
        if diag.converged or target * 2 > settings.max_draws:
            break
        target *= 2
        total_planned = done + (target - n_kept) * settings.thin
    acc = np.asarray(state["acc"], dtype=np.float64).mean(axis=0) / max(sampled_sweeps, 1)
    pair_names = [f"{design.term_names[h]} in {design.term_names[k]}" for h, k in structure[2]]
    if progress is not None:
        progress("Bayes LMM", total_planned, total_planned, 0.0)
    used = BayesLmmSettings(**{**settings.to_dict(), "draws": n_kept})
    notes = list(design.notes)
    if not diag.converged:
        notes.append("Bayes LMM: NOT converged: " + "; ".join(diag.problems))
    return BayesLmmFit(term_names=tuple(design.term_names), variances=variances, mu=mu, diagnostics=diag,
                       settings=used, seconds=time.perf_counter() - t0,
                       acceptance=dict(zip([*design.term_names, *pair_names], map(float, acc))), notes=notes)


def _diagnose(variances: dict[str, np.ndarray], mu: np.ndarray):
    """The gate's diagnostics (:mod:`ddr_explorer.core.model.diagnostics`) of sigma = sqrt(sigma^2) and mu."""
    import pandas as pd

    from ..gate import MAX_R_HAT, MIN_ESS_BULK
    from ..model.diagnostics import Diagnostics, chain_diagnostics, draws_advice

    rows = {}
    for name, d in [*((t, np.sqrt(v)) for t, v in variances.items()), ("mu", mu)]:
        r, eb, et = chain_diagnostics(d)
        rows[name] = {"mean": float(np.mean(d)), "sd": float(np.std(d, ddof=1)), "r_hat": r, "ess_bulk": eb,
                      "ess_tail": et}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "term"
    comp = table.drop(index="mu")
    problems = [f"R-hat of sigma[{t}] is {r.r_hat:.3f} (> {MAX_R_HAT})"
                for t, r in comp.iterrows() if not r.r_hat <= MAX_R_HAT]
    problems += [f"bulk ESS of sigma[{t}] is {r.ess_bulk:.0f} (< {MIN_ESS_BULK:.0f})"
                 for t, r in comp.iterrows() if not r.ess_bulk >= MIN_ESS_BULK]
    advice = draws_advice(comp["ess_bulk"].min(), mu.shape[-1], MIN_ESS_BULK)
    return Diagnostics(table=table, divergences=0, ebfmi=np.array([]), converged=not problems,
                       problems=problems, warnings=[advice] if advice else [], n_draws=int(mu.size))


@dataclass
class ScoreReliability:
    """Score (observed-scale) reliability of the object of measurement, per posterior draw (seed 000 G.5).

    ``Phi`` (absolute: scores) and ``Erho2`` (relative: rankings) at one design, each summarised by
    :func:`~ddr_explorer.core.reliability.summarize` (median, mean, 68% and 95% HDIs), and
    ``p_phi_below`` = P(Phi < Erho2) (1 when any absolute-only error term is positive, Eq. 22).
    """

    object_of_measurement: str
    sizes: dict[str, float]
    phi: object
    erho2: object
    gap: object
    converged: bool
    verdict: dict

    def to_dict(self) -> dict:
        return {"object_of_measurement": self.object_of_measurement, "sizes": dict(self.sizes),
                "Phi": self.phi.to_dict(), "Erho2": self.erho2.to_dict(), "gap": self.gap.to_dict(),
                "converged": self.converged, "verdict": self.verdict}


def score_reliability(fit: BayesLmmFit, object_of_measurement: str = "model",
                      sizes: dict[str, float] | None = None) -> ScoreReliability:
    """Phi and Erho2 of scores, per draw of the Bayesian LMM (seed 000 G.5, Eqs. 20-22).

    Parameters
    ----------
    fit
        A :func:`bayes_lmm` fit.
    object_of_measurement
        ``"model"`` or ``"system"``.
    sizes
        Facet -> levels averaged over (the corpus's observed design by default in callers).
    """
    from ..reliability import generalizability, summarize

    vc = fit.components()
    rel = generalizability(vc, object_of_measurement, sizes, "relative")
    ab = generalizability(vc, object_of_measurement, sizes, "absolute")
    return ScoreReliability(object_of_measurement=object_of_measurement, sizes=dict(sizes or {}),
                            phi=summarize(ab), erho2=summarize(rel), gap=summarize(rel - ab),
                            converged=fit.converged, verdict=fit.diagnostics.verdict())
