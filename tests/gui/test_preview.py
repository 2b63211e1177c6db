"""The D-study preview: the D-study tab shows a preview from point estimates as soon as a corpus is open,
drawn dashed, without bands, under a banner, and the posterior replaces it when the fit ends.

The fit runs in the window's worker thread (not the child process) so that the moment stand-in
sampler of tests/batch_fakes.py replaces NUTS.  The corpus is small and simulated, so both preview
stages (the rough fit, then Laplace) run in a few seconds.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from PySide6.QtCore import Qt  # noqa: E402

import ddr_explorer.gui.fit_flow as fit_flow  # noqa: E402
from ddr_explorer.core.preview import preview_components  # noqa: E402
from ddr_explorer.gui.main_window import TABS, MainWindow  # noqa: E402


def _corpus_csv(path, seed=5, n_tasks=10, n_models=5, n_scaffolds=2, trials=3):
    rng = np.random.default_rng(seed)
    task, model, scaffold = rng.normal(0, 1.4, n_tasks), rng.normal(0, 1.0, n_models), rng.normal(0, 0.3, n_scaffolds)
    rows = []
    for i in range(n_tasks):
        for m in range(n_models):
            for s in range(n_scaffolds):
                eta = task[i] + model[m] + scaffold[s] + rng.normal(0, 0.6)
                rows.append({"benchmark": "sim", "task": f"t{i}", "model": f"m{m}", "scaffold": f"s{s}",
                             "successes": int(rng.binomial(trials, 1 / (1 + math.exp(-eta)))), "trials": trials})
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _values(components) -> dict[str, float]:
    return {t: float(v[0]) for t, v in components.draws.items()}


def _assert_drawn_as_preview(panel):
    assert panel.preview and panel.components.preview
    assert not panel.preview_banner.isHidden()
    assert panel.preview_banner.text().startswith("preview: point estimates")
    for items in panel.curve_items.values():
        assert items.median.item.pen().style() == Qt.DashLine
        assert not items.band95.isVisible() and not items.band68.isVisible()


@pytest.fixture
def window(qtbot, fake_sampler, monkeypatch, tmp_path):
    monkeypatch.setattr(fit_flow, "FIT_IN_CHILD_PROCESS", False)
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1300, 850)
    w.cache_dir = tmp_path / "cache"
    w.tabs.setCurrentIndex(TABS.index("D-study"))  # the preview is drawn when its tab is on screen
    return w


def test_preview_after_open_then_the_posterior_replaces_it(window, qtbot, fake_sampler, tmp_path):
    w = window
    shown = []
    w.preview_shown.connect(shown.append)
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(_corpus_csv(tmp_path / "sim.csv"))
    spec = w.state.model_spec()
    qtbot.waitUntil(lambda: len(shown) == 2, timeout=120_000)  # the rough fit, then Laplace
    assert [p.method for p in shown] == ["rough", "laplace"]
    panel = w.dstudy_panel
    _assert_drawn_as_preview(panel)
    assert "fit the model" in panel.preview_banner.text() and "Laplace" in panel.preview_banner.text()
    # the panel draws core's preview: the same estimates as core.preview computes for this corpus and model
    want = preview_components(w.corpus, spec, method="laplace")
    assert _values(panel.components) == pytest.approx(_values(want.components), rel=1e-12)
    assert panel.view.readouts.coefficient.median == pytest.approx(
        panel.model.view(panel.state.design()).readouts.coefficient.median, rel=1e-12)
    assert panel.readout_labels["coefficient"].text().endswith("(point estimate)")
    assert w.preview_task is None

    w.state.update(sampler={"stop": "fixed", "draws": 20, "warmup": 10, "chains": 2})
    assert w.start_fit()
    assert "posterior running" in w.dstudy_panel.preview_banner.text()
    qtbot.waitUntil(lambda: not w.fitting, timeout=120_000)
    assert len(fake_sampler) == 1
    panel = w.dstudy_panel
    assert not panel.preview and not panel.components.preview and panel.preview_banner.isHidden()
    assert panel.components.n_draws == 40
    for items in panel.curve_items.values():
        assert items.median.item.pen().style() == Qt.SolidLine
        assert items.band95.isVisible() and items.band68.isVisible()
    assert w.preview_task is None


def test_a_new_preset_discards_the_running_preview(window, qtbot, tmp_path):
    w = window
    shown = []
    w.preview_shown.connect(shown.append)
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(_corpus_csv(tmp_path / "sim.csv"))
    first = w.preview_task
    assert first is not None
    formula = "y ~ 1 + (1|task) + (1|model) + (1|task:model)"
    w.state.update(model=formula)
    assert first.cancel_requested and not first.running  # discarded: its result is never drawn
    qtbot.waitUntil(lambda: len(shown) == 2, timeout=120_000)
    assert {p.formula for p in shown} == {formula}
    assert set(w.dstudy_panel.components.terms) == {"task", "model", "task:model"}
    _assert_drawn_as_preview(w.dstudy_panel)


def test_the_preview_is_drawn_when_its_tab_opens(qtbot, tmp_path):
    """Off screen, a ready preview waits: building the panel must not stall the Model tab during a fit."""
    w = MainWindow()
    qtbot.addWidget(w)
    shown = []
    w.preview_shown.connect(shown.append)
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(_corpus_csv(tmp_path / "sim.csv"))
    qtbot.waitUntil(lambda: w.preview is not None, timeout=60_000)
    assert not shown and w.dstudy_panel is None
    w.tabs.setCurrentIndex(TABS.index("D-study"))
    assert len(shown) == 1 and w.dstudy_panel is not None and w.dstudy_panel.preview
    _assert_drawn_as_preview(w.dstudy_panel)
    w.previewer.stop()


def test_a_fit_stops_the_laplace_stage_and_its_posterior_replaces_the_preview(window, qtbot, fake_sampler, tmp_path):
    """The posterior goes first: a fit started when the rough preview arrives keeps Laplace from starting."""
    w = window
    shown = []
    w.state.update(sampler={"stop": "fixed", "draws": 20, "warmup": 10, "chains": 2})

    def on_preview(p):
        shown.append(p.method)
        if len(shown) == 1:
            assert w.start_fit()

    w.preview_shown.connect(on_preview)
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(_corpus_csv(tmp_path / "sim.csv"))
    qtbot.waitUntil(lambda: w.fit_result is not None and not w.fitting, timeout=120_000)
    assert shown == ["rough"] and w.preview_task is None and w.previewer.resume is None
    assert not w.dstudy_panel.preview and w.dstudy_panel.components.n_draws == 40
