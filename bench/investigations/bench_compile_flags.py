"""Benchmark: XLA CPU flags against the TB2 sampler's compile time and its run time.

Each case is a fresh Python process with the persistent compilation cache off (``DDR_JAX_CACHE_DIR=off``,
so every case compiles from scratch) and extra ``XLA_FLAGS``; it fits the TB2 demo under the
per-benchmark preset, 4 chains x (``--warmup`` + ``--draws``) at a fixed length, seed 0, and reports:

* per XLA program (``jax.monitoring``), tracing, lowering and backend compile seconds (the init program
  first, then the chunk);
* the CPU seconds of this process (all threads) spent in warmup and in sampling, and the leapfrog steps
  taken there, so the cost of a flag in the run is **CPU ms per 1,000 leapfrog steps (4 chains)**: on a
  shared box CPU seconds are the figure to compare, walls are printed beside them;
* a fingerprint of the draws (sum of mu): a flag that changes the arithmetic changes the draws.

A same-run reference (``np.sort`` of 4,000 x 100 draws, ms) before and after says how loaded the box was.

Run:  python bench/investigations/bench_compile_flags.py [--warmup 100] [--draws 100] [--cases default,O0,...]
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _child import run_child  # noqa: E402

CASES = {
    "default": "",
    "O0": "--xla_backend_optimization_level=0",
    "O1": "--xla_backend_optimization_level=1",
    "noexp": "--xla_llvm_disable_expensive_passes=true",
    "O1+noexp": "--xla_backend_optimization_level=1 --xla_llvm_disable_expensive_passes=true",
    "split1": "--xla_cpu_parallel_codegen_split_count=1",
    "noeigen": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}

CHILD = r"""
import json, sys, time
counts = {"programs": [], "trace": [], "lower": []}
import ddr_explorer.core.model as M  # XLA_FLAGS for the parallel CPU chains, before jax
import jax
from jax import monitoring

def on_duration(event, duration, **kw):
    if event == "/jax/core/compile/backend_compile_duration":
        counts["programs"].append(round(duration, 3))
    elif event == "/jax/core/compile/jaxpr_trace_duration":
        counts["trace"].append(round(duration, 3))
    elif event == "/jax/core/compile/jaxpr_to_mlir_module_duration":
        counts["lower"].append(round(duration, 3))

monitoring.register_event_duration_secs_listener(on_duration)
import numpy as np
from bench_sampler import load_tb2

warmup, draws = int(sys.argv[1]), int(sys.argv[2])
stamps = {}

def progress(name, done, total, eta):
    if name not in stamps:
        stamps[name] = (time.process_time(), time.perf_counter())

table = load_tb2()
s = M.SamplerSettings(stop="fixed", warmup=warmup, draws=draws, chains=4, seed=0)
c0, w0 = time.process_time(), time.perf_counter()
post = M.fit(table, "per-benchmark", s, progress=progress)
c1, w1 = time.process_time(), time.perf_counter()
ss = post.sample_stats
order = [k for k in ("compile", "warmup", "sampling", "diagnostics") if k in stamps]
cpu = {a: stamps[b][0] - stamps[a][0] for a, b in zip(order, order[1:])}
wall = {a: stamps[b][1] - stamps[a][1] for a, b in zip(order, order[1:])}
print("RESULT " + json.dumps({
    "timings": {k: round(v, 2) for k, v in post.timings.items()}, "cpu": cpu, "wall": wall,
    "fit_cpu": c1 - c0, "fit_wall": w1 - w0, "counts": counts,
    "warmup_steps": int(np.sum(ss["warmup_num_steps"])) if "warmup_num_steps" in ss else 0,
    "sampling_steps": int(np.sum(ss["num_steps"])), "mu_sum": float(np.sum(post.mu)),
    "min_ess": float(post.diagnostics.min_ess_bulk), "flags": __import__("os").environ.get("XLA_FLAGS")}))
"""


def run_case(flags: str, warmup: int, draws: int) -> dict:
    env = dict(os.environ, DDR_JAX_CACHE_DIR="off", XLA_FLAGS=flags)
    env.pop("XLA_FLAGS", None) if not flags else None
    return run_child(CHILD, (warmup, draws), env, cwd=str(Path(__file__).resolve().parents[1]))


def main(argv=None) -> int:
    from _reference import reference_ms

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--draws", type=int, default=100)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    print(f"reference before: {reference_ms():.2f} ms (np.sort); load {os.getloadavg()[0]:.1f}; shared 2-core box",
          flush=True)
    out = {}
    for case in a.cases.split(","):
        r = run_case(CASES[case], a.warmup, a.draws)
        out[case] = r
        c = r["counts"]
        ms_w = 1e3 * r["cpu"].get("warmup", float("nan")) / max(r["warmup_steps"], 1) * 1e3
        ms_s = 1e3 * r["cpu"].get("sampling", float("nan")) / max(r["sampling_steps"], 1) * 1e3
        print(f"{case:>9}: compile wall {r['timings'].get('compile', float('nan')):.1f} s (init "
              f"{r['timings'].get('compile_init', float('nan')):.1f}), CPU {r['cpu'].get('compile', 0):.1f} s; "
              f"backend per program {c['programs']}, trace {sum(c['trace']):.1f} s, lower {sum(c['lower']):.1f} s; "
              f"CPU ms per 1,000 leapfrog steps: warmup {ms_w:.0f}, sampling {ms_s:.0f} "
              f"({r['warmup_steps']} + {r['sampling_steps']} steps); fit {r['fit_wall']:.1f} s wall, "
              f"{r['fit_cpu']:.1f} s CPU; mu sum {r['mu_sum']:.6f}; load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"reference after: {reference_ms():.2f} ms", flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
