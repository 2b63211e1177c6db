"""The main window opens a corpus off the GUI thread and survives bad files."""

from __future__ import annotations


import pytest

pytest.importorskip("PySide6")
pytestmark = pytest.mark.gui

from ddr_explorer.core.corpus.io import load_corpus  # noqa: E402
from ddr_explorer.core.inspection import format_summary, inspect_corpus  # noqa: E402
from ddr_explorer.core.files import demo_corpus_path  # noqa: E402
from ddr_explorer.gui.main_window import MainWindow  # noqa: E402


@pytest.fixture
def window(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    return w


def test_demo_corpus_is_bundled():
    assert demo_corpus_path().exists()


def test_loads_demo_and_shows_core_summary(window, qtbot):
    with qtbot.waitSignal(window.corpus_loaded, timeout=30_000):
        window.open_corpus(demo_corpus_path())
    want = format_summary(inspect_corpus(load_corpus(demo_corpus_path())))
    assert window.summary_view.toPlainText() == want
    assert window.corpus.n_records == 7387
    assert window.issues_table.rowCount() == len(window.summary["warnings"]) == 3  # never solved; "Multiple"; two Sonnet 4.5 spellings


def test_broken_file_keeps_the_loaded_corpus(window, qtbot, tmp_path):
    with qtbot.waitSignal(window.corpus_loaded, timeout=30_000):
        window.open_corpus(demo_corpus_path())
    bad = tmp_path / "broken.csv"
    bad.write_text("benchmark,task,model,scaffold,successes,trials\nb,t,m,a,9,5\n")
    with qtbot.waitSignal(window.load_failed, timeout=30_000) as blocker:
        window.open_corpus(bad)
    assert "successes (9) > trials (5)" in blocker.args[0]
    assert "broken.csv, line 2" in window.error_view.text() and window.error_view.isVisibleTo(window)
    assert window.corpus.n_records == 7387  # nothing the user had is lost
    with qtbot.waitSignal(window.corpus_loaded, timeout=30_000):  # and the app keeps working
        window.open_corpus(demo_corpus_path())
    assert not window.error_view.isVisibleTo(window)


def test_drop_a_file_and_reopen_it_from_recent_files(window, qtbot):
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(demo_corpus_path()))])
    event = QDropEvent(QPointF(10, 10), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    with qtbot.waitSignal(window.corpus_loaded, timeout=30_000):
        window.dropEvent(event)
    assert window.corpus.n_records == 7387
    window._fill_recent_menu()
    actions = [a for a in window.recent_menu.actions() if a.text() == str(demo_corpus_path())]
    assert len(actions) == 1
    with qtbot.waitSignal(window.corpus_loaded, timeout=30_000):
        actions[0].trigger()


def test_a_failed_open_with_no_corpus_does_not_claim_one_is_loaded(window, qtbot, tmp_path):
    note = tmp_path / "note.txt"
    note.write_text("Hello, this is just a note.\nIt is not a corpus at all\n", encoding="utf-8")
    assert window.corpus is None
    with qtbot.waitSignal(window.load_failed, timeout=30_000) as blocker:
        window.open_corpus(note)
    assert "this file has no corpus columns (found: 'Hello', 'this is just a note.')" in blocker.args[0]
    assert window.statusBar().currentMessage() == ("The file could not be opened; no corpus is loaded "
                                                   "(File > Open corpus...).")
