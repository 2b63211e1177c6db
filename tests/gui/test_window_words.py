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
