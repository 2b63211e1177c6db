"""Importer for per-trial result rows: BRIDGE normalized results and METR-style runs.

Two JSON-lines layouts, one trial per line, are recognised (``style="auto"``
tells them apart from the first record's fields):

``"bridge"`` (BRIDGE ``{gdpval,swebench,mlebench}_normalized_results.jsonl``)::

    {"model": str, "benchmark": str, "task_id": str, "score": 0 | 1 | {verifier: 0 | 1},
     "metadata": {"input_tokens", "output_tokens", "reasoning_tokens", "total_tokens", "num_turns"}}

A numeric score is the trial result (``scoring="threshold"`` with ``gamma``
binarises a score in [0, 1]).  A dict score holds several verifier results
(MLE-bench: ``above_median``, ``any_medal``, ``valid_submission``): they become
``verifier.<name>`` columns, ``soft_score`` is their mean and the result
follows the scoring rule, ``"all-pass"`` by default, or ``"direct"`` (the
verifier named by ``verifier=``, else the first) or ``"threshold"``.  The
rules are computed by a small local function
(:func:`._common.score_verifiers`): the project's rescoring module can rescore
later from the kept verifier columns.

``"metr"`` (METR-style run rows, e.g. BRIDGE ``cybench_normalized_results.jsonl``)::

    {"task_id", "model", "run_id", "score_binarized", "score_cont", "human_minutes",
     "generation_cost", "difficulty_label", "task_source", "eval_mode", ...}

``score_binarized`` is the result, ``score_cont`` the soft score,
``generation_cost`` the cost in USD, ``run_id`` the trial id, ``task_source``
(lower-cased) the benchmark.  Other fields (weights, human scores,
timestamps) are not part of the corpus and are listed in provenance.

Neither layout names the scaffold: it comes from ``scaffold=`` (default
``"unknown"``, with a warning).  Trial ids: the file's run id where there is
one; otherwise, only if a (benchmark, model, task) occurs more than once, a
sequence number in file order (said in provenance and a warning).  A cost
column that is 0 on every row (cybench) is taken as not recorded and dropped
with a warning (``zero_cost="keep"`` keeps it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .. import schema
from ..corpus import Corpus
from ...errors import shown
from ..issues import CorpusError, error, warning
from ..validate import SOURCE_ROW, build_corpus, non_scalar_kind
from ._common import (NearInteger, check_scoring_options, head_object, ignored_options, raise_if_nothing_left, read_json_lines,
                      score_verifiers)

FORMAT = "normalized"
UNKNOWN = "unknown"

_META_FIELDS = ("input_tokens", "output_tokens", "reasoning_tokens", "total_tokens", "num_turns")
#: METR field -> canonical column.
_METR_FIELDS = {"task_id": "task", "model": "model", "run_id": "trial", "score_binarized": "result",
                "score_cont": schema.SOFT_SCORE, "human_minutes": "human_minutes", "generation_cost": schema.COST,
                "difficulty_label": "difficulty_label"}
_SCAFFOLD_KEYS = ("scaffold", "agent_scaffold", "harness", "framework")
#: The METR fields that describe the task, not the run: the same on every run of a task.  A METR run-rows
#: file read as task metadata (``--task-metadata``; :func:`..metadata.read_task_metadata`) gives these.
METR_TASK_FIELDS = ("human_minutes", "difficulty_label")


def _style_of(obj: dict) -> str | None:
    if "task_id" not in obj or "model" not in obj:
        return None
    if "score_binarized" in obj:
        return "metr"
    if "score" in obj:
        return "bridge"
    return None


def sniff(path: Path, head: bytes) -> bool:
    """True if the first line is a BRIDGE normalized-results row or a METR run row.

    Canonical JSON-lines rows name a scaffold; these layouts never do, which
    keeps the two apart.
    """
    obj = head_object(head)
    if obj is None:
        return False
    if any(k in obj for k in _SCAFFOLD_KEYS):
        return False
    return _style_of(obj) is not None


def read(path: str | Path, *, style: str = "auto", benchmark: str | None = None, scaffold: str | None = None,
         scoring: str | None = None, gamma: float | None = None, verifier: str | None = None,
         zero_cost: str = "auto", name: str | None = None, **other) -> Corpus:
    """Read per-trial result rows (BRIDGE normalized results or METR-style runs).

    Parameters
    ----------
    path
        The JSON-lines file.
    style
        ``"auto"``, ``"bridge"`` or ``"metr"``.
    benchmark
        Benchmark name for every row (default: the row's ``benchmark`` field,
        else ``task_source`` lower-cased, else an error).
    scaffold
        Scaffold name for every row (default: a row's ``scaffold`` field, else
        ``"unknown"`` with a warning).
    scoring, gamma, verifier
        Scoring rule: ``"direct"`` (default for numeric scores), ``"all-pass"``
        (default for verifier dicts) or ``"threshold"`` with ``gamma``.
    zero_cost
        ``"auto"``: a cost of 0 on every row means "not recorded" and the
        column is dropped (with a warning); ``"keep"``: keep it as is.
    name
        Display name of the corpus (the file stem by default).
    other
        Options meant for other formats: ignored, each with a warning.

    Raises
    ------
    CorpusError
        Invalid JSON, missing fields, results that are not binary, negative
        cost, duplicate trials, ... each named by line and field.
    """
    path = Path(path)
    check_scoring_options(path, scoring, gamma)
    if style not in ("auto", "bridge", "metr"):
        raise CorpusError([error("bad-option", f"unknown style '{style}'.", "use 'auto', 'bridge' or 'metr'.",
                                 file=path, column="style")])
    if zero_cost not in ("auto", "keep"):
        raise CorpusError([error("bad-option", f"unknown zero_cost '{zero_cost}'.", "use 'auto' or 'keep'.",
                                 file=path, column="zero_cost")])
    records, issues = read_json_lines(path)
    issues.extend(ignored_options(path, FORMAT, other))
    if style == "auto":
        style = next((s for s in (_style_of(o) for _, o in records[:1]) if s), None) or "bridge"
        if records and _style_of(records[0][1]) is None:
            issues.append(error("unknown-layout", "the first record is neither a BRIDGE normalized row (model, "
                                "task_id, score) nor a METR run row (model, task_id, score_binarized).",
                                "check that this is a normalized-results file, or name the layout with "
                                "style='bridge' / style='metr'.", file=path, row=records[0][0]))
    lines = np.asarray([ln for ln, _ in records], dtype="int64")
    objs = [o for _, o in records]
    frame = pd.DataFrame.from_records(objs) if objs else pd.DataFrame()
    frame.index = pd.RangeIndex(len(frame))
    for key in ("score", "score_binarized"):  # a float column would round a NearInteger to the whole number
        if key in frame and any(isinstance(o.get(key), NearInteger) for o in objs):
            frame[key] = pd.Series([o.get(key) for o in objs], index=frame.index, dtype=object)
    provenance: dict = {"importer": FORMAT, "style": style, "source": str(path)}
    sources: dict[str, str] = {}
    raw = pd.DataFrame(index=frame.index)

    def need(col: str) -> pd.Series:
        if col not in frame:
            issues.append(error("missing-field", f"no record has a \"{col}\" field.",
                                f"give \"{col}\" on every line.", file=path, row=int(lines[0]) if len(lines) else None,
                                column=col))
            return pd.Series([None] * len(frame), index=frame.index, dtype="object")
        col_values = frame[col]
        absent = col_values.isna().to_numpy()
        if absent.any():
            i = int(np.flatnonzero(absent)[0])
            issues.append(error("missing-field", f"\"{col}\" is missing or null.", f"give \"{col}\" on every line.",
                                file=path, row=int(lines[i]), column=col, count=int(absent.sum())))
        return col_values

    raw["task"] = need("task_id")
    raw["model"] = need("model")
    sources.update(task="task_id", model="model")

    # -- benchmark -------------------------------------------------------------------------
    if benchmark is not None:
        raw["benchmark"] = benchmark
        provenance["benchmark"] = f"option: {benchmark}"
    elif "benchmark" in frame:
        raw["benchmark"] = need("benchmark")
        sources["benchmark"] = "benchmark"
        provenance["benchmark"] = "the rows' \"benchmark\" field"
    elif "task_source" in frame:
        raw["benchmark"] = need("task_source").astype("string").str.strip().str.lower()
        sources["benchmark"] = "task_source"
        provenance["benchmark"] = "the rows' \"task_source\" field, lower-cased"
    else:
        issues.append(error("missing-field", "the rows name no benchmark (no \"benchmark\" or \"task_source\" field).",
                            "pass benchmark=... (--benchmark) to name it.", file=path, column="benchmark"))
        raw["benchmark"] = None

    # -- scaffold ----------------------------------------------------------------------------
    key = next((k for k in _SCAFFOLD_KEYS if k in frame), None)
    if scaffold is not None:
        raw["scaffold"] = scaffold
        provenance["scaffold"] = f"option: {scaffold}"
    elif key is not None:
        raw["scaffold"] = frame[key]
        sources["scaffold"] = key
        provenance["scaffold"] = f"the rows' \"{key}\" field"
    else:
        raw["scaffold"] = UNKNOWN
        provenance["scaffold"] = f"not in the data: '{UNKNOWN}'"
        issues.append(warning("scaffold-unknown", f"the file does not name the scaffold; all {len(frame)} records "
                              f"get scaffold '{UNKNOWN}'.",
                              "pass scaffold=... (--scaffold) if you know which harness produced these results.",
                              file=path, column="scaffold", count=len(frame)))

    # -- results -----------------------------------------------------------------------------
    if style == "metr":
        _metr_columns(frame, raw, sources, provenance, lines, path, issues, scoring, gamma)
    else:
        _bridge_columns(frame, raw, sources, provenance, lines, path, issues, scoring, gamma, verifier)

    # -- cost ----------------------------------------------------------------------------------
    if schema.COST in raw:
        cost = pd.to_numeric(raw[schema.COST], errors="coerce")
        if zero_cost == "auto" and len(cost) and (cost == 0).all():
            raw = raw.drop(columns=[schema.COST])
            provenance["cost"] = f"dropped: \"{sources.get(schema.COST)}\" is 0 on every row (not recorded)"
            issues.append(warning("cost-all-zero", f"\"{sources.get(schema.COST)}\" is 0 on all {len(cost)} rows, "
                                  "which means it was not recorded; the corpus has no cost column.",
                                  "pass zero_cost='keep' if the runs really cost nothing, or give prices per "
                                  "benchmark instead.", file=path, column=sources.get(schema.COST)))

    # -- names must be names (a list or object cannot be grouped, and would not be a level) -----------
    for c in ("benchmark", "model", "task", "trial"):
        kind, mask = non_scalar_kind(raw[c]) if c in raw else (None, None)
        if kind:
            i = int(np.flatnonzero(mask)[0])
            raise CorpusError([error("not-a-name", f"\"{sources.get(c, c)}\" holds {kind} "
                                     f"({shown(raw[c].iat[i])[:60]}), not a name.",
                                     f"give \"{sources.get(c, c)}\" as text on every line.", file=path,
                                     row=int(lines[i]), column=sources.get(c, c), count=int(mask.sum()))])

    # -- trial ids -------------------------------------------------------------------------------
    group = ["benchmark", "model", "task"]
    has_keys = all(c in raw and raw[c].notna().all() for c in group)
    if "trial" in raw:
        provenance["trial"] = f"the rows' \"{sources.get('trial')}\" field"
    elif has_keys:
        rep = raw.groupby(group, sort=False, dropna=False).cumcount()
        n_rep = int((rep > 0).sum())
        if n_rep:
            raw["trial"] = (rep + 1).astype("int64").astype(str)
            provenance["trial"] = (f"sequence number per (benchmark, model, task) in file order: the file repeats "
                                   f"{n_rep} (benchmark, model, task) rows")
            same = frame.astype("string").duplicated(keep="first").to_numpy() if len(frame) else np.zeros(0, bool)
            issues.append(warning("repeated-trials", f"{n_rep} rows repeat an earlier (benchmark, model, task); "
                                  "they are numbered as further trials 2, 3, ... in file order"
                                  + (f", {int(same.sum())} of them identical to an earlier line" if same.any() else "")
                                  + ".", "remove copied lines if the repeats are not genuine trials.", file=path,
                                  row=int(lines[int(np.flatnonzero((rep > 0).to_numpy())[0])]), column="task_id",
                                  count=n_rep))
        else:
            provenance["trial"] = "none: every (benchmark, model, task) occurs once"
    raw[SOURCE_ROW] = lines
    if benchmark is None and "benchmark" not in sources and "benchmark" in raw and raw["benchmark"].isna().all():
        raw = raw.drop(columns=["benchmark"])
    raise_if_nothing_left(len(raw), issues)
    return build_corpus(raw, file=path, format=FORMAT, name=name, provenance=provenance, column_sources=sources,
                        issues=issues)


def _bridge_columns(frame, raw, sources, provenance, lines, path, issues, scoring, gamma, verifier) -> None:
    """Result, verifier and token columns of BRIDGE normalized rows."""
    if "score" not in frame:
        issues.append(error("missing-field", "no record has a \"score\" field.", "give \"score\" on every line.",
                            file=path, row=int(lines[0]) if len(lines) else None, column="score"))
        raw["result"] = np.nan
        return
    score = frame["score"]
    is_dict = score.map(lambda v: isinstance(v, dict)).to_numpy(dtype=bool)
    missing = score.isna().to_numpy() & ~is_dict
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        issues.append(error("missing-field", "\"score\" is missing or null.", "give a score (0 or 1) on every line.",
                            file=path, row=int(lines[i]), column="score", count=int(missing.sum())))
    result = pd.Series(np.nan, index=frame.index, dtype="object")
    soft = pd.Series(np.nan, index=frame.index, dtype="float64")
    notes = []
    scalar = ~is_dict & ~missing
    if scalar.any():
        values = score[scalar]
        if scoring == "threshold":
            num = pd.to_numeric(values, errors="coerce")
            result[scalar] = np.where(num.isna(), np.nan, (num >= gamma).astype("float64"))
            soft[scalar] = num
            notes.append(f"numeric scores: threshold, result = 1 if score >= {gamma}")
        else:
            result[scalar] = values  # the validator checks that these are 0/1 and names bad lines
            notes.append("numeric scores: direct (the score is the result)")
    if is_dict.any():
        ver = pd.DataFrame.from_records(score[is_dict].tolist(), index=frame.index[is_dict])
        ver.columns = [str(c) for c in ver.columns]
        if scoring == "direct" and verifier is not None and verifier not in ver.columns:
            raise CorpusError([error("bad-option", f"no verifier named '{verifier}'.",
                                     f"use one of: {', '.join(ver.columns)}.", file=path, column="verifier")])
        num = ver.apply(pd.to_numeric, errors="coerce")
        bad = (num.notna() & ~num.isin([0, 1])) | (num.isna() & ver.notna())
        if bad.to_numpy().any():
            # reported by the validator on the verifier.* column; keep the values so it can
            num_for_score = num.where(~bad)
        else:
            num_for_score = num
        res, sft, desc = score_verifiers(num_for_score, scoring or "all-pass", gamma=gamma, verifier=verifier)
        result[is_dict] = res
        soft[is_dict] = sft
        for c in ver.columns:
            col = schema.VERIFIER_PREFIX + c
            raw[col] = pd.Series(np.nan, index=frame.index, dtype="object")
            raw.loc[is_dict, col] = ver[c].to_numpy()
            sources[col] = f"score.{c}"
        notes.append(f"verifier scores: {desc}")
    if result.map(lambda v: isinstance(v, NearInteger)).any():
        # '0.99999999999999999' is 1.0 as a float: the scores go to the validator as the text written, which
        # decides on the decimal (core/corpus/validate.py), never on the rounded float
        result = result.map(lambda v: repr(v) if isinstance(v, NearInteger) else
                            (v if v is None or (isinstance(v, float) and v != v) else str(v)))
    else:
        as_number = pd.to_numeric(result, errors="coerce")
        if (as_number.notna() | result.isna()).all():
            result = as_number  # numbers stay numbers; anything else goes to the validator as written
    raw["result"] = result
    sources["result"] = "score"
    if soft.notna().any():
        raw[schema.SOFT_SCORE] = soft
        sources[schema.SOFT_SCORE] = "score"
    provenance["scoring"] = "; ".join(notes)

    if "metadata" in frame:
        meta = frame["metadata"]
        ok = meta.map(lambda v: isinstance(v, dict) or v is None or (isinstance(v, float) and np.isnan(v)))
        if not ok.all():
            i = int(np.flatnonzero(~ok.to_numpy())[0])
            issues.append(error("bad-metadata", f"\"metadata\" is {shown(meta.iat[i])}, not an object.",
                                "write metadata as {\"input_tokens\": ..., ...} or leave it out.", file=path,
                                row=int(lines[i]), column="metadata", count=int((~ok).sum())))
        md = pd.DataFrame.from_records([v if isinstance(v, dict) else {} for v in meta], index=frame.index)
        for c in _META_FIELDS:
            if c in md:
                raw[c] = md[c]
                sources[c] = f"metadata.{c}"
        other = sorted(set(md.columns) - set(_META_FIELDS))
        if other:
            provenance["metadata_not_imported"] = other
    extra = sorted(set(frame.columns) - {"model", "benchmark", "task_id", "score", "metadata", *_SCAFFOLD_KEYS})
    if extra:
        provenance["fields_not_imported"] = extra


def _metr_columns(frame, raw, sources, provenance, lines, path, issues, scoring, gamma) -> None:
    """Result, cost and task metadata of METR-style run rows."""
    for field, canon in _METR_FIELDS.items():
        if field in ("task_id", "model") or field not in frame:
            continue
        raw[canon] = frame[field]
        sources[canon] = field
    if "result" not in raw:
        issues.append(error("missing-field", "no record has a \"score_binarized\" field.",
                            "give the binary result in \"score_binarized\".", file=path, column="score_binarized"))
        return
    if scoring == "threshold" and schema.SOFT_SCORE in raw:
        num = pd.to_numeric(raw[schema.SOFT_SCORE], errors="coerce")
        raw["result"] = np.where(num.isna(), np.nan, (num >= gamma).astype("float64"))
        sources["result"] = "score_cont"
        provenance["scoring"] = f"threshold: result = 1 if score_cont >= {gamma}"
    else:
        provenance["scoring"] = "direct: result = score_binarized"
    if "fatal_error_from" in frame:
        fatal = frame["fatal_error_from"].notna().to_numpy()
        if fatal.any():
            i = int(np.flatnonzero(fatal)[0])
            issues.append(warning("fatal-error-runs", f"{int(fatal.sum())} runs ended in a fatal error; they are "
                                  "kept with the result the file gives them.",
                                  "drop them before loading if errored runs should not count as failures.",
                                  file=path, row=int(lines[i]), column="fatal_error_from", count=int(fatal.sum())))
    for field in ("eval_mode", "task_source"):
        if field in frame:
            provenance[field] = sorted(map(str, frame[field].dropna().unique()))
    used = {*_METR_FIELDS, "task_source", "benchmark", *_SCAFFOLD_KEYS}
    provenance["fields_not_imported"] = sorted(set(frame.columns) - used)
