"""The ``ddr`` command line: the app's jobs, headless, for batch use.

Every number it prints comes from the same core functions the app and the DDR
sheet use.  Exit status: 0 on success, 2 on invalid input (the message goes to
stderr), 3 when ``ddr fit`` made or reopened a fit that did not converge (unless
``--allow-unconverged``), 4 when ``ddr report`` wrote the sheet without a section it
could not lay out, 1 on an unexpected failure, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sys
from pathlib import Path

import numpy as np

from .. import __version__
from .corpus.issues import CorpusError
from .references import cite, references_text
from .terminal_progress import TerminalProgress as _TerminalProgress
from .terminal_progress import run_with_progress as _run_with_progress

EXIT_OK, EXIT_FAILURE, EXIT_INVALID, EXIT_UNCONVERGED = 0, 1, 2, 3
#: ``ddr report`` wrote the sheet without one or more sections (each named on stderr and on the sheet).
EXIT_SHEET_INCOMPLETE = 4


def _add_corpus_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", type=Path, help="corpus file (canonical CSV/TSV/JSONL/Parquet or a supported format)")
    p.add_argument("--format", help="force the input format (see `ddr formats`)")
    p.add_argument("--encoding", help="text encoding when the file is not UTF-8, e.g. cp1252")
    p.add_argument("--benchmark", help="benchmark name for formats that do not carry one")
    p.add_argument("--aliases", type=Path, help="alias/mapping file (TOML) for subject ids and model names")
    p.add_argument("--scoring", choices=["direct", "all-pass", "threshold"],
                   help="scoring rule for verifier results (default: the importer's)")
    p.add_argument("--gamma", type=float, help="threshold of the 'threshold' scoring rule (default 0.5)")
    p.add_argument("--max-log-mb", type=float, metavar="MIB",
                   help="Inspect .eval logs: the most one archive member may inflate to before it is read "
                        "(default 1024)")
    p.add_argument("--field-mapping", choices=["auto", "shifted", "straight"],
                   help="Terminal-Bench meta.json: whether its result fields are shifted one place (default: auto)")
    _add_mapping_arguments(p)


def _add_mapping_arguments(p: argparse.ArgumentParser, benchmark: bool = False) -> None:
    """--columns and --scaffold (core/corpus/columns.py); --benchmark where the parser lacks it."""
    p.add_argument("--columns", metavar="ROLE=COLUMN,...",
                   help="which column is which: e.g. task=metadata.instance_id,model=metadata.model_name,"
                   "result=metadata.resolved; ROLE==VALUE gives every row one value; dotted names reach into "
                   "nested JSON")
    p.add_argument("--scaffold", help="one scaffold name for every row, for files that name none")
    # a slice of tasks, and task metadata / release dates from files beside the corpus
    p.add_argument("--slice", action="append", metavar="COLUMN=VALUE",
                   help="keep only the tasks whose COLUMN is VALUE (A|B: any of them; LO..HI: a numeric range, "
                   "ends included), e.g. task_group=enterprise or human_minutes=60..480; repeat to combine")
    p.add_argument("--task-metadata", type=Path, metavar="FILE", action="append",
                   help="per-task columns to join (CSV/JSONL with task or task_id, or METR run rows such as BRIDGE's "
                   "cybench_normalized_results.jsonl), e.g. human minutes; repeat to merge several files by task id")
    p.add_argument("--release-dates", type=Path, metavar="FILE",
                   help="model release dates to join (CSV model,release_date; JSON {model: date}; or BRIDGE's "
                   "model_run_mapping.json)")
    if benchmark:
        p.add_argument("--benchmark", help="one benchmark name for every row, for files that name none")


PRESETS = ("per-benchmark", "pooled", "ddr")


class _DeprecatedDesignFlag(argparse.Action):
    """``--design`` was the old name of ``--preset``; it still works, with a note on stderr."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"ddr: {option_string} is deprecated (it names a model preset, not a design): use --preset {values}",
              file=sys.stderr)
        namespace.preset = values


def _add_preset_argument(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--preset", choices=PRESETS, help=f"{help}: {', '.join(PRESETS)}")
    p.add_argument("--design", choices=PRESETS, action=_DeprecatedDesignFlag, dest="preset", help=argparse.SUPPRESS)
    _add_strict_terms_argument(p)


def _add_strict_terms_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--strict-terms", action="store_true",
                   help="refuse (exit 2) a preset whose terms the corpus's design cannot separate, and print the "
                   "formula it supports (default: fit the preset without those terms, with a note)")


def _load(args: argparse.Namespace):
    from .corpus.columns import options_from_args
    from .corpus.io import load_corpus

    return load_corpus(args.path, args.format, encoding=args.encoding, **options_from_args(args))


def _print_errors(exc: CorpusError) -> None:
    print(f"ddr: invalid input: {len(exc.issues)} problem(s)", file=sys.stderr)
    for issue in exc.issues:
        print(f"  error: {issue}", file=sys.stderr)


def cmd_inspect(args: argparse.Namespace) -> int:
    from .inspection import format_summary, inspect_corpus

    try:
        corpus = _load(args)
    except CorpusError as exc:
        _print_errors(exc)
        if args.json:
            print(json.dumps({"file": str(args.path), "errors": [i.to_dict() for i in exc.issues]}, indent=2))
        return EXIT_INVALID
    summary = inspect_corpus(corpus)
    if args.json:
        print(json.dumps(summary, indent=2, default=str))
    else:
        print(format_summary(summary))
    return EXIT_OK


def cmd_convert(args: argparse.Namespace) -> int:
    from .corpus.readers import write_canonical

    try:
        corpus = _load(args)
    except CorpusError as exc:
        _print_errors(exc)
        return EXIT_INVALID
    if args.to == "py-irt":  # core/corpus/export_pyirt.py: subjects "<scaffold>/<model>", alias file beside
        from .corpus.export_pyirt import write_pyirt

        out, alias = write_pyirt(corpus, args.output)
        print(f"wrote {corpus.n_records:,} records as py-irt to {out} (mapping back: {alias})", file=sys.stderr)
        return EXIT_OK
    out = write_canonical(corpus, args.output)
    print(f"wrote {corpus.n_records:,} records to {out}", file=sys.stderr)
    return EXIT_OK


def _read_score_table(path: Path, response: str):
    """A generic long table (G-study data) if it has the response column, else None."""
    from .estimators.score_table import read_score_table

    return read_score_table(path, response)


def cmd_henderson(args: argparse.Namespace) -> int:
    from .henderson import henderson_method1
    from .model.formula import ModelSpecError, as_spec

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
            corpus = _load(args)
            result = henderson_method1(corpus.table, terms)
            source = {"file": str(args.path), "response": "binary trials", "corpus_hash": corpus.content_hash}
    except CorpusError as exc:
        _print_errors(exc)
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


def _design_from_args(args: argparse.Namespace, observed=None):
    """The D-study design ``ddr dstudy`` asks about: the corpus's observed design (or a default one
    without a corpus) with the sizes, prices, object and claim given on the command line."""
    from .dstudy import DStudyDesign

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
    from .components_io import ComponentsFileError, read_components
    from .dstudy.summary import dstudy_summary, format_dstudy
    from .reliability import as_components, object_for_terms

    if args.components is None and args.path is None:
        print("ddr: give a corpus or cached fit, or --components FILE", file=sys.stderr)
        return EXIT_INVALID
    if getattr(args, "preview", False):
        return _dstudy_preview(args)
    try:
        observed = verdict = None
        if args.components is not None:
            components = read_components(args.components)
            args.object = object_for_terms(as_components(components).terms, args.object)
        else:
            from .fitting import components_for_dstudy

            quiet = getattr(args, "quiet", False)
            progress = _TerminalProgress(not quiet)
            try:  # a fit not in the cache is said before it starts, then shows its progress
                components, observed, verdict = components_for_dstudy(
                    args, progress=progress, announce=None if quiet else lambda t: print(t, file=sys.stderr))
            finally:
                progress.done()
        design = _design_from_args(args, observed)
        if observed is not None:  # the state's prices apply to the observed design too (frontier grid)
            observed = dataclasses.replace(observed, price_per_trial=design.price_per_trial)
        summary = dstudy_summary(components, design, target=args.target, budget=args.budget, observed=observed,
                                 verdict=verdict)
        summary["design_source"] = _design_source(args)
        if getattr(args, "slice", None) and args.path is not None:  # the D-study is of a slice of tasks
            from .corpus.slicing import parse_slice, slice_text

            summary["slice"] = slice_text(parse_slice(args.slice))
        if getattr(args, "external_ranking", None) is not None:
            from .analyses.external_ranking import external_ranking_summary

            summary["external_ranking"] = external_ranking_summary(args)
    except (ComponentsFileError, ValueError) as exc:
        print(f"ddr: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except CorpusError as exc:
        _print_errors(exc)
        return EXIT_INVALID
    if "slice" in summary and not args.json:
        print(f"slice of tasks: {summary['slice']}")
    print(json.dumps(summary, indent=2) if args.json else format_dstudy(summary))
    if "external_ranking" in summary and not args.json:
        from .analyses.external_ranking import format_external

        print(format_external(summary["external_ranking"]))
    return EXIT_OK


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
    from .preview import format_preview, preview_for_dstudy, preview_summary

    if args.path is None or args.components is not None:
        print("ddr: --preview needs a corpus file (not --components): it estimates the components of that corpus",
              file=sys.stderr)
        return EXIT_INVALID
    args.object = args.object or "model"  # the preview's presets measure models
    try:
        preview, observed = preview_for_dstudy(args)
        design = _design_from_args(args, observed)
        observed = dataclasses.replace(observed, price_per_trial=design.price_per_trial)
        summary = preview_summary(preview, design, target=args.target, budget=args.budget, observed=observed)
    except ValueError as exc:
        print(f"ddr: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except CorpusError as exc:
        _print_errors(exc)
        return EXIT_INVALID
    print(json.dumps(summary, indent=2) if args.json else format_preview(summary))
    return EXIT_OK


def fit_summary(result) -> dict:
    """The JSON object of ``ddr fit``: components, diagnostics, wall time, device, cache."""
    from .reliability import summarize

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


def _cache_folder_refused(args: argparse.Namespace) -> bool:
    """Say (and return True) when ``--cache`` cannot take a fit: before the corpus is read or anything sampled."""
    if getattr(args, "no_cache", False):
        return False
    from .cache import CacheFolderError, FitCache
    from .files import default_cache_dir

    try:
        FitCache(args.cache or default_cache_dir()).check_writable()
    except CacheFolderError as exc:
        print(f"ddr: {exc}", file=sys.stderr)
        return True
    return False


def cmd_fit(args: argparse.Namespace) -> int:
    from .fitting import fit_corpus, settings_from_args
    from .model.formula import ModelSpecError, as_spec
    from .model.posterior import FitCancelled

    if args.formula is not None and args.preset is not None:
        return _fit_refusal(args, "give at most one of --formula or --preset")
    if _cache_folder_refused(args):
        return EXIT_INVALID
    try:
        corpus = _load(args)
        from .design.presets import default_preset

        spec = as_spec(args.formula or args.preset or default_preset(corpus))
        spec.validate(corpus.table.columns)
        settings = settings_from_args(args)
    except CorpusError as exc:
        _print_errors(exc)
        return _fit_refusal(args, None, issues=[str(i) for i in exc.issues])
    except (ModelSpecError, ValueError) as exc:
        return _fit_refusal(args, str(exc))
    progress = _TerminalProgress(not args.quiet)
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
    out = fit_summary(result)
    if corpus.provenance.get("slice"):  # the fit is of a slice of tasks
        out["slice"] = {"slice": corpus.provenance["slice"], "tasks": corpus.provenance.get("slice_tasks")}
    if args.json:
        print(json.dumps(out, indent=2, default=float))
        return _fit_exit(out, args)
    from .formatting import convergence_verdict, fmt_interval, fmt_var

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
    from .report.priors import priors_text

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
    from .formatting import convergence_verdict

    print(f"ddr: {convergence_verdict(out['verdict'])}: the numbers of this fit are provisional; refit with "
          "more draws or a longer warmup (the warnings above say how many), or pass --allow-unconverged "
          "to exit 0 anyway", file=sys.stderr)
    return EXIT_UNCONVERGED


def _read_prices(path: Path) -> dict[str, float]:
    """Prices per trial per benchmark: JSON {benchmark: usd} or CSV with benchmark,price columns."""
    from .price_tables import read_trial_prices

    return read_trial_prices(path)


def _token_prices(table, path: Path) -> dict[str, float]:
    """USD per trial per benchmark from the corpus's token counts x a model price file (``--token-prices``)."""
    from .dstudy import prices_from_tokens
    from .price_tables import read_token_prices

    try:
        return prices_from_tokens(table, read_token_prices(path))
    except KeyError as exc:
        raise ValueError(f"--token-prices {path}: the corpus has no {exc} column; token prices need "
                         "input_tokens and output_tokens") from None
    except ValueError as exc:
        raise ValueError(f"--token-prices {path}: {exc}") from None


def cmd_report(args: argparse.Namespace) -> int:
    """``ddr report``: corpus or cached fit -> fit (or cache hit) -> DDR sheet PDF, progress on stderr."""
    from .fitting import settings_from_args
    from .model.formula import ModelSpecError, as_spec
    from .ddr_sheet import SheetCancelled, write_ddr_sheet

    if _cache_folder_refused(args):
        return EXIT_INVALID
    try:
        if args.formula and args.preset:
            raise ValueError("give at most one of --formula or --preset")
        spec = as_spec(args.formula or args.preset) if (args.formula or args.preset) else None
        prices = _read_prices(args.prices) if args.prices else None
        settings = settings_from_args(args)
        if args.prices and args.token_prices:
            raise ValueError("give at most one of --prices or --token-prices")
        analyses, default_analyses = _report_analyses(args)
    except (ModelSpecError, ValueError, OSError) as exc:
        print(f"ddr: {exc}", file=sys.stderr)
        return EXIT_INVALID
    from .corpus.columns import options_from_args

    options = {k: v for k, v in (("format", args.format), ("encoding", args.encoding)) if v is not None}
    options.update(options_from_args(args))
    progress = _TerminalProgress(not args.quiet)
    if default_analyses is not None:  # the analyses report to the same progress line
        default_analyses = functools.partial(default_analyses, progress=progress)
    source, corpus_arg = args.path, args.corpus
    try:
        if args.token_prices:
            from .corpus.io import load_corpus

            is_fit = Path(args.path).suffix.lower() in (".h5", ".hdf5")
            loaded = load_corpus(Path(corpus_arg if is_fit and corpus_arg else args.path), **options)
            prices = _token_prices(loaded.table, args.token_prices)
            source, corpus_arg = (args.path, loaded) if is_fit else (loaded, None)
        result = write_ddr_sheet(source, args.output, corpus=corpus_arg, load_options=options, preset=spec,
                                 settings=settings, cache_dir=args.cache, use_cache=not args.no_cache,
                                 object_of_measurement=args.object, claim=args.claim, target=args.target,
                                 budget=args.budget, prices=prices, analyses=analyses,
                                 date_invariant=args.date_invariant, progress=progress,
                                 strict_terms=args.strict_terms, default_analyses=default_analyses)
    except CorpusError as exc:
        progress.done()
        _print_errors(exc)
        return EXIT_INVALID
    except SheetCancelled as exc:
        progress.done()
        print(f"ddr: {exc}", file=sys.stderr)
        return 130
    except (ModelSpecError, ValueError, OSError) as exc:
        progress.done()
        print(f"ddr: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except Exception as exc:  # noqa: BLE001 - after a long fit, a reason and the kept fit, never a traceback
        progress.done()
        print(f"ddr: the DDR sheet could not be written ({type(exc).__name__}: {exc}); any fit made is kept in "
              "the cache, so running the command again does not refit", file=sys.stderr)
        return EXIT_FAILURE
    progress.done()
    for message in result.messages:
        print(f"ddr: {message}", file=sys.stderr)
    plan, took = getattr(args, "_analysis_plan", None), getattr(args, "_analysis_timings", None)
    if plan is not None and took:  # the estimate beside what the run took: what calibrates the next estimate
        print(f"ddr: {plan.estimate_and_actual(took)}", file=sys.stderr)
    origin = "cached fit" if result.from_cache else "new fit"
    print(f"ddr: wrote {result.path} ({origin}{'' if result.fit_path is None else ' ' + str(result.fit_path)})"
          + ("" if result.complete else f", without {len(result.left_out)} of its sections (exit status "
             f"{EXIT_SHEET_INCOMPLETE})"), file=sys.stderr)
    return EXIT_OK if result.complete else EXIT_SHEET_INCOMPLETE


def _report_analyses(args: argparse.Namespace):
    """``ddr report``'s analyses: ``(analyses, default_analyses)`` for :func:`~.ddr_sheet.write_ddr_sheet`.

    ``--analyses none``: none.  ``--analyses a,b``: those, through the refit engine.  No ``--analyses``:
    difficulty, ``--splits`` hold-out splits and PSIS-LOO when the engine's estimate is under 15 minutes
    (:mod:`.analyses.defaults`), else those of them that fit in it together
    (:meth:`~.analyses.defaults.AnalysesPlan.within_budget`); the estimate is printed before they start,
    and for the ones left out the flag that runs them.
    """
    from .analyses.defaults import SHEET_DEFAULT, plan_sheet_analyses, sheet_runners
    from .analyses.engine import scheduler_address

    scheduler = scheduler_address(getattr(args, "scheduler", None))
    if args.splits < 2:
        raise ValueError(f"--splits {args.splits}: held-out reliability needs at least 2 splits")
    text = (args.analyses or "").strip().lower()
    if text == "none":
        return {}, None
    names = [n.strip() for n in text.split(",") if n.strip()] or list(SHEET_DEFAULT)
    # the refit engine's analyses; the others (methods, scores, failures, frontier, capability, transfer) run by
    # their own sheet runners (ddr_sheet.analysis_runner, which names every analysis when one is unknown)
    refits = ("difficulty", "heldout", "held_out", "held-out", "loo")
    others = {n: _sheet_runner(n, undated=getattr(args, "undated", "stop")) for n in names if n not in refits}
    names = ["heldout" if n in ("held_out", "held-out") else n for n in names if n in refits]
    if others and not names:
        return others, None

    rule = getattr(args, "refit_rule", None)
    timings = args._analysis_timings = {}  # each runner's wall seconds, printed beside its estimate after the run

    def choose(corpus, posterior, progress=None):
        plan = plan_sheet_analyses(corpus, posterior, which=names, n_splits=args.splits, cache_dir=args.cache,
                                   refit_rule=rule)
        args._analysis_plan = plan
        where = f" on the Dask cluster {scheduler}" if scheduler else ""
        if args.analyses or plan.runs_by_default:
            print(f"ddr: {plan.describe()}{where}; running them"
                  + ("" if args.analyses else " (--analyses none skips them)"), file=sys.stderr)
            return {**sheet_runners(names, n_splits=args.splits, scheduler=scheduler, plan=plan, progress=progress,
                                    timings=timings),
                    **others}
        run = plan.within_budget()
        if not run:
            print(f"ddr: {plan.describe()}: over the 15 min default budget, so the sheet says \"not run\" for them; "
                  f"run them with `{plan.flag}`", file=sys.stderr)
            return {}
        # the ones that fit the budget together run; the sheet says "not run" for the others
        part, rest = plan.part(run), plan.beyond_budget()
        print(f"ddr: {part.describe()}{where}; running them (--analyses none skips them)", file=sys.stderr)
        print(f"ddr: {plan.part(rest).describe()}: would take the sheet over the 15 min default budget, so the sheet "
              f"says \"not run\" for {', '.join(rest)}; run every analysis with `{plan.flag}`", file=sys.stderr)
        return {**sheet_runners(run, n_splits=args.splits, scheduler=scheduler, plan=part, progress=progress,
                                timings=timings),
                **others}

    return None, choose


def _sheet_runner(name: str, undated: str = "stop"):
    """The sheet runner of a ``--analyses`` name outside the refit engine's (``ddr_sheet.analysis_runner``)."""
    from .ddr_sheet import analysis_runner

    try:
        return analysis_runner(name, undated=undated)
    except ValueError as exc:
        raise ValueError(f"--analyses: {exc}") from None


def cmd_analyses(args: argparse.Namespace) -> int:
    """``ddr analyses``: difficulty strata, held-out splits, PSIS-LOO, leave-one-out stability; progress on stderr."""
    from .analyses import format_analyses, parse_which, run_analyses
    from .fitting import settings_from_args
    from .model.formula import ModelSpecError, as_spec
    from .model.posterior import FitCancelled

    if _cache_folder_refused(args):
        return EXIT_INVALID
    try:
        which = parse_which(args.which)
        posterior = None
        if args.path.suffix.lower() in (".h5", ".hdf5"):
            from .cache import CacheFileError, read_fit_file
            from .fitting import posterior_from_entry

            if args.corpus is None:
                raise ValueError(f"{args.path} is a cached fit; give the corpus it was fitted to with --corpus FILE")
            try:
                posterior = posterior_from_entry(read_fit_file(args.path))
            except CacheFileError as exc:
                raise ValueError(f"{args.path}: not a usable cached fit ({exc}); refit with `ddr fit`") from None
            args.path = args.corpus
            spec, settings = posterior.spec, posterior.settings
        corpus = _load(args)
        if posterior is None:
            if args.formula and args.preset:
                raise ValueError("give at most one of --formula or --preset")
            from .design.presets import default_preset

            spec = as_spec(args.formula or args.preset or default_preset(corpus))
            settings = settings_from_args(args)
        spec.validate(corpus.table.columns)
        if args.strict_terms:  # refuse before any refit (each refit would fit the reduced preset)
            from .design.presets import UnsupportedTermsError, supported_spec

            check = supported_spec(corpus, spec)
            if check.changed:
                raise UnsupportedTermsError(check)
    except CorpusError as exc:
        _print_errors(exc)
        return EXIT_INVALID
    except (ModelSpecError, ValueError, OSError) as exc:
        print(f"ddr: {exc}", file=sys.stderr)
        return EXIT_INVALID
    progress = _TerminalProgress(not args.quiet)
    result, code = _run_with_progress(
        progress, FitCancelled, (ModelSpecError, ValueError),
        lambda: run_analyses(corpus, which, spec, settings, cache_dir=args.cache, n_splits=args.splits,
                             n_strata=args.strata, posterior=posterior, progress=progress,
                             scheduler=args.scheduler, undated=args.undated,
                             options=_extra_analysis_options(args, which),
                             refit_rule=getattr(args, "refit_rule", None)))
    if code is not None:
        return code
    print(json.dumps(result, indent=2) if args.json else format_analyses(result))
    return EXIT_OK


def _extra_analysis_options(args: argparse.Namespace, which: list[str]) -> dict:
    """Options of ``--which capability,transfer`` (files read before any fit, so a bad file fails at once)."""
    out: dict = {}
    if "capability" in which:
        cap = {"subjects": args.subjects, "models": ["1pl", "2pl"] if args.irt == "both" else [args.irt]}
        if args.external_ranking is not None:
            from .analyses.external_ranking import read_external_ranking

            cap["external"] = read_external_ranking(args.external_ranking, args.external_kind)
        out["capability"] = cap
    if "transfer" in which:
        tr = {"family_score": args.family_score}
        if args.families is not None:
            from .analyses.transfer import read_family_map

            tr["families"] = read_family_map(args.families)
        out["transfer"] = tr
    return out


def cmd_methods(args: argparse.Namespace) -> int:
    """``ddr methods``: variance shares from every estimator side by side (seed 000 (Hardy et al. 2026) Tables 20-21).

    An agent corpus gets the formula the fit fits (a preset reduced to the terms its design separates);
    a plain G-study table with the formula's response column gets the same estimators on that formula.
    """
    from .design.presets import UnsupportedTermsError, default_preset, supported_spec
    from .estimators.design import EstimationCancelled
    from .estimators.methods import format_methods_table, methods_table
    from .model.formula import ModelSpecError, as_spec

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
        corpus = _load(args)
        spec = as_spec(args.formula or args.preset or default_preset(corpus))
        spec.validate(corpus.table.columns)
        check = supported_spec(corpus, spec)  # the fit's own reduction: the cache key is of the fitted spec
        if check.changed and args.strict_terms:
            raise UnsupportedTermsError(check)
        from .reliability import object_for_terms
        args.object = object_for_terms(check.spec.term_names, args.object)  # the model's own: agent for ddr
        posterior = None
        if not args.no_bayes:  # the Bayesian column only from a fit already in the cache: never fit here
            from .cache import FitCache
            from .files import default_cache_dir
            from .fitting import fit_key, posterior_from_entry, settings_from_args

            cache = FitCache(args.cache or default_cache_dir())
            entry, _ = cache.load(fit_key(corpus, check.spec, settings_from_args(args)))
            posterior = None if entry is None else posterior_from_entry(entry)
    except CorpusError as exc:
        _print_errors(exc)
        return EXIT_INVALID
    except (ModelSpecError, ValueError, OSError) as exc:
        print(f"ddr: {exc}", file=sys.stderr)
        return EXIT_INVALID
    progress = _TerminalProgress(not args.quiet)
    table, code = _run_with_progress(
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
    from .estimators.design import EstimationCancelled
    from .estimators.methods import format_methods_table
    from .estimators.score_table import score_table_methods
    from .model.formula import ModelSpecError

    if args.preset:
        print("ddr: give at most one of --formula or --preset", file=sys.stderr)
        return EXIT_INVALID
    progress = _TerminalProgress(not args.quiet)
    est = ("Henderson", "REML", "Laplace", "DISCO") if args.no_bayes else ("Henderson", "REML", "Bayes LMM",
                                                                           "Laplace", "DISCO")
    table, code = _run_with_progress(
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


def cmd_formats(args: argparse.Namespace) -> int:
    from .corpus.io import available_formats

    for fmt in available_formats():
        print(fmt)
    return EXIT_OK


def _add_stopping_arguments(p: argparse.ArgumentParser) -> None:
    """``--stop``, ``--max-draws``, ``--max-seconds``: the run length rule (core.model.stopping)."""
    p.add_argument("--stop", choices=["gate", "fixed"],
                   help="run length after warmup: gate (default: sample until every component passes the "
                        "convergence gate: R-hat <= 1.01, bulk and tail ESS >= 440, no divergence; looked at every "
                        "50 draws, at least --draws) or fixed (exactly --draws per chain)")
    p.add_argument("--max-draws", type=int, help="with --stop gate: ceiling of draws per chain (default 4000)")
    p.add_argument("--max-seconds", type=float, help="with --stop gate: ceiling of the sampling time in seconds "
                        "(default none)")


def _draws_help(what: str = "") -> str:
    """``--draws``'s help: what it means depends on the run-length rule (``--stop``)."""
    from .model.posterior import DEFAULT_DRAWS, DEFAULT_MIN_DRAWS_GATE

    return (f"post-warmup draws per chain{' ' + what if what else ''}: with --stop gate (default) the minimum "
            f"(default {DEFAULT_MIN_DRAWS_GATE}), with --stop fixed exactly that many (default {DEFAULT_DRAWS})")


def build_parser() -> argparse.ArgumentParser:
    from .model.posterior import SamplerSettings  # no jax here: the sampler imports it lazily

    # one set of sampler defaults for the app and every command, so that a fit made in one is
    # reused from the cache by the others
    dflt = SamplerSettings()

    parser = argparse.ArgumentParser(prog="ddr", description="DDR Explorer, headless: inspect corpora, fit "
                                     "G-studies, run D-studies and write DDR sheets.",
                                     epilog=references_text(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"ddr {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("inspect", help="validate a corpus and summarise its design")
    _add_corpus_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser("convert", help="write a corpus in the canonical layout, or as py-irt JSON lines")
    _add_corpus_arguments(p)
    p.add_argument("-o", "--output", type=Path, required=True, help="output file (.csv, .tsv, .jsonl, .parquet)")
    p.add_argument("--to", choices=["canonical", "py-irt"], default="canonical",
                   help="canonical layout (by the output's extension, default) or py-irt JSON lines with an "
                   "alias file <stem>.aliases.toml beside it that maps subjects back to model and scaffold")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("henderson", help=f"variance components by Henderson's Method I (closed form; {cite('henderson1953')})")
    _add_corpus_arguments(p)
    p.add_argument("--formula", required=True,
                   help="random-intercept formula or preset, e.g. \"score ~ (1|person) + (1|task/rater)\"")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_henderson)

    p = sub.add_parser("dstudy", help="decision study: reliability of a design, sizes needed for a target")
    p.add_argument("path", nargs="?", type=Path, help="corpus or cached fit (.h5); or use --components")
    p.add_argument("--components", type=Path, help="variance components from elsewhere (JSON or CSV; see README)")
    p.add_argument("--n-tasks", type=float, help="tasks per benchmark; all tasks for a fit without a benchmark facet "
                   "(per-benchmark, ddr) (default: the corpus's, or 50)")
    p.add_argument("--n-scaffolds", type=float, help="scaffolds per model")
    p.add_argument("--n-benchmarks", type=float, help="benchmarks")
    p.add_argument("--replicates", type=float, help="trials per task-model-scaffold cell (ddr: traces per agent-task pair)")
    p.add_argument("--n-models", type=int, help="models compared; agents for --object agent (enters the cost)")
    p.add_argument("--object", choices=["model", "system", "agent"],
                   help="object of measurement: model, model-scaffold system, or agent (default: the model's own: "
                        "agent for the ddr preset, else model)")
    p.add_argument("--claim", default="relative", choices=["relative", "absolute"],
                   help="relative (ranking, Erho2) or absolute (threshold decisions, Phi)")
    p.add_argument("--target", type=float, help="target coefficient (default 0.85 relative, 0.90 absolute)")
    p.add_argument("--budget", type=float, help="budget in USD: the best design on the cost frontier")
    p.add_argument("--price-per-trial", type=float, help="USD per trial (default: from the corpus's cost column)")
    p.add_argument("--token-prices", type=Path, metavar="FILE",
                   help="USD per million input/output tokens per model (CSV model,input,output or JSON); "
                   "prices per trial from the corpus's token counts")
    _add_preset_argument(p, "model preset to fit a corpus with (default: pooled for several benchmarks, else "
                         "per-benchmark)")
    p.add_argument("--format", help="force the corpus format")
    _add_mapping_arguments(p, benchmark=True)
    p.add_argument("--draws", type=int, help=_draws_help("when fitting"))
    _add_stopping_arguments(p)
    p.add_argument("--warmup", type=int, help=f"warmup iterations per chain when fitting (default {dflt.warmup})")
    p.add_argument("--chains", type=int, help=f"chains when fitting (default {dflt.chains})")
    p.add_argument("--seed", type=int, default=0, help="seed when fitting")
    p.add_argument("--cache", type=Path, help="cache folder")
    p.add_argument("--external-ranking", type=Path, metavar="FILE",
                   help="CSV/JSON of model -> rank (1 = best) or score: Kendall tau and Spearman rho against the "
                   "latent ranking")
    p.add_argument("--external-kind", choices=["rank", "score"],
                   help="read the external ranking's values as ranks or scores (default: from the file)")
    p.add_argument("--quiet", action="store_true", help="no progress or notes on stderr")
    p.add_argument("--preview", action="store_true",
                   help="no sampling: the D-study of point estimates of the corpus's components (Laplace GLMM, or a "
                   "rough fit on large designs), labelled as a preview; never on the DDR sheet")
    p.add_argument("--preview-method", choices=["auto", "laplace", "rough"], default="auto",
                   help="point estimates for --preview (default auto: Laplace up to 10,000 random effects)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_dstudy)

    p = sub.add_parser("fit", help="fit the Bayesian G-study (variance components) with NUTS")
    _add_corpus_arguments(p)
    p.add_argument("--formula", help="random-intercept formula, e.g. \"y ~ (1|task) + (1|model) + (1|task:model)\"")
    _add_preset_argument(p, "a model preset")
    p.add_argument("--draws", type=int, help=_draws_help())
    _add_stopping_arguments(p)
    p.add_argument("--warmup", type=int, default=dflt.warmup, help=f"warmup iterations per chain (default {dflt.warmup})")
    p.add_argument("--chains", type=int, default=dflt.chains, help=f"chains (default {dflt.chains})")
    p.add_argument("--seed", type=int, default=0, help="random seed (same seed, same draws)")
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "gpu"], help="where to sample")
    p.add_argument("--marginalise", default="auto", choices=["auto", "off"],
                   help="auto (default): integrate a term of many weakly informed levels (pooled: "
                        "benchmark:task:model) out by checked Gauss-Hermite quadrature; off: sample every level")
    p.add_argument("--quadrature-nodes", type=int, choices=[8, 12, 16, 24],
                   help="fewest Gauss-Hermite nodes of that quadrature (default: the fewest that pass its accuracy "
                        "checks); raise it when the fit says the quadrature was off at the posterior")
    p.add_argument("--cache", type=Path, help="cache folder (default $DDR_CACHE_DIR or ~/.cache/ddr-explorer)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    p.add_argument("--allow-unconverged", action="store_true",
                   help="exit 0 even when the fit did not converge (default: exit 3)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("report", help="fit (or reuse the cache) and write the DDR sheet PDF",
                       epilog="exit status: 0 the sheet was written whole; 4 the sheet was written without one or "
                              "more sections that could not be laid out (each named on stderr and, in its place, "
                              "on the sheet; the fit is kept); 2 invalid input; 1 the sheet could not be written; "
                              "130 cancelled")
    _add_corpus_arguments(p)
    p.add_argument("-o", "--output", type=Path, required=True, help="the PDF to write")
    _add_preset_argument(p, "a model preset (default: pooled for several benchmarks, else per-benchmark)")
    p.add_argument("--formula", help="a random-intercept formula instead of --preset")
    p.add_argument("--object", choices=["model", "system", "agent"],
                   help="object of measurement (default: the model's own: agent for the ddr preset, else model)")
    p.add_argument("--claim", default="relative", choices=["relative", "absolute"], help="ranking or thresholds")
    p.add_argument("--target", type=float, help="target coefficient (default 0.85 relative, 0.90 absolute)")
    p.add_argument("--budget", type=float, help="budget in USD")
    p.add_argument("--prices", type=Path, help="USD per trial per benchmark (JSON or CSV benchmark,price)")
    p.add_argument("--token-prices", type=Path, metavar="FILE",
                   help="USD per million input/output tokens per model (CSV model,input,output or JSON); "
                   "prices per trial come from the corpus's token counts")
    p.add_argument("--draws", type=int, help=_draws_help())
    _add_stopping_arguments(p)
    p.add_argument("--warmup", type=int, default=dflt.warmup, help=f"warmup iterations per chain (default {dflt.warmup})")
    p.add_argument("--chains", type=int, default=dflt.chains, help=f"chains (default {dflt.chains})")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "gpu"])
    p.add_argument("--cache", type=Path, help="cache folder")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the fit cache")
    p.add_argument("--corpus", type=Path, help="with a cached fit file (.h5) as PATH: the corpus it was fitted to")
    p.add_argument("--analyses", help="analyses to run first, comma-separated: difficulty,heldout,loo, or none "
                   "(refits through the refit engine, all cached: difficulty 4 strata, heldout --splits x 2, loo 1; "
                   "default: all three when their estimate is under 15 minutes, printed first); also "
                   "methods (the estimator table on the method-notes page; Laplace takes ~25 s on TB2), "
                   "scores (observed-scale score reliability; always run with --claim absolute), failures, "
                   "frontier")
    p.add_argument("--splits", type=int, default=50, help=f"held-out 70/30 splits (default 50, {cite('ddr2026')})")
    p.add_argument("--refit-rule", choices=["precision", "gate"], default="gate",
                   help="how long each refit of difficulty and hold-out runs: 'gate' (default) until what it reports "
                   "has 440 effective draws; 'precision' until its chains agree and the Monte Carlo SE of what the "
                   "analysis takes from it is within a tenth of its spread across refits (at most 0.005)")
    p.add_argument("--undated", choices=["stop", "drop"], default="stop",
                   help="frontier: models without a release date stop it (default), or are left out and named")
    p.add_argument("--scheduler", help="a Dask scheduler (tcp://host:8786) to run the refits on "
                   "(default: $DDR_SCHEDULER, else this machine)")
    p.add_argument("--date-invariant", action="store_true", help="reproducible output: no build date")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("analyses", help="refit-heavy analyses: difficulty strata, held-out splits, PSIS-LOO, "
                       "leave-one-benchmark/model-out")
    _add_corpus_arguments(p)
    p.add_argument("--which", default="difficulty,heldout,loo,lobo,lomo",
                   help="comma-separated: difficulty,heldout,loo,lobo,lomo (default), and "
                   "failure-modes,frontier,capability,transfer")
    p.add_argument("--corpus", type=Path, help="with a cached fit file (.h5) as PATH: the corpus it was fitted to")
    _add_preset_argument(p, "a model preset (default: pooled for several benchmarks, else per-benchmark)")
    p.add_argument("--formula", help="a random-intercept formula instead of --preset")
    p.add_argument("--splits", type=int, default=50, help=f"held-out 70/30 splits (default 50, {cite('ddr2026')})")
    p.add_argument("--strata", type=int, default=4, help="difficulty strata (default 4: quartiles)")
    p.add_argument("--refit-rule", choices=["precision", "gate"], default="gate",
                   help="how long each refit of difficulty and hold-out runs: 'gate' (default) until what it reports "
                   "has 440 effective draws; 'precision' until its chains agree and the Monte Carlo SE of what the "
                   "analysis takes from it is within a tenth of its spread across refits (at most 0.005)")
    p.add_argument("--undated", choices=["stop", "drop"], default="stop",
                   help="frontier: models without a release date stop it (default), or are left out and named")
    p.add_argument("--subjects", default="best-scaffold", choices=["best-scaffold", "every-agent"],
                   help=f"capability: IRT subjects, the best scaffold per model-benchmark pair ({cite('krsteski2026')}) or every agent")
    p.add_argument("--irt", default="both", choices=["1pl", "2pl", "both"], help="capability: which IRT model(s)")
    p.add_argument("--external-ranking", type=Path, metavar="FILE",
                   help="capability: CSV/JSON of model -> rank (1 = best) or score, compared with the IRT abilities")
    p.add_argument("--external-kind", choices=["rank", "score"], help="read the external ranking as ranks or scores")
    p.add_argument("--families", type=Path, metavar="FILE",
                   help="transfer: model -> family map (CSV model,family or TOML; default: each model its own family)")
    p.add_argument("--family-score", default="best", choices=["best", "mean"],
                   help="transfer: a family's score on a benchmark, its best model or the mean of its models")
    p.add_argument("--draws", type=int, help=_draws_help("of the parent fit") + "; held-out splits: at most 250")
    _add_stopping_arguments(p)
    p.add_argument("--warmup", type=int, default=dflt.warmup,
                   help=f"warmup iterations per chain (default {dflt.warmup}; splits: at most 250)")
    p.add_argument("--chains", type=int, default=dflt.chains,
                   help=f"chains (default {dflt.chains}; held-out splits: at most 4)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "gpu"])
    p.add_argument("--cache", type=Path, help="cache folder")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--scheduler", help="a Dask scheduler (tcp://host:8786) to run the refits on "
                   "(default: $DDR_SCHEDULER, else this machine)")
    p.set_defaults(func=cmd_analyses)

    p = sub.add_parser("methods", help="variance shares from Henderson, REML, Laplace, DISCO and the cached "
                       "Bayesian fit, side by side")
    _add_corpus_arguments(p)
    p.add_argument("--formula", help="a random-intercept formula")
    p.add_argument("--preset", choices=["per-benchmark", "pooled", "ddr"],
                   help="a named model (default: pooled for several benchmarks, else per-benchmark)")
    p.add_argument("--object",
                   help="object of measurement for Erho2/Phi: model, system or agent (default: the model's own: agent "
                        "for the ddr preset, else model); on a plain score table a facet of the formula (default: "
                        "its first one-facet term)")
    _add_strict_terms_argument(p)
    p.add_argument("--no-bayes", action="store_true", help="leave out both Bayesian columns (the cached GLMM fit "
                   "and the observed-scale LMM, which samples)")
    p.add_argument("--cache", type=Path, help="cache folder where `ddr fit` stored the Bayesian fit")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_methods)

    p = sub.add_parser("formats", help="list the input formats")
    p.set_defaults(func=cmd_formats)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except CorpusError as exc:  # raised outside loading, e.g. by rescoring
        _print_errors(exc)
        return EXIT_INVALID
    except KeyboardInterrupt:
        print("ddr: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
