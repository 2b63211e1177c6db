"""The batched chain runner of the refits (:mod:`.refit`): many refits of one parent in one compile.

A refit keeps the parent's cells and levels and only changes their counts (:mod:`.refit`), so
every refit of one parent has the same coordinates' *shapes*: what differs is the counts and what
is derived from them (the partial-centring constants c0, c1, the centring weights pi, the
auxiliary widths, the scale moves' slopes).  Here those are *arguments* of the jitted chunk
(``data``, one row per batch element) instead of constants closed over, as
:func:`.chains._run_chains` has them, so one compiled chunk runs every refit of an analysis.

The batch axis holds (refit, chain) pairs: ``B = refits x chains`` elements, spread over the
devices by ``pmap`` and vectorised within a device by ``vmap`` (:func:`.chains._per_device`; a
device with one element runs it without a vmap).  Warmup and sampling are the same compiled
chunk; the chains of one refit pool their adaptation (cross-chain adaptation,
:mod:`.parameterisation` item 5) with each other only.

The moves after each NUTS transition (scale moves, item 7; collapsed Gibbs step, item 6) are
those of :func:`.chains._run_chains`, the same functions (:mod:`.moves`) called with this element's
``data``; the draws of a refit do not depend on the batch it ran in only up to float rounding
(vectorised reductions).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .chains import _STATS, _per_device
from .moves import adapt_scale_steps, gibbs_step, scale_moves
from .parameterisation import _make_functions, _per_level_broadcaster
from .posterior import CancelCallback, FitCancelled, SamplerSettings

#: The scale moves start from the NUTS state's potential energy (as :func:`.chains._run_chains` does)
#: instead of recomputing ``pot(z)``: one forward potential fewer per iteration and copy in the chunk.
#: ``False``: the code before (a bench switch).
SCALE_U0 = True


@dataclass
class BatchInputs:
    """Everything that differs between the elements of a batch, stacked on a leading axis ``B``.

    ``data``: the counts and derived constants (y, n, c0, c1, pi, pi_norm, sref2, gam);
    ``z0``: starting points {"g", "x"}; ``imm_g``, ``imm_x``: initial inverse mass matrices;
    ``step0``: initial step sizes; ``u_in0``, ``ls_in0``: the Gibbs block's inner start;
    ``keys``: PRNG keys.  ``group``: elements per refit (its chains), consecutive.
    """

    data: dict
    z0: dict
    imm_g: np.ndarray
    imm_x: np.ndarray
    step0: np.ndarray
    u_in0: np.ndarray
    ls_in0: np.ndarray
    keys: np.ndarray
    group: int


class BatchRunner:
    """One compiled sampler for refits of one parent structure; call :meth:`run` per batch.

    Parameters
    ----------
    design
        The parent design (its codes and level counts: the structure).
    lay
        A layout of the parent structure (terms, J, offsets, host chains, priors); its
        data-derived arrays are ignored (they come with each batch).
    gibbs, marg, mh_steps
        The collapsed block, the integrated term (then its counts are part of the structure)
        and the Metropolis steps of the collapsed move.
    settings
        Sampler settings (``warmup`` is the warmup of every element).
    devices
        The devices to spread a batch over.
    batch
        Elements per batch (a multiple of ``group`` and of the devices used).
    adapt_mass
        Adapt the inverse mass matrix during warmup (numpyro's windows); False keeps each
        element's initial one and adapts the step size only.
    """

    def __init__(self, design, spec, lay, gibbs, marg, mh_steps: int, settings: SamplerSettings, devices, dtype,
                 batch: int, group: int, prop_var0: np.ndarray, adapt_mass: bool = True):
        import jax
        import jax.numpy as jnp
        from numpyro.infer.hmc import hmc

        self.settings, self.lay, self.gibbs, self.dtype = settings, lay, gibbs, dtype
        self.spec = spec
        self.B, self.G = batch, group
        D = 1
        for d in range(min(batch, len(devices)), 0, -1):
            if batch % d == 0:
                D = d
                break
        self.D, self.per = D, batch // D
        self.devs = devices[:D]
        self.compiles = 0
        self.compile_seconds = 0.0
        self.stops = None
        W = settings.warmup
        self.W = W
        S = settings.chunk_size
        self.S = S
        cols = [spec.term(nm).columns for nm in design.term_names]
        memo: dict = {}

        def fns(data):
            # one set of closures per traced data (the functions close over its tracers)
            key = tuple(id(v) for v in jax.tree.leaves(data))
            if key not in memo:
                memo.clear()
                memo[key] = _make_functions(design, lay, dtype, cols, gibbs, mh_steps, marg, consts=data)
            return memo[key]

        def pgen(s, data):
            return fns(data)[0](s)

        init_kernel, sample_kernel = hmc(potential_fn_gen=pgen, algo="NUTS")
        dense = [("g",)] if settings.dense_globals else []
        nG = 0 if gibbs is None else len(gibbs.group.terms)
        nP = nG + 1 if nG else 0
        self.nG = nG
        prop0 = jnp.asarray(np.diag(prop_var0), dtype) if nG else None
        welford_from = int(0.15 * W)
        n_scale = settings.scale_steps if settings.scale_steps > 0 else 0
        per_level = _per_level_broadcaster(lay.J)
        K = lay.K

        def _s(aux, data):
            return fns(data)[3](aux["u"]) if gibbs is not None else jnp.zeros((), dtype)

        def _imm(imm_g, imm_x):
            return {("g",): imm_g, ("x",): imm_x}

        def _init_one(z, key, aux, data, imm_g, imm_x, step):
            return init_kernel(z, num_warmup=W, step_size=step, inverse_mass_matrix=_imm(imm_g, imm_x),
                               dense_mass=dense, target_accept_prob=settings.target_accept,
                               max_tree_depth=settings.max_tree_depth, find_heuristic_step_size=False,
                               adapt_mass_matrix=adapt_mass, rng_key=key, model_args=(_s(aux, data), data))

        def _scale_moves(z, aux, key, pot, cov_g, data, U0):
            # as in chains._run_chains (:func:`.moves.scale_moves`); gam, c0, c1 are this element's
            inc = fns(data)[0].incremental
            return scale_moves(z, aux["sm_lstep"], key, pot, cov_g, K=K, n_scale=n_scale, per_level=per_level,
                               c0=data["c0"], c1=data["c1"], gam=data["gam"], dtype=dtype,
                               U0=U0 if SCALE_U0 else None,
                               incremental=None if inc is None else inc(_s(aux, data)))

        def _gibbs_step(st, aux, data):
            _, constrain, move, offset = fns(data)
            return gibbs_step(st, aux, gibbs=gibbs, move=move, constrain=constrain,
                              value_and_grad_at=lambda s: jax.value_and_grad(pgen(s, data)), offset=offset,
                              prop0=prop0, nP=nP, W=W, welford_from=welford_from, dtype=dtype)

        def _extra_moves(st, aux, data):
            key = st.rng_key
            z = st.z
            if n_scale:
                # U at z is the NUTS state's, as in chains._run_chains
                z, rates, key = _scale_moves(z, aux, key, pgen(_s(aux, data), data),
                                             st.adapt_state.inverse_mass_matrix[("g",)], data, st.potential_energy)
                aux = adapt_scale_steps(aux, rates, st.i, W)
            st = st._replace(z=z, rng_key=key)
            if gibbs is not None:
                return _gibbs_step(st, aux, data)
            pe, zg = jax.value_and_grad(pgen(_s(aux, data), data))(z)
            ok = jnp.isfinite(pe)
            return st._replace(z=z, potential_energy=jnp.where(ok, pe, st.potential_energy),
                               z_grad=jax.tree.map(lambda a, b: jnp.where(ok, a, b), zg, st.z_grad)), aux

        def _record(st, aux, data):
            sigma, mu, u = fns(data)[1](st.z)
            rec = {"diverging": st.diverging, "energy": st.energy, "num_steps": st.num_steps,
                   "accept_prob": st.accept_prob, "step_size": st.adapt_state.step_size,
                   "potential_energy": st.potential_energy, "nuts_sigma": sigma, "mu": mu, "gibbs_ls": aux["ls"],
                   "marg_sigma": jnp.exp(st.z["g"][2 * K + 1:]),
                   "gibbs_accept": aux["acc"], "scale_accept": aux["sm_acc"]}
            if settings.keep_random_effects:
                rec["nuts_u"] = u.astype(jnp.float32)
                rec["gibbs_u"] = aux["u"].astype(jnp.float32)
            return rec

        def chunk_one(state, aux, data, n_iter):
            proto = jax.eval_shape(_record, state, aux, data)
            buf0 = jax.tree.map(lambda a: jnp.zeros((S, *a.shape), a.dtype), proto)

            def body(i, carry):
                st, ax, buf = carry
                st = sample_kernel(st, model_args=(_s(ax, data), data))
                if gibbs is not None or n_scale:
                    st, ax = _extra_moves(st, ax, data)
                rec = _record(st, ax, data)
                buf = jax.tree.map(lambda b, r: b.at[i].set(r), buf, rec)
                return st, ax, buf

            return jax.lax.fori_loop(0, n_iter, body, (state, aux, buf0))

        per = self.per
        self._init = jax.pmap(_per_device(_init_one, (0,) * 7, per), devices=self.devs)
        self._chunk_fn = jax.pmap(_per_device(chunk_one, (0, 0, 0, None), per), in_axes=(0, 0, 0, None),
                                  devices=self.devs)
        self._chunk = None
        self.nP = nP

    # -- host side ---------------------------------------------------------------------
    def _shard(self, a, dtype=None):
        import jax.numpy as jnp

        a = np.asarray(a)
        a = jnp.asarray(a, dtype) if dtype is not None else jnp.asarray(a)
        return a.reshape(self.D, self.per, *a.shape[1:])

    def run(self, inp: BatchInputs, draws: int, cancel: CancelCallback | None = None, on_chunk=None,
            gate_names=None, n_real: int | None = None, reported=None, precision=None, spread=None):
        """Warm up and sample one batch; returns (warmup stats, draws) with leading axis ``B``.

        ``on_chunk(iterations_done_in_this_batch)`` is called after every chunk; ``cancel`` is
        polled before each chunk.  With ``settings.stop == "gate"`` the sampling phase runs until
        every refit of the batch (the first ``n_real`` groups; the others are padding) passes the
        gate or diverged, or until ``settings.max_draws`` (:meth:`_until_converged`); then
        :attr:`stops` holds each refit's (draws per chain, check, why), and the draws returned are
        the batch's longest run: the caller keeps each refit's own first ``draws``.  ``reported`` (one
        sequence per real refit, empty for none) names the quantities each refit reports: a refit with
        some is checked by :func:`.stopping.check_reported` instead of :func:`.stopping.check_gate`, or, when
        ``precision`` (one :class:`~.stopping.PrecisionRule` or None per real refit) gives it a rule, by
        :func:`.stopping.check_precision` with the tolerance of ``spread`` (a
        :class:`~.stopping.SpreadTracker` the refit's median is added to when it stops).
        """
        import jax
        import jax.numpy as jnp
        from numpyro.infer.hmc_util import build_adaptation_schedule

        dt = self.dtype
        B, G, W, S = self.B, self.G, self.W, self.S
        data = {k: self._shard(v, dt) for k, v in inp.data.items()}
        z0 = {k: self._shard(v, dt) for k, v in inp.z0.items()}
        nP, K = self.nP, self.lay.K
        aux = {"u": inp.u_in0, "ls": inp.ls_in0, "wm": np.zeros((B, nP)), "w2": np.zeros((B, nP, nP)),
               "wn": np.zeros(B), "acc": np.zeros(B), "lscale": np.zeros(B),
               "sm_lstep": np.zeros((B, K)), "sm_acc": np.zeros((B, K))}
        aux = {k: self._shard(v, dt) for k, v in aux.items()}
        keys = self._shard(inp.keys)
        t0 = time.perf_counter()
        state = self._init(z0, keys, aux, data, self._shard(inp.imm_g, dt), self._shard(inp.imm_x, dt),
                           self._shard(inp.step0, dt))
        jax.block_until_ready(state)
        if self._chunk is None:
            # compiled once: every later batch of this runner reuses it
            self._chunk = self._chunk_fn.lower(state, aux, data, jnp.asarray(S, jnp.int32)).compile()
            self.compiles += 1
            self.compile_seconds += time.perf_counter() - t0
        done_total = 0

        def phase(total, keep, stops=()):
            nonlocal state, aux, done_total
            done, out = 0, []
            stops = sorted(s for s in stops if 0 < s < total)
            while done < total:
                if cancel is not None and cancel():
                    raise FitCancelled("refits cancelled by the user.")
                nxt = min([s for s in stops if s > done] + [total])
                m = min(S, nxt - done)
                state, aux, buf = self._chunk(state, aux, data, jnp.asarray(m, jnp.int32))
                buf = jax.device_get(buf)
                if keep:
                    out.append(jax.tree.map(lambda a: np.asarray(a)[:, :, :m], buf))
                else:
                    out.append({k: np.asarray(buf[k])[:, :, :m] for k in _STATS})
                done += m
                done_total += m
                if done in stops and self.settings.pool_adaptation and G > 1:
                    state, aux = self._pool_welford(state, aux)
                if on_chunk is not None:
                    on_chunk(done_total)
            return jax.tree.map(lambda *a: np.concatenate(a, axis=2).reshape(B, total, *a[0].shape[3:]), *out)

        def _set_state(st, ax, m):
            nonlocal state, aux, done_total
            state, aux = st, ax
            done_total += m

        sched = build_adaptation_schedule(W) if W > 0 else []
        stops = [w.end for w in sched[1:-1]]
        warm = phase(W, False, stops) if W > 0 else None
        if self.settings.pool_adaptation and G > 1 and W > 0:
            state = self._pool_step_size(state)
        if self.settings.stop == "gate":
            samp = self._until_converged(phase_state=(lambda: (state, aux), _set_state), data=data, cancel=cancel,
                                         on_chunk=on_chunk, names=gate_names,
                                         n_real=n_real or B // G, offset=lambda: done_total,
                                         reported=reported, precision=precision, spread=spread)
        else:
            self.stops = None
            samp = phase(draws, True)
        return warm, samp

    def _until_converged(self, phase_state, data, cancel, on_chunk, names, n_real: int, offset, reported=None,
                         precision=None, spread=None):
        """The sampling phase under ``stop="gate"`` (:mod:`.stopping`), per refit of the batch.

        Every ``check_every`` draws per chain from ``settings.draws`` on, each refit's chains are
        looked at on their own (:func:`.stopping.check_gate` on every variance component: R-hat,
        bulk and tail ESS with the margin, divergences).  A refit is done at its first look that
        passes or sees a divergence; its run length is that look, whatever its batch-mates do
        (their later draws are cut off by the caller), so a refit's draws do not depend on the
        batch it ran in.  The batch stops when every refit is done or at ``settings.max_draws``.
        A refit with reported quantities (``reported[r]``) is looked at by
        :func:`.stopping.check_reported` instead: R-hat on every component and quantity, the ESS on its
        quantities only; one with a precision rule (``precision[r]``) by :func:`.stopping.check_precision`,
        held to ``spread``'s tolerance at that look (refits that stopped at the same look are added to it
        after all of them were looked at, so the order within a batch does not matter).
        """
        import jax
        import jax.numpy as jnp

        from .stopping import SpreadTracker, check_gate, check_precision, check_reported, next_check

        spread = spread if spread is not None else SpreadTracker()

        get, put = phase_state
        s = self.settings
        B, G, S = self.B, self.G, self.S
        out, done, look = [], 0, s.draws
        stops: list = [None] * n_real
        last = [None] * n_real
        while True:
            if cancel is not None and cancel():
                raise FitCancelled(f"refits cancelled by the user during sampling ({done} draws per chain).")
            m = min(S, look - done)
            state, aux = get()
            state, aux, buf = self._chunk(state, aux, data, jnp.asarray(m, jnp.int32))
            put(state, aux, m)
            buf = jax.device_get(buf)
            out.append(jax.tree.map(lambda a: np.asarray(a)[:, :, :m], buf))
            done += m
            if on_chunk is not None:
                on_chunk(offset())
            if done != look:
                continue
            sig = np.concatenate([np.concatenate([o["nuts_sigma"], o["gibbs_ls"], o["marg_sigma"]], axis=-1)
                                  .reshape(B, o["mu"].shape[2], -1) for o in out], axis=1)
            div = np.concatenate([np.asarray(o["diverging"]).reshape(B, -1) for o in out], axis=1)
            stopped_now = []
            for r in range(n_real):
                if stops[r] is not None:
                    continue
                sl = slice(r * G, (r + 1) * G)
                q = reported[r] if reported else ()
                rule = precision[r] if precision else None
                n_nuts = out[0]["nuts_sigma"].shape[-1]
                log_cols = range(n_nuts, n_nuts + out[0]["gibbs_ls"].shape[-1])
                if q and rule is not None:
                    chk = check_precision(sig[sl], int(div[sl].sum()), names, q, self.spec, rule,
                                          tolerance=spread.tolerance(rule), log_cols=log_cols)
                elif q:
                    chk = check_reported(sig[sl], int(div[sl].sum()), names, q, self.spec, log_cols=log_cols)
                else:
                    chk = check_gate(sig[sl], int(div[sl].sum()), names)
                last[r] = chk
                if chk.passed or chk.divergences:
                    stops[r] = (done, chk, "passed" if chk.passed else "diverged")
                    if rule is not None and chk.values:
                        stopped_now.append((rule.group, chk.values[0]))
            for group, value in stopped_now:
                spread.add(group, value)
            if all(x is not None for x in stops) or done >= s.max_draws:
                break
            look = next_check(done, s.check_every, s.max_draws)
        self.stops = [x if x is not None else (done, last[r], "max_draws") for r, x in enumerate(stops)]
        return jax.tree.map(lambda *a: np.concatenate(a, axis=2).reshape(B, done, *a[0].shape[3:]), *out)

    # cross-chain adaptation within each refit's chains (as chains._run_chains, per group)
    def _grouped(self, a):
        a = np.asarray(a)
        return a.reshape(self.B // self.G, self.G, *a.shape[2:])

    def _ungroup(self, a):
        a = np.asarray(a)
        return a.reshape(self.D, self.per, *a.shape[2:])

    def _pooled(self, mean, m2, n):
        mean = self._grouped(mean).astype(np.float64)  # (R, G, d)
        m2 = self._grouped(m2).astype(np.float64)  # (R, G, d) or (R, G, d, d)
        n = self._grouped(n).astype(np.float64)  # (R, G)
        N = n.sum(1)  # (R,)
        mu = (n[..., None] * mean).sum(1) / np.maximum(N, 1.0)[:, None]
        d = mean - mu[:, None, :]
        if m2.ndim == 4:
            m2p = m2.sum(1) + np.einsum("rc,rci,rcj->rij", n, d, d)
        else:
            m2p = m2.sum(1) + (n[..., None] * d * d).sum(1)
        return mu, m2p, N

    def _rep(self, a, dt):
        a = np.asarray(a).astype(dt)  # (R, ...)
        a = np.repeat(a[:, None], self.G, axis=1).reshape(self.B, *a.shape[1:])
        return a.reshape(self.D, self.per, *a.shape[1:])

    def _pool_welford(self, st, ax):
        import jax

        st = jax.device_get(st)
        mm = st.adapt_state.mm_state
        pooled = {}
        for blk, (mean, m2, n) in mm.items():
            mu, m2p, N = self._pooled(mean, m2, n)
            if N.min() < 2:
                return st, ax
            dt = np.asarray(mean).dtype
            pooled[blk] = (self._rep(mu, dt), self._rep(m2p, dt), self._rep(N.astype(np.asarray(n).dtype),
                                                                              np.asarray(n).dtype))
        st = st._replace(adapt_state=st.adapt_state._replace(mm_state=pooled))
        if self.nG:
            ax = jax.device_get(ax)
            mu, m2p, N = self._pooled(ax["wm"], ax["w2"], ax["wn"])
            if N.min() > 1:
                dt = np.asarray(ax["wm"]).dtype
                ax = {**ax, "wm": self._rep(mu, dt), "w2": self._rep(m2p, dt), "wn": self._rep(N, dt)}
        return st, ax

    def _pool_step_size(self, st):
        import jax

        st = jax.device_get(st)
        eps = self._grouped(st.adapt_state.step_size)  # (R, G)
        med = np.median(eps, axis=1)
        return st._replace(adapt_state=st.adapt_state._replace(
            step_size=self._rep(med, np.asarray(eps).dtype)))
