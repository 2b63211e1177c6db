"""``ddr henderson`` and ``ddr methods``: variance components by Henderson's Method I, and by every
estimator side by side (Henderson, REML, Laplace, DISCO, the Bayesian fits), on an agent corpus or a plain
G-study score table."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..corpus.issues import CorpusError
from ..terminal_progress import TerminalProgress, run_with_progress
from .common import EXIT_INVALID, EXIT_OK, corpus_of, print_errors, refusal


def _read_score_table(path: Path, response: str):
    """A generic long table (G-study data) if it has the response column, else None."""
    from ..estimators.score_table import read_score_table

    return read_score_table(path, response)


def cmd_henderson(args: argparse.Namespace) -> int:
    """``ddr henderson``: variance components by Henderson's Method I, of a corpus's binary trials or of a
    plain G-study table whose formula names its response column."""
    from ..henderson import henderson_method1
    from ..model.formula import ModelSpecError, as_spec

    try:
        spec = as_spec(args.formula)
    except ModelSpecError as exc:
        print(f"ddr: invalid formula: {exc}", file=sys.stderr)
        return EXIT_INVALID
    lhs = args.formula.split("~", 1)[0].strip() if "~" in args.formula else ""
    all_terms = (*spec.terms, *spec.folded)
    terms = {t.name: list(t.columns) for t in all_terms}
    table = _read_score_table(args.path, lhs) if lhs else None
    try:
        if table is not None:  # a classic G-study table with a numeric score column
            # tasks are nested in benchmarks in agent corpora; a plain G-study table has no benchmark
            have = set(table.columns)
            terms = {t.name: list(t.columns if set(t.columns) <= have else t.facets) for t in all_terms}
            result = henderson_method1(table, terms, response=lhs)
            source = {"file": str(args.path), "response": lhs, "rows": int(len(table))}
        else:
            corpus = corpus_of(args)
            result = henderson_method1(corpus.table, terms)
            source = {"file": str(args.path), "response": "binary trials", "corpus_hash": corpus.content_hash}
    except CorpusError as exc:
        print_errors(exc)
        return EXIT_INVALID
    except ValueError as exc:
        print(f"ddr: {args.path}: {exc}", file=sys.stderr)
        return EXIT_INVALID
    out = {**source, "formula": args.formula, "method": "Henderson Method I", **result.to_dict()}
    if args.json:
        print(json.dumps(out, indent=2))
        return EXIT_OK
    print(f"Henderson Method I on {args.path} ({result.n_obs:,} observations, response: {source['response']})")
    print(f"formula: {args.formula}")
    total = sum(result.components.values()) or 1.0
    print(f"{'term':<32}{'sigma^2':>12}{'share':>9}")
    for term, value in result.components.items():
        flag = "  negative, floored at 0" if term in result.flagged else ""
        print(f"{term:<32}{value:>12.5f}{value / total:>9.1%}{flag}")
    print("Components are on the observed scale (probability scale for binary trials), not the logit scale.")
    return EXIT_OK


def cmd_methods(args: argparse.Namespace) -> int:
    """``ddr methods``: variance shares from every estimator side by side (seed 000 (Hardy et al. 2026) Tables 20-21).

    An agent corpus gets the formula the fit fits (a preset reduced to the terms its design separates);
    a plain G-study table with the formula's response column gets the same estimators on that formula.
    """
    from ..design.presets import UnsupportedTermsError, default_preset, supported_spec
    from ..estimators.design import EstimationCancelled
    from ..estimators.methods import format_methods_table, methods_table
    from ..model.formula import ModelSpecError, as_spec

    lhs = args.formula.split("~", 1)[0].strip() if args.formula and "~" in args.formula else ""
    scores = _read_score_table(args.path, lhs) if lhs else None
    if scores is not None:
        return _methods_of_score_table(args, scores, lhs)
    try:
        if args.formula and args.preset:
            raise ValueError("give at most one of --formula or --preset")
        if args.object not in (None, "model", "system", "agent"):
            raise ValueError(f"--object {args.object!r}: an agent corpus measures model, system or agent (a facet "
                             "name is for a plain score table whose formula names its response column)")
        corpus = corpus_of(args)
        spec = as_spec(args.formula or args.preset or default_preset(corpus))
        spec.validate(corpus.table.columns)
        check = supported_spec(corpus, spec)  # the fit's own reduction: the cache key is of the fitted spec
        if check.changed and args.strict_terms:
            raise UnsupportedTermsError(check)
        from ..reliability import object_for_terms
        args.object = object_for_terms(check.spec.term_names, args.object)  # the model's own: agent for ddr
        posterior = None
        if not args.no_bayes:  # the Bayesian column only from a fit already in the cache: never fit here
            from ..cache import FitCache
            from ..files import default_cache_dir
            from ..fitting import fit_key, posterior_from_entry, settings_from_args

            cache = FitCache(args.cache or default_cache_dir())
            entry, _ = cache.load(fit_key(corpus, check.spec, settings_from_args(args)))
            posterior = None if entry is None else posterior_from_entry(entry)
    except (CorpusError, ModelSpecError, ValueError, OSError) as exc:
        return refusal(exc)
    progress = TerminalProgress(not args.quiet)
    table, code = run_with_progress(
        progress, EstimationCancelled, (ModelSpecError, ValueError),
        lambda: methods_table(corpus, spec, posterior=posterior, object_of_measurement=args.object,
                              progress=progress, **({"estimators": ("Henderson", "REML", "Laplace", "DISCO")}
                                                    if args.no_bayes else {})))
    if code is not None:
        return code
    print(json.dumps({"file": str(args.path), "corpus_hash": corpus.content_hash, **table.to_dict()}, indent=2)
          if args.json else format_methods_table(table))
    return EXIT_OK


def _methods_of_score_table(args: argparse.Namespace, scores, response: str) -> int:
    """``ddr methods TABLE --formula 'score ~ ...'``: every estimator on a plain G-study table."""
    from ..estimators.design import EstimationCancelled
    from ..estimators.methods import format_methods_table
    from ..estimators.score_table import score_table_methods
    from ..model.formula import ModelSpecError

    if args.preset:
        print("ddr: give at most one of --formula or --preset", file=sys.stderr)
        return EXIT_INVALID
    progress = TerminalProgress(not args.quiet)
    est = ("Henderson", "REML", "Laplace", "DISCO") if args.no_bayes else ("Henderson", "REML", "Bayes LMM",
                                                                           "Laplace", "DISCO")
    table, code = run_with_progress(
        progress, EstimationCancelled, (ModelSpecError, ValueError),
        lambda: _in_file(args.path, lambda: score_table_methods(
            scores, args.formula, response, object_of_measurement=args.object, estimators=est, progress=progress)))
    if code is not None:
        return code
    source = {"file": str(args.path), "response": response, "rows": int(len(scores))}
    print(json.dumps({**source, **table.to_dict()}, indent=2) if args.json
          else f"{args.path}: {len(scores):,} observations of {response!r}\n" + format_methods_table(table))
    return EXIT_OK


def _in_file(path: Path, job):
    """Run ``job()``; a ValueError it raises names ``path`` (bad input is reported with its file)."""
    try:
        return job()
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None

