"""NUTS for the crossed random-intercept binomial-logit model (seed 000 (Hardy et al. 2026) Eq. 2 and Eq. 6): :func:`fit`.

The model (SPEC section 2)::

    successes_c ~ Binomial(trials_c, logistic(eta_c)),   eta_c = mu + sum_k u_k[level_k(c)]
    u_k ~ N(0, sigma_k^2 I),  sigma_k ~ half-Student-t(3, 0, 2.5),  mu ~ Student-t(3, 0, 2.5)

is sampled exactly with numpyro's NUTS on JAX.  :func:`fit` ties the pieces together; each idea
lives in its own module:

- :mod:`.posterior`: :class:`SamplerSettings`, :class:`Posterior`, :class:`FitCancelled`, the
  callback types and ``DEFAULT_DRAWS`` (what goes in and what comes out; no jax).
- :mod:`.parameterisation`: the coordinates NUTS samples and the moves beside it (intercept
  ridge removed, per-level partial centring, collapsed Gibbs block, scale moves, hierarchical
  gather, quadrature for one term, centring on the data: items 1-11 of its docstring), the
  potential and the chains' starting points; :func:`collapsed_steps_for`.
- :mod:`.chains`: the chunked runner (progress, cancellation, cross-chain adaptation) and
  ``WARMUP_HOOK`` (set it on :mod:`.chains`, where the runner reads it).
- :mod:`.devices`: one CPU device per chain, single-threaded BLAS, the on-disk compilation cache.
- :mod:`.stopping`: the run length by the convergence gate (``SamplerSettings.stop = "gate"``);
  :mod:`.warmup`: ending the slow adaptation windows once the metric has settled
  (``SamplerSettings.adaptive_warmup``).
- Around them: :mod:`.formula` and :mod:`.design_matrix` (formula and data -> design),
  :mod:`.geometry` (rough fit, level scales, collapsed group, host chains), :mod:`.quadrature`
  (the integrated term), :mod:`.diagnostics` (R-hat, ESS, InferenceData).

What each idea bought, measured on the corpora: docs/sampler-measurements.md.  The names below
are imported here so that ``from ddr_explorer.core.model.sampler import X`` keeps working; tests
replace :func:`fit` on this module.
"""

from __future__ import annotations

import contextlib
import time

import numpy as np

from .chains import _run_chains, draws_by_term
from .design_matrix import DesignMatrix, build_design
from .devices import COMPILATION_CACHE_BYTES, _devices, _enable_compilation_cache, _single_threaded_blas
from .formula import ModelSpec, as_spec
from .geometry import collapsed_group, rough_fit
from .parameterisation import _GibbsBlock, _make_layout, _Marginal, _mh_steps, collapsed_steps_for
from .posterior import (DEFAULT_DRAWS, CancelCallback, FitCancelled, Posterior, ProgressCallback,
                        SamplerSettings)
from .quadrature import NO_CANDIDATE, choose_marginal_term, error_at_posterior

__all__ = ["COMPILATION_CACHE_BYTES", "DEFAULT_DRAWS", "CancelCallback", "FitCancelled", "Posterior",
           "ProgressCallback", "SamplerSettings", "collapsed_steps_for", "fit"]


def sampler_layout(design: DesignMatrix, spec, rough, settings: SamplerSettings):
    """What the chains sample and how: the collapsed Gibbs block, the term integrated out by quadrature
    and the NUTS layout of the remaining terms, from the design, the model and its rough fit.

    One place for :func:`fit` and bench/investigations/bench_gradient.py (which times the potential a fit builds), so
    that a bench cannot drift from the sampler.

    Returns
    -------
    (lay, gibbs, marg, marg_note)
        The NUTS layout (``parameterisation._Layout``), the Gibbs block (None without one), the
        integrated term (None without one) and why a term was or was not integrated out.
    """
    group, inner = _GibbsBlock.split(design, spec, settings)
    marg, marg_note = None, ""
    if settings.marginalise == "auto":
        in_group = set(group.terms) if group is not None else set()
        mt, marg_note = choose_marginal_term(design, rough, [k for k in range(design.n_terms) if k not in in_group],
                                             min_nodes=settings.quadrature_nodes)
        if mt is not None:
            p = spec.priors.for_term(design.term_names[mt.term])
            marg = _Marginal(term=mt, sigma_df=p.df, sigma_scale=p.scale, sigma0=float(rough.sigma[mt.term]))
    nuts_terms = [k for k in range(design.n_terms) if k not in inner and (marg is None or k != marg.term.term)]
    lay = _make_layout(design, spec, rough, settings.parameterisation, nuts_terms, nested=settings.nested_centring)
    gibbs = _GibbsBlock.build(design, spec, group, inner, nuts_terms) if group is not None else None
    return lay, gibbs, marg, marg_note


def fit(data, spec: ModelSpec | str = "per-benchmark", settings: SamplerSettings | None = None,
        progress: ProgressCallback | None = None, cancel: CancelCallback | None = None) -> Posterior:
    """Sample the posterior of a crossed random-intercept binomial-logit model with NUTS.

    Implements seed 000 Eq. 2 (per benchmark) and Eq. 6 (pooled), or any random-intercept
    formula (SPEC section 2), with the parameterisation described in
    :mod:`.parameterisation`.  The result is exact MCMC; whether it converged is in
    ``Posterior.diagnostics`` (split R-hat <= 1.01, bulk ESS >= 400, no divergences).

    Parameters
    ----------
    data
        A :class:`~ddr_explorer.core.corpus.corpus.Corpus`, a DataFrame of records
        (facet columns, ``successes``, ``trials``), or a :class:`~.design_matrix.DesignMatrix`.
    spec
        A :class:`~.formula.ModelSpec`, a preset name or a formula.
    settings
        :class:`SamplerSettings` (defaults when omitted).
    progress
        Called as ``progress(phase, iteration, total, eta_seconds)`` with phase one of
        ``"compile"``, ``"warmup"``, ``"sampling"`` (``"sampling (until converged)"`` when
        ``settings.stop == "gate"``: total is then the projected run length), ``"diagnostics"``.
    cancel
        Polled between chunks; when it returns True the fit stops with :class:`FitCancelled`.

    Returns
    -------
    Posterior
    """
    from .diagnostics import diagnose

    settings = settings or SamplerSettings()
    t_start = time.perf_counter()
    timings: dict[str, float] = {}
    spec = as_spec(spec)
    design = data if isinstance(data, DesignMatrix) else build_design(data, spec)
    timings["design"] = time.perf_counter() - t_start
    if cancel is not None and cancel():
        raise FitCancelled("fit cancelled by the user before sampling.")

    t = time.perf_counter()
    rough = rough_fit(design)
    lay, gibbs, marg, marg_note = sampler_layout(design, spec, rough, settings)
    timings["rough_fit"] = time.perf_counter() - t
    mh_steps = _mh_steps(settings, gibbs, design, lay, marg)

    import jax

    devices, kind = _devices(settings.device)
    _enable_compilation_cache()
    ctx = jax.enable_x64(True) if settings.float64 else contextlib.nullcontext()
    try:
        with ctx, jax.default_device(devices[0]), _single_threaded_blas():
            import jax.numpy as jnp

            dtype = jnp.float64 if settings.float64 else jnp.float32
            warm, samp, n_dev = _run_chains(design, spec, lay, gibbs, rough, settings, devices, dtype, progress,
                                            cancel, timings, marg, mh_steps)
    finally:
        # Every fit compiles fresh closures over its own data, so its executables can never be
        # reused in memory (the disk cache serves refits); JAX keeps them anyway, and their JIT code
        # holds about 1,550 memory maps per fit: a process ran out of maps (vm.max_map_count
        # 65,530) after 32 fits in a row ("LLVM compilation error: Cannot allocate memory").  With
        # the caches cleared the count stays flat (measured: 1,503-1,507 maps over 6 fits).
        jax.clear_caches()

    stop_note = timings.pop("stop_note", None)  # how a gate-stopped run ended (:mod:`.stopping`)
    warmup_note = timings.pop("warmup_note", None)  # an adaptive warmup that ended early (:mod:`.warmup`)
    t = time.perf_counter()
    if progress:
        progress("diagnostics", 0, 1, None)
    names = design.term_names
    sigma, effects, stats = draws_by_term(design, lay, gibbs, marg, samp, warm, settings)
    device = (f"cpu x{n_dev}" if kind == "cpu" else f"{kind}: {devices[0].device_kind}")
    post = Posterior(sigma=sigma, mu=samp["mu"].astype(np.float64), random_effects=effects,
                     levels={nm: design.level_labels[k] for k, nm in enumerate(names)}, spec=spec,
                     settings=settings, device=device, wall_seconds=float("nan"), timings=timings,
                     sample_stats=stats, n_cells=design.n_cells, n_trials=design.n_trials,
                     notes=list(design.notes))
    if warmup_note:
        post.notes.append(warmup_note)
    if stop_note:
        post.notes.append(stop_note)
    if gibbs is not None:
        post.notes.append("collapsed block: " + ", ".join(names[k] for k in gibbs.group.terms) +
                          f" (run term {names[gibbs.group.terms[0]]}, {gibbs.group.n_runs} runs; "
                          f"{mh_steps} Metropolis steps per transition)")
    if marg is None and marg_note and marg_note != NO_CANDIDATE:
        post.notes.append(marg_note)  # a candidate refused because the quadrature was not accurate
    if marg is not None:
        post.notes.append(marg.term.describe())
        post.integrated = [names[marg.term.term]]
        post.quadrature_nodes = marg.term.n_nodes
        if settings.keep_random_effects:
            mt = marg.term
            post.quadrature_error, s_hi = error_at_posterior(design, mt, post.mu, effects, sigma[mt.name])
            post.notes.append(f"quadrature error at the posterior (last draw, sigma[{mt.name}] = {s_hi:.2f}): "
                              f"{post.quadrature_error:.1e} nats")
    post.diagnostics = diagnose(post)
    timings["diagnostics"] = time.perf_counter() - t
    if progress:
        progress("diagnostics", 1, 1, 0.0)
    post.wall_seconds = time.perf_counter() - t_start
    return post
