"""``ddr compare CORPUS A B``: two agents, one decision (:mod:`..pair_comparison`, :mod:`..pair_sizing`)."""

from __future__ import annotations

import argparse
import json
import math
import sys

from ..corpus.issues import CorpusError
from ..formatting import convergence_verdict
from .common import EXIT_INVALID, EXIT_OK, cache_folder_refused, corpus_of, print_errors
from ..terminal_progress import TerminalProgress


def _pct(x: float) -> str:
    return f"{x * 100:+.1f}"


def _interval(s) -> str:
    return f"{_pct(s['median'])} [{_pct(s['hdi95'][0])}, {_pct(s['hdi95'][1])}]"


def _n(x) -> str:
    return "never" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:,.0f}"


def format_comparison(out: dict) -> str:
    """The text ``ddr compare`` prints (success rates in percentage points)."""
    c, s = out["comparison"], out["sizing"]
    a, b = c["a"], c["b"]
    f = c["frequentist"]
    lines = [out["fit"], "", c["sentence"], "",
             f"{'':<34}{'median':>8}   95% interval",
             f"{'latent difference (logit)':<34}{c['latent_difference']['median']:>+8.3f}   "
             f"[{c['latent_difference']['hdi95'][0]:+.3f}, {c['latent_difference']['hdi95'][1]:+.3f}]",
             f"{'success-rate difference (points)':<34}{_interval(c['success_rate_difference'])}",
             f"P({a} better than {b}) = {c['p_a_better']:.3f}", "",
             f"paired test on {f['n_tasks']} shared tasks (task-clustered SE): {_pct(f['difference'])} points "
             f"[{_pct(f['lower95'])}, {_pct(f['upper95'])}], p = {f['p_value']:.3g}"]
    if f.get("mcnemar_p") is not None:
        lines.append(f"McNemar (one binary outcome per task): {f['discordant'][0]} tasks only {a} solved, "
                     f"{f['discordant'][1]} only {b}; exact p = {f['mcnemar_p']:.3g}")
    if c.get("disagreement"):
        lines.append(c["disagreement"])
    if c.get("by_benchmark"):
        lines += ["", "per benchmark (latent difference, P(A better)):"]
        for bench, v in c["by_benchmark"].items():
            lines.append(f"  {bench:<30}{v['latent_difference']['median']:>+8.3f}   P = {v['p_a_better']:.2f}")
    if c.get("by_difficulty_stratum"):
        lines += ["", "per difficulty stratum (observed cells; P(A ahead) by the Bayesian bootstrap over tasks):"]
        for label, v in c["by_difficulty_stratum"].items():
            lines.append(f"  {label:<16}{v['tasks']:>4} tasks   {a} {v['rate_a']:.1%}  {b} {v['rate_b']:.1%}   "
                         f"{_pct(v['difference'])} [{_pct(v['lower95'])}, {_pct(v['upper95'])}]   "
                         f"P = {v['p_a_ahead']:.2f}")
    if c.get("cost"):
        lines += ["", "cost: " + "; ".join(f"{k} ${v['usd_per_trial']:.3f}/trial, "
                                           f"{v['successes_per_usd']:.2f} successes per $" for k, v in c["cost"].items())]
    lines += ["", f"a new evaluation that puts the better one ahead ({s['n_scaffolds']:g} scaffold(s) per model, "
                  f"{s['n_replicates']:g} trial(s) per cell; posterior predictive):",
              f"  P(right one ahead) now ({s['observed_tasks']:g} tasks): {s['p_right_ahead_now']:.2f}; with "
              f"unlimited tasks {s['p_right_ahead_limit']:.2f}"]
    for q, n in s["tasks_for_assurance"].items():
        cost = s["cost_for_assurance"].get(q)
        lines.append(f"  tasks for P >= {q}: {_n(n)}" + (f" (${cost:,.0f})" if cost else ""))
    if s.get("tasks_for_assurance_by_scaffolds"):
        lines.append("  tasks by scaffolds per model: " + "; ".join(
            f"{float(k):g} scaffold(s): " + ", ".join(f"{_n(n)}" for n in v.values())
            for k, v in s["tasks_for_assurance_by_scaffolds"].items()) + "  (for P >= 0.8, 0.9, 0.95)")
    mde = s["mde_paired_80"]
    lines.append("  smallest difference this design detects (80% power, alpha 0.05): "
                 + (f"{mde * 100:.1f} points (paired test), " if mde is not None else "")
                 + f"{s['mde_model_80'] * 100:.1f} points (the fit's predictive)")
    return "\n".join(lines)


def _all_pairs(post, args) -> int:
    """``ddr compare CORPUS --all``: the pairs that can be told apart and the tiers (:mod:`..rank_tiers`)."""
    from ..fitting import theta_from_posterior, verdict_of
    from ..rank_tiers import rank_tiers

    theta, names = theta_from_posterior(post, args.object)
    tiers = rank_tiers(theta, names, args.threshold)
    if args.json:
        print(json.dumps({"fit": "fit: " + convergence_verdict(verdict_of(post)), "tiers": tiers.to_dict()},
                         indent=2))
        return EXIT_OK
    print("fit: " + convergence_verdict(verdict_of(post)))
    print(tiers.sentence())
    for k, tier in enumerate(tiers.tiers, start=1):
        print(f"  tier {k}: {', '.join(tier)}")
    print(f"pairs told apart (P(better) >= {tiers.threshold:.2f}):")
    for a, b, p in tiers.pairs:
        print(f"  {a} > {b}   P = {p:.3f}")
    return EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    """``ddr compare CORPUS A B``: the pair from the fitted posterior, the frequentist check, the sizing."""
    from ..fitting import components_from_posterior, fit_corpus, settings_from_args, verdict_of
    from ..pair_comparison import PairError, pair_decision

    if cache_folder_refused(args):
        return EXIT_INVALID
    if args.all == (args.a is not None):
        print("ddr: give two names (ddr compare CORPUS A B) or --all (every pair), not both", file=sys.stderr)
        return EXIT_INVALID
    if not args.all and args.b is None:
        print("ddr: give the second name too (ddr compare CORPUS A B)", file=sys.stderr)
        return EXIT_INVALID
    try:
        corpus = corpus_of(args)
        from ..design.presets import default_preset

        progress = TerminalProgress(not args.quiet)
        try:
            result = fit_corpus(corpus, args.preset or default_preset(corpus), settings_from_args(args),
                                cache_dir=args.cache, progress=progress)
        finally:
            progress.done()
        post = result.posterior
        if args.all:
            return _all_pairs(post, args)
        decision = pair_decision(post, corpus, components_from_posterior(post), args.a, args.b, args.object)
    except CorpusError as exc:
        print_errors(exc)
        return EXIT_INVALID
    except (PairError, ValueError) as exc:
        print(f"ddr: {exc}", file=sys.stderr)
        return EXIT_INVALID
    out = {"fit": "fit: " + convergence_verdict(verdict_of(post)), **decision.to_dict()}
    print(json.dumps(out, indent=2) if args.json else format_comparison(out))
    return EXIT_OK
