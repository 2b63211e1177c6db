"""Is the reported rule's Erho2 shift a bias, and whose? (session 19.)

Session 18 found the TB2 hold-out refits stopped by the reported rule (:func:`~ddr_explorer.core.model.
stopping.check_reported`) with Erho2 medians +0.4 to +0.7 MCSE above warm-started reference runs
(bench/investigations/bench_refit_reported.py).  This bench tells the candidate causes apart on the same refits:

- **one long warm run per seed**: the refits of K splits (training 70% and held-out 30% parts) warm-started
  from one parent, a FIXED ``--draws`` per chain, seeds s and s + 1.  Because a gate-stopped run's draws
  are the first draws of a fixed run of the same seed (checked here on split 1: the real gate run against
  the prefix), the reported rule is applied **after the fact** to each long run (looks at 100, 150, ...,
  as the runner looks), which gives from one run:

  - ``gate``: the median of the prefix where the reported rule stopped (what the product reports);
  - ``swap``: the median of the prefix of the other seed's stopping length (the same distribution of
    lengths, but not chosen by these draws): gate - swap isolates the data-dependent stop (cause b);
  - ``long``: the whole run; ``late``: the run without its first ``--burn`` draws per chain (cause a:
    a transient of the warm start that the long run outgrows);

- **a cold reference**: the same refits started cold at their rough fits (``warm=False``: the parent is not
  used at all), ``--cold-warmup`` warmup iterations, the same fixed length, another seed, the same
  parameterisation (``marginalise="off"``, so one compile): a bias that every warm start shares (cause a)
  shows against it and not against a warm reference.

Every estimator is compared with the cold reference by ``z = (x - ref) / sqrt(mcse_x^2 + mcse_ref^2)`` at the
5%, 50% and 95% quantiles of the per-draw Erho2 at the split's held-out design (ArviZ's ``mcse`` of the
median and of the quantiles): the mean of z (with its standard error over refits), its sd (cause c: an sd
over 1 means MCSEs too small) and the share |z| < 2; the session-18 comparison (gate of seed s against the
long warm run of seed s + 1) is repeated to check that it reproduces (cause d: how the bench computed z).

Usage: ``nice python bench/investigations/bench_refit_bias.py [--splits 8] [--first 0] [--draws 600] [--parent FILE.h5]
[--save FILE.npz]``; ``--analyse A.npz [B.npz ...]`` re-reads saved runs (several batches of splits
together) without sampling; ``--toy 600``: the rule's stopping time on stationary toy chains (no sampler).  Shared 2-core machine: CPU seconds per refit and same-run ratios.
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
QS = (0.05, 0.5, 0.95)


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


def posthoc_stop(post, quantities, settings, upto: int | None = None):
    """Where the reported rule would have stopped a run with ``post``'s draws: the first look (``settings.draws``,
    then every ``check_every``) whose prefix passes :func:`check_reported` or has diverged; None: not by ``upto``."""
    import numpy as np

    from ddr_explorer.core.model.stopping import check_reported

    names = list(post.sigma)
    sig = np.stack([np.asarray(post.sigma[t], np.float64) for t in names], axis=-1)
    div = np.asarray(post.sample_stats["diverging"]).reshape(sig.shape[0], -1)
    n = sig.shape[1] if upto is None else min(upto, sig.shape[1])
    look = settings.draws
    while look <= n:
        chk = check_reported(sig[:, :look], int(div[:, :look].sum()), names, quantities, post.spec)
        if chk.passed or chk.divergences:
            return look
        look += settings.check_every
    return None


def sample(a):
    """Run the fits and save, per refit, the per-draw Erho2 of every run and the post-hoc stops."""
    import numpy as np

    from ddr_explorer.core.analyses.heldout import _part, split_cells, split_settings
    from ddr_explorer.core.analyses.refits import coefficient_draws
    from ddr_explorer.core.analyses.reported import ReportedQuantity
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.dstudy import observed_design

    cost = _cost_module()
    settings, _tmp, parent, eng, reqs = cost.parent_and_requests(a.first + a.splits, a.parent)
    reqs = reqs[2 * a.first:]
    corpus = load_corpus(ROOT / "resources" / "demo" / "terminal-bench-2.csv")
    designs = []
    for i in range(a.first, a.first + a.splits):  # the splits of parent_and_requests (default_rng([0, i]))
        _, held = split_cells(corpus.table, np.random.default_rng([0, i]))
        designs.append(observed_design(_part(corpus, held, "h")))
    base = split_settings(settings)
    qs = [(ReportedQuantity.coefficient(designs[j // 2], "the held-out design"),) for j in range(len(reqs))]
    rep_reqs = [dataclasses.replace(r, reported=q) for r, q in zip(reqs, qs)]
    fixed = dict(stop="fixed", draws=a.draws, max_draws=None, max_seconds=None)
    runs = {
        "warm1": dataclasses.replace(base, seed=base.seed, **fixed),
        "warm2": dataclasses.replace(base, seed=base.seed + 1, **fixed),
        "cold": dataclasses.replace(base, seed=base.seed + 2, warmup=a.cold_warmup, marginalise="off", **fixed),
    }
    design, spec = eng.design, eng.fitted_spec
    print(f"{len(reqs)} refits (splits {a.first + 1}-{a.first + a.splits} x 2); split settings: {base.chains} chains, "
          f"gate >= {base.draws} draws, look every {base.check_every}, <= {base.max_draws}; fixed runs of {a.draws}")
    sys.stdout.flush()
    out = {"labels": np.array([r.label for r in reqs]), "draws_floor": base.draws, "check_every": base.check_every}
    # the parent's own Erho2 at each held-out design (where a warm start comes from)
    out["parent_median"] = np.array([float(np.median(coefficient_draws(parent, designs[j // 2])))
                                     for j in range(len(reqs))])
    posts = {}
    for name, s in runs.items():
        ps, cpu, wall = _run(design, spec, rep_reqs, s, None if name == "cold" else parent)
        posts[name] = ps
        out[f"cpu_{name}"] = cpu
        print(f"{name}: {cpu:.1f} CPU s, {wall:.1f} s wall, {cpu / len(reqs):.1f} CPU s per refit "
              f"(compile {ps[0].timings.get('compile', float('nan')):.1f} s wall)")
        sys.stdout.flush()
        out[f"erho2_{name}"] = np.stack([coefficient_draws(p, designs[j // 2]).reshape(p.mu.shape)
                                         for j, p in enumerate(ps)])
        out[f"div_{name}"] = np.array([int(np.sum(p.sample_stats["diverging"])) for p in ps])
        if name != "cold":
            st = [posthoc_stop(p, q, base) for p, q in zip(ps, qs)]
            out[f"stop_{name}"] = np.array([-1 if x is None else x for x in st])
    if a.save:  # before the check: the long runs are what costs
        np.savez(a.save, **out)
    # the check that makes the post-hoc rule the product's: a real gate run of split 1 (seed of warm1)
    g, cpu_g, _ = _run(design, spec, rep_reqs[:2], base, parent)
    out["cpu_gate2"] = cpu_g
    for j, p in enumerate(g):
        n = p.mu.shape[1]
        w = posts["warm1"][j]
        m = min(n, w.mu.shape[1])
        same = all(np.array_equal(np.asarray(p.sigma[t])[:, :m], np.asarray(w.sigma[t])[:, :m]) for t in p.sigma)
        dmax = max(float(np.max(np.abs(np.asarray(p.sigma[t])[:, :m] - np.asarray(w.sigma[t])[:, :m])))
                   for t in p.sigma)
        print(f"check, {reqs[j].label}: real gate stop {n}, post-hoc stop {out['stop_warm1'][j]}; draws equal to the "
              f"fixed run's first {m}: {same} (max |difference| of a sigma {dmax:.2e}); CPU {cpu_g / 2:.1f} s per refit")
        q = qs[j][0]
        xq = q.draws(p.sigma, p.spec)
        xc = coefficient_draws(p, designs[j // 2]).reshape(p.mu.shape)
        print(f"   the reported quantity's draws equal the bench's coefficient_draws reshaped: "
              f"{np.allclose(xq, xc, rtol=1e-12, atol=0)}")
    if a.save:
        np.savez(a.save, **out)
        print(f"saved {a.save}")
    return [out]


def _mcse(x, prob):
    import arviz as az

    if prob == 0.5:
        return float(az.mcse(x, method="median"))
    return float(az.mcse(x, method="quantile", prob=prob))


def _z(x, ref, prob):
    import numpy as np

    return (float(np.quantile(x, prob)) - float(np.quantile(ref, prob))) / np.hypot(_mcse(x, prob), _mcse(ref, prob))


def analyse(outs, burn: int):
    import numpy as np

    lab = np.concatenate([o["labels"] for o in outs])
    cat = lambda k: np.concatenate([o[k] for o in outs])  # noqa: E731
    w1, w2, cold = (np.concatenate([o[f"erho2_{k}"] for o in outs]) for k in ("warm1", "warm2", "cold"))
    s1, s2 = cat("stop_warm1"), cat("stop_warm2")
    pm = cat("parent_median")
    n = len(lab)
    T = w1.shape[-1]
    print(f"\n{n} refits, fixed runs of {T} draws per chain; divergences: warm1 {cat('div_warm1').sum()}, "
          f"warm2 {cat('div_warm2').sum()}, cold {cat('div_cold').sum()}")
    if (s1 > 0).any() and (s2 > 0).any():
        print(f"post-hoc reported-rule stops: seed s mean {s1[s1 > 0].mean():.0f} (range {s1[s1 > 0].min()}-"
              f"{s1.max()}), seed s+1 mean {s2[s2 > 0].mean():.0f} (range {s2[s2 > 0].min()}-{s2.max()})")
    print(f"not stopped by {T}: {int((s1 < 0).sum() + (s2 < 0).sum())} of {2 * n}")
    for k in ("warm1", "warm2", "cold"):
        print(f"CPU s per refit, {k}: {sum(o[f'cpu_{k}'] for o in outs) / n:.1f}")

    def est(w, stop, other):
        ok = (stop > 0) & (other > 0)
        return {
            "gate": [w[j][:, :stop[j]] if ok[j] else None for j in range(n)],
            "swap": [w[j][:, :other[j]] if ok[j] else None for j in range(n)],
            "long": [w[j] for j in range(n)],
            f"late (from {burn})": [w[j][:, burn:] for j in range(n)],
            "first 250": [w[j][:, :250] for j in range(n)],
        }

    e1, e2 = est(w1, s1, s2), est(w2, s2, s1)
    print(f"\nz against the COLD long reference (another seed, cold start, {T} draws per chain), per quantile:")
    print(f"{'estimator':26s} {'n':>3s}   " + "   ".join(f"q{int(p * 100):02d}: mean (se)   sd  |z|<2" for p in QS))
    rows = {}
    for name in e1:
        xs = [x for x in e1[name] + e2[name]]
        refs = [cold[j] for j in range(n)] * 2
        line = f"{name + ' (both seeds)':26s} "
        zz = {}
        for p in QS:
            z = np.array([_z(x, r, p) for x, r in zip(xs, refs) if x is not None])
            zz[p] = z
        line += f"{len(zz[0.5]):3d}   " + "   ".join(
            f"{z.mean():+.2f} ({z.std(ddof=1) / np.sqrt(z.size):.2f}) {z.std(ddof=1):.2f} {np.mean(np.abs(z) < 2):.2f}"
            for z in zz.values())
        rows[name] = zz
        print(line)
    # per seed: which run carries a shift
    for nm, e in (("seed s", e1), ("seed s+1", e2)):
        for k in ("gate", "long"):
            z = np.array([_z(x, cold[j], 0.5) for j, x in enumerate(e[k]) if x is not None])
            print(f"  {k} {nm} against cold, median: mean z {z.mean():+.2f} (se {z.std(ddof=1) / np.sqrt(z.size):.2f}), "
                  f"n {z.size}")
    # same draws, two stopping times: the data-dependent stop against the other seed's length
    d = []
    for ea in (e1, e2):
        for x, y in zip(ea["gate"], ea["swap"]):
            if x is not None:
                d.append(float(np.median(x)) - float(np.median(y)))
    print(f"\nmedian(gate) - median(swap), same chains (Erho2 units): mean {np.mean(d):+.5f} "
          f"(se {np.std(d, ddof=1) / np.sqrt(len(d)):.5f}, n {len(d)})")
    # session 18's comparison: the gate of seed 1 against the long warm run of seed 2
    z18 = np.array([_z(e1["gate"][j], w2[j], 0.5) for j in range(n) if e1["gate"][j] is not None])
    print(f"session 18's comparison (gate, seed s, against the long WARM run of seed s+1): mean z {z18.mean():+.2f} "
          f"(se {z18.std(ddof=1) / np.sqrt(z18.size):.2f}), sd {z18.std(ddof=1):.2f}, n {z18.size}")
    zw = np.array([_z(w1[j], w2[j], 0.5) for j in range(n)])
    print(f"long warm seed s against long warm seed s+1: mean z {zw.mean():+.2f} (se {zw.std(ddof=1) / np.sqrt(n):.2f}), "
          f"sd {zw.std(ddof=1):.2f}")
    # towards the parent? the sign of (parent - cold) against z of the gate estimate
    cm = np.array([float(np.median(cold[j])) for j in range(n)])
    zg = np.array([_z(e1["gate"][j], cold[j], 0.5) if e1["gate"][j] is not None else np.nan for j in range(n)])
    towards = np.sign(pm - cm)
    ok = np.isfinite(zg)
    print(f"parent median - cold median: mean {np.mean(pm - cm):+.5f}; gate z signed towards the parent: mean "
          f"{np.mean(zg[ok] * towards[ok]):+.2f} (se {np.std(zg[ok] * towards[ok], ddof=1) / np.sqrt(ok.sum()):.2f})")
    print("\nper refit: label, stops (seed s, s+1), medians: cold, long s, long s+1, gate s, gate s+1, parent")
    for j in range(n):
        g1 = np.median(e1["gate"][j]) if e1["gate"][j] is not None else np.nan
        g2 = np.median(e2["gate"][j]) if e2["gate"][j] is not None else np.nan
        print(f"{lab[j]:18s} {s1[j]:4d} {s2[j]:4d}  {cm[j]:.4f} {np.median(w1[j]):.4f} {np.median(w2[j]):.4f} "
              f"{g1:.4f} {g2:.4f} {pm[j]:.4f}")
    return rows


def toy(n_runs: int, seed: int = 1):
    """The reported rule's stopping time without the sampler: 4 stationary AR(1) chains of a left-skewed,
    Erho2-like quantity ``1 - 0.03 exp(0.3 z)`` (true median 0.97; lag-1 autocorrelation 0.35, about 0.5 ESS per
    draw) whose latent ``z`` shares a slow AR(1) component (0.6) that the rule also asks R-hat <= 1.01 of, as it
    asks of every variance component; looks at 100, 150, ... up to 1,000 draws per chain.  Prints the z of the
    median at the stop against the true median (the MCSE from the stopped draws, as the product would)."""
    import arviz as az
    import numpy as np

    from ddr_explorer.core.model.stopping import STOP_ESS_MARGIN, ess_bulk, ess_tail, rhat_rank
    from ddr_explorer.core.gate import MIN_ESS_BULK

    rng = np.random.default_rng(seed)
    T, C, need = 1000, 4, STOP_ESS_MARGIN * MIN_ESS_BULK

    def ar(phi, e):
        x = np.empty_like(e)
        x[:, 0] = e[:, 0]
        for t in range(1, e.shape[1]):
            x[:, t] = phi * x[:, t - 1] + np.sqrt(1 - phi ** 2) * e[:, t]
        return x

    res = []
    for _ in range(n_runs):
        y = ar(0.6, rng.standard_normal((C, T)))
        z = 0.8 * ar(0.35, rng.standard_normal((C, T))) + 0.6 * y
        x = 1 - 0.03 * np.exp(0.3 * z)
        for n in range(100, T + 1, 50):
            xs = x[:, :n]
            if (rhat_rank(y[:, :n]) <= 1.01 and rhat_rank(xs) <= 1.01 and ess_bulk(xs) >= need
                    and ess_tail(xs) >= need):
                res.append((n, (np.median(xs) - 0.97) / float(az.mcse(xs, method="median"))))
                break
    st, zz = np.array(res).T
    print(f"toy: {len(res)} of {n_runs} runs stopped, at {st.mean():.0f} draws per chain on average ({st.min():.0f}-"
          f"{st.max():.0f}); z of the median at the stop against the truth: mean {zz.mean():+.3f} "
          f"(se {zz.std(ddof=1) / np.sqrt(zz.size):.3f}), sd {zz.std(ddof=1):.2f}")


def main(argv=None):
    import numpy as np

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=8)
    ap.add_argument("--first", type=int, default=0, help="first split index (0-based): batches of splits")
    ap.add_argument("--draws", type=int, default=600, help="fixed draws per chain of the long runs")
    ap.add_argument("--cold-warmup", type=int, default=250)
    ap.add_argument("--burn", type=int, default=250, help="draws per chain dropped for the 'late' estimator")
    ap.add_argument("--parent", type=Path)
    ap.add_argument("--save", type=Path)
    ap.add_argument("--analyse", type=Path, nargs="+")
    ap.add_argument("--toy", type=int, metavar="RUNS", help="the stopping time on stationary toy chains only")
    a = ap.parse_args(argv)
    if a.toy:
        return toy(a.toy)
    if a.analyse:
        outs = [dict(np.load(p)) for p in a.analyse]
    else:
        outs = sample(a)
    analyse(outs, a.burn)


if __name__ == "__main__":
    main()
