"""Drawing helpers shared by the panels: plot widgets, bands, heatmaps, a throttle, exports.

Nothing here computes a statistic: every array a helper draws is passed in,
and comes from :mod:`ddr_explorer.core` (ArviZ's split: compute, then draw).

Exports: :func:`export_plot` writes a plot to PNG or SVG with
``pyqtgraph.exporters`` (the same exporters as pyqtgraph's own right-click
"Export..." menu, which every plot keeps); :func:`export_table` writes a
``QTableWidget`` to CSV.  :class:`ExportButton` offers both for the plots and
tables of a panel.
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction, QBrush, QFont, QPainterPath, QPen
from PySide6.QtWidgets import (QFileDialog, QGraphicsEllipseItem, QGraphicsItem, QGraphicsLineItem,
                               QGraphicsPathItem, QHBoxLayout, QLabel, QMenu, QMessageBox, QTableWidget, QToolButton,
                               QWidget)

from ..core.files import atomic_path
from ..core.formatting import fmt_coef, fmt_estimate, fmt_n, fmt_usd  # noqa: F401 - fmt_usd re-exported


def guard_pyside_singleton_refcounts() -> bool:
    """Work around PySide6 6.12.0 dropping references to ``None`` and ``True``.

    On CPython 3.11 with PySide6/shiboken6 6.12.0, every call of a ``void`` Qt
    method (``update()``, ``QPainter.drawLine()``, ...) decrements the reference
    count of ``None`` once, and every ``Signal.emit()`` that of ``True``.  A
    pyqtgraph redraw makes hundreds of such calls, so after a few dozen slider
    moves the interpreter aborts ("Fatal Python error: none_dealloc" /
    "bool_dealloc").  6.11.3 is not affected: pin ``PySide6-Essentials!=6.12.0``.

    Until the binding is fixed, when a probe shows the leak, ``None``, ``True``
    and ``False`` are made effectively immortal (as CPython 3.12+ makes them
    anyway) by adding 2**40 to their reference counts.  Nothing is done on a
    healthy binding or on CPython >= 3.12.

    Returns
    -------
    bool
        True when the workaround was applied.
    """
    import sys

    if sys.implementation.name != "cpython" or sys.version_info >= (3, 12):
        return False
    from PySide6.QtCore import Signal

    class _Probe(QObject):
        ping = Signal()

    probe = _Probe()
    before = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(8):
        probe.ping.emit()
        probe.setObjectName("probe")  # a void method
    after = sys.getrefcount(None), sys.getrefcount(True)
    if before[0] - after[0] < 8 and before[1] - after[1] < 8:
        return False
    import ctypes

    for obj in (None, True, False):
        ctypes.c_ssize_t.from_address(id(obj)).value += 1 << 40
    return True


PYSIDE_REFCOUNT_GUARD = guard_pyside_singleton_refcounts()

class GuiThreadGarbageCollector:
    """Run Python's cyclic garbage collector only on the GUI thread, at safe points, for good.

    Automatic collection starts inside whatever allocation crosses the
    threshold: in a worker thread (a cost-frontier job or a JAX fit allocates
    a lot), or inside a PySide call that is itself deleting widgets.
    Collecting pyqtgraph's cyclic wrappers there deletes Qt objects on the
    wrong thread, or re-enters Qt while it holds its own locks, and the app
    crashes or hangs.  This was the cause of the intermittent deadlock of the
    offscreen tests in ``QCoreApplication.sendPostedEvents(DeferredDelete)``:
    the first version re-enabled automatic collection from a window's
    ``destroyed`` handler, that is *in the middle of* a batch of deferred
    deletes, so the next allocation in that batch collected pyqtgraph items
    inside Qt's deletion of their scene (or a frontier job collected them on
    its worker thread a moment later).

    The policy is pyqtgraph's (``pyqtgraph.util.garbage_collector``):
    automatic collection is switched off the first time a window, panel or
    background job needs it (:meth:`acquire`, :meth:`track`) and stays off
    for the life of the process; a timer on the GUI thread collects each
    generation when its count passes the usual threshold, and
    :meth:`collect_now` collects at a known safe point (between tests, after
    a fit).  Call from the GUI thread only.
    """

    #: Timer period.  Short, so that each young-generation collection has little to look at while a
    #: worker allocates fast (a JAX fit: 100 ms collections at 200 ms, a stalled event loop).
    interval_ms = 30
    _timer: QTimer | None = None
    _running = False
    _futures: list = []

    @classmethod
    def acquire(cls, owner: QObject | None = None) -> None:
        """Switch the policy on (``owner`` is accepted for compatibility; the policy outlives it)."""
        cls._install()

    @classmethod
    def track(cls, future=None) -> None:
        """Switch the policy on before a background job starts; ``future`` (optional) marks the job busy.

        While a tracked job runs, full (generation 2) collections wait: one of a heap that holds JAX
        takes hundreds of milliseconds, a visible freeze in the middle of a fit.  The young generations
        are still collected, so memory stays bounded.
        """
        cls._install()
        if future is not None:
            cls._futures = [f for f in cls._futures if not f.done()] + [future]

    @classmethod
    def busy(cls) -> bool:
        """True while a tracked background job runs."""
        cls._futures = [f for f in cls._futures if not f.done()]
        return bool(cls._futures)

    @classmethod
    def active(cls) -> bool:
        return cls._running

    @classmethod
    def _install(cls) -> None:
        import gc

        if cls._running:
            return
        gc.disable()
        if cls._timer is None:
            cls._timer = QTimer()
            cls._timer.timeout.connect(cls._on_timeout)
        cls._timer.start(cls.interval_ms)
        cls._running = True

    @classmethod
    def collect_now(cls) -> int:
        """A full collection now, on the calling (GUI) thread; returns the number of objects found."""
        import gc

        return gc.collect()

    @classmethod
    def _on_timeout(cls) -> None:
        import gc

        # As pyqtgraph does: collect each generation when its count passes the usual threshold.
        t0, t1, t2 = gc.get_threshold()
        c0, c1, c2 = gc.get_count()
        if c0 > t0:
            gc.collect(0)
            if c1 > t1:
                gc.collect(1)
                if c2 > t2 and not cls.busy():
                    gc.collect(2)


# One look for every plot of the app: dark ink on white (readable in print and
# in the DDR sheet), image arrays indexed [row, column] like the matrices core returns.
pg.setConfigOptions(background="w", foreground="k", antialias=True, imageAxisOrder="row-major")

#: Colours of the app (colour-blind safe: Okabe-Ito).
COLORS = {
    "median": "#0072B2",
    "band68": (0, 114, 178, 90),
    "band95": (0, 114, 178, 40),
    "asymptote": "#555555",
    "detection": (230, 159, 0, 45),
    "target": "#D55E00",
    "observed": "#000000",
    "current": "#CC79A7",
    "frontier": "#009E73",
    "grid_points": (120, 120, 120, 90),
    "bar": "#56B4E9",
}

#: Longest label drawn on a categorical axis before it is elided (full names stay in tables and tooltips).
MAX_LABEL_CHARS = 24


def float_or_nan(x) -> float:
    """A JSON number as a float, ``None`` (a missing value) as NaN, which pyqtgraph leaves undrawn."""
    return float("nan") if x is None else float(x)


def elide(text: str, max_chars: int = MAX_LABEL_CHARS) -> str:
    """``text`` cut to ``max_chars`` characters with an ellipsis in the middle (keeps prefixes and versions)."""
    text = str(text)
    if len(text) <= max_chars:
        return text
    head = (max_chars - 1) // 2
    tail = max_chars - 1 - head
    return text[:head] + "\u2026" + text[-tail:]


# ---------------------------------------------------------------------------
# Throttling
# ---------------------------------------------------------------------------

class Throttle(QObject):
    """Call ``func`` at most once per ``interval_ms``; the last request is never dropped.

    The first request runs at once (the leading edge, so a single move feels
    instant); requests arriving while the interval runs collapse into one
    call when it ends (the trailing edge, so the final slider position is
    always drawn).  superqt's ``qthrottled`` behaves the same; this avoids the
    dependency.

    Parameters
    ----------
    func
        Called with no arguments.
    interval_ms
        Minimum time between two calls (16 ms: one frame at 60 Hz).
    """

    def __init__(self, func: Callable[[], object], interval_ms: int = 16, parent: QObject | None = None):
        super().__init__(parent)
        self._func = func
        self._pending = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(int(interval_ms))
        self._timer.timeout.connect(self._on_timeout)
        self.calls = 0

    @property
    def pending(self) -> bool:
        """True while a request waits for the interval to end."""
        return self._pending

    def __call__(self) -> None:
        if self._timer.isActive():
            self._pending = True
            return
        self._run()

    def flush(self) -> None:
        """Run a waiting request now (tests, closing)."""
        if self._pending:
            self._timer.stop()
            self._run()

    def cancel(self) -> None:
        self._pending = False
        self._timer.stop()

    def _run(self) -> None:
        self._pending = False
        self.calls += 1
        self._timer.start()  # the interval counts from the start of this call
        self._func()

    def _on_timeout(self) -> None:
        if self._pending:
            self._run()


# ---------------------------------------------------------------------------
# Plot widgets and items
# ---------------------------------------------------------------------------

def new_plot(title: str = "", x_label: str = "", y_label: str = "", *, log_x: bool = False,
             parent: QWidget | None = None, min_height: int = 200, grid: bool = True) -> pg.PlotWidget:
    """A white plot with labelled axes, a light grid (unless ``grid`` is False) and the auto-range button hidden.

    Plots redrawn on every slider move pass ``grid=False`` and draw
    :func:`reference_lines` instead: pyqtgraph's axis grid is repainted
    with the axes on every frame and costs about 1 ms per plot.
    """
    # Every plot of the app is made here: from the first one on, pyqtgraph's cyclic garbage is collected
    # only on the GUI thread, at safe moments (see GuiThreadGarbageCollector).
    GuiThreadGarbageCollector.acquire()
    w = pg.PlotWidget(parent=parent)
    w.setMinimumHeight(min_height)
    w.setMinimumWidth(150)
    p = w.getPlotItem()
    if title:
        set_title(w, title)
    if x_label:
        p.setLabel("bottom", x_label)
    if y_label:
        p.setLabel("left", y_label)
    if grid:
        p.showGrid(x=True, y=True, alpha=0.15)
    for name in ("left", "bottom"):  # "(x0.001)" on a share or a coefficient axis reads as a different unit
        p.getAxis(name).enableAutoSIPrefix(False)
    p.setLogMode(x=log_x, y=False)
    p.hideButtons()  # the "A" auto-range button hides part of the axis in small plots
    return w


def set_title(plot: pg.PlotWidget, title: str, size: str = "10pt") -> None:
    """Set a plot's title without letting its length set the plot's minimum width.

    pyqtgraph gives the title label a minimum width equal to its text (again
    on every resize), and a plot item wider than its widget is cut off on the
    right, colour bar included, instead of shrinking; a long title is better
    clipped than that.
    """
    p = plot.getPlotItem()
    label = p.titleLabel
    if not getattr(label, "_ddr_relaxed", False):
        def update_min(label=label):
            h = label.itemRect().height()
            label.setMinimumWidth(0)
            label.setMinimumHeight(h)
            label._sizeHint = {Qt.SizeHint.MinimumSize: (0, h), Qt.SizeHint.PreferredSize: (0, h),
                               Qt.SizeHint.MaximumSize: (-1, -1), Qt.SizeHint.MinimumDescent: (0, 0)}
            label.updateGeometry()

        label.updateMin = update_min  # LabelItem calls self.updateMin() from setText and resizeEvent
        label._ddr_relaxed = True
    p.setTitle(title, size=size)


def line(color, width: float = 2.0, style=Qt.SolidLine) -> pg.QtGui.QPen:
    return pg.mkPen(color=color, width=width, style=style)


def data_item(plot: pg.PlotWidget, pen=None, **kw) -> pg.PlotDataItem:
    """An empty :class:`~pyqtgraph.PlotDataItem` added to ``plot``.

    ``skipFiniteCheck`` is on: core's arrays are finite where they are drawn,
    and the check is a measurable part of a slider redraw.
    """
    item = pg.PlotDataItem(pen=pen, skipFiniteCheck=True, **kw)
    plot.addItem(item)
    return item


def reference_lines(plot: pg.PlotWidget, y_values: Sequence[float], x_range: tuple[float, float], *,
                    log_x: bool = False) -> QGraphicsPathItem:
    """Light horizontal lines at ``y_values`` across ``x_range`` (data coordinates; ``log_x``: the axis is
    logarithmic), as one path painted by Qt."""
    ys = np.repeat(np.asarray(y_values, dtype=np.float64), 2)
    xs = np.tile(_view_x(np.asarray(x_range, dtype=np.float64), log_x), len(y_values))
    item = QGraphicsPathItem(pg.arrayToQPath(xs, ys, connect="pairs"))
    item.setPen(pg.mkPen((0, 0, 0, 28), width=1))
    item.setZValue(-40)
    plot.addItem(item)
    return item


# ---------------------------------------------------------------------------
# Light items for plots redrawn on every slider move
# ---------------------------------------------------------------------------
#
# A slider move of the D-study view changes a few arrays of three to four plots.  pyqtgraph's
# PlotDataItem does much per setData (log mapping, downsampling, clipping, bounds, signals) and paints
# in Python; a band drawn as two edge curves plus a FillBetweenItem is three paths.  The items below are
# plain QGraphicsPathItem / QGraphicsEllipseItem objects (painted by Qt in C++), one path per band,
# fed with view coordinates (log10 of x on a log axis), and they ignore data equal to what they show,
# so a plot whose data did not change is not repainted (bench/bench_slider.py measures a move).

def _view_x(x: np.ndarray, log_x: bool) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return np.log10(x) if log_x else x


def pixel_sample(xv: np.ndarray, width_px: float) -> np.ndarray | None:
    """Indices of at most about one point per pixel column of a curve (None: every point is kept).

    A curve with more points than the pixels it covers is drawn through one point per pixel
    column (the first of each, the last point kept), which a screen cannot tell apart from the
    whole curve; the curves of the D-study view have 10-100 points over 300+ pixels, so this only
    acts on narrow plots or long grids.
    """
    n = len(xv)
    if n < 3 or width_px <= 0 or n <= 2 * width_px:
        return None
    span = float(xv[-1] - xv[0])
    if not np.isfinite(span) or span <= 0:
        return None
    col = np.floor((xv - xv[0]) / span * width_px).astype(np.int64)
    keep = np.flatnonzero(np.r_[True, col[1:] != col[:-1]])
    if keep[-1] != n - 1:
        keep = np.r_[keep, n - 1]
    return keep


def _width_px(plot: pg.PlotWidget) -> float:
    vb = plot.getPlotItem().getViewBox()
    return float(vb.width())


def _same(a: np.ndarray | None, b: np.ndarray) -> bool:
    return a is not None and a.shape == b.shape and np.array_equal(a, b)


class _Dataset:
    """What a test or an export reads back from a light item: the data given (``getOriginalDataset``)
    and the view coordinates drawn (``getData``), as PlotDataItem offers them."""

    def __init__(self):
        self.x = np.zeros(0)
        self.y = np.zeros(0)
        self.xv = np.zeros(0)

    def getOriginalDataset(self):  # noqa: N802 - mirrors PlotDataItem
        return self.x, self.y

    def getData(self):  # noqa: N802 - mirrors PlotDataItem
        return self.xv, self.y


class Curve(_Dataset):
    """A line through ``(x, y)`` as one QGraphicsPathItem with a cosmetic pen.

    Parameters
    ----------
    plot
        The plot to draw in.
    pen
        A QPen (``line(...)``); :meth:`set_style` changes its dash style.
    log_x
        The plot's x axis is logarithmic: x is drawn at log10(x), as pyqtgraph's log mode does.
    """

    def __init__(self, plot: pg.PlotWidget, pen, log_x: bool = False, z: float = 0.0):
        super().__init__()
        self.plot, self.log_x = plot, log_x
        self.item = QGraphicsPathItem()
        self.item.setPen(pen if isinstance(pen, QPen) else pg.mkPen(pen))
        self.item.setBrush(QBrush(Qt.NoBrush))
        self.item.setZValue(z)
        plot.addItem(self.item)
        self.updates = 0  # paths built (tests: an unchanged curve is not rebuilt)

    def set_data(self, x, y) -> bool:
        """Show ``y`` over ``x``; False (and nothing redrawn) when they equal what is shown."""
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if _same(self.x, x) and _same(self.y, y):
            return False
        self.x, self.y = x.copy(), y.copy()
        self.xv = _view_x(x, self.log_x)
        idx = pixel_sample(self.xv, _width_px(self.plot))
        xv, yv = (self.xv, y) if idx is None else (self.xv[idx], y[idx])
        self.item.setPath(pg.arrayToQPath(xv, yv, connect="all", finiteCheck=False) if len(xv) else QPainterPath())
        self.updates += 1
        return True

    setData = set_data  # noqa: N815 - the PlotDataItem spelling

    def set_style(self, style) -> None:
        """Solid, dashed, ...: ``Qt.SolidLine``, ``Qt.DashLine``."""
        pen = QPen(self.item.pen())
        if pen.style() != style:
            pen.setStyle(style)
            self.item.setPen(pen)

    def setVisible(self, visible: bool) -> None:  # noqa: N802
        self.item.setVisible(visible)

    def isVisible(self) -> bool:  # noqa: N802
        return self.item.isVisible()


class Band:
    """A filled interval between two curves, as one filled polygon (no edge items).

    ``lower`` and ``upper`` keep the edges' data, so tests and exports read them as from a
    PlotDataItem (``getOriginalDataset``); ``fill`` is the one path item drawn.
    """

    def __init__(self, plot: pg.PlotWidget, brush, z: float = -10, log_x: bool = False):
        self.plot, self.log_x = plot, log_x
        self.lower, self.upper = _Dataset(), _Dataset()
        self.fill = QGraphicsPathItem()
        self.fill.setPen(QPen(Qt.NoPen))
        self.fill.setBrush(pg.mkBrush(brush))
        self.fill.setZValue(z)
        plot.addItem(self.fill)
        self.updates = 0

    def set_data(self, x: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> bool:
        """Fill between ``lower`` and ``upper`` over ``x``; False when nothing changed."""
        x = np.asarray(x, dtype=np.float64)
        lower = np.asarray(lower, dtype=np.float64)
        upper = np.asarray(upper, dtype=np.float64)
        if _same(self.lower.x, x) and _same(self.lower.y, lower) and _same(self.upper.y, upper):
            return False
        xv = _view_x(x, self.log_x)
        for d, y in ((self.lower, lower), (self.upper, upper)):
            d.x, d.y, d.xv = x.copy(), y.copy(), xv
        idx = pixel_sample(xv, _width_px(self.plot))
        if idx is not None:
            xv, lower, upper = xv[idx], lower[idx], upper[idx]
        if len(xv):
            # upper edge left to right, lower edge back: one closed polygon
            path = pg.arrayToQPath(np.r_[xv, xv[::-1]], np.r_[upper, lower[::-1]], connect="all", finiteCheck=False)
            path.closeSubpath()
        else:
            path = QPainterPath()
        self.fill.setPath(path)
        self.updates += 1
        return True

    def setVisible(self, visible: bool) -> None:  # noqa: N802
        self.fill.setVisible(visible)

    def isVisible(self) -> bool:  # noqa: N802
        return self.fill.isVisible()


class Marker:
    """One round marker of fixed pixel size at a data point (a QGraphicsEllipseItem that ignores the
    view's scaling), moved without rebuilding anything.

    ``getOriginalDataset()`` returns ``([x], [y])`` (an empty marker: empty arrays).
    """

    def __init__(self, plot: pg.PlotWidget, size: float, pen=None, brush=None, log_x: bool = False, z: float = 10):
        self.log_x = log_x
        r = size / 2.0
        self.item = QGraphicsEllipseItem(-r, -r, size, size)
        self.item.setFlag(QGraphicsItem.ItemIgnoresTransformations, True)
        self.item.setPen(QPen(Qt.NoPen) if pen is None else pen)
        self.item.setBrush(QBrush(Qt.NoBrush) if brush is None else brush)
        self.item.setZValue(z)
        self.item.setVisible(False)
        plot.addItem(self.item)
        self._xy: tuple[float, float] | None = None

    def set_point(self, x: float | None, y: float | None = None) -> bool:
        """Put the marker at ``(x, y)`` (data coordinates); ``None`` hides it.  False when unchanged."""
        ok = x is not None and y is not None and np.isfinite(x) and np.isfinite(y) and not (self.log_x and x <= 0)
        xy = (float(x), float(y)) if ok else None
        if xy == self._xy:
            return False
        self._xy = xy
        if xy is None:
            self.item.setVisible(False)
        else:
            xv = float(np.log10(xy[0])) if self.log_x else xy[0]
            self.item.setPos(xv, xy[1])
            self.item.setVisible(True)
        return True

    def setData(self, x, y) -> bool:  # noqa: N802 - the PlotDataItem spelling: ([x], [y]) or ([], [])
        return self.set_point(x[0], y[0]) if len(x) else self.set_point(None)

    def getOriginalDataset(self):  # noqa: N802
        if self._xy is None:
            return np.zeros(0), np.zeros(0)
        return np.array([self._xy[0]]), np.array([self._xy[1]])


class VLine:
    """A vertical line at ``x`` across the plot's y range ``ys`` (a QGraphicsLineItem, cosmetic pen)."""

    def __init__(self, plot: pg.PlotWidget, pen, ys: tuple[float, float] = (-1.0, 2.0), log_x: bool = False,
                 z: float = 5):
        self.log_x, self.ys = log_x, ys
        self.item = QGraphicsLineItem()
        self.item.setPen(pen)
        self.item.setZValue(z)
        self.item.setVisible(False)
        plot.addItem(self.item)
        self._x: float | None = None

    def set_value(self, x: float) -> bool:
        x = float(x)
        if x == self._x:
            return False
        self._x = x
        if not np.isfinite(x) or (self.log_x and x <= 0):
            self.item.setVisible(False)
            return True
        xv = float(np.log10(x)) if self.log_x else x
        self.item.setLine(xv, self.ys[0], xv, self.ys[1])
        self.item.setVisible(True)
        return True

    def value(self) -> float | None:
        return self._x


def set_category_ticks(axis: pg.AxisItem, labels: Sequence[str], max_chars: int = MAX_LABEL_CHARS,
                       offset: float = 0.5) -> None:
    """Label positions ``offset, 1 + offset, ...`` of ``axis`` with (elided) names."""
    axis.setTicks([[(k + offset, elide(name, max_chars)) for k, name in enumerate(labels)], []])


def fit_left_axis(axis: pg.AxisItem, labels: Sequence[str], max_chars: int = MAX_LABEL_CHARS) -> None:
    """Widen a left axis to its longest (elided) label, so names are never cut."""
    fm = pg.QtGui.QFontMetrics(axis.style.get("tickFont") or QFont())
    width = max((fm.horizontalAdvance(elide(s, max_chars)) for s in labels), default=20)
    axis.setWidth(width + 14)


def heatmap(plot: pg.PlotWidget, matrix: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str], *,
            colormap: str = "viridis", levels: tuple[float, float] | None = None, bar_label: str = "",
            image: pg.ImageItem | None = None, number_rows: bool = False,
            number_cols: bool = False) -> pg.ImageItem:
    """Draw ``matrix[row, col]`` as an image: row 0 at the top, names on the axes, a colour bar.

    Parameters
    ----------
    plot
        The plot to draw in (its previous heatmap is replaced when ``image`` is given).
    matrix
        ``(R, C)`` values (from core).
    row_labels, col_labels
        Names of the rows (left axis) and columns (bottom axis); long names are elided.
    levels
        Colour range; default the matrix's finite range.
    number_rows, number_cols
        Rows read "1. name"; columns read "1", "2", ... (the bottom axis cannot
        hold many long names side by side; the panel lists them in a caption).
    """
    m = np.asarray(matrix, dtype=np.float64)
    p = plot.getPlotItem()
    if image is None:
        image = pg.ImageItem()
        p.addItem(image)
    cmap = pg.colormap.get(colormap)
    finite = m[np.isfinite(m)]
    if levels is None:
        levels = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if levels[0] == levels[1]:
            levels = (levels[0] - 0.5, levels[1] + 0.5)
    image.setImage(m, levels=levels)
    image.setColorMap(cmap)
    image.setRect(pg.QtCore.QRectF(0, 0, m.shape[1], m.shape[0]))
    p.invertY(True)
    p.setAspectLocked(False)
    full_rows, full_cols = list(row_labels), list(col_labels)
    if number_rows:
        row_labels = [f"{k + 1}. {elide(name, MAX_LABEL_CHARS - 4)}" for k, name in enumerate(row_labels)]
    else:
        row_labels = [elide(name) for name in row_labels]
    from .heatmap_labels import ThinnedRowLabels

    # rows thinned to the plot's height, every name in the hover tooltip (gui/heatmap_labels.py)
    if getattr(plot, "_ddr_row_labels", None) is not None:
        plot._ddr_row_labels.detach()  # a redraw: the new rows replace the old ones
    plot._ddr_row_labels = ThinnedRowLabels(plot, image, m, row_labels, full_rows, full_cols)
    if number_cols:
        # Numbers 1, 5, 10, ... always; the others as a second tick level, which pyqtgraph labels only
        # when they fit, so a narrow heatmap never overprints its column numbers.
        major = [(k + 0.5, str(k + 1)) for k in range(m.shape[1]) if k == 0 or (k + 1) % 5 == 0]
        minor = [(k + 0.5, str(k + 1)) for k in range(m.shape[1]) if not (k == 0 or (k + 1) % 5 == 0)]
        p.getAxis("bottom").setTicks([major, minor])
    else:
        set_category_ticks(p.getAxis("bottom"), col_labels, max_chars=14)
    fit_left_axis(p.getAxis("left"), row_labels)
    p.setRange(xRange=(0, max(m.shape[1], 1)), yRange=(0, max(m.shape[0], 1)), padding=0)
    p.showGrid(x=False, y=False)
    # Names on the left axis make the item wide: let the widget ask the layout for that width.
    plot.setMinimumWidth(max(plot.minimumWidth(), int(p.getAxis("left").width()) + 160))
    bar = getattr(plot, "_ddr_colorbar", None)
    if bar is None:
        bar = pg.ColorBarItem(values=levels, colorMap=cmap, interactive=False, width=14, label=bar_label)
        bar.setImageItem(image, insert_in=p)
        plot._ddr_colorbar = bar
    else:
        bar.setLevels(levels)
        bar.setColorMap(cmap)
    return image


def placeholder(plot: pg.PlotWidget, text: str) -> pg.TextItem:
    """A centred message in an empty plot (e.g. "Ranks need a posterior fit")."""
    p = plot.getPlotItem()
    item = pg.TextItem(text, color="#555555", anchor=(0.5, 0.5))
    p.addItem(item)
    p.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
    item.setPos(0.5, 0.5)
    p.hideAxis("left")
    p.hideAxis("bottom")
    return item


# ---------------------------------------------------------------------------
# Exports
# ---------------------------------------------------------------------------

def export_plot(plot: pg.PlotWidget | pg.PlotItem, path: str | Path, width: int | None = None) -> Path:
    """Write a plot to ``path``: PNG (raster, ``width`` pixels wide, default 2x the widget) or SVG (vector).

    PNG goes through ``pyqtgraph.exporters.ImageExporter``.  SVG is painted
    with Qt's ``QSvgGenerator``: pyqtgraph 0.14's ``SVGExporter`` fails on the
    closed paths ("... Z") that Qt 6 writes for every view box
    ("ValueError: not enough values to unpack").

    Raises
    ------
    ValueError
        For a suffix other than .png or .svg.
    """
    from pyqtgraph import exporters

    path = Path(path)
    item = plot.getPlotItem() if isinstance(plot, pg.PlotWidget) else plot
    suffix = path.suffix.lower()
    if suffix not in (".svg", ".png"):
        raise ValueError(f"{path}: plots are exported as .png or .svg, not {suffix or 'no suffix'!r}")
    with atomic_path(path, keep_suffix=True) as tmp:  # the writers pick the format from the suffix
        if suffix == ".svg":
            _export_svg(item, tmp)
        else:
            ex = exporters.ImageExporter(item)
            w = int(width or max(2 * item.boundingRect().width(), 800))
            # pyqtgraph keeps width and height in proportion; both must be ints
            ex.parameters()["width"] = w
            ex.export(str(tmp))
    return path


def _export_svg(item: pg.PlotItem, path: Path) -> None:
    from PySide6.QtCore import QRectF, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    scene = item.scene()
    if scene is None:
        raise ValueError(f"{path}: the plot is not shown in a window, so it cannot be exported")
    source = item.sceneBoundingRect()
    size = QSize(max(1, int(source.width())), max(1, int(source.height())))
    gen = QSvgGenerator()
    gen.setFileName(str(path))
    gen.setSize(size)
    gen.setViewBox(QRectF(0, 0, size.width(), size.height()))
    # Axes replay a cached QPicture, which rescales by the ratio of device resolutions:
    # give the generator the resolution the picture was recorded at (72 dpi by default would shrink the axes).
    views = scene.views()
    gen.setResolution(views[0].logicalDpiX() if views else 96)
    gen.setTitle(item.titleLabel.text or "DDR Explorer plot")
    gen.setDescription("Exported by DDR Explorer")
    painter = QPainter()
    if not painter.begin(gen):
        raise OSError(f"{path}: cannot be written")
    try:
        painter.fillRect(QRectF(0, 0, size.width(), size.height()), pg.mkColor("w"))
        scene.render(painter, QRectF(0, 0, size.width(), size.height()), source)
    finally:
        painter.end()


def table_rows(table: QTableWidget) -> tuple[list[str], list[list[str]]]:
    """Header and cell values of a table (empty cells as "").

    A cell's ``Qt.UserRole`` data, when set, is its full value (an unrounded
    number, an unelided name) and is used instead of the displayed text.
    """
    header = []
    for c in range(table.columnCount()):
        h = table.horizontalHeaderItem(c)
        if h is None:
            header.append(f"column {c + 1}")
        else:  # a plain-ASCII name for CSV readers when the panel gave one
            header.append(str(h.data(Qt.UserRole)) if h.data(Qt.UserRole) is not None else h.text())
    rows = []
    for r in range(table.rowCount()):
        row = []
        for c in range(table.columnCount()):
            it = table.item(r, c)
            # the full value, not an elided display text
            full = it.data(Qt.UserRole) if it is not None and it.data(Qt.UserRole) is not None else None
            if isinstance(full, float):
                row.append(repr(full))
            else:
                row.append(str(full) if full is not None else (it.text() if it is not None else ""))
        rows.append(row)
    return header, rows


def table_width(table: QTableWidget) -> int:
    """Pixels needed to show every column of ``table`` without a horizontal scroll bar."""
    w = sum(table.columnWidth(c) for c in range(table.columnCount()))
    if table.verticalHeader().isVisible():
        w += table.verticalHeader().width()
    return w + 2 * table.frameWidth() + table.verticalScrollBar().sizeHint().width() + 4


def export_table(table: QTableWidget, path: str | Path) -> Path:
    """Write a table's header and cells to CSV (UTF-8, comma-separated)."""
    path = Path(path)
    header, rows = table_rows(table)
    with atomic_path(path) as tmp, tmp.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def write_csv(path: str | Path, header: Sequence[str], rows: Sequence[Sequence]) -> Path:
    """Write rows of numbers/strings to CSV; floats keep full precision (``repr``)."""
    path = Path(path)
    with atomic_path(path) as tmp, tmp.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(list(header))
        for row in rows:
            w.writerow([repr(float(x)) if isinstance(x, (float, np.floating)) else x for x in row])
    return path


class ExportButton(QToolButton):
    """An "Export" button whose menu saves each plot (PNG/SVG) and table (CSV) of a panel.

    Parameters
    ----------
    plots
        Callable returning ``{name: PlotWidget}`` (called when the menu opens, so
        plots created later are listed).
    tables
        Callable returning ``{name: QTableWidget}``.
    extra
        Callable returning ``{label: callable(path)}`` of further CSV exports.
    """

    def __init__(self, plots: Callable[[], Mapping[str, pg.PlotWidget]],
                 tables: Callable[[], Mapping[str, QTableWidget]] | None = None,
                 extra: Callable[[], Mapping[str, Callable[[Path], object]]] | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.setText("Export")
        self.setToolTip("Save a plot as PNG or SVG, or a table as CSV")
        self.setPopupMode(QToolButton.InstantPopup)
        self._plots, self._tables, self._extra = plots, tables or (lambda: {}), extra or (lambda: {})
        self._menu = QMenu(self)
        self._menu.aboutToShow.connect(self._on_menu_about_to_show)
        self.setMenu(self._menu)

    def _on_menu_about_to_show(self) -> None:
        self._menu.clear()
        for name, plot in self._plots().items():
            act = QAction(f"Plot: {name}...", self._menu)
            act.triggered.connect(lambda _=False, n=name, p=plot: self._save_plot(n, p))
            self._menu.addAction(act)
        for name, table in self._tables().items():
            act = QAction(f"Table: {name} (CSV)...", self._menu)
            act.triggered.connect(lambda _=False, n=name, t=table: self._save_table(n, t))
            self._menu.addAction(act)
        for name, func in self._extra().items():
            act = QAction(f"{name} (CSV)...", self._menu)
            act.triggered.connect(lambda _=False, n=name, f=func: self._save_extra(n, f))
            self._menu.addAction(act)

    def _ask(self, name: str, filters: str) -> Path | None:
        stem = "".join(ch if ch.isalnum() else "-" for ch in name.lower()).strip("-")
        path, _ = QFileDialog.getSaveFileName(self, f"Save {name}", stem, filters)
        return Path(path) if path else None

    def _save_plot(self, name: str, plot) -> None:
        path = self._ask(name, "PNG image (*.png);;SVG vector image (*.svg)")
        if path is not None:
            if path.suffix.lower() not in (".png", ".svg"):
                path = path.with_suffix(".png")
            self._guard(lambda: export_plot(plot, path))

    def _save_table(self, name: str, table) -> None:
        path = self._ask(name, "CSV (*.csv)")
        if path is not None:
            self._guard(lambda: export_table(table, path.with_suffix(".csv")))

    def _save_extra(self, name: str, func) -> None:
        path = self._ask(name, "CSV (*.csv)")
        if path is not None:
            self._guard(lambda: func(path.with_suffix(".csv")))

    def _guard(self, job: Callable[[], object]) -> None:
        try:
            job()
        except (OSError, ValueError) as exc:  # a full disk or a bad name must not crash the app
            QMessageBox.warning(self, "Export failed", str(exc))


def fmt_interval(median: float, lo: float, hi: float, digits: int = 3) -> str:
    """``0.812 [0.701, 0.880]``; infinite bounds as ∞ (:func:`~ddr_explorer.core.formatting.fmt_estimate`)."""
    return fmt_estimate(median, lo, hi, fmt=functools.partial(fmt_coef, digits=digits))


#: Counts and sizes, money: the same formatting as the CLI and the DDR sheet.
fmt_count = fmt_n


def panel_head(lines, plots_of, tables_of, empty: str = "") -> tuple[QLabel, QHBoxLayout]:
    """A panel's head: the summary lines (escaped, selectable, wrapped) and its Export button beside them.

    Returns the summary label (tests read its text) and the row to put on top of the panel.
    """
    def esc(text) -> str:
        return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    summary = QLabel("<br>".join(esc(x) for x in lines) or empty)
    summary.setTextFormat(Qt.RichText)
    summary.setWordWrap(True)
    summary.setTextInteractionFlags(Qt.TextSelectableByMouse)
    head = QHBoxLayout()
    head.addWidget(summary, 1)
    head.addWidget(ExportButton(plots_of, tables_of), 0, Qt.AlignTop)
    return summary, head
