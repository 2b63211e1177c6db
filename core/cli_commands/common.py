"""What every ``ddr`` command shares: the exit statuses, reading the corpus the command line names,
saying why it was refused, and checking the cache folder before any work."""

from __future__ import annotations

import argparse
import sys

from ..corpus.issues import CorpusError

EXIT_OK, EXIT_FAILURE, EXIT_INVALID, EXIT_UNCONVERGED = 0, 1, 2, 3
#: ``ddr report`` wrote the sheet without one or more sections (each named on stderr and on the sheet).
EXIT_SHEET_INCOMPLETE = 4


def corpus_of(args: argparse.Namespace):
    """The corpus the command line names: ``args.path`` read with its format, encoding and mapping options.

    Raises
    ------
    CorpusError
        The file cannot be read as a corpus; each issue names the file, row and column.
    """
    from ..corpus.columns import options_from_args
    from ..corpus.io import load_corpus

    return load_corpus(args.path, args.format, encoding=args.encoding, **options_from_args(args))


#: The options that name a file a command reads: no output may replace one of them.
INPUT_OPTIONS = ("path", "corpus", "aliases", "task_metadata", "release_dates", "components", "prices",
                 "token_prices", "external_ranking", "families")


def input_files(args: argparse.Namespace) -> list:
    """Every file the command line names to read (:data:`INPUT_OPTIONS`), for the output gate."""
    out = []
    for name in INPUT_OPTIONS:
        value = getattr(args, name, None)
        out.extend(value if isinstance(value, (list, tuple)) else [] if value is None else [value])
    return out


def output_refused(args: argparse.Namespace, suffixes=None) -> bool:
    """Say (and return True) when ``args.output`` may not be written (:func:`~..files.check_output`): the input
    itself, a device, FIFO or folder, a missing folder, an extension the command does not write.  Before any
    work, so that a long fit is not lost to a bad ``-o``."""
    from ..files import OutputRefused, check_output

    try:
        check_output(args.output, inputs=input_files(args), suffixes=suffixes)
    except OutputRefused as exc:
        print(f"ddr: {exc}", file=sys.stderr)
        return True
    return False


def print_errors(exc: CorpusError) -> None:
    """Every problem of an input refused, on stderr, one a line under a count."""
    print(f"ddr: invalid input: {len(exc.issues)} problem(s)", file=sys.stderr)
    for issue in exc.issues:
        print(f"  error: {issue}", file=sys.stderr)


def refusal(exc: Exception) -> int:
    """Say why the command line was refused and return :data:`EXIT_INVALID`: a corpus's problems one a line
    (:func:`print_errors`), anything else (a bad formula, option or file) as its message."""
    if isinstance(exc, CorpusError):
        print_errors(exc)
    else:
        print(f"ddr: {exc}", file=sys.stderr)
    return EXIT_INVALID


def cache_folder_refused(args: argparse.Namespace) -> bool:
    """Say (and return True) when ``--cache`` cannot take a fit: before the corpus is read or anything sampled."""
    if getattr(args, "no_cache", False):
        return False
    from ..cache import CacheFolderError, FitCache
    from ..files import default_cache_dir

    try:
        FitCache(args.cache or default_cache_dir()).check_writable()
    except CacheFolderError as exc:
        print(f"ddr: {exc}", file=sys.stderr)
        return True
    return False

