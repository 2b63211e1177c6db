"""Integer level codes of every random-intercept term over the binomial cells.

The fit never sees strings: each term F of a :class:`~.formula.ModelSpec` becomes
an int32 vector ``codes[k]`` that maps every binomial cell c to its level of F,
so that the linear predictor of seed 000 (Hardy et al. 2026) Eq. 2 / Eq. 6 is
``eta_c = mu + sum_k u_k[codes[k, c]]``: a gather per term, which JAX compiles
to one fused loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .formula import CELL_FACETS, ModelSpec, ModelSpecError, as_spec, canonical_facets

SUCCESSES = "successes"
TRIALS = "trials"


@dataclass
class DesignMatrix:
    """Binomial cells and the level codes of every sampled term.

    Attributes
    ----------
    successes, trials
        int64 arrays (n_cells,): successes out of trials per binomial cell.
    term_names
        Canonical names of the sampled terms, in spec order.
    codes
        int32 array (n_terms, n_cells): level of each term per cell.
    n_levels
        int64 array (n_terms,): observed levels per term.
    level_trials
        One int64 array (n_levels_k,) per term: trials observed on each level.
    level_labels
        One DataFrame per term: the identifying columns of each level, row j = code j.
    cells
        The cell table (identifying columns, successes, trials).
    notes
        Plain-language remarks on the design (folded terms, terms aliased with the cells).
    """

    successes: np.ndarray
    trials: np.ndarray
    term_names: tuple[str, ...]
    codes: np.ndarray
    n_levels: np.ndarray
    level_trials: list[np.ndarray]
    level_labels: list[pd.DataFrame]
    cells: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    @property
    def n_cells(self) -> int:
        return int(self.successes.shape[0])

    @property
    def n_trials(self) -> int:
        return int(self.trials.sum())

    @property
    def n_terms(self) -> int:
        return len(self.term_names)

    def index(self, name: str) -> int:
        return self.term_names.index(name)


def cell_table(data, spec: ModelSpec) -> pd.DataFrame:
    """The binomial cells of ``data`` for ``spec``: identical records summed (SPEC section 1).

    ``data`` is a :class:`~ddr_explorer.core.corpus.corpus.Corpus` or a DataFrame with
    the facet columns and ``successes`` / ``trials`` (or a binary ``result`` column).
    """
    table = getattr(data, "table", data)
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"expected a Corpus or a pandas DataFrame, got {type(data).__name__}.")
    table = table
    if SUCCESSES not in table or TRIALS not in table:
        if "result" in table:
            table = table.assign(successes=table["result"].astype("int64"), trials=np.int64(1))
        else:
            raise ModelSpecError("the data need 'successes' and 'trials' columns (or a binary 'result'); "
                                 f"columns present: {', '.join(map(str, table.columns))}.")
    if "benchmark" not in table and not any("benchmark" in t.facets for t in (*spec.terms, *spec.folded)):
        # a single-benchmark table may omit the benchmark column: tasks are then nested in one benchmark
        table = table.assign(benchmark="benchmark")
    spec.validate(table.columns)
    key = list(canonical_facets([*(c for c in CELL_FACETS if c in table), *spec.columns]))
    sub = table[key + [SUCCESSES, TRIALS]]
    if sub[key].isna().any().any():
        bad = [c for c in key if sub[c].isna().any()]
        raise ModelSpecError(f"facet column(s) {bad} have missing values; every record needs a level of each "
                             f"facet the model uses.")
    s = sub[SUCCESSES].to_numpy()
    n = sub[TRIALS].to_numpy()
    if (n <= 0).any() or (s < 0).any() or (s > n).any():
        raise ModelSpecError("successes must lie in 0..trials and trials must be positive in every record.")
    cells = sub.groupby(key, observed=True, sort=True)[[SUCCESSES, TRIALS]].sum().reset_index()
    cells[SUCCESSES] = cells[SUCCESSES].astype("int64")
    cells[TRIALS] = cells[TRIALS].astype("int64")
    return cells


def build_design(data, spec: ModelSpec | str) -> DesignMatrix:
    """Aggregate ``data`` into binomial cells and code every term of ``spec``.

    Parameters
    ----------
    data
        A Corpus, or a DataFrame of facet columns with ``successes`` and ``trials``.
    spec
        A :class:`ModelSpec`, a preset name or a formula.

    Raises
    ------
    ModelSpecError
        If the data lack a column the model needs (naming it and the available ones).
    """
    spec = as_spec(spec)
    cells = cell_table(data, spec)
    n_cells = len(cells)
    if n_cells == 0:
        raise ModelSpecError("the data hold no records.")
    trials = cells[TRIALS].to_numpy(np.int64)
    codes, n_levels, level_trials, labels = [], [], [], []
    notes = [f"term (1|{t.name}) has one level per binomial cell: not identifiable from single trials, folded "
             f"into the residual pi^2/3." for t in spec.folded]
    for t in spec.terms:
        cols = list(t.columns)
        grouped = cells.groupby(cols, observed=True, sort=True)
        code = grouped.ngroup().to_numpy(np.int32)
        lab = grouped.size().reset_index()[cols]
        j = int(code.max()) + 1
        codes.append(code)
        n_levels.append(j)
        level_trials.append(np.bincount(code, weights=trials, minlength=j).astype(np.int64))
        labels.append(lab)
        if j == n_cells and n_cells > 1 and np.mean(trials == 1) > 0.5:
            notes.append(f"term (1|{t.name}) has one level per binomial cell and most cells hold one trial: its "
                         f"variance is barely separable from the residual pi^2/3.")
        if j == 1:
            notes.append(f"term (1|{t.name}) has a single level in these data: its variance is informed by the "
                         f"prior only.")
    return DesignMatrix(
        successes=cells[SUCCESSES].to_numpy(np.int64), trials=trials, term_names=spec.term_names,
        codes=np.stack(codes).astype(np.int32), n_levels=np.asarray(n_levels, np.int64),
        level_trials=level_trials, level_labels=labels, cells=cells, notes=notes)
