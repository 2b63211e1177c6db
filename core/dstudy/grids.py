"""The designs a D-study looks at: slider positions, curve grids, frontier grids and the no-price policy.

The app's sliders and curves, the DDR sheet's curves, the cost frontier of the app, of
``ddr dstudy --budget`` and of the sheet all take their grids from here, so "the cheapest design
for the target" and "the best design within the budget" are searched over the same designs and
come out the same on the screen, in the CLI and in the PDF (:func:`.budget.budget_search`).

Grids
-----
* Sliders: tasks 1..2,000 on a log scale (200 positions), scaffolds 1..20, benchmarks 1..30,
  trials per cell 1..10, each with the observed and current sizes added.
* Curves: the slider's range (100 log-spaced points for tasks, every integer otherwise), reaching
  any size given.
* Cost frontier: 40 log-spaced task counts 1..max(2,000, 4 x observed), scaffolds 1..8, benchmarks
  1..max(9, observed).  The grid depends on the observed design only, never on the sliders, so the
  frontier does not move while a slider does.

No prices
---------
Without a price per trial every design costs 0 and a cost frontier degenerates to one point.
Designs are then ranked by their trial count instead (a price of 1 per trial makes the cost the
trial count): the cheapest design for the target is the one with the fewest trials, and no design
is "within a budget" (a budget needs prices).  :func:`costing` applies this policy and says which
unit the frontier's cost is in; :mod:`.budget` searches the frontier.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Iterable

import numpy as np

from .sizes import DStudyDesign, _facet_of

__all__ = [
    "SLIDER_TOP", "TASK_SLIDER_EVERY", "TASK_SLIDER_POSITIONS", "TASK_CURVE_POINTS", "FRONTIER_TASK_POINTS",
    "FRONTIER_MAX_SCAFFOLDS",
    "slider_values", "curve_grid", "default_grid", "frontier_grids", "costing",
]

#: Slider ranges: tasks 1..2000 on a log scale; scaffolds 1..20, benchmarks 1..30, replicates 1..10.
SLIDER_TOP = {"n_tasks": 2000, "n_scaffolds": 20, "n_benchmarks": 30, "n_replicates": 10}
#: Positions of the log-spaced task slider (unique integers remain after rounding).
TASK_SLIDER_POSITIONS = 200
#: The task slider steps through every whole number up to this one (a log step of 4% skipped 40 between 39
#: and 41), then log-spaced.
TASK_SLIDER_EVERY = 200
#: Points of the task curve (log-spaced; the other facets use every integer).
TASK_CURVE_POINTS = 100
#: Task counts of the cost frontier's grid (log-spaced).
FRONTIER_TASK_POINTS = 40
#: Scaffolds per model on the cost frontier's grid: 1..8.
FRONTIER_MAX_SCAFFOLDS = 8
#: Benchmarks on the cost frontier's grid: 1..max(9, observed).
FRONTIER_MIN_BENCHMARKS = 9


def _extra(extra: Iterable) -> np.ndarray:
    return np.asarray([float(x) for x in extra if x is not None and x >= 1], dtype=np.float64)


def slider_values(field: str, extra=()) -> np.ndarray:
    """The sizes the slider of ``field`` steps through, including ``extra`` sizes (observed, current)."""
    top = SLIDER_TOP[field]
    if field == "n_tasks":
        log = np.unique(np.round(np.geomspace(1, top, TASK_SLIDER_POSITIONS)))
        base = np.union1d(np.arange(1, TASK_SLIDER_EVERY + 1, dtype=np.float64), log[log > TASK_SLIDER_EVERY])
    else:
        base = np.arange(1, top + 1, dtype=np.float64)
    return np.union1d(base, _extra(extra))


def curve_grid(field: str, extra=()) -> np.ndarray:
    """The sizes a curve is evaluated at: the slider's range (log-spaced for tasks), reaching any ``extra`` size."""
    top = max([SLIDER_TOP[field], *[float(x) for x in extra if x is not None]])
    if field == "n_tasks":
        return np.unique(np.round(np.geomspace(1, top, TASK_CURVE_POINTS)))
    return np.arange(1, math.ceil(top) + 1, dtype=np.float64)


#: Facet of the D-study rule -> slider field.
_FIELD_OF = {"task": "n_tasks", "scaffold": "n_scaffolds", "benchmark": "n_benchmarks", "replicate": "n_replicates"}


def default_grid(over: str, observed: float = 1.0) -> np.ndarray:
    """The curve grid of a facet when none is given: :func:`curve_grid` reaching the observed size.

    The app's curves, the DDR sheet's and :meth:`~.curves.DStudyModel.view`'s default are this one
    grid.  A facet without a slider (e.g. seed 003 (DDR paper 2026)'s ``step``) gets every integer up to
    ``max(10, 2 x observed)``.
    """
    f = _facet_of(over)
    if f in _FIELD_OF:
        return curve_grid(_FIELD_OF[f], [observed])
    return np.arange(1, max(10, int(math.ceil(2 * observed))) + 1, dtype=np.float64)


def frontier_grids(reference: DStudyDesign) -> dict[str, np.ndarray]:
    """The cost frontier's grid of designs for a corpus whose observed design is ``reference``.

    Returns
    -------
    dict
        ``{"n_tasks": ..., "n_scaffolds": ..., "n_benchmarks": ...}`` keyword arguments of
        :func:`~.frontier.cost_frontier`.
    """
    top_tasks = max(float(SLIDER_TOP["n_tasks"]), 4.0 * reference.effective_n_tasks)
    top_bench = max(FRONTIER_MIN_BENCHMARKS, int(math.ceil(reference.effective_n_benchmarks)))
    return {"n_tasks": np.unique(np.round(np.geomspace(1, top_tasks, FRONTIER_TASK_POINTS))),
            "n_scaffolds": np.arange(1, FRONTIER_MAX_SCAFFOLDS + 1.0),
            "n_benchmarks": np.arange(1, top_bench + 1.0)}


def costing(design: DStudyDesign) -> tuple[DStudyDesign, bool]:
    """The design to cost a frontier with, and whether its cost is money (see the module note on prices).

    Returns
    -------
    (DStudyDesign, bool)
        ``design`` itself and True when it has a positive price; else a copy at 1 per trial
        (cost = trial count) and False.
    """
    if design.mean_price() > 0:
        return design, True
    return dataclasses.replace(design, price_per_trial=1.0), False
