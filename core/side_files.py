"""The input gate of the side files: every small file a command reads beside the corpus.

Components, trial prices, token prices, external rankings, release dates, task
metadata, alias files and family maps are read through :func:`read_side_text`
and, when they are JSON or TOML, parsed by :func:`loads_json` or
:func:`loads_toml`.  One gate, so that each reader keeps the corpus's rules:

* only a regular file is opened (a FIFO blocks a reader for good, ``/dev/zero``
  never ends, a folder is not a file); its size is checked before it is read
  (:data:`MAX_SIDE_FILE_BYTES`), and at most that many bytes are read, so a file
  that grows while it is read cannot exhaust memory;
* text is UTF-8 (a BOM is allowed) and the error names the line;
* JSON: a key given twice in one object is refused with the key and the line
  (``json`` keeps the last value without a word); ``NaN`` and ``Infinity`` are
  not numbers of a price or a component; nesting deeper than :data:`MAX_DEPTH`
  is refused before parsing (the parser's RecursionError was a traceback);
* TOML: nesting deeper than :data:`MAX_DEPTH` likewise.

Each reader raises its own error class (passed as ``error``), so the callers
that catch it keep working; every message starts with the file's path.  This
module imports nothing of the project.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import stat
from pathlib import Path

__all__ = ["MAX_SIDE_FILE_BYTES", "MAX_DEPTH", "KeyGivenTwice", "unique_keys", "regular_file", "read_side_text",
           "csv_rows", "loads_json", "loads_toml", "line_of", "problem_and_fix"]

#: The largest side file read (64 MiB): price tables, rankings and component tables are kilobytes; task
#: metadata of a large benchmark a few megabytes.
MAX_SIDE_FILE_BYTES = 64 << 20
#: The deepest nesting of brackets or tables accepted in a JSON or TOML side file (real ones nest 3 deep).
MAX_DEPTH = 32


def _kind_of(mode: int) -> str:
    return ("a folder" if stat.S_ISDIR(mode) else "a named pipe (FIFO)" if stat.S_ISFIFO(mode) else
            "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "not a regular file")


def regular_file(path: str | Path, what: str, *, error=ValueError) -> os.stat_result:
    """The ``stat`` of ``path`` when it is a regular file; else ``error`` saying what it is, before it is opened.

    The one check for every file read beside the corpus, the fit files (HDF5) included: opening a FIFO
    blocks for good, a device never ends, and a folder gives the library's own message.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise error(f"{path}: the {what} does not exist. Fix: check the path.") from None
    except OSError as exc:
        raise error(f"{path}: the {what} cannot be read ({exc.strerror or exc}). Fix: check the file's permissions.") \
            from None
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{path}: this is {_kind_of(st.st_mode)}, not a regular file (reading it could block or never "
                    f"end). Fix: save the {what} to a regular file and name that.")
    return st


def read_side_text(path: str | Path, what: str, *, error=ValueError, max_bytes: int = MAX_SIDE_FILE_BYTES) -> str:
    """The text of a side file, through the gate (see the module docstring).

    Parameters
    ----------
    path
        The file.
    what
        What the file is, in words (``"token-price file"``): the messages name it.
    error
        The exception class to raise (the reader's own), called with one message.
    max_bytes
        The largest file read.

    Raises
    ------
    error
        A missing file, one that is not a regular file, one too large, unreadable or not UTF-8.
    """
    path = Path(path)
    st = regular_file(path, what, error=error)
    too_big = (f"{path}: the file is larger than {max_bytes:,} bytes, more than any {what} holds. Fix: check that "
               "it is the right file.")
    if st.st_size > max_bytes:
        raise error(too_big)
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)  # a file that grows while read stops here
    except OSError as exc:
        raise error(f"{path}: the {what} cannot be read ({exc.strerror or exc}). Fix: check the file's "
                    "permissions.") from None
    if len(data) > max_bytes:
        raise error(too_big)
    try:
        return data.decode("utf-8-sig") if not data.startswith((b"\xff\xfe", b"\xfe\xff")) else data.decode("utf-16")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(f"{path}, line {line}: byte 0x{data[exc.start]:02x} is not UTF-8. Fix: save the {what} as UTF-8.") \
            from None


def csv_rows(text: str, path: str | Path, what: str, *, error=ValueError, delimiter: str = ",") -> list[list[str]]:
    """The rows of a delimited side file; a row the csv module refuses (a field over its 128 KiB limit, a NUL
    byte) is an ``error`` naming the line, not a ``_csv.Error`` traceback.
    """
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        return list(reader)
    except csv.Error as exc:
        raise error(f"{path}, line {max(reader.line_num, 1)}: unreadable CSV ({exc}). Fix: a {what} has "
                    "short fields; check that it is the right file.") from None


def problem_and_fix(message: str) -> tuple[str, str]:
    """Split a gate message (``"<file>...: <problem>. Fix: <fix>."``, as every one here is written, the style of
    the corpus's issues) for readers whose errors keep the fix apart (:class:`~.corpus.issues.CorpusIssue`)."""
    problem, _, fix = message.partition(". Fix: ")
    return (problem, fix.rstrip(".")) if fix else (message.rstrip("."), "")


def line_of(text: str, needle: str, occurrence: int = 1) -> int | None:
    """The 1-based line of the ``occurrence``-th place ``needle`` appears in ``text`` (None if it does not)."""
    start = -1
    for _ in range(occurrence):
        start = text.find(needle, start + 1)
        if start < 0:
            return None
    return text.count("\n", 0, start) + 1


def _depth(text: str, single_quotes: bool) -> int:
    """The deepest bracket nesting of ``text`` outside quoted strings (``"..."``; TOML's ``'...'`` too)."""
    depth = deepest = 0
    quote = None
    escaped = False
    for ch in text:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\" and quote == '"':
                escaped = True
            elif ch == quote or ch == "\n":
                quote = None
            continue
        if ch == '"' or (ch == "'" and single_quotes):
            quote = ch
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _check_depth(text: str, path: Path, what: str, error, toml: bool = False) -> None:
    deepest = _depth(text, single_quotes=toml)
    dotted = max((len(m.group(1).split(".")) for m in re.finditer(r"^\s*\[\[?\s*([^\]]+)\]", text, re.M)),
                 default=0) if toml else 0
    if max(deepest, dotted) > MAX_DEPTH:
        raise error(f"{path}: the file nests more than {MAX_DEPTH} levels deep, deeper than any {what}. Fix: check "
                    "that it is the right file.")


class KeyGivenTwice(ValueError):
    """A JSON object gives one key twice (``key``: which); raised by :func:`unique_keys`."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def unique_keys(pairs: list) -> dict:
    """``json.loads``' ``object_pairs_hook`` for every JSON the product reads (side files, JSON-lines corpora,
    saved analyses): the object, or :class:`KeyGivenTwice`, never the last value kept without a word.
    ``dict()`` runs in C, so the common case costs one length comparison."""
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set = set()
        for k, _ in pairs:
            if k in seen:
                raise KeyGivenTwice(k)
            seen.add(k)
    return d


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number here")


def loads_json(text: str, path: str | Path, what: str, *, error=ValueError):
    """Parse a JSON side file strictly: duplicate keys, NaN/Infinity and deep nesting refused.

    Raises
    ------
    error
        With the file, the line and what to fix.
    """
    path = Path(path)
    _check_depth(text, path, what, error)
    try:
        return json.loads(text, object_pairs_hook=unique_keys, parse_constant=_no_constant)
    except KeyGivenTwice as exc:
        needle = json.dumps(exc.key, ensure_ascii=False)
        line = line_of(text, needle, 2) or line_of(text, json.dumps(exc.key), 2)
        where = f", line {line}" if line else ""
        raise error(f"{path}{where}: the key {exc.key!r} is given twice in one object (JSON would keep the last "
                    f"value without a word). Fix: keep one of them.") from None
    except json.JSONDecodeError as exc:
        raise error(f"{path}, line {exc.lineno}, column {exc.colno}: invalid JSON ({exc.msg}). Fix: "
                    f"correct the {what} there.") from None
    except (ValueError, RecursionError) as exc:
        raise error(f"{path}: invalid JSON ({exc}). Fix: correct the {what}.") from None


def loads_toml(text: str, path: str | Path, what: str, *, error=ValueError) -> dict:
    """Parse a TOML side file, deep nesting refused before the parser recurses.

    TOML itself refuses a key given twice.

    Raises
    ------
    error
        With the file, the line and what to fix.
    """
    import tomllib

    path = Path(path)
    _check_depth(text, path, what, error, toml=True)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {exc}. Fix: correct the {what} at the place named.") from None
    except RecursionError:
        raise error(f"{path}: the file nests too deep for any {what}. Fix: check that it is the right file.") \
            from None
