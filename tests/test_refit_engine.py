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
from ddr_explorer.core.analyses.engine import RefitEngine, expected_draws, refit_key, refit_seconds, rerun_settings
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


def test_a_part_s_rows_are_summed_per_parent_cell_and_an_unseen_combination_of_seen_levels_is_an_error(corpus):
    e = RefitEngine(corpus, "per-benchmark", SETTINGS)
    d = e.design
    t = corpus.table
    # every record twice, in reverse order: each parent cell gets twice its counts
    twice = pd.concat([t, t.iloc[::-1]], ignore_index=True)
    r = e.request("twice", twice)
    np.testing.assert_array_equal(r.trials, 2 * d.trials)
    np.testing.assert_array_equal(r.successes, 2 * d.successes)
    # a parent without one (task, model, scaffold) cell: that task, model and scaffold all occur in it, but
    # a part with that cell is not a refit of it
    row = t.iloc[-1]
    gone = ((t["task"] == row.task) & (t["model"] == row.model) & (t["scaffold"] == row.scaffold)).to_numpy()
    e2 = RefitEngine(bf.corpus_of(t[~gone].reset_index(drop=True), "one cell less"), "per-benchmark", SETTINGS)
    with pytest.raises(ValueError, match=rf"task={row.task}, .*model={row.model}.*not a cell of the parent"):
        e2.request("odd", t)


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


def _parent_like(ess_min=1400.0):
    """A parent posterior's pace: 4 x (300 + 700) in 30 s of warmup and 70 s of sampling (0.025 s per
    chain-iteration), 3 s of set-up and diagnostics, smallest sigma bulk ESS ``ess_min`` of 2,800 draws."""
    import types

    table = pd.DataFrame({"ess_bulk": [ess_min, 2000.0, 2800.0]}, index=pd.Index(["task", "model", "mu"], name="term"))
    return types.SimpleNamespace(settings=SamplerSettings(stop="fixed", draws=700, warmup=300, chains=4), mu=np.zeros((4, 700)),
                                 timings={"warmup": 30.0, "sampling": 70.0, "compile": 9.0, "design": 1.0,
                                          "rough_fit": 1.0, "diagnostics": 1.0},
                                 diagnostics=types.SimpleNamespace(table=table), wall_seconds=112.0)


def test_expected_draws_from_the_parents_ess_per_draw():
    parent = _parent_like()  # 1,400 / 2,800 = 0.5 ESS per draw
    gate = SamplerSettings(draws=200, warmup=50, chains=2, stop="gate", check_every=50, max_draws=1000)
    # refits as efficient as the parent: 440 / (0.5 x 2 chains) = 440 draws per chain: the first look at or
    # after it, 200 + 5 x 50
    assert expected_draws(parent, gate, ess_ratio=1.0) == 450
    assert expected_draws(parent, dataclasses.replace(gate, chains=4), ess_ratio=1.0) == 250  # 220: the look at 250
    # half as efficient: 880 draws per chain, the look at 900
    assert expected_draws(parent, gate, ess_ratio=0.5) == 900
    assert expected_draws(_parent_like(100.0), gate) == 1000  # 4,400 needed: the ceiling
    assert expected_draws(parent, SamplerSettings(stop="fixed", draws=250, warmup=250, chains=4)) == 250  # fixed length


def test_expected_draws_of_a_refit_stopped_on_what_it_reports():
    """Its run length from the parent's ESS per draw of the reported quantity, not of the slowest component."""
    from ddr_explorer.core.model.stopping import ess_bulk, ess_tail

    class Q:  # a reported quantity: every draw independent of the last (ESS per draw about 1)
        label = "q"

        def draws(self, sigma, spec):
            return np.random.default_rng(0).normal(size=np.shape(next(iter(sigma.values()))))

    parent = _parent_like()  # its slowest component: 0.5 ESS per draw
    n_draws = parent.mu.size
    parent.sigma = {"task": np.ones_like(parent.mu)}
    x = Q().draws(parent.sigma, None)
    eff = min(ess_bulk(x), ess_tail(x)) / n_draws
    assert eng.reported_ess_per_draw(parent, [Q()]) == pytest.approx(eff)
    gate = SamplerSettings(draws=100, warmup=50, chains=4, stop="gate", check_every=50, max_draws=1000)
    need = 440 / (eff * eng.REPORTED_ESS_RATIO * 4)
    expect = 100 + 50 * max(0, int(np.ceil((need - 100) / 50)))
    assert expected_draws(parent, gate, reported=[Q()]) == expect
    assert expected_draws(parent, gate, reported=[Q()]) < expected_draws(parent, gate)  # the component rule
    # a measured correction of the draws (difficulty strata) scales the sampling, up to the ceiling
    base = refit_seconds(parent, gate, reported=[Q()], speedup=1.0)
    per = 4 * 0.025  # chain-iterations of 4 chains at 0.025 s
    assert refit_seconds(parent, gate, reported=[Q()], speedup=1.0, draws_factor=3.0) == pytest.approx(
        base + per * (min(3 * expect, 1000) - expect))


def test_refit_seconds_from_the_parents_pace():
    from ddr_explorer.core.model.refit import WARM_WARMUP

    parent = _parent_like()
    fixed = SamplerSettings(stop="fixed", draws=250, warmup=250, chains=4)
    # 4 chains x (warm warmup + 250) chain-iterations at 0.025 s, plus 3 s of set-up and diagnostics
    assert refit_seconds(parent, fixed, speedup=1.0) == pytest.approx(4 * (WARM_WARMUP + 250) * 0.025 + 3.0)
    assert refit_seconds(parent, fixed, warm=False, speedup=1.0) == pytest.approx(4 * (250 + 250) * 0.025 + 3.0)
    assert refit_seconds(parent, fixed) == pytest.approx(eng.REFIT_SPEEDUP * (4 * (WARM_WARMUP + 250) * 0.025 + 3.0))
    assert refit_seconds(parent, fixed, speedup=0.5) == pytest.approx(0.5 * (4 * (WARM_WARMUP + 250) * 0.025 + 3.0))


def test_scheduler_address_from_the_environment(monkeypatch):
    monkeypatch.delenv(eng.SCHEDULER_ENV, raising=False)
    assert eng.scheduler_address(None) is None
    monkeypatch.setenv(eng.SCHEDULER_ENV, "tcp://10.0.0.1:8786")
    assert eng.scheduler_address(None) == "tcp://10.0.0.1:8786"
    assert eng.scheduler_address("tcp://other:1") == "tcp://other:1"
    assert eng.scheduler_address("local") is None


def _failed(*, sampling: bool, quad_error=None, nodes=None):
    """A first run's posterior as rerun_settings reads it: its component diagnostics and its quadrature."""
    import types

    ok = dict(max_r_hat=1.002, min_ess_bulk=900.0, divergences=0)
    bad = dict(max_r_hat=1.03, min_ess_bulk=150.0, divergences=0)
    return types.SimpleNamespace(diagnostics=types.SimpleNamespace(**(bad if sampling else ok)),
                                 quadrature_error=quad_error, quadrature_nodes=nodes)


def test_a_rerun_changes_what_failed_more_draws_or_more_quadrature_nodes():
    gate = SamplerSettings(draws=200, warmup=300, chains=4, stop="gate", max_draws=4000)
    # the sampling failed: twice the draws, the warmup and the ceiling (as before; and without a posterior)
    s = rerun_settings(gate, _failed(sampling=True))
    assert (s.draws, s.warmup, s.max_draws, s.quadrature_nodes, s.marginalise) == (400, 600, 8000, 0, "auto")
    assert rerun_settings(gate) == s
    # only the quadrature was off (0.054 nats with 8 nodes, as on a pooled LOBO refit): the next node count,
    # the same draws (more draws cannot mend the rule's error)
    s = rerun_settings(gate, _failed(sampling=False, quad_error=0.054, nodes=8))
    assert (s.draws, s.warmup, s.max_draws, s.quadrature_nodes, s.marginalise) == (200, 300, 4000, 12, "auto")
    assert rerun_settings(gate, _failed(sampling=False, quad_error=0.06, nodes=16)).quadrature_nodes == 24
    # a posterior cached before the node count was recorded: the fewest the settings allowed was used
    assert rerun_settings(dataclasses.replace(gate, quadrature_nodes=12),
                          _failed(sampling=False, quad_error=0.06)).quadrature_nodes == 16
    # above the largest rule: the term's levels are sampled
    s = rerun_settings(gate, _failed(sampling=False, quad_error=0.06, nodes=24))
    assert (s.marginalise, s.quadrature_nodes, s.draws) == ("off", 0, 200)
    # both failed: both
    s = rerun_settings(gate, _failed(sampling=True, quad_error=0.2, nodes=8))
    assert (s.draws, s.warmup, s.quadrature_nodes) == (400, 600, 12)
    # the quadrature within its tolerance is no reason
    assert rerun_settings(gate, _failed(sampling=False, quad_error=0.01, nodes=8)).quadrature_nodes == 0
    # a verdict on reported quantities decides whether the sampling failed
    assert rerun_settings(gate, _failed(sampling=True, quad_error=0.06, nodes=8), sampling=False).draws == 200


def test_a_refit_whose_quadrature_was_off_is_rerun_with_more_nodes_and_the_same_draws(fake_sampler, corpus,
                                                                                       tmp_path, monkeypatch):
    import ddr_explorer.core.model.sampler as sampler

    fitted = []

    def off_with_eight_nodes(data, spec="per-benchmark", settings=None, progress=None, cancel=None):
        post = bf.moment_fit(data, spec, settings, progress, cancel)
        # as a sampler that integrated a term: off at the posterior with 8 nodes, accurate with 12
        post.integrated, post.quadrature_nodes = ["task:model"], settings.quadrature_nodes or 8
        post.quadrature_error = 0.054 if post.quadrature_nodes == 8 else 0.004
        from ddr_explorer.core.model.diagnostics import diagnose

        post.diagnostics = diagnose(post)
        fitted.append(post)
        return post

    monkeypatch.setattr(sampler, "fit", off_with_eight_nodes)
    enough = SamplerSettings(stop="fixed", draws=400, warmup=10, chains=2, seed=1)  # i.i.d. stand-in draws: ESS ~800
    models = corpus.table["model"].astype(str)
    job = FitJob("without m00", sub_corpus(corpus, (models != "m00").to_numpy(), "m00"))
    out = RefitEngine(corpus, "per-benchmark", enough, cache_dir=tmp_path).run([job])
    post = out.results[0].posterior
    assert out.rerun == ["without m00"] and out.n_converged == 1
    assert post.settings.quadrature_nodes == 12 and post.settings.draws == 400 and post.quadrature_error == 0.004
    assert post.diagnostics.converged and post is fitted[1]
    # the first run: sampled well (ESS, R-hat), its quadrature off; its verdict says how to mend it
    assert [p.settings.quadrature_nodes for p in fitted] == [0, 12]
    assert fitted[0].diagnostics.problems == [
        "the quadrature that integrates task:model out is off by 0.054 nats at the posterior (> 0.05): refit with "
        "more nodes (--quadrature-nodes 12) or marginalise = off (--marginalise off)"]


def test_an_interrupted_run_keeps_every_refit_finished_before_it(fake_sampler, corpus, tmp_path):
    # a `ddr report` stopped (timeout, Ctrl-C, Cancel) after two of three refits: both stay in the cache,
    # and the rerun samples only the third
    models = corpus.table["model"].astype(str)
    jobs = [FitJob("all", corpus)] + [FitJob(f"without {m}", sub_corpus(corpus, (models != m).to_numpy(), m))
                                      for m in ("m00", "m01", "m02")]
    e = RefitEngine(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path)
    e.run([jobs[0]])  # the parent, cached
    fake_sampler.clear()
    with pytest.raises(FitCancelled):
        e.run(jobs, cancel=lambda: len(fake_sampler) >= 2)
    assert len(fake_sampler) == 2
    again = RefitEngine(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path)
    assert again.to_sample(jobs) == ["without m02"]
