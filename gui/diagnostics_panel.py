"""Convergence diagnostics of a fit: R-hat, effective sample sizes, divergences, E-BFMI, Pareto k.

Every number is the :class:`~ddr_explorer.core.model.diagnostics.Diagnostics`
core computed for the posterior (SPEC sec. 6; rank-normalised split R-hat and
bulk/tail ESS of Vehtari et al. 2021, as ArviZ computes them).  A value that
fails the convergence rule (R-hat > 1.01, bulk ESS < 400) is drawn in red; a
fit that fails it says so at the top, with core's reasons, and the window
marks every view of it as unconverged.  Pareto k of PSIS-LOO is shown when
the analysis that computes it has run (``pareto_k``), else the panel says it
has not.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from ..core.formatting import convergence_verdict
from ..core.model.diagnostics import MAX_R_HAT, MIN_ESS_BULK, Diagnostics
from ..core.references import cite
from . import plots
from .components_panel import numeric_item, text_item

#: Columns of the table: (header, key of Diagnostics.table).
COLUMNS = (("term", None), ("posterior mean \u03c3", "mean"), ("posterior sd", "sd"), ("R-hat", "r_hat"),
           ("bulk ESS", "ess_bulk"), ("tail ESS", "ess_tail"))
_BAD = QColor("#a40000")


class DiagnosticsPanel(QWidget):
    """The diagnostics of one fit.

    Parameters
    ----------
    diagnostics
        Core's :class:`~ddr_explorer.core.model.diagnostics.Diagnostics`.
    fit_info
        Optional plain facts shown under the verdict (device, wall time, settings, cache file).
    pareto_k
        Optional array of PSIS-LOO Pareto k values (one per observation).
    loo
        Optional PSIS-LOO summary (``LooResult.to_dict()``: counts of good, bad, very bad k).

    Attributes
    ----------
    verdict, table, rhat_plot, ess_plot, rhat_bars, ess_bars
        The widgets and items drawn.
    """

    def __init__(self, diagnostics: Diagnostics, fit_info: dict | None = None, pareto_k=None,
                 loo: dict | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.diagnostics = d = diagnostics
        self.terms = list(d.table.index)
        self.verdict = QLabel()
        self.verdict.setTextFormat(Qt.RichText)
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextSelectableByMouse)
        verdict = _html(convergence_verdict({"converged": d.converged, "max_rhat": d.max_r_hat,
                                             "min_ess_bulk": d.min_ess_bulk, "divergences": d.divergences}))
        if d.converged:
            head = f"<b style='color:#006400'>{verdict}</b>: R-hat ({cite('vehtari2021')}) \u2264 {MAX_R_HAT} and bulk ESS \u2265 " \
                   f"{MIN_ESS_BULK} for every variance component, no divergent transition."
        else:
            head = f"<b style='color:#a40000'>{verdict}</b> \u2014 the numbers of this fit are not to be " \
                   "trusted:<ul>" + "".join(f"<li>{_html(p)}</li>" for p in d.problems) + "</ul>"
        lines = [f"{d.n_draws:,} post-warmup draws; divergent transitions: {d.divergences}",
                 "E-BFMI per chain: " + ", ".join(f"{v:.2f}" for v in np.atleast_1d(d.ebfmi))]
        lines += [f"warning: {w}" for w in d.warnings]
        if loo is not None:
            from ..core.analyses.loo import pareto_k_advice

            lines.append(f"Pareto k (PSIS-LOO, {cite('vehtari2017')}, over {loo['n_cells']:,} cells): max {float(loo['max_pareto_k']):.2f}; "
                         f"{loo['good']} good (\u2264 0.7), {loo['bad']} bad, {loo['very_bad']} very bad (> 1)")
            advice = pareto_k_advice(loo["bad"], loo["very_bad"], loo["n_cells"])
            if advice:
                lines.append(f"warning: {advice}")
        elif pareto_k is None:
            lines.append("Pareto k (PSIS-LOO): not computed for this fit (Analysis > Run analyses)")
        else:
            k = np.asarray(pareto_k, dtype=float)
            lines.append(f"Pareto k (PSIS-LOO): max {np.nanmax(k):.2f}; {int(np.sum(k > 0.7))} of {k.size} "
                         "observations above 0.7 (their LOO estimate is unreliable)")
        for key, value in (fit_info or {}).items():
            lines.append(f"{key}: {value}")
        self.verdict.setText(head + "<br>" + "<br>".join(_html(x) for x in lines))
        self.pareto_k = None if pareto_k is None else np.asarray(pareto_k, dtype=float)

        self.table = QTableWidget(len(self.terms), len(COLUMNS))
        self.table.setObjectName("diagnostics_table")
        self.table.setHorizontalHeaderLabels([c for c, _ in COLUMNS])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        tab = d.table
        for r, term in enumerate(self.terms):
            self.table.setItem(r, 0, text_item(term if term == "mu" else f"\u03c3[{term}]"))
            for c, (_, key) in enumerate(COLUMNS[1:], start=1):
                v = float(tab.loc[term, key])
                item = numeric_item(v, 3 if key in ("mean", "sd", "r_hat") else 0)
                if term != "mu" and ((key == "r_hat" and not v <= MAX_R_HAT)
                                     or (key == "ess_bulk" and not v >= MIN_ESS_BULK)):
                    item.setForeground(QBrush(_BAD))
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setStretchLastSection(True)
        # every row shown (up to 14; a longer table scrolls): the splitter gave it half, 3 of 6 rows
        shown = min(len(self.terms), 14)
        self.table.setMinimumHeight(sum(self.table.rowHeight(r) for r in range(shown))
                                    + self.table.horizontalHeader().sizeHint().height() + 2 * self.table.frameWidth()
                                    + 2)

        comp = d.components
        labels = list(comp.index)
        self.rhat_plot = plots.new_plot("R-hat per variance component (rule: \u2264 1.01)", "R-hat", "")
        self.ess_plot = plots.new_plot("Bulk ESS per variance component (rule: \u2265 400)", "bulk ESS", "")
        y = np.arange(len(labels), dtype=float)
        r_hat = comp["r_hat"].to_numpy(dtype=float)
        ess = comp["ess_bulk"].to_numpy(dtype=float)
        import pyqtgraph as pg

        self.rhat_bars = pg.BarGraphItem(x0=np.ones_like(r_hat), y=y, height=0.6, width=r_hat - 1.0,
                                         brushes=[_brush(not v <= MAX_R_HAT) for v in r_hat])
        self.ess_bars = pg.BarGraphItem(x0=np.zeros_like(ess), y=y, height=0.6, width=ess,
                                        brushes=[_brush(not v >= MIN_ESS_BULK) for v in ess])
        self.rhat_plot.addItem(self.rhat_bars)
        self.ess_plot.addItem(self.ess_bars)
        self.rhat_plot.addItem(pg.InfiniteLine(MAX_R_HAT, angle=90, pen=plots.line(plots.COLORS["target"], 1.5,
                                                                                    Qt.DashLine)))
        self.ess_plot.addItem(pg.InfiniteLine(MIN_ESS_BULK, angle=90, pen=plots.line(plots.COLORS["target"], 1.5,
                                                                                      Qt.DashLine)))
        for p in (self.rhat_plot, self.ess_plot):
            plots.set_category_ticks(p.getPlotItem().getAxis("left"), labels, offset=0.0)
            plots.fit_left_axis(p.getPlotItem().getAxis("left"), labels)
            p.getPlotItem().invertY(True)
        self.rhat_plot.setXRange(1.0, max(1.02, float(np.nanmax(r_hat)) if r_hat.size else 1.02), padding=0.05)

        export = plots.ExportButton(self.plots, self.tables)
        scroll = QScrollArea()
        scroll.setWidget(self.verdict)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.NoFrame)
        scroll.setMaximumHeight(230)
        head = QHBoxLayout()
        head.addWidget(scroll, 1)
        head.addWidget(export, 0, Qt.AlignTop)
        charts = QSplitter(Qt.Horizontal)
        charts.addWidget(self.rhat_plot)
        charts.addWidget(self.ess_plot)
        body = QSplitter(Qt.Vertical)
        body.addWidget(self.table)
        body.addWidget(charts)
        body.setChildrenCollapsible(False)
        body.setStretchFactor(0, 0)
        body.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(body, 1)

    def plots(self) -> dict:
        return {"R-hat": self.rhat_plot, "Bulk ESS": self.ess_plot}

    def tables(self) -> dict:
        return {"Diagnostics": self.table}

    def export_plot(self, name: str, path) -> Path:
        return plots.export_plot(self.plots()[name], path)

    def export_table(self, name: str, path) -> Path:
        return plots.export_table(self.tables()[name], path)


def _brush(bad: bool):
    return QBrush(_BAD if bad else QColor(plots.COLORS["bar"]))


def _html(text) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


__all__ = ["DiagnosticsPanel"]
