"""The hold-out splits under both estimators in one run: Bayesian refits against REML fits.

Seed 003 (DDR paper 2026) sec. 5.4's 50 random 70/30 splits by (agent, task) cell, the same splits (split ``i``
draws from ``default_rng([seed, i])``) fitted two ways in this one process:

- **REML** (:func:`~ddr_explorer.core.analyses.heldout_reml.held_out_study_reml`): the REML LMM on each part,
  coefficients on the observed 0/1 scale;
- **Bayes** (:func:`~ddr_explorer.core.analyses.heldout.held_out_study`): the refit engine's Bayesian GLMM
  refits of the parent fit, latent logit scale, under ``--refit-rule`` (the gate by default, as ``ddr report``).

Printed per estimator: Pearson r, Spearman and the mean gap (held-out - projected) with their uncertainty (the
split SE, :attr:`~ddr_explorer.core.analyses.heldout.HeldOutReliability.split_se`; a 95% bootstrap interval over
the splits; for Bayes also the delta-method Monte Carlo SE), the wall seconds of the splits (and of the parent
fit, apart), and decision 4's verdict (:func:`~ddr_explorer.core.report.content.held_out_verdict`) under each:
whether the sentence would read the same.  With ``--bayes-splits k`` below ``--splits`` the Bayesian side runs
the first ``k`` splits only and REML is also summarised on those same ``k``.

Usage (the full comparison: measured 1,282 s for 80 Bayesian refits at load 9-11 on 2 shared cores, so about
27 min for the 100; REML 73-193 s)::

    nice python bench/bench_heldout_estimators.py --splits 50
    nice python bench/bench_heldout_estimators.py --splits 50 --bayes-splits 10   # a reduced Bayesian run
    nice python bench/bench_heldout_estimators.py --corpus OTHER.csv --splits 50  # another corpus's shape
    nice python bench/bench_heldout_estimators.py --splits 50 --no-bayes          # REML only

``--cache DIR`` keeps the parent fit and the refits (a rerun samples nothing); the default is a fresh temporary
folder.  Wall times on a shared machine: say the load average (printed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "resources" / "demo" / "terminal-bench-2.csv"


def bootstrap(held, n_boot: int = 2000, seed: int = 0) -> dict:
    """95% percentile intervals of r, Spearman and the mean gap, resampling the splits."""
    from ddr_explorer.core.ranks import spearman_rho

    x, y = held.projected, held.held_out
    rng = np.random.default_rng(seed)
    out = {"r": [], "spearman": [], "gap": []}
    for _ in range(n_boot):
        i = rng.integers(0, x.size, x.size)
        if np.ptp(x[i]) == 0 or np.ptp(y[i]) == 0:
            continue
        out["r"].append(np.corrcoef(x[i], y[i])[0, 1])
        out["spearman"].append(spearman_rho(x[i], y[i]))
        out["gap"].append(np.mean(y[i] - x[i]))
    return {k: [float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))] for k, v in out.items()}


def design_effect(held, trials) -> dict:
    """How much of r the held-out design carries: each split reads both coefficients at its held-out part's
    observed design, whose trials vary from split to split (stochastic rounding per cell), so a split with
    more held-out trials lifts both.  r of each side with the held-out trials, and r net of them (partial)."""
    n = np.asarray(trials, np.float64)[: held.n_splits]
    if np.ptp(n) == 0:
        return {}
    p, h = held.projected, held.held_out
    rp, rh = p - np.polyval(np.polyfit(n, p, 1), n), h - np.polyval(np.polyfit(n, h, 1), n)
    return {"r_projected_trials": float(np.corrcoef(p, n)[0, 1]), "r_held_out_trials": float(np.corrcoef(h, n)[0, 1]),
            "r_net_of_trials": float(np.corrcoef(rp, rh)[0, 1])}


def summary(held, wall: float, extra: dict | None = None, trials=None) -> dict:
    """One estimator's numbers (module note); ``trials``: the held-out trials per split (:func:`design_effect`)."""
    from ddr_explorer.core.report.content import held_out_verdict

    r_se, gap_se = held.split_se
    return {"estimator": held.estimator, "scale": held.scale, "n_splits": held.n_splits,
            "pearson_r": held.pearson_r, "pearson_r_split_se": r_se, "spearman": held.spearman,
            "mean_gap": held.mean_gap, "mean_gap_split_se": gap_se,
            "pearson_r_mcse": _num(held.pearson_r_mcse), "mean_gap_mcse": _num(held.mean_gap_mcse),
            "bootstrap95": bootstrap(held), "sd_projected": float(np.std(held.projected, ddof=1)),
            "sd_held_out": float(np.std(held.held_out, ddof=1)), "mean_projected": float(np.mean(held.projected)),
            "verdict": held_out_verdict(held), "wall_seconds": wall,
            **({} if trials is None else design_effect(held, trials)), **(extra or {})}


def _num(v):
    return None if v is None or not np.isfinite(v) else float(v)


def first(held, k: int):
    """The hold-out restricted to its first ``k`` splits (REML on the Bayesian side's splits)."""
    import dataclasses

    return dataclasses.replace(held, projected=held.projected[:k], held_out=held.held_out[:k],
                               projected_mcse=None, held_out_mcse=None)


def run_corpus(path: Path, args) -> dict:
    from ddr_explorer.core.analyses.heldout import held_out_study
    from ddr_explorer.core.analyses.heldout_reml import held_out_study_reml
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.design.presets import default_preset
    from ddr_explorer.core.fitting import fit_corpus
    from ddr_explorer.core.model import SamplerSettings

    corpus = load_corpus(path)
    spec = args.preset or default_preset(corpus)
    out = {"corpus": str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path), "preset": spec,
           "load_before": os.getloadavg()}
    t0 = time.perf_counter()
    reml = held_out_study_reml(corpus, spec, n_splits=args.splits, seed=args.seed)
    reml_trials = reml.splits["n_held_out_trials"][reml.splits["error"].isna()].to_numpy()
    out["reml"] = summary(reml.result, time.perf_counter() - t0, {"n_fits": reml.n_fits,
                                                                  "n_converged": reml.n_converged}, reml_trials)
    _print_one(out["reml"])
    k = min(args.bayes_splits or args.splits, args.splits)
    if args.no_bayes:
        out["load_after"] = os.getloadavg()
        return out
    cache = args.cache or Path(tempfile.mkdtemp(prefix="bench-heldout-"))
    t0 = time.perf_counter()
    parent = fit_corpus(corpus, spec, SamplerSettings(), cache_dir=cache).posterior
    out["parent_wall_seconds"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    bayes = held_out_study(corpus, spec, parent.settings, cache, n_splits=k, seed=args.seed, parent=parent,
                           refit_rule=args.refit_rule)
    out["bayes"] = summary(bayes.result, time.perf_counter() - t0,
                           {"n_fits": bayes.n_fits, "n_converged": bayes.n_converged, "n_cached": bayes.n_cached,
                            "refit_rule": args.refit_rule},
                           bayes.splits["n_held_out_trials"][bayes.splits["error"].isna()].to_numpy())
    _print_one(out["bayes"])
    if k < args.splits:  # REML on exactly the Bayesian side's splits
        out["reml_same_splits"] = summary(first(reml.result, k), float("nan"), trials=reml_trials)
        _print_one(out["reml_same_splits"], f"REML, first {k}")
    same = out.get("reml_same_splits", out["reml"])
    out["same_decision"] = same["verdict"] == out["bayes"]["verdict"]
    out["load_after"] = os.getloadavg()
    return out


def _print_one(s: dict, label: str | None = None) -> None:
    b = s["bootstrap95"]
    mc = (f"; MCSE r {s['pearson_r_mcse']:.3f}, gap {s['mean_gap_mcse']:.4f}"
          if s.get("pearson_r_mcse") is not None else "")
    print(f"{label or s['estimator']:<16} {s['n_splits']:>3} splits ({s['scale']} scale): "
          f"r {s['pearson_r']:+.3f} (split SE {s['pearson_r_split_se']:.3f}, 95% [{b['r'][0]:+.2f}, {b['r'][1]:+.2f}]), "
          f"Spearman {s['spearman']:+.3f} [{b['spearman'][0]:+.2f}, {b['spearman'][1]:+.2f}], "
          f"mean gap {s['mean_gap']:+.4f} (split SE {s['mean_gap_split_se']:.4f}){mc}; "
          f"sd projected / held-out {s['sd_projected']:.4f} / {s['sd_held_out']:.4f}; "
          f"verdict: {s['verdict']}; "
          + (f"wall {s['wall_seconds']:.0f} s" if np.isfinite(s["wall_seconds"]) else "a subset of the run above")
          + (f"; r with the held-out trials {s['r_projected_trials']:+.2f} (projected) / {s['r_held_out_trials']:+.2f} "
             f"(held-out), r net of them {s['r_net_of_trials']:+.2f}" if "r_net_of_trials" in s else ""), flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, action="append", help="corpus file (repeatable; default: the TB2 demo)")
    ap.add_argument("--preset", help="model preset (default: the corpus's default)")
    ap.add_argument("--splits", type=int, default=50)
    ap.add_argument("--bayes-splits", type=int, help="Bayesian refits on the first k splits only (default: all)")
    ap.add_argument("--no-bayes", action="store_true", help="REML only")
    ap.add_argument("--refit-rule", default="gate", choices=["gate", "precision"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", type=Path, help="fit cache (default: a fresh temporary folder)")
    ap.add_argument("--json", type=Path, help="write the numbers there too")
    args = ap.parse_args(argv)
    results = []
    for path in args.corpus or [DEMO]:
        print(f"== {path.name} (load average {' '.join(f'{x:.1f}' for x in os.getloadavg())})", flush=True)
        res = run_corpus(path, args)
        if "parent_wall_seconds" in res:
            print(f"parent fit {res['parent_wall_seconds']:.0f} s; decision 4 reads the same under both: "
                  f"{'yes' if res['same_decision'] else 'NO'}", flush=True)
        results.append(res)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
