"""Distance components (DISCO), facet by facet (seed 000 (Hardy et al. 2026) App. C.5 and G.2; Rizzo & Szekely 2010).

For one facet F whose levels split the N observations into groups k = 1..K of sizes n_k, seed 000
Eqs. (18)-(19) define the within-group and total dispersions

    S_W = sum_k (1 / n_k) sum_{i<j in k} |X_i - X_j|,     S_T = (1 / N) sum_{i<j} |X_i - X_j|,

``S_B = S_T - S_W`` and the facet's proportion ``eta_F = S_B / S_T``.  This is Rizzo & Szekely's DISCO
decomposition with exponent alpha = 1 (their ``S_alpha`` equals ``sum_{j<k} n_j n_k / (2N)`` times the
energy distance between groups j and k; the tests check that identity).  "For multi-facet designs,
we compute DISCO sequentially for each facet ... we normalize": each term of the model is taken on
its own as the grouping, and the eta_F are divided by their sum, so the shares sum to one over the
named facets and DISCO has no residual row (seed 000 Table 20 prints NA there).  The DISCO analogue of
a G coefficient for an object grouping g is ``S_B(g) / (S_B(g) + S_W(g)) = eta_g`` (App. C.5).

Computation.  The observations are scalars (0/1 trial results or scores), so no distance matrix is
needed: for sorted values ``x_(1) <= ... <= x_(n)``, ``sum_{i<j} |x_i - x_j| = sum_r x_(r) (2r - n - 1)``,
O(N log N); for 0/1 results it is ``n_1 n_0`` and binomial cells are never expanded.  The ``dcor``
package was considered first: it offers energy distances and tests but not the per-facet DISCO
decomposition, computes energy distances from pairwise distance matrices (O(N^2) memory: 37,000
trials of Terminal-Bench 2.0 need 11 GB) and brings numba; the closed forms above are exact and
take milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .design import MixedDesign


@dataclass
class DiscoResult:
    """DISCO proportions per facet.

    Attributes
    ----------
    eta
        Term -> S_B / S_T for that term's grouping on its own (not normalised).
    shares
        Term -> eta normalised to sum to one over the terms (seed 000 G.2).
    s_total
        The total dispersion S_T.
    s_within
        Term -> S_W.
    """

    eta: dict[str, float]
    shares: dict[str, float]
    s_total: float
    s_within: dict[str, float]

    def to_dict(self) -> dict:
        return {"eta": dict(self.eta), "shares": dict(self.shares), "s_total": self.s_total,
                "s_within": dict(self.s_within)}


def pairwise_abs_sum(values: np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
    """``sum_{i<j} |x_i - x_j|`` within every group (one group when ``groups`` is None), by sorting."""
    x = np.asarray(values, dtype=np.float64)
    g = np.zeros(x.size, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    n_groups = int(g.max()) + 1 if g.size else 0
    order = np.lexsort((x, g))
    xs, gs = x[order], g[order]
    size = np.bincount(gs, minlength=n_groups)
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    rank = np.arange(xs.size) - start[gs]  # 0-based rank within the group
    return np.bincount(gs, weights=xs * (2.0 * rank - size[gs] + 1.0), minlength=n_groups)


def _binary_pair_sum(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``sum_{i<j} |x_i - x_j|`` of k ones and n - k zeros: every (1, 0) pair differs by one."""
    return k * (n - k)


def disco(design: MixedDesign) -> DiscoResult:
    """DISCO proportions of every term of a binary (successes out of trials) design."""
    if not design.binary:
        raise ValueError("disco(design) needs binary trials; for numeric scores use disco_scores().")
    k_all, n_all = design.s.sum(), design.n.sum()
    s_t = float(_binary_pair_sum(k_all, n_all) / n_all)
    within = {}
    for t, name in enumerate(design.term_names):
        k = np.bincount(design.codes[t], weights=design.s, minlength=design.n_levels[t])
        n = np.bincount(design.codes[t], weights=design.n, minlength=design.n_levels[t])
        within[name] = float(np.sum(_binary_pair_sum(k, n) / n))
    return _result(s_t, within)


def disco_scores(values: np.ndarray, codes: dict[str, np.ndarray]) -> DiscoResult:
    """DISCO proportions of numeric observations; ``codes`` maps each term to the level of every
    observation."""
    x = np.asarray(values, dtype=np.float64)
    s_t = float(pairwise_abs_sum(x)[0] / x.size)
    within = {}
    for name, c in codes.items():
        c = np.asarray(c, dtype=np.int64)
        n = np.bincount(c)
        pairs = pairwise_abs_sum(x, c)
        within[name] = float(np.sum(pairs[n > 0] / n[n > 0]))
    return _result(s_t, within)


def _result(s_t: float, within: dict[str, float]) -> DiscoResult:
    if s_t <= 0:
        raise ValueError("every observation is equal: there is no dispersion to decompose.")
    eta = {name: (s_t - w) / s_t for name, w in within.items()}
    total = sum(eta.values())
    shares = {name: (v / total if total > 0 else float("nan")) for name, v in eta.items()}
    return DiscoResult(eta=eta, shares=shares, s_total=s_t, s_within=within)
