"""File > Open HAL demo corpus opens the bundled HAL slice (tau-bench Airline) through the hal format."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytestmark = pytest.mark.gui

from ddr_explorer.gui.main_window import MainWindow  # noqa: E402


def test_the_file_menu_opens_the_hal_demo(qtbot):
    window = MainWindow()
    qtbot.addWidget(window)
    file_menu = window.menuBar().actions()[0].menu()
    (action,) = [a for a in file_menu.actions() if "HAL demo" in a.text()]
    with qtbot.waitSignal(window.corpus_loaded, timeout=30_000):
        action.trigger()
    c = window.corpus
    assert (c.format, c.n_records, c.n_levels("scaffold"), c.n_levels("model")) == ("hal", 2099, 3, 23)
    assert "Filtered" in window.summary_view.toPlainText()
