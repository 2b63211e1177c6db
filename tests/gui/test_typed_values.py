"""A number typed into a spin box reaches the state whole: the state never writes back into the box the user types in.

Every spin box of the D-study and Model tabs is typed into key by key, as a user types, then committed
with Enter; the state and the box must then hold exactly the typed number.
"""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from ddr_explorer.core.session import AnalysisState  # noqa: E402
from ddr_explorer.gui.model_panel import ModelPanel  # noqa: E402


def _type(qtbot, spin, text: str) -> None:
    """Focus the box, select all, type ``text`` key by key and press Enter."""
    spin.setFocus()
    qtbot.waitUntil(spin.hasFocus, timeout=2000)
    spin.selectAll()
    for ch in text:
        QTest.keyClick(spin, ch)
    QTest.keyClick(spin, Qt.Key_Return)


@pytest.mark.parametrize("typed, field, expected", [("0.875", "target", 0.875), ("0.905", "target", 0.905),
                                                      ("2500.75", "budget", 2500.75), ("137", "n_models", 137)])
def test_dstudy_boxes_keep_every_typed_digit(qtbot, dstudy, typed, field, expected):
    panel, state = dstudy
    spin = {"target": panel.target_spin, "budget": panel.budget_spin, "n_models": panel.models_spin}[field]
    _type(qtbot, spin, typed)
    assert getattr(state, field) == pytest.approx(expected)
    assert spin.value() == pytest.approx(expected)


def test_dstudy_target_is_not_written_while_typing(qtbot, dstudy):
    """Half typed, the box holds what the user typed and the state has not moved."""
    panel, state = dstudy
    before = state.effective_target
    spin = panel.target_spin
    spin.setFocus()
    qtbot.waitUntil(spin.hasFocus, timeout=2000)
    spin.selectAll()
    for ch in "0.87":
        QTest.keyClick(spin, ch)
    assert spin.text() == "0.87" and state.effective_target == before
    QTest.keyClick(spin, Qt.Key_Return)
    assert state.target == pytest.approx(0.87)


@pytest.mark.parametrize("name, typed, read", [
    ("accept_spin", "0.95", lambda st: st.sampler_settings().target_accept),
    ("sigma_scale", "2.75", lambda st: st.model_priors().sigma.scale),
    ("draws_spin", "1250", lambda st: st.sampler_settings().draws),
    ("seed_spin", "20261203", lambda st: st.sampler_settings().seed),
])
def test_model_boxes_keep_every_typed_digit(qtbot, name, typed, read):
    state = AnalysisState()
    panel = ModelPanel(state)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    panel.activateWindow()
    _type(qtbot, getattr(panel, name), typed)
    assert read(state) == pytest.approx(float(typed))


def test_a_long_formula_shows_its_start(qtbot):
    formula = ("successes | trials(trials) ~ 1 + (1|task) + (1|model) + (1|scaffold) + (1|task:model) "
               "+ (1|task:scaffold) + (1|model:scaffold)")
    state = AnalysisState(model=formula)
    panel = ModelPanel(state)
    qtbot.addWidget(panel)
    panel.resize(900, 700)
    panel.show()
    assert panel.formula_edit.text() == formula
    assert panel.formula_edit.cursorPosition() == 0 and panel.formula_edit.toolTip() == formula
