"""Validation of a raw table into a :class:`Corpus` (SPEC section 1).

Every reader and importer produces a *raw* table with canonical column names
plus a ``_source_row`` column (the 1-based line of the file each record came
from) and hands it to :func:`build_corpus`.  Validation is vectorised so that a
corpus of a million records validates in about a second; each problem is
reported once, at its first row, with the number of rows it affects.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from . import schema
from ..errors import shown
from .corpus import Corpus
from .issues import CorpusError, CorpusIssue, error, warning

SOURCE_ROW = "_source_row"

_FIX_RESULT = (
    "give a binary 'result' column (0 or 1 per trial), or 'successes' and 'trials' "
    "columns for aggregated cells, or verifier columns 'verifier.<name>' with a scoring rule"
)


def _where(raw: pd.DataFrame, mask: np.ndarray) -> tuple[int | None, int]:
    """First source row where ``mask`` holds, and how many rows it holds for."""
    idx = np.flatnonzero(mask)
    if idx.size == 0:
        return None, 0
    first = idx[0]
    row = int(raw[SOURCE_ROW].iat[first]) if SOURCE_ROW in raw else int(first) + 1
    return row, int(idx.size)


def _value(raw: pd.DataFrame, column: str, mask: np.ndarray):
    return raw[column].iat[int(np.flatnonzero(mask)[0])]


#: Most trials (or successes) one record may count: far above any evaluation, far below where int64 sums
#: or float64 arithmetic stop being exact (a timestamp or an id read as a count lands far above it).
MAX_COUNT = 10 ** 9

#: A decimal number as text: digits, an optional fraction and exponent (no hex, no underscores, no words).
#: A decimal number in ASCII digits: the regex engine's \d also matches Arabic-Indic ("١") and full-width
#: ("１") digits, which then failed pyarrow's cast with a traceback (ArrowInvalid).
_DECIMAL = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"


def non_scalar_kind(col: pd.Series) -> tuple[str | None, np.ndarray]:
    """What a column holds instead of plain numbers or text, and where: dates, true/false, lists, bytes.

    Returns ``(None, empty mask)`` for a column of numbers or strings.  Parquet and JSON keep types that
    a count or a name must not silently become (a timestamp is 1.7e18 nanoseconds; ``True`` is 1).
    """
    dtype = col.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "true/false values", col.notna().to_numpy()
    if pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype) or \
            isinstance(dtype, pd.PeriodDtype):
        return "dates or times", col.notna().to_numpy()
    if dtype == object:
        if pd.api.types.infer_dtype(col, skipna=True) in ("string", "integer", "floating", "mixed-integer-float",
                                                          "decimal", "empty"):
            return None, np.zeros(len(col), dtype=bool)  # the common case, decided in C without a Python loop
        kinds = col.map(lambda v: "lists or objects" if isinstance(v, (list, tuple, dict, set, np.ndarray)) else
                        "raw bytes" if isinstance(v, (bytes, bytearray)) else
                        "true/false values" if isinstance(v, (bool, np.bool_)) else
                        "dates or times" if hasattr(v, "isoformat") else None)
        mask = kinds.notna().to_numpy()
        if mask.any():
            return str(kinds[mask].iloc[0]), mask
    return None, np.zeros(len(col), dtype=bool)


def _coerce_int(raw: pd.DataFrame, column: str, file, src: str, issues: list[CorpusIssue]) -> pd.Series | None:
    """Convert a column to int64, reporting every value that is not a whole count from 0 to :data:`MAX_COUNT`.

    Whatever the container typed the column as (text, float, int, bool, timestamp, list), only whole
    decimal numbers pass; a refused value is quoted as the file wrote it.
    """
    col = raw[column]
    kind, mask = non_scalar_kind(col)
    if kind:
        row, n = _where(raw, mask)
        issues.append(error("not-a-count", f"'{src}' holds {kind} ({shown(_value(raw, column, mask))[:60]}), "
                            "not counts of trials.", f"write whole numbers in '{src}' (a count per record, "
                            "e.g. 3); check that the right column is mapped to it.",
                            file=file, row=row, column=src, count=n))
        return None
    if pd.api.types.is_numeric_dtype(col.dtype):
        num = col.astype("float64")
        missing = col.isna().to_numpy()
        notnum = np.zeros(len(col), dtype=bool)
    else:
        text = col.astype("string[pyarrow]").str.strip()  # pyarrow's string kernels: a million rows in ~0.1 s
        missing = (text.isna() | (text == "")).to_numpy()
        ok = text.str.fullmatch(_DECIMAL).fillna(False).to_numpy(dtype=bool)
        # the strings passed the pattern, so pyarrow's cast reads them exactly as decimal numbers (fast)
        num = pd.Series(pc.cast(pa.array(text.where(ok), type=pa.string()), pa.float64())
                        .to_numpy(zero_copy_only=False), index=col.index)
        notnum = ~missing & ~ok
        inexact = _not_exactly(text, ok, lambda d: d == d.to_integral_value())
    values = num.to_numpy()
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(values)
        nonfinite = ~missing & ~notnum & ~finite
        frac = finite & (values != np.floor(values))
        if not pd.api.types.is_numeric_dtype(col.dtype):
            frac |= inexact  # '0.99999999999999999' is 1.0 as a float, and not a whole number as written
        huge = finite & ~frac & (np.abs(values) > MAX_COUNT)
    bad = notnum | nonfinite | frac
    if bad.any():
        row, n = _where(raw, bad)
        v = _value(raw, column, bad)
        what = "is not a finite number" if nonfinite[np.flatnonzero(bad)[0]] else "is not a whole number"
        issues.append(error("not-an-integer", f"'{v}' {what}.", f"write whole numbers in '{src}'.",
                            file=file, row=row, column=src, count=n))
    if huge.any():
        row, n = _where(raw, huge)
        issues.append(error("count-too-large", f"'{_value(raw, column, huge)}' is more than {MAX_COUNT:,} trials in "
                            "one record.", f"check that '{src}' holds counts of trials (not ids, timestamps or "
                            "sizes); split a larger cell into several records.", file=file, row=row, column=src,
                            count=n))
    if missing.any():
        row, n = _where(raw, missing)
        issues.append(error("missing-value", f"'{src}' is empty.", f"fill in '{src}' or drop the row.",
                            file=file, row=row, column=src, count=n))
    if bad.any() or huge.any() or missing.any():
        return None
    return pd.Series(values.astype("int64"), index=col.index)


def _not_exactly(text: pd.Series, ok: np.ndarray, test) -> np.ndarray:
    """Rows whose decimal text (``ok``: it parses as a number) fails ``test`` on its exact value.

    A float holds about 16 digits, so ``0.99999999999999999`` reads as 1.0: a count or a result written
    so is decided on the decimal as written (:class:`decimal.Decimal`), once per distinct text with a
    point or an exponent (few), never on its rounded float.
    """
    from decimal import Decimal, InvalidOperation

    marked = ok & text.str.contains(r"[.eE]", regex=True).fillna(False).to_numpy(dtype=bool)
    if not marked.any():
        return np.zeros(len(text), dtype=bool)
    bad = set()
    for u in pd.unique(text[marked]):
        try:
            d = Decimal(str(u))
            if abs(d.adjusted()) > 30 or not test(d):  # 1e999999 is no count; Decimal would build it
                bad.add(u)
        except (InvalidOperation, ValueError):
            bad.add(u)
    return marked & text.isin(bad).fillna(False).to_numpy(dtype=bool)


def _binary_result(raw: pd.DataFrame, file, src: str, issues: list[CorpusIssue]) -> pd.Series | None:
    """Parse a binary result column: 0/1, true/false, pass/fail."""
    col = raw[schema.RESULT]
    if col.dtype == bool:
        return col.astype("int64")
    if pd.api.types.is_numeric_dtype(col.dtype):
        num = col.astype("float64")
    else:
        # the common case in C: every value written "0" or "1" (a CSV's result column arrives as text)
        arr = pa.array(col.astype("string[pyarrow]"))
        if arr.null_count == 0 and pc.all(pc.is_in(arr, value_set=pa.array(["0", "1"]))).as_py():
            return pd.Series(pc.equal(arr, "1").to_numpy(zero_copy_only=False).astype("int64"), index=col.index)
        text = col.astype("string").str.strip().str.lower()
        mapped = text.map({"true": 1.0, "false": 0.0, "pass": 1.0, "fail": 0.0, "passed": 1.0, "failed": 0.0,
                           "yes": 1.0, "no": 0.0, "success": 1.0, "failure": 0.0})
        num = pd.to_numeric(text, errors="coerce").astype("float64")
        # a number that rounds to 0 or 1 but is not exactly one of them is not binary ('0.99999999999999999')
        inexact = _not_exactly(text, num.isin((0.0, 1.0)).to_numpy(), lambda d: d in (0, 1))
        num = num.where(~inexact, 0.5)
        num = num.where(num.notna(), mapped.astype("float64"))
    missing = num.isna().to_numpy()
    nonbinary = ~missing & ~np.isin(num.to_numpy(), (0.0, 1.0))
    if missing.any():
        row, n = _where(raw, missing)
        issues.append(error("missing-result", f"the result is empty or not a number ('{_value(raw, schema.RESULT, missing)}').",
                            f"write 0 or 1 in '{src}', or drop the row.", file=file, row=row, column=src, count=n))
    if nonbinary.any():
        row, n = _where(raw, nonbinary)
        v = _value(raw, schema.RESULT, nonbinary)  # text as written (CSV reads the result as text), else the value
        issues.append(error("non-binary-result", f"the result {v if isinstance(v, str) and v.strip() else shown(v)} "
                            "is not 0 or 1.",
                            "a trial result must be binary: binarise scores with a threshold rule "
                            "(--scoring threshold --gamma G), or give 'successes' and 'trials' for aggregated cells.",
                            file=file, row=row, column=src, count=n))
    if missing.any() or nonbinary.any():
        return None
    return num.astype("int64")


def _stripped_category(col: pd.Series) -> pd.Series:
    """A facet column as a categorical of stripped strings; empty values become NaN.

    Stripping works on the categories, not the rows, so a million-row column
    with a few thousand distinct names costs a factorisation, not a million
    string operations.
    """
    if not isinstance(col.dtype, pd.CategoricalDtype):
        col = col.astype("category")
    cats = pd.Index(col.cat.categories.astype("string").str.strip())
    new_codes, uniques = pd.factorize(cats)
    old = col.cat.codes.to_numpy()
    codes = np.where(old >= 0, new_codes[np.maximum(old, 0)], -1)
    uniques = pd.Index(uniques, dtype="string")
    if (uniques == "").any():  # an empty name is a missing value
        empty_code = int(np.flatnonzero(uniques == "")[0])
        codes = np.where(codes == empty_code, -1, codes - (codes > empty_code))
        uniques = uniques.delete(empty_code)
    return pd.Series(pd.Categorical.from_codes(codes, categories=uniques.astype(object).astype(str)), index=col.index)


def _facet(raw: pd.DataFrame, c: str, fname, src: str, issues: list[CorpusIssue]) -> pd.Series | None:
    """A facet column (names of levels) as stripped categories, or None with an issue.

    Names are text (or numbers): lists, objects, bytes, dates or true/false in a name column are refused.
    Then every name passes :func:`.names.check_names`: NFC, and no control (C0, DEL, C1), invisible or
    odd-space character; names that differ only by look-alike letters are warned about.
    """
    from .names import check_names

    kind, mask = non_scalar_kind(raw[c])
    if kind:
        row, n = _where(raw, mask)
        issues.append(error("not-a-name", f"'{src}' holds {kind} ({shown(_value(raw, c, mask))[:60]}), not names.",
                            f"write each {c}'s name as text; check that the right column is mapped to '{c}'.",
                            file=fname, row=row, column=src, count=n))
        return None
    try:
        col = _stripped_category(raw[c])
    except (TypeError, ValueError, UnicodeDecodeError, pa.ArrowException) as exc:  # unhashable or undecodable
        issues.append(error("not-a-name", f"'{src}' cannot be read as names ({exc}).",
                            f"write each {c}'s name as text.", file=fname, column=src))
        return None
    return check_names(col, raw, c, fname, src, issues)


def _check_result_agrees(raw: pd.DataFrame, k: pd.Series, n: pd.Series, fname, src: str,
                         issues: list[CorpusIssue]) -> None:
    """A 'result' column beside successes/trials: refuse it where it contradicts them, else say it is unused.

    It contradicts a record of one trial when it differs from the successes, and a record of several
    trials when it says pass where none passed or fail where all passed.
    """
    scratch: list[CorpusIssue] = []
    given = raw[schema.RESULT].notna().to_numpy()  # JSON lines may give a result on some records only
    r = _binary_result(raw.loc[given], fname, src, scratch)
    if r is None:
        issues.extend(scratch)
        return
    rv, kv, nv = r.to_numpy(), k.to_numpy()[given], n.to_numpy()[given]
    raw = raw.loc[given]
    bad = ((nv == 1) & (rv != kv)) | ((nv > 1) & (((rv == 1) & (kv == 0)) | ((rv == 0) & (kv == nv))))
    if bad.any():
        row, cnt = _where(raw, bad)
        i0 = int(np.flatnonzero(bad)[0])
        issues.append(error("result-contradicts-counts", f"the result {rv[i0]} contradicts successes/trials "
                            f"{kv[i0]}/{nv[i0]}.", f"give either '{src}' (one row per trial) or successes and "
                            "trials, not both; or correct the row.", file=fname, row=row, column=src, count=cnt))
    else:
        issues.append(warning("result-unused", f"'{src}' is given beside successes and trials; the counts are used "
                              "and the result column is ignored.", f"drop '{src}' to silence this.",
                              file=fname, column=src))


def _guessed_columns(raw: pd.DataFrame, sources: dict[str, str], missing: list[str]) -> str | None:
    """The ``--columns`` line the column guesser (:mod:`.column_guess`, the app's import dialog) would
    use on this file, plus ``--benchmark NAME`` when no column can be the benchmark; None when it
    guesses nothing."""
    from .column_guess import guess_roles, to_mapping

    head = raw[[c for c in raw.columns if not str(c).startswith("_")]].head(200)
    head = head.rename(columns={c: sources.get(c, c) for c in head.columns})
    try:
        mapping = to_mapping(guess_roles(head))
    except Exception:  # noqa: BLE001 - a hint must never hide the error it explains
        return None
    mapping.columns = {r: c for r, c in mapping.columns.items() if not r.startswith(schema.VERIFIER_PREFIX)}
    if not mapping.columns:
        return None
    line = f"--columns {mapping.to_text()}"
    if "benchmark" in missing and "benchmark" not in mapping.columns:
        line += " --benchmark NAME"
    return f"the column guesser reads this file as: {line} (check it, then run again with it)"


def _suggest(missing: str, columns: list[str], guess: str | None = None) -> str:
    names = [str(c) for c in columns if not str(c).startswith("_")]
    close = difflib.get_close_matches(missing, names, n=1, cutoff=0.6)
    syn = ", ".join(schema.SYNONYMS.get(missing, ())[:4])
    fix = f"add a '{missing}' column"
    if close:
        fix = f"rename '{close[0]}' to '{missing}'"
    if syn:
        fix += f" (accepted synonyms: {syn})"
    # or say which column it is without editing the file (core/corpus/columns.py)
    fix += f", or map a column to it: --columns {missing}=<column> (dotted names reach into nested JSON)"
    if missing in ("benchmark", "scaffold"):
        fix += f", or name one {missing} for every row: --{missing} NAME"
    if guess:
        fix += f"; {guess}"
    return fix + "."


def build_corpus(raw: pd.DataFrame, *, file: str | Path | None, format: str, name: str | None = None,
                 provenance: dict | None = None, column_sources: dict[str, str] | None = None,
                 issues: list[CorpusIssue] | None = None) -> Corpus:
    """Validate a raw canonical-named table and return a :class:`Corpus`.

    Parameters
    ----------
    raw
        Canonical column names (:mod:`.schema`); results as ``result`` (0/1) or
        ``successes`` + ``trials``; optional ``_source_row`` with 1-based file lines.
    file
        The file the table came from, named in every message.
    format
        The reader's name, kept in :attr:`Corpus.format`.
    provenance
        What the reader did (mapping rules, attribution), kept on the corpus.
    column_sources
        Canonical name -> column name as written in the file, for messages.
    issues
        Problems found already by the reader; errors among them make this raise.

    Raises
    ------
    CorpusError
        With every error found (missing columns, non-binary results, successes >
        trials, negative or NaN cost, duplicate keys, empty file, ...).
    """
    issues = list(issues or [])
    sources = dict(column_sources or {})
    src = lambda c: sources.get(c, c)  # noqa: E731 - the name the user wrote
    fname = None if file is None else str(file)

    if len(raw) == 0:
        issues.append(error("empty", "the file holds no records.",
                            "check that it is the right file and that it has rows below the header.", file=fname))
        raise CorpusError([i for i in issues if i.severity == "error"] or issues)

    # the file's own names: not the canonical names synonyms gave them, not the constants of --columns
    header = [src(str(x)) for x in raw.columns if not str(x).startswith("_") and "==" not in src(str(x))]
    missing = [c for c in schema.REQUIRED_FACETS if c not in raw.columns]
    if schema.SCAFFOLD in missing:  # one scaffold, said, rather than a refusal
        raw = raw.assign(**{schema.SCAFFOLD: schema.SCAFFOLD_NOT_NAMED})
        missing.remove(schema.SCAFFOLD)
        sources[schema.SCAFFOLD] = f"none in the file: '{schema.SCAFFOLD_NOT_NAMED}'"
        issues.append(warning("scaffold-not-named", f"the file has no scaffold column: every record gets the one "
                              f"scaffold '{schema.SCAFFOLD_NOT_NAMED}', so fits have no scaffold terms and a model's "
                              "effect is its effect in the harness that ran it.",
                              "name the harness with --scaffold NAME, or map a column to it with --columns "
                              "scaffold=COLUMN.", file=fname, column=schema.SCAFFOLD, count=len(raw)))
    has_result = schema.RESULT in raw.columns
    has_cells = schema.SUCCESSES in raw.columns or schema.TRIALS in raw.columns
    no_result = not has_result and not has_cells
    guess = _guessed_columns(raw, sources, [*missing, *(["result"] if no_result else [])]) \
        if missing or no_result else None
    for i, c in enumerate(missing):  # the guesser's line once, with the first missing role
        issues.append(error("missing-column", f"no '{c}' column (columns found: {', '.join(header)}).",
                            _suggest(c, header, guess if i == 0 else guess and "or use the column guesser's "
                                     "--columns line above"), file=fname, column=c))
    if no_result:
        hint = (guess if not missing else "or use the column guesser's --columns line above") if guess else None
        issues.append(error("missing-column", f"no result column (columns found: {', '.join(header)}).",
                            _FIX_RESULT + (f"; {hint}" if hint else "") + ".", file=fname, column="result"))
    elif has_cells and not (schema.SUCCESSES in raw.columns and schema.TRIALS in raw.columns):
        have = schema.SUCCESSES if schema.SUCCESSES in raw.columns else schema.TRIALS
        need = schema.TRIALS if have == schema.SUCCESSES else schema.SUCCESSES
        issues.append(error("missing-column", f"'{src(have)}' is given without '{need}'.",
                            f"add a '{need}' column (aggregated cells need both).", file=fname, column=need))
    if any(i.severity == "error" for i in issues):
        raise CorpusError([i for i in issues if i.severity == "error"])

    out: dict[str, pd.Series] = {}
    for c in schema.REQUIRED_FACETS:
        facet = _facet(raw, c, fname, src(c), issues)
        if facet is None:
            continue
        out[c] = facet
        empty = out[c].isna().to_numpy()
        if empty.any():
            row, n = _where(raw, empty)
            issues.append(error("missing-value", f"'{src(c)}' is empty (or a missing-value marker such as NA, "
                                "null or NaN, which the reader takes as empty).",
                                f"fill in the {c} name or drop the row.", file=fname, row=row, column=src(c), count=n))
    if schema.TRIAL_ID in raw.columns:
        facet = _facet(raw, schema.TRIAL_ID, fname, src(schema.TRIAL_ID), issues)
        if facet is not None:
            out[schema.TRIAL_ID] = facet

    # -- results ---------------------------------------------------------------
    if schema.SUCCESSES in raw.columns:
        k = _coerce_int(raw, schema.SUCCESSES, fname, src(schema.SUCCESSES), issues)
        n = _coerce_int(raw, schema.TRIALS, fname, src(schema.TRIALS), issues)
        if k is not None and n is not None:
            bad_n = (n < 1).to_numpy()
            if bad_n.any():
                row, cnt = _where(raw, bad_n)
                issues.append(error("trials-not-positive", f"trials = {n[bad_n].iloc[0]}; a cell needs at least one trial.",
                                    "drop cells with no trials.", file=fname, row=row, column=src(schema.TRIALS), count=cnt))
            neg = (k < 0).to_numpy()
            if neg.any():
                row, cnt = _where(raw, neg)
                issues.append(error("negative-successes", f"successes = {k[neg].iloc[0]} is negative.",
                                    "count successes from 0.", file=fname, row=row, column=src(schema.SUCCESSES), count=cnt))
            over = (k > n).to_numpy()
            if over.any():
                row, cnt = _where(raw, over)
                i0 = int(np.flatnonzero(over)[0])
                issues.append(error("successes-exceed-trials",
                                    f"successes ({k.iat[i0]}) > trials ({n.iat[i0]}).",
                                    "check the two columns are not swapped; successes count the trials that passed.",
                                    file=fname, row=row, column=src(schema.SUCCESSES), count=cnt))
            out[schema.SUCCESSES], out[schema.TRIALS] = k, n
            if schema.RESULT in raw.columns:
                _check_result_agrees(raw, k, n, fname, src(schema.RESULT), issues)
    else:
        r = _binary_result(raw, fname, src(schema.RESULT), issues)
        if r is not None:
            out[schema.SUCCESSES] = r
            out[schema.TRIALS] = pd.Series(np.ones(len(raw), dtype="int64"), index=raw.index)

    # -- optional numeric metadata ------------------------------------------------
    for c in schema.NUMERIC_METADATA:
        if c not in raw.columns:
            continue
        col = raw[c]
        num = pd.to_numeric(col, errors="coerce").astype("float64")
        notnum = (num.isna() & col.notna() & (col.astype("string").str.strip() != "")).to_numpy()
        if notnum.any():
            row, cnt = _where(raw, notnum)
            issues.append(error("not-a-number", f"'{_value(raw, c, notnum)}' is not a number.",
                                f"write a number in '{src(c)}'.", file=fname, row=row, column=src(c), count=cnt))
        infinite = np.isinf(num.to_numpy())
        if infinite.any():
            row, cnt = _where(raw, infinite)
            issues.append(error("not-finite", f"'{_value(raw, c, infinite)}' is not a finite number.",
                                f"write a finite number in '{src(c)}' (leave it empty where it is unknown).",
                                file=fname, row=row, column=src(c), count=cnt))
        if c == schema.COST:
            nan = num.isna().to_numpy() & ~notnum
            if nan.any():
                row, cnt = _where(raw, nan)
                issues.append(error("missing-cost", "the cost is empty (NaN).",
                                    "fill in the cost in USD for every row, or drop the cost column and give a "
                                    "price per trial per benchmark instead.",
                                    file=fname, row=row, column=src(c), count=cnt))
            neg = (num < 0).to_numpy()
            if neg.any():
                row, cnt = _where(raw, neg)
                issues.append(error("negative-cost", f"the cost {num[neg].iloc[0]} is negative.",
                                    "costs are USD spent on the row's trials and must be >= 0.",
                                    file=fname, row=row, column=src(c), count=cnt))
        elif c != "difficulty":
            neg = (num < 0).to_numpy()
            if neg.any():
                row, cnt = _where(raw, neg)
                issues.append(error("negative-value", f"'{src(c)}' is negative ({num[neg].iloc[0]}).",
                                    f"'{src(c)}' counts something and must be >= 0.",
                                    file=fname, row=row, column=src(c), count=cnt))
        out[c] = num
    if schema.SOFT_SCORE in raw.columns:
        out[schema.SOFT_SCORE] = pd.to_numeric(raw[schema.SOFT_SCORE], errors="coerce").astype("float64")
    for c in raw.columns:
        if str(c).startswith(schema.VERIFIER_PREFIX):
            v = pd.to_numeric(raw[c], errors="coerce")
            bad = (v.notna() & ~v.isin([0, 1])).to_numpy() | (v.isna() & raw[c].notna()).to_numpy()
            if bad.any():
                row, cnt = _where(raw, bad)
                issues.append(error("non-binary-verifier", f"verifier result {shown(_value(raw, c, bad))} is not 0 or 1.",
                                    "verifier results must be binary (0/1); leave a missing result empty.",
                                    file=fname, row=row, column=src(c), count=cnt))
            out[c] = v.astype("Int8") if not bad.any() else v
    for c in (*schema.TEXT_METADATA, *schema.EXTRA_FACETS):
        if c in raw.columns:
            out[c] = raw[c].astype("string").astype("category")
    for c in raw.columns:  # anything else the file had is kept, untouched
        if c not in out and c not in (schema.RESULT, SOURCE_ROW) and not str(c).startswith("_"):
            out[c] = raw[c]

    if any(i.severity == "error" for i in issues):
        raise CorpusError([i for i in issues if i.severity == "error"])

    table = pd.DataFrame(out, index=pd.RangeIndex(len(raw)))
    _check_duplicates(table, raw, fname, src, issues)
    if any(i.severity == "error" for i in issues):
        raise CorpusError([i for i in issues if i.severity == "error"])
    issues.extend(design_warnings(table, fname))

    order = [c for c in schema.CANONICAL_ORDER if c in table.columns]
    order += sorted(c for c in table.columns if c.startswith(schema.VERIFIER_PREFIX))
    order += [c for c in table.columns if c not in order]
    table = table[order]
    stem = Path(fname).stem if fname else "corpus"
    return Corpus(table=table, name=name or stem, source=None if fname is None else Path(fname),
                  format=format, warnings=[i for i in issues if i.severity == "warning"],
                  provenance=dict(provenance or {}))


def _check_duplicates(table: pd.DataFrame, raw: pd.DataFrame, fname, src, issues: list[CorpusIssue]) -> None:
    # seed 003 (DDR paper 2026)'s extra facets (step, error category, judge) name checks within a trial: part of the record's key
    key = [c for c in (*schema.RECORD_KEY, *schema.EXTRA_FACETS) if c in table.columns]
    codes = [table[c].cat.codes.to_numpy().astype("int64") if isinstance(table[c].dtype, pd.CategoricalDtype)
             else pd.factorize(table[c], use_na_sentinel=True)[0].astype("int64") for c in key]
    # one integer per key through mixed-radix codes (cheaper than hashing strings), re-factorised after each
    # column so that it stays below the row count: the plain product of the radices overflowed int64 with
    # many levels (1,024 rows over seven key columns), and distinct records then compared equal
    combined = np.zeros(len(table), dtype="int64")
    for c, col in zip(key, codes):
        combined = pd.factorize(combined * (int(col.max()) + 2) + (col + 1))[0].astype("int64")
    dup = pd.Series(combined).duplicated(keep=False).to_numpy()
    if dup.any():
        later = pd.Series(combined).duplicated(keep="first").to_numpy()
        row, cnt = _where(raw, later)
        i0 = int(np.flatnonzero(later)[0])
        first_i = int(np.flatnonzero(dup & (combined == combined[i0]))[0])
        first_row = int(raw[SOURCE_ROW].iat[first_i]) if SOURCE_ROW in raw else first_i + 1
        what = ", ".join(f"{c}={table[c].iat[i0]}" for c in key)
        fix = ("give each repeated trial its own id in a 'trial' column"
               if schema.TRIAL_ID not in table.columns else "remove the repeated row or give it a distinct trial id")
        issues.append(error("duplicate-key", f"duplicate record ({what}); first seen on line {first_row}.",
                            fix + ".", file=fname, row=row, column=src(key[-1]), count=cnt))


#: Model or scaffold ids that name no single one (compared after ``schema.normalise_name``).
PLACEHOLDER_IDS = frozenset({"multiple", "mixed", "various", "varies", "several", "unknown", "other", "n_a", "na",
                             "none", "unspecified", "not_specified", "ensemble"})


#: Codes of :func:`design_warnings`: a slice of the corpus recomputes these for its own rows.
DESIGN_WARNING_CODES = frozenset({"task-all-fail", "task-all-pass", "model-seen-once", "scaffold-seen-once",
                                  "task-one-model", "model-placeholder", "scaffold-placeholder",
                                  "scaffold-confounded"})


def design_warnings(table: pd.DataFrame, fname) -> list[CorpusIssue]:
    """Warnings about the design that are worth listing but not fatal (codes: :data:`DESIGN_WARNING_CODES`)."""
    out: list[CorpusIssue] = []
    per_task = table.groupby(["benchmark", "task"], observed=True)[[schema.SUCCESSES, schema.TRIALS]].sum()
    all0 = per_task[schema.SUCCESSES] == 0
    all1 = per_task[schema.SUCCESSES] == per_task[schema.TRIALS]
    n_tasks = len(per_task)
    if all0.any():
        ex = ", ".join(f"{b}/{t}" for b, t in per_task.index[all0.to_numpy()][:3])
        out.append(warning("task-all-fail", f"{int(all0.sum())} of {n_tasks} tasks were never solved (e.g. {ex}).",
                           "they carry no information on model differences; consider whether they are broken.",
                           file=fname, column="task", count=int(all0.sum())))
    if all1.any():
        ex = ", ".join(f"{b}/{t}" for b, t in per_task.index[all1.to_numpy()][:3])
        out.append(warning("task-all-pass", f"{int(all1.sum())} of {n_tasks} tasks were always solved (e.g. {ex}).",
                           "they carry no information on model differences.", file=fname, column="task",
                           count=int(all1.sum())))
    for facet in ("model", "scaffold"):
        n_rec = table.groupby(facet, observed=True).size()
        once = n_rec[n_rec == 1]
        if len(once):
            out.append(warning(f"{facet}-seen-once", f"{len(once)} {facet}s appear in a single record "
                               f"(e.g. {', '.join(map(str, once.index[:3]))}).",
                               f"their {facet} effect rests on one observation; its estimate is mostly prior.",
                               file=fname, column=facet, count=len(once)))
    per_task_agents = table.groupby(["benchmark", "task"], observed=True)["model"].nunique()
    lone = per_task_agents[per_task_agents < 2]
    if len(lone):
        out.append(warning("task-one-model", f"{len(lone)} tasks were attempted by a single model.",
                           "task-by-model interaction is not informed for them.", file=fname, column="task",
                           count=len(lone)))
    for facet in ("model", "scaffold"):
        # a leaderboard's placeholder ("Multiple": an agent that switched models) is not one model: ranked as
        # one it mixes several; say so at import, the user decides whether to keep it
        vague = sorted({str(v) for v in table[facet].astype(str).unique()
                        if schema.normalise_name(v) in PLACEHOLDER_IDS})
        if vague:
            out.append(warning(f"{facet}-placeholder", f"{facet} {', '.join(repr(v) for v in vague)} names no single "
                               f"{facet}: leaderboards use it for runs that mixed several or did not say which.",
                               f"it is fitted and ranked as one {facet}; read its rank as that mixture's, or drop its "
                               "rows (a slice, or a filtered file) to rank single models only.",
                               file=fname, column=facet, count=len(vague)))
    scaffold_models = table.groupby("scaffold", observed=True)["model"].nunique()
    if table["scaffold"].nunique() > 1 and (scaffold_models == 1).all():
        out.append(warning("scaffold-confounded", "every scaffold is used with a single model, so scaffold and "
                           "model effects are confounded.", "evaluate some models under several scaffolds.",
                           file=fname, column="scaffold"))
    return out
