"""Where a TB2 hold-out refit's time goes, per refit configuration (target: ~5 s per refit on 2 cores).

For a few Terminal-Bench 2.0 hold-out splits (2 refits each: training 70%, held-out 30% of every
cell's trials), warm-started from one parent fit, each configuration is run through
:func:`~ddr_explorer.core.model.refit.fit_refits` in this one process and reported with:

- wall and CPU seconds per refit (CPU: this process's threads; on a shared machine the CPU
  seconds are the comparable figure, wall / CPU shows the contention),
- the split of the wall time: preparing (masked design, rough fit, starts), compile, warmup +
  sampling, assembling the posterior (diagnostics included), writing its cache entry,
- draws per chain (gate stopping: where the gate stopped it), the smallest bulk ESS of a variance
  component, how many refits pass the gate (no rerun needed), divergences.

Usage: ``nice python bench/investigations/bench_refit_cost.py [--splits 3] [--parent FILE.h5]`` (``--parent``: the
parent posterior as a fit file, written by an earlier run of this script through the fit cache's own
format (atomic, verified on read, no pickle), to skip the parent fit).  Measured on a shared machine: compare configurations
within one run.
"""

from __future__ import annotations

import sys as _sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

#: bench/ (simulate, _child, _reference, bench_sampler, bench_recovery) and this folder, importable by name.
_BENCH = _Path(__file__).resolve().parents[1]
_sys.path[:0] = [p for p in (str(_BENCH), str(_BENCH / "investigations")) if p not in _sys.path]

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains

ROOT = Path(__file__).resolve().parents[2]


def configs(base):
    fixed = dict(stop="fixed", max_draws=None, max_seconds=None)
    return {
        "4 ch, W100, fixed 250 (before)": (dataclasses.replace(base, chains=4, draws=250, warmup=250, **fixed), 100),
        "4 ch, W50, gate >=100/50": (dataclasses.replace(base, chains=4, draws=100, warmup=250, stop="gate",
                                                           max_draws=1000, check_every=50), 50),
        "2 ch, W50, gate >=200/50": (dataclasses.replace(base, chains=2, draws=200, warmup=250, stop="gate",
                                                           max_draws=2000, check_every=50), 50),
    }


def parent_and_requests(n_splits: int, parent_path: Path | None):
    """The TB2 parent posterior (fitted, or reopened from ``parent_path``), its engine, and the training
    and held-out requests of ``n_splits`` hold-out splits; also the folder the benches write to."""
    import numpy as np

    from ddr_explorer.core.analyses.engine import RefitEngine
    from ddr_explorer.core.analyses.heldout import _part, split_cells
    from ddr_explorer.core.cache import FitCache, read_fit_file
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.fitting import fit_corpus, posterior_from_entry, posterior_to_entry
    from ddr_explorer.core.model import SamplerSettings

    corpus = load_corpus(ROOT / "resources" / "demo" / "terminal-bench-2.csv")
    settings = SamplerSettings()
    tmp = tempfile.mkdtemp()
    if parent_path and parent_path.exists():
        parent = posterior_from_entry(read_fit_file(parent_path))
        print(f"parent reopened from {parent_path}: wall {parent.wall_seconds:.1f} s")
    else:
        t, c = time.perf_counter(), time.process_time()
        parent = fit_corpus(corpus, "per-benchmark", settings, cache_dir=tmp).posterior
        print(f"parent fit: wall {time.perf_counter() - t:.1f} s, CPU {time.process_time() - c:.1f} s, "
              f"converged {parent.diagnostics.converged}")
        if parent_path:  # the fit cache's format, written atomically by FitCache, then moved where asked
            os.replace(FitCache(parent_path.parent).store("bench-parent", posterior_to_entry(parent, corpus)),
                       parent_path)
    sys.stdout.flush()
    eng = RefitEngine(corpus, "per-benchmark", settings, cache_dir=tmp, parent=parent)
    reqs = []
    for i in range(n_splits):
        train, held = split_cells(corpus.table, np.random.default_rng([0, i]))
        reqs.append(eng.request(f"split {i + 1} train", _part(corpus, train, "t")))
        reqs.append(eng.request(f"split {i + 1} held-out", _part(corpus, held, "h")))
    return settings, tmp, parent, eng, reqs


def main(argv=None):
    import numpy as np

    from ddr_explorer.core.cache import FitCache
    from ddr_explorer.core.fitting import posterior_to_entry
    from ddr_explorer.core.model.refit import fit_refits

    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=3)
    ap.add_argument("--parent", type=Path)
    ap.add_argument("--only", default=None, help="substring of the configurations to run")
    a = ap.parse_args(argv)
    settings, tmp, parent, eng, reqs = parent_and_requests(a.splits, a.parent)
    design = eng.design
    print(f"{design.n_cells} cells, {len(reqs)} refits per configuration")
    for name, (s, W) in configs(settings).items():
        if a.only and a.only not in name:
            continue
        t, c = time.perf_counter(), time.process_time()
        posts = fit_refits(design, eng.fitted_spec, reqs, s, parent=parent, warmup=W)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        t2 = time.perf_counter()
        cache = FitCache(tmp)
        for k, p in enumerate(posts):
            cache.store(f"{name}-{k}".replace(" ", "_").replace(",", "").replace("/", "_").replace(">=", "ge")
                        .replace("(", "").replace(")", ""), posterior_to_entry(p, None))
        write = (time.perf_counter() - t2) / len(posts)
        n = len(posts)
        prep = np.mean([p.timings["design"] for p in posts])
        samp = np.mean([p.timings["sampling"] for p in posts])
        comp = posts[0].timings["compile"]
        draws = [p.mu.shape[1] for p in posts]
        ess = [float(p.diagnostics.table.drop(index="mu")["ess_bulk"].min()) for p in posts]
        conv = sum(bool(p.diagnostics.converged) for p in posts)
        div = sum(int(p.diagnostics.divergences) for p in posts)
        rest = wall / n - prep - samp - comp / n
        print(f"{name}: wall {wall:.1f} s = {wall / n:.2f} s/refit, CPU {cpu / n:.2f} s/refit (wall/CPU "
              f"{wall / cpu:.2f}); per refit: prepare {prep:.2f}, compile {comp / n:.2f} (once {comp:.1f}), "
              f"warmup+sampling {samp:.2f}, posterior+rest {rest:.2f}, cache write {write:.2f} s; "
              f"draws/chain {min(draws)}-{max(draws)} (mean {np.mean(draws):.0f}); min bulk ESS "
              f"{min(ess):.0f}-{max(ess):.0f}; {conv}/{n} pass the gate; {div} divergences")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
