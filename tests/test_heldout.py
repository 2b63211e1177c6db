"""Held-out reliability (seed 003 sec. 5.4): cell-stratified 70/30 splits, projected Erho2 from the
training fit at the held-out design against the held-out fit's Erho2, Pearson r and mean gap.
The sampler is the moment stand-in of ``batch_fakes`` (hand-computable draws)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.dstudy import observed_design
from ddr_explorer.core.analyses.heldout import held_out_study, run_heldout, split_cells, split_settings
from ddr_explorer.core.model import FitCancelled, SamplerSettings
from ddr_explorer.core.report.inputs import HeldOutReliability


import ddr_batch_fakes as bf  # noqa: E402 - registered by tests/conftest.py
SETTINGS = SamplerSettings(stop="fixed", draws=40, warmup=10, chains=2, seed=1)



@pytest.fixture(scope="module")
def corpus():
    sim = bf.simulate_module().simulate_per_benchmark(
        n_tasks=12, n_models=5, n_scaffolds=2, n_pairs=8, trials_per_cell=5, seed=3)
    return bf.corpus_of(sim.table, "sim")


def _cells(n_trials, successes):
    n = len(n_trials)
    return pd.DataFrame({"benchmark": ["b"] * n, "task": [f"t{i}" for i in range(n)], "model": ["m"] * n,
                         "scaffold": ["s"] * n, "successes": successes, "trials": n_trials})


def test_every_cell_is_split_on_its_own():
    rng = np.random.default_rng(0)
    table = _cells([10] * 50, rng.integers(0, 11, 50))
    train, held = split_cells(table, np.random.default_rng(1))
    # 0.7 x 10 = 7 exactly: every cell sends 7 trials to training and 3 to the held-out part
    assert (train["trials"] == 7).all() and (held["trials"] == 3).all()
    both = table.set_index("task")["successes"]
    back = train.set_index("task")["successes"] + held.set_index("task")["successes"]
    assert (back.reindex(both.index) == both).all()  # successes are split, never made up
    assert (train["successes"] <= 7).all() and (held["successes"] <= 3).all()


def test_single_trial_cells_go_to_training_with_probability_07():
    table = _cells([1] * 4000, [1] * 2000 + [0] * 2000)
    train, held = split_cells(table, np.random.default_rng(2))
    assert len(train) + len(held) == 4000
    assert len(train) / 4000 == pytest.approx(0.7, abs=0.025)  # binomial sd 0.007
    # five-trial cells: 3 or 4 trials to training (stochastic rounding of 3.5), 3.5 on average
    five = split_cells(_cells([5] * 4000, [2] * 4000), np.random.default_rng(3))[0]["trials"]
    assert set(five) == {3, 4} and five.mean() == pytest.approx(3.5, abs=0.05)


def test_pearson_r_and_mean_gap_on_fixed_values():
    proj, held = np.array([0.5, 0.6, 0.7, 0.8]), np.array([0.45, 0.40, 0.50, 0.35])
    r = HeldOutReliability(proj, held)
    # by hand: deviations of proj (-0.15, -0.05, 0.05, 0.15), of held (0.025, -0.025, 0.075, -0.075);
    # products -0.00375 + 0.00125 + 0.00375 - 0.01125 = -0.01; sqrt(0.05 * 0.0125) = 0.025 -> r = -0.4
    assert r.pearson_r == pytest.approx(-0.4)
    assert r.mean_gap == pytest.approx(-0.225)  # mean(held - proj) = (-0.05 - 0.2 - 0.2 - 0.45) / 4


def test_projected_and_held_out_per_split_are_the_hand_values(fake_sampler, corpus, tmp_path):
    study = held_out_study(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path, n_splits=3, seed=5)
    # 6 refits; the stand-in's 2 x 250 draws never reach bulk ESS 400, so the gate reruns each once with twice the draws
    assert study.n_fitted == 12 and len(fake_sampler) == 12 and study.n_rerun == 6 and study.n_converged == 0
    assert study.settings == split_settings(SETTINGS)
    for i, row in study.splits.iterrows():
        train, held = split_cells(corpus.table, np.random.default_rng([5, i]))
        hd = observed_design(bf.corpus_of(held, "h"))
        assert row.n_train_trials + row.n_held_out_trials == corpus.n_trials
        assert row.n_train_trials == train["trials"].sum()
        assert hd.n_tasks == 12 and hd.n_replicates in (1.0, 1.5, 2.0)
        proj = bf.erho2_model(bf.moment_sigma_model(train), hd.n_tasks, hd.n_scaffolds, hd.n_replicates)
        ho = bf.erho2_model(bf.moment_sigma_model(held), hd.n_tasks, hd.n_scaffolds, hd.n_replicates)
        assert row.projected == pytest.approx(proj, abs=2e-3)
        assert row.held_out == pytest.approx(ho, abs=2e-3)
        assert row.gap == pytest.approx(row.held_out - row.projected)
    r = study.result
    assert r.n_splits == 3
    assert r.pearson_r == pytest.approx(np.corrcoef(study.splits["projected"], study.splits["held_out"])[0, 1])
    assert r.mean_gap == pytest.approx(study.splits["gap"].mean())
    assert study.to_dict()["n_splits"] == 3


def test_rerun_samples_nothing(fake_sampler, corpus, tmp_path):
    a = held_out_study(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path, n_splits=2)
    fake_sampler.clear()
    b = held_out_study(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path, n_splits=2)
    assert fake_sampler == [] and b.n_cached == 8 and b.n_fitted == 0  # 4 refits and their 4 gate reruns
    np.testing.assert_array_equal(a.result.projected, b.result.projected)


def test_cancel_and_too_few_splits(fake_sampler, corpus, tmp_path):
    with pytest.raises(FitCancelled):
        held_out_study(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path, n_splits=4,
                       cancel=lambda: len(bf.CALLS) >= 3)
    assert len(fake_sampler) == 3
    with pytest.raises(ValueError, match="at least 2 splits"):
        held_out_study(corpus, n_splits=1)


def test_runner_explains_when_no_split_can_be_fitted(fake_sampler, corpus, tmp_path):
    with pytest.raises(ValueError, match="0 split"):
        run_heldout(corpus, "y ~ 1 + (1|nosuchfacet)", SETTINGS, cache_dir=tmp_path)
