"""The hold-out's estimator in the app (gui/heldout_estimator_box.py): the Analyses tab's start page and the
sheet export's question carry the choice ``--heldout-estimator`` makes on the CLI."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from PySide6.QtWidgets import QComboBox  # noqa: E402

from ddr_explorer.core.analyses.defaults import AnalysesPlan  # noqa: E402
from ddr_explorer.core.analyses.heldout_choice import choose_heldout_estimator  # noqa: E402
from ddr_explorer.core.files import demo_corpus_path  # noqa: E402
from ddr_explorer.gui.main_window import MainWindow  # noqa: E402


def test_the_analyses_start_page_picks_the_estimator_and_re_estimates_with_it(qtbot, tmp_path, monkeypatch):
    from ddr_explorer.core.analyses import defaults

    asked = []

    def plan(corpus, posterior, **kw):
        asked.append(kw["heldout_estimator"])
        choice = choose_heldout_estimator(kw["heldout_estimator"], 1200.0)
        return AnalysesPlan(("difficulty", "heldout", "loo"), {"difficulty": 4, "heldout": 20, "loo": 1},
                            {"difficulty": 60.0, "heldout": 30.0, "loo": 30.0}, kw["n_splits"], heldout_choice=choice)

    monkeypatch.setattr(defaults, "plan_sheet_analyses", plan)
    w = MainWindow()
    qtbot.addWidget(w)
    w.cache_dir = tmp_path / "cache"
    with qtbot.waitSignal(w.corpus_loaded, timeout=30_000):
        w.open_corpus(demo_corpus_path())
    box = w._slots["Analyses"].child.findChild(QComboBox, "heldout_estimator")
    assert box.currentData() == "auto" and box.count() == 3

    class Post:
        wall_seconds = 42.0

    class Fit:
        posterior = Post()

    w.fit_result = Fit()
    w.start_pages.refresh_estimates()
    label = w._slots["Analyses"].child.estimate_label
    qtbot.waitUntil(lambda: "hold-out by REML refits" in label.text(), timeout=10_000)
    assert "Bayesian refits were estimated at 20 min" in label.text()  # auto over the budget: REML
    box.setCurrentIndex(box.findData("bayes"))
    qtbot.waitUntil(lambda: "asked for with --heldout-estimator bayes" in label.text(), timeout=10_000)
    assert w.heldout_estimator == "bayes" and asked == ["auto", "bayes"]


def test_the_sheet_question_says_which_estimator_and_offers_the_others(qtbot):
    from ddr_explorer.gui.sheet_export_dialog import sheet_analyses_question

    plan = AnalysesPlan(("difficulty", "heldout", "loo"), {"difficulty": 4, "heldout": 100, "loo": 1},
                        {"difficulty": 600.0, "heldout": 120.0, "loo": 400.0}, 50,
                        heldout_choice=choose_heldout_estimator("auto", 960.0))
    box, meaning = sheet_analyses_question(None, plan)
    qtbot.addWidget(box)
    assert box.informativeText().startswith("Hold-out by REML refits (observed 0/1 scale): Bayesian refits were "
                                            "estimated at 16 min on this machine")
    assert box.heldout_box.currentData() == "auto"
    assert [box.heldout_box.itemData(i) for i in range(3)] == ["auto", "bayes", "reml"]
    assert set(meaning.values()) == {"skip", ("difficulty",), "run", None}


def test_the_analyses_tab_names_the_hold_outs_estimator_and_scale(qtbot):
    from ddr_explorer.gui.analyses_panel import AnalysesPanel

    line = choose_heldout_estimator("auto", 960.0).line
    held = {"n_splits": 3, "pearson_r": 0.2, "spearman": 0.1, "mean_gap": 0.002, "train_fraction": 0.7,
            "estimator": "reml", "scale": "observed 0/1", "choice": line,
            "splits": [{"split": k, "projected": 0.9 + 0.01 * k, "held_out": 0.91, "gap": 0.01 - 0.01 * k,
                        "n_train_trials": 70, "n_held_out_trials": 30, "error": None} for k in range(3)],
            "n_fits": 6, "n_converged": 6}
    panel = AnalysesPanel({"heldout": held})
    qtbot.addWidget(panel)
    text = panel.summary.text()
    assert "mean gap (held out - projected) +0.0020 (REML refits, observed 0/1 scale)" in text
    assert "Hold-out by REML refits (observed 0/1 scale): Bayesian refits were estimated at 16 min" in text
