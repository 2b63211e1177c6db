"""Column mapping: say which column of any table is which canonical column.

A leaderboard export rarely uses the canonical names: a per-run CSV may have
``agent_run_id, metadata.instance_id, metadata.model_name, metadata.resolved``.
A :class:`ColumnMapping` names, for each canonical *role*, the file column that
plays it, or a constant for every row::

    task=metadata.instance_id,model=metadata.model_name,result=metadata.resolved,scaffold==leaderboard harness

``role=column`` maps a column; ``role==value`` (two equals signs) gives every
row the same value (a file of one benchmark, a leaderboard whose harness is
one scaffold).  A *dotted* column name reaches into nested JSON: the file's
column of that exact name if there is one, else the longest leading part that
is a column, followed key by key into its objects (``metadata.instance_id`` is
the ``instance_id`` of each row's ``metadata`` object).  Roles are the
canonical names of :mod:`.schema` (``benchmark``, ``task``, ``model``,
``scaffold``, ``trial``, ``result``, ``successes``, ``trials``, ``cost``, the
token columns, ...), ``verifier.<name>``, and ``subject``: a column of system
ids ("20240620_sweagent_claude3.5sonnet") that the subject-id conventions
(:mod:`.subject_ids.conventions`) split into model and scaffold, kept as the
trial (as the py-irt importer does) unless those roles are mapped too.

The mapping overrides the synonym matching of :mod:`.readers`: a column that
was read as, say, ``task`` by its name goes back to its own name when
``--columns`` maps ``task`` to another column.  Mistakes (an unknown role, a
column that is not in the file, a role given twice) are errors that name the
column and say what fixes it.  ``ddr`` takes the mapping as ``--columns`` (with
``--benchmark NAME`` and ``--scaffold NAME`` as shorthands for constants); the
app saves it with the analysis (``AnalysisState.corpus_options``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import schema
from .issues import CorpusError, CorpusIssue, error, warning

__all__ = ["ROLES", "ColumnMapping", "parse_columns", "apply_mapping", "resolve_column"]

#: A role that is not a canonical column: an id naming the evaluated system
#: ("20240620_sweagent_claude3.5sonnet"), split into model and scaffold by the
#: subject-id conventions (:mod:`.subject_ids.conventions`) and kept as the trial.
SUBJECT = "subject"

#: Roles a column can be mapped to (``verifier.<name>`` as well).
ROLES: tuple[str, ...] = (*schema.CANONICAL_ORDER, schema.RESULT, SUBJECT)


def _is_role(name: str) -> bool:
    return name in ROLES or (name.startswith(schema.VERIFIER_PREFIX) and len(name) > len(schema.VERIFIER_PREFIX))


@dataclass
class ColumnMapping:
    """Canonical role -> file column (``columns``) or constant value (``constants``)."""

    columns: dict[str, str] = field(default_factory=dict)
    constants: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.columns or self.constants)

    def to_text(self) -> str:
        """The ``--columns`` text that parses back to this mapping."""
        parts = [f"{r}={c}" for r, c in self.columns.items()] + [f"{r}=={v}" for r, v in self.constants.items()]
        return ",".join(parts)

    def to_dict(self) -> dict:
        return {"columns": dict(self.columns), "constants": dict(self.constants)}


def _bad(message: str, fix: str, column: str | None = None, file=None) -> CorpusError:
    return CorpusError([error("bad-column-mapping", message, fix, file=file, column=column)])


def parse_columns(text: str | dict | ColumnMapping | None, *, benchmark: str | None = None,
                  scaffold: str | None = None, file=None) -> ColumnMapping:
    """Parse ``--columns`` text (or a ``{role: column}`` dict) plus the constant shorthands.

    Parameters
    ----------
    text
        ``"task=metadata.instance_id,model=metadata.model_name,scaffold==harness"``;
        a dict ``{role: column}`` (a value ``{"value": v}`` is a constant); a
        :class:`ColumnMapping`; or None.
    benchmark, scaffold
        One benchmark / scaffold name for every row (``--benchmark``, ``--scaffold``).

    Raises
    ------
    CorpusError
        ``bad-column-mapping``: an entry without ``=``, an unknown role, a role given twice.
    """
    mapping = ColumnMapping()
    if isinstance(text, ColumnMapping):
        mapping = ColumnMapping(dict(text.columns), dict(text.constants))
    elif isinstance(text, dict):
        for role, col in text.items():
            if isinstance(col, dict) and "value" in col:
                mapping.constants[str(role)] = str(col["value"])
            else:
                mapping.columns[str(role)] = str(col)
    elif text:
        for entry in (e.strip() for e in str(text).split(",")):
            if not entry:
                continue
            if "=" not in entry:
                raise _bad(f"'{entry}' in --columns has no '='.",
                           "write ROLE=COLUMN (a column) or ROLE==VALUE (the same value on every row), separated "
                           "by commas, e.g. task=metadata.instance_id,model=metadata.model_name.", file=file)
            role, rest = (s.strip() for s in entry.split("=", 1))
            constant = rest.startswith("=")
            value = rest[1:].strip() if constant else rest
            if not value:
                raise _bad(f"'{entry}' in --columns names no {'value' if constant else 'column'}.",
                           f"write {role}=COLUMN or {role}==VALUE.", column=role, file=file)
            if role in mapping.columns or role in mapping.constants:
                raise _bad(f"the role '{role}' is given twice in --columns.", "give each role once.", column=role,
                           file=file)
            (mapping.constants if constant else mapping.columns)[role] = value
    for role, value in (("benchmark", benchmark), ("scaffold", scaffold)):
        if value:
            if role in mapping.columns:
                raise _bad(f"--{role} {value!r} and --columns {role}={mapping.columns[role]} both set the {role}.",
                           "give one of them.", column=role, file=file)
            mapping.constants[role] = str(value)
    for role in (*mapping.columns, *mapping.constants):
        if not _is_role(role):
            import difflib

            table = schema.synonym_table()
            hint = table.get(schema.normalise_name(role)) or next(
                iter(difflib.get_close_matches(role, ROLES, n=1, cutoff=0.6)), None)
            fix = (f"did you mean '{hint}'? " if hint else "") + \
                f"roles are {', '.join(ROLES)} and verifier.<name>."
            raise _bad(f"'{role}' is not a column role.", fix, column=role, file=file)
    return mapping


def resolve_column(raw: pd.DataFrame, name: str, original: dict[str, str] | None = None) -> pd.Series | None:
    """The values of file column ``name`` (dotted names reach into nested objects), or None if absent.

    ``original`` maps a file column name to its name in ``raw`` when the reader
    renamed it (synonym matching); names not in it are looked up as they are.
    """
    original = original or {}

    def column(n: str):
        cur = original.get(n, n)
        return raw[cur] if cur in raw.columns else None

    found = column(name)
    if found is not None:
        return found
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        base = column(".".join(parts[:cut]))
        if base is None:
            continue
        values = base.to_numpy(dtype=object)
        for key in parts[cut:]:
            values = np.array([v.get(key) if isinstance(v, dict) else None for v in values], dtype=object)
        if all(v is None for v in values) and len(values):
            return None
        return pd.Series(values, index=raw.index, name=name)
    return None


def _nested_keys(raw: pd.DataFrame, limit: int = 12, names: dict[str, str] | None = None) -> list[str]:
    """The file's column names (``names``: name in ``raw`` -> the file's, for columns the synonyms
    renamed), nested objects' keys in dotted form (first rows), for error messages."""
    names = names or {}
    out: list[str] = []
    for c in raw.columns:
        if str(c).startswith("_"):
            continue
        sample = next((v for v in raw[c].head(50) if isinstance(v, dict)), None)
        c = names.get(str(c), str(c))
        if sample is None:
            out.append(str(c))
            continue
        for k, v in sample.items():
            out.append(f"{c}.{k}")
            if isinstance(v, dict):
                out.extend(f"{c}.{k}.{kk}" for kk in v)
    return out[:limit] + (["..."] if len(out) > limit else [])


def apply_mapping(raw: pd.DataFrame, column_sources: dict[str, str], mapping: ColumnMapping, *,
                  file: str | Path | None = None) -> tuple[pd.DataFrame, dict[str, str], list[CorpusIssue]]:
    """Apply a column mapping to a raw table read by :mod:`.readers`.

    Parameters
    ----------
    raw
        The table, with canonical names where the synonym matching found them.
    column_sources
        Canonical name -> file column name, for the columns the synonyms renamed.
    mapping
        What the user said.

    Returns
    -------
    raw, column_sources, issues
        The table with the mapped roles, the updated sources (messages name the
        user's column) and warnings (a role the file already had by name, now
        replaced).

    Raises
    ------
    CorpusError
        ``unknown-column``: a mapped column is not in the file; the message lists
        the file's columns (nested keys in dotted form).
    """
    if not mapping:
        return raw, column_sources, []
    raw = raw.copy()
    sources = dict(column_sources)
    original = {v: k for k, v in sources.items()}  # file name -> name in raw
    issues: list[CorpusIssue] = []
    fname = None if file is None else str(file)
    new: dict[str, pd.Series] = {}
    errors: list[CorpusIssue] = []
    for role, col in mapping.columns.items():
        values = resolve_column(raw, col, original)
        if values is None:
            errors.append(error("unknown-column", f"--columns maps {role} to '{col}', but the file has no such "
                                f"column (columns: {', '.join(_nested_keys(raw, names=sources))}).",
                                f"write {role}=<one of those names>; a dotted name reaches into nested JSON "
                                "objects.", file=fname, column=col))
            continue
        new[role] = values
    if errors:
        raise CorpusError(errors)
    for role in (*new, *mapping.constants):
        if role not in raw.columns:
            continue
        had = sources.get(role, role)  # the file's name of the column that has this role now
        if role in new and mapping.columns[role] in (had, role):
            continue  # the user mapped the very column the reader found
        what = (f"gives every row the {role} '{mapping.constants[role]}'" if role in mapping.constants
                else f"maps {role} to '{mapping.columns[role]}'")
        if had != role:  # renamed by synonym matching: it keeps its own name, as an extra column
            sources.pop(role, None)
            raw = raw.rename(columns={role: had})
        issues.append(warning("column-remapped", f"the file's column '{had}' would be the {role}; the column "
                              f"mapping {what} instead.", f"leave {role} out of the mapping to use '{had}'.",
                              file=fname, column=had))
    if SUBJECT in new:
        raw, more, rows = _split_subjects(raw, new.pop(SUBJECT), mapping, fname)
        issues.extend(more)
        new = {role: values.iloc[rows] for role, values in new.items()}  # less the ids left out, if any
        for role in ("model", "scaffold", schema.TRIAL_ID):
            sources.setdefault(role, mapping.columns[SUBJECT])
    for role, values in new.items():
        raw[role] = values.to_numpy()
        sources[role] = mapping.columns[role]
    for role, value in mapping.constants.items():
        raw[role] = pd.Categorical([value] * len(raw)) if role in schema.REQUIRED_FACETS else value
        sources[role] = f"{role}=={value}"
    # nested objects left in the table are not canonical columns: drop them so validation sees flat data
    nested = [c for c in raw.columns if raw[c].dtype == object
              and isinstance(raw[c].dropna().iloc[0] if raw[c].notna().any() else None, dict)]
    if nested:
        raw = raw.drop(columns=nested)
    return raw, sources, issues


#: ``argparse`` attribute -> :func:`~.io.load_corpus` option, for every command that reads a corpus.
_ARG_OPTIONS = (("benchmark", "benchmark"), ("aliases", "aliases"), ("scoring", "scoring"), ("gamma", "gamma"),
                ("columns", "columns"), ("scaffold", "scaffold"), ("slice", "slice"),
                ("task_metadata", "task_metadata"), ("release_dates", "release_dates"), ("field_mapping", "mapping"),
                ("max_log_mb", "max_member_mb"), ("keep_lookalike_names", "keep_lookalike_names"),
                ("unsplit_ids", "unsplit_ids"))


def options_from_args(args) -> dict:
    """The :func:`~.io.load_corpus` options of parsed ``ddr`` arguments (those given; ``format`` and
    ``encoding`` excepted, which ``load_corpus`` takes by name)."""
    return {opt: getattr(args, attr) for attr, opt in _ARG_OPTIONS if getattr(args, attr, None) is not None}


def _split_subjects(raw: pd.DataFrame, ids: pd.Series, mapping: ColumnMapping, fname
                    ) -> tuple[pd.DataFrame, list[CorpusIssue], np.ndarray]:
    """Model, scaffold and trial from a ``subject`` column, by the shipped conventions; with the
    positions of the rows kept (all, unless ``--unsplit-ids drop`` left out ids that name no scaffold)."""
    from .subject_ids.conventions import build_stack, format_mapping, mapping_summary

    stack = build_stack(None, "none (a table)")
    text = ids.astype("string")
    codes, uniques = pd.factorize(text)
    split = [stack.split(str(u)) for u in uniques]
    summary = mapping_summary([(str(u), sub, lay) for u, (sub, lay) in zip(uniques, split)], stack.unknown_scaffolds)
    col = mapping.columns[SUBJECT]
    issues = [warning("subject-ids-mapped", format_mapping(summary),
                      "map model and scaffold columns with --columns if the split is wrong.", file=fname, column=col,
                      count=summary["no_rule"])]
    unmapped = [str(u) for u, (_, lay) in zip(uniques, split) if lay is None]
    if unmapped:
        issues.append(warning("subject-fallback", f"{len(unmapped)} subject ids match no convention (e.g. "
                              f"{', '.join(map(repr, unmapped[:3]))}); each is a model of its own and names no "
                              "scaffold.", "map the scaffold with --columns scaffold=... or --scaffold NAME.",
                              file=fname, column=col, count=len(unmapped)))
    from .subject_ids.unsplit import merge_model_spellings, pool_unnamed_scaffolds

    subjects, _merges, more = merge_model_spellings([s for s, _ in split], file=fname, column=col)
    issues.extend(more)
    missing = codes < 0
    models = np.array([s.model for s in subjects] + [None], dtype=object)
    scaffolds = np.array([s.scaffold for s in subjects] + [None], dtype=object)
    idx = np.where(missing, len(split), codes)
    rows = np.arange(len(idx))
    if "scaffold" not in mapping.columns and "scaffold" not in mapping.constants:
        part = pd.DataFrame({"scaffold": scaffolds[idx], "_row": rows})
        part, _info, more = pool_unnamed_scaffolds(part, text.to_numpy(dtype=object), [str(u) for u in uniques],
                                                   stack.unknown_scaffolds, file=fname, column=col)
        issues.extend(more)
        rows = part["_row"].to_numpy()  # all of them, unless the ids that name no scaffold were left out
        idx, text = idx[rows], text.iloc[rows]
        scaffolds_of_rows = part["scaffold"].to_numpy(dtype=object)
    else:
        scaffolds_of_rows = scaffolds[idx]
    raw = raw.iloc[rows].copy()
    for role, values in (("model", models[idx]), ("scaffold", scaffolds_of_rows),
                         (schema.TRIAL_ID, np.asarray(text.to_numpy(dtype=object)))):
        if role not in mapping.columns and role not in mapping.constants:
            raw[role] = values
    return raw, issues, rows
