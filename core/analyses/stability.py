"""Leave-one-benchmark-out and leave-one-model-out stability (seed 000 (Hardy et al. 2026) App. D.4-D.6; SPEC sec. 6).

The G-study is refitted with each benchmark (or each model) left out.  One
table row per fit, the full corpus first:

- ``left_out``: the unit left out (``"(none)"`` for the full corpus),
- ``n_models``, ``n_benchmarks``, ``n_tasks``, ``n_trials`` of the data fitted,
- ``sigma2[<term>]``: posterior median of each variance component,
- ``erho2``, ``erho2_lower95``, ``erho2_upper95``: median and 95% HDI of the
  per-draw coefficient,
- ``spearman``, ``kendall``: rank correlation between the model ranking of
  this fit and the full fit's (posterior mean of ``theta_m = u_m``, SPEC
  sec. 5), over the models both fits hold (a left-out model is not compared);
  for a disconnected corpus over pairs within one of its parts only
  (:func:`~.rank_parts.within_part_correlations`; ``table.attrs["rank_parts"]``),
- ``delta_erho2``: ``erho2`` minus the full fit's,
- ``error``: why a refit failed (its numbers are then missing).

Every fit's coefficient is read at the *full* corpus's observed design, so a
row differs from the first only through the variance components: what the
table asks is whether one unit drives them.  A pooled fit left with a single
benchmark is refitted with the per-benchmark model (a benchmark facet with one
level has no variance to estimate); the row's ``model`` column says so.

Its refits keep the component stopping rule (every variance component's R-hat, bulk and tail ESS),
not the reported-quantity rule of the hold-out splits and difficulty strata (:mod:`.reported`): a
row reports every component's median and the model ranking from the model effects besides Erho2,
so the components ARE what it reports, and a rule on Erho2 alone would leave them unguarded.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..dstudy import observed_design
from .refits import CancelCallback, FitJob, ProgressCallback, coefficient_draws, sub_corpus

__all__ = ["stability_table", "leave_one_benchmark_out", "leave_one_model_out"]

_FACETS = {"benchmark": "benchmark", "model": "model"}


def _spec_for(corpus, spec):
    """``spec``, or the per-benchmark model when ``corpus`` has one benchmark and ``spec`` has benchmark terms."""
    from ..model.formula import as_spec

    spec = as_spec(spec)
    if corpus.n_levels("benchmark") == 1 and any("benchmark" in t.split(":") for t in spec.term_names):
        return as_spec("per-benchmark")
    return spec


def _model_means(posterior) -> pd.Series | None:
    from ..fitting import theta_from_posterior

    try:
        theta, names = theta_from_posterior(posterior, "model")
    except ValueError:
        return None
    return pd.Series(theta.mean(axis=0), index=names)


def stability_table(corpus, facet: str, spec="per-benchmark", settings=None, cache_dir: str | Path | None = None,
                    progress: ProgressCallback | None = None, cancel: CancelCallback | None = None, *,
                    design=None, object_of_measurement: str = "model", claim: str = "relative",
                    parent=None, scheduler: str | None = None) -> pd.DataFrame:
    """Refit with each level of ``facet`` left out; one row per fit (module note).

    Parameters
    ----------
    corpus
        A validated corpus.
    facet
        ``"benchmark"`` (leave-one-benchmark-out) or ``"model"`` (leave-one-model-out).
    spec, settings
        Model and sampler settings of every fit.
    cache_dir, progress, cancel
        See :meth:`~.engine.RefitEngine.run`.
    design
        Design every coefficient is read at (default: the full corpus's observed design).
    parent, scheduler
        The full corpus's :class:`~ddr_explorer.core.fitting.FitResult` when at hand, and a Dask
        scheduler address (:class:`~.engine.RefitEngine`): each part is a refit of the full fit on its
        cells, or a cold fit when it takes another model (module note).

    Raises
    ------
    ValueError
        An unknown facet, or fewer than two levels to leave out.
    FitCancelled
        ``cancel()`` returned True.
    """
    from ..model.formula import as_spec
    from ..ranks import kendall_tau, spearman_rho
    from ..reliability import summarize

    if facet not in _FACETS:
        raise ValueError(f"stability: facet should be 'benchmark' or 'model', got {facet!r}")
    levels = sorted(map(str, corpus.table[facet].astype(str).unique()))
    if len(levels) < 2:
        raise ValueError(f"corpus {corpus.name!r} has {len(levels)} {facet}(s); leaving one out needs at least 2")
    spec = as_spec(spec)
    design = design or observed_design(corpus, object_of_measurement=object_of_measurement, claim=claim)
    jobs = [FitJob("(none)", corpus, spec)]
    col = corpus.table[facet].astype(str)
    for lv in levels:
        part = sub_corpus(corpus, (col != lv).to_numpy(), f"{corpus.name} [without {facet} {lv}]")
        jobs.append(FitJob(lv, part, _spec_for(part, spec)))
    from .engine import RefitEngine

    engine = RefitEngine(corpus, spec, settings, cache_dir=cache_dir, parent=parent, scheduler=scheduler)
    batch = engine.run(jobs, progress=progress, cancel=cancel, what=f"leave-one-{facet}-out", skip_failed=True)
    if batch.results[0] is None:
        raise ValueError(f"the fit of the whole corpus failed: {batch.errors['(none)']}")
    full_theta = _model_means(batch.results[0].posterior)
    parts = part_of = None
    if full_theta is not None:
        from ..design import connectivity
        from ..rank_parts import model_parts, within_part_correlations

        parts = model_parts(connectivity(corpus).components, list(full_theta.index))
        part_of = {m: k for k, p in enumerate(parts or []) for m in p}
    terms = list(batch.results[0].posterior.sigma)
    rows = []
    for job, res in zip(jobs, batch.results):
        c = job.corpus
        row = {"left_out": job.label, "model": job.spec.name or job.spec.formula,
               "n_models": c.n_levels("model"), "n_benchmarks": c.n_levels("benchmark"),
               "n_tasks": c.n_levels("task"), "n_trials": c.n_trials}
        if res is None:
            row["error"] = batch.errors.get(job.label)
            rows.append(row)
            continue
        post = res.posterior
        for t in terms:
            s = post.sigma.get(t)
            row[f"sigma2[{t}]"] = np.nan if s is None else float(np.median(np.asarray(s, np.float64) ** 2))
        e = summarize(coefficient_draws(post, design))
        row.update(erho2=e.median, erho2_lower95=e.hdi95[0], erho2_upper95=e.hdi95[1])
        th = _model_means(post)
        if th is not None and full_theta is not None:
            common = [m for m in full_theta.index if m in th.index]
            if len(common) >= 2 and parts is not None:  # a disconnected corpus: compare within its parts
                row["spearman"], row["kendall"] = within_part_correlations(
                    full_theta[common].to_numpy(), th[common].to_numpy(), [part_of[m] for m in common])
            elif len(common) >= 2:
                row["spearman"] = spearman_rho(full_theta[common].to_numpy(), th[common].to_numpy())
                row["kendall"] = kendall_tau(full_theta[common].to_numpy(), th[common].to_numpy())
        row["error"] = None
        rows.append(row)
    table = pd.DataFrame(rows)
    for c in ("spearman", "kendall"):
        if c not in table:
            table[c] = np.nan
    table["delta_erho2"] = table["erho2"] - table["erho2"].iloc[0] if "erho2" in table else np.nan
    table.attrs.update(facet=facet, design=design.to_dict(), n_fitted=batch.n_fitted, n_cached=batch.n_cached,
                       n_fits=batch.n_fits, n_converged=batch.n_converged, n_rerun=batch.n_rerun,
                       cold=dict(batch.cold))
    if parts is not None:
        from ..rank_parts import part_reasons

        table.attrs.update(rank_parts=parts, rank_part_reasons=part_reasons(parts))
    first = ["left_out", "model", "n_models", "n_benchmarks", "n_tasks", "n_trials", "erho2", "erho2_lower95",
             "erho2_upper95", "delta_erho2", "spearman", "kendall"]
    ordered = [c for c in first if c in table] + [c for c in table if c not in first and c != "error"] + ["error"]
    return table[ordered]


def leave_one_benchmark_out(corpus, spec="pooled", settings=None, cache_dir=None, progress=None, cancel=None,
                            **kw) -> pd.DataFrame:
    """:func:`stability_table` over benchmarks (seed 000 App. D.4)."""
    return stability_table(corpus, "benchmark", spec, settings, cache_dir, progress, cancel, **kw)


def leave_one_model_out(corpus, spec="per-benchmark", settings=None, cache_dir=None, progress=None, cancel=None,
                        **kw) -> pd.DataFrame:
    """:func:`stability_table` over models (seed 000 App. D.5-D.6)."""
    return stability_table(corpus, "model", spec, settings, cache_dir, progress, cancel, **kw)
