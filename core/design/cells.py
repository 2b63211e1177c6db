"""The corpus's cells, integer-coded: what every design diagnostic counts on.

A :class:`CellIndex` reduces the record table once to its distinct cells and
codes each facet as dense integers; facet counts, coverage, the incidence graph
and the separability check (:mod:`.counts`, :mod:`.incidence`,
:mod:`.identifiability`) all work on it.

Conventions
-----------
* ``task`` is nested in ``benchmark``: a task is a (benchmark, task) pair, so two
  benchmarks that use the same task label have two different tasks.
* An *observation* is a trial: a record with ``trials = t`` counts as ``t``
  observations sharing every facet level.
* A *cell* is a distinct (benchmark, task, model, scaffold) combination.
* Records whose benchmark, task, model or scaffold is missing are left out.

All computations work on integer codes with ``numpy``/``pandas`` group-bys; no
Python loop runs over records, so a million records take well under a second.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..corpus import schema
from ..corpus.corpus import Corpus

__all__ = ["FACETS", "CellIndex", "cell_index"]

#: The four facets of a record (SPEC section 1); ``task`` is nested in ``benchmark``.
FACETS: tuple[str, ...] = ("benchmark", "task", "model", "scaffold")


def _dense_codes(col: pd.Series, with_labels: bool = True) -> tuple[np.ndarray, int, list[str] | None]:
    """Dense int64 codes (-1 = missing) over the *observed* levels of a column.

    Returns the codes, the number of observed levels and (on request) their
    labels as strings.  Categorical columns keep their category order; other
    columns are sorted.
    """
    if isinstance(col.dtype, pd.CategoricalDtype):
        raw = col.cat.codes.to_numpy().astype(np.int64, copy=False)
        ncat = len(col.cat.categories)
        present = np.bincount(raw[raw >= 0], minlength=ncat) > 0
        n_obs = int(present.sum())
        remap = np.full(ncat + 1, -1, dtype=np.int64)
        remap[:ncat][present] = np.arange(n_obs, dtype=np.int64)
        codes = remap[raw]  # raw == -1 picks remap[-1] == -1
        labels = [str(x) for x in col.cat.categories[present]] if with_labels else None
        return codes, n_obs, labels
    codes, uniques = pd.factorize(col, sort=True, use_na_sentinel=True)
    labels = [str(x) for x in uniques] if with_labels else None
    return codes.astype(np.int64, copy=False), int(len(uniques)), labels


def _factorize_int(key: np.ndarray) -> tuple[np.ndarray, int]:
    codes, uniques = pd.factorize(key, sort=False)
    return codes.astype(np.int64, copy=False), int(len(uniques))


def _first_index(ids: np.ndarray) -> np.ndarray:
    """Index of the first element of each group for ids numbered by first appearance."""
    if len(ids) == 0:
        return np.zeros(0, dtype=np.int64)
    running = np.maximum.accumulate(ids)
    new = np.empty(len(ids), dtype=bool)
    new[0] = True
    new[1:] = ids[1:] > running[:-1]
    return np.flatnonzero(new)


def _combine(arrays: Sequence[np.ndarray], sizes: Sequence[int], n: int) -> tuple[np.ndarray, int]:
    """Group ids (numbered by first appearance) of the joint levels of several code arrays."""
    if not arrays:
        return np.zeros(n, dtype=np.int64), (1 if n else 0)
    key = arrays[0].astype(np.int64, copy=True)
    span = max(int(sizes[0]), 1)
    for arr, size in zip(arrays[1:], sizes[1:]):
        size = max(int(size), 1)
        if span * size >= 2**62:  # keep the mixed-radix key inside int64
            key, span = _factorize_int(key)
        key = key * size + arr
        span *= size
    return _factorize_int(key)


def _exact_sum_squares(values: np.ndarray) -> int:
    """Sum of squares of non-negative integers, exact (Python int when int64 could overflow)."""
    if len(values) == 0:
        return 0
    v = values.astype(np.int64, copy=False)
    vmax = int(v.max())
    if vmax * int(v.sum()) < 2**62:
        return int(np.dot(v, v))
    return int(sum(int(x) * int(x) for x in v))


def _exact_bincount_squares(keys: np.ndarray, values: np.ndarray, nkeys: int) -> list[int]:
    """Per-key sums of squared integer values, exact."""
    v = values.astype(np.int64, copy=False)
    if len(v) == 0:
        return [0] * nkeys
    if int(v.max()) * int(v.sum()) < 2**52:  # float64 sums are exact below 2**53
        out = np.bincount(keys, weights=(v * v).astype(np.float64), minlength=nkeys)
        return [int(x) for x in out]
    acc = [0] * nkeys
    for k, x in zip(keys.tolist(), v.tolist()):
        acc[k] += x * x
    return acc


class CellIndex:
    """Integer-coded cells of a corpus, with a cache of groupings by facet set.

    The record table is reduced once to its distinct cells (one row per
    combination of the facets used); every later count, edge list and kernel
    inner product works on the cells.  ``cell[f]`` is the code of facet ``f``
    in each cell (labels in ``labels[f]``; task codes number (benchmark, task)
    pairs) and ``cell_trials``, ``cell_records``, ``cell_successes`` what each
    cell holds.
    """

    def __init__(self, table: pd.DataFrame, extra_facets: Sequence[str] = ()):
        missing = [c for c in (*FACETS, schema.TRIALS) if c not in table.columns]
        if missing:
            raise ValueError(
                f"design diagnostics need the canonical columns {list(FACETS) + [schema.TRIALS]}; "
                f"missing {missing}. Fix: load the file with ddr_explorer.core.corpus so that it is "
                "mapped to the canonical layout."
            )
        self.facets: tuple[str, ...] = tuple(dict.fromkeys((*FACETS, *extra_facets)))
        codes: dict[str, np.ndarray] = {}
        self.labels: dict[str, list] = {}
        for f in self.facets:
            if f == "task":
                continue
            if f not in table.columns:
                raise ValueError(
                    f"facet '{f}' is not a column of the corpus (columns: {list(table.columns)}). "
                    "Fix: spell the term with existing facet columns."
                )
            codes[f], _, self.labels[f] = _dense_codes(table[f])
        # Task labels are never shown by the diagnostics (only counted), and
        # building a million of them would dominate the run time.
        t_raw, n_task_labels, _ = _dense_codes(table["task"], with_labels=False)
        valid = t_raw >= 0
        for f, c in codes.items():
            valid &= c >= 0
        self.n_dropped = int(len(table) - valid.sum())
        if not valid.any():
            raise ValueError(
                "the corpus has no record with a benchmark, task, model and scaffold; there is no design "
                "to diagnose. Fix: check that these columns are filled."
            )
        b = codes["benchmark"][valid]
        t_raw = t_raw[valid]
        # A task is a (benchmark, task) pair: nested codes over observed pairs.
        nb = len(self.labels["benchmark"])
        codes["task"], n_tasks = _combine([b, t_raw], [nb, n_task_labels], len(b))
        for f in self.facets:
            if f not in ("task", "benchmark"):
                codes[f] = codes[f][valid]
        codes["benchmark"] = b
        self.sizes = {f: (n_tasks if f == "task" else len(self.labels[f])) for f in self.facets}
        trials = table[schema.TRIALS].to_numpy()[valid].astype(np.int64)
        successes = (
            table[schema.SUCCESSES].to_numpy()[valid].astype(np.int64)
            if schema.SUCCESSES in table.columns
            else np.zeros(len(trials), dtype=np.int64)
        )
        # Cells: distinct combinations of all facets (task code already carries the benchmark).
        order = [f for f in self.facets if f != "benchmark"]
        cell_id, n_cells = _combine([codes[f] for f in order], [self.sizes[f] for f in order], len(trials))
        first = _first_index(cell_id)
        self.n_cells = n_cells
        self.cell = {f: codes[f][first] for f in self.facets}
        self.cell_trials = np.bincount(cell_id, weights=trials.astype(np.float64), minlength=n_cells).astype(np.int64)
        self.cell_records = np.bincount(cell_id, minlength=n_cells).astype(np.int64)
        self.cell_successes = np.bincount(
            cell_id, weights=successes.astype(np.float64), minlength=n_cells
        ).astype(np.int64)
        self.n_records = int(len(trials))
        self.n_trials = int(trials.sum())
        self.n_successes = int(successes.sum())
        self._groups: dict[frozenset, tuple[np.ndarray, int, np.ndarray]] = {}
        self._counts: dict[frozenset, np.ndarray] = {}

    # -- groupings -------------------------------------------------------
    def facet_set(self, facets: Iterable[str]) -> frozenset:
        """The facets as a frozenset, with ``benchmark`` added when ``task`` is in it."""
        s = frozenset(facets)
        if "task" in s:  # the task code carries its benchmark
            s = s | {"benchmark"}
        return s

    def grouping(self, facets: Iterable[str]) -> tuple[np.ndarray, int, np.ndarray]:
        """(group id per cell, number of groups, first cell of each group) for a facet set."""
        s = self.facet_set(facets)
        if s not in self._groups:
            used = [f for f in self.facets if f in s and not (f == "benchmark" and "task" in s)]
            ids, n = _combine([self.cell[f] for f in used], [self.sizes[f] for f in used], self.n_cells)
            self._groups[s] = (ids, n, _first_index(ids))
        return self._groups[s]

    def trial_counts(self, facets: Iterable[str]) -> np.ndarray:
        """Trials per group of a facet set (int64)."""
        s = self.facet_set(facets)
        if s not in self._counts:
            ids, n, _ = self.grouping(s)
            self._counts[s] = np.bincount(ids, weights=self.cell_trials.astype(np.float64), minlength=n).astype(
                np.int64
            )
        return self._counts[s]

    def n_groups(self, facets: Iterable[str]) -> int:
        return self.grouping(facets)[1]

    def levels_per(self, outer: Iterable[str], inner: Iterable[str]) -> np.ndarray:
        """For each observed level of ``outer``, the number of distinct ``outer + inner`` levels."""
        outer_s = self.facet_set(outer)
        joint = self.facet_set(set(outer_s) | set(inner))
        o_ids, n_outer, _ = self.grouping(outer_s)
        _, _, j_first = self.grouping(joint)
        return np.bincount(o_ids[j_first], minlength=n_outer).astype(np.int64)

    def group_benchmark(self, facets: Iterable[str]) -> np.ndarray:
        """Benchmark code of each group of a facet set that contains ``benchmark``."""
        s = self.facet_set(facets)
        assert "benchmark" in s
        _, _, first = self.grouping(s)
        return self.cell["benchmark"][first]

    def pairs(self, a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
        """Codes of the distinct observed (a, b) level pairs."""
        _, _, first = self.grouping({a, b})
        return self.cell[a][first], self.cell[b][first]


def _as_table(obj: Corpus | pd.DataFrame) -> pd.DataFrame:
    if isinstance(obj, Corpus):
        return obj.table
    if isinstance(obj, pd.DataFrame):
        return obj
    raise TypeError(f"expected a Corpus or a pandas DataFrame, got {type(obj).__name__}")


def cell_index(obj: Corpus | pd.DataFrame | CellIndex) -> CellIndex:
    """The cells of a corpus or canonical table, coded (an existing :class:`CellIndex` is returned as is)."""
    return obj if isinstance(obj, CellIndex) else CellIndex(_as_table(obj))
