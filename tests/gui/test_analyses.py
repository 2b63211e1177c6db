"""The Analyses tab draws core's analyses result as it is; the window runs them in the background and cancels."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from ddr_explorer.gui.analyses_panel import AnalysesPanel  # noqa: E402
from ddr_explorer.core.files import demo_corpus_path  # noqa: E402
from ddr_explorer.gui.main_window import TABS, MainWindow  # noqa: E402

#: Shaped like ``ddr analyses --json`` (core.analyses.run_analyses) of a four-stratum, five-split run.
RESULTS = {
    "difficulty": {
        "strata": [{"label": f"Q{k} (easiest)" if k == 1 else f"Q{k} (hardest)" if k == 4 else f"Q{k}", "n_tasks": 22 + k, "mean_success": 0.1 * k,
                    "erho2": {"median": 0.5 + 0.1 * k, "lower95": 0.4 + 0.08 * k, "upper95": 0.6 + 0.09 * k},
                    "error": None} for k in range(1, 5)],
        "aggregate": {"median": 0.83, "lower95": 0.78, "upper95": 0.87}, "gap_aggregate_minus_hardest": 0.23,
        "design": {}, "n_fitted": 4, "n_cached": 0},
    "heldout": {"n_splits": 5, "pearson_r": 0.91, "spearman": 0.9, "mean_gap": -0.012, "train_fraction": 0.7,
                "splits": [{"split": k, "projected": 0.7 + 0.02 * k, "held_out": 0.69 + 0.021 * k,
                            "gap": 0.001 * k - 0.01, "n_train_trials": 100, "n_held_out_trials": 40, "error": None}
                           for k in range(4)]
                + [{"split": 4, "projected": None, "held_out": None, "gap": None, "n_train_trials": 100,
                    "n_held_out_trials": 40, "error": "sampler failed"}],
                "settings": None, "n_fitted": 10, "n_cached": 0, "n_fits": 8, "n_converged": 7},
    "loo": {"n_cells": 1000, "good": 990, "bad": 8, "very_bad": 2, "elpd_loo": -1234.5, "elpd_se": 21.0,
            "p_loo": 88.2, "max_pareto_k": 1.3, "from_cache": False},
}


def test_analyses_panel_draws_the_result(qtbot, tmp_path):
    panel = AnalysesPanel(RESULTS)
    qtbot.addWidget(panel)
    strata = RESULTS["difficulty"]["strata"]
    x, y = panel.difficulty_points.getData()
    np.testing.assert_array_equal(x, [1, 2, 3, 4])
    np.testing.assert_allclose(y, [s["erho2"]["median"] for s in strata])
    e = panel.difficulty_errors.opts
    np.testing.assert_allclose(e["y"] - e["bottom"], [s["erho2"]["lower95"] for s in strata])
    np.testing.assert_allclose(e["y"] + e["top"], [s["erho2"]["upper95"] for s in strata])
    assert panel.aggregate_line.value() == 0.83
    assert [panel.difficulty_table.item(r, 3).data(0x0100) for r in range(4)] == [s["erho2"]["median"] for s in strata]
    hx, hy = panel.heldout_points.getData()
    np.testing.assert_allclose(hx, [0.7 + 0.02 * k for k in range(4)])  # the failed split is listed, not drawn
    np.testing.assert_allclose(hy, [0.69 + 0.021 * k for k in range(4)])
    assert panel.heldout_table.rowCount() == 5 and panel.heldout_table.item(4, 4).data(0x0100) == "sampler failed"
    text = panel.summary.text()
    assert "Pearson r 0.910" in text and "2 very bad" in text and "max 1.30" in text
    for name in panel.plots():
        assert panel.export_plot(name, tmp_path / f"{name}.png").stat().st_size > 0
    for name in panel.tables():
        rows = panel.export_table(name, tmp_path / f"{name}.csv").read_text().splitlines()
        assert len(rows) == panel.tables()[name].rowCount() + 1


def test_analyses_run_in_the_background_and_cancel(qtbot, tmp_path):
    w = MainWindow()
    qtbot.addWidget(w)
    w.cache_dir = tmp_path
    assert not w.start_analyses() and "Open a corpus" in w.model_panel.message.text()
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(demo_corpus_path())
    w.state.update(sampler={"stop": "fixed", "draws": 10, "warmup": 10, "chains": 1})
    with qtbot.waitSignal(w.analyses_failed, timeout=600_000) as blocker:
        assert w.start_analyses(which=("difficulty",), n_strata=2)
        assert not w.start_fit()  # one long job at a time
        w.model_panel.cancel_button.click()
    assert "cancel" in blocker.args[0].lower()
    assert w.model_panel.progress.format() == "cancelled" and w.model_panel.fit_button.isEnabled()
    assert w.analyses is None and w.tabs.tabText(TABS.index("Analyses")) == "Analyses"


def test_analyses_panel_says_how_many_fits_converged_first(qtbot):
    panel = AnalysesPanel(RESULTS)
    qtbot.addWidget(panel)
    first = panel.summary.text().split("<br>")[0]
    # one text with `ddr analyses` (core.analyses.runner.convergence_lines)
    assert first == "heldout: 7 of 8 fits converged - its numbers rest on unconverged fits and are PROVISIONAL"


def _window_with_a_small_fit(qtbot, tmp_path):
    """A main window with a small simulated corpus open and fitted (the moment stand-in, fixed short run)."""
    import ddr_batch_fakes as bf

    from ddr_explorer.core.fitting import fit_corpus
    from ddr_explorer.core.model import SamplerSettings

    sim = bf.simulate_module().simulate_per_benchmark(n_tasks=8, n_models=4, n_scaffolds=2, n_pairs=8,
                                                      trials_per_cell=2, seed=9)
    path = tmp_path / "small.csv"
    sim.table.to_csv(path, index=False)
    w = MainWindow()
    qtbot.addWidget(w)
    w.cache_dir = tmp_path / "cache"
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(path)
    w.state.update(sampler={"stop": "fixed", "draws": 40, "warmup": 10, "chains": 2})
    w.fit_result = fit_corpus(w.corpus, "per-benchmark", SamplerSettings(stop="fixed", draws=40, warmup=10, chains=2),
                              cache_dir=w.cache_dir)
    return w


def _sheet_plan(seconds: dict, loo_refits: int = 0):
    """The sheet's plan with 4 strata, 2 splits (4 refits) and these estimated seconds per analysis."""
    from ddr_explorer.core.analyses.defaults import SHEET_DEFAULT, AnalysesPlan

    return AnalysesPlan(SHEET_DEFAULT, {"difficulty": 4, "heldout": 4, "loo": loo_refits}, seconds, 2)


def test_sheet_export_runs_the_default_analyses_first_under_the_budget(qtbot, tmp_path, fake_sampler, monkeypatch):
    """File > Export DDR sheet without the Analyses tab's results: under the budget the sheet's analyses run first
    (core's plan decides), then the sheet is written with them; over it, the sheet is written without them."""
    w = _window_with_a_small_fit(qtbot, tmp_path)
    over = _sheet_plan({"difficulty": 2000.0, "heldout": 2000.0, "loo": 950.0}, loo_refits=1)  # each over alone
    monkeypatch.setattr(MainWindow, "sheet_analyses_plan", lambda self: over)
    with qtbot.waitSignal(w.sheet_written, timeout=120_000):
        assert w.export_ddr_sheet(tmp_path / "a.pdf")
    assert w.analyses is None  # over the budget: not run (the dialog offers them; "skip" here)
    under = _sheet_plan({"difficulty": 1.0})
    monkeypatch.setattr(MainWindow, "sheet_analyses_plan", lambda self: under)
    with qtbot.waitSignal(w.sheet_written, timeout=300_000):
        assert w.export_ddr_sheet(tmp_path / "b.pdf")
    assert set(w.analyses) >= {"difficulty", "heldout", "loo"} and w.analyses["heldout"]["n_splits"] == 2
    assert "DDR sheet: analyses difficulty" in w.model_panel.log_text()


def test_sheet_export_over_the_budget_runs_the_analyses_that_fit_in_it(qtbot, tmp_path, fake_sampler, monkeypatch):
    """Over the budget together, the analyses that fit in it still run before the sheet (core's
    AnalysesPlan.within_budget): difficulty and PSIS-LOO, not the hold-out splits; the log says which was left."""
    w = _window_with_a_small_fit(qtbot, tmp_path)
    part = _sheet_plan({"difficulty": 1.0, "heldout": 2000.0, "loo": 0.0})
    monkeypatch.setattr(MainWindow, "sheet_analyses_plan", lambda self: part)
    with qtbot.waitSignal(w.sheet_written, timeout=300_000):
        assert w.export_ddr_sheet(tmp_path / "p.pdf")
    assert set(w.analyses) == {"difficulty", "loo"}
    log = w.model_panel.log_text()
    assert "DDR sheet: analyses difficulty (4 refits), loo (0 refits)" in log
    assert "not run: heldout" in log
    # after the run, each analysis's estimate beside what it took (the export once estimated 4 min, took 7.5)
    assert "DDR sheet: analyses estimated / took: difficulty 1 s / " in log and "; loo 0 s / " in log


def test_the_export_menu_estimates_the_sheet_analyses_off_the_gui_thread(qtbot, tmp_path, fake_sampler, monkeypatch):
    """File > Export DDR sheet: the plan (which looks up each refit of the sheet in the fit cache, seconds on
    TB2) is made on a worker thread; over the budget the dialog offers the run, and "No" writes the sheet
    without the analyses."""
    import threading

    from ddr_explorer.core.analyses import defaults
    from ddr_explorer.gui import main_window as mw

    w = _window_with_a_small_fit(qtbot, tmp_path)
    over = _sheet_plan({"difficulty": 1000.0, "heldout": 1000.0, "loo": 950.0})
    threads, asked = [], []

    def plan(corpus, posterior, **kw):
        threads.append(threading.current_thread())
        return over

    monkeypatch.setattr(defaults, "plan_sheet_analyses", plan)
    monkeypatch.setattr(mw.QFileDialog, "getSaveFileName", lambda *a, **k: (str(tmp_path / "menu"), "PDF (*.pdf)"))
    monkeypatch.setattr(mw.QMessageBox, "question", lambda _w, _t, text, *a: asked.append(text) or mw.QMessageBox.No)
    with qtbot.waitSignal(w.sheet_written, timeout=120_000) as sig:
        w._on_export_sheet()
    assert sig.args[0] == tmp_path / "menu.pdf" and (tmp_path / "menu.pdf").exists()
    assert threads and threads[0] is not threading.main_thread()
    assert len(threads) == 1  # the estimate made once, passed on (not made again on the GUI thread)
    assert asked and "8 refits, estimated 49 min" in asked[0]
    assert "No: the sheet says \"not run\" for difficulty and hold-out." in asked[0]  # none fits the budget alone
    assert w.analyses is None  # "No": the sheet says "not run" for them


def test_the_export_dialog_offers_all_the_analyses_those_in_the_budget_or_no_sheet(qtbot, tmp_path, fake_sampler,
                                                                                     monkeypatch):
    """Over the budget with some analyses inside it: the dialog names them and their estimate; "No" runs those
    only and writes the sheet, "Cancel" writes nothing."""
    from ddr_explorer.core.analyses import defaults
    from ddr_explorer.gui import main_window as mw

    w = _window_with_a_small_fit(qtbot, tmp_path)
    part = _sheet_plan({"difficulty": 120.0, "heldout": 2000.0, "loo": 0.0})
    monkeypatch.setattr(defaults, "plan_sheet_analyses", lambda corpus, posterior, **kw: part)
    answers, asked = [mw.QMessageBox.Cancel, mw.QMessageBox.No], []
    monkeypatch.setattr(mw.QFileDialog, "getSaveFileName", lambda *a, **k: (str(tmp_path / "menu"), "PDF (*.pdf)"))
    monkeypatch.setattr(mw.QMessageBox, "question", lambda _w, _t, text, *a: asked.append(text) or answers.pop(0))
    w._on_export_sheet()
    qtbot.waitUntil(lambda: w.statusBar().currentMessage() == "The DDR sheet was not written", timeout=60_000)
    assert not (tmp_path / "menu.pdf").exists() and w.analyses is None
    assert "No: run only difficulty and loo (estimated 2 min); the sheet says \"not run\" for heldout." in asked[0]
    with qtbot.waitSignal(w.sheet_written, timeout=300_000):
        w._on_export_sheet()
    assert (tmp_path / "menu.pdf").exists() and set(w.analyses) == {"difficulty", "loo"}


def test_analyses_panel_states_the_monte_carlo_se_and_the_refit_rule(qtbot):
    """The tab prints what ``ddr analyses --json`` says about precision: the hold-out r's and mean gap's MCSE,
    each stratum's, and the rule the refits ran under."""
    import copy

    results = copy.deepcopy(RESULTS)
    results["heldout"].update(pearson_r_mcse=0.0123, mean_gap_mcse=0.00045, refit_rule="precision")
    results["difficulty"]["refit_rule"] = "precision"
    for k, s in enumerate(results["difficulty"]["strata"], start=1):
        s["erho2_mcse"] = {"median": 0.001 * k, "q025": 0.002 * k, "q975": 0.003 * k}
    panel = AnalysesPanel(results)
    qtbot.addWidget(panel)
    text = panel.summary.text()
    assert "r \u00b10.012, mean gap \u00b10.0004" in text or "r \u00b10.012, mean gap \u00b10.0005" in text
    assert "Q1 \u00b10.0010 (ends \u00b10.0030); Q2 \u00b10.0020 (ends \u00b10.0060)" in text
    assert text.count("refits ran under the precision rule") == 2
    plain = AnalysesPanel(RESULTS)  # a result without them (an older run): nothing claimed
    qtbot.addWidget(plain)
    assert "Monte Carlo" not in plain.summary.text()
