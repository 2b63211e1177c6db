"""Failure modes, the frontier over time, and the slice chooser (issue 19, items 2 and 4).

The panels draw the JSON-ready results of :mod:`ddr_explorer.core.analyses.failure_modes` and
:mod:`ddr_explorer.core.analyses.frontier_time` (what ``ddr analyses --which failure-modes,frontier
--json`` prints), so the screen and the CLI show the same numbers; their text lines come from core's
``format_failure_modes`` / ``format_frontier``.  The slice dialog offers core's
:func:`~ddr_explorer.core.corpus.slicing.slice_choices` and returns a ``--slice`` text; the main window
reopens the corpus with it (``load_corpus(..., slice=...)``).  Nothing is computed here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel,
                               QLineEdit, QListWidget, QPushButton, QSplitter, QTableWidget, QVBoxLayout, QWidget)

from ..core.analyses.failure_modes import format_failure_modes
from ..core.analyses.frontier_time import format_frontier
from ..core.corpus.slicing import slice_choices
from . import plots
from .components_panel import numeric_item, text_item

__all__ = ["FailureModesPanel", "FrontierPanel", "SliceDialog"]

_PENS = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#5c5c5c")


_num = plots.float_or_nan


def _finish(tables) -> None:
    for t in tables:
        t.verticalHeader().hide()
        t.setEditTriggers(QAbstractItemView.NoEditTriggers)
        t.resizeColumnsToContents()


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
                                      pen=plots.line(_PENS[r % len(_PENS)], 1))
                self.scatter_plot.addItem(err)
                label = pg.TextItem(plots.elide(c["category"]), color="#333333", anchor=(0, 1))
                label.setPos(x[-1], y[-1])
                self.scatter_plot.addItem(label)
            self.scatter_points = pg.ScatterPlotItem(x=np.array(x, float), y=np.array(y, float), size=10,
                                                     brush=[pg.mkBrush(_PENS[k % len(_PENS)]) for k in range(len(x))])
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
        _finish((self.categories_table, self.facets_table))
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
                col = _PENS[k % len(_PENS)]
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
        _finish((self.table,))
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


class SliceDialog(QDialog):
    """Choose a slice of tasks: a task-level column, then values (text) or a range (numeric).

    :meth:`slice_text` is the ``--slice`` text of the choice ("" when nothing is chosen or "Whole corpus" was
    pressed).  The choices are those of the table given (the main window passes the open corpus: to widen an
    active slice, go back to the whole corpus first).
    """

    def __init__(self, table, current: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Slice of tasks")
        self.choices = slice_choices(table)
        self.column = QComboBox()
        self.column.addItems(list(self.choices))
        self.values = QListWidget()
        self.values.setSelectionMode(QAbstractItemView.MultiSelection)
        self.lo, self.hi = QLineEdit(), QLineEdit()
        self.info = QLabel("")
        self.info.setWordWrap(True)
        form = QFormLayout()
        form.addRow("column", self.column)
        form.addRow("values", self.values)
        form.addRow("from", self.lo)
        form.addRow("to", self.hi)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.whole = False  # "Whole corpus": accept with no slice
        self.whole_button = QPushButton("Whole corpus (no slice)")
        buttons.addButton(self.whole_button, QDialogButtonBox.ResetRole)
        self.whole_button.clicked.connect(self._whole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Every fit, D-study and frontier then runs on the chosen tasks only"
                                + (f" (now: {current})." if current else ".")))
        layout.addLayout(form)
        layout.addWidget(self.info)
        layout.addWidget(buttons)
        self.column.currentTextChanged.connect(self._show_column)
        preferred = next((c for c in ("task_group", "human_minutes", "difficulty_label") if c in self.choices), None)
        if preferred:
            self.column.setCurrentText(preferred)
        self._show_column(self.column.currentText())

    def _show_column(self, col: str) -> None:
        c = self.choices.get(col)
        self.values.clear()
        numeric = c is not None and c["kind"] == "numeric"
        for w in (self.lo, self.hi):
            w.setEnabled(numeric)
        self.values.setEnabled(not numeric)
        if c is None:
            return
        if numeric:
            self.lo.setText(f"{c['min']:g}")
            self.hi.setText(f"{c['max']:g}")
            self.info.setText(f"{col}: {c['min']:g} to {c['max']:g} over {c['n_tasks']} tasks (ends included)")
        else:
            for v, n in c["values"].items():
                self.values.addItem(f"{v}  ({n} tasks)")
                self.values.item(self.values.count() - 1).setData(Qt.UserRole, v)
            more = c.get("n_values", 0) - len(c["values"])
            self.info.setText(f"{col}: {c.get('n_values', len(c['values']))} values" +
                              (f" ({more} more not listed: type them as {col}=A|B on the command line)" if more > 0
                               else ""))

    def _whole(self) -> None:
        self.whole = True
        self.accept()

    def slice_text(self) -> str:
        if self.whole:
            return ""
        col = self.column.currentText()
        c = self.choices.get(col)
        if c is None:
            return ""
        if c["kind"] == "numeric":
            lo, hi = self.lo.text().strip(), self.hi.text().strip()
            return f"{col}={lo}..{hi}" if (lo or hi) else ""
        vals = [it.data(Qt.UserRole) for it in self.values.selectedItems()]
        return f"{col}={'|'.join(vals)}" if vals else ""
