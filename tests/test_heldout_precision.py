"""The hold-out study's Monte Carlo precision, simulated (core/analyses/precision.py, core/model/stopping.py).

A small version of bench/bench_refits.py's simulation check, without the sampler: splits with known projected
and held-out Erho2 (the across-split relation and spread of a Terminal-Bench-2.0-like corpus, scaled up so
the rule's tolerance sits inside its ceiling), each refit's posterior draws simulated as autocorrelated chains
around its known value.  Each refit runs look by look, as the refit runner runs it, until the precision rule
passes (its tolerance from the spread of the refits already done); a long run of every refit is the
reference.  The hold-out r and mean gap under the rule agree with the reference's within their Monte Carlo
SEs (delta method), and the MCSE the study states is what the rule asked for."""

from __future__ import annotations

import numpy as np
import pytest

from ddr_explorer.core.analyses.precision import heldout_mcse
from ddr_explorer.core.model import stopping as S

CHAINS, FIRST, EVERY, CEILING = 4, 100, 50, 2000


class _Value:
    """The reported quantity of a simulated refit: its one 'component' is the per-draw Erho2 itself."""

    label = "Erho2 at the held-out design"

    def draws(self, by_term, spec):
        return by_term["erho2"]


def _chains(rng, centre, sd, n, rho=0.5):
    """(CHAINS, n) stationary AR(1) draws with mean ``centre`` and SD ``sd`` (ESS about a third of the draws)."""
    from scipy.signal import lfilter

    e = rng.normal(size=(CHAINS, n)) * np.sqrt(1 - rho ** 2)
    e[:, 0] = rng.normal(size=CHAINS)  # the stationary start
    return centre + sd * lfilter([1.0], [1.0, -rho], e, axis=1)


def _run(rng, centre, sd, rule, spread):
    """Draws of one refit, look by look, until the precision rule passes (or the ceiling); its median and MCSE."""
    draws = _chains(rng, centre, sd, CEILING)
    n = FIRST
    while True:
        chk = S.check_precision(draws[:, :n, None], 0, ["erho2"], [_Value()], None, rule,
                                tolerance=spread.tolerance(rule))
        if chk.passed or n >= CEILING:
            break
        n = min(n + EVERY, CEILING)
    x = draws[:, :n]
    spread.add(rule.group, float(np.median(x)))
    return float(np.median(x)), S.mcse_quantile(x, 0.5), n, chk


def test_hold_out_r_and_gap_under_the_precision_rule_agree_with_a_long_run_within_mcse():
    seed = 0
    rng = np.random.default_rng(seed)
    n_splits = 16
    # known values per split: projected ~ 0.90 +- 0.01 across splits; held-out anti-correlated with it (the two
    # parts of a split share each cell's trials); posterior SD of one refit's Erho2 0.02 (0.03 held-out)
    projected = 0.90 + 0.01 * rng.standard_normal(n_splits)
    held = 1.79 - projected + 0.006 * rng.standard_normal(n_splits)
    spread = S.SpreadTracker()
    rules = (S.PrecisionRule(group="projected"), S.PrecisionRule(group="held-out"))
    p, h, pm, hm, lengths = [], [], [], [], []
    for i in range(n_splits):
        for centre, sd, rule, med, mc in ((projected[i], 0.02, rules[0], p, pm), (held[i], 0.03, rules[1], h, hm)):
            m, e, n, chk = _run(rng, centre, sd, rule, spread)
            med.append(m)
            mc.append(e)
            lengths.append(n)
            if n < CEILING:  # a refit that stopped met its tolerance at that look
                assert chk.passed and chk.max_mcse <= chk.tolerance <= 0.005
    # the reference: every refit's posterior with 4 x 20,000 independent-seed draws
    ref = np.random.default_rng(1000 + seed)
    rp = [np.median(_chains(ref, c, 0.02, 20_000)) for c in projected]
    rh = [np.median(_chains(ref, c, 0.03, 20_000)) for c in held]
    r_mc, gap_mc = heldout_mcse(p, h, pm, hm)
    r_ref_mc, gap_ref_mc = heldout_mcse(rp, rh, [0.02 * 1.2533 / np.sqrt(80_000 / 3)] * n_splits,
                                        [0.03 * 1.2533 / np.sqrt(80_000 / 3)] * n_splits)
    r, r_ref = np.corrcoef(p, h)[0, 1], np.corrcoef(rp, rh)[0, 1]
    gap, gap_ref = np.mean(np.subtract(h, p)), np.mean(np.subtract(rh, rp))
    assert abs(r - r_ref) <= 3 * np.hypot(r_mc, r_ref_mc), (r, r_ref, r_mc)
    assert abs(gap - gap_ref) <= 3 * np.hypot(gap_mc, gap_ref_mc), (gap, gap_ref, gap_mc)
    # the tolerance follows the spread: a tenth of about 0.01 for the projected values, so their MCSE is ~0.001
    assert spread.tolerance(rules[0]) == pytest.approx(0.1 * np.std(p, ddof=1))
    assert np.median(pm) <= 1.2 * spread.tolerance(rules[0])
    # and the rule ran shorter than the ceiling for most refits (the first five of each group at 0.005)
    print("draws per chain per refit:", lengths)
    assert np.mean(np.array(lengths) < CEILING) >= 0.9
    assert 0 < r_mc < 0.1 and 0 < gap_mc < 0.001


def test_the_delta_method_mcse_of_r_and_the_gap_match_a_simulation():
    """heldout_mcse against the SD of r and of the mean gap over simulated Monte Carlo errors of the medians."""
    rng = np.random.default_rng(5)
    x = 0.9 + 0.01 * rng.standard_normal(30)
    y = 1.79 - x + 0.006 * rng.standard_normal(30)
    a, b = np.full(30, 0.001), np.full(30, 0.0015)
    r_mc, gap_mc = heldout_mcse(x, y, a, b)
    sims = [(np.corrcoef(x + a * rng.standard_normal(30), y + b * rng.standard_normal(30))[0, 1],
             np.mean(y + b * rng.standard_normal(30) - x - a * rng.standard_normal(30))) for _ in range(4000)]
    sims = np.array(sims)
    assert r_mc == pytest.approx(np.std(sims[:, 0]), rel=0.1)
    assert gap_mc == pytest.approx(np.std(sims[:, 1]), rel=0.05)
    assert gap_mc == pytest.approx(np.sqrt(np.sum(a ** 2 + b ** 2)) / 30)
