"""``ddr inspect``, ``ddr convert`` and ``ddr formats``: a corpus file read, checked, summarised or rewritten."""

from __future__ import annotations

import argparse
import json
import sys

from ..corpus.issues import CorpusError
from .common import EXIT_FAILURE, EXIT_INVALID, EXIT_OK, corpus_of, input_files, output_refused, print_errors


def cmd_inspect(args: argparse.Namespace) -> int:
    """``ddr inspect``: the corpus read and checked, its design summarised (text, or one JSON object with
    ``--json``; a refused file's problems as JSON too)."""
    from ..inspection import format_summary, inspect_corpus

    try:
        corpus = corpus_of(args)
    except CorpusError as exc:
        print_errors(exc)
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
    """``ddr convert``: the corpus written in the canonical layout (by the output's extension) or as py-irt
    JSON lines with an alias file beside it.  The output gate (:func:`~..files.check_output`) refuses a bad
    ``-o`` (exit 2) before the corpus is read; a write that fails on its way (disk full) exits 1, and leaves
    nothing behind."""
    from ..corpus.export_pyirt import SUFFIXES, write_pyirt
    from ..corpus.readers import OUTPUT_SUFFIXES, write_canonical
    from ..files import OutputRefused

    if output_refused(args, SUFFIXES if args.to == "py-irt" else tuple(OUTPUT_SUFFIXES)):
        return EXIT_INVALID
    try:
        corpus = corpus_of(args)
    except CorpusError as exc:
        print_errors(exc)
        return EXIT_INVALID
    inputs = input_files(args)
    try:
        if args.to == "py-irt":  # core/corpus/export_pyirt.py: subjects "<scaffold>/<model>", alias file beside
            out, alias = write_pyirt(corpus, args.output, inputs=inputs, force=args.force)
            print(f"wrote {corpus.n_records:,} records as py-irt to {out} (mapping back: {alias})", file=sys.stderr)
            return EXIT_OK
        out = write_canonical(corpus, args.output, inputs=inputs)
    except OutputRefused as exc:  # the alias file beside the output, found only now
        print(f"ddr: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except OSError as exc:
        print(f"ddr: {args.output} could not be written ({exc.strerror or exc}); nothing was left behind",
              file=sys.stderr)
        return EXIT_FAILURE
    print(f"wrote {corpus.n_records:,} records to {out}", file=sys.stderr)
    return EXIT_OK


def cmd_formats(args: argparse.Namespace) -> int:
    """``ddr formats``: the input formats, one a line."""
    from ..corpus.io import available_formats

    for fmt in available_formats():
        print(fmt)
    return EXIT_OK

