"""One ETA for a whole estimator comparison (Analysis > Compare estimators), calibrated by the comparisons before it.

The estimators run one after the other (Henderson, REML, the Bayesian LMM, Laplace, DISCO; the Bayesian GLMM
column comes from the cached fit) and each reports only its own progress, so the window said
"REML: 4000 / 4000, ETA 0 s" while the Bayesian LMM compiled.  :class:`ComparisonEta` prices the whole
comparison from each estimator's measured seconds per 1,000 cells of the corpus, stored in the app's
settings by the last comparison that ran it here (:func:`remember_seconds`).  Before every estimator that
runs has been measured once it says nothing: no number rather than a wrong one.

While the comparison runs, the estimator reporting now is the one in progress (those before it in
:data:`ORDER` are done): the ETA is what its estimate leaves after the time it has run, plus the estimates of
the estimators after it.  When the comparison ends, :meth:`ComparisonEta.check_line` gives the log line that
compares the estimate with the time it took, and :meth:`ComparisonEta.remember` stores each estimator's
measured pace for the next comparison.
"""

from __future__ import annotations

import time

#: The estimators in the order core runs them (core.estimators.methods._run_estimators); the Bayesian GLMM
#: column is read from the cached fit, last.
ORDER = ("Henderson", "REML", "Bayes LMM", "Laplace", "DISCO", "Bayes GLMM")
#: Settings group of the calibration: ``<group>/<estimator>`` holds seconds per 1,000 cells.
SETTINGS_GROUP = "calibration/estimator_seconds_per_1000_cells"


def _key(estimator: str) -> str:
    return f"{SETTINGS_GROUP}/{estimator.replace(' ', '_')}"


def stored_pace(settings, estimator: str) -> float | None:
    """Seconds per 1,000 cells the last comparison measured for ``estimator`` (None when never measured)."""
    value = settings.value(_key(estimator))
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def remember_seconds(settings, seconds: dict, n_cells: int) -> None:
    """Store each estimator's measured wall ``seconds`` (name -> s) on a corpus of ``n_cells`` cells, per 1,000 cells."""
    if n_cells <= 0:
        return
    for name, s in seconds.items():
        if name in ORDER and s is not None and s == s and s >= 0:
            settings.setValue(_key(name), float(s) * 1000.0 / n_cells)


def estimator_of(phase: str) -> str | None:
    """The estimator a progress phase belongs to (``"Bayes LMM warm-up"`` -> ``"Bayes LMM"``), or None."""
    for name in sorted(ORDER, key=len, reverse=True):
        if phase == name or phase.startswith(name + " "):
            return name
    return None


class ComparisonEta:
    """The whole comparison's ETA from the estimators' stored paces (module note).

    Parameters
    ----------
    estimators
        The estimators that run, in any order (they are taken in :data:`ORDER`).
    n_cells
        Cells (rows of the canonical table) of the corpus compared.
    settings
        The app's ``QSettings``: the calibration read now, and stored by :meth:`remember`.
    clock
        Seconds now (tests pass their own).
    """

    def __init__(self, estimators, n_cells: int, settings, clock=time.perf_counter):
        self.estimators = [e for e in ORDER if e in set(estimators)]
        self.n_cells = int(n_cells)
        self.settings = settings
        self.clock = clock
        self.t0 = clock()
        paces = {e: stored_pace(settings, e) for e in self.estimators}
        self.planned = None if any(p is None for p in paces.values()) else \
            {e: paces[e] * self.n_cells / 1000.0 for e in self.estimators}
        self.current: str | None = None
        self.current_started = self.t0
        self.measured: dict = {}

    @property
    def total_seconds(self) -> float | None:
        """The whole comparison's estimate at its start (None before each estimator was measured once)."""
        return None if self.planned is None else float(sum(self.planned.values()))

    def report(self, phase: str, i: int, total: int, eta) -> float | None:
        """Seconds left in the whole comparison after the report ``(phase, i, total, eta)``; None when unknown."""
        if self.planned is None:
            return None
        now = self.clock()
        name = estimator_of(phase)
        if name in self.planned and name != self.current:
            self.current, self.current_started = name, now
        if self.current is None:  # nothing reported yet (Henderson reports nothing): the plan less the time run
            return max(self.total_seconds - (now - self.t0), 0.0)
        k = self.estimators.index(self.current)
        own = max(self.planned[self.current] - (now - self.current_started), 0.0)
        return own + sum(self.planned[e] for e in self.estimators[k + 1:])

    def measured_seconds(self, seconds: dict) -> None:
        """Each estimator's wall seconds as the comparison measured them (``MethodsTable.seconds``)."""
        self.measured = {e: float(s) for e, s in seconds.items() if e in ORDER}

    def check_line(self) -> str | None:
        """``"ETA check: estimated 60.0 s for the whole comparison (...); it took 75.0 s"``; None before a calibration."""
        took = self.clock() - self.t0
        if self.planned is None:
            return None
        each = "; ".join(f"{e} {self.planned[e]:.1f} / {self.measured[e]:.1f} s" for e in self.estimators
                         if e in self.measured)
        return (f"ETA check: estimated {self.total_seconds:.1f} s for the whole comparison "
                f"({self.n_cells} cells); it took {took:.1f} s" + (f" (estimated / took: {each})" if each else ""))

    def remember(self, settings=None) -> None:
        """Store the measured seconds per 1,000 cells of each estimator for the next comparison's estimate."""
        remember_seconds(self.settings if settings is None else settings, self.measured, self.n_cells)


__all__ = ["ORDER", "SETTINGS_GROUP", "ComparisonEta", "estimator_of", "remember_seconds", "stored_pace"]
