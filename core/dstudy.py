"""Decision studies: designs, D-study curves, budget and cost frontiers, allocation, cost-aware rankings.

Everything here is a function of a posterior of variance components (see
:mod:`.reliability`) and a :class:`Design`; every estimand is computed per
draw and then summarised, and the GUI, the CLI and the PDF call the same
functions, so they show the same numbers.

Speed (the D-study view's slider)
---------------------------------
For one facet ``f`` varied with the others fixed, every error variance of the
D-study rule is ``A + B / n_f`` per draw (each term is divided by ``n_f`` once
or not at all), and the universe score ``U`` does not depend on the design.
:class:`DStudyModel` keeps the ``(S, T)`` matrix of draws; a curve is three
matrix-vector products (``U``, ``A``, ``B``), one broadcast over the grid and
one sort per curve for the median and HDIs.  The sort is what costs: curve
bands use an evenly thinned subset of at most ``band_draws`` draws (1,000 by
default; ``None`` for all draws).  Point readouts at the design, the
probability of meeting a target, the required-n distribution and the
asymptotes always use every draw.  ``bench/bench_dstudy.py`` measures a move.

Definitions chosen where the papers are loose
---------------------------------------------
* **Meeting a target** with assurance ``prob``: ``P(coefficient >= target | y)
  >= prob``; ``prob = 0.5`` means the posterior median reaches the target.
* **Required n** (budget frontier): per draw, the smallest integer ``n >= 1``
  of the varied facet whose coefficient reaches the target (``inf`` if the
  limit ``n -> inf`` stays below it).  From ``U / (U + A + B/n) >= T``:
  ``n >= B / (U (1 - T) / T - A)``.
* **Cost**: a design runs ``n_models x n_scaffolds x sum_b n_tasks_b x
  n_replicates`` trials; its cost is the sum of their per-trial prices.  With
  prices per benchmark but no per-benchmark task counts, each benchmark is
  charged the mean price (benchmarks are exchangeable draws).
* **Unequal tasks per benchmark**: the benchmark-averaged score (the
  unweighted mean of per-benchmark means, as Eq. 7 of seed 000 assumes) has
  task-level error ``(1/n_b^2) sum_b (s2_IM[B] + e/(n_a n_r)) / n_i,b``, i.e.
  Eq. 7 with ``n_i`` replaced by the harmonic mean of the ``n_i,b``.
* **Reliability per dollar** (seed 003): ``RPD = Erho2 / mean cost per
  observation`` for a design, per draw; agents are ranked by *accuracy per
  dollar* = mean success / mean cost per trial, because ``Erho2`` is a
  property of the design and population, not of one agent (seed 003's
  per-agent ``RPD(a, B)`` would otherwise rank agents by cost alone).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .ranks import kendall_tau, rank_values, spearman_rho
from .reliability import (DETECTION_ERHO2, DETECTION_SNR, REPLICATE, Summary, VarianceComponents,
                          _median_sorted, _object_name, as_components, design_weights, hdi_sorted, object_facets,
                          summarize, summarize_sorted, thin_index, to_jsonable)

__all__ = [
    "DEFAULT_TARGETS",
    "DEFAULT_BAND_DRAWS",
    "Design",
    "DStudyModel",
    "CoefficientParts",
    "DStudyCurve",
    "RequiredN",
    "Readouts",
    "DStudyView",
    "BreadthCurve",
    "CostFrontier",
    "Allocation",
    "CostRanking",
    "d_study_curve",
    "required_n",
    "p_target_met",
    "fixed_budget_breadth",
    "cost_frontier",
    "allocate_tasks",
    "prices_from_cost_column",
    "prices_from_tokens",
    "row_costs_from_tokens",
    "accuracy_per_dollar",
    "reliability_per_dollar",
    "default_grid",
]

#: Default targets by claim (SPEC sec. 4): ranking Erho2 >= 0.85, threshold decisions Phi >= 0.90.
DEFAULT_TARGETS: dict[str, float] = {"relative": 0.85, "absolute": 0.90}

#: Draws used for curve bands (see the module note on speed).
DEFAULT_BAND_DRAWS = 1000

#: Design field -> facet name of the D-study rule.
_FIELD_FACET = {"n_tasks": "task", "n_scaffolds": "scaffold", "n_benchmarks": "benchmark",
                "n_replicates": REPLICATE}
_FACET_FIELD = {v: k for k, v in _FIELD_FACET.items()}


# ---------------------------------------------------------------------------
# Design
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Design:
    """A measurement design (SPEC sec. 4; seed 000 Table 1's ``n_f``).

    Attributes
    ----------
    n_tasks
        Tasks per benchmark (equal allocation).
    n_scaffolds, n_benchmarks, n_replicates
        Scaffolds per model, benchmarks, trials per (task, model, scaffold) cell.
    price_per_trial
        USD per trial: one number, or ``{benchmark: price}``.
    n_models
        Number of models compared (enters the cost only).
    object_of_measurement
        ``"model"`` or ``"system"`` (model-scaffold pair), or facet names.
    claim
        ``"relative"`` (ranking; Erho2) or ``"absolute"`` (threshold decisions; Phi).
    tasks_per_benchmark
        Optional unequal allocation ``{benchmark: n_tasks}``; overrides
        ``n_tasks`` and ``n_benchmarks`` (see the module note).
    extra_facets
        Sizes of further facets of the fit (e.g. seed 003's ``step``).
    """

    n_tasks: float = 50
    n_scaffolds: float = 1
    n_benchmarks: float = 1
    n_replicates: float = 1
    price_per_trial: float | Mapping[str, float] = 0.0
    n_models: int = 2
    object_of_measurement: str | tuple[str, ...] = "model"
    claim: str = "relative"
    tasks_per_benchmark: Mapping[str, float] | None = None
    extra_facets: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self):
        for name in ("n_tasks", "n_scaffolds", "n_benchmarks", "n_replicates"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float, np.integer, np.floating)) and v >= 1):
                raise ValueError(f"design: {name} should be a number >= 1, got {v!r}")
        if not (isinstance(self.n_models, (int, np.integer)) and self.n_models >= 1):
            raise ValueError(f"design: n_models should be a whole number >= 1, got {self.n_models!r}")
        if self.claim not in DEFAULT_TARGETS:
            raise ValueError(f"design: claim should be 'relative' (ranking) or 'absolute' (thresholds), "
                             f"got {self.claim!r}")
        object_facets(self.object_of_measurement)  # validates
        prices = self.price_per_trial
        values = prices.items() if isinstance(prices, Mapping) else [("(all)", prices)]
        for b, p in values:
            if not (isinstance(p, (int, float, np.integer, np.floating)) and math.isfinite(p) and p >= 0):
                raise ValueError(f"design: price per trial of benchmark {b!r} should be a number >= 0 (USD), got {p!r}")
        if isinstance(prices, Mapping) and not prices:
            raise ValueError("design: price_per_trial is an empty mapping; give {benchmark: USD per trial} or a number")
        if self.tasks_per_benchmark is not None:
            if not self.tasks_per_benchmark:
                raise ValueError("design: tasks_per_benchmark is empty; give {benchmark: n_tasks} or None")
            for b, n in self.tasks_per_benchmark.items():
                if not (isinstance(n, (int, float, np.integer, np.floating)) and n >= 1):
                    raise ValueError(f"design: benchmark {b!r} needs at least 1 task, got {n!r}")
            if isinstance(prices, Mapping):
                missing = [b for b in self.tasks_per_benchmark if b not in prices]
                if missing:
                    raise ValueError(f"design: no price for benchmark(s) {', '.join(map(repr, missing))}; "
                                     "add them to price_per_trial")
        for f, n in self.extra_facets.items():
            if f in _FACET_FIELD:
                raise ValueError(f"design: set {_FACET_FIELD[f]} rather than extra_facets[{f!r}]")
            if not n >= 1:
                raise ValueError(f"design: size of facet {f!r} should be >= 1, got {n!r}")

    # -- sizes -------------------------------------------------------------
    @property
    def object_facets(self) -> frozenset[str]:
        return object_facets(self.object_of_measurement)

    @property
    def effective_n_benchmarks(self) -> float:
        return float(len(self.tasks_per_benchmark)) if self.tasks_per_benchmark else float(self.n_benchmarks)

    @property
    def effective_n_tasks(self) -> float:
        """Tasks per benchmark; the harmonic mean of an unequal allocation."""
        if self.tasks_per_benchmark:
            n = np.array(list(self.tasks_per_benchmark.values()), dtype=np.float64)
            return float(len(n) / np.sum(1.0 / n))
        return float(self.n_tasks)

    @property
    def total_tasks(self) -> float:
        if self.tasks_per_benchmark:
            return float(sum(self.tasks_per_benchmark.values()))
        return float(self.n_tasks) * float(self.n_benchmarks)

    def sizes(self) -> dict[str, float]:
        """Facet -> sample size for the D-study rule of :mod:`.reliability`."""
        out = {"task": self.effective_n_tasks, "scaffold": float(self.n_scaffolds),
               "benchmark": self.effective_n_benchmarks, REPLICATE: float(self.n_replicates)}
        out.update({f: float(n) for f, n in self.extra_facets.items()})
        return out

    def size_of(self, over: str) -> float:
        return self.sizes()[_facet_of(over)]

    def with_size(self, over: str, n: float) -> "Design":
        """A copy with one facet's size changed (an unequal allocation is dropped when tasks change)."""
        f = _facet_of(over)
        if f in _FACET_FIELD:
            kw = {_FACET_FIELD[f]: n}
            if f in ("task", "benchmark") and self.tasks_per_benchmark:
                kw["tasks_per_benchmark"] = None
                kw.setdefault("n_tasks", self.effective_n_tasks)
                kw.setdefault("n_benchmarks", self.effective_n_benchmarks)
            return dataclasses.replace(self, **kw)
        return dataclasses.replace(self, extra_facets={**self.extra_facets, f: n})

    @property
    def estimand(self) -> str:
        return "Phi" if self.claim == "absolute" else "Erho2"

    @property
    def default_target(self) -> float:
        return DEFAULT_TARGETS[self.claim]

    # -- cost --------------------------------------------------------------
    def trial_count(self) -> float:
        """``n_models x n_scaffolds x sum_b n_tasks_b x n_replicates`` (SPEC sec. 4)."""
        return float(self.n_models) * float(self.n_scaffolds) * self.total_tasks * float(self.n_replicates)

    def mean_price(self) -> float:
        """Mean USD per trial of this design."""
        p = self.price_per_trial
        if not isinstance(p, Mapping):
            return float(p)
        if self.tasks_per_benchmark:
            tot = sum(float(n) * float(p[b]) for b, n in self.tasks_per_benchmark.items())
            return tot / self.total_tasks
        return float(np.mean(list(p.values())))

    def cost(self) -> float:
        """Total USD: the sum of the per-trial prices of every trial."""
        return self.trial_count() * self.mean_price()

    def to_dict(self) -> dict:
        return to_jsonable({
            "n_tasks": self.n_tasks, "n_scaffolds": self.n_scaffolds, "n_benchmarks": self.n_benchmarks,
            "n_replicates": self.n_replicates,
            "price_per_trial": dict(self.price_per_trial) if isinstance(self.price_per_trial, Mapping)
            else self.price_per_trial,
            "n_models": self.n_models, "object_of_measurement": _object_name(self.object_facets),
            "claim": self.claim,
            "tasks_per_benchmark": dict(self.tasks_per_benchmark) if self.tasks_per_benchmark else None,
            "extra_facets": dict(self.extra_facets), "effective_n_tasks": self.effective_n_tasks,
            "trials": self.trial_count(), "cost": self.cost()})


def _facet_of(over: str) -> str:
    if over in _FIELD_FACET:
        return _FIELD_FACET[over]
    if over.startswith("n_") and over[2:] and over not in _FIELD_FACET:
        raise ValueError(f"cannot vary {over!r}; use one of {', '.join(_FIELD_FACET)} or a facet name")
    return over


def default_grid(over: str, observed: float = 1.0, points: int = 100) -> np.ndarray:
    """Default D-study grid: integers ``1..`` with a log-spaced tail for tasks.

    Tasks: up to ``max(1000, 4 x observed)`` (about ``points`` values);
    scaffolds, benchmarks, replicates and other facets: every integer up to
    ``max(default, 2 x observed)``.
    """
    f = _facet_of(over)
    if f == "task":
        top = max(1000.0, 4 * observed)
        return np.unique(np.concatenate([np.arange(1, 21.0), np.round(np.geomspace(20, top, points - 19))]))
    top = {"scaffold": 12, "benchmark": 20}.get(f, 10)
    return np.arange(1, max(top, int(math.ceil(2 * observed))) + 1, dtype=np.float64)


# ---------------------------------------------------------------------------
# The precomputed D-study engine
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class CoefficientParts:
    """Per-draw ``U``, ``A``, ``B`` of ``coef(n) = U / (U + A + B/n)`` for one varied facet.

    Attributes
    ----------
    facet
        The varied facet.
    applies
        False when the facet is absent from the fit or part of the object (``B = 0``).
    u, a, b
        ``(S,)`` universe-score variance, error not divided by ``n``, error divided by ``n``.
    """

    facet: str
    applies: bool
    u: np.ndarray
    a: np.ndarray
    b: np.ndarray


def _coef(u, a, b, inv_n, snr=False):
    """Coefficient (or SNR) per draw at ``1/n = inv_n`` with the conventions of :mod:`.reliability`."""
    err = a + b * inv_n
    with np.errstate(divide="ignore", invalid="ignore"):
        out = u / err if snr else u / (u + err)
    return np.where(u > 0, out, 0.0)


@dataclass
class DStudyCurve:
    """One D-study curve: a coefficient against the size of one facet.

    Attributes
    ----------
    over
        The varied facet (``"task"``, ``"scaffold"``, ``"benchmark"``, ``"replicate"``, ...).
    estimand
        ``"Erho2"``, ``"Phi"`` or ``"SNR"``.
    grid
        ``(G,)`` sizes of the facet.
    median, hdi68, hdi95
        ``(G,)`` posterior median and ``(G, 2)`` HDIs of the estimand at each size.
    asymptote
        Summary of the limit as the facet size -> infinity (the task-only
        ceiling when ``over`` is tasks; seed 000 Eq. 8).
    observed_x, observed
        The design's size of the facet and the summary there (all draws).
    detection_band
        The SNR 2-3 reference band on the estimand's scale (seed 000 Fig. 3).
    target, p_target
        The target on the coefficient scale and ``(G,)`` ``P(coef >= target)``
        at each size (all draws).
    applies
        False when the facet is absent from the fit or part of the object (the curve is flat).
    band_draws
        Number of draws behind ``median``/``hdi*``.
    """

    over: str
    estimand: str
    grid: np.ndarray
    median: np.ndarray
    hdi68: np.ndarray
    hdi95: np.ndarray
    asymptote: Summary
    observed_x: float
    observed: Summary
    detection_band: tuple[float, float]
    target: float
    p_target: np.ndarray
    applies: bool
    band_draws: int

    def to_dict(self) -> dict:
        return to_jsonable({k: getattr(self, k) for k in (
            "over", "estimand", "grid", "median", "hdi68", "hdi95", "asymptote", "observed_x", "observed",
            "detection_band", "target", "p_target", "applies", "band_draws")})


@dataclass
class RequiredN:
    """Posterior distribution of the smallest facet size that reaches a target (the budget frontier).

    Attributes
    ----------
    over, estimand, target
        The varied facet, coefficient and target.
    draws
        ``(S,)`` smallest integer size per draw (``inf``: unreachable, the ceiling is below the target).
    p_reachable
        ``P(ceiling >= target)``.
    quantiles
        Size needed for assurance ``q`` for q in 0.025, 0.16, 0.5, 0.84, 0.975:
        the smallest ``n`` with ``P(n* <= n) >= q`` (an order statistic; ``inf`` if unreachable).
    observed_n, p_target_met
        The design's size and ``P(coef >= target)`` there.
    """

    over: str
    estimand: str
    target: float
    draws: np.ndarray
    p_reachable: float
    quantiles: dict[float, float]
    observed_n: float
    p_target_met: float

    @property
    def median(self) -> float:
        return self.quantiles[0.5]

    def n_for_assurance(self, prob: float) -> float:
        """Smallest integer size with ``P(coef >= target) >= prob`` (``inf`` if none)."""
        return _order_stat(np.sort(self.draws), prob)

    def cdf(self, grid) -> np.ndarray:
        """``P(n* <= n)`` for each ``n`` of ``grid``: the probability that size ``n`` meets the target."""
        s = np.sort(self.draws)
        return np.searchsorted(s, np.asarray(grid, dtype=np.float64), side="right") / len(s)

    def to_dict(self) -> dict:
        return to_jsonable({"over": self.over, "estimand": self.estimand, "target": self.target,
                            "p_reachable": self.p_reachable,
                            "quantiles": {str(k): v for k, v in self.quantiles.items()},
                            "observed_n": self.observed_n, "p_target_met": self.p_target_met,
                            "n_draws": len(self.draws)})


def _order_stat(sorted_x: np.ndarray, q: float) -> float:
    n = len(sorted_x)
    k = min(max(int(math.ceil(q * n - 1e-12)) - 1, 0), n - 1)
    return float(sorted_x[k])


_ASSURANCE = (0.025, 0.16, 0.5, 0.84, 0.975)


@dataclass
class Readouts:
    """Point readouts of a design (all draws).

    Attributes
    ----------
    estimand
        The claim's coefficient (``"Erho2"`` or ``"Phi"``).
    coefficient, erho2, phi, snr, ceiling
        Summaries: the claim's coefficient, ``Erho2``, ``Phi``, ``SNR`` and the
        task-only ceiling of the claim's coefficient.
    target, p_target_met
        Target and ``P(coef >= target)``.
    required
        :class:`RequiredN` over tasks.
    cost, trials, rpd
        Design cost (USD), trial count, and reliability per dollar
        (``coef / mean cost per trial``; None when the price is 0).
    """

    estimand: str
    coefficient: Summary
    erho2: Summary
    phi: Summary
    snr: Summary
    ceiling: Summary
    target: float
    p_target_met: float
    required: RequiredN
    cost: float
    trials: float
    rpd: Summary | None

    def to_dict(self) -> dict:
        return to_jsonable({k: getattr(self, k) for k in (
            "estimand", "coefficient", "erho2", "phi", "snr", "ceiling", "target", "p_target_met", "required",
            "cost", "trials", "rpd")})


@dataclass
class DStudyView:
    """Everything the D-study view shows for one design: curves over each facet and the readouts."""

    design: Design
    curves: dict[str, DStudyCurve]
    readouts: Readouts

    def to_dict(self) -> dict:
        return to_jsonable({"design": self.design.to_dict(), "curves": {k: v.to_dict() for k, v in self.curves.items()},
                            "readouts": self.readouts.to_dict()})


class DStudyModel:
    """A posterior prepared for fast D-studies (one object per fit; reuse it across slider moves).

    Parameters
    ----------
    components
        Mapping term -> ``sigma^2`` draws, or :class:`~.reliability.VarianceComponents`.
    band_draws
        Draws behind curve medians and HDIs (evenly thinned; ``None``: all).
    """

    def __init__(self, components, band_draws: int | None = DEFAULT_BAND_DRAWS):
        self.components: VarianceComponents = as_components(components)
        c = self.components
        self._x = c.matrix
        self._e = c.residual
        idx = thin_index(c.n_draws, band_draws)
        self._band_idx = idx
        self.band_draws = c.n_draws if idx is None else len(idx)

    @property
    def n_draws(self) -> int:
        return self.components.n_draws

    # -- per-draw coefficient arrays --------------------------------------
    def parts(self, design: Design, over: str = "task", claim: str | None = None) -> CoefficientParts:
        """``U``, ``A``, ``B`` per draw for ``coef(n) = U / (U + A + B/n)`` as facet ``over`` varies."""
        c = self.components
        claim = claim or design.claim
        f = _facet_of(over)
        o = design.object_facets
        sizes = design.sizes()
        sizes[f] = 1.0
        w = design_weights(c, o, sizes)
        werr = w.error(claim)
        # Which weights carry 1/n_f: a term's divisor is F(t) - o (relative) or F(t) (absolute-only).
        applies = f not in o and (f in c.facets or f == REPLICATE)
        inc = np.array([applies and f in fs for fs in c.facet_sets], dtype=np.float64)
        res_inc = 1.0 if applies else 0.0
        u = self._x @ w.universe
        a = self._x @ (werr * (1 - inc)) + self._e * (w.residual * (1 - res_inc))
        b = self._x @ (werr * inc) + self._e * (w.residual * res_inc)
        return CoefficientParts(f, applies, u, a, b)

    def coefficient(self, design: Design, claim: str | None = None) -> np.ndarray:
        """Per-draw coefficient (Erho2 or Phi) of the design."""
        p = self.parts(design, "task", claim)
        return _coef(p.u, p.a, p.b, 1.0 / design.effective_n_tasks)

    # -- curves -----------------------------------------------------------
    def curve(self, design: Design, over: str = "n_tasks", grid=None, estimand: str | None = None,
              target: float | None = None) -> DStudyCurve:
        """D-study curve of the design's coefficient (or ``"SNR"``) as one facet varies.

        See :func:`d_study_curve`.
        """
        return self._curve(design, over, grid, estimand, target)

    def _curve(self, design: Design, over: str, grid, estimand: str | None, target: float | None,
               parts: CoefficientParts | None = None, observed: Summary | None = None,
               asymptote: Summary | None = None) -> DStudyCurve:
        # ``observed``/``asymptote``: summaries a caller already has (the view shares them across curves).
        f = _facet_of(over)
        estimand = estimand or design.estimand
        if estimand not in ("Erho2", "Phi", "SNR"):
            raise ValueError(f"estimand should be 'Erho2', 'Phi' or 'SNR', got {estimand!r}")
        claim = "absolute" if estimand == "Phi" else "relative"  # SNR is relative (seed 000 Table 1)
        target = design.default_target if target is None else _check_target(target)
        p = parts or self.parts(design, f, claim)
        x_obs = design.size_of(f)
        grid = default_grid(f, x_obs) if grid is None else np.asarray(grid, dtype=np.float64)
        if grid.ndim != 1 or grid.size == 0 or not (grid > 0).all():
            raise ValueError("grid should be a non-empty 1-D array of positive sizes")
        snr = estimand == "SNR"
        idx = self._band_idx
        u, a, b = (p.u, p.a, p.b) if idx is None else (p.u[idx], p.a[idx], p.b[idx])
        # The hot path: (G, s) C-ordered so each grid point's draws are contiguous for the sort.
        y = np.multiply.outer(1.0 / grid, b)
        y += a
        if not snr:
            y += u
        with np.errstate(divide="ignore", invalid="ignore"):
            np.divide(u, y, out=y)
        if not (u > 0).all():
            y[:, ~(u > 0)] = 0.0
        y.sort(axis=1)
        med = _median_sorted(y)
        h68 = np.column_stack(hdi_sorted(y, 0.68))
        h95 = np.column_stack(hdi_sorted(y, 0.95))
        thr = _continuous_threshold(p, target)
        p_t = np.searchsorted(thr, grid, side="right") / len(thr)
        band = DETECTION_SNR if snr else DETECTION_ERHO2
        asymptote = asymptote or summarize(_coef(p.u, p.a, p.b, 0.0, snr))
        observed = observed or summarize(_coef(p.u, p.a, p.b, 1.0 / x_obs, snr))
        return DStudyCurve(f, estimand, grid, med, h68, h95, asymptote, x_obs, observed, band, target, p_t,
                           p.applies, self.band_draws)

    # -- budget frontier --------------------------------------------------
    def required_n(self, design: Design, over: str = "n_tasks", target: float | None = None,
                   claim: str | None = None) -> RequiredN:
        """Posterior distribution of the smallest size of ``over`` reaching the target (closed form per draw).

        See :func:`required_n`.
        """
        return self._required_n(design, over, target, claim)

    def _required_n(self, design: Design, over: str, target: float | None, claim: str | None = None,
                    parts: CoefficientParts | None = None) -> RequiredN:
        claim = claim or design.claim
        target = DEFAULT_TARGETS[claim] if target is None else _check_target(target)
        p = parts or self.parts(design, over, claim)
        n = _required_integer(p, target)
        s = np.sort(n)
        x_obs = design.size_of(p.facet)
        met = float(np.mean(_coef(p.u, p.a, p.b, 1.0 / x_obs) >= target))
        return RequiredN(p.facet, "Phi" if claim == "absolute" else "Erho2", target, n,
                         float(np.mean(np.isfinite(n))), {q: _order_stat(s, q) for q in _ASSURANCE}, x_obs, met)

    def p_target_met(self, design: Design, target: float | None = None, claim: str | None = None) -> float:
        """``P(coef >= target | y)`` of a design (all draws)."""
        claim = claim or design.claim
        target = DEFAULT_TARGETS[claim] if target is None else _check_target(target)
        return float(np.mean(self.coefficient(design, claim) >= target))

    # -- one slider move --------------------------------------------------
    def readouts(self, design: Design, target: float | None = None) -> Readouts:
        """Point readouts of the design (all draws)."""
        return self._readouts(design, target)[0]

    def _readouts(self, design: Design, target: float | None, parts: CoefficientParts | None = None):
        target = design.default_target if target is None else _check_target(target)
        p = parts or self.parts(design, "task")
        q = self.parts(design, "task", "relative" if design.claim == "absolute" else "absolute")
        inv = 1.0 / design.effective_n_tasks
        coef = np.sort(_coef(p.u, p.a, p.b, inv))
        coef2 = np.sort(_coef(q.u, q.a, q.b, inv))
        s_coef, s_coef2 = summarize_sorted(coef), summarize_sorted(coef2)
        erho2, s_erho2, s_phi = (coef, s_coef, s_coef2) if design.claim == "relative" else (coef2, s_coef2, s_coef)
        # SNR = Erho2 / (1 - Erho2) is increasing in Erho2, so the sorted Erho2 gives sorted SNR.
        s_snr = summarize_sorted(_snr_of(erho2))
        ceiling = summarize(_coef(p.u, p.a, p.b, 0.0))
        price = design.mean_price()
        rpd = _scaled(s_coef, 1.0 / price) if price > 0 else None
        met = 1.0 - np.searchsorted(coef, target, side="left") / len(coef)
        out = Readouts(design.estimand, s_coef, s_erho2, s_phi, s_snr, ceiling, target, float(met),
                       self._required_n(design, "task", target, parts=p), design.cost(), design.trial_count(), rpd)
        return out, p

    def view(self, design: Design, grids: Mapping[str, Sequence[float]] | None = None, target: float | None = None,
             overs: Iterable[str] = ("n_tasks", "n_scaffolds", "n_benchmarks")) -> DStudyView:
        """Every curve and readout of the D-study view for one design (one slider move).

        The curves share the readouts' summary at the observed design and the
        task-only ceiling, so the view shows one number for each.
        """
        grids = dict(grids or {})
        readouts, p_task = self._readouts(design, target)
        curves = {}
        for over in overs:
            f = _facet_of(over)
            p = p_task if f == "task" else self.parts(design, f)
            g = grids.get(over, grids.get(f))
            curves[over] = self._curve(design, f, g, None, readouts.target, p, readouts.coefficient,
                                       readouts.ceiling if f == "task" else None)
        return DStudyView(design, curves, readouts)


def _snr_of(r: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(r < 1, r / (1 - np.minimum(r, 1)), np.inf)


def _scaled(s: Summary, k: float) -> Summary:
    """Summary of ``k x`` from that of ``x`` (k > 0: order, median and HDI windows are unchanged)."""
    return Summary(s.median * k, s.mean * k, (s.hdi68[0] * k, s.hdi68[1] * k), (s.hdi95[0] * k, s.hdi95[1] * k),
                   s.n_draws, s.prob_positive)


def _check_target(target: float) -> float:
    t = float(target)
    if not 0 < t < 1:
        raise ValueError(f"target should be a coefficient in the interval (0, 1), got {target!r}; "
                         "for an SNR target s use s / (1 + s)")
    return t


def _continuous_threshold(p: CoefficientParts, target: float) -> np.ndarray:
    """Sorted per-draw real ``n`` at which ``coef(n) = target`` (0 if always met, inf if never)."""
    d = p.u * (1 - target) / target - p.a  # error budget left for B/n
    with np.errstate(divide="ignore", invalid="ignore"):
        thr = np.where(p.b > 0, np.where(d > 0, p.b / d, np.inf), np.where(d >= 0, 0.0, np.inf))
    thr[~(p.u > 0)] = np.inf
    return np.sort(thr)


def _required_integer(p: CoefficientParts, target: float) -> np.ndarray:
    """Smallest integer n >= 1 with ``coef(n) >= target`` per draw, exact against direct evaluation."""
    d = p.u * (1 - target) / target - p.a
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = np.where(p.b > 0, np.where(d > 0, p.b / d, np.inf), np.where(d >= 0, 1.0, np.inf))
    raw[~(p.u > 0)] = np.inf
    fin = np.isfinite(raw)
    n = np.full(raw.shape, np.inf)
    n[fin] = np.maximum(1.0, np.ceil(raw[fin]))
    # Floating-point guard at the boundary: make n agree with evaluating the coefficient itself.
    k = np.flatnonzero(fin)
    if k.size:
        u, a, b, nk = p.u[k], p.a[k], p.b[k], n[k]
        up = _coef(u, a, b, 1.0 / nk) < target
        nk = nk + up
        down = (nk > 1) & (_coef(u, a, b, 1.0 / np.maximum(nk - 1, 1)) >= target)
        n[k] = nk - down
    return n


# ---------------------------------------------------------------------------
# Module-level entry points (accept components or a prepared model)
# ---------------------------------------------------------------------------

def _model(components, band_draws=DEFAULT_BAND_DRAWS) -> DStudyModel:
    return components if isinstance(components, DStudyModel) else DStudyModel(components, band_draws)


def d_study_curve(components, design: Design, over: str = "n_tasks", grid=None, *, estimand: str | None = None,
                  target: float | None = None, band_draws: int | None = DEFAULT_BAND_DRAWS) -> DStudyCurve:
    """D-study curve: the design's coefficient (or SNR) against the size of one facet (SPEC sec. 4).

    Parameters
    ----------
    components
        Mapping term -> ``sigma^2`` draws, :class:`~.reliability.VarianceComponents`
        or a prepared :class:`DStudyModel` (reuse one for many calls).
    design
        The current design; the other facets stay at its sizes.
    over
        ``"n_tasks"``, ``"n_scaffolds"``, ``"n_benchmarks"``, ``"n_replicates"``
        or a facet name.
    grid
        Sizes to evaluate; default :func:`default_grid`.
    estimand
        ``"Erho2"``, ``"Phi"`` or ``"SNR"``; default from the design's claim.
    target
        Target on the coefficient scale; default 0.85 (relative) / 0.90 (absolute).
    band_draws
        Draws behind the bands when ``components`` is not a prepared model.

    Returns
    -------
    DStudyCurve
        Median, 68% and 95% HDI per grid point, the asymptote (the task-only
        ceiling of seed 000 Eq. 8 when ``over`` is tasks), the observed design,
        the detection band (SNR 2-3) and ``P(target met)`` per grid point.
    """
    return _model(components, band_draws).curve(design, over, grid, estimand, target)


def required_n(components, design: Design, over: str = "n_tasks", target: float | None = None) -> RequiredN:
    """Posterior distribution of the smallest size of ``over`` reaching the target (the budget frontier).

    Per draw, ``U / (U + A + B/n) >= T`` is solved in closed form:
    ``n >= B / (U (1 - T)/T - A)``, ``inf`` when ``U (1 - T)/T <= A`` (the limit
    ``n -> inf`` is below the target; seed 000 Prop. 3.1).
    """
    return _model(components, None).required_n(design, over, target)


def p_target_met(components, design: Design, target: float | None = None) -> float:
    """``P(coef >= target | y)`` for a design (default target by claim)."""
    return _model(components, None).p_target_met(design, target)


# ---------------------------------------------------------------------------
# Fixed task budget: breadth versus depth (Corollary 3.2)
# ---------------------------------------------------------------------------

@dataclass
class BreadthCurve:
    """The coefficient when a fixed task budget ``N = n_b n_i`` is spread over ``n_b`` benchmarks.

    Attributes
    ----------
    total_tasks
        ``N`` (tasks per scaffold).
    n_benchmarks, tasks_per_benchmark
        ``(G,)`` grid of ``n_b`` and ``N / n_b`` (fractional when ``n_b`` does not divide ``N``, as in Eq. 9).
    median, hdi68, hdi95
        Posterior summaries per grid point (all draws).
    estimand
        ``"Erho2"`` or ``"Phi"``.
    """

    total_tasks: float
    n_benchmarks: np.ndarray
    tasks_per_benchmark: np.ndarray
    median: np.ndarray
    hdi68: np.ndarray
    hdi95: np.ndarray
    estimand: str

    def to_dict(self) -> dict:
        return to_jsonable({k: getattr(self, k) for k in (
            "total_tasks", "n_benchmarks", "tasks_per_benchmark", "median", "hdi68", "hdi95", "estimand")})


def _weight_matrix(c: VarianceComponents, obj, size_list: Sequence[Mapping[str, float]], claim: str):
    """Universe weights and ``(T, D)`` error weights, ``(D,)`` residual weights for many designs."""
    ws = [design_weights(c, obj, s) for s in size_list]
    return ws[0].universe, np.column_stack([w.error(claim) for w in ws]), np.array([w.residual for w in ws])


def _coef_matrix(c: VarianceComponents, obj, size_list, claim: str) -> np.ndarray:
    """``(D, S)`` coefficients of many designs, per draw."""
    uw, k, r = _weight_matrix(c, obj, size_list, claim)
    u = c.matrix @ uw
    err = (c.matrix @ k).T + np.multiply.outer(r, c.residual)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = u / (u + err)
    return np.where(u > 0, out, 0.0)


def fixed_budget_breadth(components, total_tasks: float, design: Design | None = None,
                         n_benchmarks: Sequence[float] | None = None) -> BreadthCurve:
    """Coefficient at a fixed task budget as it is spread over more benchmarks (seed 000 Corollary 3.2, Eq. 9).

    With ``n_i = N / n_b``, Eq. 7's error is ``s2_MA/n_a + (s2_BM + s2_BMA/n_a)/n_b
    + (s2_IM[B] + e/n_a)/N``: only the benchmark-conditioned part changes, so
    breadth raises reliability whenever ``s2_BM + s2_BMA/n_a > 0``.

    Parameters
    ----------
    components
        A pooled fit (with benchmark terms).
    total_tasks
        ``N``, tasks per scaffold in all.
    design
        Supplies ``n_scaffolds``, ``n_replicates``, object and claim (default: model, relative, one scaffold).
    n_benchmarks
        Grid of ``n_b`` (default ``1..min(N, 20)``).
    """
    c = as_components(components)
    design = design or Design()
    if not total_tasks >= 1:
        raise ValueError(f"total_tasks should be >= 1, got {total_tasks!r}")
    grid = (np.arange(1, min(int(total_tasks), 20) + 1, dtype=np.float64) if n_benchmarks is None
            else np.asarray(n_benchmarks, dtype=np.float64))
    if grid.ndim != 1 or grid.size == 0 or (grid < 1).any() or (grid > total_tasks).any():
        raise ValueError(f"n_benchmarks should be sizes between 1 and total_tasks ({total_tasks})")
    base = design.sizes()
    size_list = [{**base, "benchmark": nb, "task": total_tasks / nb} for nb in grid]
    y = np.sort(_coef_matrix(c, design.object_facets, size_list, design.claim), axis=1)
    return BreadthCurve(float(total_tasks), grid, total_tasks / grid, _median_sorted(y),
                        np.column_stack(hdi_sorted(y, 0.68)), np.column_stack(hdi_sorted(y, 0.95)), design.estimand)


# ---------------------------------------------------------------------------
# Cost frontier
# ---------------------------------------------------------------------------

@dataclass
class CostFrontier:
    """Reliability against cost over a grid of designs, with the Pareto front (SPEC sec. 4).

    Attributes
    ----------
    estimand, target, prob
        Coefficient, target and assurance (a design meets the target when ``P(coef >= target) >= prob``).
    n_tasks, n_scaffolds, n_benchmarks, trials, cost
        ``(D,)`` the designs of the grid.
    median, hdi95, p_target
        ``(D,)``, ``(D, 2)``, ``(D,)`` posterior summaries per design.
    pareto
        Indices of the Pareto front, by increasing cost: each is the cheapest
        design reaching its median coefficient (the best reliability reachable
        at that budget).
    cheapest
        Index of the cheapest design meeting the target, or None.
    """

    estimand: str
    target: float
    prob: float
    n_tasks: np.ndarray
    n_scaffolds: np.ndarray
    n_benchmarks: np.ndarray
    trials: np.ndarray
    cost: np.ndarray
    median: np.ndarray
    hdi95: np.ndarray
    p_target: np.ndarray
    pareto: np.ndarray
    cheapest: int | None

    def best_at_budget(self, budget: float) -> int | None:
        """Index of the design with the highest median coefficient costing at most ``budget`` (None if none)."""
        ok = self.pareto[self.cost[self.pareto] <= budget]
        return int(ok[-1]) if ok.size else None

    def design_at(self, k: int) -> dict:
        return {"n_tasks": float(self.n_tasks[k]), "n_scaffolds": float(self.n_scaffolds[k]),
                "n_benchmarks": float(self.n_benchmarks[k]), "trials": float(self.trials[k]),
                "cost": float(self.cost[k]), "median": float(self.median[k]), "p_target": float(self.p_target[k])}

    def to_dict(self) -> dict:
        return to_jsonable({k: getattr(self, k) for k in (
            "estimand", "target", "prob", "n_tasks", "n_scaffolds", "n_benchmarks", "trials", "cost", "median",
            "hdi95", "p_target", "pareto", "cheapest")} |
            {"cheapest_design": self.design_at(self.cheapest) if self.cheapest is not None else None})


def _pareto(cost: np.ndarray, value: np.ndarray) -> np.ndarray:
    order = np.lexsort((-value, cost))  # by cost, then best value first
    keep, best = [], -np.inf
    for k in order:
        if value[k] > best:
            keep.append(k)
            best = value[k]
    return np.array(keep, dtype=np.int64)


def cost_frontier(components, design: Design, n_tasks=None, n_scaffolds=None, n_benchmarks=None,
                  target: float | None = None, prob: float = 0.5, chunk: int = 256) -> CostFrontier:
    """Best reliability at each budget and the cheapest design reaching a target, over a grid of designs.

    Parameters
    ----------
    components
        Variance-component draws.
    design
        Fixes object, claim, replicates, models compared and prices.
    n_tasks, n_scaffolds, n_benchmarks
        Grids (defaults: :func:`default_grid` for tasks thinned to 40 values,
        scaffolds 1..8, benchmarks 1..max(9, design)); facets absent from the
        fit, or in the object, stay at the design's value.
    target, prob
        Target coefficient and assurance.
    """
    c = as_components(components)
    target = design.default_target if target is None else _check_target(target)
    o = design.object_facets

    def grid(values, f, default):
        if f not in c.facets or f in o:
            return np.array([design.size_of(f)])
        return np.asarray(default if values is None else values, dtype=np.float64)

    gt = grid(n_tasks, "task", np.unique(np.round(np.geomspace(1, max(1000, 4 * design.effective_n_tasks), 40))))
    ga = grid(n_scaffolds, "scaffold", np.arange(1, 9.0))
    gb = grid(n_benchmarks, "benchmark", np.arange(1, max(9, int(design.effective_n_benchmarks)) + 1.0))
    t, a, b = (m.ravel() for m in np.meshgrid(gt, ga, gb, indexing="ij"))
    base = design.sizes()
    base.pop("task"), base.pop("scaffold"), base.pop("benchmark")
    # Equal allocations: each benchmark is charged the mean price (module note on cost).
    pp = design.price_per_trial
    price = float(np.mean(list(pp.values()))) if isinstance(pp, Mapping) else float(pp)
    trials = float(design.n_models) * a * t * b * float(design.n_replicates)
    cost = trials * price
    med, h95, pt = np.empty(t.size), np.empty((t.size, 2)), np.empty(t.size)
    for s in range(0, t.size, chunk):
        sl = slice(s, s + chunk)
        size_list = [{**base, "task": ti, "scaffold": ai, "benchmark": bi} for ti, ai, bi in zip(t[sl], a[sl], b[sl])]
        y = np.sort(_coef_matrix(c, o, size_list, design.claim), axis=1)
        med[sl] = _median_sorted(y)
        h95[sl] = np.column_stack(hdi_sorted(y, 0.95))
        pt[sl] = (y >= target).mean(axis=1)
    par = _pareto(cost, med)
    ok = np.flatnonzero(pt >= prob)
    cheapest = int(ok[np.lexsort((-med[ok], cost[ok]))[0]]) if ok.size else None
    return CostFrontier(design.estimand, target, prob, t, a, b, trials, cost, med, h95, pt, par, cheapest)


# ---------------------------------------------------------------------------
# Reliability-aware allocation of tasks across benchmarks
# ---------------------------------------------------------------------------

@dataclass
class Allocation:
    """Tasks per benchmark that maximise reliability for a budget, or minimise cost for a target.

    Attributes
    ----------
    mode
        ``"budget"`` or ``"target"``.
    estimand, target, prob, budget
        The criterion (a design meets the target when ``P(coef >= target) >= prob``).
    prices
        USD per trial per benchmark.
    optimal, equal, reference
        ``{benchmark: n_tasks}`` of the reliability-aware allocation, of the
        equal allocation under the same criterion, and of an optional
        reference design (e.g. the observed battery).
    continuous
        The continuous optimum ``n_b`` proportional to ``1 / sqrt(price_b)``.
    costs, summaries, p_target
        Per allocation (keys ``optimal``, ``equal``, ``reference``): USD,
        coefficient summary and ``P(coef >= target)``.
    saving_pct
        Target mode: ``100 (1 - cost_optimal / cost_equal)`` with both meeting
        the target.  Budget mode: the same against the cheapest equal
        allocation whose median coefficient reaches the optimal allocation's.
    saving_vs_reference_pct
        ``100 (1 - cost_optimal / cost_reference)`` (target mode, when a reference is given).
    feasible
        False when no allocation meets the target (the ceiling is below it) or the budget buys no task.
    """

    mode: str
    estimand: str
    target: float | None
    prob: float
    budget: float | None
    prices: dict[str, float]
    optimal: dict[str, int]
    equal: dict[str, int]
    reference: dict[str, float] | None
    continuous: dict[str, float]
    costs: dict[str, float]
    summaries: dict[str, Summary]
    p_target: dict[str, float]
    saving_pct: float | None
    saving_vs_reference_pct: float | None
    feasible: bool = True

    def to_dict(self) -> dict:
        return to_jsonable({k: getattr(self, k) for k in (
            "mode", "estimand", "target", "prob", "budget", "prices", "optimal", "equal", "reference", "continuous",
            "costs", "summaries", "p_target", "saving_pct", "saving_vs_reference_pct", "feasible")})


def _greedy_to_target(prices: np.ndarray, qmax: float, start: np.ndarray) -> np.ndarray:
    """Cheapest integer n (>= 1) with ``sum 1/n <= qmax``: marginal gain per dollar, then trim."""
    n = np.maximum(1.0, start.copy())
    while np.sum(1.0 / n) > qmax * (1 + 1e-12):
        gain = (1.0 / n - 1.0 / (n + 1)) / prices
        n[np.argmax(gain)] += 1
    for k in np.argsort(-prices):  # drop tasks from the dearest benchmarks while the target still holds
        while n[k] > 1:
            n[k] -= 1
            if np.sum(1.0 / n) > qmax * (1 + 1e-12):
                n[k] += 1
                break
    return n


def _greedy_in_budget(prices: np.ndarray, money: float, start: np.ndarray) -> np.ndarray:
    """Integer n (>= 1) with ``sum p n <= money`` and small ``sum 1/n``: marginal gain per dollar."""
    n = np.maximum(1.0, np.floor(start))
    while np.dot(prices, n) > money * (1 + 1e-12):  # forcing n >= 1 may overspend: take from the largest
        k = int(np.argmax(np.where(n > 1, (1.0 / (n - 1) - 1.0 / n) / prices * -1, -np.inf)))
        n[k] -= 1
    while True:
        left = money - np.dot(prices, n)
        ok = prices <= left * (1 + 1e-12)
        if not ok.any():
            return n
        gain = np.where(ok, (1.0 / n - 1.0 / (n + 1)) / prices, -np.inf)
        n[np.argmax(gain)] += 1


def _smallest_n(ok, start: int, limit: int = 10**9) -> int | None:
    """Smallest integer n >= start with ``ok(n)`` for a monotone predicate (doubling, then bisection)."""
    lo, hi = start - 1, start
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > limit:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def allocate_tasks(components, design: Design, prices: Mapping[str, float] | None = None, *,
                   budget: float | None = None, target: float | None = None, prob: float = 0.5,
                   reference: Mapping[str, float] | None = None) -> Allocation:
    """Reliability-aware allocation of tasks across benchmarks with different prices (SPEC sec. 4).

    With ``n_i,b`` tasks in benchmark ``b`` the benchmark-averaged score's error is
    Eq. 7 with ``s2_IM[B]/(n_b n_i) + e/(n_b n_i n_a)`` replaced by
    ``(1/n_b^2) sum_b (s2_IM[B] + e/(n_a n_r)) / n_i,b``, so every draw's
    coefficient falls with ``Q = sum_b 1/n_i,b`` alone.  Minimising ``Q`` for a
    budget (or cost for a bound on ``Q``) gives ``n_i,b`` proportional to
    ``1/sqrt(price_b)``: the same allocation is best for every draw.  Integer
    counts come from greedy marginal allocation (gain in ``Q`` per dollar;
    exact when prices are equal).

    Parameters
    ----------
    components
        A pooled fit (benchmark terms; with a per-benchmark fit there is one benchmark).
    design
        Fixes object, claim, ``n_models``, ``n_scaffolds``, ``n_replicates``;
        prices default to its ``price_per_trial`` mapping.
    prices
        ``{benchmark: USD per trial}`` (> 0); the benchmarks to allocate over.
    budget, target
        Exactly one: maximise the coefficient within ``budget`` USD, or reach
        ``target`` with assurance ``prob`` at the least cost.
    reference
        Optional ``{benchmark: n_tasks}`` to compare against (e.g. the observed battery).

    Raises
    ------
    ValueError
        Neither or both of budget and target; a price that is not positive;
        a budget that cannot buy one task per benchmark.
    """
    c = as_components(components)
    if (budget is None) == (target is None):
        raise ValueError("give exactly one of budget (USD; maximise reliability) or target (minimise cost)")
    prices = dict(prices if prices is not None else
                  (design.price_per_trial if isinstance(design.price_per_trial, Mapping) else {}))
    if not prices:
        raise ValueError("allocation needs prices per benchmark: pass prices={benchmark: USD per trial}")
    names = list(prices)
    p = np.array([float(prices[b]) for b in names])
    if not (np.isfinite(p) & (p > 0)).all():
        bad = names[int(np.flatnonzero(~(np.isfinite(p) & (p > 0)))[0])]
        raise ValueError(f"price per trial of benchmark {bad!r} should be > 0 (USD); a free benchmark "
                         "would take unlimited tasks")
    if not 0 < prob < 1:
        raise ValueError(f"prob should be in the interval (0, 1), got {prob}")
    nb = len(names)
    k = float(design.n_models) * float(design.n_scaffolds) * float(design.n_replicates)
    base = dataclasses.replace(design, tasks_per_benchmark=None, n_benchmarks=nb, price_per_trial=prices)
    model = DStudyModel(c, None)

    def evaluate(alloc: Mapping[str, float]):
        d = dataclasses.replace(base, tasks_per_benchmark=dict(alloc))
        coef = model.coefficient(d)
        return d.cost(), coef

    sq = np.sqrt(p)
    feasible = True
    ref = dict(reference) if reference else None
    if budget is not None:
        money = float(budget) / k
        if money < p.sum():
            raise ValueError(f"budget {budget} USD cannot buy one task per benchmark "
                             f"(needs {p.sum() * k:.2f} USD); raise it or drop benchmarks")
        cont = money / (sq * sq.sum())
        opt = _greedy_in_budget(p, money, cont * (1 + 1e-12))
        n_eq = math.floor(money / p.sum() * (1 + 1e-12))  # 6.0 / 0.6 is 9.999... in floating point
        equal = np.full(nb, float(n_eq))
        tgt = None
    else:
        tgt = _check_target(target)
        parts = model.parts(base, "task")
        thr = _continuous_threshold(parts, tgt)  # per-draw n_eff needed, sorted
        v = _order_stat(thr, prob)
        if not np.isfinite(v):
            feasible = False
            opt = equal = np.full(nb, np.nan)
            cont = np.full(nb, np.inf)
        else:
            v = max(v, 1.0)
            qmax = nb / v  # sum_b 1/n_b allowed
            cont = sq.sum() / (qmax * sq)
            opt = _greedy_to_target(p, qmax, np.floor(cont))
            while np.mean(evaluate(dict(zip(names, opt)))[1] >= tgt) < prob:  # floating-point guard
                opt[np.argmax((1.0 / opt - 1.0 / (opt + 1)) / p)] += 1
            equal = np.full(nb, max(1.0, math.ceil(v - 1e-9)))
            while True:  # guard the integer boundary against the evaluated coefficient
                _, ce = evaluate(dict(zip(names, equal)))
                if np.mean(ce >= tgt) >= prob:
                    break
                equal += 1
    costs, summaries, pt = {}, {}, {}
    allocs = {"optimal": opt, "equal": equal}
    if ref:
        missing = [b for b in ref if b not in prices]
        if missing:
            raise ValueError(f"reference has benchmark(s) without a price: {', '.join(map(repr, missing))}")
    saving = saving_ref = None
    if feasible:
        for key, arr in allocs.items():
            cost, coef = evaluate(dict(zip(names, arr)))
            costs[key], summaries[key] = cost, summarize(coef)
            pt[key] = float(np.mean(coef >= tgt)) if tgt is not None else None
        if ref:
            d = dataclasses.replace(base, tasks_per_benchmark=ref, n_benchmarks=len(ref))
            coef = model.coefficient(d)
            costs["reference"], summaries["reference"] = d.cost(), summarize(coef)
            pt["reference"] = float(np.mean(coef >= tgt)) if tgt is not None else None
            if tgt is not None:
                saving_ref = 100.0 * (1 - costs["optimal"] / costs["reference"])
        if tgt is not None:
            saving = 100.0 * (1 - costs["optimal"] / costs["equal"])
        else:
            goal = summaries["optimal"].median - 1e-12
            n = _smallest_n(lambda m: float(np.median(evaluate(dict.fromkeys(names, m))[1])) >= goal,
                            max(1, int(equal[0])))
            if n is not None:  # cheapest equal allocation matching the optimal median
                saving = 100.0 * (1 - costs["optimal"] / evaluate(dict.fromkeys(names, n))[0])
    to_int = (lambda arr: {b: (int(x) if np.isfinite(x) else None) for b, x in zip(names, arr)})
    return Allocation("budget" if budget is not None else "target", base.estimand, tgt, prob,
                      float(budget) if budget is not None else None, {b: float(x) for b, x in zip(names, p)},
                      to_int(opt), to_int(equal), ref, {b: float(x) for b, x in zip(names, cont)}, costs, summaries,
                      pt, saving, saving_ref, feasible)


# ---------------------------------------------------------------------------
# Prices and cost-aware rankings
# ---------------------------------------------------------------------------

def _need_columns(table: pd.DataFrame, cols: Iterable[str], what: str) -> None:
    missing = [c for c in cols if c not in table.columns]
    if missing:
        raise ValueError(f"{what} needs column(s) {', '.join(map(repr, missing))}; columns available: "
                         f"{', '.join(map(str, table.columns))}")


def prices_from_cost_column(table: pd.DataFrame, by: str | Sequence[str] = "benchmark", cost: str = "cost",
                            trials: str = "trials") -> dict:
    """Mean USD per trial per group from a corpus table's cost column.

    The canonical ``cost`` is USD for the whole row (all its ``trials``), so the
    price of a group is ``sum(cost) / sum(trials)`` over its rows with a cost.
    Groups with no costed row are left out.

    Returns
    -------
    dict
        ``{group: USD per trial}`` (tuple keys when ``by`` lists several columns).
    """
    by = [by] if isinstance(by, str) else list(by)
    _need_columns(table, [*by, cost, trials], "prices from the cost column")
    t = table.loc[table[cost].notna(), [*by, cost, trials]]
    if t.empty:
        raise ValueError(f"column {cost!r} has no values; fill it or give prices per benchmark by hand")
    g = t.groupby(by if len(by) > 1 else by[0], observed=True, sort=True)[[cost, trials]].sum()
    return {k: float(v) for k, v in (g[cost] / g[trials]).items()}


def row_costs_from_tokens(table: pd.DataFrame, price_table: Mapping[str, tuple[float, float]],
                          model: str = "model", input_tokens: str = "input_tokens",
                          output_tokens: str = "output_tokens") -> pd.Series:
    """USD per row from token counts and ``{model: (USD per 1M input, USD per 1M output tokens)}``.

    Rows missing a token count are NaN.  Raises if a model has no price.
    """
    _need_columns(table, [model, input_tokens, output_tokens], "costs from tokens")
    models = pd.unique(table[model].dropna())
    missing = sorted(str(m) for m in models if m not in price_table)
    if missing:
        shown = ", ".join(map(repr, missing[:5])) + (" ..." if len(missing) > 5 else "")
        raise ValueError(f"no price for model(s) {shown} ({len(missing)} in all); add them to the price table "
                         "as model: (USD per 1M input tokens, USD per 1M output tokens)")
    # object dtype first: mapping a categorical column would give a categorical, which cannot multiply
    names = table[model].astype(object)
    p_in = names.map(lambda m: float(price_table[m][0])).astype(float)
    p_out = names.map(lambda m: float(price_table[m][1])).astype(float)
    return (table[input_tokens].astype(float) * p_in + table[output_tokens].astype(float) * p_out) / 1e6


def prices_from_tokens(table: pd.DataFrame, price_table: Mapping[str, tuple[float, float]],
                       by: str | Sequence[str] = "benchmark", trials: str = "trials", **columns) -> dict:
    """Mean USD per trial per group from token counts x a price table (see :func:`row_costs_from_tokens`)."""
    t = table.copy()
    t["__cost__"] = row_costs_from_tokens(table, price_table, **columns)
    return prices_from_cost_column(t, by, "__cost__", trials)


@dataclass
class CostRanking:
    """Agents ranked by accuracy and by accuracy per dollar (seed 003 sec. 3, "RPD ranks").

    Attributes
    ----------
    agents
        Agent labels (facet values joined by ``" / "``).
    accuracy
        Mean success: ``sum(successes) / sum(trials)``.
    cost_per_trial
        ``sum(cost) / sum(trials)`` over costed rows (NaN if none).
    accuracy_per_dollar
        ``accuracy / cost_per_trial`` (NaN without a positive cost).
    rank_accuracy, rank_per_dollar
        Ranks, 1 = best, average ranks for ties; NaN where undefined.
    spearman, kendall
        Rank correlations between accuracy and accuracy per dollar over agents with both.
    missing_cost
        Agents without a positive cost (left out of the per-dollar ranking).
    """

    agents: list[str]
    accuracy: np.ndarray
    cost_per_trial: np.ndarray
    accuracy_per_dollar: np.ndarray
    rank_accuracy: np.ndarray
    rank_per_dollar: np.ndarray
    spearman: float
    kendall: float
    missing_cost: list[str]

    def to_dict(self) -> dict:
        return to_jsonable({k: getattr(self, k) for k in (
            "agents", "accuracy", "cost_per_trial", "accuracy_per_dollar", "rank_accuracy", "rank_per_dollar",
            "spearman", "kendall", "missing_cost")})


def accuracy_per_dollar(table: pd.DataFrame, agent: str | Sequence[str] = ("model", "scaffold"), *,
                        successes: str = "successes", trials: str = "trials", cost: str = "cost") -> CostRanking:
    """Rank agents by accuracy and by accuracy per dollar, and correlate the two rankings.

    ``accuracy_per_dollar = mean success / mean cost per trial``.  This is the
    per-agent reading of seed 003's RPD ranks: a design-level ``Erho2`` is
    common to all agents, so ``Erho2 / cost`` would rank agents by cost alone
    (see :func:`reliability_per_dollar` for the design-level RPD).  A zero or
    missing cost leaves the agent out of the per-dollar ranking (listed in
    ``missing_cost``).
    """
    agent = [agent] if isinstance(agent, str) else list(agent)
    _need_columns(table, [*agent, successes, trials], "accuracy per dollar")
    t = table[[*agent, successes, trials]].copy()
    t["__cost__"] = table[cost] if cost in table.columns else np.nan
    t["__ctrials__"] = np.where(t["__cost__"].notna(), t[trials], 0)
    g = t.groupby(agent, observed=True, sort=True).agg(s=(successes, "sum"), n=(trials, "sum"),
                                                      c=("__cost__", "sum"), cn=("__ctrials__", "sum"))
    labels = [" / ".join(map(str, k)) if isinstance(k, tuple) else str(k) for k in g.index]
    acc = (g["s"] / g["n"]).to_numpy(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        cpt = np.where(g["cn"] > 0, g["c"] / g["cn"], np.nan)
        apd = np.where(cpt > 0, acc / cpt, np.nan)
    ok = np.isfinite(apd)
    r_acc = rank_values(acc)
    r_apd = np.full(len(acc), np.nan)
    r_apd[ok] = rank_values(apd[ok])
    sp = spearman_rho(acc[ok], apd[ok]) if ok.sum() >= 2 else float("nan")
    kt = kendall_tau(acc[ok], apd[ok]) if ok.sum() >= 2 else float("nan")
    return CostRanking(labels, acc, cpt, apd, r_acc, r_apd, sp, kt, [lab for lab, o in zip(labels, ok) if not o])


def reliability_per_dollar(coefficient_draws, cost_per_observation: float) -> Summary:
    """Reliability per dollar of a design (seed 003): ``RPD = Erho2 / mean cost per observation``, per draw.

    Parameters
    ----------
    coefficient_draws
        Per-draw ``Erho2`` (or ``Phi``) of the design.
    cost_per_observation
        Mean USD per trial of the design (:meth:`Design.mean_price`), > 0.
    """
    c = float(cost_per_observation)
    if not (math.isfinite(c) and c > 0):
        raise ValueError(f"cost per observation should be a positive number of USD, got {cost_per_observation!r}")
    return summarize(np.asarray(coefficient_draws, dtype=np.float64) / c)
