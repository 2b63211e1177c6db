"""Join task metadata and model release dates kept in files beside a corpus.

Leaderboard exports rarely carry task metadata or model release dates in the result rows; BRIDGE,
for one, keeps human completion minutes per task in ``human_minutes_by_task.jsonl`` and release dates
per model in ``model_run_mapping.json``.  The frontier over time (seed 002 (Krsteski et al. 2026) sec. 5.1) needs a
``release_date`` per model, and a slice by ``human_minutes`` needs the minutes per task.

:func:`join_task_metadata` adds the columns of a task file (CSV, TSV, JSON lines or JSON; a task
column named ``task``/``task_id``, optionally ``benchmark``) to every record of the task.
:func:`join_release_dates` adds ``release_date`` per model from a table (model, release_date), a JSON
object ``{model: date}``, or BRIDGE's mapping ``{key: {"alias", "release_date", "run_ids"}}``, where a
corpus model matches the key, the alias or any run id.  Neither drops a record: what could not be
matched is counted in the corpus's provenance and in a warning.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import shown
from . import schema
from .issues import CorpusError, error, warning

__all__ = ["join_task_metadata", "merge_task_metadata", "read_task_metadata", "join_release_dates",
           "read_release_dates"]


def _gate_error(message: str) -> CorpusError:
    """A side-file gate refusal (:mod:`..side_files`; the message starts with the file) as a CorpusError."""
    from ..side_files import problem_and_fix

    problem, fix = problem_and_fix(message)
    return CorpusError([error("bad-metadata-file", problem + ".", fix + ".")])


def _side_text(path: Path, what: str) -> str:
    """The file's text through the side-file gate: a regular file, a size cap, UTF-8 with the line."""
    from ..side_files import read_side_text

    return read_side_text(path, what, error=_gate_error)


def _side_json(path: Path, what: str):
    """The file's JSON, strictly parsed: a key given twice refused with its line, nesting capped."""
    from ..side_files import loads_json

    return loads_json(_side_text(path, what), path, what, error=_gate_error)


def _read_table(path: Path, what: str = "task-metadata file") -> pd.DataFrame:
    import io

    suffix = path.suffix.lower()
    text = _side_text(path, what)  # the gate first: a device or FIFO is said to be one, whatever its name
    if suffix not in (".csv", ".tsv", ".tab", ".jsonl", ".ndjson", ".json"):
        raise CorpusError([error("bad-metadata-file", f"unknown file type {suffix!r}", "give a .csv, .tsv, .jsonl or "
                                 ".json file", file=path)])
    if suffix == ".json":
        from ..side_files import loads_json

        data = loads_json(text, path, what, error=_gate_error)
        return pd.DataFrame(data if isinstance(data, list) else [data])
    try:
        if suffix in (".csv",):
            return pd.read_csv(io.StringIO(text))
        if suffix in (".tsv", ".tab"):
            return pd.read_csv(io.StringIO(text), sep="\t")
        if suffix in (".jsonl", ".ndjson"):
            return pd.read_json(io.StringIO(text), lines=True)
    except (OSError, ValueError) as exc:
        raise CorpusError([error("bad-metadata-file", f"cannot read it ({exc})", "give a CSV, TSV, JSON lines "
                                 "or JSON file", file=path)]) from None


def _is_metr_runs(path: Path) -> bool:
    """True for a METR-style run-rows file (BRIDGE's ``cybench_normalized_results.jsonl``): JSON lines whose
    first record has ``task_id``, ``model`` and ``score_binarized`` (the importer's own test)."""
    if path.suffix.lower() not in (".jsonl", ".ndjson"):
        return False
    from .importers.normalized import _style_of

    try:
        with path.open("rb") as f:
            first = next((line for line in f if line.strip()), b"")
        obj = json.loads(first)
    except (OSError, ValueError):
        return False
    return isinstance(obj, dict) and _style_of(obj) == "metr"


def _metr_task_table(path: Path) -> pd.DataFrame:
    """The task fields of a METR run-rows file, one row per task (``METR_TASK_FIELDS``: human minutes, difficulty
    label).  Every run of a task carries them; runs that disagree are an error naming the task and the lines."""
    from .importers._common import read_json_lines
    from .importers.normalized import METR_TASK_FIELDS

    records, issues = read_json_lines(path)
    if issues:
        raise CorpusError(issues)
    rows = pd.DataFrame([{"_line": n, "task": obj.get("task_id"), **{f: obj.get(f) for f in METR_TASK_FIELDS}}
                         for n, obj in records])
    rows = rows.dropna(subset=["task"])
    fields = [f for f in METR_TASK_FIELDS if rows[f].notna().any()]
    for f in fields:
        given = rows.dropna(subset=[f])
        counts = given.groupby("task", sort=False)[f].nunique()  # one pass; the loop below runs for a conflict only
        for task in counts.index[counts > 1][:1]:
            g = given[given["task"] == task]
            vals = g[f].drop_duplicates()
            if len(vals) > 1:
                raise CorpusError([error(
                    "metadata-conflict", f"task {task!r} has {f} {shown(vals.iloc[0])} on line {int(g['_line'].iloc[0])} "
                    f"and {shown(vals.iloc[1])} on line {int(g.loc[vals.index[1], '_line'])}; a task field is the same on every "
                    "run", "correct the runs of this task", file=path, row=int(g.loc[vals.index[1], "_line"]),
                    column=f)])
    if not fields:
        raise CorpusError([error("bad-metadata-file", f"METR run rows without task fields ({', '.join(METR_TASK_FIELDS)})",
                                 "give a file with human_minutes or difficulty_label per run", file=path)])
    out = rows.sort_values("_line").groupby("task", sort=False)[fields].first().reset_index()
    out["task"] = out["task"].astype(str)
    return out


def read_task_metadata(path) -> pd.DataFrame:
    """The per-task columns of one task-metadata file.

    A table (CSV, TSV, JSON lines or JSON) with a task column (``task``, ``task_id`` or another synonym of
    the schema), optionally ``benchmark``: every other column is task metadata; a task listed twice keeps
    its first row.  A METR-style run-rows file (BRIDGE's ``cybench_normalized_results.jsonl``: ``task_id``,
    ``model``, ``score_binarized`` per run) gives the fields that describe the task (``human_minutes``,
    ``difficulty_label``; :data:`~.importers.normalized.METR_TASK_FIELDS`), once per task; its per-run
    fields (scores, costs, times) are not task metadata.

    Returns
    -------
    pandas.DataFrame
        ``task`` (and ``benchmark``) and the metadata columns, one row per task.

    Raises
    ------
    CorpusError
        The file is missing or unreadable, has no task column, or its runs disagree on a task field.
    """
    path = Path(path)
    if not path.exists():
        raise CorpusError([error("no-file", "the task metadata file does not exist.", "check the path.", file=path)])
    from ..side_files import regular_file

    regular_file(path, "task-metadata file", error=_gate_error)  # before the first line is peeked at (a FIFO blocks)
    if _is_metr_runs(path):
        return _metr_task_table(path)
    meta = _read_table(path)
    syn = schema.synonym_table()
    meta = meta.rename(columns={c: syn.get(schema.normalise_name(c), c) for c in meta.columns})
    if "task" not in meta.columns:
        raise CorpusError([error("bad-metadata-file", "no task column (task, task_id, item, ...)",
                                 "name the column of task ids task or task_id", file=path)])
    keys = ["benchmark", "task"] if "benchmark" in meta.columns else ["task"]
    meta = meta.dropna(subset=keys).drop_duplicates(subset=keys, keep="first")
    cols = [c for c in meta.columns if c not in keys and c not in schema.REQUIRED_FACETS]
    if not cols:
        raise CorpusError([error("bad-metadata-file", "no column besides the task ids", "add the per-task columns "
                                 "to join (e.g. human_minutes)", file=path)])
    out = meta[keys + cols].copy()
    for k in keys:
        out[k] = out[k].astype(str)
    return out.reset_index(drop=True)


def _same(a, b) -> bool:
    """Two metadata values agree: equal numbers (9 and 9.0), or equal text."""
    try:
        fa, fb = float(a), float(b)
    except (TypeError, ValueError):
        return str(a) == str(b)
    return fa == fb or abs(fa - fb) <= 1e-9 * max(abs(fa), abs(fb))


def merge_task_metadata(paths, tables: list[pd.DataFrame] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The task metadata of several files, merged by task id (:func:`read_task_metadata` of each).

    Files are matched on ``benchmark`` and ``task`` when every file names the benchmark, else on ``task``.
    A column in several files is filled from each in turn; two files that give a task different values of
    one column are an error naming both files, the task, the column and both values.

    ``tables``: the files' tables when already read (:func:`read_task_metadata`), in the order of ``paths``.

    Returns
    -------
    (pandas.DataFrame, list of str)
        The merged table (keys and columns) and its keys.
    """
    paths = [Path(p) for p in paths]
    tables = list(zip(paths, tables if tables is not None else [read_task_metadata(p) for p in paths]))
    keys = ["benchmark", "task"] if all("benchmark" in t.columns for _, t in tables) else ["task"]
    merged, origin = None, {}  # origin: column -> the file it first came from
    for path, t in tables:
        t = t.drop(columns=[c for c in ("benchmark",) if c not in keys and c in t.columns])
        cols = [c for c in t.columns if c not in keys]
        if merged is None:
            merged, origin = t, dict.fromkeys(cols, path)
            continue
        both = merged.merge(t, on=keys, how="inner", suffixes=("", " (later file)"))
        for c in cols:
            if c not in origin:
                continue
            a, b = both[c], both[c + " (later file)"]
            for i in np.flatnonzero((a.notna() & b.notna()).to_numpy()):
                if not _same(a.iloc[i], b.iloc[i]):
                    task = both["task"].iloc[i]
                    where = f"task {task!r}" + (f" of benchmark {both['benchmark'].iloc[i]!r}" if "benchmark" in keys
                                                else "")
                    raise CorpusError([error(
                        "metadata-conflict", f"{origin[c]} and {path} disagree on {c} of {where}: "
                        f"{shown(a.iloc[i])} against {shown(b.iloc[i])}", f"correct one of the two files, or give only one "
                        f"of them for {c}", file=path, column=c)])
        merged = merged.merge(t, on=keys, how="outer", suffixes=("", " (later file)"))
        for c in cols:
            if c + " (later file)" in merged.columns:  # fill what the earlier files lack; agreeing values stay
                merged[c] = merged[c].where(merged[c].notna(), merged.pop(c + " (later file)"))
            else:
                origin[c] = path
    return merged, keys


def _refuse_infinite(path: Path, table: pd.DataFrame) -> None:
    """A task field of inf (or 1e400, which reads as inf) would slice and sort as a real number: refuse it."""
    import numpy as np

    for c in table.columns:
        if pd.api.types.is_float_dtype(table[c].dtype):
            inf = np.isinf(table[c].to_numpy())
            if inf.any():
                i = int(np.flatnonzero(inf)[0])
                line = i + (2 if path.suffix.lower() in (".csv", ".tsv", ".tab") else 1)
                raise CorpusError([error("not-finite", f"'{c}' is {table[c].iat[i]}, not a finite number",
                                         f"write a finite number in '{c}', or leave it empty where it is unknown",
                                         file=path, row=line, column=str(c), count=int(inf.sum()))])


def join_task_metadata(corpus, path):
    """The corpus with the columns of one or several per-task files joined to its records (a new corpus).

    Parameters
    ----------
    corpus
        A :class:`~.corpus.Corpus`.
    path
        A task-metadata file, or a list of them (merged by task id: :func:`merge_task_metadata`).  Each is a
        table with a task column or a METR run-rows file (:func:`read_task_metadata`).

    Raises
    ------
    CorpusError
        A file is unreadable or has no task column, no task of a file is in the corpus, or two files
        disagree on a task's value.
    """
    from .corpus import Corpus

    paths = [Path(p) for p in (path if isinstance(path, (list, tuple)) else [path])]
    tables = [read_task_metadata(p) for p in paths]
    for p, own in zip(paths, tables):
        _refuse_infinite(p, own)
    t = corpus.table
    for p, own in zip(paths, tables):  # a file none of whose tasks is the corpus's: the wrong file (or wrong ids)
        k = ["benchmark", "task"] if "benchmark" in own.columns else ["task"]
        if not own[k].merge(t[k].astype(str).drop_duplicates(), on=k).shape[0]:
            raise CorpusError([error("metadata-no-match", f"none of the {len(own):,} tasks of the file is a task of "
                                     f"the corpus (e.g. {', '.join(map(repr, own['task'].astype(str).head(3)))})",
                                     "check that the file's task ids are the corpus's", file=p)])
    meta, keys = merge_task_metadata(paths, tables)
    cols = [c for c in meta.columns if c not in keys]
    left = t[keys].astype(str)
    right = meta[keys].astype(str).assign(**{c: meta[c].to_numpy() for c in cols})
    joined = left.merge(right, on=keys, how="left", validate="many_to_one")
    table = t.copy()
    for c in cols:
        if c in table.columns:
            table[c] = table[c].where(table[c].notna(), joined[c].to_numpy())  # the corpus's own values win
        else:
            table[c] = joined[c].to_numpy()
    all_tasks = t.groupby(["benchmark", "task"], observed=True).size().index
    matched_rows = joined[cols].notna().any(axis=1).to_numpy() if cols else None
    n_matched = 0 if matched_rows is None else int(
        t.loc[matched_rows].groupby(["benchmark", "task"], observed=True).ngroups)
    prov = dict(corpus.provenance)
    prov["task_metadata"] = {"file": ", ".join(map(str, paths)), "files": [str(p) for p in paths], "columns": cols,
                             "tasks_matched": n_matched, "tasks": int(len(all_tasks))}
    warnings = list(corpus.warnings)
    if n_matched < len(all_tasks):
        warnings.append(warning("metadata-partial", f"task metadata ({', '.join(cols)}) found for {n_matched:,} of "
                                f"{len(all_tasks):,} tasks; the others have none", "a slice by these columns keeps "
                                "only tasks that have them", file=", ".join(map(str, paths))))
    return Corpus(table=table, name=corpus.name, source=corpus.source, format=corpus.format, warnings=warnings,
                  provenance=prov)


def read_release_dates(path) -> dict[str, str]:
    """Name -> ISO release date from a release-date file (every name a model may go by: key, alias, run ids)."""
    path = Path(path)
    if not path.exists():
        raise CorpusError([error("no-file", "the release-date file does not exist.", "check the path.", file=path)])
    out: dict[str, str] = {}
    if path.suffix.lower() == ".json":
        data = _side_json(path, "release-date file")
        if isinstance(data, dict):
            for key, val in data.items():
                if isinstance(val, dict):  # BRIDGE's model_run_mapping.json
                    date = val.get("release_date")
                    if not date:
                        continue
                    for name in (key, val.get("alias"), *(val.get("run_ids") or []), *(val.get("gpqa_run_ids") or [])):
                        if name:
                            out.setdefault(str(name), str(date))
                elif val:
                    out[str(key)] = str(val)
            return _iso(out, path)
    t = _read_table(path, "release-date file")
    syn = schema.synonym_table()
    t = t.rename(columns={c: syn.get(schema.normalise_name(c), c) for c in t.columns})
    if "model" not in t.columns or "release_date" not in t.columns:
        raise CorpusError([error("bad-metadata-file", "needs a model column and a release_date column",
                                 "write a table model,release_date (one row per model)", file=path)])
    for m, d in zip(t["model"], t["release_date"]):
        if pd.notna(m) and pd.notna(d):
            out[str(m)] = str(d)
    return _iso(out, path)


def _iso(dates: dict[str, str], path: Path) -> dict[str, str]:
    parsed = pd.to_datetime(pd.Series(dates, dtype=object), errors="coerce")
    bad = [k if len(k) <= 80 else k[:60] + f"... ({len(k):,} characters)" for k, v in parsed.items() if pd.isna(v)]
    if bad:  # a name is shortened: one of 200 KB was printed whole
        raise CorpusError([error("bad-release-date", f"release dates that are not dates for {', '.join(bad[:5])}",
                                 "write dates as YYYY-MM-DD", file=path)])
    return {k: v.strftime("%Y-%m-%d") for k, v in parsed.items()}


def join_release_dates(corpus, path):
    """The corpus with a ``release_date`` per record from its model's date in ``path`` (a new corpus).

    A model the file does not name keeps the corpus's own date, or none; the count is in
    ``provenance["release_dates"]`` and a warning (the frontier names those models and stops).
    """
    from .corpus import Corpus

    path = Path(path)
    dates = read_release_dates(path)
    t = corpus.table.copy()
    models = t["model"].astype(str)
    joined = models.map(dates)
    if "release_date" in t.columns:
        joined = t["release_date"].astype(object).where(t["release_date"].notna(), joined)
    t["release_date"] = joined.astype(object)
    undated = sorted(set(models[t["release_date"].isna()]))
    prov = dict(corpus.provenance)
    n_models = int(models.nunique())
    prov["release_dates"] = {"file": str(path), "models_dated": n_models - len(undated), "models": n_models,
                             "undated": undated}
    warnings = list(corpus.warnings)
    if undated:
        warnings.append(warning("release-dates-partial", f"no release date for {len(undated)} of {n_models} models "
                                f"(e.g. {', '.join(undated[:3])})", "add them to the file", file=path,
                                column="release_date", count=len(undated)))
    return Corpus(table=t, name=corpus.name, source=corpus.source, format=corpus.format, warnings=warnings,
                  provenance=prov)
