"""The D-study view: move a design with sliders, watch reliability, cost and the target.

:class:`DStudyPanel` receives a prepared :class:`~ddr_explorer.core.dstudy.DStudyModel`
(one posterior of variance components), the observed design and an
:class:`~ddr_explorer.core.session.AnalysisState`, and subscribes to the
state's change events.  Sliders and spin boxes write to the state; the state's
events move the widgets and schedule a redraw (napari's model -> view pattern).

A redraw asks core for one :class:`~ddr_explorer.core.dstudy.DStudyView`
(:meth:`DStudyModel.view`) and only draws its arrays: the median, 68% and 95%
bands of each curve, the asymptote, the detection-limit band and the target,
the observed and current designs, and the readouts.  The last view is kept as
``panel.view`` so tests compare what is drawn with what core computed.

Slider moves are throttled to one redraw per frame (:class:`~.plots.Throttle`,
16 ms).  The cost frontier and its budget search
(:func:`~ddr_explorer.core.dstudy.budget_search`, 0.1-1 s on 4,000 draws, over
the grids of :mod:`ddr_explorer.core.dstudy.grids`, as ``ddr dstudy --budget``
and the DDR sheet) do not depend on the sliders' sizes, only on prices, target,
replicates, models, object and claim: they are computed by a
:class:`~.workers.BackgroundTask` when one of those changes, and only the
current design's marker moves with the sliders.  The rank-dominance heatmap does not depend on the design
and is drawn once.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from pathlib import Path
from typing import Mapping

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QSlider,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.dstudy import (BudgetSearch, CostFrontier, DStudyDesign, DStudyModel, DStudyView, allocation_for_summary,
                           budget_search)
from ..core.dstudy.grids import (SLIDER_TOP, TASK_CURVE_POINTS, TASK_SLIDER_POSITIONS,  # noqa: F401 - re-exported
                                 curve_grid, frontier_grids, slider_values)
from ..core.formatting import estimand_symbol, facet_words, fmt_coef, fmt_design, fmt_n, fmt_target, fmt_var
from ..core.reliability import DETECTION_ERHO2, object_facets, objects_for_terms
from ..core.session import ALL_BENCHMARKS, SIZE_FIELDS, AnalysisState, SessionError
from . import plots
from .plots import (COLORS, Band, Curve, Marker, Throttle, VLine, data_item, fmt_count, fmt_interval, fmt_usd,
                    line, new_plot)
from .committed_edits import commit_on_finish, write_back
from .readout_words import cost_words, latent_words as _latent_words, object_words
from .what_if_fields import (CheckedDoubleSpinBox, CheckedSpinBox, budget_problem, count_problem, field_note,
                             target_problem)
from .workers import BackgroundTask, wait_for_tasks

#: Object of measurement -> its entry in the Object box.
_OBJECT_LABELS = {"model": "Model", "system": "Model-scaffold system", "agent": "Agent (model-scaffold pair)"}

#: Slider field -> (label, facet of the D-study rule, axis label of its curve) of a pooled model fit; a panel's own
#: words (``DStudyPanel.words``) follow its fit (core.formatting.facet_words).
FIELDS: dict[str, tuple[str, str, str]] = {
    "n_tasks": ("Tasks per benchmark", "task", "tasks per benchmark"),
    "n_scaffolds": ("Scaffolds per model", "scaffold", "scaffolds per model"),
    "n_benchmarks": ("Benchmarks", "benchmark", "benchmarks"),
    "n_replicates": ("Replicates (trials per cell)", "replicate", "trials per cell"),
}

_PRICE_ALL = ALL_BENCHMARKS


def state_for(observed: DStudyDesign) -> AnalysisState:
    """An analysis state whose current and observed designs are ``observed`` (:meth:`AnalysisState.from_design`)."""
    return AnalysisState.from_design(observed)


def wait_for_background_jobs(timeout_s: float | None = 120.0) -> bool:
    """Block until every background job (cost frontiers included) has finished (tests, scripts, shutdown).

    Returns False if some job is still running after ``timeout_s`` seconds.
    """
    return wait_for_tasks(timeout_s)


class _CurveItems:
    """The items of one reliability curve plot (drawn from a :class:`~ddr_explorer.core.dstudy.DStudyCurve`).

    Each band is one filled path and the median one path (:class:`~.plots.Band`, :class:`~.plots.Curve`);
    the markers are Qt items moved in place.  Every item ignores data equal to what it shows, so moving
    the task slider redraws the task curve's markers only, not its curve (the curve over tasks does not
    depend on the number of tasks).
    """

    def __init__(self, plot: pg.PlotWidget, log_x: bool = False):
        self.plot = plot
        self.log_x = log_x
        p = plot.getPlotItem()
        self.detection = pg.LinearRegionItem(values=DETECTION_ERHO2, orientation="horizontal", movable=False,
                                             brush=pg.mkBrush(COLORS["detection"]), pen=pg.mkPen(None))
        self.detection.setZValue(-30)
        p.addItem(self.detection)
        self.band95 = Band(plot, COLORS["band95"], z=-20, log_x=log_x)
        self.band68 = Band(plot, COLORS["band68"], z=-15, log_x=log_x)
        self.median = Curve(plot, line(COLORS["median"], 2.2), log_x=log_x)
        self.asymptote = pg.InfiniteLine(angle=0, movable=False, pen=line(COLORS["asymptote"], 1.4, Qt.DashLine))
        self.target = pg.InfiniteLine(angle=0, movable=False, pen=line(COLORS["target"], 1.4, Qt.DotLine))
        p.addItem(self.asymptote)
        p.addItem(self.target)
        # Vertical markers and points are plain Qt items moved in place (data coordinates in, log10 drawn).
        self.observed_line = VLine(plot, line(COLORS["observed"], 1.0, Qt.DashLine), log_x=log_x)
        self.observed_point = Marker(plot, 10, pen=pg.mkPen(COLORS["observed"], width=2), log_x=log_x, z=10)
        self.current_line = VLine(plot, line(COLORS["current"], 1.2), log_x=log_x)
        self.current_point = Marker(plot, 9, pen=pg.mkPen("w"), brush=pg.mkBrush(COLORS["current"]), log_x=log_x,
                                    z=11)
        self.preview = False

    def set_preview(self, preview: bool) -> None:
        """Preview (point estimates): a dashed median and no bands; else the posterior's solid median and bands."""
        self.preview = bool(preview)
        self.median.set_style(Qt.DashLine if preview else Qt.SolidLine)
        self.band95.setVisible(not preview)
        self.band68.setVisible(not preview)

    def draw(self, curve) -> None:
        g = curve.grid
        self.band95.set_data(g, curve.hdi95[:, 0], curve.hdi95[:, 1])
        self.band68.set_data(g, curve.hdi68[:, 0], curve.hdi68[:, 1])
        self.median.set_data(g, curve.median)
        _set_value(self.asymptote, _finite_or(curve.asymptote.median, 1.0))
        _set_value(self.target, curve.target)
        self.detection.setRegion(curve.detection_band)  # a no-op when unchanged
        x = float(curve.observed_x)  # DStudyCurve.observed_* is the view's (current) design
        self.current_point.set_point(x, curve.observed.median)
        self.current_line.set_value(x)

    def draw_observed(self, curve) -> None:
        x = float(curve.observed_x)
        self.observed_point.set_point(x, curve.observed.median)
        self.observed_line.set_value(x)


def _set_value(item: pg.InfiniteLine, value: float) -> None:
    if item.value() != value:
        item.setValue(value)


class _TextSetter:
    """``labels[key].setText(text)`` that skips unchanged text: a QLabel relayouts its form on every setText."""

    def __init__(self, labels: Mapping[str, QLabel]):
        self._labels = labels

    def __getitem__(self, key: str) -> "_TextSetter._One":
        return _TextSetter._One(self._labels[key])

    class _One:
        def __init__(self, label: QLabel):
            self.label = label

        def setText(self, text: str) -> None:  # noqa: N802 - mirrors QLabel
            if self.label.text() != text:
                self.label.setText(text)


def _finite_or(x: float, default: float) -> float:
    return float(x) if x is not None and math.isfinite(x) else default


class DStudyPanel(QWidget):
    """Sliders, spin boxes and plots of a decision study (SPEC sec. 4).

    Parameters
    ----------
    model
        The posterior prepared for D-studies (:class:`~ddr_explorer.core.dstudy.DStudyModel`).
    observed
        The design the corpus ran (marked on every curve); its prices, models,
        object and claim seed the state when ``state`` is None.
    state
        The analysis state to read and write (the panel subscribes to its events).
    ranks
        A :class:`~ddr_explorer.core.ranks.RankAnalysis` for the rank-dominance
        heatmap, or None when the posterior has no latent model effects.
    throttle_ms
        Minimum time between two redraws while a slider moves.
    replicates_curve
        Show the curve over replicates; default: when the observed design has
        replicated trials (a trial facet exists, SPEC sec. 4).

    Attributes
    ----------
    view
        The last :class:`~ddr_explorer.core.dstudy.DStudyView` drawn.
    observed_view
        The view of the observed design (its markers).
    frontier
        The last :class:`~ddr_explorer.core.dstudy.CostFrontier` drawn (None until ready).
    frontier_grids
        The design grids passed to :func:`~ddr_explorer.core.dstudy.cost_frontier`.
    sliders, slider_values
        Field -> ``QSlider`` and the sizes its positions stand for.
    curve_items
        Field -> the items of its curve plot (``median``, ``band68``, ``band95``, ...).
    readout_labels
        Readout name -> ``QLabel``.
    timings
        ``(core_ms, draw_ms)`` of each redraw.
    """

    redrawn = Signal()
    frontier_ready = Signal()

    def __init__(self, model: DStudyModel, observed: DStudyDesign, state: AnalysisState | None = None, ranks=None, *,
                 throttle_ms: int = 16, replicates_curve: bool | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        # The frontier runs on a background thread: keep garbage collection on the GUI thread meanwhile.
        plots.GuiThreadGarbageCollector.acquire(self)
        self.model = model
        self.components = model.components
        #: Point estimates standing in for the posterior (core.preview): dashed medians, no bands, a banner.
        self.preview = bool(getattr(self.components, "preview", False))
        self.observed = observed
        self.state = state if state is not None else state_for(observed)
        self.ranks = ranks
        self.view: DStudyView | None = None
        self.observed_view: DStudyView | None = None
        self.frontier: CostFrontier | None = None
        self.search: BudgetSearch | None = None  # core's budget search of the frontier (cheapest, best in budget)
        self.timings: list[tuple[float, float]] = []
        self._frontier_task: BackgroundTask | None = None
        self.frontier_jobs = 0  # frontier jobs started (tests check that sliders start none)
        self._updating_widgets = False
        self._frontier_lines = None
        self._budget_line_at: float | None = None
        # the budget's tasks per benchmark (core.dstudy.allocation), computed off the GUI thread
        self.allocation: dict | None = None
        self.allocation_why: str | None = None
        self._allocation_task: BackgroundTask | None = None

        facets = self.components.facets
        # the words of each size, the CLI's and the sheet's (core.formatting.facet_words): a fit without a
        # benchmark facet (seed 003 (DDR paper 2026)'s model, ddr preset) has one task facet over all tasks; an agent fit compares
        # agents and its replicates are traces
        self.facet_words = facet_words(self.state.object_of_measurement, facets)
        self.words = {f: (self.facet_words.label(f) if f != "n_replicates" else
                          f"Replicates ({self.facet_words.axis(f)})", facet, self.facet_words.axis(f))
                      for f, (_, facet, _) in FIELDS.items()}
        self.fields = [f for f in SIZE_FIELDS
                       if f == "n_replicates" or FIELDS[f][1] in facets]
        obs_sizes = self._observed_sizes()
        show_rep = obs_sizes["n_replicates"] > 1 if replicates_curve is None else replicates_curve
        self.curve_fields = [f for f in self.fields if f != "n_replicates" or show_rep]
        self.grids = {f: curve_grid(f, [obs_sizes[f]]) for f in self.curve_fields}
        # Core's grids (core.dstudy.grids): fixed by the observed design, so the frontier does not move with
        # the sliders, and the same designs `ddr dstudy --budget` and the DDR sheet search.
        self.frontier_grids = frontier_grids(self.observed)
        self.slider_values: dict[str, np.ndarray] = {
            f: slider_values(f, [obs_sizes[f], getattr(self.state, f)]) for f in self.fields}

        self._build()
        for items in self.curve_items.values():
            items.set_preview(self.preview)
        if self.preview:
            self.set_preview_note()
        self._redraw_throttle = Throttle(self._redraw, throttle_ms, self)
        self._frontier_timer = QTimer(self)
        self._frontier_timer.setSingleShot(True)
        self._frontier_timer.setInterval(150)  # a burst of edits starts one frontier job
        self._frontier_timer.timeout.connect(self._start_frontier)
        self._allocation_timer = QTimer(self)
        self._allocation_timer.setSingleShot(True)
        self._allocation_timer.setInterval(150)
        self._allocation_timer.timeout.connect(self._start_allocation)

        self._sync_widgets(frozenset({"sizes", "target", "budget", "prices", "n_models", "claim",
                                      "object_of_measurement"}))
        self._compute_observed()
        self._redraw()
        self._start_frontier()
        self._start_allocation()
        self._draw_dominance()

        cb = self._on_state_changed
        self.state.events.connect(cb)
        state_ref = self.state
        # The state may outlive the panel: stop listening when the widget goes.
        # (no parameters: PySide then does not wrap the half-destroyed panel for the handler)
        self.destroyed.connect(lambda: state_ref.events.disconnect(cb))

    # -- layout ---------------------------------------------------------------------------
    def _build(self) -> None:
        controls = QWidget()
        col = QVBoxLayout(controls)
        col.setContentsMargins(4, 4, 4, 4)

        box = self.design_box = QGroupBox("Design")  # the sizes it has no slider for say why (dstudy_absent_sizes)
        form = QVBoxLayout(box)
        self.sliders: dict[str, QSlider] = {}
        self.slider_labels: dict[str, QLabel] = {}
        for f in self.fields:
            head = QHBoxLayout()
            name = QLabel(self.words[f][0])
            value = QLabel("")
            value.setAlignment(Qt.AlignRight | Qt.AlignVCenter)
            value.setMinimumWidth(60)
            head.addWidget(name, 1)
            head.addWidget(value)
            s = QSlider(Qt.Horizontal)
            s.setObjectName(f"slider_{f}")
            s.setRange(0, len(self.slider_values[f]) - 1)
            s.setToolTip(f"{self.words[f][0]}: {self.slider_values[f][0]:g} to {self.slider_values[f][-1]:g}"
                         + (" (log scale)" if f == "n_tasks" else ""))
            s.valueChanged.connect(lambda pos, f=f: self._on_slider_moved(f, pos))
            form.addLayout(head)
            form.addWidget(s)
            self.sliders[f], self.slider_labels[f] = s, value
        col.addWidget(box)

        box = QGroupBox("Readouts (preview: point estimates)" if self.preview else "Readouts (all posterior draws)")
        rl = QFormLayout(box)
        rl.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        self.readout_labels: dict[str, QLabel] = {}
        self.readout_names: dict[str, QLabel] = {}
        for key, text in (("coefficient", "E\u03c1\u00b2"), ("snr", "SNR"), ("ceiling", "Task-only ceiling"),
                          ("p_target", "P(target met)"), ("min_n", "Tasks for target"), ("latent", "Latent scale"),
                          ("objects", "By object (latent)"),
                          ("cost", "Cost"), ("trials", "Trials"), ("cheapest", "Cheapest for target"),
                          ("budget", "Best in budget")):
            lab = QLabel("")
            lab.setWordWrap(True)
            lab.setTextInteractionFlags(Qt.TextSelectableByMouse)
            lab.setObjectName(f"readout_{key}")
            name = QLabel(text)
            rl.addRow(name, lab)
            self.readout_labels[key], self.readout_names[key] = lab, name
        self.readout_names["trials"].setText(self.facet_words.noun("n_replicates").capitalize())  # traces of agents
        # the count of a full design at the sliders' sizes, not the corpus's trials (core.dstudy.trial_counts)
        self.readout_names["trials"].setToolTip("In a full design of these sizes: models × scaffolds × tasks "
                                                "× trials per cell. The corpus's own count is on the Corpus tab.")
        col.addWidget(box)
        box = QGroupBox("Decision")
        fl = QFormLayout(box)
        self.claim_box = QComboBox()
        self.claim_box.addItem("Ranking (E\u03c1\u00b2)", "relative")
        self.claim_box.addItem("Thresholds (\u03a6)", "absolute")
        self.claim_box.currentIndexChanged.connect(self._on_claim_changed)
        fl.addRow("Claim", self.claim_box)
        self.object_box = QComboBox()
        # exactly the objects the fit supports (core.reliability): agents for the ddr preset, else models/systems
        for obj in objects_for_terms(self.components.terms):
            self.object_box.addItem(_OBJECT_LABELS[obj], obj)
        self.object_box.currentIndexChanged.connect(self._on_object_changed)
        fl.addRow("Object", self.object_box)
        self.target_spin = CheckedDoubleSpinBox(target_problem)  # out of range: refused in words (what_if_fields)
        self.target_spin.setRange(0.001, 0.999)
        self.target_spin.setDecimals(3)
        self.target_spin.setSingleStep(0.01)
        self.target_spin.valueChanged.connect(self._on_target_changed)
        fl.addRow("Target", self.target_spin)
        self.budget_spin = CheckedDoubleSpinBox(budget_problem)
        self.budget_spin.setRange(0.0, 1e9)
        self.budget_spin.setDecimals(2)
        self.budget_spin.setSingleStep(100.0)
        self.budget_spin.setPrefix("$")
        self.budget_spin.setSpecialValueText("no budget")
        self.budget_spin.valueChanged.connect(self._on_budget_changed)
        fl.addRow("Budget", self.budget_spin)
        compared = self.facet_words.compared
        self.models_spin = CheckedSpinBox(lambda v: count_problem(v, compared.lower()))
        self.models_spin.setRange(1, 100000)
        self.models_spin.setToolTip(f"{compared}: every one runs the design (enters the cost only)")
        self.models_spin.valueChanged.connect(self._on_models_changed)
        fl.addRow(compared, self.models_spin)
        self.field_notes = {k: field_note(fl, w, k) for k, w in (("target", self.target_spin),
                                                                 ("budget", self.budget_spin), ("n_models", self.models_spin))}
        # a typed number reaches the state once, on Enter or focus out (gui/committed_edits.py)
        commit_on_finish(self.target_spin, self.budget_spin, self.models_spin)
        col.addWidget(box)

        box = QGroupBox("Price per trial (USD)")
        bl = QVBoxLayout(box)
        self.price_table = QTableWidget(0, 2)
        self.price_table.setObjectName("price_table")
        self.price_table.setHorizontalHeaderLabels(["benchmark", "USD per trial"])
        self.price_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.price_table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeToContents)
        self.price_table.verticalHeader().hide()
        self.price_table.setTextElideMode(Qt.ElideMiddle)
        self.price_table.setMaximumHeight(150)
        self.price_table.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Maximum)
        self.price_table.itemChanged.connect(self._on_price_edited)
        bl.addWidget(self.price_table)
        col.addWidget(box)

        box = QGroupBox(f"{self.facet_words.allocation} within the budget")
        box.setObjectName("allocation_box")
        al = QVBoxLayout(box)
        self.allocation_label = QLabel("")
        self.allocation_label.setObjectName("allocation_label")
        self.allocation_label.setWordWrap(True)
        self.allocation_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        al.addWidget(self.allocation_label)
        self.allocation_table = QTableWidget(0, 4)
        self.allocation_table.setObjectName("allocation_table")
        self.allocation_table.setHorizontalHeaderLabels(["benchmark", "tasks", "equal", "\u03c3\u00b2 task"])
        for k, tip in enumerate(("benchmark", "tasks of the reliability-aware allocation",
                                 "tasks of the equal split the budget buys",
                                 "error variance one task of this benchmark adds (latent scale)")):
            self.allocation_table.horizontalHeaderItem(k).setToolTip(tip)
        self.allocation_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        for k in (1, 2, 3):
            self.allocation_table.horizontalHeader().setSectionResizeMode(k, QHeaderView.ResizeToContents)
        self.allocation_table.verticalHeader().hide()
        self.allocation_table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.allocation_table.setTextElideMode(Qt.ElideMiddle)
        self.allocation_table.setMaximumHeight(150)
        self.allocation_table.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Maximum)
        self.allocation_table.hide()
        al.addWidget(self.allocation_table)
        col.addWidget(box)

        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #a40000;")
        col.addWidget(self.message)
        col.addStretch(1)

        scroll = QScrollArea()
        scroll.setWidget(controls)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(290)
        scroll.setMaximumWidth(360)

        # -- plots
        self.curve_plots: dict[str, pg.PlotWidget] = {}
        self.curve_items: dict[str, _CurveItems] = {}
        curves_row = QWidget()
        hl = QHBoxLayout(curves_row)
        hl.setContentsMargins(0, 0, 0, 0)
        for f in self.curve_fields:
            w = new_plot(f"{self._estimand_html()} vs {self.words[f][2]}", self.words[f][2], self._axis_label(),
                         log_x=(f == "n_tasks"), grid=False)
            w.setObjectName(f"plot_{f}")
            hl.addWidget(w)
            self.curve_plots[f] = w
            self.curve_items[f] = _CurveItems(w, log_x=(f == "n_tasks"))
            g = self.grids[f]
            p = w.getPlotItem()
            p.setYRange(0, 1, padding=0.02)
            plots.reference_lines(w, np.arange(0.1, 1.01, 0.1), (g[0], g[-1]), log_x=(f == "n_tasks"))
            if f == "n_tasks":
                p.setXRange(0, math.log10(g[-1]), padding=0.02)
            else:
                p.setXRange(1, g[-1], padding=0.03)
        self.frontier_plot = new_plot("Cost frontier", "cost (USD)", self._axis_label(), log_x=True, grid=False)
        self.frontier_plot.setObjectName("plot_frontier")
        self.frontier_plot.getPlotItem().setYRange(0, 1, padding=0.02)
        fp = self.frontier_plot
        self.frontier_points = data_item(fp, pen=None, symbol="o", symbolSize=4, symbolPen=None,
                                         symbolBrush=pg.mkBrush(COLORS["grid_points"]))
        self.frontier_line = data_item(fp, pen=line(COLORS["frontier"], 2.0), symbol="o", symbolSize=5,
                                       symbolBrush=pg.mkBrush(COLORS["frontier"]), symbolPen=None)
        self.frontier_target = pg.InfiniteLine(angle=0, movable=False, pen=line(COLORS["target"], 1.4, Qt.DotLine))
        fp.addItem(self.frontier_target)
        self.frontier_cheapest = data_item(fp, pen=None, symbol="star", symbolSize=16,
                                           symbolBrush=pg.mkBrush(COLORS["target"]), symbolPen=pg.mkPen("k"))
        self.frontier_budget = data_item(fp, pen=line(COLORS["observed"], 1.2, Qt.DashDotLine))
        self.frontier_current = Marker(fp, 10, pen=pg.mkPen("w"), brush=pg.mkBrush(COLORS["current"]), log_x=True,
                                       z=12)
        self.dominance_plot = new_plot("Rank dominance P(row beats column)", "", "")
        self.dominance_plot.setObjectName("plot_dominance")
        self.dominance_image = None

        bottom = QWidget()
        bl2 = QHBoxLayout(bottom)
        bl2.setContentsMargins(0, 0, 0, 0)
        bl2.addWidget(self.frontier_plot, 1)
        bl2.addWidget(self.dominance_plot, 1)

        split = QSplitter(Qt.Vertical)
        split.addWidget(curves_row)
        split.addWidget(bottom)
        split.setChildrenCollapsible(False)

        head = QHBoxLayout()
        c = self.components
        # A long file name is elided (and whole in the tooltip): it must not widen the panel.
        self.title = QLabel(f"Components: <b>{_html(plots.elide(c.source, 60))}</b>; {c.n_draws:,} draw(s), "
                            f"bands from {self.model.band_draws:,}")
        self.title.setToolTip(str(c.source))
        self.title.setWordWrap(True)
        self.export_button = plots.ExportButton(self.plots, self.tables, self._extra_exports)
        head.addWidget(self.title, 1)
        head.addWidget(self.export_button)
        self.legend = QLabel(_legend_html(self.preview))
        self.legend.setWordWrap(True)
        # Point estimates standing in for the posterior say so above the plots, in words.
        self.preview_banner = QLabel("")
        self.preview_banner.setObjectName("preview_banner")
        self.preview_banner.setWordWrap(True)
        self.preview_banner.setStyleSheet("background: #fff4d6; color: #6b4a00; border: 1px solid #e0b040; "
                                          "padding: 4px; font-weight: bold;")
        self.preview_banner.setVisible(self.preview)

        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        rv.addWidget(self.preview_banner)
        rv.addLayout(head)
        rv.addWidget(split, 1)
        rv.addWidget(self.legend)

        outer = QHBoxLayout(self)
        outer.addWidget(scroll)
        outer.addWidget(right, 1)

    def set_preview_note(self, fitting: bool = False, method: str | None = None) -> None:
        """The preview banner's text: the posterior is running (``fitting``) or still to be fitted."""
        if not self.preview:
            return
        what = f" ({method})" if method else ""
        tail = ("posterior running; it replaces this view when the fit ends" if fitting
                else "fit the model (Analysis > Fit the model) for the posterior")
        self.preview_banner.setText(f"preview: point estimates{what}, " + tail
                                    + ". Dashed curves, no uncertainty bands; never on the DDR sheet.")

    def _estimand_html(self) -> str:
        return "\u03a6" if self.state.claim == "absolute" else "E\u03c1\u00b2"

    def _observed_sizes(self) -> dict[str, float]:
        d = self.observed
        return {"n_tasks": d.effective_n_tasks, "n_scaffolds": float(d.n_scaffolds),
                "n_benchmarks": d.effective_n_benchmarks, "n_replicates": float(d.n_replicates)}

    # -- exports ---------------------------------------------------------------------------
    def plots(self) -> dict[str, pg.PlotWidget]:
        """Name -> plot widget (for exports)."""
        out = {f"{self._estimand_plain()} vs {self.words[f][2]}": w for f, w in self.curve_plots.items()}
        out["Cost frontier"] = self.frontier_plot
        out["Rank dominance"] = self.dominance_plot
        return out

    def tables(self) -> dict[str, QTableWidget]:
        return {"Prices per benchmark": self.price_table}

    def _extra_exports(self) -> dict:
        return {"D-study curves": self.export_curves_csv, "Cost frontier designs": self.export_frontier_csv}

    def _object_words(self, design) -> str:
        return object_words(self.model.components, design)

    def _axis_label(self) -> str:
        """The coefficient and its scale: success rates (what a buyer reads) or the latent logit scale."""
        scale = "success rates" if self.model.scale == "observed" else "latent scale"
        return f"{self._estimand_html()} ({scale})"

    def _estimand_plain(self) -> str:
        return "Phi" if self.state.claim == "absolute" else "Erho2"

    def export_curves_csv(self, path) -> Path:
        """Write the drawn curves (core's arrays) to CSV: one row per facet size."""
        rows = []
        for f, c in (self.view.curves if self.view else {}).items():
            for k, n in enumerate(c.grid):
                rows.append([f, c.estimand, float(n), float(c.median[k]), float(c.hdi68[k, 0]), float(c.hdi68[k, 1]),
                             float(c.hdi95[k, 0]), float(c.hdi95[k, 1]), float(c.p_target[k])])
        return plots.write_csv(path, ["over", "estimand", "n", "median", "hdi68_lower", "hdi68_upper",
                                      "hdi95_lower", "hdi95_upper", "p_target"], rows)

    def export_frontier_csv(self, path) -> Path:
        """Write every design of the cost frontier's grid to CSV (``pareto`` marks the front)."""
        fr = self.frontier
        if fr is None:
            raise ValueError("the cost frontier is still being computed; try again in a moment")
        front = set(int(k) for k in fr.pareto)
        rows = [[float(fr.n_tasks[k]), float(fr.n_scaffolds[k]), float(fr.n_benchmarks[k]), float(fr.trials[k]),
                 float(fr.cost[k]), float(fr.median[k]), float(fr.hdi95[k, 0]), float(fr.hdi95[k, 1]),
                 float(fr.p_target[k]), int(k in front)] for k in range(fr.cost.size)]
        return plots.write_csv(path, ["n_tasks", "n_scaffolds", "n_benchmarks", "trials", "cost_usd", "median",
                                      "hdi95_lower", "hdi95_upper", "p_target", "pareto"], rows)

    def export_plot(self, name: str, path) -> Path:
        """Save the plot called ``name`` (see :meth:`plots`) as PNG or SVG."""
        return plots.export_plot(self.plots()[name], path)

    def export_table(self, name: str, path) -> Path:
        return plots.export_table(self.tables()[name], path)

    # -- widget handlers (the view writes the state) ------------------------------------
    def _on_slider_moved(self, field: str, pos: int) -> None:
        value = float(self.slider_values[field][pos])
        self.slider_labels[field].setText(fmt_count(value))
        if not self._updating_widgets:
            self.state.update(**{field: value})

    def _on_claim_changed(self, _index: int) -> None:
        if not self._updating_widgets:
            self.state.update(claim=self.claim_box.currentData())

    def _on_object_changed(self, _index: int) -> None:
        if not self._updating_widgets:
            self.state.update(object_of_measurement=self.object_box.currentData())

    def _on_target_changed(self, value: float) -> None:
        if not self._updating_widgets:
            self.state.update(target=round(float(value), 6))

    def _on_budget_changed(self, value: float) -> None:
        if not self._updating_widgets:
            self.state.update(budget=None if value <= 0 else float(value))

    def _on_models_changed(self, value: int) -> None:
        if not self._updating_widgets:
            self.state.update(n_models=int(value))

    def _on_price_edited(self, item: QTableWidgetItem) -> None:
        if self._updating_widgets or item.column() != 1:
            return
        bench = self.price_table.item(item.row(), 0).data(Qt.UserRole)
        text = item.text().strip().lstrip("$").replace(",", "")
        try:
            price = float(text)
            prices = {**self._table_prices(), bench: price}
            if bench == _PRICE_ALL and not self.state.prices:
                prices = {_PRICE_ALL: price}
            self.state.update(prices=prices)
            self.message.setText("")
        except (ValueError, SessionError) as exc:
            msg = str(exc) if isinstance(exc, SessionError) else f"{text!r} is not a number"
            self.message.setText(f"Price of {bench}: {msg}. Enter USD per trial, e.g. 0.25.")
            self._sync_widgets(frozenset({"prices"}))  # put the state's value back

    def _table_prices(self) -> dict[str, float]:
        return dict(self.state.prices)

    # -- state handler (the state moves the view) -------------------------------------------
    def _on_state_changed(self, names: frozenset[str]) -> None:
        self._sync_widgets(names)
        if names & {"claim", "object_of_measurement", "prices", "n_models"}:
            self._compute_observed()
            self._update_titles()
        if names & ({"claim", "object_of_measurement", "prices", "n_models", "target", "n_replicates"}
                    | self._frontier_fixed_sizes()):
            self.frontier = None if names & {"claim", "object_of_measurement"} else self.frontier
            self._frontier_timer.start()
        if names & {"budget", "prices", "n_models", "claim", "object_of_measurement", "sizes", "n_scaffolds",
                    "n_replicates"}:
            self._allocation_timer.start()
        self._redraw_throttle()

    def _frontier_fixed_sizes(self) -> set[str]:
        """Sizes the frontier takes from the design: facets absent from the fit or part of the object."""
        o = object_facets(self.state.object_of_measurement)
        return {f for f in ("n_tasks", "n_scaffolds", "n_benchmarks")
                if FIELDS[f][1] not in self.components.facets or FIELDS[f][1] in o}

    def _sync_widgets(self, names: frozenset[str]) -> None:
        st = self.state
        self._updating_widgets = True
        try:
            for f in self.fields:
                if f in names or "sizes" in names:
                    vals = self.slider_values[f]
                    v = float(getattr(st, f))
                    pos = int(np.argmin(np.abs(np.log(vals) - math.log(v)))) if f == "n_tasks" else \
                        int(np.argmin(np.abs(vals - v)))
                    self.sliders[f].setValue(pos)
                    self.slider_labels[f].setText(fmt_count(v))
            if names & {"target", "claim"}:
                write_back(self.target_spin, st.effective_target)
            if "budget" in names:
                write_back(self.budget_spin, 0.0 if st.budget is None else st.budget)
            if "n_models" in names:
                write_back(self.models_spin, int(st.n_models))
            if "claim" in names:
                self.claim_box.setCurrentIndex(max(0, self.claim_box.findData(st.claim)))
            if "object_of_measurement" in names:
                self.object_box.setCurrentIndex(max(0, self.object_box.findData(st.object_of_measurement)))
            if "prices" in names:
                prices = st.prices or {_PRICE_ALL: 0.0}
                self.price_table.setRowCount(len(prices))
                for r, (b, p) in enumerate(prices.items()):
                    name = QTableWidgetItem(plots.elide(b, 40))
                    name.setData(Qt.UserRole, b)
                    name.setToolTip(b)
                    name.setFlags(name.flags() & ~Qt.ItemIsEditable)
                    value = QTableWidgetItem(f"{p:.4f}")
                    value.setData(Qt.UserRole, None)
                    value.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                    self.price_table.setItem(r, 0, name)
                    self.price_table.setItem(r, 1, value)
                rows_h = sum(self.price_table.rowHeight(r) for r in range(len(prices)))
                self.price_table.setFixedHeight(min(150, rows_h + self.price_table.horizontalHeader().height()
                                                    + 2 * self.price_table.frameWidth() + 2))
                self.price_table.setEditTriggers(QAbstractItemView.DoubleClicked | QAbstractItemView.EditKeyPressed
                                                 | QAbstractItemView.AnyKeyPressed)
        finally:
            self._updating_widgets = False

    def _update_titles(self) -> None:
        est = self._estimand_html()
        for f, w in self.curve_plots.items():
            p = w.getPlotItem()
            plots.set_title(w, f"{est} vs {self.words[f][2]}")
            p.setLabel("left", self._axis_label())
        self.frontier_plot.getPlotItem().setLabel("left", self._axis_label())

    # -- computing and drawing -------------------------------------------------------------
    def design(self) -> DStudyDesign:
        """The current design (from the state)."""
        return self.state.design()

    def _compute_observed(self) -> None:
        st = self.state
        d = dataclasses.replace(self.observed, price_per_trial=st.design().price_per_trial, n_models=int(st.n_models),
                                object_of_measurement=st.object_of_measurement, claim=st.claim,
                                tasks_per_benchmark=None, n_tasks=self.observed.effective_n_tasks,
                                n_benchmarks=self.observed.effective_n_benchmarks)
        self.observed_view = self.model.view(d, self.grids, st.effective_target, overs=self.curve_fields)
        for f, items in self.curve_items.items():
            items.draw_observed(self.observed_view.curves[f])

    def compute(self) -> DStudyView:
        """Core's view of the current design (no drawing)."""
        st = self.state
        # the last view lets core reuse the curve of the facet that moved (it does not depend on its own size)
        return self.model.view(st.design(), self.grids, st.effective_target, overs=self.curve_fields,
                               previous=self.view)

    def _redraw(self) -> None:
        t0 = time.perf_counter()
        try:
            view = self.compute()
        except ValueError as exc:  # e.g. a design core rejects: say so, keep the last picture
            self.message.setText(str(exc))
            return
        t1 = time.perf_counter()
        self.draw(view)
        t2 = time.perf_counter()
        self.timings.append(((t1 - t0) * 1e3, (t2 - t1) * 1e3))
        self.redrawn.emit()

    def redraw_now(self) -> DStudyView:
        """Compute and draw at once, bypassing the throttle (tests, benchmarks)."""
        self._redraw_throttle.cancel()
        self._redraw()
        return self.view

    def draw(self, view: DStudyView) -> None:
        """Draw a core view: curves, markers, frontier marker and readouts."""
        self.view = view
        for f, items in self.curve_items.items():
            items.draw(view.curves[f])
        self._draw_readouts(view)
        self._draw_frontier_marks()

    def _draw_readouts(self, view: DStudyView) -> None:
        r = view.readouts
        lab = _TextSetter(self.readout_labels)
        sym = "\u03a6" if r.estimand == "Phi" else "E\u03c1\u00b2"
        self.readout_names["coefficient"].setText(f"{sym} (success rates)" if r.scale == "observed" else sym)
        lab["latent"].setText(_latent_words(r))
        lab["objects"].setText(self._object_words(view.design))
        c, s = r.coefficient, r.snr
        if self.preview:  # one set of point estimates: no interval to show
            q = r.required.quantiles
            lab["coefficient"].setText(f"{fmt_coef(c.median)}  (point estimate)")
            lab["snr"].setText(fmt_coef(s.median, digits=2))
            lab["ceiling"].setText(fmt_coef(r.ceiling.median))
            lab["p_target"].setText(f"{'met' if r.p_target_met >= 0.5 else 'not met'}  "
                                    f"({_symbol(r.estimand)} \u2265 {r.target:.3f})")
            lab["min_n"].setText(fmt_count(q[0.5]))
            lab["cost"].setText(cost_words(r, view.design))
            lab["trials"].setText(fmt_count(r.trials))
            return
        lab["coefficient"].setText(f"{fmt_interval(c.median, *c.hdi95)}  (median [95% HDI])")
        lab["snr"].setText(fmt_interval(s.median, *s.hdi95, digits=2))
        lab["ceiling"].setText(fmt_interval(r.ceiling.median, *r.ceiling.hdi95))
        lab["p_target"].setText(f"{r.p_target_met:.3f}  ({_symbol(r.estimand)} \u2265 {r.target:.3f})")
        q = r.required.quantiles
        lab["min_n"].setText(f"{fmt_count(q[0.5])} [{fmt_count(q[0.025])}, {fmt_count(q[0.975])}]  "
                             f"P(reachable) {r.required.p_reachable:.2f}")
        lab["cost"].setText(cost_words(r, view.design))
        lab["trials"].setText(fmt_count(r.trials))

    def _draw_frontier_marks(self) -> None:
        """Marks that move with the design or budget; the frontier itself is drawn when it is computed."""
        view = self.view
        if view is None:
            return
        by_cost = view.design.mean_price() > 0
        x = view.readouts.cost if by_cost else view.readouts.trials
        self.frontier_current.set_point(x, view.readouts.coefficient.median)
        budget = self.state.budget
        lab = _TextSetter(self.readout_labels)  # unchanged text: no relayout
        if self.search is not None and budget is not None and by_cost:
            self.search = self.search.at_budget(budget)
            self._set_budget_line(budget)
            k = self.search.best_in_budget
            lab["budget"].setText(self.search.why_no_budget_design if k is None
                                  else fmt_design(self.search.design_at(k), self.search.frontier.estimand,
                                                  self.facet_words))
        else:
            self._set_budget_line(None)
            lab["budget"].setText("enter prices and a budget" if not by_cost or budget is None else "computing\u2026")

    def _set_budget_line(self, budget: float | None) -> None:
        if budget == self._budget_line_at:
            return  # the line did not move: nothing to repaint
        self._budget_line_at = budget
        if budget is None:
            self.frontier_budget.setData([], [])
        else:
            self.frontier_budget.setData([budget, budget], [0.0, 1.0])

    def _start_frontier(self) -> None:
        st = self.state
        self.frontier_jobs += 1
        if self._frontier_task is not None:
            self._frontier_task.discard()  # a queued job never runs; a running one's result is ignored
        # core's budget search: its grids and its no-price policy (rank by trials) are the CLI's and the
        # sheet's.  The job is plain data (no Qt object), as gui.workers requires.
        job = functools.partial(budget_search, self.components, st.design(), target=st.effective_target,
                                budget=st.budget, reference=self.observed, scale=self.model.scale)
        self._frontier_task = BackgroundTask(job, parent=self, interval_ms=15)
        self._frontier_task.finished.connect(self._on_frontier_done)
        self._frontier_task.errored.connect(self._on_frontier_error)

    def _on_frontier_error(self, exc: BaseException) -> None:
        self._frontier_task = None
        self.message.setText(f"Cost frontier: {exc}")

    def _on_frontier_done(self, search: BudgetSearch) -> None:
        self._frontier_task = None
        self.search = search
        self.frontier = search.frontier
        self._draw_frontier()
        self.frontier_ready.emit()

    def _draw_frontier(self) -> None:
        fr, search = self.frontier, self.search
        by_cost = search.by_cost
        x = fr.cost  # USD with prices, else the trial count (core.dstudy.grids.costing)
        p = self.frontier_plot.getPlotItem()
        p.setLabel("bottom", "cost (USD)" if by_cost else "trials (no prices entered)")
        self.frontier_points.setData(x, fr.median)
        order = fr.pareto
        self.frontier_line.setData(x[order], fr.median[order])
        self.frontier_target.setValue(fr.target)
        if search.cheapest is not None:
            self.frontier_cheapest.setData([x[search.cheapest]], [fr.median[search.cheapest]])
            self.readout_labels["cheapest"].setText(fmt_design(search.design_at(search.cheapest), fr.estimand,
                                                                    self.facet_words))
        else:
            self.frontier_cheapest.setData([], [])
            self.readout_labels["cheapest"].setText(f"no design of the grid reaches {fmt_target(fr.target)}")
        lo, hi = float(np.min(x[x > 0])), float(np.max(x))
        p.setXRange(math.log10(lo), math.log10(hi), padding=0.03)
        if self._frontier_lines is not None:
            p.removeItem(self._frontier_lines)
        self._frontier_lines = plots.reference_lines(self.frontier_plot, np.arange(0.1, 1.01, 0.1), (lo, hi),
                                                     log_x=True)
        self._draw_frontier_marks()

    def wait_for_frontier(self, timeout_ms: int = 30_000) -> bool:
        """Block until the pending frontier job is done (tests, screenshots)."""
        deadline = time.perf_counter() + timeout_ms / 1e3
        from PySide6.QtWidgets import QApplication

        while (self.frontier is None or self._frontier_task is not None or self._frontier_timer.isActive()) \
                and time.perf_counter() < deadline:
            QApplication.processEvents()
            time.sleep(0.005)
        return self.frontier is not None

    # -- the budget's tasks per benchmark ---------------------------------------------------
    def _start_allocation(self) -> None:
        st = self.state
        if self._allocation_task is not None:
            self._allocation_task.discard()
        # the same call as `ddr dstudy --budget` and the sheet's cost page; plain data, no Qt object
        job = functools.partial(allocation_for_summary, self.components, st.design(), st.budget)
        self._allocation_task = BackgroundTask(job, parent=self, interval_ms=15)
        self._allocation_task.finished.connect(self._on_allocation_done)
        self._allocation_task.errored.connect(self._on_allocation_error)

    def _on_allocation_error(self, exc: BaseException) -> None:
        self._allocation_task = None
        self.allocation, self.allocation_why = None, str(exc)
        self._draw_allocation()

    def _on_allocation_done(self, result) -> None:
        self._allocation_task = None
        self.allocation, self.allocation_why = result
        self._draw_allocation()

    def _draw_allocation(self) -> None:
        """Draw core's allocation (a table and one line), or say why there is none."""
        a, t = self.allocation, self.allocation_table
        if a is None:
            why = self.allocation_why or ""
            self.allocation_label.setText("Enter a budget." if why == "no budget" else f"Not computed: {why}.")
            t.setRowCount(0)
            t.hide()
            return
        sym = estimand_symbol(a["estimand"])
        med = {k: v["median"] for k, v in a["summaries"].items()}
        text = f"{sym} {fmt_coef(med['optimal'])} for {fmt_usd(a['costs']['optimal'])}"
        if "equal" in med:
            text += f" (equal split {fmt_coef(med['equal'])} for {fmt_usd(a['costs']['equal'])})"
        self.allocation_label.setText(f"{text}, at {fmt_n(a['trials_per_task'])} trials per task (models \u00d7 "
                                      f"scaffolds \u00d7 trials per cell). {a['variance_source'].capitalize()}.")
        t.setRowCount(len(a["benchmarks"]))
        for r, b in enumerate(a["benchmarks"]):
            name = QTableWidgetItem(plots.elide(b, 40))
            name.setToolTip(b)
            t.setItem(r, 0, name)
            for k, txt in ((1, fmt_n(a["tasks"][b])), (2, fmt_n(a["equal"].get(b, 0))),
                           (3, fmt_var(a["task_variance"][b]))):
                item = QTableWidgetItem(txt)
                item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                t.setItem(r, k, item)
        rows_h = sum(t.rowHeight(r) for r in range(t.rowCount()))
        t.setFixedHeight(min(150, rows_h + t.horizontalHeader().height() + 2 * t.frameWidth() + 2))
        t.show()

    def wait_for_allocation(self, timeout_ms: int = 30_000) -> bool:
        """Block until the pending allocation job is done (tests, screenshots)."""
        from PySide6.QtWidgets import QApplication

        deadline = time.perf_counter() + timeout_ms / 1e3
        while (self._allocation_task is not None or self._allocation_timer.isActive()) \
                and time.perf_counter() < deadline:
            QApplication.processEvents()
            time.sleep(0.005)
        return self._allocation_task is None

    def _draw_dominance(self) -> None:
        if self.ranks is None:
            plots.placeholder(self.dominance_plot, "Ranks need latent model effects\n(fit the model to a corpus)")
            return
        r = self.ranks
        self.dominance_image = plots.heatmap(self.dominance_plot, r.ordered_dominance, r.ordered_models,
                                             r.ordered_models, colormap="CET-D1", levels=(0.0, 1.0),
                                             bar_label="P(row > column)", number_rows=True, number_cols=True)
        if r.parts is not None:  # core ranked each part alone; cross-part cells are NaN and draw blank
            self.dominance_plot.setTitle(f"Rank dominance within {len(r.parts)} parts of a disconnected design "
                                         "(blank: not identified)")
            self.dominance_plot.setToolTip("\n".join(r.part_reasons))


def _symbol(estimand: str) -> str:
    return estimand_symbol(estimand)


def _html(text: str) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _legend_html(preview: bool = False) -> str:
    def sw(color, text, kind="line"):
        c = color if isinstance(color, str) else "rgba({},{},{},{:.2f})".format(*color[:3], color[3] / 255)
        mark = {"line": "&#9472;&#9472;", "box": "&#9608;&#9608;", "dot": "&#9679;", "ring": "&#9675;",
                "dash": "- -", "star": "&#9733;"}[kind]
        return f'<span style="color:{c}">{mark}</span>&nbsp;{text}'

    items = ([sw(COLORS["median"], "preview (point estimates)", "dash")] if preview else
             [sw(COLORS["median"], "posterior median"), sw((0, 114, 178, 150), "68% HDI", "box"),
              sw((0, 114, 178, 70), "95% HDI", "box")]) + [
             sw(COLORS["asymptote"], "asymptote (facet \u2192 \u221e)", "dash"),
             sw((230, 159, 0, 140), "detection band SNR 2\u20133", "box"), sw(COLORS["target"], "target", "dash"),
             sw(COLORS["observed"], "observed design", "ring"), sw(COLORS["current"], "current design", "dot"),
             sw(COLORS["frontier"], "Pareto front"), sw(COLORS["target"], "cheapest design for target", "star")]
    return '<span style="font-size:9pt">' + " &nbsp; ".join(items) + "</span>"
