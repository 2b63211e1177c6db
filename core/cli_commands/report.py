"""``ddr report``: corpus or cached fit -> fit (or cache hit) -> the analyses -> the DDR sheet PDF."""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from ..corpus.issues import CorpusError
from ..terminal_progress import TerminalProgress
from .common import (EXIT_FAILURE, EXIT_INVALID, EXIT_OK, EXIT_SHEET_INCOMPLETE, cache_folder_refused,
                     output_refused, print_errors)


def _read_prices(path: Path) -> dict[str, float]:
    """Prices per trial per benchmark: JSON {benchmark: usd} or CSV with benchmark,price columns."""
    from ..price_tables import read_trial_prices

    return read_trial_prices(path)


def _token_prices(table, path: Path) -> dict[str, float]:
    """USD per trial per benchmark from the corpus's token counts x a model price file (``--token-prices``)."""
    from ..dstudy import prices_from_tokens
    from ..price_tables import read_token_prices

    try:
        return prices_from_tokens(table, read_token_prices(path))
    except KeyError as exc:
        raise ValueError(f"--token-prices {path}: the corpus has no {exc} column; token prices need "
                         "input_tokens and output_tokens") from None
    except ValueError as exc:
        raise ValueError(f"--token-prices {path}: {exc}") from None


def cmd_report(args: argparse.Namespace) -> int:
    """``ddr report``: corpus or cached fit -> fit (or cache hit) -> DDR sheet PDF, progress on stderr."""
    from ..fitting import settings_from_args
    from ..model.formula import ModelSpecError, as_spec
    from ..ddr_sheet import SheetCancelled, write_ddr_sheet

    if output_refused(args, (".pdf",)) or cache_folder_refused(args):
        return EXIT_INVALID
    try:
        if args.formula and args.preset:
            raise ValueError("give at most one of --formula or --preset")
        spec = as_spec(args.formula or args.preset) if (args.formula or args.preset) else None
        prices = _read_prices(args.prices) if args.prices else None
        if args.price_per_trial is not None:  # one price for every benchmark, as `ddr dstudy --price-per-trial`
            if args.prices or args.token_prices:
                raise ValueError("give at most one of --prices, --token-prices or --price-per-trial")
            prices = args.price_per_trial
        settings = settings_from_args(args)
        if args.prices and args.token_prices:
            raise ValueError("give at most one of --prices or --token-prices")
        analyses, default_analyses = _report_analyses(args)
    except (ModelSpecError, ValueError, OSError) as exc:
        print(f"ddr: {exc}", file=sys.stderr)
        return EXIT_INVALID
    from ..corpus.columns import options_from_args

    options = {k: v for k, v in (("format", args.format), ("encoding", args.encoding)) if v is not None}
    options.update(options_from_args(args))
    progress = TerminalProgress(not args.quiet)
    if default_analyses is not None:  # the analyses report to the same progress line
        default_analyses = functools.partial(default_analyses, progress=progress)
    source, corpus_arg = args.path, args.corpus
    try:
        if args.token_prices:
            from ..corpus.io import load_corpus

            is_fit = Path(args.path).suffix.lower() in (".h5", ".hdf5")
            loaded = load_corpus(Path(corpus_arg if is_fit and corpus_arg else args.path), **options)
            prices = _token_prices(loaded.table, args.token_prices)
            source, corpus_arg = (args.path, loaded) if is_fit else (loaded, None)
        result = write_ddr_sheet(source, args.output, corpus=corpus_arg, load_options=options, preset=spec,
                                 settings=settings, cache_dir=args.cache, use_cache=not args.no_cache,
                                 object_of_measurement=args.object, claim=args.claim, target=args.target,
                                 budget=args.budget, prices=prices, analyses=analyses,
                                 date_invariant=args.date_invariant, progress=progress,
                                 strict_terms=args.strict_terms, default_analyses=default_analyses,
                                 compare=_pair_names(args.compare), examined_sizes=_examined_sizes(args))
    except CorpusError as exc:
        progress.done()
        print_errors(exc)
        return EXIT_INVALID
    except SheetCancelled as exc:
        progress.done()
        print(f"ddr: {exc}", file=sys.stderr)
        return 130
    except (ModelSpecError, ValueError) as exc:  # the output gate's refusals too (OutputRefused)
        progress.done()
        print(f"ddr: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except OSError as exc:  # the sheet's write failed on its way (disk full, an immutable file): exit 1
        progress.done()
        print(f"ddr: the DDR sheet could not be written to {args.output} ({exc.strerror or exc}); nothing was left "
              "behind, and any fit made is kept in the cache, so running the command again does not refit",
              file=sys.stderr)
        return EXIT_FAILURE
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
        plan.remember(took, cache_dir=args.cache)  # the next estimate here is calibrated by it
    origin = "cached fit" if result.from_cache else "new fit"
    print(f"ddr: wrote {result.path} ({origin}{'' if result.fit_path is None else ' ' + str(result.fit_path)})"
          + ("" if result.complete else f", without {len(result.left_out)} of its sections (exit status "
             f"{EXIT_SHEET_INCOMPLETE})"), file=sys.stderr)
    return EXIT_OK if result.complete else EXIT_SHEET_INCOMPLETE


def _examined_sizes(args: argparse.Namespace) -> dict:
    """The what-if design's sizes given as options (``--n-tasks 39 --replicates 3``), as ``ddr dstudy`` takes
    them: the sheet's cost answers and tasks for the target are computed at that design."""
    return {field: getattr(args, attr) for field, attr in (
        ("n_tasks", "n_tasks"), ("n_scaffolds", "n_scaffolds"), ("n_benchmarks", "n_benchmarks"),
        ("n_replicates", "replicates"), ("n_models", "n_models")) if getattr(args, attr, None) is not None}


def _pair_names(text: str | None) -> tuple[str, str] | None:
    """``--compare A,B`` as two names (a name with a comma: ``--compare "A;B"``)."""
    if text is None:
        return None
    sep = ";" if ";" in text else ","
    names = [t.strip() for t in text.split(sep)]
    if len(names) != 2 or not all(names):
        raise ValueError(f"--compare takes two names, A,B (or A;B when a name has a comma), got {text!r}")
    return names[0], names[1]


def _report_analyses(args: argparse.Namespace):
    """``ddr report``'s analyses: ``(analyses, default_analyses)`` for
    :func:`~ddr_explorer.core.ddr_sheet.write_ddr_sheet`.

    ``--analyses none``: none.  ``--analyses a,b``: those, through the refit engine.  No ``--analyses``:
    difficulty, ``--splits`` hold-out splits and PSIS-LOO when the engine's estimate is under 15 minutes
    (:mod:`ddr_explorer.core.analyses.defaults`), else those of them that fit in it together
    (:meth:`~ddr_explorer.core.analyses.defaults.AnalysesPlan.within_budget`); the estimate is printed
    before they start, and for the ones left out the flag that runs them.
    """
    from ..analyses.defaults import SHEET_DEFAULT, plan_sheet_analyses, sheet_runners
    from ..analyses.engine import scheduler_address

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
    from ..analyses.heldout_choice import check_heldout_estimator

    estimator = check_heldout_estimator(getattr(args, "heldout_estimator", None))
    timings = args._analysis_timings = {}  # each runner's wall seconds, printed beside its estimate after the run

    def choose(corpus, posterior, progress=None):
        plan = plan_sheet_analyses(corpus, posterior, which=names, n_splits=args.splits, cache_dir=args.cache,
                                   refit_rule=rule, heldout_estimator=estimator)
        args._analysis_plan = plan
        where = f" on the Dask cluster {scheduler}" if scheduler else ""
        if args.analyses or plan.runs_by_default:
            print(f"ddr: {plan.describe()}{where}; running them"
                  + ("" if args.analyses else " (--analyses none skips them)"), file=sys.stderr)
            _print_heldout_choice(plan, names)
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
        _print_heldout_choice(plan, run)
        return {**sheet_runners(run, n_splits=args.splits, scheduler=scheduler, plan=part, progress=progress,
                                timings=timings),
                **others}

    return None, choose


def _print_heldout_choice(plan, running) -> None:
    """Which estimator the hold-out runs with, and why (the sheet says it too), when it runs."""
    if "heldout" in running and plan.heldout_choice is not None:
        print(f"ddr: {plan.heldout_choice.line}", file=sys.stderr)


def _sheet_runner(name: str, undated: str = "stop"):
    """The sheet runner of a ``--analyses`` name outside the refit engine's (``ddr_sheet.analysis_runner``)."""
    from ..ddr_sheet import analysis_runner

    try:
        return analysis_runner(name, undated=undated)
    except ValueError as exc:
        raise ValueError(f"--analyses: {exc}") from None

