"""Each empty analysis tab runs its own analysis: a button with its time estimate, or, when the corpus cannot
support the analysis, a disabled button whose tooltip says why."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from PySide6.QtWidgets import QPushButton  # noqa: E402

from ddr_explorer.core.files import demo_corpus_path  # noqa: E402
from ddr_explorer.gui.main_window import MainWindow  # noqa: E402

TABS_AND_BUTTONS = {"Analyses": "Run difficulty, held-out and LOO analyses", "Methods": "Compare estimators",
                    "Failure modes": "Run failure modes", "Frontier": "Run frontier over time",
                    "Capability": "Run capability scale and transfer"}


def _button(w, tab: str) -> QPushButton:
    buttons = w._slots[tab].child.findChildren(QPushButton)
    assert len(buttons) == 1, f"{tab}: {[b.text() for b in buttons]}"
    return buttons[0]


@pytest.fixture
def demo_window(qtbot, tmp_path):
    w = MainWindow()
    qtbot.addWidget(w)
    w.cache_dir = tmp_path / "cache"
    with qtbot.waitSignal(w.corpus_loaded, timeout=30_000):
        w.open_corpus(demo_corpus_path())
    return w


def test_every_empty_analysis_tab_has_its_run_button(demo_window):
    w = demo_window
    for tab, words in TABS_AND_BUTTONS.items():
        assert _button(w, tab).text().startswith(words), tab


def test_analyses_the_corpus_cannot_support_are_disabled_with_the_reason(demo_window):
    """Terminal-Bench 2.0 has no error_category column and no release dates."""
    w = demo_window
    failure, frontier = _button(w, "Failure modes"), _button(w, "Frontier")
    assert not failure.isEnabled() and "no error_category column" in failure.toolTip()
    assert not frontier.isEnabled() and "no release_date column" in frontier.toolTip()
    assert not w.failure_action.isEnabled() and not w.frontier_action.isEnabled()  # and their menu entries
    for tab in ("Analyses", "Methods"):
        assert _button(w, tab).isEnabled() and not _button(w, tab).toolTip(), tab


def test_capability_across_benchmarks_is_disabled_on_one_benchmark_with_the_reason(demo_window, monkeypatch):
    """Terminal-Bench 2.0 is one benchmark: no scale across benchmarks, no transfer between them, no fits."""
    w = demo_window
    button = _button(w, "Capability")
    assert not button.isEnabled() and "The corpus has one benchmark (terminal-bench-2.0)" in button.toolTip()
    assert "compare benchmarks" in w._slots["Capability"].child.estimate_label.text()
    assert not w.capability_action.isEnabled() and "one benchmark" in w.capability_action.toolTip()
    started = []
    monkeypatch.setattr(MainWindow, "start_analyses", lambda self, *a, **k: started.append(k) or True)
    assert not w.start_capability() and started == []  # a call from elsewhere starts no fit either
    assert "one benchmark" in w.statusBar().currentMessage()


def test_a_failure_mode_corpus_enables_its_button(qtbot, tmp_path):
    w = MainWindow()
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.corpus_loaded, timeout=30_000):
        w.open_corpus(demo_corpus_path().with_name("failure-modes-SIMULATED.csv"))
    assert _button(w, "Failure modes").isEnabled() and w.failure_action.isEnabled()
    # two benchmarks: the capability scale across them is offered
    assert _button(w, "Capability").isEnabled() and w.capability_action.isEnabled()


def test_the_run_button_starts_its_analysis(demo_window, monkeypatch):
    w = demo_window
    started = []
    monkeypatch.setattr(MainWindow, "start_methods", lambda self, *a, **k: started.append("methods") or True)
    monkeypatch.setattr(MainWindow, "start_capability", lambda self, *a, **k: started.append("capability") or True)
    _button(w, "Methods").click()
    _button(w, "Capability").click()  # disabled on one benchmark: a click starts nothing
    assert started == ["methods"]


def test_the_analyses_button_says_its_estimate_once_a_fit_is_there(qtbot, tmp_path, fake_sampler, monkeypatch):
    """After a fit, core's plan of exactly what the button runs (4 strata, the sheet's 50 splits, LOO) prices it."""
    from ddr_explorer.core.analyses import defaults
    from ddr_explorer.core.analyses.defaults import AnalysesPlan

    asked = []

    def plan(corpus, posterior, **kw):
        asked.append(kw)
        return AnalysesPlan(("difficulty", "heldout", "loo"), {"difficulty": 4, "heldout": 20, "loo": 1},
                            {"difficulty": 60.0, "heldout": 540.0, "loo": 30.0}, kw["n_splits"])

    monkeypatch.setattr(defaults, "plan_sheet_analyses", plan)
    w = MainWindow()
    qtbot.addWidget(w)
    w.cache_dir = tmp_path / "cache"
    with qtbot.waitSignal(w.corpus_loaded, timeout=30_000):
        w.open_corpus(demo_corpus_path())
    assert "once the model is fitted" in w._slots["Analyses"].child.estimate_label.text()

    class Post:  # the plan is faked: a posterior is only its pace here
        wall_seconds = 42.0

    class Fit:
        posterior = Post()

    w.fit_result = Fit()
    w.start_pages.refresh_estimates()
    qtbot.waitUntil(lambda: "25 refits" in w._slots["Analyses"].child.estimate_label.text(), timeout=10_000)
    assert asked[0]["n_splits"] == 50 and asked[0]["n_strata"] == 4  # the sheet's: the export reuses them
    assert _button(w, "Analyses").text() == "Run difficulty, held-out and LOO analyses (about 10 min)"
    assert _button(w, "Methods").text() == "Compare estimators (about 42 s)"
