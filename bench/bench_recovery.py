"""Parameter recovery of the sampler: coverage of posterior intervals of known variance components.

For each of two shapes we simulate ``--datasets`` corpora from the model with KNOWN sigmas
(:mod:`simulate`: eta = mu + sum_F u_F, u_F ~ N(0, sigma_F^2), y ~ Binomial(n, logistic(eta))),
fit each with :func:`ddr_explorer.core.model.fit`, and count how often the 90% central
posterior interval of sigma_F^2 contains the true sigma_F^2, per term and over all terms,
with the binomial standard error sqrt(p (1 - p) / n).

- ``per-benchmark`` (seed 000 Eq. 2): one benchmark, TB2 truth (seed 000 / PERF-NOTES:
  task 3.0, model 1.74, scaffold 0.37, task:model 1.39, task:scaffold 1.11, model:scaffold 0.46),
  shrunk to 30 tasks x 8 models x 5 scaffolds, 16 model-scaffold runs, 3 trials per cell
  (480 binomial cells, 1,440 trials).
- ``pooled`` (seed 000 Eq. 6): HAL truth (seed 000 Table 8) with HAL's sparsity (Table 2):
  4 benchmarks, 16 models of which 4 run everywhere, benchmark-specific scaffolds plus one
  generalist scaffold shared by three benchmarks and one by two, single trials
  (about 1,900 cells).

The intervals are Bayesian, the truth fixed: with few levels a term's posterior leans on its
prior, so its coverage need not be exactly 90% (small components, e.g. scaffold, tend to be
over-covered because their intervals reach down to zero).  A sampler that explored the
posterior wrongly (a stuck chain, a missed funnel) shows up as under-coverage and as fits
that are not converged, which are counted too; the coverage of the converged fits alone is
printed as well, since a fit the app reports as not converged is one a user would rerun.

Usage::

    python bench/bench_recovery.py                      # 20 + 20 data sets, the app's sampler defaults
                                                        # (about 15 min on 2 cores)
    python bench/bench_recovery.py --shape pooled --draws 1500   # long enough for the pooled fits to converge
    python bench/bench_recovery.py --datasets 5 --shape pooled
    python bench/bench_recovery.py --stop gate          # run length by the gate (at least --draws,
                                                        # at most --max-draws per chain)

With ``--stop gate`` the coverage is also printed separately for the fits the gate stopped
(converged before the ceiling) and those that ran to the ceiling: a stopping time that depends on
the draws could bias the intervals of the early stoppers, and this is where it would show.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ddr_explorer.core.model as M  # noqa: E402  (sets XLA_FLAGS before jax loads)
import numpy as np  # noqa: E402

from simulate import HAL_MU, HAL_SIGMAS, TB2_SIGMAS, simulate_per_benchmark, simulate_pooled  # noqa: E402

#: A small HAL-like leaderboard (seed 000 Table 2 shape, shrunk): (name, models, tasks, pairs, scaffolds).
SMALL_HAL = (
    ("bench_a", 8, 40, 10, ("generalist", "browser", "a_agent")),
    ("bench_b", 9, 30, 11, ("generalist", "b_agent")),
    ("bench_c", 7, 50, 9, ("generalist", "c_agent", "c_tools")),
    ("bench_d", 6, 45, 7, ("browser", "d_agent")),
)

PER_BENCHMARK_SIZE = dict(n_tasks=30, n_models=8, n_scaffolds=5, n_pairs=16, trials_per_cell=3)
POOLED_SIZE = dict(n_models=16, n_everywhere=4, model_scale=1.0, pair_scale=1.0, repeat_fraction=0.0,
                   benchmarks=SMALL_HAL)


def simulate(shape: str, seed: int):
    """One simulated corpus of the given shape (see the module docstring for its size)."""
    if shape == "per-benchmark":
        return simulate_per_benchmark(sigmas=TB2_SIGMAS, mu=-0.5, seed=seed, **PER_BENCHMARK_SIZE)
    return simulate_pooled(sigmas=HAL_SIGMAS, mu=HAL_MU, seed=seed, **POOLED_SIZE)


def interval_hits(post, truth: dict[str, float], level: float = 0.90) -> dict[str, tuple[bool, float, float]]:
    """Term -> (truth inside the central ``level`` interval of sigma^2, lower, upper)."""
    a = (1.0 - level) / 2.0
    out = {}
    for name, s in truth.items():
        d = post.sigma[name].ravel().astype(np.float64) ** 2
        lo, hi = np.quantile(d, [a, 1.0 - a])
        out[name] = (bool(lo <= s * s <= hi), float(lo), float(hi))
    return out


def coverage(hits: list[bool]) -> tuple[float, float]:
    """Coverage and its binomial standard error."""
    n = len(hits)
    p = float(np.mean(hits)) if n else float("nan")
    return p, float(np.sqrt(p * (1.0 - p) / n)) if n else float("nan")


def study(shape: str, n_datasets: int, settings: M.SamplerSettings, seed0: int = 1000, level: float = 0.90,
          verbose: bool = True) -> dict:
    """Simulate and fit ``n_datasets`` corpora; per-term and overall coverage of the ``level`` intervals."""
    spec = "per-benchmark" if shape == "per-benchmark" else "pooled"
    per_term: dict[str, list[bool]] = {}
    conv_hits: list[bool] = []  # the intervals of converged fits alone
    rel_err: dict[str, list[float]] = {}
    conv, walls, worst_rhat, min_ess, divs = [], [], [], [], []
    stopped_hits: list[bool] = []  # stop="gate": the intervals of fits the gate stopped before the ceiling
    lengths: list[int] = []
    warm_its: list[int] = []  # warmup iterations run (fewer than settings.warmup: the adaptive warmup skipped)
    t0 = time.perf_counter()
    for i in range(n_datasets):
        sim = simulate(shape, seed0 + i)
        if i == 0 and verbose:
            rule = "" if settings.stop == "fixed" else f" (stop by the gate, at most {settings.max_draws})"
            print(f"== {shape}: {sim.description}; {n_datasets} data sets; chains {settings.chains} x "
                  f"({settings.warmup} + {settings.draws}{rule})", flush=True)
        post = M.fit(sim.table, spec, settings)
        hits = interval_hits(post, sim.sigmas, level)
        for name, (h, lo, hi) in hits.items():
            per_term.setdefault(name, []).append(h)
            med = float(np.median(post.sigma[name].ravel() ** 2))
            rel_err.setdefault(name, []).append(np.log(med / sim.sigmas[name] ** 2))
        dg = post.diagnostics
        conv.append(dg.converged)
        if dg.converged:
            conv_hits.extend(h for h, _, _ in hits.values())
        lengths.append(int(post.mu.shape[1]))
        warm_its.append(int(post.sample_stats["warmup_num_steps"].shape[1]) if "warmup_num_steps" in post.sample_stats
                        else settings.warmup)
        if settings.stop == "gate" and any(str(n).endswith("when every component passed") for n in post.notes):
            stopped_hits.extend(h for h, _, _ in hits.values())
        walls.append(post.wall_seconds)
        worst_rhat.append(dg.max_r_hat)
        min_ess.append(dg.min_ess_bulk)
        divs.append(dg.divergences)
        if verbose:
            miss = [n for n, (h, _, _) in hits.items() if not h]
            print(f"  data set {i + 1:2d}: {post.wall_seconds:5.1f} s, warmup {warm_its[-1]}, {lengths[-1]:4d} draws/chain, max R-hat {dg.max_r_hat:.3f}, min ESS "
                  f"{dg.min_ess_bulk:5.0f}, div {dg.divergences}, missed: {', '.join(miss) or '-'}", flush=True)
    all_hits = [h for v in per_term.values() for h in v]
    res = {"shape": shape, "datasets": n_datasets, "level": level, "wall_total": time.perf_counter() - t0,
           "wall_per_fit_median": float(np.median(walls)), "converged": int(np.sum(conv)),
           "max_r_hat": float(np.max(worst_rhat)), "min_ess": float(np.min(min_ess)), "divergences": int(np.sum(divs)),
           "per_term": {n: coverage(v) for n, v in per_term.items()},
           "median_log_ratio": {n: float(np.median(v)) for n, v in rel_err.items()},
           "overall": coverage(all_hits), "overall_converged": coverage(conv_hits),
           "stop": settings.stop, "draws_per_chain": lengths, "warmup_iterations": warm_its, "overall_gate_stopped": coverage(stopped_hits)}
    if verbose:
        print(f"  coverage of the {level:.0%} central intervals of sigma^2 (truth inside), +- binomial SE:")
        for n, (p, se) in res["per_term"].items():
            print(f"    {n:26s} {p:6.2f} +- {se:.2f}   (median log(post. median / truth) "
                  f"{res['median_log_ratio'][n]:+.2f})")
        p, se = res["overall"]
        print(f"    {'overall':26s} {p:6.2f} +- {se:.2f}   ({len(all_hits)} intervals)")
        print(f"    ratio coverage / nominal {p / level:.3f} (1 = calibrated; nominal {level:.2f})")
        p, se = res["overall_converged"]
        print(f"    {'converged fits alone':26s} {p:6.2f} +- {se:.2f}   ({len(conv_hits)} intervals)")
        if settings.stop == "gate":
            p, se = res["overall_gate_stopped"]
            print(f"    {'stopped by the gate':26s} {p:6.2f} +- {se:.2f}   ({len(stopped_hits)} intervals; draws "
                  f"per chain {min(lengths)}-{max(lengths)}, median {int(np.median(lengths))})")
        if settings.adaptive_warmup:
            print(f"  adaptive warmup: {sum(w < settings.warmup for w in warm_its)} of {n_datasets} fits skipped slow "
                  f"windows (warmup iterations {min(warm_its)}-{max(warm_its)})")
        print(f"  converged {res['converged']}/{n_datasets}, max R-hat {res['max_r_hat']:.3f}, min bulk ESS "
              f"{res['min_ess']:.0f}, divergences {res['divergences']}; wall {res['wall_total']:.0f} s "
              f"({res['wall_per_fit_median']:.1f} s per fit)", flush=True)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Coverage of posterior intervals of known variance components.")
    ap.add_argument("--shape", choices=["per-benchmark", "pooled", "both"], default="both")
    ap.add_argument("--datasets", type=int, default=20)
    ap.add_argument("--draws", type=int, help="draws per chain (default: the app's; with --stop gate the minimum, "
                    "default 200)")
    ap.add_argument("--stop", choices=["fixed", "gate"], default=M.SamplerSettings().stop,
                    help="run length rule (SamplerSettings.stop; default the app's, gate)")
    ap.add_argument("--max-draws", type=int, help="with --stop gate: ceiling of draws per chain (default 4000)")
    ap.add_argument("--warmup", type=int, default=M.SamplerSettings().warmup)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--adaptive-warmup", choices=["on", "off"], default="on" if M.SamplerSettings().adaptive_warmup
                    else "off", help="end the slow warmup windows once the metric has settled "
                    "(SamplerSettings.adaptive_warmup; default the app's)")
    ap.add_argument("--seed", type=int, default=1000, help="seed of the first data set (then +1, +2, ...)")
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args(argv)
    settings = M.SamplerSettings(draws=a.draws, warmup=a.warmup, chains=a.chains, seed=7, keep_random_effects=False,
                                 stop=a.stop, max_draws=a.max_draws, adaptive_warmup=a.adaptive_warmup == "on")
    shapes = ["per-benchmark", "pooled"] if a.shape == "both" else [a.shape]
    out = [study(s, a.datasets, settings, a.seed) for s in shapes]
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
