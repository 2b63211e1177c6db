"""What an analysis tab shows before its analysis ran: what it does, a button that runs it with its time
estimate, or, when the corpus cannot support it, a disabled button with the reason in its tooltip.

The reason is core's (:func:`~ddr_explorer.core.analyses.availability.unavailable_reason`); the
estimate of the refit analyses is core's plan (:func:`~ddr_explorer.core.analyses.defaults.plan_sheet_analyses`,
only the refits not already in the fit cache priced), made on a worker because it looks the refits up
in the cache.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from ..core.formatting import fmt_duration


@dataclass(frozen=True)
class StartSpec:
    """One analysis tab's start page: ``name`` (core's availability name), what it does, the button's words."""

    name: str
    text: str
    button: str


#: The start pages, by tab title.
START_PAGES = {
    "Analyses": StartSpec("analyses", "Difficulty-conditional and held-out reliability and PSIS-LOO refit the "
                          "model many times (4 difficulty strata, 50 hold-out splits: the DDR sheet's, so "
                          "its export reuses them).",
                          "Run difficulty, held-out and LOO analyses"),
    "Methods": StartSpec("methods", "Variance shares from Henderson, REML, Laplace, the Bayesian GLMM and LMM, "
                         "and DISCO side by side.", "Compare estimators"),
    "Failure modes": StartSpec("failure-modes", "Where agents differ against where failures appear, per error "
                               "category (needs an error_category column).", "Run failure modes"),
    "Frontier": StartSpec("frontier", "The best agent per task among models released by each quarter (needs "
                          "release dates).", "Run frontier over time"),
    "Capability": StartSpec("capability", "A capability scale (Rasch and 2PL) across benchmarks and the transfer "
                            "of rankings between them.", "Run capability scale and transfer"),
}


class StartPage(QWidget):
    """An analysis tab before its result: description, run button, estimate (or the reason it cannot run).

    Attributes
    ----------
    button
        Runs the analysis (disabled, with the reason as tooltip, when the corpus cannot support it).
    estimate_label
        The time estimate, or the reason the analysis cannot run.
    """

    def __init__(self, spec: StartSpec, run=None, reason: str | None = None, estimate: str = "", extra=None):
        super().__init__()
        self.spec = spec
        self.setObjectName(f"start_{spec.name}")
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        self.text_label = QLabel(spec.text)
        self.text_label.setWordWrap(True)
        self.text_label.setAlignment(Qt.AlignCenter)
        self.text_label.setStyleSheet("color: #555555;")
        layout.addWidget(self.text_label)
        self.button = QPushButton(spec.button)
        self.button.setObjectName(f"run_{spec.name}")
        layout.addWidget(self.button, 0, Qt.AlignHCenter)
        self.extra = extra  # a choice that goes with the run (the Analyses tab: the hold-out's estimator)
        if extra is not None:
            layout.addWidget(extra, 0, Qt.AlignHCenter)
        self.estimate_label = QLabel("")
        self.estimate_label.setWordWrap(True)
        self.estimate_label.setAlignment(Qt.AlignCenter)
        layout.addWidget(self.estimate_label)
        layout.addStretch(2)
        if run is not None:
            self.button.clicked.connect(lambda _checked=False: run())
        self.set_reason(reason)
        if reason is None:
            self.set_estimate(estimate)

    @property
    def reason(self) -> str | None:
        """Why the analysis cannot run (None when it can)."""
        return self._reason

    def set_reason(self, reason: str | None) -> None:
        """Disable the button and say why (``None``: enable it)."""
        self._reason = reason
        self.button.setEnabled(reason is None)
        self.button.setToolTip(reason or "")
        if reason is not None:
            self.estimate_label.setText(reason)
            self.estimate_label.setStyleSheet("color: #8a5a00;")
            self.estimate_label.setToolTip(reason)

    def set_estimate(self, text: str) -> None:
        """Show the time estimate under the button (and on it)."""
        if self._reason is not None:
            return
        self.estimate_label.setStyleSheet("color: #333333;")
        self.estimate_label.setText(text)
        short = re.match(r"about [^;(]+", text)  # the button carries the estimate only, the label its detail
        self.button.setText(self.spec.button + (f" ({short.group(0).strip()})" if short else ""))


def fit_estimate_text(posterior) -> str:
    """The estimate of an analysis that fits the model once more at the current fit's pace (the Bayesian LMM)."""
    if posterior is None:
        return "time estimated once the model is fitted"
    return f"about {fmt_duration(getattr(posterior, 'wall_seconds', float('nan')))}"


def analyses_plan_job(corpus, posterior, cache_dir, n_splits: int, n_strata: int, heldout_estimator: str = "auto"):
    """Worker part of the Analyses tab's estimate: core's plan of exactly what its button runs (the hold-out by
    the estimator chosen, :mod:`.heldout_estimator_box`)."""

    def run():
        from ..core.analyses.defaults import plan_sheet_analyses

        return plan_sheet_analyses(corpus, posterior, which=("difficulty", "heldout", "loo"), n_splits=n_splits,
                                   n_strata=n_strata, cache_dir=cache_dir, heldout_estimator=heldout_estimator)

    return run


def all_in_cache(plan) -> bool:
    """True when every refit of core's plan is stored in the fit cache (and PSIS-LOO needs none): the
    analyses then only read it back."""
    return plan.total_refits > 0 and sum(plan.n_cached.values()) >= plan.total_refits


def plan_estimate_text(plan) -> str:
    """``"about 12 min (44 refits, 4 in the cache)"``, then the hold-out's estimator line when it was chosen."""
    cached = sum(plan.n_cached.values())
    choice = getattr(plan, "heldout_choice", None)
    return (f"about {fmt_duration(plan.total_seconds)} ({plan.total_refits} refits"
            + (f", {cached} in the cache" if cached else "") + ")"
            + (f"; {choice.line}" if choice is not None else ""))




class StartPages:
    """The start pages of a window's analysis tabs: built for the open corpus, estimates refreshed after a fit.

    ``window`` gives ``corpus``, ``fit_result``, ``cache_dir``, ``_slots`` (tab -> slot with ``replace`` and
    ``child``) and the starters; ``actions`` maps an availability name to the Analysis-menu action that runs
    it, disabled (with the reason as tooltip) with its button.
    """

    def __init__(self, window, starters: dict, actions: dict | None = None):
        self.window = window
        self.starters = starters
        self.actions = actions or {}
        self.plan_task = None
        #: Core's plan of the Analyses button's job, once made (its ETA starts from it).
        self.plan = None

    def page(self, tab: str) -> StartPage | None:
        """The start page shown on ``tab`` (None once a result replaced it)."""
        child = self.window._slots[tab].child
        return child if isinstance(child, StartPage) else None

    def reset(self) -> None:
        """A start page on every analysis tab, for the open corpus (results of the previous corpus go)."""
        from ..core.analyses.availability import unavailable_reason

        corpus = self.window.corpus
        for tab, spec in START_PAGES.items():
            reason = ("Open a corpus first (File > Open corpus...)." if corpus is None
                      else unavailable_reason(corpus, spec.name))
            self.window._slots[tab].replace(StartPage(spec, self.starters[spec.name], reason,
                                                      extra=self._estimator_box() if spec.name == "analyses" else None))
            action = self.actions.get(spec.name)
            if action is not None:
                action.setEnabled(corpus is None or reason is None)  # no corpus: the action says "open one"
                action.setToolTip(reason or "")
        self.refresh_estimates()

    def _estimator_box(self):
        """The hold-out's estimator (gui/heldout_estimator_box.py): a pick re-estimates the run."""
        from .heldout_estimator_box import heldout_estimator_box, window_estimator

        def picked(value: str) -> None:
            self.window.heldout_estimator = value
            self.refresh_estimates()

        return heldout_estimator_box(window_estimator(self.window), picked)

    def refresh_estimates(self) -> None:
        """Each start page's time estimate from the current fit (the Analyses plan on a worker)."""
        from .workers import BackgroundTask

        self.plan = None  # a plan belongs to the fit and corpus it was made for
        fit = self.window.fit_result
        post = None if fit is None else fit.posterior
        for tab in START_PAGES:
            page = self.page(tab)
            if page is None:
                continue
            name = page.spec.name
            if name == "methods":
                page.set_estimate(fit_estimate_text(post) + ("; the Bayesian LMM is one more fit" if post else ""))
            elif name == "frontier":
                page.set_estimate("a few seconds (a bootstrap over the corpus; no model fit)")
            elif name == "analyses":
                page.set_estimate("time estimated once the model is fitted (run now, it fits the model first)"
                                  if post is None else "estimating the time\u2026")
            else:
                page.set_estimate("several fits of their own" + (f", each about {fmt_duration(post.wall_seconds)} "
                                                                   "like the current fit" if post else ""))
        page = self.page("Analyses")
        if page is None or post is None or page.reason is not None:
            return
        corpus = self.window.corpus

        def done(plan) -> None:
            if self.window.corpus is corpus:
                self.plan = plan
            shown = self.page("Analyses")
            if shown is not None and self.window.corpus is corpus:
                shown.set_estimate(plan_estimate_text(plan))
                if all_in_cache(plan) and not self.window._busy() and self.window.fit_result is fit:
                    # run before (this session or the last): every refit is read back, none sampled, and the
                    # tab shows the result without its button being pressed again
                    self.window.model_panel.append_log("Analyses: every refit of the Analyses tab is in the fit "
                                                       "cache; shown from it")
                    self.window.start_analyses(plan=plan, show=False)

        def failed(exc: BaseException) -> None:
            shown = self.page("Analyses")
            if shown is not None:
                shown.set_estimate(f"no estimate ({type(exc).__name__}: {exc})")

        from .heldout_estimator_box import window_estimator

        from ..core.analyses.defaults import SHEET_SPLITS

        # the sheet's splits: what the button runs is what the export reuses
        job = analyses_plan_job(corpus, post, self.window.cache_dir, SHEET_SPLITS, 4, window_estimator(self.window))
        self.plan_task = BackgroundTask(job,
                                        on_done=done, on_error=failed, parent=self.window)


__all__ = ["all_in_cache", "START_PAGES", "StartPage", "StartPages", "StartSpec", "analyses_plan_job", "fit_estimate_text",
           "plan_estimate_text"]
