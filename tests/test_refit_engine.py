"""The refit engine (core/analyses/engine.py): jobs -> requests on the parent's cells, one fit_refits call
for all pending refits, the cache (a rerun samples nothing), the convergence gate's rerun, cold fallbacks,
progress and cancel.  Sampler: the moment stand-in of ``batch_fakes`` (draws known by hand)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.analyses import engine as eng
from ddr_explorer.core.analyses.engine import RefitEngine, estimate_seconds, refit_key, rerun_settings
from ddr_explorer.core.analyses.heldout import split_cells
from ddr_explorer.core.analyses.refits import FitJob, sub_corpus
from ddr_explorer.core.model import FitCancelled, SamplerSettings

import ddr_batch_fakes as bf  # noqa: E402 - registered by tests/conftest.py

SETTINGS = SamplerSettings(stop="fixed", draws=40, warmup=10, chains=2, seed=1)


@pytest.fixture(scope="module")
def corpus():
    sim = bf.simulate_module().simulate_per_benchmark(n_tasks=12, n_models=5, n_scaffolds=2, n_pairs=8,
                                                      trials_per_cell=2, seed=4)
    return bf.corpus_of(sim.table, "sim")


def _three_benchmarks():
    parts = []
    for b, seed in (("b1", 1), ("b2", 2), ("b3", 3)):
        sim = bf.simulate_module().simulate_per_benchmark(n_tasks=6, n_models=4, n_scaffolds=2, n_pairs=8,
                                                          trials_per_cell=2, seed=seed, benchmark=b)
        parts.append(sim.table.astype({c: str for c in ("benchmark", "task", "model", "scaffold")}))
    return bf.corpus_of(pd.concat(parts, ignore_index=True), "three")


def test_a_split_maps_to_per_cell_counts_that_add_up_to_the_parent(corpus):
    e = RefitEngine(corpus, "per-benchmark", SETTINGS)
    train, held = split_cells(corpus.table, np.random.default_rng([0, 3]))
    a, b = e.request("train", train), e.request("held", held)
    d = e.design
    np.testing.assert_array_equal(a.trials + b.trials, d.trials)
    np.testing.assert_array_equal(a.successes + b.successes, d.successes)
    # cell by cell, by facet keys: the first training row lands on its own parent cell
    row = train.iloc[0]
    hit = ((d.cells["task"].astype(str) == str(row.task)) & (d.cells["model"].astype(str) == str(row.model))
           & (d.cells["scaffold"].astype(str) == str(row.scaffold)))
    assert a.trials[hit.to_numpy()].item() == row.trials and a.successes[hit.to_numpy()].item() == row.successes


def test_a_cell_not_in_the_parent_is_a_clear_error(corpus):
    e = RefitEngine(corpus, "per-benchmark", SETTINGS)
    t = corpus.table.head(3).copy()
    t["task"] = t["task"].astype(str)
    t.loc[t.index[0], "task"] = "no-such-task"
    with pytest.raises(ValueError, match=r"task=no-such-task.*not a cell of the parent"):
        e.request("odd part", t)


def test_all_pending_refits_go_to_fit_refits_in_one_call_and_a_rerun_samples_nothing(fake_sampler, corpus,
                                                                                     tmp_path, monkeypatch):
    import ddr_explorer.core.model.refit as refit

    calls = []
    real = refit.fit_refits

    def counting(design, spec, requests, settings=None, **kw):
        calls.append((len(requests), settings.draws))
        return real(design, spec, requests, settings, **kw)

    monkeypatch.setattr(refit, "fit_refits", counting)
    models = corpus.table["model"].astype(str)
    jobs = [FitJob("all", corpus)] + [FitJob(f"without {m}", sub_corpus(corpus, (models != m).to_numpy(), m))
                                      for m in ("m00", "m01", "m02")]
    e = RefitEngine(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path)
    first = e.run(jobs)
    assert first.kinds == ["parent", "refit", "refit", "refit"]
    # the stand-in's 80 draws never reach bulk ESS 400: each refit is rerun once with twice the draws
    assert calls == [(3, 40), (3, 80)]
    assert first.rerun == ["without m00", "without m01", "without m02"] and first.n_converged == 0
    assert first.n_fitted == 1 + 3 + 3 and first.n_fits == 4
    assert first.results[1].posterior.settings.draws == 80  # the rerun replaces the first refit
    calls.clear()
    fake_sampler.clear()
    again = RefitEngine(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path).run(jobs)
    assert calls == [] and fake_sampler == [] and again.n_fitted == 0
    for a, b in zip(first.results, again.results):
        assert b.from_cache and b.key == a.key
        np.testing.assert_array_equal(a.posterior.sigma["model"], b.posterior.sigma["model"])


def test_a_refit_reads_like_the_cold_fit_of_its_part(fake_sampler, corpus, tmp_path):
    models = corpus.table["model"].astype(str)
    part = sub_corpus(corpus, (models != "m00").to_numpy(), "without m00")
    r = RefitEngine(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path).run([FitJob("w", part)]).results[0]
    cold = bf.moment_fit(part, "per-benchmark", rerun_settings(SETTINGS))
    assert "m00" not in set(r.posterior.levels["model"]["model"].astype(str))
    assert r.posterior.n_trials == part.n_trials and r.posterior.n_cells == cold.n_cells
    np.testing.assert_allclose(np.median(r.posterior.sigma["model"]), np.median(cold.sigma["model"]), rtol=1e-6)


def test_the_key_is_the_parent_the_counts_and_the_settings(corpus):
    e = RefitEngine(corpus, "per-benchmark", SETTINGS)
    train, held = split_cells(corpus.table, np.random.default_rng([0, 1]))
    a, b = e.request("a", train), e.request("b", held)
    k = refit_key(e.parent_key, a, SETTINGS)
    assert k == refit_key(e.parent_key, e.request("a again", train), SETTINGS)
    assert k != refit_key(e.parent_key, b, SETTINGS)
    assert k != refit_key(e.parent_key, a, dataclasses.replace(SETTINGS, seed=2))
    assert k != refit_key("0" * 64, a, SETTINGS)


def test_a_part_that_needs_other_terms_is_fitted_cold_and_said_so(fake_sampler, tmp_path):
    three = _three_benchmarks()
    bench = three.table["benchmark"].astype(str)
    only_b1 = sub_corpus(three, (bench == "b1").to_numpy(), "only b1")
    two = sub_corpus(three, (bench != "b3").to_numpy(), "without b3")
    e = RefitEngine(three, "pooled", SETTINGS, cache_dir=tmp_path)
    out = e.run([FitJob("only b1 pooled", only_b1, "pooled"), FitJob("only b1 per-benchmark", only_b1, "per-benchmark"),
                 FitJob("without b3", two, "pooled")])
    assert out.kinds == ["cold", "cold", "refit"]
    assert "cannot separate" in out.cold["only b1 pooled"]
    assert "fitted with" in out.cold["only b1 per-benchmark"]
    assert "without b3" not in out.cold


def test_progress_covers_the_whole_batch_and_cancel_stops_it(fake_sampler, corpus, tmp_path):
    models = corpus.table["model"].astype(str)
    jobs = [FitJob(f"without {m}", sub_corpus(corpus, (models != m).to_numpy(), m)) for m in ("m00", "m01")]
    events = []
    e = RefitEngine(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path)
    e.run(jobs, progress=lambda *a: events.append(a), what="test batch")
    assert events[-1] == ("test batch done", 4, 4, 0.0)  # 2 refits + their 2 gate reruns
    assert all(0 <= ev[1] <= ev[2] for ev in events)
    with pytest.raises(FitCancelled):
        RefitEngine(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path / "other").run(jobs, cancel=lambda: True)


def test_estimate_scales_the_parent_time_by_data_share_and_sampler_work():
    parent = SamplerSettings(stop="fixed", draws=700, warmup=300, chains=4)
    split = SamplerSettings(stop="fixed", draws=250, warmup=250, chains=2)
    # 100 s parent; a 70% part at 2 x 500 / (4 x 1000) of the work: 100 * 0.7 * 0.25 = 17.5 s
    assert estimate_seconds(100.0, parent, [(0.7, split)], speedup=1.0) == pytest.approx(17.5)
    # a tiny part costs at least 20% of the parent's time per unit of work (compile, adaptation)
    assert estimate_seconds(100.0, parent, [(0.01, parent)], speedup=0.5) == pytest.approx(10.0)


def test_scheduler_address_from_the_environment(monkeypatch):
    monkeypatch.delenv(eng.SCHEDULER_ENV, raising=False)
    assert eng.scheduler_address(None) is None
    monkeypatch.setenv(eng.SCHEDULER_ENV, "tcp://10.0.0.1:8786")
    assert eng.scheduler_address(None) == "tcp://10.0.0.1:8786"
    assert eng.scheduler_address("tcp://other:1") == "tcp://other:1"
    assert eng.scheduler_address("local") is None
