"""The chain runner: NUTS transitions and the extra moves, in jitted chunks, on parallel devices.

The run is split into jitted chunks of ``chunk_size`` iterations (a ``lax.fori_loop`` over
numpyro's functional ``sample_kernel`` and the moves of :mod:`.parameterisation`), so the
caller sees progress and can cancel between chunks; adaptation state travels in the kernel
state across chunks and the draws do not depend on the chunk size.  Same seed and settings ->
identical draws.

Cross-chain adaptation (:mod:`.parameterisation`, item 5) pools the chains' warmup (co)variance
before each slow adaptation window closes; the scale moves (item 7) and the collapsed Gibbs step
(item 6) run after every NUTS transition inside the compiled chunk.
"""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

from .devices import _chain_layout, _to_device
from .moves import adapt_scale_steps, gibbs_step, scale_moves
from .parameterisation import _initial_gibbs, _initial_point, _make_functions, _Marginal, _per_level_broadcaster
from .posterior import CancelCallback, FitCancelled, ProgressCallback, SamplerSettings

#: When a list, every look of the warmup at a slow window's end appends its metric and step-size
#: changes (:mod:`.warmup`) to it: bench/investigations/bench_warmup.py reads them.  None in the app.
WINDOW_LOG: list | None = None
#: XLA compiler options for the NUTS initialisation's program, which runs once per fit.  Empty: XLA's
#: defaults.  ``{"xla_backend_optimization_level": 0}`` compiled it 1.4-3x faster on a loaded box (TB2,
#: bench/investigations/bench_init_compile.py), but changes the draws of a seed (the start's rounding) and its saving on
#: the whole compile was not measurable there, so it is not the default (docs/sampler-measurements.md).
INIT_COMPILER_OPTIONS: dict = {}

#: Called once after warmup as ``WARMUP_HOOK(state=, aux=, potential_gen=, offset=, layout=)`` with the
#: chains' kernel states (adapted mass matrix and step size included): bench/investigations/bench_geometry.py uses it
#: to find the direction that limits the step size.  None in the app.
WARMUP_HOOK: Callable | None = None


# -- the chunked runner --------------------------------------------------------------------
def _per_device(f, in_axes, per: int):
    """``f`` over the ``per`` chains of one device: vmapped, or, for one chain, called directly.

    A vmap over a batch of one is not free on XLA CPU: it changes the layout of every
    intermediate, and the pooled potential's value and gradient took 1.94 ms under it against
    0.84 ms without (one core, measured); so a lone chain is squeezed, run, and given its
    batch axis back.
    """
    import jax

    if per != 1:
        return jax.vmap(f, in_axes=in_axes)

    def one(*args):
        args = [jax.tree.map(lambda a: a[0], x) if ax == 0 else x for x, ax in zip(args, in_axes)]
        return jax.tree.map(lambda a: a[None], f(*args))

    return one


_STATS = ("diverging", "energy", "num_steps", "accept_prob", "step_size", "potential_energy")


def draws_by_term(design, lay, gibbs, marg, samp: dict, warm: dict | None, settings: SamplerSettings):
    """The chains' raw draws as (sigma, random effects, sample stats), each keyed by term name.

    One reading of the runner's output for :func:`.sampler.fit` and the refits
    (:mod:`.refit`): the NUTS terms' sigmas and effects by layout position, the collapsed
    block's inner terms (sampled on the log scale), the integrated term's sigma, and the
    per-draw statistics (tree depth from the step count; the Gibbs and scale-move acceptance;
    the warmup's steps and divergences when kept).
    """
    names = design.term_names
    sigma, effects = {}, {}
    for i, k in enumerate(lay.terms):
        sigma[names[k]] = samp["nuts_sigma"][:, :, i].astype(np.float64)
        if settings.keep_random_effects:
            effects[names[k]] = samp["nuts_u"][:, :, lay.offsets[i]:lay.offsets[i + 1]]
    if gibbs is not None:
        for i, k in enumerate(gibbs.inner):
            sigma[names[k]] = np.exp(samp["gibbs_ls"][:, :, i].astype(np.float64))
            if settings.keep_random_effects:
                effects[names[k]] = samp["gibbs_u"][:, :, gibbs.offsets[i]:gibbs.offsets[i + 1]]
    if marg is not None:
        sigma[names[marg.term.term]] = samp["marg_sigma"][:, :, 0].astype(np.float64)
    sigma = {nm: sigma[nm] for nm in names}
    effects = {nm: effects[nm] for nm in names if nm in effects}
    stats = {k: samp[k] for k in _STATS}
    stats["tree_depth"] = np.floor(np.log2(np.maximum(stats["num_steps"], 1))).astype(np.int64) + 1
    if gibbs is not None:
        stats["gibbs_accept"] = samp["gibbs_accept"]
    if settings.scale_steps:
        stats["scale_accept"] = samp["scale_accept"]
    if warm is not None:
        stats["warmup_num_steps"] = warm["num_steps"]
        stats["warmup_diverging"] = warm["diverging"]
    return sigma, effects, stats


def _run_chains(design, spec, lay, gibbs, rough, settings: SamplerSettings, devices, dtype,
                progress: ProgressCallback | None, cancel: CancelCallback | None, timings: dict,
                marg: _Marginal | None = None, mh_steps: int = 0):
    import jax
    import jax.numpy as jnp
    from numpyro.infer.hmc import hmc
    from numpyro.infer.hmc_util import build_adaptation_schedule

    C = settings.chains
    D = _chain_layout(C, len(devices))
    devs = devices[:D]
    per = C // D
    cols = [spec.term(nm).columns for nm in design.term_names]
    potential_gen, constrain, move, offset = _make_functions(design, lay, dtype, cols, gibbs, mh_steps, marg)
    init_kernel, sample_kernel = hmc(potential_fn_gen=potential_gen, algo="NUTS")
    dense = [("g",)] if settings.dense_globals else []
    init_z, inv_mass = _initial_point(lay, rough, C, settings.seed, marg=marg)
    # host arrays put on the device (or given to pmap as numpy): an eager jnp op compiles (_to_device)
    imm = {("g",): _to_device(np.diag(inv_mass["g"]) if settings.dense_globals else inv_mass["g"], dtype),
           ("x",): _to_device(inv_mass["x"], dtype)}
    W = settings.warmup
    nG = 0 if gibbs is None else len(gibbs.group.terms)
    if gibbs is not None:
        u_in0, ls_in0, prop_var0 = _initial_gibbs(gibbs, rough, C, settings.seed)

    else:
        u_in0, ls_in0, prop_var0 = np.zeros((C, 0)), np.zeros((C, 0)), np.zeros(0)
    # auxiliary (Gibbs) state per chain: inner random effects and log-sds, the Welford
    # accumulator of log sigma_G that tunes the Metropolis proposal during warmup, its rate
    nP = nG + 1 if nG else 0  # Metropolis dimension: log sigma_G and mu
    aux0 = {"u": u_in0, "ls": ls_in0, "wm": np.zeros((C, nP)), "w2": np.zeros((C, nP, nP)), "wn": np.zeros(C),
            "acc": np.zeros(C), "lscale": np.zeros(C),
            "sm_lstep": np.zeros((C, lay.K)), "sm_acc": np.zeros((C, lay.K))}
    prop0 = _to_device(np.diag(prop_var0), dtype)
    welford_from = int(0.15 * W)
    step0 = float((init_z["x"].shape[1] + init_z["g"].shape[1]) ** -0.25)

    def _s(aux):
        return offset(aux["u"]) if gibbs is not None else jnp.zeros((), dtype)

    def _init_one(z, chain, aux, key0):
        key = jax.random.split(key0, C)[chain]
        # no heuristic step-size search: numpyro's would capture the potential of the first
        # offset s; the initial step is the usual d^(-1/4) scaling for a preconditioned target
        return init_kernel(z, num_warmup=W, step_size=step0, inverse_mass_matrix=imm, dense_mass=dense,
                           target_accept_prob=settings.target_accept, max_tree_depth=settings.max_tree_depth,
                           find_heuristic_step_size=False, rng_key=key, model_args=(_s(aux),))

    # the chains' keys are split inside the compiled initialisation, from the seed's key built on the
    # host (threefry's PRNGKey(s) is [0, s] for 0 <= s < 2^31): three eager compiles fewer, same keys
    if 0 <= settings.seed < 2 ** 31 and jax.config.jax_default_prng_impl == "threefry2x32":
        key0 = np.array([0, settings.seed], dtype=np.uint32)
    else:
        key0 = np.asarray(jax.random.PRNGKey(settings.seed))
    chain_ids = np.arange(C, dtype=np.int32).reshape(D, per)
    # numpy inputs: pmap splits a host array over the devices without compiling a slice per input
    shard = lambda a: np.asarray(a, np.dtype(dtype)).reshape(D, per, *np.shape(a)[1:])  # noqa: E731
    z0 = {k: shard(v) for k, v in init_z.items()}
    aux = {k: shard(v) for k, v in aux0.items()}
    S = settings.chunk_size
    grad_gen = lambda s: jax.value_and_grad(potential_gen(s))  # noqa: E731

    # Scale moves along the sigma ridge (Liu and Sabatti 2000 group moves): for term k,
    # (log sigma_k, x_kj) -> (log sigma_k + d, x_kj exp(gamma_j d)) is a one-parameter group;
    # a Metropolis step on d with target exp(-U) exp(d sum_j gamma_j) leaves the posterior
    # invariant.  gamma_j = d log a_j / d log sigma at the rough sigma is the slope of the
    # conditional mean of x_j in log sigma (Gaussian approximation), so the move travels
    # along the ridge that couples a term's many weakly informed levels to its sigma, which
    # NUTS crosses only slowly (benchmark:task:model in the pooled model: 27,000 levels).
    sl_pos = [(int(lay.offsets[i]), int(lay.offsets[i + 1])) for i in range(lay.K)]
    sig0 = rough.sigma[lay.terms]
    gam_np = np.concatenate([lay.c0[a:b] / (lay.c0[a:b] + lay.c1[a:b] * sig0[i] ** 2)
                             for i, (a, b) in enumerate(sl_pos)])
    gam = _to_device(gam_np, dtype)
    n_scale = settings.scale_steps if settings.scale_steps > 0 else 0

    per_level = _per_level_broadcaster(lay.J)
    c0v = _to_device(lay.c0, dtype)
    c1v = _to_device(lay.c1, dtype)

    def _scale_moves(z, aux, key, pot, cov_g, U0):
        # shared with the refits' batches (:func:`.moves.scale_moves`); the proposals' potential in
        # closed form from the loop's carried state where it applies (``parameterisation.SCALE_LEVERS``)
        inc = potential_gen.incremental
        return scale_moves(z, aux["sm_lstep"], key, pot, cov_g, K=lay.K, n_scale=n_scale, per_level=per_level,
                           c0=c0v, c1=c1v, gam=gam, dtype=dtype, U0=U0,
                           incremental=None if inc is None else inc(_s(aux)))

    def _extra_moves(st, aux):
        """Scale moves and the collapsed Gibbs step after a NUTS transition, then fresh U and grad."""
        key = st.rng_key
        z = st.z
        if n_scale:
            # U at z is the NUTS state's: the transition just computed it at the same offset
            z, rates, key = _scale_moves(z, aux, key, potential_gen(_s(aux)),
                                         st.adapt_state.inverse_mass_matrix[("g",)], st.potential_energy)
            aux = adapt_scale_steps(aux, rates, st.i, W)
        st = st._replace(z=z, rng_key=key)
        if gibbs is not None:
            return _gibbs_step(st, aux)
        pe, zg = grad_gen(_s(aux))(z)
        ok = jnp.isfinite(pe)
        return st._replace(z=z, potential_energy=jnp.where(ok, pe, st.potential_energy),
                           z_grad=jax.tree.map(lambda a, b: jnp.where(ok, a, b), zg, st.z_grad)), aux

    def _gibbs_step(st, aux):
        # shared with the refits' batches (:func:`.moves.gibbs_step`)
        return gibbs_step(st, aux, gibbs=gibbs, move=move, constrain=constrain, value_and_grad_at=grad_gen,
                          offset=offset, prop0=prop0, nP=nP, W=W, welford_from=welford_from, dtype=dtype)

    def _record(st, aux):
        sigma, mu, u = constrain(st.z)
        rec = {"diverging": st.diverging, "energy": st.energy, "num_steps": st.num_steps,
               "accept_prob": st.accept_prob, "step_size": st.adapt_state.step_size,
               "potential_energy": st.potential_energy, "nuts_sigma": sigma, "mu": mu, "gibbs_ls": aux["ls"],
               "marg_sigma": jnp.exp(st.z["g"][2 * lay.K + 1:]),
               "gibbs_accept": aux["acc"], "scale_accept": aux["sm_acc"]}
        if settings.keep_random_effects:
            rec["nuts_u"] = u.astype(jnp.float32)
            rec["gibbs_u"] = aux["u"].astype(jnp.float32)
        return rec

    def chunk_one(state, aux, n_iter):
        proto = jax.eval_shape(_record, state, aux)
        buf0 = jax.tree.map(lambda a: jnp.zeros((S, *a.shape), a.dtype), proto)

        def body(i, carry):
            st, ax, buf = carry
            st = sample_kernel(st, model_args=(_s(ax),))
            if gibbs is not None or n_scale:
                st, ax = _extra_moves(st, ax)
            rec = _record(st, ax)
            buf = jax.tree.map(lambda b, r: b.at[i].set(r), buf, rec)
            return st, ax, buf

        return jax.lax.fori_loop(0, n_iter, body, (state, aux, buf0))

    t0 = time.perf_counter()
    if progress:
        progress("compile", 0, 1, None)
    init_p = jax.pmap(_per_device(_init_one, (0, 0, 0, None), per), in_axes=(0, 0, 0, None), devices=devs)
    # the initialisation runs once, so its code need not be fast (INIT_COMPILER_OPTIONS may trade speed for compile)
    init_p = init_p.lower(z0, chain_ids, aux, key0).compile(compiler_options=dict(INIT_COMPILER_OPTIONS) or None)
    state = init_p(z0, chain_ids, aux, key0)
    jax.block_until_ready(state)
    timings["compile_init"] = time.perf_counter() - t0
    n_arg = np.int32(S)
    # one compiled chunk serves warmup and sampling (compiling two cost as much as a short TB2 run)
    chunk = jax.pmap(_per_device(chunk_one, (0, 0, None), per), in_axes=(0, 0, None), devices=devs)
    chunk = chunk.lower(state, aux, n_arg).compile()
    timings["compile"] = time.perf_counter() - t0
    cpu0 = time.process_time()  # the warmup's and sampling's CPU: a pace the machine's load does not inflate
    if progress:
        progress("compile", 1, 1, None)

    def _phase(total, name, keep, stops=()):
        """Run ``total`` iterations in chunks, stopping also at ``stops`` to pool adaptation across chains."""
        nonlocal state, aux
        done = 0
        out = []
        t_phase = time.perf_counter()
        stops = sorted(s for s in stops if 0 < s < total)
        while done < total:
            if cancel is not None and cancel():
                raise FitCancelled(f"fit cancelled by the user during {name} ({done} of {total} iterations).")
            nxt = min([s for s in stops if s > done] + [total])
            m = min(S, nxt - done)
            state, aux, buf = chunk(state, aux, np.int32(m))
            buf = jax.device_get(buf)
            if keep:
                out.append(jax.tree.map(lambda a: np.asarray(a)[:, :, :m], buf))
            else:
                out.append({k: np.asarray(buf[k])[:, :, :m] for k in (*_STATS, "nuts_sigma", "gibbs_ls",
                                                                        "gibbs_accept")})
            done += m
            if done in stops and settings.pool_adaptation and C > 1:
                state, aux = _pool_welford(state, aux)
            if progress:
                el = time.perf_counter() - t_phase
                progress(name, done, total, el / done * (total - done))
        timings[name] = time.perf_counter() - t_phase
        # (D, per, m, ...) chunks -> (C, total, ...)
        return jax.tree.map(lambda *a: np.concatenate(a, axis=2).reshape(C, total, *a[0].shape[3:]), *out)

    def _pooled(mean, m2, n):
        mean = np.asarray(mean, np.float64).reshape(C, -1)
        m2 = np.asarray(m2, np.float64).reshape(C, *np.shape(m2)[2:])
        n = np.asarray(n, np.float64).reshape(C)
        N = n.sum()
        mu = (n[:, None] * mean).sum(0) / max(N, 1.0)
        d = mean - mu[None, :]
        if m2.ndim == 3:
            m2p = m2.sum(0) + np.einsum("c,ci,cj->ij", n, d, d)
        else:
            m2p = m2.sum(0) + (n[:, None] * d * d).sum(0)
        return mu, m2p, N

    def _rep(a, dt):
        a = np.asarray(a)
        return np.broadcast_to(a.astype(dt), (D, per, *a.shape)).copy()

    def _pool_welford(st, ax):
        # Cross-chain adaptation: before a slow window closes, every chain gets the Welford
        # (co)variance accumulator of all chains together, so each mass matrix is estimated from
        # C times more warmup draws and all chains leave warmup with the same metric.
        st = jax.device_get(st)
        mm = st.adapt_state.mm_state
        pooled = {}
        for blk, (mean, m2, n) in mm.items():
            mu, m2p, N = _pooled(mean, m2, n)
            if N < 2:
                return st, ax
            dt = np.asarray(mean).dtype
            pooled[blk] = (_rep(mu, dt), _rep(m2p, dt), np.full((D, per), int(N), np.asarray(n).dtype))
        st = st._replace(adapt_state=st.adapt_state._replace(mm_state=pooled))
        if nG:
            ax = jax.device_get(ax)
            mu, m2p, N = _pooled(ax["wm"], ax["w2"], ax["wn"])
            if N > 1:
                dt = np.asarray(ax["wm"]).dtype
                ax = {**ax, "wm": _rep(mu, dt), "w2": _rep(m2p, dt), "wn": np.full((D, per), N, dt)}
        return st, ax

    def _pool_step_size(st):
        # the sampling phase uses one step size for all chains (the median of the adapted ones):
        # a chain that adapted in an unusual region must not run 3x deeper trees than the others
        st = jax.device_get(st)
        eps = np.asarray(st.adapt_state.step_size)
        return st._replace(adapt_state=st.adapt_state._replace(step_size=np.full_like(eps, np.median(eps))))

    def _until_converged():
        """Sample until the draws pass the gate or the ceiling (``stop="gate"``, :mod:`.stopping`)."""
        nonlocal state, aux
        from .stopping import GATE_PHASE, check_gate, next_check, projected_draws, stop_note

        out, done, chk, why = [], 0, None, "max_draws"
        tn = design.term_names  # in the order of the columns checked below
        gate_names = ([tn[k] for k in lay.terms] + ([tn[k] for k in gibbs.inner] if gibbs is not None else [])
                      + ([tn[marg.term.term]] if marg is not None else []))
        t_phase = time.perf_counter()
        look, total = settings.draws, settings.draws  # the next look; the projected run length
        while True:
            if cancel is not None and cancel():
                raise FitCancelled(f"fit cancelled by the user during sampling ({done} draws per chain).")
            m = min(S, look - done)
            state, aux, buf = chunk(state, aux, np.int32(m))
            out.append(jax.tree.map(lambda a: np.asarray(a)[:, :, :m], jax.device_get(buf)))
            done += m
            el = time.perf_counter() - t_phase
            over_time = settings.max_seconds is not None and el >= settings.max_seconds
            if done == look or over_time:
                # every sigma the posterior will report: NUTS terms, Gibbs terms (log sd), integrated term
                sig = np.concatenate([np.concatenate([o["nuts_sigma"], o["gibbs_ls"], o["marg_sigma"]], axis=-1)
                                      .reshape(C, o["mu"].shape[2], -1) for o in out], axis=1)
                div = int(sum(int(np.sum(o["diverging"])) for o in out))
                chk = check_gate(sig, div, gate_names)
                if chk.passed or div:
                    why = "passed" if chk.passed else "diverged"
                    break
                if done >= settings.max_draws or over_time:
                    why = "max_draws" if done >= settings.max_draws else "max_seconds"
                    break
                look = next_check(done, settings.check_every, settings.max_draws)
                total = max(look, projected_draws(chk, check_every=settings.check_every,
                                                  max_draws=settings.max_draws))
            if progress:
                eta = el / done * (total - done)
                if settings.max_seconds is not None:
                    eta = min(eta, max(settings.max_seconds - el, 0.0))
                progress(GATE_PHASE, done, total, eta)
        if progress:
            progress(GATE_PHASE, done, done, 0.0)
        timings["sampling"] = time.perf_counter() - t_phase
        timings["stop_note"] = stop_note(chk, why, done, settings)  # taken out by the caller (a note, not a time)
        return jax.tree.map(lambda *a: np.concatenate(a, axis=2).reshape(C, done, *a[0].shape[3:]), *out)

    def _warmup_windows(jump):
        """Warmup with a look at each slow window's end (:mod:`.warmup`); with ``jump``, once the metric
        has settled (:func:`.warmup.settled_by_noise`), the window closes and the run goes on at
        the final buffer."""
        nonlocal state, aux
        from .warmup import expected_change, metric_change, settled_by_noise, welford_metric

        final_start, nw = sched[-1].start, len(sched)
        looks = [w.end for w in sched[1:-1]]
        first = sched[0].end + 1  # the initial buffer's step size: the start metric's
        pts = sorted(set(looks + [first]))
        out, done, ran, prev_step, note = [], 0, 0, None, None
        prev_n: dict = {}  # per block: the draws behind the metric in use (none: the start metric)
        t_phase = time.perf_counter()
        keys = (*_STATS, "nuts_sigma", "gibbs_ls", "gibbs_accept")

        def run(m):
            nonlocal state, aux, ran
            state, aux, buf = chunk(state, aux, np.int32(m))
            buf = jax.device_get(buf)
            out.append({k: np.asarray(buf[k])[:, :, :m] for k in keys})
            ran += m

        while done < W:
            if cancel is not None and cancel():
                raise FitCancelled(f"fit cancelled by the user during warmup ({done} of {W} iterations).")
            nxt = min([p for p in pts if p > done] + [W])
            m = min(S, nxt - done)
            run(m)
            done += m
            if done == first or done in looks:
                if done in looks and settings.pool_adaptation and C > 1:
                    state, aux = _pool_welford(state, aux)
                st = jax.device_get(state)
                eps = float(np.exp(np.median(np.asarray(st.adapt_state.ss_state[1]))))  # averaged log step
                if done in looks:
                    changes, noise = {}, {}
                    for blk, (mean, m2, n) in st.adapt_state.mm_state.items():
                        n_new = float(np.asarray(n)[0, 0])
                        new = welford_metric(np.asarray(mean)[0, 0], np.asarray(m2)[0, 0], n_new)
                        old = np.asarray(st.adapt_state.inverse_mass_matrix[blk])[0, 0]
                        k = "".join(blk)
                        changes[k] = metric_change(old, new)
                        noise[k] = expected_change(new.shape[0], prev_n.get(k), n_new, dense=new.ndim == 2)
                        prev_n[k] = n_new
                    sc = None if prev_step is None else math.log(eps / prev_step)
                    entry = {"iteration": done, "changes": changes, "noise": noise, "step_size": eps,
                             "step_change": sc}
                    if jump and settled_by_noise(changes, noise) and done + 1 < final_start:
                        run(1)  # the window closes with its metric, then the final buffer
                        done += 1
                        st = jax.device_get(state)
                        ad = st.adapt_state
                        state = st._replace(i=np.full_like(np.asarray(st.i), final_start),
                                            adapt_state=ad._replace(window_idx=np.full_like(
                                                np.asarray(ad.window_idx), nw - 1)))
                        entry["skipped"] = final_start - done
                        worst = max(changes, key=lambda q: changes[q] / noise[q])
                        note = (f"warmup {W - (final_start - done)} of {W} iterations: the metric had settled at "
                                f"iteration {done} (largest change {changes[worst]:.2f} in block {worst}, "
                                f"{changes[worst] / noise[worst]:.2f}x its expected noise {noise[worst]:.2f}); "
                                f"{final_start - done} slow-window iterations skipped")
                        done = final_start
                    if WINDOW_LOG is not None:
                        WINDOW_LOG.append(entry)
                prev_step = eps
            if progress:
                el = time.perf_counter() - t_phase
                progress("warmup", done, W, el / ran * (W - done))
        timings["warmup"] = time.perf_counter() - t_phase
        if note:
            timings["warmup_note"] = note  # taken out by the caller (a note, not a time)
        return jax.tree.map(lambda *a: np.concatenate(a, axis=2).reshape(C, ran, *a[0].shape[3:]), *out)

    sched = build_adaptation_schedule(W) if W > 0 else []
    stops = [w.end for w in sched[1:-1]]  # pool just before each slow window's last iteration
    if W > 0 and len(sched) > 2 and (settings.adaptive_warmup or WINDOW_LOG is not None):
        warm = _warmup_windows(settings.adaptive_warmup)
    else:
        warm = _phase(W, "warmup", False, stops) if W > 0 else None
    if WARMUP_HOOK is not None:
        WARMUP_HOOK(state=state, aux=aux, potential_gen=potential_gen, offset=_s, layout=lay)
    if settings.pool_adaptation and C > 1 and W > 0:
        state = _pool_step_size(state)
    if settings.stop == "gate":
        samp = _until_converged()
    else:
        samp = _phase(settings.draws, "sampling", True)
    timings["cpu_run"] = time.process_time() - cpu0
    return warm, samp, D
