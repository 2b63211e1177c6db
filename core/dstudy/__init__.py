"""Decision studies (D-studies): what reliability a design of tasks, scaffolds and benchmarks reaches, at what cost.

Everything here is a function of a posterior of variance components (:mod:`..reliability`) and a
:class:`DStudyDesign`; every estimand is computed per draw and then summarised, and the app, the
CLI and the DDR sheet call the same functions, so they show the same numbers.

Modules, in the order a D-study uses them:

* :mod:`.sizes` - :class:`DStudyDesign`, the sizes and prices of a design, its trial count and cost;
* :mod:`.observed` - :func:`observed_design`, the design a corpus ran (the one place it is built);
* :mod:`.grids` - slider positions, curve and frontier grids, the no-price policy;
* :mod:`.budget` - :func:`budget_search`: the cheapest design for a target, the best within a budget;
* :mod:`.curves` - :class:`DStudyModel`: curves, readouts and required sizes per draw, reliability at a
  fixed budget of tasks;
* :mod:`.frontier` - the cost frontier and the allocation of tasks across benchmarks;
* :mod:`.allocation` - :func:`allocate_budget`, a budget's tasks per benchmark by each benchmark's
  task variance and price (seed 000 (Hardy et al. 2026) sec. 5.4);
* :mod:`.prices` - prices from a cost column or token counts, cost-aware rankings;
* :mod:`.objects` - :func:`by_object`, model, scaffold and system read from one fit (seed 000 Table 17);
* :mod:`.summary` - :func:`dstudy_summary`, the answer ``ddr dstudy`` prints.
"""

from .allocation import BenchmarkAllocation, allocate_budget, allocation_for_summary
from .curves import (BreadthCurve, CoefficientParts, DStudyCurve, DStudyModel, DStudyView, Readouts, RequiredN, d_study_curve, fixed_budget_breadth,
                     p_target_met, required_n)
from .frontier import Allocation, CostFrontier, allocate_tasks, cost_frontier
from .budget import BudgetSearch, budget_search
from .grids import costing, curve_grid, default_grid, frontier_grids, slider_values
from .observed import ObservedDesignError, corpus_prices, observed_design, observed_sizes
from .prices import (CostRanking, accuracy_per_dollar, prices_from_cost_column, prices_from_tokens,
                     reliability_per_dollar, row_costs_from_tokens)
from .sizes import DEFAULT_BAND_DRAWS, DEFAULT_TARGETS, DStudyDesign, same_sizes

__all__ = [
    "DEFAULT_TARGETS", "DEFAULT_BAND_DRAWS", "DStudyDesign", "DStudyModel", "CoefficientParts", "DStudyCurve",
    "RequiredN", "Readouts", "DStudyView", "BreadthCurve", "CostFrontier", "Allocation", "CostRanking",
    "BudgetSearch", "ObservedDesignError", "d_study_curve", "required_n", "p_target_met", "fixed_budget_breadth",
    "cost_frontier", "allocate_tasks", "prices_from_cost_column", "prices_from_tokens", "row_costs_from_tokens",
    "accuracy_per_dollar", "reliability_per_dollar", "default_grid", "slider_values", "curve_grid",
    "frontier_grids", "costing", "budget_search", "observed_sizes", "observed_design", "corpus_prices",
    "BenchmarkAllocation", "allocate_budget", "allocation_for_summary", "same_sizes",
]
