"""The app compares the estimators on a plain G-study table (Brennan's p x (r:t)) with a formula, as
`ddr methods TABLE --formula` does, and says why when the file is not such a table."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from ddr_explorer.core.estimators.score_table import score_table_methods  # noqa: E402
from ddr_explorer.gui.main_window import TABS, MainWindow  # noqa: E402
from ddr_explorer.gui.score_table_methods import ScoreTableDialog, start_score_table_methods  # noqa: E402

FORMULA = "score ~ (1|p) + (1|t) + (1|r:t) + (1|p:t)"


def _brennan_table():
    path = Path(__file__).parents[1] / "estimators" / "test_methods_design.py"
    spec = importlib.util.spec_from_file_location("ddr_methods_design_tests", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.brennan_table(), mod.anova_components


def test_the_methods_tab_shows_every_estimator_on_a_g_study_table(qtbot, tmp_path):
    df, anova = _brennan_table()
    path = tmp_path / "brennan.csv"
    df.to_csv(path, index=False)
    w = MainWindow()
    qtbot.addWidget(w)
    assert not start_score_table_methods(w, tmp_path / "none.csv", FORMULA)
    assert "not a table with a column 'score'" in w.model_panel.message.text()
    with qtbot.waitSignal(w.methods_finished, timeout=60_000) as blocker:
        assert start_score_table_methods(w, path, FORMULA, bayes=False)
    result = blocker.args[0]
    assert w.tabs.currentIndex() == TABS.index("Methods")
    assert result.estimators == ["Henderson", "REML", "DISCO"]
    want = score_table_methods(df, FORMULA, "score", estimators=("Henderson", "REML", "DISCO"))
    assert w.methods_panel.terms == ["p", "t", "r:t", "p:t", "residual"]
    assert w.methods_panel.cell("p:t", "REML") == want.shares["REML"]["p:t"]
    assert w.methods_panel.cell("Erho2", "Henderson") == pytest.approx(want.coefficients["Henderson"]["Erho2"])
    assert result.components["REML"]["p"] == pytest.approx(anova(df)["p"], rel=1e-6)


def test_the_dialog_reads_file_formula_and_object(qtbot):
    d = ScoreTableDialog(path="/data/brennan.csv", formula=FORMULA)
    qtbot.addWidget(d)
    d.object_edit.setText("p")
    d.bayes.setChecked(False)
    assert d.values() == ("/data/brennan.csv", FORMULA, "p", False)
