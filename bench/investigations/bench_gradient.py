"""Per-call cost of the sampler's pieces on CPU ("cheaper leapfrog steps").

Prints, per corpus, microseconds per call of jitted functions, for each variant of
``parameterisation.LEVERS`` ("old": the empty set, the code before; "segdot": per-term sums and
per-level broadcasts as products with a (K, L) term-indicator matrix), in the same process:

- (a) the potential's value and gradient (one leapfrog step's work) on one CPU device, wall per call;
- (a4) the same on 4 CPU devices in parallel (pmapped, one chain per device, as the fit runs its
  chains on 2 cores), process CPU per step of all 4 chains: the figure that decides, since a fit's
  chains share the cores and what counts there is work, not one call's latency;
- (b) one collapsed Gibbs move with the value and gradient after it (:func:`.moves.gibbs_step`'s work);
- (c) one scale-move loop (``K x scale_steps`` potentials, :func:`.moves.scale_moves`) on the full
  potential, (c') the same loop in closed form (``parameterisation.SCALE_LEVERS`` "incremental"),
  timed in turn, and (c4) both on 4 chains pmapped over 4 CPU devices, process CPU per loop;
- the attribution of (a): the linear predictor and the likelihood alone, the priors' inputs alone,
  softplus alone on a cell-sized vector;
- a same-run reference, a 256 x 256 float32 matmul, at the start and the end (load drift).

Every figure is the least disturbed of several batches, the variants timed in turn (A B A B ...),
and each call runs inside one compiled ``fori_loop`` (no Python dispatch counted).

``--fits N``: instead, N interleaved rounds of the default gate-stopped fit in fresh processes (cold
compilation cache) per variant: CPU, wall, draws and leapfrog steps.

Corpora: ``tb2`` (Terminal-Bench 2.0, per-benchmark preset), ``small-pooled`` (the small HAL-like
pooled simulation of bench/bench_recovery.py), ``pooled`` (the HAL-scale simulation, slow to set up).

    python bench/investigations/bench_gradient.py --corpus tb2,small-pooled
    python bench/investigations/bench_gradient.py --corpus tb2 --fits 2 --levers old,segdot
    python bench/investigations/bench_gradient.py --corpus tb2 --fits 1 --seed 2 --levers old,incremental

``--fits`` variants: "old" (neither lever: the code before both), "segdot" (the gradient's lever),
"incremental" (the scale moves' closed-form potential), or levers joined by "+".
"""

from __future__ import annotations

import sys as _sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

#: bench/ (simulate, _child, _reference, bench_sampler, bench_recovery) and this folder, importable by name.
_BENCH = _Path(__file__).resolve().parents[1]
_sys.path[:0] = [p for p in (str(_BENCH), str(_BENCH / "investigations")) if p not in _sys.path]

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import ddr_explorer.core.model as M  # noqa: F401  (before jax: CPU devices)

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))


def _bench_sampler():
    spec = importlib.util.spec_from_file_location("ddr_bench_sampler", HERE / "bench_sampler.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def setup(table, preset, settings=None):
    """The fit's layout, Gibbs block and integrated term, built by the sampler's own
    :func:`~ddr_explorer.core.model.sampler.sampler_layout`."""
    from ddr_explorer.core.model.design_matrix import build_design
    from ddr_explorer.core.model.formula import as_spec
    from ddr_explorer.core.model.geometry import rough_fit
    from ddr_explorer.core.model.parameterisation import _mh_steps
    from ddr_explorer.core.model.posterior import SamplerSettings
    from ddr_explorer.core.model.sampler import sampler_layout

    settings = settings or SamplerSettings()
    spec = as_spec(preset)
    design = build_design(table, spec)
    rough = rough_fit(design)
    cols = [spec.term(n).columns for n in design.term_names]
    lay, gibbs, marg, _ = sampler_layout(design, spec, rough, settings)
    return dict(design=design, spec=spec, rough=rough, cols=cols, lay=lay, gibbs=gibbs, marg=marg,
                mh_steps=_mh_steps(settings, gibbs, design, lay, marg), settings=settings)


def _looped(f):
    """``run(n, *args)``: ``n`` calls of ``f(*args)`` inside one compiled ``fori_loop`` (as in the
    sampler's chunk), so that a jitted call's Python dispatch is not counted; each call's inputs
    depend on the previous call's output (by 1e-30 of it), so that XLA cannot hoist it out of the loop."""
    import jax
    import jax.numpy as jnp

    def loop(n, *args):
        def body(i, c):
            args, acc = c
            out = f(*args)
            tot = sum(jnp.sum(x).astype(jnp.float32) for x in jax.tree.leaves(out)
                      if jnp.issubdtype(x.dtype, jnp.floating))
            args = jax.tree.map(lambda a: a + (1e-30 * tot).astype(a.dtype)
                                if jnp.issubdtype(a.dtype, jnp.floating) else a, args)
            return args, acc + tot

        return jax.lax.fori_loop(0, n, body, (args, jnp.zeros((), jnp.float32)))[1]

    return jax.jit(loop, static_argnums=0)


def compare(cases: dict, rounds: int = 15, min_s: float = 0.08) -> dict:
    """Microseconds per call of each ``name: (f, args)``, the least disturbed of ``rounds`` batches.

    The cases are timed in turn within each round (A B A B ...), so that a load change on the shared
    box hits every case alike, and the minimum over rounds is reported.
    """
    import jax

    runs, ns = {}, {}
    for name, (f, args) in cases.items():
        run = _looped(f)
        jax.block_until_ready(run(1, *args))
        t0 = time.perf_counter()
        jax.block_until_ready(run(1, *args))
        ns[name] = max(1, int(min_s / max(time.perf_counter() - t0, 1e-6)))
        jax.block_until_ready(run(ns[name], *args))
        runs[name] = run
    best = {name: float("inf") for name in cases}
    for _ in range(rounds):
        for name, (f, args) in cases.items():
            t0 = time.perf_counter()
            jax.block_until_ready(runs[name](ns[name], *args))
            best[name] = min(best[name], (time.perf_counter() - t0) / ns[name] * 1e6)
    return best


def _time(f, *args):
    return compare({"f": (f, args)})["f"]


def figures(s, gather: str) -> dict:
    """Per-call microseconds of the pieces for one gather implementation."""
    import jax
    import jax.numpy as jnp

    from ddr_explorer.core.model import parameterisation as P
    from ddr_explorer.core.model.moves import scale_moves
    from ddr_explorer.core.model.parameterisation import (_initial_gibbs, _initial_point, _make_functions,
                                                          _per_level_broadcaster)

    default, default_scale = set(P.LEVERS), set(P.SCALE_LEVERS)
    P.LEVERS = set() if gather == "old" else set(gather.split("+"))
    P.SCALE_LEVERS = {"incremental"}  # built with the closed-form loop too: row (c') times it beside (c)
    dtype = jnp.float32
    lay, gibbs, marg, design = s["lay"], s["gibbs"], s["marg"], s["design"]
    pg, constrain, move, offset = _make_functions(design, lay, dtype, s["cols"], gibbs, s["mh_steps"], marg)
    P.SCALE_LEVERS = default_scale
    z0, _ = _initial_point(lay, s["rough"], 1, 0, marg=marg)
    z = {k: jnp.asarray(v[0], dtype) for k, v in z0.items()}
    if gibbs is not None:
        u_in, ls_in, pv = _initial_gibbs(gibbs, s["rough"], 1, 0)
        u_in, ls_in = jnp.asarray(u_in[0], dtype), jnp.asarray(ls_in[0], dtype)
        sv = offset(u_in)
    else:
        sv = jnp.zeros((), dtype)
    out = {}
    vg = jax.jit(lambda z, sv: jax.value_and_grad(pg(sv))(z))
    out["(a) value_and_grad"] = _time(vg, z, sv)
    out["(a4) value_and_grad, 4 devices, CPU per step"] = _pmapped_cpu(pg, lay, s, sv)
    out["    value only"] = _time(jax.jit(lambda z, sv: pg(sv)(z)), z, sv)
    # attribution: the linear predictor and the likelihood, with their gradient w.r.t. (alpha, dev)
    parts = pg.parts
    _, _, _, _, _, dev, _ = parts(z)
    yv = jnp.asarray(design.successes, dtype)
    nv = jnp.asarray(design.trials, dtype)

    def lik(alpha, dev, sv):
        eta = pg.eta(alpha, dev, sv)
        return jnp.sum(yv * eta - nv * jax.nn.softplus(eta))

    out["    eta+likelihood, grad"] = _time(jax.jit(jax.value_and_grad(lik, argnums=(0, 1))), z["g"][0], dev, sv)
    out["    eta only, grad (sum eta)"] = _time(
        jax.jit(jax.value_and_grad(lambda a, d, sv: jnp.sum(pg.eta(a, d, sv) * yv), argnums=(0, 1))),
        z["g"][0], dev, sv)
    out["    parts (priors' inputs), grad"] = _time(
        jax.jit(jax.value_and_grad(lambda z: jnp.sum(parts(z)[5] ** 2) + parts(z)[6])), z)
    eta = pg.eta(z["g"][0], dev, sv)
    out["    softplus likelihood on cells, grad"] = _time(
        jax.jit(jax.value_and_grad(lambda e: jnp.sum(yv * e - nv * jax.nn.softplus(e)))), eta)
    if gibbs is not None:
        prop = jnp.asarray(0.1 * np.eye(len(gibbs.group.terms) + 1), dtype)

        def gib(z, u_in, ls_in, key):
            z2, u2, l2, r = move(z, u_in, ls_in, key, prop)
            return jax.value_and_grad(pg(offset(u2)))(z2), u2, l2, r

        out["(b) Gibbs move + value_and_grad"] = _time(jax.jit(gib), z, u_in, ls_in, jax.random.PRNGKey(0))
    n_scale = s["settings"].scale_steps
    if n_scale:
        per_level = _per_level_broadcaster(lay.J)
        gam = jnp.full((lay.L,), 0.5, dtype)
        c0, c1 = jnp.asarray(lay.c0, dtype), jnp.asarray(lay.c1, dtype)
        cov = jnp.eye(z["g"].shape[0], dtype=dtype) * 0.01

        def sm(inc):
            def f(z, key):
                return scale_moves(z, jnp.zeros(lay.K, dtype), key, pg(sv), cov, K=lay.K, n_scale=n_scale,
                                   per_level=per_level, c0=c0, c1=c1, gam=gam, dtype=dtype, incremental=inc)
            return jax.jit(f)

        # the loop on the full potential and in closed form (SCALE_LEVERS "incremental"), timed in turn
        key0 = jax.random.PRNGKey(0)
        inc = pg.incremental
        pair = compare({"full": (sm(None), (z, key0)), "inc": (sm(inc(sv)), (z, key0))}
                       if inc is not None else {"full": (sm(None), (z, key0))})
        out[f"(c) scale-move loop ({lay.K} x {n_scale} potentials)"] = pair["full"]
        out["(c') the same loop, incremental potential"] = pair.get("inc", float("nan"))
        out["    ratio incremental / full (same run)"] = pair.get("inc", float("nan")) / pair["full"]
        if inc is not None:
            # 4 chains pmapped on 4 CPU devices (as a fit runs them on 2 cores): process CPU per loop,
            # the two variants in turn, the least disturbed of several batches
            cpu = _pmapped_loops_cpu({"full": sm(None), "inc": sm(inc(sv))}, lay, s)
            out["(c4) scale-move loop, 4 devices, CPU per loop"] = cpu["full"]
            out["(c4') the same, incremental potential"] = cpu["inc"]
            out["    ratio incremental / full (4 devices)"] = cpu["inc"] / cpu["full"]
    P.LEVERS = default
    return out


def _pmapped_cpu(pg, lay, s, sv, n: int = 200, rounds: int = 11) -> float:
    """Process CPU microseconds per value-and-gradient step of 4 chains pmapped over 4 CPU devices."""
    import jax
    import jax.numpy as jnp

    from ddr_explorer.core.model.parameterisation import _initial_point

    D = min(4, len(jax.devices("cpu")))
    z0, _ = _initial_point(lay, s["rough"], D, 0, marg=s["marg"])
    run = _looped(lambda z: jax.value_and_grad(pg(sv))(z))
    pm = jax.pmap(lambda z: run.__wrapped__(n, z) if hasattr(run, "__wrapped__") else run(n, z),
                  devices=jax.devices("cpu")[:D])
    z = {k: np.asarray(v, np.float32) for k, v in z0.items()}
    jax.block_until_ready(pm(z))
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        jax.block_until_ready(pm(z))
        best = min(best, (time.process_time() - t0) / n * 1e6)
    return best


def _pmapped_loops_cpu(fs: dict, lay, s, n: int = 20, rounds: int = 9) -> dict:
    """Process CPU microseconds per call of each jitted ``f(z, key)`` run on 4 chains pmapped over 4 CPU
    devices (``n`` calls in one compiled loop), the variants in turn, the least of ``rounds`` batches."""
    import jax
    import jax.numpy as jnp

    from ddr_explorer.core.model.parameterisation import _initial_point

    D = min(4, len(jax.devices("cpu")))
    z0, _ = _initial_point(lay, s["rough"], D, 0, marg=s["marg"])
    z = {k: np.asarray(v, np.float32) for k, v in z0.items()}
    keys = np.asarray(jax.random.split(jax.random.PRNGKey(0), D))
    pms = {}
    for name, f in fs.items():
        def loop(z, key, f=f):
            def body(i, c):
                z, key = c
                z2, _, key2 = f(z, key)
                return z2, key2
            return jax.lax.fori_loop(0, n, body, (z, key))[0]["g"].sum()
        pms[name] = jax.pmap(loop, devices=jax.devices("cpu")[:D])
        jax.block_until_ready(pms[name](z, keys))
    best = {name: float("inf") for name in fs}
    for _ in range(rounds):
        for name, pm in pms.items():
            t0 = time.process_time()
            jax.block_until_ready(pm(z, keys))
            best[name] = min(best[name], (time.process_time() - t0) / n * 1e6)
    return best


def reference() -> float:
    import jax
    import jax.numpy as jnp

    a = jnp.asarray(np.random.default_rng(0).standard_normal((256, 256)), jnp.float32)
    return _time(jax.jit(lambda a: a @ a), a)


def fits(corpus: str, variants: list[str], reps: int, seed: int = 0):
    """The default gate-stopped fit in fresh processes (cold compilation cache), the variants
    interleaved (A B A B ...) so that the box's load hits each alike; CPU and wall per fit."""
    import os
    import tempfile

    import bench_sampler as bs  # by its own name: the fits' child processes unpickle its functions

    table, spec_name, _ = bs.load_corpus(corpus)
    settings = M.SamplerSettings(seed=seed, stop="gate")
    rows = {v: [] for v in variants}
    for rep in range(reps):
        for v in variants:
            os.environ["DDR_BENCH_LEVERS"] = "" if v == "old" else v
            with tempfile.TemporaryDirectory(prefix="ddr-bench-jax-") as cache:
                r = bs.run_ours_cold(table, spec_name, settings, cache)
            if "error" in r:
                print(f"  {v}: failed: {r['error']}\n{r.get('trace', '')}", flush=True)
                continue
            rows[v].append(r)
            t = r["timings"]
            print(f"  rep {rep} {v:24s} CPU {r['cpu']:6.1f} s  wall {r['process_wall']:6.1f} s  compile "
                  f"{t.get('compile', float('nan')):5.1f}  warmup {t.get('warmup', float('nan')):5.1f}  sampling "
                  f"{t.get('sampling', float('nan')):5.1f}  draws/chain {r['draws_per_chain']}  min ESS "
                  f"{r['min_ess']:.0f}  R-hat {r['max_r_hat']:.3f}  div {r['divergences']}  load "
                  f"{os.getloadavg()[0]:.1f}; leapfrog steps {r.get('steps')}", flush=True)
    os.environ.pop("DDR_BENCH_LEVERS", None)
    def _walls(r):  # warmup + sampling wall
        return r["timings"].get("sampling", np.nan) + r["timings"].get("warmup", np.nan)

    summary = {}
    for v in variants:
        if not rows[v]:
            continue
        summary[v] = {"cpu": np.mean([r["cpu"] for r in rows[v]]),
                      "wall": np.mean([_walls(r) for r in rows[v]]),
                      "per_it": np.mean([_walls(r) / (r["draws_per_chain"] + r["warmup"]) for r in rows[v]]),
                      "steps": np.mean([sum(r.get("steps", {}).values()) for r in rows[v]]),
                      "per_step": np.mean([_walls(r) / max(sum(r.get("steps", {}).values()), 1) for r in rows[v]])}
    # the posterior: each sigma's mean under every variant against the first's, in joint MCSE
    if len(variants) > 1 and rows[variants[0]]:
        ref = rows[variants[0]]
        for v in variants[1:]:
            for i, r in enumerate(rows[v][:len(ref)]):
                a, b = ref[i], r
                zs = {k: (b["sigma"][k] - a["sigma"][k]) / np.hypot(a["sigma_mcse"][k], b["sigma_mcse"][k])
                      for k in a.get("sigma_mcse", {}) if k in b.get("sigma_mcse", {})}
                if zs:
                    print(f"  round {i} {v} vs {variants[0]}: sigma means in joint MCSE: "
                          + ", ".join(f"{k} {z:+.2f}" for k, z in zs.items()), flush=True)
    base = summary.get(variants[0])
    for v, m in summary.items():
        line = (f"{v:24s} mean CPU {m['cpu']:6.1f} s, warmup+sampling wall {m['wall']:5.1f} s ({m['per_it'] * 1e3:.1f} "
                f"ms per iteration; {m['steps']:.0f} leapfrog steps over the chains, {m['per_step'] * 1e6:.0f} us of "
                f"wall per step)")
        if base is not None and v != variants[0]:
            line += (f"; ratios to {variants[0]}: CPU {m['cpu'] / base['cpu']:.2f}, per iteration "
                     f"{m['per_it'] / base['per_it']:.2f}, per step {m['per_step'] / base['per_step']:.2f}")
        print(line, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="tb2,small-pooled")
    ap.add_argument("--gathers", default="old,segdot", help="variants: 'old' or levers joined by +")
    ap.add_argument("--fits", type=int, default=0, help="instead: this many interleaved rounds of the default "
                    "gate-stopped fit (fresh processes, cold cache) per variant of --levers")
    ap.add_argument("--seed", type=int, default=0, help="with --fits: the sampler's seed")
    ap.add_argument("--levers", default="old,segdot", help="with --fits: variants, 'old' or levers joined by + "
                    "('segdot': the gradient's; 'incremental': the scale moves' closed-form potential; 'old': neither)")
    a = ap.parse_args()
    if a.fits:
        for name in a.corpus.split(","):
            print(f"== {name}: default gate-stopped fit, {a.fits} round(s)", flush=True)
            fits(name, a.levers.split(","), a.fits, a.seed)
        return
    import jax

    from ddr_explorer.core.model.devices import _single_threaded_blas

    bs = _bench_sampler()
    with jax.default_device(jax.devices("cpu")[0]), _single_threaded_blas():
        ref0 = reference()
        print(f"reference (256 x 256 float32 matmul): {ref0:.1f} us")
        for name in a.corpus.split(","):
            table, preset, _ = bs.load_corpus(name)
            s = setup(table, preset)
            lay = s["lay"]
            print(f"\n{name} ({preset}): {s['design'].n_cells} cells, {lay.L} NUTS levels in {lay.K} terms, "
                  f"Gibbs {'yes' if s['gibbs'] is not None else 'no'}, integrated "
                  f"{'yes' if s['marg'] is not None else 'no'}, nested {lay.nested}")
            res = {g: figures(s, g) for g in a.gathers.split(",")}
            gs = list(res)
            print(f"{'us per call':52s}" + "".join(f"{g:>10s}" for g in gs)
                  + ("   ratio" if len(gs) == 2 else ""))
            for key in res[gs[0]]:
                row = f"{key:52s}" + "".join(f"{res[g][key]:10.1f}" for g in gs)
                if len(gs) == 2:
                    row += f"   {res[gs[1]][key] / res[gs[0]][key]:.2f}"
                print(row)
        ref1 = reference()
        print(f"\nreference again: {ref1:.1f} us (load drift {ref1 / ref0:.2f}x)")


if __name__ == "__main__":
    main()
