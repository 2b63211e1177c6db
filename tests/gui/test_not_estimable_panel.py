"""The app's components panel says the capability-gap ratio is not estimable when the fit has no
model-by-task term, instead of printing 1.000 [1.000, 1.000]."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("PySide6")

from ddr_explorer.core.reliability import VarianceComponents  # noqa: E402
from ddr_explorer.gui.components_panel import ComponentsPanel  # noqa: E402


def test_components_panel_says_the_gap_ratio_is_not_estimable(qtbot):
    rng = np.random.default_rng(0)
    c = VarianceComponents.from_mapping({t: rng.uniform(0.5, 2.0, 200) for t in ("task", "model")}, source="fit")
    panel = ComponentsPanel(c)
    qtbot.addWidget(panel)
    assert panel.gap_ratio is None
    text = panel.caption.text()
    assert "Capability-gap ratio (the DDR paper, 2026): not estimable" in text and "no model-by-task term" in text
