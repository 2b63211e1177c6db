"""The light plot items of the D-study view: one path per band, data equal to what is
shown is not redrawn, curves denser than the pixels they cover are drawn through one point per column,
and the moved facet's own curve is left alone by a slider move."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from ddr_explorer.gui.plots import Band, Curve, Marker, new_plot, pixel_sample  # noqa: E402


def test_pixel_sample_keeps_one_point_per_pixel_column():
    x = np.linspace(0.0, 1.0, 10_001)
    idx = pixel_sample(x, 100)
    assert idx[0] == 0 and idx[-1] == 10_000
    cols = np.floor(x[idx[:-1]] * 100)
    assert len(np.unique(cols)) == len(cols) == 100  # the first point of each column, then the last point
    assert pixel_sample(np.linspace(0, 1, 150), 100) is None  # fewer than two points per pixel: all kept
    assert pixel_sample(np.linspace(0, 1, 500), 0) is None  # not laid out yet


def test_items_skip_unchanged_data_and_keep_what_they_were_given(qtbot):
    w = new_plot("t", log_x=True)
    qtbot.addWidget(w)
    band = Band(w, (0, 0, 255, 50), log_x=True)
    curve = Curve(w, None, log_x=True)
    x = np.array([1.0, 10.0, 100.0])
    assert band.set_data(x, [0.1, 0.2, 0.3], [0.2, 0.4, 0.5]) and curve.set_data(x, [0.15, 0.3, 0.4])
    assert not band.set_data(x, [0.1, 0.2, 0.3], [0.2, 0.4, 0.5]) and not curve.set_data(x, [0.15, 0.3, 0.4])
    assert band.updates == curve.updates == 1
    np.testing.assert_array_equal(band.upper.getOriginalDataset()[1], [0.2, 0.4, 0.5])
    np.testing.assert_array_equal(curve.getData()[0], [0.0, 1.0, 2.0])  # log10 on a log axis
    # one closed polygon: the upper edge out, the lower edge back
    assert band.fill.path().elementCount() == 7
    m = Marker(w, 8, log_x=True)
    assert m.set_point(10.0, 0.5) and not m.set_point(10.0, 0.5)
    assert m.item.pos().x() == pytest.approx(1.0) and m.item.isVisible()
    m.set_point(0.0, 0.5)  # no place on a log axis: hidden, not drawn at -inf
    assert not m.item.isVisible() and len(m.getOriginalDataset()[0]) == 0


def test_a_task_move_leaves_the_task_curve_alone(qtbot):
    from ddr_explorer.core.dstudy import DStudyDesign, DStudyModel
    from ddr_explorer.core.reliability import VarianceComponents
    from ddr_explorer.gui.dstudy_panel import DStudyPanel

    rng = np.random.default_rng(0)
    sd = {"task": 3.0, "model": 1.7, "scaffold": 0.4, "task:model": 1.4, "task:scaffold": 1.1, "model:scaffold": 0.5}
    comps = VarianceComponents.from_mapping({t: (v * np.exp(rng.normal(0, 0.2, 300))) ** 2 for t, v in sd.items()})
    panel = DStudyPanel(DStudyModel(comps), DStudyDesign(n_tasks=40, n_scaffolds=3, n_replicates=2, n_models=5))
    qtbot.addWidget(panel)
    items = panel.curve_items
    before = {f: (it.median.updates, it.band95.updates) for f, it in items.items()}
    panel.sliders["n_tasks"].setValue(20)
    panel.redraw_now()
    after = {f: (it.median.updates, it.band95.updates) for f, it in items.items()}
    assert after["n_tasks"] == before["n_tasks"]  # same curve: only its marker moved
    assert items["n_tasks"].current_point.getOriginalDataset()[0][0] == panel.view.design.n_tasks
    assert all(after[f][0] == before[f][0] + 1 for f in items if f != "n_tasks")
    panel.wait_for_frontier()
    panel.wait_for_allocation()
