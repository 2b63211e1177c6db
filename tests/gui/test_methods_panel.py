"""The Methods tab draws core's method comparison as it is; the window runs it in the background and cancels."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

import ddr_explorer.core.estimators.bayes_lmm as bayes_lmm_module  # noqa: E402
from ddr_batch_fakes import lmm_stand_in  # noqa: E402
from ddr_explorer.core.estimators.bayes_lmm import BayesLmmSettings  # noqa: E402
from ddr_explorer.core.estimators.methods import methods_table  # noqa: E402
from ddr_explorer.core.formatting import fmt_coef  # noqa: E402
from ddr_explorer.core.model.formula import preset  # noqa: E402
from ddr_explorer.gui.main_window import TABS, MainWindow  # noqa: E402
from ddr_explorer.gui.methods_panel import MethodsPanel  # noqa: E402

#: A small unbalanced crossed binary corpus (one benchmark, 1,292 cells): the estimators' own fixture.
CELLS = Path(__file__).parents[1] / "estimators" / "fixtures" / "binary_cells.csv"
TERMS = ["task", "model", "scaffold", "task:model", "task:scaffold", "model:scaffold"]


def _posterior():
    """A posterior-like object of the per-benchmark model: sigma draws (2 chains x 3 draws)."""
    rng = np.random.default_rng(0)
    return SimpleNamespace(sigma={t: rng.uniform(0.3, 2.0, (2, 3)) for t in TERMS}, spec=preset("per-benchmark"))


#: A short Bayesian LMM run (its own tests are in tests/estimators/test_bayes_lmm.py).
LMM = BayesLmmSettings(warmup=250, draws=250, thin=2, max_draws=500)


@pytest.fixture(scope="module")
def table():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bayes_lmm_module, "bayes_lmm", lmm_stand_in)  # the panel draws the table, any fit will do
        return methods_table(pd.read_csv(CELLS), "per-benchmark", posterior=_posterior(), lmm_settings=LMM)


def _assert_shows(panel: MethodsPanel, table) -> None:
    """Every cell of the panel is core's number, printed through core.formatting."""
    assert panel.estimators == table.estimators
    assert panel.terms == table.terms
    rows = [*table.terms, "Erho2", "Phi"]
    for r, row in enumerate(rows):
        for c, est in enumerate(table.estimators, start=1):
            want = table.coefficients[est][row] if row in ("Erho2", "Phi") else table.shares[est][row]
            got = panel.cell(row, est)
            assert (math.isnan(got) and math.isnan(want)) or got == want, (row, est)
            assert panel.table.item(r, c).text() == fmt_coef(want)


def test_methods_panel_shows_core_numbers(qtbot, tmp_path, table):
    panel = MethodsPanel(table)
    qtbot.addWidget(panel)
    assert table.estimators == ["Henderson", "REML", "Bayes LMM", "Laplace", "Bayes GLMM", "DISCO"]
    _assert_shows(panel, table)
    assert panel.table.rowCount() == len(TERMS) + 3 and panel.table.columnCount() == 7
    lmm_head = "Bayes LMM\n(observed" + ("" if table.converged("Bayes LMM") else ", NOT converged") + ")"
    assert panel.table.horizontalHeaderItem(3).text() == lmm_head
    assert panel.table.horizontalHeaderItem(4).text() == "Laplace\n(logit)"
    # DISCO has no residual row and no Phi: shown as n/a, never as a number
    assert panel.table.item(len(TERMS), 6).text() == "n/a" and panel.table.item(len(TERMS) + 2, 6).text() == "n/a"
    # seed 000 G.5 in the summary: the Bayes LMM's score Phi (with its interval) below its ranking Erho2
    gap = table.score_gap()
    assert gap["Phi"] < gap["Erho2"]
    assert "score reliability is lower than ranking reliability" in panel.score_gap
    assert f"\u03a6 {fmt_coef(gap['Phi'])} [{fmt_coef(gap['Phi_hdi95'][0])}, " in panel.score_gap
    assert panel.score_gap in panel.summary.text()
    assert panel.table.item(len(TERMS) + 1, 0).text() == "E\u03c1\u00b2 (model)"
    assert panel.table.item(0, 2).text() == f"{table.shares['REML']['task']:.3f}"
    # the JSON form (``ddr methods --json``) draws the same table
    again = MethodsPanel(table.to_dict())
    qtbot.addWidget(again)
    _assert_shows(again, table)
    assert "formula: " + table.formula in panel.summary.text().replace("&lt;", "<").replace("&gt;", ">")
    # CSV keeps core's unrounded values and one-line headers
    rows = list(csv.reader(panel.export_table("Variance shares by estimator", tmp_path / "m.csv").open()))
    lmm = "Bayes LMM (observed" + ("" if table.converged("Bayes LMM") else ", NOT converged") + ")"
    assert rows[0] == ["facet", "Henderson (observed)", "REML (observed)", lmm, "Laplace (logit)",
                       "Bayes GLMM (logit)", "DISCO (distance)"]
    assert float(rows[1][2]) == table.shares["REML"]["task"]
    assert rows[len(TERMS) + 2][0] == "Erho2 (model)"


def test_window_compares_the_estimators_in_the_background(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(bayes_lmm_module, "bayes_lmm", lmm_stand_in)  # the worker thread calls it too
    w = MainWindow()
    qtbot.addWidget(w)
    w.cache_dir = tmp_path
    assert not w.start_methods() and "Open a corpus" in w.model_panel.message.text()
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(CELLS)
    spec = w.state.model_spec()
    assert spec.formula == preset("per-benchmark").formula
    w.fit_result = SimpleNamespace(posterior=_posterior())  # the current fit fills the Bayes column
    with qtbot.waitSignal(w.methods_finished, timeout=300_000) as blocker:
        assert w.start_methods(lmm_settings=LMM)
        # returned at once: the work runs on a worker thread, and only one long job runs at a time
        assert w.methods_task.running and not w.start_fit() and not w.start_methods()
        assert w.model_panel.cancel_button.isEnabled()
    result = blocker.args[0]
    assert w.tabs.currentIndex() == TABS.index("Methods")
    assert w._slots["Methods"].child is w.methods_panel and w.panels()["Methods"] is w.methods_panel
    assert "Bayes GLMM" in result.estimators
    direct = methods_table(w.corpus, spec, posterior=w.fit_result.posterior,
                           object_of_measurement=w.state.object_of_measurement, lmm_settings=LMM)
    _assert_shows(w.methods_panel, direct)
    assert w.model_panel.fit_button.isEnabled() and not w.model_panel.cancel_button.isEnabled()


def test_window_methods_run_cancels(qtbot, tmp_path):
    w = MainWindow()
    qtbot.addWidget(w)
    w.cache_dir = tmp_path
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(CELLS)
    with qtbot.waitSignal(w.methods_failed, timeout=300_000) as blocker:
        assert w.start_methods()
        w.model_panel.cancel_button.click()
    assert "cancelled by the user" in blocker.args[0]
    assert w.model_panel.progress.format() == "cancelled" and w.model_panel.fit_button.isEnabled()
    assert w.methods_panel is None and w.tabs.tabText(TABS.index("Methods")) == "Methods"


def test_new_corpus_clears_the_methods_and_analyses_tabs(qtbot, tmp_path, table):
    """A comparison belongs to its corpus: opening another one empties the Methods (and Analyses) tab."""
    w = MainWindow()
    qtbot.addWidget(w)
    w.cache_dir = tmp_path
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(CELLS)
    w.methods_panel = MethodsPanel(table)  # as a finished comparison leaves it
    w._slots["Methods"].replace(w.methods_panel)
    assert w.panels()["Methods"] is w.methods_panel
    other = tmp_path / "other.csv"
    pd.read_csv(CELLS).head(400).to_csv(other, index=False)
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(other)
    assert w.methods_panel is None and w.analyses_panel is None
    assert not isinstance(w._slots["Methods"].child, MethodsPanel)
    assert w._slots["Methods"].child.button.text().startswith("Compare estimators")  # its start page again
    assert w._slots["Analyses"].child.button.text().startswith("Run difficulty")
