"""Help > About / References lists every cited work once, and what the app shows cites no "seed 00x"."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("PySide6")
pytestmark = pytest.mark.gui

from PySide6.QtWidgets import (QAbstractButton, QComboBox, QGroupBox, QLabel, QPlainTextEdit, QTextEdit,  # noqa: E402
                               QWidget)

from ddr_explorer.core.files import demo_corpus_path  # noqa: E402
from ddr_explorer.core.references import REFERENCES  # noqa: E402
from ddr_explorer.gui.about_dialog import AboutDialog  # noqa: E402
from ddr_explorer.gui.components_entry import PRESETS  # noqa: E402
from ddr_explorer.gui.main_window import MainWindow  # noqa: E402

SEED = re.compile(r"seed ?0{2}\d", re.I)


def _shown_text(window) -> list[str]:
    """Every text, title, tooltip, combo item and menu action a user can see in ``window``."""
    out = [a.text() + " " + a.toolTip() for a in window.findChildren(type(window.about_action))]
    for w in window.findChildren(QWidget):
        out.append(w.toolTip())
        if isinstance(w, (QLabel, QAbstractButton)):
            out.append(w.text())
        elif isinstance(w, QGroupBox):
            out.append(w.title())
        elif isinstance(w, (QTextEdit, QPlainTextEdit)):
            out.append(w.toPlainText())
        elif isinstance(w, QComboBox):
            out += [w.itemText(i) for i in range(w.count())]
    return out


def test_help_menu_about_lists_every_reference_once(qtbot):
    window = MainWindow()
    qtbot.addWidget(window)
    menus = [a.text() for a in window.menuBar().actions()]
    assert "&Help" in menus and window.about_action.text() == "&About / References"
    dialog = AboutDialog(window)
    qtbot.addWidget(dialog)
    text = dialog.text.toPlainText()
    assert "References" in text
    for ref in REFERENCES.values():
        assert text.count(ref.full) == 1, ref.key
    assert not SEED.search(text)


def test_the_app_cites_by_author_year(qtbot):
    window = MainWindow()
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.corpus_loaded, timeout=30_000):
        window.open_corpus(demo_corpus_path())
    shown = "\n".join(_shown_text(window) + list(PRESETS))
    assert not SEED.search(shown), SEED.search(shown)
    # the corpus summary and the model presets name the paper instead
    assert "Connectivity (Hardy et al. 2026, App. E)" in shown
    assert "DDR four-facet design (DDR paper 2026, Eq. 1)" in shown
