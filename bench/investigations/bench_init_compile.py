"""Benchmark: the NUTS initialisation's program compiled at XLA's default optimisation level or at level 0
(``chains.INIT_COMPILER_OPTIONS``), TB2 per-benchmark, each case a fresh process without the disk cache.
Per case: backend compile seconds per program (init first, then the chunk), the
compile phase's wall and CPU seconds, the draws' fingerprint (sum of mu) and min bulk ESS of a short
fixed run (4 x (``--warmup`` + ``--draws``), seed 0).

Run:  python bench/investigations/bench_init_compile.py [--cases default,O0] [--warmup 100] [--draws 100]
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
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, time
progs = []
import ddr_explorer.core.model as M
import jax
from jax import monitoring
monitoring.register_event_duration_secs_listener(
    lambda e, d, **kw: progs.append(round(d, 2)) if e == "/jax/core/compile/backend_compile_duration" else None)
from ddr_explorer.core.model import chains
from bench_sampler import load_tb2
case, warmup, draws = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
chains.INIT_COMPILER_OPTIONS = {} if case == "default" else {"xla_backend_optimization_level": 0}
stamps = {}
def progress(name, done, total, eta):
    stamps.setdefault(name, (time.process_time(), time.perf_counter()))
post = M.fit(load_tb2(), "per-benchmark", M.SamplerSettings(stop="fixed", warmup=warmup, draws=draws, seed=0),
             progress=progress)
import numpy as np
print("RESULT " + json.dumps({"programs": progs, "compile_cpu": stamps["warmup"][0] - stamps["compile"][0],
      "compile_wall": post.timings["compile"], "init_wall": post.timings["compile_init"],
      "mu_sum": float(np.sum(post.mu)), "min_ess": float(post.diagnostics.min_ess_bulk),
      "max_r_hat": float(post.diagnostics.max_r_hat)}))
"""


def main(argv=None) -> int:
    from _reference import reference_ms

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="default,O0")
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--draws", type=int, default=100)
    a = ap.parse_args(argv)
    here = Path(__file__).resolve().parents[1]
    print(f"reference before: {reference_ms():.2f} ms (np.sort); load {os.getloadavg()[0]:.1f}; shared 2-core box")
    for case in a.cases.split(","):
        env = dict(os.environ, DDR_JAX_CACHE_DIR="off")
        out = subprocess.run([sys.executable, "-c", CHILD, case, str(a.warmup), str(a.draws)], env=env,
                             capture_output=True, text=True, cwd=str(here))
        res = [json.loads(ln[7:]) for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
        if not res:
            raise RuntimeError(out.stderr[-3000:])
        r = res[0]
        print(f"{case:>8}: backend per program {r['programs']} s; compile phase {r['compile_wall']:.1f} s wall "
              f"(init {r['init_wall']:.1f}), {r['compile_cpu']:.1f} CPU s; mu sum {r['mu_sum']:.6f}, min bulk ESS "
              f"{r['min_ess']:.0f}, max R-hat {r['max_r_hat']:.3f}; load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"reference after: {reference_ms():.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
