"""The Model tab offers the formula the design supports when a preset's terms cannot all be
separated: after the fit, a notice names the left-out terms and a button makes
the supported formula the model.  The corpus is tests/design/test_presets.py's: one benchmark, each
model with one scaffold of its own.  The fit runs in the window's worker thread (not the child
process) so that the moment stand-in sampler of tests/batch_fakes.py replaces NUTS."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import ddr_explorer.gui.fit_flow as fit_flow  # noqa: E402
from ddr_explorer.gui.main_window import MainWindow  # noqa: E402

SUPPORTED = "y ~ 1 + (1|task) + (1|model) + (1|task:model)"


def _confounded(path):
    rng = np.random.default_rng(0)
    rows = [{"benchmark": "tb", "task": f"t{t}", "model": f"m{m}", "scaffold": f"s{m}",
             "successes": int(rng.integers(0, 4)), "trials": 3} for m in range(4) for t in range(6)]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_model_tab_offers_the_supported_formula(qtbot, fake_sampler, monkeypatch, tmp_path):
    monkeypatch.setattr(fit_flow, "FIT_IN_CHILD_PROCESS", False)
    w = MainWindow()
    qtbot.addWidget(w)
    w.cache_dir = tmp_path / "cache"
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(_confounded(tmp_path / "confounded.csv"))
    w.state.update(model="per-benchmark", sampler={"stop": "fixed", "draws": 20, "warmup": 10, "chains": 2})
    mp = w.model_panel
    assert mp.terms_notice.isHidden() and mp.use_supported_button.isHidden()
    assert w.start_fit()
    qtbot.waitUntil(lambda: not w.fitting, timeout=120_000)
    assert len(fake_sampler) == 1
    assert not mp.terms_notice.isHidden() and not mp.use_supported_button.isHidden()
    text = mp.terms_notice.text()
    assert "scaffold, task:scaffold, model:scaffold of the per-benchmark preset" in text and SUPPORTED in text
    assert "note: Preset terms left out: scaffold, task:scaffold, model:scaffold" in mp.log_text()
    mp.use_supported_button.click()
    assert w.state.model == SUPPORTED
    assert mp.model_box.currentData() == "formula" and mp.formula_edit.text() == SUPPORTED
    assert mp.terms_notice.isHidden() and mp.use_supported_button.isHidden()
    assert list(w.state.model_spec().term_names) == ["task", "model", "task:model"]
