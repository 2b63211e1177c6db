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
        For tables (the canonical layouts): ``columns`` (``--columns`` text, a
        dict or a :class:`~.columns.ColumnMapping`), ``benchmark`` and
        ``scaffold`` (one name for every row); see :mod:`.columns`.  A table
        read with a column mapping is taken as a canonical layout by its
        extension.  ``task_metadata`` (a file or a list of files, merged by task
        id), ``release_dates`` and ``slice``: :mod:`.metadata` and :mod:`.slicing`.

    Raises
    ------
    CorpusError
        When the file is missing, unreadable, of an unknown format or invalid.
    """
    path = Path(path)
    options = dict(options)
    # metadata joined from files beside the corpus, then a slice of tasks (core/corpus/slicing.py)
    extra = {k: options.pop(k, None) for k in ("task_metadata", "release_dates", "slice")}
    corpus = _load(path, format, encoding, options)
    if extra["task_metadata"]:
        from .metadata import join_task_metadata

        corpus = join_task_metadata(corpus, extra["task_metadata"])
    if extra["release_dates"]:
        from .metadata import join_release_dates

        corpus = join_release_dates(corpus, extra["release_dates"])
    if extra["slice"]:
        from .slicing import apply_slice, parse_slice, slice_text

        extra["slice"] = slice_text(parse_slice(extra["slice"], file=path))
        corpus = apply_slice(corpus, extra["slice"], file=path)
    corpus.provenance["load_options"] = _saved_options(encoding, {**options, **extra})
    return corpus


def _saved_options(encoding, options: dict) -> dict:
    """The options a session keeps to reopen the file the same way (plain strings and numbers)."""
    from .columns import ColumnMapping

    keep = {"encoding": encoding, **{k: options.get(k) for k in ("columns", "benchmark", "scaffold", "aliases",
                                                                  "scoring", "gamma", "task_metadata",
                                                                  "release_dates", "slice")}}
    out = {}
    for k, v in keep.items():
        if v is None:
            continue
        if k == "task_metadata" and isinstance(v, (list, tuple)):  # several files, merged by task id
            out[k] = str(v[0]) if len(v) == 1 else [str(x) for x in v]
            continue
        if isinstance(v, ColumnMapping):
            v = v.to_text()
        elif isinstance(v, dict):
            v = ColumnMapping(*_split_dict(v)).to_text()
        out[k] = v if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)
    return out


def _split_dict(d: dict) -> tuple[dict, dict]:
    cols = {k: str(v) for k, v in d.items() if not isinstance(v, dict)}
    consts = {k: str(v["value"]) for k, v in d.items() if isinstance(v, dict)}
    return cols, consts


def _load(path: Path, format, encoding, options: dict) -> Corpus:
    options = dict(options)
    if not path.exists():
        raise CorpusError([error("no-file", "the file does not exist.", "check the path.", file=path)])
    if path.is_dir():
        from .importers import inspect_logs

        if format in (None, inspect_logs.FORMAT) and inspect_logs.log_files(path):
            return inspect_logs.read(path, **options)  # a folder of Inspect AI logs
        raise CorpusError([error("is-a-folder", "this is a folder, not a corpus file (nor a folder of Inspect AI "
                                 "logs).", "name one file inside it.", file=path)])
    from .importers import IMPORTERS
    from .importers.detect import detect_format

    columns = options.pop("columns", None)
    fmt = format or _table_format(path, columns, options) or detect_format(path)
    if fmt in CANONICAL_FORMATS:
        from .columns import parse_columns

        mapping = parse_columns(columns, benchmark=options.pop("benchmark", None),
                                scaffold=options.pop("scaffold", None), file=path)
        return read_canonical(path, fmt, encoding=encoding, columns=mapping,
                              **({"name": options["name"]} if "name" in options else {}))
    if columns:
        options["columns"] = columns  # the importer reports it as an option it ignores
    if fmt not in IMPORTERS:
        raise CorpusError([error("unknown-format", f"unknown format '{fmt}'.",
                                 f"use one of: {', '.join(available_formats())}.", file=path)])
    return IMPORTERS[fmt].read(path, **options)


def _table_format(path: Path, columns, options: dict) -> str | None:
    """The canonical layout of a file read with a column mapping (by extension), else None (detect)."""
    if not columns:
        return None
    return {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
            ".parquet": "parquet", ".pq": "parquet"}.get(path.suffix.lower())
