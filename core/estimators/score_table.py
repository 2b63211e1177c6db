"""Every estimator on a plain G-study table: one row per observation, a response and facet columns.

Generalizability-theory users (R's gtheory, EduG; Brennan 2001) start from long tables such as
Brennan's ``p x (r:t)`` scores (persons, raters nested in tasks) with a formula that names the
facets.  :func:`score_table_methods` runs on such a table what :func:`.methods.methods_table` runs
on an agent corpus: Henderson Method I, REML, the observed-scale Bayesian LMM and DISCO; when the
response is 0/1 also the Laplace GLMM on the logit scale.  The Bayes GLMM column comes from a cached
``ddr fit`` of an agent corpus, so a plain table has none (a note says so).

Erho2 and Phi of the object of measurement (by default the formula's first one-facet term, ``p``)
are computed by :func:`~ddr_explorer.core.reliability.generalizability` at the table's own design
(:func:`observed_sizes`): a crossed facet's size is its number of levels, a nested facet's its
number of levels within the facets it is nested in (raters per task for ``r:t``), and
``replicate`` the observations per cell.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..henderson import henderson_method1
from ..model.formula import ModelSpec, as_spec
from .design import MixedDesign
from .methods import MethodsTable, _run_estimators

__all__ = ["score_table_methods", "observed_sizes", "nesting_facets", "is_binary_response", "read_score_table", "response_of"]


def response_of(formula: str) -> str:
    """The response column a formula names (``"score"`` of ``score ~ (1|p) + ...``; ``""`` without one)."""
    return formula.split("~", 1)[0].strip() if "~" in formula else ""


def read_score_table(path, response: str) -> pd.DataFrame | None:
    """A long table (CSV, TSV or Parquet) with a ``response`` column, else None (not such a table: an agent
    corpus, or a file the corpus readers should explain)."""
    from pathlib import Path

    path = Path(path)
    suffix = path.suffix.lower()
    sep = "\t" if suffix in (".tsv", ".txt", ".tab") else ","
    try:
        if suffix in (".parquet", ".pq"):
            head = pd.read_parquet(path)
        elif suffix in (".csv", ".tsv", ".txt", ".tab"):
            head = pd.read_csv(path, sep=sep, nrows=0)
        else:
            return None
    except Exception:  # noqa: BLE001 - not a plain table: let the corpus loader explain
        return None
    if not response or response not in head.columns:
        return None
    return head if suffix in (".parquet", ".pq") else pd.read_csv(path, sep=sep)


def _term_columns(table: pd.DataFrame, spec: ModelSpec) -> dict[str, list[str]]:
    """Columns identifying each term's levels.  A preset term of an agent corpus names the benchmark
    its tasks are nested in; a plain table has no benchmark, so the term's own facets are used."""
    have = set(table.columns)
    return {t.name: list(t.columns if set(t.columns) <= have else t.facets) for t in spec.terms}


def is_binary_response(y: pd.Series) -> bool:
    """True when every value of the response is 0 or 1 (the logit-scale estimators then apply)."""
    v = pd.to_numeric(y, errors="coerce")
    return bool(v.notna().all() and v.isin([0, 1]).all())


def nesting_facets(terms: dict[str, list[str]], facet: str) -> list[str]:
    """The facets ``facet`` is nested in, read from the formula: those in every term that has it.

    A facet with a term of its own (``(1|t)``) is crossed: nothing is in every one of its terms.
    ``r`` of ``(1|r:t)`` with no ``(1|r)`` is nested in ``t`` (Brennan 2001, sec. 3.1: ``r:t`` is
    "r within t").  The formula decides, not the labels: tables number raters 1..4 within each task
    (reused labels) or 1..12 across tasks, and both are the same design.
    """
    having = [set(cs) - {facet} for cs in terms.values() if facet in cs]
    return sorted(set.intersection(*having)) if having else []


def observed_sizes(table: pd.DataFrame, terms: dict[str, list[str]], obj: str) -> dict[str, float]:
    """The design the table ran, as D-study sizes for the object ``obj``.

    A crossed facet's size is its number of levels (``n_t`` tasks); a nested facet's is the mean
    number of its levels within each level (combination) of the facets it is nested in
    (:func:`nesting_facets`; ``n_r`` raters per task for ``r:t``).  The D-study rule divides a
    term by the product of its facets' sizes, so ``s2_pr:t`` is divided by ``n_r n_t``, the number
    of ratings behind a person's mean, and ``s2_pt`` by ``n_t`` (Brennan 2001, Eqs. 4.1-4.4).
    ``replicate`` is the mean number of rows per cell (one level of every facet).

    Unbalanced nesting (items per subtest 2, 2, 4) gets the mean count within a nest (8/3), so
    the innermost term is divided by the total number of items (8) as in the person's mean over
    all items, and ``s2_ph`` by the number of subtests: the error of subtests weighted equally.
    """
    facets = list(dict.fromkeys(c for cs in terms.values() for c in cs))
    sizes: dict[str, float] = {}
    for f in facets:
        if f == obj:
            continue
        nest = nesting_facets(terms, f)
        if nest:
            sizes[f] = float(table.groupby(nest, observed=True)[f].nunique().mean())
        else:
            sizes[f] = float(table[f].nunique())
    sizes["replicate"] = float(table.groupby(facets, observed=True).size().mean())
    return sizes


def score_table_methods(table: pd.DataFrame, spec: ModelSpec | str, response: str, *,
                        object_of_measurement: str | None = None,
                        estimators=("Henderson", "REML", "Bayes LMM", "Laplace", "DISCO"), progress=None,
                        cancel=None, lmm_settings=None) -> MethodsTable:
    """Variance shares and Erho2 / Phi from every estimator on a long score table.

    Parameters
    ----------
    table
        One row per observation: the ``response`` column and one column per facet of the formula.
    spec
        The formula (``score ~ (1|p) + (1|t) + (1|r:t) + (1|p:t)``): the residual is every
        interaction the formula leaves out (``p:r:t`` here), as in G-theory.
    response
        The numeric response column.  0/1 values also get the Laplace GLMM (logit scale).
    object_of_measurement
        The facet whose universe score Erho2 / Phi are about; default the formula's first term that
        is a single facet.
    estimators
        Which columns to compute.
    progress, cancel, lmm_settings
        As for :func:`.methods.methods_table`.

    Raises
    ------
    ValueError
        Naming a missing column, a non-numeric response row, or an object of measurement that is
        not a facet of the formula.
    """
    spec = as_spec(spec)
    terms = _term_columns(table, spec)
    singles = [t for t, cs in terms.items() if len(cs) == 1]
    obj = object_of_measurement or (singles[0] if singles else None)
    if obj is None or obj not in singles:
        raise ValueError(f"the object of measurement must be a facet with its own term in the formula "
                         f"({', '.join(singles) or 'none'}); got {obj!r}: pass --object with one of them")
    binary = response in table.columns and is_binary_response(table[response])
    if binary:  # 0/1 scores are Bernoulli trials: the logit-scale estimators apply too
        y = pd.to_numeric(table[response])
        work = table.assign(_k=y.to_numpy(np.float64), _n=1.0)
        design = MixedDesign.from_table(work, terms, successes="_k", trials="_n")
    else:
        design = MixedDesign.from_table(table, terms, response=response)
    sizes = observed_sizes(table, terms, obj)
    out = MethodsTable(formula=spec.formula, terms=[*terms, "residual"], shares={}, components={},
                       coefficients={}, scales={}, seconds={}, object_of_measurement=obj, sizes=sizes,
                       requested_formula=spec.formula)
    scores = None
    if not binary:
        values = pd.to_numeric(table[response]).to_numpy(np.float64)
        codes = {t: table.groupby(cs, observed=True, sort=True).ngroup().to_numpy(np.int64)
                 for t, cs in terms.items()}
        scores = (values, codes)
    _run_estimators(out, design, lambda: henderson_method1(table, terms, response=response), spec.priors,
                    estimators, progress, cancel, lmm_settings, scores=scores)
    if "Laplace" in out.scales:
        out.notes.append("Laplace: the 0/1 response read as Bernoulli trials on the logit scale "
                         "(residual pi^2/3).")
    out.notes.append("Bayes GLMM: a plain score table has no cached `ddr fit` (that fits agent corpora); the "
                     "sampled column here is the observed-scale Bayes LMM.")
    return out
