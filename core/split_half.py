"""The sheet checks its own claim: split-half correlation of success rates against the fit's prediction.

The observed-score coefficient (:mod:`.score_reliability`) predicts how well two evaluations' success
rates correlate.  The corpus itself can be split: its tasks are divided at random into two disjoint
halves (within each benchmark), each object's success rate is computed on each half, and the two are
correlated across objects; averaged over many random splits this is the corpus's split-half reliability
of scores at half its task count.  A fit that describes the data predicts it:

* the **prediction**: the observed-score coefficient per posterior draw at the half design (half the tasks
  per benchmark, the corpus's scaffolds per model and trials per cell), with the benchmarks and scaffolds
  *held* (both halves share them, as the split does);
* the **posterior predictive check**: for a subset of posterior draws, a replicate corpus with exactly the
  corpus's cells and trials is simulated from the fitted binomial GLMM (fresh levels of every term), and
  its split-half statistic is computed the same way.  The observed statistic is compared with the 95%
  interval of the replicates' (Gelman, Meng and Stern 1996's posterior predictive check, with the
  split-half correlation as the test quantity); outside it, the sheet says that the fit over- or
  under-states the reliability of scores on this corpus.

The replicates carry every source of variation the observed figure has (which tasks the corpus has,
finitely many objects, unbalanced cells), so the check is fair on small corpora where the formula's
population prediction and one corpus's statistic differ by chance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .posterior_summary import Summary, summarize, to_jsonable
from .reliability import VarianceComponents, object_facets
from .score_reliability import OBSERVED_LABEL, score_moments, score_reliability

__all__ = ["SplitHalfCheck", "split_half_statistic", "split_half_check"]

_CELL_FACETS = ("benchmark", "task", "model", "scaffold")


@dataclass(frozen=True)
class SplitHalfCheck:
    """The corpus's split-half reliability of success rates beside the fit's prediction.

    Attributes
    ----------
    observed
        Mean over ``n_splits`` random splits of the Pearson correlation of the objects' success rates on
        the two halves.
    split_range
        2.5% and 97.5% quantiles of the correlation over the splits (how much one split varies).
    half_tasks
        Tasks per benchmark in each half.
    predicted
        Summary over posterior draws of the observed-score coefficient at the half design.
    replicated
        Summary of the same statistic on replicate corpora simulated from the posterior.
    verdict
        ``"agrees"``, ``"over-states"`` (the observed figure is below the replicates' 95% interval: the fit
        promises more reliable scores than the corpus shows) or ``"under-states"``.
    n_objects, n_splits, n_replicates
        Objects correlated, random splits, replicate corpora.
    """

    observed: float
    split_range: tuple[float, float]
    half_tasks: float
    predicted: Summary
    replicated: Summary
    replicated_interval: tuple[float, float]
    verdict: str
    n_objects: int
    n_splits: int
    n_replicates: int

    def sentence(self) -> str:
        """One sentence for the sheet's method line and the CLI."""
        obs, lo, hi = self.observed, *self.replicated_interval
        head = (f"Check on this corpus: its tasks split at random into halves of {self.half_tasks:g} per benchmark, "
                f"the {self.n_objects} success rates correlate {obs:.2f} on average over {self.n_splits} splits; "
                f"the fit predicts {self.predicted.median:.2f} [{self.predicted.hdi95[0]:.2f}, "
                f"{self.predicted.hdi95[1]:.2f}] and corpora simulated from it give {lo:.2f}-{hi:.2f}")
        if self.verdict == "agrees":
            return head + ": the fit's claims about scores hold here."
        if self.verdict == "over-states":
            return head + ": the corpus's scores are LESS reliable than the fit says; read its task counts as lower bounds."
        return head + ": the corpus's scores are more reliable than the fit says; its task counts are conservative."

    def to_dict(self) -> dict:
        return to_jsonable({"label": OBSERVED_LABEL, "observed_split_half": self.observed,
                            "split_range": self.split_range, "half_tasks_per_benchmark": self.half_tasks,
                            "predicted": self.predicted, "replicated": self.replicated,
                            "replicated_interval95": self.replicated_interval, "verdict": self.verdict,
                            "n_objects": self.n_objects, "n_splits": self.n_splits,
                            "n_replicates": self.n_replicates, "sentence": self.sentence()})


# ---------------------------------------------------------------------------
# The statistic
# ---------------------------------------------------------------------------

def _cells(table: pd.DataFrame, facets) -> pd.DataFrame:
    keys = [f for f in (*_CELL_FACETS, *facets) if f in table.columns]
    keys = list(dict.fromkeys(keys))
    return table.groupby(keys, observed=True, sort=False)[["successes", "trials"]].sum().reset_index()


def _split_matrix(task_bench: np.ndarray, n_splits: int, rng) -> tuple[np.ndarray, float]:
    """``(R, T)`` assignment of each task to half 1 (+1), half 2 (-1) or neither (0), within benchmark."""
    t = len(task_bench)
    out = np.zeros((n_splits, t), dtype=np.int8)
    halves = []
    for b in np.unique(task_bench):
        idx = np.flatnonzero(task_bench == b)
        h = len(idx) // 2
        halves.append(h)
        if h == 0:
            continue
        for r in range(n_splits):
            perm = rng.permutation(idx)
            out[r, perm[:h]] = 1
            out[r, perm[h:2 * h]] = -1
    return out, float(np.median(halves)) if halves else 0.0


def _correlations(obj_codes: np.ndarray, task_codes: np.ndarray, y: np.ndarray, n: np.ndarray,
                  split: np.ndarray, n_obj: int, n_task: int) -> np.ndarray:
    """``(R,)`` Pearson correlation across objects of the halves' success rates, per split (``y``: (K, cells))."""
    flat = obj_codes * n_task + task_codes
    trials = np.bincount(flat, weights=n, minlength=n_obj * n_task).reshape(n_obj, n_task)
    h1, h2 = (split == 1).T.astype(np.float64), (split == -1).T.astype(np.float64)    # (T, R)
    t1, t2 = trials @ h1, trials @ h2                                                 # (O, R)
    ok = (t1 > 0) & (t2 > 0)
    out = np.empty((y.shape[0], split.shape[0]))
    for k in range(y.shape[0]):
        succ = np.bincount(flat, weights=y[k], minlength=n_obj * n_task).reshape(n_obj, n_task)
        with np.errstate(divide="ignore", invalid="ignore"):
            a, b = (succ @ h1) / t1, (succ @ h2) / t2
        out[k] = _masked_pearson(a, b, ok)
    return out


def _masked_pearson(a: np.ndarray, b: np.ndarray, ok: np.ndarray) -> np.ndarray:
    m = ok.sum(axis=0)
    a, b = np.where(ok, a, 0.0), np.where(ok, b, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ma, mb = a.sum(axis=0) / m, b.sum(axis=0) / m
        da, db = np.where(ok, a - ma, 0.0), np.where(ok, b - mb, 0.0)
        r = (da * db).sum(axis=0) / np.sqrt((da * da).sum(axis=0) * (db * db).sum(axis=0))
    return np.where(m >= 3, r, np.nan)


class _Design:
    """The corpus's cells coded for the statistic and for simulation."""

    def __init__(self, table: pd.DataFrame, obj: frozenset, facets=()):
        cells = _cells(table, facets)
        self.cells = cells
        okeys = [f for f in _CELL_FACETS if f in obj] or ["model"]
        self.obj_codes, obj_index = pd.MultiIndex.from_frame(cells[okeys].astype(str)).factorize()
        tb = cells[["benchmark", "task"]].astype(str)
        self.task_codes, tasks = pd.MultiIndex.from_frame(tb).factorize()
        self.task_bench = np.asarray(pd.Index(tasks.get_level_values(0)).factorize()[0])
        self.n_obj, self.n_task = len(obj_index), len(tasks)
        self.y = cells["successes"].to_numpy(np.float64)
        self.n = cells["trials"].to_numpy(np.float64)

    def statistic(self, y: np.ndarray, split: np.ndarray) -> np.ndarray:
        return _correlations(self.obj_codes, self.task_codes, np.atleast_2d(y), self.n, split, self.n_obj,
                             self.n_task)

    def term_codes(self, term_facets: frozenset) -> np.ndarray:
        cols = sorted(term_facets | ({"benchmark"} if "task" in term_facets else set()),
                      key=lambda f: (_CELL_FACETS + (f,)).index(f))
        cols = [c for c in cols if c in self.cells.columns]
        if not cols:
            return np.zeros(len(self.cells), dtype=np.int64)
        return pd.MultiIndex.from_frame(self.cells[cols].astype(str)).factorize()[0]


def split_half_statistic(table: pd.DataFrame, obj="model", n_splits: int = 200, seed: int = 0) -> dict:
    """The corpus's split-half correlation of success rates (no fit needed).

    Returns ``{"mean", "q025", "q975", "half_tasks", "n_objects", "n_splits"}``.
    """
    d = _Design(table, object_facets(obj))
    split, half = _split_matrix(d.task_bench, n_splits, np.random.default_rng(seed))
    r = d.statistic(d.y, split)[0]
    r = r[np.isfinite(r)]
    if r.size == 0:
        raise ValueError("no split leaves three objects with trials in both halves: the corpus is too small "
                         "for a split-half check")
    return {"mean": float(r.mean()), "q025": float(np.quantile(r, 0.025)), "q975": float(np.quantile(r, 0.975)),
            "half_tasks": half, "n_objects": d.n_obj, "n_splits": int(r.size)}


# ---------------------------------------------------------------------------
# The check
# ---------------------------------------------------------------------------

def _replicates(d: _Design, c: VarianceComponents, draws: np.ndarray, rng) -> np.ndarray:
    """``(K, cells)`` successes of replicate corpora, one per draw: fresh levels of every term."""
    out = np.empty((len(draws), len(d.cells)))
    codes = {t: d.term_codes(fs) for t, fs in zip(c.terms, c.facet_sets)}
    for k, s in enumerate(draws):
        eta = np.full(len(d.cells), float(c.intercept[s]))
        for t in c.terms:
            code = codes[t]
            eta += rng.normal(0.0, math.sqrt(c.draws[t][s]), code.max() + 1)[code]
        out[k] = rng.binomial(d.n.astype(np.int64), 0.5 * (1.0 + np.tanh(0.5 * eta)))
    return out


def split_half_check(table: pd.DataFrame, components: VarianceComponents, sizes: dict, obj="model", *,
                     n_splits: int = 200, n_replicates: int = 200, replicate_splits: int = 20,
                     seed: int = 0) -> SplitHalfCheck:
    """The corpus's split-half reliability of scores against the fit's prediction (module docstring).

    Parameters
    ----------
    table
        The corpus's canonical table (facets, ``successes``, ``trials``).
    components
        A binomial-logit fit with intercept draws.
    sizes
        The corpus's observed design as D-study sizes (``task`` per benchmark, ``scaffold``,
        ``benchmark``, ``replicate``); the prediction halves ``task``.
    obj
        ``"model"`` or ``"system"``.
    n_splits, n_replicates, replicate_splits
        Random splits of the corpus, replicate corpora (each a posterior draw) and splits per replicate.
    """
    o = object_facets(obj)
    d = _Design(table, o)
    rng = np.random.default_rng(seed)
    split, half = _split_matrix(d.task_bench, n_splits, rng)
    r = d.statistic(d.y, split)[0]
    r = r[np.isfinite(r)]
    if r.size == 0:
        raise ValueError("no split leaves three objects with trials in both halves: the corpus is too small "
                         "for a split-half check")
    half_sizes = {**sizes, "task": max(half, 1.0)}
    held = [f for f in ("benchmark", "scaffold") if f not in o]
    predicted = summarize(score_reliability(components, score_moments(components, o), half_sizes, held=held))
    # evenly spaced draws, repeated when the posterior has fewer (a table of point values has one)
    draws = np.linspace(0, components.n_draws - 1, n_replicates).round().astype(int)
    reps = d.statistic(_replicates(d, components, draws, rng), split[:replicate_splits])
    ok = np.isfinite(reps)
    with np.errstate(invalid="ignore"):  # a replicate with no usable split is dropped, not averaged
        rep = np.where(ok, reps, 0.0).sum(axis=1) / ok.sum(axis=1)
    rep = rep[np.isfinite(rep)]
    if rep.size == 0:
        raise ValueError("no replicate corpus leaves three objects with trials in both halves")
    lo, hi = (float(np.quantile(rep, 0.025)), float(np.quantile(rep, 0.975)))
    obs = float(r.mean())
    verdict = "agrees" if lo <= obs <= hi else ("over-states" if obs < lo else "under-states")
    return SplitHalfCheck(obs, (float(np.quantile(r, 0.025)), float(np.quantile(r, 0.975))), half, predicted,
                          summarize(rep), (lo, hi), verdict, d.n_obj, int(r.size), int(rep.size))
