"""Join task metadata and model release dates kept in files beside a corpus (issue 19, item 4).

Leaderboard exports rarely carry task metadata or model release dates in the result rows; BRIDGE,
for one, keeps human completion minutes per task in ``human_minutes_by_task.jsonl`` and release dates
per model in ``model_run_mapping.json``.  The frontier over time (seed 002 sec. 5.1) needs a
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

import pandas as pd

from . import schema
from .issues import CorpusError, error, warning

__all__ = ["join_task_metadata", "join_release_dates", "read_release_dates"]


def _read_table(path: Path) -> pd.DataFrame:
    suffix = path.suffix.lower()
    try:
        if suffix in (".csv",):
            return pd.read_csv(path)
        if suffix in (".tsv", ".tab"):
            return pd.read_csv(path, sep="\t")
        if suffix in (".jsonl", ".ndjson"):
            return pd.read_json(path, lines=True)
        if suffix == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
            return pd.DataFrame(data if isinstance(data, list) else [data])
    except (OSError, ValueError) as exc:
        raise CorpusError([error("bad-metadata-file", f"cannot read it ({exc})", "give a CSV, TSV, JSON lines "
                                 "or JSON file", file=path)]) from None
    raise CorpusError([error("bad-metadata-file", f"unknown file type {suffix!r}", "give a .csv, .tsv, .jsonl or "
                             ".json file", file=path)])


def join_task_metadata(corpus, path):
    """The corpus with the columns of a per-task file joined to its records (a new corpus).

    Raises
    ------
    CorpusError
        The file is unreadable or has no task column, or no task of it is in the corpus.
    """
    from .corpus import Corpus

    path = Path(path)
    if not path.exists():
        raise CorpusError([error("no-file", "the task metadata file does not exist.", "check the path.", file=path)])
    meta = _read_table(path)
    syn = schema.synonym_table()
    meta = meta.rename(columns={c: syn.get(schema.normalise_name(c), c) for c in meta.columns})
    if "task" not in meta.columns:
        raise CorpusError([error("bad-metadata-file", "no task column (task, task_id, item, ...)",
                                 "name the column of task ids task or task_id", file=path)])
    keys = ["benchmark", "task"] if "benchmark" in meta.columns else ["task"]
    meta = meta.dropna(subset=keys).drop_duplicates(subset=keys, keep="first")
    cols = [c for c in meta.columns if c not in keys and c not in schema.REQUIRED_FACETS]
    t = corpus.table
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
    matched_rows = joined[cols[0]].notna().to_numpy() if cols else None
    n_matched = 0 if matched_rows is None else int(
        t.loc[matched_rows].groupby(["benchmark", "task"], observed=True).ngroups)
    if n_matched == 0:
        raise CorpusError([error("metadata-no-match", f"none of the {len(meta):,} tasks of the file is a task of "
                                 f"the corpus (e.g. {', '.join(map(repr, meta['task'].astype(str).head(3)))})",
                                 "check that the file's task ids are the corpus's", file=path)])
    prov = dict(corpus.provenance)
    prov["task_metadata"] = {"file": str(path), "columns": cols, "tasks_matched": n_matched,
                             "tasks": int(len(all_tasks))}
    warnings = list(corpus.warnings)
    if n_matched < len(all_tasks):
        warnings.append(warning("metadata-partial", f"task metadata ({', '.join(cols)}) found for {n_matched:,} of "
                                f"{len(all_tasks):,} tasks; the others have none", "a slice by these columns keeps "
                                "only tasks that have them", file=path))
    return Corpus(table=table, name=corpus.name, source=corpus.source, format=corpus.format, warnings=warnings,
                  provenance=prov)


def read_release_dates(path) -> dict[str, str]:
    """Name -> ISO release date from a release-date file (every name a model may go by: key, alias, run ids)."""
    path = Path(path)
    if not path.exists():
        raise CorpusError([error("no-file", "the release-date file does not exist.", "check the path.", file=path)])
    out: dict[str, str] = {}
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CorpusError([error("bad-metadata-file", f"cannot read it ({exc})", "give valid JSON",
                                     file=path)]) from None
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
    t = _read_table(path)
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
    bad = [k for k, v in parsed.items() if pd.isna(v)]
    if bad:
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
