"""Held-out reliability by REML refits: seed 003 (DDR paper 2026) sec. 5.4's splits fitted by the REML LMM.

The same 50 random 70/30 splits by (agent, task) cell as :mod:`.heldout` (split ``i`` draws from
``default_rng([seed, i])``: the very same cells and trials on each side), but each part is fitted by the
REML linear mixed model (:func:`~ddr_explorer.core.estimators.reml.reml`, which matches lme4's ``lmer``)
instead of a Bayesian GLMM refit.  Per split:

- **projected**: Erho2 of the training part's REML components read at the held-out part's observed design;
- **held-out**: Erho2 of the held-out part's REML components read at the same design;

and the same summaries (Pearson r, Spearman, mean gap, the scatter) in the same
:class:`~.heldout.HeldOutReliability`, marked ``estimator="reml"``.

Scale.  REML fits the 0/1 trial results with an identity link, so its components, and the coefficients
built from them, are on the *observed* (probability) scale with the Bernoulli residual estimated; the
Bayesian refits' are on the latent logit scale (residual pi^2/3).  The two coefficients differ in level
(the DDR paper 2026 reports the three estimators agreeing on shares, not on a common scale), so every
surface says which scale a hold-out is on; the decision 4 reading rests on the *comparison* of projected
and held-out on one scale, which is what both estimators give.

Why: 100 Bayesian refits take about 16 minutes on a 2-core machine; REML fits one TB2 part in about a
second of CPU (:mod:`~ddr_explorer.core.estimators.reml` module note), so the 100 fit in about two minutes
and a default sheet can answer decision 4.  A REML point estimate has no Monte Carlo error;
the uncertainty of r and the gap is the splits' own (:attr:`~.heldout.HeldOutReliability.split_se`).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from .heldout import HeldOutReliability, HeldOutStudy, held_out_jobs
from .refits import CancelCallback, ProgressCallback

__all__ = ["REML_CONVERGED_ON", "reml_coefficient", "held_out_study_reml", "reml_part_seconds"]

#: What a REML part's convergence was checked on (the sheet's method notes and ``ddr analyses`` print it).
REML_CONVERGED_ON = "by the REML optimiser's own test (point estimates: no Monte Carlo error)"


def reml_coefficient(part, spec, design) -> float:
    """Erho2 (or Phi, by the design's claim) of ``design`` from the REML fit of one part.

    Parameters
    ----------
    part
        A validated (sub-)corpus.
    spec
        The model the whole corpus is fitted with; reduced to the terms this part separates, as the
        refit engine does for a Bayesian refit (:func:`~ddr_explorer.core.design.presets.supported_spec`).
    design
        The :class:`~ddr_explorer.core.dstudy.DStudyDesign` to read the coefficient at.

    Raises
    ------
    ValueError
        The optimiser did not converge (a split whose part cannot be fitted is dropped and named).
    """
    from ..design.presets import supported_spec
    from ..dstudy import DStudyModel
    from ..estimators.design import MixedDesign
    from ..estimators.reml import reml
    from ..model.formula import as_spec
    from ..reliability import VarianceComponents

    sub = supported_spec(part, as_spec(spec)).spec
    fit = reml(MixedDesign.from_spec(part, sub))
    if not fit.converged:
        raise ValueError(f"REML did not converge ({fit.message})")
    comps = {k: max(v, 0.0) for k, v in fit.components.items() if k != "residual"}
    # one "draw": the point estimate; the residual is REML's own (observed scale), not pi^2/3
    vc = VarianceComponents.from_mapping(comps, residual=fit.components["residual"], source="REML")
    return float(DStudyModel(vc, band_draws=None).coefficient(design)[0])


def held_out_study_reml(corpus, spec="per-benchmark", progress: ProgressCallback | None = None,
                        cancel: CancelCallback | None = None, *, n_splits: int = 50, train_fraction: float = 0.7,
                        seed: int = 0, object_of_measurement: str = "model", claim: str = "relative",
                        choice: str | None = None, cache_dir: str | Path | None = None) -> HeldOutStudy:
    """Projected against held-out Erho2 over ``n_splits`` random splits, each part fitted by REML.

    Parameters
    ----------
    corpus, spec
        A validated corpus and the model of its fit.
    progress, cancel
        ``progress(phase, i, n, eta)`` after every part (``n = 2 n_splits``); ``cancel()`` polled between parts
        (raises :class:`~ddr_explorer.core.model.posterior.FitCancelled`).
    n_splits, train_fraction, seed, object_of_measurement, claim
        As :func:`~.heldout.held_out_study`: the same seeds give the same splits.
    choice
        Why REML ran, one line, carried to the sheet (:attr:`~.heldout.HeldOutReliability.choice`).
    cache_dir
        Unused (REML fits are not cached: the whole study takes about as long as opening 100 cached
        refits); accepted so both studies take the same arguments.

    Returns
    -------
    HeldOutStudy
        ``estimator="reml"``; ``n_fits``/``n_converged`` count the parts whose optimiser converged.
    """
    from ..model.posterior import FitCancelled

    del cache_dir
    jobs, designs, sizes = held_out_jobs(corpus, spec, n_splits=n_splits, train_fraction=train_fraction, seed=seed,
                                         object_of_measurement=object_of_measurement, claim=claim,
                                         stop_on_reported=False)
    rows, errors, n_ok = [], {}, 0
    t0 = time.perf_counter()
    for i in range(n_splits):
        row = {"split": i + 1, "projected": np.nan, "held_out": np.nan, "gap": np.nan,
               "projected_mcse": np.nan, "held_out_mcse": np.nan,
               "n_train_trials": sizes[i][0], "n_held_out_trials": sizes[i][1], "error": None}
        values = []
        for j, job in enumerate(jobs[2 * i: 2 * i + 2]):
            if cancel is not None and cancel():
                raise FitCancelled(f"held-out study (REML) cancelled after {2 * i + j} of {2 * n_splits} fits")
            try:
                values.append(reml_coefficient(job.corpus, spec, designs[i]))
                n_ok += 1
            except (ValueError, KeyError, np.linalg.LinAlgError) as exc:
                row["error"] = f"{job.label}: {exc}"
            if progress is not None:
                done = 2 * i + j + 1
                elapsed = time.perf_counter() - t0
                progress("held-out study (REML)", done, 2 * n_splits, elapsed / done * (2 * n_splits - done))
        if row["error"] is None:
            row.update(projected=values[0], held_out=values[1], gap=values[1] - values[0])
        else:
            errors[i + 1] = row["error"]
        rows.append(row)
    table = pd.DataFrame(rows)
    ok = table["error"].isna().to_numpy()
    result = None
    if ok.sum() >= 2:
        result = HeldOutReliability(table["projected"].to_numpy()[ok], table["held_out"].to_numpy()[ok],
                                    train_fraction, "(agent, task) cell", 2 * n_splits, n_ok,
                                    REML_CONVERGED_ON, estimator="reml", choice=choice)
    return HeldOutStudy(result, table, 2 * n_splits, 0, None, errors, 2 * n_splits, n_ok, 0, {},
                        REML_CONVERGED_ON, None, estimator="reml")


def reml_part_seconds(corpus, spec) -> float:
    """Wall seconds of one REML fit of the whole corpus here: what a split's part costs at most
    (a part has 30-70% of the trials but about as many cells; the estimate of the REML hold-out is
    ``2 n_splits`` times this, priced in :func:`~.defaults.plan_sheet_analyses`; on the demo 2 min estimated,
    2 min taken)."""
    from ..design.presets import supported_spec
    from ..estimators.design import MixedDesign
    from ..estimators.reml import reml
    from ..model.formula import as_spec

    t0 = time.perf_counter()
    reml(MixedDesign.from_spec(corpus, supported_spec(corpus, as_spec(spec)).spec))
    return time.perf_counter() - t0
