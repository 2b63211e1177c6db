"""Design diagnostics: facet counts, coverage, incidence graph and separability.

This module answers "what can this corpus tell apart?" before anything is
fitted (SPEC section 6; seed 000 Appendix E).  Everything here is a pure
function of the corpus's canonical table and returns a plain dataclass with a
``to_dict()`` whose values are JSON-serialisable (dicts, lists, str, int,
float, bool, None).

Three notions are kept apart, as in seed 000 App. E:

* **connectivity**: whether benchmarks, models and scaffolds form one
  comparison network (the incidence graph of App. E.2, Lemma E.1);
* **structural identifiability (separability)**: whether two variance
  components imply different covariance structures on the observed cells
  (Prop. E.2; the replication patterns of Table 15; Prop. E.3's conditions);
* **practical estimability**: how precisely the data pin a component down.  That
  is the posterior's job; here it appears only as counts (how many models recur
  across benchmarks, what share of items more than one model attempted, ...).

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

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterable, Sequence

import networkx as nx
import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse import csgraph

from .corpus import schema
from .corpus.corpus import Corpus

__all__ = [
    "FACETS",
    "POOLED_TERMS",
    "PER_BENCHMARK_TERMS",
    "FacetCounts",
    "CoverageMatrix",
    "Connectivity",
    "Separability",
    "DesignDiagnostics",
    "facet_counts",
    "coverage_matrix",
    "incidence_graph",
    "connectivity",
    "separability",
    "separable_terms",
    "diagnose",
]

#: The four facets of a record (SPEC section 1); ``task`` is nested in ``benchmark``.
FACETS: tuple[str, ...] = ("benchmark", "task", "model", "scaffold")

#: Random-intercept terms of the pooled leaderboard model (seed 000 Eq. 6).
POOLED_TERMS: tuple[str, ...] = (
    "benchmark",
    "benchmark:task",
    "model",
    "scaffold",
    "benchmark:model",
    "benchmark:scaffold",
    "model:scaffold",
    "benchmark:task:model",
    "benchmark:task:scaffold",
    "benchmark:model:scaffold",
)

#: Random-intercept terms of the per-benchmark model (seed 000 Eq. 2).
PER_BENCHMARK_TERMS: tuple[str, ...] = (
    "task",
    "model",
    "scaffold",
    "task:model",
    "task:scaffold",
    "model:scaffold",
)

# Names of the nuisance kernels in the separability check.
_INTERCEPT = "(intercept)"
_RESIDUAL = "residual"
_CELL = "(terminal cell)"

# Facet sets are frozensets of facet names; the trial-level residual is a sentinel.
_TRIAL_LEVEL = "__trial__"


# ---------------------------------------------------------------------------
# Integer coding of the design
# ---------------------------------------------------------------------------
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


class _Design:
    """Integer-coded cells of a corpus, with a cache of groupings by facet set.

    The record table is reduced once to its distinct cells (one row per
    combination of the facets used); every later count, edge list and kernel
    inner product works on the cells.
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
    def _normal(self, facets: Iterable[str]) -> frozenset:
        s = frozenset(facets)
        if "task" in s:  # the task code carries its benchmark
            s = s | {"benchmark"}
        return s

    def grouping(self, facets: Iterable[str]) -> tuple[np.ndarray, int, np.ndarray]:
        """(group id per cell, number of groups, first cell of each group) for a facet set."""
        s = self._normal(facets)
        if s not in self._groups:
            used = [f for f in self.facets if f in s and not (f == "benchmark" and "task" in s)]
            ids, n = _combine([self.cell[f] for f in used], [self.sizes[f] for f in used], self.n_cells)
            self._groups[s] = (ids, n, _first_index(ids))
        return self._groups[s]

    def trial_counts(self, facets: Iterable[str]) -> np.ndarray:
        """Trials per group of a facet set (int64)."""
        s = self._normal(facets)
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
        outer_s = self._normal(outer)
        joint = self._normal(set(outer_s) | set(inner))
        o_ids, n_outer, _ = self.grouping(outer_s)
        _, _, j_first = self.grouping(joint)
        return np.bincount(o_ids[j_first], minlength=n_outer).astype(np.int64)

    def group_benchmark(self, facets: Iterable[str]) -> np.ndarray:
        """Benchmark code of each group of a facet set that contains ``benchmark``."""
        s = self._normal(facets)
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


def _design(obj: Corpus | pd.DataFrame | _Design) -> _Design:
    return obj if isinstance(obj, _Design) else _Design(_as_table(obj))


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
        the Bernoulli residual; seed 000 App. E.5).
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


def _facet_counts(d: _Design) -> FacetCounts:
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
    return _facet_counts(_design(corpus))


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


def _coverage(d: _Design, benchmark: str | None) -> CoverageMatrix:
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
    return _coverage(_design(corpus), benchmark)


# ---------------------------------------------------------------------------
# Incidence graph and connectivity (seed 000 App. E.1-E.2)
# ---------------------------------------------------------------------------
def _label(vertex: tuple[str, str]) -> str:
    return f"{vertex[0]}:{vertex[1]}"


def _graph(d: _Design) -> nx.Graph:
    """Tripartite incidence graph of the benchmarks, models and scaffolds of a design."""
    lab = d.labels
    g = nx.Graph()
    for facet in ("benchmark", "model", "scaffold"):
        g.add_nodes_from(((facet, name) for name in lab[facet]), facet=facet)
    for f1, f2 in (("benchmark", "model"), ("benchmark", "scaffold"), ("model", "scaffold")):
        c1, c2 = d.pairs(f1, f2)
        w = d.trial_counts({f1, f2})
        g.add_edges_from(
            ((f1, lab[f1][x]), (f2, lab[f2][y]), {"trials": t})
            for x, y, t in zip(c1.tolist(), c2.tolist(), w.tolist())
        )
    return g


def incidence_graph(corpus: Corpus | pd.DataFrame) -> nx.Graph:
    """The benchmark-model-scaffold incidence graph of seed 000 App. E.2.

    Vertices are ``("benchmark", name)``, ``("model", name)`` and
    ``("scaffold", name)`` (node attribute ``facet``).  "An edge joins two
    levels when they co-occur in at least one observed response": every record
    adds the three edges benchmark-model, benchmark-scaffold and model-scaffold.
    Tasks are not vertices: they are nested in benchmarks and never connect
    benchmarks.  Edge attribute ``trials`` is the number of trials behind it.

    Parameters
    ----------
    corpus
        A corpus or its canonical table.

    Returns
    -------
    networkx.Graph
    """
    return _graph(_design(corpus))


def _bipartite_components(d: _Design, f1: str, f2: str) -> int:
    """Connected components of the bipartite incidence graph of two facets."""
    a, b = d.pairs(f1, f2)
    n1, n2 = d.sizes[f1], d.sizes[f2]
    adj = sp.coo_matrix((np.ones(len(a), dtype=np.int8), (a, n1 + b)), shape=(n1 + n2, n1 + n2)).tocsr()
    return int(csgraph.connected_components(adj, directed=False)[0])


@dataclass
class Connectivity:
    """Connectivity of the incidence graph (seed 000 App. E.1).

    Attributes
    ----------
    n_components
        Connected components of the benchmark-model-scaffold graph.
    components
        Vertex labels (``"benchmark:<name>"``, ``"model:<name>"``,
        ``"scaffold:<name>"``) of each component, largest first.  Contrasts
        between models or scaffolds of different components are not identified
        and must never be reported (App. E.7).
    articulation_vertices
        Vertices whose removal splits their component.
    benchmark_degree
        Degree of each benchmark vertex (models + scaffolds observed on it).
    benchmark_models, benchmark_scaffolds
        The two parts of that degree.
    removal_change
        For each benchmark, the change in the number of components when its
        records are removed (leave-one-benchmark-out, App. D.4): positive values
        mark a benchmark that bridges otherwise separate parts of the design.
    benchmark_model_components, benchmark_scaffold_components, model_scaffold_components
        Components of the three bipartite sub-graphs.  Prop. E.3 (i)-(ii) need the
        first two connected; Lemma E.1 (model and scaffold contrasts of an
        additive model) needs the model-scaffold graph connected.
    """

    n_components: int
    components: list[list[str]]
    articulation_vertices: list[str]
    benchmark_degree: dict[str, int]
    benchmark_models: dict[str, int]
    benchmark_scaffolds: dict[str, int]
    removal_change: dict[str, int]
    benchmark_model_components: int
    benchmark_scaffold_components: int
    model_scaffold_components: int

    @property
    def connected(self) -> bool:
        return self.n_components == 1

    def to_dict(self) -> dict:
        return {
            "connected": self.connected,
            "n_components": self.n_components,
            "components": [list(c) for c in self.components],
            "articulation_vertices": list(self.articulation_vertices),
            "benchmark_degree": dict(self.benchmark_degree),
            "benchmark_models": dict(self.benchmark_models),
            "benchmark_scaffolds": dict(self.benchmark_scaffolds),
            "removal_change": dict(self.removal_change),
            "benchmark_model_components": self.benchmark_model_components,
            "benchmark_scaffold_components": self.benchmark_scaffold_components,
            "model_scaffold_components": self.model_scaffold_components,
        }


_FACET_ORDER = {"benchmark": 0, "model": 1, "scaffold": 2}


def _vertex_sort_key(v: tuple[str, str]) -> tuple[int, str]:
    return (_FACET_ORDER[v[0]], v[1])


def _leave_one_benchmark_out_components(d: _Design) -> np.ndarray:
    """Components of the incidence graph rebuilt without each benchmark's records.

    Removing a benchmark's records (not just its vertex) also removes the
    model-scaffold edges and the levels that only this benchmark supplied,
    which is what a leave-one-benchmark-out refit (seed 000 App. D.4) would
    see.  Each graph is a sparse adjacency matrix handed to scipy's
    connected-components routine; vertices left without edges are the levels
    that vanished and are not counted.
    """
    nb, nm, na = d.sizes["benchmark"], d.sizes["model"], d.sizes["scaffold"]
    n_vertices = nb + nm + na
    bm_b, bm_m = d.pairs("benchmark", "model")
    ba_b, ba_a = d.pairs("benchmark", "scaffold")
    ma_ids, n_ma, ma_first = d.grouping({"model", "scaffold"})
    ma_m, ma_a = d.cell["model"][ma_first], d.cell["scaffold"][ma_first]
    _, _, t_first = d.grouping({"benchmark", "model", "scaffold"})
    t_ma, t_b = ma_ids[t_first], d.cell["benchmark"][t_first]
    support = np.bincount(t_ma, minlength=n_ma)
    # the benchmark that alone supports a model-scaffold edge (-1: several do)
    sole = np.full(n_ma, -1, dtype=np.int64)
    alone = support[t_ma] == 1
    sole[t_ma[alone]] = t_b[alone]
    src = np.concatenate([bm_b, ba_b, nb + ma_m])
    dst = np.concatenate([nb + bm_m, nb + nm + ba_a, nb + nm + ma_a])
    owner = np.concatenate([bm_b, ba_b, sole])  # edge disappears with this benchmark
    # Sort the edges once by (source, target) so that every subgraph's CSR
    # arrays can be written directly, without scipy re-sorting them each time.
    order = np.lexsort((dst, src))
    src, dst, owner = src[order], dst[order], owner[order]
    out = np.zeros(nb, dtype=np.int64)
    for k in range(nb):
        keep = owner != k
        s, t = src[keep], dst[keep]
        indptr = np.zeros(n_vertices + 1, dtype=np.int64)
        np.cumsum(np.bincount(s, minlength=n_vertices), out=indptr[1:])
        adj = sp.csr_matrix((np.ones(len(s), dtype=np.int8), t, indptr), shape=(n_vertices, n_vertices))
        adj.has_sorted_indices = True
        n_comp, _ = csgraph.connected_components(adj, directed=False)
        used = np.zeros(n_vertices, dtype=bool)
        used[s] = True
        used[t] = True
        out[k] = n_comp - int((~used).sum())
    return out


def _connectivity(d: _Design) -> Connectivity:
    g = _graph(d)
    comps = sorted(
        (sorted(c, key=_vertex_sort_key) for c in nx.connected_components(g)),
        key=lambda c: (-len(c), _vertex_sort_key(c[0])),
    )
    art = sorted(nx.articulation_points(g), key=_vertex_sort_key)
    n_comp = len(comps)
    bnames = d.labels["benchmark"]
    nb = len(bnames)
    bm_b, _ = d.pairs("benchmark", "model")
    ba_b, _ = d.pairs("benchmark", "scaffold")
    n_models_b = np.bincount(bm_b, minlength=nb)
    n_scaff_b = np.bincount(ba_b, minlength=nb)
    lobo = _leave_one_benchmark_out_components(d)
    removal = {name: int(lobo[k] - n_comp) for k, name in enumerate(bnames)}
    return Connectivity(
        n_components=n_comp,
        components=[[_label(v) for v in c] for c in comps],
        articulation_vertices=[_label(v) for v in art],
        benchmark_degree={name: int(g.degree[("benchmark", name)]) for name in bnames},
        benchmark_models={name: int(n_models_b[k]) for k, name in enumerate(bnames)},
        benchmark_scaffolds={name: int(n_scaff_b[k]) for k, name in enumerate(bnames)},
        removal_change=removal,
        benchmark_model_components=_bipartite_components(d, "benchmark", "model"),
        benchmark_scaffold_components=_bipartite_components(d, "benchmark", "scaffold"),
        model_scaffold_components=_bipartite_components(d, "model", "scaffold"),
    )


def connectivity(corpus: Corpus | pd.DataFrame) -> Connectivity:
    """Components, articulation vertices and benchmark degrees (seed 000 App. E.1).

    Parameters
    ----------
    corpus
        A corpus or its canonical table.

    Returns
    -------
    Connectivity
        See the class for every field.  ``removal_change[b]`` is the number of
        components of the graph built without benchmark ``b``'s records minus
        the number of the full graph (models or scaffolds seen only on ``b``
        vanish rather than becoming isolated; removing the only benchmark
        gives -1).
    """
    return _connectivity(_design(corpus))


# ---------------------------------------------------------------------------
# Separability of variance components (seed 000 App. E.3-E.6)
# ---------------------------------------------------------------------------
def _parse_term(term: str | Sequence[str]) -> tuple[str, ...]:
    parts = tuple(p.strip() for p in (term.split(":") if isinstance(term, str) else term))
    if not parts or any(not p for p in parts):
        raise ValueError(f"cannot read the term {term!r}. Fix: write facets joined by ':', e.g. 'benchmark:model'.")
    return parts


def _term_name(term: str | Sequence[str]) -> str:
    return ":".join(_parse_term(term))


def _rref(mat: list[list[int]]) -> tuple[list[list[Fraction]], list[int]]:
    """Exact reduced row echelon form of an integer matrix and its pivot columns."""
    a = [[Fraction(x) for x in row] for row in mat]
    nrows = len(a)
    ncols = len(a[0]) if a else 0
    pivots: list[int] = []
    r = 0
    for c in range(ncols):
        if r == nrows:
            break
        p = next((i for i in range(r, nrows) if a[i][c] != 0), None)
        if p is None:
            continue
        a[r], a[p] = a[p], a[r]
        piv = a[r][c]
        a[r] = [x / piv for x in a[r]]
        for i in range(nrows):
            if i != r and a[i][c] != 0:
                f = a[i][c]
                a[i] = [x - f * y for x, y in zip(a[i], a[r])]
        pivots.append(c)
        r += 1
    return a, pivots


def _well_conditioned(mat: list[list[int]]) -> bool:
    """True when a Gram matrix is certainly non-singular (checked in floating point).

    The matrix is scaled to unit diagonal; its eigenvalues then lie in [0, n]
    and are computed with an absolute error of order n * 1e-16, so a smallest
    eigenvalue above 1e-9 proves non-singularity.  Anything closer to singular
    goes to the exact rational elimination.
    """
    g = np.array([[float(x) for x in row] for row in mat])
    dg = np.sqrt(np.diag(g))
    if len(g) == 0:
        return True
    if np.any(dg == 0) or not np.all(np.isfinite(g)):
        return False
    c = g / np.outer(dg, dg)
    return bool(np.linalg.eigvalsh(c).min() > 1e-9)


@dataclass
class _GramAnalysis:
    """Which kernels are separable, and the greedy reduction (see :func:`_analyse_gram`)."""

    confounded: dict[str, list[str]]  # non-nuisance term -> other kernels in its dependencies
    kept: list[str]  # non-nuisance terms kept by the greedy reduction
    folded: dict[str, list[str]]  # folded term -> kept kernels that absorb it


def _analyse_gram(gram: list[list[int]], ks: Sequence["_Kernel"]) -> _GramAnalysis:
    """Exact Prop. E.2 analysis of the kernels' Gram matrix.

    *Separability.*  sigma_k^2 is identified iff no perturbation with a
    non-zero k-th coefficient leaves sum_j sigma_j^2 K_j unchanged, i.e. iff
    every vector of the null space of the kernels (= the null space of their
    Gram matrix, since G = A'A) has a zero k-th coordinate.

    *Greedy reduction.*  Columns are ordered intercept, residual, terminal
    cell, then the terms lowest order first (ties in the given order).  The
    pivot columns of the reduced row echelon form are exactly the kernels not
    spanned by the ones before them: those terms are kept; every other term is
    folded into the earlier pivots that express it (its RREF column).

    Exact duplicates (K_i = K_j iff G_ii = G_jj = G_ij) are removed first; if the
    rest is well conditioned, the duplicates are the only dependencies and no
    rational arithmetic is needed.
    """
    n = len(ks)
    nuis = [i for i in range(n) if ks[i].nuisance]
    terms = sorted((i for i in range(n) if not ks[i].nuisance), key=lambda i: (ks[i].order, i))
    order = nuis + terms
    g = [[gram[i][j] for j in order] for i in order]
    rep = list(range(n))
    for j in range(n):
        for i in range(j):
            if rep[i] == i and g[i][i] == g[j][j] == g[i][j]:
                rep[j] = i
                break
    uniq = [j for j in range(n) if rep[j] == j]
    if _well_conditioned([[g[a][b] for b in uniq] for a in uniq]):
        pivots = uniq
        expr = {j: [rep[j]] for j in range(n) if rep[j] != j}
        null = [{j: Fraction(1), rep[j]: Fraction(-1)} for j in range(n) if rep[j] != j]
    else:
        r, pivots = _rref(g)
        expr = {
            f: [pc for i, pc in enumerate(pivots) if r[i][f] != 0] for f in range(n) if f not in pivots
        }
        null = []
        for f in range(n):
            if f in pivots:
                continue
            v = {f: Fraction(1)}
            for i, pc in enumerate(pivots):
                if r[i][f] != 0:
                    v[pc] = -r[i][f]
            null.append(v)
    names = [ks[i].name for i in order]
    rank_of = {name: k for k, name in enumerate(names)}
    confounded: dict[str, list[str]] = {}
    for col in range(len(nuis), n):
        involved = [v for v in null if v.get(col, 0) != 0]
        if involved:
            # Kernels identical to this one are always named; beyond them the
            # null-space basis (pivots taken lowest order first) says which
            # kernels this one is a linear combination of, or enters.
            partners = {names[j] for j in range(n) if j != col and rep[j] == rep[col]}
            partners |= {names[j] for v in involved for j in v if j != col}
            confounded[names[col]] = sorted(partners, key=rank_of.__getitem__)
    kept = [names[c] for c in pivots if c >= len(nuis)]
    folded = {names[f]: [names[j] for j in expr[f]] for f in sorted(expr) if f >= len(nuis)}
    return _GramAnalysis(confounded, kept, folded)


@dataclass(frozen=True)
class _Kernel:
    name: str
    facets: frozenset | str  # frozenset of facets, or _TRIAL_LEVEL
    nuisance: bool
    order: int = 0  # number of facets as written in the term


def _kernels(d: _Design, terms: Sequence[tuple[str, ...]], cell_facets: Iterable[str]) -> list[_Kernel]:
    ks = [_Kernel(_INTERCEPT, frozenset(), True), _Kernel(_RESIDUAL, _TRIAL_LEVEL, True)]
    cell = d._normal(cell_facets)
    term_sets = [d._normal(t) for t in terms]
    if cell not in term_sets:
        ks.append(_Kernel(_CELL, cell, True))
    ks.extend(_Kernel(":".join(t), s, False, len(t)) for t, s in zip(terms, term_sets))
    return ks


def _gram(d: _Design, ks: Sequence[_Kernel], benchmark_wise: bool = False):
    """Frobenius inner products <K_j, K_k> = tr(K_j K_k) of the kernels, exact.

    With K = Z Z' for a 0/1 incidence matrix Z over trials,
    tr(K_j K_k) = sum over the joint levels of (j, k) of (trials in the level)^2,
    because (Z_j' Z_k)_{uv} counts the trials in level u of j and v of k.
    The intercept kernel is the all-ones matrix J (the empty facet set) and the
    residual kernel the identity I (tr(I K) = number of trials).

    With ``benchmark_wise`` the inner products are computed within each
    benchmark separately (every facet set is joined with ``benchmark``) and a
    list of matrices, one per benchmark, is returned.
    """
    n = len(ks)
    nb = d.sizes["benchmark"]
    cache: dict = {}

    def t(s) -> int | list[int]:
        if s == _TRIAL_LEVEL:
            if benchmark_wise:
                return [int(x) for x in np.bincount(d.cell["benchmark"], weights=d.cell_trials, minlength=nb)]
            return d.n_trials
        if benchmark_wise:
            s = d._normal(set(s) | {"benchmark"})
        if s not in cache:
            counts = d.trial_counts(s)
            if benchmark_wise:
                cache[s] = _exact_bincount_squares(d.group_benchmark(s), counts, nb)
            else:
                cache[s] = _exact_sum_squares(counts)
        return cache[s]

    def union(a, b):
        if a == _TRIAL_LEVEL or b == _TRIAL_LEVEL:
            return _TRIAL_LEVEL
        return d._normal(set(a) | set(b))

    vals = [[t(union(ks[i].facets, ks[j].facets)) for j in range(n)] for i in range(n)]
    if not benchmark_wise:
        return vals
    return [[[vals[i][j][b] for j in range(n)] for i in range(n)] for b in range(nb)]


@dataclass
class Separation:
    """One replication pattern of seed 000 Table 15 (or an extra one we check).

    ``coarse`` and ``fine`` are two variance-component terms; they are
    distinguished when some level of ``coarse`` is observed with at least two
    levels of ``fine`` (observations that share the coarse grouping without
    sharing the fine one).  ``count`` of ``of`` coarse levels meet it.
    """

    coarse: str
    fine: str
    requirement: str
    holds: bool
    count: int
    of: int
    source: str

    @property
    def evidence(self) -> str:
        if self.coarse == _INTERCEPT:
            return f"{self.count} {self.requirement}"
        return f"{self.count} of {self.of} {self.requirement}"

    def to_dict(self) -> dict:
        return {
            "coarse": self.coarse,
            "fine": self.fine,
            "requirement": self.requirement,
            "holds": self.holds,
            "count": self.count,
            "of": self.of,
            "evidence": self.evidence,
            "source": self.source,
        }


@dataclass
class Condition:
    """One of the design conditions (i)-(iv) of seed 000 Prop. E.3."""

    key: str
    statement: str
    applicable: bool
    holds: bool | None
    evidence: dict

    def to_dict(self) -> dict:
        return {
            "key": self.key,
            "statement": self.statement,
            "applicable": self.applicable,
            "holds": self.holds,
            "evidence": dict(self.evidence),
        }


@dataclass
class ComponentSeparability:
    """Whether one variance component is separable, and why."""

    term: str
    separable: bool
    confounded_with: list[str]
    reason: str

    def to_dict(self) -> dict:
        return {
            "term": self.term,
            "separable": self.separable,
            "confounded_with": list(self.confounded_with),
            "reason": self.reason,
        }


@dataclass
class Separability:
    """Which variance components the observed design can separate.

    Attributes
    ----------
    scope
        ``"pooled"`` (seed 000 Eq. 6, two or more benchmarks) or
        ``"per-benchmark"`` (Eq. 2, a single benchmark).
    terms
        The random-intercept terms examined, in formula spelling.
    conditions
        Prop. E.3's conditions (i)-(iv) with their evidence; for a single
        benchmark (i)-(iii) are marked not applicable.
    prop_e3_holds
        All four conditions hold (None when they do not apply).
    separations
        Table 15's replication patterns, plus the ones that separate the
        three-way terms from the terminal residual.
    components
        One entry per term: separable or not, the terms it is confounded with,
        and the reason in words.
    separable_components, not_separable
        The terms, split by the exact criterion (Prop. E.2).
    suggested_terms, folded
        A reduced formula the design identifies and, for every term dropped,
        the kept terms (or ``"(intercept)"``, ``"residual"``, ``"(terminal cell)"``)
        that absorb its variance.
    per_benchmark
        For a pooled corpus, the Eq. 2 separability within each benchmark
        (``separable_components``, ``confounded_with``, ``suggested_terms``, ``folded``).
    notes
        Plain-language remarks (e.g. that the benchmark-level split does not apply).
    """

    scope: str
    terms: list[str]
    conditions: list[Condition]
    prop_e3_holds: bool | None
    separations: list[Separation]
    components: list[ComponentSeparability]
    suggested_terms: list[str]
    folded: dict[str, list[str]]
    per_benchmark: dict[str, dict] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def separable_components(self) -> list[str]:
        return [c.term for c in self.components if c.separable]

    @property
    def not_separable(self) -> list[str]:
        return [c.term for c in self.components if not c.separable]

    def condition(self, key: str) -> Condition:
        for c in self.conditions:
            if c.key == key:
                return c
        raise KeyError(f"no condition {key!r}; conditions are {[c.key for c in self.conditions]}")

    def component(self, term: str) -> ComponentSeparability:
        name = _term_name(term)
        for c in self.components:
            if c.term == name:
                return c
        raise KeyError(f"no term {term!r}; terms are {self.terms}")

    def to_dict(self) -> dict:
        return {
            "scope": self.scope,
            "terms": list(self.terms),
            "conditions": {c.key: c.to_dict() for c in self.conditions},
            "prop_e3_holds": self.prop_e3_holds,
            "separations": [s.to_dict() for s in self.separations],
            "components": [c.to_dict() for c in self.components],
            "separable_components": self.separable_components,
            "not_separable": self.not_separable,
            "suggested_terms": list(self.suggested_terms),
            "folded": {k: list(v) for k, v in self.folded.items()},
            "per_benchmark": {b: dict(v) for b, v in self.per_benchmark.items()},
            "notes": list(self.notes),
        }


# (coarse, fine, words, source); "residual" as fine means the terminal cell
# (benchmark, task, model, scaffold), and "(intercept)" as coarse means "at least
# two levels of fine exist".
_POOLED_SEPARATIONS: tuple[tuple[str, str, str, str], ...] = (
    ("(intercept)", "benchmark", "benchmarks observed (>= 2 needed)", "extra"),
    ("model", "benchmark:model", "models appear on >= 2 benchmarks", "Table 15"),
    ("scaffold", "benchmark:scaffold", "scaffolds appear on >= 2 benchmarks", "Table 15"),
    ("model:scaffold", "benchmark:model:scaffold", "model-scaffold pairs recur on >= 2 benchmarks", "Table 15"),
    ("model", "model:scaffold", "models run under >= 2 scaffolds", "Table 15"),
    ("scaffold", "model:scaffold", "scaffolds are shared by >= 2 models", "Table 15"),
    ("benchmark:model", "benchmark:model:scaffold", "benchmark-model pairs run under >= 2 scaffolds", "Table 15"),
    ("benchmark:scaffold", "benchmark:model:scaffold", "benchmark-scaffold pairs run with >= 2 models", "extra"),
    ("benchmark", "benchmark:task", "benchmarks have >= 2 tasks", "extra"),
    ("benchmark:task", "benchmark:task:model", "benchmark items are attempted by >= 2 models", "Table 15"),
    ("benchmark:task", "benchmark:task:scaffold", "benchmark items are attempted under >= 2 scaffolds", "Table 15"),
    ("benchmark:task:model", "residual", "item-model pairs run under >= 2 scaffolds", "extra"),
    ("benchmark:task:scaffold", "residual", "item-scaffold pairs run with >= 2 models", "extra"),
    ("benchmark:model:scaffold", "residual", "benchmark-model-scaffold cells span >= 2 items", "extra"),
)

_PER_BENCHMARK_SEPARATIONS: tuple[tuple[str, str, str, str], ...] = (
    ("(intercept)", "task", "tasks observed (>= 2 needed)", "extra"),
    ("(intercept)", "model", "models observed (>= 2 needed)", "extra"),
    ("(intercept)", "scaffold", "scaffolds observed (>= 2 needed)", "extra"),
    ("model", "model:scaffold", "models run under >= 2 scaffolds", "Table 15"),
    ("scaffold", "model:scaffold", "scaffolds are shared by >= 2 models", "Table 15"),
    ("task", "task:model", "tasks are attempted by >= 2 models", "Table 15"),
    ("task", "task:scaffold", "tasks are attempted under >= 2 scaffolds", "Table 15"),
    ("task:model", "residual", "task-model pairs run under >= 2 scaffolds", "extra"),
    ("task:scaffold", "residual", "task-scaffold pairs run with >= 2 models", "extra"),
    ("model:scaffold", "residual", "model-scaffold pairs span >= 2 tasks", "extra"),
)


def _separations(d: _Design, spec) -> list[Separation]:
    out = []
    for coarse, fine, words, source in spec:
        fine_set = set(FACETS) if fine == "residual" else set(_parse_term(fine))
        if coarse == "(intercept)":
            n = d.n_groups(fine_set)
            out.append(Separation(coarse, fine, words, n >= 2, n, n, source))
            continue
        per = d.levels_per(_parse_term(coarse), fine_set)
        count = int((per >= 2).sum())
        out.append(Separation(coarse, fine, words, count > 0, count, int(len(per)), source))
    return out


def _conditions(d: _Design, conn_bm: int, conn_ba: int, pooled: bool) -> list[Condition]:
    nb = d.sizes["benchmark"]
    models_nb = d.levels_per({"model"}, {"benchmark"})
    scaff_nb = d.levels_per({"scaffold"}, {"benchmark"})
    pair_nb = d.levels_per({"model", "scaffold"}, {"benchmark"})
    item_nm = d.levels_per({"task"}, {"model"})
    item_na = d.levels_per({"task"}, {"scaffold"})
    n_items = int(len(item_nm))
    ev_i = {
        "benchmark_model_components": conn_bm,
        "models": int(len(models_nb)),
        "models_on_multiple_benchmarks": int((models_nb >= 2).sum()),
        "models_on_all_benchmarks": int((models_nb == nb).sum()) if nb >= 2 else 0,
    }
    ev_ii = {
        "benchmark_scaffold_components": conn_ba,
        "scaffolds": int(len(scaff_nb)),
        "scaffolds_on_multiple_benchmarks": int((scaff_nb >= 2).sum()),
        "scaffolds_on_all_benchmarks": int((scaff_nb == nb).sum()) if nb >= 2 else 0,
    }
    ev_iii = {
        "model_scaffold_pairs": int(len(pair_nb)),
        "pairs_on_multiple_benchmarks": int((pair_nb >= 2).sum()),
    }
    k_m = int((item_nm >= 2).sum())
    k_a = int((item_na >= 2).sum())
    ev_iv = {
        "items": n_items,
        "items_with_2plus_models": k_m,
        "items_with_2plus_scaffolds": k_a,
        "share_items_2plus_models": float(k_m / n_items) if n_items else 0.0,
        "share_items_2plus_scaffolds": float(k_a / n_items) if n_items else 0.0,
    }
    na = "not applicable: a single benchmark has no benchmark-level split"
    return [
        Condition(
            "i",
            "the benchmark-model incidence graph is connected and contains models observed on multiple benchmarks",
            pooled,
            (conn_bm == 1 and ev_i["models_on_multiple_benchmarks"] > 0) if pooled else None,
            ev_i if pooled else {**ev_i, "note": na},
        ),
        Condition(
            "ii",
            "the benchmark-scaffold incidence graph is connected and contains scaffolds observed on multiple "
            "benchmarks",
            pooled,
            (conn_ba == 1 and ev_ii["scaffolds_on_multiple_benchmarks"] > 0) if pooled else None,
            ev_ii if pooled else {**ev_ii, "note": na},
        ),
        Condition(
            "iii",
            "at least some model-scaffold pairs recur across benchmarks",
            pooled,
            (ev_iii["pairs_on_multiple_benchmarks"] > 0) if pooled else None,
            ev_iii if pooled else {**ev_iii, "note": na},
        ),
        Condition(
            "iv",
            "benchmark items are attempted by multiple models and by multiple scaffolds",
            True,
            k_m > 0 and k_a > 0,
            ev_iv,
        ),
    ]


def _component_reasons(
    terms: Sequence[str], deps: dict[str, list[str]], seps: Sequence[Separation]
) -> list[ComponentSeparability]:
    out = []
    for term in terms:
        related = [s for s in seps if term in (s.coarse, s.fine)]
        if term not in deps:
            support = "; ".join(s.evidence for s in related if s.holds)
            reason = (
                "its covariance kernel is linearly independent of the other terms' on the observed cells (Prop. E.2)"
            )
            if support:
                reason += f": {support}"
            out.append(ComponentSeparability(term, True, [], reason))
        else:
            partners = deps[term]
            failing = "; ".join("only " + s.evidence for s in related if not s.holds)
            reason = "confounded with " + (", ".join(partners) if partners else "a combination of other terms")
            reason += " (their kernels are linearly dependent on the observed cells, Prop. E.2)"
            if failing:
                reason += f": {failing}"
            out.append(ComponentSeparability(term, False, list(partners), reason))
    return out


def _separability(d: _Design, conn: Connectivity | None = None) -> Separability:
    nb = d.sizes["benchmark"]
    pooled = nb >= 2
    if conn is None:
        bm = _bipartite_components(d, "benchmark", "model")
        ba = _bipartite_components(d, "benchmark", "scaffold")
    else:
        bm, ba = conn.benchmark_model_components, conn.benchmark_scaffold_components
    conditions = _conditions(d, bm, ba, pooled)
    notes: list[str] = []
    eq2_terms = [_parse_term(t) for t in PER_BENCHMARK_TERMS]
    eq2_ks = _kernels(d, eq2_terms, FACETS)
    per_benchmark: dict[str, dict] = {}
    if pooled:
        terms = [_parse_term(t) for t in POOLED_TERMS]
        ks = _kernels(d, terms, FACETS)
        gram = _gram(d, ks)
        seps = _separations(d, _POOLED_SEPARATIONS)
        # Within-benchmark (Eq. 2) view, for per-benchmark fits.
        grams_b = _gram(d, eq2_ks, benchmark_wise=True)
        for k, name in enumerate(d.labels["benchmark"]):
            res_b = _analyse_gram(grams_b[k], eq2_ks)
            per_benchmark[name] = {
                "separable_components": [t for t in PER_BENCHMARK_TERMS if t not in res_b.confounded],
                "confounded_with": {t: res_b.confounded[t] for t in PER_BENCHMARK_TERMS if t in res_b.confounded},
                "suggested_terms": res_b.kept,
                "folded": res_b.folded,
            }
        scope = "pooled"
        prop = all(bool(c.holds) for c in conditions)
    else:
        terms, ks = eq2_terms, eq2_ks
        gram = _gram(d, ks)
        seps = _separations(d, _PER_BENCHMARK_SEPARATIONS)
        scope = "per-benchmark"
        prop = None
        notes.append(
            "single benchmark: the benchmark-level split of seed 000 Eq. 6 (model vs benchmark:model, "
            "scaffold vs benchmark:scaffold, model:scaffold vs benchmark:model:scaffold) is not applicable; "
            "the per-benchmark terms of Eq. 2 are examined instead"
        )
    res = _analyse_gram(gram, ks)
    names = [":".join(t) for t in terms]
    comps = _component_reasons(names, res.confounded, seps)
    if d.n_cells and int((d.cell_trials > 1).sum()) == 0:
        notes.append(
            "no cell holds replicate trials: the highest-order interaction is folded into the residual "
            "(seed 000 App. E.5)"
        )
    return Separability(
        scope=scope,
        terms=names,
        conditions=conditions,
        prop_e3_holds=prop,
        separations=seps,
        components=comps,
        suggested_terms=res.kept,
        folded=res.folded,
        per_benchmark=per_benchmark,
        notes=notes,
    )


def separability(corpus: Corpus | pd.DataFrame) -> Separability:
    """Which variance components the corpus can separate (seed 000 App. E.3-E.6).

    Rules
    -----
    *Exact criterion (Prop. E.2).*  On the observed trials the latent linear
    predictor has covariance ``sum_k sigma_k^2 K_k`` with ``K_k = Z_k Z_k'``
    (Eq. 17).  A term is **separable** iff its kernel is not a linear
    combination of the other terms' kernels together with three nuisance
    kernels: the all-ones matrix J (the unknown intercept: a term with a single
    observed level is indistinguishable from the mean; equivalent to the REML
    projection, because every kernel has a unit diagonal), the identity I (the
    trial-level residual; a term whose levels each hold one trial is
    deterministically confounded with it, as App. E.5 says for the four-way
    cell) and the terminal-cell kernel of (benchmark, task, model, scaffold)
    (the unreplicated BIMA interaction that is folded into the residual).  The
    check is exact: inner products ``tr(K_j K_k)`` are sums of squared trial
    counts over joint levels, and the null space of their integer Gram matrix
    is found in rational arithmetic.  Separability is structural; how precisely
    a separable component is estimated depends on the replication counts
    reported alongside and on the posterior.

    *Terms.*  With two or more benchmarks the pooled terms of seed 000 Eq. 6
    (``POOLED_TERMS``) are examined, and ``per_benchmark`` repeats the check for
    the Eq. 2 terms within each benchmark.  With one benchmark the
    benchmark-level split is not applicable and the Eq. 2 terms
    (``PER_BENCHMARK_TERMS``: task, model, scaffold, task:model,
    task:scaffold, model:scaffold) are examined.

    *Replication patterns (Table 15).*  Two nested terms C and F (F refines C)
    are distinguished iff some level of C is observed with two or more levels
    of F.  Pooled: model vs benchmark:model (a model on >= 2 benchmarks);
    scaffold vs benchmark:scaffold (a scaffold on >= 2 benchmarks);
    model:scaffold vs benchmark:model:scaffold (a model-scaffold pair on >= 2
    benchmarks); model vs model:scaffold (a model under >= 2 scaffolds);
    scaffold vs model:scaffold (a scaffold shared by >= 2 models: Table 15's
    "overlap across models"); benchmark:model vs benchmark:model:scaffold (within
    a benchmark, a model under >= 2 scaffolds); benchmark:task vs
    benchmark:task:model and vs benchmark:task:scaffold (an item attempted by
    >= 2 models, under >= 2 scaffolds); and, beyond Table 15, the three-way terms
    against the terminal residual (e.g. benchmark:task:model needs an
    item-model pair under >= 2 scaffolds).  Per benchmark: model vs
    model:scaffold, scaffold vs model:scaffold, task vs task:model, task vs
    task:scaffold, the two-way terms vs the residual, and >= 2 levels of each
    main effect.  Each pattern is necessary for both of its terms; the exact
    criterion also catches dependencies among more than two terms.

    *Conditions (i)-(iv) of Prop. E.3* are reported with their evidence:
    (i) the benchmark-model graph is connected and at least one model is on
    >= 2 benchmarks; (ii) the same for scaffolds; (iii) at least one
    model-scaffold pair recurs on >= 2 benchmarks; (iv) at least one item is
    attempted by >= 2 models and at least one by >= 2 scaffolds (the structural
    minimum; the shares of such items measure strength).  (i)-(iii) are not
    applicable to a single benchmark.  Connectivity is required by (i)-(ii)
    because contrasts between disconnected parts are not identified (Lemma
    E.1), even where variances are.

    *Suggested formula.*  ``suggested_terms`` keeps terms lowest order first
    and folds a term whose kernel is already spanned; ``folded`` says which
    kept terms absorb its variance (e.g. with one scaffold, ``model:scaffold``
    is folded into ``model`` and ``scaffold`` into the intercept).  A folded
    variance is not zero: it is estimated as part of the absorbing terms, which
    then mean their sum.

    Parameters
    ----------
    corpus
        A corpus or its canonical table.

    Returns
    -------
    Separability
    """
    return _separability(_design(corpus))


def separable_terms(corpus: Corpus | pd.DataFrame, terms: Sequence[str]) -> dict:
    """Exact separability (Prop. E.2) of an arbitrary set of random-intercept terms.

    Parameters
    ----------
    corpus
        A corpus or its canonical table.
    terms
        Terms in formula spelling, e.g. ``["model", "task", "model:task"]`` or
        terms over extra facet columns (``"step"``, ``"error_category"``);
        ``task`` always means the (benchmark, task) pair.

    Returns
    -------
    dict
        ``separable`` (terms), ``confounded_with`` (term -> other terms or
        nuisance kernels in the dependency), ``suggested_terms`` and ``folded``
        as in :func:`separability`.  The nuisance kernels are the intercept,
        the trial-level residual and the cell of all facets used.
    """
    parsed = [_parse_term(t) for t in terms]
    extra = sorted({f for t in parsed for f in t if f not in FACETS})
    d = _Design(_as_table(corpus), extra_facets=extra)
    used = {f for t in parsed for f in t}
    ks = _kernels(d, parsed, used)
    gram = _gram(d, ks)
    res = _analyse_gram(gram, ks)
    names = [":".join(t) for t in parsed]
    return {
        "terms": names,
        "separable": [t for t in names if t not in res.confounded],
        "confounded_with": {t: res.confounded[t] for t in names if t in res.confounded},
        "suggested_terms": res.kept,
        "folded": res.folded,
    }


# ---------------------------------------------------------------------------
# Bundle
# ---------------------------------------------------------------------------
@dataclass
class DesignDiagnostics:
    """Everything :func:`diagnose` computes; ``to_dict()`` is JSON-serialisable."""

    counts: FacetCounts
    coverage: CoverageMatrix
    connectivity: Connectivity
    separability: Separability

    def to_dict(self) -> dict:
        return {
            "counts": self.counts.to_dict(),
            "coverage": self.coverage.to_dict(),
            "connectivity": self.connectivity.to_dict(),
            "separability": self.separability.to_dict(),
        }


def diagnose(corpus: Corpus | pd.DataFrame) -> DesignDiagnostics:
    """Facet counts, pooled coverage, connectivity and separability in one pass.

    The corpus is coded once and every diagnostic reuses the codes.

    Parameters
    ----------
    corpus
        A corpus or its canonical table.

    Returns
    -------
    DesignDiagnostics
        ``to_dict()`` has keys ``counts``, ``coverage``, ``connectivity`` and
        ``separability`` (see each dataclass).
    """
    d = _design(corpus)
    conn = _connectivity(d)
    return DesignDiagnostics(
        counts=_facet_counts(d),
        coverage=_coverage(d, None),
        connectivity=conn,
        separability=_separability(d, conn),
    )
