"""The precision rule of refit analyses (core/model/stopping.py): its statistics against ArviZ's and its
stopping decision on synthetic draws (pure numpy, no sampler)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from ddr_explorer.core.model import stopping as S


def _ar1(rng, chains, n, rho, sd=1.0):
    e = rng.normal(size=(chains, n)) * sd * np.sqrt(1 - rho ** 2)
    x = np.zeros_like(e)
    x[:, 0] = rng.normal(size=chains) * sd
    for t in range(1, n):
        x[:, t] = rho * x[:, t - 1] + e[:, t]
    return x


@dataclass(frozen=True)
class _Share:
    """A reported quantity: the share of the first term's variance, per draw (an Erho2-like number)."""

    label: str = "share"

    def draws(self, by_term, spec):
        a, b = by_term["a"] ** 2, by_term["b"] ** 2
        return a / (a + b)


@pytest.mark.parametrize("case", range(6))
def test_mcse_of_a_quantile_is_arviz(case):
    """mcse_quantile is ArviZ's mcse(method="quantile") (Vehtari et al. 2021), median and interval ends."""
    import arviz as az

    rng = np.random.default_rng(7 + case)
    x = _ar1(rng, 4, [60, 250, 1000][case % 3], [0.0, 0.5, 0.9][case % 3]) * 0.02 + 0.8
    for p in (0.5, 0.025, 0.975):
        np.testing.assert_allclose(S.mcse_quantile(x, p), float(az.mcse(x, method="quantile", prob=p)), rtol=1e-9)


def test_the_median_of_a_posterior_sd_002_is_known_to_0003_from_about_60_effective_draws():
    rng = np.random.default_rng(3)
    x = rng.normal(0.8, 0.02, size=(4, 15))  # 60 independent draws
    assert 0.002 < S.mcse_quantile(x, 0.5) < 0.0045  # sqrt(pi / 2) x 0.02 / sqrt(60) = 0.0032


def _sigma(rng, n, rho=0.0, chains=4, sd_a=0.05):
    a = 1.0 + _ar1(rng, chains, n, rho, sd_a)
    b = 0.5 + _ar1(rng, chains, n, rho, 0.05)
    return np.stack([a, b], axis=-1)


def test_precision_passes_when_the_median_is_precise_and_the_chains_agree():
    rng = np.random.default_rng(0)
    sig = _sigma(rng, 500)
    rule = S.PrecisionRule()
    chk = S.check_precision(sig, 0, ["a", "b"], [_Share()], None, rule)
    assert chk.passed, chk.reasons
    assert chk.max_mcse <= S.PRECISION_MAX_MCSE and chk.tolerance == S.PRECISION_MAX_MCSE
    assert chk.values and abs(chk.values[0] - 0.8) < 0.01
    # the gate on the same draws asks 440 effective draws of each component: 2,000 independent draws pass it too
    assert S.check_gate(sig, 0, ["a", "b"]).passed


def test_precision_waits_for_the_mcse_where_the_gate_on_the_reported_quantity_would_not():
    """A wide posterior of the reported number: ESS well above 100 and even above 440, but its median's MCSE
    above a tight tolerance; the rule says what fails and by how much."""
    rng = np.random.default_rng(1)
    sig = _sigma(rng, 150, sd_a=0.4)  # share's posterior SD ~ 0.1: MCSE of the median ~ 0.1 x 1.25 / sqrt(600)
    rule = S.PrecisionRule()
    chk = S.check_precision(sig, 0, ["a", "b"], [_Share()], None, rule, tolerance=0.002)
    assert not chk.passed
    assert any(r.startswith("MCSE of the median of share") and r.endswith("> 0.0020") for r in chk.reasons)
    assert chk.min_ess_bulk > 100
    # a looser tolerance (a larger spread across splits) lets the same draws pass
    loose = S.check_precision(sig, 0, ["a", "b"], [_Share()], None, rule, tolerance=0.02)
    assert loose.passed, loose.reasons


def test_precision_asks_the_interval_ends_when_the_analysis_takes_them():
    rng = np.random.default_rng(2)
    sig = _sigma(rng, 150, sd_a=0.2)
    med = S.check_precision(sig, 0, ["a", "b"], [_Share()], None, S.PrecisionRule(), tolerance=0.006)
    ends = S.check_precision(sig, 0, ["a", "b"], [_Share()], None,
                             S.PrecisionRule(probs=(0.5, 0.025, 0.975)), tolerance=0.006)
    assert med.passed, med.reasons
    assert not ends.passed and any("2.5% quantile" in r or "97.5% quantile" in r for r in ends.reasons)
    assert ends.max_mcse > med.max_mcse


def test_precision_needs_agreeing_chains_with_100_effective_draws_and_no_divergence():
    rng = np.random.default_rng(4)
    sig = _sigma(rng, 400)
    rule = S.PrecisionRule()
    stuck = sig.copy()
    stuck[0, :, 1] += 0.3  # one chain elsewhere on a component the quantity hardly depends on
    chk = S.check_precision(stuck, 0, ["a", "b"], [_Share()], None, rule, tolerance=0.05)
    assert not chk.passed and any(r.startswith("R-hat of sigma[b]") for r in chk.reasons)
    slow = _sigma(rng, 200, rho=0.97)  # ESS about 4 x 200 x 0.015 = 12 per component
    chk = S.check_precision(slow, 0, ["a", "b"], [_Share()], None, rule, tolerance=0.05)
    assert any(r.startswith("bulk ESS of sigma[a]") for r in chk.reasons)
    assert not S.check_precision(sig, 2, ["a", "b"], [_Share()], None, rule, tolerance=0.05).passed


def test_the_tolerance_is_a_tenth_of_the_spread_never_above_the_ceiling():
    rule = S.PrecisionRule(group="projected")
    t = S.SpreadTracker()
    assert t.tolerance(rule) == 0.005  # nothing yet: the ceiling
    t.add("projected", 0.80)
    t.add("projected", 0.82)
    assert t.tolerance(rule) == 0.005  # two values: no spread yet
    t.add("projected", 0.81)
    t.add("projected", 0.79)
    assert t.tolerance(rule) == 0.005  # four values: their SD is still too rough to tighten the tolerance on
    t.add("projected", 0.83)
    assert t.tolerance(rule) == pytest.approx(0.1 * np.std([0.8, 0.82, 0.81, 0.79, 0.83], ddof=1))
    for v in (0.1, 0.5, 0.9, 0.3, 0.7):
        t.add("held-out", v)
    assert t.tolerance(S.PrecisionRule(group="held-out")) == 0.005  # SD 0.32: a tenth is above the ceiling
    with pytest.raises(ValueError, match="max_mcse"):
        S.PrecisionRule(max_mcse=0)
    assert S.PrecisionRule().to_dict()["rule"] == "precision"


def test_the_matched_r_hat_is_the_threshold_of_an_ess_target():
    """sqrt((h - 1) / h + 2 C / ESS) on split chains (after Vats and Knudson 2021): 1.01 is what about 200
    (100 draws per chain) to 400 (long chains) effective draws ask; 100 effective draws allow about 1.03."""
    assert S.matched_r_hat(4, 100, 100) == pytest.approx(np.sqrt(49 / 50 + 8 / 100))
    assert S.matched_r_hat(4, 100, 200) == pytest.approx(1.01, abs=5e-4)
    assert S.matched_r_hat(4, 100_000, 400) == pytest.approx(1.01, abs=5e-4)
    assert 1.029 < S.matched_r_hat(4, 100, 100) < S.matched_r_hat(4, 1000, 100) < 1.039
    assert S.PrecisionRule().max_r_hat(4, 100) == S.matched_r_hat(4, 100, S.PRECISION_MIN_ESS)
    assert S.PrecisionRule(r_hat="fixed").max_r_hat(4, 100) == 1.01
    with pytest.raises(ValueError, match="r_hat"):
        S.PrecisionRule(r_hat="loose")


def test_the_matched_r_hat_passes_chains_with_the_effective_draws_it_asks_and_fails_chains_apart():
    """AR(1) chains (4 x 150 draws, rho 0.5: about 220 effective draws): the matched threshold passes most
    looks where R-hat <= 1.01 fails most; one chain half a posterior SD away fails it more often than not, one
    a whole SD away always."""
    rng = np.random.default_rng(11)
    rule, n = S.PrecisionRule(), 150
    passed = {0.0: 0, 0.5: 0, 1.0: 0}
    fixed = 0
    for _ in range(100):
        base = _ar1(rng, 4, n, 0.5)
        fixed += S.rhat_rank(base) <= 1.01
        for off in passed:
            x = base.copy()
            x[0] += off
            passed[off] += S.rhat_rank(x) <= rule.max_r_hat(4, n)
    assert passed[0.0] >= 90 and fixed <= 60
    assert passed[0.5] <= 60
    assert passed[1.0] == 0
