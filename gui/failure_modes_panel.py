"""The Failure modes tab: per error category, where agents differ against where failures appear.

It draws the JSON-ready result of :mod:`ddr_explorer.core.analyses.failure_modes` (what ``ddr analyses
--which failure-modes --json`` prints; the DDR paper 2026, secs. 5.6-5.7), so the screen and the CLI show
the same numbers; its text comes from core's ``format_failure_modes``.  Nothing is computed here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QTableWidget, QVBoxLayout, QWidget

from ..core.analyses.failure_modes import format_failure_modes
from . import plots
from .components_panel import numeric_item, text_item
from .result_tables import PENS, finish_tables

__all__ = ["FailureModesPanel"]


_num = plots.float_or_nan


class FailureModesPanel(QWidget):
    """Per error category: agent x task variance against activation rate, the four-facet G-study, the hold-out.

    Attributes
    ----------
    scatter_plot, scatter_points
        One point per category: sigma^2_a:t (x) against activation rate (y).
    categories_table, facets_table
        The per-category numbers and the four-facet variance shares.
    summary
        core's text of the result (convergence first).
    """

    def __init__(self, result: dict, parent: QWidget | None = None):
        super().__init__(parent)
        self.result = result
        self.scatter_plot = plots.new_plot("Where agents differ against where failures appear",
                                           "agent \u00d7 task variance \u03c3\u00b2 (logit)", "activation rate")
        self.categories_table = QTableWidget(0, 7)
        self.categories_table.setHorizontalHeaderLabels(["category", "\u03c3\u00b2 a\u00d7t", "95% lower", "95% upper",
                                                         "activation", "95% lower", "95% upper"])
        self.facets_table = QTableWidget(0, 4)
        self.facets_table.setHorizontalHeaderLabels(["term (four-facet G-study)", "\u03c3\u00b2 median", "share",
                                                     "95% share"])
        self.scatter_points = None
        if "skipped" in result:
            plots.placeholder(self.scatter_plot, "no error-category facet")
            lines = [format_failure_modes(result)]
        else:
            cats = result["categories"]
            self.categories_table.setRowCount(len(cats))
            x, y = [], []
            for r, c in enumerate(cats):
                self.categories_table.setItem(r, 0, text_item(c["category"]))
                for col, key in enumerate(("interaction_variance", "interaction_lower95", "interaction_upper95",
                                           "activation_rate", "activation_lower95", "activation_upper95"), start=1):
                    self.categories_table.setItem(r, col, numeric_item(_num(c[key]), 3))
                x.append(c["interaction_variance"])
                y.append(c["activation_rate"])
                err = pg.ErrorBarItem(x=np.array([x[-1]]), y=np.array([y[-1]]),
                                      left=np.array([x[-1] - c["interaction_lower95"]]),
                                      right=np.array([c["interaction_upper95"] - x[-1]]),
                                      top=np.array([c["activation_upper95"] - y[-1]]),
                                      bottom=np.array([y[-1] - c["activation_lower95"]]),
                                      pen=plots.line(PENS[r % len(PENS)], 1))
                self.scatter_plot.addItem(err)
                label = pg.TextItem(plots.elide(c["category"]), color="#333333", anchor=(0, 1))
                label.setPos(x[-1], y[-1])
                self.scatter_plot.addItem(label)
            self.scatter_points = pg.ScatterPlotItem(x=np.array(x, float), y=np.array(y, float), size=10,
                                                     brush=[pg.mkBrush(PENS[k % len(PENS)]) for k in range(len(x))])
            self.scatter_plot.addItem(self.scatter_points)
            terms = sorted(result["four_facet"].items(), key=lambda kv: -kv[1]["share_median"])
            self.facets_table.setRowCount(len(terms))
            for r, (term, c) in enumerate(terms):
                self.facets_table.setItem(r, 0, text_item(term))
                self.facets_table.setItem(r, 1, numeric_item(c["median"], 3))
                self.facets_table.setItem(r, 2, numeric_item(c["share_median"], 3))
                self.facets_table.setItem(r, 3, text_item(f"{c['share_lower95']:.3f} \u2013 {c['share_upper95']:.3f}"))
            lines = format_failure_modes(result).splitlines()
            lines = [lines[0]] + [ln.strip() for ln in lines if "rank correlation" in ln or "hold-out" in ln]
        finish_tables((self.categories_table, self.facets_table))
        self.summary, head = plots.panel_head(lines, self.plots, self.tables, "Not run.")
        top = QSplitter(Qt.Horizontal)
        top.addWidget(self.scatter_plot)
        top.addWidget(self.facets_table)
        body = QSplitter(Qt.Vertical)
        body.addWidget(top)
        body.addWidget(self.categories_table)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(body, 1)

    def plots(self) -> dict:
        return {"Failure modes": self.scatter_plot}

    def tables(self) -> dict:
        return {"Failure categories": self.categories_table, "Four-facet G-study": self.facets_table}

    def export_plot(self, name: str, path) -> Path:
        return plots.export_plot(self.plots()[name], path)

    def export_table(self, name: str, path) -> Path:
        return plots.export_table(self.tables()[name], path)
