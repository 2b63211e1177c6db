"""Failure modes: where agents differ against where failures appear (seed 003 (DDR paper 2026) secs. 5.6-5.7, decision 5).

Data.  A corpus with an ``error_category`` facet (and optionally ``step``): one record per check of a
trace, ``result`` 1 when the check passed and 0 when the trace showed a failure of that category at
that step (seed 003 Eq. 1: ``Y_atse`` is a binary success indicator at step ``s`` for agent ``a`` on
task ``t`` with error-category label ``e``).  A *trace* is one run of an agent on a task (model,
scaffold, benchmark, task, trial).  A category is *activated* in a trace when any of its checks in
that trace failed (over steps); its *activation rate* is the share of traces in which it is
activated.  On MAST (seed 003 sec. 5.6) the 14 modes are the categories and every trace has one
label per mode: a corpus without steps, one record per (trace, mode).

What :func:`failure_mode_study` computes, every fit through :func:`~ddr_explorer.core.fitting.fit_corpus`
(keyed and cached like every other fit):

1. The four-facet G-study of seed 003 Eq. 1: agent, task, step, error category and their six two-way
   interactions (the ``ddr`` preset; without a ``step`` column the three-facet version of it), with
   each component's share of the total variance per posterior draw.
2. Per category, the agent x task variance ``sigma^2_a:t``: a G-study of the category's records alone
   (agent, task, task:agent; and step, agent:step, task:step when there are steps).  Eq. 1 has no
   agent x task x category term, so a per-category ``sigma^2_a:t`` needs a fit per category, as seed
   003 sec. 5.7 does ("tau^2 sigma^2_a:t per error category").
3. Per category, the activation rate with a Beta(1 + activated, 1 + not) posterior.
4. Their Spearman rank correlation (seed 003: -0.20 over 4 categories, descriptive): per posterior
   draw, from the draw's ``sigma^2_a:t`` vector (the per-category fits are independent, so draw ``s``
   of each is a draw of the joint) and the draw's activation rates: median, 95% interval and
   P(rho < 0); and the point value from the posterior medians (:attr:`FailureTaxonomy.spearman`).
5. The trace-level against cell-level hold-out of mode profiles (seed 003 sec. 5.6; 50 random 70/30
   splits of the traces, stratified by cell = (agent, benchmark), the seed's (system, benchmark)):
   the training cell's mean activation rate per mode predicts (a) each held-out trace's 0/1 mode
   indicators: per-trace MAE (seed: 0.261), and (b) the held-out cell's mean activation rate per
   mode: cell-mode MAE (seed: 0.056) and Pearson r between predicted and held-out cell-mode rates
   (seed: 0.83).  Traces are idiosyncratic, cell rates are not: the taxonomy supports system-level
   contrasts, not predictions for one trace.

:class:`FailureTaxonomy` is what the DDR sheet's fifth decision reads; :meth:`FailureModeStudy.taxonomy`
makes it from a study, and :func:`run_failure_taxonomy` is the sheet's runner.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..corpus import schema
from ..ranks import spearman_rho
from ..references import cite

__all__ = ["FailureTaxonomy", "FailureModeStudy", "ProfileHoldOut", "NoErrorCategory", "trace_profiles",
           "activation_draws", "profile_holdout", "four_facet_spec", "category_spec", "failure_mode_study",
           "run_failure_taxonomy", "format_failure_modes"]

FACET = "error_category"
TRACE_KEY = ("model", "scaffold", "benchmark", "task", schema.TRIAL_ID)


@dataclass(frozen=True)
class FailureTaxonomy:
    """Where agents differ against where failures appear, per error category (seed 003 secs. 5.6-5.7).

    Attributes
    ----------
    categories
        Category names.
    interaction_variance
        ``(K,)`` per category, the agent-by-task variance (``sigma^2_a:t``,
        posterior median): where agents *differ*.
    activation_rate
        ``(K,)`` per category, the share of traces showing a failure of that
        category: where failures *appear*.
    spearman_interval
        ``(median, lower95, upper95)`` of the per-draw rank correlation, when computed.
    holdout
        ``{"trace_mae", "cell_mae", "cell_r", "n_splits"}`` of the mode-profile hold-out, when computed.
    converged
        Whether every fit behind the numbers passed the convergence gate (None: unknown).
    n_traces
        Traces the activation rates count.
    """

    categories: tuple[str, ...]
    interaction_variance: np.ndarray
    activation_rate: np.ndarray
    spearman_interval: tuple[float, float, float] | None = None
    holdout: dict | None = None
    converged: bool | None = None
    n_traces: int | None = None

    def __post_init__(self):
        v = np.asarray(self.interaction_variance, dtype=np.float64).ravel()
        a = np.asarray(self.activation_rate, dtype=np.float64).ravel()
        if not (len(self.categories) == v.size == a.size) or v.size < 2:
            raise ValueError("failure taxonomy: give one interaction variance and one activation rate per "
                             f"category (>= 2 categories); got {len(self.categories)}, {v.size}, {a.size}")
        object.__setattr__(self, "categories", tuple(str(c) for c in self.categories))
        object.__setattr__(self, "interaction_variance", v)
        object.__setattr__(self, "activation_rate", a)

    @property
    def spearman(self) -> float:
        """Rank correlation of variance and frequency (descriptive; few categories)."""
        return spearman_rho(self.interaction_variance, self.activation_rate)


class NoErrorCategory(ValueError):
    """The corpus has no error-category facet (or one category only)."""


def _require_facet(corpus) -> list[str]:
    t = corpus.table
    if FACET not in t.columns or not t[FACET].notna().any():
        raise NoErrorCategory(
            f"failure modes: corpus {corpus.name!r} has no {FACET} column; add one (also read as error, error_type, "
            "failure_category or failure_mode) naming each check's failure category, one record per (trace, "
            "category[, step]) with result 1 = passed, 0 = failed (resources/demo/failure-modes-SIMULATED.csv "
            "shows the layout)")
    if t[FACET].isna().any():
        n = int(t[FACET].isna().sum())
        raise NoErrorCategory(f"failure modes: {n} records of corpus {corpus.name!r} have no {FACET}; every record "
                              "needs one (a check without a category cannot count towards any)")
    cats = sorted(t[FACET].astype(str).unique())
    if len(cats) < 2:
        raise NoErrorCategory(f"failure modes: corpus {corpus.name!r} has one {FACET} ({cats[0]!r}); the analysis "
                              "compares categories and needs at least two")
    return cats


def trace_profiles(corpus) -> pd.DataFrame:
    """One row per trace, one column per category: 1 when a failure of it appears in the trace, else 0.

    A trace is (model, scaffold, benchmark, task, trial); without trial ids, each (agent, task) cell
    is one trace.  A record of ``successes`` out of ``trials`` > 1 without trial ids counts as one
    trace whose category is activated when any of its trials failed: give trial ids to count them
    apart.  NaN where a trace has no check of a category.
    """
    cats = _require_facet(corpus)
    t = corpus.table
    key = [c for c in TRACE_KEY if c in t.columns and (c != schema.TRIAL_ID or t[c].notna().any())]
    frame = t[key].astype(str).copy()
    frame[FACET] = t[FACET].astype(str).to_numpy()
    frame["failed"] = (t[schema.SUCCESSES].to_numpy() < t[schema.TRIALS].to_numpy()).astype(float)
    prof = frame.groupby(key + [FACET], sort=True)["failed"].max().unstack(FACET)
    return prof.reindex(columns=cats)


def activation_draws(profiles: pd.DataFrame, n_draws: int, seed: int = 0) -> np.ndarray:
    """``(n_draws, K)`` draws of each category's activation rate: Beta(1 + activated, 1 + not activated)."""
    rng = np.random.default_rng(seed)
    act = np.nansum(profiles.to_numpy(float), axis=0)
    n = np.isfinite(profiles.to_numpy(float)).sum(axis=0)
    return rng.beta(1.0 + act, 1.0 + n - act, size=(n_draws, len(act)))


@dataclass
class ProfileHoldOut:
    """Trace-level against cell-level hold-out of mode profiles over random splits (seed 003 sec. 5.6).

    Attributes
    ----------
    trace_mae
        ``(n_splits,)`` mean over held-out traces of the mean over modes of ``|p_train(cell, mode) - y|``.
    cell_mae, cell_r
        ``(n_splits,)`` MAE and Pearson r between the training and the held-out cell-mode rates.
    cell
        The columns that make a cell.
    """

    trace_mae: np.ndarray
    cell_mae: np.ndarray
    cell_r: np.ndarray
    train_fraction: float
    cell: tuple[str, ...]
    n_cells: int

    @property
    def n_splits(self) -> int:
        return int(self.trace_mae.size)

    def to_dict(self) -> dict:
        def m(a):
            a = np.asarray(a, dtype=float)
            ok = a[np.isfinite(a)]
            return None if ok.size == 0 else float(ok.mean())

        return {"n_splits": self.n_splits, "train_fraction": self.train_fraction, "cell": list(self.cell),
                "n_cells": self.n_cells, "trace_mae": m(self.trace_mae), "cell_mae": m(self.cell_mae),
                "cell_r": m(self.cell_r),
                "splits": [{"split": i + 1, "trace_mae": float(a), "cell_mae": float(b),
                            "cell_r": None if not np.isfinite(c) else float(c)}
                           for i, (a, b, c) in enumerate(zip(self.trace_mae, self.cell_mae, self.cell_r))]}


def profile_holdout(profiles: pd.DataFrame, n_splits: int = 50, train_fraction: float = 0.7, seed: int = 0,
                    cell: tuple[str, ...] = ("model", "scaffold", "benchmark"), cancel=None) -> ProfileHoldOut:
    """Seed 003 sec. 5.6's hold-out: training cell-mode rates predict held-out traces and held-out cell rates.

    Each split draws ``round(train_fraction * n)`` of each cell's ``n`` traces for training (at least one
    trace on each side; a cell of one trace is left out of the split).  Predicting: the training cell's
    activation rate of each mode.  Trace level: ``mean |p - y|`` over held-out traces and modes.  Cell
    level: ``mean |p - q|`` and Pearson r over (cell, mode) pairs, ``q`` the held-out cell's rate.
    """
    rng = np.random.default_rng(seed)
    cell = tuple(c for c in cell if c in profiles.index.names)
    y = profiles.to_numpy(float)
    groups = profiles.index.to_frame(index=False)[list(cell)].astype(str).agg("\x1f".join, axis=1).to_numpy()
    codes, uniq = pd.factorize(groups)
    members = [np.flatnonzero(codes == g) for g in range(len(uniq))]
    members = [m for m in members if m.size >= 2]
    if not members:
        raise ValueError("failure modes hold-out: no cell (agent, benchmark) has two traces or more; the split "
                         "needs traces to hold out within a cell")
    tm, cm, cr = np.empty(n_splits), np.empty(n_splits), np.empty(n_splits)
    for s in range(n_splits):
        if cancel is not None and cancel():
            from ..model.posterior import FitCancelled

            raise FitCancelled("failure-mode hold-out cancelled by the user")
        trace_err, p_all, q_all = [], [], []
        for m in members:
            k = int(np.clip(round(train_fraction * m.size), 1, m.size - 1))
            perm = rng.permutation(m)
            tr, te = perm[:k], perm[k:]
            with np.errstate(invalid="ignore"):
                p = np.nanmean(y[tr], axis=0)
                q = np.nanmean(y[te], axis=0)
            err = np.abs(y[te] - p[None, :])
            trace_err.append(np.nanmean(err, axis=1))
            p_all.append(p)
            q_all.append(q)
        te_err = np.concatenate(trace_err)
        tm[s] = float(np.nanmean(te_err))
        p, q = np.concatenate(p_all), np.concatenate(q_all)
        ok = np.isfinite(p) & np.isfinite(q)
        cm[s] = float(np.mean(np.abs(p[ok] - q[ok])))
        cr[s] = (float(np.corrcoef(p[ok], q[ok])[0, 1]) if ok.sum() > 2 and p[ok].std() > 0 and q[ok].std() > 0
                 else np.nan)
    return ProfileHoldOut(tm, cm, cr, train_fraction, cell, len(members))


def four_facet_spec(corpus):
    """Seed 003 Eq. 1 (the ``ddr`` preset), or its three-facet version when the corpus has no ``step``."""
    from ..model.formula import parse_formula, preset

    if "step" in corpus.table.columns and corpus.table["step"].notna().all():
        return preset("ddr")
    return parse_formula("y ~ 1 + (1|agent) + (1|task) + (1|error_category) + (1|task:agent) "
                         "+ (1|agent:error_category) + (1|task:error_category)", name="ddr (no step)")


def category_spec(corpus):
    """The G-study of one category's records: agent, task, task:agent (and step terms when there are steps)."""
    from ..model.formula import parse_formula

    f = "y ~ 1 + (1|agent) + (1|task) + (1|task:agent)"
    if "step" in corpus.table.columns and corpus.table["step"].notna().all():
        f += " + (1|step) + (1|agent:step) + (1|task:step)"
    return parse_formula(f, name="per-category")


def _term(components, facets: set[str]) -> str | None:
    return next((t for t in components.terms if set(t.split(":")) == facets), None)


@dataclass
class FailureModeStudy:
    """Everything :func:`failure_mode_study` computed (seed 003 secs. 5.6-5.7).

    Attributes
    ----------
    categories
        The error categories, sorted.
    four_facet
        Term -> ``{"median", "lower95", "upper95", "share_median", "share_lower95", "share_upper95"}`` of the
        four-facet G-study (variance on the logit scale; share of the total per draw, residual pi^2/3 included).
    formula
        The four-facet model fitted.
    at_draws
        ``(S, K)`` per-category ``sigma^2_a:t`` draws.
    activation
        ``(S, K)`` activation-rate draws; ``activation_observed`` the observed rates ``(K,)``.
    rho_draws
        ``(S,)`` per-draw Spearman rho of the two.
    holdout
        The mode-profile hold-out.
    n_fits, n_converged
        Fits behind the numbers and how many passed the convergence gate.
    n_rerun
        Fits rerun once with twice the draws and warmup after failing the gate (the refit engine's policy).
    """

    categories: list[str]
    four_facet: dict
    formula: str
    at_draws: np.ndarray
    activation: np.ndarray
    activation_observed: np.ndarray
    n_traces: int
    rho_draws: np.ndarray
    holdout: ProfileHoldOut | None
    n_fits: int
    n_converged: int
    category_errors: dict = field(default_factory=dict)
    slice: str = ""
    n_rerun: int = 0

    @property
    def converged(self) -> bool:
        return self.n_fits > 0 and self.n_converged == self.n_fits

    def rho_summary(self) -> dict:
        r = self.rho_draws[np.isfinite(self.rho_draws)]
        if r.size == 0:
            return {"median": None, "lower95": None, "upper95": None, "p_negative": None}
        return {"median": float(np.median(r)), "lower95": float(np.quantile(r, 0.025)),
                "upper95": float(np.quantile(r, 0.975)), "p_negative": float(np.mean(r < 0))}

    def taxonomy(self) -> FailureTaxonomy:
        """What the DDR sheet's fifth decision reads."""
        r = self.rho_summary()
        h = None if self.holdout is None else {k: v for k, v in self.holdout.to_dict().items() if k != "splits"}
        return FailureTaxonomy(tuple(self.categories), np.median(self.at_draws, axis=0), self.activation_observed,
                               spearman_interval=None if r["median"] is None else (r["median"], r["lower95"],
                                                                                    r["upper95"]),
                               holdout=h, converged=self.converged, n_traces=self.n_traces)

    def to_dict(self) -> dict:
        tax = self.taxonomy()
        rows = []
        for k, c in enumerate(self.categories):
            at, act = self.at_draws[:, k], self.activation[:, k]
            rows.append({"category": c, "interaction_variance": float(np.median(at)),
                         "interaction_lower95": float(np.quantile(at, 0.025)),
                         "interaction_upper95": float(np.quantile(at, 0.975)),
                         "activation_rate": float(self.activation_observed[k]),
                         "activation_lower95": float(np.quantile(act, 0.025)),
                         "activation_upper95": float(np.quantile(act, 0.975))})
        return {"formula": self.formula, "slice": self.slice, "n_traces": self.n_traces,
                "n_fits": self.n_fits, "n_converged": self.n_converged, "n_rerun": self.n_rerun,
                "four_facet": self.four_facet,
                "categories": rows, "spearman_point": tax.spearman, "spearman": self.rho_summary(),
                "holdout": None if self.holdout is None else self.holdout.to_dict(),
                "category_errors": dict(self.category_errors)}


def failure_mode_study(corpus, settings=None, cache_dir=None, progress=None, cancel=None, *, n_splits: int = 50,
                       seed: int = 0, four_facet: bool = True, rerun_unconverged: bool = True) -> FailureModeStudy:
    """The failure-mode analysis of seed 003 secs. 5.6-5.7 on a corpus with an error-category facet.

    Parameters
    ----------
    corpus
        A validated corpus with ``error_category`` (and optionally ``step`` and trial ids).
    settings
        Sampler settings of every fit (1 four-facet fit + 1 per category).
    cache_dir, progress, cancel
        As for :func:`~.refits.cold_fits`.
    n_splits
        Hold-out splits (50 in seed 003).
    seed
        Seed of the activation-rate draws and of the splits.
    four_facet
        False leaves the four-facet G-study out (its table empty): the per-category numbers alone.
    rerun_unconverged
        Rerun a fit that fails the convergence gate once with twice the draws and warmup (the refit
        engine's policy; :func:`~.refits.cold_fits`).  On the SIMULATED demo the four-facet fit's
        sigma[agent] (0.7% of the variance, as small as seed 003 finds it) falls just short of the gate
        at the default 4 x (300 + 700) (bulk ESS 329, R-hat 1.019) and passes on the rerun.

    Raises
    ------
    NoErrorCategory
        When the corpus has no error-category facet or one category.
    """
    from ..fitting import components_from_posterior
    from .refits import FitJob, cold_fits, sub_corpus

    cats = _require_facet(corpus)
    profiles = trace_profiles(corpus)
    spec4 = four_facet_spec(corpus)
    jobs = [FitJob("four-facet G-study", corpus, spec4)] if four_facet else []
    col = corpus.table[FACET].astype(str).to_numpy()
    for c in cats:
        part = sub_corpus(corpus, col == c, f"{corpus.name} [{FACET}={c}]")
        jobs.append(FitJob(f"category {c}", part, category_spec(part)))
    batch = cold_fits(jobs, settings, cache_dir=cache_dir, progress=progress, cancel=cancel, what="failure modes",
                     skip_failed=True, rerun_unconverged=rerun_unconverged)
    if four_facet and batch.results[0] is None:
        raise ValueError(f"failure modes: the four-facet G-study failed: {batch.errors.get('four-facet G-study')}")
    comp = components_from_posterior(batch.results[0].posterior) if four_facet else None
    total = 0.0 if comp is None else sum(comp.draws.values()) + comp.residual
    four = {}
    for term, d in ({} if comp is None else comp.draws).items():
        share = d / total
        four[term] = {"median": float(np.median(d)), "lower95": float(np.quantile(d, 0.025)),
                      "upper95": float(np.quantile(d, 0.975)), "share_median": float(np.median(share)),
                      "share_lower95": float(np.quantile(share, 0.025)),
                      "share_upper95": float(np.quantile(share, 0.975))}
    at_cols, errors = [], dict(batch.errors)
    for c, res in zip(cats, batch.results[1:] if four_facet else batch.results):
        if res is None:
            at_cols.append(None)
            continue
        cc = components_from_posterior(res.posterior)
        term = _term(cc, {"task", "agent"})
        if term is None:
            errors[f"category {c}"] = "the fit has no task:agent term (left out: the design cannot separate it)"
            at_cols.append(None)
            continue
        at_cols.append(cc.draws[term])
    if any(a is None for a in at_cols):
        bad = [c for c, a in zip(cats, at_cols) if a is None]
        raise ValueError(f"failure modes: no agent x task variance for {', '.join(bad)}: "
                         + "; ".join(f"{k}: {v}" for k, v in errors.items()))
    S = min(a.size for a in at_cols)
    at = np.stack([a[:S] for a in at_cols], axis=1)
    act = activation_draws(profiles, S, seed)
    observed = np.nanmean(profiles.to_numpy(float), axis=0)
    rho = np.array([spearman_rho(at[s], act[s]) for s in range(S)])
    hold = None
    if n_splits > 0:
        hold = profile_holdout(profiles, n_splits=n_splits, seed=seed, cancel=cancel)
    return FailureModeStudy(categories=cats, four_facet=four, formula=str(spec4.formula) if four_facet else "",
                            at_draws=at,
                            activation=act, activation_observed=observed, n_traces=int(len(profiles)),
                            rho_draws=rho, holdout=hold, n_fits=batch.n_fits, n_converged=batch.n_converged,
                            category_errors=errors, slice=str(corpus.provenance.get("slice") or ""),
                            n_rerun=batch.n_rerun)


def run_failure_taxonomy(ctx) -> FailureTaxonomy:
    """The DDR sheet's runner (``ddr report --analyses failures``): the study's :class:`FailureTaxonomy`."""
    return failure_mode_study(ctx.corpus, ctx.settings, ctx.cache_dir, ctx.progress, ctx.cancel).taxonomy()


def format_failure_modes(d: dict) -> str:
    """Plain text of :meth:`FailureModeStudy.to_dict` (or of the skip record)."""
    if "skipped" in d:
        return f"Failure modes: skipped - {d['skipped']}"
    ok = d["n_converged"] == d["n_fits"]
    lines = [f"Failure modes ({cite('ddr2026', 'secs. 5.6-5.7')}), {d['n_traces']} traces; {d['n_converged']} of {d['n_fits']} "
             "fits converged" + (f" ({d['n_rerun']} rerun with twice the draws)" if d.get("n_rerun") else "")
             + ("" if ok else " - PROVISIONAL") + (f"; slice {d['slice']}" if d.get("slice") else ""),
             f"  four-facet G-study {d['formula'] or '(not run)'}:", f"  {'term':<28}{'sigma^2':>9}{'share':>8}   95% share"]
    for term, c in sorted(d["four_facet"].items(), key=lambda kv: -kv[1]["share_median"]):
        lines.append(f"  {term:<28}{c['median']:>9.3f}{c['share_median']:>8.1%}   "
                     f"[{c['share_lower95']:.1%}, {c['share_upper95']:.1%}]")
    lines.append(f"  {'category':<28}{'sigma^2_a:t':>12}  {'95%':<16}{'activation':>11}  95%")
    for r in d["categories"]:
        lines.append(f"  {r['category'][:27]:<28}{r['interaction_variance']:>12.3f}  "
                     f"[{r['interaction_lower95']:.2f}, {r['interaction_upper95']:.2f}]".ljust(16)
                     + f"{r['activation_rate']:>11.3f}  [{r['activation_lower95']:.3f}, {r['activation_upper95']:.3f}]")
    s = d["spearman"]
    if s["median"] is not None:
        lines.append(f"  rank correlation variance vs activation: {d['spearman_point']:+.2f} (posterior medians); "
                     f"per draw median {s['median']:+.2f} [{s['lower95']:+.2f}, {s['upper95']:+.2f}], "
                     f"P(rho < 0) = {s['p_negative']:.2f}; {cite('ddr2026')}: -0.20 (n = 4, descriptive)")
    else:
        lines.append("  rank correlation variance vs activation: n/a (the categories' variances or rates tie in "
                     "every draw)")
    h = d.get("holdout")
    if h:
        lines.append(f"  mode-profile hold-out, {h['n_splits']} splits {round(100 * h['train_fraction'])}/"
                     f"{round(100 * (1 - h['train_fraction']))} by cell ({', '.join(h['cell'])}; {h['n_cells']} cells):"
                     f" trace-level MAE {h['trace_mae']:.3f}, cell-level MAE {h['cell_mae']:.3f}, cell-level r "
                     + ("n/a" if h["cell_r"] is None else f"{h['cell_r']:.2f}")
                     + f" ({cite('ddr2026')}: 0.261, 0.056, 0.83)")
    return "\n".join(lines)
