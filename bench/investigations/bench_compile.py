"""Benchmark: what JAX compiles for a Terminal-Bench 2.0 fit and its D-study, and what the disk cache saves
(the compile on a fit's critical path).

Each case runs in a fresh Python process (so nothing is compiled in memory yet) and fits the TB2 demo
under the per-benchmark preset with a short run (``--warmup``/``--draws``, default 50/50: compile time
does not depend on the run length; the chunk is compiled once for warmup and sampling), then computes
the D-study of the posterior (numpy only: it compiles nothing, and this bench checks that).

* **cold**: an empty persistent compilation cache (``DDR_JAX_CACHE_DIR`` set to a new folder);
* **warm**: the same folder again, in a new process (what a refit, another seed or a restarted app sees);
* **off**: ``DDR_JAX_CACHE_DIR=off`` (no disk cache at all).

Per case: the fit's ``timings["compile"]`` (the chunk's lower + compile), the number of XLA
compilations and their summed backend compile seconds (``jax.monitoring`` events), the disk-cache hits
and misses, the fit's wall time, and the D-study's compile count (expected 0).  A same-run reference
(``np.sort`` of 4,000 x 100 draws) says how loaded the machine was; the fit cache is always a new
empty folder, so every case samples.

Run:  python bench/investigations/bench_compile.py [--warmup 50] [--draws 50] [--cases cold,warm,off]
"""

from __future__ import annotations

import sys as _sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

#: bench/ (simulate, _child, _reference, bench_sampler, bench_recovery) and this folder, importable by name.
_BENCH = _Path(__file__).resolve().parents[1]
_sys.path[:0] = [p for p in (str(_BENCH), str(_BENCH / "investigations")) if p not in _sys.path]

import argparse
import os
import tempfile


CHILD = r"""
import json, sys, time
t_start = time.perf_counter()
counts = {"compiles": 0, "backend_s": 0.0, "trace_s": 0.0, "lower_s": 0.0, "hits": 0, "misses": 0,
          "retrieval_s": 0.0}
import jax
from jax import monitoring

def on_event(event, **kw):
    if event == "/jax/compilation_cache/cache_hits":
        counts["hits"] += 1
    elif event == "/jax/compilation_cache/cache_misses":
        counts["misses"] += 1

def on_duration(event, duration, **kw):
    if event == "/jax/core/compile/backend_compile_duration":
        counts["compiles"] += 1
        counts["backend_s"] += duration
    elif event == "/jax/core/compile/jaxpr_trace_duration":
        counts["trace_s"] += duration
    elif event == "/jax/core/compile/jaxpr_to_mlir_module_duration":
        counts["lower_s"] += duration
    elif event == "/jax/compilation_cache/cache_retrieval_time_sec":
        counts["retrieval_s"] += duration

monitoring.register_event_listener(on_event)
monitoring.register_event_duration_secs_listener(on_duration)
from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.files import demo_corpus_path
from ddr_explorer.core.fitting import fit_corpus
from ddr_explorer.core.model.posterior import SamplerSettings
from ddr_explorer.core.dstudy import DStudyModel, observed_design

warmup, draws, cache = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
corpus = load_corpus(demo_corpus_path())
t0 = time.perf_counter()
res = fit_corpus(corpus, "per-benchmark", SamplerSettings(warmup=warmup, draws=draws), cache_dir=cache)
fit_s = time.perf_counter() - t0
fit_counts = dict(counts)
t1 = time.perf_counter()
from ddr_explorer.core.fitting import components_from_posterior
model = DStudyModel(components_from_posterior(res.posterior))
design = observed_design(corpus)
view = model.view(design)
dstudy_s = time.perf_counter() - t1
print("RESULT " + json.dumps({"fit": fit_counts, "dstudy_compiles": counts["compiles"] - fit_counts["compiles"],
                              "compile_s": res.posterior.timings.get("compile"), "fit_s": fit_s,
                              "dstudy_s": dstudy_s, "process_s": time.perf_counter() - t_start,
                              "cache_dir": jax.config.jax_compilation_cache_dir}))
"""


from _reference import reference_ms  # noqa: E402 - bench/ is on sys.path when a bench runs
from _child import run_child  # noqa: E402


def run_case(jax_cache: str, warmup: int, draws: int) -> dict:
    env = dict(os.environ, DDR_JAX_CACHE_DIR=jax_cache)
    with tempfile.TemporaryDirectory() as fit_cache:
        return run_child(CHILD, (warmup, draws, fit_cache), env)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--draws", type=int, default=50)
    ap.add_argument("--cases", default="cold,warm,off")
    args = ap.parse_args(argv)
    print(f"reference before (np.sort of 4,000 x 100 draws): {reference_ms():.2f} ms; shared 2-core box")
    with tempfile.TemporaryDirectory() as jax_cache:
        for case in args.cases.split(","):
            where = "off" if case == "off" else jax_cache
            r = run_case(where, args.warmup, args.draws)
            f = r["fit"]
            print(f"\n{case:>4}: fit {r['fit_s']:.1f} s (process {r['process_s']:.1f} s), chunk compile "
                  f"{r['compile_s']:.2f} s; {f['compiles']} XLA compilations ({f['backend_s']:.2f} s backend, "
                  f"{f['trace_s']:.2f} s tracing, {f['lower_s']:.2f} s lowering); disk cache {f['hits']} hits, "
                  f"{f['misses']} misses ({f['retrieval_s']:.2f} s reading); D-study {r['dstudy_s']:.2f} s, "
                  f"{r['dstudy_compiles']} compilations; cache dir {r['cache_dir']}")
        files = sorted(os.listdir(jax_cache))
        size = sum(os.path.getsize(os.path.join(jax_cache, n)) for n in files)
        print(f"\ncache folder after: {len(files)} files, {size / 2 ** 20:.1f} MiB")
    print(f"reference after: {reference_ms():.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
