"""Benchmark: build the DDR sheet (PDF) from ready inputs.

The inputs are what :func:`ddr_explorer.core.report.report_inputs_from` returns
for the demo corpus (Terminal-Bench 2.0, one benchmark, 29 models, 81 agents)
with a synthetic posterior shaped like its per-benchmark fit (sigma task 3.0,
model 1.74, scaffold 0.37, task:model 1.39, task:scaffold 1.11,
model:scaffold 0.46; 2,000 draws with spread) and latent-capability draws for
the rank pages.  A build computes every number the sheet shows (the D-study
view and summary, the cost frontier when there are prices, ranks and
dominance) and lays out and writes all seven pages; preparing the inputs
(reading the corpus, its design diagnostics) is not timed.

Target (issue brief): at most 5 s per build.

Run:  python bench/bench_report.py [--repeats 5] [--out sheet.pdf] [--prices]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.reliability import VarianceComponents
from ddr_explorer.core.report import build_sheet, report_inputs_from, sheet_content

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "resources" / "demo" / "terminal-bench-2.csv"

#: Terminal-Bench 2.0 per-benchmark posterior means of sigma, and the relative spread of each.
TB_SIGMAS = {"task": 3.0, "model": 1.74, "scaffold": 0.37, "task:model": 1.39, "task:scaffold": 1.11,
             "model:scaffold": 0.46}
TB_SPREAD = {"task": 0.08, "model": 0.14, "scaffold": 0.3, "task:model": 0.05, "task:scaffold": 0.08,
             "model:scaffold": 0.25}
FIT_INFO = {"method": "NUTS (numpyro)", "converged": True, "max_rhat": 1.004, "min_ess_bulk": 812, "divergences": 0,
            "settings": {"chains": 4, "draws": 500, "warmup": 400, "seed": 0, "target_accept": 0.8},
            "device": "cpu (4 devices)", "wall_seconds": 95.0}


def demo_inputs(n_draws: int = 2000, prices: bool = False, seed: int = 0):
    """Report inputs of the demo corpus with a synthetic Terminal-Bench-shaped posterior."""
    rng = np.random.default_rng(seed)
    corpus = load_corpus(DEMO)
    comps = VarianceComponents.from_mapping(
        {t: (s * np.exp(rng.normal(0.0, TB_SPREAD[t], n_draws))) ** 2 for t, s in TB_SIGMAS.items()},
        source="synthetic Terminal-Bench fit")
    g = corpus.table.groupby("model", observed=True)[["successes", "trials"]].sum()
    acc = ((g["successes"] + 0.5) / (g["trials"] + 1)).to_numpy()
    u = np.log(acc / (1 - acc))
    theta = (u - u.mean())[None, :] + rng.normal(0.0, 0.35, (n_draws, len(u)))
    return report_inputs_from(corpus, comps, theta, model_names=[str(m) for m in g.index], fit_info=FIT_INFO,
                              prices={"terminal-bench-2.0": 0.85} if prices else None)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--prices", action="store_true", help="add a price per trial (draws the cost frontier too)")
    ap.add_argument("--out", type=Path, help="also keep the (date-invariant) sheet here")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    inputs = demo_inputs(a.draws, a.prices)
    prep = time.perf_counter() - t0
    times, content = [], []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sheet.pdf"
        for _ in range(a.repeats):
            t = time.perf_counter()
            sheet_content(inputs)
            content.append(time.perf_counter() - t)
            t = time.perf_counter()
            build_sheet(inputs, path, date_invariant=True)
            times.append(time.perf_counter() - t)
        size = path.stat().st_size
        if a.out:
            a.out.write_bytes(path.read_bytes())
    med = statistics.median(times)
    print(f"DDR sheet of {inputs.corpus_name} ({a.draws:,} draws, {len(inputs.model_names)} models, "
          f"{'with' if a.prices else 'no'} prices): inputs prepared in {prep:.2f} s (not timed)")
    print(f"  compute numbers (sheet_content): median {statistics.median(content):.3f} s")
    print(f"  build_sheet (compute + layout + write): median {med:.3f} s, max {max(times):.3f} s over "
          f"{a.repeats} builds; {size / 1024:.0f} KiB")
    print(f"  target <= 5 s: {'met' if med <= 5.0 else 'MISSED'}")


if __name__ == "__main__":
    main()
