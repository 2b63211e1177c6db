"""The method-comparison table (seed 000 Tables 20-21) and `ddr methods`."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from ddr_explorer.core import cli
from ddr_explorer.core.estimators import MixedDesign, disco, laplace, reml
import ddr_explorer.core.estimators.bayes_lmm as bayes_lmm_module
from ddr_explorer.core.estimators.bayes_lmm import BayesLmmSettings, score_reliability
from ddr_batch_fakes import LMM_CALLS, lmm_stand_in
from ddr_explorer.core.estimators.methods import format_methods_table, methods_table
from ddr_explorer.core.henderson import henderson_method1
from ddr_explorer.core.model.formula import RESIDUAL_VARIANCE, preset

FIXTURES = Path(__file__).parent / "fixtures"
TERMS = ["task", "model", "scaffold", "task:model", "task:scaffold", "model:scaffold"]


@pytest.fixture(scope="module")
def cells():
    return pd.read_csv(FIXTURES / "binary_cells.csv")


@pytest.fixture(scope="module")
def fake_posterior():
    """A posterior-like object: sigma draws (2 chains x 3 draws) whose shares are known by hand."""
    rng = np.random.default_rng(0)
    sigma = {t: rng.uniform(0.3, 2.0, (2, 3)) for t in TERMS}
    return SimpleNamespace(sigma=sigma, spec=preset("per-benchmark"))


#: A short Bayesian LMM run (its own tests are in test_bayes_lmm.py).
LMM = BayesLmmSettings(warmup=250, draws=250, thin=2, max_draws=500)

@pytest.fixture(scope="module")
def table(cells, fake_posterior):
    LMM_CALLS.clear()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bayes_lmm_module, "bayes_lmm", lmm_stand_in)
        return methods_table(cells, "per-benchmark", posterior=fake_posterior, lmm_settings=LMM)


def test_columns_are_the_estimators_run_on_their_own(cells, table):
    design = MixedDesign.from_spec(cells, "per-benchmark")
    assert table.estimators == ["Henderson", "REML", "Bayes LMM", "Laplace", "Bayes GLMM", "DISCO"]
    # the table ran the LMM once, on the whole corpus's design, with the spec's priors and the settings given
    [call] = LMM_CALLS
    assert call["terms"] == design.term_names and call["n_cells"] == len(design.n)
    assert call["priors"] == preset("per-benchmark").priors
    assert call["settings"] == LMM
    fit = lmm_stand_in(design, settings=LMM)  # same seed, same draws
    for t in table.terms:
        assert table.shares["Bayes LMM"][t] == pytest.approx(fit.shares()[t], rel=1e-9)
        assert table.components["Bayes LMM"][t] == pytest.approx(fit.posterior_means()[t], rel=1e-9)
    sr = score_reliability(fit, "model", table.sizes)
    assert table.coefficients["Bayes LMM"]["Phi"] == pytest.approx(sr.phi.mean, rel=1e-9)
    assert table.intervals["Bayes LMM"]["Phi"] == pytest.approx(sr.phi.hdi95, rel=1e-9)
    assert table.convergence["Bayes LMM"] == fit.diagnostics.verdict()
    # the comparison keeps the LMM's score reliability for the DDR sheet (no second LMM fit)
    assert table.score_reliability.phi.median == pytest.approx(sr.phi.median, rel=1e-12)
    assert table.score_reliability.erho2.hdi95 == pytest.approx(sr.erho2.hdi95, rel=1e-12)
    assert table.terms == [*TERMS, "residual"]
    r = reml(design)
    for t in table.terms:
        assert table.shares["REML"][t] == pytest.approx(r.shares[t], rel=1e-9)
    lp = laplace(design)
    for t in table.terms:
        assert table.shares["Laplace"][t] == pytest.approx(lp.shares[t], rel=1e-9)
    assert table.components["Laplace"]["residual"] == RESIDUAL_VARIANCE
    hm = henderson_method1(cells, {t: t.split(":") for t in TERMS})
    total = sum(hm.components.values())
    for t in table.terms:
        assert table.shares["Henderson"][t] == pytest.approx(hm.components[t] / total, rel=1e-12)
    d = disco(design)
    for t in TERMS:
        assert table.shares["DISCO"][t] == pytest.approx(d.shares[t], rel=1e-12)
    assert math.isnan(table.shares["DISCO"]["residual"])


def test_shares_sum_to_one_and_bayes_uses_per_draw_shares(table, fake_posterior):
    for e in ["Henderson", "REML", "Bayes LMM", "Laplace", "Bayes GLMM"]:
        assert sum(table.shares[e].values()) == pytest.approx(1.0)
    assert sum(v for t, v in table.shares["DISCO"].items() if t != "residual") == pytest.approx(1.0)
    s2 = {t: v.reshape(-1) ** 2 for t, v in fake_posterior.sigma.items()}
    total = sum(s2.values()) + RESIDUAL_VARIANCE
    for t in TERMS:
        assert table.shares["Bayes GLMM"][t] == pytest.approx(np.mean(s2[t] / total), rel=1e-12)


def test_observed_and_logit_scales_agree_in_ranking_of_the_dominant_facet(table):
    # task is the largest component on every scale for this fixture (sigma_task = 2 on the logit scale);
    # the Bayes column here comes from made-up draws
    for e in ["Henderson", "REML", "Laplace", "DISCO"]:
        shares = {t: v for t, v in table.shares[e].items() if t != "residual"}
        assert max(shares, key=shares.get) in ("task", "task:model"), e
    for e in ["REML", "Bayes LMM", "Laplace", "Bayes GLMM", "Henderson"]:
        c = table.coefficients[e]
        assert 0 < c["Phi"] <= c["Erho2"] < 1, e
    assert math.isnan(table.coefficients["DISCO"]["Phi"])


def test_score_gap_is_seed_000_g5_in_words(table):
    """Scores are less reliable than rankings: the sentence every view prints (ddr methods, app, sheet)."""
    gap = table.score_gap()
    assert gap["Phi"] == table.coefficients["Bayes LMM"]["Phi"] < gap["Erho2"]
    text = format_methods_table(table)
    assert "Scores vs rankings (Bayes LMM" in text and "score reliability is lower than ranking reliability" in text
    assert f"Phi {gap['Phi']:.3f} [{gap['Phi_hdi95'][0]:.3f}, {gap['Phi_hdi95'][1]:.3f}]" in text
    d = table.to_dict()
    assert d["intervals"]["Bayes LMM"]["Erho2"] == list(table.intervals["Bayes LMM"]["Erho2"])
    assert d["convergence"]["Bayes LMM"]["converged"] == table.converged("Bayes LMM")


def test_missing_posterior_is_a_note_not_a_column(cells):
    t = methods_table(cells, "per-benchmark", estimators=("DISCO", "Bayes GLMM"))
    assert t.estimators == ["DISCO"]
    assert any("no cached fit" in n for n in t.notes)
    text = format_methods_table(t)
    assert "DISCO" in text and "NA" in text


def test_cli_methods_json(tmp_path, cells, capsys):
    path = tmp_path / "cells.csv"
    cells.to_csv(path, index=False)
    rc = cli.main(["methods", str(path), "--preset", "per-benchmark", "--no-bayes", "--quiet", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert out["estimators"] == ["Henderson", "REML", "Laplace", "DISCO"]
    assert out["shares"]["DISCO"]["residual"] is None
    assert out["shares"]["REML"]["task"] == pytest.approx(
        reml(MixedDesign.from_spec(cells, "per-benchmark")).shares["task"], rel=1e-6)


def test_cli_methods_rejects_two_models(tmp_path, cells, capsys):
    path = tmp_path / "cells.csv"
    cells.to_csv(path, index=False)
    rc = cli.main(["methods", str(path), "--preset", "per-benchmark", "--formula", "y ~ (1|task)", "--quiet"])
    assert rc == 2 and "at most one" in capsys.readouterr().err
