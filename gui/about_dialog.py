"""Help > About / References: the app's version and the full entries of the works its text cites.

The app cites by author-year form (``Hardy et al. 2026, App. E``) through
:func:`ddr_explorer.core.references.cite`; this dialog lists every work of that table once.
"""

from __future__ import annotations

from html import escape

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMainWindow, QTextBrowser, QVBoxLayout

from .. import __version__
from ..core.references import REFERENCES

__all__ = ["AboutDialog", "about_html", "add_help_menu"]


def about_html() -> str:
    """The dialog's text: what the app is, its version, and the References list (HTML)."""
    items = "".join(f"<li>{escape(r.full)}</li>" for r in REFERENCES.values())
    return (f"<h3>DDR Explorer {escape(__version__)}</h3>"
            "<p>Bayesian generalizability-theory variance decompositions of AI-agent evaluation corpora: "
            "G-studies, D-studies, rankings and the DDR sheet. Where the app cites a method it names the work by "
            "author and year; the full entries are below.</p>"
            f"<h4>References</h4><ul>{items}</ul>")


class AboutDialog(QDialog):
    """A read-only, selectable About / References text with a Close button."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle("About DDR Explorer / References")
        self.text = QTextBrowser()
        self.text.setOpenExternalLinks(False)
        self.text.setHtml(about_html())
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        self.resize(640, 520)


def add_help_menu(window: QMainWindow) -> QAction:
    """Add Help > About / References to ``window``'s menu bar; returns the action (tests trigger it)."""
    menu = window.menuBar().addMenu("&Help")
    act = QAction("&About / References", window, triggered=lambda: AboutDialog(window).exec())
    menu.addAction(act)
    return act
