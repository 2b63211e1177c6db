"""Reliability-aware allocation of a budget's tasks across benchmarks (seed 000 (Hardy et al. 2026) sec. 5.4).

For a budget, the number of tasks to run in each benchmark of a battery so that the pooled
coefficient (Erho2 for rankings, Phi for absolute claims) is as high as possible, given each
benchmark's price per trial and its task-indexed variance.

The rule (seed 000 Eq. 7 with unequal tasks per benchmark; :mod:`.curves`)
---------------------------------------------------------------------------
With ``n_b`` tasks in benchmark ``b`` of ``K`` benchmarks run (``n_b >= 1``), the score is the
unweighted mean of the ``K`` benchmark means.  Per posterior draw ``s``,

    s2_err(n) = E0_s(K) + (1 / K^2) sum_b v_b,s / n_b

where ``E0_s(K)`` is the D-study error of every term that does not involve tasks (benchmark by
model ``s2_BM / K``, model by scaffold ``s2_MA / n_a``, ...) and ``v_b,s`` is benchmark ``b``'s
*task-indexed* error of one task: every term with the task facet, plus the residual, weighted by
the D-study rule at one task in one benchmark (for rankings of models, ``s2_IM[B] + s2_e / (n_a
n_r)``; for an absolute claim also ``s2_I[B]`` and ``s2_IA[B] / n_a``).  With all ``v_b`` equal
this is exactly the harmonic-mean rule :class:`~.curves.DStudyModel` uses for
``tasks_per_benchmark`` (tested).  The coefficient is ``s2_o / (s2_o + s2_err)``.

A task in benchmark ``b`` costs ``p_b n_models n_scaffolds n_replicates`` USD.  Spending ``M`` per
model-scaffold-replicate and keeping ``K`` benchmarks, the continuous optimum of ``sum_b v_b /
n_b`` is ``n_b = M sqrt(v_b / p_b) / sum_b' sqrt(v_b' p_b')`` (Lagrange): a benchmark gets more
tasks when its tasks disagree more about the models (larger ``v_b``) and fewer when its trials
cost more.  With ``min_tasks = 0`` a benchmark may also be left out: fewer benchmarks leave more
money for tasks but divide ``s2_BM`` by a smaller ``K`` (Corollary 3.2's trade-off).

Definitions chosen where the paper is loose
-------------------------------------------
* **Criterion.**  The allocation maximises the posterior *median* of the pooled coefficient, the
  criterion of the cost frontier's "best design within a budget" (:mod:`.frontier`).  Integer
  counts come from the continuous optimum of the posterior-mean problem (``v_b`` replaced by its
  posterior mean), rounded down, filled greedily by gain per dollar, then improved by local
  search on the median itself (:func:`_neighbours`: add one task; move one benchmark's count by
  up to :data:`PAIR_WINDOW` while another takes the rest of the money; drop a benchmark when
  allowed) until no move improves it.  This is a local optimum; on small cases it is compared
  with the exact integer optimum found by enumerating every allocation within the budget (tests).
* **Whose variance.**  The pooled model (seed 000 Eq. 6, the ``pooled`` preset) has *one*
  variance per term: ``benchmark:task:model`` and ``benchmark:task:scaffold`` are common to all
  benchmarks, so from a pooled posterior ``v_b`` is the same for every benchmark and the
  allocation is set by price alone (``n_b`` proportional to ``1 / sqrt(p_b)``) and by how many
  benchmarks to keep.  Benchmark-specific components exist only in per-benchmark fits (seed 000
  Eq. 2: "variance components are benchmark-specific"; Table 17).  Pass them as
  ``benchmark_components={benchmark: components}`` (one per-benchmark fit, or a paper's table,
  per benchmark) and ``v_b`` is computed from each benchmark's own task terms, while the signal
  ``s2_o`` and ``E0`` stay the pooled fit's.  Draws of separate fits are independent posteriors
  and are paired by index (each thinned evenly to the smallest number of draws).  The result
  says which source was used (:attr:`BenchmarkAllocation.variance_source`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ..errors import shown
from ..reliability import Summary, VarianceComponents, as_components, design_weights, summarize, to_jsonable
from .sizes import DStudyDesign

__all__ = ["BenchmarkAllocation", "allocate_budget", "allocation_for_summary"]

#: Where the per-benchmark task variances come from (the two cases of the module note).
POOLED_SOURCE = "pooled fit: one task variance for all benchmarks, so prices set the split"
PER_BENCHMARK_SOURCE = "per-benchmark components: each benchmark's own task variance and price set the split"


@dataclass
class BenchmarkAllocation:
    """Tasks per benchmark for a budget (module note).

    Attributes
    ----------
    budget
        USD.
    estimand
        ``"Erho2"`` or ``"Phi"``.
    benchmarks
        The battery, in the order given.
    prices
        USD per trial per benchmark.
    tasks
        ``{benchmark: n_tasks}`` of the reliability-aware allocation (0: left out).
    continuous
        ``{benchmark: n}`` continuous optimum of the posterior-mean problem over the kept benchmarks.
    equal
        ``{benchmark: n}`` the equal allocation the same budget buys (every benchmark the same count).
    price_only
        ``{benchmark: n}`` the price-only split (``n_b`` proportional to ``1/sqrt(p_b)``, every
        benchmark kept), what :func:`~.frontier.allocate_tasks` returns for a budget.
    task_variance
        ``{benchmark: median of v_b}``: the task-indexed error variance of one task (module note).
    variance_source
        :data:`POOLED_SOURCE` or :data:`PER_BENCHMARK_SOURCE`.
    costs
        USD of ``optimal``, ``equal`` and ``price_only``.
    summaries
        Coefficient summary (median, HDIs) of each.
    trials_per_task
        ``n_models x n_scaffolds x n_replicates``: the trials one task costs.
    """

    budget: float
    estimand: str
    benchmarks: list[str]
    prices: dict[str, float]
    tasks: dict[str, int]
    continuous: dict[str, float]
    equal: dict[str, int]
    price_only: dict[str, int]
    task_variance: dict[str, float]
    variance_source: str
    costs: dict[str, float]
    summaries: dict[str, Summary]
    trials_per_task: float

    @property
    def gain(self) -> float:
        """Median coefficient of the allocation minus that of the equal allocation."""
        return self.summaries["optimal"].median - self.summaries["equal"].median

    def to_dict(self) -> dict:
        return to_jsonable({k: getattr(self, k) for k in (
            "budget", "estimand", "benchmarks", "prices", "tasks", "continuous", "equal", "price_only",
            "task_variance", "variance_source", "costs", "summaries", "trials_per_task")} | {"gain": self.gain})


# ---------------------------------------------------------------------------
# The per-draw pieces: s2_o, E0(K), v_b
# ---------------------------------------------------------------------------

def _error(c: VarianceComponents, design: DStudyDesign, sizes: Mapping[str, float]) -> np.ndarray:
    w = design_weights(c, design.object_facets, sizes)
    return c.matrix @ w.error(design.claim) + c.residual * w.residual


def _task_variance(c: VarianceComponents, design: DStudyDesign) -> np.ndarray:
    """``(S,)`` error of one task in one benchmark from the task-indexed terms and the residual."""
    one = {**design.sizes(), "benchmark": 1.0, "task": 1.0}
    return _error(c, design, one) - _error(c, design, {**one, "task": math.inf})


class _Problem:
    """The allocation problem of one budget: draws of ``s2_o``, ``E0(K)`` and ``v_b``."""

    def __init__(self, c, design, names, prices, money, benchmark_components):
        parts = {}
        if benchmark_components:
            missing = [b for b in names if b not in benchmark_components]
            if missing:
                raise ValueError(f"benchmark_components has no components for benchmark(s) "
                                 f"{', '.join(map(repr, missing))}; give one per priced benchmark")
            parts = {b: as_components(benchmark_components[b]) for b in names}
        # independent posteriors are paired by index, each thinned evenly to the fewest draws;
        # a table of one value per term (one draw) is used with every draw
        many = [x.n_draws for x in [c, *parts.values()] if x.n_draws > 1]
        s = min(many) if many else 1
        pooled = c.thin(s) if c.n_draws > 1 else c
        w = design_weights(pooled, design.object_facets, design.sizes())
        self.u = pooled.matrix @ w.universe
        base = design.sizes()
        nb = len(names)
        # E0(K) for K = 1..nb benchmarks kept: the error with infinitely many tasks per benchmark
        self.e0 = np.stack([_error(pooled, design, {**base, "benchmark": float(k), "task": math.inf})
                            for k in range(1, nb + 1)])
        if parts:
            cols = []
            for b in names:
                pc = parts[b]
                if "task" not in pc.facets:
                    raise ValueError(f"components of benchmark {b!r} ({pc.source}) have no task term; the task "
                                     "variance of a benchmark comes from terms such as 'task:model'")
                v = _task_variance(pc.thin(s) if pc.n_draws > 1 else pc, design)
                cols.append(np.broadcast_to(v, (s,)))
            self.v = np.column_stack(cols)
            self.source = PER_BENCHMARK_SOURCE
        else:
            self.v = np.repeat(_task_variance(pooled, design)[:, None], nb, axis=1)
            self.source = POOLED_SOURCE
        self.p = prices
        self.money = money

    def coef(self, n: np.ndarray) -> np.ndarray:
        """``(S,)`` coefficient of the integer allocation ``n`` (0 = benchmark left out)."""
        kept = n > 0
        k = int(kept.sum())
        err = self.e0[k - 1] + (self.v[:, kept] / n[kept]).sum(axis=1) / k**2
        with np.errstate(divide="ignore", invalid="ignore"):
            out = self.u / (self.u + err)
        return np.where(self.u > 0, out, 0.0)

    def value(self, n: np.ndarray) -> float:
        if not (n > 0).any() or np.dot(self.p, n) > self.money * (1 + 1e-12):
            return -np.inf
        return float(np.median(self.coef(n)))

    def values(self, cands: list[np.ndarray]) -> np.ndarray:
        """:meth:`value` of many allocations at once (one matrix product)."""
        n = np.array(cands, dtype=np.float64)  # (C, B)
        kept = n > 0
        k = kept.sum(axis=1)
        ok = (k > 0) & (n @ self.p <= self.money * (1 + 1e-12))
        out = np.full(len(n), -np.inf)
        if not ok.any():
            return out
        n, kept, k = n[ok], kept[ok], k[ok]
        inv = np.where(kept, 1.0 / np.where(kept, n, 1.0), 0.0) / (k**2)[:, None]  # (C, B)
        err = self.e0[k - 1].T + self.v @ inv.T  # (S, C)
        u = self.u[:, None] if np.ndim(self.u) else self.u
        with np.errstate(divide="ignore", invalid="ignore"):
            coef = np.where(u > 0, u / (u + err), 0.0)
        out[ok] = np.median(coef, axis=0)
        return out


def _fill(p: np.ndarray, vbar: np.ndarray, money: float, n: np.ndarray) -> np.ndarray:
    """Add tasks by largest drop of ``sum vbar/n`` per dollar while money is left (kept benchmarks only)."""
    n = n.copy()
    kept = n > 0
    while True:
        left = money - np.dot(p, n)
        ok = kept & (p <= left * (1 + 1e-12))
        if not ok.any():
            return n
        gain = np.where(ok, vbar / np.maximum(n, 1) - vbar / (n + 1), -np.inf) / p
        n[int(np.argmax(gain))] += 1


#: Half-width of the pair search: how far one benchmark's count moves while another absorbs the money.
PAIR_WINDOW = 8


def _neighbours(prob: _Problem, n: np.ndarray, lo: int, vbar: np.ndarray) -> list[np.ndarray]:
    """Allocations one move away: one more task anywhere; for every pair (i, j), ``n_i`` moved by up to
    :data:`PAIR_WINDOW` with ``j`` taking every task the rest of the money buys (and the change left
    over filled greedily); ``n_i`` moved likewise with the other kept benchmarks re-split by the
    continuous rule; with ``lo = 0``, a benchmark left out and its money spent elsewhere."""
    p, money, nb = prob.p, prob.money, len(n)
    out = []
    for i in range(nb):
        up = n.copy()
        up[i] += 1
        out.append(up)
        window = range(max(lo, int(n[i]) - PAIR_WINDOW), int(n[i]) + PAIR_WINDOW + 1)
        for j in range(nb):
            if j == i:
                continue
            rest = money - np.dot(p, n) + p[i] * n[i] + p[j] * n[j]  # money for benchmarks i and j
            for ni in window:
                if ni == n[i] or p[i] * ni > rest * (1 + 1e-12):
                    continue
                nj = math.floor((rest - p[i] * ni) / p[j] * (1 + 1e-12))
                if nj < lo or nj == n[j]:
                    continue
                m = n.copy()
                m[i], m[j] = ni, nj
                out.append(_fill(p, vbar, money, m))
        for ni in window:
            # n_i fixed at ni, the other kept benchmarks re-split by the continuous rule, then filled
            keep = (n > 0) & (np.arange(nb) != i)
            left = money - p[i] * ni
            if ni != n[i] and keep.any() and left > 0:
                share = np.sqrt(vbar[keep] / p[keep]) / np.sum(np.sqrt(vbar[keep] * p[keep]))
                m = n.copy()
                m[i] = ni
                m[keep] = np.maximum(max(lo, 1), np.floor(left * share))
                if np.dot(p, m) <= money * (1 + 1e-12):
                    out.append(_fill(p, vbar, money, m))
        if lo == 0 and n[i] > 0:  # leave benchmark i out and spend its money elsewhere
            drop = n.copy()
            drop[i] = 0
            if (drop > 0).any():
                out.append(_fill(p, vbar, money, drop))
    return out


def _local_search(prob: _Problem, n: np.ndarray, lo: int) -> np.ndarray:
    """Improve the median coefficient by the moves of :func:`_neighbours` until none helps (module note)."""
    vbar = prob.v.mean(axis=0)
    best = prob.value(n)
    while True:
        cands = _neighbours(prob, n, lo, vbar)
        vals = prob.values(cands)
        k = int(np.argmax(vals))
        if vals[k] <= best + 1e-12:
            return n
        n, best = cands[k], float(vals[k])


def allocate_budget(components, design: DStudyDesign, budget: float, prices: Mapping[str, float] | None = None, *,
                    benchmark_components: Mapping[str, object] | None = None,
                    min_tasks: int = 1) -> BenchmarkAllocation:
    """Tasks per benchmark that maximise the pooled coefficient within a budget (module note).

    Parameters
    ----------
    components
        Variance-component draws of a pooled fit (terms with the benchmark facet, seed 000 Eq. 6).
    design
        Fixes object, claim, ``n_models``, ``n_scaffolds``, ``n_replicates``; prices default to its
        ``price_per_trial`` mapping.
    budget
        USD to spend.
    prices
        ``{benchmark: USD per trial}`` (> 0): the battery to allocate over.
    benchmark_components
        Optional ``{benchmark: components}`` of per-benchmark fits (module note, "Whose variance").
    min_tasks
        Fewest tasks per benchmark: 1 keeps every benchmark of the battery; 0 lets the allocation
        leave a benchmark out.

    Raises
    ------
    ValueError
        A fit without the benchmark facet, fewer than two priced benchmarks, a price that is not a
        positive number, a budget that buys no task (or not ``min_tasks`` in every benchmark).
    """
    c = as_components(components)
    if "benchmark" not in c.facets:
        raise ValueError(f"{c.source}: the fit has no benchmark term; allocating tasks across benchmarks needs a "
                         "pooled fit (preset 'pooled')")
    prices = dict(prices if prices is not None else
                  (design.price_per_trial if isinstance(design.price_per_trial, Mapping) else {}))
    if len(prices) < 2:
        raise ValueError("allocation across benchmarks needs prices for at least two benchmarks "
                         "(prices={benchmark: USD per trial})")
    names = list(prices)
    p = np.array([float(prices[b]) if isinstance(prices[b], (int, float, np.integer, np.floating)) else np.nan
                  for b in names])
    bad = ~(np.isfinite(p) & (p > 0))
    if bad.any():
        b = names[int(np.flatnonzero(bad)[0])]
        raise ValueError(f"price per trial of benchmark {b!r} should be a positive number of USD, got "
                         f"{shown(prices[b])}")
    if min_tasks not in (0, 1):
        raise ValueError(f"min_tasks should be 0 (a benchmark may be left out) or 1, got {shown(min_tasks)}")
    if not (isinstance(budget, (int, float, np.integer, np.floating)) and math.isfinite(budget) and budget > 0):
        raise ValueError(f"budget should be a positive number of USD, got {shown(budget)}")
    per_task = float(design.n_models) * float(design.n_scaffolds) * float(design.n_replicates)
    money = float(budget) / per_task
    need = p.sum() if min_tasks else p.min()
    if money < need * (1 - 1e-12):
        raise ValueError(f"a budget of {float(budget):.2f} USD cannot buy {'one task per benchmark' if min_tasks else 'a task'} "
                         f"({need * per_task:.2f} USD at {shown(design.n_models)} models x {shown(design.n_scaffolds)} scaffolds x "
                         f"{shown(design.n_replicates)} replicates); raise it")
    prob = _Problem(c, design, names, p, money, benchmark_components)
    vbar = prob.v.mean(axis=0)
    start, best = None, -np.inf
    # start from the continuous optimum of each "keep the K best benchmarks" (by sqrt(v p), the
    # Lagrange order), rounded down and filled; K = every benchmark when none may be left out
    order = np.argsort(np.sqrt(vbar * p))
    for k in (range(1, len(names) + 1) if min_tasks == 0 else [len(names)]):
        keep = np.zeros(len(names), bool)
        keep[order[:k]] = True
        if p[keep].sum() > money * (1 + 1e-12):
            continue
        cont = np.where(keep, money * np.sqrt(vbar / p) / np.sum(np.sqrt(vbar[keep] * p[keep])), 0.0)
        n = np.where(keep, np.maximum(1.0, np.floor(cont)), 0.0)
        while np.dot(p, n) > money * (1 + 1e-12):  # forcing 1 may overspend: take from the largest
            n[int(np.argmax(np.where(n > 1, n * p, -np.inf)))] -= 1
        n = _fill(p, vbar, money, n)
        val = prob.value(n)
        if val > best:
            start, best = n, val
    opt = _local_search(prob, start, min_tasks)
    kept = opt > 0  # the continuous optimum over the benchmarks the allocation keeps
    cont_best = np.where(kept, money * np.sqrt(vbar / p) / np.sum(np.sqrt(vbar[kept] * p[kept])), 0.0)
    n_eq = math.floor(money / p.sum() * (1 + 1e-12))
    allocs = {"optimal": opt}
    if n_eq >= 1:
        allocs["equal"] = np.full(len(names), float(n_eq))
    sq = np.sqrt(p)
    price_only = np.maximum(1.0, np.floor(money / (sq * sq.sum())))
    while np.dot(p, price_only) > money * (1 + 1e-12):
        price_only[int(np.argmax(np.where(price_only > 1, price_only * p, -np.inf)))] -= 1
    allocs["price_only"] = _fill(p, np.ones(len(names)), money, price_only)
    costs = {key: float(np.dot(p, n) * per_task) for key, n in allocs.items()}
    summaries = {key: summarize(prob.coef(n)) for key, n in allocs.items()}
    as_int = (lambda n: {b: int(x) for b, x in zip(names, n)})
    return BenchmarkAllocation(
        float(budget), design.estimand, names, {b: float(x) for b, x in zip(names, p)}, as_int(opt),
        {b: float(x) for b, x in zip(names, cont_best)}, as_int(allocs["equal"]) if "equal" in allocs else {},
        as_int(allocs["price_only"]), {b: float(np.median(prob.v[:, i])) for i, b in enumerate(names)},
        prob.source, costs, summaries, per_task)


def allocation_for_summary(components, design: DStudyDesign, budget: float | None) -> tuple[dict | None, str | None]:
    """The allocation ``ddr dstudy --budget``, the app and the sheet show, or why there is none.

    Returns
    -------
    (dict or None, str or None)
        :meth:`BenchmarkAllocation.to_dict` of :func:`allocate_budget` at the design's prices per
        benchmark, or None and the reason in words (no budget, one benchmark, no benchmark term, fewer than two
        priced benchmarks, a budget too small).
    """
    if budget is None:
        return None, "no budget"
    c = as_components(components)
    prices = design.price_per_trial
    one = design.effective_n_benchmarks <= 1 and not (isinstance(prices, Mapping) and len(prices) >= 2)
    if "benchmark" not in c.facets and one:
        # a one-benchmark corpus: the real reason, not the pooled preset it could not fit anyway
        return None, "the design has one benchmark: there are no benchmarks to spread the budget's tasks across"
    if "benchmark" not in c.facets:
        return None, "the fit has no benchmark term (allocation across benchmarks needs the pooled preset)"
    if not isinstance(prices, Mapping) or len(prices) < 2:
        return None, "needs a price per trial for each of at least two benchmarks"
    if any(not float(v) > 0 for v in prices.values()):
        return None, "a benchmark has no price per trial"
    try:
        return allocate_budget(c, design, budget, prices).to_dict(), None
    except ValueError as err:
        return None, str(err)
