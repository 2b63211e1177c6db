"""The Compare tab draws core's pair decision (core/pair_comparison.py) as it is, computed on a worker
thread from hand-made draws (no sampler), and refuses a pair of one model."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from ddr_explorer.core.pair_comparison import pair_decision  # noqa: E402
from ddr_explorer.core.reliability import VarianceComponents  # noqa: E402
from ddr_explorer.gui.compare_panel import ComparePanel  # noqa: E402
from ddr_explorer.gui.tab_slots import TABS  # noqa: E402


def _fit():
    rng = np.random.default_rng(0)
    s, names = 400, ["A", "B", "C"]
    theta = np.column_stack([rng.normal(m, 0.2, s) for m in (1.5, 0.0, -1.0)])
    post = SimpleNamespace(random_effects={"model": theta[None]}, levels={"model": pd.DataFrame({"model": names})})
    comp = VarianceComponents.from_mapping({"model": np.full(s, 1.0), "task": np.full(s, 2.0),
                                            "task:model": np.full(s, 0.5)}, intercept=np.zeros(s))
    rows = [("b", f"t{i}", m, "s", int(rng.integers(0, 2)), 1) for m in names for i in range(20)]
    table = pd.DataFrame(rows, columns=["benchmark", "task", "model", "scaffold", "successes", "trials"])
    return post, SimpleNamespace(table=table), comp, names


def test_the_panel_draws_core_s_decision(qtbot):
    post, corpus, comp, names = _fit()
    panel = ComparePanel(post, corpus, comp, names, sizes=lambda: {"task": 20, "replicate": 1})
    qtbot.addWidget(panel)
    assert "Compare" in TABS and TABS.index("Compare") == TABS.index("Ranks") + 1
    assert (panel.pick_a.currentText(), panel.pick_b.currentText()) == ("A", "B")
    panel.run()
    qtbot.waitUntil(lambda: panel.decision is not None, timeout=60_000)
    want = pair_decision(post, corpus, comp, "A", "B", "model", {"task": 20, "replicate": 1})
    got = panel.decision.comparison
    assert got.p_a_better == pytest.approx(want.comparison.p_a_better)
    assert panel.sentence.text().startswith("A ranks above B")
    assert panel.table.item(1, 1).text() == f"{want.comparison.rate_difference.median * 100:+.1f}"
    assert panel.sizing_table.rowCount() == 1  # no scaffold term: one row, the design's
    assert panel.sizing_table.item(0, 2).text() == f"{want.sizing.tasks_for[0.9]:,.0f}"
    assert panel.run_button.isEnabled()


def test_one_model_against_itself_is_refused_without_running(qtbot):
    post, corpus, comp, names = _fit()
    panel = ComparePanel(post, corpus, comp, names)
    qtbot.addWidget(panel)
    panel.pick_b.setCurrentIndex(0)
    panel.run()
    assert "two different" in panel.status.text() and panel._task is None


def test_new_scaffold_or_trial_sizes_resize_the_pair(qtbot):
    from ddr_explorer.core.session import AnalysisState

    post, corpus, comp, names = _fit()
    state = AnalysisState()
    panel = ComparePanel(post, corpus, comp, names, sizes=lambda: {"task": 20, "replicate": state.n_replicates},
                         state=state)
    qtbot.addWidget(panel)
    panel.show()
    panel.run()
    qtbot.waitUntil(lambda: panel.decision is not None, timeout=60_000)
    first = panel.decision
    state.update(n_replicates=5)  # the D-study tab's trials per cell
    qtbot.waitUntil(lambda: panel.decision is not first, timeout=60_000)
    assert panel.decision.sizing.n_replicates == 5 and first.sizing.n_replicates == 1
    assert panel.decision.sizing.p_now > first.sizing.p_now  # more trials per cell: the order is clearer
