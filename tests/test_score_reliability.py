"""Reliability of observed success rates (core/score_reliability.py, core/split_half.py).

Known answers: the exact moments against adaptive quadrature, the coefficient against simulated pairs of
evaluations (per-benchmark, pooled with held facets, systems), limits, and the split-half check on corpora
simulated from known components.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import integrate

from ddr_explorer.core.dstudy import DStudyDesign, DStudyModel, cost_frontier
from ddr_explorer.core.dstudy.curves import score_scale
from ddr_explorer.core.dstudy.summary import dstudy_summary, format_dstudy
from ddr_explorer.core.reliability import VarianceComponents, generalizability
from ddr_explorer.core.score_reliability import (_pair_moment, intercept_for_success_rate, score_coef_matrix,
                                                 score_moments, score_reliability, simulated_score_reliability)
from ddr_explorer.core.split_half import split_half_check, split_half_statistic

# The simulated leaderboard: sigma_model 1.5, sigma_task 2, sigma_task:model 0.8, one trial per cell.
SIM = {"model": 1.5 ** 2, "task": 2.0 ** 2, "task:model": 0.8 ** 2}

POOLED = {"benchmark": 0.5, "benchmark:task": 3.0, "model": 1.2, "scaffold": 0.3, "benchmark:model": 0.4,
          "model:scaffold": 0.2, "benchmark:task:model": 0.6, "benchmark:scaffold": 0.1,
          "benchmark:task:scaffold": 0.3}


def _reference_moment(mu, total, shared):
    """E[logistic(mu+Z1) logistic(mu+Z2)] by adaptive quadrature (scipy), independently of Gauss-Hermite."""
    def inner(w):
        x = mu + math.sqrt(shared) * w
        h = integrate.quad(lambda e: math.exp(-e * e / 2) / math.sqrt(2 * math.pi)
                           / (1 + math.exp(-(x + math.sqrt(total - shared) * e))), -12, 12, epsabs=1e-12)[0]
        return h * h * math.exp(-w * w / 2) / math.sqrt(2 * math.pi)
    return integrate.quad(inner, -12, 12, epsabs=1e-12)[0]


@pytest.mark.parametrize("mu,total,shared", [(0.0, 1.0, 0.5), (2.0, 9.0, 0.0), (-3.0, 25.0, 24.0), (-5.0, 16.0, 8.0)])
def test_pair_moment_matches_adaptive_quadrature(mu, total, shared):
    got = _pair_moment(np.array([mu]), np.array([total]), np.array([shared]), 48)[0]
    assert got == pytest.approx(_reference_moment(mu, total, shared), abs=3e-6)


def test_simulated_leaderboard_needs_more_tasks_on_scores_than_on_the_latent_scale():
    c = VarianceComponents.from_mapping(SIM, intercept=0.0)
    m = score_moments(c, "model")
    obs = [score_reliability(c, m, {"task": n})[0] for n in (5, 10, 23, 29)]
    assert obs == pytest.approx([0.5528, 0.7120, 0.8504, 0.8776], abs=2e-4)
    assert generalizability(c, "model", {"task": 10})[0] == pytest.approx(0.8513, abs=2e-4)
    # the D-study engine on the observed scale: 23 tasks for 0.85 on scores, 10 on the latent scale
    d = DStudyDesign(n_tasks=40)
    assert DStudyModel(c, scale="observed").required_n(d, target=0.85).median == 23
    assert DStudyModel(c).required_n(d, target=0.85).median == 10


def test_observed_coefficient_agrees_with_simulated_evaluations_per_benchmark():
    c = VarianceComponents.from_mapping(SIM, intercept=-1.0)
    exact = score_reliability(c, score_moments(c), {"task": 12, "replicate": 3})[0]
    sim = simulated_score_reliability(c, {"task": 12, "replicate": 3}, n_objects=100, n_pairs=400, seed=3)
    assert exact == pytest.approx(0.8685, abs=2e-4)
    assert sim["ratio"][0] == pytest.approx(exact, abs=0.01)


@pytest.mark.parametrize("obj,held,expected", [("model", (), 0.7428), ("model", ("benchmark", "scaffold"), 0.8951),
                                               ("system", (), 0.7786)])
def test_observed_coefficient_agrees_with_simulation_on_a_pooled_design(obj, held, expected):
    c = VarianceComponents.from_mapping(POOLED, intercept=-0.7)
    sizes = {"benchmark": 3, "task": 6, "scaffold": 2, "replicate": 2}
    exact = score_reliability(c, score_moments(c, obj), sizes, held=held)[0]
    sim = simulated_score_reliability(c, sizes, obj, n_objects=100, n_pairs=300, held=held, seed=1)
    assert exact == pytest.approx(expected, abs=3e-4)
    assert sim["ratio"][0] == pytest.approx(exact, abs=0.012)


def test_limits_and_orderings():
    c = VarianceComponents.from_mapping(POOLED, intercept=0.3)
    m = score_moments(c)
    inf = score_reliability(c, m, {"benchmark": math.inf, "task": math.inf, "scaffold": math.inf})
    assert inf[0] == pytest.approx(1.0, abs=1e-9)
    sizes = {"benchmark": 2, "task": 10, "scaffold": 2}
    rho, phi = score_reliability(c, m, sizes)[0], score_reliability(c, m, sizes, "absolute")[0]
    assert phi < rho < generalizability(c, "model", sizes)[0]
    # more of any facet never lowers it
    for f in ("benchmark", "task", "scaffold", "replicate"):
        assert score_reliability(c, m, {**sizes, f: sizes.get(f, 1) * 3})[0] > rho
    # the matrix form is the same numbers
    mat = score_coef_matrix(c, m, [sizes, {**sizes, "task": 40}])
    assert mat[:, 0] == pytest.approx([rho, score_reliability(c, m, {**sizes, "task": 40})[0]], rel=1e-12)


def test_parts_form_reproduces_the_direct_coefficient_on_every_facet():
    c = VarianceComponents.from_mapping({k: np.array([v, 1.3 * v]) for k, v in POOLED.items()},
                                        intercept=[-0.4, 1.1])
    model = DStudyModel(c, scale="observed")
    d = DStudyDesign(n_tasks=7, n_scaffolds=2, n_benchmarks=4, n_replicates=3)
    direct = score_reliability(c, score_moments(c), d.sizes())
    assert model.coefficient(d) == pytest.approx(direct, rel=1e-12)
    for over in ("n_tasks", "n_scaffolds", "n_benchmarks", "n_replicates"):
        curve = model.curve(d, over, grid=[1, 5, 50], estimand="Erho2")
        g = {"n_tasks": "task", "n_scaffolds": "scaffold", "n_benchmarks": "benchmark", "n_replicates": "replicate"}
        want = [np.median(score_reliability(c, score_moments(c), {**d.sizes(), g[over]: n})) for n in (1, 5, 50)]
        assert curve.median == pytest.approx(want, rel=1e-9)


def test_intercept_from_success_rate_and_scale_choice():
    c = VarianceComponents.from_mapping(SIM)
    assert score_scale(c) == "latent"  # a typed-in table: no intercept
    mu = intercept_for_success_rate(c, 0.3)
    c2 = VarianceComponents.from_mapping(SIM, intercept=mu)
    assert score_moments(c2).mean[0] == pytest.approx(0.3, abs=1e-9)
    assert score_scale(c2) == "observed"
    lmm = VarianceComponents.from_mapping(SIM, residual=0.2, intercept=0.0)
    assert score_scale(lmm) == "latent"
    with pytest.raises(ValueError, match="probability scale"):
        score_moments(lmm)
    with pytest.raises(ValueError, match="no observed-score coefficient"):
        DStudyModel(c, scale="observed")


def test_dstudy_summary_answers_on_scores_with_the_latent_beside():
    c = VarianceComponents.from_mapping(SIM, intercept=0.0)
    s = dstudy_summary(c, DStudyDesign(n_tasks=40, n_models=40), budget=5000.0)
    assert s["scale"] == "observed"
    assert s["min_n"]["n_tasks"]["median"] == 23 and s["latent"]["min_n"]["n_tasks"]["median"] == 10
    assert s["observed_scores"]["Erho2"]["median"] == pytest.approx(0.9082, abs=2e-4)
    assert s["estimands"]["Erho2"]["median"] == pytest.approx(generalizability(c, "model", {"task": 40})[0])
    text = format_dstudy(s)
    assert "observed success rates" in text and "latent: 10" in text
    # the cost frontier follows the scale: the cheapest design for 0.85 has 23 tasks on scores
    d = DStudyDesign(n_tasks=40, n_models=40, price_per_trial=1.0)
    assert cost_frontier(c, d, scale="observed").design_at(cost_frontier(c, d, scale="observed").cheapest)["n_tasks"] >= 23


def _simulated_corpus(comp, mu, n_models, n_tasks, trials, seed):
    rng = np.random.default_rng(seed)
    um = rng.normal(0, math.sqrt(comp["model"]), n_models)
    ut = rng.normal(0, math.sqrt(comp["task"]), n_tasks)
    utm = rng.normal(0, math.sqrt(comp["task:model"]), (n_models, n_tasks))
    p = 1 / (1 + np.exp(-(mu + um[:, None] + ut[None, :] + utm)))
    y = rng.binomial(trials, p)
    m, t = np.meshgrid(np.arange(n_models), np.arange(n_tasks), indexing="ij")
    return pd.DataFrame({"benchmark": "b", "task": [f"t{k}" for k in t.ravel()],
                         "model": [f"m{k}" for k in m.ravel()], "scaffold": "s",
                         "successes": y.ravel(), "trials": trials})


def test_split_half_statistic_and_check_on_a_corpus_from_known_components():
    table = _simulated_corpus(SIM, -0.5, 40, 60, 1, seed=7)
    stat = split_half_statistic(table, n_splits=100)
    c = VarianceComponents.from_mapping(SIM, intercept=-0.5)
    predicted = score_reliability(c, score_moments(c), {"task": 30})[0]
    assert stat["half_tasks"] == 30 and stat["n_objects"] == 40
    assert stat["mean"] == pytest.approx(predicted, abs=0.08)
    chk = split_half_check(table, c, {"task": 60, "replicate": 1}, n_splits=100, n_replicates=100, seed=2)
    assert chk.verdict == "agrees"
    assert chk.predicted.median == pytest.approx(predicted, abs=1e-9)
    assert "hold here" in chk.sentence()


def test_split_half_check_says_when_the_fit_overstates():
    # the fit claims far less task-by-model noise than the corpus has: it over-states the scores' reliability
    table = _simulated_corpus({"model": 0.3, "task": 4.0, "task:model": 4.0}, 0.0, 30, 20, 1, seed=11)
    claimed = VarianceComponents.from_mapping({"model": 4.0, "task": 4.0, "task:model": 0.01}, intercept=0.0)
    chk = split_half_check(table, claimed, {"task": 20, "replicate": 1}, n_splits=100, n_replicates=100, seed=3)
    assert chk.verdict == "over-states"
    assert chk.observed < chk.replicated_interval[0]
    assert "LESS reliable" in chk.sentence()


def test_a_components_file_gets_observed_scores_from_a_success_rate(tmp_path, capsys):
    import json

    from ddr_explorer.core.cli import main

    f = tmp_path / "table.json"
    f.write_text(json.dumps({"scale": "sd", "components": {"model": 1.5, "task": 2.0, "task:model": 0.8}}))
    assert main(["dstudy", "--components", str(f), "--n-tasks", "40", "--success-rate", "0.5", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["scale"] == "observed" and s["min_n"]["n_tasks"]["median"] == 23
    assert s["latent"]["min_n"]["n_tasks"]["median"] == 10
    assert main(["dstudy", "--components", str(f), "--n-tasks", "40"]) == 0
    out = capsys.readouterr().out
    assert "latent ability ranking" in out and "--success-rate" in out
    assert main(["dstudy", "--components", str(f), "--success-rate", "1.2"]) == 2
    assert "(0, 1)" in capsys.readouterr().err
