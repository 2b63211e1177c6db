"""Readers and writers of the canonical layout: CSV, TSV, JSONL and Parquet.

The fast path hands the bytes to pyarrow; only when it refuses a file do we
scan it line by line in Python, to say exactly where and why (ragged rows,
invalid JSON, bad encoding).  Column names are matched to the canonical names
through :data:`.schema.SYNONYMS`.
"""

from __future__ import annotations

import dataclasses

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson

from ..files import atomic_path, check_output
from . import schema
from .corpus import Corpus
from .issues import CorpusError, CorpusIssue, error, warning
from .validate import SOURCE_ROW, build_corpus

CANONICAL_FORMATS = ("csv", "tsv", "jsonl", "parquet")


# -- column names ---------------------------------------------------------------
def map_columns(columns: list[str]) -> tuple[dict[str, str], list[CorpusIssue]]:
    """Map file column names to canonical names (:data:`.schema.SYNONYMS`, also after a dotted prefix).

    Returns
    -------
    rename
        file name -> canonical name, for the columns that map.
    issues
        Warnings for synonyms that collide (the exact canonical name wins).
    """
    table = schema.synonym_table()
    rename: dict[str, str] = {}
    taken: dict[str, str] = {}
    issues: list[CorpusIssue] = []

    def role_of(col) -> tuple[int, str | None]:
        """(priority, canonical name): the exact canonical name, then a synonym, then either of them as
        the last part of a dotted name (``metadata.instance_id`` -> task, as exports of nested JSON
        write it)."""
        whole = schema.normalise_name(col)
        if whole in schema.SYNONYMS:
            return 0, whole
        if whole in table:
            return 1, table[whole]
        if "." in str(col):
            return 2, table.get(schema.normalise_name(str(col).rsplit(".", 1)[-1]))
        return 3, None

    # exact canonical names first, then synonyms, then dotted names: a nearer match is never displaced
    ordered = sorted(columns, key=lambda c: role_of(c)[0])
    for col in ordered:
        if str(col).startswith(schema.VERIFIER_PREFIX):
            continue
        canonical = role_of(col)[1]
        if canonical is None:
            continue
        if canonical in taken:
            issues.append(warning("ambiguous-column", f"both '{taken[canonical]}' and '{col}' could be the "
                                  f"'{canonical}' column; '{taken[canonical]}' is used and '{col}' kept as is.",
                                  f"rename one of them if '{col}' is the {canonical}.", column=str(col)))
            continue
        taken[canonical] = str(col)
        rename[str(col)] = canonical
    return rename, issues


# -- text decoding ----------------------------------------------------------------
def decode_bytes(data: bytes, path: Path, encoding: str | None = None) -> bytes:
    """Return the file's content as UTF-8 bytes, or raise a located error.

    UTF-8 (with or without BOM) and UTF-16 with a BOM are recognised; any other
    encoding must be named by the user (``--encoding``).
    """
    if encoding:
        try:
            return data.decode(encoding).encode("utf-8")
        except (UnicodeDecodeError, LookupError) as exc:
            raise CorpusError([error("encoding", f"cannot decode the file as {encoding}: {exc}.",
                                     "name the file's real encoding with --encoding.", file=path)]) from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16").encode("utf-8")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        field_no = data.count(b",", line_start, exc.start) + data.count(b"\t", line_start, exc.start)
        header = data[: data.find(b"\n")].decode("utf-8", "replace")
        names = next(csv.reader([header], delimiter="\t" if "\t" in header else ","), [])
        column = names[field_no] if field_no < len(names) else None
        bad = data[exc.start: exc.start + 1].hex()
        raise CorpusError([error("encoding", f"byte 0x{bad} is not valid UTF-8.",
                                 "save the file as UTF-8, or pass its encoding (e.g. --encoding cp1252 "
                                 "for files saved by Excel on Windows).", file=path, row=line, column=column)]) from None
    return data


# -- CSV / TSV -----------------------------------------------------------------------
def _locate_csv_problem(text: bytes, path: Path, delimiter: str) -> CorpusIssue:
    """Scan a CSV that pyarrow refused and describe the first bad line."""
    reader = csv.reader(io.StringIO(text.decode("utf-8"), newline=""), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        return error("empty", "the file is empty.", "check that it is the right file.", file=path)
    except csv.Error as exc:
        return error("bad-csv", f"the header cannot be read: {exc}.", "fix the header line.", file=path, row=1)
    start = reader.line_num + 1
    try:
        for fields in reader:
            if fields and len(fields) != len(header):
                if reader.line_num > start and any("\n" in f for f in fields):
                    # a quote opened on the record's first line swallowed the lines after it
                    return error("unterminated-quote", f"a quoted value opened on line {start} runs to line "
                                 f"{reader.line_num} (the quote is never closed where the value ends).",
                                 'close the quote on that line, or double a quote inside a value ("").',
                                 file=path, row=start)
                extra = len(fields) > len(header)
                return error("ragged-row", f"{len(fields)} fields where the header has {len(header)}.",
                             ("quote values that contain the delimiter, or remove the extra field."
                              if extra else "fill in the missing fields (leave them empty between delimiters)."),
                             file=path, row=start,
                             column=None if extra else header[len(fields)])
            start = reader.line_num + 1
    except csv.Error as exc:
        return error("bad-csv", f"unreadable CSV: {exc}.", "check the quoting on that line.", file=path,
                     row=start)
    return error("bad-csv", "the file cannot be parsed as delimited text.", "check its delimiter and quoting.",
                 file=path)


def no_corpus_columns(header: list[str], path: Path) -> CorpusIssue:
    """The error of a file whose first line names no corpus column (prose, a report, another table).

    Said before any check of the rows' shape: "line 2 has 1 field where the header has 2" is true
    of a note but does not tell its reader that the file is not a corpus at all.
    """
    found = [h.strip() for h in header if h.strip()]
    shown = ", ".join(repr(h[:40]) for h in found[:6]) + (f", ... ({len(found)} in all)" if len(found) > 6 else "")
    return error("no-corpus-columns", f"this file has no corpus columns (found: {shown or 'nothing'}); a corpus's "
                 "first line names its columns, e.g. benchmark,task,model,scaffold,result.",
                 "open a corpus file (a table of results, one trial or cell per row), or say which column is "
                 "which with --columns ROLE=COLUMN,...", file=path, row=1)


def read_delimited(path: Path, delimiter: str = ",", encoding: str | None = None, *,
                   mapped: bool = False) -> tuple[pd.DataFrame, dict]:
    """Read a canonical CSV/TSV into a raw table with canonical names and ``_source_row``.

    ``mapped``: a column mapping follows (``--columns``), so a header that names no canonical
    column is not refused here.
    """
    data = Path(path).read_bytes()
    if not data.strip():
        raise CorpusError([error("empty", "the file is empty.", "check that it is the right file.", file=path)])
    data = decode_bytes(data, path, encoding)
    if b"\r" in data and b"\n" not in data:
        raise CorpusError([error("cr-line-endings", "the lines end in a bare carriage return (CR, the line ending "
                                 "of classic Mac OS), which this reader does not split on.",
                                 "save the file with LF or CRLF line endings (any text editor's 'line endings' "
                                 "setting, or: tr '\\r' '\\n' < in.csv > out.csv).", file=path, row=1)])
    header_line = data[: data.find(b"\n")] if b"\n" in data else data
    try:
        header = next(csv.reader([header_line.decode("utf-8").rstrip("\r")], delimiter=delimiter))
    except (csv.Error, StopIteration) as exc:
        raise CorpusError([error("bad-csv", f"the header line cannot be read ({exc}).",
                                 "fix the header: column names separated by the delimiter.", file=path,
                                 row=1)]) from None
    if any("\x00" in h for h in header):
        raise CorpusError([error("control-character", "the header holds a NUL character.",
                                 "save the file as plain text (UTF-8) with column names only.", file=path, row=1)])
    rename, issues = map_columns(header)
    if not rename and len(header) < 2:  # one column of no corpus name: lines of text, whatever a mapping says
        raise CorpusError([no_corpus_columns(header, path)])
    # facets arrive dictionary-encoded (pandas categoricals): few names, many rows
    as_text = {c: (pa.dictionary(pa.int32(), pa.string()) if canon in (*schema.REQUIRED_FACETS, schema.TRIAL_ID)
                   else pa.string())
               for c, canon in rename.items()
               if canon in (*schema.REQUIRED_FACETS, schema.TRIAL_ID, *schema.TEXT_METADATA, *schema.EXTRA_FACETS)}
    # counts as text: pyarrow reads "0x10" as 16 and "true" as a boolean; validation parses them strictly
    # and the result: pyarrow reads "0.99999999999999999" as 1.0; validation decides on the decimal as written
    as_text.update({c: pa.string() for c, canon in rename.items()
                    if canon in (schema.SUCCESSES, schema.TRIALS, schema.RESULT)})
    try:
        tbl = pacsv.read_csv(
            io.BytesIO(data),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(column_types=as_text, strings_can_be_null=True),
            read_options=pacsv.ReadOptions(block_size=1 << 24),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        if not rename and not mapped:  # a note or a report, not a table: its shape is not the problem
            raise CorpusError([no_corpus_columns(header, path)]) from None
        raise CorpusError([_locate_csv_problem(data, path, delimiter)]) from None
    raw = tbl.to_pandas(types_mapper=None)
    raw.columns = [str(c) for c in raw.columns]
    if len(set(raw.columns)) != len(raw.columns):
        dup = [c for c in raw.columns if list(raw.columns).count(c) > 1][0]
        raise CorpusError([error("duplicate-column", f"the header names '{dup}' twice.",
                                 "give every column a distinct name.", file=path, row=1, column=dup)])
    raw = raw.rename(columns=rename)
    raw[SOURCE_ROW] = _record_lines(data, delimiter, len(raw))
    return raw, {"columns": {v: k for k, v in rename.items()}, "issues": issues}


def _record_lines(data: bytes, delimiter: str, n_records: int) -> np.ndarray:
    """The file line each record starts on (the header is line 1).

    One record per line is the rule, and then the lines are 2, 3, ...; a blank line or a quoted value
    that spans lines shifts every later record, so then the lines are counted the way a CSV reader
    reads the file.
    """
    n_lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if b'"' not in data and n_lines - 1 == n_records:
        return np.arange(2, n_records + 2, dtype="int64")
    starts = []
    reader = csv.reader(io.StringIO(data.decode("utf-8"), newline=""), delimiter=delimiter)
    try:
        next(reader)
        line = reader.line_num
        for fields in reader:
            if fields:
                starts.append(line + 1)
            line = reader.line_num
    except csv.Error:
        pass
    if len(starts) != n_records:  # the two readers disagree: keep the plain numbering rather than guess
        return np.arange(2, n_records + 2, dtype="int64")
    return np.asarray(starts, dtype="int64")


# -- JSONL -------------------------------------------------------------------------------
def _json_kind(v) -> str:
    """The JSON type of a value as a reader of columns sees it (whole and fractional numbers apart)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true/false"
    if isinstance(v, int):
        return "a whole number" if abs(v) < 2 ** 63 else "a whole number beyond 64 bits"
    if isinstance(v, float):
        return "a number with a fraction" if v == v and abs(v) != float("inf") else "a non-finite number"
    if isinstance(v, str):
        return "text"
    return "a list" if isinstance(v, list) else "an object"


def _locate_json_problem(data: bytes, path: Path) -> CorpusIssue:
    """Scan JSON lines that pyarrow refused: the first bad line, or the first field whose type changes."""
    from ..side_files import KeyGivenTwice, unique_keys
    from .importers._common import json_problem

    first_seen: dict[str, tuple[str, int]] = {}
    for i, line in enumerate(data.decode("utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line, object_pairs_hook=unique_keys)
        except KeyGivenTwice as exc:
            return error("duplicate-json-key", f"the key {exc.key!r} is given twice in one object (JSON would keep "
                         "the last value without a word).", "keep one of them.", file=path, row=i, column=exc.key)
        except (json.JSONDecodeError, RecursionError, ValueError) as exc:
            return error("bad-json", f"invalid JSON ({json_problem(exc)}).",
                         "each line must be one complete JSON object.", file=path, row=i)
        if not isinstance(obj, dict):
            return error("bad-json", f"the line holds a JSON {type(obj).__name__}, not an object.",
                         "each line must be one JSON object with the corpus fields.", file=path, row=i)
        for key, value in obj.items():
            kind = _json_kind(value)
            if kind in ("a list", "an object", "a whole number beyond 64 bits", "a non-finite number"):
                return error("bad-json", f"'{key}' is {kind} ({json.dumps(value)[:40]}), not a plain value.",
                             f"give '{key}' one plain value (text or a number) on every line.", file=path, row=i,
                             column=str(key))
            if kind == "null":
                continue
            seen = first_seen.setdefault(key, (kind, i))
            if seen[0] != kind and {seen[0], kind} != {"a whole number", "a number with a fraction"}:
                return error("bad-json", f"'{key}' is {kind} ({json.dumps(value)[:40]}) here but {seen[0]} on "
                             f"line {seen[1]}.", f"give '{key}' the same type on every line.", file=path, row=i,
                             column=str(key))
    return error("bad-json", "the file cannot be read as JSON lines.",
                 "check that fields have the same type on every line.", file=path)


def read_jsonl(path: Path, encoding: str | None = None) -> tuple[pd.DataFrame, dict]:
    """Read canonical JSON lines (one flat object per record)."""
    data = Path(path).read_bytes()
    if not data.strip():
        raise CorpusError([error("empty", "the file is empty.", "check that it is the right file.", file=path)])
    data = decode_bytes(data, path, encoding)
    lines = data.split(b"\n")
    keep = np.array([bool(line.strip()) for line in lines])
    try:
        tbl = pajson.read_json(io.BytesIO(data), read_options=pajson.ReadOptions(block_size=1 << 24))
        while any(pa.types.is_struct(f.type) for f in tbl.schema):  # nested objects -> dotted columns
            tbl = tbl.flatten()
        raw = tbl.to_pandas()
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        raise CorpusError([_locate_json_problem(data, path)]) from None
    rename, issues = map_columns([str(c) for c in raw.columns])
    _refuse_rounded_counts(data, path, [k for k, v in rename.items()
                                        if v in (schema.RESULT, schema.SUCCESSES, schema.TRIALS)])
    raw = raw.rename(columns=rename)
    rows = np.flatnonzero(keep) + 1
    raw[SOURCE_ROW] = rows[: len(raw)].astype("int64")
    return raw, {"columns": {v: k for k, v in rename.items()}, "issues": issues}


def _refuse_rounded_counts(data: bytes, path: Path, keys: list[str]) -> None:
    """Refuse a count or 0/1 result written with a fraction that a float rounds away (``"result":
    0.99999999999999999`` read as 1): the JSON parser keeps no text, so the bytes are scanned for the
    fields' numbers with a nonzero fraction digit (few in a valid file), each checked as written."""
    import re
    from decimal import Decimal

    for key in keys:
        pattern = re.compile(rb'"' + re.escape(json.dumps(key)[1:-1].encode()) +
                             rb'"\s*:\s*(-?[0-9]+\.[0-9]*[1-9][0-9]*(?:[eE][+-]?[0-9]+)?)')
        for m in pattern.finditer(data):
            text = m.group(1).decode()
            if float(text).is_integer() and Decimal(text) != Decimal(int(float(text))):
                line = data.count(b"\n", 0, m.start()) + 1
                raise CorpusError([error("not-an-integer", f"'{text}' is not a whole number (a float would read it "
                                         f"as {float(text):g}).", f"write whole numbers in '{key}' (0 or 1 for a "
                                         "result).", file=path, row=line, column=key)])


# -- Parquet ------------------------------------------------------------------------------
def read_parquet(path: Path) -> tuple[pd.DataFrame, dict]:
    """Read a canonical Parquet file; rows are numbered from 1 (record numbers)."""
    try:
        raw = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises many types for damaged files
        raise CorpusError([error("bad-parquet", f"not a readable Parquet file ({exc}).",
                                 "re-export the table as Parquet, CSV or JSONL.", file=path)]) from None
    rename, issues = map_columns([str(c) for c in raw.columns])
    raw = raw.rename(columns=rename)
    raw[SOURCE_ROW] = np.arange(1, len(raw) + 1, dtype="int64")
    return raw, {"columns": {v: k for k, v in rename.items()}, "issues": issues}


def read_canonical(path: str | Path, format: str | None = None, *, encoding: str | None = None,
                   name: str | None = None, columns=None, aliases=None) -> Corpus:
    """Read a corpus in the canonical layout (CSV, TSV, JSONL or Parquet).

    Parameters
    ----------
    path
        The file.
    format
        ``"csv"``, ``"tsv"``, ``"jsonl"`` or ``"parquet"``; by default from the extension.
    encoding
        The text encoding when it is not UTF-8 (or UTF-16 with a BOM).
    columns
        A :class:`~.columns.ColumnMapping` (or ``--columns`` text) saying which
        file column plays which role, applied after the synonym matching.
    aliases
        An alias file (TOML) whose ``[models]`` and ``[scaffolds]`` tables rename names before validation
        (:mod:`.renames`); its subject-id rules have no ids to split in a table with model columns.
    """
    path = Path(path)
    fmt = format or {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "tsv", ".jsonl": "jsonl",
                     ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet", ".pq": "parquet"}.get(
        path.suffix.lower(), "csv")
    if fmt == "csv":
        raw, info = read_delimited(path, ",", encoding, mapped=bool(columns))
    elif fmt == "tsv":
        raw, info = read_delimited(path, "\t", encoding, mapped=bool(columns))
    elif fmt == "jsonl":
        raw, info = read_jsonl(path, encoding)
    elif fmt == "parquet":
        raw, info = read_parquet(path)
    else:
        raise ValueError(f"unknown canonical format {fmt!r}; expected one of {CANONICAL_FORMATS}")
    issues = [dataclasses.replace(i, file=str(path)) for i in info["issues"]]
    provenance = {"reader": f"canonical-{fmt}"}
    if columns:
        from .columns import apply_mapping, parse_columns

        mapping = parse_columns(columns, file=path)
        raw, info["columns"], more = apply_mapping(raw, info["columns"], mapping, file=path)
        issues.extend(more)
        provenance["column_mapping"] = mapping.to_text()
    from .subject_ids.unsplit import carried_marker

    raw, marker, more = carried_marker(raw, file=path)  # a converted file's "(scaffolds not separated)"
    if marker is not None:
        provenance["scaffolds_not_separated"] = marker
        issues.extend(more)
    if aliases is not None:
        from .renames import apply_renames

        raw, provenance["renames"], more = apply_renames(raw, aliases, file=path)
        issues.extend(more)
    return build_corpus(raw, file=path, format=fmt, name=name, column_sources=info["columns"],
                        provenance=provenance, issues=issues)


#: The extension of each canonical layout :func:`write_canonical` writes (any other is refused, never
#: written as CSV under a name that says otherwise).
OUTPUT_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".parquet": "parquet"}


def write_canonical(corpus: Corpus, path: str | Path, format: str | None = None, *, inputs=()) -> Path:
    """Write the corpus in the canonical layout; the format follows the extension.

    The file is written to a temporary name and renamed, so a failed write
    never leaves half a file behind.  The output gate
    (:func:`~..files.check_output`) refuses, before anything is written, an
    extension not in :data:`OUTPUT_SUFFIXES` (without ``format``), one of
    ``inputs``, a device, a folder or a missing folder.
    """
    path = check_output(path, inputs=inputs, suffixes=None if format else tuple(OUTPUT_SUFFIXES))
    fmt = format or OUTPUT_SUFFIXES[path.suffix.lower()]
    table = corpus.table
    if fmt not in ("csv", "tsv", "jsonl", "parquet"):
        raise ValueError(f"unknown canonical format {fmt!r}; expected one of {CANONICAL_FORMATS}")
    with atomic_path(path, inputs=inputs) as tmp:
        if fmt == "csv":
            table.to_csv(tmp, index=False)
        elif fmt == "tsv":
            table.to_csv(tmp, index=False, sep="\t")
        elif fmt == "jsonl":
            plain = table.astype({c: "string" for c in table.columns
                                  if isinstance(table[c].dtype, pd.CategoricalDtype)})
            plain.to_json(tmp, orient="records", lines=True)
        else:
            table.to_parquet(tmp, index=False)
    return path
