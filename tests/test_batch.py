"""The batch runner: every fit through the HDF5 cache (a rerun samples nothing), one progress
callback, cooperative cancellation.  The sampler is the moment stand-in of ``batch_fakes``."""

from __future__ import annotations

import numpy as np
import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.analyses.refits import FitJob, coefficient_draws, cold_fits, sub_corpus
from ddr_explorer.core.dstudy import observed_design
from ddr_explorer.core.model import FitCancelled, SamplerSettings


import ddr_batch_fakes as bf  # noqa: E402 - registered by tests/conftest.py

SETTINGS = SamplerSettings(stop="fixed", draws=40, warmup=10, chains=2, seed=1)



@pytest.fixture(scope="module")
def corpus():
    sim = bf.simulate_module().simulate_per_benchmark(n_tasks=12, n_models=5, n_scaffolds=2, n_pairs=8,
                                                      trials_per_cell=2, seed=4)
    return bf.corpus_of(sim.table, "sim")


def _jobs(corpus):
    models = corpus.table["model"].astype(str)
    return [FitJob("all", corpus), *(FitJob(f"without {m}", sub_corpus(corpus, (models != m).to_numpy(),
                                                                       f"sim-{m}")) for m in ("m00", "m01"))]


def test_rerun_with_the_same_inputs_performs_no_new_fit(fake_sampler, corpus, tmp_path):
    first = cold_fits(_jobs(corpus), SETTINGS, cache_dir=tmp_path)
    assert (first.n_fitted, first.n_cached) == (3, 0) and len(fake_sampler) == 3
    fake_sampler.clear()
    again = cold_fits(_jobs(corpus), SETTINGS, cache_dir=tmp_path)
    assert (again.n_fitted, again.n_cached) == (0, 3) and fake_sampler == []
    for a, b in zip(first.results, again.results):
        assert b.from_cache and b.key == a.key
        np.testing.assert_array_equal(a.posterior.sigma["model"], b.posterior.sigma["model"])


def test_progress_counts_jobs_and_ends_at_n(fake_sampler, corpus, tmp_path):
    events = []
    cold_fits(_jobs(corpus), SETTINGS, cache_dir=tmp_path, progress=lambda *a: events.append(a))
    assert events[0][:3] == ("all", 0, 3)
    assert ("without m00: sampling", 1, 3) in [e[:3] for e in events]
    assert events[-1] == ("batch done", 3, 3, 0.0)
    assert all(e[3] is None or e[3] >= 0 for e in events)


def test_cancel_before_and_between_fits(fake_sampler, corpus, tmp_path):
    with pytest.raises(FitCancelled, match="fit 1 of 3"):
        cold_fits(_jobs(corpus), SETTINGS, cache_dir=tmp_path, cancel=lambda: True)
    assert fake_sampler == []
    polls = []

    def cancel_after_first_fit():
        polls.append(1)
        return len(fake_sampler) >= 1

    with pytest.raises(FitCancelled, match="without m00"):
        cold_fits(_jobs(corpus), SETTINGS, cache_dir=tmp_path, cancel=cancel_after_first_fit)
    assert len(fake_sampler) == 1  # the first fit finished and is cached
    rerun = cold_fits(_jobs(corpus)[:1], SETTINGS, cache_dir=tmp_path)
    assert rerun.n_cached == 1


def test_failed_job_is_skipped_with_its_message(fake_sampler, corpus, tmp_path):
    one = sub_corpus(corpus, (corpus.table["task"].astype(str) == "t000").to_numpy(), "one task")
    bad = FitJob("bad formula", one, "y ~ 1 + (1|nosuchfacet)")
    out = cold_fits([FitJob("all", corpus), bad], SETTINGS, cache_dir=tmp_path, skip_failed=True)
    assert out.results[1] is None and "nosuchfacet" in out.errors["bad formula"]
    with pytest.raises(ValueError, match="nosuchfacet"):
        cold_fits([bad], SETTINGS, cache_dir=tmp_path)


def test_coefficient_of_the_observed_design_is_the_hand_formula(fake_sampler, corpus, tmp_path):
    post = cold_fits([FitJob("all", corpus)], SETTINGS, cache_dir=tmp_path).results[0].posterior
    d = observed_design(corpus)
    assert (d.n_tasks, d.n_scaffolds, d.n_benchmarks, d.n_replicates) == (12, 2, 1, 2)
    expected = bf.erho2_model(bf.moment_sigma_model(corpus.table), 12, 2, 2)
    assert np.median(coefficient_draws(post, d)) == pytest.approx(expected, abs=2e-3)


def test_empty_part_is_a_clear_error(corpus):
    with pytest.raises(ValueError, match="empty"):
        sub_corpus(corpus, np.zeros(len(corpus.table), bool), "nothing")


def test_eta_before_any_fit_finishes_counts_the_jobs_left(monkeypatch, corpus, tmp_path):
    import ddr_explorer.core.model.sampler as sampler

    def slow_start(data, spec="per-benchmark", settings=None, progress=None, cancel=None):
        progress("warmup", 0, 10, 10.0)  # the sampler's own ETA for the running fit: 10 s
        return bf.moment_fit(data, spec, settings, progress, cancel)

    monkeypatch.setattr(sampler, "fit", slow_start)
    events = []
    cold_fits(_jobs(corpus), SETTINGS, cache_dir=tmp_path, progress=lambda *a: events.append(a))
    first = next(e for e in events if e[0] == "all: warmup")
    # 10 s left of this fit, and two more fits of at least 10 s each
    assert 30.0 <= first[3] < 31.0
