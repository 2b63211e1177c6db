"""How much of the 300 warmup iterations the start near the mode and the pooled adaptation make
unnecessary, per corpus shape, and what the adaptive warmup (:mod:`ddr_explorer.core.model.warmup`)
does with it.

For each corpus: one fit with Stan's full schedule that logs, at each slow window's end, how much
the metric would change (RMS log eigenvalue ratio, per mass-matrix block) and how much the
averaged step size moved (``chains.WINDOW_LOG``); then fits with ``adaptive_warmup`` off and on,
both stopped by the gate (``stop="gate"``), with their warmup iterations, draws per chain, wall,
min bulk ESS and ESS per second of sampling.

Corpora: ``tb2`` (Terminal-Bench 2.0, per-benchmark) and ``small-pooled`` (bench_recovery's pooled
shape, seed 1000), ``per-benchmark-sim`` (bench_recovery's per-benchmark shape, seed 1000),
``pooled`` (the HAL-scale pooled simulation of bench/simulate.py, seed 0, as bench_sampler's).

CPU seconds (all threads of this process, ``time.process_time``) are printed beside the walls: on a
shared box they are the figure to compare.

Usage::

    python bench/investigations/bench_warmup.py --corpus tb2,small-pooled
"""

from __future__ import annotations

import sys as _sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

#: bench/ (simulate, _child, _reference, bench_sampler, bench_recovery) and this folder, importable by name.
_BENCH = _Path(__file__).resolve().parents[1]
_sys.path[:0] = [p for p in (str(_BENCH), str(_BENCH / "investigations")) if p not in _sys.path]

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

import ddr_explorer.core.model as M  # noqa: E402  (sets XLA_FLAGS before jax loads)
import numpy as np  # noqa: E402
from ddr_explorer.core.model import chains  # noqa: E402


def load(name: str):
    if name == "tb2":
        from bench_sampler import load_tb2

        return load_tb2(), "per-benchmark"
    if name == "pooled":
        from simulate import simulate_pooled

        return simulate_pooled(seed=0).table, "pooled"
    from bench_recovery import simulate

    shape = "pooled" if name == "small-pooled" else "per-benchmark"
    sim = simulate(shape, 1000)
    return sim.table, shape


def one(table, spec, **kw):
    s = M.SamplerSettings(seed=0, **kw)
    t0, cpu0 = time.perf_counter(), time.process_time()
    post = M.fit(table, spec, s)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    dg = post.diagnostics
    warm_it = int(post.sample_stats["warmup_num_steps"].shape[1]) if "warmup_num_steps" in post.sample_stats else 0
    return {"settings": {k: v for k, v in kw.items()}, "wall": wall, "cpu": cpu, "timings": {k: round(v, 1) for k, v in post.timings.items()},
            "warmup_iterations": warm_it, "draws_per_chain": int(post.mu.shape[1]),
            "min_ess_bulk": dg.min_ess_bulk, "min_ess_tail": dg.min_ess_tail, "max_r_hat": dg.max_r_hat,
            "divergences": dg.divergences, "converged": dg.converged,
            "ess_per_s": dg.min_ess_bulk / wall,
            "steps_per_draw": float(np.mean(post.sample_stats["num_steps"])),
            "step_size": float(np.median(post.sample_stats["step_size"])),
            "notes": [str(n) for n in post.notes if "warmup" in str(n) or "run length" in str(n)]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="tb2,small-pooled")
    ap.add_argument("--no-compare", action="store_true", help="only the window log")
    ap.add_argument("--max-draws", type=int, help="ceiling of draws per chain of the gate-stopped fits (default 4000)")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    out = []
    for name in a.corpus.split(","):
        table, spec = load(name)
        print(f"== {name} ({spec}); load average {os.getloadavg()[0]:.1f}", flush=True)
        chains.WINDOW_LOG = []
        cap = {"max_draws": a.max_draws} if a.max_draws else {}
        full = one(table, spec, stop="gate", adaptive_warmup=False, **cap)
        log, chains.WINDOW_LOG = chains.WINDOW_LOG, None
        print("  full schedule (300), looks at the slow windows' ends:")
        for e in log:
            ch = ", ".join(f"{k} {v:.3f} (noise {e['noise'][k]:.3f}, {v / e['noise'][k]:.2f}x)"
                           for k, v in e["changes"].items())
            sc = "n/a" if e["step_change"] is None else f"{e['step_change']:+.3f}"
            print(f"    iteration {e['iteration']:3d}: metric change {ch}; step size {e['step_size']:.4f} "
                  f"(log change {sc})", flush=True)
        res = {"corpus": name, "windows": log, "full": full}
        print(f"  full:     {full}", flush=True)
        if not a.no_compare:
            ad = one(table, spec, stop="gate", adaptive_warmup=True, **cap)
            res["adaptive"] = ad
            print(f"  adaptive: {ad}", flush=True)
        out.append(res)
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
