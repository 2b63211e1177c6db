"""The main window's own words: the status bar's device label and the red banner of a file that did not open."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from ddr_explorer.gui import model_panel  # noqa: E402
from ddr_explorer.gui.main_window import MainWindow  # noqa: E402
from ddr_explorer.gui.workers import wait_for_tasks  # noqa: E402


def _four_chains_on_two_cores(short: bool = False) -> str:
    """What detect_device says on the 2-core box the analyst used (4 JAX CPU devices, no GPU)."""
    return "CPU, 4 chains on 2 cores" if short else "CPU, 4 chains in parallel on 2 cores (no GPU visible to JAX)"


def _wait(qapp, until, limit: float = 60.0) -> None:
    import time

    end = time.monotonic() + limit
    while not until() and time.monotonic() < end:
        qapp.processEvents()
        wait_for_tasks(0.02)


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_the_device_label_shows_whole_short_words(qtbot, qapp, monkeypatch, size):
    """At every size up to 1920 x 1080 the label read "device: CPU, 4 chains in para...cores" (cut in its middle)."""
    monkeypatch.setattr(model_panel, "detect_device", _four_chains_on_two_cores)
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    _wait(qapp, lambda: w.device is not None)
    qtbot.wait(50)
    dev = w.device_label
    assert dev.text() == "device: CPU, 4 chains on 2 cores"  # whole, no ellipsis
    assert dev.toolTip() == "device: CPU, 4 chains in parallel on 2 cores (no GPU visible to JAX)"
    assert dev.fontMetrics().horizontalAdvance(dev.text()) <= dev.contentsRect().width()
    assert w.model_panel.device_label.text() == "CPU, 4 chains in parallel on 2 cores (no GPU visible to JAX)"


def test_the_could_not_open_banner_goes_when_the_user_moves_on(qtbot, tmp_path):
    """The red banner of a file that did not open answers that attempt: a tab change, a fit or another open
    clears it (it stayed through every later action)."""
    from ddr_explorer.core.files import demo_corpus_path
    from ddr_explorer.gui.main_window import TABS

    w = MainWindow()
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.corpus_loaded, timeout=30_000):
        w.open_corpus(demo_corpus_path())
    bad = tmp_path / "broken.csv"
    bad.write_text("benchmark,task,model,scaffold,successes,trials\nb,t,m,a,9,5\n")
    with qtbot.waitSignal(w.load_failed, timeout=30_000):
        w.open_corpus(bad)
    assert w.error_view.text().startswith("Could not open the file:\n") and w.error_view.isVisibleTo(w)
    w.tabs.setCurrentIndex(TABS.index("D-study"))  # the user turns to the corpus still loaded
    assert not w.error_view.isVisibleTo(w) and w.error_view.text() == ""
    with qtbot.waitSignal(w.load_failed, timeout=30_000):
        w.open_corpus(bad)
    assert w.error_view.isVisibleTo(w)
    w.open_corpus(bad)  # another attempt: the old banner goes at once, the new outcome replaces it
    assert not w.error_view.isVisibleTo(w)
    with qtbot.waitSignal(w.load_failed, timeout=30_000):
        pass
    assert w.error_view.isVisibleTo(w)
    # the banner of a sheet that could not be written is the export's own: a tab change leaves it
    w.error_view.setText("Could not write the DDR sheet:\nno room")
    w.tabs.setCurrentIndex(TABS.index("Corpus"))
    assert w.error_view.isVisibleTo(w)


def test_every_corpus_warning_row_shows_whole_at_1280_by_800(qtbot, qapp):
    """The issues pane had a fixed 110 px: the demo's second warning was cut mid-line at 1280 x 800."""
    from ddr_explorer.core.files import demo_corpus_path
    from ddr_explorer.gui.main_window import TABS

    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    with qtbot.waitSignal(w.corpus_loaded, timeout=30_000):
        w.open_corpus(demo_corpus_path())
    w.tabs.setCurrentIndex(TABS.index("Corpus"))
    qtbot.wait(100)
    t = w.issues_table
    assert t.rowCount() == 2 and t.isVisible()
    for r in range(t.rowCount()):
        assert t.rowHeight(r) >= t.sizeHintForRow(r)  # the wrapped problem and fix, every line
    assert t.verticalScrollBar().maximum() == 0  # both rows in view, nothing below the fold
    assert w.corpus_panel.summary_view.height() >= 150  # the summary above keeps room (it scrolls)
