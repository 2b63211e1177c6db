"""File > Export DDR sheet (PDF): the export flow the main window drives.

The menu asks for a file name, then estimates the sheet's analyses off the GUI thread (core's plan looks
up each refit in the fit cache, :func:`~ddr_explorer.core.analyses.defaults.plan_sheet_analyses`), then
always asks what to run, each choice with its estimate (:mod:`.sheet_export_dialog`: the sheet now,
difficulty only, everything).  The analyses picked run first (the analysis jobs, :mod:`.analysis_jobs`, with
the Model tab's progress and log, and a status line of the refits done and the time left) and the sheet is
written when they end.  Every refit is stored in the fit cache as it finishes, so an export cancelled half
way, and the Analyses tab's run (the same 50 splits), leave refits the next export reads instead of
sampling.  :meth:`DdrSheetExport.export_ddr_sheet` then writes the sheet in the background with ``ddr
report``'s writer (:func:`~ddr_explorer.core.report.sheet.write_sheet`) and shows its result lines: the
path, or the sections left out (:class:`~ddr_explorer.core.report.sections.SheetWritten`), or why it failed.

Why a mixin rather than a controller object: the export reads the window's fit, corpus, analysis state
and ``analyses_for_sheet``, runs the analyses through ``window.start_analyses`` and listens to the
window's ``analyses_finished``/``analyses_failed`` signals; tests call ``window.export_ddr_sheet(...)``,
``window.sheet_task`` and patch ``MainWindow.sheet_analyses_plan``, which stay the window's names this way.
The window declares the signals the export emits (``sheet_written``, ``sheet_failed``).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from .workers import BackgroundTask


class DdrSheetExport:
    """The DDR-sheet export, as a mixin of :class:`~.main_window.MainWindow` (see the module docstring)."""

    def export_ddr_sheet(self, path: Path, date_invariant: bool = False, analyses: str = "auto", plan=None) -> bool:
        """Write the DDR sheet of the current fit and state (design, prices, target, budget) in the background.

        Without the Analyses tab's results, ``analyses="auto"`` first runs the sheet's analyses (difficulty,
        50 hold-out splits, PSIS-LOO) when the refit engine's estimate is under 15 minutes, else those of them
        that fit in it together (:func:`~ddr_explorer.core.analyses.defaults.plan_sheet_analyses`,
        :meth:`~ddr_explorer.core.analyses.defaults.AnalysesPlan.within_budget`), then writes the sheet; ``"run"``
        runs them whatever the estimate, a tuple of names those only (the menu's "Difficulty only":
        ``("difficulty",)``), ``"skip"`` writes the sheet without them ("not run").  ``plan``: that
        estimate when already made (the menu makes it in the background: it looks up the refits in the cache).
        Emits :attr:`sheet_written` with the path, or :attr:`sheet_failed` with the reason; a sheet written
        without a section it could not lay out is written, and the window shows the lines ``ddr report``
        prints for it (:class:`~ddr_explorer.core.report.sections.SheetWritten`).
        Returns False when there is no fit to report.
        """
        if self.fit_result is None or self.corpus is None:
            self.statusBar().showMessage("The DDR sheet reports a fit: fit the model first (Analysis > Fit).")
            return False
        if analyses != "skip" and not self._sheet_refits_all_done() and self._analyses_before_sheet(
                path, date_invariant, force=analyses, plan=plan):
            return True
        corpus, post, st, summary = self.corpus, self.fit_result.posterior, self.state, self.summary
        # The sheet states the corpus's own design as observed (core computes it, as for `ddr report`); the
        # sliders' sizes, when moved, are a what-if printed under their own label beside it.
        from ..core.dstudy import observed_design as corpus_design
        from ..core.dstudy import same_sizes

        examined, observed = st.design(), st.observed_design()
        # "Models compared" is no size of the corpus's design, but it prices every cost answer: a what-if
        # that changes only it is still the screen's what-if
        if observed is not None and same_sizes(examined, observed) and \
                examined.n_models == corpus_design(corpus, object_of_measurement=st.object_of_measurement).n_models:
            examined = None
        kw = dict(object_of_measurement=st.object_of_measurement, claim=st.claim, examined_design=examined,
                  target=st.target, budget=st.budget, prices=dict(st.prices) or None,
                  analyses=dict(self.analyses_for_sheet) or None)  # the Analyses tab's results, when run
        path = Path(path)
        # the pair last compared on the Compare tab, if any: its "Two agents" page (as `ddr report --compare`)
        pair = getattr(getattr(self, "compare_panel", None), "decision", None)

        def job():
            from ..core.report.inputs import report_inputs_from
            from ..core.report.sheet import write_sheet

            inputs = report_inputs_from(corpus, posterior=post, corpus_summary=summary, **kw)
            inputs.pair = pair
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

    def _sheet_refits_all_done(self) -> bool:
        """True when the Analyses tab ran every refit analysis of the sheet for this fit (difficulty, hold-out and
        PSIS-LOO): the export then prints them, with nothing left to choose or run.  The estimator comparison
        and the other tabs' results do not count: the sheet's own analyses still run."""
        return {"difficulty", "held_out", "loo"} <= set(self.analyses_for_sheet)

    def sheet_analyses_plan(self):
        """The sheet's default analyses of the current fit and their estimate (core's plan), or None."""
        if self.fit_result is None or self.corpus is None:
            return None
        from ..core.analyses.defaults import plan_sheet_analyses
        from .heldout_estimator_box import window_estimator

        return plan_sheet_analyses(self.corpus, self.fit_result.posterior, cache_dir=self.cache_dir,
                                   heldout_estimator=window_estimator(self))

    def _analyses_before_sheet(self, path, date_invariant: bool, force="auto", plan=None) -> bool:
        """Start the sheet's analyses (``force``: ``"auto"`` those under the budget, ``"run"`` all, or a tuple of
        names) and write the sheet when they end; False when none starts (the sheet is then written without)."""
        plan = plan or self.sheet_analyses_plan()
        if plan is None:
            return False
        # over the budget, the ones that fit in it together still run (core's plan chooses, as for `ddr report`)
        if force == "run":
            which = plan.which
        elif force == "auto":
            which = plan.within_budget()
        else:  # the names asked for ("Difficulty only")
            which = tuple(n for n in plan.which if n in set(force))
        if not which:
            return False
        rest = tuple(n for n in plan.which if n not in which)

        def finished(_results) -> None:
            disconnect()
            # the estimate beside what the run took (the app's export once estimated 4 min and took 7.5)
            self.model_panel.append_log(f"DDR sheet: {plan.part(which).estimate_and_actual(self.analyses_timings)}")
            plan.part(which).remember(self.analyses_timings, cache_dir=self.cache_dir)  # calibrates the next
            self.export_ddr_sheet(path, date_invariant, analyses="skip")

        def failed(_text) -> None:  # cancelled or failed: no sheet; the Model tab's log says why
            disconnect()
            self.statusBar().showMessage("The DDR sheet was not written: its analyses did not finish (the refits "
                                         "they finished are in the cache: the next export resumes from them)")

        def disconnect() -> None:
            self.analyses_finished.disconnect(finished)
            self.analyses_failed.disconnect(failed)

        self.analyses_finished.connect(finished)
        self.analyses_failed.connect(failed)
        if not self.start_analyses(which=which, n_splits=plan.n_splits, plan=plan.part(which),
                                   status="Running the DDR sheet's analyses"):
            disconnect()
            return False
        self.model_panel.append_log(
            f"DDR sheet: {plan.part(which).describe()}; the sheet is written when they end"
            + (f" (not run: {', '.join(rest)})" if rest else ""))
        return True

    def _on_export_sheet(self) -> None:
        if self.fit_result is None:
            self.export_ddr_sheet(Path("ddr-sheet.pdf"))  # says why not
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export DDR sheet", "ddr-sheet.pdf", "PDF (*.pdf)")
        if not path:
            return
        path = Path(path).with_suffix(".pdf")
        if self._sheet_refits_all_done():  # the Analyses tab's results go on the sheet: nothing to choose
            self.export_ddr_sheet(path)
            return
        corpus, post, cache_dir = self.corpus, self.fit_result.posterior, self.cache_dir
        from .heldout_estimator_box import window_estimator

        estimator = window_estimator(self)  # the hold-out's estimator, as the Analyses tab's (auto by default)

        def job():  # off the GUI thread: the plan looks up each refit of the sheet in the fit cache
            from ..core.analyses.defaults import plan_sheet_analyses

            return plan_sheet_analyses(corpus, post, cache_dir=cache_dir, heldout_estimator=estimator)

        def done(plan) -> None:
            # whatever the estimate: buttons that say what they run and for how long (gui/sheet_export_dialog.py)
            from .sheet_export_dialog import sheet_analyses_question

            box, meaning = sheet_analyses_question(self, plan)

            def answered(button) -> None:
                mode = meaning.get(button)
                if mode is None:
                    self.statusBar().showMessage("The DDR sheet was not written")
                    return
                picked = box.heldout_box.currentData() if getattr(box, "heldout_box", None) is not None else estimator
                if picked != estimator:  # another hold-out estimator picked in the question: re-plan with it
                    self.heldout_estimator = picked
                    self.export_ddr_sheet(path, analyses=mode, plan=None)
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


__all__ = ["DdrSheetExport"]
