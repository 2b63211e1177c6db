"""The moves after each NUTS transition, shared by the fit's chains and the refits' batches.

:func:`.chains._run_chains` (one fit, its data closed over) and :class:`.refit_chains.BatchRunner`
(many refits of one parent, their data passed as arguments) run the same two moves after every
NUTS transition (:mod:`.parameterisation` items 6 and 7); both call these functions, each with its
own potential and constants, inside its compiled chunk.

- :func:`scale_moves`: Metropolis moves along the sigma ridge (Liu and Sabatti 2000 group moves),
  item 7.
- :func:`gibbs_step`: the partially collapsed Gibbs step of the collapsed block, item 6, with its
  proposal's warmup adaptation (Welford covariance, Robbins-Monro scale).
"""

from __future__ import annotations

import math

from .geometry import log_scale


def scale_moves(z, lstep, key, pot, cov_g, *, K: int, n_scale: int, per_level, c0, c1, gam, dtype, U0=None,
                incremental=None):
    """``K x n_scale`` Metropolis scale moves from ``z``; returns (z, acceptance rate per direction, key).

    For term k, (log sigma_k, x_kj) -> (log sigma_k + d, x_kj exp(gamma_j d)) is a one-parameter
    group; a Metropolis step on d with target exp(-U) exp(d sum_j gamma_j) leaves the posterior
    invariant.  gamma_j (``gam``) = d log a_j / d log sigma at the rough sigma is the slope of the
    conditional mean of x_j in log sigma (Gaussian approximation), so the move travels along the
    ridge that couples a term's many weakly informed levels to its sigma, which NUTS crosses only
    slowly.  Directions: the eigenvectors of the adapted covariance of log sigma (``cov_g``, the
    dense mass block; fixed after warmup), scaled by ``exp(lstep)``, so that terms whose sigmas
    move together move together.  Odd repeats use the u-scaling group (log sigma_k + dls_k,
    u_k e^(dls_k)), which also scales the data-pinned levels: the logit's latent-scale ridge
    (attenuation of single-trial cells traded against larger effects).  One ``fori_loop`` over
    (direction, repeat): a single copy of the potential ``pot`` in the compiled chunk.

    ``U0`` is ``pot(z)`` when the caller has it (the NUTS state's potential energy at ``z``): passing
    it keeps a second forward copy of the potential out of the compiled chunk (291 of the
    chunk's 5,076 StableHLO operations on TB2); ``None`` computes it.

    ``incremental``: the potential generator's ``incremental(s)`` at the offset ``pot`` was built at
    (:func:`.parameterisation._incremental_gen`; ``None`` for nested centring): each proposal's
    potential in closed form from per-level state the loop carries, instead of the full potential
    (the loop was a fifth to two fifths of a TB2 iteration); the same moves and
    random numbers, the potential equal up to float rounding (tests/model/test_scale_moves.py).
    """
    import jax
    import jax.numpy as jnp

    cov_ls = cov_g[1:K + 1, 1:K + 1] if cov_g.ndim == 2 else jnp.diag(cov_g[1:K + 1])
    evals, evecs = jnp.linalg.eigh(cov_ls)
    dirs = evecs * jnp.sqrt(jnp.maximum(evals, 1e-12))[None, :]  # columns: scaled directions

    def one(t, carry):
        z, U, key, nacc = carry
        p, full, dls, key, k2 = _proposal(t, key, dirs, lstep, n_scale, dtype)  # dls: change of each log sigma_k
        dl = per_level(dls)
        ls_lv = per_level(z["g"][1:K + 1])
        # x' = x e^(gamma dl)  or  x' = x e^(dl) a(sigma) / a(sigma')
        log_fx = jnp.where(full, dl + log_scale(ls_lv, c0, c1, jnp) - log_scale(ls_lv + dl, c0, c1, jnp),
                           gam * dl)
        zp = {"g": z["g"].at[1:K + 1].add(dls), "x": z["x"] * jnp.exp(log_fx)}
        z, U, acc = _metropolis(zp, z, pot(zp), U, jnp.sum(log_fx), k2, dtype)
        return z, U, key, nacc.at[p].add(acc)

    if incremental is not None:
        return _incremental_loop(z, dirs, lstep, key, incremental, K=K, n_scale=n_scale, gam=gam, dtype=dtype,
                                 U0=pot(z) if U0 is None else U0)
    z, _, key, nacc = jax.lax.fori_loop(0, K * n_scale, one, (z, pot(z) if U0 is None else U0, key,
                                                                 jnp.zeros((K,), dtype)))
    return z, nacc / n_scale, key


def _incremental_loop(z, dirs, lstep, key, inc, *, K, n_scale, gam, dtype, U0):
    """:func:`scale_moves`' loop on the carried state of ``inc`` (the potential generator's
    ``incremental(s)``): the same directions, random numbers, proposals and acceptance rule, each
    proposal's potential in closed form from the state (equal to ``pot(zp)`` up to float rounding)."""
    import jax
    import jax.numpy as jnp

    def one(t, carry):
        st, U, key, nacc = carry
        p, full, dls, key, k2 = _proposal(t, key, dirs, lstep, n_scale, dtype)
        Up, stp, slf = inc.propose(st, dls, full, gam)
        st, U, acc = _metropolis(stp, st, Up, U, slf, k2, dtype)
        return st, U, key, nacc.at[p].add(acc)

    st, _, key, nacc = jax.lax.fori_loop(0, K * n_scale, one, (inc.enter(z), U0, key, jnp.zeros((K,), dtype)))
    return inc.leave(st), nacc / n_scale, key


def _proposal(t, key, dirs, lstep, n_scale: int, dtype):
    """Move ``t`` of the loop: its direction ``p``, its group (``full``: the odd repeats, u-scaling), the change
    of each log sigma (direction x step size x a standard normal), the next key and the acceptance's key.
    Both loops draw through here, so that they make the same proposals from the same key."""
    import jax
    import jax.numpy as jnp

    p = t // n_scale
    full = (t % n_scale) % 2 == 1
    key, k1, k2 = jax.random.split(key, 3)
    v = dirs[:, p] * jnp.exp(lstep[p])
    d = jax.random.normal(k1, (), dtype)
    return p, full, v * d, key, k2


def _metropolis(new, old, U_new, U, log_jacobian, k2, dtype):
    """Accept ``new`` (potential ``U_new``) over ``old`` (``U``) with probability
    min(1, exp(U - U_new + log_jacobian)); a non-finite ``U_new`` is rejected.  Returns (state, U, accepted)."""
    import jax
    import jax.numpy as jnp

    log_r = U - U_new + log_jacobian
    acc = (jnp.log(jax.random.uniform(k2, (), dtype)) < log_r) & jnp.isfinite(U_new)
    state = jax.tree.map(lambda a, b: jnp.where(acc, a, b), new, old)
    return state, jnp.where(acc, U_new, U), acc.astype(dtype)


def adapt_scale_steps(aux, rates, i, W):
    """The scale moves' log step sizes after a move with acceptance ``rates``: Robbins-Monro towards
    44% (the optimal one-dimensional random-walk rate) during the ``W`` warmup iterations, frozen after."""
    import jax.numpy as jnp

    lstep = aux["sm_lstep"] + (rates - 0.44) / jnp.sqrt(i + 10.0)
    return {**aux, "sm_lstep": jnp.where(i <= W, jnp.clip(lstep, -8.0, 1.0), aux["sm_lstep"]), "sm_acc": rates}


def gibbs_step(st, aux, *, gibbs, move, constrain, value_and_grad_at, offset, prop0, nP: int, W: int,
               welford_from: int, dtype):
    """The collapsed block's Metropolis move after a NUTS transition; returns (kernel state, aux).

    The proposal for (log sigma_G, mu) is ``exp(lscale) 2.38 / sqrt(nP)`` times the Cholesky
    factor of the warmup covariance (``prop0`` until 20 warmup draws are in); the move's new inner
    offsets change the potential, so U and its gradient are recomputed
    (``value_and_grad_at(s)(z)``: the potential at offset ``s``).  During warmup only: the Welford
    accumulator of log sigma_G and mu (from iteration ``welford_from``) and Robbins-Monro on the
    proposal's log-scale towards 25% acceptance.
    """
    import jax
    import jax.numpy as jnp

    key, sub = jax.random.split(st.rng_key)
    n = aux["wn"]
    cov = jnp.where(n > 20, aux["w2"] / jnp.maximum(n - 1.0, 1.0), prop0)
    prop = (jnp.exp(aux["lscale"]) * 2.38 / math.sqrt(nP)) * jnp.linalg.cholesky(
        cov + 1e-5 * jnp.eye(nP, dtype=dtype))
    z, u_in, ls_in, rate = move(st.z, aux["u"], aux["ls"], sub, prop)
    pe, zg = value_and_grad_at(offset(u_in))(z)
    ok = jnp.isfinite(pe)
    pick = lambda a, b: jnp.where(ok, a, b)  # noqa: E731
    st = st._replace(z=jax.tree.map(pick, z, st.z), potential_energy=pick(pe, st.potential_energy),
                     z_grad=jax.tree.map(pick, zg, st.z_grad), rng_key=key)
    u_in, ls_in = pick(u_in, aux["u"]), pick(ls_in, aux["ls"])
    # Welford of log sigma_G during warmup only (the proposal is frozen while sampling)
    _, mu_now, _ = constrain(st.z)
    lsg, j = [], 0
    for p in gibbs.nuts_pos:
        if p is None:
            lsg.append(ls_in[j])
            j += 1
        else:
            lsg.append(st.z["g"][1 + p])
    lsg = jnp.concatenate([jnp.stack(lsg), mu_now[None]])
    upd = (st.i > welford_from) & (st.i <= W)
    n1 = aux["wn"] + 1.0
    d0 = lsg - aux["wm"]
    wm = aux["wm"] + d0 / n1
    w2 = aux["w2"] + jnp.outer(d0, lsg - wm)
    # Robbins-Monro on the proposal's log-scale towards 25% acceptance, warmup only
    warm = st.i <= W
    lscale = jnp.where(warm, aux["lscale"] + (rate - 0.25) / jnp.sqrt(st.i + 10.0), aux["lscale"])
    aux = {**aux, "u": u_in, "ls": ls_in, "wm": jnp.where(upd, wm, aux["wm"]),
           "w2": jnp.where(upd, w2, aux["w2"]), "wn": jnp.where(upd, n1, aux["wn"]), "acc": rate,
           "lscale": jnp.clip(lscale, -3.0, 1.0)}
    return st, aux
