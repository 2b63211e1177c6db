"""One ETA for the whole fit: compile, warmup and sampling together, calibrated by the fits before it.

The sampler reports each phase's own ETA, so the window used to say "4 s" at the end of warmup and then
"27 s" for sampling, and nothing while compiling.  :class:`WholeFitEta` adds what is still to come:

* compiling: the compile time the last fit measured here, then the warmup and draws at the last fit's
  pace per iteration (nothing is said before one fit has been measured);
* warmup: the sampler's warmup ETA, plus the draws still to run at warmup's pace per iteration (the
  run length's minimum draws; under the convergence gate the gate's projection takes over in sampling);
* sampling: the sampler's ETA.

When the fit ends, :meth:`WholeFitEta.check_line` gives the log line that compares the first whole-job
estimate with the time the fit took, and :meth:`WholeFitEta.remember` stores the measured compile time and
pace for the next fit's estimate (in the app's settings).
"""

from __future__ import annotations

import time

#: Settings keys of the calibration.
COMPILE_KEY = "calibration/compile_seconds"
PACE_KEY = "calibration/seconds_per_iteration"
#: Phases of a fit, in order (the gate's phase is sampling).
FIT_PHASES = ("compile", "warmup", "sampling", "sampling (until converged)", "diagnostics")


class WholeFitEta:
    """Turns the sampler's per-phase reports into one ETA for the rest of the fit (module note).

    Parameters
    ----------
    warmup, draws
        Warmup iterations and (at least) draws per chain of the fit.
    compile_seconds, seconds_per_iteration
        The last fit's measured compile time and pace here (None: not measured yet).
    clock
        Seconds now (tests pass their own).
    """

    def __init__(self, warmup: int, draws: int, compile_seconds: float | None = None,
                 seconds_per_iteration: float | None = None, clock=time.perf_counter):
        self.warmup, self.draws = int(warmup), int(draws)
        self.compile_seconds, self.pace = compile_seconds, seconds_per_iteration
        self.clock = clock
        self.t0 = clock()
        self.compile_started = self.compile_ended = None
        self.first: tuple[float, float] | None = None  # (seconds into the fit, whole-job estimate)
        self.measured_pace: float | None = None

    def report(self, phase: str, i: int, total: int, eta) -> float | None:
        """The whole fit's ETA after the sampler's report ``(phase, i, total, eta)``; None when unknown."""
        now = self.clock()
        if phase not in FIT_PHASES:
            return eta  # not a fit's phase (an analysis, the estimators): its own estimate
        out = None
        if phase == "compile":
            if i < total:
                if self.compile_started is None:
                    self.compile_started = now
                if self.compile_seconds is not None and self.pace is not None:
                    left = max(self.compile_seconds - (now - self.compile_started), 0.0)
                    out = left + (self.warmup + self.draws) * self.pace
            else:
                self.compile_ended = now
        elif phase == "warmup":
            left = max(total - i, 0)
            if eta is not None and left > 0:
                self.measured_pace = eta / left
            elif i > 0 and self.compile_ended is not None:
                self.measured_pace = (now - self.compile_ended) / i
            pace = self.measured_pace if self.measured_pace is not None else self.pace
            if eta is not None and pace is not None:
                out = eta + self.draws * pace
        elif phase == "diagnostics":
            out = 0.0 if i >= total else None
        else:  # sampling, fixed or until converged: the sampler's ETA covers the rest
            out = eta
        if out is not None and self.first is None and out > 0:
            self.first = (now - self.t0, float(out))
        return out

    def compile_measured(self) -> float | None:
        """Seconds the compile phase took in this fit (None when not seen)."""
        if self.compile_started is None or self.compile_ended is None:
            return None
        return self.compile_ended - self.compile_started

    def check_line(self) -> str | None:
        """``"ETA check: estimated 35 s for the whole fit at 4.0 s; it took 38.2 s"`` (None before an estimate)."""
        if self.first is None:
            return None
        at, estimate = self.first
        took = self.clock() - self.t0
        return (f"ETA check: estimated {estimate + at:.1f} s for the whole fit when {at:.1f} s into it; "
                f"it took {took:.1f} s")

    def remember(self, settings) -> None:
        """Store this fit's compile time and pace in ``settings`` (a ``QSettings``) for the next estimate."""
        compiled = self.compile_measured()
        if compiled is not None:
            settings.setValue(COMPILE_KEY, float(compiled))
        if self.measured_pace is not None:
            settings.setValue(PACE_KEY, float(self.measured_pace))


class PlannedJobEta:
    """One ETA for a job of refits that core priced beforehand (:class:`~ddr_explorer.core.analyses.defaults.
    AnalysesPlan`): the plan's seconds left until the job reports, then core's time left, which follows the
    pace of the finished refits against the plan (:class:`~ddr_explorer.core.analyses.pace.RefitPace`).

    The window once blended the plan's seconds left with the batch's pace here, weighted by the share of
    refits done: on a loaded box that read 13m45s at the start, 15m59s at 33 min and 2m57s at 52 min of a
    55-minute export.  Core's estimate is already the blend, per analysis.
    """

    def __init__(self, total_seconds: float, clock=time.perf_counter):
        self.total_seconds = float(total_seconds)
        self.clock = clock
        self.t0 = clock()

    def report(self, phase: str, i: int, total: int, eta) -> float | None:
        if eta is not None:
            return float(eta)
        return max(self.total_seconds - (self.clock() - self.t0), 0.0)

    def check_line(self) -> str:
        return (f"ETA check: estimated {self.total_seconds:.1f} s for the whole job (the plan made before it); "
                f"it took {self.clock() - self.t0:.1f} s")

    def remember(self, settings) -> None:
        """Nothing to store: the plan is core's, priced from the fit's own timings."""


#: The progress phase a worker reports its job's plan under (the plan itself in the ETA's place): the GUI
#: thread starts the job's planned ETA from it (:meth:`~.model_panel.ModelPanel.show_progress` never sees it).
PLAN_PHASE = "plan"
#: The analyses core's plan prices (:func:`~ddr_explorer.core.analyses.defaults.plan_sheet_analyses`).
PLANNED_ANALYSES = ("difficulty", "heldout", "loo", "lobo", "lomo")


def plan_refit_analyses(corpus, posterior, which, *, n_splits: int, n_strata: int, cache_dir=None,
                        heldout_estimator: str = "auto"):
    """Core's plan of the refit analyses ``which`` (worker thread: it looks up each refit in the fit cache),
    or None when the job has no fit to price its refits from or runs an analysis the plan does not price
    (capability, transfer: a plan of part of the job would promise too little)."""
    which = list(which)
    if posterior is None or not which or not set(which) <= set(PLANNED_ANALYSES):
        return None
    from ..core.analyses.defaults import plan_sheet_analyses

    try:
        plan = plan_sheet_analyses(corpus, posterior, which=tuple(which), n_splits=n_splits, n_strata=n_strata,
                                   cache_dir=cache_dir, heldout_estimator=heldout_estimator)
    except (ValueError, KeyError, AttributeError):  # no estimate rather than no analyses: the job says why
        return None
    return plan if plan.total_seconds > 0 else None


def calibration(settings) -> tuple[float | None, float | None]:
    """``(compile_seconds, seconds_per_iteration)`` the last fit stored in ``settings`` (None when absent)."""
    def num(key):
        value = settings.value(key)
        try:
            return None if value is None else float(value)
        except (TypeError, ValueError):
            return None

    return num(COMPILE_KEY), num(PACE_KEY)


__all__ = ["COMPILE_KEY", "PACE_KEY", "PLAN_PHASE", "PLANNED_ANALYSES", "PlannedJobEta", "WholeFitEta", "calibration",
           "plan_refit_analyses"]
