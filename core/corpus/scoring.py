"""Scoring rules over verifier results, rescoring, and counterfactual comparison.

A verifier v_i applied to a trial gives a verifier result r_i; a scoring rule
maps a trial's results r_1..r_N to its trial result S in {0, 1} (seed 002 (Krsteski et al. 2026),
sec. 3).  The rules here:

* **direct**:    S = r_1 (one chosen verifier);
* **all-pass**:  S = prod_i r_i (every verifier passes);
* **threshold**: S = 1[g(r_1..r_N) >= gamma], g = mean by default;
* **soft**:      mean(r), partial credit, *not* a trial result (reporting only);
* **near-pass**: a trial that fails all-pass although at least 80% of its
  verifiers are positive (seed 002 sec. 5.2, Table 3).

Missing verifier results
------------------------
Verifier results arrive as a wide table, one column per verifier (the
``verifier.<name>`` columns of a corpus), and different tasks often have
different verifiers, so most gaps (NaN) mean "this verifier does not exist for
this trial".  The default policy ``missing="ignore"`` therefore evaluates every
rule over the trial's *non-missing* results, as if the trial had only those
verifiers: ``[1, 1, NaN]`` passes all-pass and has soft score 1.  Two other
policies are available where a gap means a lost result: ``"fail"`` counts a
missing result as a failed verifier (0), and ``"propagate"`` makes the whole
trial missing when any of its results is.  A trial with no result left gets
NaN from every rule; :func:`rescore` drops such trials and says so.
"""

from __future__ import annotations

import copy
import dataclasses
import warnings
from dataclasses import dataclass, field
from typing import Callable, Literal, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..errors import shown
from . import schema
from .corpus import Corpus
from .issues import warning as corpus_warning

__all__ = [
    "RULES",
    "BINARY_RULES",
    "verifier_matrix",
    "direct",
    "all_pass",
    "threshold",
    "soft",
    "near_pass",
    "score",
    "rescore",
    "ScoringComparison",
    "scoring_rule_comparison",
]

Missing = Literal["ignore", "fail", "propagate"]

#: Every rule, in the order of the comparison tables.
RULES: tuple[str, ...] = ("direct", "all-pass", "threshold", "soft")

#: Rules that give a binary trial result (and so can define ``successes``).
BINARY_RULES: tuple[str, ...] = ("direct", "all-pass", "threshold")

# Rounding tolerance of "mean >= gamma": 2 of 3 verifiers must pass a
# gamma of 2/3 written as 0.6666666666666666.
_TOL = 1e-12


# ---------------------------------------------------------------------------
# Input handling
# ---------------------------------------------------------------------------
def verifier_matrix(r) -> tuple[np.ndarray, list[str]]:
    """Turn verifier results into an (n, k) float array with NaN for missing.

    Parameters
    ----------
    r
        A DataFrame (if it has ``verifier.*`` columns only those are used,
        otherwise every column), a 2-D array, or a sequence of per-trial
        sequences of possibly different lengths (shorter rows are padded with
        NaN: a trial with fewer verifiers).  Booleans count as 0/1.

    Returns
    -------
    values, names
        The float array and the verifier names (``verifier.`` prefix removed;
        ``"v1"``, ``"v2"``, ... for unnamed input).
    """
    if isinstance(r, pd.DataFrame):
        cols = [c for c in r.columns if str(c).startswith(schema.VERIFIER_PREFIX)] or list(r.columns)
        values = np.column_stack(
            [pd.to_numeric(r[c], errors="raise").astype("float64").to_numpy(na_value=np.nan) for c in cols]
        ) if cols else np.zeros((len(r), 0))
        names = [str(c)[len(schema.VERIFIER_PREFIX):] if str(c).startswith(schema.VERIFIER_PREFIX) else str(c)
                 for c in cols]
        return values, names
    if isinstance(r, np.ndarray) and r.dtype != object:
        values = np.asarray(r, dtype=np.float64)
        if values.ndim == 1:
            values = values[:, None]
        if values.ndim != 2:
            raise ValueError(f"verifier results must be a 2-D (trials x verifiers) array, got {values.ndim} dimensions")
    else:
        rows = [np.atleast_1d(np.asarray(row, dtype=np.float64)) for row in r]
        width = max((len(row) for row in rows), default=0)
        values = np.full((len(rows), width), np.nan)
        for i, row in enumerate(rows):
            values[i, : len(row)] = row
    return values, [f"v{j + 1}" for j in range(values.shape[1])]


def _apply_missing(values: np.ndarray, missing: Missing) -> np.ndarray:
    if missing == "ignore":
        return values
    if missing == "fail":
        return np.where(np.isnan(values), 0.0, values)
    if missing == "propagate":
        out = values.copy()
        out[np.isnan(values).any(axis=1)] = np.nan
        return out
    raise ValueError(f"missing must be 'ignore', 'fail' or 'propagate', got {missing!r}")


def _check_binary(values: np.ndarray, names: Sequence[str], rule: str) -> None:
    bad = ~np.isnan(values) & (values != 0) & (values != 1)
    if bad.any():
        i, j = map(int, np.argwhere(bad)[0])
        raise ValueError(
            f"{rule} scoring needs 0/1 verifier results, but verifier '{names[j]}' holds {float(values[i, j])!r} "
            f"in row {i + 1} ({int(bad.sum())} non-binary values in all). Fix: use threshold(..., gamma=...) "
            "for numerical verifier results, or binarise them first."
        )


def _prepare(r, missing: Missing, rule: str, binary: bool) -> tuple[np.ndarray, list[str]]:
    values, names = verifier_matrix(r)
    if binary:
        _check_binary(values, names, rule)
    return _apply_missing(values, missing), names


def _counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Observed results and their sum per trial."""
    observed = (~np.isnan(values)).sum(axis=1)
    total = np.nansum(values, axis=1) if values.shape[1] else np.zeros(len(values))
    return observed, total


# ---------------------------------------------------------------------------
# Scoring rules (seed 002 sec. 3 and 5.2)
# ---------------------------------------------------------------------------
def direct(r, verifier: str | int | None = None, *, missing: Missing = "ignore") -> np.ndarray:
    """Direct scoring, S = r_1: one verifier's result is the trial result (seed 002 sec. 3).

    Parameters
    ----------
    r
        Verifier results, see :func:`verifier_matrix`.
    verifier
        Which verifier: a name (with or without the ``verifier.`` prefix), a
        0-based column index, or None for the first column.
    missing
        Only ``"fail"`` changes anything here (a missing result becomes 0);
        otherwise a missing result stays missing.

    Returns
    -------
    numpy.ndarray
        Float array of 0/1 (NaN where the chosen result is missing).
    """
    values, names = verifier_matrix(r)
    if values.shape[1] == 0:
        raise ValueError("direct scoring needs at least one verifier result column")
    if verifier is None:
        j = 0
    elif isinstance(verifier, (int, np.integer)):
        j = int(verifier)
        if not -values.shape[1] <= j < values.shape[1]:
            raise ValueError(f"verifier index {j} is out of range for {values.shape[1]} verifiers {names}")
    else:
        key = str(verifier)
        key = key[len(schema.VERIFIER_PREFIX):] if key.startswith(schema.VERIFIER_PREFIX) else key
        if key not in names:
            raise ValueError(f"no verifier named '{verifier}'; verifiers are {names}. Fix: pass one of these names.")
        j = names.index(key)
    col = values[:, [j]]
    _check_binary(col, [names[j]], "direct")
    return _apply_missing(col, "fail" if missing == "fail" else "ignore")[:, 0].copy()


def all_pass(r, *, missing: Missing = "ignore") -> np.ndarray:
    """All-pass scoring, S = prod_i r_i (seed 002 sec. 3).

    Parameters
    ----------
    r
        Binary verifier results, see :func:`verifier_matrix`.
    missing
        Missing-result policy (module docstring); by default the product runs
        over the trial's non-missing results.

    Returns
    -------
    numpy.ndarray
        Float array of 0/1, NaN for trials without results.
    """
    values, _ = _prepare(r, missing, "all-pass", binary=True)
    observed, total = _counts(values)
    out = (total == observed).astype(np.float64)
    out[observed == 0] = np.nan
    return out


_SUMMARIES: dict[str, Callable] = {
    "mean": np.nanmean,
    "median": np.nanmedian,
    "min": np.nanmin,
    "max": np.nanmax,
    "sum": np.nansum,
}


def _summary(values: np.ndarray, g: str | Callable) -> np.ndarray:
    """Row-wise summary g over the non-missing results (NaN for empty rows)."""
    observed = (~np.isnan(values)).sum(axis=1)
    out = np.full(len(values), np.nan)
    rows = observed > 0
    if isinstance(g, str):
        if g not in _SUMMARIES:
            raise ValueError(f"unknown summary g={g!r}; use one of {sorted(_SUMMARIES)} or a callable")
        if g == "mean":
            # exact count ratio, so that 2 of 4 is exactly 0.5
            out[rows] = np.nansum(values[rows], axis=1) / observed[rows]
        else:
            out[rows] = _SUMMARIES[g](values[rows], axis=1)
        return out
    if not callable(g):
        raise TypeError(f"g must be a summary name or a callable, got {type(g).__name__}")
    for i in np.flatnonzero(rows):
        row = values[i]
        out[i] = float(g(row[~np.isnan(row)]))
    return out


def threshold(r, gamma: float = 0.5, g: str | Callable = "mean", *, missing: Missing = "ignore") -> np.ndarray:
    """Threshold scoring, S = 1[g(r_1..r_N) >= gamma] (seed 002 sec. 3).

    Parameters
    ----------
    r
        Verifier results (binary or numerical), see :func:`verifier_matrix`.
    gamma
        The threshold; 0.5 gives seed 002's ">= 50%" rule of Table 3.
    g
        Summary of a trial's results: ``"mean"`` (default: the fraction of
        positive verifiers), ``"median"``, ``"min"``, ``"max"``, ``"sum"``, or a
        callable taking the 1-D array of the trial's non-missing results (the
        identity for a single continuous verifier is ``g="max"``).
    missing
        Missing-result policy (module docstring).

    Returns
    -------
    numpy.ndarray
        Float array of 0/1, NaN for trials without results.  The comparison
        allows a rounding tolerance of 1e-12.
    """
    gamma = float(gamma)
    if not np.isfinite(gamma):
        raise ValueError(f"gamma must be a finite number, got {shown(gamma)}")
    values, _ = _prepare(r, missing, "threshold", binary=False)
    summary = _summary(values, g)
    out = (summary >= gamma - _TOL).astype(np.float64)
    out[np.isnan(summary)] = np.nan
    return out


def soft(r, *, missing: Missing = "ignore") -> np.ndarray:
    """Soft score: the mean verifier result, i.e. partial credit (seed 002 sec. 5.2).

    Not a trial result (it is not binary); it is reported beside the binary
    rules.  Three positive results out of four give 0.75.

    Parameters
    ----------
    r
        Verifier results, see :func:`verifier_matrix`.
    missing
        Missing-result policy (module docstring).

    Returns
    -------
    numpy.ndarray
        Float array in [0, 1] for binary results, NaN for trials without results.
    """
    values, _ = _prepare(r, missing, "soft", binary=False)
    return _summary(values, "mean")


def near_pass(r, frac: float = 0.8, *, missing: Missing = "ignore") -> np.ndarray:
    """Near-pass: fails all-pass although at least ``frac`` of the verifiers are positive.

    Seed 002 sec. 5.2 (Table 3) with ``frac = 0.8``.  With three verifiers,
    two positives are 67% < 80%, so no trial can be a near-pass; with five,
    four positives (80%) and one failure make one.

    Parameters
    ----------
    r
        Binary verifier results, see :func:`verifier_matrix`.
    frac
        Minimum share of positive results, in (0, 1].
    missing
        Missing-result policy (module docstring); the share is taken over the
        trial's non-missing results.

    Returns
    -------
    numpy.ndarray
        Float array of 0/1 (1 = near-pass), NaN for trials without results;
        its mean is the near-pass fraction.
    """
    frac = float(frac)
    if not 0 < frac <= 1:
        raise ValueError(f"frac must be in (0, 1], got {shown(frac)}")
    values, _ = _prepare(r, missing, "near-pass", binary=True)
    observed, total = _counts(values)
    out = ((total < observed) & (total >= frac * observed - _TOL * np.maximum(observed, 1))).astype(np.float64)
    out[observed == 0] = np.nan
    return out


def _rule_name(rule: str) -> str:
    name = str(rule).strip().lower().replace("_", "-")
    aliases = {"allpass": "all-pass", "all-pass": "all-pass", "direct": "direct", "threshold": "threshold",
               "soft": "soft"}
    if name not in aliases:
        raise ValueError(f"unknown scoring rule {rule!r}; rules are {list(RULES)}")
    return aliases[name]


def score(r, rule: str, *, verifier: str | int | None = None, gamma: float = 0.5, g: str | Callable = "mean",
          missing: Missing = "ignore") -> np.ndarray:
    """Apply a rule by name (``"direct"``, ``"all-pass"``, ``"threshold"``, ``"soft"``).

    Parameters are those of the individual rule functions; ones a rule does not
    use are ignored.
    """
    name = _rule_name(rule)
    if name == "direct":
        return direct(r, verifier, missing=missing)
    if name == "all-pass":
        return all_pass(r, missing=missing)
    if name == "threshold":
        return threshold(r, gamma, g, missing=missing)
    return soft(r, missing=missing)


# ---------------------------------------------------------------------------
# Rescoring a corpus
# ---------------------------------------------------------------------------
def _verifier_table(corpus: Corpus, purpose: str) -> pd.DataFrame:
    cols = corpus.verifier_columns
    if not cols:
        raise ValueError(
            f"corpus '{corpus.name}' has no verifier result columns, so {purpose} is not possible: it needs "
            f"the results r_1..r_N in columns named '{schema.VERIFIER_PREFIX}<name>'. Fix: load a file that keeps "
            "the verifier results (e.g. an MLE-bench or tau2-bench export with per-verifier scores)."
        )
    t = corpus.table
    has_result = t[cols].notna().any(axis=1).to_numpy()
    multi = has_result & (t[schema.TRIALS].to_numpy() != 1)
    if multi.any():
        rows = np.flatnonzero(multi)
        shown = ", ".join(str(int(i) + 1) for i in rows[:5])
        raise ValueError(
            f"corpus '{corpus.name}': rows {shown}{' ...' if len(rows) > 5 else ''} of the canonical table "
            f"({len(rows)} in all) aggregate several trials but carry one set of verifier results, which "
            "cannot be rescored trial by trial. Fix: keep one row per trial (trials = 1) for verifier results."
        )
    return t[cols]


def rescore(corpus: Corpus, rule: str, *, verifier: str | int | None = None, gamma: float = 0.5,
            g: str | Callable = "mean", missing: Missing = "ignore") -> Corpus:
    """A new corpus whose trial results come from a scoring rule (seed 002 sec. 3 and 5.2).

    Parameters
    ----------
    corpus
        A corpus with ``verifier.*`` columns and one row per trial.
    rule
        ``"direct"``, ``"all-pass"`` (``"all_pass"``) or ``"threshold"``.  The
        soft score is not binary and cannot define successes; it is written to
        the ``soft_score`` column of the result instead.
    verifier
        The verifier of the direct rule (default: the first verifier column).
    gamma, g
        Threshold rule parameters (see :func:`threshold`).
    missing
        Missing-result policy (module docstring).

    Returns
    -------
    Corpus
        A copy with ``successes`` = S, ``trials`` = 1 and ``soft_score`` = mean
        verifier result; trials without any verifier result are dropped (a
        warning says how many).  ``provenance["scoring_rule"]`` records the
        rule, its parameters, the verifiers and the counts; an earlier rule is
        kept under ``provenance["previous_scoring_rule"]``.

    Raises
    ------
    ValueError
        No verifier columns, rows that aggregate several trials, non-binary
        results for a binary rule, or an unknown rule.
    """
    name = _rule_name(rule)
    if name == "soft":
        raise ValueError(
            "the soft score is not a binary trial result and cannot define successes. Fix: use "
            "soft(...) or scoring_rule_comparison(...) to report it, and rescore with 'all-pass', "
            "'threshold' or 'direct'."
        )
    vt = _verifier_table(corpus, "rescoring")
    s = score(vt, name, verifier=verifier, gamma=gamma, g=g, missing=missing)
    partial = soft(vt, missing=missing)
    keep = ~np.isnan(s)
    table = corpus.table.loc[keep].copy()
    table[schema.SUCCESSES] = s[keep].astype(np.int64)
    table[schema.TRIALS] = np.ones(int(keep.sum()), dtype=np.int64)
    table[schema.SOFT_SCORE] = partial[keep]
    table = table.reset_index(drop=True)
    params: dict = {"missing": missing}
    if name == "direct":
        params["verifier"] = verifier_matrix(vt)[1][0] if verifier is None else str(verifier)
    if name == "threshold":
        params["gamma"] = float(gamma)
        params["g"] = g if isinstance(g, str) else getattr(g, "__name__", repr(g))
    provenance = copy.deepcopy(corpus.provenance)
    if "scoring_rule" in provenance:
        provenance["previous_scoring_rule"] = provenance["scoring_rule"]
    dropped = int((~keep).sum())
    provenance["scoring_rule"] = {
        "rule": name,
        "params": params,
        "verifiers": list(vt.columns),
        "scored_trials": int(keep.sum()),
        "dropped_trials": dropped,
    }
    issues = list(corpus.warnings)
    if dropped:
        issues.append(corpus_warning(
            "unscored-trials",
            f"{dropped} trials have no verifier result and were left out when rescoring with {name}",
            "fill in the verifier results of those trials, or accept that they are not scored",
            file=None if corpus.source is None else str(corpus.source),
            count=dropped,
        ))
    return dataclasses.replace(corpus, table=table, warnings=issues, provenance=provenance)


# ---------------------------------------------------------------------------
# Counterfactual comparison (seed 002 sec. 5.2, Table 3)
# ---------------------------------------------------------------------------
def _snap_ties(x: np.ndarray, tol: float = 1e-12) -> np.ndarray:
    """Make values that differ only by rounding exactly equal.

    Agent means such as 37/114 come out of floating-point sums in different
    orders and differ in the last bit; ranked as they are, exact ties would be
    broken at random.  Sorted values closer than ``tol`` to their neighbour
    share the first value of their run.
    """
    if len(x) < 2:
        return x
    order = np.argsort(x, kind="stable")
    xs = x[order]
    run = np.concatenate([[0], np.cumsum(np.diff(xs) > tol)])
    firsts = xs[np.searchsorted(run, run, side="left")]
    out = np.empty_like(x)
    out[order] = firsts
    return out


def _rank_corr(x: np.ndarray, y: np.ndarray, kind: str) -> float:
    """Spearman rho or Kendall tau-b; NaN when undefined (fewer than 2 agents or no spread).

    Ties are average ranks (Spearman) and tau-b's tie correction (Kendall);
    values within 1e-12 of each other count as tied.
    """
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = _snap_ties(x[ok]), _snap_ties(y[ok])
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.spearmanr(x, y) if kind == "spearman" else stats.kendalltau(x, y)
    return float(res.statistic)


@dataclass
class ScoringComparison:
    """Seed 002 Table 3 for a corpus, per benchmark.

    Attributes
    ----------
    table
        One row per benchmark with verifier results: ``trials`` (scored),
        ``verifiers`` (verifier columns used there), ``agents``, the mean trial
        result under ``direct``, ``all_pass`` and ``threshold``, the mean
        ``soft`` score, the ``near_pass`` fraction, and the Spearman and Kendall
        rank correlations across agents of mean all-pass vs mean soft.
    agent_means
        Per benchmark, a DataFrame indexed by (model, scaffold) with the mean
        of each rule and the number of trials.
    spearman, kendall
        Per benchmark, the rules x rules rank-correlation matrices across agents.
    settings
        gamma, frac, the direct verifier and the missing policy.
    """

    table: pd.DataFrame
    agent_means: dict[str, pd.DataFrame] = field(default_factory=dict)
    spearman: dict[str, pd.DataFrame] = field(default_factory=dict)
    kendall: dict[str, pd.DataFrame] = field(default_factory=dict)
    settings: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        def clean(v):
            if isinstance(v, (float, np.floating)):
                return None if np.isnan(v) else float(v)
            if isinstance(v, (np.integer,)):
                return int(v)
            return v

        def matrix(df: pd.DataFrame) -> dict:
            return {"rules": [str(c) for c in df.columns],
                    "values": [[clean(x) for x in row] for row in df.to_numpy()]}

        return {
            "settings": dict(self.settings),
            "table": [{k: clean(v) for k, v in row.items()} for row in self.table.to_dict(orient="records")],
            "spearman": {b: matrix(m) for b, m in self.spearman.items()},
            "kendall": {b: matrix(m) for b, m in self.kendall.items()},
        }


_COLUMNS = {"direct": "direct", "all-pass": "all_pass", "threshold": "threshold", "soft": "soft"}


def scoring_rule_comparison(corpus: Corpus, *, gamma: float = 0.5, frac: float = 0.8,
                            direct_verifier: str | int | None = None,
                            missing: Missing = "ignore") -> ScoringComparison:
    """Counterfactual scoring of the same trials under every rule (seed 002 sec. 5.2, Table 3).

    For each benchmark: the mean all-pass result, mean soft score, mean
    ``>= gamma`` threshold result and mean direct result across trials; the
    near-pass fraction (trials failing all-pass with at least ``frac`` of their
    verifiers positive); and, across agents (model, scaffold), the Spearman
    rank correlation of their mean all-pass and mean soft scores (seed 002's
    last column; rho = 1 means the two rules order agents alike) and Kendall's
    tau-b.  Rank correlations between all pairs of rules are returned as
    matrices.  Correlations are NaN where fewer than two agents exist or a rule
    gives every agent the same mean.

    Parameters
    ----------
    corpus
        A corpus with ``verifier.*`` columns, one row per trial.
    gamma
        Threshold of the threshold rule (0.5 in seed 002).
    frac
        Near-pass share (0.8 in seed 002).
    direct_verifier
        The verifier of the direct rule (default: the first verifier column).
    missing
        Missing-result policy (module docstring).

    Returns
    -------
    ScoringComparison
    """
    vt = _verifier_table(corpus, "counterfactual scoring")
    values, names = verifier_matrix(vt)
    dv = 0 if direct_verifier is None else direct_verifier
    per_trial = pd.DataFrame({
        "benchmark": corpus.table["benchmark"].astype(str).to_numpy(),
        "model": corpus.table["model"].astype(str).to_numpy(),
        "scaffold": corpus.table["scaffold"].astype(str).to_numpy(),
        "direct": direct(vt, dv, missing=missing),
        "all_pass": all_pass(vt, missing=missing),
        "threshold": threshold(vt, gamma, missing=missing),
        "soft": soft(vt, missing=missing),
        "near_pass": near_pass(vt, frac, missing=missing),
    })
    # A trial counts when it has at least one verifier result (its soft score exists).
    scored = per_trial["soft"].notna().to_numpy()
    per_trial = per_trial.loc[scored]
    present = pd.DataFrame(~np.isnan(values[scored]), columns=names)
    present["benchmark"] = per_trial["benchmark"].to_numpy()
    n_verifiers = present.groupby("benchmark", sort=False).any().sum(axis=1)
    rows, agent_means, sp, kd = [], {}, {}, {}
    rule_cols = [_COLUMNS[r] for r in RULES]
    for bench, grp in per_trial.groupby("benchmark", sort=True):
        means = grp.groupby(["model", "scaffold"], sort=True)[rule_cols].mean()
        means["trials"] = grp.groupby(["model", "scaffold"], sort=True).size()
        agent_means[bench] = means
        sp[bench] = pd.DataFrame(
            [[_rank_corr(means[a].to_numpy(), means[b].to_numpy(), "spearman") for b in rule_cols] for a in rule_cols],
            index=list(RULES), columns=list(RULES))
        kd[bench] = pd.DataFrame(
            [[_rank_corr(means[a].to_numpy(), means[b].to_numpy(), "kendall") for b in rule_cols] for a in rule_cols],
            index=list(RULES), columns=list(RULES))
        rows.append({
            "benchmark": bench,
            "trials": int(len(grp)),
            "verifiers": int(n_verifiers.get(bench, 0)),
            "agents": int(len(means)),
            "all_pass": float(grp["all_pass"].mean()),
            "soft": float(grp["soft"].mean()),
            "threshold": float(grp["threshold"].mean()),
            "direct": float(grp["direct"].mean()),
            "near_pass": float(grp["near_pass"].mean()),
            "spearman_soft_all_pass": float(sp[bench].loc["soft", "all-pass"]),
            "kendall_soft_all_pass": float(kd[bench].loc["soft", "all-pass"]),
        })
    direct_name = names[dv] if isinstance(dv, (int, np.integer)) else str(dv)
    return ScoringComparison(
        table=pd.DataFrame(rows, columns=[
            "benchmark", "trials", "verifiers", "agents", "all_pass", "soft", "threshold", "direct", "near_pass",
            "spearman_soft_all_pass", "kendall_soft_all_pass"]),
        agent_means=agent_means,
        spearman=sp,
        kendall=kd,
        settings={"gamma": float(gamma), "frac": float(frac), "direct_verifier": direct_name, "missing": missing},
    )
