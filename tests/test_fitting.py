"""fit_corpus through the cache (an ArviZ netCDF file): a hit reopens the draws; a damaged or old file is refitted."""

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
SETTINGS = SamplerSettings(stop="fixed", draws=60, warmup=60, chains=2, seed=2, chunk_size=30)


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
    # a fixed-length fit is stored without the gate's fields; it reads back as fixed, not as the default gate
    assert b.posterior.settings == SETTINGS and b.posterior.settings.stop == "fixed"
    assert SamplerSettings().stop == "gate"


def test_other_settings_are_another_key(corpus, first):
    cache, a = first
    other = fit_corpus(corpus, "per-benchmark", SamplerSettings(stop="fixed", draws=60, warmup=60, chains=2, seed=3,
                                                                chunk_size=30), cache_dir=cache)
    assert other.key != a.key and not other.from_cache


def test_a_node_floor_is_part_of_the_key_only_when_set(corpus):
    # the default (0: the fewest nodes that pass) leaves the keys of fits cached before the setting existed
    from ddr_explorer.core.fitting import _settings_dict, fit_key
    from ddr_explorer.core.model.formula import as_spec

    import dataclasses

    spec = as_spec("per-benchmark")
    assert "quadrature_nodes" not in _settings_dict(SETTINGS)
    twelve = dataclasses.replace(SETTINGS, quadrature_nodes=12)
    assert _settings_dict(twelve)["quadrature_nodes"] == 12
    assert fit_key(corpus, spec, twelve) != fit_key(corpus, spec, SETTINGS)


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


ARVIZ_ONLY = """
import json, sys
import arviz as az
idata = az.from_netcdf(sys.argv[1])
post = idata.posterior
summ = az.summary(idata, var_names=["sigma", "mu"], kind="stats")
import matplotlib
matplotlib.use("Agg")
axes = az.plot_trace(idata, var_names=["sigma"], compact=False)
print(json.dumps({
    "groups": list(idata.groups()),
    "sigma_dims": list(post["sigma"].dims), "terms": [str(t) for t in post["term"].values],
    "u_dims": list(post["u_model"].dims), "models": [str(m) for m in post["model_level"].values],
    "u_pairs": [str(m) for m in post["model__scaffold_level"].values],
    "stats": sorted(idata.sample_stats.data_vars),
    "trace_rows": int(axes.shape[0]),
    "summary_index": list(summ.index), "summary_mean": [float(x) for x in summ["mean"]],
    "modules": sorted(m for m in sys.modules if m.startswith("ddr"))}))
"""


def test_the_cache_file_opens_with_arviz_alone(first):
    """A separate process that imports only ArviZ reads the file with names and coordinates."""
    import json
    import subprocess

    _, a = first
    out = subprocess.run([sys.executable, "-c", ARVIZ_ONLY, str(a.cache_path)], capture_output=True, text=True,
                         timeout=300, cwd=a.cache_path.parent)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    post = a.posterior
    assert got["modules"] == []  # no project import in that process
    assert {"posterior", "sample_stats"} <= set(got["groups"])
    assert got["sigma_dims"] == ["chain", "draw", "term"] and got["terms"] == list(post.sigma)
    assert got["u_dims"] == ["chain", "draw", "model_level"]
    assert got["models"] == post.levels["model"]["model"].astype(str).tolist()
    assert got["u_pairs"] == ["|".join(r) for r in post.levels["model:scaffold"].astype(str).itertuples(index=False)]
    assert {"diverging", "energy", "n_steps", "tree_depth", "acceptance_rate", "step_size", "lp"} <= set(got["stats"])
    assert got["summary_index"] == [f"sigma[{t}]" for t in post.sigma] + ["mu"]
    assert got["trace_rows"] == len(post.sigma)  # az.plot_trace: one row per term
    want = [float(np.mean(post.sigma[t])) for t in post.sigma] + [float(np.mean(post.mu))]
    np.testing.assert_allclose(got["summary_mean"], want, rtol=1e-3, atol=1e-3)  # summary rounds to 3 decimals


def test_sample_stats_and_effects_come_back_under_their_own_keys(corpus, first):
    cache, a = first
    b = fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=cache)
    assert b.from_cache
    assert set(b.posterior.sample_stats) == set(a.posterior.sample_stats)
    for k, v in a.posterior.sample_stats.items():
        np.testing.assert_array_equal(b.posterior.sample_stats[k], v, err_msg=k)
    assert set(b.posterior.random_effects) == {t for t in a.posterior.random_effects if "task" not in t.split(":")}
    for t, u in b.posterior.random_effects.items():
        np.testing.assert_array_equal(u, np.asarray(a.posterior.random_effects[t], dtype=np.float32))
        assert b.posterior.levels[t].equals(a.posterior.levels[t].astype(str))
    np.testing.assert_array_equal(b.posterior.mu, a.posterior.mu)


def test_an_old_format_cache_file_is_refitted_once_with_a_message(corpus, first, tmp_path):
    import h5py

    from ddr_explorer.core.cache import FitCache
    from ddr_explorer.core.fitting import fit_key
    from ddr_explorer.core.design.presets import supported_spec
    from ddr_explorer.core.model.formula import as_spec

    _, a = first
    old_key = fit_key(corpus, supported_spec(corpus, as_spec("per-benchmark")).spec, SETTINGS,
                      format_version=1)
    old_path = FitCache(tmp_path).path_for(old_key)
    with h5py.File(old_path, "w") as f:  # the layout format version 1 wrote
        f.attrs["format"] = "ddr-explorer-fit"
        f.attrs["format_version"] = 1
        f.attrs["key"] = old_key
        f.attrs["meta"] = "{}"
        f.create_dataset("posterior/mu", data=np.asarray(a.posterior.mu))
        f.create_group("complete").attrs["n_arrays"] = 1
    c = fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path)
    assert not c.from_cache and "old-format file" in c.cache_problem and str(old_path) in c.cache_problem
    assert not old_path.exists() and c.cache_path.exists()
    np.testing.assert_array_equal(c.posterior.mu, a.posterior.mu)  # same seed, same draws
    d = fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path)
    assert d.from_cache and d.cache_problem is None  # refitted once
