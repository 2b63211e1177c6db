"""Failure modes (seed 003 secs. 5.6-5.7) on simulated corpora with known parameters, the CLI's JSON and the
DDR sheet's fifth decision computed from the analysis (issue 19, item 2)."""

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

FAST = ["--draws", "40", "--warmup", "20", "--chains", "2"]
SETTINGS = SamplerSettings(draws=40, warmup=20, chains=2, seed=0)  # what FAST gives on the command line


def test_activation_rates_are_recovered():
    """The observed rates, with their Beta intervals, cover the rates the realised design implies; and they
    sit near the population rates of the generating model."""
    p = dataclasses.replace(DEMO, n_tasks=30, n_trials=3)
    table, expected = simulate_failure_table(p, seed=11, return_expected=True)
    prof = trace_profiles(build_corpus(table, file=None, format="simulated"))
    assert len(prof) == 6 * 60 * 3 and list(prof.columns) == sorted(p.categories)
    order = [sorted(p.categories).index(c) for c in p.categories]  # generator order -> sorted columns
    observed = prof.mean().to_numpy()[order]
    draws = activation_draws(prof, 4000, seed=1)[:, order]
    lo, hi = np.quantile(draws, [0.005, 0.995], axis=0)
    assert np.all((lo <= expected) & (expected <= hi)), (lo, expected, hi)
    np.testing.assert_allclose(observed, true_activation_rates(p, n_mc=200), atol=0.08)
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
    """Three categories with a strong, known contrast: agent x task variance 4.25, 1.25, 0.29 (sd_at .5
    included); activation rising in the opposite order. True rank correlation -1."""
    p = dataclasses.replace(DEMO, categories=DEMO.categories[:3], b=(2.6, 1.6, 0.6), sd_at_e=(2.0, 1.0, 0.2),
                            n_tasks=6, n_trials=2, n_steps=2)
    path = tmp_path_factory.mktemp("failure") / "sim-failures.csv"
    simulate_failure_table(p, seed=3).to_csv(path, index=False)
    return path, p


@pytest.fixture(scope="module")
def study(sim_csv, tmp_path_factory):
    """The one real-sampler run of this file (4 small fits); the CLI test below reuses its cache."""
    cache = tmp_path_factory.mktemp("failure-cache")
    corpus = load_corpus(sim_csv[0])
    return failure_mode_study(corpus, SETTINGS, cache, n_splits=5), cache


def test_study_recovers_the_sign_of_the_rank_correlation(study, sim_csv):
    st, _ = study
    p = sim_csv[1]
    assert st.categories == sorted(p.categories) and st.n_fits == 4
    # Eq. 1 with steps: the ddr preset, every one of its ten terms, shares of the total per draw
    assert len(st.four_facet) == 10 and "error_category" in st.four_facet
    assert all(0 <= c["share_lower95"] <= c["share_median"] <= c["share_upper95"] < 1 for c in st.four_facet.values())
    tax = st.taxonomy()
    assert isinstance(tax, FailureTaxonomy)
    truth = dict(zip(p.categories, true_interaction_variance(p)))
    assert tax.categories[int(np.argmax(tax.interaction_variance))] == max(truth, key=truth.get)
    assert tax.spearman < 0
    r = st.rho_summary()
    assert r["p_negative"] > 0.5 and r["lower95"] <= r["median"] <= r["upper95"]
    assert st.rho_draws.shape == (80,) and tax.holdout["n_splits"] == 5


def test_cli_json_failure_modes_and_frontier(study, sim_csv, capsys):
    _, cache = study
    code = main(["analyses", str(sim_csv[0]), "--which", "failure-modes,frontier", "--json", "--splits", "5",
                 "--cache", str(cache), "--quiet", *FAST])
    out = capsys.readouterr()
    assert code == 0, out.err
    d = json.loads(out.out)
    fm = d["failure-modes"]
    assert fm["n_fits"] == 4 and d["convergence"]["fits"]["failure-modes"]["n_fits"] == 4
    st = study[0].to_dict()
    assert fm["spearman_point"] == pytest.approx(st["spearman_point"])  # every fit from the cache: same numbers
    assert [c["category"] for c in fm["categories"]] == st["categories"] and fm["holdout"]["n_splits"] == 5
    assert "no release_date column" in d["frontier"]["stopped"]
    code = main(["analyses", str(sim_csv[0]), "--which", "failure-modes", "--splits", "5", "--cache", str(cache),
                 "--quiet", *FAST])
    text = capsys.readouterr().out
    assert code == 0 and "rank correlation variance vs activation" in text and "seed 003: 0.261" in text


def test_sheet_decision_5_is_computed(study):
    from ddr_explorer.core.report.content import _decision_taxonomy

    tax = study[0].taxonomy()

    class Inputs:
        components = None

        def analysis(self, key):
            return tax if key == "failure_taxonomy" else None

    class Ct:
        inputs = Inputs()

    d = _decision_taxonomy(Ct())
    assert d.status == "answered"
    assert f"{tax.spearman:+.2f}".replace("-", "\u2212") in d.answer or f"{tax.spearman:.2f}" in d.answer
    top = tax.categories[int(np.argmax(tax.interaction_variance))]
    assert top in d.answer and "trace" in d.answer
