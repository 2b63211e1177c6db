"""Benchmark: the DDR sheet of the demo corpus from a cached fit, end to end.

What ``ddr report`` and the app's "Export DDR sheet" do once a fit is cached:
:func:`ddr_explorer.core.report.write_ddr_sheet` on the demo corpus
(Terminal-Bench 2.0, one benchmark, 29 models, 81 agents, 36,867 trials):
read and validate the corpus, reopen the fit from the HDF5 cache (a cache
hit: nothing is sampled), fill the inputs (design diagnostics, prices,
accuracy per agent, task difficulty) and compute every number the sheet shows
(D-study view and summary, ranks and dominance) and lay out and write all
seven pages.  The stages are also timed one by one.

The fit is made once, before timing, with short settings (``--draws``,
``--warmup``, ``--chains``; the sheet's cost does not depend on whether the
fit converged, only on the number of draws), into ``--cache`` (a temporary
folder by default; give a folder to keep the fit between runs).

Reference, measured in the same run: reading and validating the same corpus
(:func:`~ddr_explorer.core.corpus.io.load_corpus`), the step every use of the
corpus pays.  The ratio sheet / reference is what to compare across machines.

Target (issue brief): at most 5 s per sheet from a cached fit.

Run:  python bench/bench_report.py [--repeats 5] [--cache DIR] [--out sheet.pdf]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.fitting import fit_corpus
from ddr_explorer.core.model import SamplerSettings
from ddr_explorer.core.ddr_sheet import write_ddr_sheet
from ddr_explorer.core.report import build_sheet, report_inputs_from

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "resources" / "demo" / "terminal-bench-2.csv"


def _median_time(fn, repeats: int) -> tuple[float, float]:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), max(times)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--draws", type=int, default=250, help="post-warmup draws per chain of the cached fit")
    ap.add_argument("--warmup", type=int, default=150)
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--cache", type=Path, help="fit cache folder (default: a temporary one)")
    ap.add_argument("--out", type=Path, help="also keep the (date-invariant) sheet here")
    a = ap.parse_args(argv)
    settings = SamplerSettings(stop="fixed", draws=a.draws, warmup=a.warmup, chains=a.chains, seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        cache = a.cache or Path(tmp) / "cache"
        out = Path(tmp) / "sheet.pdf"
        t = time.perf_counter()
        corpus = load_corpus(DEMO)
        fit = fit_corpus(corpus, "per-benchmark", settings, cache_dir=cache)
        prep = time.perf_counter() - t
        n_draws = a.draws * a.chains

        # reference: read and validate the corpus
        ref, _ = _median_time(lambda: load_corpus(DEMO), a.repeats)
        # the whole path, as `ddr report` runs it on a cache hit
        full, full_max = _median_time(
            lambda: write_ddr_sheet(DEMO, out, settings=settings, cache_dir=cache, date_invariant=True), a.repeats)
        # its stages
        hit, _ = _median_time(lambda: fit_corpus(corpus, "per-benchmark", settings, cache_dir=cache), a.repeats)
        post = fit_corpus(corpus, "per-benchmark", settings, cache_dir=cache).posterior
        inp_t, _ = _median_time(lambda: report_inputs_from(corpus, posterior=post), a.repeats)
        inputs = report_inputs_from(corpus, posterior=post)
        pdf_t, _ = _median_time(lambda: build_sheet(inputs, out, date_invariant=True), a.repeats)
        size = out.stat().st_size
        # the command a user types: a fresh process (imports included), on the same cache hit
        cmd = [sys.executable, "-m", "ddr_explorer.core.cli", "report", str(DEMO), "-o", str(out), "--cache",
               str(cache), "--draws", str(a.draws), "--warmup", str(a.warmup), "--chains", str(a.chains),
               "--seed", "0", "--date-invariant", "--quiet"]
        cli, _ = _median_time(lambda: subprocess.run(cmd, check=True, capture_output=True), max(1, a.repeats // 2))
        if a.out:
            a.out.write_bytes(out.read_bytes())

    print(f"DDR sheet of {corpus.name} from a cached fit ({n_draws:,} draws, {corpus.n_levels('model')} models; "
          f"fit {'reopened' if fit.from_cache else f'made in {prep:.0f} s'} before timing), "
          f"median of {a.repeats}:")
    print(f"  reference: read and validate the corpus     {ref:7.3f} s")
    print(f"  write_ddr_sheet, end to end (cache hit)     {full:7.3f} s  (max {full_max:.3f} s)  "
          f"= {full / ref:.1f} x reference")
    print(f"    reopen the cached fit                     {hit:7.3f} s")
    print(f"    fill the inputs (diagnostics, accuracy)   {inp_t:7.3f} s")
    print(f"    compute numbers, lay out, write 7 pages   {pdf_t:7.3f} s  ({size / 1024:.0f} KiB)")
    print(f"  `ddr report` in a fresh process (imports)   {cli:7.3f} s  = {cli / ref:.0f} x reference")
    print(f"  target <= 5 s end to end: {'met' if full <= 5.0 else 'MISSED'} (in process); "
          f"{'met' if cli <= 5.0 else 'MISSED'} (fresh process)")


if __name__ == "__main__":
    main()
