"""The DDR sheet's method notes on the refit analyses' Monte Carlo precision (core/report/refit_precision.py):
which rule the difficulty and hold-out refits ran under, and the MCSE of the numbers the sheet prints."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

pytest.importorskip("reportlab", reason="the DDR sheet needs reportlab (pip install reportlab)")

from ddr_explorer.core.analyses.difficulty import DifficultyProfile  # noqa: E402
from ddr_explorer.core.analyses.heldout import HeldOutReliability  # noqa: E402
from ddr_explorer.core.analyses.precision import heldout_mcse  # noqa: E402
from ddr_explorer.core.report.refit_precision import refit_precision_text  # noqa: E402

LABELS = ("Q1 (easiest)", "Q2", "Q3", "Q4 (hardest)")


def _held(rule="precision"):
    rng = np.random.default_rng(2)
    p = 0.97 + 0.003 * rng.standard_normal(10)
    h = 1.94 - p + 0.002 * rng.standard_normal(10)
    return HeldOutReliability(p, h, projected_mcse=np.full(10, 0.0004), held_out_mcse=np.full(10, 0.0006),
                              refit_rule=rule)


def _difficulty(rule="precision"):
    rng = np.random.default_rng(3)
    draws = [np.clip(rng.normal(m, 0.03, 1000), 0, 1) for m in (0.95, 0.9, 0.8, 0.5)]
    prof = DifficultyProfile.from_draws(LABELS, draws, np.clip(rng.normal(0.9, 0.02, 1000), 0, 1))
    return dataclasses.replace(prof, mcse=((0.001, 0.002, 0.003), (0.0012, 0.0025, 0.002), None,
                                           (0.004, 0.0049, 0.0045)), refit_rule=rule)


def test_the_method_notes_say_which_rule_ran_and_the_monte_carlo_se_of_each_result():
    held, diff = _held(), _difficulty()
    text = refit_precision_text(diff, held)
    assert text.startswith("The difficulty and hold-out refits ran under the precision rule: each until its chains "
                           "agreed (rank-normalised R-hat on every component within the threshold of 100 effective "
                           "draws, Vats and Knudson 2021; bulk ESS \u2265 100; no divergence)")
    assert "never above 0.005 (quantile MCSE, Vehtari et al. 2021)." in text
    r_mc, gap_mc = heldout_mcse(held.projected, held.held_out, held.projected_mcse, held.held_out_mcse)
    assert held.pearson_r_mcse == r_mc and held.mean_gap_mcse == gap_mc
    assert f"over the 10 splits' medians): r \u00b1{r_mc:.3f}, mean gap \u00b1{gap_mc:.4f}." in text
    assert gap_mc == pytest.approx(np.sqrt(10 * (0.0004 ** 2 + 0.0006 ** 2)) / 10)
    # each stratum (a failed one left out): its median's MCSE and the larger of its interval ends'
    assert ("median: Q1 \u00b10.0010 (interval ends \u00b10.0030); Q2 \u00b10.0012 (interval ends \u00b10.0025); "
            "Q4 \u00b10.0040 (interval ends \u00b10.0049).") in text
    assert diff.max_mcse == 0.0049
    gate = refit_precision_text(_difficulty("gate"), _held("gate"))
    assert gate.startswith("The difficulty and hold-out refits ran to the gate on the E\u03c1\u00b2 they report "
                           "(R-hat \u2264 1.01, bulk and tail ESS \u2265 440; --refit-rule gate).")
    mixed = refit_precision_text(_difficulty("gate"), _held())
    assert "The difficulty refits ran to the gate" in mixed and "The hold-out refits ran under the precision" in mixed
    # results handed in without them (an older run, a hand-made result): nothing claimed
    assert refit_precision_text(DifficultyProfile.from_draws(LABELS, [np.full(10, 0.5)] * 4, np.full(10, 0.5)),
                                HeldOutReliability([0.1, 0.2], [0.2, 0.3])) is None
    assert refit_precision_text(None, None) is None
    with pytest.raises(ValueError, match="projected_mcse has 3 values for 2 splits"):
        HeldOutReliability([0.1, 0.2], [0.2, 0.3], projected_mcse=[0.1, 0.1, 0.1])


def test_the_sheet_prints_them_in_its_method_notes(tmp_path):
    """The PDF's method-notes page carries the paragraph (a sheet of the demo corpus from synthetic components)."""
    pypdf = pytest.importorskip("pypdf")
    from pathlib import Path

    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.reliability import VarianceComponents
    from ddr_explorer.core.report import build_sheet, report_inputs_from

    corpus = load_corpus(Path(__file__).resolve().parents[1] / "resources" / "demo" / "terminal-bench-2.csv")
    rng = np.random.default_rng(0)
    sig = {"task": 3.0, "model": 1.7, "scaffold": 0.4, "task:model": 1.4, "task:scaffold": 1.1, "model:scaffold": 0.5}
    comps = VarianceComponents.from_mapping({t: (s * np.exp(rng.normal(0, 0.1, 400))) ** 2 for t, s in sig.items()})
    inputs = report_inputs_from(corpus, comps, analyses={"held_out": _held(), "difficulty": _difficulty()})
    pdf = build_sheet(inputs, tmp_path / "sheet.pdf", date_invariant=True)
    text = " ".join(re.sub(r"\s+", " ", p.extract_text() or "") for p in pypdf.PdfReader(str(pdf)).pages)
    assert "refits ran under the precision rule" in text
    assert "Monte Carlo SE of the hold-out results" in text and "Monte Carlo SE of each stratum" in text
