"""A target prints as it was typed (0.875 is not "0.88"), on the sheet's figures and the D-study tab."""

from __future__ import annotations

import numpy as np

from ddr_explorer.core.dstudy import DStudyDesign, DStudyModel, cost_frontier
from ddr_explorer.core.formatting import fmt_target
from ddr_explorer.core.reliability import VarianceComponents


def _components() -> VarianceComponents:
    rng = np.random.default_rng(5)
    sd = {"task": 3.0, "model": 1.74, "scaffold": .37, "task:model": 1.39, "task:scaffold": 1.11,
          "model:scaffold": .46}
    return VarianceComponents.from_mapping({t: (v * np.exp(rng.normal(0, .2, 300))) ** 2 for t, v in sd.items()},
                                           source="synthetic")


def _strings(drawing) -> list[str]:
    from reportlab.graphics.shapes import String

    out, stack = [], list(drawing.contents)
    while stack:
        x = stack.pop()
        if isinstance(x, String):
            out.append(x.text)
        stack.extend(getattr(x, "contents", []))
    return out


def test_fmt_target_keeps_the_typed_decimals():
    assert [fmt_target(t) for t in (0.875, 0.85, 0.9, 0.999, 0.8)] == ["0.875", "0.85", "0.90", "0.999", "0.80"]


def test_the_sheet_figures_label_target_0875_as_typed():
    from ddr_explorer.core.report import figures as fig

    c = _components()
    d = DStudyDesign(n_tasks=39, n_scaffolds=2, n_replicates=3, n_models=29,
                     price_per_trial={"terminal-bench-2.0": 0.8})
    curve = DStudyModel(c).curve(d, "n_tasks", grid=np.array([1.0, 10.0, 100.0]), target=0.875)
    assert "target 0.875" in _strings(fig.dstudy_figure(curve))
    frontier = cost_frontier(c, d, n_tasks=np.array([10.0, 40.0]), n_scaffolds=np.array([1.0, 2.0]),
                             n_benchmarks=np.array([1.0]), target=0.875)
    labels = _strings(fig.cost_frontier_figure(frontier))
    assert "target 0.875" in labels and "target 0.88" not in labels
