"""The Compare tab: two agents, one decision (core/pair_comparison.py, core/pair_sizing.py).

Two pickers choose A and B among the fit's models; the comparison runs on a worker thread through
:func:`~ddr_explorer.core.pair_comparison.pair_decision` (the function ``ddr compare`` and the DDR sheet's
"Two agents" page call), at the D-study tab's scaffolds per model and trials per cell, and the panel draws
its result: the buyer's sentence, the differences (posterior, paired test, difficulty strata), and the
sizing curve P(right one ahead) against the tasks of a new evaluation with the 0.8 / 0.9 / 0.95 lines.
Nothing is computed here.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QPushButton, QSplitter, QTableWidget, QVBoxLayout,
                               QWidget)

from . import plots
from .components_panel import text_item
from .workers import BackgroundTask

__all__ = ["ComparePanel"]


def _pts(x: float) -> str:
    return f"{x * 100:+.1f}"


def _n(x: float) -> str:
    return "never" if not math.isfinite(x) else f"{x:,.0f}"


class ComparePanel(QWidget):
    """Pickers, the pair's numbers and the sizing curve.

    Parameters
    ----------
    posterior, corpus, components
        The fit (random effects of the models kept), its corpus and its variance components.
    names
        The models to offer (the Ranks tab's order: best first).
    sizes
        ``callable() -> dict``: the design a new evaluation keeps (the D-study tab's sizes).

    Attributes
    ----------
    pick_a, pick_b, run_button, sentence, table, sizing_table, curve_plot
        Widgets; ``decision`` the last :class:`~ddr_explorer.core.pair_comparison.PairDecision` drawn.
    """

    def __init__(self, posterior, corpus, components, names: list[str], sizes=None, parent: QWidget | None = None,
                 state=None):
        super().__init__(parent)
        self.posterior, self.corpus, self.components = posterior, corpus, components
        self.sizes = sizes
        self.decision = None
        self._task: BackgroundTask | None = None
        self._stale = False
        if state is not None:  # the D-study tab's scaffolds and trials: a new size re-sizes the pair
            cb = self._on_state_changed
            state.events.connect(cb)
            self.destroyed.connect(lambda: state.events.disconnect(cb))
        self.pick_a, self.pick_b = QComboBox(), QComboBox()
        for box, name in ((self.pick_a, "compare_a"), (self.pick_b, "compare_b")):
            box.addItems(names)
            box.setObjectName(name)
            box.setMinimumContentsLength(18)
        if len(names) > 1:
            self.pick_b.setCurrentIndex(1)
        self.run_button = QPushButton("Compare")
        self.run_button.setObjectName("compare_run")
        self.run_button.clicked.connect(self.run)
        self.status = QLabel("Choose two models and press Compare.")
        top = QHBoxLayout()
        for w in (QLabel("A"), self.pick_a, QLabel("against B"), self.pick_b, self.run_button):
            top.addWidget(w)
        top.addWidget(self.status, 1)
        self.sentence = QLabel("")
        self.sentence.setWordWrap(True)
        self.sentence.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.sentence.setObjectName("compare_sentence")
        self.table = QTableWidget(0, 4)
        self.table.setObjectName("compare_table")
        self.table.setHorizontalHeaderLabels(["", "difference", "95% interval", "P(A ahead)"])
        self.table.verticalHeader().hide()
        self.sizing_table = QTableWidget(0, 4)
        self.sizing_table.setObjectName("compare_sizing")
        self.sizing_table.setHorizontalHeaderLabels(["scaffolds per model", "tasks for P \u2265 0.8",
                                                     "tasks for P \u2265 0.9", "tasks for P \u2265 0.95"])
        self.sizing_table.verticalHeader().hide()
        self.curve_plot = plots.new_plot("P(a new evaluation puts the better one ahead)", "tasks (log scale)",
                                         "P(right one ahead)", log_x=True)
        self.curve_plot.setObjectName("compare_curve")
        left = QSplitter(Qt.Vertical)
        left.addWidget(self.table)
        left.addWidget(self.sizing_table)
        row = QSplitter(Qt.Horizontal)
        row.addWidget(left)
        row.addWidget(self.curve_plot)
        row.setSizes([520, 620])
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.sentence)
        layout.addWidget(row, 1)

    def _on_state_changed(self, names) -> None:
        """Scaffolds per model or trials per cell moved on the D-study tab: compare again at them (now when
        the tab is on screen, else when it is shown; the tasks are what the sizing varies)."""
        if self.decision is None or not ({"n_scaffolds", "n_replicates"} & set(names)):
            return
        if self.isVisible():
            self.run()
        else:
            self._stale = True

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._stale:
            self._stale = False
            self.run()

    # -- running -----------------------------------------------------------------------------
    def run(self) -> None:
        """Compare the two picked models on a worker thread (the window stays responsive)."""
        from ..core.pair_comparison import pair_decision

        a, b = self.pick_a.currentText(), self.pick_b.currentText()
        if a == b:
            self.status.setText("Pick two different models.")
            return
        if self._task is not None:
            self._task.discard()
        sizes = self.sizes() if self.sizes is not None else None
        job = functools.partial(pair_decision, self.posterior, self.corpus, self.components, a, b, "model", sizes)
        self.status.setText(f"Comparing {a} with {b}...")
        self.run_button.setEnabled(False)
        self._task = BackgroundTask(job, parent=self, interval_ms=20)
        self._task.finished.connect(self._done)
        self._task.errored.connect(self._failed)

    def _failed(self, exc: BaseException) -> None:
        self._task = None
        self.run_button.setEnabled(True)
        self.status.setText(f"The comparison failed: {exc}")

    def _done(self, decision) -> None:
        self._task = None
        self.run_button.setEnabled(True)
        self.status.setText("")
        self.draw(decision)

    # -- drawing -----------------------------------------------------------------------------
    def draw(self, decision) -> None:
        """Draw a :class:`~ddr_explorer.core.pair_comparison.PairDecision`."""
        self.decision = decision
        c, s = decision.comparison, decision.sizing
        self.sentence.setText(c.sentence + (f"  ({c.disagreement}.)" if c.disagreement else ""))
        f = c.paired
        rows = [("latent ability (logit)", f"{c.latent_difference.median:+.3f}",
                 f"{c.latent_difference.hdi95[0]:+.3f} to {c.latent_difference.hdi95[1]:+.3f}", c.p_a_better),
                ("success rate, points (posterior)", _pts(c.rate_difference.median),
                 f"{_pts(c.rate_difference.hdi95[0])} to {_pts(c.rate_difference.hdi95[1])}", c.p_a_better),
                (f"paired test, {f.n_tasks} shared tasks", _pts(f.difference),
                 f"{_pts(f.lower95)} to {_pts(f.upper95)}", f.p_ahead)]
        rows += [(f"{label}, {v['tasks']} tasks (observed)", _pts(v["difference"]),
                  f"{_pts(v['lower95'])} to {_pts(v['upper95'])}", v["p_a_ahead"]) for label, v in c.by_stratum.items()]
        self.table.setRowCount(len(rows))
        for i, (label, d, ci, p) in enumerate(rows):
            for k, text in enumerate((label, d, ci, f"{p:.2f}")):
                self.table.setItem(i, k, text_item(text))
        self.table.resizeColumnsToContents()
        by = s.by_scaffolds or {s.n_scaffolds: s.tasks_for}
        self.sizing_table.setRowCount(len(by))
        for i, (k, v) in enumerate(by.items()):
            self.sizing_table.setItem(i, 0, text_item(f"{k:g}" + (" (as observed)" if k == s.n_scaffolds else "")))
            for j, n in enumerate(v.values(), start=1):
                self.sizing_table.setItem(i, j, text_item(_n(n)))
        self.sizing_table.resizeColumnsToContents()
        self._draw_curve(s)

    def _draw_curve(self, s) -> None:
        p = self.curve_plot.getPlotItem()
        p.clear()
        # the plot is in log-x mode: data in tasks, lines in its log10 coordinates (pyqtgraph's convention)
        p.plot(np.asarray(s.curve_n, dtype=float), s.curve_p, pen=pg.mkPen(plots.COLORS["median"], width=2))
        for q in s.tasks_for:
            p.addLine(y=q, pen=pg.mkPen(plots.COLORS.get("target", "#d95f02"), style=Qt.DashLine))
        p.addLine(x=math.log10(max(s.observed_tasks, 1.0)), pen=pg.mkPen("#888888", style=Qt.DotLine))
        p.setYRange(0.45, 1.0, padding=0.02)

    def plots(self) -> dict:
        return {"Pair sizing": self.curve_plot}

    def tables(self) -> dict:
        return {"Pair comparison": self.table, "Pair sizing": self.sizing_table}
