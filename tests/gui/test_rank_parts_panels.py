"""The app draws the ranks of a disconnected design per part (core.rank_parts): no cross-part dominance or rank."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")

pytestmark = pytest.mark.gui

from ddr_explorer.core.dstudy import DStudyDesign  # noqa: E402
from ddr_explorer.core.ranks import rank_analysis  # noqa: E402
from ddr_explorer.core.reliability import VarianceComponents  # noqa: E402
from ddr_explorer.gui.main_window import MainWindow  # noqa: E402
from ddr_explorer.gui.ranks_panel import RanksPanel  # noqa: E402

S = 2000
MODELS = ["A", "D", "B", "E", "C"]
#: The incidence-graph components of a corpus with A, B, C on B1/s1 and D, E on B2/s2 (as inspect_corpus gives them).
COMPONENTS = [["benchmark:B1", "model:A", "model:B", "model:C", "scaffold:s1"],
              ["benchmark:B2", "model:D", "model:E", "scaffold:s2"]]


@pytest.fixture(scope="module")
def theta():
    return np.random.default_rng(3).normal([0.0, 3.0, 0.5, 2.5, -0.4], 0.6, size=(S, 5))


@pytest.fixture(scope="module")
def components():
    rng = np.random.default_rng(4)
    return VarianceComponents.from_mapping({t: (v * np.exp(rng.normal(0, 0.1, S))) ** 2 for t, v in
                                            {"task": 1.5, "model": 1.0, "task:model": 0.8}.items()}, source="synthetic")


def test_ranks_panel_draws_each_part_alone(qtbot, theta):
    ra = rank_analysis(theta, MODELS, [["A", "B", "C"], ["D", "E"]])
    panel = RanksPanel(ra)
    qtbot.addWidget(panel)
    panel.show()
    rows = [panel.table.item(r, 1).text() for r in range(panel.table.rowCount())]
    assert rows[:3] == ["B", "A", "C"] and rows[3:] == ["D", "E"]
    # the table's mean ranks are within-part ranks: D's is 1 + P(E > D), never above 2
    mean = [float(panel.table.item(r, 2).text()) for r in range(5)]
    alone = rank_analysis(theta[:, [1, 3]], ["D", "E"])
    assert mean[3] == pytest.approx(alone.ranks.mean_rank[0], abs=5e-3) and max(mean[3:]) <= 2
    img = panel.dominance_image.image
    assert np.isnan(img[:3, 3:]).all() and np.isnan(img[3:, :3]).all() and not np.isnan(img[:3, :3]).any()
    assert "Ranked within 2 parts" in panel.caption.text() and "models D, E share no benchmark" in panel.caption.text()
    assert not panel.grab().isNull()  # NaN cells draw (blank), no error


def test_main_window_ranks_a_disconnected_corpus_per_part(qtbot, theta, components):
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.summary = {"components": COMPONENTS}  # as a loaded corpus's inspect_corpus summary holds them
    with qtbot.waitSignal(w.posterior_shown):
        w.show_posterior(components, theta, MODELS, DStudyDesign(n_tasks=8, n_models=5))
    ra = w.ranks_panel.ranks
    assert ra.parts == [["A", "B", "C"], ["D", "E"]]
    dp = w.dstudy_panel
    np.testing.assert_array_equal(dp.dominance_image.image, ra.ordered_dominance)
    assert np.isnan(dp.dominance_image.image[:3, 3:]).all()
    assert "within 2 parts" in dp.dominance_plot.getPlotItem().titleLabel.text
    # a posterior whose models the loaded corpus does not know is ranked as today (not split at random)
    with qtbot.waitSignal(w.posterior_shown):
        w.show_posterior(components, theta, ["A", "D", "B", "E", "Z"], DStudyDesign(n_tasks=8, n_models=5))
    assert w.ranks_panel.ranks.parts is None
    np.testing.assert_array_equal(w.ranks_panel.ranks.dominance, rank_analysis(theta).dominance)
