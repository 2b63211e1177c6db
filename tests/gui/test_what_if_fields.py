"""Typed targets, budgets and counts out of range are refused with words at the field, never guessed.

Typed key by key into the D-study tab, as a user types, then committed with Enter.
"""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from ddr_explorer.core.dstudy import DStudyDesign, DStudyModel  # noqa: E402
from ddr_explorer.core.reliability import VarianceComponents  # noqa: E402
from ddr_explorer.gui.what_if_fields import budget_problem, count_problem, parse_typed, target_problem  # noqa: E402


def _type(qtbot, spin, text: str, key=Qt.Key_Return) -> None:
    """Type ``text`` key by key and commit it with ``key`` (Enter; Tab in a dialog, where Enter means OK)."""
    spin.setFocus()
    qtbot.waitUntil(spin.hasFocus, timeout=2000)
    spin.selectAll()
    for ch in text:
        QTest.keyClick(spin, ch)
    QTest.keyClick(spin, key)


@pytest.mark.parametrize("typed, words", [
    ("1.2", "Target 1.2 refused: a reliability target lies between 0 and 1, from 0.001 to 0.999; "
            "the target stays as it was."),
    ("85", "Target 85 refused: a reliability target lies between 0 and 1, from 0.001 to 0.999 "
           "(for 85% type 0.85); the target stays as it was."),
    ("0", "Target 0 refused: a reliability target lies between 0 and 1, from 0.001 to 0.999; "
          "the target stays as it was."),
])
def test_a_target_out_of_range_is_refused_with_words_at_the_field(qtbot, dstudy, typed, words):
    panel, state = dstudy
    _type(qtbot, panel.target_spin, "0.875")
    assert state.target == pytest.approx(0.875)
    note = panel.field_notes["target"]
    assert note.isHidden()
    _type(qtbot, panel.target_spin, typed)
    assert state.target == pytest.approx(0.875)  # never 0.200, never silently kept
    assert panel.target_spin.value() == pytest.approx(0.875)
    assert note.isVisible() and note.text() == words
    qtbot.waitUntil(lambda: panel.view is not None and panel.view.readouts.target == pytest.approx(0.875))
    # the next value in range clears the line
    _type(qtbot, panel.target_spin, "0.9")
    assert state.target == pytest.approx(0.9) and note.isHidden()


def test_a_negative_budget_is_refused_and_dollars_with_commas_are_read(qtbot, dstudy):
    panel, state = dstudy
    _type(qtbot, panel.budget_spin, "5000")
    assert state.budget == pytest.approx(5000.0)
    _type(qtbot, panel.budget_spin, "-200")
    assert state.budget == pytest.approx(5000.0)  # not 200: the minus sign is not dropped
    note = panel.field_notes["budget"]
    assert note.isVisible()
    assert note.text() == ("Budget -200 refused: a budget is a positive number of USD (0 for no budget); "
                           "the budget stays as it was.")
    _type(qtbot, panel.budget_spin, "$7,500")
    assert state.budget == pytest.approx(7500.0) and note.isHidden()


def test_models_compared_must_be_a_whole_number_in_range(qtbot, dstudy):
    panel, state = dstudy
    before = state.n_models
    _type(qtbot, panel.models_spin, "2.5")
    assert state.n_models == before
    note = panel.field_notes["n_models"]
    assert note.isVisible()
    assert note.text() == ("Models compared 2.5 refused: a whole number from 1 to 100,000; "
                           "the value stays as it was.")
    _type(qtbot, panel.models_spin, "0")
    assert state.n_models == before
    assert note.text() == ("Models compared 0 refused: models compared runs from 1 to 100,000; "
                           "the value stays as it was.")
    _type(qtbot, panel.models_spin, "12")
    assert state.n_models == 12 and note.isHidden()


def test_the_rules_in_words():
    assert target_problem(0.85) is None and target_problem(0.999) is None
    assert "for 90% type 0.9" in target_problem(90)
    assert "type" not in target_problem(1.2)  # 1.2 is no percentage anyone means: no hint, a refusal
    assert budget_problem(0) is None and budget_problem(12.5) is None
    assert count_problem(3, "models compared") is None
    assert parse_typed("$5,000") == 5000.0 and parse_typed("$ 1e3", prefix="$") == 1000.0
    assert parse_typed("abc") is None and parse_typed("-") is None and parse_typed("") is None


def test_the_typed_components_dialog_refuses_a_size_below_one(qtbot):
    from ddr_explorer.gui.components_entry import ComponentsEntryDialog

    dialog = ComponentsEntryDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.activateWindow()
    spin = dialog.size_spins["n_tasks"]
    _type(qtbot, spin, "-40", Qt.Key_Tab)
    assert spin.value() == pytest.approx(50.0)  # not 40: the minus sign is not dropped
    assert dialog.message.text() == "Tasks -40 refused: a size runs from 1 to 1,000,000; the size stays as it was."
    _type(qtbot, spin, "40", Qt.Key_Tab)
    assert spin.value() == pytest.approx(40.0)


def test_the_screen_says_reliability_per_dollar_as_ddr_dstudy_does():
    """The Cost readout carries the sheet's and ``ddr dstudy``'s reliability per dollar (formatting.fmt_rpd)."""
    import numpy as np

    from ddr_explorer.core.formatting import fmt_rpd, fmt_usd
    from ddr_explorer.gui.readout_words import cost_words

    rng = np.random.default_rng(5)
    c = VarianceComponents.from_mapping({t: (v * np.exp(rng.normal(0, .2, 300))) ** 2 for t, v in
                                         {"task": 3.0, "model": 1.74, "task:model": 1.39}.items()})
    d = DStudyDesign(n_tasks=39, n_scaffolds=2, n_replicates=3, n_models=29,
                     price_per_trial={"terminal-bench-2.0": 0.8})
    r = DStudyModel(c).readouts(d, 0.875)
    assert cost_words(r, d) == (f"{fmt_usd(d.cost())}; "
                                f"{fmt_rpd(r.coefficient.median / 0.8, r.coefficient.median, 0.8)}")
    assert cost_words(r, DStudyDesign(n_tasks=39)) == "no prices entered"
