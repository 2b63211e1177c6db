"""The refit engine against the sequential cold path it replaced, measured in the same run.

Two studies, each from a cold cache, each timed on both paths in this one process:

1. Terminal-Bench 2.0 demo (resources/demo), per-benchmark model: 10 hold-out splits (2 refits
   each) through :func:`~ddr_explorer.core.analyses.heldout.held_out_study` (the refit engine, the
   parent fit given) against the old loop: one cold :func:`~ddr_explorer.core.fitting.fit_corpus`
   per part, split after split (:func:`~ddr_explorer.core.analyses.refits.cold_fits`), at the same
   split settings.
2. Leave-one-benchmark-out refits of a simulated pooled corpus (bench/simulate.py, pooled model):
   4 LOBO refits through :class:`~ddr_explorer.core.analyses.engine.RefitEngine` against the same
   4 parts fitted cold one after another.  The HAL-scale corpus (9 benchmarks, ~41,000 cells) takes
   hours on 2 cores; ``--quick`` uses a smaller pooled corpus (4 benchmarks of HAL's shape, 30 tasks
   each) and says so in its output.

Printed per study: wall seconds of each path, refits per hour (sampled refits / wall), the ratio
engine / cold of refits per hour, and how many refits the engine's convergence gate reran (the cold
path has no gate, so its refits are fewer for the same jobs when the gate reruns some).

Usage: ``nice python bench/bench_refits.py [--quick] [--splits 10] [--skip-pooled] [--skip-tb2]
[--parent-cache DIR]`` (the parent fits kept in DIR are reopened on the next run, with their own wall time).
Measured on a shared machine: compare the ratios, not the wall times, across runs.

``--rules --splits 50``: the two refit rules (``--refit-rule precision``, the default, and ``gate``) on the
same 50 splits of the demo, one parent, each from an empty refit cache: wall, CPU, refits per hour, draws and
leapfrog steps per refit, and the hold-out r and mean gap with their Monte Carlo SE under each, and whether the
two agree within them.  ``--corpus sim --reference 2000``: the simulation check, on a simulated corpus with
known components, against a long fixed run of the same splits.  Wall and CPU need a quiet box; the draws and
leapfrog steps per refit do not.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains

ROOT = Path(__file__).resolve().parents[1]


def _simulate():
    spec = importlib.util.spec_from_file_location("ddr_bench_simulate_refits", ROOT / "bench" / "simulate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _line(name: str, wall: float, refits: int, extra: str = "") -> str:
    per_hour = refits / wall * 3600 if wall > 0 else float("nan")
    return f"  {name:<34} wall {wall:8.1f} s  {refits:3d} refits  {per_hour:7.1f} refits/h{extra}"


def _report(title, cold_wall, cold_n, eng_wall, eng_n, reruns, parent_wall):
    print(title)
    print(f"  parent fit (shared, not counted)   wall {parent_wall:8.1f} s")
    print(_line("sequential cold path", cold_wall, cold_n))
    print(_line("refit engine", eng_wall, eng_n, f"  ({reruns} rerun by the gate)"))
    ratio_h = (eng_n / eng_wall) / (cold_n / cold_wall)
    print(f"  ratio engine / cold: refits per hour {ratio_h:.2f}x (gate reruns included); cold wall / engine wall "
          f"for the same jobs {cold_wall / eng_wall:.2f}")
    sys.stdout.flush()


def _parent(corpus, spec, settings, cache_dir, parent_cache):
    """The parent fit: reopened from ``parent_cache`` when it holds it (its own wall time reported), else fitted."""
    from ddr_explorer.core.fitting import fit_corpus

    t = time.perf_counter()
    parent = fit_corpus(corpus, spec, settings, cache_dir=parent_cache or cache_dir)
    wall = parent.posterior.wall_seconds if parent.from_cache else time.perf_counter() - t
    print(f"  parent fit {wall:.1f} s{' (reopened: its own wall time)' if parent.from_cache else ''}, "
          f"converged {parent.posterior.diagnostics.converged}")
    sys.stdout.flush()
    return parent, wall


def _progress(tag):
    last = [-1]

    def cb(phase, i, n, eta):
        if i != last[0]:
            last[0] = i
            print(f"    {tag}: {i}/{n} done ({phase})")
            sys.stdout.flush()
    return cb


def bench_tb2(n_splits: int, settings, parent_cache=None) -> None:
    from ddr_explorer.core.analyses.heldout import held_out_study, split_cells, split_settings, _part
    from ddr_explorer.core.analyses.refits import FitJob, cold_fits
    from ddr_explorer.core.corpus.io import load_corpus

    import numpy as np

    corpus = load_corpus(ROOT / "resources" / "demo" / "terminal-bench-2.csv")
    spec = "per-benchmark"
    split = split_settings(settings)
    print(f"TB2 demo: {corpus.n_trials} trials, {spec}; parent {settings.chains} x ({settings.warmup} + "
          f"{settings.draws}); splits {split.chains} x ({split.warmup} + {split.draws}); {n_splits} splits")
    sys.stdout.flush()
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        parent, parent_wall = _parent(corpus, spec, settings, a, parent_cache)
        # the old path: split after split, two cold fits each (the code before the engine)
        t = time.perf_counter()
        cold_n = 0
        for i in range(n_splits):
            train, held = split_cells(corpus.table, np.random.default_rng([0, i]))
            jobs = [FitJob(f"split {i + 1} train", _part(corpus, train, f"s{i} train"), spec),
                    FitJob(f"split {i + 1} held-out", _part(corpus, held, f"s{i} held"), spec)]
            out = cold_fits(jobs, dataclasses.replace(split, seed=split.seed + i), cache_dir=b,
                            progress=_progress(f"cold split {i + 1}"))
            cold_n += out.n_fitted
        cold_wall = time.perf_counter() - t
        print(_line("(sequential cold path done)", cold_wall, cold_n))
        sys.stdout.flush()
        t = time.perf_counter()
        study = held_out_study(corpus, spec, settings, cache_dir=a, n_splits=n_splits, parent=parent,
                               progress=_progress("engine"))
        eng_wall = time.perf_counter() - t
        _report("TB2 demo, hold-out splits", cold_wall, cold_n, eng_wall, study.n_fitted, study.n_rerun, parent_wall)
        print(f"  engine: {study.n_converged} of {study.n_fits} refits converged after the gate; "
              f"Pearson r {study.result.pearson_r:+.2f}, mean gap {study.result.mean_gap:+.3f}")
        sys.stdout.flush()


def _quick_pooled(sim):
    hal = {b[0]: b for b in sim.HAL_BENCHMARKS}
    keep = [hal[n] for n in ("assistantbench", "corebench_hard", "gaia", "scicode")]
    benchmarks = tuple((name, k, 30, pairs, scaffolds) for name, k, _, pairs, scaffolds in keep)
    return sim.simulate_pooled(seed=0, n_models=30, n_everywhere=9, model_scale=1.0, pair_scale=1.0,
                               benchmarks=benchmarks)


def bench_pooled(quick: bool, settings, parent_cache=None) -> None:
    from ddr_explorer.core.analyses.engine import RefitEngine
    from ddr_explorer.core.analyses.refits import FitJob, cold_fits, sub_corpus
    from ddr_explorer.core.corpus.validate import build_corpus

    sim_mod = _simulate()
    sim = _quick_pooled(sim_mod) if quick else sim_mod.simulate_pooled(seed=0)
    corpus = build_corpus(sim.table, file=None, format="simulated", name="pooled")
    what = "QUICK (smaller pooled corpus, not HAL-scale)" if quick else "HAL-scale"
    print(f"pooled {what}: {sim.description}; {settings.chains} x ({settings.warmup} + {settings.draws})")
    sys.stdout.flush()
    bench = corpus.table["benchmark"].astype(str)
    names = sorted(bench.unique())[:4]
    jobs = [FitJob(f"without {n}", sub_corpus(corpus, (bench != n).to_numpy(), f"without {n}"), "pooled")
            for n in names]
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        parent, parent_wall = _parent(corpus, "pooled", settings, a, parent_cache)
        t = time.perf_counter()
        cold = cold_fits(jobs, settings, cache_dir=b, progress=_progress("cold"))
        cold_wall = time.perf_counter() - t
        print(_line("(sequential cold path done)", cold_wall, cold.n_fitted))
        sys.stdout.flush()
        t = time.perf_counter()
        out = RefitEngine(corpus, "pooled", settings, cache_dir=a, parent=parent).run(
            jobs, what="LOBO", progress=_progress("engine"))
        eng_wall = time.perf_counter() - t
        _report(f"pooled {what}, 4 LOBO refits", cold_wall, cold.n_fitted, eng_wall, out.n_fitted, out.n_rerun,
                parent_wall)
        print(f"  engine: {out.n_converged} of {out.n_fits} converged after the gate; kinds {out.kinds}; "
              f"cold {list(out.cold)}")
        # per fit, what the work was: the run length the gate set, the term integrated out, the compile
        for name, batch in (("cold", cold), ("engine", out)):
            for job, res in zip(jobs, batch.results):
                _fit_line(name, job.label, res)
        sys.stdout.flush()


def _fit_line(path: str, label: str, res) -> None:
    """One fit's work: draws per chain, integrated terms, converged, wall and compile seconds, its notes'
    batch line (a refit's says how many compiles its batch took)."""
    if res is None:
        print(f"    {path:<7} {label:<28} not fitted")
        return
    post = res.posterior
    t = post.timings or {}
    batch = next((n for n in post.notes if n.startswith("refit (")), "")
    print(f"    {path:<7} {label:<28} draws/chain {post.mu.shape[-1]:5d}  integrated {list(post.integrated) or '-'}  "
          f"converged {bool(post.diagnostics.converged)}  wall {post.wall_seconds:7.1f} s  "
          f"compile {float(t.get('compile', 0.0)):6.1f} s  {batch}")


# -- the two refit rules on the same splits --------------------------------------------------------
def _rule_corpus(which: str):
    """The corpus of the rules comparison: the TB2 demo, a file, or ``sim`` (a small simulated per-benchmark
    corpus with known components, bench/simulate.py; for proving the bench runs, not for its numbers)."""
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.corpus.validate import build_corpus

    if which == "sim":
        s = _simulate().simulate_per_benchmark(n_tasks=24, n_models=6, n_scaffolds=3, n_pairs=10, trials_per_cell=3,
                                               seed=5)
        return build_corpus(s.table, file=None, format="simulated", name="sim"), s
    return load_corpus(ROOT / "resources" / "demo" / "terminal-bench-2.csv" if which == "demo" else Path(which)), None


def _refit_work(corpus, spec, parent, cache_dir, n_splits, split, rule, seed=0):
    """The splits' refits reopened from ``cache_dir`` (all stored by the study just run): per refit its draws
    per chain and its leapfrog steps (NUTS tree sizes summed over the chains, warmup and sampling)."""
    from ddr_explorer.core.analyses.engine import RefitEngine
    from ddr_explorer.core.analyses.heldout import held_out_jobs

    jobs, _, _ = held_out_jobs(corpus, spec, n_splits=n_splits, seed=seed, refit_rule=rule)
    b = RefitEngine(corpus, spec, parent.posterior.settings, cache_dir=cache_dir, parent=parent).run(
        jobs, split, skip_failed=True)
    draws, steps = [], []
    for r in b.results:
        if r is None:
            continue
        post = r.posterior
        st = post.sample_stats or {}
        draws.append(int(post.mu.shape[-1]))
        steps.append(float(np.sum(st.get("num_steps", 0))) + float(np.sum(st.get("warmup_num_steps", 0))))
    return np.asarray(draws), np.asarray(steps), b.n_cached


def bench_rules(n_splits: int, settings, which: str = "demo", parent_cache=None, reference: int | None = None) -> dict:
    """The same ``n_splits`` hold-out splits (seed 003 sec. 5.4) under both refit rules, each from an empty refit
    cache, one parent: wall, CPU, refits per hour, draws and leapfrog steps per refit, and the hold-out r and
    mean gap with their Monte Carlo SE; whether the two answers agree within their MCSE.  ``reference``: also a
    long fixed run (that many draws per chain) of the same splits, the simulation check's reference."""
    from ddr_explorer.core.analyses.heldout import held_out_study, split_settings

    corpus, sim = _rule_corpus(which)
    spec = "per-benchmark"
    split = split_settings(settings)
    print(f"refit rules on {corpus.name}: {corpus.n_trials} trials, {spec}; {n_splits} splits "
          f"({2 * n_splits} refits per rule); splits {split.chains} chains, >= {split.draws} draws, <= "
          f"{split.max_draws}, a look every {split.check_every}"
          + ("" if sim is None else f"; simulated, known components {sim.description}"))
    sys.stdout.flush()
    out = {}
    with tempfile.TemporaryDirectory() as pc:
        parent, parent_wall = _parent(corpus, spec, settings, pc, parent_cache)
        runs = [("gate", "gate", None), ("precision", "precision", None)]
        if reference:
            runs.append((f"fixed {reference}", "gate", dataclasses.replace(split, stop="fixed", draws=reference)))
        for name, rule, fixed in runs:
            with tempfile.TemporaryDirectory() as c:
                w0, c0 = time.perf_counter(), time.process_time()
                study = held_out_study(corpus, spec, settings, cache_dir=c, n_splits=n_splits, parent=parent,
                                       refit_rule=rule, fit_settings=fixed, progress=_progress(name))
                wall, cpu = time.perf_counter() - w0, time.process_time() - c0
                draws, steps, _ = _refit_work(corpus, spec, parent, c, n_splits, fixed or split, rule)
            res = study.result
            out[name] = dict(wall=wall, cpu=cpu, n=study.n_fitted, draws=draws, steps=steps, result=res,
                             converged=(study.n_converged, study.n_fits), rerun=study.n_rerun)
            # each rule's line as soon as it is done (a long run cut short keeps what it measured)
            print(f"  {name}: wall {wall:.1f} s, CPU {cpu:.1f} s, {study.n_fitted} refits sampled ({study.n_rerun} "
                  f"rerun), draws/chain per refit {draws.tolist()}, leapfrog steps per refit {steps.astype(int).tolist()}, "
                  f"r {res.pearson_r:+.3f} (MCSE {res.pearson_r_mcse:.3f}), gap {res.mean_gap:+.4f} "
                  f"(MCSE {res.mean_gap_mcse:.4f})")
            sys.stdout.flush()
    print(f"  parent fit {parent_wall:.1f} s (shared, not counted); wall and CPU below are this process's, "
          "on this machine now: compare them only on a quiet box")
    print(f"  {'rule':<12}{'wall s':>8}{'CPU s':>8}{'refits/h':>10}{'CPU s/refit':>12}{'draws/chain':>18}"
          f"{'leapfrog/refit':>16}{'converged':>11}  hold-out r (MCSE)   mean gap (MCSE)")
    for name, o in out.items():
        r = o["result"]
        d, st = o["draws"], o["steps"]
        print(f"  {name:<12}{o['wall']:8.1f}{o['cpu']:8.1f}{o['n'] / o['wall'] * 3600 if o['wall'] else 0:10.1f}"
              f"{o['cpu'] / max(o['n'], 1):12.1f}{d.mean():8.0f} ({d.min()}-{d.max()}){st.mean():16.0f}"
              f"{o['converged'][0]:>6d}/{o['converged'][1]:<4d}  {r.pearson_r:+.3f} ({r.pearson_r_mcse:.3f})"
              f"      {r.mean_gap:+.4f} ({r.mean_gap_mcse:.4f})")
    g, p = out["gate"]["result"], out["precision"]["result"]
    for a, b in ((("precision", p), ("gate", g)),) + (((("precision", p), (list(out)[2], out[list(out)[2]]["result"])),)
                                                         if reference else ()):
        (na, ra), (nb, rb) = a, b
        zr = (ra.pearson_r - rb.pearson_r) / np.hypot(ra.pearson_r_mcse, rb.pearson_r_mcse)
        zg = (ra.mean_gap - rb.mean_gap) / np.hypot(ra.mean_gap_mcse, rb.mean_gap_mcse)
        z = [abs(v) for v in (zr, zg) if np.isfinite(v)]  # r has no MCSE with fewer than 3 splits
        print(f"  {na} against {nb}: r differs by {zr:+.2f} joint MCSE, the mean gap by {zg:+.2f} "
              f"({'agree' if all(v <= 2 for v in z) else 'DO NOT agree'} within 2 MCSE"
              f"{'' if len(z) == 2 else ', on what has an MCSE'})")
    ratio = out["gate"]["steps"].mean() / max(out["precision"]["steps"].mean(), 1)
    print(f"  leapfrog steps per refit, gate / precision: {ratio:.2f}x; draws per chain "
          f"{out['gate']['draws'].mean() / max(out['precision']['draws'].mean(), 1):.2f}x")
    sys.stdout.flush()
    return out


def main(argv=None) -> None:
    from ddr_explorer.core.model import SamplerSettings

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smaller pooled corpus (not HAL-scale)")
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--skip-tb2", action="store_true")
    ap.add_argument("--skip-pooled", action="store_true")
    ap.add_argument("--parent-cache", type=Path, help="a cache folder to keep (or reopen) the parent fits in; "
                    "the refits always start from empty caches")
    ap.add_argument("--rules", action="store_true",
                    help="only the two refit rules (--refit-rule precision and gate) on the same --splits splits")
    ap.add_argument("--corpus", default="demo", help="with --rules: demo (TB2, default), sim (a small simulated "
                    "corpus with known components) or a corpus file")
    ap.add_argument("--reference", type=int, help="with --rules: also a long fixed run of N draws per chain "
                    "(the simulation check's reference)")
    a = ap.parse_args(argv)
    settings = SamplerSettings()
    if a.rules:
        bench_rules(a.splits, settings, a.corpus, a.parent_cache, a.reference)
        return
    print("bench_refits: measured on a shared 2-core machine; both paths in this one run, from cold caches.")
    if not a.skip_tb2:
        bench_tb2(a.splits, settings, a.parent_cache)
    if not a.skip_pooled:
        bench_pooled(a.quick, settings, a.parent_cache)


if __name__ == "__main__":
    main()
