"""Diagnostic: which direction of the posterior limits NUTS's step size after warmup.

A leapfrog step size eps keeps the acceptance rate only while eps^2 lambda_max stays small, with
lambda_max the largest eigenvalue of the Hessian of the potential in the coordinates the adapted
mass matrix whitens (M^(1/2) H M^(1/2)); the number of leapfrog steps per draw grows with
sqrt(lambda_max / lambda_min).  A diagonal mass matrix makes every coordinate's posterior variance
one, so a large lambda_max means a *correlation* it cannot express: a combination of coordinates
the data pin far more tightly than each coordinate alone.

This script runs warmup (2 chains by default), takes chain 0's state and adapted mass matrix, and
finds the largest eigenvalues of the whitened Hessian by Lanczos over Hessian-vector products
(JAX), then prints what each top eigenvector is made of: global coordinates (alpha, log sigma,
w) and the terms' levels.  It is how the BRIDGE pooled fit's saturated trees were traced to
alpha and the benchmark levels (core/model/parameterisation.py, item 11).

Run:  python bench/investigations/bench_geometry.py --corpus tb2
      python bench/investigations/bench_geometry.py --corpus PATH --preset pooled [--flat]
"""

from __future__ import annotations

import sys as _sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

#: bench/ (simulate, _child, _reference, bench_sampler, bench_recovery) and this folder, importable by name.
_BENCH = _Path(__file__).resolve().parents[1]
_sys.path[:0] = [p for p in (str(_BENCH), str(_BENCH / "investigations")) if p not in _sys.path]

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

import ddr_explorer.core.model as M  # before jax: parallel CPU chains
from ddr_explorer.core.model import chains as CH  # the runner reads WARMUP_HOOK there
from ddr_explorer.core.model.design_matrix import build_design

HERE = Path(__file__).resolve().parents[1]


def _bench_sampler():
    spec = importlib.util.spec_from_file_location("ddr_bench_sampler", HERE / "bench_sampler.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def whitened_hessian_spectrum(captured: dict, k: int = 6):
    """Top-k eigenpairs of M^(1/2) H M^(1/2) at chain 0's post-warmup state."""
    import jax
    import jax.numpy as jnp
    from scipy.sparse.linalg import LinearOperator, eigsh

    state = captured["state"]
    first = lambda a: np.asarray(a)[0, 0]  # noqa: E731  (device 0, chain 0)
    g0, x0 = first(state.z["g"]).astype(np.float32), first(state.z["x"]).astype(np.float32)
    imm = state.adapt_state.inverse_mass_matrix
    Mg, Mx = first(imm[("g",)]).astype(np.float64), first(imm[("x",)]).astype(np.float64)
    aux0 = jax.tree.map(lambda a: jnp.asarray(a)[0, 0], captured["aux"])
    potential = captured["potential_gen"](captured["offset"](aux0))
    nG, nX = g0.size, x0.size
    Lg = jnp.asarray(np.linalg.cholesky(Mg) if Mg.ndim == 2 else np.diag(np.sqrt(Mg)), jnp.float32)
    sx = jnp.asarray(np.sqrt(Mx), jnp.float32)

    def f(v):  # the potential along z = z0 + M^(1/2) v
        return potential({"g": jnp.asarray(g0) + Lg @ v[:nG], "x": jnp.asarray(x0) + sx * v[nG:]})

    zero = jnp.zeros(nG + nX, jnp.float32)
    hvp = jax.jit(lambda v: jax.jvp(jax.grad(f), (zero,), (v,))[1])
    op = LinearOperator((nG + nX, nG + nX), dtype=np.float64,
                        matvec=lambda v: np.asarray(hvp(jnp.asarray(v, jnp.float32)), np.float64))
    vals, vecs = eigsh(op, k=k, which="LA", tol=1e-3)
    order = np.argsort(-vals)
    return vals[order], vecs[:, order], nG, float(np.asarray(state.adapt_state.step_size).ravel()[0])


def describe(vec, nG: int, layout, design, top: int = 5) -> tuple[dict, list[str]]:
    """Squared mass of an eigenvector per block, and its largest level coordinates."""
    names = [design.term_names[k] for k in layout.terms]
    glab = ["alpha"] + [f"log sigma[{n}]" for n in names] + [f"w[{n}]" for n in names]
    glab += ["log sigma[integrated]"] * (nG - len(glab))
    w2 = vec ** 2
    mass = {glab[i]: round(float(w2[i]), 3) for i in range(nG) if w2[i] > 0.01}
    for i, n in enumerate(names):
        m = float(w2[nG + layout.offsets[i]:nG + layout.offsets[i + 1]].sum())
        if m > 0.01:
            mass[n] = round(m, 3)
    lines = []
    for j in np.argsort(-w2[nG:])[:top]:
        i = int(np.searchsorted(layout.offsets, j, side="right") - 1)
        k = layout.terms[i]
        lv = int(j - layout.offsets[i])
        label = ", ".join(f"{c}={v}" for c, v in design.level_labels[k].iloc[lv].items())
        lines.append(f"{design.term_names[k]} [{label}] ({int(design.level_trials[k][lv])} trials): "
                     f"{vec[nG + j]:+.3f}")
    return mass, lines


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="tb2", help="tb2, pooled (simulated HAL-scale) or a corpus file")
    ap.add_argument("--preset", default=None, help="preset or formula (default: the corpus's usual one)")
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--flat", action="store_true", help="nested_centring=False (items 1-2 only)")
    ap.add_argument("--k", type=int, default=6, help="eigenpairs to find")
    a = ap.parse_args(argv)

    if a.corpus in ("tb2", "pooled"):
        table, design_name, _ = _bench_sampler().load_corpus(a.corpus)
    else:
        from ddr_explorer.core.corpus.io import load_corpus

        table, design_name = load_corpus(a.corpus).table, "pooled"
    design_name = a.preset or design_name
    captured: dict = {}
    CH.WARMUP_HOOK = lambda **kw: captured.update(kw)  # noqa: E731
    settings = M.SamplerSettings(stop="fixed", chains=a.chains, warmup=a.warmup, draws=10, keep_random_effects=False,
                                 nested_centring=not a.flat)
    t0 = time.perf_counter()
    try:
        post = M.fit(table, design_name, settings)
    finally:
        CH.WARMUP_HOOK = None
    wall = time.perf_counter() - t0
    design = build_design(table, design_name)
    vals, vecs, nG, eps = whitened_hessian_spectrum(captured, a.k)
    steps = post.sample_stats["warmup_num_steps"][:, -50:].mean()
    print(f"{a.corpus} ({design_name}{', flat' if a.flat else ''}): {a.chains} x {a.warmup} warmup in {wall:.0f} s; "
          f"adapted step size {eps:.4f}, {steps:.0f} leapfrog steps per draw at the end of warmup")
    print(f"largest eigenvalues of the whitened Hessian: {', '.join(f'{v:.0f}' for v in vals)}")
    print(f"  (a step size of about 1/sqrt(lambda_max) = {1 / np.sqrt(vals[0]):.4f} is what they allow)")
    for v, vec in zip(vals[:3], vecs.T[:3]):
        mass, lines = describe(vec, nG, captured["layout"], design)
        print(f"eigenvalue {v:.0f}: {mass}")
        for line in lines:
            print("    " + line)


if __name__ == "__main__":
    main()
