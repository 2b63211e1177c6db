"""Do two devices sample the same posterior?  CPU-vs-GPU agreement of the variance components.

Fits one corpus twice with the same model, seed and settings, once per device (``--a cpu
--b gpu`` by default), and compares the posterior means of every sigma and mu:

    z = (mean_b - mean_a) / sqrt(MCSE_a^2 + MCSE_b^2)

with MCSE the Monte Carlo standard error of the mean (arviz ``mcse(method="mean")``,
from the chains' effective sample size).  The two runs are independent Markov chains
(different devices round differently, so the same seed does not give the same draws), so
when both sample the same posterior each z is approximately N(0, 1).  The check passes
when every |z| stays below the two-sided Bonferroni bound at family-wise level ``alpha``
(default 0.001: |z| < 3.8 for 7 quantities): a false alarm once in a thousand runs, while
a device that shifts a component by a few MCSE is caught.  Both runs must also converge
(R-hat, ESS: the sampler's own diagnostics).

Run on the machine with the GPU (bench/gpu_check.sh calls it)::

    python bench/gpu_agreement.py                         # demo corpus, cpu vs gpu
    python bench/gpu_agreement.py --a cpu --b cpu --seed-b 1   # dry run without a GPU

It prints a table and ``AGREEMENT: PASS`` or ``AGREEMENT: FAIL``, and exits 0 or 1.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import ddr_explorer.core.model as M  # noqa: F401  (sets XLA_FLAGS before jax loads: one CPU device per chain)
import numpy as np


@dataclass(frozen=True)
class Estimate:
    """Posterior mean of one quantity and its Monte Carlo standard error."""

    mean: float
    mcse: float


def estimate(draws: np.ndarray) -> Estimate:
    """Mean and MCSE of the mean of a (chains, draws) array (arviz, ESS-based)."""
    import arviz as az

    x = np.asarray(draws, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"expected (chains, draws), got shape {x.shape}")
    return Estimate(float(x.mean()), float(np.asarray(az.mcse(x, method="mean"))))


def z_bound(n_quantities: int, alpha: float) -> float:
    """Two-sided Bonferroni bound: P(max |z| > bound) <= alpha for n independent N(0,1) z."""
    from scipy.stats import norm

    return float(norm.ppf(1.0 - alpha / (2.0 * n_quantities)))


def agreement(a: dict[str, Estimate], b: dict[str, Estimate], alpha: float = 0.001) -> dict:
    """Compare two runs' estimates quantity by quantity.

    Returns
    -------
    dict
        ``rows``: per quantity (name, mean_a, mean_b, mcse_a, mcse_b, z); ``bound``;
        ``max_abs_z``; ``passed``.  Quantities in only one run fail the check.
    """
    names = list(a)
    missing = sorted(set(a) ^ set(b))
    rows = []
    for k in names:
        if k not in b:
            continue
        ea, eb = a[k], b[k]
        se = math.hypot(ea.mcse, eb.mcse)
        z = (eb.mean - ea.mean) / se if se > 0 else (0.0 if eb.mean == ea.mean else math.inf)
        rows.append((k, ea.mean, eb.mean, ea.mcse, eb.mcse, z))
    bound = z_bound(max(len(rows), 1), alpha)
    max_z = max((abs(r[5]) for r in rows), default=0.0)
    return {"rows": rows, "bound": bound, "max_abs_z": max_z, "missing": missing,
            "passed": not missing and bool(rows) and max_z < bound}


def posterior_estimates(post) -> dict[str, Estimate]:
    """Estimates of every sigma and mu of a :class:`~ddr_explorer.core.model.Posterior`."""
    out = {f"sigma[{t}]": estimate(s) for t, s in post.sigma.items()}
    out["mu"] = estimate(post.mu)
    return out


def run(device: str, corpus, spec: str, settings) -> tuple[object, float]:
    from ddr_explorer.core.fitting import fit_corpus

    t0 = time.perf_counter()
    res = fit_corpus(corpus, spec, M.SamplerSettings(**{**settings, "device": device}), use_cache=False)
    return res.posterior, time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="CPU-vs-GPU agreement of the posterior (MCSE z-scores).")
    ap.add_argument("--corpus", type=Path, help="corpus file (default: the bundled demo corpus, Terminal-Bench 2.0)")
    ap.add_argument("--spec", default="per-benchmark", help="preset or formula (default per-benchmark)")
    ap.add_argument("--a", default="cpu", choices=["cpu", "gpu", "auto"])
    ap.add_argument("--b", default="gpu", choices=["cpu", "gpu", "auto"])
    ap.add_argument("--seed-a", type=int, default=0)
    ap.add_argument("--seed-b", type=int, default=None, help="default: the same seed as --seed-a")
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--alpha", type=float, default=0.001, help="family-wise false-alarm rate (default 0.001)")
    ap.add_argument("--allow-unconverged", action="store_true",
                    help="judge the z-scores even when a run misses the R-hat/ESS targets (short dry runs)")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)

    import jax

    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.files import demo_corpus_path

    path = args.corpus or demo_corpus_path()
    corpus = load_corpus(path)
    print(f"== agreement: {path.name}, {args.spec} model, {args.chains} chains x ({args.warmup} warmup + "
          f"{args.draws} draws); jax {jax.__version__}, devices {[d.device_kind for d in jax.devices()]}",
          flush=True)
    base = {"chains": args.chains, "warmup": args.warmup, "draws": args.draws}
    seed_b = args.seed_a if args.seed_b is None else args.seed_b
    post_a, wall_a = run(args.a, corpus, args.spec, {**base, "seed": args.seed_a})
    print(f"  a: {post_a.device}, seed {args.seed_a}: {wall_a:.1f} s, converged {post_a.diagnostics.converged}",
          flush=True)
    post_b, wall_b = run(args.b, corpus, args.spec, {**base, "seed": seed_b})
    print(f"  b: {post_b.device}, seed {seed_b}: {wall_b:.1f} s, converged {post_b.diagnostics.converged}",
          flush=True)
    print(f"  ratio wall b / a: {wall_b / wall_a:.2f} (same run, same settings)", flush=True)
    res = agreement(posterior_estimates(post_a), posterior_estimates(post_b), args.alpha)
    print(f"  {'quantity':26s} {'mean a':>8s} {'mean b':>8s} {'MCSE a':>8s} {'MCSE b':>8s} {'z':>7s}")
    for name, ma, mb, sa, sb, z in res["rows"]:
        print(f"  {name:26s} {ma:8.3f} {mb:8.3f} {sa:8.4f} {sb:8.4f} {z:7.2f}")
    converged = bool(post_a.diagnostics.converged and post_b.diagnostics.converged)
    for label, post in (("a", post_a), ("b", post_b)):
        for p in post.diagnostics.problems:
            print(f"  problem ({label}): {p}")
    ok = res["passed"] and (converged or args.allow_unconverged)
    print(f"  max |z| = {res['max_abs_z']:.2f} (bound {res['bound']:.2f} at family-wise alpha {args.alpha}); "
          f"wall a {wall_a:.1f} s, b {wall_b:.1f} s")
    if res["missing"]:
        print(f"  quantities in one run only: {res['missing']}")
    print(f"AGREEMENT: {'PASS' if ok else 'FAIL'}" + ("" if converged else " (a run did not converge" +
                                                     (", allowed)" if args.allow_unconverged else ")")))
    if args.json:
        args.json.write_text(json.dumps({"a": post_a.device, "b": post_b.device, "wall_a": wall_a, "wall_b": wall_b,
                                         "converged": converged, "ok": ok, **res},
                                        indent=1, default=float))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
