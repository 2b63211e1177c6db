"""At 1280 x 800 no table column, label or text line of the app is cut, and long name lists stay readable.

Measured on the widgets, not on pixels: a table's sections against what their contents and headers ask
for (``sizeHintForColumn``, ``sectionSizeHint``) and against the viewport; a label's geometry against its
``sizeHint`` (or ``heightForWidth`` when it wraps); a text view's horizontal scroll range; a heatmap's
labelled rows against the font's line height.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QSize  # noqa: E402
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QScrollArea, QTableView  # noqa: E402

from ddr_explorer.core.files import demo_corpus_path  # noqa: E402
from ddr_explorer.core.reliability import VarianceComponents  # noqa: E402
from ddr_explorer.gui.main_window import TABS, MainWindow  # noqa: E402
from ddr_explorer.gui.window_size import default_window_size  # noqa: E402

#: The tabs a demo corpus with a posterior shows (the analysis tabs show their start pages).
SHOWN = ("Corpus", "Model", "Variance components", "D-study", "Ranks", "Analyses", "Methods", "Failure modes",
         "Frontier", "Capability")


def _inside_scroll_area(widget) -> bool:
    """A widget in a scroll area is reachable by scrolling, not cut (the D-study controls, a long log)."""
    p = widget.parentWidget()
    while p is not None:
        if isinstance(p, QScrollArea):
            return True
        p = p.parentWidget()
    return False


def cut_widgets(root) -> list[str]:
    """What is cut among the visible widgets under ``root``: one line each."""
    out = []
    for t in root.findChildren(QTableView):
        if not t.isVisible() or t.model() is None or t.model().rowCount() == 0:
            continue
        h = t.horizontalHeader()
        name = t.objectName() or type(t.parentWidget()).__name__
        for c in range(h.count()):
            if h.isSectionHidden(c):
                continue
            need = max(t.sizeHintForColumn(c), h.sectionSizeHint(c))
            if h.sectionSize(c) + 1 < need and t.textElideMode() == 0:  # an eliding column has tooltips
                out.append(f"table {name}: column {c} is {h.sectionSize(c)} px of {need}")
        if h.length() > t.viewport().width() + 1:
            out.append(f"table {name}: its columns need {h.length()} px, it shows {t.viewport().width()}")
    for v in root.findChildren(QPlainTextEdit):
        if v.isVisible() and v.horizontalScrollBar().maximum() > 0:
            out.append(f"text {v.objectName()}: lines wider than the view")
    for lab in root.findChildren(QLabel):
        if not lab.isVisible() or not lab.text() or _inside_scroll_area(lab):
            continue
        if lab.wordWrap():
            need = lab.heightForWidth(lab.width())
            if need > 0 and lab.height() + 1 < need:
                out.append(f"label {lab.text()[:40]!r}: {lab.height()} px high of {need}")
        elif lab.width() + 1 < lab.sizeHint().width():
            out.append(f"label {lab.text()[:40]!r}: {lab.width()} px wide of {lab.sizeHint().width()}")
    return out


@pytest.fixture(scope="module")
def window_1280(qapp):
    w = MainWindow()
    w.resize(1280, 800)
    w.show()
    w.open_corpus(demo_corpus_path())
    from ddr_explorer.gui.workers import wait_for_tasks

    for _ in range(600):
        qapp.processEvents()
        if w.corpus is not None and not w.loading:
            break
        wait_for_tasks(0.05)
    w.state.update(budget=20000.0, prices={"terminal-bench-2.0": 0.80})
    rng = np.random.default_rng(0)
    sd = {"task": 3.0, "model": 1.74, "scaffold": .37, "task:model": 1.39, "task:scaffold": 1.11,
          "model:scaffold": .46}
    comps = VarianceComponents.from_mapping({t: (v * np.exp(rng.normal(0, .2, 400))) ** 2 for t, v in sd.items()},
                                            source="synthetic")
    names = sorted(w.corpus.table["model"].astype(str).unique())  # the demo's 29 models
    theta = rng.normal(0, 1.5, len(names))[None, :] + rng.normal(0, .4, (400, len(names)))
    w.show_posterior(comps, theta, names)
    w.dstudy_panel.wait_for_frontier(60_000)
    w.dstudy_panel.wait_for_allocation(60_000)
    yield w
    wait_for_tasks(60)
    w.close()
    w.deleteLater()


@pytest.mark.parametrize("tab", SHOWN)
def test_nothing_is_cut_at_1280_by_800(qtbot, window_1280, tab):
    w = window_1280
    w.tabs.setCurrentIndex(TABS.index(tab))
    qtbot.wait(50)
    assert w.size() == QSize(1280, 800)
    assert cut_widgets(w.tabs.currentWidget()) == []


def test_the_status_bar_message_and_device_label_fit(qtbot, window_1280):
    w = window_1280
    w.statusBar().showMessage("Showing 4,000 draw(s) of variance components from /home/user/corpora/"
                              "terminal-bench-2.csv per-benchmark fit")
    qtbot.wait(50)
    assert cut_widgets(w.statusBar()) == []


def test_a_long_status_message_and_device_never_overlap(qtbot, window_1280):
    """The status message ran into the device label (QStatusBar paints it clipped there): the message is a
    label left of the device label, its end elided with the whole message in its tooltip, and the device
    label is bounded, elided with its whole text in its tooltip."""
    from ddr_explorer.gui.status_line import DEVICE_MAX_WIDTH

    w = window_1280
    bar = w.statusBar()
    msg = ("Showing 4,000 draw(s) of variance components from /home/user/corpora/terminal-bench-2/"
           "terminal-bench-2.0-with-every-scaffold-and-trial.csv per-benchmark fit, reopened from the fit cache "
           "at /home/user/.cache/ddr-explorer/fits after the corpus was sliced to the hardest quartile")
    device = ("device: cpu x4 (4 chains on 2 cores: the chains share the cores, each at about half speed; "
              "JAX reports 4 host devices)")
    w.device_label.setText(device)
    bar.showMessage(msg)
    qtbot.wait(50)
    fm = bar.fontMetrics()
    assert fm.horizontalAdvance(msg) > bar.width()  # a message longer than the bar itself
    labels = [lab for lab in bar.findChildren(QLabel) if lab.isVisible() and msg in (lab.text(), lab.toolTip())]
    assert labels, "the message is painted by the status bar itself, clipped at the device label"
    shown, dev = labels[0], w.device_label
    assert shown.geometry().right() < dev.geometry().left()  # side by side, not one over the other
    assert shown.text().endswith("\u2026") and shown.toolTip() == msg  # elided, the whole message on hover
    assert fm.horizontalAdvance(shown.text()) <= shown.contentsRect().width()
    assert dev.isVisible() and dev.width() <= DEVICE_MAX_WIDTH and dev.toolTip() == device
    assert fm.horizontalAdvance(dev.text()) <= dev.contentsRect().width()
    assert shown.width() >= bar.width() // 2  # the message keeps most of the bar
    assert cut_widgets(bar) == []
    bar.showMessage("Ready")
    qtbot.wait(20)
    assert shown.text() == "Ready" and shown.toolTip() == ""


def test_a_29_model_heatmap_labels_rows_a_line_apart(qtbot, window_1280):
    """The D-study's dominance heatmap thins its names to its height; the Ranks tab's, taller, names all 29."""
    from PySide6.QtGui import QFontMetrics

    w = window_1280
    for tab, plot in (("D-study", w.dstudy_panel.dominance_plot), ("Ranks", w.ranks_panel.dominance_plot)):
        w.tabs.setCurrentIndex(TABS.index(tab))
        qtbot.wait(50)
        labels = plot._ddr_row_labels
        labels.update()
        shown = labels.shown()
        height = plot.getPlotItem().getViewBox().height()
        line = QFontMetrics(labels.axis.style.get("tickFont") or w.font()).height()
        assert len(shown) * line <= height, (tab, len(shown), height)
        assert shown[0].startswith("1. ")
    assert len(w.ranks_panel.dominance_plot._ddr_row_labels.shown()) == 29  # room for every name there


@pytest.mark.parametrize("screen, want", [((1920, 1050), (1680, 945)), ((2560, 1400), (1680, 1050)),
                                          ((1366, 728), (1280, 728)), ((1280, 800), (1280, 800))])
def test_the_default_size_follows_the_screen(screen, want):
    assert default_window_size(QSize(*screen)) == QSize(*want)


def test_the_first_start_takes_the_screen_default_and_later_starts_the_saved_size(qtbot, monkeypatch):
    from PySide6.QtCore import QSettings

    from ddr_explorer.gui import window_size

    calls = []
    real = window_size.apply_default_size
    monkeypatch.setattr(window_size, "apply_default_size", lambda win: calls.append(win) or real(win))
    fresh = QSettings(QSettings.IniFormat, QSettings.UserScope, "ddr-explorer", "layout-test-fresh")
    fresh.clear()
    w = MainWindow(settings=fresh)
    qtbot.addWidget(w)
    assert calls == [w]  # no saved geometry: the screen's default
    w.show()
    w.save_session()
    assert not fresh.value("window/geometry").isEmpty()
    again = MainWindow(settings=fresh)
    qtbot.addWidget(again)
    assert calls == [w]  # the saved geometry, not the default
