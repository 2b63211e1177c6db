"""The jobs and results of a batch of fits, and the sequential cold path.

The refit-heavy analyses (difficulty strata, held-out splits, leave-one-out
stability, PSIS-LOO) each need many G-study fits of sub-corpora.  Each is a
:class:`FitJob`; they run through the refit engine (:mod:`.engine`), which
returns a :class:`BatchResult`.  :func:`cold_fits` is the sequential loop of
:func:`ddr_explorer.core.fitting.fit_corpus` they ran on before (every fit keyed
and stored in the HDF5 fit cache), kept as the engine's reference.

Progress is one callback with the sampler's signature
``progress(phase, i, n, eta_seconds)``: ``phase`` names the job and the
sampler phase (``"split 3 train: warmup"``), ``i`` of ``n`` counts finished
jobs, and the ETA is the mean wall time of the jobs sampled so far times the
jobs left, plus the running job's own ETA (cache hits cost nothing and are
left out of the mean).  ``cancel()`` is polled before every job and, through
the sampler, between its chunks; a cancelled batch raises
:class:`~ddr_explorer.core.model.sampler.FitCancelled`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from .rerun import rerun_settings

ProgressCallback = Callable[[str, int, int, "float | None"], None]
CancelCallback = Callable[[], bool]

__all__ = ["FitJob", "BatchResult", "cold_fits", "sub_corpus", "check_cancel", "coefficient_draws"]


@dataclass(frozen=True)
class FitJob:
    """One fit of a batch.

    Attributes
    ----------
    label
        What the fit is (shown in progress: ``"Q4 (hardest)"``, ``"split 7 train"``).
    corpus
        The (sub-)corpus to fit.
    spec
        A :class:`~.model.formula.ModelSpec`, preset name or formula.
    reported
        What the analysis reads from this fit (:class:`~.reported.ReportedQuantity`): a refit with
        some stops, and is counted converged, on them (:mod:`.reported`); empty: on every component.
        A job fitted cold or reopened as the parent keeps the component gate.
    """

    label: str
    corpus: Any
    spec: Any = "per-benchmark"
    reported: tuple = ()
    #: The run-length rule of a refit with ``reported`` quantities (:class:`~..model.stopping.PrecisionRule`);
    #: None: the gate on the reported quantities (``--refit-rule gate``).
    precision: Any = None


@dataclass
class BatchResult:
    """The fits of a batch, in job order.

    Attributes
    ----------
    results
        One :class:`~.fitting.FitResult` per job (None for a job that failed with ``skip_failed``).
    errors
        Job label -> the message of a job that failed (``skip_failed`` only).
    n_fitted, n_cached
        Fits that ran the sampler / were reopened from the cache (a gate rerun counts as one more).
    wall_seconds
        Wall time of the whole batch.
    """

    results: list = field(default_factory=list)
    errors: dict = field(default_factory=dict)
    n_fitted: int = 0
    n_cached: int = 0
    wall_seconds: float = 0.0
    #: Job label -> why it was fitted cold rather than refitted on the parent's cells (:mod:`.engine`).
    cold: dict = field(default_factory=dict)
    #: Labels of the jobs rerun once with more draws because their first fit failed the convergence gate.
    rerun: list = field(default_factory=list)
    #: Per job: "parent", "refit", "cold" or "failed" (:mod:`.engine`; empty for :func:`cold_fits`).
    kinds: list = field(default_factory=list)
    #: Per job: the :class:`~.reported.ReportedVerdict` of a refit judged on what it reports, else None
    #: (its posterior's component verdict counts).
    verdicts: list = field(default_factory=list)

    @property
    def n_rerun(self) -> int:
        """Jobs rerun with more draws after failing the convergence gate."""
        return len(self.rerun)

    @property
    def n_fits(self) -> int:
        """Fits that ran or were reopened (failed jobs left out)."""
        return sum(r is not None for r in self.results)

    def _converged_flags(self) -> list:
        """Per job: True / False by the gate (on what it reports, else every component); None when it failed."""
        v = self.verdicts if len(self.verdicts) == len(self.results) else [None] * len(self.results)
        return [None if r is None else bool(r.posterior.diagnostics.converged if vd is None else vd.converged)
                for r, vd in zip(self.results, v)]

    @property
    def n_converged(self) -> int:
        """Fits that passed the convergence gate (R-hat, bulk ESS, no divergence): on what they report
        for a refit with reported quantities (:attr:`verdicts`), on every component otherwise."""
        return sum(f is True for f in self._converged_flags())

    def unconverged(self, jobs) -> tuple[str, ...]:
        """The labels of the jobs (this batch's, in order) whose fit ran but did not pass the gate."""
        return tuple(j.label for j, f in zip(jobs, self._converged_flags()) if f is False)

    @property
    def converged_on(self) -> str:
        """What the convergence count was checked on, in words (for the app, --json and the sheet)."""
        n_rep = sum(vd is not None for vd in self.verdicts)
        n = sum(r is not None for r in self.results)
        if not n_rep:
            return "on every variance component (R-hat <= 1.01, bulk ESS >= 400, no divergence)"
        if any(getattr(vd, "rule", None) == "precision" for vd in self.verdicts):
            from ..model.stopping import PRECISION_MAX_MCSE, PRECISION_MIN_ESS

            on = (f"under the precision rule: R-hat <= 1.01 and bulk ESS >= {PRECISION_MIN_ESS} on every variance "
                  f"component and on the coefficient it reports, Monte Carlo SE of what the analysis takes from it "
                  f"<= {PRECISION_MAX_MCSE:g}, no divergence")
        else:
            on = ("on the coefficient it reports: R-hat <= 1.01 and bulk and tail ESS >= 400 on it, R-hat <= 1.01 "
                  "on every variance component, no divergence")
        if n_rep == n:
            return "each " + on
        return f"{n_rep} refit(s) each {on}; the other {n - n_rep} fit(s) on every variance component"


def check_cancel(cancel: CancelCallback | None, what: str) -> None:
    """Raise :class:`FitCancelled` when ``cancel()`` says so (``what`` says where)."""
    if cancel is not None and cancel():
        from ..model.posterior import FitCancelled

        raise FitCancelled(f"{what} cancelled by the user")


def sub_corpus(corpus, rows, name: str):
    """A validated corpus made of some rows of ``corpus`` (unused category levels dropped).

    Parameters
    ----------
    corpus
        The full corpus.
    rows
        A boolean mask over ``corpus.table`` or a ready table with its columns.
    name
        Display name of the part (``"<corpus> [Q4]"``).
    """
    from ..corpus.corpus import Corpus

    table = corpus.table[rows] if not isinstance(rows, pd.DataFrame) else rows
    table = table.reset_index(drop=True)
    for c in table.columns:
        if isinstance(table[c].dtype, pd.CategoricalDtype):
            table[c] = table[c].cat.remove_unused_categories()
    if table.empty:
        raise ValueError(f"{name}: the part of corpus {corpus.name!r} is empty; nothing to fit")
    return Corpus(table=table, name=name, source=corpus.source, format=corpus.format,
                  provenance={**dict(corpus.provenance), "part_of": corpus.name})


def cold_fits(jobs: Sequence[FitJob], settings=None, *, cache_dir: str | Path | None = None,
             progress: ProgressCallback | None = None, cancel: CancelCallback | None = None,
             what: str = "batch", skip_failed: bool = False, rerun_unconverged: bool = False) -> BatchResult:
    """Fit every job cold through the cache, one after another (the path before the refit engine).

    Refits of one parent fit (the same model on part of its cells) go through
    :class:`~.engine.RefitEngine`; this sequential loop of :func:`~ddr_explorer.core.fitting.fit_corpus`
    fits jobs that are not such refits (the transfer study's per-benchmark models of a pooled corpus,
    the failure-mode study's per-category models) and is the reference that bench/bench_refits.py
    measures the engine against.

    Parameters
    ----------
    jobs
        The fits to run.
    settings
        :class:`~.model.sampler.SamplerSettings` for every fit (defaults when None).
    cache_dir
        The fit cache folder (``fit_corpus``'s default when None).
    progress
        ``progress(phase, i, n, eta_seconds)``; ``i`` counts finished jobs.
    cancel
        Polled before every job and between the sampler's chunks.
    what
        Name of the batch, for the cancellation message.
    skip_failed
        A job whose data cannot be fitted (a ``ValueError`` such as a
        sub-corpus with one model) gets ``None`` and its message in
        :attr:`BatchResult.errors` instead of stopping the batch.
    rerun_unconverged
        The refit engine's gate policy (:mod:`.engine`): a fit that fails the convergence gate is
        rerun once, cold, with :func:`~.rerun.rerun_settings` (twice the draws and warmup; cached
        under its own key), and the rerun's fit replaces it; its label is in :attr:`BatchResult.rerun`.

    Returns
    -------
    BatchResult

    Raises
    ------
    FitCancelled
        ``cancel()`` returned True; the fits done so far are in the cache.
    """
    from ..fitting import fit_corpus

    n = len(jobs)
    out = BatchResult()
    t0 = time.perf_counter()
    sampled_seconds: list[float] = []

    job_start = [t0]

    def eta_after(done: int, running_eta: float | None = None) -> float | None:
        if not sampled_seconds:
            if running_eta is None:
                return None
            # no fit finished yet: take the running one's elapsed + remaining time as the time per fit
            per = time.perf_counter() - job_start[0] + running_eta
            return running_eta + per * max(n - done - 1, 0)
        per = sum(sampled_seconds) / len(sampled_seconds)
        left = n - done - (1 if running_eta is not None else 0)
        return per * max(left, 0) + (running_eta or 0.0)

    for i, job in enumerate(jobs):
        check_cancel(cancel, f"{what} ({job.label}, fit {i + 1} of {n})")
        if progress is not None:
            progress(f"{job.label}", i, n, eta_after(i))

        def inner(phase, it, total, eta, _label=job.label, _i=i):
            if progress is not None:
                progress(f"{_label}: {phase}", _i, n, eta_after(_i, eta if eta is not None else 0.0))

        t = job_start[0] = time.perf_counter()
        try:
            result = fit_corpus(job.corpus, job.spec, settings, cache_dir=cache_dir, progress=inner, cancel=cancel)
        except ValueError as exc:  # ModelSpecError included; FitCancelled is a RuntimeError and passes
            if not skip_failed:
                raise
            out.errors[job.label] = str(exc)
            out.results.append(None)
            continue
        if result.from_cache:
            out.n_cached += 1
        else:
            out.n_fitted += 1
            sampled_seconds.append(time.perf_counter() - t)
        if rerun_unconverged and not bool(result.posterior.diagnostics.converged):
            from ..model.posterior import SamplerSettings

            check_cancel(cancel, f"{what} ({job.label}, rerun with more draws)")
            out.rerun.append(job.label)
            t = time.perf_counter()
            result = fit_corpus(job.corpus, job.spec, rerun_settings(settings or SamplerSettings(), result.posterior),
                                cache_dir=cache_dir, progress=inner, cancel=cancel)
            if result.from_cache:
                out.n_cached += 1
            else:
                out.n_fitted += 1
        out.results.append(result)
    out.wall_seconds = time.perf_counter() - t0
    if progress is not None:
        progress(f"{what} done", n, n, 0.0)
    return out


# -- what every analysis reads from a fit ---------------------------------------------------
def coefficient_draws(posterior, design) -> np.ndarray:
    """Per-draw Erho2 (or Phi, by the design's claim) of ``design`` from a posterior's components.

    Seed 000 (Hardy et al. 2026) Table 1 / SPEC sec. 3, computed per posterior draw
    (:meth:`~.dstudy.DStudyModel.coefficient`), never from posterior means.
    """
    from ..dstudy import DStudyModel
    from ..fitting import components_from_posterior

    return DStudyModel(components_from_posterior(posterior), band_draws=None).coefficient(design)
