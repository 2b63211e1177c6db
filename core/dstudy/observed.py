"""The design a corpus ran, as D-study sizes and prices: the one place it is built.

The app (its analysis state and the D-study tab's "observed design" markers), ``ddr dstudy``,
``ddr report``, the DDR sheet and every refit analysis start from :func:`observed_design`; the
sizes come from :func:`observed_sizes` and the prices from :func:`corpus_prices`, so the same
corpus always gives the same observed design everywhere.
"""

from __future__ import annotations

import math
from typing import Mapping

import pandas as pd

from ..reliability import AGENT, object_facets
from .prices import prices_from_cost_column
from .sizes import DStudyDesign

__all__ = ["ObservedDesignError", "observed_sizes", "corpus_prices", "observed_design"]


class ObservedDesignError(ValueError):
    """The corpus table cannot define a design (missing columns, no records)."""


def _table(corpus):
    return getattr(corpus, "table", corpus)


#: Record facets every design has; the others (seed 003's step, error_category) are the fit's extra facets.
_BASE_FACETS = ("benchmark", "task", "model", "scaffold", "agent")


def _extra_facets(table, facets) -> list[str]:
    """The fit's facets beyond benchmark, task, model and scaffold that are columns of the table, in the table's
    column order (the fit's facets may come as a set: the order must not depend on string hashing)."""
    wanted = set(facets or ())
    return [str(f) for f in table.columns if f in wanted and f not in _BASE_FACETS]


def observed_sizes(corpus, facets=()) -> dict[str, float]:
    """The design a corpus ran, as D-study sizes.

    Parameters
    ----------
    corpus
        A corpus or its canonical table (facet columns, ``trials``).
    facets
        The fit's facets (``VarianceComponents.facets``).  Those beyond benchmark, task, model and
        scaffold (seed 003 (DDR paper 2026) Eq. 1's ``step`` and ``error_category``) are sized by their levels in the
        corpus (``extra_facets``), and they are part of the cell whose trials are the replicates:
        in seed 003's design a replicate is one trace's check at one step of one category.  A fit
        without a benchmark facet counts every benchmark's tasks as one task facet (``n_tasks`` all
        tasks, ``n_benchmarks`` 1).

    Returns
    -------
    dict
        ``n_tasks``: median over benchmarks of the tasks per benchmark, rounded down to whole tasks (two
        benchmarks of 1 and 2 tasks run 1 task per benchmark, never 1.5);
        ``n_scaffolds``: median over models of the scaffolds each model ran
        with; ``n_benchmarks``: the number of benchmarks; ``n_replicates``:
        median trials per (benchmark, task, model, scaffold[, extra facets]) cell;
        ``extra_facets``: levels of each extra facet (only when the fit has one).  The other medians
        of an even count may be half-integers (D-study sizes need not be whole).
    """
    table = _table(corpus)
    missing = [c for c in ("benchmark", "task", "model", "scaffold", "trials") if c not in table.columns]
    if missing:
        raise ObservedDesignError(f"the corpus table lacks column(s) {', '.join(missing)}; load it with load_corpus")
    if table.empty:
        raise ObservedDesignError("the corpus has no records; its design is undefined")
    tasks = table.groupby("benchmark", observed=True)["task"].nunique()
    scaffolds = table.groupby("model", observed=True)["scaffold"].nunique()
    if facets and "benchmark" not in facets and len(tasks) > 1:
        # a fit without a benchmark facet (seed 003's model) has one task facet over every benchmark's tasks:
        # the D-study averages over all of them, as one benchmark
        tasks = pd.Series([float(table.groupby(["benchmark", "task"], observed=True).ngroups)])
    extra = _extra_facets(table, facets)
    cells = table.groupby(["benchmark", "task", "model", "scaffold", *extra], observed=True)["trials"].sum()
    # tasks per benchmark as the corpus has them: a reader of "tasks per benchmark" counts whole tasks
    out = {"n_tasks": float(math.floor(tasks.median())), "n_scaffolds": float(scaffolds.median()),
           "n_benchmarks": float(len(tasks)), "n_replicates": max(1.0, float(cells.median()))}
    if extra:
        out["extra_facets"] = {f: float(table[f].nunique(dropna=True)) for f in extra}
    return out


def corpus_prices(corpus) -> dict[str, float]:
    """USD per trial of each benchmark from the corpus's cost column; ``{}`` when it has no cost.

    ``sum(cost) / sum(trials)`` over the costed rows of each benchmark
    (:func:`~.prices.prices_from_cost_column`).
    """
    table = _table(corpus)
    if "cost" not in table.columns or not table["cost"].notna().any():
        return {}
    return {str(k): float(v) for k, v in prices_from_cost_column(table, "benchmark").items()}


def observed_design(corpus, *, object_of_measurement: str = "model", claim: str = "relative",
                    prices: Mapping[str, float] | float | None = None, facets=()) -> DStudyDesign:
    """The corpus's own design: its sizes (:func:`observed_sizes`), models and prices.

    Parameters
    ----------
    corpus
        A corpus or its canonical table.
    object_of_measurement, claim
        ``"model"``, ``"system"`` or ``"agent"`` (:func:`~ddr_explorer.core.reliability.object_for_terms`);
        ``"relative"`` (ranking) or ``"absolute"``.  For agents, ``n_models`` counts the agents
        (model-scaffold pairs that ran) and ``n_scaffolds`` is 1, so the trial count is agents x tasks x
        replicates.
    prices
        USD per trial (one number or ``{benchmark: price}``); default: the
        corpus's cost column (:func:`corpus_prices`), no prices without one.
    facets
        The fit's facets, for the extra facets of seed 003's design (:func:`observed_sizes`).
    """
    table = _table(corpus)
    sizes = observed_sizes(table, facets)
    n_models = max(1, int(table["model"].nunique(dropna=True)))
    if object_facets(object_of_measurement) == {AGENT}:
        # an agent is one model-scaffold pair (seed 003 sec. 3): the design compares agents, each run once, so
        # its trials are agents x tasks x replicates and "Agents compared" counts what the cost multiplies
        n_models = max(1, int(table.groupby(["model", "scaffold"], observed=True).ngroups))
        sizes["n_scaffolds"] = 1.0
    if prices is None:
        prices = corpus_prices(table)
    if isinstance(prices, Mapping):
        prices = {str(k): float(v) for k, v in prices.items()} or 0.0
    return DStudyDesign(**sizes, price_per_trial=prices, n_models=n_models,
                        object_of_measurement=object_of_measurement, claim=claim)
