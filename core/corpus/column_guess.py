"""What the app's import dialog needs, without Qt: a preview of a table, a guess of each column's role,
and the problems of a mapping as the user builds it.

* :func:`preview` reads the first rows of a CSV/TSV/JSONL/Parquet file; nested JSON objects are
  flattened to dotted names (``metadata.instance_id``), the names ``--columns`` understands.
* :func:`guess_roles` proposes a role per column: by name first (the canonical names and their
  synonyms of :mod:`.schema`, also as the last part of a dotted or ``_``-joined name:
  ``metadata.model_name`` -> model, ``agent_run_id`` -> trial), then by values (0/1 or true/false
  -> result; system ids the subject-id conventions split -> subject).  Each role goes to at most
  one column.
* :func:`mapping_problems` says what a mapping still lacks or gets wrong, in words for the dialog.
* :func:`shape_key` names a file's column set, so that a mapping chosen once is offered again
  for files of the same shape.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from . import schema
from .columns import ROLES, SUBJECT, ColumnMapping

__all__ = ["preview", "guess_roles", "to_mapping", "mapping_problems", "shape_key", "ROLE_CHOICES"]

#: Roles offered per column in the dialog, most used first ("" = not used).
ROLE_CHOICES: tuple[str, ...] = ("", "benchmark", "task", "model", "scaffold", SUBJECT, "trial", "result",
                                 "successes", "trials", "cost", "input_tokens", "output_tokens", "reasoning_tokens",
                                 "total_tokens", "num_turns", "difficulty", "human_minutes", "task_group", "tags",
                                 "release_date", "verifier")

_BINARY_TEXT = {"0", "1", "true", "false", "pass", "fail", "passed", "failed", "yes", "no", "1.0", "0.0"}


def preview(path: str | Path, n: int = 20) -> pd.DataFrame:
    """The first ``n`` rows of a table, nested JSON flattened to dotted column names."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        return _flatten(pd.read_parquet(path).head(n))
    if suffix in (".jsonl", ".ndjson", ".json"):
        rows = []
        with open(path, encoding="utf-8-sig") as fh:
            for line in fh:
                if line.strip():
                    obj = json.loads(line)
                    if isinstance(obj, dict):
                        rows.append(obj)
                if len(rows) >= n:
                    break
        return pd.json_normalize(rows, sep=".")
    sep = "\t" if suffix in (".tsv", ".tab") else ","
    return pd.read_csv(path, sep=sep, nrows=n)


def _flatten(df: pd.DataFrame) -> pd.DataFrame:
    if not any(df[c].map(lambda v: isinstance(v, dict)).any() for c in df.columns if df[c].dtype == object):
        return df
    return pd.json_normalize(df.to_dict(orient="records"), sep=".")


def _by_name(column: str) -> str | None:
    """The role a column's name suggests, or None."""
    table = schema.synonym_table()
    if str(column).startswith(schema.VERIFIER_PREFIX):
        return "verifier"
    last = str(column).split(".")[-1]
    for candidate in (column, last):
        role = table.get(schema.normalise_name(candidate))
        if role:
            return role
    parts = schema.normalise_name(last).split("_")
    for i in range(1, len(parts)):  # agent_run_id -> run_id -> id
        role = table.get("_".join(parts[i:]))
        if role:
            return role
    return None


def _is_binary(values: pd.Series) -> bool:
    v = values.dropna()
    if v.empty:
        return False
    if v.dtype == bool:
        return True
    return set(v.astype(str).str.strip().str.lower()) <= _BINARY_TEXT


def _looks_like_subjects(values: pd.Series) -> bool:
    """True when most values are system ids that a convention splits into model and scaffold."""
    from .subject_ids.conventions import build_stack

    v = values.dropna().astype(str).unique()[:50]
    if len(v) == 0:
        return False
    stack = build_stack(None, "none (a table)")
    unknown = stack.unknown_scaffolds
    split = sum(1 for s in v if (lambda r: r[1] is not None and r[0].scaffold not in unknown)(stack.split(s)))
    return split / len(v) >= 0.5


def guess_roles(df: pd.DataFrame) -> dict[str, str]:
    """Column -> proposed role (``""`` for none); each role at most once, names before values."""
    roles: dict[str, str] = {str(c): "" for c in df.columns}
    taken: set[str] = set()
    for c in df.columns:  # exact canonical names first, so that a synonym never displaces them
        if schema.normalise_name(c) in ROLES and str(c) in roles:
            roles[str(c)] = schema.normalise_name(c)
            taken.add(roles[str(c)])
    for c in df.columns:
        if roles[str(c)]:
            continue
        role = _by_name(str(c))
        if role == "verifier":
            roles[str(c)] = role
        elif role and role not in taken and role in ROLE_CHOICES:
            roles[str(c)] = role
            taken.add(role)
    for c in df.columns:
        if roles[str(c)]:
            continue
        col = df[c]
        if "result" not in taken and "successes" not in taken and _is_binary(col):
            roles[str(c)] = "result"
            taken.add("result")
        elif (not ({"model", "scaffold", SUBJECT} & taken) and not pd.api.types.is_numeric_dtype(col)
              and _looks_like_subjects(col)):
            roles[str(c)] = SUBJECT
            taken.add(SUBJECT)
    return roles


def to_mapping(roles: dict[str, str], constants: dict[str, str] | None = None) -> ColumnMapping:
    """The :class:`ColumnMapping` of the dialog's choices (``verifier`` -> ``verifier.<column>``)."""
    m = ColumnMapping()
    for col, role in roles.items():
        if not role:
            continue
        name = col if col.startswith(schema.VERIFIER_PREFIX) else f"{schema.VERIFIER_PREFIX}{col.split('.')[-1]}"
        m.columns[name if role == "verifier" else role] = col
    for role, value in (constants or {}).items():
        if value:
            m.constants[role] = value
    return m


def mapping_problems(roles: dict[str, str], constants: dict[str, str] | None = None,
                     df: pd.DataFrame | None = None) -> list[str]:
    """What the mapping lacks or gets wrong (empty: it can be loaded)."""
    constants = {k: v for k, v in (constants or {}).items() if v}
    used: dict[str, list[str]] = {}
    for col, role in roles.items():
        if role and role != "verifier":
            used.setdefault(role, []).append(col)
    out = [f"'{r}' is given to {len(cs)} columns ({', '.join(cs)}): choose one." for r, cs in used.items()
           if len(cs) > 1]
    out += [f"'{r}' is both a column ({used[r][0]}) and a constant: clear one." for r in constants if r in used]
    have = set(used) | set(constants)
    if SUBJECT in have:
        have |= {"model", "scaffold"}
    for r in ("benchmark", "task", "model"):  # no scaffold: one scaffold, with a note (core/corpus/validate.py)
        if r not in have:
            hints = ["type one name for every row"] if r in ("benchmark", "scaffold") else []
            if r in ("model", "scaffold"):
                hints.append("choose 'subject' for a column of system ids")
            out.append(f"no column is the {r}" + (f" (or {', or '.join(hints)})" if hints else "") + ".")
    has_ver = any(role == "verifier" for role in roles.values())
    if "result" not in have and not {"successes", "trials"} <= have and not has_ver:
        out.append("no result: choose a 0/1 result column, successes and trials columns, or verifier columns.")
    if df is not None and "result" in used and not _is_binary(df[used["result"][0]]):
        vals = ", ".join(map(repr, df[used["result"][0]].dropna().astype(str).unique()[:3]))
        out.append(f"the result column '{used['result'][0]}' is not 0/1 in the first rows ({vals}).")
    return out


def shape_key(columns) -> str:
    """A short key of a column set (order-free), for remembering a mapping per file shape."""
    return hashlib.sha1("\n".join(sorted(map(str, columns))).encode("utf-8")).hexdigest()[:16]
