"""Cost frontiers, the best design within a budget, the cheapest design for a target, and allocation.

Everything is a function of the variance-component draws and a :class:`~.sizes.DStudyDesign`
(which fixes object, claim, replicates, models and prices); the grids of designs come from
:mod:`.grids`, so the app, ``ddr dstudy --budget`` and the DDR sheet search the same designs.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ..posterior_summary import Summary, hdi_sorted, median_sorted, summarize, to_jsonable
from ..reliability import as_components

from .grids import frontier_grids
from .curves import DStudyModel, _check_target, _coef_matrix, _continuous_threshold, _order_stat
from .sizes import DStudyDesign

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


def cost_frontier(components, design: DStudyDesign, n_tasks=None, n_scaffolds=None, n_benchmarks=None,
                  target: float | None = None, prob: float = 0.5, chunk: int = 256,
                  scale: str = "latent") -> CostFrontier:
    """Best reliability at each budget and the cheapest design reaching a target, over a grid of designs.

    Parameters
    ----------
    components
        Variance-component draws.
    design
        Fixes object, claim, replicates, models compared and prices.
    n_tasks, n_scaffolds, n_benchmarks
        Grids (default: :func:`.grids.frontier_grids` of ``design``: 40 log-spaced task
        counts, scaffolds 1..8, benchmarks 1..max(9, design)); facets absent from the
        fit, or in the object, stay at the design's value.
    target, prob
        Target coefficient and assurance.
    scale
        ``"observed"``: the reliability of observed success rates (:mod:`..score_reliability`);
        ``"latent"``: the logit-scale coefficient of Hardy et al. 2026.
    """
    c = as_components(components)
    target = design.default_target if target is None else _check_target(target)
    o = design.object_facets

    def grid(values, f, default):
        if f not in c.facets or f in o:
            return np.array([design.size_of(f)])
        return np.asarray(default if values is None else values, dtype=np.float64)

    default = frontier_grids(design)  # the grids of the app, `ddr dstudy --budget` and the sheet
    gt = grid(n_tasks, "task", default["n_tasks"])
    ga = grid(n_scaffolds, "scaffold", default["n_scaffolds"])
    gb = grid(n_benchmarks, "benchmark", default["n_benchmarks"])
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
        y = np.sort(_coef_matrix(c, o, size_list, design.claim, scale), axis=1)
        med[sl] = median_sorted(y)
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


def allocate_tasks(components, design: DStudyDesign, prices: Mapping[str, float] | None = None, *,
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
    exact when prices are equal).  This holds while every benchmark shares one
    task variance (the pooled model); :func:`.allocation.allocate_budget` also
    weighs per-benchmark task variances and may leave benchmarks out, and is
    what ``ddr dstudy --budget``, the app and the sheet show.

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


