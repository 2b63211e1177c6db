"""Helpers shared by the importers: JSON lines with line numbers, scoring, resources.

Nothing here is a public importer; see :mod:`.terminal_bench`, :mod:`.pyirt`
and :mod:`.normalized`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ...side_files import KeyGivenTwice, unique_keys
from ..issues import CorpusError, CorpusIssue, error, warning

#: How much of a file the sniffers look at.
HEAD_BYTES = 65536

#: Scoring rules for verifier results (SPEC section 1; seed 002 (Krsteski et al. 2026) sec. 3 and 5.2).
SCORING_RULES = ("direct", "all-pass", "threshold")

#: At most this many located errors of one kind are listed one by one; the
#: rest are counted, so that a wholly wrong file gives a short, readable report.
MAX_LISTED = 20


def resources_dir() -> Path:
    """The folder of bundled resources (``resources/`` in the repository)."""
    from .... import resources as res  # ddr_explorer.resources (the repository's resources/)

    return Path(res.__file__).resolve().parent


def first_line(head: bytes) -> bytes:
    """The first non-blank line of ``head`` (possibly cut at the head's end)."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    for line in head.split(b"\n"):
        if line.strip():
            return line.strip()
    return b""


def head_object(head: bytes) -> dict | None:
    """The first line of ``head`` parsed as a JSON object, or None.

    Returns None when the line is cut by the head's end or is not an object;
    the sniffers then fall back to looking for key names in the bytes.
    """
    line = first_line(head)
    if not line.startswith(b"{"):
        return None
    try:
        obj = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return obj if isinstance(obj, dict) else None


def json_problem(exc: BaseException) -> str:
    """What ``json.loads`` refused, in words: the decoder's message, nesting too deep, a too-long integer."""
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at character {exc.colno}"
    if isinstance(exc, RecursionError):
        return "nested too deeply: lists or objects inside each other thousands of levels deep"
    return str(exc).split(";")[0]  # int_max_str_digits: "Exceeds the limit (4300 digits) ..."


def decode_text(data: bytes, path: Path) -> str:
    """Decode a JSON file as UTF-8 (a BOM is allowed), naming the line of a bad byte."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise CorpusError([error("encoding", f"byte {data[exc.start]:#04x} is not valid UTF-8.",
                                 "JSON files must be UTF-8: re-save the file as UTF-8.",
                                 file=path, row=line)]) from None


class NearInteger(float):
    """A JSON number that a float rounds to a whole number it is not (``0.99999999999999999`` -> 1.0).

    Not a ``float`` by ``type(...) is float`` (the importers' test for a 0/1 response or a whole count), so
    it is refused as the value it was written as (its ``repr``), never read as 1.
    """

    def __new__(cls, text: str):
        obj = super().__new__(cls, text)
        obj.text = text
        return obj

    def __repr__(self) -> str:
        return self.text

    def is_integer(self) -> bool:
        return False


def _float_as_written(text: str) -> float:
    """``json.loads``' ``parse_float``: the float, or a :class:`NearInteger` when rounding made it whole."""
    value = float(text)
    if value.is_integer() and value == value:
        from decimal import Decimal, InvalidOperation

        try:
            if Decimal(text) != Decimal(int(value)):
                return NearInteger(text)
        except (InvalidOperation, OverflowError, ValueError):
            return NearInteger(text)
    return value


def read_json_lines(path: Path) -> tuple[list[tuple[int, dict]], list[CorpusIssue]]:
    """Parse a JSON-lines file into ``(line number, object)`` pairs.

    Blank lines are skipped.  Lines that are not valid JSON, or hold something
    other than an object, become errors naming the line (at most
    :data:`MAX_LISTED` are listed, the rest counted) and are left out of the
    returned records, so that the caller can still report every other problem.

    Raises
    ------
    CorpusError
        If the file is empty or not UTF-8.
    """
    path = Path(path)
    data = path.read_bytes()
    if not data.strip():
        raise CorpusError([error("empty", "the file is empty.", "check that it is the right file.", file=path)])
    text = decode_text(data, path)
    records: list[tuple[int, dict]] = []
    issues: list[CorpusIssue] = []
    bad = 0
    loads = json.loads
    for i, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = loads(line, object_pairs_hook=unique_keys, parse_float=_float_as_written)
        except KeyGivenTwice as exc:  # json keeps the last value without a word: {"t1": 1, "t1": 0} read t1 as 0
            bad += 1
            if bad <= MAX_LISTED:
                issues.append(error("duplicate-json-key", f"the key {exc.key!r} is given twice in one object (JSON "
                                    "would keep the last value without a word).", "keep one of them.",
                                    file=path, row=i, column=exc.key))
            continue
        except (json.JSONDecodeError, RecursionError, ValueError) as exc:
            bad += 1
            if bad <= MAX_LISTED:
                issues.append(error("bad-json", f"invalid JSON ({json_problem(exc)}).",
                                    "each line must be one complete JSON object; fix or remove this line.",
                                    file=path, row=i))
            continue
        if not isinstance(obj, dict):
            bad += 1
            if bad <= MAX_LISTED:
                issues.append(error("bad-json", f"the line holds a JSON {type(obj).__name__}, not an object.",
                                    "each line must be one JSON object.", file=path, row=i))
            continue
        records.append((i, obj))
    if bad > MAX_LISTED:
        issues.append(error("bad-json", f"{bad - MAX_LISTED} more lines are not JSON objects.",
                            "check that this is a JSON-lines file.", file=path, count=bad - MAX_LISTED))
    return records, issues


def located(issues: list[CorpusIssue], code: str, message: str, fix: str, *, file, rows: list[int],
            column: str | None) -> None:
    """Append one error for the first of ``rows`` that counts all of them."""
    if rows:
        issues.append(error(code, message, fix, file=file, row=rows[0], column=column, count=len(rows)))


def score_verifiers(ver: pd.DataFrame, rule: str, *, gamma: float | None = None,
                    verifier: str | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    """Binary trial results from verifier results (SPEC section 1).

    This is a small local implementation kept in the importers on purpose:
    the project's rescoring module owns the general rules, and the importers
    only need the result the file is loaded with.  The verifier columns are
    always kept, so the corpus can be rescored later under another rule.

    Parameters
    ----------
    ver
        One column per verifier, values 0/1 or NaN (not reported).
    rule
        ``"direct"``: S = r_1 (the first verifier, or the one named by ``verifier``);
        ``"all-pass"``: S = prod r_i; ``"threshold"``: S = 1[mean(r) >= gamma].
        Missing verifier results are left out of the product and the mean.
    gamma
        The threshold, required by ``"threshold"``.
    verifier
        The verifier used by ``"direct"``.

    Returns
    -------
    result
        float array of 0/1, NaN where no verifier result exists.
    soft
        The soft score mean(r) (not binary, for reporting).
    description
        The rule in words, for provenance.
    """
    values = ver.to_numpy(dtype="float64", na_value=np.nan)
    have = ~np.isnan(values)
    n_have = have.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        soft = np.where(n_have > 0, np.nansum(values, axis=1) / np.maximum(n_have, 1), np.nan)
    if rule == "direct":
        name = verifier or str(ver.columns[0])
        if name not in ver.columns:
            raise KeyError(name)
        result = ver[name].to_numpy(dtype="float64", na_value=np.nan)
        desc = f"direct: result = verifier '{name}'"
    elif rule == "all-pass":
        result = np.where(n_have > 0, np.where(have, values, 1.0).prod(axis=1), np.nan)
        desc = f"all-pass: result = product of the verifiers ({', '.join(map(str, ver.columns))})"
    elif rule == "threshold":
        if gamma is None:
            raise ValueError("the threshold rule needs gamma")
        result = np.where(n_have > 0, (soft >= gamma).astype("float64"), np.nan)
        desc = f"threshold: result = 1 if mean of the verifiers >= {gamma}"
    else:
        raise ValueError(rule)
    return result, soft, desc


def check_scoring_options(path: Path, scoring: str | None, gamma: float | None) -> None:
    """Raise a CorpusError for a scoring rule or threshold that cannot be used."""
    if scoring is not None and scoring not in SCORING_RULES:
        raise CorpusError([error("bad-option", f"unknown scoring rule '{scoring}'.",
                                 f"use one of: {', '.join(SCORING_RULES)}.", file=path, column="scoring")])
    if scoring == "threshold":
        if gamma is None:
            raise CorpusError([error("bad-option", "the threshold scoring rule needs a threshold gamma.",
                                     "pass gamma (--gamma), e.g. 0.5 or 0.8.", file=path, column="gamma")])
        if not 0.0 <= float(gamma) <= 1.0:
            raise CorpusError([error("bad-option", f"gamma = {gamma} is outside [0, 1].",
                                     "gamma is compared with the mean of 0/1 verifier results.",
                                     file=path, column="gamma")])


def raise_if_nothing_left(n_records: int, issues: list[CorpusIssue]) -> None:
    """Raise the importer's own errors when they left no record at all.

    The validator would add "the file holds no records", which is true but
    hides the cause; the located errors already say what is wrong.
    """
    errors = [i for i in issues if i.severity == "error"]
    if n_records == 0 and errors:
        raise CorpusError(errors)


def ignored_options(path: Path, fmt: str, options: dict) -> list[CorpusIssue]:
    """Warnings for options given to an importer that has no use for them.

    :func:`load_corpus` passes the same options to whichever importer the
    file needs, so an option meant for another format is not an error; but it
    is said, so that a misspelt option does not pass unnoticed.
    """
    return [warning("option-ignored", f"the option {k}={v!r} does not apply to the {fmt} format and was ignored.",
                    "check its spelling, or leave it out for this file.", file=path, column=k)
            for k, v in options.items() if v is not None]
