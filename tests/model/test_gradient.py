"""The opt-in cheaper potential (``parameterisation.LEVERS``, off by default) is the same potential.

The levers change how the potential is computed (per-term sums and per-level broadcasts as products
with a 0/1 term-indicator matrix instead of slice sums and concatenated broadcasts), never what: the
value and the gradient must equal the code before (``LEVERS = set()``) exactly in float64 and to
float32 rounding in float32, the precision the sampler runs in.  Checked on a TB2-shaped
per-benchmark corpus and on the small pooled simulation, with the variants that exist: nested
centring, a term integrated out by quadrature (item 10) and the Gibbs block's inner offset
(``collapsed="gibbs"``).  That a fit with the lever on agrees with one without within Monte Carlo
error (the draws are not bitwise equal: the summation order of the per-term sums changed) is measured
by bench/investigations/bench_gradient.py ``--fits``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import ddr_explorer.core.model as M  # noqa: F401  (before jax: parallel CPU chains)
from ddr_explorer.core.model import SamplerSettings
from ddr_explorer.core.model import parameterisation as P

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str, file: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / file)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


sys.path.insert(0, str(ROOT / "bench"))
BG = _load("ddr_bench_gradient", "investigations/bench_gradient.py")  # setup(): the fit's layout, as sampler.fit builds it
SIM = _load("ddr_bench_simulate", "simulate.py")

TRUTH = {"task": 1.5, "model": 1.0, "scaffold": 0.5, "task:model": 0.8, "task:scaffold": 0.6,
         "model:scaffold": 0.4}


def _per_benchmark():
    return SIM.simulate_per_benchmark(n_tasks=40, n_models=8, n_scaffolds=4, n_pairs=16, trials_per_cell=3,
                                      sigmas=TRUTH, mu=-0.3, seed=5).table


def _pooled():
    # the small HAL-like pooled shape of bench/bench_recovery.py: 1,495 single-trial cells, whose
    # benchmark:task:model term is integrated out by quadrature
    return _load("ddr_bench_recovery", "bench_recovery.py").simulate("pooled", 1000).table


def _functions(s, levers, dtype, nested_min_ratio=None, scale_levers=None):
    """The potential generator and offset for the setup ``s`` built with ``levers`` (and, when given, the
    scale moves' ``scale_levers``: ``P.SCALE_LEVERS``; both are read when the functions are built)."""
    lay = s["lay"]
    if nested_min_ratio is not None:  # every candidate host kept, so that nested centring is exercised
        lay = P._make_layout(s["design"], s["spec"], s["rough"], s["settings"].parameterisation, lay.terms,
                             nested=True, min_ratio=nested_min_ratio)
    old = P.LEVERS, P.SCALE_LEVERS
    P.LEVERS = set(levers)
    if scale_levers is not None:
        P.SCALE_LEVERS = set(scale_levers)
    try:
        pg, _, _, offset = P._make_functions(s["design"], lay, dtype, s["cols"], s["gibbs"], s["mh_steps"],
                                             s["marg"])
    finally:
        P.LEVERS, P.SCALE_LEVERS = old
    return lay, pg, offset


def _points(s, lay, n=2, seed=0):
    """Chain starts (the rough mode plus about a posterior sd of jitter) and a wider point."""
    z0, _ = P._initial_point(lay, s["rough"], n, seed, jitter=1.0, marg=s["marg"])
    pts = [{k: v[i] for k, v in z0.items()} for i in range(n)]
    rng = np.random.default_rng(seed)
    pts.append({k: v + 0.3 * rng.standard_normal(v.shape) for k, v in pts[0].items()})
    return pts


def _offset_value(s, offset, dtype):
    import jax.numpy as jnp

    if s["gibbs"] is None or not s["gibbs"].inner:
        return jnp.zeros((), dtype)
    u_in, _, _ = P._initial_gibbs(s["gibbs"], s["rough"], 1, 0)
    return offset(jnp.asarray(u_in[0], dtype))


#: The variants that exist (tests/model/test_scale_moves.py checks the scale moves' levers on each).
CASES = [
    ("per-benchmark", {}, None),
    ("per-benchmark", {}, 0.0),  # nested centring
    ("per-benchmark", {"collapsed": "gibbs"}, None),  # inner offset s on the run term's levels
    ("pooled", {}, None),  # integrated term (item 10)
    ("pooled", {}, 0.0),  # integrated term and nested centring
]
#: Each case here compiles four programs (old and new potential, float64 and float32: 5-15 s), so the
#: plain variants are left out: every code path the lever changes runs in one of these (the per-term
#: sums and per-level broadcasts in all, the plain centring's broadcast of the term means in the Gibbs
#: case, the integrated term in the pooled one).
GRADIENT_CASES = [CASES[1], CASES[2], CASES[4]]


@pytest.fixture(scope="module")
def setups():
    tables = {"per-benchmark": _per_benchmark(), "pooled": _pooled()}
    out = {}
    for shape, kw, _ in CASES:
        key = (shape, tuple(sorted(kw.items())))
        if key not in out:
            out[key] = BG.setup(tables[shape], shape, SamplerSettings(**kw))
    return out


@pytest.mark.parametrize("shape,kw,min_ratio", GRADIENT_CASES,
                         ids=["per-benchmark-nested", "per-benchmark-gibbs", "pooled-integrated-nested"])
def test_the_new_potential_and_gradient_equal_the_old(setups, shape, kw, min_ratio):
    import jax
    import jax.numpy as jnp

    s = setups[(shape, tuple(sorted(kw.items())))]
    if shape == "pooled":
        assert s["marg"] is not None  # the integrated-term variant is what this case is for
    if kw.get("collapsed") == "gibbs":
        assert s["gibbs"].inner
    # float64: the same function, so equal to rounding of the summation order (1e-10 relative)
    with jax.enable_x64(True):
        lay, old, off_old = _functions(s, set(), jnp.float64, min_ratio)
        _, new, off_new = _functions(s, {"segdot"}, jnp.float64, min_ratio)
        if min_ratio is not None:
            assert lay.nested
        sv = _offset_value(s, off_old, jnp.float64)
        f_old = jax.jit(lambda z, sv: jax.value_and_grad(old(sv))(z))
        f_new = jax.jit(lambda z, sv: jax.value_and_grad(new(sv))(z))
        for z in _points(s, lay):
            z = {k: jnp.asarray(v, jnp.float64) for k, v in z.items()}
            u0, g0 = f_old(z, sv)
            u1, g1 = f_new(z, sv)
            assert np.isfinite(float(u0))
            np.testing.assert_allclose(float(u1), float(u0), rtol=1e-12, atol=1e-9)
            for k in ("g", "x"):
                scale = float(np.max(np.abs(np.asarray(g0[k])))) + 1.0
                np.testing.assert_allclose(np.asarray(g1[k]), np.asarray(g0[k]), rtol=0, atol=1e-10 * scale)
    # float32, what the sampler runs: equal to float32 rounding, jitted as the chunk is
    lay, old, _ = _functions(s, set(), jnp.float32, min_ratio)
    _, new, _ = _functions(s, {"segdot"}, jnp.float32, min_ratio)
    sv = _offset_value(s, off_old, jnp.float32)
    f_old = jax.jit(lambda z, sv: jax.value_and_grad(old(sv))(z))
    f_new = jax.jit(lambda z, sv: jax.value_and_grad(new(sv))(z))
    for z in _points(s, lay, seed=1):
        z = {k: jnp.asarray(v, jnp.float32) for k, v in z.items()}
        u0, g0 = f_old(z, sv)
        u1, g1 = f_new(z, sv)
        np.testing.assert_allclose(float(u1), float(u0), rtol=2e-6, atol=1e-3)
        for k in ("g", "x"):
            scale = float(np.max(np.abs(np.asarray(g0[k])))) + 1.0
            np.testing.assert_allclose(np.asarray(g1[k]), np.asarray(g0[k]), rtol=0, atol=2e-5 * scale)


def test_the_term_indicator_sums_and_broadcasts_per_term():
    """Row k of the indicator marks term k's levels, so M v sums per term and M'w repeats per level."""
    J = np.array([3, 1, 4])
    M_ = P._term_indicator(J)
    v = np.arange(8.0)
    np.testing.assert_array_equal(M_ @ v, [0 + 1 + 2, 3, 4 + 5 + 6 + 7])
    np.testing.assert_array_equal(np.array([10.0, 20.0, 30.0]) @ M_, [10, 10, 10, 20, 30, 30, 30, 30])


# A short fit with the lever on agrees with the old potential within Monte Carlo error: measured by
# bench/investigations/bench_gradient.py --fits (interleaved default TB2 fits), not here, while the lever is off by
# default (two real fits cost 45 s of the suite under load).
