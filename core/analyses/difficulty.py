"""Difficulty-conditional reliability: one G-study per task-difficulty stratum (seed 003 (DDR paper 2026) sec. 3 and 5.3).

Tasks are split into quartiles of their mean success across agents
(:func:`~.report.inputs.task_difficulty`: Q1 easiest, Q4 hardest), the G-study
is refitted on each stratum's records alone, and the coefficient of one
design is computed per posterior draw of each stratum's variance components.
Seed 003 reports ``Erho2_Qk`` per stratum and the gap ``Erho2_agg - Erho2_Q4``
as "the measurement cost of using aggregate reliability to support claims
about hard-task deployments".

Which design the strata are read at.  Seed 003 does not say.  Each stratum is read at its
*own* task count (a quartile of 89 tasks holds 22: a buyer who samples evaluation tasks from
the hard stratum gets the stratum's number of tasks), its other sizes (scaffolds per model,
benchmarks, replicates) the whole corpus's; the aggregate is read at the whole corpus's observed
design.  The table that prints "tasks 22" beside a stratum prints the coefficient of 22 tasks,
and the gap ``Erho2_agg - Erho2_Q4`` is the difference of the two printed figures: what a claim
about hard-task deployments loses against the headline, fewer tasks and harder tasks together
(an earlier version read every stratum at the corpus's 89 tasks).  What
difficulty alone does to the components (sigma^2_model shrinks when every agent fails) is kept
beside it: each stratum's coefficient at the whole corpus's design (``erho2_at_corpus_design``
in :meth:`DifficultyStudy.to_dict`).  Pass ``design=`` for another common design.

Every fit goes through the refit engine (:class:`~.engine.RefitEngine`): each
stratum is a refit of the whole corpus's fit on the stratum's cells, stored in
the HDF5 fit cache, so a rerun with the same corpus, model and settings samples
nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from typing import Sequence

import pandas as pd

from ..dstudy import observed_design
from ..errors import shown
from ..posterior_summary import summarize
from ..reliability import Summary, as_summary
from .refits import CancelCallback, FitJob, ProgressCallback, coefficient_draws, sub_corpus
from .reported import ReportedQuantity


# ---------------------------------------------------------------------------
# Task difficulty (computed from the corpus, no fit needed)
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class TaskDifficulty:
    """Tasks in quartiles of mean success across agents (seed 003 sec. 3, "difficulty-conditional").

    Attributes
    ----------
    tasks
        ``"benchmark/task"`` labels.
    mean_success
        ``(T,)`` per task: the mean over agents (model-scaffold pairs) of each
        agent's success rate on the task, so every agent counts once however
        many trials it ran.
    quartile
        ``(T,)`` stratum 1..K per task, 1 = easiest (highest mean success).
    labels
        ``("Q1 (easiest)", ..., "Q4 (hardest)")``.
    stratum_mean, stratum_n
        ``(K,)`` mean of ``mean_success`` and number of tasks per stratum.
    n_never_solved, n_always_solved
        Tasks no agent solved / every agent solved on every trial: they carry
        no information about who is better.
    """

    tasks: tuple[str, ...]
    mean_success: np.ndarray
    quartile: np.ndarray
    labels: tuple[str, ...]
    stratum_mean: np.ndarray
    stratum_n: np.ndarray
    n_never_solved: int
    n_always_solved: int

    @property
    def n_strata(self) -> int:
        return len(self.labels)


def task_difficulty(table: pd.DataFrame, n_strata: int = 4) -> TaskDifficulty:
    """Split tasks into ``n_strata`` equal-count strata of mean success across agents.

    Tasks are ordered by decreasing mean success (ties by name, so the split is
    reproducible) and cut into strata of sizes differing by at most one; with
    fewer tasks than strata, fewer strata are returned.  In a pooled corpus the
    strata run over all (benchmark, task) pairs together.

    Parameters
    ----------
    table
        A canonical corpus table (``benchmark``, ``task``, ``model``,
        ``scaffold``, ``successes``, ``trials``).
    n_strata
        4 for quartiles (seed 003).
    """
    need = ["benchmark", "task", "model", "scaffold", "successes", "trials"]
    missing = [c for c in need if c not in table.columns]
    if missing:
        raise ValueError(f"task difficulty needs column(s) {', '.join(missing)}; load the corpus with load_corpus")
    cells = ["benchmark", "task", "model", "scaffold"]
    g = table.groupby(cells, observed=True, sort=True)[["successes", "trials"]].sum()
    rate = (g["successes"] / g["trials"]).groupby(level=["benchmark", "task"], observed=True, sort=True).mean()
    labels_all = [f"{b}/{t}" for b, t in rate.index]
    succ = rate.to_numpy(np.float64)
    order = sorted(range(len(succ)), key=lambda k: (-succ[k], labels_all[k]))
    k = max(1, min(n_strata, len(succ)))
    quart = np.empty(len(succ), dtype=np.int64)
    for s, chunk in enumerate(np.array_split(np.array(order, dtype=np.int64), k), start=1):
        quart[chunk] = s
    names = [f"Q{s}" for s in range(1, k + 1)]
    if k > 1:
        names[0] += " (easiest)"
        names[-1] += " (hardest)"
    smean = np.array([succ[quart == s].mean() for s in range(1, k + 1)])
    sn = np.array([int((quart == s).sum()) for s in range(1, k + 1)])
    return TaskDifficulty(tuple(labels_all), succ, quart, tuple(names), smean, sn,
                          int((succ == 0).sum()), int((succ == 1).sum()))


@dataclass(frozen=True)
class DifficultyProfile:
    """Difficulty-conditional reliability: one G-study per difficulty stratum (seed 003 sec. 5.3).

    Attributes
    ----------
    labels
        Stratum names, easiest first (``"Q1 (easiest)"`` ... ``"Q4 (hardest)"``).
    erho2
        Per stratum, the coefficient from that stratum's own fit at the stratum's own task count
        (the module note; a :class:`~ddr_explorer.core.reliability.Summary`, or ``None`` where the
        fit failed).
    aggregate
        The same coefficient from the fit on all tasks.
    mean_success
        ``(K,)`` mean success of each stratum's tasks (optional).
    n_fits, n_converged
        The fits behind the profile and how many passed the convergence gate (None: not counted).

    Notes
    -----
    The strata are fitted separately, so their draws are not paired with the
    aggregate's: the gap ``aggregate - hardest`` is reported as a difference
    of posterior medians, not as a per-draw difference.
    """

    labels: tuple[str, ...]
    erho2: tuple[Summary | None, ...]
    aggregate: Summary
    mean_success: np.ndarray | None = None
    n_fits: int | None = None
    n_converged: int | None = None
    #: What ``n_converged`` was checked on (:attr:`~.refits.BatchResult.converged_on`; None: not said).
    converged_on: str | None = None
    #: The fits that ran but did not pass the gate, by name (``"Q4 (hardest)"``, ``"aggregate"``).
    unconverged: tuple[str, ...] = ()
    #: Per stratum, the Monte Carlo SE of its Erho2 (median, 2.5% and 97.5% quantiles; None: not known or failed).
    mcse: tuple | None = None
    #: The run-length rule of the strata's refits (:data:`.precision.REFIT_RULES`; None: not said).
    refit_rule: str | None = None
    #: Per stratum and for all tasks, the reliability of observed success rates at the same designs
    #: (:mod:`...score_reliability`; the scale a buyer reads); None where the fits have no such scale.
    scores: tuple | None = None
    scores_aggregate: Summary | None = None

    @property
    def max_mcse(self) -> float | None:
        """The largest Monte Carlo SE of a stratum's median or interval end (None: not known)."""
        vals = [v for m in (self.mcse or ()) if m is not None for v in m if np.isfinite(v)]
        return max(vals) if vals else None

    @property
    def converged(self) -> bool | None:
        """True when every fit behind the profile passed the convergence gate (None: not counted)."""
        return None if self.n_fits is None else self.n_converged == self.n_fits

    def __post_init__(self):
        if len(self.labels) != len(self.erho2) or not self.labels:
            raise ValueError(f"difficulty profile: {len(self.labels)} labels for {len(self.erho2)} strata; "
                             "give one label per stratum")
        object.__setattr__(self, "erho2", tuple(as_summary(e) for e in self.erho2))
        object.__setattr__(self, "aggregate", as_summary(self.aggregate))

    @classmethod
    def from_draws(cls, labels: Sequence[str], strata_draws: Sequence[np.ndarray | None], aggregate_draws,
                   mean_success=None) -> "DifficultyProfile":
        """Summarise per-stratum draws of the coefficient (one array per stratum fit)."""
        return cls(tuple(labels), tuple(as_summary(d) for d in strata_draws), as_summary(aggregate_draws),
                   None if mean_success is None else np.asarray(mean_success, dtype=np.float64))

    @property
    def hardest(self) -> Summary | None:
        return self.erho2[-1]

    @property
    def gap(self) -> float | None:
        """``median(aggregate) - median(hardest stratum)`` (seed 003's "measurement cost"): the difference
        of the two figures the table prints (the aggregate at the corpus's tasks, the stratum at its own)."""
        return None if self.hardest is None else self.aggregate.median - self.hardest.median

    @property
    def verdict(self):
        """Whether the headline (the aggregate) is optimistic for hard tasks: :func:`.gap_verdict.gap_verdict`
        on ``hardest - aggregate`` and the two fits' intervals (None without a hardest stratum)."""
        from .gap_verdict import gap_verdict, independent_gap_interval

        return None if self.hardest is None else gap_verdict(*independent_gap_interval(self.hardest, self.aggregate))


#: The quantiles of a stratum's Erho2 the sheet takes: its median and 95% interval ends (the precision rule's
#: MCSE is asked of each; the sheet's interval is an HDI, whose ends sit near these quantiles).
STRATUM_PROBS = (0.5, 0.025, 0.975)

__all__ = ["DifficultyStudy", "difficulty_jobs", "difficulty_study", "run_difficulty_study", "stratum_masks",
           "stratum_design"]


@dataclass
class DifficultyStudy:
    """A difficulty-conditional study and the draws behind it.

    Attributes
    ----------
    profile
        The :class:`~.report.inputs.DifficultyProfile` the DDR sheet draws.
    strata
        The task strata (:class:`~.report.inputs.TaskDifficulty`).
    design
        The design every coefficient is computed at.
    draws
        ``"aggregate"`` and each stratum label -> per-draw coefficient (None: that fit failed).
    errors
        Stratum label -> why its fit failed.
    n_fitted, n_cached
        Fits sampled / reopened from the cache.
    n_fits, n_converged
        Fits behind the numbers, and how many of them passed the convergence gate.
    n_rerun, cold
        Refits rerun once with more draws (gate), and the jobs fitted cold with why.
    """

    profile: DifficultyProfile
    strata: TaskDifficulty
    design: object
    draws: dict
    errors: dict = field(default_factory=dict)
    n_fitted: int = 0
    n_cached: int = 0
    n_fits: int = 0
    n_converged: int = 0
    n_rerun: int = 0
    cold: dict = field(default_factory=dict)
    #: What ``n_converged`` was checked on (:attr:`~.refits.BatchResult.converged_on`).
    converged_on: str = ""
    #: Stratum label -> the design its coefficient is read at (its own tasks; the module note).
    stratum_designs: dict = field(default_factory=dict)
    #: Stratum label -> median coefficient at the whole corpus's design (difficulty alone, at one size).
    at_corpus_design: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """Plain JSON-ready numbers: per stratum median and 95% HDI, the gap, the design."""
        def summ(s):
            return None if s is None else {"median": s.median, "lower95": s.hdi95[0], "upper95": s.hdi95[1]}

        def mc(m):
            return None if m is None else {k: (float(v) if np.isfinite(v) else None)
                                           for k, v in zip(("median", "q025", "q975"), m)}

        p = self.profile
        mcse = p.mcse or (None,) * len(p.labels)
        def design_tasks(lab):
            d = self.stratum_designs.get(lab)
            return None if d is None else float(d.effective_n_tasks)

        scores = p.scores or (None,) * len(p.labels)
        return {"strata": [{"label": lab, "n_tasks": int(n), "mean_success": float(m), "erho2": summ(e),
                            "erho2_design_n_tasks": design_tasks(lab),
                            "erho2_at_corpus_design": self.at_corpus_design.get(lab),
                            "erho2_mcse": mc(c), "error": self.errors.get(lab),
                            "erho2_success_rates": summ(sc)}
                           for lab, n, m, e, c, sc in zip(p.labels, self.strata.stratum_n, self.strata.stratum_mean,
                                                          p.erho2, mcse, scores)],
                "erho2_scale": "latent ability ranking (Hardy et al. 2026); erho2_success_rates: observed "
                               "success rates at the same design",
                "refit_rule": p.refit_rule,
                "aggregate": summ(p.aggregate), "gap_aggregate_minus_hardest": p.gap,
                "verdict": None if p.verdict is None else p.verdict.to_dict(),
                "design": self.design.to_dict(), "n_fitted": self.n_fitted, "n_cached": self.n_cached,
                "n_fits": self.n_fits, "n_converged": self.n_converged, "converged_on": self.converged_on,
                "n_rerun": self.n_rerun,
                "cold": dict(self.cold)}


def stratum_masks(corpus, strata: TaskDifficulty) -> list[np.ndarray]:
    """Boolean row masks of ``corpus.table``, one per stratum (stratum 1 first)."""
    t = corpus.table
    labels = t["benchmark"].astype(str) + "/" + t["task"].astype(str)
    of = dict(zip(strata.tasks, strata.quartile))
    q = labels.map(of).to_numpy()
    return [q == s for s in range(1, strata.n_strata + 1)]


def difficulty_jobs(corpus, spec="per-benchmark", *, n_strata: int = 4, design=None,
                    object_of_measurement: str = "model", claim: str = "relative", stop_on_reported: bool = True,
                    refit_rule: str | None = None):
    """The fit jobs of :func:`difficulty_study`: the aggregate (the parent) and one per stratum of tasks.

    Returns the :class:`TaskDifficulty` strata, the design every fit is read at and the jobs.
    :func:`~.defaults.plan_sheet_analyses` builds the same jobs to find which refits are already cached.

    Raises
    ------
    ValueError
        ``n_strata`` is not a whole number >= 2, or the corpus has fewer than two tasks.
    """
    if not (isinstance(n_strata, (int, np.integer)) and n_strata >= 2):
        raise ValueError(f"difficulty strata: n_strata should be a whole number >= 2 (4 for quartiles), "
                         f"got {shown(n_strata)}")
    strata = task_difficulty(corpus.table, n_strata)
    if strata.n_strata < 2:
        raise ValueError(f"corpus {corpus.name!r} has {len(strata.tasks)} task(s); difficulty strata need at "
                         "least 2 tasks")
    design = design or observed_design(corpus, object_of_measurement=object_of_measurement, claim=claim)
    jobs = [FitJob("aggregate", corpus, spec)]  # the parent: its components are reported (the G-study)
    # under the precision rule: its median and 95% interval ends, within a tenth of the spread across strata; with
    # 4 strata (fewer than stopping.PRECISION_MIN_SPREAD) that is the ceiling 0.005, which a tenth of strata
    # differences of 0.05 or more (seed 003 sec. 5.3: 0.2-0.6 between the easiest and the hardest) would be anyway
    from .precision import precision_rule

    rule = precision_rule(refit_rule, "stratum", STRATUM_PROBS) if stop_on_reported else None
    for label, mask in zip(strata.labels, stratum_masks(corpus, strata)):
        sub = sub_corpus(corpus, mask, f"{corpus.name} [{label.split()[0]}]")
        # a stratum reports its coefficient at its own task count (median and 95% HDI): it stops on it
        own = stratum_design(design, sub)
        rep = (ReportedQuantity.coefficient(own, "the stratum's own tasks"),) if stop_on_reported else ()
        jobs.append(FitJob(label, sub, spec, rep, rule))
    return strata, design, jobs


def stratum_design(design, stratum_corpus):
    """``design`` with the stratum's own tasks: its tasks per benchmark as :func:`~.dstudy.observed_sizes`
    counts them (the median over benchmarks), every other size unchanged (see the module note)."""
    from ..dstudy import observed_sizes

    return design.with_size("n_tasks", observed_sizes(stratum_corpus.table)["n_tasks"])


def difficulty_study(corpus, spec="per-benchmark", settings=None, cache_dir: str | Path | None = None,
                     progress: ProgressCallback | None = None, cancel: CancelCallback | None = None, *,
                     n_strata: int = 4, design=None, object_of_measurement: str = "model",
                     claim: str = "relative", parent=None, scheduler: str | None = None,
                     stop_on_reported: bool = True, refit_rule: str | None = None) -> DifficultyStudy:
    """Refit the G-study per difficulty stratum and compare each stratum's coefficient with the aggregate.

    Parameters
    ----------
    corpus
        A validated corpus.
    spec, settings
        Model and sampler settings of every fit (the aggregate and each stratum).
    cache_dir, progress, cancel
        See :meth:`~.engine.RefitEngine.run`.
    n_strata
        4 for quartiles (seed 003).
    design
        The :class:`~.dstudy.DStudyDesign` to read every fit at; default: the
        corpus's observed design (see the module note).
    object_of_measurement, claim
        Of the default design.
    parent, scheduler
        The whole corpus's :class:`~ddr_explorer.core.fitting.FitResult` when at hand, and a Dask
        scheduler address (:class:`~.engine.RefitEngine`).
    stop_on_reported
        Each stratum's refit stops, and is counted converged, on what it reports: the coefficient at
        ``design`` (:mod:`.reported`; R-hat <= 1.01 on every component too).  False: on every component.
    refit_rule
        ``"precision"`` (None: the default) or ``"gate"`` (:mod:`.precision`): how long each stratum's refit runs.

    Returns
    -------
    DifficultyStudy
        With ``profile.gap`` = median(aggregate) - median(hardest stratum).

    Raises
    ------
    ValueError
        Fewer than two tasks (no strata to compare).
    FitCancelled
        ``cancel()`` returned True.
    """
    strata, design, jobs = difficulty_jobs(corpus, spec, n_strata=n_strata, design=design,
                                           object_of_measurement=object_of_measurement, claim=claim,
                                           stop_on_reported=stop_on_reported, refit_rule=refit_rule)
    from .engine import RefitEngine
    from .precision import check_refit_rule, draws_mcse

    refit_rule = check_refit_rule(refit_rule)

    engine = RefitEngine(corpus, spec, settings, cache_dir=cache_dir, parent=parent, scheduler=scheduler)
    batch = engine.run(jobs, progress=progress, cancel=cancel, what="difficulty study", skip_failed=True)
    if batch.results[0] is None:
        raise ValueError(f"the fit of the whole corpus failed: {batch.errors['aggregate']}")
    # the aggregate at the corpus's design, each stratum at its own tasks (the design its refit reported)
    designs = {job.label: (job.reported[0].design if job.reported else stratum_design(design, job.corpus))
               for job in jobs[1:]} | {"aggregate": design}
    draws = {job.label: (None if r is None else coefficient_draws(r.posterior, designs[job.label]))
             for job, r in zip(jobs, batch.results)}
    at_corpus = {job.label: (None if r is None else float(np.median(coefficient_draws(r.posterior, design))))
                 for job, r in zip(jobs[1:], batch.results[1:])}
    res = dict(zip([j.label for j in jobs], batch.results))
    mcse = tuple(None if draws[lab] is None else draws_mcse(draws[lab], np.shape(res[lab].posterior.mu), STRATUM_PROBS)
                 for lab in strata.labels)
    scores = {job.label: (None if r is None else _score_draws(r.posterior, designs[job.label]))
              for job, r in zip(jobs, batch.results)}
    profile = dataclasses.replace(
        DifficultyProfile.from_draws(strata.labels, [draws[lab] for lab in strata.labels], draws["aggregate"],
                                     strata.stratum_mean), n_fits=batch.n_fits, n_converged=batch.n_converged,
        converged_on=batch.converged_on, mcse=mcse, refit_rule=refit_rule if stop_on_reported else None,
        unconverged=batch.unconverged(jobs),
        scores=tuple(None if scores[lab] is None else summarize(scores[lab]) for lab in strata.labels),
        scores_aggregate=None if scores["aggregate"] is None else summarize(scores["aggregate"]))
    return DifficultyStudy(profile, strata, design, draws, dict(batch.errors), batch.n_fitted, batch.n_cached,
                           batch.n_fits, batch.n_converged, batch.n_rerun, dict(batch.cold), batch.converged_on,
                           {lab: designs[lab] for lab in strata.labels}, at_corpus)


def _score_draws(posterior, design) -> np.ndarray | None:
    """Per-draw reliability of observed success rates of ``design`` (None: the fit has no such scale)."""
    from ..dstudy import DStudyModel
    from ..dstudy.curves import score_scale
    from ..fitting import components_from_posterior

    c = components_from_posterior(posterior)
    if score_scale(c) != "observed":
        return None
    return DStudyModel(c, band_draws=None, scale="observed").coefficient(design)


def run_difficulty_study(corpus, spec="per-benchmark", settings=None, cache_dir: str | Path | None = None,
                         progress: ProgressCallback | None = None,
                         cancel: CancelCallback | None = None) -> DifficultyProfile:
    """The DDR sheet's runner: :func:`difficulty_study` with quartiles, returning its profile."""
    return difficulty_study(corpus, spec, settings, cache_dir, progress, cancel).profile
