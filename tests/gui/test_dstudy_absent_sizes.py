"""The D-study tab says why it has no Benchmarks slider on a one-benchmark corpus (core's reason)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from ddr_explorer.core.files import demo_corpus_path  # noqa: E402
from ddr_explorer.core.reliability import VarianceComponents  # noqa: E402
from ddr_explorer.gui.main_window import MainWindow  # noqa: E402
from ddr_explorer.gui.workers import wait_for_tasks  # noqa: E402


def test_the_dstudy_tab_says_why_there_is_no_benchmarks_slider(qtbot, tmp_path):
    w = MainWindow()
    qtbot.addWidget(w)
    w.cache_dir = tmp_path
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(demo_corpus_path())
    rng = np.random.default_rng(0)
    sd = {"task": 3.0, "model": 1.74, "scaffold": .37, "task:model": 1.39, "task:scaffold": 1.11,
          "model:scaffold": .46}  # the per-benchmark fit's terms: no benchmark term on one benchmark
    w.show_posterior(VarianceComponents.from_mapping({t: (v * np.exp(rng.normal(0, .2, 200))) ** 2
                                                      for t, v in sd.items()}, source="synthetic"))
    panel = w.dstudy_panel
    assert "n_benchmarks" not in panel.sliders and "n_scaffolds" in panel.sliders
    label = panel.absent_sizes_label
    assert label is not None and label.parent() is panel.design_box
    assert label.text() == ("No Benchmarks slider: the corpus has one benchmark (terminal-bench-2.0), so the fit "
                            "has no benchmark term and cannot say how reliability changes with more benchmarks.")
    panel.wait_for_frontier(60_000)
    panel.wait_for_allocation(60_000)
    wait_for_tasks(60)
