"""The main window: open a corpus, show its design, and host the posterior's panels.

Tabs: *Corpus* (the ``ddr inspect`` summary, issues, coverage heatmap and
connectivity), *Variance components*, *D-study* and *Ranks*.  The last three
are filled by :meth:`MainWindow.show_posterior` (the fit calls it with the
posterior's variance components and latent model effects) or from typed-in
components (Analysis > D-study from typed components...).  Each panel receives
its model in its constructor, so showing a new posterior replaces the panels.

The window owns one :class:`~ddr_explorer.core.session.AnalysisState`: the
D-study panel reads and writes it, File > Save analysis writes it as JSON and
File > Open analysis reads it back (and reopens its corpus).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal, Qt
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
from .workers import BackgroundTask
from ..core.session import SIZE_FIELDS, AnalysisState, SessionError
from .corpus_panel import CorpusPanel
from .plots import GuiThreadGarbageCollector

#: Tab titles, in order.
TABS = ("Corpus", "Variance components", "D-study", "Ranks")


def _load_and_inspect(path: Path, fmt: str | None):
    """Worker-thread part of opening a corpus (pure core, no Qt)."""
    from ..core.corpus.io import load_corpus
    from ..core.inspection import inspect_corpus

    corpus = load_corpus(path, fmt)
    return corpus, inspect_corpus(corpus)


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

    def __init__(self) -> None:
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
        self.components_panel = self.dstudy_panel = self.ranks_panel = None

        self.header = QLabel("No corpus loaded")
        self.header.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.header.setWordWrap(True)
        self.error_view = QLabel("")
        self.error_view.setWordWrap(True)
        self.error_view.setStyleSheet("color: #a40000;")
        self.error_view.hide()

        self.corpus_panel = CorpusPanel()
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
        }
        for name in TABS:
            self.tabs.addTab(self._slots[name], name)

        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addWidget(self.header)
        layout.addWidget(self.error_view)
        layout.addWidget(self.tabs, 1)
        self.setCentralWidget(body)

        menu = self.menuBar().addMenu("&File")
        act = QAction("&Open corpus...", self, shortcut=QKeySequence.Open, triggered=self._on_open)
        menu.addAction(act)
        menu.addAction(QAction("Open &analysis...", self, triggered=self._on_open_analysis))
        menu.addAction(QAction("&Save analysis as...", self, shortcut=QKeySequence.Save,
                               triggered=self._on_save_analysis))
        menu.addSeparator()
        menu.addAction(QAction("&Quit", self, shortcut=QKeySequence.Quit, triggered=self.close))
        analysis = self.menuBar().addMenu("&Analysis")
        self.typed_components_action = QAction("D-study from &typed components...", self,
                                               triggered=self._on_typed_components)
        analysis.addAction(self.typed_components_action)
        self.statusBar().showMessage("Ready")

    # -- compatibility: the corpus widgets live in the corpus panel --------------------------
    @property
    def summary_view(self):
        """The ``ddr inspect`` text of the corpus panel."""
        return self.corpus_panel.summary_view

    @property
    def issues_table(self):
        return self.corpus_panel.issues_table

    # -- loading ---------------------------------------------------------------------------
    def open_corpus(self, path: Path, fmt: str | None = None) -> None:
        """Start loading ``path`` in the background; the current corpus stays until it succeeds."""
        self.loading = True
        self.statusBar().showMessage(f"Loading {path} ...")
        path = Path(path)

        def failed(exc: BaseException) -> None:
            if isinstance(exc, CorpusError):
                self._on_failed(str(exc))
            else:  # any failure must reach the user, not kill the app
                self._on_failed(f"{path}: {type(exc).__name__}: {exc}")

        self._jobs.append(BackgroundTask(lambda: _load_and_inspect(path, fmt),
                                         on_done=lambda r: self._on_loaded(*r), on_error=failed, parent=self))

    def _on_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open corpus", "", "Corpora (*.csv *.tsv *.jsonl *.json *.parquet);;All files (*)")
        if path:
            self.open_corpus(Path(path))

    def _on_loaded(self, corpus, summary: dict) -> None:
        self.loading = False
        self.corpus, self.summary = corpus, summary
        self.error_view.hide()
        self.header.setText(f"<b>{_html(corpus.name)}</b> &mdash; {_html(corpus.source)} ({_html(corpus.format)}), "
                            f"{corpus.n_records:,} records, {corpus.n_trials:,} trials")
        self.corpus_panel = CorpusPanel(corpus, summary)
        self._slots["Corpus"].replace(self.corpus_panel)
        pending, self._pending_state = self._pending_state, None
        if pending is not None and pending.corpus_path and Path(pending.corpus_path) == Path(str(corpus.source)):
            self.state = pending  # a saved analysis keeps its own design, prices and target
        else:
            # A new corpus: its observed design and prices; the user's choices of model and decision carry over.
            keep = {k: getattr(self.state, k) for k in ("sampler", "object_of_measurement", "claim", "target",
                                                         "budget")}
            self.state = AnalysisState.from_corpus(corpus, **keep)
        self.statusBar().showMessage(f"Loaded {corpus.source}")
        self.corpus_loaded.emit(corpus)

    def _on_failed(self, message: str) -> None:
        # The corpus the user had stays loaded: a bad file never costs them their work.
        self.loading = False
        self._pending_state = None
        self.error_view.setText("Could not open the file:\n" + message)
        self.error_view.show()
        self.statusBar().showMessage("The file could not be opened; the previous corpus is still loaded.")
        self.load_failed.emit(message)

    # -- the posterior's panels --------------------------------------------------------------
    def show_posterior(self, components, theta=None, model_names=None, observed_design=None) -> None:
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
            The design the corpus ran (:class:`~ddr_explorer.core.dstudy.Design`),
            marked on the D-study curves.  Default: the state's observed design
            (from the loaded corpus), else its current design.  When given, the
            state's design, models, prices, object and claim are set from it.
        """
        from ..core.dstudy import DStudyModel
        from ..core.ranks import rank_analysis
        from ..core.reliability import as_components
        from .components_panel import ComponentsPanel
        from .dstudy_panel import DStudyPanel
        from .ranks_panel import RanksPanel

        c = as_components(components)
        ranks = rank_analysis(theta, model_names) if theta is not None else None
        if observed_design is not None:
            self._adopt_design(observed_design)
        else:
            observed_design = self.state.observed_design() or self.state.design()
        self.components_panel = ComponentsPanel(c, self.state.object_of_measurement)
        self._slots["Variance components"].replace(self.components_panel)
        self.dstudy_panel = DStudyPanel(DStudyModel(c), observed_design, self.state, ranks)
        self._slots["D-study"].replace(self.dstudy_panel)
        if ranks is not None:
            self.ranks_panel = RanksPanel(ranks)
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

        from .dstudy_panel import state_for

        fresh = state_for(design)
        p = design.price_per_trial
        prices = fresh.prices if isinstance(p, Mapping) or float(p) > 0 else self.state.prices
        self.state.update(**{k: getattr(fresh, k) for k in SIZE_FIELDS}, observed=fresh.observed,
                          n_models=fresh.n_models, prices=prices, object_of_measurement=fresh.object_of_measurement,
                          claim=fresh.claim)

    def _on_typed_components(self) -> None:
        from .components_entry import ComponentsEntryDialog

        dialog = ComponentsEntryDialog(self)
        if dialog.exec() == ComponentsEntryDialog.Accepted:
            self.show_posterior(dialog.components(), observed_design=dialog.design())

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
            self.open_corpus(Path(state.corpus_path), state.corpus_format)
        else:
            self.state = state
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
