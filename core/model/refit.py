"""Refits of one parent design: the contract the refit engine calls (:func:`fit_refits`).

A refit is the parent's model fitted to other data on the *same cells*: each
:class:`RefitRequest` gives new successes and trials for every cell of the parent
:class:`~.design_matrix.DesignMatrix` (trials 0 drops a cell).  That covers every refit the
analyses need:

- a subset of cells (difficulty quartiles, LOBO, LOMO, PSIS-LOO refits): the parent's
  counts where kept, 0 elsewhere;
- a split of each cell's trials (hold-out training and held-out parts, seed 003 (DDR paper 2026) sec. 5.4):
  the part's own counts per cell;
- a reweighting (a bootstrap): counts times integer weights.

Whatever the implementation, a returned :class:`~.posterior.Posterior` reads like a cold fit
of the kept cells: levels with no trials left are not in ``levels`` / ``random_effects``,
``n_cells`` and ``n_trials`` count the kept cells, and its diagnostics are its own.

How (seed 000 (Hardy et al. 2026) Eq. 2 / Eq. 6, SPEC section 2; items of :mod:`.parameterisation`):

1. **Masked data, not rebuilt designs.**  A refit keeps the parent's cells and levels and
   changes only the per-cell counts.  A cell with 0 trials adds ``0 * eta - 0 * softplus(eta)
   = 0`` to the binomial log-likelihood, so it contributes nothing.  A level whose cells all
   have 0 trials is then informed by its prior N(0, sigma^2) only: integrating it out gives 1,
   so the joint posterior of every other quantity (mu, every sigma, every level with data) is
   *exactly* that of the cold fit of the kept cells; its draws are simply dropped from the
   output.  The counts and everything derived from them (the rough fit, the partial-centring
   constants and centring weights recomputed on the subset, the scale moves' slopes) are
   *arguments* of the compiled chunk (:mod:`.refit_chains`), so all refits of one parent share
   one compile.  The host chains of nested centring (item 11) are the parent's (a choice of
   coordinates, exact whatever it is).  A term integrated out by quadrature (item 10, pooled
   corpora) has a trial layout (one entry per Bernoulli trial) that depends on the counts: a warm
   refit whose parent integrated it keeps the parent's rule and layout and drops the trials it does
   not have by a mask, an argument like the counts (:func:`.quadrature.trial_mask`: a masked
   trial's factor is 1, so the likelihood is exactly that of the refit's own trials), so these
   refits share one compile too; only counts that are not a part of the parent's (a cell with more
   successes or failures than the parent's) choose their own term and layout and compile alone.
   A warm refit integrates a term out only where its parent did: on Terminal-Bench 2.0 (parent:
   nothing integrated) every 30% held-out part would otherwise have chosen to integrate
   task:model and compiled on its own, 50 compiles of about 11 s each on an idle 2-core machine
   for one sheet; sampling those levels instead is exact and shares the parent's one compile.
2. **Warm start** (``parent`` given): each chain starts at a different draw of the parent,
   mapped into the refit's own coordinates; the initial inverse mass matrix is the covariance
   of up to :data:`MASS_DRAWS` parent draws in those coordinates (dense over the global block,
   floored at the cold fit's conditional variances), re-estimated in the short warmup's one
   mass window (:data:`WARM_ADAPT_MASS`); the initial step size is the parent's median; and
   the warmup is short (:data:`WARM_WARMUP`; bench/investigations/bench_warm_refits.py: 25 iterations
   diverge, 50 and 100 agree with cold refits, docs/sampler-measurements.md).  The adapted
   mass matrix itself is not stored on a :class:`~.posterior.Posterior` (nor in the fit
   cache), and it would not fit the refit anyway:
   the coordinates follow the data (partial centring on the subset's information), so a mass
   matrix in the parent's coordinates is the wrong shape of ellipse; the parent's draws can be
   mapped exactly into the refit's coordinates, cached parents included.
3. **Batches**: refits x chains are the batch axis of one compiled sampler, pmapped over the
   devices and vmapped within one (:func:`batch_layout`): on a GPU as many refits at once as
   fit (:data:`GPU_MAX_BATCH` chains), on CPU one chain per CPU device.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .design_matrix import DesignMatrix
from .formula import as_spec
from .posterior import CancelCallback, FitCancelled, Posterior, ProgressCallback, SamplerSettings

__all__ = ["GPU_MAX_BATCH", "MASS_DRAWS", "WARM_WARMUP", "RefitRequest", "batch_layout", "fit_refits",
           "masked_design", "request_cells", "request_seed"]

#: Warmup iterations of a warm-started refit (the cold default is 300).  Measured with
#: bench/investigations/bench_warm_refits.py on 10 Terminal-Bench 2.0 hold-out splits (docs/sampler-measurements.md):
#: 25 left the step size about 10x too large (numpyro's final buffer is 2 iterations: 4,497
#: divergences); 50 and 100 agreed with cold refits (max |z| 2.20 and 2.48 over 60 posterior
#: means, 97% and 95% below 2) without divergences.  50: with the run length set by the gate, 6 of 6
#: TB2 split refits passed it without divergences after 50 (bench/investigations/bench_refit_cost.py).
WARM_WARMUP = 50
#: Whether a warm-started refit re-estimates its mass matrix during its short warmup (numpyro's
#: windows) or keeps the one estimated from the parent's draws and adapts its step size only.
WARM_ADAPT_MASS = True
#: Parent draws mapped into a refit's coordinates to estimate its initial inverse mass matrix.
MASS_DRAWS = 400
#: Most chains (refits x chains) in one batch on a GPU.
GPU_MAX_BATCH = 512


@dataclass(frozen=True)
class RefitRequest:
    """One refit: new counts on the parent's cells.

    Attributes
    ----------
    label
        What the refit is (``"split 7 train"``), for progress and errors.
    successes, trials
        int arrays ``(n_cells,)`` aligned with the parent design's cells; ``trials == 0`` drops
        a cell, ``0 <= successes <= trials``.
    reported
        The quantities the refit's analysis reports (e.g. Erho2 at a hold-out split's held-out
        design, seed 003 sec. 5.4): objects with ``label``, ``to_dict()`` (for the cache key) and
        ``draws(sigma_by_term, spec) -> (chains, draws)``
        (:class:`ddr_explorer.core.analyses.reported.ReportedQuantity`).  Empty: the run length
        under ``stop="gate"`` is set by every variance component (:func:`.stopping.check_gate`);
        otherwise by R-hat on every component and the ESS of these quantities
        (:func:`.stopping.check_reported`).  Not part of :func:`request_seed`: the draws up to the
        stop are those of the same request without them.
    """

    label: str
    successes: np.ndarray
    trials: np.ndarray
    reported: tuple = ()
    #: The run-length rule of a refit with ``reported`` quantities: a :class:`~.stopping.PrecisionRule`
    #: (chains agree, and the MCSE of what the analysis takes is within its tolerance); None: the gate on
    #: the reported quantities (:func:`.stopping.check_reported`).  Not part of :func:`request_seed`.
    precision: object = None

    def check(self, design: DesignMatrix) -> None:
        """Raise ValueError unless the counts fit ``design``'s cells."""
        s, n = np.asarray(self.successes), np.asarray(self.trials)
        if s.shape != (design.n_cells,) or n.shape != (design.n_cells,):
            raise ValueError(f"refit {self.label!r}: need successes and trials for each of the parent's "
                             f"{design.n_cells} cells, got shapes {s.shape} and {n.shape}.")
        if (n < 0).any() or (s < 0).any() or (s > n).any():
            raise ValueError(f"refit {self.label!r}: successes must lie in 0..trials and trials must be >= 0.")
        if not (n > 0).any():
            raise ValueError(f"refit {self.label!r} keeps no cell of the parent; nothing to fit.")


def request_seed(seed: int, request: RefitRequest) -> int:
    """The seed of one refit: derived from the settings' ``seed`` and the request's identity (its counts).

    A refit's random numbers (its chains' starts among the parent's draws, their PRNG keys) come
    from this seed alone, not from its place in a batch, so a refit gives the same draws alone,
    in any batch and on any Dask worker (:func:`fit_refits`).  Two requests with the same counts
    are the same refit (and share a cache key).
    """
    import hashlib

    h = hashlib.sha256()
    h.update(np.int64(seed).tobytes())
    h.update(np.ascontiguousarray(np.asarray(request.successes, np.int64)).tobytes())
    h.update(np.ascontiguousarray(np.asarray(request.trials, np.int64)).tobytes())
    return int.from_bytes(h.digest()[:4], "little") & 0x7FFFFFFF


def request_cells(design: DesignMatrix, request: RefitRequest):
    """The kept cells of ``request`` as a cell table (identifying columns, successes, trials)."""
    request.check(design)
    keep = np.asarray(request.trials) > 0
    cells = design.cells.loc[keep].copy()
    cells["successes"] = np.asarray(request.successes, np.int64)[keep]
    cells["trials"] = np.asarray(request.trials, np.int64)[keep]
    return cells.reset_index(drop=True)



def masked_design(design: DesignMatrix, request: RefitRequest) -> DesignMatrix:
    """The parent's design with the request's counts: same cells, codes and levels (item 1 above)."""
    s = np.asarray(request.successes, np.int64)
    n = np.asarray(request.trials, np.int64)
    level_trials = [np.bincount(design.codes[k], weights=n, minlength=int(design.n_levels[k])).astype(np.int64)
                    for k in range(design.n_terms)]
    cells = design.cells.assign(successes=s, trials=n)
    return dataclasses.replace(design, successes=s, trials=n, level_trials=level_trials, cells=cells,
                               notes=list(design.notes))


def batch_layout(n_refits: int, chains: int, kind: str, n_devices: int) -> tuple[int, int]:
    """(refits per batch, chains per batch) for ``n_refits`` refits of ``chains`` chains.

    On a GPU (one device) every refit of the analysis in one vmapped batch, up to
    :data:`GPU_MAX_BATCH` chains; on CPU one chain per device (a vmapped batch on a CPU device
    runs every chain for as long as its longest NUTS tree, and a batch of one is not vmapped:
    :func:`.chains._per_device`).
    """
    if kind == "cpu":
        per_batch = max(1, n_devices // chains)
    else:
        per_batch = max(1, GPU_MAX_BATCH // chains)
    per_batch = min(per_batch, n_refits)
    return per_batch, per_batch * chains


@dataclass
class _Prepared:
    """One refit's data, layout and starts (numpy, before batching)."""

    request: RefitRequest
    design: DesignMatrix
    rough: object
    lay: object
    marg: object
    consts: dict
    z0: dict
    imm_g: np.ndarray
    imm_x: np.ndarray
    step0: np.ndarray
    u_in0: np.ndarray
    ls_in0: np.ndarray
    seconds: float
    seed: int
    shared: bool = False  # integrates the parent's term on the parent's trial layout, by a mask (item 1)


def _scale_slopes(lay, rough) -> np.ndarray:
    """gamma_j = d log a_j / d log sigma at the rough sigma (the scale moves' slopes, item 7)."""
    sig0 = rough.sigma[lay.terms]
    return np.concatenate([lay.c0[a:b] / (lay.c0[a:b] + lay.c1[a:b] * sig0[i] ** 2)
                           for i, (a, b) in enumerate(zip(lay.offsets[:-1], lay.offsets[1:]))])


def _to_coordinates(lay, sigma: np.ndarray, mu: np.ndarray, u: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Draws (sigma (M, K), mu (M,), u per NUTS term (M, J_k)) -> NUTS coordinates (g (M, 1+2K), x (M, L)).

    The inverse of ``_parts``/``constrain`` in :func:`.parameterisation._make_functions` (the
    map :func:`.parameterisation._initial_point` applies to the rough mode), with the auxiliary
    pi'(a x) set to pi'u.
    """
    from .geometry import log_scale

    K = lay.K
    sl = [slice(int(lay.offsets[i]), int(lay.offsets[i + 1])) for i in range(K)]
    ls = np.log(sigma)
    a = [np.exp(log_scale(ls[:, i:i + 1], lay.c0[sl[i]][None, :], lay.c1[sl[i]][None, :])) for i in range(K)]
    m = np.stack([u[i] @ lay.pi[sl[i]] for i in range(K)], axis=1)  # (M, K)
    if lay.nested:
        dev = [u[i] - m[:, i:i + 1] for i in range(K)]
        xs = []
        for i in range(K):
            y = u[i].astype(float)
            if lay.chains[i]:
                oS = lay.c1[sl[i]][None, :] * a[i] ** 2 * sum(dev[q][:, mp] for q, mp in lay.chains[i])
                y = y + oS - (oS @ lay.pi[sl[i]])[:, None]
            xs.append(y / a[i])
    else:
        xs = [u[i] / a[i] for i in range(K)]
    w = m / (sigma * lay.pi_norm[None, :])
    g = np.concatenate([(mu + m.sum(1))[:, None], ls, w], axis=1)
    return g, np.concatenate(xs, axis=1)


def _parent_draws(parent: Posterior, design: DesignMatrix, lay, rough, marg, rng, n: int):
    """``n`` parent draws (random, without replacement where possible) mapped into ``lay``'s coordinates."""
    names = design.term_names
    M = parent.mu.size
    idx = rng.choice(M, size=n, replace=n > M)
    sig = np.stack([np.asarray(parent.sigma[names[k]], np.float64).reshape(-1)[idx] for k in lay.terms], axis=1)
    mu = np.asarray(parent.mu, np.float64).reshape(-1)[idx]
    u = []
    for k in lay.terms:
        e = parent.random_effects.get(names[k])
        if e is not None and e.shape[-1] == design.n_levels[k]:
            u.append(np.asarray(e, np.float64).reshape(M, -1)[idx])
        else:  # effects not kept (or integrated): the rough mode of the refit
            u.append(np.broadcast_to(rough.u[k], (n, rough.u[k].size)).astype(np.float64))
    g, x = _to_coordinates(lay, sig, mu, u)
    if marg is not None:
        ls_m = np.log(np.asarray(parent.sigma[names[marg.term.term]], np.float64).reshape(-1)[idx])
        g = np.concatenate([g, ls_m[:, None]], axis=1)
    return g, x


def _gibbs_for(gibbs, terms: list[int]):
    """The collapsed block with its NUTS positions counted among ``terms`` (the refit's NUTS terms).

    A refit whose rough fit chooses a term to integrate out by quadrature samples one term fewer
    with NUTS than the parent's structure, so the block's positions shift (as in :func:`.sampler.fit`,
    where they are counted after the choice)."""
    if gibbs is None:
        return None
    return dataclasses.replace(gibbs, top_pos=terms.index(gibbs.group.terms[0]),
                               nuts_pos=[terms.index(k) if k in terms else None for k in gibbs.group.terms])


def _shared_marginal(design: DesignMatrix, settings: SamplerSettings, structure: dict, parent):
    """The parent's integrated term on the parent's own trial layout, or None (item 1).

    The rule is the one the parent chose (the same choice on the same design, at least its node
    count and at least ``settings.quadrature_nodes``); each refit keeps its own trials of it by a
    mask (:func:`.quadrature.trial_mask`), so that all of them share one compile.
    """
    from .quadrature import choose_marginal_term

    integrated = list(getattr(parent, "integrated", None) or []) if parent is not None else []
    if not integrated or settings.marginalise != "auto":
        return None
    floor = max(int(settings.quadrature_nodes), int(getattr(parent, "quadrature_nodes", None) or 0))
    mt, _ = choose_marginal_term(design, structure["rough"], structure["marg_candidates"], min_nodes=floor)
    return mt if mt is not None and mt.name == integrated[0] else None


def _prepare(design, spec, request, settings, structure, parent, warm: bool, shared_marg=None) -> _Prepared:
    """Masked design, rough fit and layout on the refit's counts, and its chains' starts (items 1-2);
    every random number from the request's own seed (:func:`request_seed`).  ``shared_marg``: the
    parent's integrated term (:func:`_shared_marginal`), integrated on the parent's layout with this
    refit's trial mask when its counts are a part of the parent's."""
    from .geometry import rough_fit
    from .parameterisation import _initial_gibbs, _initial_point, _make_layout, _Marginal
    from .quadrature import choose_marginal_term, trial_mask

    t = time.perf_counter()
    C = settings.chains
    seed = request_seed(settings.seed, request)
    dm = masked_design(design, request)
    rough = rough_fit(dm)
    marg = None
    tmask = None
    if shared_marg is not None:
        tmask = trial_mask(design, shared_marg.term, request.successes, request.trials)
        if tmask is not None:
            p = spec.priors.for_term(design.term_names[shared_marg.term])
            marg = _Marginal(term=shared_marg, sigma_df=p.df, sigma_scale=p.scale,
                             sigma0=float(rough.sigma[shared_marg.term]))
    # a warm refit keeps its parent's choice: a parent that integrated nothing out has refits that
    # sample every level too (exact either way), so that they all share its one compile; one that
    # integrated a term has refits that integrate it on its layout (above), unless the counts are not
    # a part of the parent's
    follow_parent = parent is not None and (not getattr(parent, "integrated", None) or tmask is not None)
    if settings.marginalise == "auto" and not follow_parent:
        mt, _ = choose_marginal_term(dm, rough, structure["marg_candidates"], min_nodes=settings.quadrature_nodes)
        if mt is not None:
            p = spec.priors.for_term(design.term_names[mt.term])
            marg = _Marginal(term=mt, sigma_df=p.df, sigma_scale=p.scale, sigma0=float(rough.sigma[mt.term]))
    terms = [k for k in structure["terms"] if marg is None or k != marg.term.term]
    chains = structure["chains"] if terms == structure["terms"] else None
    lay = _make_layout(dm, spec, rough, settings.parameterisation, terms, nested=settings.nested_centring,
                       chains=chains)
    consts = {"y": dm.successes.astype(float), "n": dm.trials.astype(float), "c0": lay.c0, "c1": lay.c1,
              "pi": lay.pi, "pi_norm": lay.pi_norm, "sref2": lay.sref ** 2, "gam": _scale_slopes(lay, rough)}
    if tmask is not None:
        consts["tmask"] = tmask
    z0, var = _initial_point(lay, rough, C, seed, marg=marg)
    imm_g = np.diag(var["g"]) if settings.dense_globals else var["g"]
    imm_x = var["x"]
    step0 = float((z0["x"].shape[1] + z0["g"].shape[1]) ** -0.25)
    if warm:
        rng = np.random.default_rng([seed, 40503])
        g, x = _parent_draws(parent, design, lay, rough, marg, rng, C)
        z0 = {"g": g, "x": x}
        gm, xm = _parent_draws(parent, design, lay, rough, marg, rng, MASS_DRAWS)
        # x: at least the conditional variance the refit's own centring implies (the parent's
        # draws are narrower where the refit has less data); globals: the parent's covariance,
        # its diagonal floored at the cold start's (alpha: 1 / information of the refit)
        imm_x = np.maximum(xm.var(0), var["x"])
        cov = np.cov(gm, rowvar=False) if gm.shape[1] > 1 else np.atleast_2d(gm.var(0))
        d = np.sqrt(np.maximum(np.diag(cov), var["g"]) / np.maximum(np.diag(cov), 1e-12))
        cov = cov * d[:, None] * d[None, :]
        imm_g = cov if settings.dense_globals else np.diag(cov)
        steps = np.asarray(parent.sample_stats.get("step_size", []), np.float64)
        if steps.size and np.all(np.isfinite(steps)):
            step0 = float(np.median(steps))
    gibbs = structure["gibbs"]
    if gibbs is not None:
        u_in0, ls_in0, _ = _initial_gibbs(gibbs, rough, C, seed)
    else:
        u_in0, ls_in0 = np.zeros((C, 0)), np.zeros((C, 0))
    return _Prepared(request=request, design=dm, rough=rough, lay=lay, marg=marg, consts=consts, z0=z0,
                     imm_g=imm_g, imm_x=imm_x, step0=np.full(C, step0), u_in0=u_in0, ls_in0=ls_in0,
                     seconds=time.perf_counter() - t, seed=seed, shared=tmask is not None)


def _structure(design: DesignMatrix, spec, settings: SamplerSettings) -> dict:
    """What every refit of ``design`` shares: the collapsed block, the NUTS terms, the host chains."""
    from .geometry import host_chains, rough_fit
    from .parameterisation import _GibbsBlock, collapsed_steps_for

    cols = [spec.term(n).columns for n in design.term_names]
    group, inner = _GibbsBlock.split(design, spec, settings)
    terms = [k for k in range(design.n_terms) if k not in inner]
    in_group = set(group.terms) if group is not None else set()
    gibbs = _GibbsBlock.build(design, spec, group, inner, terms) if group is not None else None
    # the parent's host chains (chosen on the parent's rough fit) for every refit
    rough = rough_fit(design)
    chains = (host_chains(design, cols, terms, rough) if settings.nested_centring else [[] for _ in terms])
    Jg = np.array([design.n_levels[k] for k in group.terms], float) if group is not None else np.zeros(0)
    prop_var0 = np.concatenate([1.0 / (2.0 * Jg) + 0.02, [0.25]]) if group is not None else np.zeros(0)
    return {"terms": terms, "gibbs": gibbs, "chains": chains, "prop_var0": prop_var0, "rough": rough,
            "marg_candidates": [k for k in range(design.n_terms) if k not in in_group],
            "mh_steps": lambda L, marg: (0 if gibbs is None else settings.collapsed_steps or
                                         collapsed_steps_for(group.n_runs, design.n_cells, L, marg))}


def _gate_names(prep: _Prepared, gibbs) -> list[str]:
    """The term of each sigma column the gate checks (NUTS terms, Gibbs inner terms, the integrated term)."""
    tn = prep.design.term_names
    return ([tn[k] for k in prep.lay.terms] + ([tn[k] for k in gibbs.inner] if gibbs is not None else [])
            + ([tn[prep.marg.term.term]] if prep.marg is not None else []))


def _stack(preps: list[_Prepared], per_batch: int, C: int):
    """The batch inputs of ``preps`` (padded to ``per_batch`` refits with copies of the last); each
    refit's chains get PRNG keys from its own seed (:func:`request_seed`)."""
    import jax

    from .refit_chains import BatchInputs

    pad = preps + [preps[-1]] * (per_batch - len(preps))
    rep = lambda a: np.repeat(np.asarray(a)[None], C, axis=0)  # noqa: E731
    data = {k: np.concatenate([rep(p.consts[k]) for p in pad]) for k in pad[0].consts}
    keys = [np.asarray(jax.random.split(jax.random.PRNGKey(p.seed), C)) for p in pad]
    return BatchInputs(data=data, z0={k: np.concatenate([p.z0[k] for p in pad]) for k in ("g", "x")},
                       imm_g=np.concatenate([rep(p.imm_g) for p in pad]),
                       imm_x=np.concatenate([rep(p.imm_x) for p in pad]),
                       step0=np.concatenate([p.step0 for p in pad]),
                       u_in0=np.concatenate([p.u_in0 for p in pad]),
                       ls_in0=np.concatenate([p.ls_in0 for p in pad]),
                       keys=np.concatenate(keys), group=C)


def _posterior(parent_design: DesignMatrix, spec, prep: _Prepared, settings: SamplerSettings, warm_stats,
               samp, gibbs, device: str, timings: dict, wall: float, notes: list[str]) -> Posterior:
    """A refit's draws as a :class:`Posterior` of the kept cells (levels without trials dropped)."""
    from .chains import draws_by_term
    from .diagnostics import diagnose
    from .quadrature import error_at_posterior

    design, lay, marg = prep.design, prep.lay, prep.marg
    names = design.term_names
    sigma, full_effects, stats = draws_by_term(design, lay, gibbs, marg, samp, warm_stats, settings)
    # levels with trials: the others are prior-only draws (module docstring, item 1)
    kept = [design.level_trials[k] > 0 for k in range(design.n_terms)]
    effects = {nm: e[:, :, kept[names.index(nm)]] for nm, e in full_effects.items()}
    levels = {nm: design.level_labels[k].loc[kept[k]].reset_index(drop=True) for k, nm in enumerate(names)}
    keep_cells = design.trials > 0
    post = Posterior(sigma=sigma, mu=samp["mu"].astype(np.float64), random_effects=effects, levels=levels,
                     spec=spec, settings=settings, device=device, wall_seconds=wall, timings=dict(timings),
                     sample_stats=stats, n_cells=int(keep_cells.sum()), n_trials=int(design.trials.sum()),
                     notes=[*design.notes, *notes])
    for k, nm in enumerate(names):
        if int(kept[k].sum()) == 1 and parent_design.n_levels[k] > 1:
            post.notes.append(f"term (1|{nm}) has a single level in these data: its variance is informed by the "
                              f"prior only.")
    if marg is not None:
        post.notes.append(marg.term.describe())
        if prep.shared:
            post.notes.append("the parent's quadrature rule, on this refit's own trials (the parent's trial layout, "
                              "masked)")
        post.integrated = [names[marg.term.term]]
        post.quadrature_nodes = marg.term.n_nodes
        if settings.keep_random_effects:
            mt = marg.term
            if prep.shared:  # the accuracy where this refit's posterior is, on its own trials
                from .quadrature import trial_layout

                cell, sign, blocks = trial_layout(design, mt.term)
                mt = dataclasses.replace(mt, trial_cell=cell, sign=sign, blocks=blocks)
            post.quadrature_error, _ = error_at_posterior(design, mt, post.mu, full_effects, sigma[mt.name])
    post.diagnostics = diagnose(post)
    return post


def fit_refits(design: DesignMatrix, spec, requests: Sequence[RefitRequest], settings: SamplerSettings | None = None,
               *, parent: Posterior | None = None, progress: ProgressCallback | None = None,
               cancel: CancelCallback | None = None, warmup: int | None = None, spread=None,
               on_result=None) -> list[Posterior]:
    """Fit every request under the parent's model (SPEC section 2), in request order.

    Parameters
    ----------
    design
        The parent's design (its cells fix the requests' alignment).
    spec
        The parent's model (a :class:`~.formula.ModelSpec`, preset name or formula).
    requests
        The refits.
    settings
        Sampler settings for every refit (defaults when None).
    parent
        The parent's posterior: each refit starts from its draws with a short warmup (module
        docstring, item 2).  None: cold starts at the refit's rough fit with ``settings.warmup``.
    progress
        ``progress(phase, i, n, eta)`` with ``i`` the refits finished of ``n`` and ``eta`` the
        seconds left (phase ``"compile"`` first, then ``"refits"``).
    cancel
        Polled between chunks of every batch; True stops with :class:`FitCancelled`.
    warmup
        Warmup iterations of a warm-started refit (default :data:`WARM_WARMUP`, at most
        ``settings.warmup``); ignored without ``parent``.
    spread
        The :class:`~.stopping.SpreadTracker` of the requests with a precision rule (their tolerance as
        the refits accumulate; the refit engine seeds it with the refits reopened from its cache); a new
        one when None.
    on_result
        ``on_result(i, posterior)``, called as soon as request ``i``'s batch has finished: the refit engine
        caches each refit then, so that an interrupted run (a timeout, Ctrl-C, Cancel) keeps every refit
        finished before it.

    Returns
    -------
    list of Posterior
        Each reads like a cold fit of its kept cells (module docstring); ``timings`` hold its
        share of the batch (``"compile"`` is the whole analysis' compile, spent once).
    """
    import jax

    from .devices import _devices, _enable_compilation_cache, _single_threaded_blas
    from .refit_chains import BatchRunner

    settings = settings or SamplerSettings()
    spec = as_spec(spec)
    requests = list(requests)
    for r in requests:
        r.check(design)
    n = len(requests)
    if n == 0:
        return []
    if spread is None:
        from .stopping import SpreadTracker

        spread = SpreadTracker()
    warm = parent is not None
    W = min(settings.warmup, WARM_WARMUP if warmup is None else int(warmup)) if warm else settings.warmup
    run_settings = dataclasses.replace(settings, warmup=W)
    C = settings.chains
    structure = _structure(design, spec, settings)
    shared_marg = _shared_marginal(design, settings, structure, parent) if warm else None
    if progress is not None:
        progress("compile", 0, n, None)
    preps = []
    for i, r in enumerate(requests):
        if cancel is not None and cancel():
            raise FitCancelled(f"refits cancelled by the user (preparing {i} of {n}).")
        preps.append(_prepare(design, spec, r, settings, structure, parent, warm, shared_marg))
    # refits that share a compile: those that integrate nothing, those that integrate the parent's term
    # on its layout; one that chose its own integrated term (its trial layout follows its counts) runs alone
    groups: list[list[int]] = [[i for i, p in enumerate(preps) if p.marg is None],
                               [i for i, p in enumerate(preps) if p.shared]]
    groups = [g for g in groups if g] + [[i] for i, p in enumerate(preps) if p.marg is not None and not p.shared]

    devices, kind = _devices(settings.device)
    _enable_compilation_cache()
    out: list[Posterior | None] = [None] * n
    how = (f"warm start from the parent's draws, {W} warmup iterations" if warm
           else f"cold start, {W} warmup iterations")
    n_batches = sum(-(-len(g) // batch_layout(len(g), C, kind, len(devices))[0]) for g in groups)
    iters_total = n_batches * (W + settings.draws)
    iters_done = 0
    batches_done = 0
    done = 0
    t_run = time.perf_counter()
    ctx = jax.enable_x64(True) if settings.float64 else contextlib.nullcontext()
    try:
        with ctx, jax.default_device(devices[0]), _single_threaded_blas():
            import jax.numpy as jnp

            dtype = jnp.float64 if settings.float64 else jnp.float32
            for g in groups:
                per_batch, B = batch_layout(len(g), C, kind, len(devices))
                p0 = preps[g[0]]
                gibbs = _gibbs_for(structure["gibbs"], list(p0.lay.terms))
                runner = BatchRunner(p0.design, spec, p0.lay, gibbs, p0.marg,
                                     structure["mh_steps"](p0.lay.L, p0.marg), run_settings, devices, dtype,
                                     batch=B, group=C, prop_var0=structure["prop_var0"],
                                     adapt_mass=WARM_ADAPT_MASS or not warm)
                for b0 in range(0, len(g), per_batch):
                    idx = g[b0:b0 + per_batch]
                    inp = _stack([preps[i] for i in idx], per_batch, C)
                    t_b = time.perf_counter()
                    c_before = runner.compile_seconds

                    def on_chunk(it, _base=iters_done):
                        if progress is not None:
                            el = time.perf_counter() - t_run
                            now = _base + it
                            progress("refits", done, n, el / max(now, 1) * (iters_total - now))

                    warm_st, samp = runner.run(inp, settings.draws, cancel=cancel, on_chunk=on_chunk,
                                               gate_names=_gate_names(p0, gibbs), n_real=len(idx),
                                               reported=[tuple(preps[i].request.reported) for i in idx],
                                               precision=[preps[i].request.precision for i in idx],
                                               spread=spread)
                    ran = settings.draws if runner.stops is None else max(d for d, _, _ in runner.stops)
                    iters_done += W + ran
                    batches_done += 1
                    # a run length set by the gate: the batches left at this pace
                    iters_total = max(iters_total, iters_done + (n_batches - batches_done) * iters_done / batches_done)
                    wall_b = time.perf_counter() - t_b
                    compile_b = runner.compile_seconds - c_before
                    device = (f"cpu x{runner.D}" if kind == "cpu" else f"{kind}: {devices[0].device_kind}")
                    for j, i in enumerate(idx):
                        sl = slice(j * C, (j + 1) * C)
                        ws = None if warm_st is None else {k: v[sl] for k, v in warm_st.items()}
                        keep = ran if runner.stops is None else runner.stops[j][0]
                        sp = {k: v[sl, :keep] for k, v in samp.items()}
                        share = (wall_b - compile_b) / len(idx)
                        timings = {"design": preps[i].seconds, "compile": runner.compile_seconds,
                                   "sampling": share}
                        notes = [f"refit ({how}; batch of {len(idx)} refit(s), {runner.compiles} compile(s) "
                                 f"for {len(g)} refit(s))"]
                        if runner.stops is not None:
                            from .stopping import stop_note

                            d_j, chk_j, why_j = runner.stops[j]
                            notes.append(stop_note(chk_j, why_j, d_j, settings))
                        out[i] = _posterior(design, spec, preps[i], run_settings, ws, sp, gibbs, device, timings,
                                            preps[i].seconds + share, notes)
                        if on_result is not None:
                            on_result(i, out[i])
                    done += len(idx)
                    if progress is not None:
                        el = time.perf_counter() - t_run
                        progress("refits", done, n, el / max(iters_done, 1) * (iters_total - iters_done))
    finally:
        # as in fit(): free the compiled executables (their JIT code holds memory maps)
        jax.clear_caches()
    if progress is not None:
        progress("refits done", n, n, 0.0)
    return out  # type: ignore[return-value]
