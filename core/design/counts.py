"""How big the corpus is along each facet, and which agents ran where (SPEC section 6).

:func:`facet_counts` counts records, trials, successes and the levels of every
facet, in total and per benchmark; :func:`coverage_matrix` gives the model x
scaffold grid of trial and task counts, pooled or for one benchmark.  Both
are pure functions of the corpus's canonical table and return a dataclass
whose ``to_dict()`` is JSON-serialisable.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..corpus.corpus import Corpus
from .cells import CellIndex, _combine, _first_index, cell_index

__all__ = ["FacetCounts", "CoverageMatrix", "facet_counts", "coverage_matrix"]


# ---------------------------------------------------------------------------
# Facet counts
# ---------------------------------------------------------------------------
@dataclass
class FacetCounts:
    """How big the corpus is along each facet.

    Attributes
    ----------
    records, trials, successes
        Rows of the canonical table, the sum of ``trials`` and of ``successes``.
    cells, replicated_cells
        Distinct (benchmark, task, model, scaffold) cells, and how many of them
        hold more than one trial (replicates separate cell-level variation from
        the Bernoulli residual; seed 000 (Hardy et al. 2026) App. E.5).
    benchmarks, tasks, models, scaffolds, agents
        Observed levels; ``tasks`` counts (benchmark, task) pairs and ``agents``
        distinct (model, scaffold) pairs.
    per_benchmark
        The same counts within each benchmark.
    dropped_records
        Records left out because a facet was missing.
    """

    records: int
    trials: int
    successes: int
    cells: int
    replicated_cells: int
    benchmarks: int
    tasks: int
    models: int
    scaffolds: int
    agents: int
    per_benchmark: dict[str, dict[str, int]] = field(default_factory=dict)
    dropped_records: int = 0

    def to_dict(self) -> dict:
        return {
            "records": self.records,
            "trials": self.trials,
            "successes": self.successes,
            "cells": self.cells,
            "replicated_cells": self.replicated_cells,
            "benchmarks": self.benchmarks,
            "tasks": self.tasks,
            "models": self.models,
            "scaffolds": self.scaffolds,
            "agents": self.agents,
            "dropped_records": self.dropped_records,
            "per_benchmark": {b: dict(v) for b, v in self.per_benchmark.items()},
        }


def _facet_counts(d: CellIndex) -> FacetCounts:
    nb = d.sizes["benchmark"]
    cb = d.cell["benchmark"]

    def per_b(values: np.ndarray) -> np.ndarray:
        return np.bincount(cb, weights=values.astype(np.float64), minlength=nb).astype(np.int64)

    def distinct_per_b(facets: set[str]) -> np.ndarray:
        return np.bincount(d.group_benchmark(facets | {"benchmark"}), minlength=nb).astype(np.int64)

    rec_b, tr_b, su_b = per_b(d.cell_records), per_b(d.cell_trials), per_b(d.cell_successes)
    tasks_b = distinct_per_b({"task"})
    models_b = distinct_per_b({"model"})
    scaff_b = distinct_per_b({"scaffold"})
    agents_b = distinct_per_b({"model", "scaffold"})
    cells_b = np.bincount(cb, minlength=nb)
    per_benchmark = {
        name: {
            "records": int(rec_b[k]),
            "trials": int(tr_b[k]),
            "successes": int(su_b[k]),
            "cells": int(cells_b[k]),
            "tasks": int(tasks_b[k]),
            "models": int(models_b[k]),
            "scaffolds": int(scaff_b[k]),
            "agents": int(agents_b[k]),
        }
        for k, name in enumerate(d.labels["benchmark"])
    }
    return FacetCounts(
        records=d.n_records,
        trials=d.n_trials,
        successes=d.n_successes,
        cells=d.n_cells,
        replicated_cells=int((d.cell_trials > 1).sum()),
        benchmarks=nb,
        tasks=d.sizes["task"],
        models=d.sizes["model"],
        scaffolds=d.sizes["scaffold"],
        agents=d.n_groups({"model", "scaffold"}),
        per_benchmark=per_benchmark,
        dropped_records=d.n_dropped,
    )


def facet_counts(corpus: Corpus | pd.DataFrame) -> FacetCounts:
    """Count records, trials, successes and levels of every facet (SPEC section 6).

    Parameters
    ----------
    corpus
        A :class:`~ddr_explorer.core.corpus.corpus.Corpus` or its canonical table.

    Returns
    -------
    FacetCounts
        Totals and per-benchmark counts.  Tasks are (benchmark, task) pairs;
        agents are distinct (model, scaffold) pairs.
    """
    return _facet_counts(cell_index(corpus))


# ---------------------------------------------------------------------------
# Coverage
# ---------------------------------------------------------------------------
@dataclass
class CoverageMatrix:
    """Model x scaffold coverage of one benchmark (or of the pooled corpus).

    Attributes
    ----------
    benchmark
        The benchmark, or None for the pooled corpus.
    trials
        DataFrame indexed by model, columns scaffold: the number of trials of
        each agent (0 where the agent was not run).
    tasks
        Same shape: the number of distinct (benchmark, task) pairs each agent attempted.
    """

    benchmark: str | None
    trials: pd.DataFrame
    tasks: pd.DataFrame

    @property
    def observed_agents(self) -> int:
        return int((self.trials.to_numpy() > 0).sum())

    @property
    def fill(self) -> float:
        """Share of the model x scaffold grid that was run (1.0 = fully crossed)."""
        size = self.trials.size
        return float(self.observed_agents / size) if size else 0.0

    def to_dict(self) -> dict:
        return {
            "benchmark": self.benchmark,
            "models": [str(x) for x in self.trials.index],
            "scaffolds": [str(x) for x in self.trials.columns],
            "trials": [[int(x) for x in row] for row in self.trials.to_numpy()],
            "tasks": [[int(x) for x in row] for row in self.tasks.to_numpy()],
            "observed_agents": self.observed_agents,
            "fill": self.fill,
        }


def _coverage(d: CellIndex, benchmark: str | None) -> CoverageMatrix:
    if benchmark is None:
        mask = np.ones(d.n_cells, dtype=bool)
    else:
        if benchmark not in d.labels["benchmark"]:
            raise ValueError(
                f"benchmark '{benchmark}' is not in the corpus (benchmarks: {d.labels['benchmark']}). "
                "Fix: pass one of these names, or None for the pooled matrix."
            )
        mask = d.cell["benchmark"] == d.labels["benchmark"].index(benchmark)
    m, a = d.cell["model"][mask], d.cell["scaffold"][mask]
    models = np.unique(m)
    scaffolds = np.unique(a)
    mi = np.searchsorted(models, m)
    ai = np.searchsorted(scaffolds, a)
    shape = (len(models), len(scaffolds))
    flat = mi * len(scaffolds) + ai
    trials = np.bincount(flat, weights=d.cell_trials[mask].astype(np.float64), minlength=shape[0] * shape[1])
    # distinct tasks per agent: distinct (task, model, scaffold) triples
    key, _ = _combine([d.cell["task"][mask], flat], [d.sizes["task"], max(shape[0] * shape[1], 1)], int(mask.sum()))
    first = _first_index(key)
    tasks = np.bincount(flat[first], minlength=shape[0] * shape[1])
    index = pd.Index([d.labels["model"][k] for k in models], name="model")
    columns = pd.Index([d.labels["scaffold"][k] for k in scaffolds], name="scaffold")
    return CoverageMatrix(
        benchmark=benchmark,
        trials=pd.DataFrame(trials.reshape(shape).astype(np.int64), index=index, columns=columns),
        tasks=pd.DataFrame(tasks.reshape(shape).astype(np.int64), index=index, columns=columns),
    )


def coverage_matrix(corpus: Corpus | pd.DataFrame, benchmark: str | None = None) -> CoverageMatrix:
    """Model x scaffold matrices of trial and task counts (SPEC section 6).

    Parameters
    ----------
    corpus
        A corpus or its canonical table.
    benchmark
        Restrict to one benchmark; None pools all benchmarks.

    Returns
    -------
    CoverageMatrix
        Rows are the models and columns the scaffolds observed in the selection
        (in the corpus's category order); zeros mark agents never run.
    """
    return _coverage(cell_index(corpus), benchmark)
