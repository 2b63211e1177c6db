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
