"""Held-out reliability: projected against replicated Erho2 over random 70/30 splits (seed 003 (DDR paper 2026) sec. 5.4).

Seed 003: "50 random 70/30 splits stratified by (agent, task) cell. For each
split we fit the G-study on training cells, project the implied Erho2 for the
observed design, and compare it to the empirical Erho2 on held-out cells",
reporting the Pearson r across splits and the mean gap.  The paper leaves
three things open; the exact definition used here:

1. **Split, stratified by cell.**  The stratum is the (agent, task) cell,
   agent = (model, scaffold), task = (benchmark, task).  Each cell's ``N``
   trials are split on their own: ``k = floor(0.7 N + U)``, ``U ~ U(0, 1)``
   (stochastic rounding, so every cell sends 70% of its trials to training
   in expectation, and a single-trial cell goes to training with probability
   0.7), and the ``k`` training trials are drawn without replacement, so the
   training successes are hypergeometric given the cell's successes.
2. **Projected.**  The posterior median of the per-draw Erho2 of the
   training fit's variance components read at the held-out part's observed
   design (its tasks per benchmark, scaffolds per model, benchmarks and
   trials per cell: :func:`~ddr_explorer.core.dstudy.observed_design`), i.e. the D-study
   prediction of the reliability a replication of the held-out size will find.
3. **Held-out.**  The posterior median of the per-draw Erho2 of a G-study
   fitted on the held-out cells alone (the same model and sampler), read at
   the same design: the reliability the replication actually supports.

Per split: ``gap = held_out - projected`` (negative: the projection is
optimistic, seed 003's finding); reported: the Pearson r across splits and
the mean gap (:class:`~.report.inputs.HeldOutReliability`).

Cost: two fits per split.  The splits' sampler settings are a parameter;
by default (:func:`split_settings`) they are the main settings cut to 4
chains whose run length the convergence gate sets (at least 100 draws per
chain, a look every 50, at most 1,000): every refit must pass the gate
(bulk ESS >= 400), which a fixed 4 x 250 missed on TB2 for most splits (the
refit engine then reran them with twice the draws).  Both fits of a split
report one number, the median of Erho2 at the held-out design, so they stop
on it, under the precision rule by default (:mod:`.precision`): their chains
agree (R-hat within what 100 effective draws allow and bulk ESS >= 100 on every
component and on that number, no divergence) and the number's Monte Carlo SE is at most a tenth of its spread
across the splits so far (the training fits': of the projected values; the
held-out fits': of the held-out values), never above 0.005.  ``refit_rule="gate"``
keeps the rule before: R-hat <= 1.01 and bulk and tail ESS >= 440 on it (:mod:`.reported`).
The study states the Monte Carlo SE of each split's medians and, by the delta
method, of the Pearson r and the mean gap (:func:`.precision.heldout_mcse`).
Every fit goes through the refit engine (:class:`~.engine.RefitEngine`): a
split's two parts are new counts on the whole corpus's cells (each cell's
trials divided between them), refitted together under the whole corpus's model
and cached: a rerun samples nothing.  Each refit's seed derives from the
split settings' seed and its own counts (:func:`~ddr_explorer.core.model.refit.request_seed`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..dstudy import observed_design
from ..errors import shown
from ..ranks import spearman_rho
from .refits import CancelCallback, FitJob, ProgressCallback, coefficient_draws
from .reported import ReportedQuantity


@dataclass(frozen=True)
class HeldOutReliability:
    """Projected against held-out reliability over random splits (seed 003 sec. 5.4).

    Attributes
    ----------
    projected
        ``(n_splits,)`` the coefficient of the observed design projected from
        the training cells' fit (posterior median per split).
    held_out
        ``(n_splits,)`` the coefficient found on the held-out cells.
    train_fraction
        Share of cells in the training part (0.7 in seed 003).
    stratified_by
        What the splits were stratified by.
    n_fits, n_converged
        The refits behind the splits and how many passed the convergence gate (None: not counted).
    converged_on
        What the gate was checked on: for the splits' refits, the Erho2 they report (:mod:`.reported`).
    projected_mcse, held_out_mcse
        ``(n_splits,)`` the Monte Carlo SE of each split's two medians (None: not known).
    refit_rule
        The run-length rule of the splits' refits (:data:`.precision.REFIT_RULES`; None: not said).
    """

    projected: np.ndarray
    held_out: np.ndarray
    train_fraction: float = 0.7
    stratified_by: str = "(agent, task) cell"
    n_fits: int | None = None
    n_converged: int | None = None
    #: What ``n_converged`` was checked on (:attr:`~.refits.BatchResult.converged_on`; None: not said).
    converged_on: str | None = None
    projected_mcse: np.ndarray | None = None
    held_out_mcse: np.ndarray | None = None
    refit_rule: str | None = None
    #: The refits that ran but did not pass the gate, by name (``"split 7 train"``).
    unconverged: tuple[str, ...] = ()
    #: Which estimator fitted the splits' parts: ``"bayes"`` (the Bayesian GLMM refits) or ``"reml"``
    #: (the REML LMM, :mod:`.heldout_reml`); see :data:`ESTIMATOR_SCALES` for the scale of each.
    estimator: str = "bayes"
    #: Why this estimator ran, in one line for the sheet (:func:`.heldout_choice.choose_heldout_estimator`).
    choice: str | None = None

    @property
    def scale(self) -> str:
        """The scale the coefficients are on: latent logit (Bayesian GLMM) or observed 0/1 (REML LMM)."""
        return ESTIMATOR_SCALES.get(self.estimator, "unknown")

    @property
    def estimator_label(self) -> str:
        """``"Bayesian refits, latent logit scale"`` or ``"REML refits, observed 0/1 scale"``."""
        return f"{ESTIMATOR_NAMES.get(self.estimator, self.estimator)} refits, {self.scale} scale"

    @property
    def split_se(self) -> tuple[float, float]:
        """Sampling SE of (:attr:`pearson_r`, :attr:`mean_gap`) over the splits drawn: the uncertainty left by
        drawing ``n_splits`` splits rather than all of them (Fisher z for r, back-transformed by the delta
        method: ``(1 - r^2) / sqrt(n - 3)``; ``sd(gap) / sqrt(n)`` for the gap).  What a REML hold-out has in
        place of a Monte Carlo SE (its point estimates carry none), and comparable across estimators."""
        n, r = self.n_splits, self.pearson_r
        gap = self.held_out - self.projected
        r_se = float((1 - r * r) / np.sqrt(n - 3)) if n > 3 and np.isfinite(r) else float("nan")
        return r_se, float(np.std(gap, ddof=1) / np.sqrt(n))

    @property
    def converged(self) -> bool | None:
        """True when every refit behind the splits passed the convergence gate (None: not counted)."""
        return None if self.n_fits is None else self.n_converged == self.n_fits

    def __post_init__(self):
        p = np.asarray(self.projected, dtype=np.float64).ravel()
        h = np.asarray(self.held_out, dtype=np.float64).ravel()
        for name in ("projected_mcse", "held_out_mcse"):
            v = getattr(self, name)
            if v is not None:
                v = np.asarray(v, dtype=np.float64).ravel()
                if v.shape != p.shape:
                    raise ValueError(f"held-out reliability: {name} has {v.size} values for {p.size} splits")
                object.__setattr__(self, name, v)
        if p.shape != h.shape or p.size < 2:
            raise ValueError(f"held-out reliability needs two arrays of one length >= 2 (one value per split), "
                             f"got {p.size} projected and {h.size} held-out values")
        if self.estimator not in ESTIMATOR_SCALES:
            raise ValueError(f"held-out reliability: unknown estimator {self.estimator!r}; "
                             f"use {' or '.join(ESTIMATOR_SCALES)}")
        if not (np.isfinite(p).all() and np.isfinite(h).all()):
            raise ValueError("held-out reliability has a non-finite value; drop the failed splits")
        object.__setattr__(self, "projected", p)
        object.__setattr__(self, "held_out", h)

    @property
    def n_splits(self) -> int:
        return int(self.projected.size)

    @property
    def pearson_r(self) -> float:
        """Pearson correlation across splits (NaN when either side is constant)."""
        if np.ptp(self.projected) == 0 or np.ptp(self.held_out) == 0:
            return float("nan")
        return float(np.corrcoef(self.projected, self.held_out)[0, 1])

    @property
    def spearman(self) -> float:
        return spearman_rho(self.projected, self.held_out)

    @property
    def mean_gap(self) -> float:
        """Mean of ``held_out - projected`` (negative: the projection is optimistic)."""
        return float(np.mean(self.held_out - self.projected))

    @property
    def verdict(self):
        """Whether the training-cell projection is optimistic (:func:`.gap_verdict.gap_verdict` on the
        split-by-split gaps ``held_out - projected`` and their spread)."""
        from .gap_verdict import gap_verdict, split_gap_interval

        return gap_verdict(*split_gap_interval(self.held_out - self.projected))

    def _mcse(self) -> tuple[float, float]:
        if self.projected_mcse is None or self.held_out_mcse is None:
            return float("nan"), float("nan")
        from .precision import heldout_mcse

        return heldout_mcse(self.projected, self.held_out, self.projected_mcse, self.held_out_mcse)

    @property
    def pearson_r_mcse(self) -> float:
        """Monte Carlo SE of :attr:`pearson_r` (delta method over the splits' medians, :func:`.precision.heldout_mcse`;
        NaN when the splits' MCSEs are not known)."""
        return self._mcse()[0]

    @property
    def mean_gap_mcse(self) -> float:
        """Monte Carlo SE of :attr:`mean_gap` (NaN when the splits' MCSEs are not known)."""
        return self._mcse()[1]


#: The scale each hold-out estimator's coefficients are on (SPEC sec. 2; seed 000 (Hardy et al. 2026) App. C.2-C.3).
ESTIMATOR_SCALES: dict[str, str] = {"bayes": "latent logit", "reml": "observed 0/1"}
#: Display names of the estimators.
ESTIMATOR_NAMES: dict[str, str] = {"bayes": "Bayesian", "reml": "REML"}

__all__ = ["CELL", "ESTIMATOR_SCALES", "HeldOutStudy", "split_cells", "split_settings", "held_out_jobs", "held_out_study", "run_heldout"]

#: The columns of one (agent, task) cell: the stratum of the splits.
CELL: tuple[str, ...] = ("benchmark", "task", "model", "scaffold")


def split_settings(settings=None, draws: int = 100, warmup: int = 250, chains: int = 4, max_draws: int = 1000,
                   check_every: int = 50):
    """The sampler settings of the split fits: ``settings`` with at most ``chains`` chains of ``warmup``
    warmup iterations (a warm refit runs :data:`~ddr_explorer.core.model.refit.WARM_WARMUP`), each run as
    long as the convergence gate asks (``stop="gate"``, :mod:`~ddr_explorer.core.model.stopping`): at least
    ``draws`` per chain, a look every ``check_every``, at most ``max_draws``."""
    from ..model.posterior import SamplerSettings

    s = settings or SamplerSettings()
    draws = min(s.draws, draws)
    # run length by the gate: a fixed 4 x 250 left 6 of 6 TB2 split refits under bulk ESS 400 (each then
    # rerun at twice the draws); the gate stopped them at 250-450 draws per chain, all passing
    # (bench/bench_refit_cost.py, docs/sampler-measurements.md)
    return dataclasses.replace(s, draws=draws, warmup=min(s.warmup, warmup), chains=min(s.chains, chains),
                               stop="gate", max_draws=max(draws, max_draws), check_every=check_every,
                               max_seconds=None)


def split_cells(table: pd.DataFrame, rng: np.random.Generator,
                train_fraction: float = 0.7) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split every (agent, task) cell's trials into a training and a held-out part.

    Parameters
    ----------
    table
        Canonical corpus table (:data:`CELL` columns, ``successes``, ``trials``).
    rng
        The random generator of this split.
    train_fraction
        Expected share of each cell's trials in training (0.7 in seed 003).

    Returns
    -------
    train, held_out
        Binomial cell tables (:data:`CELL`, ``successes``, ``trials``); a cell
        whose trials all went to one side is absent from the other.
    """
    if not 0 < train_fraction < 1:
        raise ValueError(f"train_fraction should lie in (0, 1), got {shown(train_fraction)}")
    cells = table.groupby(list(CELL), observed=True, sort=True)[["successes", "trials"]].sum().reset_index()
    n = cells["trials"].to_numpy(np.int64)
    s = cells["successes"].to_numpy(np.int64)
    k = np.floor(train_fraction * n + rng.random(n.size)).astype(np.int64)  # stochastic rounding per cell
    k = np.clip(k, 0, n)
    s_train = np.zeros_like(s)
    some = k > 0
    s_train[some] = rng.hypergeometric(s[some], (n - s)[some], k[some])
    train = cells.assign(successes=s_train, trials=k)[k > 0]
    held = cells.assign(successes=s - s_train, trials=n - k)[n - k > 0]
    return train.reset_index(drop=True), held.reset_index(drop=True)


def _part(corpus, table: pd.DataFrame, name: str):
    from .refits import sub_corpus

    return sub_corpus(corpus, table, name)


@dataclass
class HeldOutStudy:
    """Held-out reliability over random splits, with the per-split table.

    Attributes
    ----------
    result
        The :class:`~.report.inputs.HeldOutReliability` the DDR sheet draws
        (successful splits only).
    splits
        One row per split: ``split``, ``projected``, ``held_out``, ``gap``
        (``held_out - projected``), ``n_train_trials``, ``n_held_out_trials``,
        ``error`` (why a split was dropped, else None).
    n_fitted, n_cached
        Fits sampled / reopened from the cache.
    n_fits, n_converged
        Fits behind the numbers, and how many of them passed the convergence gate.
    n_rerun, cold
        Refits rerun once with more draws (gate), and the parts fitted cold with why.
    """

    result: HeldOutReliability | None
    splits: pd.DataFrame
    n_fitted: int = 0
    n_cached: int = 0
    settings: object = None
    errors: dict = field(default_factory=dict)
    n_fits: int = 0
    n_converged: int = 0
    n_rerun: int = 0
    cold: dict = field(default_factory=dict)
    #: What ``n_converged`` was checked on (:attr:`~.refits.BatchResult.converged_on`).
    converged_on: str = ""
    #: The run-length rule of the refits (:data:`.precision.REFIT_RULES`).
    refit_rule: str | None = None
    #: The estimator of the parts' fits (:data:`ESTIMATOR_SCALES`).
    estimator: str = "bayes"

    def to_dict(self) -> dict:
        r = self.result

        def num(v):
            return None if v is None or not np.isfinite(v) else float(v)

        r_se, gap_se = (None, None) if r is None else (num(r.split_se[0]), num(r.split_se[1]))
        return {"estimator": self.estimator, "scale": ESTIMATOR_SCALES.get(self.estimator),
                "choice": None if r is None else r.choice,
                "n_splits": 0 if r is None else r.n_splits,
                "pearson_r": None if r is None else r.pearson_r,
                "pearson_r_mcse": None if r is None else num(r.pearson_r_mcse),
                "spearman": None if r is None else r.spearman,
                "mean_gap": None if r is None else r.mean_gap,
                "mean_gap_mcse": None if r is None else num(r.mean_gap_mcse),
                "verdict": None if r is None else r.verdict.to_dict(),
                "pearson_r_split_se": r_se, "mean_gap_split_se": gap_se,
                "refit_rule": self.refit_rule,
                "train_fraction": None if r is None else r.train_fraction,
                "splits": self.splits.replace({np.nan: None}).to_dict(orient="records"),
                "settings": None if self.settings is None else dataclasses.asdict(self.settings),
                "n_fitted": self.n_fitted, "n_cached": self.n_cached, "n_fits": self.n_fits,
                "n_converged": self.n_converged, "converged_on": self.converged_on, "n_rerun": self.n_rerun,
                "cold": dict(self.cold)}


def held_out_jobs(corpus, spec="per-benchmark", *, n_splits: int = 50, train_fraction: float = 0.7, seed: int = 0,
                  object_of_measurement: str = "model", claim: str = "relative",
                  stop_on_reported: bool = True, refit_rule: str | None = None
                  ) -> tuple[list[FitJob], list, list[tuple[int, int]]]:
    """The fit jobs of :func:`held_out_study`: per split its training and held-out parts (in that order).

    Split ``i`` draws from ``default_rng([seed, i])`` (seed 003 sec. 5.4: 50 random 70/30 splits of the
    cells).  Returns the jobs, each split's held-out :class:`~.dstudy.DStudyDesign` (what both of its fits
    report) and its (training, held-out) trial counts.  :func:`~.defaults.plan_sheet_analyses` builds
    the same jobs to find which refits are already in the cache.  ``refit_rule`` (:data:`.precision.REFIT_RULES`;
    None: ``"precision"``): under the precision rule the training fits' tolerance follows the spread of the
    projected Erho2 across splits, the held-out fits' the spread of the held-out Erho2.
    """
    from .precision import precision_rule

    rules = (precision_rule(refit_rule, "projected"), precision_rule(refit_rule, "held-out"))
    if n_splits < 2:
        raise ValueError(f"held-out reliability needs at least 2 splits (a correlation across splits), "
                         f"got {n_splits}")
    jobs, designs, sizes = [], [], []
    for i in range(n_splits):
        train, held = split_cells(corpus.table, np.random.default_rng([seed, i]), train_fraction)
        tc = _part(corpus, train, f"{corpus.name} [split {i + 1} train]")
        hc = _part(corpus, held, f"{corpus.name} [split {i + 1} held-out]")
        designs.append(observed_design(hc, object_of_measurement=object_of_measurement, claim=claim))
        sizes.append((int(train["trials"].sum()), int(held["trials"].sum())))
        # both fits report one number, the median of Erho2 at the held-out design: they stop on it
        rep = (ReportedQuantity.coefficient(designs[-1], "the held-out design"),) if stop_on_reported else ()
        jobs += [FitJob(f"split {i + 1} train", tc, spec, rep, rules[0] if rep else None),
                 FitJob(f"split {i + 1} held-out", hc, spec, rep, rules[1] if rep else None)]
    return jobs, designs, sizes


def held_out_study(corpus, spec="per-benchmark", settings=None, cache_dir: str | Path | None = None,
                   progress: ProgressCallback | None = None, cancel: CancelCallback | None = None, *,
                   n_splits: int = 50, train_fraction: float = 0.7, seed: int = 0,
                   object_of_measurement: str = "model", claim: str = "relative",
                   fit_settings=None, parent=None, scheduler: str | None = None,
                   stop_on_reported: bool = True, refit_rule: str | None = None) -> HeldOutStudy:
    """Projected against held-out Erho2 over ``n_splits`` random splits (see the module note).

    Parameters
    ----------
    corpus
        A validated corpus.
    spec
        The model of every fit.
    settings
        Main sampler settings; the splits use :func:`split_settings` of them
        unless ``fit_settings`` is given.
    cache_dir, progress, cancel
        See :meth:`~.engine.RefitEngine.run` (progress counts the refits of all splits).
    n_splits, train_fraction, seed
        50, 0.7 in seed 003; split ``i`` draws from ``default_rng([seed, i])``.
    object_of_measurement, claim
        Of the coefficient.
    fit_settings
        Exact sampler settings of the split fits (overrides the default cut).
    parent, scheduler
        The whole corpus's :class:`~ddr_explorer.core.fitting.FitResult` when at hand (the refits start
        from it), and a Dask scheduler address (:class:`~.engine.RefitEngine`).
    stop_on_reported
        Both fits of a split stop, and are counted converged, on what they report: Erho2 at the split's
        held-out design (:mod:`.reported`; R-hat <= 1.01 on every component too).  False: on every
        variance component (the rule before; bench/bench_refit_reported.py compares the two).
    refit_rule
        ``"precision"`` (None: the default) or ``"gate"`` (:mod:`.precision`): how long each refit runs.

    Returns
    -------
    HeldOutStudy
        ``result`` is None when fewer than two splits could be fitted.
    """
    base = fit_settings or split_settings(settings)
    jobs, designs, sizes = held_out_jobs(corpus, spec, n_splits=n_splits, train_fraction=train_fraction, seed=seed,
                                         object_of_measurement=object_of_measurement, claim=claim,
                                         stop_on_reported=stop_on_reported, refit_rule=refit_rule)
    from .engine import RefitEngine
    from .precision import check_refit_rule, draws_mcse

    refit_rule = check_refit_rule(refit_rule)

    engine = RefitEngine(corpus, spec, settings, cache_dir=cache_dir, parent=parent, scheduler=scheduler)
    try:
        b = engine.run(jobs, base, progress=progress, cancel=cancel, what="held-out study", skip_failed=True)
    except ValueError as exc:  # the whole corpus cannot take this model: every split fails the same way
        from .refits import BatchResult

        b = BatchResult(results=[None] * len(jobs), errors={j.label: str(exc) for j in jobs})
    rows, errors = [], {}
    for i in range(n_splits):
        pair = b.results[2 * i: 2 * i + 2]
        labels = [j.label for j in jobs[2 * i: 2 * i + 2]]
        row = {"split": i + 1, "projected": np.nan, "held_out": np.nan, "gap": np.nan,
               "projected_mcse": np.nan, "held_out_mcse": np.nan,
               "n_train_trials": sizes[i][0], "n_held_out_trials": sizes[i][1], "error": None}
        failed = {lab: b.errors[lab] for lab in labels if lab in b.errors}
        if failed or any(r is None for r in pair):
            row["error"] = "; ".join(f"{k}: {v}" for k, v in failed.items()) or "a part was not fitted"
            errors[i + 1] = row["error"]
        else:
            dp = coefficient_draws(pair[0].posterior, designs[i])
            dh = coefficient_draws(pair[1].posterior, designs[i])
            proj, held = float(np.median(dp)), float(np.median(dh))
            row.update(projected=proj, held_out=held, gap=held - proj,
                       projected_mcse=draws_mcse(dp, np.shape(pair[0].posterior.mu))[0],
                       held_out_mcse=draws_mcse(dh, np.shape(pair[1].posterior.mu))[0])
        rows.append(row)
    if progress is not None:
        progress("held-out study done", 2 * n_splits, 2 * n_splits, 0.0)
    table = pd.DataFrame(rows)
    ok = table["error"].isna().to_numpy()
    result = None
    if ok.sum() >= 2:
        result = HeldOutReliability(table["projected"].to_numpy()[ok], table["held_out"].to_numpy()[ok],
                                    train_fraction, "(agent, task) cell", b.n_fits, b.n_converged,
                                    b.converged_on, table["projected_mcse"].to_numpy()[ok],
                                    table["held_out_mcse"].to_numpy()[ok],
                                    refit_rule if stop_on_reported else None, unconverged=b.unconverged(jobs))
    return HeldOutStudy(result, table, b.n_fitted, b.n_cached, base, errors, b.n_fits, b.n_converged, b.n_rerun,
                        dict(b.cold), b.converged_on, refit_rule if stop_on_reported else None)


def run_heldout(corpus, spec="per-benchmark", settings=None, cache_dir: str | Path | None = None,
                progress: ProgressCallback | None = None,
                cancel: CancelCallback | None = None) -> HeldOutReliability:
    """The DDR sheet's runner: :func:`held_out_study` with seed 003's 50 splits.

    Raises
    ------
    ValueError
        Fewer than two splits could be fitted.
    """
    study = held_out_study(corpus, spec, settings, cache_dir, progress, cancel)
    if study.result is None:
        raise ValueError(f"held-out reliability: only {int(study.splits['error'].isna().sum())} split(s) could be "
                         f"fitted; first problem: {next(iter(study.errors.values()), 'none')}")
    return study.result
