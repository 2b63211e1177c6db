"""D-study curves, budget and cost frontiers, allocation and cost-aware rankings."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from ddr_explorer.core import dstudy as ds
from ddr_explorer.core import reliability as rel
from ddr_explorer.core.dstudy import DStudyDesign, DStudyModel
from ddr_explorer.core.reliability import VarianceComponents

E = math.pi**2 / 3
TABLE8_SD = {"model": .78, "benchmark:model": .52, "model:scaffold": .36, "benchmark:model:scaffold": .55,
             "benchmark:task:model": .88}
POOLED = {"model": 0.6, "benchmark:model": 0.27, "model:scaffold": 0.13, "benchmark:model:scaffold": 0.30,
          "benchmark:task:model": 0.77, "benchmark": 6.0, "benchmark:task": 5.8, "scaffold": 0.62,
          "benchmark:scaffold": 0.48, "benchmark:task:scaffold": 1.06}


def posterior(s=400, seed=0, spread=0.4):
    rng = np.random.default_rng(seed)
    return VarianceComponents.from_mapping({t: v * np.exp(rng.normal(0, spread, s)) for t, v in POOLED.items()})


# ---------------------------------------------------------------------------
# DStudyDesign and cost
# ---------------------------------------------------------------------------

def test_design_trials_and_cost_by_hand():
    d = DStudyDesign(n_tasks=14, n_scaffolds=2, n_benchmarks=9, n_replicates=3, price_per_trial=0.5, n_models=10)
    # 10 models x 2 scaffolds x (9 x 14) tasks x 3 replicates = 7560 trials ; x 0.5 USD = 3780 USD
    assert d.trial_count() == 7560
    assert d.cost() == pytest.approx(3780.0)
    assert d.sizes() == {"task": 14.0, "scaffold": 2.0, "benchmark": 9.0, "replicate": 3.0}


def test_design_unequal_allocation_cost_and_harmonic_mean():
    d = DStudyDesign(n_models=2, price_per_trial={"a": 1.0, "b": 2.0}, tasks_per_benchmark={"a": 10, "b": 40})
    # trials = 2 x 1 x (10 + 40) = 100 ; cost = 2 x (10 x 1 + 40 x 2) = 180
    assert d.trial_count() == 100
    assert d.cost() == pytest.approx(180.0)
    # harmonic mean of 10 and 40: 2 / (1/10 + 1/40) = 16
    assert d.effective_n_tasks == pytest.approx(16.0)
    assert d.effective_n_benchmarks == 2


def test_design_mean_price_with_price_table():
    d = DStudyDesign(n_tasks=10, n_benchmarks=4, n_models=1, price_per_trial={"a": 1.0, "b": 3.0})
    # benchmarks are exchangeable: every benchmark charged the mean price 2 -> 40 trials x 2
    assert d.cost() == pytest.approx(80.0)


@pytest.mark.parametrize("kw, match", [
    ({"n_tasks": 0}, "n_tasks should be a number >= 1"),
    ({"n_models": 0}, "n_models should be a whole number"),
    ({"claim": "rank"}, "claim should be"),
    ({"price_per_trial": -1.0}, "should be a number >= 0"),
    ({"price_per_trial": {}}, "empty mapping"),
    ({"tasks_per_benchmark": {"a": 0}}, "needs at least 1 task"),
    ({"tasks_per_benchmark": {"a": 5}, "price_per_trial": {"b": 1.0}}, "no price for benchmark"),
    ({"extra_facets": {"task": 5}}, "set n_tasks"),
])
def test_bad_design(kw, match):
    with pytest.raises(ValueError, match=match):
        DStudyDesign(**kw)


def test_design_to_dict_is_json():
    d = DStudyDesign(n_tasks=14, n_benchmarks=9, price_per_trial={"a": 0.1}, object_of_measurement="system")
    out = json.loads(json.dumps(d.to_dict()))
    assert out["object_of_measurement"] == "model:scaffold"
    assert out["trials"] == 2 * 14 * 9


# ---------------------------------------------------------------------------
# Curves
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("over, facet", [("n_tasks", "task"), ("n_scaffolds", "scaffold"),
                                         ("n_benchmarks", "benchmark"), ("n_replicates", "replicate")])
@pytest.mark.parametrize("claim", ["relative", "absolute"])
def test_curve_matches_per_draw_evaluation(over, facet, claim):
    c = posterior()
    d = DStudyDesign(n_tasks=14, n_scaffolds=2, n_benchmarks=5, claim=claim)
    grid = np.array([1.0, 2, 3, 7, 20, 100])
    cur = ds.d_study_curve(c, d, over, grid, band_draws=None)
    for k, n in enumerate(grid):
        y = rel.generalizability(c, "model", d.sizes() | {facet: n}, claim)
        assert cur.median[k] == pytest.approx(float(np.median(y)), rel=1e-12)
        lo, hi = rel.hdi(y, 0.95)
        assert_allclose(cur.hdi95[k], [lo, hi], rtol=1e-12)
        lo, hi = rel.hdi(y, 0.68)
        assert_allclose(cur.hdi68[k], [lo, hi], rtol=1e-12)
        assert cur.p_target[k] == pytest.approx(float(np.mean(y >= d.default_target)))
    limit = rel.generalizability(c, "model", d.sizes() | {facet: np.inf}, claim)
    assert cur.asymptote.median == pytest.approx(float(np.median(limit)), rel=1e-12)
    assert cur.observed_x == d.sizes()[facet]
    assert cur.detection_band == pytest.approx((2 / 3, 3 / 4))
    assert cur.estimand == ("Phi" if claim == "absolute" else "Erho2")
    # non-decreasing medians (Prop. 3.1)
    assert (np.diff(cur.median) >= -1e-12).all()


def test_curve_snr_and_band_draws():
    c = posterior(s=3000)
    d = DStudyDesign(n_tasks=14, n_benchmarks=9)
    cur = ds.d_study_curve(c, d, "n_tasks", [5.0, 50.0], estimand="SNR", band_draws=None)
    y = rel.signal_to_noise(c, "model", d.sizes() | {"task": 50})
    assert cur.median[1] == pytest.approx(float(np.median(y)), rel=1e-12)
    assert cur.detection_band == (2.0, 3.0)
    thin = ds.d_study_curve(c, d, "n_tasks", [5.0, 50.0], estimand="SNR")
    assert thin.band_draws == ds.DEFAULT_BAND_DRAWS
    # thinned bands stay close to the full ones
    assert thin.median[1] == pytest.approx(cur.median[1], rel=0.05)


def test_curve_flat_when_facet_absent_or_in_object():
    per = {"model": 1.0, "task:model": 2.0, "model:scaffold": 0.5}
    cur = ds.d_study_curve(per, DStudyDesign(n_tasks=10), "n_benchmarks", [1.0, 5.0, 50.0])
    assert not cur.applies
    assert_allclose(cur.median, cur.median[0])
    sys_curve = ds.d_study_curve(posterior(), DStudyDesign(object_of_measurement="system"), "n_scaffolds", [1.0, 9.0])
    assert not sys_curve.applies
    assert sys_curve.median[0] == pytest.approx(sys_curve.median[1])


def test_curve_bad_input():
    with pytest.raises(ValueError, match="grid should be"):
        ds.d_study_curve(posterior(), DStudyDesign(), "n_tasks", [0.0, 1.0])
    with pytest.raises(ValueError, match="target should be"):
        ds.d_study_curve(posterior(), DStudyDesign(), "n_tasks", target=1.2)
    with pytest.raises(ValueError, match="cannot vary"):
        ds.d_study_curve(posterior(), DStudyDesign(), "n_things")


def test_default_grids_are_the_apps_curve_grids():
    g = ds.default_grid("n_tasks", 14)
    assert g[0] == 1 and g[-1] == 2000 and g.size == 79  # 100 log-spaced points, 79 whole numbers once rounded
    assert (np.diff(g) > 0).all()
    assert_allclose(g, ds.curve_grid("n_tasks", [14]))
    assert_allclose(ds.default_grid("n_scaffolds", 3), np.arange(1, 21))  # the slider's range
    assert ds.default_grid("n_benchmarks", 30)[-1] == 30
    assert ds.default_grid("n_benchmarks", 45)[-1] == 45  # reaches the observed size
    assert_allclose(ds.default_grid("step", 7), np.arange(1, 15))  # a facet without a slider: 1..2 x observed
    view = ds.DStudyModel(posterior()).view(DStudyDesign(n_tasks=14))
    assert_allclose(view.curves["n_tasks"].grid, ds.curve_grid("n_tasks", [14]))


def test_view_is_consistent_and_json():
    c = posterior(s=2000)
    d = DStudyDesign(n_tasks=14, n_scaffolds=2, n_benchmarks=9, price_per_trial=0.25, n_models=20)
    v = DStudyModel(c).view(d)
    r = v.readouts
    y = rel.generalizability(c, "model", d.sizes())
    assert r.coefficient.median == pytest.approx(float(np.median(y)), rel=1e-12)
    assert r.erho2 == r.coefficient
    assert r.phi.median == pytest.approx(float(np.median(rel.dependability(c, "model", d.sizes()))), rel=1e-12)
    assert r.snr.median == pytest.approx(float(np.median(rel.signal_to_noise(c, "model", d.sizes()))), rel=1e-9)
    assert r.ceiling.median == pytest.approx(float(np.median(rel.task_only_ceiling(c, "model", d.sizes()))))
    assert r.p_target_met == pytest.approx(float(np.mean(y >= 0.85)))
    assert r.rpd.median == pytest.approx(r.coefficient.median / 0.25)
    assert r.cost == pytest.approx(20 * 2 * 126 * 0.25)
    # the curves share the readouts' numbers at the observed design
    for cur in v.curves.values():
        assert cur.observed == r.coefficient
    assert v.curves["n_tasks"].asymptote == r.ceiling
    json.dumps(v.to_dict())


def test_view_absolute_claim_readouts():
    c = posterior(s=500)
    d = DStudyDesign(n_tasks=30, n_benchmarks=4, claim="absolute")
    r = DStudyModel(c).readouts(d)
    assert r.estimand == "Phi" and r.target == 0.90
    assert r.coefficient == r.phi
    assert r.erho2.median == pytest.approx(float(np.median(rel.generalizability(c, "model", d.sizes()))))
    assert r.rpd is None


# ---------------------------------------------------------------------------
# Budget frontier: closed form against brute force
# ---------------------------------------------------------------------------

def _brute_required(c, d, facet, target, claim, n_max=3000):
    out = np.full(c.n_draws, np.inf)
    for n in range(1, n_max + 1):
        ok = rel.generalizability(c, d.object_of_measurement, d.sizes() | {facet: n}, claim) >= target
        out = np.where(np.isinf(out) & ok, n, out)
    return out


@pytest.mark.parametrize("over, facet", [("n_tasks", "task"), ("n_scaffolds", "scaffold"),
                                         ("n_benchmarks", "benchmark")])
@pytest.mark.parametrize("target", [0.5, 0.7, 0.85])
def test_required_n_closed_form_equals_brute_force(over, facet, target):
    c = posterior(s=60, seed=3, spread=0.8)
    d = DStudyDesign(n_tasks=20, n_scaffolds=2, n_benchmarks=6)
    req = ds.required_n(c, d, over, target)
    brute = _brute_required(c, d, facet, target, "relative")
    # brute force only searches to 3000: anything beyond is inf there
    closed = np.where(req.draws > 3000, np.inf, req.draws)
    assert_allclose(closed, brute)
    assert req.p_reachable == pytest.approx(float(np.mean(np.isfinite(req.draws))))
    ceiling = rel.generalizability(c, "model", d.sizes() | {facet: np.inf})
    assert_allclose(np.isfinite(req.draws), ceiling >= target)
    # P(target met at n) is the CDF of the required n
    for n in (1, 5, 50):
        y = rel.generalizability(c, "model", d.sizes() | {facet: n})
        assert req.cdf([n])[0] == pytest.approx(float(np.mean(y >= target)))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.05, 0.95), st.sampled_from(["relative", "absolute"]),
       st.sampled_from(["model", "system"]))
def test_required_n_property(seed, target, claim, obj):
    c = posterior(s=20, seed=seed, spread=1.0)
    d = DStudyDesign(n_tasks=10, n_scaffolds=2, n_benchmarks=3, claim=claim, object_of_measurement=obj)
    req = ds.required_n(c, d, "n_tasks", target)
    fin = np.isfinite(req.draws)
    # at n*: met ; at n* - 1 (if >= 1): not met
    for k in np.flatnonzero(fin):
        one = VarianceComponents({t: v[k:k + 1] for t, v in c.draws.items()}, c.residual[k:k + 1])
        n = req.draws[k]
        assert rel.generalizability(one, obj, d.sizes() | {"task": n}, claim)[0] >= target
        if n > 1:
            assert rel.generalizability(one, obj, d.sizes() | {"task": n - 1}, claim)[0] < target


def test_required_n_quantiles_and_assurance():
    c = posterior(s=1000, seed=5)
    d = DStudyDesign(n_tasks=10, n_benchmarks=9)
    req = ds.required_n(c, d, "n_tasks", 0.6)
    s = np.sort(req.draws)
    # the median is the smallest n with P(n* <= n) >= 0.5
    n50 = req.median
    assert req.cdf([n50])[0] >= 0.5
    assert n50 == 1 or req.cdf([n50 - 1])[0] < 0.5
    assert req.n_for_assurance(0.84) == req.quantiles[0.84] >= n50
    assert s[0] == req.draws.min()
    json.dumps(req.to_dict())


def test_p_target_met_matches_mean():
    c = posterior(s=500)
    d = DStudyDesign(n_tasks=40, n_benchmarks=5)
    y = rel.generalizability(c, "model", d.sizes())
    assert ds.p_target_met(c, d, 0.7) == pytest.approx(float(np.mean(y >= 0.7)))


# ---------------------------------------------------------------------------
# Fixed budget breadth (Corollary 3.2) with Table 8
# ---------------------------------------------------------------------------

def test_table8_fixed_budget_breadth():
    """N = 126 tasks at n_a = 1: Erho2 0.4530 in one benchmark, 0.7296 over nine (see test_reliability)."""
    c = VarianceComponents.from_mapping(TABLE8_SD, scale="sd", source="seed 000 Table 8")
    b = ds.fixed_budget_breadth(c, 126, DStudyDesign(n_scaffolds=1), n_benchmarks=[1, 2, 3, 6, 7, 9, 14, 18, 21, 63, 126])
    assert round(float(b.median[0]), 4) == 0.4530
    assert round(float(b.median[5]), 4) == 0.7296
    assert b.tasks_per_benchmark[5] == 14
    assert (np.diff(b.median) > 0).all()  # s2_BM + s2_BMA > 0: breadth always helps
    json.dumps(b.to_dict())


def test_breadth_bad_grid():
    with pytest.raises(ValueError, match="between 1 and total_tasks"):
        ds.fixed_budget_breadth(posterior(), 10, n_benchmarks=[20])


# ---------------------------------------------------------------------------
# Cost frontier
# ---------------------------------------------------------------------------

def test_cost_frontier_pareto_and_cheapest():
    c = posterior(s=300)
    d = DStudyDesign(n_tasks=14, n_benchmarks=9, price_per_trial=0.5, n_models=10)
    f = ds.cost_frontier(c, d, n_tasks=[5, 10, 20, 50, 100], n_scaffolds=[1, 2, 4], n_benchmarks=[1, 3, 9],
                         target=0.7)
    assert f.cost.size == 5 * 3 * 3
    assert_allclose(f.cost, 10 * f.n_tasks * f.n_scaffolds * f.n_benchmarks * 0.5)
    # brute force: each design's median
    for k in range(f.cost.size):
        y = rel.generalizability(c, "model", {"task": f.n_tasks[k], "scaffold": f.n_scaffolds[k],
                                               "benchmark": f.n_benchmarks[k]})
        assert f.median[k] == pytest.approx(float(np.median(y)), rel=1e-12)
        assert f.p_target[k] == pytest.approx(float(np.mean(y >= 0.7)))
    par = f.pareto
    assert (np.diff(f.cost[par]) >= 0).all() and (np.diff(f.median[par]) > 0).all()
    for k in range(f.cost.size):  # nothing beats the front at its cost
        best = f.best_at_budget(f.cost[k])
        assert f.median[best] >= f.median[k]
    ok = np.flatnonzero(f.p_target >= 0.5)
    assert f.cheapest in ok and f.cost[f.cheapest] == f.cost[ok].min()
    assert f.best_at_budget(0.1) is None
    json.dumps(f.to_dict())


# ---------------------------------------------------------------------------
# Allocation across benchmarks
# ---------------------------------------------------------------------------

def test_unequal_allocation_formula_by_hand():
    # s2_M = 1, s2_BM = 0.5, s2_IM[B] = 2, e = 3, n_a = 1; tasks 10 and 40 in two benchmarks:
    # error = 0.5/2 + (1/2^2) (2 + 3)(1/10 + 1/40) = 0.25 + 0.25 x 5 x 0.125 = 0.25 + 0.15625 = 0.40625
    c = VarianceComponents.from_mapping({"model": 1.0, "benchmark:model": 0.5, "benchmark:task:model": 2.0},
                                        residual=3.0)
    d = DStudyDesign(tasks_per_benchmark={"a": 10, "b": 40}, price_per_trial={"a": 1.0, "b": 1.0})
    assert_allclose(DStudyModel(c).coefficient(d), [1 / 1.40625])


def test_allocation_equal_prices_is_equal():
    c = posterior(s=200)
    d = DStudyDesign(n_models=5, price_per_trial={"a": 0.2, "b": 0.2, "c": 0.2})
    a = ds.allocate_tasks(c, d, budget=5 * 0.2 * 30)  # 30 tasks in all
    assert a.optimal == {"a": 10, "b": 10, "c": 10} == a.equal
    assert a.saving_pct == pytest.approx(0.0)


def _brute_best_q(p, money, n_max=40):
    best = np.inf
    for n in itertools.product(range(1, n_max + 1), repeat=len(p)):
        if np.dot(p, n) <= money + 1e-9:
            best = min(best, sum(1.0 / x for x in n))
    return best


def test_allocation_budget_near_brute_force():
    c = posterior(s=200)
    prices = {"a": 0.1, "b": 0.4, "c": 1.6}
    d = DStudyDesign(n_models=1, price_per_trial=prices)
    budget = 12.0
    a = ds.allocate_tasks(c, d, budget=budget)
    n = np.array([a.optimal[b] for b in prices], dtype=float)
    p = np.array(list(prices.values()))
    assert np.dot(n, p) <= budget + 1e-9
    q = np.sum(1 / n)
    q_best = _brute_best_q(p, budget)
    assert q <= q_best * 1.02  # greedy marginal allocation: within 2% of the integer optimum here
    # continuous optimum n_b proportional to 1/sqrt(price): 4 : 2 : 1
    cont = np.array([a.continuous[b] for b in prices])
    assert_allclose(cont / cont[-1], [4, 2, 1])
    assert a.costs["optimal"] <= budget + 1e-9
    assert a.summaries["optimal"].median >= a.summaries["equal"].median
    assert a.saving_pct >= 0
    json.dumps(a.to_dict())


def test_allocation_target_mode():
    c = posterior(s=400)
    prices = {"a": 0.05, "b": 0.5, "c": 2.0, "d": 5.0}
    d = DStudyDesign(n_models=10, price_per_trial=prices)
    a = ds.allocate_tasks(c, d, target=0.6, reference={"a": 200, "b": 200, "c": 200, "d": 200})
    assert a.feasible
    assert a.p_target["optimal"] >= 0.5 and a.p_target["equal"] >= 0.5
    assert a.costs["optimal"] <= a.costs["equal"]
    assert a.saving_pct == pytest.approx(100 * (1 - a.costs["optimal"] / a.costs["equal"]))
    assert a.saving_vs_reference_pct > a.saving_pct
    # the equal allocation is the smallest equal n that meets the target
    n_eq = a.equal["a"]
    smaller = DStudyDesign(n_models=10, price_per_trial=prices, tasks_per_benchmark=dict.fromkeys(prices, n_eq - 1))
    if n_eq > 1:
        assert DStudyModel(c).p_target_met(smaller, 0.6) < 0.5
    # cheaper benchmarks get more tasks
    assert a.optimal["a"] >= a.optimal["b"] >= a.optimal["c"] >= a.optimal["d"]


def test_allocation_unreachable_target():
    c = VarianceComponents.from_mapping({"model": 0.1, "benchmark:model": 5.0, "benchmark:task:model": 1.0})
    a = ds.allocate_tasks(c, DStudyDesign(price_per_trial={"a": 1.0, "b": 1.0}), target=0.9)
    assert not a.feasible and a.saving_pct is None
    json.dumps(a.to_dict())


@pytest.mark.parametrize("kw, match", [
    ({}, "exactly one of budget"),
    ({"budget": 1.0, "target": 0.8}, "exactly one of budget"),
    ({"budget": 0.01}, "cannot buy one task per benchmark"),
    ({"budget": 100.0, "prices": {"a": 0.0}}, "should be > 0"),
])
def test_allocation_bad_input(kw, match):
    d = DStudyDesign(price_per_trial={"a": 1.0, "b": 2.0})
    with pytest.raises(ValueError, match=match):
        ds.allocate_tasks(posterior(s=50), d, **kw)


# ---------------------------------------------------------------------------
# Prices and cost-aware rankings
# ---------------------------------------------------------------------------

def corpus_table():
    return pd.DataFrame({
        "benchmark": ["b1", "b1", "b2", "b2", "b2", "b1"],
        "task": ["t1", "t2", "t1", "t2", "t3", "t3"],
        "model": ["m1", "m2", "m1", "m2", "m1", "m2"],
        "scaffold": ["s", "s", "s", "s", "s", "s"],
        "successes": [1, 0, 2, 1, 0, 1],
        "trials": [1, 1, 2, 2, 1, 1],
        "cost": [0.10, 0.30, 0.40, np.nan, 0.20, 0.50],
        "input_tokens": [1000, 2000, 4000, 1000, 2000, 3000],
        "output_tokens": [100, 200, 400, 100, 200, 300],
    })


def test_prices_from_cost_column():
    p = ds.prices_from_cost_column(corpus_table())
    # b1: (0.10 + 0.30 + 0.50) / 3 trials = 0.30 ; b2: (0.40 + 0.20) / 3 costed trials = 0.20
    assert p == pytest.approx({"b1": 0.30, "b2": 0.20})
    with pytest.raises(ValueError, match="needs column"):
        ds.prices_from_cost_column(corpus_table().drop(columns="cost"))


def test_prices_from_tokens():
    prices = {"m1": (1.0, 10.0), "m2": (2.0, 20.0)}
    p = ds.prices_from_tokens(corpus_table(), prices)
    # row USD = (in x p_in + out x p_out)/1e6: m1 rows 0.002, 0.008, 0.004 ; m2 rows 0.008, 0.004, 0.012
    # b1 rows 0 (m1), 1 (m2), 5 (m2): (0.002 + 0.008 + 0.012) / 3 ; b2 rows 2, 3, 4: (0.008 + 0.004 + 0.004) / 5
    assert p["b1"] == pytest.approx(0.022 / 3)
    assert p["b2"] == pytest.approx(0.016 / 5)
    with pytest.raises(ValueError, match="no price for model"):
        ds.prices_from_tokens(corpus_table(), {"m1": (1.0, 1.0)})


def test_accuracy_per_dollar_by_hand():
    t = pd.DataFrame({"model": ["a", "a", "b", "c", "d"], "scaffold": ["x"] * 5,
                      "successes": [8, 0, 7, 4, 5], "trials": [10, 0, 10, 10, 10],
                      "cost": [2.0, np.nan, 1.0, 0.2, np.nan]})
    r = ds.accuracy_per_dollar(t)
    # accuracy: a .8, b .7, c .4, d .5 ; cost per trial: a .2, b .1, c .02, d none
    # per dollar: a 4, b 7, c 20 ; ranks by accuracy 1,2,4,3 ; by per dollar 3,2,1 ; d missing cost
    assert r.agents == ["a / x", "b / x", "c / x", "d / x"]
    assert_allclose(r.accuracy, [0.8, 0.7, 0.4, 0.5])
    assert_allclose(r.accuracy_per_dollar[:3], [4.0, 7.0, 20.0])
    assert_allclose(r.rank_accuracy, [1, 2, 4, 3])
    assert_allclose(r.rank_per_dollar[:3], [3, 2, 1])
    assert r.missing_cost == ["d / x"]
    # over a, b, c the two orders are reversed
    assert r.spearman == pytest.approx(-1.0) and r.kendall == pytest.approx(-1.0)
    json.dumps(r.to_dict())


def test_reliability_per_dollar():
    s = ds.reliability_per_dollar(np.array([0.5, 0.6, 0.7]), 0.1)
    assert s.median == pytest.approx(6.0)
    with pytest.raises(ValueError, match="positive number of USD"):
        ds.reliability_per_dollar([0.5], 0.0)
