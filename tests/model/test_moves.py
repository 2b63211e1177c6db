"""The moves after each NUTS transition (core.model.moves), shared by fit() and the refits.

Known answers without a sampler run: a Metropolis step whose target is flat and whose Jacobian
term is 0 accepts every proposal; one whose target is infinite away from the start rejects every
one; the step-size adaptation is the Robbins-Monro update towards 44% during warmup and frozen after.
"""

from __future__ import annotations

import numpy as np
import pytest

import ddr_explorer.core.model  # noqa: F401  (before jax: parallel CPU chains)
from ddr_explorer.core.model.moves import adapt_scale_steps, scale_moves
from ddr_explorer.core.model.parameterisation import _per_level_broadcaster

K, J = 2, [3, 4]


def _state():
    import jax.numpy as jnp

    g = jnp.asarray([0.1, -0.5, 0.2, 0.0, 0.0], jnp.float32)  # mu, log sigma x K, w x K
    x = jnp.asarray(np.linspace(-1.0, 1.0, sum(J)), jnp.float32)
    return {"g": g, "x": x}


def _run(pot, n_scale, U0=None):
    import jax
    import jax.numpy as jnp

    ones = jnp.ones(sum(J), jnp.float32)
    return scale_moves(_state(), jnp.zeros(K, jnp.float32), jax.random.PRNGKey(0), pot,
                       jnp.eye(1 + 2 * K, dtype=jnp.float32), K=K, n_scale=n_scale,
                       per_level=_per_level_broadcaster(J), c0=ones, c1=ones, gam=jnp.zeros(sum(J), jnp.float32),
                       dtype=jnp.float32, U0=U0)


def test_a_flat_target_accepts_every_scale_move():
    import jax.numpy as jnp

    # n_scale 1: only the gamma-group moves, whose Jacobian term is gam * dl = 0 here
    z, rates, _ = _run(lambda z: jnp.zeros((), jnp.float32), n_scale=1)
    assert np.asarray(rates) == pytest.approx([1.0, 1.0])
    z0 = _state()
    assert not np.allclose(np.asarray(z["g"][1:K + 1]), np.asarray(z0["g"][1:K + 1]))  # the sigmas moved
    np.testing.assert_array_equal(np.asarray(z["x"]), np.asarray(z0["x"]))  # x' = x e^0
    np.testing.assert_array_equal(np.asarray(z["g"][K + 1:]), np.asarray(z0["g"][K + 1:]))


def test_an_infinite_target_away_from_the_start_rejects_every_scale_move():
    import jax.numpy as jnp

    g0 = _state()["g"]

    def pot(z):
        return jnp.where(jnp.all(z["g"] == g0), 0.0, jnp.inf).astype(jnp.float32)

    z, rates, _ = _run(pot, n_scale=2)
    assert np.asarray(rates) == pytest.approx([0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(z["g"]), np.asarray(g0))


def test_scale_step_adaptation_is_robbins_monro_in_warmup_and_frozen_after():
    import jax.numpy as jnp

    aux = {"sm_lstep": jnp.asarray([0.0, 0.5], jnp.float32), "sm_acc": jnp.zeros(2, jnp.float32)}
    rates = jnp.asarray([0.94, 0.0], jnp.float32)
    out = adapt_scale_steps(aux, rates, jnp.asarray(15), 50)
    # (rate - 0.44) / sqrt(i + 10) = 0.5 / 5 and -0.44 / 5
    assert np.asarray(out["sm_lstep"]) == pytest.approx([0.1, 0.5 - 0.088], abs=1e-6)
    assert np.asarray(out["sm_acc"]) == pytest.approx([0.94, 0.0])
    frozen = adapt_scale_steps(aux, rates, jnp.asarray(51), 50)
    assert np.asarray(frozen["sm_lstep"]) == pytest.approx([0.0, 0.5])
    clipped = adapt_scale_steps({**aux, "sm_lstep": jnp.asarray([0.99, -7.99], jnp.float32)}, rates,
                                jnp.asarray(0), 50)
    assert np.asarray(clipped["sm_lstep"]) == pytest.approx([1.0, -8.0])


def test_the_scale_moves_start_from_the_potential_the_caller_gives():
    # The chain runner passes the NUTS state's potential energy as U0 (one forward copy of the potential
    # fewer in the compiled chunk): U0 = pot(z) gives the moves computed without it, and a U0
    # far below the target's (a start "1,000 nats likelier" than any proposal) makes every move fail.
    import jax.numpy as jnp

    def pot(z):
        return 0.5 * jnp.sum(z["g"] ** 2) + 0.5 * jnp.sum(z["x"] ** 2)

    z_none, r_none, k_none = _run(pot, n_scale=2)
    z_given, r_given, k_given = _run(pot, n_scale=2, U0=pot(_state()))
    for a, b in ((z_none["g"], z_given["g"]), (z_none["x"], z_given["x"]), (r_none, r_given), (k_none, k_given)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    _, rates, _ = _run(pot, n_scale=2, U0=pot(_state()) - 1000.0)
    assert np.asarray(rates) == pytest.approx([0.0, 0.0])
