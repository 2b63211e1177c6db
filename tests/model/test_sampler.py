"""The NUTS sampler: recovery of known variance components, determinism, progress,
cancellation and the convergence verdict.

Every new corpus or program-shaping setting compiles a NUTS kernel (about 10 s on 2 cores, against
half a second of sampling for these corpora), so the file compiles two: the recovery corpus with
``SETTINGS`` (shared through module-scoped fixtures) and ``tiny_corpus`` with ``TINY``, which every
test of what a fit does (flags, compiled programs, memory) reuses from the disk cache.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import ddr_explorer.core.model as M  # before jax: parallel CPU chains
from ddr_explorer.core.model import FitCancelled, SamplerSettings, fit

ROOT = Path(__file__).resolve().parents[2]


def _simulate_module():
    spec = importlib.util.spec_from_file_location("ddr_bench_simulate", ROOT / "bench" / "simulate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


TRUTH = {"task": 1.5, "model": 1.0, "scaffold": 0.5, "task:model": 0.8, "task:scaffold": 0.6,
         "model:scaffold": 0.4}
SETTINGS = SamplerSettings(stop="fixed", draws=150, warmup=150, chains=2, seed=11, chunk_size=50)
#: The shortest run there is, for the tests of what a fit does rather than what it finds.  They all fit
#: ``tiny_corpus`` with these settings (another seed at most: it is an argument of the compiled program),
#: so the first compiles the two samplers and the others read them from the disk cache.
TINY = SamplerSettings(stop="fixed", draws=10, warmup=10, chains=2, chunk_size=10)


@pytest.fixture(scope="module")
def corpus():
    sim = _simulate_module().simulate_per_benchmark(n_tasks=40, n_models=8, n_scaffolds=4, n_pairs=16,
                                                    trials_per_cell=3, sigmas=TRUTH, mu=-0.3, seed=5)
    return sim.table


@pytest.fixture(scope="module")
def tiny_corpus():
    return _simulate_module().simulate_per_benchmark(n_tasks=11, n_models=5, n_scaffolds=3, n_pairs=7,
                                                     trials_per_cell=2, seed=4).table


@pytest.fixture(scope="module")
def events():
    return []


@pytest.fixture(scope="module")
def posterior(corpus, events):
    return fit(corpus, "per-benchmark", SETTINGS, progress=lambda *a: events.append(a))


def test_recovers_known_variance_components(posterior):
    assert set(posterior.sigma) == set(TRUTH)
    for name, true in TRUTH.items():
        d = posterior.sigma[name].ravel()
        assert d.shape == (300,)
        lo, hi = np.quantile(d, [0.005, 0.995])
        assert lo <= true <= hi, f"sigma[{name}]: truth {true} outside the 99% interval [{lo:.2f}, {hi:.2f}]"
    # the well-informed components are also pinned down
    for name in ("task", "task:model"):
        assert abs(posterior.sigma[name].mean() - TRUTH[name]) < 0.35


def test_posterior_holds_draws_levels_and_diagnostics(posterior, corpus):
    assert posterior.mu.shape == (2, 150)
    u = posterior.random_effects["model"]
    assert u.shape == (2, 150, 8)
    assert list(posterior.levels["model"]["model"]) == sorted(corpus["model"].unique())
    assert posterior.random_effects["task:model"].shape[-1] == len(posterior.levels["task:model"])
    vc = posterior.variance_components
    np.testing.assert_allclose(vc["model"], posterior.sigma["model"] ** 2)
    assert np.allclose(vc["residual"], np.pi ** 2 / 3)
    dg = posterior.diagnostics
    assert set(dg.table.index) == set(TRUTH) | {"mu"}
    assert {"r_hat", "ess_bulk", "ess_tail"} <= set(dg.table.columns)
    assert dg.ebfmi.shape == (2,)
    assert posterior.wall_seconds > 0 and posterior.device.startswith(("cpu", "gpu"))
    # the warmup's and sampling's CPU seconds, the pace the refit estimate uses when the machine was loaded
    assert posterior.timings["cpu_run"] > 0
    # random effects are draws of the model's u: their spread matches sigma
    spread = posterior.random_effects["task"].std(axis=-1).mean()
    assert 0.5 * posterior.sigma["task"].mean() < spread < 1.5 * posterior.sigma["task"].mean()


def test_to_inference_data(posterior):
    idata = posterior.to_inference_data()
    assert idata.posterior["sigma"].shape == (2, 150, 6)
    assert list(idata.posterior["sigma"].coords["term"].values) == list(posterior.sigma)
    assert "u_task__model" in idata.posterior
    assert "diverging" in idata.sample_stats


def test_progress_reports_phases_with_increasing_iterations(events):
    phases = [e[0] for e in events]
    assert phases[0] == "compile" and phases[-1] == "diagnostics"
    for phase, total in (("warmup", 150), ("sampling", 150)):
        its = [e[1] for e in events if e[0] == phase]
        # chunks of 50, plus a stop where an adaptation window closes (cross-chain pooling)
        assert its == sorted(its) and its[-1] == total and 3 <= len(its) <= 5
        assert all(b - a <= 50 for a, b in zip([0, *its], its))
        assert all(e[2] == total for e in events if e[0] == phase)
        assert all(e[3] is not None and e[3] >= 0 for e in events if e[0] == phase)


def test_same_seed_same_draws(posterior, corpus, monkeypatch):
    # the bench's warmup hook is read by the chain runner (core/model/chains.py) and changes nothing
    from ddr_explorer.core.model import chains

    hooked = []
    monkeypatch.setattr(chains, "WARMUP_HOOK", lambda **kw: hooked.append(sorted(kw)))
    again = fit(corpus, "per-benchmark", SETTINGS)
    assert hooked == [["aux", "layout", "offset", "potential_gen", "state"]]
    for name in TRUTH:
        np.testing.assert_array_equal(again.sigma[name], posterior.sigma[name])
    np.testing.assert_array_equal(again.random_effects["model"], posterior.random_effects["model"])


def test_cancellation_raises_between_chunks(corpus):
    seen = []

    def cancel():
        return any(p == "warmup" for p, *_ in seen)

    with pytest.raises(FitCancelled, match="cancelled"):
        fit(corpus, "per-benchmark", SETTINGS, progress=lambda *a: seen.append(a), cancel=cancel)
    # it stopped after the first warmup chunk, long before sampling
    assert [p for p, *_ in seen].count("warmup") == 1
    assert not any(p == "sampling" for p, *_ in seen)


def test_cancel_before_anything_runs(corpus):
    with pytest.raises(FitCancelled):
        fit(corpus, "per-benchmark", SETTINGS, cancel=lambda: True)


def test_short_run_is_flagged_unconverged(tiny_corpus):
    post = fit(tiny_corpus, "per-benchmark", dataclasses.replace(TINY, seed=3))
    dg = post.diagnostics
    assert not dg.converged
    assert not post.converged
    assert any("bulk ESS" in p for p in dg.problems)
    assert "NOT converged" in str(dg)


def test_settings_are_validated():
    with pytest.raises(ValueError, match="target_accept"):
        SamplerSettings(target_accept=1.5)
    with pytest.raises(ValueError, match="device"):
        SamplerSettings(device="tpu")
    with pytest.raises(ValueError, match="collapsed_steps"):
        SamplerSettings(collapsed_steps=0)


def test_the_collapsed_move_gets_more_steps_where_they_are_cheap():
    """About 5% of a NUTS transition, 30 to 200 steps: TB2 (81 runs, 7,209 cells) and the HAL-scale
    corpus (416 runs, 8 quadrature nodes) keep 30; BRIDGE (203 runs under 82,453 cells, 12 nodes) gets
    200, which took its run-level sigmas from bulk ESS 62 to 1,104 (docs/sampler-measurements.md)."""
    from types import SimpleNamespace

    from ddr_explorer.core.model.parameterisation import collapsed_steps_for

    def marg(q):
        return SimpleNamespace(term=SimpleNamespace(nodes=np.zeros(q)))

    assert collapsed_steps_for(81, 7209, 4400) == 30
    assert collapsed_steps_for(416, 41354, 4587, marg(8)) == 30
    assert collapsed_steps_for(203, 82453, 15630, marg(12)) == 200
    # in between: the budget over the cost of one step
    assert collapsed_steps_for(300, 82453, 15630, marg(12)) == 73
    steps = [collapsed_steps_for(n, 82453, 15630, marg(12)) for n in (150, 250, 350, 450, 600)]
    assert steps == sorted(steps, reverse=True)


def test_unknown_column_fails_before_sampling(corpus):
    with pytest.raises(M.ModelSpecError, match="'judge'"):
        fit(corpus, "y ~ (1|task) + (1|judge)", SETTINGS)


def test_the_fit_limits_blas_to_one_thread_per_chain():
    # JAX's CPU Cholesky calls scipy's OpenBLAS; with its default thread count, the parallel chain
    # devices oversubscribe the cores (the pooled collapsed move ran 3.7x slower)
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from ddr_explorer.core.model.devices import _single_threaded_blas

    import scipy.linalg.cython_lapack  # noqa: F401  (the LAPACK jaxlib calls)

    def threads():
        return {i["filepath"]: i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"}

    before = threads()
    assert before, "no BLAS library loaded"
    with _single_threaded_blas():
        assert set(threads().values()) == {1}, threads()
    assert threads() == before  # the limit is lifted afterwards


def test_draws_advice_scales_the_draws_to_the_ess_target():
    from ddr_explorer.core.model.diagnostics import draws_advice

    # 500 draws gave ESS 264: 500 * 400 / 264 * 1.2 = 909 -> 1000
    assert "--draws 1000" in draws_advice(264.0, 500)
    assert "--draws 200" in draws_advice(300.0, 100)  # 100 * 400 / 300 * 1.2 = 160 -> 200
    assert draws_advice(400.0, 500) is None
    assert draws_advice(float("nan"), 500) is None


def test_an_unconverged_fit_says_how_many_draws_would_do():
    from types import SimpleNamespace

    from ddr_explorer.core.model.diagnostics import diagnose

    rng = np.random.default_rng(3)
    chains, draws = 4, 300

    def ar1(rho):
        x = np.zeros((chains, draws))
        for t in range(1, draws):
            x[:, t] = rho * x[:, t - 1] + rng.standard_normal(chains)
        return 1.0 + 0.1 * x

    post = SimpleNamespace(sigma={"task": ar1(0.9), "model": ar1(0.0) + 1.0}, mu=ar1(0.0),
                           sample_stats={"diverging": np.zeros((chains, draws), bool),
                                         "energy": rng.standard_normal((chains, draws)),
                                         "tree_depth": np.full((chains, draws), 3)},
                           settings=SimpleNamespace(max_tree_depth=8))
    d = diagnose(post)
    ess = d.table.loc["task", "ess_bulk"]
    assert ess < 400 and not d.converged
    need = int(np.ceil(draws * 400 / ess * 1.2 / 100) * 100)
    assert any(f"--draws {need}" in w for w in d.warnings), d.warnings


def test_compiled_samplers_are_cached_on_disk_where_the_user_says(tmp_path, monkeypatch):
    import jax

    from ddr_explorer.core.model.devices import _enable_compilation_cache

    before = jax.config.jax_compilation_cache_dir
    try:
        jax.config.update("jax_compilation_cache_dir", None)
        monkeypatch.setenv("DDR_JAX_CACHE_DIR", "off")
        assert _enable_compilation_cache() is None
        assert not jax.config.jax_compilation_cache_dir
        monkeypatch.setenv("DDR_JAX_CACHE_DIR", str(tmp_path / "jit"))
        assert _enable_compilation_cache() == str(tmp_path / "jit")
        assert (tmp_path / "jit").is_dir() and jax.config.jax_compilation_cache_dir == str(tmp_path / "jit")
        # a folder already configured in JAX (by the user or an earlier fit) is left alone
        monkeypatch.setenv("DDR_JAX_CACHE_DIR", str(tmp_path / "other"))
        assert _enable_compilation_cache() == str(tmp_path / "jit")
        monkeypatch.delenv("DDR_JAX_CACHE_DIR")
        monkeypatch.setenv("DDR_CACHE_DIR", str(tmp_path / "fits"))
        jax.config.update("jax_compilation_cache_dir", None)
        assert _enable_compilation_cache() == str(tmp_path / "fits" / "jax-compiled")
    finally:
        jax.config.update("jax_compilation_cache_dir", before)


def test_the_cache_eviction_race_between_processes_is_not_shown_but_other_cache_errors_are(tmp_path, monkeypatch):
    # JAX's own wording (jax/_src/compiler.py) when another process evicted the entry's -atime file
    # while this one wrote it: harmless (the entry is written again next time), so not shown.
    import warnings

    import jax

    from ddr_explorer.core.model.devices import _enable_compilation_cache

    before = jax.config.jax_compilation_cache_dir
    try:
        jax.config.update("jax_compilation_cache_dir", None)
        monkeypatch.setenv("DDR_JAX_CACHE_DIR", str(tmp_path / "jit"))
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("always")
            _enable_compilation_cache()
            warnings.warn("Error writing persistent compilation cache entry for 'jit_chunk': FileNotFoundError: "
                          "[Errno 2] No such file or directory: '/x/jit_chunk-abc-atime'")
            warnings.warn("Error writing persistent compilation cache entry for 'jit_chunk': PermissionError: "
                          "[Errno 13] Permission denied: '/x/jit_chunk-abc-cache'")
        assert [str(w.message).split(": ")[1] for w in shown] == ["PermissionError"]
    finally:
        jax.config.update("jax_compilation_cache_dir", before)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="counts Linux memory maps")
def test_fits_in_a_row_do_not_accumulate_compiled_code(tiny_corpus):
    # each fit's compiled code held about 1,550 memory maps that JAX never released: a batch ran
    # out of maps (vm.max_map_count 65,530) after 32 fits.  Now the count stays flat.  Two fits of
    # the same corpus are enough: every fit builds fresh closures over its data, so the second one's
    # executables are new objects even when read from the disk cache (3.5 s instead of a cold
    # compile), and without jax.clear_caches() they add their ~1,550 maps like a fit of new shapes.
    def maps():
        with open("/proc/self/maps") as f:
            return sum(1 for _ in f)

    counts = []
    for _ in range(2):  # the first fit sets the baseline (imports, XLA's own maps)
        fit(tiny_corpus, "per-benchmark", TINY)
        counts.append(maps())
    assert counts[1] - counts[0] < 300, counts


def test_the_sampler_module_still_offers_what_it_held_before_the_split():
    # fit() lives in sampler.py (tests replace it there); the types it returns and takes are
    # defined in posterior.py and the same objects are reachable from the old module
    from ddr_explorer.core.model import devices, parameterisation, posterior, sampler

    assert sampler.Posterior is posterior.Posterior is M.Posterior
    assert sampler.SamplerSettings is posterior.SamplerSettings is M.SamplerSettings
    assert sampler.FitCancelled is posterior.FitCancelled is M.FitCancelled
    assert sampler.DEFAULT_DRAWS == posterior.DEFAULT_DRAWS == SamplerSettings(stop="fixed").draws == 700
    assert sampler.collapsed_steps_for is parameterisation.collapsed_steps_for
    assert sampler._single_threaded_blas is devices._single_threaded_blas
    assert sampler.fit is M.fit


def test_a_fit_compiles_its_two_samplers_and_little_else(tiny_corpus):
    # Every XLA compilation is seconds on a busy 2-core machine.  A fit compiles
    # the NUTS initialisation (which also splits the chains' keys) and the chunk, or reads them from
    # the disk cache; host arrays reach the device without eager jnp ops (devices._to_device, numpy
    # inputs to pmap).  Before that, a TB2 fit compiled 27 programs, one per array shape.
    from jax import monitoring

    names = []

    def on_duration(event, duration, **kw):
        if event == "/jax/core/compile/backend_compile_duration":
            names.append(kw.get("fun_name", "?"))

    monitoring.register_event_duration_secs_listener(on_duration)
    try:
        post = fit(tiny_corpus, "per-benchmark", TINY)
    finally:
        monitoring.unregister_event_duration_listener(on_duration)
    assert post.sigma["task"].shape == (2, 10)
    # the two samplers (fewer when the disk cache has them), nothing else
    assert len(names) <= 2, names
