"""The budget search every surface reports: the cheapest design for a target, the best within a budget.

:func:`budget_search` computes the cost frontier over :func:`.grids.frontier_grids` under the
no-price policy of :func:`.grids.costing`; the app's D-study tab, ``ddr dstudy --budget`` and the
DDR sheet's cost page all call it, so they name the same designs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import shown

from .frontier import CostFrontier, cost_frontier
from .grids import costing, frontier_grids
from .sizes import DStudyDesign

__all__ = ["BudgetSearch", "budget_search"]


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
        """The same frontier searched at another budget (cheap: the frontier is not recomputed).

        A budget is a positive number of USD (the DDR sheet's rule): ``--budget -5`` searched "within $-5.00".
        """
        if budget is not None and not (math.isfinite(float(budget)) and float(budget) > 0):
            raise ValueError(f"budget should be a positive number of USD, got {shown(budget)}")
        best = self.frontier.best_at_budget(budget) if (budget is not None and self.by_cost) else None
        return BudgetSearch(self.frontier, self.by_cost, None if budget is None else float(budget), self.cheapest,
                            best)

    def to_dict(self) -> dict:
        return {"by_cost": self.by_cost, "budget": self.budget,
                "cheapest_for_target": self.design_at(self.cheapest),
                "best_design": self.design_at(self.best_in_budget),
                "why_no_budget_design": self.why_no_budget_design}


def budget_search(components, design: DStudyDesign, *, target: float | None = None, budget: float | None = None,
                  reference: DStudyDesign | None = None, scale: str = "latent") -> BudgetSearch:
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
    scale
        The coefficient's scale (:data:`.curves.SCALES`).
    """
    costed, by_cost = costing(design)
    frontier = cost_frontier(components, costed, target=target, scale=scale, **frontier_grids(reference or design))
    return BudgetSearch(frontier, by_cost, None, frontier.cheapest, None).at_budget(budget)
