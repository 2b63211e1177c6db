"""The main window: its layout, its state and its wiring; the flows it drives live beside it.

Tabs (:data:`~.tab_slots.TABS`): *Corpus* (the ``ddr inspect`` summary, issues, coverage heatmap and
connectivity), *Model* (model setup, the fit's progress, ETA, cancel and log), *Variance components*,
*D-study*, *Ranks*, *Diagnostics*, and the analysis tabs (*Analyses*, *Methods*, *Failure modes*,
*Frontier*, *Capability*).  A fit's result, or typed-in components (Analysis > D-study from typed
components...), fills the tabs through :meth:`MainWindow.show_posterior`.  Each panel receives its model
in its constructor, so showing a new posterior replaces the panels.

The flows the window drives are mixins in their own modules, each named after what it holds (each
module's docstring says why a mixin): opening a corpus, its column mapping, subject ids and slices
(:mod:`.corpus_opening`); the fit and its diagnostics (:mod:`.fit_flow`); the analysis jobs after a fit
(:mod:`.analysis_jobs`); File > Export DDR sheet (:mod:`.ddr_sheet_export`).  The menus are built by
:func:`.window_menus.add_menus`.  The window declares every Qt signal (Qt signals belong to the
``QMainWindow`` subclass) and the attributes the flows share.

The window owns one :class:`~ddr_explorer.core.session.AnalysisState`: the
model and D-study panels read and write it, File > Save analysis writes it as
JSON and File > Open analysis reads it back (and reopens its corpus).  Window
geometry and recent files live in ``QSettings``; on close the analysis is
saved to ``last-session.ddr.json`` beside the settings file and the next start
reopens it (:meth:`MainWindow.restore_last_session`).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, Signal, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ..core.session import SIZE_FIELDS, AnalysisState, SessionError, set_aside
from .analysis_jobs import AnalysisJobs
from .corpus_opening import CorpusOpening
from .corpus_panel import CorpusPanel
from .ddr_sheet_export import DdrSheetExport
from .fit_flow import FitFlow
from .plots import GuiThreadGarbageCollector
from .tab_slots import TABS, Slot, placeholder
from .window_menus import add_menus
from .workers import BackgroundTask

#: Recent corpora remembered in the settings.
MAX_RECENT = 8
#: Name of the analysis saved on close, beside the settings file.
LAST_SESSION = "last-session.ddr.json"


def app_settings() -> QSettings:
    """The app's settings (INI, per user): window geometry, recent files."""
    return QSettings(QSettings.IniFormat, QSettings.UserScope, "ddr-explorer", "ddr-explorer")


class MainWindow(CorpusOpening, FitFlow, AnalysisJobs, DdrSheetExport, QMainWindow):
    """Top-level window.  Holds the current corpus and analysis state; panels draw what core computed.

    The flows it drives come from its mixins (:class:`~.corpus_opening.CorpusOpening`,
    :class:`~.fit_flow.FitFlow`, :class:`~.analysis_jobs.AnalysisJobs`,
    :class:`~.ddr_sheet_export.DdrSheetExport`); their methods are the window's own.

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
            "Corpus": Slot(self.corpus_panel),
            "Variance components": Slot(placeholder(
                "No posterior yet. Fit the model to the corpus, or type components from a paper "
                "(Analysis > D-study from typed components...).")),
            "D-study": Slot(placeholder(
                "The D-study needs variance components: fit the model, or use "
                "Analysis > D-study from typed components...")),
            "Ranks": Slot(placeholder("Ranks need the latent model effects of a posterior fit.")),
            "Compare": Slot(placeholder("Two models compared, and the tasks that would settle it: fit the model "
                                        "first (ddr compare does the same on the command line).")),
            "Model": Slot(self.model_panel),
            "Diagnostics": Slot(placeholder("Convergence diagnostics appear here once a fit has run.")),
            "Analyses": Slot(QWidget()),  # a start page (gui/analysis_start_pages.py)
            "Methods": Slot(QWidget()),  # a start page (gui/analysis_start_pages.py)
            "Failure modes": Slot(QWidget()),  # a start page (gui/analysis_start_pages.py)
            "Frontier": Slot(QWidget()),  # a start page (gui/analysis_start_pages.py)
            "Capability": Slot(QWidget()),  # a start page (gui/analysis_start_pages.py)
        }
        for name in TABS:
            self.tabs.addTab(self._slots[name], name)
        self.tabs.currentChanged.connect(lambda _i: self.clear_open_error())  # the user has moved on
        from .preview_controller import PreviewController

        #: The D-study preview from point estimates while no posterior is shown (gui/preview_controller.py).
        self.previewer = PreviewController(self, TABS.index("D-study"), placeholder)

        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addWidget(self.header)
        layout.addWidget(self.error_view)
        layout.addWidget(self.fit_banner)
        layout.addWidget(self.tabs, 1)
        self.setCentralWidget(body)

        add_menus(self)  # File, Analysis, Help (gui/window_menus.py)

        from .analysis_start_pages import StartPages

        self.start_pages = StartPages(self, {"analyses": lambda: self.start_analyses(plan=self.start_pages.plan),
                                             "methods": lambda: self.start_methods(),
                                             "failure-modes": lambda: self.start_failure_or_frontier("failure-modes"),
                                             "frontier": lambda: self.start_failure_or_frontier("frontier"),
                                             "capability": lambda: self.start_capability()},
                                      {"failure-modes": self.failure_action, "frontier": self.frontier_action,
                                       "capability": self.capability_action})
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

    # -- the posterior's panels --------------------------------------------------------------
    def show_posterior(self, components, theta=None, model_names=None, observed_design=None,
                       ranked: str | None = None, score_moments=None) -> None:
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
        score_moments
            The observed-score moments computed on the fit's worker (:func:`.cached_fit.fit_outputs`), so
            the D-study tab opens without computing them on the GUI thread.
        """
        from ..core.dstudy import DStudyModel
        from ..core.dstudy.curves import score_scale
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
        # success rates where the fit allows it (a buyer reads scores); the latent figures are beside them
        self.dstudy_panel = DStudyPanel(DStudyModel(c, scale=score_scale(c), moments=score_moments), observed_design,
                                        self.state, ranks)
        from .dstudy_absent_sizes import absent_sizes_note

        absent_sizes_note(self.dstudy_panel, self.summary)  # why there is no Benchmarks (Scaffolds) slider
        self._slots["D-study"].replace(self.dstudy_panel)
        if ranks is not None:
            from ..core.formatting import object_noun
            self.ranks_panel = RanksPanel(ranks, noun=object_noun(ranked or self.state.object_of_measurement))
            self._slots["Ranks"].replace(self.ranks_panel)
        else:
            self.ranks_panel = None
            self._slots["Ranks"].replace(placeholder("Ranks need the latent model effects of a posterior fit; "
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

    # -- the device, the panels shown, every plot and table exported -----------------------
    def _detect_device(self) -> None:
        from .model_panel import detect_device

        def done(texts: tuple[str, str]) -> None:
            text, short = texts
            self.device = text
            # the short words fit beside the message at any window size; the whole text is the tooltip
            self.device_label.set_device(f"device: {short}", f"device: {text}")
            self.model_panel.set_device(text)

        def failed(exc: BaseException) -> None:
            done((f"unknown ({type(exc).__name__}: {exc})", "unknown"))

        self.device = None
        self._jobs.append(BackgroundTask(lambda: (detect_device(), detect_device(short=True)), on_done=done,
                                         on_error=failed, parent=self))

    def panels(self) -> dict:
        """The panels shown now, by tab name (tabs with a placeholder are left out)."""
        out = {"Corpus": self.corpus_panel, "Variance components": self.components_panel,
               "D-study": self.dstudy_panel, "Ranks": self.ranks_panel,
               "Compare": getattr(self, "compare_panel", None), "Diagnostics": self.diagnostics_panel,
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


__all__ = ["MainWindow", "TABS"]
