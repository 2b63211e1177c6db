"""The time left of a run of refit analyses, re-estimated from the pace of the refits finished so far.

The plan (:class:`~.defaults.AnalysesPlan`) prices each analysis before it runs, from the parent fit's pace.
On a loaded machine, or where a refit mixes worse than its parent, the run goes slower or faster than that
(a demo export estimated at 14 min took 55: difficulty 76 s against 6 min estimated, the hold-out 48 min
against 12).  An ETA that kept the plan, or that counted refits alike whatever they cost, did not follow
the run (13m45s at the start, 15m59s at 33 min, 2m57s at 52 min).

:class:`RefitPace` measures each analysis against its own estimate: the seconds its finished refits took
over the seconds the plan gave them (refits found in the cache cost nothing and count for nothing).  That
ratio scales what the analysis still has to run; an analysis not started yet is scaled by the ratio of all
the work so far.  An analysis's first refit also pays its compile, which the plan prices from the parent's
(152 s on the demo, where the hold-out's first refit then took 28 s in all): the pace is measured from the
end of each analysis's first refit.  Early on a ratio rests on one or two refits, so each ratio is
blended with what was known before it: the whole run's ratio with the plan (the plan counts as
:data:`PRIOR_SHARE` of the run at the planned pace), an analysis's own with the whole run's (weighted
:data:`PRIOR_SHARE` of that analysis's estimate).  On a measured run of the demo's analyses, and on the
timeline of the app's 55-minute export, this keeps the ETA within 1.5x of the time actually left at 20%,
50% and 80% of the way (``tests/test_refit_pace.py`` replays both).

:func:`progress_line` is the one line the app's status bar and the CLI print of such a run:
"hold-out 23/105 refits, about 6 min left".
"""

from __future__ import annotations

import time

__all__ = ["PRIOR_SHARE", "RefitPace", "progress_line", "ANALYSIS_WORDS", "analysis_of_phase", "estimate_from_plan"]

#: The plan's weight in a pace ratio, as a share of the analysis's estimate run at the planned pace.
PRIOR_SHARE = 0.1
#: The analyses in the words the app and the sheet use (the plan's keys are ``--analyses`` names).
ANALYSIS_WORDS = {"difficulty": "difficulty", "heldout": "hold-out", "loo": "LOO", "lobo": "leave-one-benchmark-out",
                  "lomo": "leave-one-model-out", "failure-modes": "failure modes", "frontier": "frontier",
                  "capability": "capability", "transfer": "transfer"}


def analysis_of_phase(phase: str) -> str:
    """The analysis a batch's progress phase is about (``"heldout - refits"`` -> ``"heldout"``)."""
    return str(phase).split(" - ", 1)[0]


def progress_line(phase: str, done: int, total: int, eta: float | None) -> str:
    """``"hold-out 23/105 refits, about 6 min left"`` (the analysis named by the batch's ``phase``)."""
    from ..formatting import fmt_duration

    name = analysis_of_phase(phase)
    words = ANALYSIS_WORDS.get(name, name)
    left = "" if eta is None else f", about {fmt_duration(eta)} left"
    return f"{words} {int(done)}/{int(total)} refits{left}"


class RefitPace:
    """The time left of a planned run, from the measured pace of its refits (module note).

    Parameters
    ----------
    which
        The analyses, in the order they run.
    n_refits, n_cached, seconds
        Per analysis: refits planned, refits already in the cache, estimated seconds of the refits to run
        (:class:`~.defaults.AnalysesPlan`'s fields).  An analysis without an estimate is priced at the
        measured seconds per refit of the run so far.
    compile
        Per analysis: the part of ``seconds`` that is its one compile, paid by its first refit (the time left
        of an analysis before its first refit ends; the pace is measured after it).
    clock
        Seconds now (tests pass their own).
    """

    def __init__(self, which, n_refits: dict, n_cached: dict | None = None, seconds: dict | None = None,
                 clock=time.perf_counter, compile: dict | None = None):
        self.which = tuple(which)
        self.n_refits = {n: int(n_refits.get(n, 0)) for n in self.which}
        self.n_cached = {n: min(int((n_cached or {}).get(n, 0)), self.n_refits[n]) for n in self.which}
        self.seconds = {n: float((seconds or {}).get(n, 0.0) or 0.0) for n in self.which}
        self.compile = {n: min(float((compile or {}).get(n, 0.0) or 0.0), self.seconds[n]) for n in self.which}
        self.clock = clock
        self.done = {n: 0 for n in self.which}
        self.started: dict = {}
        self.last: dict = {}  # analysis -> (clock at its last finished refit, refits to run done by then)
        self.first: dict = {}  # analysis -> clock at its first finished refit (its compile's end, about)
        self.current: str | None = None

    def _to_run(self, name: str) -> int:
        return max(self.n_refits[name] - self.n_cached[name], 0)

    def _per_refit(self, name: str) -> float:
        """The plan's seconds per refit to run of ``name`` after its compile (0 when it has none to run)."""
        n = self._to_run(name)
        return (self.seconds[name] - self.compile[name]) / n if n else 0.0

    def _planned(self, name: str, fresh: int) -> float:
        """The plan's seconds of ``name``'s first ``fresh`` refits to run: the compile comes with the first."""
        return self.compile[name] + fresh * self._per_refit(name) if fresh > 0 else 0.0

    def report(self, name: str, done: int) -> None:
        """Analysis ``name`` has ``done`` of its planned refits (the cached ones included)."""
        now = self.clock()
        if name not in self.done:
            return
        if name not in self.started:
            # the analysis before it ended now: its time is the time up to here
            if self.current is not None and self.current != name:
                prev = self.current
                self.last[prev] = (now, self._to_run(prev))
                self.first.setdefault(prev, now)
                self.done[prev] = self.n_refits[prev]
            self.started[name] = now
        self.current = name
        done = max(0, min(int(done), self.n_refits[name]))
        fresh = max(done - self.n_cached[name], 0)
        if fresh > self.last.get(name, (None, 0))[1]:
            self.last[name] = (now, fresh)
            self.first.setdefault(name, now)
        self.done[name] = done

    def _measured(self, names) -> tuple[float, float]:
        """(seconds taken, seconds planned) of the refits finished in ``names`` after each one's first: the first
        also pays the compile, whose share the plan cannot price well (the parent's 123 s of compile on a loaded
        box; a refit's compile took 10 s at a lighter load, 60 s at a heavier one, on the demo)."""
        took = planned = 0.0
        for n in names:
            if n not in self.last or n not in self.first:
                continue
            t, fresh = self.last[n]
            took += max(t - self.first[n], 0.0)
            planned += max(fresh - 1, 0) * self._per_refit(n)
        return took, planned

    def _ratio(self, names, prior_seconds: float, prior: float = 1.0) -> float:
        """Measured over planned seconds of ``names``, blended with ``prior`` (1: the plan's own pace) weighted
        :data:`PRIOR_SHARE` of ``prior_seconds``."""
        took, planned = self._measured(names)
        w = PRIOR_SHARE * prior_seconds
        if planned + w <= 0:
            return prior
        return (w * prior + took) / (w + planned)

    def eta(self) -> float | None:
        """Seconds left of the whole run; None before anything can be said (no estimate, nothing measured)."""
        now = self.clock()
        started = [n for n in self.which if n in self.started]
        total_planned = sum(self.seconds.values())
        if total_planned <= 0:  # no plan: the measured seconds per refit to run, as the batch's own pace
            took = sum(max(self.last[n][0] - self.started[n], 0.0) for n in started if n in self.last)
            fresh = sum(self.last[n][1] for n in started if n in self.last)
            if not fresh:
                return None
            left = sum(self._to_run(n) for n in self.which) - fresh
            return max(took / fresh * left, 0.0)
        overall = self._ratio(started, total_planned)
        left = 0.0
        for n in self.which:
            fresh = self.last.get(n, (None, 0))[1]
            refits_left = max(self._to_run(n) - fresh, 0)
            if n == self.current and n in self.started:
                if not refits_left:
                    continue
                own = self._ratio([n], self.seconds[n], prior=overall)  # the run so far, then its own refits
                per = self._per_refit(n) * own
                first = (self.compile[n] * own) if not fresh else 0.0  # the compile, still to come with the first
                since = now - self.last[n][0] if n in self.last else now - self.started[n]
                # the refit running now has had ``since`` of its time; the ones after it have had none (a
                # refit that runs over its time holds the estimate, it does not eat the next ones' time)
                left += (refits_left - 1) * per + max(per + first - since, 0.0)
            elif n not in self.started:
                left += (self.compile[n] + refits_left * self._per_refit(n)) * overall
        return left


def estimate_from_plan(plan, clock=time.perf_counter) -> RefitPace:
    """A :class:`RefitPace` for an :class:`~.defaults.AnalysesPlan` (its analyses, refits, cache and estimate)."""
    return RefitPace(plan.which, plan.n_refits, getattr(plan, "n_cached", None), getattr(plan, "seconds", None),
                     clock=clock, compile=getattr(plan, "compile", None))
