"""The CPU-vs-GPU agreement check of bench/gpu_agreement.py, on draws with a known answer.

The fits themselves run on the GPU machine (bench/gpu_check.sh); here the statistics of
the comparison are checked: MCSE of a mean of autocorrelated chains, the z-score, the
Bonferroni bound and the decision.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

_spec = importlib.util.spec_from_file_location(
    "gpu_agreement", Path(__file__).resolve().parents[1] / "bench" / "gpu_agreement.py")
ga = importlib.util.module_from_spec(_spec)
sys.modules["gpu_agreement"] = ga  # its dataclasses look their module up while being built
_spec.loader.exec_module(ga)


def ar1(rng, chains: int, n: int, rho: float, mean: float = 0.0) -> np.ndarray:
    """Stationary AR(1) chains with unit marginal variance."""
    x = np.empty((chains, n))
    x[:, 0] = rng.standard_normal(chains)
    e = rng.standard_normal((chains, n)) * math.sqrt(1 - rho**2)
    for t in range(1, n):
        x[:, t] = rho * x[:, t - 1] + e[:, t]
    return x + mean


def test_z_score_and_bound_by_hand():
    a = {"s": ga.Estimate(1.00, 0.03)}
    b = {"s": ga.Estimate(1.05, 0.04)}
    res = ga.agreement(a, b, alpha=0.05)
    assert res["rows"][0][5] == pytest.approx(1.0)  # 0.05 / hypot(0.03, 0.04)
    assert res["bound"] == pytest.approx(1.959964, abs=1e-5)  # one quantity: the two-sided 5 % point
    assert res["passed"]
    assert ga.z_bound(7, 0.001) == pytest.approx(3.80, abs=0.01)
    far = ga.agreement(a, {"s": ga.Estimate(1.25, 0.04)}, alpha=0.05)  # z = 5
    assert far["max_abs_z"] == pytest.approx(5.0) and not far["passed"]


def test_a_quantity_missing_from_one_run_fails():
    a = {"s": ga.Estimate(1.0, 0.1), "mu": ga.Estimate(0.0, 0.1)}
    res = ga.agreement(a, {"s": ga.Estimate(1.0, 0.1)})
    assert res["missing"] == ["mu"] and not res["passed"]


def test_mcse_of_autocorrelated_chains_matches_theory():
    # AR(1) with unit variance: Var(mean) = (1 + rho) / (1 - rho) / N for long chains
    rng = np.random.default_rng(7)
    rho, chains, n = 0.8, 4, 4000
    est = ga.estimate(ar1(rng, chains, n, rho, mean=2.0))
    expected = math.sqrt((1 + rho) / (1 - rho) / (chains * n))
    assert est.mcse == pytest.approx(expected, rel=0.2)
    assert abs(est.mean - 2.0) < 5 * expected


def test_same_posterior_passes_shifted_posterior_fails():
    rng = np.random.default_rng(11)
    means = {"sigma[task]": 3.0, "sigma[model]": 1.7, "mu": -0.5}
    run = lambda shift: {k: ga.estimate(ar1(rng, 4, 1000, 0.5, m + shift.get(k, 0.0)))  # noqa: E731
                         for k, m in means.items()}
    same = ga.agreement(run({}), run({}))
    assert same["passed"], same
    # a device that moves one component by 0.3 posterior sd (about 20 MCSE here) is caught
    shifted = ga.agreement(run({}), run({"sigma[model]": 0.3}))
    assert not shifted["passed"]
    assert max(shifted["rows"], key=lambda r: abs(r[5]))[0] == "sigma[model]"
