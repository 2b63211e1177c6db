"""Warm-started, batched refits (core.model.refit) against cold fits, on Terminal-Bench 2.0 hold-out splits.

For ``--splits`` hold-out-like training parts of the demo corpus (each cell's trials split 70/30
by stochastic rounding, training successes hypergeometric: seed 003 sec. 5.4,
core.analyses.heldout.split_cells) this prints, in one run (so that the ratios hold on a shared,
loaded box):

- the current path: ``fit()`` on the kept cells, one cold fit after another (first
  ``--sequential`` splits: each compiles its own sampler);
- ``fit_refits`` cold (no parent, the full warmup), all splits in one compile;
- ``fit_refits`` warm-started from the parent fit, for each warmup length in ``--warmups``.

Per configuration: compile seconds (once per call), wall seconds per refit without and with the
compile, its ratio to the sequential path, leapfrog steps per refit (warmup and sampling: the
work, which the load of a shared box does not change), refits passing the convergence gate, the smallest
bulk ESS, divergences, and the agreement of each split's posterior means of every sigma with
the cold batched refit of the same split: z = |difference| / MCSE (MCSE = sd / sqrt(bulk ESS),
both fits), as max |z| and the share of |z| < 2 (about 95% expected under agreement).

    python bench/investigations/bench_warm_refits.py --splits 10 --warmups 25,50,100,150
"""

from __future__ import annotations

import sys as _sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

#: bench/ (simulate, _child, _reference, bench_sampler, bench_recovery) and this folder, importable by name.
_BENCH = _Path(__file__).resolve().parents[1]
_sys.path[:0] = [p for p in (str(_BENCH), str(_BENCH / "investigations")) if p not in _sys.path]

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import ddr_explorer.core.model as M  # noqa: E402  (sets XLA_FLAGS before jax loads)
from ddr_explorer.core.corpus.io import load_corpus  # noqa: E402
from ddr_explorer.core.model import refit as refit_module  # noqa: E402
from ddr_explorer.core.model.refit import RefitRequest, fit_refits, request_cells  # noqa: E402

SPEC = "per-benchmark"


def splits(design, n: int, seed: int = 0, train_fraction: float = 0.7) -> list[RefitRequest]:
    """Training parts of ``n`` random splits of every cell's trials (as heldout.split_cells)."""
    out = []
    for i in range(n):
        rng = np.random.default_rng([seed, i])
        nn, s = design.trials, design.successes
        k = np.clip(np.floor(train_fraction * nn + rng.random(nn.size)).astype(np.int64), 0, nn)
        st = np.zeros_like(s)
        some = k > 0
        st[some] = rng.hypergeometric(s[some], (nn - s)[some], k[some])
        out.append(RefitRequest(f"split {i} train", st, k))
    return out


def agreement(a, b) -> np.ndarray:
    """|posterior mean difference| / MCSE of each sigma of two posteriors of the same data."""
    z = []
    for name in a.sigma:
        x, y = a.sigma[name].ravel(), b.sigma[name].ravel()
        ea = float(a.diagnostics.table.loc[name, "ess_bulk"])
        eb = float(b.diagnostics.table.loc[name, "ess_bulk"])
        z.append(abs(x.mean() - y.mean()) / np.sqrt(x.var() / ea + y.var() / eb))
    return np.asarray(z)


def row(label, posts, wall, compile_s, ref_per_refit=None, ref_posts=None):
    n = len(posts)
    conv = sum(p.converged for p in posts)
    min_ess = min(float(p.diagnostics.table.drop(index="mu")["ess_bulk"].min()) for p in posts)
    div = sum(p.diagnostics.divergences for p in posts)
    # leapfrog steps per refit, warmup and sampling: the work, whatever the load of the box
    steps = np.mean([float(np.sum(p.sample_stats["num_steps"]) + np.sum(p.sample_stats.get("warmup_num_steps", 0)))
                     for p in posts])
    per = (wall - compile_s) / n
    per_all = wall / n
    ratio = f"{ref_per_refit / per_all:5.2f}x" if ref_per_refit else "  -- "
    if ref_posts is not None:
        z = np.concatenate([agreement(p, q) for p, q in zip(posts, ref_posts)])
        agree = f"max|z| {z.max():4.2f}  |z|<2 {np.mean(z < 2):4.0%}"
    else:
        agree = ""
    print(f"{label:34s} {compile_s:8.1f} {per:9.2f} {per_all:9.2f} {ratio:>7s} {steps:9.0f} {conv:3d}/{n:<3d} "
          f"{min_ess:7.0f} {div:4d}  {agree}", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--sequential", type=int, default=2, help="splits fitted the current way (cold fit() each)")
    ap.add_argument("--warmups", default="25,50,100,150")
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--draws", type=int, default=250)
    ap.add_argument("--warmup", type=int, default=250, help="cold warmup (the hold-out split settings)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fixed-mass", action="store_true",
                    help="warm refits keep the mass matrix from the parent's draws (step size adapted only)")
    ap.add_argument("--parent-draws", type=int, default=None, help="parent fit's draws (default: the app's)")
    a = ap.parse_args(argv)

    corpus = load_corpus(ROOT / "resources" / "demo" / "terminal-bench-2.csv")
    design = M.build_design(corpus, SPEC)
    reqs = splits(design, a.splits, a.seed)
    S = M.SamplerSettings(chains=a.chains, draws=a.draws, warmup=a.warmup, seed=a.seed)
    print(f"TB2 demo: {design.n_cells} cells, {design.n_trials} trials; {a.splits} training splits (70%); "
          f"refits {a.chains} x ({a.warmup} + {a.draws}); shared 2-core box, all rows in this run", flush=True)

    t = time.perf_counter()
    if a.fixed_mass:
        refit_module.WARM_ADAPT_MASS = False
        print("warm refits: mass matrix from the parent's draws, step size adapted only", flush=True)
    ps = M.SamplerSettings(seed=a.seed)
    if a.parent_draws:
        ps = dataclasses.replace(ps, draws=a.parent_draws)
    parent = M.fit(design, SPEC, ps)
    print(f"parent fit (defaults): {time.perf_counter() - t:.1f} s, converged {parent.converged}", flush=True)

    print(f"{'configuration':34s} {'compile':>8s} {'s/refit':>9s} {'+compile':>9s} {'vs seq':>7s} {'leapfrog':>9s} "
          f"{'conv':>7s} "
          f"{'min ESS':>7s} {'div':>4s}  agreement with cold batched refits", flush=True)
    seq, seq_wall, seq_compile = [], 0.0, 0.0
    for r in reqs[:a.sequential]:
        t = time.perf_counter()
        p = M.fit(request_cells(design, r), SPEC, S)
        seq_wall += time.perf_counter() - t
        seq_compile += p.timings.get("compile", 0.0)
        seq.append(p)
    seq_per = seq_wall / max(len(seq), 1)
    if seq:
        row(f"sequential cold fit() x{len(seq)}", seq, seq_wall, seq_compile)
        print(f"  (compile per fit {seq_compile / len(seq):.1f} s)", flush=True)

    t = time.perf_counter()
    cold = fit_refits(design, SPEC, reqs, S)
    wall = time.perf_counter() - t
    row("fit_refits cold, one compile", cold, wall, cold[0].timings["compile"], seq_per or None)
    if seq:
        z = np.concatenate([agreement(p, q) for p, q in zip(seq, cold)])
        print(f"  masked cold refit vs fit() of the kept cells: max|z| {z.max():.2f}, |z|<2 {np.mean(z < 2):.0%}",
              flush=True)

    for w in [int(x) for x in a.warmups.split(",") if x]:
        t = time.perf_counter()
        warm = fit_refits(design, SPEC, reqs, S, parent=parent, warmup=w)
        wall = time.perf_counter() - t
        row(f"fit_refits warm, warmup {w}", warm, wall, warm[0].timings["compile"], seq_per or None, cold)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
