"""Slices of tasks: restrict a corpus to the tasks whose metadata match.

A *slice* keeps the tasks of a corpus whose task-level value in one column
matches, and every record of those tasks.  Any G-study, D-study or frontier
run on the sliced corpus is then the study of that slice (seed 002 (Krsteski et al. 2026) sec. 5.1
reads the frontier per benchmark group; seed 003 (DDR paper 2026) sec. 5.3 fits one G-study per
difficulty stratum).  The text form, used by ``ddr ... --slice`` and saved
with an analysis::

    task_group=enterprise            one value
    task_group=enterprise|gui        any of several values
    human_minutes=60..480            a numeric range, both ends included
    human_minutes=..30               up to 30;  human_minutes=240..  from 240

Several conditions (``--slice`` given twice, or joined with ``;``) must all
hold.  A column is task-level when it has one value per task (``benchmark``
and ``task`` themselves, ``task_group``, ``human_minutes``, ``difficulty``,
``difficulty_label``, or any other such column of the file); a column that
varies within a task (a model's ``release_date``, ``cost``) cannot choose
tasks and is refused, except ``model`` and ``scaffold``: ``model=a|b|c`` keeps
those models' records (a subset of the compared objects) and the tasks they ran.
A condition that names no column of the corpus, or
matches no task, is an error that names the column and lists the values (or
the range) available.

The slice text travels with the corpus (``provenance["slice"]``), is part of
the fit cache key (:func:`~ddr_explorer.core.fitting.fit_key`) and is printed
on the DDR sheet and in the app's header.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import schema
from .issues import CorpusError, error

__all__ = ["SliceCondition", "parse_slice", "slice_text", "apply_slice", "task_level_columns", "slice_choices"]

#: Record facets a slice may name: it then keeps those models' (or scaffolds') records, a subset of what is
#: compared, and the tasks they ran.
RECORD_FACETS = ("model", "scaffold")

#: Columns that are never task metadata (results, trials and per-record facets).
_NOT_TASK_LEVEL = {"model", "scaffold", schema.TRIAL_ID, schema.SUCCESSES, schema.TRIALS, schema.SOFT_SCORE,
                   "step", "error_category", "judge"}


@dataclass(frozen=True)
class SliceCondition:
    """One condition of a slice: a column and either a set of values or a closed numeric range.

    Attributes
    ----------
    column
        The corpus column (``task_group``, ``human_minutes``, ...).
    values
        The accepted values (text), or None for a range.
    lo, hi
        The range's ends (inclusive; ``-inf`` / ``inf`` when open), when ``values`` is None.
    """

    column: str
    values: tuple[str, ...] | None = None
    lo: float = -math.inf
    hi: float = math.inf

    def text(self) -> str:
        """The condition as ``--slice`` reads it."""
        if self.values is not None:
            return f"{self.column}={'|'.join(self.values)}"

        def end(x: float) -> str:
            return "" if math.isinf(x) else f"{x:g}"

        return f"{self.column}={end(self.lo)}..{end(self.hi)}"


def _bad(message: str, fix: str, column: str | None = None, file=None) -> CorpusError:
    return CorpusError([error("bad-slice", message, fix, file=file, column=column)])


def parse_slice(text, file=None) -> tuple[SliceCondition, ...]:
    """``"task_group=a|b;human_minutes=60..480"`` (or a list of such texts) -> the conditions.

    Raises
    ------
    CorpusError
        A condition without ``=``, with an empty column or value, or a range whose ends are not numbers.
    """
    if text is None:
        return ()
    parts = [text] if isinstance(text, str) else list(text)
    out: list[SliceCondition] = []
    for raw in (p for chunk in parts for p in str(chunk).split(";")):
        raw = raw.strip()
        if not raw:
            continue
        col, sep, value = raw.partition("=")
        col, value = col.strip(), value.strip()
        if not sep or not col or not value:
            raise _bad(f"slice {raw!r} is not COLUMN=VALUE", "write e.g. task_group=enterprise or "
                       "human_minutes=60..480 (a numeric range, ends included)", file=file)
        col = schema.synonym_table().get(schema.normalise_name(col), col)
        if ".." in value:
            lo_t, _, hi_t = value.partition("..")
            try:
                lo = float(lo_t) if lo_t.strip() else -math.inf
                hi = float(hi_t) if hi_t.strip() else math.inf
            except ValueError:
                raise _bad(f"slice {raw!r}: the range ends must be numbers", "write LO..HI, e.g. "
                           f"{col}=60..480, ..30 or 240..", column=col, file=file) from None
            written = [t.strip() for t in (lo_t, hi_t) if t.strip()]
            if any(not math.isfinite(float(t)) for t in written):
                # 'inf..inf' was written back as the open range '..' and kept every task; 'nan' matches nothing
                raise _bad(f"slice {raw!r}: a range end must be a finite number", "leave an end empty for an "
                           f"open range (e.g. {col}=240..), or give finite numbers", column=col, file=file)
            if lo > hi:
                raise _bad(f"slice {raw!r}: the range is empty ({lo:g} > {hi:g})", "give the smaller end first",
                           column=col, file=file)
            out.append(SliceCondition(col, None, lo, hi))
        else:
            vals = tuple(v.strip() for v in value.split("|") if v.strip())
            out.append(SliceCondition(col, vals))
    return tuple(out)


def slice_text(conditions) -> str:
    """The conditions as one ``;``-joined text ("" for no slice)."""
    return ";".join(c.text() for c in conditions)


def task_level_columns(table: pd.DataFrame) -> list[str]:
    """Columns with one value per task (``benchmark`` and ``task`` first): those a slice can choose by."""
    keys = ["benchmark", "task"]
    out = list(keys)
    g = table.groupby(keys, observed=True, sort=False)
    for col in table.columns:
        if col in keys or col in _NOT_TASK_LEVEL or col.startswith(schema.VERIFIER_PREFIX):
            continue
        s = table[col]
        if not s.notna().any():
            continue
        if int(g[col].nunique(dropna=False).max()) <= 1:
            out.append(col)
    return out


def _task_values(table: pd.DataFrame, column: str) -> pd.Series:
    """One value per task (first non-missing), indexed by (benchmark, task)."""
    return table.groupby(["benchmark", "task"], observed=True)[column].first()


def _is_numeric(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)


def slice_choices(table: pd.DataFrame, max_values: int = 40) -> dict[str, dict]:
    """What a slice chooser offers: per task-level column, its kind and values (or range) with task counts.

    Returns
    -------
    dict
        ``column -> {"kind": "numeric", "min": x, "max": y, "n_tasks": n}`` or
        ``{"kind": "text", "values": {value: n_tasks}, "n_tasks": n}`` (the ``max_values`` commonest).
    """
    out = {}
    for col in task_level_columns(table):
        v = _task_values(table, col).dropna()
        if _is_numeric(table[col]):
            out[col] = {"kind": "numeric", "min": float(v.min()), "max": float(v.max()), "n_tasks": int(v.size)}
        else:
            counts = v.astype(str).value_counts()
            out[col] = {"kind": "text", "values": {str(k): int(n) for k, n in counts.head(max_values).items()},
                        "n_tasks": int(v.size), "n_values": int(counts.size)}
    return out


def _available(table: pd.DataFrame, column: str) -> str:
    v = _task_values(table, column).dropna()
    if _is_numeric(table[column]):
        return f"its values run from {v.min():g} to {v.max():g} over {v.size} tasks"
    counts = v.astype(str).value_counts()
    shown = ", ".join(f"{k} ({n})" for k, n in counts.head(12).items())
    more = f" and {counts.size - 12} more" if counts.size > 12 else ""
    return f"values available (tasks): {shown}{more}"


def apply_slice(corpus, conditions, file=None):
    """The corpus restricted to the tasks that meet every condition (a new :class:`~.corpus.Corpus`).

    Parameters
    ----------
    corpus
        A validated corpus.
    conditions
        From :func:`parse_slice` (or its text).

    Returns
    -------
    Corpus
        Same name with the slice appended, ``provenance["slice"]`` the slice text and
        ``provenance["slice_tasks"]`` ``(kept, of)`` task counts; unused categories dropped.

    Raises
    ------
    CorpusError
        A column the corpus lacks or that varies within tasks, a range on a text column, a value that
        matches no task; the message names the column and the values available.
    """
    from .corpus import Corpus

    if isinstance(conditions, str) or (conditions and not isinstance(next(iter(conditions)), SliceCondition)):
        conditions = parse_slice(conditions, file=file)
    conditions = tuple(conditions)
    if not conditions:
        return corpus
    t = corpus.table
    file = file if file is not None else corpus.source
    levels = task_level_columns(t)
    tasks = t.groupby(["benchmark", "task"], observed=True).size().index
    keep = pd.Series(True, index=tasks)
    row_keep = np.ones(len(t), dtype=bool)
    for c in conditions:
        if c.column in RECORD_FACETS and c.column in t.columns:
            row_keep &= _record_condition(t, c, file)
            continue
        if c.column not in t.columns:
            raise _bad(f"slice {c.text()!r}: the corpus has no column {c.column!r}",
                       "slice by one of its task-level columns: " + ", ".join(levels)
                       + " (add the column to the file, or join it: --task-metadata FILE)", column=c.column, file=file)
        if c.column not in levels:
            raise _bad(f"slice {c.text()!r}: {c.column!r} varies within tasks, so it cannot choose tasks",
                       "slice by a task-level column: " + ", ".join(levels), column=c.column, file=file)
        v = _task_values(t, c.column).reindex(tasks)
        if c.values is None:
            if not _is_numeric(t[c.column]):
                raise _bad(f"slice {c.text()!r}: {c.column!r} is not numeric, so it takes no range",
                           f"name values instead ({c.column}=A|B); {_available(t, c.column)}", column=c.column,
                           file=file)
            x = v.astype(float)
            hit = (x >= c.lo) & (x <= c.hi)
        else:
            text = v.astype(object).where(v.notna(), None).map(lambda z: None if z is None else _as_text(z))
            hit = text.isin(set(c.values))
            missing = [val for val in c.values if not (text == val).any()]
            if missing:
                raise _bad(f"slice {c.text()!r}: no task has {c.column} = {', '.join(map(repr, missing))}",
                           f"choose from the {_available(t, c.column)}", column=c.column, file=file)
        if not bool(hit.fillna(False).any()):
            raise _bad(f"slice {c.text()!r} matches no task", f"{c.column}: {_available(t, c.column)}",
                       column=c.column, file=file)
        keep &= hit.fillna(False).to_numpy()
    if not bool(keep.any()):
        raise _bad(f"slice {slice_text(conditions)!r}: no task meets every condition",
                   "loosen one condition (each matches some tasks on its own)", file=file)
    kept_set = {(str(b), str(k)) for b, k in keep[keep].index}
    rows = np.fromiter(((b, k) in kept_set for b, k in zip(t["benchmark"].astype(str), t["task"].astype(str))),
                       dtype=bool, count=len(t)) & row_keep
    if not rows.any():
        raise _bad(f"slice {slice_text(conditions)!r}: no record meets every condition",
                   "loosen one condition (each matches some records on its own)", file=file)
    kept = t.loc[rows].groupby(["benchmark", "task"], observed=True).size().index
    table = t.loc[rows].copy()
    for col in table.columns:
        if isinstance(table[col].dtype, pd.CategoricalDtype):
            table[col] = table[col].cat.remove_unused_categories()
    table = table.reset_index(drop=True)
    text = slice_text(conditions)
    prov = dict(corpus.provenance)
    prev = prov.get("slice")
    prov["slice"] = text if not prev else f"{prev};{text}"
    prov["slice_tasks"] = [int(len(kept)), int(len(tasks))]
    # the design warnings (tasks never solved, models seen once, ...) are the slice's own, not the whole corpus's
    from .validate import DESIGN_WARNING_CODES, design_warnings

    kept_warnings = [w for w in corpus.warnings if w.code not in DESIGN_WARNING_CODES]
    return Corpus(table=table, name=f"{corpus.name} [{text}]", source=corpus.source, format=corpus.format,
                  warnings=kept_warnings + design_warnings(table, file), provenance=prov)


def _record_condition(table: pd.DataFrame, c: SliceCondition, file) -> np.ndarray:
    """Rows whose model (or scaffold) is one of the condition's values: a subset of the compared objects."""
    if c.values is None:
        raise _bad(f"slice {c.text()!r}: {c.column!r} takes names, not a range",
                   f"name them ({c.column}=A|B)", column=c.column, file=file)
    names = table[c.column].astype(str)
    missing = [v for v in c.values if not (names == v).any()]
    if missing:
        counts = names.value_counts()
        shown = ", ".join(f"{k} ({n})" for k, n in counts.head(12).items())
        more = f" and {counts.size - 12} more" if counts.size > 12 else ""
        raise _bad(f"slice {c.text()!r}: no record has {c.column} = {', '.join(map(repr, missing))}",
                   f"choose from the {c.column}s (records): {shown}{more}", column=c.column, file=file)
    return names.isin(set(c.values)).to_numpy()


def _as_text(z) -> str:
    """A task value as the slice compares it: integral floats without ``.0``."""
    if isinstance(z, (float, np.floating)) and float(z).is_integer():
        return str(int(z))
    return str(z)
