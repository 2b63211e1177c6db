"""One ETA for the whole job: analyses started from the Analysis menu start from core's plan (made on the worker),
and an estimator comparison from each estimator's pace the last comparison measured here."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui


@pytest.fixture
def store(tmp_path):
    from PySide6.QtCore import QSettings

    return QSettings(str(tmp_path / "calibration.ini"), QSettings.IniFormat)


def test_a_comparison_says_nothing_before_it_was_measured_then_prices_every_estimator(store, clock):
    from ddr_explorer.gui.methods_eta import ComparisonEta, stored_pace

    first = ComparisonEta(("Henderson", "REML", "Bayes LMM"), 2000, store)
    assert first.report("REML", 10, 4000, None) is None and first.check_line() is None  # no number, not a wrong one
    first.measured_seconds({"Henderson": 1.0, "REML": 4.0, "Bayes LMM": 30.0, "Bayes GLMM": 0.1})
    first.remember()
    assert stored_pace(store, "Bayes LMM") == pytest.approx(15.0)  # seconds per 1,000 cells
    est = ComparisonEta(("Bayes LMM", "REML", "Henderson"), 4000, store, clock=clock)  # twice the cells
    assert est.total_seconds == pytest.approx(2.0 + 8.0 + 60.0)
    clock.t = 1.0  # Henderson (reports nothing) ran 1 s
    assert est.report("unknown", 0, 1, None) == pytest.approx(69.0)
    clock.t = 2.0
    assert est.report("REML", 5, 4000, None) == pytest.approx(8.0 + 60.0)  # REML starts: its 8 s and the LMM's 60
    clock.t = 12.0
    assert est.report("Bayes LMM warm-up", 100, 2000, None) == pytest.approx(60.0)  # REML done
    clock.t = 42.0
    assert est.report("Bayes LMM sampling", 1500, 2000, None) == pytest.approx(30.0)
    clock.t = 80.0
    est.measured_seconds({"Henderson": 2.0, "REML": 10.0, "Bayes LMM": 68.0})
    assert est.check_line() == ("ETA check: estimated 70.0 s for the whole comparison (4000 cells); it took 80.0 s "
                                "(estimated / took: Henderson 2.0 / 2.0 s; REML 8.0 / 10.0 s; "
                                "Bayes LMM 60.0 / 68.0 s)")


def _table(seconds):
    import ddr_explorer.core.estimators.methods as methods

    terms = ["task", "model", "residual"]
    return methods.MethodsTable(formula="y ~ 1 + (1|task) + (1|model)", terms=terms,
                                shares={e: dict(zip(terms, (0.3, 0.2, 0.5))) for e in seconds},
                                components={e: dict(zip(terms, (0.1, 0.05, 0.2))) for e in seconds},
                                coefficients={e: {"Erho2": 0.8, "Phi": 0.7} for e in seconds},
                                scales={e: "observed" for e in seconds}, seconds=dict(seconds))


def test_compare_estimators_shows_one_eta_calibrated_by_the_last_comparison(qtbot, monkeypatch, small_fit_window):
    """The first comparison measures each estimator; the second shows the whole comparison's ETA from those
    paces while REML runs, and logs the estimate against the time taken."""
    import ddr_explorer.core.estimators.methods as methods
    from ddr_explorer.gui.methods_eta import SETTINGS_GROUP

    w = small_fit_window
    w.settings.remove(SETTINGS_GROUP)  # the session's settings: another test's comparison may have stored paces
    n_cells = len(w.corpus.table)
    seconds = {"Henderson": 0.2, "REML": 3.0, "Bayes LMM": 200.0, "Laplace": 20.0, "DISCO": 0.5}
    gate = threading.Event()

    def fake(*a, progress=None, **k):
        progress("REML", 10, 4000, None)
        gate.wait(20)
        return _table(seconds)

    monkeypatch.setattr(methods, "methods_table", fake)
    mp = w.model_panel
    with qtbot.waitSignal(w.methods_finished, timeout=30_000):
        assert w.start_methods()
        qtbot.waitUntil(lambda: mp.progress.format().startswith("REML"), timeout=10_000)
        assert mp.eta_label.text() == ""  # never measured here: no ETA
        gate.set()
    assert "Estimate: none yet" in mp.log_text() and "for the whole comparison" not in mp.log_text()
    gate.clear()
    with qtbot.waitSignal(w.methods_finished, timeout=30_000):
        assert w.start_methods()
        qtbot.waitUntil(lambda: mp.progress.format().startswith("REML"), timeout=10_000)
        # REML has just started: its 3 s, then the LMM's 200, Laplace's 20 and DISCO's 0.5 (same corpus)
        assert mp.eta_label.text() in ("ETA 3 min 43 s", "ETA 3 min 44 s", "ETA 3 min 42 s")
        gate.set()
    log = mp.log_text()
    assert f"Estimate: the whole comparison 224 s on {n_cells} cells" in log
    assert f"ETA check: estimated 223.7 s for the whole comparison ({n_cells} cells); it took" in log
    assert "Bayes LMM 200.0 / 200.0 s" in log


def test_analyses_from_the_menu_start_from_cores_plan_made_on_the_worker(qtbot, monkeypatch, small_fit_window):
    """Analysis > Run analyses (no plan given): the plan (fit-cache look-ups, seconds on TB2) is made on the worker,
    the ETA starts from it, and the log prints the estimate beside the time taken."""
    import ddr_explorer.core.analyses as analyses
    from ddr_explorer.core.analyses import defaults

    w = small_fit_window
    threads, gate = [], threading.Event()
    plan = defaults.AnalysesPlan(("loo",), {"loo": 1}, {"loo": 90.0}, 10)

    def fake_plan(corpus, posterior, **kw):
        threads.append(threading.current_thread())
        assert kw["which"] == ("loo",) and kw["n_splits"] == 50  # the sheet's splits
        return plan

    def fake_run(corpus, which, spec, settings, *, progress=None, timings=None, **k):
        progress("loo - refits", 0, 1, None)
        gate.wait(20)
        timings["loo"] = 1.5
        return ["study"]

    loo = {"n_cells": 100, "good": 100, "bad": 0, "very_bad": 0, "elpd_loo": -50.0, "elpd_se": 3.0, "p_loo": 9.0,
           "max_pareto_k": 0.3, "from_cache": False}
    monkeypatch.setattr(defaults, "plan_sheet_analyses", fake_plan)
    monkeypatch.setattr(analyses, "run_analysis_studies", fake_run)
    monkeypatch.setattr(analyses, "studies_to_dict", lambda studies: {"loo": loo})
    monkeypatch.setattr(analyses, "sheet_analyses", lambda studies: {})
    mp = w.model_panel
    with qtbot.waitSignal(w.analyses_finished, timeout=30_000):
        assert w.start_analyses(which=("loo",))
        qtbot.waitUntil(lambda: mp.eta_label.text().startswith("ETA 1 min"), timeout=10_000)  # the plan's 90 s
        gate.set()
    assert threads and threads[0] is not threading.main_thread()
    log = mp.log_text()
    assert "Estimate: analyses loo (1 refit): 1 refits, estimated 2 min on this machine" in log
    assert "Analyses: analyses estimated / took: loo 2 min / 2 s; total 2 min estimated, 2 s taken" in log
    assert "ETA check: estimated 90.0 s for the whole job" in log
