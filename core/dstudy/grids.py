"""The designs a D-study looks at: slider positions, curve grids, frontier grids and the no-price policy.

The app's sliders and curves, its cost frontier, ``ddr dstudy --budget`` and the DDR sheet's cost
page all take their grids from here, so "the cheapest design for the target" and "the best design
within the budget" are searched over the same designs and come out the same on the screen, in the
CLI and in the PDF (:func:`budget_search`).

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
unit the frontier's cost is in.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from .frontier import CostFrontier, cost_frontier
from .sizes import DStudyDesign

__all__ = [
    "SLIDER_TOP", "TASK_SLIDER_POSITIONS", "TASK_CURVE_POINTS", "FRONTIER_TASK_POINTS", "FRONTIER_MAX_SCAFFOLDS",
    "slider_values", "curve_grid", "frontier_grids", "costing", "BudgetSearch", "budget_search",
]

#: Slider ranges: tasks 1..2000 on a log scale; scaffolds 1..20, benchmarks 1..30, replicates 1..10.
SLIDER_TOP = {"n_tasks": 2000, "n_scaffolds": 20, "n_benchmarks": 30, "n_replicates": 10}
#: Positions of the log-spaced task slider (unique integers remain after rounding).
TASK_SLIDER_POSITIONS = 200
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
        base = np.unique(np.round(np.geomspace(1, top, TASK_SLIDER_POSITIONS)))
    else:
        base = np.arange(1, top + 1, dtype=np.float64)
    return np.union1d(base, _extra(extra))


def curve_grid(field: str, extra=()) -> np.ndarray:
    """The sizes a curve is evaluated at: the slider's range (log-spaced for tasks), reaching any ``extra`` size."""
    top = max([SLIDER_TOP[field], *[float(x) for x in extra if x is not None]])
    if field == "n_tasks":
        return np.unique(np.round(np.geomspace(1, top, TASK_CURVE_POINTS)))
    return np.arange(1, math.ceil(top) + 1, dtype=np.float64)


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


@dataclass
class BudgetSearch:
    """The cost frontier of a state and the two designs every surface reports from it.

    Attributes
    ----------
    frontier
        The frontier over :func:`frontier_grids` (its ``cost`` is USD when ``by_cost``, else trials).
    by_cost
        True when the design has prices.
    budget
        The budget in USD, or None.
    cheapest
        Index of the cheapest design (fewest trials without prices) reaching the target, or None.
    best_in_budget
        Index of the design with the highest median coefficient within the budget; None without a
        budget, without prices, or when no design of the grid fits.
    """

    frontier: CostFrontier
    by_cost: bool
    budget: float | None
    cheapest: int | None
    best_in_budget: int | None

    @property
    def why_no_budget_design(self) -> str | None:
        """Why :attr:`best_in_budget` is None (None when it is not)."""
        if self.best_in_budget is not None or self.budget is None:
            return None
        if not self.by_cost:
            return "no price per trial: enter prices (or give a cost column) to search within a budget"
        return "no design of the grid fits the budget"

    def design_at(self, k: int | None) -> dict | None:
        """The sizes, trials, cost (USD, or None without prices) and median of design ``k``."""
        if k is None:
            return None
        d = self.frontier.design_at(k)
        if not self.by_cost:
            d["cost"] = None
        return d

    def at_budget(self, budget: float | None) -> "BudgetSearch":
        """The same frontier searched at another budget (cheap: the frontier is not recomputed)."""
        best = self.frontier.best_at_budget(budget) if (budget is not None and self.by_cost) else None
        return BudgetSearch(self.frontier, self.by_cost, None if budget is None else float(budget), self.cheapest,
                            best)

    def to_dict(self) -> dict:
        return {"by_cost": self.by_cost, "budget": self.budget,
                "cheapest_for_target": self.design_at(self.cheapest),
                "best_design": self.design_at(self.best_in_budget),
                "why_no_budget_design": self.why_no_budget_design}


def budget_search(components, design: DStudyDesign, *, target: float | None = None, budget: float | None = None,
                  reference: DStudyDesign | None = None) -> BudgetSearch:
    """Cost frontier, cheapest design for the target and best design within the budget.

    Parameters
    ----------
    components
        Variance-component draws.
    design
        Fixes object, claim, replicates, models and prices (its sizes do not matter).
    target, budget
        Target coefficient (default: the claim's) and budget in USD.
    reference
        The observed design whose sizes set the grid (:func:`frontier_grids`); default ``design``.
    """
    costed, by_cost = costing(design)
    frontier = cost_frontier(components, costed, target=target, **frontier_grids(reference or design))
    return BudgetSearch(frontier, by_cost, None, frontier.cheapest, None).at_budget(budget)
