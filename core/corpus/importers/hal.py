"""Importer for the HAL response matrix of Hardy et al. (2026), seed 000 sec. 4 and App. A.1.

The file (``hal_response_matrix.csv``, MIT licence, from the authors' repository; also on Hugging Face as
``razam2/hal-response-matrix``) is one row per rollout::

    run_id,benchmark,task_id,agent_name,model_name,reasoning_effort,score

* ``agent_name`` is the **scaffold** (the paper's Table 8 note: "Scaffold corresponds to agent_name");
  the canonical synonyms would not find it, which is why this is a named format;
* ``model_name`` is the model and already carries the reasoning effort as a suffix
  (``claude_3_7_sonnet_20250219default``), as in the authors' analysis; ``reasoning_effort`` is
  therefore not a facet of its own and is only checked, never used to split models;
* ``run_id`` is one leaderboard run (one benchmark, scaffold and model): the trial id;
* ``score`` is the binary task result.

The authors' loader drops exact duplicate rows and rows with a missing score before fitting and
reports 29,923 rollouts, 9 benchmarks, 54 models and 13 scaffolds.  :func:`read` does the same and
counts what it dropped (``Corpus.provenance["filtering"]``, and a warning for each kind that occurs).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd

from .. import schema
from ..corpus import Corpus
from ..issues import CorpusError, CorpusIssue, error, warning
from ..validate import SOURCE_ROW, build_corpus
from ._common import first_line, ignored_options

FORMAT = "hal"

#: File column -> canonical name.  ``reasoning_effort`` is checked, not mapped (see the module note).
COLUMNS: dict[str, str] = {"run_id": schema.TRIAL_ID, "benchmark": "benchmark", "task_id": "task",
                           "agent_name": schema.SCAFFOLD, "model_name": "model", "score": schema.RESULT}
EFFORT = "reasoning_effort"

#: The columns that identify the format: the scaffold under the name no synonym covers, with the rest.
SIGNATURE = frozenset({"benchmark", "task_id", "agent_name", "model_name", "score"})

#: What the authors' loader treats as a missing score (pandas' default NA markers that occur in practice).
_MISSING = ("", "na", "nan", "null", "none")


def _header(head: bytes) -> list[str]:
    try:
        line = first_line(head).decode("utf-8", "replace")
        return [h.strip() for h in next(csv.reader([line]))]
    except (csv.Error, StopIteration):
        return []


def sniff(path: Path, head: bytes) -> bool:
    """True if the header names the HAL response matrix's columns (``agent_name``, ``model_name``, ...)."""
    return SIGNATURE <= set(_header(head))


def _drop_filtered(raw: pd.DataFrame, path: Path) -> tuple[pd.DataFrame, dict, list[CorpusIssue]]:
    """Drop exact duplicate rows and rows without a score, as the authors' loader does; count both.

    Duplicates are judged on every column of the file (run id included), so two rollouts of one task
    in different runs are both kept: they are replicates, not copies.
    """
    issues: list[CorpusIssue] = []
    cols = [c for c in raw.columns if c != SOURCE_ROW]
    dup = raw.duplicated(subset=cols, keep="first").to_numpy()
    if dup.any():
        first = int(raw[SOURCE_ROW].to_numpy()[dup][0])
        issues.append(warning("duplicate-row-dropped", f"{int(dup.sum()):,} rows repeat an earlier row exactly and "
                              "were dropped (the authors' loader does the same).",
                              "nothing to do; remove them from the file to silence this.", file=path, row=first,
                              count=int(dup.sum())))
    kept = raw.loc[~dup]
    score = kept["score"].astype("string").str.strip().str.lower()
    missing = (score.isna() | score.isin(_MISSING)).to_numpy()
    if missing.any():
        first = int(kept[SOURCE_ROW].to_numpy()[missing][0])
        issues.append(warning("missing-score-dropped", f"{int(missing.sum()):,} rows have no score and were dropped "
                              "(the authors' loader does the same).",
                              "fill in 0 or 1 where the result is known.", file=path, row=first, column="score",
                              count=int(missing.sum())))
    out = kept.loc[~missing].reset_index(drop=True)  # the validator builds its table on a fresh range index
    filtering = {"rows_read": int(len(raw)), "duplicate_rows_dropped": int(dup.sum()),
                 "missing_scores_dropped": int(missing.sum()), "rows_kept": int(len(out))}
    return out, filtering, issues


def _effort_check(raw: pd.DataFrame, path: Path) -> list[CorpusIssue]:
    """A warning when one model name carries several reasoning efforts (they would be pooled into one model)."""
    if EFFORT not in raw.columns:
        return []
    n = raw.groupby("model_name", observed=True)[EFFORT].nunique()
    mixed = n[n > 1]
    if mixed.empty:
        return []
    name = str(mixed.index[0])
    row = int(raw.loc[raw["model_name"] == name, SOURCE_ROW].iloc[0])
    return [warning("effort-not-in-model-name", f"{len(mixed)} model names carry several reasoning efforts (e.g. "
                    f"'{name}'); each is read as one model, efforts pooled.",
                    "append the effort to model_name (the authors' convention) to fit them as separate models.",
                    file=path, row=row, column="model_name", count=len(mixed))]


def read(path: str | Path, *, name: str | None = None, **other) -> Corpus:
    """Read the HAL response matrix into a corpus of binary trials.

    Parameters
    ----------
    path
        The CSV file (columns ``run_id, benchmark, task_id, agent_name, model_name, reasoning_effort, score``;
        ``run_id`` and ``reasoning_effort`` may be absent).
    name
        Display name of the corpus (the file stem by default).
    other
        Options meant for other formats: ignored, each with a warning.

    Returns
    -------
    Corpus
        One record per kept row; ``provenance["filtering"]`` counts the rows read, the exact duplicates
        and missing scores dropped, and the rows kept.

    Raises
    ------
    CorpusError
        When a column is missing (named, with the fix), or a score is not 0/1 (row and column named).
    """
    path = Path(path)
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:  # every column as text: the validator parses the scores strictly and names the row of a bad one
        raw = pd.read_csv(io.BytesIO(data), dtype=str, skipinitialspace=True)
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise CorpusError([error("bad-csv", f"the file cannot be read as the HAL response matrix ({exc}).",
                                 "check that it is the comma-separated hal_response_matrix.csv.",
                                 file=path)]) from None
    raw.columns = [str(c).strip() for c in raw.columns]
    absent = [c for c in ("benchmark", "task_id", "agent_name", "model_name", "score") if c not in raw.columns]
    if absent:
        raise CorpusError([error("missing-column", f"no '{c}' column, which the HAL format needs (columns found: "
                                 f"{', '.join(raw.columns)}).",
                                 "read the file as a plain table instead: --format csv with --columns.",
                                 file=path, row=1, column=c) for c in absent])
    raw[SOURCE_ROW] = np.arange(2, len(raw) + 2, dtype="int64")  # the header is line 1
    raw, filtering, issues = _drop_filtered(raw, path)
    issues += _effort_check(raw, path) + ignored_options(path, FORMAT, other)
    keep = [c for c in (*COLUMNS, EFFORT) if c in raw.columns]  # the effort is kept as a column, not a facet
    table = raw[keep + [SOURCE_ROW]].rename(columns=COLUMNS)
    for c in COLUMNS.values():  # facets and the trial id as categoricals; the score stays text for the validator
        if c in table.columns and c != schema.RESULT:
            table[c] = table[c].astype("category")
    provenance = {"importer": FORMAT, "source": str(path), "filtering": filtering,
                  "columns": {v: k for k, v in COLUMNS.items()},
                  "attribution": "HAL response matrix, Hardy et al. (2026); MIT licence (c) 2026 hardym-stanford",
                  "note": "agent_name is the scaffold; model_name already carries the reasoning effort"}
    return build_corpus(table, file=path, format=FORMAT, name=name or path.stem, provenance=provenance,
                        column_sources={v: k for k, v in COLUMNS.items()}, issues=issues)
