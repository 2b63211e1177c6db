"""Does the pair sizing's claim hold?  Whole simulated evaluations at the recommended task counts.

For pairs of the Terminal-Bench 2.0 demo (the leader against models a few ranks down, chosen so that the
tasks for P >= 0.9 are finite and between 3 and 300), :func:`ddr_explorer.core.pair_comparison.pair_decision`
states how many fresh tasks put the better one ahead with probability 0.8, 0.9 and 0.95.  This script checks
each statement by brute force: for each recommended size it simulates ``--sims`` whole evaluations from the
posterior predictive (a posterior draw, fresh levels of every term of the fitted binomial GLMM, the pair's
own effects of that draw, the corpus's scaffolds per model and trials per cell), and counts the evaluations
whose success rates put the draw's better one ahead (ties one half).  The issue's bar: within 0.03 of the
stated probability over at least 200 simulations.  The tests run a small version
(tests/test_pair_comparison.py::test_sizing_matches_whole_simulated_evaluations).

Run:  python bench/bench_pair_sizing.py [--sims 1000] [--pairs 3]   (uses the demo's cached fit; fits it if absent)
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ddr_explorer.core.corpus.io import load_corpus  # noqa: E402
from ddr_explorer.core.dstudy import observed_design  # noqa: E402
from ddr_explorer.core.fitting import components_from_posterior, fit_corpus, theta_from_posterior  # noqa: E402
from ddr_explorer.core.pair_comparison import expected_rate, pair_decision  # noqa: E402
from ddr_explorer.core.reliability import REPLICATE, _facet_key, object_facets  # noqa: E402
from ddr_explorer.core.score_reliability import effect_shape, logistic  # noqa: E402


def right_ahead(c, theta_pair, delta, sizes, n_tasks, sims, rng) -> float:
    """Fraction of whole simulated evaluations of ``n_tasks`` tasks that put the draw's better one ahead."""
    o = object_facets("model")
    facets = tuple(sorted(c.facets - o, key=_facet_key))
    size = {f: int(round(sizes.get(f, 1))) for f in facets}
    size["task"] = int(n_tasks)
    reps = int(round(sizes.get(REPLICATE, 1)))
    hits = 0.0
    for _ in range(sims):
        s = int(rng.integers(c.n_draws))
        eta = c.intercept[s] + theta_pair[s].reshape((2,) + (1,) * len(facets))
        for t, fs in zip(c.terms, c.facet_sets):
            if fs <= o:
                continue
            eta = eta + rng.normal(0.0, math.sqrt(c.draws[t][s]), effect_shape(facets, fs, o, size, 2))
        eta = np.broadcast_to(eta, (2, *[size[f] for f in facets]))
        y = rng.binomial(reps, logistic(eta)).reshape(2, -1).mean(axis=1)
        d = np.sign(y[0] - y[1])
        hits += 0.5 if d == 0 else float(d == np.sign(delta[s]))
    return hits / sims


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=1000)
    ap.add_argument("--pairs", type=int, default=3)
    args = ap.parse_args(argv)
    corpus = load_corpus(ROOT / "resources" / "demo" / "terminal-bench-2.csv")
    post = fit_corpus(corpus).posterior
    comp = components_from_posterior(post)
    theta, names = theta_from_posterior(post, "model")
    order = np.argsort(-theta.mean(axis=0))
    sizes = observed_design(corpus, facets=comp.facets).sizes()
    rng = np.random.default_rng(2026)
    rows, worst = [], 0.0
    for j in order[1:]:
        if len(rows) >= args.pairs:
            break
        a, b = names[order[0]], names[j]
        t0 = time.perf_counter()
        dec = pair_decision(post, corpus, comp, a, b)
        n90 = dec.sizing.tasks_for[0.9]
        if not (math.isfinite(n90) and 3 <= n90 <= 300):
            continue
        ia, ib = names.index(a), names.index(b)
        delta = expected_rate(comp, theta[:, ia], "model") - expected_rate(comp, theta[:, ib], "model")
        for q, n in dec.sizing.tasks_for.items():
            if not math.isfinite(n):
                continue
            # the stated probability at that size (the first size reaching q states at least q)
            stated = float(np.interp(n, dec.sizing.curve_n, dec.sizing.curve_p)) if n > 200 else None
            got = right_ahead(comp, theta[:, [ia, ib]], delta, sizes, n, args.sims, rng)
            claim = stated if stated is not None else q
            rows.append((a, b, q, n, claim, got))
            worst = max(worst, claim - got)
            print(f"{a} vs {b}: P >= {q} at {n:.0f} tasks; simulated {got:.3f} over {args.sims} evaluations "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
    print()
    print(f"{'pair':<44}{'assurance':>10}{'tasks':>7}{'simulated':>11}{'short by':>10}")
    for a, b, q, n, claim, got in rows:
        print(f"{a + ' vs ' + b:<44}{q:>10}{n:>7.0f}{got:>11.3f}{max(claim - got, 0):>10.3f}")
    print(f"\nlargest shortfall below the stated probability: {worst:.3f} (bar 0.03, Monte Carlo SE about "
          f"{math.sqrt(0.9 * 0.1 / args.sims):.3f})")
    return 0 if worst <= 0.03 else 1


if __name__ == "__main__":
    raise SystemExit(main())
