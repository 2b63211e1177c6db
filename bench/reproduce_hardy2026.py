"""Reproduce Tables 16 and 17 of Hardy et al. (2026) (seed 000) on the authors' own data, the HAL response matrix.

Each of the nine benchmarks is fitted alone with the per-benchmark model of Eq. 2
(``mu + task + model + scaffold + task:model + task:scaffold + model:scaffold``, Bernoulli-logit, the
brms default priors the paper used), through the product's own path: :func:`load_corpus` (the ``hal``
format, ``slice="benchmark=<b>"``), :func:`fit_corpus` (the fit cache: a second run reopens the fits) and
the coefficient functions of :mod:`ddr_explorer.core.reliability`, per posterior draw:

=============================  ===============================================================================
Table 17 column                product function (observed design of the benchmark: n_i tasks, n_a scaffolds,
                               n_m models)
=============================  ===============================================================================
E rho2_M(i)                    ``capability_gap_ratio(c, "model")`` = s2_M / (s2_M + s2_IM)
E rho2_A(i)                    ``capability_gap_ratio(c, "scaffold")`` = s2_A / (s2_A + s2_IA)
rho_AA'(b)  (Eq. 5)            ``inter_scaffold_reliability(c, n_i)``
E rho2_M(b) (Eq. 3)            ``generalizability(c, "model", {task: n_i, scaffold: n_a})``
E rho2_A(b)                    ``generalizability(c, "scaffold", {task: n_i, model: n_m})``
E rho2_MA(b) (Eq. 4)           ``generalizability(c, "system", {task: n_i})``
E rho2_M(b)(inf) (Eq. 8)       ``task_only_ceiling(c, "model", {task: n_i, scaffold: n_a})``
=============================  ===============================================================================

Table 17 reports posterior means; Table 16 repeats three of its columns (M(b), MA(b) and the ceiling) with
other numbers, which match posterior medians better (the paper's Fig. 1, which Table 16 accompanies, plots
medians).  Both are printed beside ours: Table 17 against our means, Table 16 against our medians.

Also printed: the headline ranges of sec. 5 against ours, the cost of the battery at the paper's flat rate
($47,000 for 29,923 rollouts), and each fit's wall time and convergence verdict.  The pooled fit (Eq. 6;
the paper's 5.5 hours on an M1 Max), Table 8 and the pooling result (0.44 -> 0.75 at a fixed task budget) are
bench/reproduce_hardy2026_pooled.py's.

Usage::

    nohup .venv/bin/python bench/reproduce_hardy2026.py --out bench/results/hardy2026.json > repro.log 2>&1 &
    .venv/bin/python bench/reproduce_hardy2026.py --benchmarks swebench_verified_mini scicode usaco \
        --marginalise off --out bench/results/hardy2026-marginalise-off.json   # where the quadrature check failed
    .venv/bin/python bench/reproduce_hardy2026.py --from-json bench/results/hardy2026.json \
        bench/results/hardy2026-marginalise-off.json                           # the tables again

Results are written after every benchmark, so a run stopped part-way keeps what it finished.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "corpora" / "hal" / "hal_response_matrix.csv"

#: Benchmarks in the paper's Table 16 column order.
BENCHMARKS = ("assistantbench", "corebench_hard", "gaia", "onlinemind2web", "scicode", "scienceagentbench",
              "swebench_verified_mini", "taubench_airline", "usaco")

#: Table 16 (seed 000 App. F), typed from the text: (lim_{n_i->inf} Erho2_M (Eq. 8), Erho2_M (Eq. 3),
#: Erho2_MA (Eq. 4)).
PAPER_T16 = {
    "assistantbench": (0.210, 0.182, 0.935), "corebench_hard": (0.892, 0.841, 0.972),
    "gaia": (0.325, 0.318, 0.990), "onlinemind2web": (0.153, 0.148, 0.974),
    "scicode": (0.840, 0.811, 0.975), "scienceagentbench": (0.683, 0.628, 0.987),
    "swebench_verified_mini": (0.552, 0.543, 0.993), "taubench_airline": (0.669, 0.572, 0.944),
    "usaco": (0.377, 0.375, 0.994),
}
T16_KEYS = ("M_inf", "M_b", "MA_b")

#: Table 17 (seed 000 App. F, posterior means): (M(i), A(i), AA', M(b), A(b), MA(b), M(b)(inf)).
PAPER_T17 = {
    "scicode": (0.602, 0.534, 0.746, 0.736, 0.516, 0.971, 0.765),
    "gaia": (0.263, 0.705, 0.333, 0.328, 0.579, 0.990, 0.334),
    "taubench_airline": (0.549, 0.539, 0.545, 0.533, 0.759, 0.938, 0.619),
    "swebench_verified_mini": (0.599, 0.857, 0.504, 0.499, 0.639, 0.992, 0.506),
    "usaco": (0.238, 0.253, 0.392, 0.429, 0.478, 0.993, 0.432),
    "assistantbench": (0.362, 0.445, 0.287, 0.260, 0.521, 0.911, 0.305),
    "corebench_hard": (0.636, 0.941, 0.828, 0.817, 0.805, 0.972, 0.866),
    "onlinemind2web": (0.296, 0.228, 0.205, 0.203, 0.430, 0.972, 0.210),
    "scienceagentbench": (0.558, 0.753, 0.567, 0.561, 0.881, 0.982, 0.610),
}
T17_KEYS = ("M_i", "A_i", "AA", "M_b", "A_b", "MA_b", "M_inf")

#: The headline ranges of sec. 5.1-5.3: systems and models (Table 16's columns), inter-scaffold (Table 17's
#: column of means, 0.205-0.828, "0.21-0.83" rounded), and the most that unlimited tasks add.
PAPER_HEADLINES = {"MA_b": (0.935, 0.994), "M_b": (0.148, 0.841), "AA": (0.205, 0.828), "task_gain_max": 0.10}

#: Sec. 5.2's text gives another inter-scaffold range, posterior medians: 0.151 (OnlineMind2Web) to 0.852
#: (CORE-Bench Hard), against Table 17's means 0.205 and 0.828 for the same two benchmarks.
PAPER_AA_TEXT_MEDIANS = {"onlinemind2web": 0.151, "corebench_hard": 0.852}

#: The paper's cost of the battery (sec. 5.3): more than $47,000 for the 29,923 rollouts, a flat rate.
PAPER_COST_USD, PAPER_ROLLOUTS = 47_000.0, 29_923


def benchmark_estimands(components, n_tasks: float, n_scaffolds: float, n_models: float) -> dict[str, np.ndarray]:
    """Per-draw Table 17 coefficients of one benchmark's fit (see the module table), from core.reliability."""
    from ddr_explorer.core.reliability import (capability_gap_ratio, generalizability, inter_scaffold_reliability,
                                               task_only_ceiling)

    one = {"task": n_tasks, "scaffold": 1.0, "model": 1.0}  # the paper's tables: one scaffold (one model)
    observed = {"task": n_tasks, "scaffold": n_scaffolds, "model": n_models}
    return {
        "M_i": capability_gap_ratio(components, "model"),
        "A_i": capability_gap_ratio(components, "scaffold"),
        "AA": inter_scaffold_reliability(components, n_tasks),
        "M_b": generalizability(components, "model", one),
        "A_b": generalizability(components, "scaffold", one),
        "MA_b": generalizability(components, "system", one),
        "M_inf": task_only_ceiling(components, "model", one),
        # the same at the benchmark's observed n_a scaffolds (models) per model (scaffold), for comparison
        "M_b_observed": generalizability(components, "model", observed),
        "A_b_observed": generalizability(components, "scaffold", observed),
        "M_inf_observed": task_only_ceiling(components, "model", observed),
    }


def fit_benchmark(path: Path, benchmark: str, settings, cache_dir: str | None) -> dict:
    """Fit one benchmark (Eq. 2) and summarise its coefficients; the fit's wall time and verdict with them."""
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.fitting import components_from_posterior, fit_corpus, verdict_of
    from ddr_explorer.core.posterior_summary import summarize
    import arviz as az

    corpus = load_corpus(path, slice=f"benchmark={benchmark}")
    sizes = {f: corpus.n_levels(f) for f in ("task", "model", "scaffold", "agent")}
    t0 = time.perf_counter()
    result = fit_corpus(corpus, "per-benchmark", settings, cache_dir=cache_dir)
    wall = time.perf_counter() - t0
    post = result.posterior
    comp = components_from_posterior(post)
    draws = benchmark_estimands(comp, sizes["task"], sizes["scaffold"], sizes["model"])
    summaries = {k: summarize(v).to_dict() for k, v in draws.items()}
    for k, v in draws.items():  # Monte Carlo SE of the posterior mean, from the chains (ArviZ)
        summaries[k]["mcse_mean"] = float(np.asarray(az.mcse(v.reshape(settings.chains, -1), method="mean")))
    sigma2 = {t: float(np.mean(comp.get(t))) for t in comp.terms}
    return {"benchmark": benchmark, "n_records": corpus.n_records, "sizes": sizes, "wall_s": round(wall, 1),
            "from_cache": result.from_cache, "terms": list(comp.terms), "sigma2_mean": sigma2,
            "verdict": verdict_of(post), "estimands": summaries}


def _cell(ours: float, paper: float) -> str:
    return f"{paper:.3f} / {ours:.3f}{' *' if abs(ours - paper) > 0.05 else ''}"


def format_tables(results: dict) -> str:
    """The two tables (paper / ours; '*' marks a difference above 0.05), the headlines and the cost."""
    lines = ["Table 17 (posterior means): paper / ours   (* = differs by more than 0.05)", ""]
    lines.append("| benchmark | " + " | ".join(T17_KEYS) + " |")
    lines.append("|---" * (len(T17_KEYS) + 1) + "|")
    for b in PAPER_T17:
        if b in results:
            est = results[b]["estimands"]
            lines.append(f"| {b} | " + " | ".join(_cell(est[k]["mean"], p) for k, p in zip(T17_KEYS, PAPER_T17[b]))
                         + " |")
    lines += ["", "Table 16 (medians, we read): paper / ours (posterior median)", ""]
    lines.append("| benchmark | " + " | ".join(T16_KEYS) + " |")
    lines.append("|---" * (len(T16_KEYS) + 1) + "|")
    for b in BENCHMARKS:
        if b in results:
            est = results[b]["estimands"]
            lines.append(f"| {b} | " + " | ".join(_cell(est[k]["median"], p) for k, p in zip(T16_KEYS, PAPER_T16[b]))
                         + " |")
    lines += ["", *format_headlines(results), "", *format_fits(results)]
    return "\n".join(lines)


def format_headlines(results: dict) -> list[str]:
    """The sec. 5 ranges (over the benchmarks fitted) and the flat-rate cost, paper beside ours."""
    done = [results[b] for b in BENCHMARKS if b in results]
    if not done:
        return ["(no benchmark fitted yet)"]
    out = [f"Headline ranges over the {len(done)} benchmarks fitted (paper / ours: medians, then means):"]
    for key, what in (("MA_b", "systems E rho2_MA(b)"), ("M_b", "models E rho2_M(b)"), ("AA", "inter-scaffold rho_AA'")):
        med = [r["estimands"][key]["median"] for r in done]
        mean = [r["estimands"][key]["mean"] for r in done]
        lo, hi = PAPER_HEADLINES[key]
        out.append(f"  {what:<24} {lo:.3f}-{hi:.3f} / {min(med):.3f}-{max(med):.3f} (means {min(mean):.3f}-{max(mean):.3f})")
    for b, paper in PAPER_AA_TEXT_MEDIANS.items():
        if b in results:
            out.append(f"  inter-scaffold median, {b} (sec. 5.2 text): {paper:.3f} / "
                       f"{results[b]['estimands']['AA']['median']:.3f}")
    gain = [r["estimands"]["M_inf"]["median"] - r["estimands"]["M_b"]["median"] for r in done]
    out.append(f"  most that unlimited tasks add to E rho2_M(b): paper {PAPER_HEADLINES['task_gain_max']:.2f} / "
               f"ours {max(gain):.3f} (medians; {done[int(np.argmax(gain))]['benchmark']})")
    rate = PAPER_COST_USD / PAPER_ROLLOUTS
    n = sum(r["n_records"] for r in done)
    out.append(f"Cost at the paper's flat rate ${rate:.4f} per rollout: {n:,} rollouts = ${n * rate:,.0f} "
               f"(paper: ${PAPER_COST_USD:,.0f} for {PAPER_ROLLOUTS:,})")
    return out


def format_fits(results: dict) -> list[str]:
    out = ["Fits (per-benchmark model, Eq. 2): wall seconds, convergence"]
    for b in BENCHMARKS:
        if b in results:
            r, v = results[b], results[b]["verdict"]
            how = " [task:model sampled, marginalise off]" if r.get("settings", {}).get("marginalise") == "off" else ""
            out.append(f"  {b:<24} {r['n_records']:>5} rollouts  {r['wall_s']:>7.0f} s{' (cache)' if r['from_cache'] else ''}{how}"
                       f"  {'converged' if v['converged'] else 'NOT converged'}: max R-hat {v['max_rhat']:.3f}, "
                       f"min bulk ESS {v['min_ess_bulk']:.0f}, tail {v['min_ess_tail']:.0f}, divergences "
                       f"{v['divergences']}, draws {v['n_draws']}" + (f" ({'; '.join(v['problems'])})" if v['problems'] else ""))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="hal_response_matrix.csv")
    ap.add_argument("--benchmarks", nargs="*", default=None, help="a subset (default: all nine, smallest first)")
    ap.add_argument("--out", type=Path, default=None, help="JSON of the results, written after every benchmark")
    ap.add_argument("--from-json", type=Path, nargs="+", default=None,
                    help="print the tables of earlier runs (a benchmark in a later file replaces it); fit nothing")
    ap.add_argument("--cache", default=None, help="fit cache folder (default: the product's)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--marginalise", choices=("auto", "off"), default="auto",
                    help="off: sample every task:model level (where the quadrature failed its check)")
    ap.add_argument("--max-draws", type=int, default=None, help="the gate's ceiling of draws per chain")
    args = ap.parse_args(argv)
    if args.from_json:
        merged: dict = {}
        for path in args.from_json:
            merged.update(json.loads(path.read_text())["benchmarks"])
        print(format_tables(merged))
        return 0
    import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.model.posterior import SamplerSettings

    # the product's defaults (4 chains, the convergence gate) with the paper's adapt_delta = 0.95 (App. C.1.3)
    settings = SamplerSettings(seed=args.seed, target_accept=0.95, marginalise=args.marginalise,
                               max_draws=args.max_draws)
    whole = load_corpus(args.data)
    order = sorted(args.benchmarks or BENCHMARKS, key=lambda b: int((whole.table["benchmark"] == b).sum()))
    # a run on some benchmarks updates an earlier run's file: the others keep their results
    results: dict = json.loads(args.out.read_text())["benchmarks"] if args.out and args.out.exists() else {}
    for b in order:
        results[b] = fit_benchmark(args.data, b, settings, args.cache)
        results[b]["settings"] = {"seed": args.seed, "target_accept": 0.95, "marginalise": args.marginalise,
                                  "max_draws": settings.max_draws}
        print(f"{b}: {results[b]['wall_s']:.0f} s, converged={results[b]['verdict']['converged']}", flush=True)
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps({"data": str(args.data), "benchmarks": results}, indent=1))
    print(format_tables(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
