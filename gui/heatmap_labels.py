"""Row names of a heatmap that never overprint: thinned to fit the rows' height, every name in a tooltip.

A 29-model dominance heatmap in the D-study tab had about 9 pixels per row for a 13-pixel font, so its
names overlapped into an unreadable column.  The left axis now labels every ``step``-th row, the
smallest step of 1, 2, 5, 10, ... whose rows are at least one line of text apart, recomputed whenever
the plot is resized; hovering a cell names its row and column and shows its value.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetrics

#: Label steps tried, smallest first.
STEPS = (1, 2, 5, 10, 20, 50, 100, 200, 500)


def label_step(n_rows: int, pixels: float, line_height: float) -> int:
    """The smallest step of :data:`STEPS` whose labelled rows are at least ``line_height`` pixels apart."""
    if n_rows <= 0 or pixels <= 0:
        return 1
    per_row = pixels / n_rows
    for step in STEPS:
        if step * per_row >= line_height:
            return step
    return STEPS[-1]


def thinned_ticks(labels: Sequence[str], step: int, offset: float = 0.5) -> list[tuple[float, str]]:
    """Ticks of rows 1, 1 + ``step``, 1 + 2 ``step``, ... (counted from 1; evenly spaced), at ``k + offset``."""
    return [(k + offset, text) for k, text in enumerate(labels) if k % step == 0]


class ThinnedRowLabels:
    """Keeps ``plot``'s left-axis labels readable at every size (module note); ``labels`` are already elided.

    ``full_rows`` and ``full_cols`` are the names the hover tooltip gives (unelided).
    """

    def __init__(self, plot: pg.PlotWidget, image: pg.ImageItem, matrix: np.ndarray, labels: Sequence[str],
                 full_rows: Sequence[str], full_cols: Sequence[str]):
        self.plot, self.image, self.labels = plot, image, list(labels)
        self.matrix = np.asarray(matrix, dtype=np.float64)
        self.full_rows, self.full_cols = list(full_rows), list(full_cols)
        self.axis = plot.getPlotItem().getAxis("left")
        self.step = 0
        plot.getPlotItem().getViewBox().sigResized.connect(self.update)
        image.setAcceptHoverEvents(True)
        image.hoverEvent = self._hover
        self.update()

    def detach(self) -> None:
        """Stop following the plot's size (its heatmap was redrawn with other rows)."""
        try:
            self.plot.getPlotItem().getViewBox().sigResized.disconnect(self.update)
        except (RuntimeError, TypeError):
            pass

    def line_height(self) -> float:
        return float(QFontMetrics(self.axis.style.get("tickFont") or QFont()).height())

    def update(self, *_args) -> None:
        """Label every ``step``-th row for the current height."""
        pixels = float(self.plot.getPlotItem().getViewBox().height())
        step = label_step(len(self.labels), pixels, self.line_height()) if pixels > 0 else 1
        if step != self.step:
            self.step = step
            self.axis.setTicks([thinned_ticks(self.labels, step), []])

    def shown(self) -> list[str]:
        """The labels drawn now."""
        return [text for _pos, text in thinned_ticks(self.labels, max(self.step, 1))]

    def _hover(self, event) -> None:
        if event.isExit():
            self.image.setToolTip("")
            return
        pos = event.pos()
        r, c = int(math.floor(pos.y())), int(math.floor(pos.x()))
        if 0 <= r < self.matrix.shape[0] and 0 <= c < self.matrix.shape[1]:
            v = self.matrix[r, c]
            value = "blank" if not np.isfinite(v) else f"{v:.2f}"
            self.image.setToolTip(f"{r + 1}. {self.full_rows[r]}  vs  {c + 1}. {self.full_cols[c]}: {value}")


__all__ = ["STEPS", "ThinnedRowLabels", "label_step", "thinned_ticks"]
