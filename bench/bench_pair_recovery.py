"""Does ``ddr compare`` recover a known difference?  Simulated corpora where A and B differ by a known amount.

Each data set is drawn from a binomial GLMM with known components (one benchmark, task, model and
task:model terms, 20 models, 40 tasks, 3 trials per cell) in which two named models, A and B, have latent
effects set by hand: ``theta_A - theta_B = gap`` (0 for "they do not differ").  The product fits it and
:func:`ddr_explorer.core.pair_comparison.compare_pair` answers.  Reported over the data sets: how often the
95% interval of the latent difference covers the true gap, the mean P(A better), how often the sentence
calls the pair settled, and how often the paired test rejects.

Run:  python bench/bench_pair_recovery.py [--datasets 6] [--draws 300]   (about 30-60 s per data set)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ddr_explorer.core.corpus.io import load_corpus  # noqa: E402
from ddr_explorer.core.fitting import components_from_posterior, fit_corpus  # noqa: E402
from ddr_explorer.core.model.sampler import SamplerSettings  # noqa: E402
from ddr_explorer.core.pair_comparison import DECISIVE, compare_pair  # noqa: E402

SIG = {"model": 1.0, "task": 1.8, "task:model": 0.7}


def corpus_with_gap(rng, gap: float, n_models=20, n_tasks=40, trials=3, mu=-0.3) -> pd.DataFrame:
    um = rng.normal(0, SIG["model"], n_models)
    um[0], um[1] = 0.2 + gap / 2, 0.2 - gap / 2          # A and B, the known gap
    ut = rng.normal(0, SIG["task"], n_tasks)
    utm = rng.normal(0, SIG["task:model"], (n_models, n_tasks))
    y = rng.binomial(trials, 1 / (1 + np.exp(-(mu + um[:, None] + ut[None, :] + utm))))
    names = ["A", "B"] + [f"m{k:02d}" for k in range(2, n_models)]
    m, t = np.meshgrid(np.arange(n_models), np.arange(n_tasks), indexing="ij")
    return pd.DataFrame({"benchmark": "sim", "task": [f"t{k:02d}" for k in t.ravel()],
                         "model": [names[k] for k in m.ravel()], "scaffold": "s",
                         "successes": y.ravel(), "trials": trials})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=6)
    ap.add_argument("--draws", type=int, default=300)
    args = ap.parse_args(argv)
    settings = SamplerSettings(draws=args.draws, warmup=300, chains=4, stop="fixed")
    out = {}
    with tempfile.TemporaryDirectory(prefix="ddr-bench-pair-") as tmp:
        # the two gaps alternate, data set by data set, so that a run stopped early has as many of each
        rows = {gap: ([], [], [], []) for gap in (0.0, 1.0)}
        for k in range(args.datasets):
            for gap in (0.0, 1.0):
                cover, p, settled, reject = rows[gap]
                rng = np.random.default_rng(1000 * (gap > 0) + k)
                path = Path(tmp) / f"gap{gap}_{k}.csv"
                corpus_with_gap(rng, gap).to_csv(path, index=False)
                corpus = load_corpus(path)
                t0 = time.perf_counter()
                post = fit_corpus(corpus, "per-benchmark", settings, cache_dir=Path(tmp) / "cache").posterior
                c = compare_pair(post, corpus.table, components_from_posterior(post), "A", "B")
                lo, hi = c.latent_difference.hdi95
                cover.append(lo <= gap <= hi)
                p.append(c.p_a_better)
                settled.append(c.p_a_better >= DECISIVE or c.p_a_better <= 1 - DECISIVE)
                reject.append(c.paired.p_value < 0.05)
                print(f"gap {gap}: data set {k}: latent difference {c.latent_difference.median:+.2f} "
                      f"[{lo:+.2f}, {hi:+.2f}], P(A better) {c.p_a_better:.2f}, paired p {c.paired.p_value:.3f} "
                      f"({time.perf_counter() - t0:.0f} s)", flush=True)
        for gap, (cover, p, settled, reject) in rows.items():
            out[gap] = (np.mean(cover), np.mean(p), np.mean(settled), np.mean(reject))
    print(f"\n{'true gap':>9}{'95% covers':>12}{'mean P(A>B)':>13}{'settled':>9}{'paired rejects':>16}")
    for gap, (cv, pm, st, rj) in out.items():
        print(f"{gap:>9.1f}{cv:>12.2f}{pm:>13.2f}{st:>9.2f}{rj:>16.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
