"""Reliability of observed success rates: what a buyer reads as "scores would correlate", per posterior draw.

The coefficients of :mod:`.reliability` (Hardy et al. 2026, Eq. 1 and Tables 1/9) are on the latent
logit scale: they rank the models' latent abilities ``u_m``, with the binomial noise stood in for by the
logistic residual ``pi^2/3``.  A buyer reads a leaderboard's *success rates*.  With binary outcomes and
success rates far from one half, the rates of two evaluations of the same models correlate much less
than the latent coefficient says (SPEC sec. 3, "Scale"): the logistic link compresses differences near
0 and 1, and a hard task set pushes every model towards 0.

The observed-score coefficient
------------------------------
For one draw of the binomial GLMM (intercept ``mu``, random-intercept variances ``s2_t``), let an
evaluation ``D`` sample ``n_f`` levels of every non-object facet ``f`` (tasks per benchmark, scaffolds,
benchmarks, extra facets) and ``n_r`` trials per cell, and let ``X_m(D)`` be object ``m``'s success rate
(the mean over its cells of the cell's success rate).  Two evaluations ``D``, ``D'`` hold the objects'
effects and draw everything else afresh.  The coefficient is the G-theory ratio of expectations

    rho2_obs = E[Cov_m(X_m(D), X_m(D'))] / E[Var_m(X_m(D))]

(Cronbach et al. 1972's definition of the generalizability coefficient, applied to success rates instead
of logits).  Both expectations reduce to second moments of the logit-normal.  For two cells ``c, c'`` of
objects ``m, m'`` the latent predictors are bivariate normal with total variance ``V = sum_t s2_t`` and
covariance ``C`` = the sum of the variances of the terms the two share.  Writing
``P(C) = E[logistic(mu + Z_1) logistic(mu + Z_2)]``, and classifying the ordered cell pairs of one
evaluation by the set ``K`` of facets on which they agree:

* numerator: ``P_same(empty) - P_diff(empty)`` (the same object, nothing else shared; ``P_diff(empty) =
  E[p]^2``);
* denominator: ``sum_K w_K(n) (P_same(K) - P_diff(K)) + (E[p] - E[p^2]) / (N n_r)``, where ``w_K`` is the
  share of ordered cell pairs agreeing exactly on ``K`` and ``N`` the number of cells;
* dependability (absolute claim): the error is ``sum_K w_K(n) (P_same(K) - P_same(empty))`` plus the same
  binomial term (the facet main effects then count, as in Phi).

Each ``w_K`` is affine in ``1/n_f`` for any one facet ``f`` (one factor of its product depends on
``n_f``: ``1/n_f`` when the pair agrees on ``f``, ``1 - 1/n_f`` when it does not), and so is the binomial
term.  So the observed coefficient has the D-study form ``U / (U + A + B/n_f)`` of the latent one, and
the curves, required sizes and P(target) of :mod:`.dstudy.curves` apply to it unchanged.

How the moments are computed
----------------------------
Exactly up to quadrature: ``P(C) = E_W[h(mu + sqrt(C) W; V - C)^2]`` with ``h(x; v) = E[logistic(x +
sqrt(v) Z)]``, both by Gauss-Hermite quadrature (:data:`DEFAULT_NODES` nodes, accurate to about 1e-6
for latent standard deviations up to 5, checked in the tests against adaptive quadrature).
:func:`simulated_score_reliability` computes the same quantity by simulating evaluations inside a draw;
the tests check one against the other.

Conventions
-----------
* Fresh evaluations resample every non-object facet (as the latent coefficient does: scaffolds and
  benchmarks are random facets).  ``held`` facets keep their levels in both evaluations (their main
  effects and interactions with the object are then signal shared by the two): the split-half check
  holds the corpus's benchmarks and scaffolds and draws only fresh tasks and trials.
* Facets absent from the fit have size 1, as in :mod:`.reliability`.
* Only a binomial-logit fit has an observed-score coefficient: a fit on the probability scale (the
  observed-scale LMM, REML, Henderson) already is on the scale of scores, and a fit with no intercept
  draws (a typed-in table) needs the corpus's mean success rate (:func:`intercept_for_success_rate`).
* The objects are treated as exchangeable draws from their population (a system's model and scaffold
  effects are drawn together), as the latent coefficient of seed 000 Eq. 4 treats them.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Iterable, Mapping

import numpy as np

from .reliability import (REPLICATE, RESIDUAL_LOGISTIC, VarianceComponents, _effective_sizes, _facet_key,
                          object_facets)

__all__ = [
    "DEFAULT_NODES", "LATENT_LABEL", "OBSERVED_LABEL", "ScoreMoments", "score_moments", "score_parts",
    "score_reliability", "score_coef_matrix", "simulated_score_reliability", "logistic", "expected_success",
    "effect_shape", "intercept_for_success_rate", "has_score_scale",
]

#: Gauss-Hermite nodes of each of the two nested quadratures.
DEFAULT_NODES = 48

#: How every surface names the two coefficients (issue: claims on observed scores).
OBSERVED_LABEL = "observed success rates"
LATENT_LABEL = "latent ability ranking (Hardy et al. 2026)"

#: Facet nesting of the record schema: a task is a level within its benchmark.
_PARENT = {"task": "benchmark"}

_DRAW_CHUNK = 512


def has_score_scale(components: VarianceComponents) -> bool:
    """True when the components are a binomial-logit fit's (logistic residual pi^2/3)."""
    return bool(np.allclose(components.residual, RESIDUAL_LOGISTIC, rtol=1e-9, atol=0.0))


# ---------------------------------------------------------------------------
# Logit-normal moments
# ---------------------------------------------------------------------------

def _nodes(n: int) -> tuple[np.ndarray, np.ndarray]:
    z, w = np.polynomial.hermite_e.hermegauss(n)
    return z, w / math.sqrt(2.0 * math.pi)


def logistic(x: np.ndarray) -> np.ndarray:
    """The logistic function, as ``0.5 (1 + tanh(x/2))``: no overflow for large ``|x|``."""
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _pair_moment(mu: np.ndarray, total: np.ndarray, shared: np.ndarray, nodes: int) -> np.ndarray:
    """``E[logistic(mu + Z1) logistic(mu + Z2)]``, ``Var Z = total``, ``Cov(Z1, Z2) = shared``, per entry.

    Arrays broadcast to one shape; the result has that shape.
    """
    z, w = _nodes(nodes)
    mu, total, shared = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (mu, total, shared)))
    own = np.sqrt(np.clip(total - shared, 0.0, None))
    common = np.sqrt(np.clip(shared, 0.0, None))
    out = np.empty(mu.shape)
    flat = [a.reshape(-1) for a in (mu, own, common, out)]
    for s in range(0, flat[0].size, _DRAW_CHUNK):
        m, o, c = (a[s:s + _DRAW_CHUNK, None, None] for a in flat[:3])
        x = m + c * z[None, :, None]                      # outer node: the shared part
        h = logistic(x + o * z[None, None, :]) @ w       # inner: E over the own parts -> (chunk, G)
        flat[3][s:s + _DRAW_CHUNK] = (h * h) @ w
    return out


def expected_success(mu: np.ndarray, total: np.ndarray, nodes: int = DEFAULT_NODES) -> np.ndarray:
    """``E[logistic(mu + Z)]`` with ``Var Z = total``, per entry (Gauss-Hermite)."""
    z, w = _nodes(nodes)
    sd = np.sqrt(np.clip(total, 0.0, None))
    return logistic(mu[:, None] + sd[:, None] * z[None, :]) @ w


def intercept_for_success_rate(components: VarianceComponents, success_rate: float,
                               nodes: int = DEFAULT_NODES) -> np.ndarray:
    """Per draw, the intercept ``mu`` whose expected success rate ``E[logistic(mu + Z)]`` is ``success_rate``.

    For a typed-in table of components (no intercept draws) and a corpus whose mean success rate is known.
    """
    r = float(success_rate)
    if not 0.0 < r < 1.0:
        raise ValueError(f"the mean success rate should be in (0, 1) for an observed-score coefficient, got {r}")
    total = components.matrix.sum(axis=1)
    lo = np.full(components.n_draws, -40.0)
    hi = np.full(components.n_draws, 40.0)
    for _ in range(60):  # bisection: E[p] is increasing in mu
        mid = 0.5 * (lo + hi)
        up = expected_success(mid, total, nodes) < r
        lo = np.where(up, mid, lo)
        hi = np.where(up, hi, mid)
    return 0.5 * (lo + hi)


# ---------------------------------------------------------------------------
# The moments of one fit
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ScoreMoments:
    """Per-draw logit-normal product moments of one fit and object, for every way two cells agree.

    Attributes
    ----------
    object_facets
        The object of measurement's facets.
    facets
        The design's non-object facets present in the fit, in canonical order.
    mean
        ``(S,)`` ``E[p]``: the expected success rate of a trial.
    same, diff
        ``frozenset K -> (S,)``: ``E[p_c p_c']`` for two cells agreeing exactly on the facets ``K``, of the
        same object (``same``) or of two different objects (``diff``).
    """

    object_facets: frozenset[str]
    facets: tuple[str, ...]
    mean: np.ndarray
    same: Mapping[frozenset, np.ndarray]
    diff: Mapping[frozenset, np.ndarray]

    @property
    def universe(self) -> np.ndarray:
        """``(S,)`` variance across objects of their expected success rates (the numerator)."""
        k0 = frozenset()
        return np.clip(self.same[k0] - self.diff[k0], 0.0, None)


def _agreements(facets: tuple[str, ...]) -> list[frozenset]:
    """Every set of facets two cells can agree on (a task only within its benchmark)."""
    out = []
    for r in range(len(facets) + 1):
        for k in itertools.combinations(facets, r):
            ks = frozenset(k)
            if all(_PARENT.get(f) not in facets or _PARENT[f] in ks for f in ks):
                out.append(ks)
    return out


def score_moments(components: VarianceComponents, obj="model", intercept=None,
                  nodes: int = DEFAULT_NODES) -> ScoreMoments:
    """The logit-normal moments behind every observed-score coefficient of one fit (module docstring).

    Parameters
    ----------
    components
        A binomial-logit fit's variance components (:func:`has_score_scale`).
    obj
        ``"model"``, ``"system"`` or facet names.
    intercept
        ``(S,)`` draws (or one value) of the latent intercept ``mu``; default ``components.intercept``.
    nodes
        Gauss-Hermite nodes of each quadrature.

    Raises
    ------
    ValueError
        If the components are not on the logit scale, or no intercept is known.
    """
    c = components
    if not has_score_scale(c):
        raise ValueError(f"{c.source}: the observed-score coefficient needs a binomial-logit fit (residual "
                         "pi^2/3); this fit is already on the probability scale")
    mu = getattr(c, "intercept", None) if intercept is None else intercept
    if mu is None:
        raise ValueError(f"{c.source}: no intercept draws; give the mean success rate "
                         "(intercept_for_success_rate) to compute the observed-score coefficient")
    mu = np.broadcast_to(np.asarray(mu, dtype=np.float64).reshape(-1), (c.n_draws,))
    o = object_facets(obj)
    facets = tuple(sorted(c.facets - o, key=_facet_key))
    x, sets = c.matrix, c.facet_sets
    total = x.sum(axis=1)
    ks = _agreements(facets)
    same_cov = np.column_stack([x @ np.array([float((fs - o) <= k) for fs in sets]) for k in ks])
    diff_cov = np.column_stack([x @ np.array([float(not (fs & o) and fs <= k) for fs in sets]) for k in ks])
    both = _pair_moment(mu[:, None], total[:, None], np.concatenate([same_cov, diff_cov], axis=1), nodes)
    same = {k: both[:, j] for j, k in enumerate(ks)}
    diff = {k: both[:, len(ks) + j] for j, k in enumerate(ks)}
    return ScoreMoments(o, facets, expected_success(mu, total, nodes), same, diff)


# ---------------------------------------------------------------------------
# Designs
# ---------------------------------------------------------------------------

def _pair_weight(k: frozenset, facets: tuple[str, ...], inv: Mapping[str, float]) -> float:
    """Share of ordered cell pairs of one evaluation agreeing exactly on ``k``."""
    w = 1.0
    for f in facets:
        if f in k:
            w *= inv[f]
        elif _PARENT.get(f) in facets and _PARENT[f] not in k:
            continue  # another benchmark's task: never the same task, any of them
        else:
            w *= 1.0 - inv[f]
    return w


def _cross_weight(k: frozenset, facets: tuple[str, ...], inv: Mapping[str, float], held: frozenset) -> float:
    """Share of pairs (a cell of one evaluation, a cell of the other) agreeing exactly on ``k``.

    Only held facets can agree across evaluations; a fresh facet's levels are new ones.
    """
    if not k <= held:
        return 0.0
    w = 1.0
    for f in facets:
        if f not in held:
            continue
        w *= inv[f] if f in k else 1.0 - inv[f]
    return w


def _inverse_sizes(m: ScoreMoments, components: VarianceComponents, sizes) -> dict[str, float]:
    eff = _effective_sizes(components.facets, m.object_facets, sizes)
    return {f: (0.0 if math.isinf(n) else 1.0 / n) for f, n in eff.items()}


def _terms(m: ScoreMoments, inv: Mapping[str, float], claim: str, held: frozenset) -> tuple[np.ndarray, np.ndarray]:
    """``(signal, error)`` per draw of a design: the coefficient is ``signal / (signal + error)``."""
    ks = list(m.same)
    k0 = frozenset()
    cell = 1.0
    for f in m.facets:
        cell *= inv[f]
    binomial = (m.mean - m.same[frozenset(m.facets)]) * (cell * inv[REPLICATE])
    within = sum(_pair_weight(k, m.facets, inv) * (m.same[k] - (m.diff[k] if claim == "relative"
                                                                        else m.same[k0])) for k in ks)
    if claim == "absolute":
        signal = m.universe
        return signal, np.clip(within + binomial, 0.0, None)
    signal = sum(_cross_weight(k, m.facets, inv, held) * (m.same[k] - m.diff[k]) for k in ks if k <= held)
    signal = np.clip(signal, 0.0, None)
    return signal, np.clip(within + binomial - signal, 0.0, None)


def _check(claim: str, held: Iterable[str], m: ScoreMoments) -> frozenset:
    if claim not in ("relative", "absolute"):
        raise ValueError(f"claim should be 'relative' or 'absolute', got {claim!r}")
    h = frozenset(held or ())
    if h and claim == "absolute":
        raise ValueError("held facets apply to the relative (ranking) coefficient only")
    return h & frozenset(m.facets)


def score_reliability(components: VarianceComponents, moments: ScoreMoments, sizes: Mapping[str, float] | None = None,
                      claim: str = "relative", held: Iterable[str] = ()) -> np.ndarray:
    """Per-draw reliability of observed success rates of a design (module docstring).

    Parameters
    ----------
    components
        The fit (its terms decide which facets exist; sizes of absent facets are 1).
    moments
        :func:`score_moments` of the fit and object.
    sizes
        Facet -> levels per evaluation (``"task"`` per benchmark, ``"replicate"`` trials per cell); inf
        gives the limit.
    claim
        ``"relative"``: the expected correlation of two evaluations' success rates (rankings);
        ``"absolute"``: dependability, the facet main effects counting as error.
    held
        Facets whose levels both evaluations share (the split-half check holds benchmarks and scaffolds).

    Returns
    -------
    numpy.ndarray
        ``(S,)`` coefficients in [0, 1].
    """
    h = _check(claim, held, moments)
    signal, error = _terms(moments, _inverse_sizes(moments, components, sizes), claim, h)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = signal / (signal + error)
    return np.where(signal > 0, out, 0.0)


def score_parts(components: VarianceComponents, moments: ScoreMoments, sizes: Mapping[str, float], facet: str,
                claim: str = "relative") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(U, A, B)`` per draw with ``coef(n_f) = U / (U + A + B / n_f)`` for one facet varied (module docstring)."""
    inv = _inverse_sizes(moments, components, sizes)
    h = _check(claim, (), moments)
    at = {}
    for x in (0.0, 1.0):
        inv_x = dict(inv)
        if facet in inv_x:
            inv_x[facet] = x
        at[x] = _terms(moments, inv_x, claim, h)
    u = at[0.0][0]
    a = at[0.0][1]
    b = at[1.0][1] - a
    return u, a, np.clip(b, 0.0, None)


def score_coef_matrix(components: VarianceComponents, moments: ScoreMoments,
                      size_list: Iterable[Mapping[str, float]], claim: str = "relative") -> np.ndarray:
    """``(D, S)`` observed-score coefficients of many designs (the cost frontier's grid), per draw.

    The same as :func:`score_reliability` design by design, as two matrix products: each design is a
    vector of pair weights over the agreement sets and the moments are a matrix over draws.
    """
    _check(claim, (), moments)
    ks = list(moments.same)
    k0 = frozenset()
    gap = np.column_stack([moments.same[k] - (moments.diff[k] if claim == "relative" else moments.same[k0])
                           for k in ks])                                   # (S, K)
    binom = moments.mean - moments.same[frozenset(moments.facets)]         # (S,)
    w, cell = [], []
    for sizes in size_list:
        inv = _inverse_sizes(moments, components, sizes)
        w.append([_pair_weight(k, moments.facets, inv) for k in ks])
        c = inv[REPLICATE]
        for f in moments.facets:
            c *= inv[f]
        cell.append(c)
    den = np.asarray(w) @ gap.T + np.multiply.outer(np.asarray(cell), binom)   # (D, S)
    u = moments.universe
    if claim == "absolute":
        den = den + u
    with np.errstate(divide="ignore", invalid="ignore"):
        out = u / den
    return np.where(u > 0, np.clip(out, 0.0, 1.0), 0.0)


# ---------------------------------------------------------------------------
# The same by simulation (the check)
# ---------------------------------------------------------------------------

def effect_shape(facets: tuple[str, ...], term_facets: frozenset, o: frozenset, sizes: Mapping[str, int],
                 n_objects: int) -> tuple[int, ...]:
    """The array shape of one term's simulated effects: an object axis when the term involves the object,
    then one axis per design facet the term is indexed by (a task's benchmark included)."""
    shape = [n_objects if term_facets & o else 1]
    for f in facets:
        inside = f in term_facets or any(_PARENT.get(g) == f for g in term_facets)
        shape.append(int(sizes[f]) if inside else 1)
    return tuple(shape)


def simulated_score_reliability(components: VarianceComponents, sizes: Mapping[str, int], obj="model",
                                intercept=None, *, n_objects: int = 200, n_pairs: int = 200,
                                held: Iterable[str] = (), draws: Iterable[int] | None = None,
                                seed: int = 0) -> dict[str, np.ndarray]:
    """Observed-score reliability by simulating pairs of evaluations inside each draw (the check).

    For every selected draw, ``n_pairs`` pairs of evaluations of ``n_objects`` objects are simulated from
    the fitted binomial GLMM: the objects' effects are held, every term with a fresh facet is drawn anew
    for each evaluation, ``held`` facets' terms are shared, and each cell runs ``sizes["replicate"]``
    Bernoulli trials.

    Returns
    -------
    dict
        ``"ratio"``: mean cross-covariance / mean variance of the success rates across objects (the
        quantity :func:`score_reliability` computes); ``"correlation"``: the mean Pearson correlation of
        the two evaluations' success rates (what a reader measures; slightly below the ratio for few
        objects).  Each ``(len(draws),)``.
    """
    c = components
    o = object_facets(obj)
    facets = tuple(sorted(c.facets - o, key=_facet_key))
    size = {f: int(sizes.get(f, 1)) for f in facets}
    reps = int(sizes.get(REPLICATE, 1))
    hold = frozenset(held or ())
    mu_all = getattr(c, "intercept", None) if intercept is None else intercept
    mu_all = np.broadcast_to(np.asarray(mu_all, dtype=np.float64).reshape(-1), (c.n_draws,))
    rng = np.random.default_rng(seed)
    idx = list(range(c.n_draws)) if draws is None else list(draws)
    ratio, corr = np.empty(len(idx)), np.empty(len(idx))
    for j, s in enumerate(idx):
        sd = {t: math.sqrt(c.draws[t][s]) for t in c.terms}
        cov = var = rsum = 0.0
        for _ in range(n_pairs):
            shared = {t: rng.normal(0.0, sd[t], effect_shape(facets, fs, o, size, n_objects))
                      for t, fs in zip(c.terms, c.facet_sets) if (fs - o) <= hold}
            rates = []
            for _ev in range(2):
                eta = mu_all[s]
                for t, fs in zip(c.terms, c.facet_sets):
                    eff = shared.get(t)
                    if eff is None:
                        eff = rng.normal(0.0, sd[t], effect_shape(facets, fs, o, size, n_objects))
                    eta = eta + eff
                eta = np.broadcast_to(eta, (n_objects, *[size[f] for f in facets]))
                y = rng.binomial(reps, logistic(eta)) / reps
                rates.append(y.reshape(n_objects, -1).mean(axis=1))
            a, b = rates
            cov += np.cov(a, b)[0, 1]
            var += 0.5 * (a.var(ddof=1) + b.var(ddof=1))
            rsum += np.corrcoef(a, b)[0, 1] if a.std() > 0 and b.std() > 0 else 0.0
        ratio[j], corr[j] = cov / var, rsum / n_pairs
    return {"ratio": ratio, "correlation": corr}
