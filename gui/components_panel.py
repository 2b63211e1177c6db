"""The variance-components view: a table of sigma^2 with intervals and shares, and a bar chart of shares.

Every number comes from core: :func:`~ddr_explorer.core.reliability.summarize`
of each term's draws and of :func:`~ddr_explorer.core.reliability.variance_shares`
(shares per draw, residual included, SPEC sec. 3), and the capability-gap ratio
of :func:`~ddr_explorer.core.reliability.capability_gap_ratio` (seed 003 (DDR paper 2026)).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.reliability import (Summary, VarianceComponents, capability_gap_ratio, gap_ratio_not_estimable, summarize,
                                variance_shares)
from ..core.references import cite
from . import plots
from .plots import COLORS, fmt_interval, new_plot

#: Columns of the components table (CSV export uses the same header).
COLUMNS = ["term", "median sigma^2", "sigma^2 95% lower", "sigma^2 95% upper", "median share", "share 95% lower",
           "share 95% upper"]


def numeric_item(value: float, digits: int = 4) -> QTableWidgetItem:
    """A right-aligned read-only cell showing ``value`` rounded; the full value is kept for CSV export."""
    it = QTableWidgetItem(f"{value:.{digits}f}" if np.isfinite(value) else "n/a")
    it.setData(Qt.UserRole, float(value))
    it.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
    it.setFlags(it.flags() & ~Qt.ItemIsEditable)
    return it


def text_item(text: str, max_chars: int = 48) -> QTableWidgetItem:
    """A read-only cell; long text is elided on screen, kept whole in the tooltip and the CSV."""
    it = QTableWidgetItem(plots.elide(text, max_chars))
    it.setData(Qt.UserRole, str(text))
    it.setToolTip(str(text))
    it.setFlags(it.flags() & ~Qt.ItemIsEditable)
    return it


class ComponentsPanel(QWidget):
    """Variance components of one posterior (or one typed-in table).

    Parameters
    ----------
    components
        :class:`~ddr_explorer.core.reliability.VarianceComponents`.
    object_of_measurement
        Object for the capability-gap ratio (``"model"`` or ``"system"``).

    Attributes
    ----------
    summaries
        Term -> :class:`~ddr_explorer.core.reliability.Summary` of sigma^2 (``residual`` included).
    share_summaries
        Term -> Summary of its variance share.
    table, share_plot, share_bars, share_errors
        The widgets and items drawn.
    """

    def __init__(self, components: VarianceComponents, object_of_measurement: str = "model",
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.components = components
        c = components
        self.terms = [*c.terms, "residual"]
        self.summaries: dict[str, Summary] = {t: summarize(c.draws[t]) for t in c.terms}
        self.summaries["residual"] = summarize(c.residual)
        self.share_summaries: dict[str, Summary] = {t: summarize(v) for t, v in variance_shares(c).items()}
        #: why the capability-gap ratio is not estimable from this fit (None when it is)
        self.gap_not_estimable: str | None = gap_ratio_not_estimable(c, object_of_measurement)
        self.gap_ratio: Summary | None = (None if self.gap_not_estimable is not None
                                          else summarize(capability_gap_ratio(c, object_of_measurement)))

        self.table = QTableWidget(len(self.terms), len(COLUMNS))
        self.table.setObjectName("components_table")
        self.table.setHorizontalHeaderLabels(["term", "median \u03c3\u00b2", "\u03c3\u00b2 95% lower",
                                              "\u03c3\u00b2 95% upper", "median share", "share 95% lower",
                                              "share 95% upper"])
        for c_ in range(len(COLUMNS)):
            self.table.horizontalHeaderItem(c_).setData(Qt.UserRole, COLUMNS[c_])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setTextElideMode(Qt.ElideMiddle)
        for r, t in enumerate(self.terms):
            s, sh = self.summaries[t], self.share_summaries[t]
            self.table.setItem(r, 0, text_item(t))
            for k, v in enumerate((s.median, s.hdi95[0], s.hdi95[1], sh.median, sh.hdi95[0], sh.hdi95[1]), start=1):
                self.table.setItem(r, k, numeric_item(v))
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.Interactive)
        self.table.resizeColumnsToContents()
        self.table.setColumnWidth(0, min(max(self.table.columnWidth(0), 140), 320))

        # Shares as horizontal bars: term names sit on the left axis, where long names fit.
        self.share_plot = new_plot("Variance shares (median, 95% HDI)", "share of total latent variance", "")
        self.share_plot.setObjectName("plot_shares")
        p = self.share_plot.getPlotItem()
        n = len(self.terms)
        y = np.arange(n, dtype=np.float64) + 0.5
        med = np.array([self.share_summaries[t].median for t in self.terms])
        lo = np.array([self.share_summaries[t].hdi95[0] for t in self.terms])
        hi = np.array([self.share_summaries[t].hdi95[1] for t in self.terms])
        self.share_bars = pg.BarGraphItem(x0=np.zeros(n), y=y, height=0.7, width=med,
                                          brush=pg.mkBrush(COLORS["bar"]), pen=pg.mkPen("#1f5f8b"))
        self.share_errors = pg.ErrorBarItem(x=med, y=y, left=med - lo, right=hi - med, beam=0.25,
                                            pen=pg.mkPen("k", width=1.2))
        p.addItem(self.share_bars)
        p.addItem(self.share_errors)
        p.invertY(True)
        plots.set_category_ticks(p.getAxis("left"), self.terms)
        plots.fit_left_axis(p.getAxis("left"), self.terms)
        p.setYRange(0, n, padding=0.02)
        p.setXRange(0, max(1e-9, float(np.nanmax(hi))) * 1.05, padding=0)
        p.showGrid(x=True, y=False, alpha=0.15)

        c = components
        caption = (f"Components from <b>{plots_html(c.source)}</b>, {c.n_draws:,} draw(s), latent logit scale. "
                   "Shares are per draw: \u03c3\u00b2<sub>k</sub> / (\u03a3 \u03c3\u00b2 + e), residual e = "
                   "\u03c0\u00b2/3 (the logistic distribution's variance) unless given.")
        if self.gap_ratio is not None:
            g = self.gap_ratio
            caption += (f"<br>Capability-gap ratio ({cite('ddr2026')}) \u03c3\u00b2<sub>{object_of_measurement}</sub> / "
                        f"(\u03c3\u00b2<sub>{object_of_measurement}</sub> + \u03c3\u00b2<sub>{object_of_measurement}"
                        f":task</sub>): {fmt_interval(g.median, *g.hdi95)}")
        elif self.gap_not_estimable is not None:
            caption += ("<br>Capability-gap ratio (the DDR paper, 2026): not estimable: "
                        + plots_html(self.gap_not_estimable))
        self.caption = QLabel(caption)
        self.caption.setWordWrap(True)
        self.caption.setTextInteractionFlags(Qt.TextSelectableByMouse)

        self.export_button = plots.ExportButton(self.plots, self.tables)
        head = QHBoxLayout()
        head.addWidget(self.caption, 1)
        head.addWidget(self.export_button, 0, Qt.AlignTop)
        split = QSplitter(Qt.Horizontal)
        split.addWidget(self.table)
        split.addWidget(self.share_plot)
        tw = plots.table_width(self.table)
        # the table keeps every column (share columns were cut at 1280 px); the chart takes what is left
        self.table.setMinimumWidth(tw)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        split.setSizes([tw, max(tw, 480)])
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(split, 1)

    def plots(self) -> dict:
        return {"Variance shares": self.share_plot}

    def tables(self) -> dict:
        return {"Variance components": self.table}

    def export_plot(self, name: str, path) -> Path:
        return plots.export_plot(self.plots()[name], path)

    def export_table(self, name: str, path) -> Path:
        return plots.export_table(self.tables()[name], path)


def plots_html(text: str) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
