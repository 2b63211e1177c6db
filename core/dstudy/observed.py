"""The design a corpus ran, as D-study sizes and prices: the one place it is built.

The app (its analysis state and the D-study tab's "observed design" markers), ``ddr dstudy``,
``ddr report``, the DDR sheet and every refit analysis start from :func:`observed_design`; the
sizes come from :func:`observed_sizes` and the prices from :func:`corpus_prices`, so the same
corpus always gives the same observed design everywhere.
"""

from __future__ import annotations

from typing import Mapping

from .prices import prices_from_cost_column
from .sizes import DStudyDesign

__all__ = ["ObservedDesignError", "observed_sizes", "corpus_prices", "observed_design"]


class ObservedDesignError(ValueError):
    """The corpus table cannot define a design (missing columns, no records)."""


def _table(corpus):
    return getattr(corpus, "table", corpus)


def observed_sizes(corpus) -> dict[str, float]:
    """The design a corpus ran, as D-study sizes.

    Parameters
    ----------
    corpus
        A corpus or its canonical table (facet columns, ``trials``).

    Returns
    -------
    dict
        ``n_tasks``: median over benchmarks of the tasks per benchmark;
        ``n_scaffolds``: median over models of the scaffolds each model ran
        with; ``n_benchmarks``: the number of benchmarks; ``n_replicates``:
        median trials per (benchmark, task, model, scaffold) cell.  Medians
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
    cells = table.groupby(["benchmark", "task", "model", "scaffold"], observed=True)["trials"].sum()
    return {"n_tasks": float(tasks.median()), "n_scaffolds": float(scaffolds.median()),
            "n_benchmarks": float(len(tasks)), "n_replicates": max(1.0, float(cells.median()))}


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
                    prices: Mapping[str, float] | float | None = None) -> DStudyDesign:
    """The corpus's own design: its sizes (:func:`observed_sizes`), models and prices.

    Parameters
    ----------
    corpus
        A corpus or its canonical table.
    object_of_measurement, claim
        ``"model"`` or ``"system"``; ``"relative"`` (ranking) or ``"absolute"``.
    prices
        USD per trial (one number or ``{benchmark: price}``); default: the
        corpus's cost column (:func:`corpus_prices`), no prices without one.
    """
    table = _table(corpus)
    sizes = observed_sizes(table)
    if prices is None:
        prices = corpus_prices(table)
    if isinstance(prices, Mapping):
        prices = {str(k): float(v) for k, v in prices.items()} or 0.0
    return DStudyDesign(**sizes, price_per_trial=prices, n_models=max(1, int(table["model"].nunique(dropna=True))),
                        object_of_measurement=object_of_measurement, claim=claim)
