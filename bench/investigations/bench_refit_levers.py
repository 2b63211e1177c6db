"""Why a TB2 hold-out refit mixes worse per draw than its parent, lever by lever (session 17).

For a few Terminal-Bench 2.0 hold-out splits (training 70% and held-out 30% of each cell's
trials), warm-started from one parent fit, each lever is run through
:func:`~ddr_explorer.core.model.refit.fit_refits` at the split settings
(:func:`~ddr_explorer.core.analyses.heldout.split_settings`: 4 chains, run length by the gate)
in this one process, and reported with what the sampler did, not only what it cost:

- CPU seconds per refit (this process, all threads: the comparable figure on a shared machine),
- draws per chain where the gate stopped, and the smallest bulk ESS per draw (ESS / (chains x
  draws)) over the variance components,
- leapfrog steps per iteration (NUTS tree size: the work per draw) and the adapted step size,
  during sampling; the same figures for the parent,
- the scale moves' and the collapsed Gibbs step's acceptance rates.

Usage: ``nice python bench/investigations/bench_refit_levers.py [--splits 3] [--parent FILE.h5] [--only SUBSTR]``
(``--parent``: the parent posterior as a fit file from an earlier run, as in bench_refit_cost.py).  Shared machine: compare levers within one run (CPU seconds, ratios).
"""

from __future__ import annotations

import sys as _sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

#: bench/ (simulate, _child, _reference, bench_sampler, bench_recovery) and this folder, importable by name.
_BENCH = _Path(__file__).resolve().parents[1]
_sys.path[:0] = [p for p in (str(_BENCH), str(_BENCH / "investigations")) if p not in _sys.path]

import argparse
import contextlib
import dataclasses
import sys
import time
from pathlib import Path

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_refit_cost import parent_and_requests  # noqa: E402


def describe(p, label=""):
    """One line: draws, ESS per draw, leapfrog steps and step size during sampling, acceptance rates."""
    import numpy as np

    st = p.sample_stats
    C, N = p.mu.shape
    tab = p.diagnostics.table.drop(index="mu")
    ess = float(tab["ess_bulk"].min())
    worst = str(tab["ess_bulk"].idxmin())
    steps = float(np.mean(st["num_steps"]))
    eps = float(np.median(st["step_size"]))
    sc = f", scale acc {float(np.mean(st['scale_accept'])):.2f}" if "scale_accept" in st else ""
    gb = f", gibbs acc {float(np.mean(st['gibbs_accept'])):.2f}" if "gibbs_accept" in st else ""
    wsteps = (f", warmup steps/it {float(np.mean(st['warmup_num_steps'])):.0f}"
              if "warmup_num_steps" in st else "")
    per = " ".join(f"{k}={v / (C * N):.2f}" for k, v in tab["ess_bulk"].items())
    return (f"{label}draws/chain {N}, min bulk ESS {ess:.0f} ({worst}) = {ess / (C * N):.3f}/draw, "
            f"leapfrog/it {steps:.1f}, step {eps:.4f}{wsteps}{sc}{gb}, R-hat {float(tab['r_hat'].max()):.3f}; "
            f"ESS/draw {per}")


@contextlib.contextmanager
def patched(obj, **kw):
    old = {k: getattr(obj, k) for k in kw}
    for k, v in kw.items():
        setattr(obj, k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            setattr(obj, k, v)


def _layout(k):
    def layout(n_refits, chains, kind, n_devices):
        per = min(k, n_refits)
        return per, per * chains
    return layout


def main(argv=None):
    import numpy as np

    from ddr_explorer.core.analyses.heldout import split_settings
    from ddr_explorer.core.model import refit as refit_mod
    from ddr_explorer.core.model.refit import fit_refits

    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=3)
    ap.add_argument("--parent", type=Path)
    ap.add_argument("--only", default=None, help="comma-separated substrings of the levers to run")
    a = ap.parse_args(argv)
    settings, _, parent, eng, reqs = parent_and_requests(a.splits, a.parent)
    print(describe(parent, "parent: "))
    sys.stdout.flush()
    s = split_settings(settings)
    print(f"{eng.design.n_cells} cells, {len(reqs)} refits per lever; split settings: {s.chains} chains, "
          f"gate >= {s.draws}, every {s.check_every}, <= {s.max_draws}")
    # lever: (module constants of refit.py to patch, warm warmup, SamplerSettings fields to change)
    levers = {
        "baseline (today)": ({}, None, {}),
        "warmup 100": ({}, 100, {}),
        "fixed mass (parent draws), W50": ({"WARM_ADAPT_MASS": False}, 50, {}),
        "scale steps 2": ({}, None, {"scale_steps": 2}),
        "scale steps 0": ({}, None, {"scale_steps": 0}),
        "scale steps 12": ({}, None, {"scale_steps": 12}),
        "collapsed off": ({}, None, {"collapsed": "off"}),
        "target accept 0.75": ({}, None, {"target_accept": 0.75}),
        "2 chains, target accept 0.75": ({}, None, {"chains": 2, "draws": 200, "max_draws": 2000,
                                                    "target_accept": 0.75}),
        "2 chains, gate >= 200": ({}, None, {"chains": 2, "draws": 200, "max_draws": 2000}),
        # several refits' chains vmapped in one CPU program (refits x 4 chains over the 2 CPU devices)
        "batch 2 refits": ({"batch_layout": _layout(2)}, None, {}),
        "batch 4 refits": ({"batch_layout": _layout(4)}, None, {}),
    }
    wanted = a.only.split(",") if a.only else None
    for name, (patch, W, change) in levers.items():
        if wanted and not any(w in name for w in wanted):
            continue
        t, c = time.perf_counter(), time.process_time()
        with patched(refit_mod, **patch):
            posts = fit_refits(eng.design, eng.fitted_spec, reqs, dataclasses.replace(s, **change), parent=parent,
                               warmup=W)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        n = len(posts)
        C = posts[0].mu.shape[0]
        draws = [p.mu.shape[1] for p in posts]
        epd = [float(p.diagnostics.table.drop(index="mu")["ess_bulk"].min()) / (C * p.mu.shape[1]) for p in posts]
        steps = [float(np.mean(p.sample_stats["num_steps"])) for p in posts]
        conv = sum(bool(p.diagnostics.converged) for p in posts)
        div = sum(int(p.diagnostics.divergences) for p in posts)
        comp = posts[0].timings["compile"]
        Wr = posts[0].settings.warmup
        ms_it = 1000 * cpu / sum(C * (Wr + d) for d in draws)
        ess_cpu = np.mean([e * C * d for e, d in zip(epd, draws)]) / (cpu / n)
        print(f"== {name}: CPU {cpu / n:.1f} s/refit (wall {wall / n:.1f}, compile once {comp:.1f} s wall); "
              f"{ms_it:.1f} ms CPU per chain-iteration (warmup {Wr}); min ESS per CPU s {ess_cpu:.1f}; "
              f"draws/chain mean {np.mean(draws):.0f} ({min(draws)}-{max(draws)}); ESS/draw mean {np.mean(epd):.3f} "
              f"({min(epd):.3f}-{max(epd):.3f}); leapfrog/it mean {np.mean(steps):.1f}; {conv}/{n} pass; {div} div")
        for r, p in zip(reqs, posts):
            print("   ", describe(p, f"{r.label}: "))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
