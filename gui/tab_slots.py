"""The main window's tabs: their titles, in order, and the slot each tab page is.

A tab page is a :class:`Slot` whose one child, a panel or a :func:`placeholder`, is replaced when a new
result is shown (each panel receives its model in its constructor).  The window and the flows it drives
(:mod:`.corpus_opening`, :mod:`.fit_flow`, :mod:`.analysis_jobs`) all address the tabs by title through
:data:`TABS`, so the titles live here, below all of them.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

#: Tab titles, in order.
TABS = ("Corpus", "Model", "Variance components", "D-study", "Ranks", "Compare", "Diagnostics", "Analyses", "Methods",
        "Failure modes", "Frontier", "Capability")


def placeholder(text: str) -> QLabel:
    """The grey, centred text a tab shows until it has a result."""
    lab = QLabel(text)
    lab.setAlignment(Qt.AlignCenter)
    lab.setWordWrap(True)
    lab.setStyleSheet("color: #555555;")
    return lab


class Slot(QWidget):
    """A tab page whose single child (a panel or a placeholder) can be replaced."""

    def __init__(self, child: QWidget):
        super().__init__()
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.child = child
        self._layout.addWidget(child)

    def replace(self, child: QWidget) -> None:
        old = self.child
        self._layout.removeWidget(old)
        old.setParent(None)
        old.deleteLater()
        self.child = child
        self._layout.addWidget(child)


__all__ = ["TABS", "Slot", "placeholder"]
