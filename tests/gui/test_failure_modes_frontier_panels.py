"""Failure modes and frontier tabs draw core's results as they are; the window runs them in the background,
cancels, and reopens the corpus on a slice of tasks named in its header."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

import ddr_explorer.core.model  # noqa: E402,F401 - before jax
from ddr_explorer.core.analyses.failure_modes import failure_mode_study  # noqa: E402
from ddr_explorer.core.analyses.frontier_time import frontier_over_time  # noqa: E402
from ddr_explorer.core.corpus.io import load_corpus  # noqa: E402
from ddr_explorer.core.model.posterior import SamplerSettings  # noqa: E402
from ddr_explorer.gui.failure_modes_panel import FailureModesPanel  # noqa: E402
from ddr_explorer.gui.frontier_panel import FrontierPanel  # noqa: E402
from ddr_explorer.gui.slice_dialog import SliceDialog  # noqa: E402
from ddr_explorer.gui.main_window import TABS, MainWindow  # noqa: E402

DEMO = Path(__file__).parents[2] / "resources" / "demo" / "failure-modes-SIMULATED.csv"
FAST = SamplerSettings(stop="fixed", draws=20, warmup=10, chains=1)

ROWS = [("A", "a1", "m1", 1, 2, "2024-02-10", "prog", 10.0), ("A", "a2", "m1", 0, 2, "2024-02-10", "prog", 90.0),
        ("B", "b1", "m1", 1, 4, "2024-02-10", "gui", 300.0), ("A", "a1", "m2", 2, 2, "2024-05-01", "prog", 10.0),
        ("A", "a2", "m2", 1, 2, "2024-05-01", "prog", 90.0), ("A", "a2", "m3", 0, 2, "2024-11-15", "prog", 90.0),
        ("B", "b1", "m3", 3, 4, "2024-11-15", "gui", 300.0)]


@pytest.fixture
def tiny_csv(tmp_path):
    t = pd.DataFrame(ROWS, columns=["benchmark", "task", "model", "successes", "trials", "release_date", "task_group",
                                    "human_minutes"]).assign(scaffold="s")
    path = tmp_path / "tiny.csv"
    t.to_csv(path, index=False)
    return path


def test_frontier_panel_draws_core_numbers(qtbot, tiny_csv):
    result = frontier_over_time(load_corpus(tiny_csv), n_boot=50).to_dict()
    panel = FrontierPanel(json.loads(json.dumps(result)))
    qtbot.addWidget(panel)
    assert len(panel.curves) == 2  # gui, prog
    xs, ys = panel.curves[1].getData()
    assert list(ys) == pytest.approx([0.25, 0.75, 0.75, 0.75])
    assert panel.table.rowCount() == 8 and panel.table.item(0, 2).text() == "2024Q1"
    assert "net growth" in panel.summary.text()
    stopped = FrontierPanel({"stopped": "frontier over time: 1 of 3 models have no release date: m3.",
                             "models_without_release_date": ["m3"]})
    qtbot.addWidget(stopped)
    assert "m3" in stopped.summary.text() and stopped.table.rowCount() == 0


def test_failure_panel_draws_core_numbers(qtbot, tmp_path, fake_sampler):
    result = failure_mode_study(load_corpus(DEMO), FAST, tmp_path, n_splits=3).to_dict()
    panel = FailureModesPanel(result)
    qtbot.addWidget(panel)
    assert panel.categories_table.rowCount() == 4 and panel.facets_table.rowCount() == 10
    first = result["categories"][0]
    assert panel.categories_table.item(0, 0).text() == first["category"]
    assert float(panel.categories_table.item(0, 4).text()) == pytest.approx(first["activation_rate"], abs=5e-4)
    xs, ys = panel.scatter_points.getData()
    assert list(ys) == pytest.approx([c["activation_rate"] for c in result["categories"]])
    assert "hold-out" in panel.summary.text()
    skipped = FailureModesPanel({"skipped": "failure modes: corpus 'x' has no error_category column"})
    qtbot.addWidget(skipped)
    assert "error_category" in skipped.summary.text()


def test_window_runs_failure_modes_in_the_background_and_cancels(qtbot, tmp_path, fake_sampler):
    w = MainWindow()
    qtbot.addWidget(w)
    w.cache_dir = tmp_path
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(DEMO)
    w.state.sampler = {"draws": 20, "warmup": 10, "chains": 1}
    with qtbot.waitSignal(w.analyses_failed, timeout=120_000) as blocker:
        assert w.start_failure_or_frontier("failure-modes")
        w.model_panel.cancel_button.click()
    assert "cancelled by the user" in blocker.args[0]
    with qtbot.waitSignal(w.analyses_finished, timeout=300_000):
        assert w.start_failure_or_frontier("failure-modes", n_splits=3)
        assert w.failure_frontier_task.running and not w.start_fit()
    assert w.tabs.currentIndex() == TABS.index("Failure modes")
    assert w.panels()["Failure modes"] is w.failure_frontier_panels["failure-modes"]
    assert "failure_taxonomy" in w.analyses_for_sheet


def test_window_slice_reopens_the_corpus_and_names_it(qtbot, tmp_path, tiny_csv):
    w = MainWindow()
    qtbot.addWidget(w)
    w.cache_dir = tmp_path
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(tiny_csv)
    dlg = SliceDialog(w.corpus.table)
    qtbot.addWidget(dlg)
    assert dlg.column.currentText() == "task_group"
    dlg.values.item(0).setSelected(True)  # the commonest value first: prog (2 tasks)
    assert dlg.slice_text() == "task_group=prog"
    dlg.column.setCurrentText("human_minutes")
    assert dlg.slice_text() == "human_minutes=10..300"
    dlg.whole_button.click()
    assert dlg.slice_text() == ""
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.apply_slice("task_group=prog")
    assert w.corpus.provenance["slice"] == "task_group=prog" and w.corpus.n_records == 5
    assert "slice" in w.header.text() and "task_group=prog" in w.header.text() and "2 of 3 tasks" in w.header.text()
    with qtbot.waitSignal(w.analyses_finished, timeout=60_000) as blocker:
        assert w.start_failure_or_frontier("frontier")
    assert blocker.args[0]["frontier"]["benchmarks"][0]["benchmark"] == "A"
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.apply_slice("")
    assert "slice" not in w.corpus.provenance and "<b>slice</b>" not in w.header.text()
