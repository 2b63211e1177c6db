"""The capability scale (IRT, seed 002 (Krsteski et al. 2026) sec. 5.3) and transfer across benchmarks (seed 003 (DDR paper 2026) sec. 5.5).

Draws the JSON-ready results of ``ddr analyses --which capability,transfer`` (the dict
:func:`ddr_explorer.core.analyses.run_analyses` returns), so the screen and the CLI show the same
numbers: the abilities of the main IRT fit with their 90% intervals, the tasks' difficulty against
their outfit (tasks that fit badly marked), the capability-gap ratio per benchmark with its 95%
interval, and the tables behind them.  The summary lines are core's
(:func:`~ddr_explorer.core.analyses.capability.capability_lines`,
:func:`~ddr_explorer.core.analyses.transfer.transfer_lines`).  Nothing is computed here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QSplitter, QTableWidget, QVBoxLayout, QWidget

from ..core.analyses.capability import capability_lines
from ..core.analyses.transfer import transfer_lines
from . import plots
from .components_panel import numeric_item, text_item

#: Misfitting tasks are drawn in this colour on the difficulty-outfit plot.
MISFIT_COLOR = plots.COLORS["target"]
#: Most subject names on the ability axis (more would overlap; BRIDGE has 132).
MAX_NAMES = 36


_num = plots.float_or_nan


class CapabilityPanel(QWidget):
    """Abilities, task fit and transfer of one corpus.

    Parameters
    ----------
    results
        ``run_analyses`` output holding ``"capability"`` and/or ``"transfer"``.

    Attributes
    ----------
    ability_plot, ability_points, ability_errors
        Median ability (x) per subject (y, best at the top) with its 90% interval.
    item_plot, item_points, misfit_points
        Task difficulty (x) against outfit mean square (y); misfitting tasks in their own item.
    gap_plot, gap_points, gap_errors
        Capability-gap ratio per benchmark, median and 95% interval.
    ability_table, misfit_table, pairs_table
        The numbers behind the plots.
    summary
        Core's headline lines.
    """

    def __init__(self, results: dict, parent: QWidget | None = None):
        super().__init__(parent)
        self.results = results
        cap, tr = results.get("capability"), results.get("transfer")
        lines = []
        self.ability_points = self.ability_errors = self.item_points = self.misfit_points = None
        self.gap_points = self.gap_errors = None
        self.ability_plot = plots.new_plot("Ability (median, 90% interval)", "ability (logit)", "")
        self.item_plot = plots.new_plot("Tasks: difficulty and fit", "difficulty", "outfit mean square")
        self.gap_plot = plots.new_plot("Capability-gap ratio per benchmark (median, 95% HDI)", "benchmark",
                                       "\u03c3\u00b2_a / (\u03c3\u00b2_a + \u03c3\u00b2_a:t)")
        self.ability_table = QTableWidget(0, 6)
        self.ability_table.setHorizontalHeaderLabels(["subject", "ability", "90% lower", "90% upper", "mean rank",
                                                      "rank 95%"])
        self.misfit_table = QTableWidget(0, 6)
        self.misfit_table.setHorizontalHeaderLabels(["task", "misfit", "observed", "predicted", "outfit", "p"])
        self.pairs_table = QTableWidget(0, 6)
        self.pairs_table.setHorizontalHeaderLabels(["benchmarks", "shared families", "rho", "95% lower",
                                                    "95% upper", "P(rho < 0)"])
        if cap:
            lines += capability_lines(cap)
            main = next(iter(cap["models"]))
            self.main_model = main
            self._draw_abilities(cap["models"][main])
            self._draw_items(cap["models"][main])
        else:
            self.main_model = None
            plots.placeholder(self.ability_plot, "not run")
            plots.placeholder(self.item_plot, "not run")
        if tr:
            lines += transfer_lines(tr)
            self._draw_transfer(tr)
        else:
            plots.placeholder(self.gap_plot, "not run")
        for t in (self.ability_table, self.misfit_table, self.pairs_table):
            t.verticalHeader().hide()
            t.setEditTriggers(QAbstractItemView.NoEditTriggers)
            t.resizeColumnsToContents()
        self.summary, head = plots.panel_head(lines, self.plots, self.tables,
                                              "Run Analysis > Capability scale and transfer.")
        top = QSplitter(Qt.Horizontal)
        for w in (self.ability_plot, self.item_plot, self.gap_plot):
            top.addWidget(w)
        bottom = QSplitter(Qt.Horizontal)
        for w in (self.ability_table, self.misfit_table, self.pairs_table):
            bottom.addWidget(w)
        body = QSplitter(Qt.Vertical)
        body.addWidget(top)
        body.addWidget(bottom)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(body, 1)

    # -- drawing ---------------------------------------------------------------------------
    def _draw_abilities(self, m: dict) -> None:
        rows = m["abilities"]  # best first
        n = len(rows)
        y = np.arange(n, 0, -1, dtype=float)  # best at the top
        med = np.array([_num(r["median"]) for r in rows])
        lo = np.array([_num(r["lower90"]) for r in rows])
        hi = np.array([_num(r["upper90"]) for r in rows])
        self.ability_errors = pg.ErrorBarItem(x=med, y=y, left=med - lo, right=hi - med, beam=0.2,
                                              pen=plots.line(plots.COLORS["median"], 1.2))
        self.ability_points = pg.ScatterPlotItem(x=med, y=y, size=7, brush=plots.COLORS["median"])
        self.ability_plot.addItem(self.ability_errors)
        self.ability_plot.addItem(self.ability_points)
        names = [str(r["subject"]) for r in rows]
        left = self.ability_plot.getPlotItem().getAxis("left")
        step = max(1, -(-n // MAX_NAMES))  # every name up to MAX_NAMES subjects, else every step-th (the table has all)
        left.setTicks([[(float(y[k]), plots.elide(names[k], 28)) for k in range(0, n, step)]])
        plots.fit_left_axis(left, [plots.elide(x, 28) for x in names])
        self.ability_plot.setYRange(0.0, n + 1.0, padding=0)  # room for the first and last name
        self.ability_table.setRowCount(n)
        for r, row in enumerate(rows):
            self.ability_table.setItem(r, 0, text_item(row["subject"]))
            for c, key in enumerate(("median", "lower90", "upper90", "mean_rank"), start=1):
                self.ability_table.setItem(r, c, numeric_item(_num(row[key]), 2))
            self.ability_table.setItem(r, 5, text_item(f"{row['rank_lower95']:.0f}-{row['rank_upper95']:.0f}"))

    def _draw_items(self, m: dict) -> None:
        items = m["items"]
        d = np.array([_num(r["difficulty"]) for r in items])
        o = np.array([_num(r["outfit"]) for r in items])
        bad = np.array([bool(r["misfit"]) for r in items])
        self.item_points = pg.ScatterPlotItem(x=d[~bad], y=o[~bad], size=6, brush=plots.COLORS["grid_points"],
                                              pen=None)
        self.misfit_points = pg.ScatterPlotItem(x=d[bad], y=o[bad], size=8, brush=MISFIT_COLOR, pen=None)
        self.item_plot.addItem(self.item_points)
        self.item_plot.addItem(self.misfit_points)
        self.item_plot.addItem(pg.InfiniteLine(1.0, angle=0, pen=plots.line(plots.COLORS["asymptote"], 1,
                                                                             Qt.DashLine)))
        mis = m["misfit"]
        self.misfit_table.setRowCount(len(mis))
        for r, row in enumerate(mis):
            self.misfit_table.setItem(r, 0, text_item(row["task"]))
            self.misfit_table.setItem(r, 1, text_item(row["misfit"]))
            for c, key in enumerate(("observed", "predicted", "outfit", "ppp"), start=2):
                self.misfit_table.setItem(r, c, numeric_item(_num(row[key]), 3))

    def _draw_transfer(self, tr: dict) -> None:
        gaps = [g for g in tr["gap_ratio"] if not g.get("error")]
        x = np.arange(1, len(gaps) + 1, dtype=float)
        med = np.array([_num(g["gap_median"]) for g in gaps])
        lo = np.array([_num(g["gap_lower95"]) for g in gaps])
        hi = np.array([_num(g["gap_upper95"]) for g in gaps])
        if len(gaps):
            self.gap_errors = pg.ErrorBarItem(x=x, y=med, top=hi - med, bottom=med - lo, beam=0.15,
                                              pen=plots.line(plots.COLORS["median"], 1.5))
            self.gap_points = pg.ScatterPlotItem(x=x, y=med, size=9, brush=plots.COLORS["median"])
            self.gap_plot.addItem(self.gap_errors)
            self.gap_plot.addItem(self.gap_points)
            plots.set_category_ticks(self.gap_plot.getPlotItem().getAxis("bottom"), [g["benchmark"] for g in gaps],
                                     offset=1)
            self.gap_plot.setXRange(0.5, len(gaps) + 0.5, padding=0)
            self.gap_plot.setYRange(0.0, 1.0, padding=0.02)
        pairs = tr["pairs"]
        self.pairs_table.setRowCount(len(pairs))
        for r, p in enumerate(pairs):
            self.pairs_table.setItem(r, 0, text_item(f"{p['benchmark_a']} vs {p['benchmark_b']}"))
            self.pairs_table.setItem(r, 1, numeric_item(p["n_shared"], 0))
            for c, key in enumerate(("rho_median", "rho_lower95", "rho_upper95", "prob_negative"), start=2):
                self.pairs_table.setItem(r, c, numeric_item(_num(p[key]), 2))

    # -- export ------------------------------------------------------------------------------
    def plots(self) -> dict:
        return {"Abilities": self.ability_plot, "Task fit": self.item_plot, "Gap ratio": self.gap_plot}

    def tables(self) -> dict:
        return {"Abilities": self.ability_table, "Tasks fitting badly": self.misfit_table,
                "Family rank correlations": self.pairs_table}

    def export_plot(self, name: str, path) -> Path:
        return plots.export_plot(self.plots()[name], path)

    def export_table(self, name: str, path) -> Path:
        return plots.export_table(self.tables()[name], path)


__all__ = ["CapabilityPanel"]
