"""The analysis jobs the main window runs after a fit: start them, cancel them, show their results.

The refit-heavy analyses (difficulty, held-out splits, PSIS-LOO; Analysis menu and the Analyses tab's
start page), the capability scale and transfer study, failure modes and the frontier over time, and the
estimator comparison (Methods tab; also on any G-study table, :mod:`.score_table_methods`).  Each runs on
a worker (:class:`~.workers.BackgroundTask`) with the Model tab's progress, ETA, cancel and log, fills its
own tab, and keeps what the DDR sheet prints in ``window.analyses_for_sheet`` (:mod:`.ddr_sheet_export`
reads it).  Opening another corpus discards them (:meth:`AnalysisJobs._clear_corpus_results`).

Why a mixin rather than a controller object: each job starts through the window's one-long-job gate
(:meth:`~.fit_flow.FitFlow._job_inputs`), shares the fit's actions and Model tab, and writes the window's
panels and ``analyses_for_sheet``; tests, the start pages (:mod:`.analysis_start_pages`) and the sheet
export call ``window.start_analyses(...)``, ``window.start_methods()``, ``window.analyses_task`` on the
window itself.  The window declares the Qt signals these jobs emit (``analyses_finished``,
``analyses_failed``, ``methods_finished``, ``methods_failed``).
"""

from __future__ import annotations

import time

from .tab_slots import TABS
from .workers import BackgroundTask


class AnalysisJobs:
    """The analysis jobs, as a mixin of :class:`~.main_window.MainWindow` (see the module docstring)."""

    def start_capability(self, options: dict | None = None) -> bool:
        """The capability scale and the transfer study (:mod:`~ddr_explorer.core.analyses.capability`,
        :mod:`~ddr_explorer.core.analyses.transfer`) on the worker; families from the shipped family map.
        A corpus that cannot support them (one benchmark: core's availability rule) starts nothing and says why."""
        from ..core.analyses.availability import unavailable_reason

        why = None if self.corpus is None else unavailable_reason(self.corpus, "capability")
        if why is not None:  # the tab's button and the menu entry are disabled with it; a call from elsewhere
            self.statusBar().showMessage(f"Cannot run the capability scale and transfer: {why}")
            return False
        if options is None:
            from ..core.analyses.transfer import read_family_map
            from ..core.corpus.importers._common import resources_dir

            options = {"transfer": {"families": read_family_map(resources_dir() / "aliases" / "families.toml")}}
        return self.start_analyses(which=("capability", "transfer"), options=options)

    def start_analyses(self, which=("difficulty", "heldout", "loo"), n_splits: int | None = None,
                       n_strata: int = 4, options: dict | None = None, plan=None, status: str | None = None,
                       show: bool = True) -> bool:
        """Run :func:`~ddr_explorer.core.analyses.run_analyses` on the worker (every fit through the cache).

        Progress, ETA, cancel and log are the Model tab's; the result fills the Analyses tab and the
        Pareto k line of the Diagnostics tab.  ``plan``: core's estimate of exactly this job, when made
        (the ETA starts from it, follows the pace of the refits against it, :mod:`~ddr_explorer.core.analyses.pace`,
        and the log compares it with the time taken).  ``n_splits``: the sheet's hold-out splits when None
        (:data:`~ddr_explorer.core.analyses.defaults.SHEET_SPLITS`), so that the refits run here are the ones
        the DDR sheet's export reuses.  ``show``: turn to the Model tab, then to the result (False: a run that
        only reads the cache, as after a restart, leaves the tab shown alone).  ``status``: the words the status
        bar starts each progress line with ("Estimating the DDR sheet's analyses: hold-out 23/105 refits,
        about 6 min left"; None: the status bar is left alone).
        """
        mp = self.model_panel
        ready = self._job_inputs("Cannot run the analyses")
        if ready is None:
            return False
        if n_splits is None:
            from ..core.analyses import defaults

            n_splits = defaults.SHEET_SPLITS
        spec, settings = ready
        corpus, cache, which = self.corpus, self.cache_dir, list(which)
        started = time.perf_counter()  # the time taken goes to the log, beside the estimate the sheet logged
        post = None if self.fit_result is None else self.fit_result.posterior
        self.analyses_timings = took = {}  # each analysis's wall seconds (the sheet export prints them by its estimate)

        planned = {"plan": plan if plan is not None and set(plan.which) == set(which) else None}
        planned["made"] = planned["plan"]
        from .heldout_estimator_box import window_estimator

        estimator = window_estimator(self)  # the hold-out's estimator (gui/heldout_estimator_box.py)

        def job(progress, cancel):
            from ..core.analyses import run_analysis_studies, sheet_analyses, studies_to_dict

            from ..core.analyses.heldout_choice import choose_heldout_estimator

            made = planned["plan"]
            if made is None:  # the Analysis menu: price the job here, off the GUI thread (fit cache)
                from .fit_eta import PLAN_PHASE, plan_refit_analyses

                made = plan_refit_analyses(corpus, post, which, n_splits=n_splits, n_strata=n_strata, cache_dir=cache,
                                           heldout_estimator=estimator)
                if made is not None:
                    progress(PLAN_PHASE, 0, 0, made)  # the GUI thread starts the planned ETA from it
            choice = getattr(made, "heldout_choice", None)
            if choice is None and "heldout" in which:  # no plan: the estimator asked for (auto: Bayesian, as before)
                choice = choose_heldout_estimator(estimator, None)
            studies = run_analysis_studies(corpus, which, spec, settings, cache_dir=cache, n_splits=n_splits,
                                           n_strata=n_strata, posterior=post, progress=progress, cancel=cancel,
                                           options=options, timings=took, heldout_choice=choice, plan=made)
            # the panel draws the plain numbers; the DDR sheet export gets the study objects
            return studies_to_dict(studies), sheet_analyses(studies)

        def done(out) -> None:
            from .analyses_panel import AnalysesPanel

            results, for_sheet = out

            self.fit_action.setEnabled(True)
            self.cancel_action.setEnabled(False)
            mp.append_log(f"Analyses done in {time.perf_counter() - started:.1f} s: " + ", ".join(results))
            if planned.get("made") is not None and status is None:  # the estimate beside what it took (the
                mp.append_log(f"Analyses: {planned['made'].estimate_and_actual(took)}")  # sheet's export logs its own)
                planned["made"].remember(took, cache_dir=cache)  # the next estimate here is calibrated by it
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
            if show:
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
                if status is not None:  # the export's line: which analysis, refits done, time left
                    from ..core.analyses.pace import progress_line

                    self.statusBar().showMessage(f"{status}: {progress_line(phase, i, total, eta)}")

        self.fit_action.setEnabled(False)
        self.cancel_action.setEnabled(True)
        sizes = ([f"{n_splits} held-out splits"] if "heldout" in which else []) + \
            ([f"{n_strata} difficulty strata"] if "difficulty" in which else [])
        mp.append_log(f"Analyses {', '.join(which)} of {spec.formula}" + (f" ({', '.join(sizes)})" if sizes else "")
                      + "; every fit goes through the cache")
        self.analyses_task = BackgroundTask(job, on_done=done, on_error=failed, on_progress=on_progress,
                                            with_callbacks=True, parent=self)
        if show:
            self.tabs.setCurrentIndex(TABS.index("Model"))
        return True

    # -- failure modes, frontier over time (failure_modes_panel, frontier_panel) ---------------------
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


__all__ = ["AnalysisJobs"]
