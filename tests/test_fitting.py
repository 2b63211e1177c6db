"""fit_corpus through the HDF5 cache: a hit reopens the same draws; a damaged file is refitted."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.corpus.validate import build_corpus
from ddr_explorer.core.dstudy import observed_design
from ddr_explorer.core.fitting import (components_from_posterior, fit_corpus,
                                       theta_from_posterior)
from ddr_explorer.core.model import SamplerSettings

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = SamplerSettings(draws=60, warmup=60, chains=2, seed=2, chunk_size=30)


@pytest.fixture(scope="module")
def corpus():
    spec = importlib.util.spec_from_file_location("ddr_bench_simulate", ROOT / "bench" / "simulate.py")
    sim = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = sim  # dataclasses look their module up while the class is built
    spec.loader.exec_module(sim)
    table = sim.simulate_per_benchmark(n_tasks=20, n_models=6, n_scaffolds=3, n_pairs=10, trials_per_cell=2,
                                       seed=9).table
    return build_corpus(table, file=None, format="simulated")


@pytest.fixture(scope="module")
def first(corpus, tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    return cache, fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=cache)


def test_second_fit_is_a_cache_hit_with_identical_draws(corpus, first):
    cache, a = first
    assert not a.from_cache and a.cache_path.exists()
    b = fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=cache)
    assert b.from_cache and b.cache_problem is None and b.key == a.key
    for term in a.posterior.sigma:
        np.testing.assert_array_equal(b.posterior.sigma[term], a.posterior.sigma[term])
    np.testing.assert_array_equal(b.posterior.random_effects["model"], a.posterior.random_effects["model"])
    assert b.posterior.diagnostics.max_r_hat == pytest.approx(a.posterior.diagnostics.max_r_hat)
    assert "task:model" not in b.posterior.random_effects  # task-level effects are not cached


def test_other_settings_are_another_key(corpus, first):
    cache, a = first
    other = fit_corpus(corpus, "per-benchmark", SamplerSettings(draws=60, warmup=60, chains=2, seed=3,
                                                                chunk_size=30), cache_dir=cache)
    assert other.key != a.key and not other.from_cache


def test_damaged_cache_file_is_refitted_with_a_message(corpus, first):
    cache, a = first
    data = a.cache_path.read_bytes()
    a.cache_path.write_bytes(data[: len(data) // 3])
    c = fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=cache)
    assert not c.from_cache and "refitting" in c.cache_problem
    np.testing.assert_array_equal(c.posterior.sigma["model"], a.posterior.sigma["model"])  # same seed


def test_components_theta_and_design_from_a_fit(corpus, first):
    _, a = first
    comps = components_from_posterior(a.posterior)
    assert set(comps.terms) == set(a.posterior.sigma)
    np.testing.assert_allclose(comps.draws["model"], np.asarray(a.posterior.sigma["model"]).reshape(-1) ** 2,
                               rtol=1e-6)
    theta, names = theta_from_posterior(a.posterior, "model")
    assert theta.shape == (120, 6) and len(names) == 6
    system, pairs = theta_from_posterior(a.posterior, "system")
    assert system.shape[1] == corpus.n_levels("agent") and all(" / " in p for p in pairs)
    d = observed_design(corpus)
    assert d.n_tasks == 20 and d.n_benchmarks == 1 and d.n_replicates == 2
