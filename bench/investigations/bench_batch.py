"""What the cache saves a batch analysis: a rerun of a leave-one-model-out batch against one fit.

Prints, for a simulated corpus in the shape of one benchmark:

- the wall time of one fit (the reference, measured in this run),
- a leave-one-model-out batch (one fit per model, plus the full corpus): first run and rerun,
- the rerun's time as a fraction of the one fit (the rerun reopens every fit from the HDF5 cache).

Usage: ``python bench/investigations/bench_batch.py [--models 6] [--tasks 30] [--draws 200]``
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
import tempfile
import time
from pathlib import Path

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains

ROOT = Path(__file__).resolve().parents[2]


def _simulate():
    spec = importlib.util.spec_from_file_location("ddr_bench_simulate_batch", ROOT / "bench" / "simulate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def main(argv=None) -> None:
    from ddr_explorer.core.corpus.validate import build_corpus
    from ddr_explorer.core.fitting import fit_corpus
    from ddr_explorer.core.model import SamplerSettings
    from ddr_explorer.core.analyses.stability import leave_one_model_out

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=6)
    ap.add_argument("--tasks", type=int, default=30)
    ap.add_argument("--draws", type=int, default=200)
    a = ap.parse_args(argv)
    sim = _simulate().simulate_per_benchmark(n_tasks=a.tasks, n_models=a.models, n_scaffolds=3,
                                             n_pairs=2 * a.models, trials_per_cell=3, seed=1)
    corpus = build_corpus(sim.table, file=None, format="simulated", name="bench")
    settings = SamplerSettings(stop="fixed", draws=a.draws, warmup=a.draws, chains=2, seed=0)
    with tempfile.TemporaryDirectory() as ref_dir, tempfile.TemporaryDirectory() as cache:
        t = time.perf_counter()
        fit_corpus(corpus, "per-benchmark", settings, cache_dir=ref_dir)
        one = time.perf_counter() - t
        t = time.perf_counter()
        first = leave_one_model_out(corpus, "per-benchmark", settings, cache_dir=cache)
        t_first = time.perf_counter() - t
        t = time.perf_counter()
        again = leave_one_model_out(corpus, "per-benchmark", settings, cache_dir=cache)
        t_again = time.perf_counter() - t
    n = len(first)
    print(f"corpus: {corpus.n_trials} trials, {a.models} models, {a.tasks} tasks; {settings.chains} chains x "
          f"{settings.draws} draws")
    print(f"one fit (reference):                  {one:8.2f} s")
    print(f"leave-one-model-out, {n} fits, first:  {t_first:8.2f} s  ({first.attrs['n_fitted']} sampled, "
          f"{t_first / one:.1f} x one fit)")
    print(f"leave-one-model-out, rerun:           {t_again:8.2f} s  ({again.attrs['n_cached']} from the cache, "
          f"{t_again / one:.3f} x one fit)")


if __name__ == "__main__":
    main()
