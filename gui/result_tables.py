"""Small pieces shared by the analysis tabs' tables and plots (Failure modes, Frontier)."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView

__all__ = ["PENS", "finish_tables"]

#: Line colours of the analysis plots (Okabe-Ito, colour-blind safe), in the order the series come.
PENS = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#5c5c5c")


def finish_tables(tables) -> None:
    """Read-only tables with their columns fitted to the contents and no row header."""
    for t in tables:
        t.verticalHeader().hide()
        t.setEditTriggers(QAbstractItemView.NoEditTriggers)
        t.resizeColumnsToContents()
