"""PSIS-LOO over binomial cells, with Pareto-k counts (seed 000 (Hardy et al. 2026) App. D.3; SPEC sec. 6).

The observation left out is one binomial cell (benchmark, task, model,
scaffold: the unit the model is fitted on, SPEC sec. 1).  Its log-likelihood
in draw s is the binomial log-probability under the fitted linear predictor

    eta_c(s) = mu(s) + sum_F u_F(s)[level of F in cell c]      (seed 000 Eq. 2 / Eq. 6)
    log p(y_c | s) = log C(n_c, k_c) + k_c log sigma(eta_c) + (n_c - k_c) log sigma(-eta_c)

computed from the kept random effects of *every* term, task-level ones
included.  PSIS smooths the importance ratios ``1 / p(y_c | s)`` with a
generalized Pareto fit (Vehtari, Gelman and Gabry 2017; ArviZ's ``psislw``);
its shape k says how far each cell's leave-one-out estimate can be trusted:
k <= 0.7 good, 0.7 < k <= 1 bad, k > 1 very bad (:class:`LooSummary`).

Relative efficiency.  MCMC draws are autocorrelated, so the tail
of each cell's ratios holds fewer independent draws than ``S``.  PSIS sizes
that tail as ``M = ceil(min(S/5, 3 sqrt(S / r_eff)))`` (Vehtari et al. 2017,
sec. 3; 2024 revision, sec. 3.1), with ``r_eff = ESS / S`` the relative
efficiency of the cell's likelihood ``p(y_c | s)`` *as the chains ran*: the R
``loo`` package's ``relative_eff(exp(log_lik), chain_id)``.  :func:`r_eff`
computes it per cell with ArviZ's ``ess(method="mean")`` on the
``(chains, draws)`` array of ``exp(log_lik - max)`` (ESS is scale-free), and
:func:`psis_loo` smooths each cell with its own tail.  ``arviz.loo`` itself
takes only one ``reff`` for all observations (the mean ESS of the posterior's
parameters), which is why the smoothing is done here, one ``psislw`` call per
distinct tail length (cells with the same ``M`` are smoothed identically).

The fit cache keeps no task-level random effects (:mod:`.fitting`), so a
cached posterior cannot give the pointwise log-likelihood.  :func:`run_loo`
therefore stores its own result (the Pareto k of every cell, elpd, its
standard error and p_loo) in a small JSON file beside the fit, keyed by the
fit's cache key: a rerun with the same inputs neither fits nor recomputes.
Only when neither that file nor a posterior with all effects is at hand does
it fit (through :func:`~.fitting.fit_corpus`) and, when the cached fit lacks
the task effects, refit the corpus's own cells through the refit engine
(:meth:`~.engine.RefitEngine.refit_whole`, kept in memory: the cache keeps no
task effects).
"""

from __future__ import annotations

import json
import warnings
import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.special import gammaln

from ..files import write_text_atomic
from .refits import CancelCallback, ProgressCallback, check_cancel


@dataclass(frozen=True)
class LooSummary:
    """PSIS-LOO Pareto-k counts (seed 000 App. D.3): k <= 0.7 good, 0.7-1 bad, > 1 very bad.

    Attributes
    ----------
    good, bad, very_bad
        Observations in each Pareto-k class.
    elpd, elpd_se
        Expected log predictive density and its standard error (optional).
    """

    good: int
    bad: int
    very_bad: int
    elpd: float | None = None
    elpd_se: float | None = None

    @classmethod
    def from_pareto_k(cls, k, elpd: float | None = None, elpd_se: float | None = None) -> "LooSummary":
        k = np.asarray(k, dtype=np.float64).ravel()
        return cls(int((k <= 0.7).sum()), int(((k > 0.7) & (k <= 1.0)).sum()), int((k > 1.0).sum()), elpd, elpd_se)

    @property
    def total(self) -> int:
        return self.good + self.bad + self.very_bad


def pareto_k_advice(bad: int, very_bad: int, n_cells: int) -> str | None:
    """What to make of Pareto k above 0.7, in words for the app and the CLI; None when every k is good.

    Above 0.7 PSIS cannot stand in for leaving a cell out (Vehtari, Gelman and Gabry 2017; Vehtari et al.
    2024): the cell's elpd, and the total's standard error, are unreliable.  Many such cells usually mean
    cells with few trials and their own effects (each cell's interaction effect is informed by that cell
    alone), so the total is to be read as approximate; an exact check refits without the cells (K-fold).
    """
    n = int(bad) + int(very_bad)
    if n <= 0:
        return None
    share = n / max(int(n_cells), 1)
    return (f"{n:,} of {int(n_cells):,} cells ({share:.0%}) have Pareto k above 0.7: PSIS-LOO's estimate for them "
            "is unreliable, and so is its total elpd and SE (Vehtari, Gelman and Gabry 2017). Read elpd as "
            "approximate; to compare models, use K-fold cross-validation (refits leaving folds of tasks out). "
            "The variance components and the D-study do not depend on it.")


__all__ = ["LooResult", "pointwise_log_likelihood", "r_eff", "psis_loo", "loo_study", "run_loo", "pareto_k_advice"]


@dataclass
class LooResult:
    """PSIS-LOO of a fit.

    Attributes
    ----------
    pareto_k
        ``(n_cells,)`` Pareto shape per binomial cell, in the design's cell order.
    elpd, elpd_se, p_loo
        Expected log pointwise predictive density, its standard error, and the
        effective number of parameters.
    cells
        The cell table (identifying columns, successes, trials), same order.
    from_cache
        True when read from the stored result (no fit, no recomputation).
    r_eff
        ``(n_cells,)`` relative efficiency of each cell's likelihood draws (module note), or
        None when the draws came without chains (one chain of independent draws assumed).
    """

    pareto_k: np.ndarray
    elpd: float
    elpd_se: float
    p_loo: float
    cells: object = None
    from_cache: bool = False
    r_eff: np.ndarray | None = None

    @property
    def summary(self) -> LooSummary:
        return LooSummary.from_pareto_k(self.pareto_k, self.elpd, self.elpd_se)

    def worst_cells(self, n: int = 10):
        """The ``n`` cells with the largest Pareto k (a DataFrame), or None without a cell table."""
        if self.cells is None:
            return None
        out = self.cells.assign(pareto_k=self.pareto_k)
        return out.sort_values("pareto_k", ascending=False).head(n).reset_index(drop=True)

    def to_dict(self) -> dict:
        s = self.summary
        return {"n_cells": int(self.pareto_k.size), "good": s.good, "bad": s.bad, "very_bad": s.very_bad,
                "elpd_loo": self.elpd, "elpd_se": self.elpd_se, "p_loo": self.p_loo,
                "max_pareto_k": float(np.max(self.pareto_k)), "from_cache": self.from_cache,
                "r_eff_median": None if self.r_eff is None else float(np.median(self.r_eff)),
                "r_eff_min": None if self.r_eff is None else float(np.min(self.r_eff))}


def pointwise_log_likelihood(posterior, data) -> tuple[np.ndarray, object]:
    """Binomial log-likelihood of every cell in every draw (module note).

    Parameters
    ----------
    posterior
        A :class:`~.model.sampler.Posterior` that kept the random effects of every term.
    data
        The corpus (or table) it was fitted to.

    Returns
    -------
    log_lik
        ``(chains, draws, n_cells)`` float64.
    cells
        The cell table, in the same order.

    Raises
    ------
    ValueError
        The posterior lacks a term's random effects, or its levels do not match the data.
    """
    from ..model.design_matrix import build_design

    design = build_design(data, posterior.spec)
    missing = [t for t in design.term_names if t not in posterior.random_effects]
    if missing:
        raise ValueError(f"the posterior kept no draws of the random effects of {', '.join(missing)}; PSIS-LOO "
                         "needs them (refit with keep_random_effects=True; cached fits keep no task effects)")
    mu = np.asarray(posterior.mu, dtype=np.float64)
    eta = np.broadcast_to(mu[..., None], (*mu.shape, design.n_cells)).copy()
    for k, term in enumerate(design.term_names):
        u = np.asarray(posterior.random_effects[term], dtype=np.float64)
        if u.shape[-1] != design.n_levels[k]:
            raise ValueError(f"term {term}: the posterior has {u.shape[-1]} levels, the data {design.n_levels[k]}; "
                             "give the corpus the fit was made on")
        eta += u[..., design.codes[k]]
    k_ = design.successes.astype(np.float64)
    n_ = design.trials.astype(np.float64)
    log_choose = gammaln(n_ + 1) - gammaln(k_ + 1) - gammaln(n_ - k_ + 1)
    # log sigma(eta) = -log(1 + e^-eta), log sigma(-eta) = -log(1 + e^eta), stably
    ll = log_choose - k_ * np.logaddexp(0.0, -eta) - (n_ - k_) * np.logaddexp(0.0, eta)
    return ll, design.cells


def r_eff(log_lik) -> np.ndarray:
    """Relative efficiency ``ESS / S`` of each observation's likelihood draws (module note).

    Parameters
    ----------
    log_lik
        ``(chains, draws, n_obs)`` pointwise log-likelihood, chains in the order they ran.

    Returns
    -------
    np.ndarray
        ``(n_obs,)``: ArviZ's ``ess(method="mean")`` of ``exp(log_lik)`` over chains and draws,
        divided by ``chains x draws`` (Vehtari et al. 2017, sec. 3; R ``loo::relative_eff``).
        An observation whose likelihood is the same in every draw has nothing to correct: 1.
    """
    import arviz as az

    ll = _check_log_lik(log_lik)
    c, d, n = ll.shape
    # the likelihood, not its log (the ratios PSIS smooths are 1/p); shifted per observation so
    # exp cannot underflow: ESS does not change when a variable is multiplied by a constant
    w = np.exp(ll - ll.max(axis=(0, 1), keepdims=True))
    ess = np.asarray(az.ess(az.convert_to_dataset({"w": w}), method="mean")["w"].values, dtype=np.float64)
    out = ess.reshape(n) / (c * d)
    return np.where(np.isfinite(out) & (out > 0), out, 1.0)


def _check_log_lik(log_lik) -> np.ndarray:
    ll = np.asarray(log_lik, dtype=np.float64)
    if ll.ndim == 2:
        ll = ll[None]
    if ll.ndim != 3 or ll.shape[2] < 1:
        raise ValueError(f"log-likelihood should have shape (chains, draws, observations), got {ll.shape}")
    return ll


def psis_loo(log_lik, reff: "float | np.ndarray | None" = None) -> LooResult:
    """PSIS-LOO of a ``(chains, draws, n_obs)`` log-likelihood array.

    Parameters
    ----------
    log_lik
        Pointwise log-likelihood; a 2-D ``(draws, n_obs)`` array is one chain.
    reff
        Relative efficiency: None (default) estimates it per observation from the chains
        (:func:`r_eff`); a number or an ``(n_obs,)`` array is used as given (``1.0`` treats
        the draws as independent, which is what ``arviz.loo(..., reff=1.0)`` does).

    Returns
    -------
    LooResult
        With ``r_eff`` per observation.  For one ``reff`` for all observations the numbers
        are ``arviz.loo``'s (tested).
    """
    import arviz as az

    ll = _check_log_lik(log_lik)
    c, d, n = ll.shape
    s = c * d
    reffs = r_eff(ll) if reff is None else np.broadcast_to(np.asarray(reff, dtype=np.float64), (n,)).copy()
    if not (np.isfinite(reffs) & (reffs > 0)).all():
        raise ValueError("relative efficiency should be a positive number per observation")
    flat = ll.reshape(s, n).T  # (n_obs, S), draws of chain 0 first
    # reff enters PSIS only through the tail length (arviz.psislw): smooth each length once
    tail = np.ceil(np.minimum(s / 5.0, 3.0 * np.sqrt(s / reffs))).astype(np.int64)
    lw = np.empty_like(flat)
    k = np.empty(n)
    with warnings.catch_warnings():
        # arviz warns when some k > 0.7; the counts say so in the result
        warnings.simplefilter("ignore")
        for m in np.unique(tail):
            idx = np.flatnonzero(tail == m)
            lw[idx], k[idx] = az.psislw(-flat[idx], float(reffs[idx[0]]))
    loo_i = _logsumexp_rows(lw + flat)
    lppd = float(np.sum(_logsumexp_rows(flat) - np.log(s)))
    elpd = float(loo_i.sum())
    return LooResult(k, elpd, float(np.sqrt(n * np.var(loo_i))), lppd - elpd, r_eff=reffs)


def _logsumexp_rows(x: np.ndarray) -> np.ndarray:
    top = x.max(axis=1, keepdims=True)
    return (top + np.log(np.exp(x - top).sum(axis=1, keepdims=True)))[:, 0]


def _store_path(cache_dir, key: str) -> Path:
    from ..files import default_cache_dir

    return Path(cache_dir or default_cache_dir()) / f"loo-{key}.json"


def _read_stored(path: Path) -> LooResult | None:
    try:
        d = json.loads(path.read_text())
        # a result stored before r_eff was estimated (no "r_eff") is recomputed: its k differ
        return LooResult(np.asarray(d["pareto_k"], dtype=np.float64), float(d["elpd"]), float(d["elpd_se"]),
                         float(d["p_loo"]), None, True, np.asarray(d["r_eff"], dtype=np.float64))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent or damaged: recompute


def _store(path: Path, res: LooResult) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    d = {"pareto_k": res.pareto_k.tolist(), "elpd": res.elpd, "elpd_se": res.elpd_se, "p_loo": res.p_loo,
         "r_eff": None if res.r_eff is None else res.r_eff.tolist()}
    write_text_atomic(path, json.dumps(d))  # a reader never sees half a file


def loo_study(corpus, posterior=None, spec="per-benchmark", settings=None, cache_dir: str | Path | None = None,
              progress: ProgressCallback | None = None, cancel: CancelCallback | None = None, *,
              use_cache: bool = True, scheduler: str | None = None) -> LooResult:
    """PSIS-LOO of the fit of ``corpus`` (module note: what is reused, what is refitted).

    Parameters
    ----------
    corpus
        The corpus.
    posterior
        Its fit, when at hand (its spec and settings then define the fit);
        used directly when it kept every term's random effects.
    spec, settings
        The model and sampler settings (when ``posterior`` is None).
    cache_dir, progress, cancel
        As for :func:`~.fitting.fit_corpus`.
    use_cache
        False: neither read nor store the LOO result.
    scheduler
        A Dask scheduler address: the refit (when one is needed) runs there (:class:`~.engine.RefitEngine`;
        ``$DDR_SCHEDULER`` when None).
    """
    from ..fitting import fit_corpus, fit_key
    from ..model.formula import as_spec
    from ..model.posterior import SamplerSettings

    if posterior is not None:
        spec, settings = posterior.spec, posterior.settings
    spec = as_spec(spec)
    settings = settings or SamplerSettings()
    key = fit_key(corpus, spec, settings)
    path = _store_path(cache_dir, key)
    if use_cache and (posterior is None or any(t not in posterior.random_effects for t in spec.term_names)):
        stored = _read_stored(path)
        if stored is not None and progress is not None:
            progress("PSIS-LOO (stored)", 1, 1, 0.0)
        if stored is not None:
            return stored
    check_cancel(cancel, "PSIS-LOO")
    if posterior is None or any(t not in posterior.random_effects for t in spec.term_names):
        result = fit_corpus(corpus, spec, settings, cache_dir=cache_dir, use_cache=use_cache, progress=progress,
                            cancel=cancel)
        posterior = result.posterior
        spec = posterior.spec  # a preset fitted without the terms the design cannot separate has fewer
        if any(t not in posterior.random_effects for t in spec.term_names):
            # from the cache, without task-level effects: sample again (same key, same draws) keeping
            # them; a term integrated out by quadrature has no draws at all, so that refit samples
            # every term's levels (marginalise="off")
            if posterior.integrated:
                settings = dataclasses.replace(settings, marginalise="off")
            # a refit of the parent on its own cells (the refit engine's contract; warm where it is)
            from .engine import RefitEngine

            engine = RefitEngine(corpus, spec, result.posterior.settings, cache_dir=cache_dir, parent=result,
                                 scheduler=scheduler)
            posterior = engine.refit_whole(settings, progress=progress, cancel=cancel)
    if progress is not None:
        progress("PSIS-LOO", 0, 1, None)
    ll, cells = pointwise_log_likelihood(posterior, corpus)
    res = psis_loo(ll)
    res.cells = cells
    if use_cache:
        _store(path, res)
    if progress is not None:
        progress("PSIS-LOO", 1, 1, 0.0)
    return res


def run_loo(corpus, posterior=None, spec="per-benchmark", settings=None, cache_dir: str | Path | None = None,
            progress: ProgressCallback | None = None, cancel: CancelCallback | None = None, *,
            scheduler: str | None = None) -> LooSummary:
    """The DDR sheet's runner: :func:`loo_study` summarised as Pareto-k counts and elpd."""
    return loo_study(corpus, posterior, spec, settings, cache_dir, progress, cancel, scheduler=scheduler).summary
