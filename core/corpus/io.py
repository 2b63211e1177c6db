"""One entry point for every corpus file: :func:`load_corpus`."""

from __future__ import annotations

from pathlib import Path

from .corpus import Corpus
from .issues import CorpusError, error
from .readers import CANONICAL_FORMATS, read_canonical, write_canonical  # noqa: F401 - re-exported


def available_formats() -> list[str]:
    """Every value ``format=`` (``--format``) accepts."""
    from .importers import IMPORTERS

    return [*CANONICAL_FORMATS, *IMPORTERS]


def load_corpus(path: str | Path, format: str | None = None, *, encoding: str | None = None, **options) -> Corpus:
    """Read, import and validate a corpus file.

    Parameters
    ----------
    path
        A canonical CSV/TSV/JSONL/Parquet file or a file of a supported foreign
        format (Terminal-Bench meta.json, py-irt JSONL, normalized results, METR runs).
    format
        Force a format (see :func:`available_formats`); detected from the content by default.
    encoding
        Text encoding of canonical text files when it is not UTF-8.
    options
        Passed to the importer (benchmark name, alias file, scoring rule, ...).

    Raises
    ------
    CorpusError
        When the file is missing, unreadable, of an unknown format or invalid.
    """
    path = Path(path)
    if not path.exists():
        raise CorpusError([error("no-file", "the file does not exist.", "check the path.", file=path)])
    if path.is_dir():
        raise CorpusError([error("is-a-folder", "this is a folder, not a corpus file.",
                                 "name one file inside it.", file=path)])
    from .importers import IMPORTERS
    from .importers.detect import detect_format

    fmt = format or detect_format(path)
    if fmt in CANONICAL_FORMATS:
        return read_canonical(path, fmt, encoding=encoding, **({"name": options["name"]} if "name" in options else {}))
    if fmt not in IMPORTERS:
        raise CorpusError([error("unknown-format", f"unknown format '{fmt}'.",
                                 f"use one of: {', '.join(available_formats())}.", file=path)])
    return IMPORTERS[fmt].read(path, **options)
