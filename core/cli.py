"""The ``ddr`` command line: the app's jobs, headless, for batch use.

Every number it prints comes from the same core functions the app and the DDR
sheet use.  Exit status: 0 on success, 2 on invalid input (the message goes to
stderr), 1 on an unexpected failure.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .. import __version__
from .corpus.issues import CorpusError

EXIT_OK, EXIT_FAILURE, EXIT_INVALID = 0, 1, 2


def _add_corpus_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", type=Path, help="corpus file (canonical CSV/TSV/JSONL/Parquet or a supported format)")
    p.add_argument("--format", help="force the input format (see `ddr formats`)")
    p.add_argument("--encoding", help="text encoding when the file is not UTF-8, e.g. cp1252")
    p.add_argument("--benchmark", help="benchmark name for formats that do not carry one")
    p.add_argument("--aliases", type=Path, help="alias/mapping file (TOML) for subject ids and model names")
    p.add_argument("--scoring", choices=["direct", "all-pass", "threshold"],
                   help="scoring rule for verifier results (default: the importer's)")
    p.add_argument("--gamma", type=float, help="threshold of the 'threshold' scoring rule (default 0.5)")


def _load(args: argparse.Namespace):
    from .corpus.io import load_corpus

    options = {}
    if args.benchmark:
        options["benchmark"] = args.benchmark
    if args.aliases:
        options["aliases"] = args.aliases
    if args.scoring:
        options["scoring"] = args.scoring
    if args.gamma is not None:
        options["gamma"] = args.gamma
    return load_corpus(args.path, args.format, encoding=args.encoding, **options)


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
    out = write_canonical(corpus, args.output)
    print(f"wrote {corpus.n_records:,} records to {out}", file=sys.stderr)
    return EXIT_OK


def _read_score_table(path: Path, response: str):
    """A generic long table (G-study data) if it has the response column, else None."""
    import pandas as pd

    suffix = path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            head = pd.read_parquet(path)
        elif suffix in (".csv", ".tsv", ".txt", ".tab"):
            head = pd.read_csv(path, sep="\t" if suffix != ".csv" else ",", nrows=0)
        else:
            return None
    except Exception:  # noqa: BLE001 - not a plain table: let the corpus loader explain
        return None
    if response not in head.columns:
        return None
    if suffix in (".parquet", ".pq"):
        return head
    return pd.read_csv(path, sep="\t" if suffix != ".csv" else ",")


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


def _design_from_args(args: argparse.Namespace, components, defaults: dict | None = None):
    from .dstudy import Design

    d = dict(defaults or {})
    for field, arg in (("n_tasks", "n_tasks"), ("n_scaffolds", "n_scaffolds"), ("n_benchmarks", "n_benchmarks"),
                       ("n_replicates", "replicates"), ("n_models", "n_models")):
        value = getattr(args, arg, None)
        if value is not None:
            d[field] = value
    if args.price_per_trial is not None:
        d["price_per_trial"] = args.price_per_trial
    d["object_of_measurement"] = args.object
    d["claim"] = args.claim
    d.setdefault("n_tasks", 50)
    return Design(**d)


def cmd_dstudy(args: argparse.Namespace) -> int:
    from .components_io import ComponentsFileError, read_components
    from .dstudy_summary import dstudy_summary, format_dstudy

    if args.components is None and args.path is None:
        print("ddr: give a corpus or cached fit, or --components FILE", file=sys.stderr)
        return EXIT_INVALID
    try:
        if args.components is not None:
            components = read_components(args.components)
            defaults: dict = {}
        else:
            from .fitting import components_for_dstudy

            components, defaults = components_for_dstudy(args)
        design = _design_from_args(args, components, defaults)
        summary = dstudy_summary(components, design, target=args.target, budget=args.budget)
    except (ComponentsFileError, ValueError) as exc:
        print(f"ddr: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except CorpusError as exc:
        _print_errors(exc)
        return EXIT_INVALID
    print(json.dumps(summary, indent=2) if args.json else format_dstudy(summary))
    return EXIT_OK


def cmd_formats(args: argparse.Namespace) -> int:
    from .corpus.io import available_formats

    for fmt in available_formats():
        print(fmt)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ddr", description="DDR Explorer, headless: inspect corpora, fit "
                                     "G-studies, run D-studies and write DDR sheets.")
    parser.add_argument("--version", action="version", version=f"ddr {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("inspect", help="validate a corpus and summarise its design")
    _add_corpus_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser("convert", help="write a corpus back in the canonical layout")
    _add_corpus_arguments(p)
    p.add_argument("-o", "--output", type=Path, required=True, help="output file (.csv, .tsv, .jsonl, .parquet)")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("henderson", help="variance components by Henderson's Method I (closed form)")
    _add_corpus_arguments(p)
    p.add_argument("--formula", required=True,
                   help="random-intercept formula or preset, e.g. \"score ~ (1|person) + (1|task/rater)\"")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_henderson)

    p = sub.add_parser("dstudy", help="decision study: reliability of a design, sizes needed for a target")
    p.add_argument("path", nargs="?", type=Path, help="corpus or cached fit (.h5); or use --components")
    p.add_argument("--components", type=Path, help="variance components from elsewhere (JSON or CSV; see README)")
    p.add_argument("--n-tasks", type=float, help="tasks per benchmark (default: the corpus's, or 50)")
    p.add_argument("--n-scaffolds", type=float, help="scaffolds per model")
    p.add_argument("--n-benchmarks", type=float, help="benchmarks")
    p.add_argument("--replicates", type=float, help="trials per task-model-scaffold cell")
    p.add_argument("--n-models", type=int, help="models compared (enters the cost)")
    p.add_argument("--object", default="model", choices=["model", "system"],
                   help="object of measurement: model, or model-scaffold system")
    p.add_argument("--claim", default="relative", choices=["relative", "absolute"],
                   help="relative (ranking, Erho2) or absolute (threshold decisions, Phi)")
    p.add_argument("--target", type=float, help="target coefficient (default 0.85 relative, 0.90 absolute)")
    p.add_argument("--budget", type=float, help="budget in USD: the best design on the cost frontier")
    p.add_argument("--price-per-trial", type=float, help="USD per trial (default: from the corpus's cost column)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_dstudy)

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
