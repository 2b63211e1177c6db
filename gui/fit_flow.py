"""The fit the main window drives: start it, show its progress and cancel it, and draw its result.

Analysis > Fit (or the Model tab's button) runs :func:`~ddr_explorer.core.fitting.fit_corpus` through
:func:`fit_job` on a worker thread (:class:`~.workers.BackgroundTask`), in a child process unless
:data:`FIT_IN_CHILD_PROCESS` is off; progress, ETA, cancel and log go to the Model tab, and the result fills
every view (:meth:`FitFlow.show_fit`, then the window's ``show_posterior``) and the Diagnostics tab.  The
gate for every long job (one at a time, from the state's model and sampler settings) lives here too:
the analysis jobs (:mod:`.analysis_jobs`) start through it.

Why a mixin rather than a controller object: the fit reads and writes the window's own state (corpus,
analysis state, ``fit_result``, the Model tab, the tabs, the actions and signals), and tests, the start
pages and :mod:`.cached_fit` call ``window.start_fit()``, ``window.fitting``, ``window.show_fit(...)`` on
the window itself.  As a mixin of :class:`~.main_window.MainWindow` those names stay the window's, with no
forwarding layer; the window declares the Qt signals the flow emits (``fit_finished``, ``fit_cancelled``,
``fit_failed``), since Qt signals belong to the ``QMainWindow`` subclass.
"""

from __future__ import annotations

import numpy as np

import os
import time

from ..core.formatting import fmt_device
from ..core.session import SessionError
from .cached_fit import fit_outputs
from .tab_slots import TABS
from .workers import BackgroundTask

#: Fits run in a child process (core.fit_process) rather than on a worker thread of this one.
FIT_IN_CHILD_PROCESS = os.environ.get("DDR_FIT_IN_PROCESS", "1") != "0"


def fit_job(corpus, spec, settings, cache_dir, use_cache):
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


class FitFlow:
    """The fit, as a mixin of :class:`~.main_window.MainWindow` (see the module docstring)."""

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
        self.clear_open_error()  # a file that did not open earlier is no longer the news
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
        self.fit_task = BackgroundTask(fit_job(self.corpus, spec, settings, self.cache_dir, True),
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

    def _show_compare(self, post, components, ranks) -> None:
        """The Compare tab for this fit: two models of it, at the D-study tab's sizes (gui/compare_panel.py)."""
        from .compare_panel import ComparePanel

        if ranks is None or self.corpus is None or getattr(components, "intercept", None) is None:
            self.compare_panel = None
            return
        theta, names = ranks
        order = [names[i] for i in np.argsort(-np.asarray(theta).mean(axis=0), kind="stable")]
        self.compare_panel = ComparePanel(post, self.corpus, components, order,
                                          sizes=lambda: self.state.design().sizes(), state=self.state)
        self._slots["Compare"].replace(self.compare_panel)

    def show_fit(self, out: dict) -> None:
        """Fill every view from a fit's outputs (see :func:`fit_job`); mark an unconverged fit as such."""
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
        self.show_posterior(out["components"], theta, names, ranked=ranked, score_moments=out.get("score_moments"))
        self._show_compare(post, out["components"], out["ranks"].get("model"))
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


__all__ = ["FIT_IN_CHILD_PROCESS", "FitFlow", "fit_job"]
