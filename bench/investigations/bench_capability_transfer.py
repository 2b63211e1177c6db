"""Capability scale (IRT, seed 002 sec. 5.3) and transfer across benchmarks (seed 003 sec. 5.5) on the
real corpora; prints the figures and writes the JSON of each run.

Usage (slow: run once, niced)::

    nice python bench/investigations/bench_capability_transfer.py --corpus tb2 --out /tmp/irt-bench
    nice python bench/investigations/bench_capability_transfer.py --corpus bridge --which capability --no-gstudy

``tb2`` is the demo corpus (resources/demo), ``bridge`` the pooled BRIDGE py-irt matrix
(../shared/corpora/bridge/all_a_pyirt.jsonl).  Times are wall seconds on whatever box runs it.
"""

from __future__ import annotations

import sys as _sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

#: bench/ (simulate, _child, _reference, bench_sampler, bench_recovery) and this folder, importable by name.
_BENCH = _Path(__file__).resolve().parents[1]
_sys.path[:0] = [p for p in (str(_BENCH), str(_BENCH / "investigations")) if p not in _sys.path]

import argparse
import json
import time
from pathlib import Path

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.analyses.capability import capability_study, format_capability
from ddr_explorer.core.analyses.transfer import format_transfer, read_family_map, transfer_study
from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.fitting import fit_corpus
from ddr_explorer.core.model.posterior import SamplerSettings

ROOT = Path(__file__).resolve().parents[2]
CORPORA = {"tb2": ROOT / "resources" / "demo" / "terminal-bench-2.csv",
           "bridge": ROOT.parent / "shared" / "corpora" / "bridge" / "all_a_pyirt.jsonl"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", choices=sorted(CORPORA), default="tb2")
    ap.add_argument("--which", default="capability,transfer")
    ap.add_argument("--no-gstudy", action="store_true", help="capability: no G-study fit to compare with")
    ap.add_argument("--irt", default="1pl,2pl", help="capability: IRT models, comma-separated")
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--gdraws", type=int, default=None, help="draws of each G-study fit (default: the sampler's)")
    ap.add_argument("--gwarmup", type=int, default=None, help="warmup of each G-study fit (default: the sampler's)")
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=Path("/tmp/irt-bench"))
    ap.add_argument("--sheet", type=Path, default=None, help="also write the DDR sheet with these analyses")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    corpus = load_corpus(CORPORA[a.corpus])
    print(f"{a.corpus}: {corpus.n_levels('benchmark')} benchmarks, {corpus.n_levels('model')} models, "
          f"{corpus.n_levels('task')} tasks, {corpus.n_trials} trials", flush=True)
    spec = "pooled" if corpus.n_levels("benchmark") > 1 else "per-benchmark"
    settings = SamplerSettings()
    if a.gdraws or a.gwarmup:
        settings = SamplerSettings(draws=a.gdraws or settings.draws, warmup=a.gwarmup or settings.warmup)

    def progress(phase, i, n, eta):
        print(f"  [{time.strftime('%H:%M:%S')}] {phase} {i}/{n}", flush=True)

    which = a.which.split(",")
    studies = {}
    if "capability" in which:
        t0 = time.perf_counter()
        gstudy = None if a.no_gstudy else (lambda: fit_corpus(corpus, spec, settings, cache_dir=a.cache).posterior)
        st = capability_study(corpus, gstudy=gstudy, models=a.irt.split(","), warmup=a.warmup, draws=a.draws,
                              progress=progress)
        d = st.to_dict()
        print(f"capability: {time.perf_counter() - t0:.0f} s wall ("
              + ", ".join(f"{k.upper()} sampler {f.seconds:.0f} s" for k, f in st.fits.items()) + ")")
        print(format_capability(d))
        (a.out / f"{a.corpus}-capability.json").write_text(json.dumps(d, indent=1))
        studies["capability"] = st
    if "transfer" in which:
        t0 = time.perf_counter()
        st = transfer_study(corpus, "per-benchmark", settings, a.cache, progress,
                            families=read_family_map(ROOT / "resources" / "aliases" / "families.toml"))
        d = st.to_dict()
        print(f"transfer: {time.perf_counter() - t0:.0f} s wall")
        print(format_transfer(d))
        (a.out / f"{a.corpus}-transfer.json").write_text(json.dumps(d, indent=1))
        studies["transfer"] = st
    if a.sheet is not None:  # the sheet's main fit is the G-study above (a cache hit)
        from ddr_explorer.core.ddr_sheet import write_ddr_sheet

        res = write_ddr_sheet(corpus, a.sheet, preset=spec, settings=settings, cache_dir=a.cache,
                              analyses={k: (lambda ctx, _v=v: _v) for k, v in studies.items()}, date_invariant=True)
        print(f"wrote {res.path}")


if __name__ == "__main__":
    main()
