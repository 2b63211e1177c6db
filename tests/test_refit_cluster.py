"""Refits on a Dask cluster (core/analyses/cluster.py): a LocalCluster of 2 worker processes gives the same
posteriors as the in-process engine for the same seeds, the workers write through the cache contract, and
Cancel cancels every future.  The real sampler runs on the workers for the equality test (tiny data, few
draws); the plumbing tests install the moment stand-in of ``batch_fakes`` on the workers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.analyses.engine import RefitEngine
from ddr_explorer.core.analyses.heldout import held_out_study, split_cells
from ddr_explorer.core.analyses.refits import FitJob, sub_corpus
from ddr_explorer.core.cache import FitCache, read_fit_file
from ddr_explorer.core.model import FitCancelled, SamplerSettings

import ddr_batch_fakes as bf  # noqa: E402 - registered by tests/conftest.py

distributed = pytest.importorskip("distributed")

SETTINGS = SamplerSettings(stop="fixed", draws=40, warmup=10, chains=2, seed=1)
REAL = SamplerSettings(stop="fixed", draws=60, warmup=60, chains=2, seed=7, chunk_size=60, collapsed="off", scale_steps=0,
                       device="cpu")


@pytest.fixture(scope="module")
def cluster():
    import sys

    import cloudpickle
    from distributed import Client, LocalCluster

    # the workers cannot import this test module: its helpers travel by value
    cloudpickle.register_pickle_by_value(sys.modules[__name__])

    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                      silence_logs=40) as lc, Client(lc) as client:
        yield lc, client


def _install_stand_in():
    """On a worker: the moment stand-in in place of the NUTS sampler (as the fake_sampler fixture does here)."""
    import importlib.util
    import sys
    from pathlib import Path

    import ddr_explorer
    import ddr_explorer.core.model.refit as refit
    import ddr_explorer.core.model.sampler as sampler

    root = Path(ddr_explorer.__file__).resolve().parents[1]
    if "ddr_batch_fakes" not in sys.modules:
        spec = importlib.util.spec_from_file_location("ddr_batch_fakes", root / "tests" / "batch_fakes.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
    sampler.fit = sys.modules["ddr_batch_fakes"].moment_fit
    refit.fit_refits = sys.modules["ddr_batch_fakes"].cold_fit_refits
    return True


def _remove_stand_in():
    import importlib

    import ddr_explorer.core.model.refit as refit
    import ddr_explorer.core.model.sampler as sampler

    importlib.reload(sampler)
    importlib.reload(refit)
    return True


@pytest.fixture(scope="module")
def corpus():
    sim = bf.simulate_module().simulate_per_benchmark(n_tasks=12, n_models=5, n_scaffolds=2, n_pairs=8,
                                                      trials_per_cell=2, seed=4)
    return bf.corpus_of(sim.table, "sim")


def test_held_out_on_the_cluster_equals_in_process_and_workers_write_the_cache(fake_sampler, cluster, corpus,
                                                                             tmp_path):
    lc, client = cluster
    client.run(_install_stand_in)
    try:
        here = held_out_study(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path / "local", n_splits=3)
        there = held_out_study(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path / "cluster", n_splits=3,
                               scheduler=lc.scheduler_address)
    finally:
        client.run(_remove_stand_in)
    np.testing.assert_array_equal(here.result.projected, there.result.projected)
    np.testing.assert_array_equal(here.result.held_out, there.result.held_out)
    assert there.n_fitted == here.n_fitted and there.n_rerun == here.n_rerun
    # every refit file is a complete, verified cache file under the same key as in-process
    local = sorted(p.name for p in (tmp_path / "local").glob("*.h5"))
    remote = sorted(p.name for p in (tmp_path / "cluster").glob("*.h5"))
    assert local == remote and len(local) == 12
    for p in (tmp_path / "cluster").glob("*.h5"):
        read_fit_file(p)


def test_cancel_cancels_every_future(cluster, corpus, tmp_path):
    lc, client = cluster
    client.run(_install_stand_in)
    try:
        e = RefitEngine(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path, scheduler=lc.scheduler_address)
        models = corpus.table["model"].astype(str)
        jobs = [FitJob(m, sub_corpus(corpus, (models != m).to_numpy(), m)) for m in ("m00", "m01", "m02")]
        with pytest.raises(FitCancelled, match="futures cancelled"):
            e.run(jobs, cancel=lambda: True if _planned_all(jobs) else False)
    finally:
        client.run(_remove_stand_in)
    assert not list(tmp_path.glob("*.h5"))


_calls = []


def _planned_all(jobs):
    # let the planning polls pass (one per job), then cancel while the futures wait
    _calls.append(1)
    return len(_calls) > len(jobs)


@pytest.mark.slow
def test_real_sampler_refits_on_two_worker_processes_equal_the_in_process_ones(cluster, tmp_path):
    lc, _ = cluster
    rng = np.random.default_rng(2)
    rows = [("b", f"t{t}", f"m{m}", "s", int(rng.binomial(4, 1 / (1 + np.exp(-(m - 1.5) * 0.8)))), 4)
            for t in range(6) for m in range(4)]
    corpus = bf.corpus_of(pd.DataFrame(rows, columns=["benchmark", "task", "model", "scaffold", "successes",
                                                      "trials"]), "tiny")
    parts = [split_cells(corpus.table, np.random.default_rng([0, i]))[0] for i in range(1)]
    jobs = [FitJob(f"split {i}", sub_corpus(corpus, p, f"split {i}"), "per-benchmark") for i, p in enumerate(parts)]
    # the refits themselves (the gate's rerun would only double the sampling on both sides)
    here = RefitEngine(corpus, "per-benchmark", REAL, cache_dir=tmp_path / "a", rerun_unconverged=False).run(jobs)
    there = RefitEngine(corpus, "per-benchmark", REAL, cache_dir=tmp_path / "b", scheduler=lc.scheduler_address,
                        batch_size=1, rerun_unconverged=False).run(jobs)
    for a, b in zip(here.results, there.results):
        assert a.key == b.key
        for t in a.posterior.sigma:
            np.testing.assert_array_equal(a.posterior.sigma[t], b.posterior.sigma[t])
        np.testing.assert_array_equal(a.posterior.mu, b.posterior.mu)
    assert FitCache(tmp_path / "b").load(there.results[0].key)[0] is not None


class _SlowStandIn(distributed.WorkerPlugin):
    """A worker plugin: the moment stand-in of the refits on every worker, new ones included (a
    killed worker's nanny starts a fresh process), each batch first leaving a marker file named by
    its worker's PID and then taking ``seconds`` (so that a test can kill the worker mid-batch)."""

    name = "ddr-slow-stand-in"

    def __init__(self, marker_dir: str, seconds: float):
        self.marker_dir, self.seconds = marker_dir, seconds

    def setup(self, worker=None):
        import os
        import sys
        import time
        from pathlib import Path

        import ddr_explorer.core.model.refit as refit

        _install_stand_in()
        cold = sys.modules["ddr_batch_fakes"].cold_fit_refits
        marker_dir, seconds = self.marker_dir, self.seconds

        def slow(design, spec, requests, settings=None, **kw):
            for r in requests:
                Path(marker_dir, f"{os.getpid()}_{r.label}_{time.time_ns()}").write_text("")
            time.sleep(seconds)
            return cold(design, spec, requests, settings, **kw)

        refit.fit_refits = slow

    def teardown(self, worker=None):
        _remove_stand_in()


def test_a_lost_workers_refits_are_resubmitted(fake_sampler, cluster, corpus, tmp_path):
    """A worker process killed (SIGKILL) in the middle of a batch: every refit still arrives, equal to the
    in-process one (the scheduler reschedules the lost worker's future; the engine sees nothing)."""
    import os
    import signal

    lc, client = cluster
    models = corpus.table["model"].astype(str)
    jobs = [FitJob(m, sub_corpus(corpus, (models != m).to_numpy(), m)) for m in ("m00", "m01", "m02", "m03")]
    here = RefitEngine(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path / "local",
                       rerun_unconverged=False).run(jobs)
    markers = tmp_path / "markers"
    markers.mkdir()
    killed: list[int] = []

    def kill_one_mid_batch():
        # polled by the engine while it waits on the futures: kill the first worker seen at work, once
        if not killed:
            started = sorted(markers.iterdir())
            if started:
                pid = int(started[0].name.split("_")[0])
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        return False

    client.register_plugin(_SlowStandIn(str(markers), 3.0))
    try:
        there = RefitEngine(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path / "cluster",
                            scheduler=lc.scheduler_address, batch_size=1,
                            rerun_unconverged=False).run(jobs, cancel=kill_one_mid_batch)
    finally:
        client.unregister_worker_plugin(_SlowStandIn.name)
        client.wait_for_workers(2, timeout=60)
    assert killed, "no worker was seen at work"
    # the killed worker's refit started again in another worker process
    starts = [m.name.split("_") for m in markers.iterdir()]
    lost = {label for pid, label, _ in starts if int(pid) == killed[0]}
    again = {label for pid, label, _ in starts if int(pid) != killed[0]}
    assert lost and lost <= again, (lost, again)
    assert [r is not None for r in there.results] == [True] * len(jobs) and not there.errors
    for a, b in zip(here.results, there.results):
        assert a.key == b.key
        for t in a.posterior.sigma:
            np.testing.assert_array_equal(a.posterior.sigma[t], b.posterior.sigma[t])
        np.testing.assert_array_equal(a.posterior.mu, b.posterior.mu)


def test_loo_refit_of_the_whole_corpus_runs_on_the_cluster(fake_sampler, cluster, corpus, tmp_path):
    """PSIS-LOO's refit (every effect kept, not cached) goes to the cluster with the others, and equals the
    in-process one."""
    lc, client = cluster
    here = RefitEngine(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path).refit_whole()
    client.run(_install_stand_in)
    try:
        seen = []
        there = RefitEngine(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path,
                            scheduler=lc.scheduler_address).refit_whole(progress=lambda *a: seen.append(a[0]))
    finally:
        client.run(_remove_stand_in)
    assert "refit on the cluster" in seen
    assert set(there.random_effects) == set(here.random_effects)
    for t in here.sigma:
        np.testing.assert_array_equal(here.sigma[t], there.sigma[t])
    for t in here.random_effects:
        np.testing.assert_array_equal(here.random_effects[t], there.random_effects[t])
