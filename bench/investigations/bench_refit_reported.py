"""Refits stopped on what they report (Erho2 at the held-out design) against the component rule.

For K Terminal-Bench 2.0 hold-out splits (seed 003 sec. 5.4; both fits of each: training 70% and
held-out 30% of every cell's trials), warm-started from one parent fit, the refits are run through
:func:`~ddr_explorer.core.model.refit.fit_refits` twice in this one process:

- **reported**: the split settings (:func:`~ddr_explorer.core.analyses.heldout.split_settings`: 4 chains,
  at least 100 draws per chain, a look every 50, at most 1,000) with the rule of
  :func:`~ddr_explorer.core.model.stopping.check_reported` on Erho2 at the split's held-out design;
- **reference**: the same settings with ANOTHER seed (independent draws) under the component rule
  (every variance component's R-hat, bulk and tail ESS >= 440), or with ``--reference fixed:N`` a
  fixed N draws per chain, or with ``--reference cold:N`` a fixed N draws per chain started COLD (no parent,
  250 warmup iterations, ``marginalise="off"``, seed + 2): a reference that shares nothing with the warm starts.
  Session 19 (bench/investigations/bench_refit_bias.py) found the warm seed-+1 reference of splits 1-8 sitting 0.4-0.5 MCSE
  low against cold runs by chance, which is what session 18's +0.4-0.7 MCSE "shift" was; one reference seed is
  one draw of that chance, so read the mean z against its standard error.

Per refit: the Erho2 median under both, its MCSE (ArviZ's ``mcse(method="median")``) under both,
``z = (reported - reference) / sqrt(mcse_r^2 + mcse_ref^2)``, draws per chain and CPU seconds; over
the refits the mean z and the share |z| < 2 (about 95% if the rule does not bias the median); per
split the gap (held-out minus projected) and across splits the Pearson r, under both rules.

``--difficulty``: instead, the 4 difficulty strata (seed 003 sec. 5.3) under the reported rule at the
parent's settings, with the engine's predicted draws per chain beside the measured ones.

Usage: ``nice python bench/investigations/bench_refit_reported.py [--splits 8] [--parent FILE.h5] [--reference gate|fixed:N|cold:N]
[--difficulty] [--estimate] [--ab N]``; ``--estimate``: the full TB2 sheet's estimate under both rules;
``--ab N``: the reported-rule refits with the scale moves' closed-form potential and the NUTS state's
U0 against without, N interleaved rounds (session 19).
Measured on a shared machine: compare the two rules within one run (CPU seconds and their ratio).
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
import time
from pathlib import Path

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains

ROOT = Path(__file__).resolve().parents[2]


def _cost_module():
    spec = importlib.util.spec_from_file_location("ddr_bench_refit_cost",
                                                  Path(__file__).with_name("bench_refit_cost.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(design, spec, reqs, settings, parent):
    from ddr_explorer.core.model.refit import fit_refits

    c, t = time.process_time(), time.perf_counter()
    posts = fit_refits(design, spec, reqs, settings, parent=parent)
    return posts, time.process_time() - c, time.perf_counter() - t


def difficulty(parent, eng, settings, corpus):
    """The 4 difficulty strata (seed 003 sec. 5.3) refitted under the reported rule (the coefficient at the
    corpus's observed design): draws per chain, verdicts and CPU s against what the engine predicted."""
    import numpy as np

    from ddr_explorer.core.analyses.difficulty import stratum_masks, task_difficulty
    from ddr_explorer.core.analyses.engine import expected_draws, reported_ess_per_draw
    from ddr_explorer.core.analyses.refits import sub_corpus
    from ddr_explorer.core.analyses.reported import ReportedQuantity, reported_verdict
    from ddr_explorer.core.dstudy import observed_design
    from ddr_explorer.core.model.stopping import check_gate

    strata = task_difficulty(corpus.table, 4)
    q = ReportedQuantity.coefficient(observed_design(corpus), "the whole corpus's design")
    reqs = [dataclasses.replace(eng.request(lab, sub_corpus(corpus, m, lab)), reported=(q,))
            for lab, m in zip(strata.labels, stratum_masks(corpus, strata))]
    rs = settings
    print(f"\ndifficulty strata under the reported rule ({q.label}); settings: {rs.chains} chains, >= {rs.draws} "
          f"draws, look every {rs.check_every}, <= {rs.max_draws}")
    print(f"engine prediction: {expected_draws(parent, rs, reported=(q,))} draws per chain on the reported rule "
          f"(parent's ESS per draw of it {reported_ess_per_draw(parent, (q,)):.2f}); "
          f"{expected_draws(parent, rs)} on the component rule")
    posts, cpu, wall = _run(eng.design, eng.fitted_spec, reqs, rs, parent)
    print(f"{cpu:.1f} CPU s, {wall:.1f} s wall for {len(reqs)} strata")
    for r, p in zip(reqs, posts):
        v = reported_verdict(p, r.reported)
        names = list(p.sigma)
        sig = np.stack([p.sigma[t] for t in names], axis=-1)
        comp = check_gate(sig, int(np.sum(p.sample_stats["diverging"])), names)
        print(f"{r.label:14s} {p.mu.shape[1]:5d} draws/chain  {'converged' if v.converged else 'NOT'} on Erho2; "
              f"component rule would say: {'pass' if comp.passed else '; '.join(comp.reasons[:3])}")


def estimate(parent, corpus):
    """The full sheet's estimate (difficulty + 50 splits + LOO) with the reported rule's run lengths and with
    the component rule's (every refit priced on the parent's slowest component), from the same parent."""
    from ddr_explorer.core.analyses import defaults, engine

    after = defaults.plan_sheet_analyses(corpus, parent, n_splits=50)
    real = engine.reported_ess_per_draw
    engine.reported_ess_per_draw = lambda *a, **k: None  # the component rule's prediction
    try:
        before = defaults.plan_sheet_analyses(corpus, parent, n_splits=50)
    finally:
        engine.reported_ess_per_draw = real
    for name, plan in (("component rule", before), ("reported rule", after)):
        print(f"{name}: {plan.describe()} "
              f"({', '.join(f'{k} {v:.0f} s' for k, v in plan.seconds.items())}); by default: {plan.runs_by_default}")
    print(f"ratio {before.total_seconds / after.total_seconds:.2f}x")


def ab(rounds, design, spec, reqs, settings, parent, designs):
    """The same refits (same seed) with the scale moves' closed-form potential and the NUTS state's U0 (new:
    ``parameterisation.SCALE_LEVERS = {"incremental"}``, ``refit_chains.SCALE_U0 = True``) and without (old),
    interleaved: CPU s per refit, draws per chain, and each refit's Erho2 median new against old in units
    of their joint MCSE (draws differ by float32 rounding only, so z should look like N(0, 1) or tighter)."""
    import arviz as az
    import numpy as np

    from ddr_explorer.core.analyses.refits import coefficient_draws
    from ddr_explorer.core.model import parameterisation as P
    from ddr_explorer.core.model import refit_chains as RC

    print(f"{len(reqs)} refits; settings: {settings.chains} chains, >= {settings.draws} draws, look every "
          f"{settings.check_every}; shared box: read the same-run ratios")
    res = {"old": [], "new": []}
    defaults = (set(P.SCALE_LEVERS), RC.SCALE_U0)
    for rnd in range(rounds):
        for v in ("old", "new"):
            P.SCALE_LEVERS = {"incremental"} if v == "new" else set()
            RC.SCALE_U0 = v == "new"
            posts, cpu, wall = _run(design, spec, reqs, settings, parent)
            med = [float(np.median(coefficient_draws(p, designs[j // 2]))) for j, p in enumerate(posts)]
            mc = [float(az.mcse(coefficient_draws(p, designs[j // 2]).reshape(p.mu.shape), method="median"))
                  for j, p in enumerate(posts)]
            dr = [int(p.mu.shape[1]) for p in posts]
            res[v].append(dict(cpu=cpu, wall=wall, med=med, mc=mc, draws=dr))
            print(f"round {rnd} {v}: {cpu:7.1f} CPU s ({cpu / len(reqs):5.1f} per refit), wall {wall:6.1f} s, "
                  f"draws per chain {dr}", flush=True)
    P.SCALE_LEVERS, RC.SCALE_U0 = defaults
    for rnd in range(rounds):
        o, n = res["old"][rnd], res["new"][rnd]
        z = (np.array(n["med"]) - np.array(o["med"])) / np.hypot(n["mc"], o["mc"])
        print(f"round {rnd}: CPU new / old {n['cpu'] / o['cpu']:.2f} ({n['cpu']:.1f} / {o['cpu']:.1f} s); draws "
              f"per chain new {np.mean(n['draws']):.0f}, old {np.mean(o['draws']):.0f}; Erho2 medians new - old in "
              f"joint MCSE: {', '.join(f'{x:+.2f}' for x in z)}")
    co = sum(r["cpu"] for r in res["old"])
    cn = sum(r["cpu"] for r in res["new"])
    print(f"all rounds: CPU new / old {cn / co:.2f} ({cn / rounds / len(reqs):.1f} vs {co / rounds / len(reqs):.1f} "
          f"CPU s per refit)")


def main(argv=None):
    import arviz as az
    import numpy as np

    from ddr_explorer.core.analyses.heldout import _part, split_cells, split_settings
    from ddr_explorer.core.analyses.refits import coefficient_draws
    from ddr_explorer.core.analyses.reported import ReportedQuantity, reported_verdict
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.dstudy import observed_design

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=8)
    ap.add_argument("--parent", type=Path)
    ap.add_argument("--reference", default="gate", help="gate (component rule, another seed), fixed:N or cold:N")
    ap.add_argument("--difficulty", action="store_true", help="the 4 difficulty strata under the reported rule only")
    ap.add_argument("--estimate", action="store_true", help="the full sheet's estimate under both rules only")
    ap.add_argument("--ab", type=int, default=0, help="instead: this many interleaved rounds of the same "
                    "reported-rule refits with the scale moves' closed-form potential and U0 from NUTS (new) and "
                    "without (old): CPU s per refit, draws per chain, Erho2 medians")
    a = ap.parse_args(argv)

    settings, _tmp, parent, eng, reqs = _cost_module().parent_and_requests(a.splits, a.parent)
    corpus = load_corpus(ROOT / "resources" / "demo" / "terminal-bench-2.csv")
    if a.difficulty:
        return difficulty(parent, eng, settings, corpus)
    if a.estimate:
        return estimate(parent, corpus)
    designs = []
    for i in range(a.splits):  # the same splits as parent_and_requests (default_rng([0, i]))
        _, held = split_cells(corpus.table, np.random.default_rng([0, i]))
        designs.append(observed_design(_part(corpus, held, "h")))
    base = split_settings(settings)
    rep_reqs = [dataclasses.replace(r, reported=(ReportedQuantity.coefficient(designs[j // 2], "the held-out design"),))
                for j, r in enumerate(reqs)]
    ref_parent = parent
    if a.reference.startswith("fixed:"):
        n = int(a.reference.split(":")[1])
        ref_settings = dataclasses.replace(base, stop="fixed", draws=n, seed=base.seed + 1, max_draws=None,
                                           max_seconds=None)
    elif a.reference.startswith("cold:"):
        n = int(a.reference.split(":")[1])
        ref_settings = dataclasses.replace(base, stop="fixed", draws=n, seed=base.seed + 2, max_draws=None,
                                           max_seconds=None, warmup=250, marginalise="off")
        ref_parent = None
    else:
        ref_settings = dataclasses.replace(base, seed=base.seed + 1)
    design, spec = eng.design, eng.fitted_spec

    if a.ab:
        return ab(a.ab, design, spec, rep_reqs, base, parent, designs)
    print(f"{len(reqs)} refits ({a.splits} splits x 2); split settings: {base.chains} chains, >= {base.draws} draws, "
          f"look every {base.check_every}, <= {base.max_draws}; reference: {a.reference} (seed {ref_settings.seed})")
    sys.stdout.flush()
    new, cpu_new, wall_new = _run(design, spec, rep_reqs, base, parent)
    print(f"reported rule: {cpu_new:.1f} CPU s, {wall_new:.1f} s wall")
    sys.stdout.flush()
    ref, cpu_ref, wall_ref = _run(design, spec, reqs, ref_settings, ref_parent)
    print(f"reference:     {cpu_ref:.1f} CPU s, {wall_ref:.1f} s wall")

    rows = []
    print("\nrefit                 draws/ch new  ref   Erho2 new  mcse    Erho2 ref  mcse        z   verdict(new)")
    for j, (r, pn, pr) in enumerate(zip(rep_reqs, new, ref)):
        d = designs[j // 2]
        xn = coefficient_draws(pn, d).reshape(pn.mu.shape)
        xr = coefficient_draws(pr, d).reshape(pr.mu.shape)
        mn, mr = float(np.median(xn)), float(np.median(xr))
        sn = float(az.mcse(xn, method="median"))
        sr = float(az.mcse(xr, method="median"))
        z = (mn - mr) / np.hypot(sn, sr)
        # the warm start's transient: the same median without each chain's first 50 draws
        xd = xn[:, 50:] if xn.shape[1] >= 150 else xn
        zd = (float(np.median(xd)) - mr) / np.hypot(float(az.mcse(xd, method="median")), sr)
        v = reported_verdict(pn, r.reported)
        rows.append(dict(label=r.label, dn=pn.mu.shape[1], dr=pr.mu.shape[1], mn=mn, mr=mr, sn=sn, sr=sr, z=z, zd=zd,
                         ok=v.converged, comp=bool(pr.diagnostics.converged), comp_new=bool(pn.diagnostics.converged)))
        print(f"{r.label:22s} {pn.mu.shape[1]:8d} {pr.mu.shape[1]:5d}   {mn:.4f}   {sn:.4f}   {mr:.4f}   {sr:.4f}  "
              f"{z:+6.2f}   {'converged' if v.converged else 'NOT: ' + '; '.join(v.problems[:2])}")
    z = np.array([x["z"] for x in rows])
    zd = np.array([x["zd"] for x in rows])
    print(f"z without the first 50 draws per chain of the reported run: mean {zd.mean():+.2f}, sd {zd.std(ddof=1):.2f}, "
          f"share |z| < 2: {np.mean(np.abs(zd) < 2):.2f}")
    dn = np.array([x["dn"] for x in rows], float)
    dr = np.array([x["dr"] for x in rows], float)
    print(f"\nz: mean {z.mean():+.2f}, sd {z.std(ddof=1):.2f}, max |z| {np.abs(z).max():.2f}, "
          f"share |z| < 2: {np.mean(np.abs(z) < 2):.2f} ({int(np.sum(np.abs(z) < 2))} of {z.size})")
    print(f"draws per chain: reported rule mean {dn.mean():.0f} (min {dn.min():.0f}, max {dn.max():.0f}); "
          f"reference mean {dr.mean():.0f} (min {dr.min():.0f}, max {dr.max():.0f}); ratio {dr.mean() / dn.mean():.2f}")
    n = len(rows)
    print(f"CPU s per refit: reported {cpu_new / n:.1f}, reference {cpu_ref / n:.1f}; same-run ratio "
          f"{cpu_ref / cpu_new:.2f}x (wall {wall_new / n:.1f} vs {wall_ref / n:.1f} s per refit)")
    print(f"verdicts: reported rule {sum(x['ok'] for x in rows)} of {n} converged on Erho2; the same fits' component "
          f"verdict {sum(x['comp_new'] for x in rows)} of {n} (not upgraded); reference component verdict "
          f"{sum(x['comp'] for x in rows)} of {n}")
    proj_n = np.array([rows[2 * i]["mn"] for i in range(a.splits)])
    held_n = np.array([rows[2 * i + 1]["mn"] for i in range(a.splits)])
    proj_r = np.array([rows[2 * i]["mr"] for i in range(a.splits)])
    held_r = np.array([rows[2 * i + 1]["mr"] for i in range(a.splits)])
    print("\nsplit  gap(reported rule)  gap(reference)")
    for i in range(a.splits):
        print(f"{i + 1:5d}  {held_n[i] - proj_n[i]:+.4f}             {held_r[i] - proj_r[i]:+.4f}")
    gn, gr = held_n - proj_n, held_r - proj_r
    print(f"mean gap: reported rule {gn.mean():+.4f}, reference {gr.mean():+.4f} (difference {gn.mean() - gr.mean():+.4f})")
    r_n = float(np.corrcoef(proj_n, held_n)[0, 1])
    r_r = float(np.corrcoef(proj_r, held_r)[0, 1])
    print(f"Pearson r across splits: reported rule {r_n:.3f}, reference {r_r:.3f}")


if __name__ == "__main__":
    main()
