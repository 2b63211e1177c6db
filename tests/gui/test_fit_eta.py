"""The Model tab's ETA is the whole fit's (compile, warmup and sampling), and the log checks it against the time taken."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytestmark = pytest.mark.gui

from ddr_explorer.core.model.posterior import SamplerSettings  # noqa: E402
from ddr_explorer.core.session import AnalysisState  # noqa: E402
from ddr_explorer.gui.fit_eta import WholeFitEta, calibration  # noqa: E402
from ddr_explorer.gui.model_panel import ModelPanel  # noqa: E402


def test_warmup_eta_includes_the_draws_still_to_come(clock):
    est = WholeFitEta(warmup=300, draws=200, clock=clock)
    clock.t = 10.0
    assert est.report("compile", 0, 1, None) is None  # nothing measured yet: no number rather than a wrong one
    clock.t = 20.0
    est.report("compile", 1, 1, None)
    clock.t = 35.0
    # half the warmup left at 0.1 s per iteration: 15 s of warmup, then 200 draws at that pace
    assert est.report("warmup", 150, 300, 15.0) == pytest.approx(15.0 + 200 * 0.1)
    assert est.report("sampling", 50, 200, 15.0) == 15.0
    clock.t = 70.0
    assert est.check_line() == "ETA check: estimated 70.0 s for the whole fit when 35.0 s into it; it took 70.0 s"
    assert est.compile_measured() == pytest.approx(10.0)


def test_compile_eta_from_the_last_fit_measured_here(clock):
    est = WholeFitEta(warmup=300, draws=200, compile_seconds=12.0, seconds_per_iteration=0.05, clock=clock)
    est.report("compile", 0, 1, None)
    clock.t = 2.0
    assert est.report("compile", 0, 1, None) == pytest.approx(10.0 + 500 * 0.05)


def test_other_jobs_keep_their_own_eta():
    assert WholeFitEta(300, 200).report("refits", 3, 10, 42.0) == 42.0


def test_model_tab_shows_the_whole_fit_eta_and_logs_the_check(qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    store = QSettings(str(tmp_path / "calibration.ini"), QSettings.IniFormat)
    panel = ModelPanel(AnalysisState())
    qtbot.addWidget(panel)
    panel.set_running(True)
    panel.start_whole_eta(SamplerSettings(stop="fixed", warmup=300, draws=200), store)
    panel.show_progress("compile", 0, 1, None)
    panel.show_progress("compile", 1, 1, None)
    panel.show_progress("warmup", 150, 300, 15.0)
    assert panel.eta_label.text() == "ETA 35 s"  # 15 s of warmup and 20 s of draws, not 15 s
    panel.show_progress("sampling", 100, 200, 9.0)
    assert panel.eta_label.text() == "ETA 9 s"
    panel.finish("done")
    assert "ETA check: estimated" in panel.log_text() and "it took" in panel.log_text()
    compile_s, pace = calibration(store)
    assert compile_s is not None and pace == pytest.approx(0.1)


def test_a_planned_job_starts_at_the_plan_then_shows_cores_time_left(clock):
    from ddr_explorer.gui.fit_eta import PlannedJobEta

    est = PlannedJobEta(600.0, clock=clock)
    clock.t = 30.0
    assert est.report("difficulty - compile", 0, 24, None) == pytest.approx(570.0)  # compiling: the plan says
    clock.t = 300.0
    # half done; core's time left (the plan re-estimated by the refits' pace, core/analyses/pace.py) says 500 s
    # more where the plan alone says 300: core's, not a blend of the plan with it a second time
    assert est.report("heldout - refits", 12, 24, 500.0) == pytest.approx(500.0)
    clock.t = 640.0
    assert est.check_line() == ("ETA check: estimated 600.0 s for the whole job (the plan made before it); "
                                "it took 640.0 s")


def test_the_analyses_log_compares_the_plan_with_the_time_taken(qtbot):
    panel = ModelPanel(AnalysisState())
    qtbot.addWidget(panel)
    panel.set_running(True)
    panel.start_planned_eta(120.0)
    panel.show_progress("difficulty - compile", 0, 5, None)
    assert panel.eta_label.text() in ("ETA 2 min 00 s", "ETA 1 min 59 s")  # the plan, before any pace
    panel.finish("done")
    assert "ETA check: estimated 120.0 s for the whole job" in panel.log_text()


def test_an_optimisers_budget_is_not_shown_as_its_length(qtbot):
    """Compare estimators sat at "REML: 4000 / 4000, ETA 0 s" while the next estimator compiled."""
    panel = ModelPanel(AnalysisState())
    qtbot.addWidget(panel)
    panel.set_running(True)
    panel.show_progress("REML", 455, 4000, None)
    assert panel.progress.format() == "REML: 455 evaluations (at most 4000)" and panel.eta_label.text() == ""
    panel.show_progress("REML", 4000, 4000, 0.0)
    assert panel.progress.format() == "REML done; the next estimator starts\u2026"
    assert panel.progress.maximum() == 0 and panel.eta_label.text() == ""  # busy, no "ETA 0 s"
