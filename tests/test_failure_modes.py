"""Failure modes (seed 003 secs. 5.6-5.7) on simulated corpora with known parameters, the CLI's JSON and the
DDR sheet's fifth decision computed from the analysis."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.analyses.failure_modes import (FailureTaxonomy, NoErrorCategory, activation_draws,
                                                      failure_mode_study, profile_holdout, trace_profiles)
from ddr_explorer.core.analyses.failure_sim import (DEMO, simulate_failure_table, true_activation_rates,
                                                    true_interaction_variance)
from ddr_explorer.core.cli import main
from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.corpus.validate import build_corpus
from ddr_explorer.core.model.posterior import SamplerSettings

FAST = ["--stop", "fixed", "--draws", "40", "--warmup", "20", "--chains", "2"]
SETTINGS = SamplerSettings(stop="fixed", draws=40, warmup=20, chains=2, seed=0)  # what FAST gives on the command line
ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def test_activation_rates_are_recovered():
    """The observed rates, with their Beta intervals, cover the rates the realised design implies; and they
    sit near the population rates of the generating model."""
    p = dataclasses.replace(DEMO, n_tasks=30, n_trials=3)
    table, expected = simulate_failure_table(p, seed=11, return_expected=True)
    prof = trace_profiles(build_corpus(table, file=None, format="simulated"))
    assert len(prof) == p.n_models * p.n_scaffolds * 60 * 3 and list(prof.columns) == sorted(p.categories)
    order = [sorted(p.categories).index(c) for c in p.categories]  # generator order -> sorted columns
    observed = prof.mean().to_numpy()[order]
    draws = activation_draws(prof, 4000, seed=1)[:, order]
    lo, hi = np.quantile(draws, [0.005, 0.995], axis=0)
    assert np.all((lo <= expected) & (expected <= hi)), (lo, expected, hi)
    # near the population rates: within 4 sd of a design's spread (its random effects) and of the Bernoulli noise
    pop, sd = true_activation_rates(p, n_mc=200, return_sd=True)
    noise = np.sqrt(sd ** 2 + pop * (1 - pop) / len(prof))
    assert np.all(np.abs(observed - pop) < 4 * noise), (observed, pop, noise)
    assert np.all(sd < 0.06)  # and that spread is a few hundredths: the check can fail
    assert np.all(np.diff(observed) > 0)  # the generator's order: failures rarest where agents differ most


def test_trace_profiles_any_step_failing_activates_the_category():
    raw = pd.DataFrame({"benchmark": "b", "task": ["t1"] * 4 + ["t2"] * 4, "model": "m", "scaffold": "s",
                        "trial": "r1", "step": [1, 2, 1, 2] * 2, "error_category": ["x", "x", "y", "y"] * 2,
                        "result": [1, 0, 1, 1, 1, 1, 0, 0]})
    prof = trace_profiles(build_corpus(raw, file=None, format="canonical"))
    assert prof.to_numpy().tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_profile_holdout_known_answers():
    # identical traces within each cell: both hold-outs are exact (MAE 0) and cell rates correlate perfectly
    idx = pd.MultiIndex.from_tuples([(f"m{c}", "s", "b", f"t{k}", "r1") for c in range(4) for k in range(10)],
                                    names=["model", "scaffold", "benchmark", "task", "trial"])
    pattern = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1], [0, 0, 1]], float)
    prof = pd.DataFrame(np.repeat(pattern, 10, axis=0), index=idx, columns=["a", "b", "c"])
    h = profile_holdout(prof, n_splits=5)
    np.testing.assert_allclose(h.trace_mae, 0.0)
    np.testing.assert_allclose(h.cell_mae, 0.0)
    np.testing.assert_allclose(h.cell_r, 1.0)
    # Bernoulli traces around cell rates: a trace is far less predictable than its cell (seed 003: .261 vs .056)
    rng = np.random.default_rng(0)
    rates = np.repeat(rng.uniform(0.1, 0.9, size=(4, 3)), 30, axis=0)
    idx = pd.MultiIndex.from_tuples([(f"m{c}", "s", "b", f"t{k}", "r1") for c in range(4) for k in range(30)],
                                    names=idx.names)
    noisy = pd.DataFrame((rng.random(rates.shape) < rates).astype(float), index=idx, columns=["a", "b", "c"])
    h = profile_holdout(noisy, n_splits=20)
    assert h.trace_mae.mean() > 2 * h.cell_mae.mean() and h.cell_r.mean() > 0.5 and h.n_splits == 20


def test_no_error_category_says_how_to_get_one():
    raw = pd.DataFrame({"benchmark": "b", "task": ["t1", "t2"], "model": "m", "scaffold": "s", "result": [1, 0]})
    with pytest.raises(NoErrorCategory, match="no error_category column"):
        trace_profiles(build_corpus(raw, file=None, format="canonical"))


@pytest.fixture(scope="module")
def sim_csv(tmp_path_factory):
    """Two categories with a strong, known contrast: agent x task variance 4.25 against 0.29 (sd_at .5
    included), activation the other way round. True rank correlation -1."""
    p = dataclasses.replace(DEMO, categories=DEMO.categories[:2], b=(2.6, 0.6), sd_at_e=(2.0, 0.2), n_tasks=6,
                            n_trials=2, n_steps=2)
    path = tmp_path_factory.mktemp("failure") / "sim-failures.csv"
    simulate_failure_table(p, seed=3).to_csv(path, index=False)
    return path, p


@pytest.mark.slow
def test_study_recovers_the_sign_of_the_rank_correlation(sim_csv, tmp_path):
    """The one real-sampler run of this file: the two per-category G-studies (the four-facet fit is the ddr
    preset, fitted in the CLI test below with the stand-in sampler)."""
    p = sim_csv[1]
    # NUTS alone (no collapsed Gibbs or scale moves: their own tests are in tests/model/): each category's
    # sampler compiles in about half the time (measured 14 s against 17-29 s a fit, 2 busy cores), and the
    # contrast (variance 4.25 against 0.29) is far beyond what the extra moves change in 2 x 60 draws
    run = SamplerSettings(stop="fixed", draws=60, warmup=40, chains=2, seed=0, collapsed="off", scale_steps=0)
    st = failure_mode_study(load_corpus(sim_csv[0]), run, tmp_path, n_splits=5, four_facet=False,
                            rerun_unconverged=False)  # a short run: no rerun
    assert st.categories == sorted(p.categories) and st.n_fits == 2 and st.four_facet == {}
    tax = st.taxonomy()
    assert isinstance(tax, FailureTaxonomy)
    truth = dict(zip(p.categories, true_interaction_variance(p)))
    assert tax.categories[int(np.argmax(tax.interaction_variance))] == max(truth, key=truth.get)
    assert tax.spearman == -1.0
    r = st.rho_summary()
    assert r["p_negative"] > 0.8 and r["median"] == -1.0
    assert st.rho_draws.shape == (120,) and tax.holdout["n_splits"] == 5


def test_cli_json_failure_modes_and_frontier(fake_sampler, tmp_path, capsys):
    """On the SIMULATED demo corpus, with the stand-in sampler: the JSON is core's study, fit for fit."""
    demo = ROOT / "resources" / "demo" / "failure-modes-SIMULATED.csv"
    code = main(["analyses", str(demo), "--which", "failure-modes,frontier", "--json", "--splits", "5",
                 "--cache", str(tmp_path), "--quiet", *FAST])
    out = capsys.readouterr()
    assert code == 0, out.err
    d = json.loads(out.out)
    fm = d["failure-modes"]
    # four-facet + one per category; the stand-in's 40 draws fail the gate (ESS < 400), so each is rerun once with
    # twice the draws and warmup (the refit engine's policy), and still fails
    assert len(fake_sampler) == 10 and fm["n_fits"] == 5 and fm["n_rerun"] == 5
    conv = d["convergence"]["fits"]["failure-modes"]
    assert conv["n_fits"] == 5 and conv["n_rerun"] == 5 and d["converged"] is False
    assert len(fm["four_facet"]) == 10 and "task:error_category" in fm["four_facet"]  # Eq. 1 with steps
    direct = failure_mode_study(load_corpus(demo), SETTINGS, tmp_path, n_splits=5).to_dict()
    assert len(fake_sampler) == 10  # every fit and rerun from the cache
    assert fm["categories"] == json.loads(json.dumps(direct["categories"]))
    assert fm["holdout"]["trace_mae"] == pytest.approx(direct["holdout"]["trace_mae"])
    # the file's own counts (traces with a failed check of the category, of 1,600): 866, 394, 619, 488
    assert [c["activation_rate"] for c in fm["categories"]] == pytest.approx([866 / 1600, 394 / 1600, 619 / 1600,
                                                                             488 / 1600])
    assert "no release_date column" in d["frontier"]["stopped"]
    code = main(["analyses", str(demo), "--which", "failure-modes", "--splits", "5", "--cache", str(tmp_path),
                 "--quiet", *FAST])
    text = capsys.readouterr().out
    assert code == 0 and "rank correlation variance vs activation" in text and "DDR paper 2026: 0.261" in text


def test_cli_frontier_with_a_slice_and_a_bad_slice(tmp_path, capsys):
    from pathlib import Path as _P

    rows = pd.DataFrame({"benchmark": ["A", "A", "B", "A"], "task": ["a1", "a2", "b1", "a1"],
                         "model": ["m1", "m1", "m1", "m2"], "scaffold": "s", "successes": [1, 0, 1, 2],
                         "trials": 2, "release_date": ["2024-01-05"] * 3 + ["2024-04-02"],
                         "task_group": ["x", "x", "y", "x"]})
    path = _P(tmp_path) / "t.csv"
    rows.to_csv(path, index=False)
    code = main(["analyses", str(path), "--which", "frontier", "--json", "--slice", "task_group=x", "--quiet"])
    out = capsys.readouterr()
    assert code == 0, out.err
    f = json.loads(out.out)["frontier"]
    assert f["slice"] == "task_group=x" and [b["benchmark"] for b in f["benchmarks"]] == ["A"]
    assert f["groups"][0]["frontier"] == pytest.approx([0.25, 0.5])  # Q1: m1 (.5, 0); Q2: m2 lifts a1 to 1
    code = main(["analyses", str(path), "--which", "frontier", "--slice", "task_group=z", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "task_group" in err and "x (2)" in err and "y (1)" in err


def test_sheet_decision_5_is_computed(fake_sampler, tmp_path):
    from ddr_explorer.core.report.content import _decision_taxonomy

    demo = ROOT / "resources" / "demo" / "failure-modes-SIMULATED.csv"
    tax = failure_mode_study(load_corpus(demo), SETTINGS, tmp_path, n_splits=3, four_facet=False).taxonomy()

    class Inputs:
        components = None

        def analysis(self, key):
            return tax if key == "failure_taxonomy" else None

    class Ct:
        inputs = Inputs()

    d = _decision_taxonomy(Ct())
    assert d.status == "answered"
    # the stand-in sampler gives every category the same variance: no per-draw interval, and unconverged fits
    assert "MAE" in d.answer and "per draw" not in d.answer and "Provisional" in d.answer
    assert tax.categories[int(np.argmax(tax.activation_rate))] in d.answer
