"""``ddr dstudy``: the decision study of a corpus, a cached fit or a components file (and its ``--preview``
of point estimates, without sampling)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from ..corpus.issues import CorpusError
from ..terminal_progress import TerminalProgress
from .common import EXIT_INVALID, EXIT_OK, print_errors


def _design_from_args(args: argparse.Namespace, observed=None):
    """The D-study design ``ddr dstudy`` asks about: the corpus's observed design (or a default one
    without a corpus) with the sizes, prices, object and claim given on the command line."""
    from ..dstudy import DStudyDesign

    d: dict = {}
    if observed is not None:
        d = {"n_tasks": observed.effective_n_tasks, "n_scaffolds": observed.n_scaffolds,
             "n_benchmarks": observed.effective_n_benchmarks, "n_replicates": observed.n_replicates,
             "n_models": observed.n_models, "price_per_trial": observed.price_per_trial}
    for field, arg in (("n_tasks", "n_tasks"), ("n_scaffolds", "n_scaffolds"), ("n_benchmarks", "n_benchmarks"),
                       ("n_replicates", "replicates"), ("n_models", "n_models")):
        value = getattr(args, arg, None)
        if value is not None:
            d[field] = value
    if args.price_per_trial is not None:
        d["price_per_trial"] = args.price_per_trial
    if observed is not None and observed.extra_facets:  # seed 003 (DDR paper 2026)'s steps and error categories
        d["extra_facets"] = dict(observed.extra_facets)
    d["object_of_measurement"] = args.object or (observed.object_of_measurement if observed is not None else "model")
    d["claim"] = args.claim
    d.setdefault("n_tasks", 50)
    return DStudyDesign(**d)


def cmd_dstudy(args: argparse.Namespace) -> int:
    """``ddr dstudy``: the D-study of a components file, a cached fit or a corpus (fitted, or reopened from
    the cache) at the sizes the command line gives; ``--preview`` goes to :func:`_dstudy_preview`."""
    from ..components_io import ComponentsFileError, read_components
    from ..dstudy.summary import dstudy_summary, format_dstudy
    from ..reliability import as_components, object_for_terms

    if args.components is None and args.path is None:
        print("ddr: give a corpus or cached fit, or --components FILE", file=sys.stderr)
        return EXIT_INVALID
    if getattr(args, "preview", False):
        return _dstudy_preview(args)
    try:
        observed = verdict = None
        kept: dict = {}
        if args.components is not None:
            components = read_components(args.components)
            args.object = object_for_terms(as_components(components).terms, args.object)
            if getattr(args, "success_rate", None) is not None:  # a paper's table has no intercept: match the rate
                import dataclasses as _dc

                from ..score_reliability import intercept_for_success_rate

                c0 = as_components(components)
                components = _dc.replace(c0, intercept=intercept_for_success_rate(c0, args.success_rate))
        elif getattr(args, "success_rate", None) is not None:
            raise ValueError("--success-rate is for --components: a fit has its own intercept draws")
        else:
            from ..fitting import components_for_dstudy

            quiet = getattr(args, "quiet", False)
            progress = TerminalProgress(not quiet)
            try:  # a fit not in the cache is said before it starts, then shows its progress
                components, observed, verdict = components_for_dstudy(
                    args, progress=progress, announce=None if quiet else lambda t: print(t, file=sys.stderr),
                    keep=kept)
            finally:
                progress.done()
        design = _design_from_args(args, observed)
        if observed is not None:  # the state's prices apply to the observed design too (frontier grid)
            observed = dataclasses.replace(observed, price_per_trial=design.price_per_trial)
        summary = dstudy_summary(components, design, target=args.target, budget=args.budget, observed=observed,
                                 verdict=verdict, not_answered=getattr(args, "not_answered", None))
        summary["design_source"] = _design_source(args)
        check = _split_half(kept.get("corpus"), components, observed, summary)
        if check is not None:
            summary["split_half"] = check.to_dict()
        if getattr(args, "corpus_counts", None) is not None:  # a corpus's trials and cells, beside the design's
            summary["corpus_counts"] = args.corpus_counts
        if getattr(args, "slice", None) and args.path is not None:  # the D-study is of a slice of tasks
            from ..corpus.slicing import parse_slice, slice_text

            summary["slice"] = slice_text(parse_slice(args.slice))
        if getattr(args, "external_ranking", None) is not None:
            from ..analyses.external_ranking import external_ranking_summary

            summary["external_ranking"] = external_ranking_summary(args)
    except (ComponentsFileError, ValueError) as exc:
        print(f"ddr: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except CorpusError as exc:
        print_errors(exc)
        return EXIT_INVALID
    if "slice" in summary and not args.json:
        print(f"slice of tasks: {summary['slice']}")
    print(json.dumps(summary, indent=2) if args.json else format_dstudy(summary))
    if "split_half" in summary and not args.json:
        print(summary["split_half"]["sentence"])
    if "external_ranking" in summary and not args.json:
        from ..analyses.external_ranking import format_external

        print(format_external(summary["external_ranking"]))
    return EXIT_OK


def _split_half(corpus, components, observed, summary: dict):
    """The corpus's split-half check of the observed-score claim (:mod:`..split_half`), or None: no corpus
    (a components file or a fit file), no observed-score scale, or too few tasks or objects to split."""
    if corpus is None or observed is None or summary.get("scale") != "observed":
        return None
    from ..reliability import as_components
    from ..split_half import split_half_check

    if not observed.object_facets <= {"model", "scaffold"}:
        return None
    try:
        return split_half_check(corpus.table, as_components(components), observed.sizes(), observed.object_facets)
    except ValueError:
        return None


def _design_source(args: argparse.Namespace) -> str:
    """Where ``ddr dstudy``'s sizes came from: the corpus's or the fit file's observed design, or defaults, and
    which of them the command line set."""
    base = (getattr(args, "design_source", None)
            or "the defaults (50 tasks, 2 models): a components file records no design")
    given = [f"--{flag} {getattr(args, attr)}" for flag, attr in (
        ("n-tasks", "n_tasks"), ("n-scaffolds", "n_scaffolds"), ("n-benchmarks", "n_benchmarks"),
        ("replicates", "replicates"), ("n-models", "n_models")) if getattr(args, attr, None) is not None]
    return base + (f"; set on the command line: {', '.join(given)}" if given else "")


def _dstudy_preview(args: argparse.Namespace) -> int:
    """``ddr dstudy CORPUS --preview``: the D-study of point estimates, labelled, without sampling (core.preview)."""
    from ..preview import format_preview, preview_for_dstudy, preview_summary

    if args.path is None or args.components is not None:
        print("ddr: --preview needs a corpus file (not --components): it estimates the components of that corpus",
              file=sys.stderr)
        return EXIT_INVALID
    args.object = args.object or "model"  # the preview's presets measure models
    try:
        preview, observed = preview_for_dstudy(args)
        design = _design_from_args(args, observed)
        observed = dataclasses.replace(observed, price_per_trial=design.price_per_trial)
        summary = preview_summary(preview, design, target=args.target, budget=args.budget, observed=observed,
                                  not_answered=getattr(args, "not_answered", None))
        if getattr(args, "corpus_counts", None) is not None:  # a corpus's trials and cells, beside the design's
            summary["corpus_counts"] = args.corpus_counts
    except ValueError as exc:
        print(f"ddr: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except CorpusError as exc:
        print_errors(exc)
        return EXIT_INVALID
    print(json.dumps(summary, indent=2) if args.json else format_preview(summary))
    return EXIT_OK

