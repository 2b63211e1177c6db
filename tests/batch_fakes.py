"""Test support for the batch analyses: small corpora and a fast stand-in for the NUTS sampler (and, at
the end, :func:`lmm_stand_in` for the Bayesian LMM of the method comparison).

A real fit compiles a NUTS kernel (10-40 s on 2 busy cores), and the batch
analyses run dozens of fits, so most batch tests replace
``ddr_explorer.core.model.sampler.fit`` (the one function
:func:`~ddr_explorer.core.fitting.fit_corpus` samples with) by
:func:`moment_fit`: everything else (cache keys, HDF5 store and reopen,
progress, cancellation, the per-draw D-study) runs for real.  ``moment_fit``
returns a posterior whose draws are known functions of the data, so a test
can compute the expected coefficient by hand:

- ``sigma_model`` = sample standard deviation (ddof=1) of the models' logit
  success rates, ``logit((k + 0.5) / (n + 1))`` of each model's pooled trials;
  every other sigma = 1.0;
- each draw multiplies every sigma by ``exp(0.002 z)``, z ~ N(0, 1) (draws must
  vary for the diagnostics), so a median coefficient matches the hand value
  to about 1e-3;
- the model effects ``u_m`` are the centred model logits in every draw, so the
  posterior-mean ranking is the observed one.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
CALLS: list[str] = []


def simulate_module():
    spec = importlib.util.spec_from_file_location("ddr_bench_simulate_batch", ROOT / "bench" / "simulate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


def corpus_of(table: pd.DataFrame, name: str = "sim"):
    from ddr_explorer.core.corpus.validate import build_corpus

    return build_corpus(table, file=None, format="simulated", name=name)


def model_logits(table: pd.DataFrame) -> pd.Series:
    g = table.groupby("model", observed=True, sort=True)[["successes", "trials"]].sum()
    p = (g["successes"] + 0.5) / (g["trials"] + 1.0)
    return np.log(p / (1 - p))


def moment_sigma_model(table: pd.DataFrame) -> float:
    return float(np.std(model_logits(table).to_numpy(), ddof=1))


def moment_fit(data, spec="per-benchmark", settings=None, progress=None, cancel=None):
    """Stand-in for :func:`ddr_explorer.core.model.sampler.fit` (module note)."""
    from ddr_explorer.core.model.design_matrix import build_design
    from ddr_explorer.core.model.diagnostics import diagnose
    from ddr_explorer.core.model.formula import as_spec
    from ddr_explorer.core.model.sampler import FitCancelled, Posterior, SamplerSettings

    settings = settings or SamplerSettings()
    spec = as_spec(spec)
    if cancel is not None and cancel():
        raise FitCancelled("fit cancelled by the user before sampling.")
    table = getattr(data, "table", data)
    CALLS.append(getattr(data, "name", "table"))
    design = build_design(data, spec)
    c, s = settings.chains, settings.draws
    rng = np.random.default_rng(settings.seed)
    logits = model_logits(table)
    sigma, effects = {}, {}
    for k, term in enumerate(design.term_names):
        base = moment_sigma_model(table) if term == "model" else 1.0
        sigma[term] = base * np.exp(0.002 * rng.standard_normal((c, s)))
        j = int(design.n_levels[k])
        if term == "model":
            names = design.level_labels[k]["model"].astype(str)
            u = (logits - logits.mean()).reindex(names).to_numpy()
            effects[term] = np.broadcast_to(u, (c, s, j)).astype(np.float32).copy()
        else:
            effects[term] = np.zeros((c, s, j), np.float32)
    stats = {"diverging": np.zeros((c, s), bool), "energy": rng.standard_normal((c, s)),
             "num_steps": np.full((c, s), 7), "accept_prob": np.full((c, s), 0.9),
             "step_size": np.full((c, s), 0.3), "potential_energy": rng.standard_normal((c, s))}
    post = Posterior(sigma=sigma, mu=rng.standard_normal((c, s)) * 0.01, random_effects=effects,
                     levels={nm: design.level_labels[k] for k, nm in enumerate(design.term_names)}, spec=spec,
                     settings=settings, device="moment stand-in", wall_seconds=0.0, timings={}, sample_stats=stats,
                     n_cells=design.n_cells, n_trials=design.n_trials, notes=[])
    post.diagnostics = diagnose(post)
    if progress is not None:
        progress("sampling", 1, 1, 0.0)
    return post


def cold_fit_refits(design, spec, requests, settings=None, *, parent=None, progress=None, cancel=None, spread=None,
                    on_result=None):
    """Stand-in for :func:`ddr_explorer.core.model.refit.fit_refits`: the contract's cold loop, each request's kept
    cells fitted by ``sampler.fit`` (the moment stand-in under the ``fake_sampler`` fixture); ``parent`` and
    ``spread`` (the precision rule's tolerance) unused: the stand-in's run length is fixed."""
    import ddr_explorer.core.model.sampler as sampler
    from ddr_explorer.core.model.formula import as_spec
    from ddr_explorer.core.model.posterior import FitCancelled
    from ddr_explorer.core.model.refit import request_cells

    spec = as_spec(spec)
    for r in requests:
        r.check(design)
    out = []
    for i, r in enumerate(requests):
        if cancel is not None and cancel():
            raise FitCancelled(f"refits cancelled by the user ({i} of {len(requests)} done)")

        def inner(phase, it, total, eta, _i=i, _label=r.label):
            if progress is not None:
                progress(f"{_label}: {phase}", _i, len(requests), eta)

        out.append(sampler.fit(request_cells(design, r), spec, settings, progress=inner, cancel=cancel))
        if on_result is not None:  # the contract: each refit handed over as it finishes
            on_result(i, out[-1])
    if progress is not None:
        progress("refits done", len(requests), len(requests), 0.0)
    return out


def erho2_model(sigma_model: float, n_tasks: float, n_scaffolds: float, n_replicates: float,
                others: float = 1.0) -> float:
    """Seed 000 Table 1, model ranking within a benchmark, with every non-model sigma = ``others``:
    s2_M / (s2_M + s2_IM/n_i + s2_MA/n_a + s2_IMA+e / (n_i n_a n_r)) (e = pi^2/3; the residual also
    shrinks with replicates)."""
    s2m, o = sigma_model ** 2, others ** 2
    err = o / n_tasks + o / n_scaffolds + (np.pi ** 2 / 3) / (n_tasks * n_scaffolds * n_replicates)
    return s2m / (s2m + err)


#: The arguments every call of the stand-in LMM received.
LMM_CALLS: list[dict] = []


def lmm_stand_in(design, priors=None, settings=None, progress=None, cancel=None):
    """Stand-in for :func:`~ddr_explorer.core.estimators.bayes_lmm.bayes_lmm`: a real ``BayesLmmFit`` whose
    draws are known functions of the data.

    The sampler's compile on the estimators' six-term fixture design costs about 40 s of CPU, and what the
    method-comparison tests (tests/estimators/test_methods.py, tests/gui/test_methods_panel.py) check is the
    table built from a fit, not the posterior (the sampler's own tests, with real runs, are in
    tests/estimators/test_bayes_lmm.py).  Each variance draw is the design's REML component times
    ``exp(0.05 z)``, z ~ N(0, 1) from ``settings.seed``, shaped (chains, draws) from ``settings``: a table
    built from another design, seed or run length than the one asked for differs from a second call.  The
    diagnostics are the sampler's own (``_diagnose``), so the verdict is computed as for a real fit.
    """
    from ddr_explorer.core.estimators import reml
    from ddr_explorer.core.estimators.bayes_lmm import BayesLmmFit, BayesLmmSettings, _diagnose

    settings = settings or BayesLmmSettings()
    LMM_CALLS.append({"terms": design.term_names, "n_cells": len(design.n), "priors": priors, "settings": settings})
    rng = np.random.default_rng(settings.seed)
    shape = (settings.chains, settings.draws)
    comps = reml(design).components
    variances = {t: comps[t] * np.exp(0.05 * rng.standard_normal(shape)) for t in [*design.term_names, "residual"]}
    mu = float(np.sum(design.s) / np.sum(design.n)) + 0.01 * rng.standard_normal(shape)
    return BayesLmmFit(term_names=tuple(design.term_names), variances=variances, mu=mu,
                       diagnostics=_diagnose(variances, mu), settings=settings)
