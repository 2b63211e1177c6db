"""Tasks needed for scores that correlate 0.85: the product's answer against fresh simulated task sets.

For each scenario (binary and k-of-n cells, few and many models, easy and hard tasks) a corpus is drawn
from a binomial GLMM with known components (task, model, task:model; one benchmark, one scaffold), the
product fits it (the per-benchmark preset, NUTS) and answers "how many tasks reach 0.85?" twice:

* observed: the reliability of success rates (core/score_reliability.py), the product's default answer;
* latent: the logit-scale Erho2 of Hardy et al. 2026 (the answer before the observed-score coefficient).

The truth is measured by simulation, with the corpus's own models held: for each task count n, many
pairs of fresh task sets of n tasks (fresh task effects, task-by-model effects and trials) are drawn,
the models' success rates on each set are correlated (Pearson), and the smallest n whose mean
correlation reaches 0.85 is the truth.  The issue's bar: the observed answer within 25% of the truth.

Run:  python bench/bench_score_reliability.py [--pairs 300] [--draws 500]   (about 1-3 min per scenario)
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ddr_explorer.core.corpus.io import load_corpus  # noqa: E402
from ddr_explorer.core.dstudy import DStudyDesign  # noqa: E402
from ddr_explorer.core.dstudy.summary import dstudy_summary  # noqa: E402
from ddr_explorer.core.fitting import components_from_posterior, fit_corpus  # noqa: E402
from ddr_explorer.core.model.sampler import SamplerSettings  # noqa: E402

TARGET = 0.85

#: name, models, corpus tasks, trials per cell, mu, sigma_model, sigma_task, sigma_task:model
SCENARIOS = [
    ("binary, 40 models, issue's components", 40, 60, 1, 0.0, 1.5, 2.0, 0.8),
    ("binary, 40 models, hard tasks", 40, 60, 1, -2.0, 1.5, 2.0, 0.8),
    ("binary, 12 models, easy tasks", 12, 80, 1, 1.5, 1.2, 1.5, 0.8),
    ("5-of-5, 30 models, like Terminal-Bench", 30, 60, 5, -0.5, 1.7, 3.0, 1.4),
    ("3-of-3, 100 models, spread tasks", 100, 50, 3, -0.5, 1.0, 2.5, 1.0),
    ("binary, 60 models, small model spread", 60, 100, 1, -1.0, 0.7, 1.5, 0.6),
]


def _draw_corpus(rng, n_models, n_tasks, trials, mu, sm, st, stm):
    um = rng.normal(0, sm, n_models)
    ut = rng.normal(0, st, n_tasks)
    utm = rng.normal(0, stm, (n_models, n_tasks))
    y = rng.binomial(trials, 1 / (1 + np.exp(-(mu + um[:, None] + ut[None, :] + utm))))
    m, t = np.meshgrid(np.arange(n_models), np.arange(n_tasks), indexing="ij")
    table = pd.DataFrame({"benchmark": "sim", "task": [f"t{k:03d}" for k in t.ravel()],
                          "model": [f"m{k:03d}" for k in m.ravel()], "scaffold": "s",
                          "successes": y.ravel(), "trials": trials})
    return table, um


def _fresh_correlation(rng, um, n, trials, mu, st, stm, pairs):
    """Mean Pearson correlation of the held models' success rates on two fresh sets of n tasks."""
    r = np.empty(pairs)
    for k in range(pairs):
        rates = []
        for _ in range(2):
            eta = mu + um[:, None] + rng.normal(0, st, n)[None, :] + rng.normal(0, stm, (len(um), n))
            rates.append(rng.binomial(trials, 1 / (1 + np.exp(-eta))).mean(axis=1) / trials)
        a, b = rates
        r[k] = np.corrcoef(a, b)[0, 1] if a.std() > 0 and b.std() > 0 else 0.0
    return float(r.mean())


def true_tasks(rng, um, trials, mu, st, stm, pairs, limit=2000):
    """Smallest n whose fresh task sets correlate >= TARGET on average (bisection; monotone in n)."""
    lo, hi = 1, 2
    while _fresh_correlation(rng, um, hi, trials, mu, st, stm, pairs) < TARGET:
        lo, hi = hi, hi * 2
        if hi > limit:
            return math.inf
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _fresh_correlation(rng, um, mid, trials, mu, st, stm, pairs) >= TARGET:
            hi = mid
        else:
            lo = mid
    return hi


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=300, help="pairs of fresh task sets per task count")
    ap.add_argument("--draws", type=int, default=500, help="posterior draws per chain")
    ap.add_argument("--only", type=int, nargs="*", help="scenario indices to run")
    args = ap.parse_args(argv)
    settings = SamplerSettings(draws=args.draws, warmup=300, chains=4, stop="fixed")
    rows = []
    with tempfile.TemporaryDirectory(prefix="ddr-bench-scores-") as tmp:
        for i, (name, nm, nt, trials, mu, sm, st, stm) in enumerate(SCENARIOS):
            if args.only and i not in args.only:
                continue
            rng = np.random.default_rng(100 + i)
            table, um = _draw_corpus(rng, nm, nt, trials, mu, sm, st, stm)
            path = Path(tmp) / f"scenario{i}.csv"
            table.to_csv(path, index=False)
            corpus = load_corpus(path)
            t0 = time.perf_counter()
            fit = fit_corpus(corpus, "per-benchmark", settings, cache_dir=Path(tmp) / "cache")
            wall = time.perf_counter() - t0
            c = components_from_posterior(fit.posterior)
            s = dstudy_summary(c, DStudyDesign(n_tasks=nt, n_models=nm, n_replicates=trials), target=TARGET)
            obs, lat = s["min_n"]["n_tasks"]["median"], s["latent"]["min_n"]["n_tasks"]["median"]
            truth = true_tasks(np.random.default_rng(7 + i), um, trials, mu, st, stm, args.pairs)
            rows.append((name, truth, obs, lat, wall))
            print(f"{i}. {name}: truth {truth}, observed-score answer {obs} ({obs / truth:.2f}x), "
                  f"latent answer {lat} ({lat / truth:.2f}x); fit {wall:.0f} s", flush=True)
    print()
    print(f"{'scenario':<42}{'truth':>7}{'observed':>10}{'ratio':>7}{'latent':>8}{'ratio':>7}")
    for name, truth, obs, lat, _ in rows:
        print(f"{name:<42}{truth:>7}{obs:>10.0f}{obs / truth:>7.2f}{lat:>8.0f}{lat / truth:>7.2f}")
    within = [abs(obs / truth - 1) <= 0.25 for _, truth, obs, _, _ in rows]
    print(f"\nobserved-score answer within 25% of the truth: {sum(within)} of {len(rows)}")
    return 0 if all(within) else 1


if __name__ == "__main__":
    raise SystemExit(main())
