"""The refit engine with the real NUTS sampler (small data, few draws): hold-out splits, leave-one-benchmark-out
and difficulty strata go through :func:`~ddr_explorer.core.model.refit.fit_refits` on the parent's cells, and
each refit agrees with a cold fit of the same part within Monte Carlo error (the contract: a refit reads like
a cold fit of the kept cells).  The gate's rerun is switched off here (:data:`engine.GATE_RERUN`): these
short runs never reach bulk ESS 400, and the rerun is tested with the stand-in sampler."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.analyses import engine as eng
from ddr_explorer.core.analyses.difficulty import difficulty_study, stratum_masks, task_difficulty
from ddr_explorer.core.analyses.engine import RefitEngine
from ddr_explorer.core.analyses.heldout import held_out_study, split_settings
from ddr_explorer.core.analyses.refits import FitJob, sub_corpus
from ddr_explorer.core.analyses.stability import leave_one_benchmark_out
from ddr_explorer.core.fitting import fit_corpus
from ddr_explorer.core.model import SamplerSettings

import ddr_batch_fakes as bf  # noqa: E402 - registered by tests/conftest.py

pytestmark = pytest.mark.slow

REAL = SamplerSettings(stop="fixed", draws=120, warmup=120, chains=2, seed=3, chunk_size=120, collapsed="off", scale_steps=0,
                       device="cpu")


@pytest.fixture(autouse=True)
def no_gate_rerun(monkeypatch):
    monkeypatch.setattr(eng, "GATE_RERUN", False)


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    """Three benchmarks of 6 tasks, 5 models; the pooled parent fitted once for every test here."""
    corpus = _corpus(benchmarks=("b1", "b2", "b3"), n_tasks=6)
    cache = tmp_path_factory.mktemp("real-refits")
    return corpus, fit_corpus(corpus, "pooled", REAL, cache_dir=cache), cache


def _corpus(benchmarks=("bench",), n_tasks=10, spread=3.0, seed=11):
    """Models 1.5 logits apart on average (sd of u_m about 1.3), task sd 0.5, 4 trials per cell."""
    rng = np.random.default_rng(seed)
    models = [f"m{i}" for i in range(5)]
    u_m = dict(zip(models, np.linspace(-spread / 2, spread / 2, 5)))
    rows = []
    for b in benchmarks:
        for t in range(n_tasks):
            u_t = rng.normal(0, 0.5)
            for m in models:
                eta = u_m[m] + u_t
                rows.append((b, f"{b}-t{t:02d}", m, "s0", int(rng.binomial(4, 1 / (1 + np.exp(-eta)))), 4))
    return bf.corpus_of(pd.DataFrame(rows, columns=["benchmark", "task", "model", "scaffold", "successes",
                                                    "trials"]), "real")


def test_held_out_splits_through_the_engine(three):
    corpus, parent, cache = three
    study = held_out_study(corpus, "pooled", REAL, cache_dir=cache, n_splits=2, parent=parent)
    assert study.cold == {} and study.n_fitted == 4 and study.errors == {}
    # well-separated models: both the projection and the replication find a reliable ranking
    assert (study.splits["projected"] > 0.6).all(), study.splits
    assert (study.splits["held_out"] > 0.4).all(), study.splits
    again = held_out_study(corpus, "pooled", REAL, cache_dir=cache, n_splits=2, parent=parent)
    assert again.n_fitted == 0 and again.n_cached == 4
    np.testing.assert_array_equal(again.splits["projected"], study.splits["projected"])


def test_a_refit_agrees_with_the_cold_fit_of_its_part(three, tmp_path):
    corpus, parent, cache = three
    strata = task_difficulty(corpus.table, 2)
    easy, hard = (sub_corpus(corpus, m, label) for m, label in zip(stratum_masks(corpus, strata),
                                                                    ("easy half", "hard half")))
    # its own refit cache: the difficulty test below refits the same strata and counts its own fits.  Both
    # halves in one batch: a batch of two refits is the program the other tests' refits compiled (the compile
    # cache holds it), a batch of one another program (compiled anew, about 9 s); a refit's draws do not
    # depend on its batch (tests/model/test_refit.py::test_a_refit_gives_the_same_draws_alone_and_in_a_batch)
    refit = RefitEngine(corpus, "pooled", REAL, cache_dir=tmp_path / "engine", parent=parent).run(
        [FitJob("easy half", easy, "pooled"), FitJob("hard half", hard, "pooled")]).results[0].posterior
    cold = fit_corpus(easy, "pooled", REAL, cache_dir=tmp_path).posterior
    assert refit.n_trials == easy.n_trials and refit.n_cells == cold.n_cells
    for name in cold.levels:  # the easy half's own levels (the halves have as many trials and cells)
        assert refit.levels[name].astype(str).equals(cold.levels[name].astype(str)), name
    for t in cold.sigma:  # within Monte Carlo error: 4 MC standard errors of the difference of two medians
        a, b = np.asarray(refit.sigma[t]).ravel(), np.asarray(cold.sigma[t]).ravel()
        ess = max(min(refit.diagnostics.min_ess_bulk, cold.diagnostics.min_ess_bulk), 20)
        se = np.hypot(a.std(), b.std()) / np.sqrt(ess)
        assert abs(np.median(a) - np.median(b)) < 4 * se + 0.05, (t, np.median(a), np.median(b))


def test_difficulty_strata_through_the_engine(three):
    corpus, parent, cache = three
    study = difficulty_study(corpus, "pooled", REAL, cache_dir=cache, n_strata=2, parent=parent)
    assert study.cold == {} and study.n_fitted == 2 and study.n_cached == 1  # the aggregate is the parent
    assert study.profile.aggregate.median > 0.6
    for e in study.profile.erho2:
        assert e is not None and 0.2 < e.median <= 1.0, e


def test_leave_one_benchmark_out_through_the_engine(three):
    corpus, parent, cache = three
    t = leave_one_benchmark_out(corpus, "pooled", REAL, cache_dir=cache, parent=parent)
    assert list(t["left_out"]) == ["(none)", "b1", "b2", "b3"]
    assert t["error"].isna().all()
    assert t.attrs["n_fitted"] == 3 and t.attrs["n_cached"] == 1
    # the model ranking is the same with any benchmark left out (0.75 logits between neighbours)
    assert (t["spearman"].iloc[1:] > 0.7).all(), t[["left_out", "spearman"]]
    full = t["erho2"].iloc[0]
    assert (abs(t["erho2"].iloc[1:] - full) < 0.25).all(), t[["left_out", "erho2"]]
