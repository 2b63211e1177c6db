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
        ``keep_lookalike_names``: keep names that differ only by look-alike letters apart (by default they
        are read as one, with a warning: :mod:`.names`).  ``unsplit_ids``: ``"collapse"`` (the default)
        or ``"drop"``, what becomes of subject ids that name no scaffold (:mod:`.subject_ids.unsplit`).

    Raises
    ------
    CorpusError
        When the file is missing, unreadable, of an unknown format or invalid.
    """
    path = Path(path)
    options = dict(options)
    _check_options(path, options)
    # metadata joined from files beside the corpus, then a slice of tasks (core/corpus/slicing.py)
    extra = {k: options.pop(k, None) for k in ("task_metadata", "release_dates", "slice")}
    from .names import keeping_lookalikes
    from .subject_ids.unsplit import unsplit_rule

    if options.get("keep_lookalike_names"):  # kept with the session's options, so a reopened file reads the same
        extra["keep_lookalike_names"] = True
    unsplit = options.pop("unsplit_ids", None)
    if unsplit not in (None, "collapse"):  # the default is not written down: older sessions read the same
        extra["unsplit_ids"] = unsplit
    try:
        with keeping_lookalikes(bool(options.pop("keep_lookalike_names", False))), \
                unsplit_rule(unsplit, file=path):  # the look-alike merge rule; ids that name no scaffold
            corpus = _load(path, format, encoding, options)
    except OSError as exc:  # a file of the corpus (or a log in its folder) the user may not read
        where = exc.filename or path
        raise CorpusError([error("unreadable", f"the file cannot be read ({exc.strerror or exc}).",
                                 "check the file's permissions (and that it is not being written), or copy it "
                                 "somewhere you can read it.", file=where)]) from None
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


def require_regular_file(path: Path, what: str = "corpus file") -> None:
    """Refuse a path that is not a regular file (a FIFO blocks a reader for good; /dev/zero never ends).

    Missing files and folders are left to the caller, which has its own words for them.
    """
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or
                stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
        raise CorpusError([error("not-a-file", f"this is {kind}, not a regular file; reading it could block or "
                                 "never end.", f"save the {what} to a regular file and name that.", file=path)])


def _check_options(path: Path, options: dict) -> None:
    """Refuse what no reader can use before any file is read: special files, a threshold that is not finite."""
    require_regular_file(path)
    for key, what in (("aliases", "alias file"), ("release_dates", "release-date file")):
        if options.get(key) is not None and not isinstance(options[key], (dict, list)):
            require_regular_file(Path(options[key]), what)
    meta = options.get("task_metadata")
    for m in (meta if isinstance(meta, (list, tuple)) else [meta] if meta is not None else []):
        require_regular_file(Path(m), "task-metadata file")
    gamma = options.get("gamma")
    if gamma is not None:
        import math

        try:
            ok = math.isfinite(float(gamma)) and 0.0 <= float(gamma) <= 1.0
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise CorpusError([error("bad-option", f"gamma = {gamma} is not a threshold in [0, 1].",
                                     "give --gamma a number from 0 to 1, e.g. 0.5.", file=path, column="gamma")])


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
    if options.get("keep_lookalike_names"):  # the look-alike merge rule turned off (core/corpus/names.py)
        out["keep_lookalike_names"] = True
    if options.get("unsplit_ids"):  # ids that name no scaffold left out (core/corpus/subject_ids/unsplit.py)
        out["unsplit_ids"] = str(options["unsplit_ids"])
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
        return read_canonical(path, fmt, encoding=encoding, columns=mapping, aliases=options.pop("aliases", None),
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
