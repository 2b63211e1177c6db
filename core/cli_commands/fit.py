"""``ddr fit``: the Bayesian G-study of a corpus (or its cached fit), as text or one JSON object, and the
exit status that says whether it converged."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

import numpy as np

from ..corpus.issues import CorpusError
from ..terminal_progress import TerminalProgress
from .common import EXIT_INVALID, EXIT_OK, EXIT_UNCONVERGED, cache_folder_refused, corpus_of, print_errors


def fit_summary(result) -> dict:
    """The JSON object of ``ddr fit``: components, diagnostics, wall time, device, cache."""
    from ..reliability import summarize

    post = result.posterior
    comps = {}
    for term, s in post.sigma.items():
        sm = summarize(np.asarray(s, dtype=np.float64).reshape(-1) ** 2)
        comps[term] = {"median": sm.median, "lower95": sm.hdi95[0], "upper95": sm.hdi95[1],
                       "sigma_mean": float(np.mean(s))}
    d = post.diagnostics
    return {
        "converged": bool(d.converged),
        "verdict": d.verdict(),
        "formula": post.spec.formula,
        "terms": list(post.spec.term_names),
        "priors": post.spec.priors.to_dict(),  # the priors this fit used (read back from the cache with it)
        "components": comps,
        "residual": post.spec.residual_variance,
        "diagnostics": {"max_rhat": d.max_r_hat, "min_ess_bulk": d.min_ess_bulk, "min_ess_tail": d.min_ess_tail,
                        "divergences": d.divergences, "converged": d.converged, "problems": d.problems,
                        "warnings": d.warnings},
        "wall_seconds": post.wall_seconds,
        "device": post.device,
        "settings": dataclasses.asdict(post.settings),
        "cache": {"path": None if result.cache_path is None else str(result.cache_path),
                  "hit": result.from_cache, "problem": result.cache_problem, "key": result.key},
        "n_cells": post.n_cells, "n_trials": post.n_trials, "notes": post.notes,
        # the preset checked against the design: terms left out and why (empty when none)
        "terms_left_out": [] if getattr(result, "terms", None) is None else result.terms.to_dict()["dropped"],
    }


def cmd_fit(args: argparse.Namespace) -> int:
    """``ddr fit``: the corpus fitted (or its fit reopened from the cache); the verdict first, then the
    components; exit 3 when the fit did not converge (:func:`_fit_exit`)."""
    from ..fitting import fit_corpus, settings_from_args
    from ..model.formula import ModelSpecError, as_spec
    from ..model.posterior import FitCancelled

    if args.formula is not None and args.preset is not None:
        return _fit_refusal(args, "give at most one of --formula or --preset")
    if cache_folder_refused(args):
        return EXIT_INVALID
    try:
        corpus = corpus_of(args)
        from ..design.presets import default_preset

        spec = as_spec(args.formula or args.preset or default_preset(corpus))
        spec.validate(corpus.table.columns)
        settings = settings_from_args(args)
    except CorpusError as exc:
        print_errors(exc)
        return _fit_refusal(args, None, issues=[str(i) for i in exc.issues])
    except (ModelSpecError, ValueError) as exc:
        return _fit_refusal(args, str(exc))
    if not args.quiet and not args.no_cache:  # the estimate before long work, as ddr dstudy gives it
        from ..fitting import announce_if_not_cached

        announce_if_not_cached(corpus, spec, settings, args.cache, args.path,
                               lambda text: print(text, file=sys.stderr), "fit")
    progress = TerminalProgress(not args.quiet)
    try:
        result = fit_corpus(corpus, spec, settings, cache_dir=args.cache, use_cache=not args.no_cache,
                            progress=progress, strict_terms=args.strict_terms)
    except FitCancelled as exc:
        return _fit_refusal(args, str(exc), code=130)
    except ModelSpecError as exc:  # --strict-terms: the preset has terms the design cannot separate
        return _fit_refusal(args, str(exc), supported_formula=getattr(exc, "supported_formula", None))
    finally:
        progress.done()
    if result.cache_problem:
        print(f"ddr: {result.cache_problem}", file=sys.stderr)
    from ..design.overlap import model_overlap

    overlap = model_overlap(corpus)  # two leaderboards concatenated: said, not silently fitted
    for cannot in (overlap.cannot_tell(), overlap.groups_text()):
        if cannot is not None:
            print(f"ddr: warning: {cannot}", file=sys.stderr)
    out = fit_summary(result)
    if corpus.provenance.get("slice"):  # the fit is of a slice of tasks
        out["slice"] = {"slice": corpus.provenance["slice"], "tasks": corpus.provenance.get("slice_tasks")}
    if args.json:
        print(json.dumps(out, indent=2, default=float))
        return _fit_exit(out, args)
    from ..formatting import convergence_verdict, fmt_interval, fmt_var

    d = out["diagnostics"]
    print(convergence_verdict(d))  # first, as the README promises: whether the numbers below can be used
    for p in d["problems"]:
        print(f"  problem: {p}")
    print(f"{args.path}: {out['formula']}")
    if "slice" in out:
        kept = out["slice"]["tasks"]
        print(f"slice: {out['slice']['slice']}" + (f" ({kept[0]} of {kept[1]} tasks)" if kept else ""))
    if result.terms is not None and result.terms.note:
        print(f"note: {result.terms.note}")
    print(_run_length_line(result.posterior))
    print(f"{out['n_cells']:,} binomial cells, {out['n_trials']:,} trials; {out['device']}; "
          f"{out['wall_seconds']:.1f} s{' (from cache)' if result.from_cache else ''}")
    print(f"{'term':<28}{'sigma^2 median':>15}{'95% interval':>24}")
    for term, c in out["components"].items():  # printed as the sheet prints variances (core.formatting)
        print(f"{term:<28}{fmt_var(c['median']):>15}   {fmt_interval(c['lower95'], c['upper95'], fmt_var)}")
    print(f"{'residual (pi^2/3)':<28}{fmt_var(out['residual']):>15}")
    from ..report.priors import priors_text

    print(f"priors: {priors_text(out['priors'])}")
    print(f"cache: {out['cache']['path']}")
    return _fit_exit(out, args)


def _fit_refusal(args: argparse.Namespace, message: str | None, *, code: int = EXIT_INVALID,
                 issues: list[str] | None = None, supported_formula: str | None = None) -> int:
    """A fit that did not run: the reason on stderr (``message``; the corpus ``issues`` are printed by the
    caller) and, with ``--json``, one JSON error object on stdout, so a script reading stdout learns why."""
    if message is not None:
        print(f"ddr: {message}", file=sys.stderr)
    if getattr(args, "json", False):
        err = {"error": message or f"invalid input: {len(issues or [])} problem(s)", "exit_code": code,
               "file": str(args.path)}
        if issues:
            err["issues"] = issues
        if supported_formula:
            err["supported_formula"] = supported_formula
        print(json.dumps(err, indent=2))
    return code


def _run_length_line(post) -> str:
    """``ddr fit``'s line on the run length: the gate's note (where it stopped and why), or the fixed length."""
    for note in post.notes:
        if str(note).startswith("run length by the gate"):
            return str(note)
    draws = next(iter(post.sigma.values())).shape[1] if post.sigma else post.settings.draws
    return f"run length fixed: {draws} draws per chain"


def _fit_exit(out: dict, args: argparse.Namespace) -> int:
    """0 for a converged fit; 3 (with the reason on stderr) for one that did not, unless allowed."""
    if out["converged"] or args.allow_unconverged:
        return EXIT_OK
    from ..formatting import convergence_verdict

    print(f"ddr: {convergence_verdict(out['verdict'])}: the numbers of this fit are provisional; refit with "
          "more draws or a longer warmup (the warnings above say how many), or pass --allow-unconverged "
          "to exit 0 anyway", file=sys.stderr)
    return EXIT_UNCONVERGED

