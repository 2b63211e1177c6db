"""Sufficient statistics of a random-intercept mixed model over cells, shared by REML and Laplace.

Every estimator of this package fits the model of SPEC section 2 on one of two scales:

- the observed scale (REML, Gaussian identity link): ``y_t = mu + sum_F u_F + e_t`` for every trial
  or score ``y_t``, ``e_t ~ N(0, sigma_e^2)`` (seed 000 (Hardy et al. 2026) App. C.3);
- the logit scale (Laplace, binomial logit link): ``logit p_c = mu + sum_F u_F`` (seed 000 App. C.4).

Rows that share every facet level the model uses have the same random effects, so both likelihoods
depend on the data only through the cells' counts ``n_c``, totals ``s_c = sum y`` and sums of squares
``q_c = sum y^2`` (``q_c = s_c`` for binary trials).  The fits therefore never expand binomial cells to
single trials: a cell contributes its row of the sparse indicator matrix ``Z`` (one 1 per term)
weighted by ``n_c``.  This is exact for the trial-level Gaussian model (the within-cell sum of squares
enters ``y'y``) and for the binomial model (the binomial and Bernoulli likelihoods differ by a constant).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..model.design_matrix import build_design
from ..model.formula import ModelSpec, as_spec


@dataclass
class MixedDesign:
    """Cells of a random-intercept model and the sparse indicator matrix of its terms.

    Attributes
    ----------
    term_names
        Canonical names of the random-intercept terms, in formula order.
    codes
        int array (n_terms, n_cells): level of each term per cell.
    n_levels
        int array (n_terms,): levels per term.
    n, s, q
        float arrays (n_cells,): observations, sum of y and sum of y^2 per cell.
    binary
        True when y is a 0/1 trial result (successes out of trials).
    level_labels
        Optional: one DataFrame per term naming its levels (row j = code j).
    notes
        Plain-language remarks on the design, carried into results.
    """

    term_names: tuple[str, ...]
    codes: np.ndarray
    n_levels: np.ndarray
    n: np.ndarray
    s: np.ndarray
    q: np.ndarray
    binary: bool
    level_labels: list | None = None
    notes: list[str] = field(default_factory=list)

    def __post_init__(self):
        self.codes = np.asarray(self.codes, dtype=np.int64)
        self.n_levels = np.asarray(self.n_levels, dtype=np.int64)
        self.n = np.asarray(self.n, dtype=np.float64)
        self.s = np.asarray(self.s, dtype=np.float64)
        self.q = np.asarray(self.q, dtype=np.float64)
        if self.codes.ndim != 2 or self.codes.shape[0] != len(self.term_names):
            raise ValueError(f"codes must have one row per term ({len(self.term_names)}), got shape "
                             f"{self.codes.shape}.")
        self._z = None

    @property
    def n_terms(self) -> int:
        return len(self.term_names)

    @property
    def n_cells(self) -> int:
        return int(self.n.shape[0])

    @property
    def n_obs(self) -> float:
        return float(self.n.sum())

    @property
    def n_effects(self) -> int:
        """Number of random effects (columns of Z)."""
        return int(self.n_levels.sum())

    @property
    def term_of_column(self) -> np.ndarray:
        """Term index of every column of :attr:`z`."""
        return np.repeat(np.arange(self.n_terms), self.n_levels)

    @property
    def z(self) -> sp.csr_matrix:
        """Cells x random effects indicator matrix (one 1 per term in every row), CSR."""
        if self._z is None:
            offsets = np.concatenate([[0], np.cumsum(self.n_levels)[:-1]])
            cols = (self.codes + offsets[:, None]).T.ravel()
            rows = np.repeat(np.arange(self.n_cells), self.n_terms)
            self._z = sp.csr_matrix((np.ones(cols.size), (rows, cols)), shape=(self.n_cells, self.n_effects))
        return self._z

    @classmethod
    def from_spec(cls, data, spec: ModelSpec | str) -> "MixedDesign":
        """The binomial cells of a corpus for a model, exactly as the Bayesian fit builds them.

        ``data`` is a Corpus or a DataFrame with the facet columns and ``successes``/``trials``
        (or a binary ``result``); ``spec`` a :class:`~ddr_explorer.core.model.formula.ModelSpec`, a
        preset name or a formula.  Terms folded into the residual (the cell-level interaction) are
        left out, as in the Bayesian fit: on the observed scale they join sigma_e^2.
        """
        dm = build_design(data, as_spec(spec))
        s = dm.successes.astype(np.float64)
        return cls(term_names=dm.term_names, codes=dm.codes, n_levels=dm.n_levels, n=dm.trials, s=s, q=s,
                   binary=True, level_labels=dm.level_labels, notes=list(dm.notes))

    @classmethod
    def from_table(cls, table: pd.DataFrame, terms: Sequence[str] | Mapping[str, Sequence[str]], *,
                   response: str | None = None, successes: str = "successes",
                   trials: str = "trials") -> "MixedDesign":
        """Cells of a plain table: one row per observation with a numeric ``response`` column, or
        binomial cells with ``successes`` and ``trials``.

        ``terms`` lists term names whose facets are joined by ``":"`` (``"task:rater"``) or maps a
        term name to the columns that identify its levels (as :func:`~ddr_explorer.core.henderson.
        henderson_method1` takes them).

        Raises
        ------
        ValueError
            Naming a missing column, or the first row whose response is not a number.
        """
        if isinstance(terms, Mapping):
            cols_of = {str(t): list(c) for t, c in terms.items()}
        else:
            cols_of = {t.strip(): [f.strip() for f in t.split(":")] for t in terms if t.strip()}
        if not cols_of:
            raise ValueError("the model has no random-intercept term; add e.g. (1|task) + (1|model).")
        need = sorted({c for cs in cols_of.values() for c in cs})
        missing = [c for c in need if c not in table.columns]
        if missing:
            raise ValueError(f"no column {', '.join(map(repr, missing))} for the formula; columns available: "
                             f"{', '.join(map(str, table.columns))}")
        if table[need].isna().any().any():
            col = next(c for c in need if table[c].isna().any())
            row = int(np.flatnonzero(table[col].isna().to_numpy())[0])
            raise ValueError(f"facet column {col!r} is empty in row {row + 1}; every row needs a level of each "
                             f"facet the model uses: fill or drop that row")
        if response is not None:
            if response not in table.columns:
                raise ValueError(f"no response column {response!r}; columns available: "
                                 f"{', '.join(map(str, table.columns))}")
            y = pd.to_numeric(table[response], errors="coerce")
            if y.isna().any() or not np.isfinite(y.to_numpy(np.float64)).all():
                bad = int(np.flatnonzero(~np.isfinite(y.to_numpy(np.float64)))[0])
                raise ValueError(f"response {response!r} is not a number in row {bad + 1} "
                                 f"({table[response].iloc[bad]!r}); fix or drop that row")
            yv = y.to_numpy(np.float64)
            work = table[need].assign(_n=1.0, _s=yv, _q=yv * yv)
            binary = False
        else:
            for c in (successes, trials):
                if c not in table.columns:
                    raise ValueError(f"no column {c!r}: give a numeric response column or successes and trials; "
                                     f"columns available: {', '.join(map(str, table.columns))}")
            k = table[successes].to_numpy(np.float64)
            m = table[trials].to_numpy(np.float64)
            bad = np.flatnonzero(~((m > 0) & (k >= 0) & (k <= m)))
            if bad.size:
                raise ValueError(f"row {bad[0] + 1}: successes must lie in 0..trials and trials must be positive "
                                 f"(got {k[bad[0]]:g} of {m[bad[0]]:g})")
            work = table[need].assign(_n=m, _s=k, _q=k)
            binary = True
        cells = work.groupby(need, observed=True, sort=True)[["_n", "_s", "_q"]].sum().reset_index()
        codes, n_levels, labels = [], [], []
        for name, cs in cols_of.items():
            g = cells.groupby(cs, observed=True, sort=True)
            code = g.ngroup().to_numpy(np.int64)
            codes.append(code)
            n_levels.append(int(code.max()) + 1)
            labels.append(g.size().reset_index()[cs])
        return cls(term_names=tuple(cols_of), codes=np.stack(codes), n_levels=np.asarray(n_levels),
                   n=cells["_n"].to_numpy(), s=cells["_s"].to_numpy(), q=cells["_q"].to_numpy(), binary=binary,
                   level_labels=labels)


class EstimationCancelled(RuntimeError):
    """The user cancelled an estimation (raised between optimiser steps)."""
