"""The Frontier tab: the best success fraction per release quarter (Krsteski et al. 2026, sec. 5.1).

It draws the JSON-ready result of :mod:`ddr_explorer.core.analyses.frontier_time` (what ``ddr analyses
--which frontier --json`` prints), so the screen and the CLI show the same numbers; its text comes from
core's ``format_frontier``.  Nothing is computed here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QTableWidget, QVBoxLayout, QWidget

from ..core.analyses.frontier_time import format_frontier
from . import plots
from .components_panel import numeric_item, text_item
from .result_tables import PENS, finish_tables

__all__ = ["FrontierPanel"]


_num = plots.float_or_nan


class FrontierPanel(QWidget):
    """The group frontier per release quarter with its 95% band, and the per-benchmark table.

    Attributes
    ----------
    frontier_plot, curves
        One curve per benchmark group (x: quarter index; tick labels the quarters).
    table
        One row per (benchmark, quarter).
    summary
        core's text of the result, or why it stopped (models without release dates).
    """

    def __init__(self, result: dict, parent: QWidget | None = None):
        super().__init__(parent)
        self.result = result
        self.frontier_plot = plots.new_plot("Frontier over time: best agent per task, models released by then",
                                            "release quarter", "frontier score")
        self.table = QTableWidget(0, 7)
        self.table.setHorizontalHeaderLabels(["benchmark", "group", "quarter", "frontier", "95% lower", "95% upper",
                                              "coverage"])
        self.curves = []
        if "stopped" in result:
            plots.placeholder(self.frontier_plot, "stopped: release dates missing")
            lines = [format_frontier(result)]
        else:
            q = result["quarters"]
            x = np.arange(len(q), dtype=float)
            self.frontier_plot.addLegend(offset=(10, 10))
            for k, g in enumerate(result["groups"]):
                y = np.array([_num(v) for v in g["frontier"]])
                lo = np.array([_num(v) for v in g["lower95"]])
                hi = np.array([_num(v) for v in g["upper95"]])
                col = PENS[k % len(PENS)]
                ok = np.isfinite(lo) & np.isfinite(hi)
                if ok.sum() >= 2:
                    a = pg.PlotDataItem(x[ok], lo[ok], pen=pg.mkPen(None))
                    b = pg.PlotDataItem(x[ok], hi[ok], pen=pg.mkPen(None))
                    fill = pg.FillBetweenItem(a, b, brush=pg.mkBrush(pg.mkColor(col).red(), pg.mkColor(col).green(),
                                                                     pg.mkColor(col).blue(), 45))
                    self.frontier_plot.addItem(fill)
                fin = np.isfinite(y)
                curve = self.frontier_plot.plot(x[fin], y[fin], pen=plots.line(col, 2), symbol="o", symbolSize=5,
                                                symbolBrush=col, name=g["group"])
                self.curves.append(curve)
            step = max(1, int(np.ceil(len(q) / 10)))
            self.frontier_plot.getPlotItem().getAxis("bottom").setTicks([[(i, q[i]) for i in range(0, len(q), step)]])
            self.frontier_plot.setYRange(0, 1, padding=0.02)
            rows = [(b, i) for b in result["benchmarks"] for i in range(len(q)) if b["frontier"][i] is not None]
            self.table.setRowCount(len(rows))
            for r, (b, i) in enumerate(rows):
                self.table.setItem(r, 0, text_item(b["benchmark"]))
                self.table.setItem(r, 1, text_item(b["group"]))
                self.table.setItem(r, 2, text_item(q[i]))
                for c, key in enumerate(("frontier", "lower95", "upper95", "coverage"), start=3):
                    self.table.setItem(r, c, numeric_item(_num(b[key][i]), 3))
            lines = [ln.strip() for ln in format_frontier(result).splitlines()
                     if not ln.startswith("  ") or "LEFT OUT" in ln or "net growth" in ln or "last frontier" in ln]
        finish_tables((self.table,))
        self.summary, head = plots.panel_head(lines, self.plots, self.tables, "Not run.")
        body = QSplitter(Qt.Vertical)
        body.addWidget(self.frontier_plot)
        body.addWidget(self.table)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(body, 1)

    def plots(self) -> dict:
        return {"Frontier": self.frontier_plot}

    def tables(self) -> dict:
        return {"Frontier per benchmark": self.table}

    def export_plot(self, name: str, path) -> Path:
        return plots.export_plot(self.plots()[name], path)

    def export_table(self, name: str, path) -> Path:
        return plots.export_table(self.tables()[name], path)
