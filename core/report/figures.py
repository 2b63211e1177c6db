"""Vector figures of the DDR sheet, drawn with ``reportlab.graphics`` from core's arrays.

Every function takes a result that core computed (a
:class:`~ddr_explorer.core.dstudy.DStudyCurve`, a
:class:`~ddr_explorer.core.dstudy.CostFrontier`, a
:class:`~ddr_explorer.core.ranks.RankAnalysis`, ...) and returns a
:class:`reportlab.graphics.shapes.Drawing`; nothing here computes a statistic,
so the PDF shows the numbers the app shows.  No matplotlib: the figures stay
vector, small, and free of a plotting backend.

A small plotting kit (:class:`Plot`) maps data to points, draws axes with
"nice" ticks on linear or log scales, bands, lines and markers.  Data outside
an axis range are clamped to it rather than drawn outside the frame.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from reportlab.graphics.shapes import Circle, Drawing, Group, Line, PolyLine, Polygon, Rect, String
from reportlab.lib import colors

from ..formatting import facet_words, fmt_target
from . import styles as st

__all__ = [
    "Plot",
    "nice_ticks",
    "log_ticks",
    "dstudy_figure",
    "breadth_figure",
    "cost_frontier_figure",
    "rank_shift_figure",
    "difficulty_figure",
    "held_out_figure",
    "rank_dominance_figure",
    "coverage_figure",
]

TICK = 2.5
LABEL_SIZE = 6.6
TICK_SIZE = 6.0
ANNOT_SIZE = 6.0


# ---------------------------------------------------------------------------
# Ticks
# ---------------------------------------------------------------------------

def nice_ticks(lo: float, hi: float, n: int = 5, *, integer: bool = False) -> np.ndarray:
    """About ``n`` round tick values covering ``[lo, hi]`` (steps 1, 2, 2.5, 5 x 10^k).

    ``integer=True`` keeps steps whole (counts of tasks, scaffolds, ranks).
    """
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return np.array([lo])
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    if integer:
        mag = max(mag, 1.0)
    step = mag
    for m in ((1, 2, 5, 10) if integer else (1, 2, 2.5, 5, 10)):
        step = m * mag
        if (hi - lo) / step <= n:
            break
    start = math.ceil(lo / step - 1e-9) * step
    ticks = np.arange(start, hi + step * 1e-9, step)
    return np.round(ticks, 10)


def log_ticks(lo: float, hi: float) -> np.ndarray:
    """Powers of ten in ``[lo, hi]``, with 2x and 5x multiples when the range spans under three decades."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    mult = (1, 2, 5) if b - a < 3 else (1,)
    out = [m * 10.0 ** e for e in range(a, b + 1) for m in mult]
    return np.array([t for t in out if lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9)])


def _fmt_tick(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v - round(v)) < 1e-9:
        return f"{v:.0f}"
    return f"{v:g}"


def _fmt_usd_tick(v: float) -> str:
    """Compact money with two significant figures: $0.5, $15, $150, $1.5k, $15k, $2M."""
    if v == 0:
        return "$0"
    v = float(f"{v:.2g}")
    for div, suf in ((1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return f"${v / div:g}{suf}"
    return f"${v:g}"


# ---------------------------------------------------------------------------
# The plotting kit
# ---------------------------------------------------------------------------

class Plot:
    """A plotting area inside a drawing: maps data coordinates to points.

    Parameters
    ----------
    drawing
        The :class:`~reportlab.graphics.shapes.Drawing` to add to.
    x, y, w, h
        The area in points (origin bottom-left).
    xlim, ylim
        Data ranges; ``lo > hi`` flips an axis (ranks, 1 at the top).
    xlog, ylog
        Logarithmic axes.
    """

    def __init__(self, drawing: Drawing, x: float, y: float, w: float, h: float, xlim, ylim, *,
                 xlog: bool = False, ylog: bool = False):
        self.d, self.x0, self.y0, self.w, self.h = drawing, x, y, w, h
        self.xlim, self.ylim, self.xlog, self.ylog = tuple(map(float, xlim)), tuple(map(float, ylim)), xlog, ylog

    # -- mapping ---------------------------------------------------------
    @staticmethod
    def _map(v, lim, log, origin, size):
        lo, hi = lim
        v = np.asarray(v, dtype=np.float64)
        if log:
            v, lo, hi = np.log10(np.maximum(v, 1e-300)), math.log10(lo), math.log10(hi)
        frac = (v - lo) / (hi - lo) if hi != lo else np.zeros_like(v) + 0.5
        return origin + np.clip(frac, 0.0, 1.0) * size

    def px(self, v):
        """Points of x data (clamped to the axis)."""
        return self._map(v, self.xlim, self.xlog, self.x0, self.w)

    def py(self, v):
        """Points of y data (clamped to the axis)."""
        return self._map(v, self.ylim, self.ylog, self.y0, self.h)

    def add(self, shape):
        """Add a shape to the drawing and return it."""
        self.d.add(shape)
        return shape

    # -- axes -------------------------------------------------------------
    def axes(self, xticks=None, yticks=None, *, xfmt=_fmt_tick, yfmt=_fmt_tick, xgrid=False, ygrid=True,
             xlabel: str | None = None, ylabel: str | None = None, box: bool = False):
        """Draw the frame, ticks, tick labels and axis labels."""
        x1, y1 = self.x0 + self.w, self.y0 + self.h
        if xticks is None:
            xticks = log_ticks(*sorted(self.xlim)) if self.xlog else nice_ticks(*sorted(self.xlim))
        if yticks is None:
            yticks = log_ticks(*sorted(self.ylim)) if self.ylog else nice_ticks(*sorted(self.ylim))
        for t in yticks:
            yy = float(self.py(t))
            if ygrid:
                self.add(Line(self.x0, yy, x1, yy, strokeColor=st.RULE, strokeWidth=0.3))
            self.add(Line(self.x0 - TICK, yy, self.x0, yy, strokeColor=st.MUTED, strokeWidth=0.5))
            self.add(String(self.x0 - TICK - 1.5, yy - TICK_SIZE * 0.35, yfmt(t), fontName=st.FONT,
                            fontSize=TICK_SIZE, fillColor=st.MUTED, textAnchor="end"))
        for t in xticks:
            xx = float(self.px(t))
            if xgrid:
                self.add(Line(xx, self.y0, xx, y1, strokeColor=st.RULE, strokeWidth=0.3))
            self.add(Line(xx, self.y0 - TICK, xx, self.y0, strokeColor=st.MUTED, strokeWidth=0.5))
            self.add(String(xx, self.y0 - TICK - TICK_SIZE - 0.5, xfmt(t), fontName=st.FONT, fontSize=TICK_SIZE,
                            fillColor=st.MUTED, textAnchor="middle"))
        self.add(Line(self.x0, self.y0, x1, self.y0, strokeColor=st.MUTED, strokeWidth=0.6))
        self.add(Line(self.x0, self.y0, self.x0, y1, strokeColor=st.MUTED, strokeWidth=0.6))
        if box:
            self.add(Line(x1, self.y0, x1, y1, strokeColor=st.RULE, strokeWidth=0.5))
            self.add(Line(self.x0, y1, x1, y1, strokeColor=st.RULE, strokeWidth=0.5))
        if xlabel:
            self.add(String(self.x0 + self.w / 2, self.y0 - TICK - TICK_SIZE - LABEL_SIZE - 2.5, xlabel,
                            fontName=st.FONT, fontSize=LABEL_SIZE, fillColor=st.INK, textAnchor="middle"))
        if ylabel:
            self.add(rotated_text(self.x0 - 21, self.y0 + self.h / 2, ylabel, LABEL_SIZE, anchor="middle"))

    # -- marks ------------------------------------------------------------
    def hband(self, y0: float, y1: float, fill, stroke=None):
        """A horizontal band across the plot between two y values (the detection limit)."""
        a, b = float(self.py(y0)), float(self.py(y1))
        self.add(Rect(self.x0, min(a, b), self.w, abs(b - a), fillColor=fill,
                      strokeColor=stroke, strokeWidth=0.4 if stroke else 0))

    def band(self, x, lo, hi, fill):
        """A filled band between two curves."""
        xs = self.px(x)
        pts = list(zip(xs, self.py(lo))) + list(zip(xs[::-1], self.py(hi)[::-1]))
        self.add(Polygon([float(v) for p in pts for v in p], fillColor=fill, strokeColor=None, strokeWidth=0))

    def line(self, x, y, color, width: float = 1.0, dash=None):
        """A polyline through data points."""
        pts = [float(v) for p in zip(self.px(x), self.py(y)) for v in p]
        self.add(PolyLine(pts, strokeColor=color, strokeWidth=width, strokeDashArray=dash))

    def hline(self, y: float, color, width: float = 0.7, dash=None):
        """A horizontal reference line across the plot."""
        yy = float(self.py(y))
        self.add(Line(self.x0, yy, self.x0 + self.w, yy, strokeColor=color, strokeWidth=width, strokeDashArray=dash))

    def vline(self, x: float, color, width: float = 0.7, dash=None, y0=None, y1=None):
        """A vertical reference line, the full height or between two y values."""
        xx = float(self.px(x))
        a = self.y0 if y0 is None else float(self.py(y0))
        b = self.y0 + self.h if y1 is None else float(self.py(y1))
        self.add(Line(xx, a, xx, b, strokeColor=color, strokeWidth=width, strokeDashArray=dash))

    def point(self, x: float, y: float, r: float = 2.2, fill=st.INK, stroke=colors.white, shape: str = "circle",
              stroke_width: float = 0.5):
        """A marker (circle, diamond or square) of radius ``r`` points."""
        xx, yy = float(self.px(x)), float(self.py(y))
        if shape == "diamond":
            self.add(Polygon([xx, yy + r * 1.3, xx + r * 1.3, yy, xx, yy - r * 1.3, xx - r * 1.3, yy],
                             fillColor=fill, strokeColor=stroke, strokeWidth=stroke_width))
        elif shape == "square":
            self.add(Rect(xx - r, yy - r, 2 * r, 2 * r, fillColor=fill, strokeColor=stroke, strokeWidth=stroke_width))
        else:
            self.add(Circle(xx, yy, r, fillColor=fill, strokeColor=stroke, strokeWidth=stroke_width))

    def errorbar(self, x: float, lo: float, hi: float, color=st.INK, width: float = 0.8, cap: float = 2.0):
        """A vertical interval with caps."""
        xx = float(self.px(x))
        a, b = float(self.py(lo)), float(self.py(hi))
        self.add(Line(xx, a, xx, b, strokeColor=color, strokeWidth=width))
        for yy in (a, b):
            self.add(Line(xx - cap, yy, xx + cap, yy, strokeColor=color, strokeWidth=width))

    def text(self, x: float, y: float, s: str, *, size: float = ANNOT_SIZE, color=st.INK, anchor: str = "start",
             font: str = st.FONT, dx: float = 0, dy: float = 0, halo: bool = False):
        """Text at a data point, offset by ``dx``, ``dy`` points.

        ``halo``: a translucent white box behind the text, so a label that a
        curve or band crosses stays readable.
        """
        if halo:
            w = st.text_width(s, font, size)
            x0 = float(self.px(x)) + dx - {"start": 0.0, "middle": w / 2, "end": w}[anchor]
            self.add(Rect(x0 - 1.2, float(self.py(y)) + dy - size * 0.28, w + 2.4, size * 1.12,
                          fillColor=colors.Color(1, 1, 1, alpha=0.82), strokeColor=None, strokeWidth=0))
        self.add(String(float(self.px(x)) + dx, float(self.py(y)) + dy, s, fontName=font, fontSize=size,
                        fillColor=color, textAnchor=anchor))


def rotated_text(x: float, y: float, text: str, size: float, *, anchor: str = "middle", color=st.INK,
                 angle: float = 90, font: str = st.FONT) -> Group:
    """Text rotated about ``(x, y)`` (90 degrees: reading upwards)."""
    g = Group(String(0, 0, text, fontName=font, fontSize=size, fillColor=color, textAnchor=anchor))
    g.translate(x, y)
    g.rotate(angle)
    return g


def _legend(d: Drawing, x: float, y: float, items: Sequence[tuple[str, object, str]], size: float = ANNOT_SIZE,
            gap: float = 9.0) -> float:
    """One row of legend entries from ``(kind, colour, label)``; kinds band, line, dash, point, diamond."""
    for kind, color, label in items:
        if kind == "band":
            d.add(Rect(x, y - 1, 10, 5, fillColor=color, strokeColor=None, strokeWidth=0))
        elif kind in ("line", "dash"):
            d.add(Line(x, y + 1.5, x + 10, y + 1.5, strokeColor=color, strokeWidth=1.2 if kind == "line" else 0.8,
                       strokeDashArray=None if kind == "line" else [2.5, 1.5]))
        elif kind == "diamond":
            d.add(Polygon([x + 5, y + 4.5, x + 8, y + 1.5, x + 5, y - 1.5, x + 2, y + 1.5], fillColor=color,
                          strokeColor=colors.white, strokeWidth=0.4))
        else:
            d.add(Circle(x + 5, y + 1.5, 2.2, fillColor=color, strokeColor=colors.white, strokeWidth=0.4))
        d.add(String(x + 13, y, label, fontName=st.FONT, fontSize=size, fillColor=st.INK))
        x += 13 + st.text_width(label, st.FONT, size) + gap
    return x


def _note(d: Drawing, plot: Plot, text: str):
    """A grey note in the middle of an empty plot."""
    d.add(String(plot.x0 + plot.w / 2, plot.y0 + plot.h / 2, text, fontName=st.FONT_ITALIC, fontSize=LABEL_SIZE,
                 fillColor=st.MUTED, textAnchor="middle"))


# ---------------------------------------------------------------------------
# D-study curves
# ---------------------------------------------------------------------------

#: The axis words of a pooled model fit (seed 000 (Hardy et al. 2026) Eq. 6), for a curve drawn without its fit's words.
_POOLED_WORDS = facet_words("model", ("benchmark", "task", "model", "scaffold"))


def _symbol(estimand: str) -> str:
    return {"Erho2": "E\u03c1\u00b2", "Phi": "\u03a6", "SNR": "SNR"}.get(estimand, estimand)


def dstudy_figure(curve, width: float = 260, height: float = 190, *, required: float | None = None,
                  legend: bool = True, title: str | None = None, cost_per_unit: float | None = None,
                  xlabel: str | None = None) -> Drawing:
    """The D-study budget frontier: a coefficient against one facet's size.

    Draws the 95% and 68% bands and the median (seed 000 Fig. 3), the
    detection-limit band (SNR 2-3), the target, the asymptote (the task-only
    ceiling when the facet is tasks) and the observed design with its 95%
    interval; ``required`` marks the median size that reaches the target.

    Parameters
    ----------
    curve
        A :class:`~ddr_explorer.core.dstudy.DStudyCurve` (``Erho2`` or ``Phi``).
    width, height
        Size in points.
    required
        Posterior-median size reaching the target (``inf`` or None: not drawn).
    legend
        Draw the legend row above the plot.
    title
        Optional title above the legend.
    cost_per_unit
        USD per unit of the facet (e.g. per task of the design); adds a cost
        axis along the top.
    xlabel
        The facet's words (:meth:`~..formatting.FacetWords.axis`: "tasks" for a fit without a
        benchmark facet); default: the pooled design's words.
    """
    d = Drawing(width, height)
    top = (11 if legend else 3) + (11 if title else 0) + (13 if cost_per_unit else 0)
    grid = np.asarray(curve.grid, dtype=np.float64)
    xlog = curve.over == "task" and grid.max() / max(grid.min(), 1e-9) > 30
    p = Plot(d, 30, 27, width - 38, height - 27 - top, (grid.min(), grid.max()), (0, 1), xlog=xlog)
    lo, hi = curve.detection_band
    p.hband(lo, hi, st.DETECTION)
    p.band(grid, curve.hdi95[:, 0], curve.hdi95[:, 1], st.BAND95)
    p.band(grid, curve.hdi68[:, 0], curve.hdi68[:, 1], st.BAND68)
    xt = None if xlog else _count_ticks(grid.min(), grid.max())
    p.axes(xticks=xt, yticks=np.linspace(0, 1, 6),
           xlabel=(xlabel or _POOLED_WORDS.axis(curve.over)) + (" (log scale)" if xlog else ""),
           ylabel=_symbol(curve.estimand), yfmt=lambda v: f"{v:.1f}")
    # Labels go where the observed design is not: its marker and interval sit on the curve.
    obs_right = float(p.px(np.clip(curve.observed_x, grid.min(), grid.max()))) > p.x0 + p.w * 0.55
    p.line(grid, curve.median, st.MEDIAN, 1.3)
    # drawn over the bands and the curve, on a halo: the curve often crosses the band's label
    if obs_right:
        p.text(grid.min(), (lo + hi) / 2, "detection limit (SNR 2\u20133)", dx=3, dy=-2, size=5.6, color=st.MUTED,
               halo=True)
    else:
        p.text(grid.max(), (lo + hi) / 2, "detection limit (SNR 2\u20133)", anchor="end", dx=-3, dy=-2, size=5.6,
               color=st.MUTED, halo=True)
    asym = curve.asymptote.median
    ceiling = None  # the ceiling label's place, kept clear of the observed design's label
    if curve.target < 1:
        p.hline(curve.target, st.TARGET, 0.8, dash=[3, 2])
        # left end, where the curve is lowest; the asymptote is labelled at the right end
        p.text(grid.min(), curve.target, f"target {fmt_target(curve.target)}", dx=3,
               dy=2 if curve.median[0] < curve.target - 0.08 else -7, color=st.TARGET, size=5.8)
    if curve.applies:
        p.hline(asym, st.CEILING, 0.7, dash=[1, 1.5])
        word = "task-only ceiling" if curve.over == "task" else "limit"
        below = asym > 0.92 or (abs(asym - curve.target) < 0.05 and asym < curve.target)
        if asym < 0.15 and curve.observed.median < 0.15:
            dy = 11.0  # above the observed design's label, which sits over a near-zero marker
        else:
            dy = -7.0 if below else 2.0
        ceiling = (grid.max(), asym, f"{word} {asym:.2f}", "end", 0.0, dy)
        p.text(grid.max(), asym, ceiling[2], anchor="end", dy=dy, color=st.MUTED, size=5.8, halo=True)
    if required is not None and math.isfinite(required) and grid.min() <= required <= grid.max():
        p.vline(required, st.TARGET, 0.6, dash=[1, 1.5], y0=0, y1=curve.target)
        p.text(required, 0.02, f"n = {required:,.0f}", dx=2, color=st.TARGET, size=5.6)
    ox = float(np.clip(curve.observed_x, grid.min(), grid.max()))
    ob = curve.observed
    p.errorbar(ox, ob.hdi95[0], ob.hdi95[1], st.OBSERVED, 0.8)
    p.point(ox, ob.median, 2.6, st.OBSERVED)
    label = f"observed ({curve.observed_x:,.0f})"
    avoid = [] if ceiling is None else [_label_box(p, *ceiling, 5.8)]
    y, anchor, dx, dy = _observed_label_place(p, ox, ob, label, avoid)
    p.text(ox, y, label, anchor=anchor, dx=dx, dy=dy, size=5.8, halo=True)
    if not curve.applies:
        p.text(grid.min(), 0.08, "the fit has no term that averages over this facet: the curve is flat",
               dx=3, size=5.6, color=st.MUTED)
    y = height - 9
    if title:
        d.add(String(0, y, title, fontName=st.FONT_BOLD, fontSize=7.2, fillColor=st.INK))
        y -= 11
    if legend:
        _legend(d, 30, y, [("line", st.MEDIAN, "median"), ("band", st.BAND68, "68%"), ("band", st.BAND95, "95%"),
                           ("point", st.OBSERVED, "observed"), ("dash", st.TARGET, "target")], gap=6)
    if cost_per_unit:
        ticks = log_ticks(grid.min(), grid.max()) if xlog else nice_ticks(grid.min(), grid.max())
        ytop = p.y0 + p.h
        d.add(Line(p.x0, ytop, p.x0 + p.w, ytop, strokeColor=st.MUTED, strokeWidth=0.5))
        for t in ticks:
            xx = float(p.px(t))
            d.add(Line(xx, ytop, xx, ytop + TICK, strokeColor=st.MUTED, strokeWidth=0.5))
            d.add(String(xx, ytop + TICK + 1, _fmt_usd_tick(t * cost_per_unit), fontName=st.FONT, fontSize=5.6,
                         fillColor=st.MUTED, textAnchor="middle"))
    return d


def _label_box(p: Plot, x: float, y: float, s: str, anchor: str, dx: float, dy: float,
               size: float) -> tuple[float, float, float, float]:
    """The box (x0, y0, x1, y1, in points) a label of :meth:`Plot.text` covers."""
    w = st.text_width(s, st.FONT, size)
    x0 = float(p.px(x)) + dx - {"start": 0.0, "middle": w / 2, "end": w}[anchor]
    y0 = float(p.py(y)) + dy - size * 0.28
    return x0, y0, x0 + w, y0 + size * 1.12


def _overlaps(a, b, pad: float = 1.0) -> bool:
    return a[0] < b[2] + pad and b[0] < a[2] + pad and a[1] < b[3] + pad and b[1] < a[3] + pad


def _observed_label_place(p: Plot, ox: float, ob, label: str, avoid) -> tuple[float, str, float, float]:
    """Where the observed design's label goes: under (or over) its interval, centred; moved down just
    clear of a label of ``avoid`` it would cover (the ceiling's label sits at the right end, where a
    large observed design's marker also sits: "observed (500)" printed over "task-only ceiling"),
    else beside the marker, left then right: the first place inside the plot that covers nothing."""
    size = 5.8
    under = ob.hdi95[0] - 0.07 if ob.hdi95[0] > 0.2 else ob.hdi95[1] + 0.03
    places = [(under, "middle", 0.0, 0.0)]
    for a in avoid:  # the same place, its top 2 points under the label it would cover
        places.append((under, "middle", 0.0, min(0.0, a[1] - 2.0 - 0.84 * size - float(p.py(under)))))
    places += [(ob.median, "end", -5.0, -2.0), (ob.median, "start", 5.0, -2.0)]
    for y, anchor, dx, dy in places:
        box = _label_box(p, ox, y, label, anchor, dx, dy, size)
        inside = box[0] >= p.x0 - 2 and box[2] <= p.x0 + p.w + 2 and box[1] >= p.y0
        if inside and not any(_overlaps(box, a) for a in avoid):
            return y, anchor, dx, dy
    return places[0]


def _count_ticks(lo: float, hi: float) -> np.ndarray:
    """Whole-number ticks including the first value (1 scaffold, 1 benchmark)."""
    t = nice_ticks(lo, hi, 5, integer=True)
    t = t[t >= lo]
    if t.size == 0 or t[0] > lo:
        t = np.concatenate([[lo], t[t - lo >= (hi - lo) / 12]])
    return t


def breadth_figure(breadth, width: float = 250, height: float = 170, *, observed_benchmarks: float | None = None,
                   target: float | None = None, title: str | None = None) -> Drawing:
    """Fixed task budget spread over more benchmarks (seed 000 Corollary 3.2): median and bands."""
    d = Drawing(width, height)
    x = np.asarray(breadth.n_benchmarks, dtype=np.float64)
    top = 11 + (11 if title else 0)
    p = Plot(d, 30, 27, width - 38, height - 27 - top, (x.min(), x.max()), (0, 1))
    p.hband(2 / 3, 3 / 4, st.DETECTION)
    p.band(x, breadth.hdi95[:, 0], breadth.hdi95[:, 1], st.BAND95)
    p.band(x, breadth.hdi68[:, 0], breadth.hdi68[:, 1], st.BAND68)
    p.axes(xticks=_count_ticks(x.min(), x.max()), yticks=np.linspace(0, 1, 6),
           xlabel=f"benchmarks sharing {breadth.total_tasks:,.0f} tasks",
           ylabel=_symbol(breadth.estimand), yfmt=lambda v: f"{v:.1f}")
    p.line(x, breadth.median, st.MEDIAN, 1.3)
    if target is not None:
        p.hline(target, st.TARGET, 0.8, dash=[3, 2])
    if observed_benchmarks is not None and x.min() <= observed_benchmarks <= x.max():
        k = int(np.argmin(np.abs(x - observed_benchmarks)))
        p.point(x[k], breadth.median[k], 2.6, st.OBSERVED)
    y = height - 9
    if title:
        d.add(String(0, y, title, fontName=st.FONT_BOLD, fontSize=7.2, fillColor=st.INK))
        y -= 11
    _legend(d, 30, y, [("line", st.MEDIAN, "median"), ("band", st.BAND68, "68%"),
                       ("band", st.BAND95, "95%"), ("point", st.OBSERVED, "observed")], gap=6)
    return d


# ---------------------------------------------------------------------------
# Cost
# ---------------------------------------------------------------------------

def cost_frontier_figure(frontier, width: float = 300, height: float = 200, *, observed_cost: float | None = None,
                         observed=None, budget: float | None = None) -> Drawing:
    """Reliability against the cost of the evaluation, with the Pareto front (SPEC sec. 4).

    Grey dots are the designs of the grid; the green line is the best median
    reachable at each budget with its 95% band; the diamond is the cheapest
    design meeting the target; the black dot is the observed design.
    """
    d = Drawing(width, height)
    cost = np.asarray(frontier.cost, dtype=np.float64)
    pos = cost > 0
    lo_c, hi_c = cost[pos].min(), cost[pos].max()
    if observed_cost:
        lo_c, hi_c = min(lo_c, observed_cost), max(hi_c, observed_cost)
    lo_c, hi_c = 10 ** math.floor(math.log10(lo_c)), 10 ** math.ceil(math.log10(hi_c))
    p = Plot(d, 30, 27, width - 38, height - 27 - 12, (lo_c, hi_c), (0, 1), xlog=True)
    p.hband(2 / 3, 3 / 4, st.DETECTION)
    p.axes(yticks=np.linspace(0, 1, 6), xfmt=_fmt_usd_tick, ylabel=_symbol(frontier.estimand),
           xlabel="total cost of the evaluation (USD, log scale)", yfmt=lambda v: f"{v:.1f}")
    for c, m in zip(cost[pos], frontier.median[pos]):
        d.add(Circle(float(p.px(c)), float(p.py(m)), 0.8, fillColor=st.POINTS, strokeColor=None, strokeWidth=0))
    par = np.asarray(frontier.pareto, dtype=np.int64)
    par = par[cost[par] > 0]
    if par.size:
        p.band(cost[par], frontier.hdi95[par, 0], frontier.hdi95[par, 1], colors.HexColor("#cdeee2"))
        p.line(cost[par], frontier.median[par], st.FRONTIER, 1.3)
    p.hline(frontier.target, st.TARGET, 0.8, dash=[3, 2])
    p.text(hi_c, frontier.target, f"target {fmt_target(frontier.target)}", anchor="end", dy=2, color=st.TARGET, size=5.8)
    p.text(hi_c, 0.70, "detection limit (SNR 2\u20133)", anchor="end", dx=-3, size=5.6, color=st.MUTED)
    if budget:
        p.vline(budget, st.PURPLE, 0.8, dash=[2, 1.5])
        p.text(budget, 0.03, "budget", dx=2, color=st.PURPLE, size=5.6)
    if frontier.cheapest is not None:
        k = frontier.cheapest
        p.point(cost[k], frontier.median[k], 2.6, st.TARGET, shape="diamond")
    if observed_cost and observed is not None:
        p.errorbar(observed_cost, observed.hdi95[0], observed.hdi95[1], st.OBSERVED)
        p.point(observed_cost, observed.median, 2.6, st.OBSERVED)
    _legend(d, 30, height - 9, [("point", st.POINTS, "designs"), ("line", st.FRONTIER, "best at each cost"),
                                ("diamond", st.TARGET, "cheapest meeting target"),
                                ("point", st.OBSERVED, "observed")])
    return d


def rank_shift_figure(ranking, width: float = 220, height: float = 200, *, n_labels: int = 5) -> Drawing:
    """Agents' rank by accuracy against their rank by accuracy per dollar (seed 003 (DDR paper 2026) sec. 5.2).

    Points above the diagonal gain places when cost counts (green), points
    below lose places (vermillion); the largest movers are labelled.
    """
    d = Drawing(width, height)
    ok = np.isfinite(ranking.rank_per_dollar)
    ra, rd = np.asarray(ranking.rank_accuracy)[ok], np.asarray(ranking.rank_per_dollar)[ok]
    names = [a for a, o in zip(ranking.agents, ok) if o]
    n = max(len(ra), 2)
    p = Plot(d, 30, 27, width - 38, height - 27 - 12, (0.5, n + 0.5), (n + 0.5, 0.5))
    ticks = _count_ticks(1, n)
    p.axes(xticks=ticks, yticks=ticks, xlabel="rank by accuracy (1 = best)", ylabel="rank by accuracy per dollar",
           xgrid=True)
    p.line([0.5, n + 0.5], [0.5, n + 0.5], st.FAINT, 0.6, dash=[2, 2])
    delta = ra - rd  # > 0: better under cost
    for x, y, dl in zip(ra, rd, delta):
        col = st.GREEN if dl >= 1 else (st.VERMILLION if dl <= -1 else st.FAINT)
        p.point(x, y, 1.9, col, stroke_width=0.3)
    for k in np.argsort(-np.abs(delta), kind="stable")[:n_labels]:
        if abs(delta[k]) < 1:
            continue
        label = st.ellipsize(names[k], 70, st.FONT, 5.2)
        right = ra[k] < n * 0.6
        p.text(ra[k], rd[k], label, size=5.2, anchor="start" if right else "end", dx=3 if right else -3, dy=-1.8,
               color=st.INK)
    _legend(d, 30, height - 9, [("point", st.GREEN, "gains places"), ("point", st.VERMILLION, "loses places")])
    return d


# ---------------------------------------------------------------------------
# Difficulty and hold-out
# ---------------------------------------------------------------------------

_STRATUM_COLOURS = (st.GREEN, st.SKY, st.ORANGE, st.VERMILLION)


def difficulty_figure(difficulty, profile=None, width: float = 260, height: float = 170, *,
                      target: float | None = None, estimand: str = "Erho2") -> Drawing:
    """The difficulty-conditional profile (seed 003 Fig. 1), or the task difficulty distribution.

    With a :class:`~.inputs.DifficultyProfile`: one bar per stratum and one for
    all tasks (median, 95% interval).  Without one: the histogram of the
    tasks' mean success, coloured by quartile, so a reader sees which strata
    the reliability would have to be checked on.
    """
    d = Drawing(width, height)
    if profile is not None:
        labels = [lab.split(" ")[0] for lab in profile.labels] + ["all"]
        sums = list(profile.erho2) + [profile.aggregate]
        k = len(labels)
        p = Plot(d, 30, 36, width - 38, height - 36 - 12, (0, k), (0, 1))
        p.hband(2 / 3, 3 / 4, st.DETECTION)
        p.axes(xticks=[], yticks=np.linspace(0, 1, 6), ylabel=_symbol(estimand), yfmt=lambda v: f"{v:.1f}")
        for i, (lab, s) in enumerate(zip(labels, sums)):
            col = st.BLUE if lab == "all" else _STRATUM_COLOURS[min(i, 3) if k - 1 == 4 else i % 4]
            cx = i + 0.5
            if s is not None:
                x0, x1 = float(p.px(i + 0.18)), float(p.px(i + 0.82))
                y0, y1 = float(p.py(0)), float(p.py(s.median))
                d.add(Rect(x0, y0, x1 - x0, max(y1 - y0, 0.01), fillColor=col, strokeColor=None, strokeWidth=0))
                p.errorbar(cx, s.hdi95[0], s.hdi95[1], st.INK, 0.7, 1.8)
                # The value sits at the foot of the bar (never up by the legend); where the interval reaches
                # down to the foot, it moves right of the interval's line; a bar too short to hold it gets
                # the value just above it, right of the line.
                clear = s.hdi95[0] > 0.1
                tall = s.median >= 0.08
                p.text(cx, 0.02 if tall else s.median, f"{s.median:.2f}", anchor="middle" if clear else "start",
                       dx=0 if clear else 1.8, dy=0 if tall else 2, size=5.8,
                       color=colors.white if tall else st.INK, font=st.FONT_BOLD)
            else:
                p.text(cx, 0.05, "no fit", anchor="middle", size=5.6, color=st.MUTED)
            p.text(cx, 0, lab, anchor="middle", dy=-9, size=TICK_SIZE)
            if lab != "all" and profile.mean_success is not None and i < len(profile.mean_success):
                p.text(cx, 0, f"{100 * profile.mean_success[i]:.0f}% solved", anchor="middle", dy=-16, size=5.2,
                       color=st.MUTED)
        if target is not None:
            p.hline(target, st.TARGET, 0.8, dash=[3, 2])
        _legend(d, 30, height - 9, [("band", st.DETECTION, "detection limit"), ("dash", st.TARGET, "target")])
        return d
    succ = np.asarray(difficulty.mean_success, dtype=np.float64)
    q = np.asarray(difficulty.quartile)
    bins = np.linspace(0, 1, 21)
    idx = np.clip(np.digitize(succ, bins) - 1, 0, 19)
    counts = np.zeros((difficulty.n_strata, 20))
    for s in range(1, difficulty.n_strata + 1):
        counts[s - 1] = np.bincount(idx[q == s], minlength=20)
    top = max(1.0, counts.sum(axis=0).max())
    p = Plot(d, 30, 27, width - 38, height - 27 - 12, (0, 1), (0, top * 1.08))
    p.axes(xticks=np.linspace(0, 1, 6), xfmt=lambda v: f"{100 * v:.0f}%", xlabel="mean success across agents",
           ylabel="tasks", yticks=[t for t in nice_ticks(0, top, 4) if t == int(t)])
    for b in range(20):
        base = 0.0
        for s in range(difficulty.n_strata):
            c = counts[s, b]
            if c <= 0:
                continue
            x0, x1 = float(p.px(bins[b])) + 0.4, float(p.px(bins[b + 1])) - 0.4
            y0, y1 = float(p.py(base)), float(p.py(base + c))
            d.add(Rect(x0, y0, x1 - x0, y1 - y0, fillColor=_STRATUM_COLOURS[s % 4], strokeColor=None, strokeWidth=0))
            base += c
    items = [("band", _STRATUM_COLOURS[s % 4], f"{difficulty.labels[s].split(' ')[0]}") for s in
             range(difficulty.n_strata)]
    _legend(d, 30, height - 9, items + [("band", colors.white, "(Q1 easiest, Q4 hardest)")], gap=6)
    return d


def held_out_figure(held, width: float = 220, height: float = 170, *, estimand: str = "Erho2") -> Drawing:
    """Held-out against projected reliability across splits (seed 003 sec. 5.4), with the identity line."""
    d = Drawing(width, height)
    x, y = np.asarray(held.projected), np.asarray(held.held_out)
    lo, hi = float(min(x.min(), y.min())), float(max(x.max(), y.max()))
    pad = max(0.02, 0.08 * (hi - lo))
    lo, hi = max(0.0, lo - pad), min(1.0, hi + pad)
    if hi <= lo:
        lo, hi = 0.0, 1.0
    p = Plot(d, 32, 27, width - 40, height - 27 - 12, (lo, hi), (lo, hi))
    tk = nice_ticks(lo, hi, 4)
    sym = _symbol(estimand)
    p.axes(xticks=tk, yticks=tk, xlabel=f"projected {sym} (training cells)", ylabel=f"held-out {sym}",
           xfmt=lambda v: f"{v:.2f}", yfmt=lambda v: f"{v:.2f}", xgrid=True)
    p.line([lo, hi], [lo, hi], st.FAINT, 0.7, dash=[2, 2])
    for a, b in zip(x, y):
        p.point(a, b, 1.8, st.BLUE, stroke_width=0.3)
    r = held.pearson_r
    txt = f"r = {r:.2f}".replace("-", "\u2212") if math.isfinite(r) else "r = n/a"
    txt += f",  mean gap {held.mean_gap:+.3f}".replace("-", "\u2212")
    # a REML hold-out is on the observed 0/1 scale: the figure says so beside its points
    what = f"{held.n_splits} splits" + (" (REML)" if getattr(held, "estimator", "bayes") == "reml" else "")
    x_end = _legend(d, 32, height - 9, [("point", st.BLUE, what),
                                        ("dash", st.FAINT, "held-out = projected")])
    d.add(String(max(x_end, width - 4 - st.text_width(txt, st.FONT_BOLD, ANNOT_SIZE)), height - 9, txt,
                 fontName=st.FONT_BOLD, fontSize=ANNOT_SIZE, fillColor=st.INK))
    return d


# ---------------------------------------------------------------------------
# Ranks
# ---------------------------------------------------------------------------

def rank_dominance_figure(ranks, width: float = 523, *, max_models: int = 60, label_width: float = 110,
                          noun: str = "model") -> Drawing:
    """Rank-dominance heatmap and rank intervals, rows ordered by global dominance (seed 000 Figs. 13-14).

    Left: ``P(row model > column model | y)`` (columns numbered like the
    rows); right: each model's posterior median rank and 95% rank interval;
    far right: global dominance.  Beyond ``max_models`` the most dominant are
    shown (the caption says so).  ``noun`` names what is ranked (``"agent"`` for the ddr preset;
    :func:`~..formatting.object_noun`).
    """
    order = list(ranks.order)[:max_models]
    n = len(order)
    m_all = len(ranks.models)
    dom = ranks.dominance[np.ix_(order, order)]
    interval_w, dom_w, gap = 130.0, 30.0, 14.0
    heat_w = width - label_width - interval_w - dom_w - 2 * gap
    cell = max(3.0, min(13.0, heat_w / n))  # column width
    heat_w = cell * n
    # Rows may be taller than columns are wide, so that names stay legible with many models.
    row = cell if n <= 30 else max(cell, min(8.0, 560.0 / n))
    font = max(4.2, min(6.3, row * 0.72))
    head, foot = 16.0, 36.0
    height = head + row * n + foot
    d = Drawing(width, height)
    y_top = height - head
    x_heat = label_width
    for i, k in enumerate(order):
        yy = y_top - (i + 1) * row
        name = f"{i + 1}. {ranks.models[k]}"
        d.add(String(x_heat - 3, yy + row * 0.5 - font * 0.35, st.ellipsize(name, label_width - 4, st.FONT, font),
                     fontName=st.FONT, fontSize=font, fillColor=st.INK, textAnchor="end"))
        for j in range(n):
            # NaN: two parts of a disconnected design, not identified (blank, no number)
            known = bool(np.isfinite(dom[i, j]))
            col = st.PANEL if i == j else (st.diverging(dom[i, j]) if known else colors.white)
            d.add(Rect(x_heat + j * cell, yy, cell, row, fillColor=col, strokeColor=colors.white if known else st.RULE,
                       strokeWidth=0.25 if cell > 5 else 0))
            if cell >= 11 and i != j and known:
                p = dom[i, j]
                d.add(String(x_heat + (j + 0.5) * cell, yy + cell * 0.5 - 1.6, f"{p:.2f}"[1:] if p < 1 else "1",
                             fontName=st.FONT, fontSize=4.3, textAnchor="middle",
                             fillColor=colors.white if abs(p - 0.5) > 0.35 else st.INK))
    step = 1 if cell >= 6 else (2 if cell >= 3.5 else 5)
    for j in range(0, n, step):
        d.add(String(x_heat + (j + 0.5) * cell, y_top + 2, str(j + 1), fontName=st.FONT, fontSize=min(font, 5.5),
                     fillColor=st.MUTED, textAnchor="middle"))
    d.add(String(x_heat, height - 7, f"P(row {noun} ranks above column {noun})", fontName=st.FONT_BOLD,
                 fontSize=6.4, fillColor=st.INK))
    # colour bar
    cb_y, cb_w = 10.0, min(heat_w, 150.0)
    for s in range(50):
        d.add(Rect(x_heat + s * cb_w / 50, cb_y, cb_w / 50 + 0.2, 6, fillColor=st.diverging(s / 49), strokeColor=None,
                   strokeWidth=0))
    for v in (0, 0.5, 1):
        d.add(String(x_heat + v * cb_w, cb_y - 7, f"{v:g}", fontName=st.FONT, fontSize=5.6, fillColor=st.MUTED,
                     textAnchor="middle"))
    # say what the colours mean next to the bar, so the heatmap reads without its title
    d.add(String(x_heat + cb_w + 6, cb_y + 1, f"P(row {noun} ranks above column {noun}): orange = row better",
                 fontName=st.FONT, fontSize=5.6, fillColor=st.MUTED))
    # rank intervals
    x_int = x_heat + heat_w + gap
    p = Plot(d, x_int, y_top - n * row, interval_w, n * row, (0.5, m_all + 0.5), (0, 1))
    for i, k in enumerate(order):
        yc = y_top - (i + 0.5) * row
        lo, hi = ranks.ranks.interval95[k]
        d.add(Line(float(p.px(lo)), yc, float(p.px(hi)), yc, strokeColor=st.BAND68, strokeWidth=max(1.0, row * 0.45)))
        d.add(Circle(float(p.px(ranks.ranks.median_rank[k])), yc, max(1.0, min(2.2, row * 0.3)), fillColor=st.BLUE,
                     strokeColor=None, strokeWidth=0))
        g = ranks.global_dominance[k]
        d.add(String(x_int + interval_w + gap + dom_w, yc - font * 0.35, f"{g:.2f}", fontName=st.FONT, fontSize=font,
                     fillColor=st.INK, textAnchor="end"))
    ticks = _count_ticks(1, m_all)
    if ticks[-1] != m_all and m_all - ticks[-1] >= (m_all - 1) / 10:
        ticks = np.append(ticks, m_all)
    yb = y_top - n * row
    d.add(Line(x_int, yb, x_int + interval_w, yb, strokeColor=st.MUTED, strokeWidth=0.5))
    for t in ticks:
        xx = float(p.px(t))
        d.add(Line(xx, yb, xx, y_top, strokeColor=st.RULE, strokeWidth=0.3))
        d.add(String(xx, yb - 8, _fmt_tick(t), fontName=st.FONT, fontSize=TICK_SIZE, fillColor=st.MUTED,
                     textAnchor="middle"))
    d.add(String(x_int + interval_w / 2, yb - 16, "posterior rank (median, 95% interval)", fontName=st.FONT,
                 fontSize=LABEL_SIZE, fillColor=st.INK, textAnchor="middle"))
    d.add(String(x_int, height - 7, "rank", fontName=st.FONT_BOLD, fontSize=6.4, fillColor=st.INK))
    d.add(String(x_int + interval_w + gap + dom_w, height - 7, "dominance", fontName=st.FONT_BOLD, fontSize=6.4,
                 fillColor=st.INK, textAnchor="end"))
    return d


# ---------------------------------------------------------------------------
# Coverage
# ---------------------------------------------------------------------------

def coverage_figure(coverage: dict, width: float = 523, *, max_rows: int = 60, max_cols: int = 45,
                    label_width: float = 110, col_label_height: float = 62) -> Drawing:
    """Model x scaffold coverage: shade = trials of the agent (log scale), blank = never run."""
    models = list(coverage["models"])[:max_rows]
    scaffolds = list(coverage["scaffolds"])[:max_cols]
    trials = np.asarray(coverage["trials"], dtype=np.float64)[:len(models), :len(scaffolds)]
    nr, nc = max(len(models), 1), max(len(scaffolds), 1)
    cell = max(3.0, min(9.0, (width - label_width - 10) / nc, 520.0 / nr))
    font = max(4.2, min(6.3, cell * 0.72))
    height = col_label_height + cell * nr + 24
    d = Drawing(width, height)
    y_top = height - col_label_height
    top = np.log1p(trials.max()) if trials.size and trials.max() > 0 else 1.0
    for i, m in enumerate(models):
        yy = y_top - (i + 1) * cell
        d.add(String(label_width - 3, yy + cell * 0.5 - font * 0.35, st.ellipsize(m, label_width - 4, st.FONT, font),
                     fontName=st.FONT, fontSize=font, fillColor=st.INK, textAnchor="end"))
        for j in range(len(scaffolds)):
            v = trials[i, j]
            fill = st.sequential(0.15 + 0.85 * np.log1p(v) / top) if v > 0 else colors.white
            d.add(Rect(label_width + j * cell, yy, cell, cell, fillColor=fill, strokeColor=st.RULE, strokeWidth=0.25))
    for j, s in enumerate(scaffolds):
        d.add(rotated_text(label_width + (j + 0.5) * cell + font * 0.35, y_top + 3,
                           st.ellipsize(s, col_label_height - 6, st.FONT, font), font, anchor="start", color=st.INK))
    d.add(Rect(label_width, 6, 8, 6, fillColor=st.sequential(1.0), strokeColor=None, strokeWidth=0))
    d.add(String(label_width + 11, 7, "many trials", fontName=st.FONT, fontSize=5.8, fillColor=st.MUTED))
    d.add(Rect(label_width + 60, 6, 8, 6, fillColor=st.sequential(0.2), strokeColor=None, strokeWidth=0))
    d.add(String(label_width + 71, 7, "few", fontName=st.FONT, fontSize=5.8, fillColor=st.MUTED))
    d.add(Rect(label_width + 95, 6, 8, 6, fillColor=colors.white, strokeColor=st.RULE, strokeWidth=0.4))
    d.add(String(label_width + 106, 7, "never run", fontName=st.FONT, fontSize=5.8, fillColor=st.MUTED))
    return d


# ---------------------------------------------------------------------------
# Failure modes and the frontier over time
# ---------------------------------------------------------------------------

_SERIES = (st.BLUE, st.VERMILLION, st.GREEN, st.ORANGE, st.PURPLE, st.SKY, st.MUTED)


def failure_modes_figure(tax, width: float = 260, height: float = 170) -> Drawing:
    """Per error category: agent x task variance (x, where agents differ) against activation rate (y, where
    failures appear), seed 003 sec. 5.7; a :class:`~..analyses.failure_modes.FailureTaxonomy`."""
    d = Drawing(width, height)
    v, a = np.asarray(tax.interaction_variance, float), np.asarray(tax.activation_rate, float)
    xhi = float(max(v.max() * 1.15, 1e-3))
    yhi = float(min(1.0, max(a.max() * 1.2, 0.05)))
    p = Plot(d, 34, 27, width - 44, height - 27 - 14, (0.0, xhi), (0.0, yhi))
    p.axes(xticks=nice_ticks(0, xhi, 4), yticks=nice_ticks(0, yhi, 4),
           xlabel="agent \u00d7 task variance \u03c3\u00b2 (logit)", ylabel="activation rate",
           yfmt=lambda t: f"{t:.2f}")
    placed: list[tuple[float, float]] = []
    for k in np.argsort(-a):
        c = tax.categories[k]
        p.point(v[k], a[k], 2.6, _SERIES[k % len(_SERIES)])
        right = v[k] > 0.6 * xhi
        xx, yy, dy = float(p.px(v[k])), float(p.py(a[k])), 2.0
        while any(abs(yy + dy - py_) < ANNOT_SIZE + 1 and abs(xx - px_) < 90 for px_, py_ in placed):
            dy -= ANNOT_SIZE + 1  # a label near another goes below it, so close categories stay readable
        placed.append((xx, yy + dy))
        p.text(v[k], a[k], c[:26], size=ANNOT_SIZE, anchor="end" if right else "start", dx=-4 if right else 4,
               dy=dy, halo=True)
    r = tax.spearman
    txt = ("Spearman " + (f"{r:.2f}".replace("-", "\u2212") if math.isfinite(r) else "n/a")
           + f" over {len(tax.categories)} categories")
    d.add(String(34, height - 9, txt, fontName=st.FONT_BOLD, fontSize=ANNOT_SIZE, fillColor=st.INK))
    return d


def frontier_time_figure(frontier, width: float = 260, height: float = 170, *, max_groups: int = 6) -> Drawing:
    """Group frontier per release quarter with its 95% task-bootstrap band (seed 002 (Krsteski et al. 2026) sec. 5.1, Fig. 2f)."""
    d = Drawing(width, height)
    q = len(frontier.quarters)
    x = np.arange(q, dtype=float)
    p = Plot(d, 32, 27, width - 40, height - 27 - 14, (-0.3, max(q - 1, 1) + 0.3), (0.0, 1.0))
    step = max(1, int(math.ceil(q / 6)))
    ticks = x[::step]
    p.axes(xticks=ticks, yticks=nice_ticks(0, 1, 5), xfmt=lambda t: frontier.quarters[int(round(t))],
           xlabel="release quarter (models released by its end)", ylabel="frontier score",
           yfmt=lambda t: f"{t:.2f}")
    items = []
    for k, g in enumerate(frontier.groups[:max_groups]):
        col = _SERIES[k % len(_SERIES)]
        y, lo, hi = (np.asarray(a[k], float) for a in (frontier.group_frontier, frontier.group_lower,
                                                        frontier.group_upper))
        ok = np.isfinite(y)
        if not ok.any():
            continue
        bok = ok & np.isfinite(lo) & np.isfinite(hi)
        if bok.sum() >= 2:
            p.band(x[bok], lo[bok], hi[bok], colors.Color(col.red, col.green, col.blue, alpha=0.15))
        p.line(x[ok], y[ok], col, 1.2)
        for xx, yy in zip(x[ok], y[ok]):
            p.point(xx, yy, 1.5, col, stroke_width=0.2)
        items.append(("line", col, g[:22]))
    _legend(d, 32, height - 9, items)
    return d
