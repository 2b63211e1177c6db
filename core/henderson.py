"""Henderson's Method I for random-effects designs, crossed and nested.

Seed 003 (DDR paper 2026) (sec. 3, "three estimators") cross-checks its Bayesian fit with
Henderson's Method I (Henderson 1953; Searle, Casella & McCulloch 1992,
*Variance Components*, sec. 5.3).  For a random model

    y = mu 1 + sum_j Z_j u_j + e,   u_j ~ N(0, s2_j I),  e ~ N(0, s2_e I),

Method I equates the uncorrected sums of squares of every term,

    T_k = sum over levels l of k of  (y_l.)^2 / n_l,

and of the raw data, T_0 = sum y^2, to their expectations

    E[T_k] = N mu^2 + sum_j s2_j h_kj + q_k s2_e,
    h_kj   = sum_l ( sum_m n_lm^2 ) / n_l,

where n_lm counts the observations at level l of term k and level m of term j,
and q_k is the number of levels of k.  Subtracting T_mu = y..^2/N removes mu^2
and leaves one linear equation per term plus one for T_0: a square system in
(s2_j, s2_e).  On balanced data it reproduces the classical ANOVA
(expected-mean-squares) solution exactly, nested facets included.

The method is distribution-free and unbiased but can return negative values
for weakly identified components; they are floored at zero and flagged, as
seed 003 does in its tables.

Binary trials need not be expanded: a binomial cell with k successes in n
trials contributes k to every total, n to every count and k to T_0 (y^2 = y).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .errors import shown


@dataclass
class HendersonResult:
    """Variance components from Henderson's Method I.

    Attributes
    ----------
    components
        Term (as written, e.g. ``"benchmark:task"``) -> sigma^2, floored at 0;
        the last entry is ``"residual"``.
    raw
        The same before flooring.
    flagged
        Terms whose raw estimate was negative (floored to 0).
    n_obs
        Number of observations (trials).
    scale
        ``"observed"``: the components are on the scale of the response
        (probability scale for binary results), not the latent logit scale.
    """

    components: dict[str, float]
    raw: dict[str, float]
    flagged: list[str] = field(default_factory=list)
    n_obs: int = 0
    grand_mean: float = float("nan")
    scale: str = "observed"

    def to_dict(self) -> dict:
        return {"components": self.components, "raw": self.raw, "flagged": self.flagged,
                "n_obs": self.n_obs, "grand_mean": self.grand_mean, "scale": self.scale}


def _codes(table: pd.DataFrame, facets: Sequence[str]) -> tuple[np.ndarray, int]:
    """Integer level codes of a term (the combination of its facets)."""
    if len(facets) == 1:
        codes, uniques = pd.factorize(table[facets[0]], sort=False)
        return codes.astype(np.int64), len(uniques)
    codes = table.groupby(list(facets), observed=True, sort=False).ngroup().to_numpy(np.int64)
    return codes, int(codes.max()) + 1 if len(codes) else 0


def henderson_method1(table: pd.DataFrame, terms: Sequence[str] | Mapping[str, Sequence[str]], *,
                      response: str | None = None,
                      successes: str = "successes", trials: str = "trials") -> HendersonResult:
    """Estimate variance components by Henderson's Method I.

    Parameters
    ----------
    table
        One row per observation with a numeric ``response`` column, or one row
        per binomial cell with ``successes`` and ``trials`` (binary trials).
    terms
        Random terms, facets joined by ``":"`` (``"task"``, ``"benchmark:task"``,
        ``"task:rater"`` for raters nested in tasks), or a mapping of term name to
        the columns that identify its levels.  The residual is added.
    response
        Name of a numeric response column; if None, binary trials from
        ``successes``/``trials`` are used.

    Returns
    -------
    HendersonResult

    Raises
    ------
    ValueError
        If a facet column is missing, a response is not numeric, or two terms
        cannot be separated by the design (the system is singular): the message
        names them.
    """
    if isinstance(terms, Mapping):
        facets_of = {str(t): list(cols) for t, cols in terms.items()}
    else:
        facets_of = {t.strip(): [f.strip() for f in t.split(":")] for t in terms if t.strip()}
    terms = list(facets_of)
    missing = sorted({f for fs in facets_of.values() for f in fs if f not in table.columns})
    if missing:
        raise ValueError(f"no column {', '.join(map(repr, missing))} for the formula; "
                         f"columns available: {', '.join(map(str, table.columns))}")
    if response is not None:
        if response not in table.columns:
            raise ValueError(f"no response column {response!r}; columns available: {', '.join(map(str, table.columns))}")
        y = pd.to_numeric(table[response], errors="coerce")
        if y.isna().any():
            bad = int(np.flatnonzero(y.isna().to_numpy())[0])
            raise ValueError(f"response {response!r} is not numeric in row {bad + 1} ({shown(table[response].iloc[bad])}); "
                             "drop or fix that row")
        total = y.to_numpy(np.float64)
        count = np.ones(len(table), dtype=np.float64)
        sum_sq = float(np.sum(total**2))
    else:
        total = table[successes].to_numpy(np.float64)
        count = table[trials].to_numpy(np.float64)
        sum_sq = float(total.sum())  # y in {0, 1}: y^2 = y
    n_obs = float(count.sum())
    grand = float(total.sum())

    codes: dict[str, tuple[np.ndarray, int]] = {t: _codes(table, facets_of[t]) for t in terms}
    n_level = {t: np.bincount(c, weights=count, minlength=q) for t, (c, q) in codes.items()}
    y_level = {t: np.bincount(c, weights=total, minlength=q) for t, (c, q) in codes.items()}

    K = len(terms)
    A = np.zeros((K + 1, K + 1))  # rows: T_1..T_K, T_0 ; columns: s2_1..s2_K, s2_e
    b = np.zeros(K + 1)
    t_mu = grand**2 / n_obs
    # h_mu,j = sum_m n_m^2 / N: the expectation of T_mu, subtracted from every row
    h_mu = np.array([np.sum(n_level[j] ** 2) / n_obs for j in terms])
    for r, k in enumerate(terms):
        ck, qk = codes[k]
        nk = n_level[k]
        b[r] = np.sum(y_level[k] ** 2 / nk) - t_mu
        for c, j in enumerate(terms):
            cj, qj = codes[j]
            # the joint (k, j) levels that occur, found by sorting: a bincount over every possible pair would
            # allocate q_k x q_j numbers (6 GB for the HAL-scale pooled model's largest term with itself)
            pair, inverse = np.unique(ck.astype(np.int64) * qj + cj, return_inverse=True)
            n_pair = np.bincount(inverse.ravel(), weights=count)
            per_k = np.bincount(pair // qj, weights=n_pair ** 2, minlength=qk)
            A[r, c] = np.sum(per_k / nk) - h_mu[c]
        A[r, K] = qk - 1
    b[K] = sum_sq - t_mu
    A[K, :K] = n_obs - h_mu
    A[K, K] = n_obs - 1

    rank = np.linalg.matrix_rank(A)
    if rank < K + 1:
        # find the terms whose columns are linearly dependent on the others
        dependent = [terms[i] for i in range(K) if np.linalg.matrix_rank(np.delete(A, i, axis=1)) == rank]
        raise ValueError("the design cannot separate the variance components of "
                         f"{', '.join(dependent) or 'some terms'} (the Method I equations are singular); "
                         "drop one of them from the formula or add data that crosses them")
    est = np.linalg.solve(A, b)
    names = [*terms, "residual"]
    raw = {n: float(v) for n, v in zip(names, est)}
    flagged = [n for n, v in raw.items() if v < 0]
    return HendersonResult(components={n: max(0.0, v) for n, v in raw.items()}, raw=raw, flagged=flagged,
                           n_obs=int(n_obs), grand_mean=grand / n_obs)
