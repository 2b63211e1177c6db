"""One rule says whether a projection is optimistic: the gap and its uncertainty.

- optimistic / no detectable gap / pessimistic from the gap's 95% interval and a negligible size;
- the held-out splits' interval is the spread of their gaps; a stratum against the aggregate adds
  the two fits' variances;
- the difficulty decision and ``ddr analyses``' text print the same sentence.
"""

from __future__ import annotations

import numpy as np
import pytest

from ddr_explorer.core.analyses.gap_verdict import (gap_verdict, independent_gap_interval, split_gap_interval,
                                                    verdict_sentence)
from ddr_explorer.core.analyses.heldout import HeldOutReliability
from ddr_explorer.core.report.inputs import DifficultyProfile
from ddr_explorer.core.reliability import Summary


def test_the_rule_on_a_gap_and_its_interval():
    assert gap_verdict(-0.30, -0.41, -0.19).word == "optimistic"
    assert gap_verdict(0.05, 0.02, 0.08).word == "pessimistic"
    assert gap_verdict(-0.05, -0.09, 0.01).word == "no detectable gap"  # the interval reaches 0
    assert gap_verdict(-0.004, -0.005, -0.003).word == "no detectable gap"  # tight, but below 0.01
    assert gap_verdict(-0.00004, -0.0001, 0.0).word == "no detectable gap"
    with pytest.raises(ValueError, match="inside its interval"):
        gap_verdict(0.2, 0.3, 0.4)


def test_split_gaps_interval_is_their_spread_and_the_mean():
    gaps = np.linspace(-0.02, 0.018, 50)
    mean, lo, hi = split_gap_interval(gaps)
    assert mean == pytest.approx(-0.001) and lo == pytest.approx(np.quantile(gaps, 0.025))
    assert hi == pytest.approx(np.quantile(gaps, 0.975))
    # seed 003: every split falls short by about 0.3
    h = HeldOutReliability([0.80, 0.82, 0.84, 0.86], [0.50, 0.49, 0.47, 0.45])
    v = h.verdict
    assert v.word == "optimistic" and v.gap == pytest.approx(h.mean_gap) == pytest.approx(-0.3525)
    assert verdict_sentence(v, "the training-cell projection", "the held-out figure").startswith(
        "The training-cell projection is optimistic here: the held-out figure falls short by 0.352 (gap \u22120.352, "
        "95% interval [\u22120.407, \u22120.302])")  # gaps -0.30, -0.33, -0.37, -0.41: quantiles 2.5%, 97.5%


def _s(median, lo, hi):
    return Summary(median=median, mean=median, hdi68=(lo, hi), hdi95=(lo, hi), n_draws=4000)


def test_a_stratum_against_the_aggregate_adds_the_two_fits_variances():
    hard, agg = _s(0.78, 0.70, 0.86), _s(0.95, 0.93, 0.97)
    gap, lo, hi = independent_gap_interval(hard, agg)
    half = 1.96 * np.hypot(0.16 / 3.92, 0.04 / 3.92)  # 0.0824
    assert (gap, lo, hi) == pytest.approx((-0.17, -0.17 - half, -0.17 + half))
    prof = DifficultyProfile(("Q1", "Q4"), (_s(0.97, 0.95, 0.99), hard), agg)
    assert prof.gap == pytest.approx(0.17) and prof.verdict.word == "optimistic"
    # the Terminal-Bench case: Q4 0.987 against 0.989, "falls short by 0.002"
    near = DifficultyProfile(("Q1", "Q4"), (_s(0.99, 0.98, 0.995), _s(0.987, 0.975, 0.994)), _s(0.989, 0.984, 0.993))
    assert near.verdict.word == "no detectable gap"
    assert verdict_sentence(near.verdict, "the all-tasks figure", "the hardest stratum") == (
        "No detectable gap between the all-tasks figure and the hardest stratum (gap \u22120.002, 95% interval "
        "[\u22120.013, +0.009]).")


def test_the_cli_text_says_the_rules_sentence():
    from ddr_explorer.core.analyses.runner import format_analyses

    near = DifficultyProfile(("Q1", "Q4"), (_s(0.99, 0.98, 0.995), _s(0.987, 0.975, 0.994)), _s(0.989, 0.984, 0.993))
    held = HeldOutReliability([0.80, 0.82, 0.84, 0.86], [0.50, 0.49, 0.47, 0.45])
    text = format_analyses({"difficulty": {
        "strata": [], "aggregate": {"median": 0.989, "lower95": 0.984, "upper95": 0.993},
        "gap_aggregate_minus_hardest": near.gap, "verdict": near.verdict.to_dict()},
        "heldout": {"n_splits": 4, "train_fraction": 0.7, "pearson_r": held.pearson_r, "mean_gap": held.mean_gap,
                    "verdict": held.verdict.to_dict()}})
    assert "  No detectable gap between the all-tasks figure and the hardest stratum (gap \u22120.002" in text
    assert "  The training-cell projection is optimistic here: the held-out figure falls short by 0.352" in text
