"""The scale moves' closed-form potential (``parameterisation.SCALE_LEVERS``
"incremental") is the potential.

The scale-move loop (parameterisation item 7) evaluates each proposal's potential from per-level
state it carries (a x, the deviations, log q and three per-term sums, updated by the move's known
factors: :func:`~ddr_explorer.core.model.parameterisation._incremental_gen`) instead of calling the
full potential.  It must be the same function: equal to ``pot(zp)`` at the loop's proposals to
float64 rounding (1e-10 relative) and to float32 rounding in float32, on a TB2-shaped per-benchmark
corpus and the small pooled simulation, in every layout variant it serves (the Gibbs block's inner
offset, a term integrated out by quadrature; nested centring falls back to the full potential); and
a whole loop with the same key must make the same accept decisions as the loop on the full
potential (float64).
"""

from __future__ import annotations

import numpy as np
import pytest

import ddr_explorer.core.model as M  # noqa: F401  (before jax: parallel CPU chains)
from ddr_explorer.core.model.geometry import log_scale

from .test_gradient import BG, CASES, _offset_value, _points, setups  # noqa: F401 - setups: the fixture
from .test_gradient import _functions as _gradient_functions

IDS = ["per-benchmark", "per-benchmark-nested", "per-benchmark-gibbs", "pooled-integrated",
       "pooled-integrated-nested"]


def _functions(s, dtype, min_ratio):
    # the closed-form scale-move potential (off by default), every candidate host kept when min_ratio is set
    return _gradient_functions(s, set(), dtype, min_ratio, scale_levers={"incremental"})


def _gam(lay, s):
    sig0 = s["rough"].sigma[lay.terms]
    return np.concatenate([lay.c0[a:b] / (lay.c0[a:b] + lay.c1[a:b] * sig0[i] ** 2)
                           for i, (a, b) in enumerate(zip(lay.offsets[:-1], lay.offsets[1:]))])


def _proposals(z, lay, gam, rng, n=6):
    """(dls, full, zp): scale-move proposals from z as :func:`.moves.scale_moves` makes them, both groups."""
    K = lay.K
    per = np.repeat(np.arange(K), lay.J)
    out = []
    for i in range(n):
        dls = 0.3 * rng.standard_normal(K)
        dl, ls_lv = dls[per], z["g"][1:K + 1][per]
        if i % 2:
            log_fx = dl + log_scale(ls_lv, lay.c0, lay.c1) - log_scale(ls_lv + dl, lay.c0, lay.c1)
        else:
            log_fx = gam * dl
        g = z["g"].copy()
        g[1:K + 1] += dls
        out.append((dls, bool(i % 2), {"g": g, "x": z["x"] * np.exp(log_fx)}, float(np.sum(log_fx))))
    return out


@pytest.mark.parametrize("shape,kw,min_ratio", CASES, ids=IDS)
def test_the_incremental_potential_equals_the_potential_at_scale_proposals(setups, shape, kw, min_ratio):
    import jax
    import jax.numpy as jnp

    s = setups[(shape, tuple(sorted(kw.items())))]
    if shape == "pooled":
        assert s["marg"] is not None
    if kw.get("collapsed") == "gibbs":
        assert s["gibbs"].inner
    for dtype, rtol in ((jnp.float64, 1e-10), (jnp.float32, 3e-6)):
        with jax.enable_x64(dtype == jnp.float64):
            lay, pg, offset = _functions(s, dtype, min_ratio)
            assert lay.nested == (min_ratio is not None)
            if lay.nested:  # no per-term factor under nested centring: the loop keeps the full potential
                assert pg.incremental is None
                continue
            sv = _offset_value(s, offset, dtype)
            gam = jnp.asarray(_gam(lay, s), dtype)
            full = jax.jit(lambda z, sv: pg(sv)(z))

            @jax.jit
            def fast(z, dls, flag, sv):
                inc = pg.incremental(sv)
                st = inc.enter(z)
                U, stp, slf = inc.propose(st, dls, flag, gam)
                return U, inc.leave(stp), slf

            rng = np.random.default_rng(3)
            n_checked = 0
            for z in _points(s, lay):
                z0 = {k: jnp.asarray(v, dtype) for k, v in z.items()}
                for dls, flag, zp, slf_ref in _proposals(z, lay, _gam(lay, s), rng):
                    zp = {k: jnp.asarray(v, dtype) for k, v in zp.items()}
                    u_full = float(full(zp, sv))
                    u_fast, z_fast, slf = fast(z0, jnp.asarray(dls, dtype), flag, sv)
                    assert np.isfinite(u_full)
                    np.testing.assert_allclose(float(u_fast), u_full, rtol=rtol)
                    # the proposal itself and its log-Jacobian: as scale_moves builds them
                    np.testing.assert_allclose(float(slf), slf_ref, rtol=rtol, atol=rtol * lay.L)
                    for k in ("g", "x"):
                        np.testing.assert_allclose(np.asarray(z_fast[k]), np.asarray(zp[k]), rtol=30 * rtol, atol=0)
                    n_checked += 1
            assert n_checked == 3 * 6


@pytest.mark.parametrize("shape,kw,min_ratio", [CASES[0], CASES[2], CASES[3]], ids=[IDS[0], IDS[2], IDS[3]])
def test_an_incremental_scale_loop_makes_the_same_moves(setups, shape, kw, min_ratio):
    """float64: the loop in closed form accepts exactly what the loop on the full potential does."""
    import jax
    import jax.numpy as jnp

    from ddr_explorer.core.model.moves import scale_moves
    from ddr_explorer.core.model.parameterisation import _per_level_broadcaster

    s = setups[(shape, tuple(sorted(kw.items())))]
    with jax.enable_x64(True):
        dtype = jnp.float64
        lay, pg, offset = _functions(s, dtype, min_ratio)
        sv = _offset_value(s, offset, dtype)
        K = lay.K
        G = 1 + 2 * K + (1 if s["marg"] is not None else 0)
        cov = jnp.asarray(np.diag(np.full(G, 0.02)), dtype)
        gam = jnp.asarray(_gam(lay, s), dtype)
        c0, c1 = jnp.asarray(lay.c0, dtype), jnp.asarray(lay.c1, dtype)
        per_level = _per_level_broadcaster(lay.J)

        def loop(z, key, inc):
            return scale_moves(z, jnp.zeros(K, dtype), key, pg(sv), cov, K=K, n_scale=6, per_level=per_level,
                               c0=c0, c1=c1, gam=gam, dtype=dtype, incremental=inc)

        old = jax.jit(lambda z, key: loop(z, key, None))
        new = jax.jit(lambda z, key: loop(z, key, pg.incremental(sv)))
        accepted = 0
        for i, z in enumerate(_points(s, lay)[:2]):
            z = {k: jnp.asarray(v, dtype) for k, v in z.items()}
            za, ra, ka = old(z, jax.random.PRNGKey(i))
            zb, rb, kb = new(z, jax.random.PRNGKey(i))
            np.testing.assert_array_equal(np.asarray(rb), np.asarray(ra))  # the same accept decisions
            np.testing.assert_array_equal(np.asarray(kb), np.asarray(ka))
            for k in ("g", "x"):
                np.testing.assert_allclose(np.asarray(zb[k]), np.asarray(za[k]), rtol=1e-12, atol=0)
            accepted += float(np.sum(np.asarray(ra))) * 6
        assert 0 < accepted < 2 * K * 6  # some moves accepted, some rejected: the check can fail
