"""Benchmark: load and validate a synthetic corpus of 1,000,000 records.

Target (SPEC): at most 10 s on a 2-core machine.  The reference measured in
the same run is a bare ``pandas.read_csv`` of the same file (no validation, no
synonym mapping), so the ratio shows what validation costs on top of parsing.

Then the py-irt importer on BRIDGE's ``all_a_pyirt.jsonl`` (when ../shared/corpora is there), timed here rather
than in a test: a timed test fails on a loaded box.

Run:  python bench/bench_load.py [--records N] [--format csv|parquet|jsonl]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.design import diagnose


def synthetic_corpus(n_records: int, seed: int = 0) -> pd.DataFrame:
    """A pooled corpus shaped like HAL: 9 benchmarks, 60 models, 15 scaffolds, 5 trials per cell."""
    rng = np.random.default_rng(seed)
    n_bench, n_tasks, n_models, n_scaffolds, n_rep = 9, 250, 60, 15, 5
    n_cells = int(n_records / n_rep * 1.1) + 10  # a few draws collide; trimmed below
    b = rng.integers(0, n_bench, n_cells)
    t = rng.integers(0, n_tasks, n_cells)
    m = rng.integers(0, n_models, n_cells)
    a = rng.integers(0, n_scaffolds, n_cells)
    cell = pd.DataFrame({"b": b, "t": t, "m": m, "a": a}).drop_duplicates()
    cell = cell.iloc[: -(-n_records // n_rep)]
    cell = cell.loc[cell.index.repeat(n_rep)].iloc[:n_records]
    n = len(cell)
    logit = rng.normal(0, 1.5, n_models)[cell.m] + rng.normal(0, 2, (n_bench, n_tasks))[cell.b, cell.t]
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return pd.DataFrame({
        "benchmark": np.char.add("bench-", cell.b.to_numpy().astype(str)),
        "task": np.char.add("task-", cell.t.to_numpy().astype(str)),
        "model": np.char.add("model-", cell.m.to_numpy().astype(str)),
        "scaffold": np.char.add("scaffold-", cell.a.to_numpy().astype(str)),
        "trial": np.tile(np.arange(n_rep), -(-n // n_rep))[:n],
        "result": y,
        "cost": np.round(rng.gamma(2.0, 0.05, n), 4),
    })


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--format", default="csv", choices=["csv", "parquet", "jsonl"])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"synthetic.{args.format}"
        df = synthetic_corpus(args.records)
        if args.format == "csv":
            df.to_csv(path, index=False)
        elif args.format == "parquet":
            df.to_parquet(path, index=False)
        else:
            df.to_json(path, orient="records", lines=True)
        size_mb = path.stat().st_size / 1e6
        t0 = time.perf_counter()
        if args.format == "csv":
            ref = pd.read_csv(path)
        elif args.format == "parquet":
            ref = pd.read_parquet(path)
        else:
            ref = pd.read_json(path, lines=True)
        t_ref = time.perf_counter() - t0
        t0 = time.perf_counter()
        corpus = load_corpus(path)
        t_load = time.perf_counter() - t0
        t0 = time.perf_counter()
        diag = diagnose(corpus)
        t_diag = time.perf_counter() - t0
    print(f"records                 {corpus.n_records:>12,}  ({size_mb:.1f} MB {args.format})")
    print(f"load + validate         {t_load:>12.2f} s   (target <= 10 s)")
    print(f"design diagnostics      {t_diag:>12.2f} s")
    print(f"reference pandas read   {t_ref:>12.2f} s   (read only, {len(ref):,} rows)")
    print(f"ratio ours / reference  {t_load / t_ref:>12.2f}")
    print(f"components              {len(diag.connectivity.components):>12}")
    bridge = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "bridge" / "all_a_pyirt.jsonl"
    if bridge.exists():  # the py-irt importer on a real file (176 subject ids, 86,441 responses)
        t0 = time.perf_counter()
        pyirt = load_corpus(bridge)
        t_pyirt = time.perf_counter() - t0
        t0 = time.perf_counter()
        with open(bridge, encoding="utf-8") as fh:
            n_lines = sum(1 for _ in fh)
        t_lines = time.perf_counter() - t0
        print(f"BRIDGE py-irt import    {t_pyirt:>12.2f} s   ({pyirt.n_records:,} records from {n_lines} subject lines)")
        print(f"reference: read lines  {t_lines:>12.2f} s   (ratio {t_pyirt / max(t_lines, 1e-9):.0f}x)")


if __name__ == "__main__":
    main()
