"""The ranks view: posterior rank intervals per model and the rank-dominance heatmap (SPEC sec. 5).

Draws a :class:`~ddr_explorer.core.ranks.RankAnalysis` (rank distribution,
pairwise dominance, global dominance and the heatmap order; seed 000 (Hardy et al. 2026) Figs.
11-14).  Models are listed in heatmap order (most dominant first) everywhere.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from ..core.rank_tiers import tiers_from_dominance
from ..core.ranks import RankAnalysis
from ..core.references import cite
from . import plots
from .components_panel import numeric_item, text_item
from .plots import COLORS, new_plot

COLUMNS = ["order", "model", "mean rank", "median rank", "rank 95% lower", "rank 95% upper", "global dominance",
           "tier"]


class RanksPanel(QWidget):
    """Rank intervals (error bars) and dominance heatmap of one set of latent model effects.

    Parameters
    ----------
    ranks
        :class:`~ddr_explorer.core.ranks.RankAnalysis` (from ``rank_analysis(theta, model_names)``).
    noun
        What is ranked: ``"model"``, ``"system"`` or ``"agent"`` (the ddr preset's object;
        :func:`~ddr_explorer.core.formatting.object_noun`).

    Attributes
    ----------
    table, interval_plot, dominance_plot
        Widgets; ``interval_errors`` (ErrorBarItem) and ``mean_points`` hold the drawn rank data,
        ``dominance_image`` the heatmap (``ranks.ordered_dominance``).
    """

    def __init__(self, ranks: RankAnalysis, parent: QWidget | None = None, noun: str = "model"):
        super().__init__(parent)
        self.ranks = ranks
        r = ranks
        order = r.order
        names = r.ordered_models
        m = len(names)
        lo = r.ranks.interval95[order, 0]
        hi = r.ranks.interval95[order, 1]
        mean = r.ranks.mean_rank[order]
        med = r.ranks.median_rank[order]
        gd = r.global_dominance[order]

        # which pairs can be told apart (core.rank_tiers, as `ddr compare --all`); none across disconnected parts
        self.tiers = None if r.parts is not None else tiers_from_dominance(r.dominance, r.models, r.order)
        tier_of = None if self.tiers is None else {n: k for k, t in enumerate(self.tiers.tiers, start=1) for n in t}
        self.table = QTableWidget(m, len(COLUMNS))
        self.table.setObjectName("ranks_table")
        self.table.setHorizontalHeaderLabels([noun if c == "model" else c for c in COLUMNS])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setTextElideMode(Qt.ElideMiddle)
        for i in range(m):
            it = numeric_item(float(i + 1), 0)
            self.table.setItem(i, 0, it)
            self.table.setItem(i, 1, text_item(names[i]))
            for k, v in enumerate((mean[i], med[i], lo[i], hi[i]), start=2):
                self.table.setItem(i, k, numeric_item(float(v), 2 if k == 2 else 1))
            self.table.setItem(i, 6, numeric_item(float(gd[i]), 3))
            if tier_of is not None:
                self.table.setItem(i, 7, numeric_item(float(tier_of[names[i]]), 0))
        if self.tiers is not None:  # the tiers' sentence where the tier column is read (the caption keeps its height)
            self.table.horizontalHeaderItem(7).setToolTip(
                f"{self.tiers.sentence()}; a tier's members are not told apart from its first (ddr compare --all)")
        self.table.resizeColumnsToContents()
        self.table.setColumnWidth(1, min(max(self.table.columnWidth(1), 140), 280))

        # Rank intervals: one row per model (rank 1 = best on the left).
        self.interval_plot = new_plot("Posterior rank: mean and 95% interval", "rank (1 = best)", "")
        self.interval_plot.setObjectName("plot_rank_intervals")
        p = self.interval_plot.getPlotItem()
        y = np.arange(m, dtype=np.float64) + 0.5
        center = (lo + hi) / 2.0
        self.interval_errors = pg.ErrorBarItem(x=center, y=y, left=center - lo, right=hi - center, beam=0.3,
                                               pen=pg.mkPen(COLORS["median"], width=2))
        self.mean_points = pg.ScatterPlotItem(x=mean, y=y, symbol="o", size=8, brush=pg.mkBrush(COLORS["current"]),
                                              pen=pg.mkPen("k"))
        p.addItem(self.interval_errors)
        p.addItem(self.mean_points)
        p.invertY(True)
        labels = [f"{k + 1}. {plots.elide(n, plots.MAX_LABEL_CHARS - 4)}" for k, n in enumerate(names)]
        plots.set_category_ticks(p.getAxis("left"), labels, max_chars=plots.MAX_LABEL_CHARS + 4)
        plots.fit_left_axis(p.getAxis("left"), labels, max_chars=plots.MAX_LABEL_CHARS + 4)
        p.setYRange(0, m, padding=0.02)
        p.setXRange(0.5, m + 0.5, padding=0)
        p.showGrid(x=True, y=False, alpha=0.15)

        self.dominance_plot = new_plot("Rank dominance P(row beats column)", "", "")
        self.dominance_plot.setObjectName("plot_rank_dominance")
        self.dominance_image = plots.heatmap(self.dominance_plot, r.ordered_dominance, names, names,
                                             colormap="CET-D1", levels=(0.0, 1.0), bar_label="P(row > column)",
                                             number_rows=True, number_cols=True)

        self.caption = QLabel(
            f"{m} {noun}s, ordered by global dominance (mean over the others of P(\u03b8<sub>m</sub> > "
            f"\u03b8<sub>m'</sub>); {cite('hardy2026', 'Figs. 13-14')}). Rank 1 is the best; intervals are equal-tailed 95%. "
            f"Columns of the heatmap follow the numbered rows."
            + (f"<br><b>Ranked within {len(r.parts)} parts of a disconnected design</b>: ranks count within each "
               "part, rows run part by part, and a dominance between two parts is not identified (blank). "
               + " ".join(r.part_reasons) if r.parts is not None else ""))
        self.caption.setWordWrap(True)
        self.export_button = plots.ExportButton(self.plots, self.tables)
        head = QHBoxLayout()
        head.addWidget(self.caption, 1)
        head.addWidget(self.export_button, 0, Qt.AlignTop)

        plots_row = QSplitter(Qt.Horizontal)
        plots_row.addWidget(self.interval_plot)
        plots_row.addWidget(self.dominance_plot)
        split = QSplitter(Qt.Vertical)
        split.addWidget(plots_row)
        split.addWidget(self.table)
        split.setSizes([520, 200])
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(split, 1)

    def plots(self) -> dict:
        return {"Rank intervals": self.interval_plot, "Rank dominance": self.dominance_plot}

    def tables(self) -> dict:
        return {"Ranks": self.table}

    def export_plot(self, name: str, path) -> Path:
        return plots.export_plot(self.plots()[name], path)

    def export_table(self, name: str, path) -> Path:
        return plots.export_table(self.tables()[name], path)
