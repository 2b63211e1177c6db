"""The main window: open a corpus, show its design, and host the posterior's panels.

Tabs: *Corpus* (the ``ddr inspect`` summary, issues, coverage heatmap and
connectivity), *Model* (model setup, the fit's progress, ETA, cancel and log),
*Variance components*, *D-study*, *Ranks* and *Diagnostics*.  A fit runs
:func:`ddr_explorer.core.fitting.fit_corpus` on a worker thread
(:class:`~.workers.BackgroundTask`); a cached fit reopens at once.  Its result
fills the other tabs through :meth:`MainWindow.show_posterior` (also used for
typed-in components, Analysis > D-study from typed components...).  Each panel
receives its model in its constructor, so showing a new posterior replaces the
panels.  An unconverged fit is shown, marked as such, with its diagnostics.

The window owns one :class:`~ddr_explorer.core.session.AnalysisState`: the
model and D-study panels read and write it, File > Save analysis writes it as
JSON and File > Open analysis reads it back (and reopens its corpus).  Window
geometry and recent files live in ``QSettings``; on close the analysis is
saved to ``last-session.ddr.json`` beside the settings file and the next start
reopens it (:meth:`MainWindow.restore_last_session`).
"""

from __future__ import annotations

from pathlib import Path

import os
import time

from PySide6.QtCore import QByteArray, QSettings, Signal, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ..core.corpus.issues import CorpusError
from ..core.formatting import fmt_device
from .workers import BackgroundTask
from ..core.session import SIZE_FIELDS, AnalysisState, SessionError, set_aside
from .about_dialog import add_help_menu
from .cached_fit import fit_outputs, reopen_cached_fit
from .corpus_panel import CorpusPanel
from .plots import GuiThreadGarbageCollector

#: Tab titles, in order.
TABS = ("Corpus", "Model", "Variance components", "D-study", "Ranks", "Diagnostics", "Analyses", "Methods",
        "Failure modes", "Frontier", "Capability")
#: Recent corpora remembered in the settings.
MAX_RECENT = 8
#: Name of the analysis saved on close, beside the settings file.
LAST_SESSION = "last-session.ddr.json"


def app_settings() -> QSettings:
    """The app's settings (INI, per user): window geometry, recent files."""
    return QSettings(QSettings.IniFormat, QSettings.UserScope, "ddr-explorer", "ddr-explorer")


#: Fits run in a child process (core.fit_process) rather than on a worker thread of this one.
FIT_IN_CHILD_PROCESS = os.environ.get("DDR_FIT_IN_PROCESS", "1") != "0"


def _fit_job(corpus, spec, settings, cache_dir, use_cache):
    """Worker-thread part of a fit (pure core, no Qt): returns the FitResult and everything the views need
    (:func:`~.cached_fit.fit_outputs`), so the GUI thread only draws."""
    from ..core.fitting import fit_corpus

    def run(progress, cancel):
        t0 = time.perf_counter()
        if use_cache and FIT_IN_CHILD_PROCESS:
            # JAX compiles partly under the interpreter lock (150-210 ms at a stretch, measured): in a
            # child process the GUI thread never waits for it.  The result comes back through the cache.
            from ..core.fit_process import fit_corpus_in_process

            result = fit_corpus_in_process(corpus, spec, settings, cache_dir=cache_dir, progress=progress,
                                           cancel=cancel)
        else:
            result = fit_corpus(corpus, spec, settings, cache_dir=cache_dir, use_cache=use_cache,
                                progress=progress, cancel=cancel)
        return fit_outputs(result, t0)

    return run


def _load_and_inspect(path: Path, fmt: str | None, options: dict | None = None):
    """Worker-thread part of opening a corpus (pure core, no Qt); ``options`` go to ``load_corpus``."""
    from ..core.corpus.io import load_corpus
    from ..core.inspection import inspect_corpus

    corpus = load_corpus(path, fmt, **dict(options or {}))
    return corpus, inspect_corpus(corpus)


def _slice_note(corpus) -> str:
    """The header's word on an active slice of tasks: every number below is of the slice."""
    text = corpus.provenance.get("slice")
    if not text:
        return ""
    kept = corpus.provenance.get("slice_tasks")
    return (f" &mdash; <span style='color:#a05a00'><b>slice</b> {_html(text)}"
            + (f" ({kept[0]:,} of {kept[1]:,} tasks)" if kept else "") + "</span>")


def _placeholder(text: str) -> QLabel:
    lab = QLabel(text)
    lab.setAlignment(Qt.AlignCenter)
    lab.setWordWrap(True)
    lab.setStyleSheet("color: #555555;")
    return lab


class _Slot(QWidget):
    """A tab page whose single child (a panel or a placeholder) can be replaced."""

    def __init__(self, child: QWidget):
        super().__init__()
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.child = child
        self._layout.addWidget(child)

    def replace(self, child: QWidget) -> None:
        old = self.child
        self._layout.removeWidget(old)
        old.setParent(None)
        old.deleteLater()
        self.child = child
        self._layout.addWidget(child)


class MainWindow(QMainWindow):
    """Top-level window.  Holds the current corpus and analysis state; panels draw what core computed.

    Attributes
    ----------
    corpus, summary
        The loaded corpus and its ``inspect_corpus`` summary (None before the first load).
    state
        The :class:`~ddr_explorer.core.session.AnalysisState` of the analysis.
    tabs
        The ``QTabWidget`` of :data:`TABS`.
    corpus_panel, components_panel, dstudy_panel, ranks_panel
        The panels shown (the last three None until a posterior is shown).
    """

    corpus_loaded = Signal(object)
    load_failed = Signal(str)
    posterior_shown = Signal()
    fit_finished = Signal(object)
    fit_cancelled = Signal(str)
    fit_failed = Signal(str)
    sheet_written = Signal(object)
    sheet_failed = Signal(str)
    analyses_finished = Signal(object)
    analyses_failed = Signal(str)
    methods_finished = Signal(object)
    methods_failed = Signal(str)
    preview_shown = Signal(object)

    def __init__(self, settings: QSettings | None = None) -> None:
        super().__init__()
        # Garbage collection only on the GUI thread while the window lives (see GuiThreadGarbageCollector).
        GuiThreadGarbageCollector.acquire(self)
        self.setWindowTitle("DDR Explorer")
        self.setAcceptDrops(True)
        self.corpus = None
        self.summary: dict | None = None
        self.loading = False
        self.state = AnalysisState()
        self._pending_state: AnalysisState | None = None
        self._jobs: list[BackgroundTask] = []
        self.components_panel = self.dstudy_panel = self.ranks_panel = self.diagnostics_panel = None
        self.settings = settings if settings is not None else app_settings()
        #: Fit cache folder (None: core's default, ``$DDR_CACHE_DIR`` or ``~/.cache/ddr-explorer``).
        self.cache_dir = None
        self.fit_task: BackgroundTask | None = None
        self.fit_result = None
        self.fit_outputs: dict | None = None
        self.sheet_task: BackgroundTask | None = None
        self.sheet_plan_task: BackgroundTask | None = None
        self.analyses_task: BackgroundTask | None = None
        #: Seconds the GUI thread spent drawing the views of the last fit.
        self.show_seconds: float | None = None
        self.analyses: dict | None = None
        self.analyses_for_sheet: dict = {}  # ANALYSIS_KEYS -> the objects the DDR sheet draws
        self.analyses_panel = None
        self.capability_panel = None  # the IRT scale and transfer (gui.capability_panel)
        self.methods_task: BackgroundTask | None = None
        self.methods_panel = None
        self.failure_frontier_task: BackgroundTask | None = None  # failure modes / frontier over time
        self.failure_frontier_panels: dict = {}

        self.header = QLabel("No corpus loaded")
        self.header.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.header.setWordWrap(True)
        self.error_view = QLabel("")
        self.error_view.setWordWrap(True)
        self.error_view.setStyleSheet("color: #a40000;")
        self.error_view.hide()

        self.fit_banner = QLabel("")
        self.fit_banner.setWordWrap(True)
        self.fit_banner.setStyleSheet("color: #a40000; font-weight: bold;")
        self.fit_banner.hide()

        from .model_panel import ModelPanel

        self.corpus_panel = CorpusPanel()
        self.model_panel = ModelPanel(self.state)
        self.model_panel.fit_requested.connect(self.start_fit)
        self.model_panel.cancel_requested.connect(self.cancel_fit)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self._slots = {
            "Corpus": _Slot(self.corpus_panel),
            "Variance components": _Slot(_placeholder(
                "No posterior yet. Fit the model to the corpus, or type components from a paper "
                "(Analysis > D-study from typed components...).")),
            "D-study": _Slot(_placeholder(
                "The D-study needs variance components: fit the model, or use "
                "Analysis > D-study from typed components...")),
            "Ranks": _Slot(_placeholder("Ranks need the latent model effects of a posterior fit.")),
            "Model": _Slot(self.model_panel),
            "Diagnostics": _Slot(_placeholder("Convergence diagnostics appear here once a fit has run.")),
            "Analyses": _Slot(QWidget()),  # a start page (gui/analysis_start_pages.py)
            "Methods": _Slot(QWidget()),  # a start page (gui/analysis_start_pages.py)
            "Failure modes": _Slot(QWidget()),  # a start page (gui/analysis_start_pages.py)
            "Frontier": _Slot(QWidget()),  # a start page (gui/analysis_start_pages.py)
            "Capability": _Slot(QWidget()),  # a start page (gui/analysis_start_pages.py)
        }
        for name in TABS:
            self.tabs.addTab(self._slots[name], name)
        from .preview_controller import PreviewController

        #: The D-study preview from point estimates while no posterior is shown (gui/preview_controller.py).
        self.previewer = PreviewController(self, TABS.index("D-study"), _placeholder)

        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addWidget(self.header)
        layout.addWidget(self.error_view)
        layout.addWidget(self.fit_banner)
        layout.addWidget(self.tabs, 1)
        self.setCentralWidget(body)

        menu = self.menuBar().addMenu("&File")
        act = QAction("&Open corpus...", self, shortcut=QKeySequence.Open, triggered=self._on_open)
        menu.addAction(act)
        self.recent_menu = menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        menu.addAction(QAction("Open &demo corpus", self, triggered=self._on_open_demo))
        menu.addSeparator()
        menu.addAction(QAction("Open &analysis...", self, triggered=self._on_open_analysis))
        menu.addAction(QAction("&Save analysis as...", self, shortcut=QKeySequence.Save,
                               triggered=self._on_save_analysis))
        menu.addSeparator()
        self.export_sheet_action = QAction("Export DDR &sheet (PDF)...", self, triggered=self._on_export_sheet)
        menu.addAction(self.export_sheet_action)
        menu.addAction(QAction("Export every plot and &table...", self, triggered=self._on_export_all))
        menu.addSeparator()
        menu.addAction(QAction("&Quit", self, shortcut=QKeySequence.Quit, triggered=self.close))
        analysis = self.menuBar().addMenu("&Analysis")
        self.fit_action = QAction("&Fit the model", self, shortcut="Ctrl+R", triggered=self.start_fit)
        analysis.addAction(self.fit_action)
        self.cancel_action = QAction("&Cancel the fit", self, triggered=self.cancel_fit, enabled=False)
        analysis.addAction(self.cancel_action)
        self.analyses_action = QAction("Run &difficulty, held-out and LOO analyses", self,
                                       triggered=lambda: self.start_analyses())
        analysis.addAction(self.analyses_action)
        self.methods_action = QAction("Compare &estimators (REML, Laplace, DISCO, Henderson, Bayes)", self,
                                      triggered=lambda: self.start_methods())
        analysis.addAction(self.methods_action)
        self.score_table_action = QAction("Compare estimators on a &G-study table (any long table and formula)...",
                                          self, triggered=self._on_score_table_methods)
        analysis.addAction(self.score_table_action)
        self.failure_action = QAction("Failure &modes (error categories)", self,
                                      triggered=lambda: self.start_failure_or_frontier("failure-modes"))
        analysis.addAction(self.failure_action)
        self.frontier_action = QAction("Frontier over &time", self, triggered=lambda: self.start_failure_or_frontier("frontier"))
        analysis.addAction(self.frontier_action)
        analysis.addAction(QAction("Frontier over time, leaving out models without a release date", self,
                                   triggered=lambda: self.start_failure_or_frontier("frontier", undated="drop")))
        self.slice_action = QAction("&Slice of tasks...", self, triggered=self._on_slice)
        analysis.addAction(self.slice_action)
        self.capability_action = QAction("Capability scale (IRT) and &transfer across benchmarks", self,
                                         triggered=lambda: self.start_capability())
        analysis.addAction(self.capability_action)
        analysis.addSeparator()
        self.id_mapping_action = QAction("Subject &ids and their model and scaffold...", self,
                                         triggered=self._on_id_mapping)
        analysis.addAction(self.id_mapping_action)
        self.typed_components_action = QAction("D-study from &typed components...", self,
                                               triggered=self._on_typed_components)
        analysis.addAction(self.typed_components_action)
        self.about_action = add_help_menu(self)
        from .analysis_start_pages import StartPages

        self.start_pages = StartPages(self, {"analyses": lambda: self.start_analyses(plan=self.start_pages.plan),
                                             "methods": lambda: self.start_methods(),
                                             "failure-modes": lambda: self.start_failure_or_frontier("failure-modes"),
                                             "frontier": lambda: self.start_failure_or_frontier("frontier"),
                                             "capability": lambda: self.start_capability()},
                                      {"failure-modes": self.failure_action, "frontier": self.frontier_action})
        self.start_pages.reset()
        from .status_line import install_status_line

        # the message and the device label side by side, each elided rather than one hiding the other
        self.status_message, self.device_label = install_status_line(self.statusBar(), "device: detecting\u2026")
        self.statusBar().showMessage("Ready")
        geometry = self.settings.value("window/geometry")
        if not (isinstance(geometry, QByteArray) and not geometry.isEmpty() and self.restoreGeometry(geometry)):
            from .window_size import apply_default_size

            apply_default_size(self)  # first start: most of the screen (the size is saved on close)
        self._detect_device()

    # -- compatibility: the corpus widgets live in the corpus panel --------------------------
    @property
    def summary_view(self):
        """The ``ddr inspect`` text of the corpus panel."""
        return self.corpus_panel.summary_view

    @property
    def issues_table(self):
        return self.corpus_panel.issues_table

    # -- loading ---------------------------------------------------------------------------
    def open_corpus(self, path: Path, fmt: str | None = None, options: dict | None = None) -> None:
        """Start loading ``path`` in the background; the current corpus stays until it succeeds."""
        self.loading = True
        self.statusBar().showMessage(f"Loading {path} ...")
        path = Path(path)

        def failed(exc: BaseException) -> None:
            if isinstance(exc, CorpusError):
                # a table with other column names: the dialog asks which is which; no failure is said meanwhile
                if self._offer_column_mapping(path, fmt, exc) is None:
                    self._on_failed(str(exc))
                else:
                    self._on_choosing_columns(path, str(exc))
            else:  # any failure must reach the user, not kill the app
                self._on_failed(f"{path}: {type(exc).__name__}: {exc}")

        self._jobs.append(BackgroundTask(lambda: _load_and_inspect(path, fmt, options),
                                         on_done=lambda r: self._on_loaded(*r), on_error=failed, parent=self))

    def _on_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open corpus", "", "Corpora (*.csv *.tsv *.jsonl *.json *.parquet *.eval);;All files (*)")
        if path:
            self.open_corpus(Path(path))

    def _on_loaded(self, corpus, summary: dict) -> None:
        self.loading = False
        self.corpus, self.summary = corpus, summary
        self.error_view.hide()
        self.header.setText(f"<b>{_html(corpus.name)}</b> &mdash; {_html(corpus.source)} ({_html(corpus.format)}), "
                            f"{corpus.n_records:,} records, {corpus.n_trials:,} trials" + _slice_note(corpus))
        self.corpus_panel = CorpusPanel(corpus, summary)
        self._slots["Corpus"].replace(self.corpus_panel)
        pending, self._pending_state = self._pending_state, None
        if pending is not None and pending.corpus_path and Path(pending.corpus_path) == Path(str(corpus.source)):
            self.state = pending  # a saved analysis keeps its own design, prices and target
        else:
            # A new corpus: its observed design and prices; the user's choices of model and decision carry over.
            keep = {k: getattr(self.state, k) for k in ("sampler", "object_of_measurement", "claim", "target",
                                                         "budget")}
            keep["priors"] = self.state.priors
            if self.state.model not in ("per-benchmark", "pooled"):
                keep["model"] = self.state.model  # a formula or the ddr preset is the user's choice
            self.state = AnalysisState.from_corpus(corpus, **keep)
        self.model_panel.set_state(self.state)
        self.fit_result = self.fit_outputs = self.analyses = None  # a fit belongs to its corpus
        self.analyses_for_sheet = {}
        self._clear_corpus_results()
        self.fit_banner.hide()
        self.add_recent_file(str(corpus.source))
        self.statusBar().showMessage(f"Loaded {corpus.source}")
        self.previewer.follow(self.state)
        self.previewer.start()
        self.corpus_loaded.emit(corpus)
        self.reopen_cached_fit()

    def reopen_cached_fit(self) -> bool:
        """Show the open corpus's cached fit at once (:func:`~.cached_fit.reopen_cached_fit`)."""
        return reopen_cached_fit(self)

    # -- column mapping and subject ids (gui/import_dialog.py) ---------------------------------------
    def _offer_column_mapping(self, path: Path, fmt: str | None, exc: CorpusError):
        """A table refused for missing columns: open the column dialog; OK reopens it with the mapping."""
        from .import_dialog import ColumnMappingDialog

        if not any(i.code == "missing-column" for i in exc.issues) or Path(path).suffix.lower() not in (
                ".csv", ".tsv", ".tab", ".jsonl", ".ndjson", ".json", ".parquet", ".pq"):
            return None
        try:
            dialog = ColumnMappingDialog(path, self)
        except Exception:  # noqa: BLE001 - no preview possible: the error view already says why
            return None
        dialog.accepted.connect(lambda: self.open_corpus(Path(path), fmt, {"columns": dialog.mapping_text()}))
        self.column_dialog = dialog
        dialog.open()
        return dialog

    def _on_id_mapping(self):
        """The subject-id table of a py-irt corpus; a saved alias file reopens the corpus with it."""
        from .import_dialog import IdMappingDialog

        if self.corpus is None or not (self.corpus.provenance or {}).get("subjects"):
            self.statusBar().showMessage("The corpus has no subject ids to map (only py-irt files have them).")
            return None
        dialog = IdMappingDialog(self.corpus, self)
        source, fmt = Path(str(self.corpus.source)), self.corpus.format

        def reopen() -> None:
            if dialog.saved_path is not None:
                self.open_corpus(source, fmt, {**self.state.corpus_options, "aliases": str(dialog.saved_path)})

        dialog.finished.connect(lambda _code: reopen())
        self.id_dialog = dialog
        dialog.open()
        return dialog

    def _on_choosing_columns(self, path: Path, message: str) -> None:
        """The column dialog is open: the status bar says what to do, not that the file failed."""
        self.loading = False
        self._pending_state = None
        self.statusBar().showMessage(f"Choose which column of {Path(path).name} is which; "
                                     "the previous corpus stays loaded until then.")
        self.column_dialog.rejected.connect(lambda: self.statusBar().showMessage(
            f"{Path(path).name} was not opened: its columns were not chosen."))
        self.load_failed.emit(message)

    def _on_failed(self, message: str) -> None:
        # The corpus the user had stays loaded: a bad file never costs them their work.
        self.loading = False
        self._pending_state = None
        self.error_view.setText("Could not open the file:\n" + message)
        self.error_view.show()
        self.statusBar().showMessage("The file could not be opened; the previous corpus is still loaded.")
        self.load_failed.emit(message)

    # -- the posterior's panels --------------------------------------------------------------
    def show_posterior(self, components, theta=None, model_names=None, observed_design=None,
                       ranked: str | None = None) -> None:
        """Fill the Variance components, D-study and Ranks tabs from a posterior.

        Parameters
        ----------
        components
            :class:`~ddr_explorer.core.reliability.VarianceComponents` (or a
            mapping term -> sigma^2 draws): per-term ``sigma^2`` draws of the fit.
        theta
            ``(S, n_models)`` latent model effects (``u_m``, or ``u_m + u_bm`` for
            one benchmark of a pooled fit; SPEC sec. 5), or None (no Ranks tab).
        model_names
            Names of the columns of ``theta``.
        observed_design
            The design the corpus ran (:class:`~ddr_explorer.core.dstudy.DStudyDesign`),
            marked on the D-study curves.  Default: the state's observed design
            (from the loaded corpus), else its current design.  When given, the
            state's design, models, prices, object and claim are set from it.
        ranked
            What the columns of ``theta`` are (``"model"``, ``"system"``, ``"agent"``); default: the
            state's object.
        """
        from ..core.dstudy import DStudyModel
        from ..core.ranks import rank_analysis
        from ..core.reliability import as_components
        from .components_panel import ComponentsPanel
        from .dstudy_panel import DStudyPanel
        from .ranks_panel import RanksPanel

        c = as_components(components)
        if not c.preview:  # a posterior (or typed-in components) replaces the preview for good
            self.previewer.posterior_shown()
        parts = None  # a disconnected corpus is ranked within its parts (SPEC sec. 6; core.rank_parts)
        if theta is not None and model_names is not None and self.summary:
            from ..core.rank_parts import model_parts
            parts = model_parts(self.summary.get("components"), list(model_names), require_known=True)
        ranks = rank_analysis(theta, model_names, parts) if theta is not None else None
        if observed_design is not None:
            self._adopt_design(observed_design)
        else:
            observed_design = self.state.observed_design() or self.state.design()
        self.components_panel = ComponentsPanel(c, self.state.object_of_measurement)
        self._slots["Variance components"].replace(self.components_panel)
        self.dstudy_panel = DStudyPanel(DStudyModel(c), observed_design, self.state, ranks)
        self._slots["D-study"].replace(self.dstudy_panel)
        if ranks is not None:
            from ..core.formatting import object_noun
            self.ranks_panel = RanksPanel(ranks, noun=object_noun(ranked or self.state.object_of_measurement))
            self._slots["Ranks"].replace(self.ranks_panel)
        else:
            self.ranks_panel = None
            self._slots["Ranks"].replace(_placeholder("Ranks need the latent model effects of a posterior fit; "
                                                      "typed-in components have none."))
        self.tabs.setCurrentIndex(TABS.index("D-study"))
        self.statusBar().showMessage(f"Showing {c.n_draws:,} draw(s) of variance components from {c.source}")
        self.posterior_shown.emit()

    def _adopt_design(self, design) -> None:
        """Make ``design`` the state's observed and current design (sizes, models, prices, object, claim)."""
        from collections.abc import Mapping

        fresh = AnalysisState.from_design(design)
        p = design.price_per_trial
        prices = fresh.prices if isinstance(p, Mapping) or float(p) > 0 else self.state.prices
        self.state.update(**{k: getattr(fresh, k) for k in SIZE_FIELDS}, observed=fresh.observed,
                          n_models=fresh.n_models, prices=prices, object_of_measurement=fresh.object_of_measurement,
                          claim=fresh.claim, extra_facets=fresh.extra_facets)

    def _on_typed_components(self) -> None:
        from .components_entry import ComponentsEntryDialog

        dialog = ComponentsEntryDialog(self)
        if dialog.exec() == ComponentsEntryDialog.Accepted:
            self.show_posterior(dialog.components(), observed_design=dialog.design())

    # -- a preview of the D-study from point estimates (gui/preview_controller.py) -------------
    @property
    def preview(self):
        """The last :class:`~ddr_explorer.core.preview.Preview` computed for the corpus (None before)."""
        return self.previewer.preview

    @property
    def preview_task(self) -> BackgroundTask | None:
        """The running preview job, or None."""
        return self.previewer.task

    def start_preview(self, stages=None) -> bool:
        """Start the D-study preview of the corpus and model (see :class:`~.preview_controller.PreviewController`)."""
        return self.previewer.start(stages)

    # -- analysis files ----------------------------------------------------------------------
    def save_analysis(self, path: Path) -> Path:
        """Write the analysis state as JSON (atomically)."""
        return self.state.save(path)

    def open_analysis(self, path: Path) -> AnalysisState:
        """Read an analysis state; reopen its corpus when it names one that exists.

        Raises
        ------
        SessionError
            The file is not a valid analysis (the message names the field).
        """
        state = AnalysisState.load(path)
        if state.corpus_path and Path(state.corpus_path).exists():
            self._pending_state = state
            self.open_corpus(Path(state.corpus_path), state.corpus_format, state.corpus_options)
        else:
            self.state = state
            self.model_panel.set_state(state)
        return state

    def _on_save_analysis(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save analysis", "analysis.ddr.json", "DDR analysis (*.json)")
        if path:
            try:
                self.save_analysis(Path(path))
                self.statusBar().showMessage(f"Saved {path}")
            except OSError as exc:
                QMessageBox.warning(self, "Could not save", f"{path}: {exc.strerror}")

    def _on_open_analysis(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open analysis", "", "DDR analysis (*.json);;All files (*)")
        if path:
            try:
                self.open_analysis(Path(path))
            except SessionError as exc:
                QMessageBox.warning(self, "Could not open the analysis", str(exc))

    # -- the fit ---------------------------------------------------------------------------
    @property
    def fitting(self) -> bool:
        """True while a fit runs on the worker."""
        return self.fit_task is not None and self.fit_task.running

    def _busy(self) -> bool:
        """A fit or the analyses run now (one long job at a time)."""
        return self.fitting or any(t is not None and t.running for t in (self.analyses_task, self.methods_task,
                                                                           self.failure_frontier_task))

    def _job_inputs(self, failure: str):
        """``(spec, settings)`` of the state for a fit or the analyses, or None when none can start.

        Says why in the Model tab: no corpus, or a model or sampler setting the corpus cannot take
        (``failure`` leads that message).  Returns None silently while a job runs.
        """
        from ..core.model.formula import ModelSpecError

        if self._busy():
            return None
        if self.corpus is None:
            self.model_panel.message.setText("Open a corpus first (File > Open corpus...).")
            return None
        try:
            spec = self.state.model_spec()
            spec.validate(self.corpus.table.columns)
            return spec, self.state.sampler_settings()
        except (ModelSpecError, SessionError, ValueError) as exc:
            self.model_panel.message.setText(f"{failure}: {exc}")
            return None

    def start_fit(self) -> bool:
        """Fit the model of the state to the loaded corpus on a worker thread (or reopen its cached fit).

        Progress, ETA and log go to the Model tab; the result fills the other tabs
        (:meth:`show_fit`).  Returns False (and says why) when no fit can start.
        """
        mp = self.model_panel
        ready = self._job_inputs("Cannot fit")
        if ready is None:
            if self.corpus is not None and not self._busy():
                self.tabs.setCurrentIndex(TABS.index("Model"))
            return False
        spec, settings = ready
        mp.message.setText("")
        mp.set_running(True)
        mp.start_whole_eta(settings, self.settings)  # one ETA for compile, warmup and sampling
        self.fit_action.setEnabled(False)
        self.cancel_action.setEnabled(True)
        mp.append_log(f"Fitting {spec.formula}")
        mp.append_log(f"  corpus {self.corpus.name}: {self.corpus.n_records:,} records, "
                      f"{self.corpus.n_trials:,} trials")
        draws = (f"{settings.draws} draws" if settings.stop == "fixed" else
                 f"at least {settings.draws}, at most {settings.max_draws} draws: until converged")
        mp.append_log(f"  {settings.chains} chains x ({settings.warmup} warmup + {draws}), "
                      f"seed {settings.seed}, device {settings.device}")
        mp.append_log("  looking for a cached fit first")
        self.statusBar().showMessage("Fitting ...")
        self.fit_task = BackgroundTask(_fit_job(self.corpus, spec, settings, self.cache_dir, True),
                                       on_done=self._on_fit_done, on_error=self._on_fit_error,
                                       on_progress=mp.show_progress, with_callbacks=True, parent=self)
        self.previewer.fit_started()  # the Laplace stage of a preview gives the sampler the CPU
        self.tabs.setCurrentIndex(TABS.index("Model"))
        return True

    def cancel_fit(self) -> None:
        """Ask the running fit (or analyses) to stop at its next check (between sampler chunks)."""
        running = [t for t in (self.fit_task, self.analyses_task, self.methods_task, self.failure_frontier_task)
                   if t is not None and t.running]
        for task in running:
            task.cancel()
        if running:
            self.model_panel.append_log("Cancel requested; the sampler stops at its next chunk")
            self.model_panel.cancel_button.setEnabled(False)
            self.statusBar().showMessage("Cancelling the fit ...")

    def _fit_ended(self) -> None:
        self.fit_action.setEnabled(True)
        self.cancel_action.setEnabled(False)
        self.previewer.note()

    def _on_fit_done(self, out: dict) -> None:
        self._fit_ended()
        result = out["result"]
        post = result.posterior
        mp = self.model_panel
        if result.cache_problem:
            mp.append_log(f"Cache: {result.cache_problem}")
        if result.from_cache:
            mp.append_log(f"Reopened the cached fit {result.cache_path} in {out['seconds']:.2f} s "
                          f"(sampled on {fmt_device(post.device)} in {post.wall_seconds:.1f} s)")
            mp.finish("reopened from the cache")
        else:
            mp.append_log(f"Sampled on {fmt_device(post.device)} in {post.wall_seconds:.1f} s; "
                          + ", ".join(f"{'CPU of warmup and sampling' if k == 'cpu_run' else k} {v:.1f} s"
                                      for k, v in post.timings.items()))
            if result.cache_path:
                mp.append_log(f"Stored in the cache: {result.cache_path}")
            mp.finish("done")
        for note in post.notes:
            mp.append_log(f"note: {note}")
        mp.show_term_check(getattr(result, "terms", None))  # preset terms the design cannot separate
        mp.append_log(str(post.diagnostics).splitlines()[0])
        if self.analyses_for_sheet:
            # the analyses were run for the previous fit's model and settings: the sheet must not mix them
            self.analyses_for_sheet = {}
            mp.append_log("The earlier analyses belong to the previous fit and are left out of the DDR sheet; "
                          "run them again for this fit (Analysis menu)")
        t0 = time.perf_counter()
        self.show_fit(out)
        self.start_pages.refresh_estimates()  # the analyses' estimates scale with this fit
        self.show_seconds = time.perf_counter() - t0
        mp.append_log(f"Views drawn in {self.show_seconds * 1e3:.0f} ms")
        self.fit_finished.emit(result)

    def _on_fit_error(self, exc: BaseException) -> None:
        from ..core.model.posterior import FitCancelled

        self._fit_ended()
        self.previewer.fit_failed()  # no posterior came: a preview stage stopped for the fit runs after all
        mp = self.model_panel
        if isinstance(exc, FitCancelled):
            mp.append_log(f"Cancelled: {exc}")
            mp.finish("cancelled")
            self.statusBar().showMessage("Fit cancelled; the views show what they showed before.")
            self.fit_cancelled.emit(str(exc))
            return
        text = f"{type(exc).__name__}: {exc}"
        mp.append_log(f"FAILED: {text}")
        mp.finish("failed")
        mp.message.setText(f"The fit failed: {text}")
        self.statusBar().showMessage("The fit failed; see the log in the Model tab.")
        self.fit_failed.emit(text)

    def show_fit(self, out: dict) -> None:
        """Fill every view from a fit's outputs (see :func:`_fit_job`); mark an unconverged fit as such."""
        self.fit_outputs = out
        self.fit_result = result = out["result"]
        post = result.posterior
        try:  # the object and design follow the fitted model (agents for the ddr preset; core.session)
            self.state.follow_fit(out["components"], self.corpus)
        except SessionError as exc:
            self.statusBar().showMessage(f"The fit's design is unknown: {exc}")
        obj = self.state.object_of_measurement
        ranked = obj if out["ranks"].get(obj) is not None else "model"
        ranks = out["ranks"].get(ranked)
        theta, names = ranks if ranks is not None else (None, None)
        self.show_posterior(out["components"], theta, names, ranked=ranked)
        diag = post.diagnostics
        self._show_diagnostics()
        if diag.converged:
            self.fit_banner.hide()
        else:
            self.fit_banner.setText("This fit did NOT converge (" + "; ".join(diag.problems[:3])
                                    + ("; ..." if len(diag.problems) > 3 else "")
                                    + "). Every number shown comes from it: see the Diagnostics tab, then fit "
                                    "with more warmup and draws.")
            self.fit_banner.show()
            self.tabs.setCurrentIndex(TABS.index("Diagnostics"))
            self.statusBar().showMessage("The fit did not converge: see Diagnostics")

    # -- the refit-heavy analyses ----------------------------------------------------------
    def start_capability(self, options: dict | None = None) -> bool:
        """The capability scale and the transfer study (:mod:`~ddr_explorer.core.analyses.capability`,
        :mod:`~ddr_explorer.core.analyses.transfer`) on the worker; families from the shipped family map."""
        if options is None:
            from ..core.analyses.transfer import read_family_map
            from ..core.corpus.importers._common import resources_dir

            options = {"transfer": {"families": read_family_map(resources_dir() / "aliases" / "families.toml")}}
        return self.start_analyses(which=("capability", "transfer"), options=options)

    def start_analyses(self, which=("difficulty", "heldout", "loo"), n_splits: int = 10, n_strata: int = 4,
                       options: dict | None = None, plan=None) -> bool:
        """Run :func:`~ddr_explorer.core.analyses.run_analyses` on the worker (every fit through the cache).

        Progress, ETA, cancel and log are the Model tab's; the result fills the Analyses tab and the
        Pareto k line of the Diagnostics tab.  ``plan``: core's estimate of exactly this job, when made
        (the ETA starts from it and the log compares it with the time taken).
        """
        mp = self.model_panel
        ready = self._job_inputs("Cannot run the analyses")
        if ready is None:
            return False
        spec, settings = ready
        corpus, cache, which = self.corpus, self.cache_dir, list(which)
        started = time.perf_counter()  # the time taken goes to the log, beside the estimate the sheet logged
        post = None if self.fit_result is None else self.fit_result.posterior
        self.analyses_timings = took = {}  # each analysis's wall seconds (the sheet export prints them by its estimate)

        planned = {"plan": plan if plan is not None and set(plan.which) == set(which) else None}

        def job(progress, cancel):
            from ..core.analyses import run_analysis_studies, sheet_analyses, studies_to_dict

            if planned["plan"] is None:  # the Analysis menu: price the job here, off the GUI thread (fit cache)
                from .fit_eta import PLAN_PHASE, plan_refit_analyses

                made = plan_refit_analyses(corpus, post, which, n_splits=n_splits, n_strata=n_strata, cache_dir=cache)
                if made is not None:
                    progress(PLAN_PHASE, 0, 0, made)  # the GUI thread starts the planned ETA from it
            studies = run_analysis_studies(corpus, which, spec, settings, cache_dir=cache, n_splits=n_splits,
                                           n_strata=n_strata, posterior=post, progress=progress, cancel=cancel,
                                           options=options, timings=took)
            # the panel draws the plain numbers; the DDR sheet export gets the study objects
            return studies_to_dict(studies), sheet_analyses(studies)

        def done(out) -> None:
            from .analyses_panel import AnalysesPanel

            results, for_sheet = out

            self.fit_action.setEnabled(True)
            self.cancel_action.setEnabled(False)
            mp.append_log(f"Analyses done in {time.perf_counter() - started:.1f} s: " + ", ".join(results))
            if planned.get("made") is not None:  # the estimate made for this run beside what it took (the sheet's
                mp.append_log(f"Analyses: {planned['made'].estimate_and_actual(took)}")  # export logs its own)
            mp.finish("done")
            if set(results) <= {"capability", "transfer"}:  # the Capability tab; the other analyses stay
                from .capability_panel import CapabilityPanel

                self.analyses_for_sheet = {**self.analyses_for_sheet, **for_sheet}
                self.capability_panel = CapabilityPanel(results)
                self._slots["Capability"].replace(self.capability_panel)
                self.tabs.setCurrentIndex(TABS.index("Capability"))
                self.analyses_finished.emit(results)
                return
            self.analyses_for_sheet = {**self.analyses_for_sheet, **for_sheet}  # the estimators' stay
            self.analyses = results
            self.analyses_panel = AnalysesPanel(results)
            self._slots["Analyses"].replace(self.analyses_panel)
            if self.fit_result is not None and "loo" in results:
                self._show_diagnostics()  # its Pareto k line
            self.tabs.setCurrentIndex(TABS.index("Analyses"))
            self.analyses_finished.emit(results)

        def failed(exc: BaseException) -> None:
            self.fit_action.setEnabled(True)
            self.cancel_action.setEnabled(False)
            text = f"{type(exc).__name__}: {exc}"
            cancelled = "cancel" in type(exc).__name__.lower() or "cancelled by the user" in str(exc)
            mp.append_log(("Cancelled: " if cancelled else "Analyses FAILED: ") + text)
            mp.finish("cancelled" if cancelled else "failed")
            self.analyses_failed.emit(text)

        mp.set_running(True)
        if planned["plan"] is not None and plan.total_seconds > 0:
            mp.start_planned_eta(plan.total_seconds)

        def on_progress(phase, i, total, eta=None) -> None:
            from .fit_eta import PLAN_PHASE

            if phase == PLAN_PHASE:  # the worker's plan of this job: its ETA starts from it
                planned["made"] = eta
                mp.append_log(f"Estimate: {eta.describe()}")
                mp.start_planned_eta(eta.total_seconds)
            else:
                mp.show_progress(phase, i, total, eta)

        self.fit_action.setEnabled(False)
        self.cancel_action.setEnabled(True)
        sizes = ([f"{n_splits} held-out splits"] if "heldout" in which else []) + \
            ([f"{n_strata} difficulty strata"] if "difficulty" in which else [])
        mp.append_log(f"Analyses {', '.join(which)} of {spec.formula}" + (f" ({', '.join(sizes)})" if sizes else "")
                      + "; every fit goes through the cache")
        self.analyses_task = BackgroundTask(job, on_done=done, on_error=failed, on_progress=on_progress,
                                            with_callbacks=True, parent=self)
        self.tabs.setCurrentIndex(TABS.index("Model"))
        return True

    # -- failure modes, frontier over time, slices (failure_modes_panel, frontier_panel, slice_dialog) -
    def start_failure_or_frontier(self, name: str, n_splits: int = 50, undated: str = "stop") -> bool:
        """Run ``failure-modes`` or ``frontier`` (:func:`~ddr_explorer.core.analyses.run_analysis_studies`) on the
        worker with the Model tab's progress and cancel; the result fills its own tab and goes to the DDR sheet."""
        mp = self.model_panel
        ready = self._job_inputs("Cannot run the analysis")
        if ready is None:
            return False
        spec, settings = ready
        corpus, cache = self.corpus, self.cache_dir
        tab = "Failure modes" if name == "failure-modes" else "Frontier"

        def job(progress, cancel):
            from ..core.analyses import run_analysis_studies, sheet_analyses, studies_to_dict

            studies = run_analysis_studies(corpus, [name], spec, settings, cache_dir=cache, n_splits=n_splits,
                                           progress=progress, cancel=cancel, undated=undated)
            return studies_to_dict(studies)[name], sheet_analyses(studies)

        def done(out) -> None:
            from .failure_modes_panel import FailureModesPanel
            from .frontier_panel import FrontierPanel

            result, for_sheet = out
            self.analyses_for_sheet.update(for_sheet)
            self.fit_action.setEnabled(True)
            self.cancel_action.setEnabled(False)
            mp.append_log(f"{tab} done")
            mp.finish("done")
            panel = (FailureModesPanel if name == "failure-modes" else FrontierPanel)(result)
            self.failure_frontier_panels[name] = panel
            self._slots[tab].replace(panel)
            self.tabs.setCurrentIndex(TABS.index(tab))
            self.analyses_finished.emit({name: result})

        def failed(exc: BaseException) -> None:
            self.fit_action.setEnabled(True)
            self.cancel_action.setEnabled(False)
            text = f"{type(exc).__name__}: {exc}"
            cancelled = "cancel" in type(exc).__name__.lower() or "cancelled by the user" in str(exc)
            mp.append_log(("Cancelled: " if cancelled else f"{tab} FAILED: ") + text)
            mp.finish("cancelled" if cancelled else "failed")
            self.analyses_failed.emit(text)

        mp.set_running(True)
        self.fit_action.setEnabled(False)
        self.cancel_action.setEnabled(True)
        mp.append_log(f"{tab} of {corpus.name}" + ("; every fit goes through the cache" if name == "failure-modes"
                                                  else ""))
        self.failure_frontier_task = BackgroundTask(job, on_done=done, on_error=failed, on_progress=mp.show_progress,
                                           with_callbacks=True, parent=self)
        self.tabs.setCurrentIndex(TABS.index("Model"))
        return True

    def apply_slice(self, text: str) -> None:
        """Reopen the corpus restricted to a slice of tasks (``""``: the whole corpus again)."""
        if self.corpus is None or self.corpus.source is None:
            return
        options = dict(self.corpus.provenance.get("load_options") or {})
        options.pop("slice", None)
        if text:
            options["slice"] = text
        fmt = None if self.corpus.format in ("csv", "tsv", "jsonl", "parquet", "canonical") else self.corpus.format
        self.open_corpus(Path(str(self.corpus.source)), fmt, options)

    def _on_slice(self) -> None:
        if self.corpus is None:
            return
        from .slice_dialog import SliceDialog

        current = self.corpus.provenance.get("slice") or ""
        dlg = SliceDialog(self.corpus.table, current, self)
        if dlg.exec():
            self.apply_slice(dlg.slice_text())

    def _clear_corpus_results(self) -> None:
        """Empty the tabs of analyses (Analyses, Methods, Failure modes, Frontier, Capability): their results
        belong to the corpus that was open.

        A comparison or analysis still running for that corpus is discarded (its result never shows)."""
        stopped = [t for t in (self.analyses_task, self.methods_task, self.failure_frontier_task) if t is not None and t.running]
        for task in stopped:
            task.discard()
        if stopped and not self.fitting:  # their end handlers never run: give the controls back here
            self.fit_action.setEnabled(True)
            self.cancel_action.setEnabled(False)
            self.model_panel.append_log("Stopped: a new corpus was opened")
            self.model_panel.finish("cancelled")
        self.analyses_panel = self.methods_panel = None
        self.failure_frontier_panels = {}
        self.capability_panel = None
        self.start_pages.reset()  # each tab: its run button and estimate, or why the corpus cannot support it

    # -- the method comparison ------------------------------------------------------------
    def _on_score_table_methods(self) -> None:
        """Ask for a G-study table and its formula, then compare the estimators on it (gui.score_table_methods)."""
        from .score_table_methods import ScoreTableDialog, start_score_table_methods

        dialog = ScoreTableDialog(self)
        if dialog.exec():
            path, formula, obj, bayes = dialog.values()
            start_score_table_methods(self, path, formula, obj, bayes=bayes)

    def start_methods(self, lmm_settings=None) -> bool:
        """Compare the estimators on the open corpus and the state's model (seed 000 (Hardy et al. 2026) Tables 20-21).

        Runs :func:`~ddr_explorer.core.estimators.methods.methods_table` on the worker with the Model
        tab's progress and cancel; the Bayes column is the current fit's when it is of the same
        formula.  The result fills the Methods tab.  Returns False (and says why) when none can start.
        ``lmm_settings``: the Bayesian LMM's sampler settings (default: core's).
        """
        mp = self.model_panel
        ready = self._job_inputs("Cannot compare the estimators")
        if ready is None:
            return False
        spec = ready[0]
        from ..core.reliability import objects_for_terms
        corpus, obj = self.corpus, self.state.object_of_measurement
        if obj not in objects_for_terms(spec.term_names):  # e.g. the ddr preset before its fit: its own object
            obj = None
        # core compares the fit's terms with the formula every estimator fits (the preset reduced to what the
        # design separates, on the worker) and leaves the Bayes GLMM column out, with a note, when they differ
        post = None if self.fit_result is None else self.fit_result.posterior

        def job(progress, cancel):
            from ..core.estimators.methods import methods_table

            return methods_table(corpus, spec, posterior=post, object_of_measurement=obj, progress=progress,
                                 cancel=cancel, lmm_settings=lmm_settings)

        def ended(text: str) -> None:
            self.fit_action.setEnabled(True)
            self.cancel_action.setEnabled(False)
            mp.finish(text)

        def done(table) -> None:
            from .methods_panel import MethodsPanel

            whole.measured_seconds(table.seconds)  # each estimator's pace, stored for the next estimate
            ended("done")
            mp.append_log("Estimators compared: " + ", ".join(table.estimators))
            self.methods_panel = MethodsPanel(table)
            self._slots["Methods"].replace(self.methods_panel)
            # what the app computed is what the sheet prints: the table, and the LMM's score reliability
            self.analyses_for_sheet["methods"] = table
            if table.score_reliability is not None:
                self.analyses_for_sheet["score_reliability"] = table.score_reliability
            self.tabs.setCurrentIndex(TABS.index("Methods"))
            self.methods_finished.emit(table)

        def failed(exc: BaseException) -> None:
            from ..core.estimators.design import EstimationCancelled

            text = f"{type(exc).__name__}: {exc}"
            cancelled = isinstance(exc, EstimationCancelled)
            ended("cancelled" if cancelled else "failed")
            mp.append_log(("Cancelled: " if cancelled else "Estimator comparison FAILED: ") + text)
            self.methods_failed.emit(text)

        mp.set_running(True)
        self.fit_action.setEnabled(False)
        self.cancel_action.setEnabled(True)
        mp.append_log(f"Comparing the estimators on {spec.formula}"
                      + (" with the current fit's posterior" if post is not None else " (no fit: no Bayes column)"))
        # one ETA for the whole comparison; the Bayes GLMM column is read from the cached fit (no time to price)
        whole = mp.start_comparison_eta(("Henderson", "REML", "Bayes LMM", "Laplace", "DISCO"), len(corpus.table),
                                        self.settings)
        mp.append_log(f"Estimate: the whole comparison {whole.total_seconds:.0f} s on {whole.n_cells} cells, from "
                      "the estimators' paces measured here" if whole.total_seconds is not None else
                      "Estimate: none yet (the first comparison measured here prices the next)")
        self.methods_task = BackgroundTask(job, on_done=done, on_error=failed, on_progress=mp.show_progress,
                                           with_callbacks=True, parent=self)
        self.tabs.setCurrentIndex(TABS.index("Model"))
        return True

    def _show_diagnostics(self) -> None:
        """The Diagnostics tab of the current fit (with the PSIS-LOO Pareto k summary once the analyses ran)."""
        from ..core.report.priors import priors_text
        from .diagnostics_panel import DiagnosticsPanel

        result = self.fit_result
        post = result.posterior
        diag = post.diagnostics
        info = {"device": fmt_device(post.device), "wall time": f"{post.wall_seconds:.1f} s",
                "settings": ", ".join(f"{k}={getattr(post.settings, k)}" for k in
                                      ("chains", "warmup", "draws", "seed", "target_accept")),
                "model": post.spec.formula,
                "priors": priors_text(post.spec.priors.to_dict()),  # the fit's own, not the Model tab's
                "cache": f"{result.cache_path}" + (" (reopened)" if result.from_cache else "")}
        loo = (self.analyses or {}).get("loo")
        self.diagnostics_panel = DiagnosticsPanel(diag, info, getattr(post, "pareto_k", None),
                                                  loo if isinstance(loo, dict) and "n_cells" in loo else None)
        self._slots["Diagnostics"].replace(self.diagnostics_panel)

    def _detect_device(self) -> None:
        from .model_panel import detect_device

        def done(text: str) -> None:
            self.device = text
            self.device_label.setText(f"device: {text}")
            self.model_panel.set_device(text)

        def failed(exc: BaseException) -> None:
            done(f"unknown ({type(exc).__name__}: {exc})")

        self.device = None
        self._jobs.append(BackgroundTask(detect_device, on_done=done, on_error=failed, parent=self))

    # -- the DDR sheet ---------------------------------------------------------------------
    def export_ddr_sheet(self, path: Path, date_invariant: bool = False, analyses: str = "auto", plan=None) -> bool:
        """Write the DDR sheet of the current fit and state (design, prices, target, budget) in the background.

        Without the Analyses tab's results, ``analyses="auto"`` first runs the sheet's analyses (difficulty,
        50 hold-out splits, PSIS-LOO) when the refit engine's estimate is under 15 minutes, else those of them
        that fit in it together (:func:`~ddr_explorer.core.analyses.defaults.plan_sheet_analyses`,
        :meth:`~ddr_explorer.core.analyses.defaults.AnalysesPlan.within_budget`), then writes the sheet; ``"run"``
        runs them whatever the estimate, ``"skip"`` writes the sheet without them ("not run").  ``plan``: that
        estimate when already made (the menu makes it in the background: it looks up the refits in the cache).
        Emits :attr:`sheet_written` with the path, or :attr:`sheet_failed` with the reason; a sheet written
        without a section it could not lay out is written, and the window shows the lines ``ddr report``
        prints for it (:class:`~ddr_explorer.core.report.sections.SheetWritten`).
        Returns False when there is no fit to report.
        """
        if self.fit_result is None or self.corpus is None:
            self.statusBar().showMessage("The DDR sheet reports a fit: fit the model first (Analysis > Fit).")
            return False
        if analyses != "skip" and not self._sheet_refits_done() and self._analyses_before_sheet(
                path, date_invariant, force=analyses == "run", plan=plan):
            return True
        corpus, post, st, summary = self.corpus, self.fit_result.posterior, self.state, self.summary
        # The sheet states the corpus's own design as observed (core computes it, as for `ddr report`); the
        # sliders' sizes, when moved, are a what-if printed under their own label beside it.
        from ..core.dstudy import same_sizes

        examined, observed = st.design(), st.observed_design()
        if observed is not None and same_sizes(examined, observed):
            examined = None
        kw = dict(object_of_measurement=st.object_of_measurement, claim=st.claim, examined_design=examined,
                  target=st.target, budget=st.budget, prices=dict(st.prices) or None,
                  analyses=dict(self.analyses_for_sheet) or None)  # the Analyses tab's results, when run
        path = Path(path)

        def job():
            from ..core.report.inputs import report_inputs_from
            from ..core.report.sheet import write_sheet

            inputs = report_inputs_from(corpus, posterior=post, corpus_summary=summary, **kw)
            return write_sheet(inputs, path, date_invariant=date_invariant)  # `ddr report`'s writer

        def done(written) -> None:
            if written.complete:
                self.statusBar().showMessage(f"Wrote {written.path}")
                if self.error_view.text().startswith("The DDR sheet is incomplete"):  # an earlier sheet's
                    self.error_view.hide()
            else:  # the sheet is written without a section: the same lines as `ddr report` prints on stderr
                self.statusBar().showMessage(f"Wrote {written.path} without {len(written.left_out)} of its sections")
                self.error_view.setText("The DDR sheet is incomplete:\n" + written.message())
                self.error_view.show()
            self.sheet_written.emit(Path(written.path))

        def failed(exc: BaseException) -> None:
            text = f"{path}: {type(exc).__name__}: {exc}"
            self.statusBar().showMessage("The DDR sheet could not be written")
            self.error_view.setText("Could not write the DDR sheet:\n" + text)  # not modal: the app stays usable
            self.error_view.show()
            self.sheet_failed.emit(text)

        self.statusBar().showMessage(f"Writing the DDR sheet {path} ...")
        self.sheet_task = BackgroundTask(job, on_done=done, on_error=failed, parent=self)
        return True

    def _sheet_refits_done(self) -> bool:
        """True when the Analyses tab ran the sheet's refit analyses for this fit (difficulty, hold-out or
        PSIS-LOO): the export then prints them instead of estimating them again.  The estimator comparison
        and the other tabs' results do not count: the sheet's own analyses still run."""
        return bool({"difficulty", "held_out", "loo"} & set(self.analyses_for_sheet))

    def sheet_analyses_plan(self):
        """The sheet's default analyses of the current fit and their estimate (core's plan), or None."""
        if self.fit_result is None or self.corpus is None:
            return None
        from ..core.analyses.defaults import plan_sheet_analyses

        return plan_sheet_analyses(self.corpus, self.fit_result.posterior, cache_dir=self.cache_dir)

    def _analyses_before_sheet(self, path, date_invariant: bool, force: bool, plan=None) -> bool:
        """Start the sheet's analyses (under the budget, or ``force``) and write the sheet when they end;
        False when they do not start (the sheet is then written without them)."""
        plan = plan or self.sheet_analyses_plan()
        if plan is None:
            return False
        # over the budget, the ones that fit in it together still run (core's plan chooses, as for `ddr report`)
        which = plan.which if force else plan.within_budget()
        if not which:
            return False
        rest = () if force else plan.beyond_budget()

        def finished(_results) -> None:
            disconnect()
            # the estimate beside what the run took (the app's export once estimated 4 min and took 7.5)
            self.model_panel.append_log(f"DDR sheet: {plan.part(which).estimate_and_actual(self.analyses_timings)}")
            self.export_ddr_sheet(path, date_invariant, analyses="skip")

        def failed(_text) -> None:  # cancelled or failed: no sheet; the Model tab's log says why
            disconnect()
            self.statusBar().showMessage("The DDR sheet was not written: its analyses did not finish")

        def disconnect() -> None:
            self.analyses_finished.disconnect(finished)
            self.analyses_failed.disconnect(failed)

        self.analyses_finished.connect(finished)
        self.analyses_failed.connect(failed)
        if not self.start_analyses(which=which, n_splits=plan.n_splits, plan=plan.part(which)):
            disconnect()
            return False
        self.model_panel.append_log(
            f"DDR sheet: {plan.part(which).describe()}; the sheet is written when they end"
            + (f" (over the 15-minute default with them, not run: {', '.join(rest)})" if rest else ""))
        return True

    def panels(self) -> dict:
        """The panels shown now, by tab name (tabs with a placeholder are left out)."""
        out = {"Corpus": self.corpus_panel, "Variance components": self.components_panel,
               "D-study": self.dstudy_panel, "Ranks": self.ranks_panel, "Diagnostics": self.diagnostics_panel,
               "Analyses": self.analyses_panel, "Methods": self.methods_panel,
               "Failure modes": self.failure_frontier_panels.get("failure-modes"),
               "Frontier": self.failure_frontier_panels.get("frontier"),
               "Capability": self.capability_panel}
        return {k: v for k, v in out.items() if v is not None and hasattr(v, "plots")}

    def export_all(self, folder: Path) -> list[Path]:
        """Write every plot (PNG and SVG) and every table (CSV) of every panel into ``folder``.

        Files are named ``<tab>-<plot or table>.<ext>`` in lower case with dashes.
        """
        from . import plots

        def slug(text: str) -> str:
            return "-".join("".join(ch if ch.isalnum() else " " for ch in text.lower()).split())

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for tab, panel in self.panels().items():
            for name, plot in panel.plots().items():
                for ext in ("png", "svg"):
                    written.append(plots.export_plot(plot, folder / f"{slug(tab)}-{slug(name)}.{ext}"))
            for name, table in panel.tables().items():
                written.append(plots.export_table(table, folder / f"{slug(tab)}-{slug(name)}.csv"))
        return written

    def _on_export_all(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export every plot and table into")
        if folder:
            try:
                files = self.export_all(Path(folder))
                self.statusBar().showMessage(f"Wrote {len(files)} files into {folder}")
            except (OSError, ValueError) as exc:
                QMessageBox.warning(self, "Export failed", str(exc))

    def _on_export_sheet(self) -> None:
        if self.fit_result is None:
            self.export_ddr_sheet(Path("ddr-sheet.pdf"))  # says why not
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export DDR sheet", "ddr-sheet.pdf", "PDF (*.pdf)")
        if not path:
            return
        path = Path(path).with_suffix(".pdf")
        if self._sheet_refits_done():  # the Analyses tab's results go on the sheet: nothing to estimate
            self.export_ddr_sheet(path)
            return
        corpus, post, cache_dir = self.corpus, self.fit_result.posterior, self.cache_dir

        def job():  # off the GUI thread: the plan looks up each refit of the sheet in the fit cache
            from ..core.analyses.defaults import plan_sheet_analyses

            return plan_sheet_analyses(corpus, post, cache_dir=cache_dir)

        def done(plan) -> None:
            if plan.runs_by_default:
                self.export_ddr_sheet(path, analyses="auto", plan=plan)
                return
            # over the budget: buttons that say what they run and for how long (gui/sheet_export_dialog.py)
            from .sheet_export_dialog import sheet_analyses_question

            box, meaning = sheet_analyses_question(self, plan)

            def answered(button) -> None:
                mode = meaning.get(button)
                if mode is None:
                    self.statusBar().showMessage("The DDR sheet was not written")
                    return
                self.export_ddr_sheet(path, analyses=mode, plan=plan)

            box.buttonClicked.connect(answered)
            self.sheet_question = box
            box.open()

        def failed(exc: BaseException) -> None:  # no estimate: the sheet is written without the analyses
            self.model_panel.append_log(f"DDR sheet: its analyses could not be estimated ({exc}); written without them")
            self.export_ddr_sheet(path, analyses="skip")

        self.statusBar().showMessage("Estimating the DDR sheet's analyses (refits in the cache, time to run) ...")
        self.sheet_plan_task = BackgroundTask(job, on_done=done, on_error=failed, parent=self)

    # -- recent files, settings, last session ---------------------------------------------
    def recent_files(self) -> list[str]:
        value = self.settings.value("recent/files", [])
        if isinstance(value, str):  # QSettings returns a one-element list as a string
            value = [value]
        return [str(v) for v in (value or [])]

    def add_recent_file(self, path: str) -> None:
        files = [path, *[f for f in self.recent_files() if f != path]][:MAX_RECENT]
        self.settings.setValue("recent/files", files)

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        if not files:
            self.recent_menu.addAction(QAction("(none yet)", self.recent_menu, enabled=False))
        for f in files:
            act = QAction(f, self.recent_menu)
            act.triggered.connect(lambda _=False, f=f: self.open_corpus(Path(f)))
            self.recent_menu.addAction(act)

    def _on_open_demo(self) -> None:
        from ..core.files import demo_corpus_path

        self.open_corpus(demo_corpus_path())

    def last_session_path(self) -> Path:
        """Where the analysis is saved on close (beside the settings file)."""
        return Path(self.settings.fileName()).parent / LAST_SESSION

    def save_session(self) -> Path | None:
        """Save window geometry and the analysis of the last session (atomic JSON)."""
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.sync()
        if self.state.corpus_path is None:
            return None
        path = self.last_session_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            return self.state.save(path)
        except OSError:  # a read-only home must not stop the app from closing
            return None

    def restore_last_session(self) -> bool:
        """Reopen the analysis saved on the last close; False when there is none (or it is unusable).

        Whatever the file holds, the app starts: an unusable file is renamed beside itself
        (:func:`~ddr_explorer.core.session.set_aside`, never deleted) and the status bar says why, so the
        next start does not meet it again.
        """
        path = self.last_session_path()
        try:
            if not path.exists():
                return False
            state = AnalysisState.load(path)
            if not (state.corpus_path and Path(state.corpus_path).exists()):
                return False
            self.open_analysis(path)
        except Exception as exc:  # noqa: BLE001 - no file may stop the app from starting
            aside = set_aside(path)
            where = f"; it was moved to {aside}" if aside else ""
            self.statusBar().showMessage(f"The last session could not be restored: {exc}{where}")
            self._pending_state = None
            return False
        return True

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        for job in self._jobs + [self.fit_task, self.sheet_task, self.sheet_plan_task, self.analyses_task,
                                 self.methods_task]:
            if job is not None:
                job.cancel()  # a running fit stops at its next chunk; nothing waits for it here
        self.previewer.stop()  # a Laplace preview stops at its next criterion evaluation
        self.save_session()
        super().closeEvent(event)

    # -- drag and drop ------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt override
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt override
        urls = event.mimeData().urls()
        if urls:
            self.open_corpus(Path(urls[0].toLocalFile()))


def _html(text) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


__all__ = ["MainWindow", "TABS"]
