"""The D-study preview of the main window: point estimates while the posterior runs.

As soon as a corpus is open (and again when its model changes), point estimates of the variance
components are computed on a worker (:func:`ddr_explorer.core.preview.next_preview`: the rough fit at
once, then the Laplace GLMM where the design is small enough) and the D-study tab draws them as a
preview (:class:`~.dstudy_panel.DStudyPanel` with ``preview`` components: dashed medians, no bands, a
banner).  The posterior replaces the preview when a fit ends; a late preview never replaces a posterior,
because showing a posterior discards the preview's job first.

Rules kept here:

* the jobs run through :class:`~.workers.BackgroundTask` with plain data (the corpus, the spec, the
  stages' names) and are discarded on a new corpus or model, a posterior, or closing the window;
* a burst of model edits (a formula typed) starts one preview (300 ms debounce);
* the panel is built only when the D-study tab is on screen: building it takes the GUI thread about a
  second on a busy machine, which must not stall the Model tab while a fit runs;
* a fit stops (or keeps from starting) the Laplace stage, so the sampler has the CPU; the stage runs
  after all if the fit is cancelled or fails.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QTimer

from .workers import BackgroundTask


class PreviewController(QObject):
    """The preview's jobs and drawing for one main window.

    Parameters
    ----------
    window
        The :class:`~.main_window.MainWindow` (its corpus, state, fit, tabs, D-study slot and status bar).
    tab_index
        Index of the D-study tab.
    placeholder
        Makes the label shown in the D-study tab while a ready preview waits for the tab to open.

    Attributes
    ----------
    task
        The running preview job, or None.
    preview
        The last :class:`~ddr_explorer.core.preview.Preview` computed (None before the first).
    pending
        A preview waits for the D-study tab to be opened.
    resume
        Stages stopped for a fit, run if the fit does not end with a posterior.
    """

    def __init__(self, window, tab_index: int, placeholder: Callable[[str], object]):
        super().__init__(window)
        self.w = window
        self.tab_index = tab_index
        self.placeholder = placeholder
        self.task: BackgroundTask | None = None
        self.preview = None
        self.pending = False
        self.resume: list[str] | None = None
        self._running_stages: list[str] | None = None
        self._state = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(300)
        self._timer.timeout.connect(self.start)
        window.tabs.currentChanged.connect(self._on_tab_changed)

    # -- what starts and stops a preview ------------------------------------------------------------
    def follow(self, state) -> None:
        """Restart the preview when the model (preset or formula) of ``state`` changes."""
        if self._state is not None:
            self._state.events.disconnect(self._on_state_changed)
        self._state = state
        state.events.connect(self._on_state_changed)

    def _on_state_changed(self, names: frozenset[str]) -> None:
        if "model" in names:
            self.stop()  # the old model's preview goes now
            self._timer.start()

    def start(self, stages: list[str] | None = None) -> bool:
        """Start the preview of the window's corpus and model (``stages``: the ones left of a running preview).

        Nothing starts when a posterior of this very model is shown.  Returns True when a job started.
        """
        from ..core.preview import next_preview
        from ..core.session import SessionError

        w = self.w
        self._timer.stop()
        self.stop(keep_pending=stages is not None)  # a next stage keeps the last one until it is done
        if w.corpus is None:
            return False
        try:
            spec = w.state.model_spec()
        except (SessionError, ValueError):
            return False
        fitted = getattr(getattr(getattr(w.fit_result, "posterior", None), "spec", None), "formula", None)
        if fitted is not None and fitted == spec.formula:
            return False
        corpus = w.corpus

        def done(out) -> None:
            self.task = None
            preview, rest = out
            self.show(preview)
            if rest and w.fitting:
                self.resume = rest  # the posterior goes first
            elif rest:
                self.start(rest)

        def failed(exc: BaseException) -> None:
            self.task = None
            if type(exc).__name__ != "PreviewCancelled":  # e.g. a model the corpus cannot take: no preview
                w.statusBar().showMessage(f"No D-study preview: {type(exc).__name__}: {exc}")

        self._running_stages = stages
        self.task = BackgroundTask(
            lambda progress, cancel: next_preview(corpus, spec, stages, progress=progress, cancel=cancel),
            on_done=done, on_error=failed, with_callbacks=True, parent=self)
        return True

    def stop(self, keep_pending: bool = False) -> None:
        """Discard the running job (a running Laplace fit stops at its next criterion evaluation)."""
        if self.task is not None:
            self.task.discard()
            self.task = None
        if not keep_pending:
            self.pending = False

    def fit_started(self) -> None:
        """A fit started: a running Laplace stage gives the sampler the CPU (resumed by :meth:`fit_failed`)."""
        if self.task is not None and self._running_stages:
            self.resume = list(self._running_stages)
            self.stop(keep_pending=True)
        self.note()

    def fit_failed(self) -> None:
        """The fit was cancelled or failed: no posterior came, so a stopped stage runs after all."""
        resume, self.resume = self.resume, None
        self.note()
        if resume:
            self.start(resume)

    def posterior_shown(self) -> None:
        """A posterior (or typed-in components) is drawn: the preview is over."""
        self.stop()
        self.resume = None

    # -- drawing ----------------------------------------------------------------------------------
    def show(self, preview) -> None:
        """Draw ``preview`` in the D-study tab, now if the tab is on screen, else when it is opened."""
        w = self.w
        if w.corpus is None:
            return
        self.preview = preview
        self.pending = True
        w.statusBar().showMessage(f"D-study preview from {preview.label} ({preview.seconds:.1f} s)")
        if w.tabs.currentIndex() == self.tab_index:
            self._draw()
        elif w.dstudy_panel is None or not w.dstudy_panel.preview:
            w.dstudy_panel = None  # a posterior of another corpus or model must not stay under the preview
            w._slots["D-study"].replace(self.placeholder("A preview of the D-study from point estimates is ready."))

    def _draw(self) -> None:
        from ..core.dstudy import DStudyModel
        from .dstudy_panel import DStudyPanel

        from ..core.session import SessionError

        w = self.w
        self.pending = False
        try:  # the object and design follow the previewed model, as after a fit (agents for the ddr preset)
            w.state.follow_fit(self.preview.components, w.corpus)
        except SessionError as exc:
            w.statusBar().showMessage(f"The preview's design is unknown: {exc}")
        observed = w.state.observed_design() or w.state.design()
        w.dstudy_panel = DStudyPanel(DStudyModel(self.preview.components), observed, w.state, None)
        from .dstudy_absent_sizes import absent_sizes_note

        absent_sizes_note(w.dstudy_panel, w.summary)  # why there is no Benchmarks (Scaffolds) slider
        w._slots["D-study"].replace(w.dstudy_panel)
        self.note()
        w.preview_shown.emit(self.preview)

    def _on_tab_changed(self, index: int) -> None:
        if index == self.tab_index and self.pending and self.preview is not None:
            self._draw()

    def note(self) -> None:
        """The banner says whether the posterior is running."""
        panel = self.w.dstudy_panel
        if panel is not None and panel.preview and self.preview is not None:
            panel.set_preview_note(self.w.fitting, {"laplace": "Laplace GLMM", "rough": "rough fit"}[self.preview.method])
