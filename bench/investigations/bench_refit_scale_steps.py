"""TB2 hold-out refits with the scale moves' default repeats against fewer, interleaved.

For K Terminal-Bench 2.0 hold-out splits (training 70% and held-out 30% of every cell's trials, both
refitted), warm-started from one parent fit, at the split settings and stopped by the reported rule
(Erho2 at the split's held-out design, :func:`~ddr_explorer.core.model.stopping.check_reported`),
each round runs every variant of ``SamplerSettings.scale_steps`` on the same refits with the same seed
(another seed each round).  Printed per round and variant: CPU seconds per refit, draws per chain where
the rule stopped, leapfrog steps per draw, how many refits passed, the Erho2 medians; at the end the
CPU seconds per refit of each variant over all rounds.  The figure of merit is CPU per refit: the rule
stops at the same ESS, so a variant that mixes worse pays in draws.

Usage (from the repository root): ``python bench/investigations/bench_refit_scale_steps.py [--splits 4] [--rounds 2]
[--variants 6,2] [--first-round 0] [--parent FILE.h5]``.  Compare variants within one run.
"""

from __future__ import annotations

import sys as _sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

#: bench/ (simulate, _child, _reference, bench_sampler, bench_recovery) and this folder, importable by name.
_BENCH = _Path(__file__).resolve().parents[1]
_sys.path[:0] = [p for p in (str(_BENCH), str(_BENCH / "investigations")) if p not in _sys.path]

import argparse
import dataclasses
import importlib.util
import sys
from pathlib import Path

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains

ROOT = Path(__file__).resolve().parents[2]


def main(argv=None) -> None:
    import numpy as np

    from ddr_explorer.core.analyses.heldout import _part, split_cells, split_settings
    from ddr_explorer.core.analyses.refits import coefficient_draws
    from ddr_explorer.core.analyses.reported import ReportedQuantity, reported_verdict
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.dstudy import observed_design

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--variants", default="6,2", help="scale_steps values, comma-separated (the default is 6)")
    ap.add_argument("--first-round", type=int, default=0, help="first round's seed offset")
    ap.add_argument("--parent", type=Path, help="the parent as a fit file (written on the first run)")
    a = ap.parse_args(argv)
    spec = importlib.util.spec_from_file_location("ddr_bench_refit_reported",
                                                  Path(__file__).with_name("bench_refit_reported.py"))
    brr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(brr)
    settings, _tmp, parent, eng, reqs = brr._cost_module().parent_and_requests(a.splits, a.parent)
    corpus = load_corpus(ROOT / "resources" / "demo" / "terminal-bench-2.csv")
    designs = [observed_design(_part(corpus, split_cells(corpus.table, np.random.default_rng([0, i]))[1], "h"))
               for i in range(a.splits)]
    rep = [dataclasses.replace(r, reported=(ReportedQuantity.coefficient(designs[j // 2], "the held-out design"),))
           for j, r in enumerate(reqs)]
    base = split_settings(settings)
    variants = [int(v) for v in a.variants.split(",")]
    total = {v: [0.0, 0] for v in variants}
    for rnd in range(a.first_round, a.first_round + a.rounds):
        for v in variants:
            s = dataclasses.replace(base, scale_steps=v, seed=base.seed + rnd)
            posts, cpu, wall = brr._run(eng.design, eng.fitted_spec, rep, s, parent)
            dr = [int(p.mu.shape[1]) for p in posts]
            ok = sum(reported_verdict(p, r.reported).converged for p, r in zip(posts, rep))
            med = [float(np.median(coefficient_draws(p, designs[j // 2]))) for j, p in enumerate(posts)]
            steps = np.mean([np.mean(p.sample_stats["num_steps"]) for p in posts])
            total[v][0] += cpu
            total[v][1] += len(rep)
            print(f"round {rnd} scale_steps {v}: {cpu:7.1f} CPU s ({cpu / len(rep):5.1f}/refit) wall {wall:6.1f}; "
                  f"draws/chain {dr} (mean {np.mean(dr):.0f}); leapfrog/draw {steps:.1f}; converged {ok}/{len(rep)}; "
                  f"Erho2 {' '.join(f'{m:.3f}' for m in med)}", flush=True)
    for v in variants:
        print(f"scale_steps {v}: {total[v][0] / total[v][1]:.1f} CPU s per refit over {total[v][1]} refits")


if __name__ == "__main__":
    main()
