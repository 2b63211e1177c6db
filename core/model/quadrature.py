"""Integrating one weakly identified random-intercept term out of the likelihood.

In the pooled leaderboard (seed 000 (Hardy et al. 2026) Eq. 6) the cell-level interaction benchmark:task:model has
about one level per cell: on the HAL-scale corpus 27,427 levels carry 1.5 single-trial cells
each.  Sampled with NUTS, each level is a coordinate the data barely inform, and its sigma can
only move together with all of them: that term had the smallest bulk ESS of the pooled fit
(0.12 effective draws per draw).  But the levels are conditionally independent given the rest,
and each one enters only its own cells, so its integral is one-dimensional::

    p(y_j | eta, sigma) = integral  prod_{t in level j} logistic(s_t (eta_t + sigma z)) phi(z) dz

(one factor per Bernoulli trial t of the level's cells, s_t = +1 for a success and -1 for a
failure; a binomial cell of n trials and y successes is y success trials and n - y failure
trials, which gives the binomial likelihood up to its constant binomial coefficient).  We
evaluate it by Gauss-Hermite quadrature with Q nodes, so that sigma enters the likelihood
directly and the term's levels leave NUTS.  The model is unchanged; the integral is
approximated, and :func:`choose_marginal_term` accepts a term only where the approximation of
the summed log-likelihood is checked to be accurate (:data:`LOGLIK_TOLERANCE`) on the data at
hand.

Cost per evaluation is Q logistic functions per trial and a product over each level's trials
(levels grouped by their number of trials, so each group is a dense (levels, trials, Q) block).
On the HAL-scale corpus with Q = 8: about 0.9 ms per value and gradient on one core (measured),
against 0.8 ms for the whole sampled gradient; what it buys is 27,427 fewer NUTS coordinates
and a sigma that NUTS moves directly.

Accuracy: non-adaptive Gauss-Hermite is exact for polynomials of degree 2Q - 1; the logistic
function has poles at +-i pi, so the error grows with sigma and with the number of trials of a
level (a level the data pin down has a peaked integrand that fixed nodes resolve poorly).  We
therefore only consider terms whose levels are weakly informed (sigma^2 times the Fisher
information of every level below :data:`MAX_SIGMA2_INFO`) and check the summed log-likelihood
against a 64-node reference at 1 and 1.5 times the rough sigma before using it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .design_matrix import DesignMatrix
from .devices import _to_device

#: Largest summed log-likelihood error (nats, over all levels) of an integrated term's quadrature, at the
#: check before it integrates and again at the posterior (:func:`.diagnostics.quadrature_off`).
QUADRATURE_TOLERANCE = 0.05
#: The same bound, under the name the checks below use.
LOGLIK_TOLERANCE = QUADRATURE_TOLERANCE
#: Only terms whose every level has sigma_rough^2 * Fisher information below this are integrated
#: (a prefilter: the accuracy check decides).  2, not 1: BRIDGE's pooled benchmark:task:model
#: (66,457 levels of at most 8 trials) has 86 levels between 1 and 1.47, and with them 12 nodes
#: pass the check at 8.4e-3 nats; integrating it cut the time per iteration by about 1.4x.
MAX_SIGMA2_INFO = 2.0
#: Integrating pays only for many levels; below this the term stays in NUTS.
MIN_LEVELS = 1000
#: Largest number of Bernoulli trials of one level (the product of the quadrature).
MAX_TRIALS_PER_LEVEL = 16
#: Node counts tried in turn until the check passes.
NODE_COUNTS = (8, 12, 16, 24)
REFERENCE_NODES = 64
#: The reason :func:`choose_marginal_term` gives when no term qualifies (not worth a note).
NO_CANDIDATE = "no term has enough weakly informed levels to integrate out"


def next_node_count(used: int) -> int | None:
    """The count of :data:`NODE_COUNTS` after ``used`` (None above the largest): the finer rule to ask for
    when a rule of ``used`` nodes was off at the posterior."""
    return next((q for q in NODE_COUNTS if q > used), None)


def gauss_hermite(q: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes z_q and weights w_q with sum_q w_q f(z_q) ~ E f(Z), Z ~ N(0, 1).

    numpy's Hermite rule integrates against exp(-x^2): z = sqrt(2) x, w = w_x / sqrt(pi).
    """
    x, w = np.polynomial.hermite.hermgauss(q)
    return np.sqrt(2.0) * x, w / np.sqrt(np.pi)


@dataclass(frozen=True)
class MarginalTerm:
    """A term integrated out of the likelihood, and the trial layout the quadrature uses.

    Attributes
    ----------
    term, name
        Design index and name of the term.
    n_levels
        Number of levels (all of them are integrated).
    nodes, weights
        Gauss-Hermite rule for N(0, 1) with Q nodes.
    trial_cell
        (T,) the cell of each Bernoulli trial; trials of one level are contiguous and levels are
        ordered by their number of trials.
    sign
        (T,) +1 for a success trial, -1 for a failure trial.
    blocks
        ``(start, n_levels, trials_per_level)`` per group of levels with equally many trials.
    checks
        ``sigma -> summed log-likelihood error`` (nats) against the 64-node reference at the rough fit.
    n_cells
        Cells of the design (the length of eta).
    """

    term: int
    name: str
    n_levels: int
    nodes: np.ndarray
    weights: np.ndarray
    trial_cell: np.ndarray
    sign: np.ndarray
    blocks: tuple[tuple[int, int, int], ...]
    checks: dict
    n_cells: int

    @property
    def n_nodes(self) -> int:
        return int(self.nodes.size)

    def describe(self) -> str:
        err = max(self.checks.values()) if self.checks else float("nan")
        at = ", ".join(f"{s:.2f}" for s in self.checks)
        return (f"{self.name} integrated out of NUTS by {self.n_nodes}-node Gauss-Hermite quadrature per level "
                f"({self.n_levels} levels; summed log-likelihood error <= {err:.1e} nats at sigma = {at})")


def eta_without(design: DesignMatrix, term: int, mu: float, effects) -> np.ndarray:
    """Linear predictor of every cell without ``term``: mu + sum over the other terms k of
    ``effects[k][level of the cell]`` (``effects`` indexed by design term; ``effects[term]`` unused)."""
    eta = np.full(design.n_cells, float(mu))
    for k in range(design.n_terms):
        if k != term:
            eta += np.asarray(effects[k], np.float64)[design.codes[k]]
    return eta


def _trials(design: DesignMatrix, term: int):
    """Every Bernoulli trial of ``design`` in cell order (each cell's successes, then its failures):
    (cell, index within the cell, sign), the order that makes each level's trials contiguous (levels
    ordered by their number of trials; stable, so a cell's trials keep their order) and the blocks."""
    codes = design.codes[term]
    J = int(design.n_levels[term])
    n = design.trials.astype(np.int64)
    y = design.successes.astype(np.int64)
    per_level = np.bincount(codes, weights=n, minlength=J).astype(np.int64)
    cell = np.repeat(np.arange(design.n_cells), n)
    k_in_cell = np.arange(cell.size) - np.repeat(np.cumsum(n) - n, n)
    sign = np.where(k_in_cell < y[cell], 1, -1).astype(np.int8)
    lvl = codes[cell]
    order = np.lexsort((lvl, per_level[lvl]))  # by trials per level, then level: levels contiguous
    blocks, start = [], 0
    for c in np.unique(per_level[per_level > 0]):
        m = int(np.sum(per_level == c))
        blocks.append((start, m, int(c)))
        start += m * int(c)
    return cell, k_in_cell, sign, order, tuple(blocks)


def trial_layout(design: DesignMatrix, term: int):
    """Bernoulli trials of each level of ``term``, grouped by the level's number of trials.

    Returns ``(trial_cell, sign, blocks)`` as in :class:`MarginalTerm`.
    """
    cell, _, sign, order, blocks = _trials(design, term)
    return cell[order].astype(np.int32), sign[order], blocks


def trial_mask(design: DesignMatrix, term: int, successes, trials) -> np.ndarray | None:
    """Which of ``design``'s Bernoulli trials (in :func:`trial_layout`'s order) a refit with these
    per-cell counts keeps: 1.0 for the first ``successes`` success trials and the first
    ``trials - successes`` failure trials of each cell, 0.0 for the others.

    A masked trial contributes the factor 1 to its level's product, so the quadrature on the
    parent's layout with this mask is the quadrature of the refit's own trials, exactly (a level
    with every trial masked integrates to 1): every refit of one parent shares one compiled
    likelihood (:mod:`.refit`).  None when the counts are not a part of ``design``'s (a cell with
    more successes or more failures than the parent's: a reweighting, not a part).
    """
    s = np.asarray(successes, np.int64)
    f = np.asarray(trials, np.int64) - s
    y = design.successes.astype(np.int64)
    if np.any(s > y) or np.any(f > design.trials.astype(np.int64) - y) or np.any(s < 0) or np.any(f < 0):
        return None
    cell, k, sign, order, _ = _trials(design, term)
    keep = np.where(sign > 0, k < s[cell], (k - y[cell]) < f[cell])
    return keep[order].astype(np.float64)


def level_log_marginals(eta_trial: np.ndarray, sign: np.ndarray, blocks, sigma: float, nodes, weights):
    """log p(y_j | eta, sigma) per level in float64 (the reference the checks compare with).

    Evaluated in log space, so it is accurate for any node count; ``eta_trial`` is the linear
    predictor of each trial without the integrated term.
    """
    from scipy.special import log_expit, logsumexp

    lw = np.log(weights)
    out = []
    for start, m, c in blocks:
        sl = slice(start, start + m * c)
        x = sign[sl, None] * (eta_trial[sl, None] + sigma * nodes[None, :])
        lq = log_expit(x).reshape(m, c, -1).sum(axis=1)
        out.append(logsumexp(lq + lw[None, :], axis=1))
    return np.concatenate(out) if out else np.zeros(0)


def choose_marginal_term(design: DesignMatrix, rough, candidates: list[int],
                         min_nodes: int = 0) -> tuple[MarginalTerm | None, str]:
    """The term to integrate out, or None with the reason.

    A candidate must have at least :data:`MIN_LEVELS` levels, every level weakly informed
    (sigma_rough^2 I_j <= :data:`MAX_SIGMA2_INFO`) with at most :data:`MAX_TRIALS_PER_LEVEL`
    trials, and the quadrature of the summed log-likelihood must agree with a 64-node reference
    to :data:`LOGLIK_TOLERANCE` nats at 1 and 1.5 times the rough sigma, with eta at the rough
    mode; the smallest node count in :data:`NODE_COUNTS` (of at least ``min_nodes``) that passes is
    used.  Among candidates the one with most levels is taken (one term at most: two crossed terms
    would need a 2-D integral).
    """
    ok = []
    for k in candidates:
        J = int(design.n_levels[k])
        if J < MIN_LEVELS:
            continue
        trials = np.bincount(design.codes[k], weights=design.trials, minlength=J)
        if trials.max() > MAX_TRIALS_PER_LEVEL:
            continue
        if float(np.max(rough.sigma[k] ** 2 * rough.info[k])) > MAX_SIGMA2_INFO:
            continue
        ok.append(k)
    if not ok:
        return None, NO_CANDIDATE
    k = max(ok, key=lambda t: design.n_levels[t])
    name = design.term_names[k]
    trial_cell, sign, blocks = trial_layout(design, k)
    eta_t = eta_without(design, k, rough.mu, rough.u)[trial_cell]  # at the rough mode
    zr, wr = gauss_hermite(REFERENCE_NODES)
    s0 = float(rough.sigma[k])
    sigmas = [s0, 1.5 * s0]
    ref = {s: level_log_marginals(eta_t, sign, blocks, s, zr, wr).sum() for s in sigmas}
    counts = [q for q in NODE_COUNTS if q >= min_nodes]
    if not counts:
        return None, (f"{name}: no Gauss-Hermite rule of at least {min_nodes} nodes is tried (at most "
                      f"{NODE_COUNTS[-1]}); its levels are sampled")
    for q in counts:
        z, w = gauss_hermite(q)
        errs = {s: abs(level_log_marginals(eta_t, sign, blocks, s, z, w).sum() - ref[s]) for s in sigmas}
        if max(errs.values()) <= LOGLIK_TOLERANCE:
            return MarginalTerm(term=k, name=name, n_levels=int(design.n_levels[k]), nodes=z, weights=w,
                                trial_cell=trial_cell, sign=sign, blocks=blocks, checks=errs,
                                n_cells=design.n_cells), ""
    return None, (f"{name}: Gauss-Hermite quadrature with {counts[-1]} nodes is not accurate enough "
                  f"(summed log-likelihood error {max(errs.values()):.2g} nats)")


def rule_error(mt: MarginalTerm, eta_cell: np.ndarray, sigma: float) -> float:
    """|summed log-likelihood by ``mt``'s rule - by the 64-node reference| at (eta, sigma), in nats.

    The fit evaluates it again after sampling, at the last draw's eta and the posterior's 97.5%
    quantile of sigma, so that the accuracy is known where the posterior is, not only at the
    rough fit.
    """
    eta_t = np.asarray(eta_cell, np.float64)[mt.trial_cell]
    zr, wr = gauss_hermite(REFERENCE_NODES)
    got = level_log_marginals(eta_t, mt.sign, mt.blocks, sigma, mt.nodes, mt.weights).sum()
    return float(abs(got - level_log_marginals(eta_t, mt.sign, mt.blocks, sigma, zr, wr).sum()))


def make_log_likelihood(mt: MarginalTerm, dtype, mask=None):
    """JAX function (eta per cell, sigma) -> sum over levels of log p(y_j | eta, sigma).

    ``mask`` (optional, (T,) 0/1 per trial of ``mt``'s layout, possibly traced: :func:`trial_mask`)
    keeps only some trials: a masked trial's factor is 1 and its gradient 0.

    Probability space: p_tq = logistic(s_t (eta_t + sigma z_q)) per trial and node, a product
    over each level's trials, then the log of the weighted sum L_j = sum_q w_q prod_t p_tq: one
    logistic per (trial, node) and one log per level, half the cost of the log-space form.  The
    gradient is written out (a ``custom_vjp``): with pi_jq = w_q prod_t p_tq / L_j the
    posterior weight of node q,

        d log L_j / d eta_t = s_t sum_q pi_jq (1 - p_tq),
        d log L_j / d sigma = sum_t s_t sum_q pi_jq (1 - p_tq) z_q,

    computed from the forward pass's p and pi; reverse-mode autodiff of the products took 2.6x
    as long (pooled corpus, measured).  L_j is floored at the smallest normal float so that a
    level whose every node underflows (each of its trials improbable at every node, far from the
    posterior) gives a very low but finite log-likelihood.
    """
    import jax
    import jax.numpy as jnp

    cell = _to_device(mt.trial_cell, jnp.int32)
    sgn = _to_device(mt.sign, dtype)
    z = _to_device(mt.nodes, dtype)
    w = _to_device(mt.weights, dtype)
    Q = mt.n_nodes
    blocks = mt.blocks
    tiny = float(jnp.finfo(dtype).tiny)

    keep = None if mask is None else (jnp.asarray(mask, dtype) > 0)[:, None]

    def forward(eta_cell, sigma):
        x = sgn * eta_cell[cell]
        p = jax.nn.sigmoid(x[:, None] + (sgn[:, None] * sigma) * z[None, :])
        if keep is not None:
            p = jnp.where(keep, p, 1.0)  # a dropped trial: the factor 1 (and 1 - p = 0 below)
        total = jnp.zeros((), dtype)
        pis = []
        for start, m, c in blocks:
            blk = p[start:start + m * c]
            lq = blk if c == 1 else blk.reshape(m, c, Q).prod(axis=1)
            L = jnp.maximum(lq @ w, tiny)
            total = total + jnp.sum(jnp.log(L))
            pis.append(lq * w / L[:, None])
        return total, (p, pis)

    @jax.custom_vjp
    def log_likelihood(eta_cell, sigma):
        return forward(eta_cell, sigma)[0]

    def backward(res, g):
        p, pis = res
        parts = []
        for (start, m, c), pi in zip(blocks, pis):
            q = 1.0 - p[start:start + m * c]
            parts.append((q.reshape(m, c, Q) * pi[:, None, :]).reshape(m * c, Q))
        d = jnp.concatenate(parts)  # (T, Q): pi_jq (1 - p_tq)
        d_eta = jax.ops.segment_sum(jnp.sum(d, axis=1) * sgn, cell, num_segments=mt.n_cells)
        d_sigma = jnp.sum((d @ z) * sgn)
        return g * d_eta, g * d_sigma

    log_likelihood.defvjp(forward, backward)
    return log_likelihood


def error_at_posterior(design, mt, mu, effects: dict, sigma) -> tuple[float, float]:
    """The rule's error where the posterior is: eta at chain 0's last draw, sigma at its 97.5% quantile.

    Returns ``(error in nats, that sigma)``; ``effects`` maps term name -> draws ``(chains, draws, levels)``
    of the terms whose effects were kept, ``sigma`` are the integrated term's draws.
    """
    eta = eta_without(design, mt.term, mu[0, -1],
                      [effects[nm][0, -1] if nm in effects else None for nm in design.term_names])
    s_hi = float(np.quantile(sigma, 0.975))
    return rule_error(mt, eta, s_hi), s_hi
