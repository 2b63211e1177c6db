"""The adaptive warmup (``SamplerSettings.adaptive_warmup``, core/model/warmup.py): its measures of a
settled metric against known answers and numpyro's own, and a small fit that ends its slow windows early."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import ddr_explorer.core.model as M  # noqa: F401  (before jax: parallel CPU chains)
from ddr_explorer.core.model import SamplerSettings, chains, fit
from ddr_explorer.core.model import warmup as W

ROOT = Path(__file__).resolve().parents[2]


def test_metric_change_is_the_rms_log_eigenvalue_ratio():
    rng = np.random.default_rng(0)
    d = rng.uniform(0.5, 2.0, 30)
    assert W.metric_change(d, d) == pytest.approx(0.0, abs=1e-12)
    assert W.metric_change(d, 2 * d) == pytest.approx(np.log(2))
    a = rng.normal(size=(5, 5))
    old = a @ a.T + 5 * np.eye(5)
    assert W.metric_change(old, old) == pytest.approx(0.0, abs=1e-9)
    assert W.metric_change(old, 3 * old) == pytest.approx(np.log(3))
    # half the variances doubled, half halved: RMS log ratio log 2
    assert W.metric_change(np.ones(4), np.array([2, 2, 0.5, 0.5])) == pytest.approx(np.log(2))


def test_welford_metric_is_numpyros():
    import jax.numpy as jnp
    from numpyro.infer.hmc_util import welford_covariance

    rng = np.random.default_rng(1)
    xs = rng.normal(size=(40, 3)) @ np.array([[1, 0.3, 0], [0, 1, 0.2], [0, 0, 2.0]])
    for diagonal in (True, False):
        init, update, final = welford_covariance(diagonal=diagonal)
        st = init(3)
        for x in xs:
            st = update(jnp.asarray(x), st)
        want = np.asarray(final(st, regularize=True)[0])
        got = W.welford_metric(*[np.asarray(v) for v in st])
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_expected_change_is_the_noise_of_two_covariance_estimates():
    # hand-computed: TB2's 13 x 13 global block at iteration 149 (100 pooled draws behind the metric in
    # use, 200 in the closing window): sqrt(14 (1/100 + 1/200)) = sqrt(0.21)
    assert W.expected_change(13, 100, 200) == pytest.approx(0.21 ** 0.5)
    assert W.expected_change(13, None, 100) == pytest.approx(0.14 ** 0.5)  # the start metric counts as exact
    assert W.expected_change(500, 100, 200, dense=False) == pytest.approx(0.03 ** 0.5)  # a variance: 2/n each


@pytest.mark.parametrize("d,dense", [(6, True), (40, False)])
def test_expected_change_matches_simulated_estimates(d, dense):
    """Two sample covariances of the same Gaussian from 100 and 200 draws: their RMS log eigenvalue
    change (metric_change) averages to expected_change within 15% (the formula is the large-n limit)."""
    rng = np.random.default_rng(3)
    a = rng.normal(size=(d, d))
    cov = a @ a.T / d + np.eye(d)
    L = np.linalg.cholesky(cov)
    got = []
    for _ in range(200):
        x1, x2 = rng.normal(size=(100, d)) @ L.T, rng.normal(size=(200, d)) @ L.T
        c1, c2 = np.cov(x1.T), np.cov(x2.T)
        got.append(W.metric_change(c1, c2) if dense else W.metric_change(np.diag(c1), np.diag(c2)))
    assert np.mean(got) == pytest.approx(W.expected_change(d, 100, 200, dense=dense), rel=0.15)


def test_settled_by_noise_needs_every_block_within_its_noise():
    noise = {"g": 0.46, "x": 0.17}
    f = W.NOISE_FACTOR
    assert W.settled_by_noise({"g": 0.48, "x": 0.25}, noise)  # TB2 at iteration 149 (measured)
    assert not W.settled_by_noise({"g": f * 0.46 + 0.01, "x": 0.1}, noise)
    assert not W.settled_by_noise({"g": 0.1, "x": f * 0.17 + 0.01}, noise)
    assert not W.settled_by_noise({"g": 0.1, "x": float("nan")}, noise)
    assert not W.settled_by_noise({"g": 0.1, "y": 0.1}, noise)  # a block without a noise figure
    assert not W.settled_by_noise({}, noise)


def _simulate_module():
    spec = importlib.util.spec_from_file_location("ddr_bench_simulate", ROOT / "bench" / "simulate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_a_settled_fit_skips_the_slow_windows_it_does_not_need(monkeypatch):
    """Two well-informed terms, 200 warmup iterations (slow windows end at 99 and 149).  With this seed
    the metric is not settled at 99 by the default rule (g changes 2.4x its noise), so the tolerance is
    widened here to make the first look settle: the window closes at 100 and the run jumps to the
    final buffer (150-199), a warmup of 150 iterations, said in a note; the draws keep their length."""
    sim = _simulate_module().simulate_per_benchmark(n_tasks=40, n_models=12, n_scaffolds=2, n_pairs=12,
                                                    trials_per_cell=8, sigmas={"task": 1.2, "model": 0.8}, mu=0.0,
                                                    seed=2)
    log = []
    monkeypatch.setattr(chains, "WINDOW_LOG", log)
    monkeypatch.setattr(W, "NOISE_FACTOR", 50.0)
    # the corpus and program of tests/model/test_stopping.py's easy fit (read from the run's compile cache)
    s = SamplerSettings(stop="fixed", warmup=200, draws=50, chains=4, seed=1, chunk_size=50)
    assert s.adaptive_warmup  # the default
    post = fit(sim.table, "successes ~ (1|task) + (1|model)", s)
    assert [e["iteration"] for e in log] == [99]  # the look at 149 was skipped with its window
    first = log[0]
    assert W.settled_by_noise(first["changes"], first["noise"])
    assert not W.settled_by_noise(first["changes"], first["noise"], factor=1.5)  # the default rule would not
    assert post.sample_stats["warmup_num_steps"].shape[1] == 150
    assert any(str(n).startswith("warmup 150 of 200 iterations") for n in post.notes)
    assert post.mu.shape == (4, 50)
    assert set(first["changes"]) == set(first["noise"]) == {"g", "x"}
    # the start metric counts as exact at the first look: the noise is the closing window's alone
    n1 = 4 * (99 - 75)  # pooled draws of the first slow window (75-99) before its last iteration
    assert first["noise"]["x"] == pytest.approx(W.expected_change(1, None, n1, dense=False), rel=0.05)


def test_the_footer_says_when_the_warmup_was_adaptive():
    from types import SimpleNamespace

    from ddr_explorer.core.report.sheet import footer_lines

    st = {"stop": "fixed", "draws": 700, "chains": 4, "warmup": 300, "adaptive_warmup": True}
    inputs = SimpleNamespace(fit_info={"settings": st, "method": "NUTS", "converged": True},
                             corpus_summary={}, corpus_name="c", corpus_hash="ab" * 32, versions={})
    assert "warmup at most 300 (adaptive)" in footer_lines(inputs, date=None)[1]
    inputs.fit_info["settings"] = {**st, "adaptive_warmup": False}
    line = footer_lines(inputs, date=None)[1]
    assert "warmup 300" in line and "adaptive" not in line
