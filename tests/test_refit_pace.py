"""The time left of a run of refit analyses from the pace of its finished refits (core/analyses/pace.py), on a
fake clock, and the progress line of the sheet's analyses."""

from __future__ import annotations

import pytest

from ddr_explorer.core.analyses.pace import RefitPace, progress_line

#: The demo export of the app, as measured on a loaded box: estimated 6 min, 12 min and 12 s; took 76 s, 48 min
#: and 33 s (4 difficulty strata, 100 hold-out refits, one LOO refit).
ESTIMATE = {"difficulty": 360.0, "heldout": 720.0, "loo": 12.0}
TOOK = {"difficulty": 76.0, "heldout": 48 * 60.0, "loo": 33.0}
REFITS = {"difficulty": 4, "heldout": 100, "loo": 1}


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def _replay(pace: RefitPace, clock: Clock, took: dict, refits: dict, cached: dict | None = None):
    """Run the analyses at ``took`` seconds each, refits evenly paced; yield (time, eta, actual left) at each
    refit's end and halfway through each refit."""
    cached = cached or {}
    total = sum(took.values())
    for name in pace.which:
        n = refits[name] - cached.get(name, 0)
        pace.report(name, cached.get(name, 0))
        per = took[name] / n if n else 0.0
        for k in range(1, n + 1):
            clock.t += per / 2
            yield clock.t, pace.eta(), total - clock.t
            clock.t += per / 2
            pace.report(name, cached.get(name, 0) + k)
            yield clock.t, pace.eta(), total - clock.t


def test_the_eta_follows_the_measured_run_within_1_5x_from_a_fifth_of_the_way():
    """The demo export that took 55 min against 14 estimated: from 20% of the way to 95% the ETA is within 1.5x
    of the time actually left (the plan alone said 13 min at 20%, where 44 were left)."""
    clock = Clock()
    pace = RefitPace(("difficulty", "heldout", "loo"), REFITS, {}, ESTIMATE, clock=clock)
    total = sum(TOOK.values())
    assert pace.eta() == pytest.approx(sum(ESTIMATE.values()))  # at the start: the plan
    checked = []
    for t, eta, left in _replay(pace, clock, TOOK, REFITS):
        if 0.2 * total <= t <= 0.95 * total:
            assert left / 1.5 <= eta <= left * 1.5, (t, eta, left)
            checked.append(eta / left)
    assert len(checked) > 100
    # at 20%, 50% and 80% of the way: the ratios of ETA to the time left
    ratios = {}
    for t, eta, left in _replay(RefitPace(("difficulty", "heldout", "loo"), REFITS, {}, ESTIMATE, clock=(c := Clock())),
                                c, TOOK, REFITS):
        for f in (0.2, 0.5, 0.8):
            if f not in ratios and t >= f * total:
                ratios[f] = eta / left
    assert all(0.67 <= r <= 1.5 for r in ratios.values()), ratios


def test_refits_found_in_the_cache_cost_nothing_and_count_for_nothing():
    """A resumed run: 40 of the 100 hold-out refits in the cache.  They are reported at once; the pace comes from
    the 60 sampled, at 30 s each (the plan said 10 s)."""
    clock = Clock()
    pace = RefitPace(("heldout",), {"heldout": 100}, {"heldout": 40}, {"heldout": 600.0}, clock=clock)
    pace.report("heldout", 40)  # the cache, at once
    assert pace.eta() == pytest.approx(600.0)
    for k in range(1, 31):
        clock.t += 30.0
        pace.report("heldout", 40 + k)
    # 30 refits in 900 s against 300 planned: 3x; the pace is measured from the first refit's end (the first also
    # pays the compile): 29 refits in 870 s against 290.  The run's ratio blends it with the plan's (60 s at 1x),
    # the analysis's own with the run's; the 40 refits from the cache do not dilute it (290 s planned, not 690)
    run = (60 + 870) / (60 + 290)
    assert pace.eta() == pytest.approx(300.0 * (60 * run + 870) / (60 + 290))
    assert pace.eta() > 2.5 * 300.0


def test_without_an_estimate_the_eta_is_the_measured_seconds_per_refit():
    clock = Clock()
    pace = RefitPace(("difficulty", "heldout"), {"difficulty": 4, "heldout": 10}, clock=clock)
    pace.report("difficulty", 0)
    assert pace.eta() is None
    clock.t = 20.0
    pace.report("difficulty", 2)
    assert pace.eta() == pytest.approx(10.0 * 12)


def test_the_progress_line_names_the_analysis_the_refits_and_the_time_left():
    assert progress_line("heldout - refits", 23, 105, 361.0) == "hold-out 23/105 refits, about 6 min left"
    assert progress_line("difficulty", 0, 105, None) == "difficulty 0/105 refits"


def test_the_batch_progress_counts_refits_only_and_an_overrunning_refit_holds_the_estimate():
    """Measured on the demo: difficulty's parent (a job reopened at once, not a refit) counted as a refit done in
    4.7 s, and the ETA fell from 876 s to 389 s; then a stratum that ran over its time took the next strata's
    time with it, and the ETA stood still at the other analyses' share."""
    from ddr_explorer.core.analyses.defaults import AnalysesPlan, BatchProgress

    clock, seen = Clock(), []
    plan = AnalysesPlan(("difficulty", "heldout"), {"difficulty": 4, "heldout": 20},
                        {"difficulty": 280.0, "heldout": 420.0}, 10)
    batch = BatchProgress(lambda *a: seen.append(a), plan, clock=clock)
    cb = batch.for_analysis("difficulty")
    cb("planned", 0, 5, None)  # the engine's 5 jobs: the parent and 4 strata
    assert seen[-1] == ("difficulty - planned", 0, 24, 700.0)
    clock.t = 5.0
    cb("compile", 1, 5, None)  # the parent, reopened: no refit done yet
    assert seen[-1][1] == 0 and seen[-1][3] == pytest.approx(695.0)
    clock.t = 200.0  # the first stratum runs past its 70 s: the three after it keep theirs
    cb("refits", 1, 5, None)
    assert seen[-1][3] == pytest.approx(3 * 70.0 + 420.0)
    clock.t = 210.0
    cb("refits", 2, 5, None)  # the first stratum ends; it paid the compile too: not yet a pace
    assert seen[-1][1] == 1 and seen[-1][3] == pytest.approx(3 * 70.0 + 420.0)
    clock.t = 420.0
    cb("refits", 3, 5, None)  # the second took 210 s against 70: the strata left at about 3x, blended
    overall = (70.0 * 1.0 + 210.0) / (70.0 + 70.0)
    own = (28.0 * overall + 210.0) / (28.0 + 70.0)
    assert seen[-1][1] == 2 and seen[-1][3] == pytest.approx(2 * 70.0 * own + 420.0 * overall)


def test_a_count_in_other_units_is_scaled_to_the_planned_refits():
    """A REML hold-out reports its splits (50), the plan counts 100 refits: 25 splits done is 50 refits."""
    from ddr_explorer.core.analyses.defaults import AnalysesPlan, BatchProgress

    seen = []
    batch = BatchProgress(lambda *a: seen.append(a), AnalysesPlan(("heldout",), {"heldout": 100}, {"heldout": 100.0}))
    cb = batch.for_analysis("heldout")
    cb("planned", 0, 50, None)
    cb("splits", 25, 50, None)
    assert seen[-1][1:3] == (50, 100)


#: A measured run of the demo's analyses (4 strata, 10 splits = 20 hold-out refits, one LOO refit; niced on a
#: 2-core box shared with four other sessions, load 5-8): seconds from the start at which each analysis started
#: and each of its refits ended, and the plan's estimate (12 min, with 123 s of compile x 16/13 in difficulty's
#: and the hold-out's; LOO reads difficulty's program from the compile cache).  It took 598 s.
MEASURED_PLAN = {"difficulty": 281.8, "heldout": 421.1, "loo": 21.1}
MEASURED_COMPILE = {"difficulty": 151.8, "heldout": 151.8, "loo": 0.0}
MEASURED_ENDS = {"difficulty": (0.2, [41.3, 106.1, 119.2, 180.9]),
                 "heldout": (187.2, [215.2, 238.7, 261.3, 277.3, 297.8, 313.9, 327.0, 338.8, 356.7, 371.2, 386.5,
                                     404.1, 421.2, 449.1, 468.5, 482.3, 501.3, 527.0, 541.7, 557.7]),
                 "loo": (558.2, [590.7])}
MEASURED_TOTAL = 598.5


def test_the_measured_demo_run_within_1_5x_at_a_fifth_half_and_four_fifths():
    """The first refit of an analysis pays its compile, which the plan prices from the parent's (152 s here,
    where the hold-out's first refit took 28 s in all): its time is left out of the pace.  Priced with it, the
    ETA read 0.58, 0.40 and 0.49 of the time left at 20%, 50% and 80% of this run."""
    clock = Clock()
    pace = RefitPace(("difficulty", "heldout", "loo"), {"difficulty": 4, "heldout": 20, "loo": 1}, {}, MEASURED_PLAN,
                     clock=clock, compile=MEASURED_COMPILE)
    events = sorted([(start, name, 0) for name, (start, _) in MEASURED_ENDS.items()]
                    + [(t, name, k + 1) for name, (_, ends) in MEASURED_ENDS.items() for k, t in enumerate(ends)])
    ratios = {}
    for t, name, done in events:
        for f in (0.2, 0.5, 0.8):  # the ETA at that moment of the run, between two reports
            if f not in ratios and t > f * MEASURED_TOTAL:
                clock.t = f * MEASURED_TOTAL
                ratios[f] = pace.eta() / ((1 - f) * MEASURED_TOTAL)
        clock.t = t
        pace.report(name, done)
    assert set(ratios) == {0.2, 0.5, 0.8} and all(1 / 1.5 <= r <= 1.5 for r in ratios.values()), ratios
