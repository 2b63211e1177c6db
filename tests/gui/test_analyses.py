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


def _sheet_plan(seconds: dict, loo_refits: int = 0):
    """The sheet's plan with 4 strata, 2 splits (4 refits) and these estimated seconds per analysis."""
    from ddr_explorer.core.analyses.defaults import SHEET_DEFAULT, AnalysesPlan

    return AnalysesPlan(SHEET_DEFAULT, {"difficulty": 4, "heldout": 4, "loo": loo_refits}, seconds, 2)


def test_sheet_export_runs_the_default_analyses_first_under_the_budget(qtbot, tmp_path, fake_sampler, monkeypatch,
                                                                       small_fit_window):
    """File > Export DDR sheet without the Analyses tab's results: under the budget the sheet's analyses run first
    (core's plan decides), then the sheet is written with them; over it, the sheet is written without them."""
    w = small_fit_window
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


def test_sheet_export_over_the_budget_runs_the_analyses_that_fit_in_it(qtbot, tmp_path, fake_sampler, monkeypatch,
                                                                       small_fit_window):
    """Over the budget together, the analyses that fit in it still run before the sheet (core's
    AnalysesPlan.within_budget): difficulty and PSIS-LOO, not the hold-out splits; the log says which was left."""
    w = small_fit_window
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


def _no_yes_no_question(*_args, **_kw):
    raise AssertionError("the sheet's question must not be a Yes / No / Cancel box")


def _button(box, text: str):
    """The button of the sheet's question whose label starts with ``text``."""
    found = [b for b in box.buttons() if b.text().startswith(text)]
    assert len(found) == 1, [b.text() for b in box.buttons()]
    return found[0]


def test_the_export_menu_estimates_the_sheet_analyses_off_the_gui_thread(qtbot, tmp_path, fake_sampler, monkeypatch,
                                                                         small_fit_window):
    """File > Export DDR sheet: the plan (which looks up each refit of the sheet in the fit cache, seconds on
    TB2) is made on a worker thread; over the budget the question offers the run on a button that says its
    estimate, and "Write the sheet without them" writes it without the analyses."""
    import threading

    from ddr_explorer.core.analyses import defaults
    from ddr_explorer.gui import main_window as mw

    w = small_fit_window
    over = _sheet_plan({"difficulty": 1000.0, "heldout": 1000.0, "loo": 950.0})
    threads = []

    def plan(corpus, posterior, **kw):
        threads.append(threading.current_thread())
        return over

    monkeypatch.setattr(defaults, "plan_sheet_analyses", plan)
    monkeypatch.setattr(mw.QFileDialog, "getSaveFileName", lambda *a, **k: (str(tmp_path / "menu"), "PDF (*.pdf)"))
    monkeypatch.setattr(mw.QMessageBox, "question", _no_yes_no_question)
    w._on_export_sheet()
    qtbot.waitUntil(lambda: getattr(w, "sheet_question", None) is not None and w.sheet_question.isVisible(),
                    timeout=20_000)
    box = w.sheet_question
    assert "8 refits, estimated 49 min" in box.text()
    # none fits the budget alone: the sheet now is the default
    assert [b.text() for b in box.buttons()] == ["Write the sheet now (decisions 2, 4 not run)",
                                                 "Difficulty only (about 17 min)", "Everything (about 49 min)", "Cancel"]
    assert box.defaultButton().text().startswith("Write the sheet now")
    with qtbot.waitSignal(w.sheet_written, timeout=120_000) as sig:
        _button(box, "Write the sheet now").click()
    assert sig.args[0] == tmp_path / "menu.pdf" and (tmp_path / "menu.pdf").exists()
    assert threads and threads[0] is not threading.main_thread()
    assert len(threads) == 1  # the estimate made once, passed on (not made again on the GUI thread)
    assert w.analyses is None  # the sheet says "not run" for them


def test_the_export_dialog_buttons_say_what_they_run_and_for_how_long(qtbot, tmp_path, fake_sampler, monkeypatch,
                                                                      small_fit_window):
    """Over the budget with difficulty inside it: "Write the sheet now", "Difficulty only (about 2 min)",
    "Everything (about 35 min)" and "Cancel"; Cancel writes nothing, "Difficulty only" runs it alone and writes
    the sheet (decision 4 "not run")."""
    from ddr_explorer.core.analyses import defaults
    from ddr_explorer.gui import main_window as mw

    w = small_fit_window
    part = _sheet_plan({"difficulty": 120.0, "heldout": 2000.0, "loo": 0.0})
    monkeypatch.setattr(defaults, "plan_sheet_analyses", lambda corpus, posterior, **kw: part)
    monkeypatch.setattr(mw.QFileDialog, "getSaveFileName", lambda *a, **k: (str(tmp_path / "menu"), "PDF (*.pdf)"))
    monkeypatch.setattr(mw.QMessageBox, "question", _no_yes_no_question)
    w._on_export_sheet()
    qtbot.waitUntil(lambda: getattr(w, "sheet_question", None) is not None and w.sheet_question.isVisible(),
                    timeout=20_000)
    box = w.sheet_question
    assert [b.text() for b in box.buttons()] == ["Write the sheet now (decisions 2, 4 not run)",
                                                 "Difficulty only (about 2 min)", "Everything (about 35 min)", "Cancel"]
    assert box.defaultButton().text().startswith("Difficulty only")
    assert "not run\" for hold-out and LOO" in _button(box, "Difficulty only").toolTip()
    _button(box, "Cancel").click()
    qtbot.waitUntil(lambda: w.statusBar().currentMessage() == "The DDR sheet was not written", timeout=10_000)
    assert not (tmp_path / "menu.pdf").exists() and w.analyses is None
    w._on_export_sheet()
    qtbot.waitUntil(lambda: w.sheet_question is not box and w.sheet_question.isVisible(), timeout=60_000)
    with qtbot.waitSignal(w.sheet_written, timeout=300_000):
        _button(w.sheet_question, "Difficulty only").click()
    assert (tmp_path / "menu.pdf").exists() and set(w.analyses) == {"difficulty"}
    assert "DDR sheet: analyses difficulty (4 refits)" in w.model_panel.log_text()
    assert "(not run: heldout, loo)" in w.model_panel.log_text()


def test_the_export_asks_even_when_the_estimate_is_under_the_budget(qtbot, tmp_path, fake_sampler, monkeypatch,
                                                                     small_fit_window):
    """An estimate under the 15-minute default once went straight into the refits (105 of them, 55 min on a
    loaded box): the menu now always asks, "Everything" the default, each button with its estimate."""
    from ddr_explorer.core.analyses import defaults
    from ddr_explorer.gui import main_window as mw

    w = small_fit_window
    under = _sheet_plan({"difficulty": 360.0, "heldout": 480.0, "loo": 12.0}, loo_refits=1)  # 14 min in all
    monkeypatch.setattr(defaults, "plan_sheet_analyses", lambda corpus, posterior, **kw: under)
    monkeypatch.setattr(mw.QFileDialog, "getSaveFileName", lambda *a, **k: (str(tmp_path / "under"), "PDF (*.pdf)"))
    w._on_export_sheet()
    qtbot.waitUntil(lambda: getattr(w, "sheet_question", None) is not None and w.sheet_question.isVisible(),
                    timeout=20_000)
    box = w.sheet_question
    assert w.analyses_task is None or not w.analyses_task.running  # nothing started before the answer
    assert [b.text() for b in box.buttons()] == ["Write the sheet now (decisions 2, 4 not run)",
                                                 "Difficulty only (about 6 min)", "Everything (about 14 min)", "Cancel"]
    assert box.defaultButton().text().startswith("Everything")
    assert "9 refits, estimated 14 min" in box.text() and "over the 15-minute default" not in box.text()
    seen = []
    w.statusBar().messageChanged.connect(seen.append)
    with qtbot.waitSignal(w.sheet_written, timeout=300_000):
        _button(box, "Everything").click()
    assert set(w.analyses) == {"difficulty", "heldout", "loo"}
    # the status bar followed the run ("Running the DDR sheet's analyses: hold-out 6/9 refits, about ... left")
    lines = [m for m in seen if m.startswith("Running the DDR sheet's analyses: ")]
    assert lines and all(" refits" in m for m in lines), seen
    assert any(m.startswith("Running the DDR sheet's analyses: hold-out ") and "/9 refits, about " in m
               for m in lines), lines


def _pdf_text(path) -> str:
    from pypdf import PdfReader

    return "\n".join(p.extract_text() for p in PdfReader(str(path)).pages)


def test_the_sheet_states_the_observed_design_as_observed_and_the_sliders_as_a_what_if(qtbot, tmp_path, fake_sampler,
                                                                                       small_fit_window):
    """After the D-study sliders move, File > Export DDR sheet still prints the corpus's own design as
    "Observed design" (8 tasks x 2 scaffolds x 2 trials) and the sliders' sizes under "Design examined", with
    the coefficient of each; without a move there is no what-if line."""
    import re

    w = small_fit_window
    with qtbot.waitSignal(w.sheet_written, timeout=120_000):
        assert w.export_ddr_sheet(tmp_path / "observed.pdf", date_invariant=True, analyses="skip")
    text = " ".join(_pdf_text(tmp_path / "observed.pdf").split())
    assert "Observed design: 8 tasks" in text and "Design examined" not in text
    w.state.update(n_tasks=42, n_scaffolds=6, n_replicates=3)  # what the sliders write
    with qtbot.waitSignal(w.sheet_written, timeout=120_000):
        assert w.export_ddr_sheet(tmp_path / "what-if.pdf", date_invariant=True, analyses="skip")
    text = " ".join(_pdf_text(tmp_path / "what-if.pdf").split())
    observed = re.search(r"Observed design: (.*?) \(medians of the corpus", text).group(1)
    assert observed.startswith("8 tasks") and "2 scaffolds" in observed and "2 trials" in observed
    examined = re.search(r"Design examined \(what-if\): (.*?): E", text).group(1)
    assert examined.startswith("42 tasks") and "6 scaffolds" in examined and "3 trials" in examined
    assert "Every estimand of the observed design" in text and "Every estimand of the design examined" in text
    assert "The observed 42 tasks" not in text


def test_the_sheet_prints_the_estimator_comparison_the_app_ran(qtbot, tmp_path, fake_sampler, monkeypatch,
                                                               small_fit_window):
    """After Analysis > Compare estimators, the exported sheet has the comparison's table and the observed-scale
    Bayesian LMM's score reliability (page 1's notice for a claim about scores), not "was not run or failed";
    the sheet's own analyses are still offered (the comparison is not one of them)."""
    import ddr_explorer.core.estimators.methods as methods
    from ddr_explorer.core.estimators.bayes_lmm import ScoreReliability
    from ddr_explorer.core.formatting import fmt_coef
    from ddr_explorer.core.reliability import summarize

    rng = np.random.default_rng(4)
    erho = rng.beta(60, 6, 400)
    phi = erho * rng.beta(40, 6, 400)
    score = ScoreReliability(object_of_measurement="model", sizes={"task": 8}, phi=summarize(phi),
                             erho2=summarize(erho), gap=summarize(erho - phi), converged=True,
                             verdict={"converged": True, "problems": []})
    terms = ["task", "model", "residual"]
    table = methods.MethodsTable(formula="y ~ 1 + (1|task) + (1|model)", terms=terms,
                                 shares={"REML": dict(zip(terms, (0.3, 0.2, 0.5)))},
                                 components={"REML": dict(zip(terms, (0.1, 0.05, 0.2)))},
                                 coefficients={"REML": {"Erho2": 0.8, "Phi": 0.7}}, scales={"REML": "observed"},
                                 seconds={"REML": 0.1}, score_reliability=score)
    monkeypatch.setattr(methods, "methods_table", lambda *a, **k: table)  # the comparison's own tests: estimators/
    w = small_fit_window
    w.state.update(claim="absolute")
    with qtbot.waitSignal(w.sheet_written, timeout=120_000):
        assert w.export_ddr_sheet(tmp_path / "before.pdf", date_invariant=True, analyses="skip")
    assert "was not run or failed" in " ".join(_pdf_text(tmp_path / "before.pdf").split())
    with qtbot.waitSignal(w.methods_finished, timeout=60_000):
        assert w.start_methods()
    assert w.analyses_for_sheet["score_reliability"] is score and not w._sheet_refits_all_done()
    with qtbot.waitSignal(w.sheet_written, timeout=120_000):
        assert w.export_ddr_sheet(tmp_path / "after.pdf", date_invariant=True, analyses="skip")
    text = " ".join(_pdf_text(tmp_path / "after.pdf").split())
    assert "was not run or failed" not in text
    assert "Estimators compared" in text and "On the observed (0/1) scale" in text
    assert f"score reliability \u03a6 {fmt_coef(score.phi.median)}" in text


def test_bad_pareto_k_comes_with_a_warning_and_advice(qtbot):
    """821 bad and 95 very bad Pareto k (TB2's PSIS-LOO): the Analyses and Diagnostics tabs warn and advise."""
    import pandas as pd

    from ddr_explorer.core.model.diagnostics import Diagnostics
    from ddr_explorer.gui.diagnostics_panel import DiagnosticsPanel

    loo = {"n_cells": 7209, "good": 6293, "bad": 821, "very_bad": 95, "elpd_loo": -9000.0, "elpd_se": 60.0,
           "p_loo": 900.0, "max_pareto_k": 1.6, "from_cache": True}
    panel = AnalysesPanel({"loo": loo})
    qtbot.addWidget(panel)
    text = panel.summary.text()
    assert "916 of 7,209 cells (13%) have Pareto k above 0.7" in text and "K-fold cross-validation" in text
    terms = ["mu", "task", "model", "scaffold", "task:model", "task:scaffold", "model:scaffold"]
    table = pd.DataFrame({"mean": 1.0, "sd": 0.1, "r_hat": 1.001, "ess_bulk": 900.0, "ess_tail": 800.0}, index=terms)
    diag = Diagnostics(table=table, divergences=0, ebfmi=np.array([0.9, 0.9]), converged=True, n_draws=800)
    dp = DiagnosticsPanel(diag, {"device": "CPU"}, None, loo)
    qtbot.addWidget(dp)
    dp.resize(1280, 720)
    dp.show()
    qtbot.waitExposed(dp)
    assert "warning: 916 of 7,209 cells" in dp.verdict.text()
    # every row of the table is on screen (it showed 3 of 6)
    t = dp.table
    assert t.rowViewportPosition(len(terms) - 1) + t.rowHeight(len(terms) - 1) <= t.viewport().height()


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


def _cancel_after(monkeypatch, n: int) -> dict:
    """Wrap the fake refit contract: count the refits sampled, and cancel (as the Cancel button does, inside the
    sampler) once ``n`` of them finished, while ``n`` is not None (``state["cancel_after"]``)."""
    import ddr_explorer.core.model.refit as refit
    from ddr_explorer.core.model import FitCancelled

    inner = refit.fit_refits
    state = {"sampled": 0, "cancel_after": n}

    def fit_refits(design, spec, requests, settings=None, *, on_result=None, **kw):
        def kept(i, post):
            if on_result is not None:
                on_result(i, post)  # the engine stores it in the cache
            state["sampled"] += 1
            if state["cancel_after"] is not None and state["sampled"] >= state["cancel_after"]:
                raise FitCancelled("refits cancelled by the user.")
        return inner(design, spec, requests, settings, on_result=kept, **kw)

    monkeypatch.setattr(refit, "fit_refits", fit_refits)
    return state


def test_a_cancelled_export_keeps_its_refits_and_the_next_export_runs_only_the_rest(qtbot, tmp_path, fake_sampler,
                                                                                    monkeypatch, small_fit_window):
    """Cancelling an export half way wrote no sheet and the next export started again from zero: now every
    refit finished before the cancel is in the cache, the next plan counts it, and the next export samples only
    the remaining ones."""
    from ddr_explorer.core.analyses import engine
    from ddr_explorer.core.analyses.defaults import plan_sheet_analyses

    w = small_fit_window
    monkeypatch.setattr(engine, "GATE_RERUN", False)  # the count of refits exact: no gate rerun of the stand-in

    def plan(self):
        return plan_sheet_analyses(self.corpus, self.fit_result.posterior, cache_dir=self.cache_dir, n_splits=2)

    monkeypatch.setattr(MainWindow, "sheet_analyses_plan", plan)
    first = plan(w)
    total = first.total_refits - sum(first.n_cached.values())
    assert total >= 8  # 4 strata and 2 splits x 2 parts at least
    state = _cancel_after(monkeypatch, 5)
    with qtbot.waitSignal(w.analyses_failed, timeout=120_000):
        assert w.export_ddr_sheet(tmp_path / "cancelled.pdf", analyses="run")
    assert state["sampled"] == 5 and not (tmp_path / "cancelled.pdf").exists()
    assert "the next export resumes from them" in w.statusBar().currentMessage()
    again = plan(w)
    assert sum(again.n_cached.values()) - sum(first.n_cached.values()) == 5  # the 5 finished are in the cache
    assert "in the cache" in again.describe()
    state["sampled"], state["cancel_after"] = 0, None
    with qtbot.waitSignal(w.sheet_written, timeout=120_000):
        assert w.export_ddr_sheet(tmp_path / "resumed.pdf", analyses="run")
    assert state["sampled"] == total - 5  # only the rest
    assert set(w.analyses) == {"difficulty", "heldout", "loo"} and w.analyses["heldout"]["n_splits"] == 2


def test_the_analyses_tab_shows_its_cached_results_after_a_restart(qtbot, tmp_path, fake_sampler, monkeypatch,
                                                                   small_fit_window):
    """The Analyses tab runs the sheet's splits; after a restart (a new window on the same cache) the tab shows
    the results of that run without its button being pressed again, sampling nothing."""
    from ddr_explorer.core.analyses import defaults, engine
    from ddr_explorer.gui.analyses_panel import AnalysesPanel

    monkeypatch.setattr(engine, "GATE_RERUN", False)
    monkeypatch.setattr(defaults, "SHEET_SPLITS", 2)  # the sheet's splits, small here
    w = small_fit_window
    with qtbot.waitSignal(w.analyses_finished, timeout=120_000):
        assert w.start_analyses()
    assert w.analyses["heldout"]["n_splits"] == 2
    state = _cancel_after(monkeypatch, None)
    w2 = MainWindow()
    qtbot.addWidget(w2)
    w2.cache_dir = w.cache_dir
    w2.state.update(sampler={"stop": "fixed", "draws": 40, "warmup": 10, "chains": 2})
    with qtbot.waitSignal(w2.corpus_loaded, timeout=60_000):
        w2.open_corpus(tmp_path / "small.csv")
    from ddr_explorer.gui.cached_fit import reopen_cached_fit

    if w2.fit_result is None:
        reopen_cached_fit(w2)
    qtbot.waitUntil(lambda: w2.fit_result is not None, timeout=60_000)
    qtbot.waitUntil(lambda: w2.analyses is not None, timeout=60_000)
    assert isinstance(w2.analyses_panel, AnalysesPanel) and w2._slots["Analyses"].child is w2.analyses_panel
    assert w2.analyses["heldout"]["n_splits"] == 2 and state["sampled"] == 0
    assert {"difficulty", "held_out", "loo"} <= set(w2.analyses_for_sheet)  # the export writes them at once
    assert "shown from it" in w2.model_panel.log_text()
