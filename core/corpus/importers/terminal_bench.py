"""Importer for the Terminal-Bench leaderboard ``meta.json``.

The file (as published in dariakryvosheieva/agent-psychometrics,
``data/terminalbench/meta.json``) is one JSON object::

    {"agents": 83, "tasks": 89, "task_list": [...], "threshold": ...,
     "results": [{"rank", "agent", "model", "agent_org", "model_org", "date",
                  "accuracy", "detail_url", "task_results": {task: "k/n"}}, ...]}

Each element of ``results`` is one leaderboard run of one agent (a scaffold
with a model) and ``task_results`` gives ``k`` successes out of ``n`` trials
per task.  Each (run, task) becomes one binomial cell of the corpus.

The shifted-fields quirk
------------------------
In the upstream file the values sit one field to the right of their names:
the rank sits in ``"agent"``, the scaffold in ``"model"``, the scaffold's
organisation in ``"model_org"``, the submission date in ``"agent_org"``, the
model in ``"date"`` and the model's organisation in ``"accuracy"`` (the
accuracy itself is lost).  We do not trust either reading blindly:

* the *date evidence*: which of ``"date"`` and ``"agent_org"`` holds values
  that parse as dates;
* the *URL evidence*: ``detail_url`` ends in ``<scaffold>/<version>/<model>@<org>``,
  so the reading whose scaffold and model names share words with it is right.

The date evidence decides and the URL evidence must not contradict it; when
neither decides, the importer asks for ``mapping="shifted"`` or
``mapping="straight"``.  A file that is not shifted is read straight.  The
mapping used and the evidence for it are kept in ``Corpus.provenance``.

Two runs (``"agent"`` 41 and 53) carry a second, smaller quirk: the model's
name and organisation are swapped (``"date": "MiniMax"``,
``"accuracy": "MiniMax-M2.1"``).  When the organisation field equals the model
part of ``detail_url`` and the name field does not, the two are swapped back
and each such run is reported as a warning.

Each run gets a trial id ``run-NN`` from its rank, because the same agent
(e.g. Warp with model "Multiple") appears in several leaderboard runs.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np
import pandas as pd

from ..corpus import Corpus
from ...errors import shown
from ..issues import CorpusError, CorpusIssue, error, warning
from ..validate import SOURCE_ROW, build_corpus
from ._common import MAX_LISTED, decode_text, ignored_options, raise_if_nothing_left

FORMAT = "terminal-bench"
DEFAULT_BENCHMARK = "terminal-bench-2.0"

#: Canonical meaning -> field name, for the two readings of a result element.
MAPPINGS: dict[str, dict[str, str]] = {
    "straight": {"rank": "rank", "scaffold": "agent", "scaffold_org": "agent_org", "model": "model",
                 "model_org": "model_org", "date": "date", "accuracy": "accuracy"},
    "shifted": {"rank": "agent", "scaffold": "model", "scaffold_org": "model_org", "date": "agent_org",
                "model": "date", "model_org": "accuracy"},
}

_CELL = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:')
_DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d.%m.%Y", "%m/%d/%Y")


def sniff(path: Path, head: bytes) -> bool:
    """True if ``head`` looks like a Terminal-Bench leaderboard meta.json."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return text.startswith(b"{") and b'"results"' in head and b'"task_results"' in head


# -- evidence ------------------------------------------------------------------------
def _is_date(value) -> bool:
    """True for a calendar date (ISO 8601, optionally with a time, or a few common layouts)."""
    if not isinstance(value, str):
        return False
    v = value.strip()
    if re.match(r"^\d{4}-\d{2}-\d{2}", v):
        v = v[:10]
    for fmt in _DATE_FORMATS:
        try:
            datetime.strptime(v, fmt)
            return True
        except ValueError:
            continue
    return False


def _words(text) -> set[str]:
    """Words of three or more letters (model and scaffold names share these with the URL)."""
    return {w for w in re.findall(r"[a-z]+", str(text).lower()) if len(w) >= 3}


def _squash(text) -> str:
    return re.sub(r"[^a-z0-9]", "", str(text).lower())


def parse_detail_url(url) -> tuple[str, str, list[str]]:
    """Split a leaderboard detail URL into (scaffold slug, version, model slugs).

    ``.../2.0/Factory%20Droid/unknown/gpt-5.2%40openai`` gives
    ``("Factory Droid", "unknown", ["gpt-5.2"])``; a run with several models
    (``a%40x%2Cb%40y``) gives several slugs.  Unparseable URLs give empty strings.
    """
    if not isinstance(url, str) or not url:
        return "", "", []
    parts = [p for p in urlparse(url).path.split("/") if p]
    if len(parts) < 3:
        return "", "", []
    scaffold, version, models = unquote(parts[-3]), unquote(parts[-2]), unquote(parts[-1])
    slugs = [m.rsplit("@", 1)[0] for m in models.split(",")]
    # provider paths such as accounts/fireworks/models/glm-4p6 or openai/gpt-oss-120b
    slugs = [s.rsplit("/", 1)[-1] for s in slugs]
    return scaffold, version, slugs


def _url_agreement(results: list[dict], mapping: dict[str, str]) -> int:
    """Runs whose scaffold matches detail_url's scaffold part, or model its model part, under ``mapping``.

    Roles are compared separately (scaffold with scaffold, model with model),
    so that a reading which puts the scaffold's name in the model's place does
    not count as agreement.
    """
    n = 0
    for r in results:
        scaffold_slug, _, model_slugs = parse_detail_url(r.get("detail_url"))
        model_words = set().union(*[_words(s) for s in model_slugs]) if model_slugs else set()
        if (_words(r.get(mapping["scaffold"], "")) & _words(scaffold_slug)
                or _words(r.get(mapping["model"], "")) & model_words
                or _words(r.get(mapping["model_org"], "")) & model_words):
            n += 1
    return n


def detect_mapping(results: list[dict]) -> tuple[str | None, dict]:
    """Decide whether the result elements are shifted; return (mapping or None, evidence)."""
    dicts = [r for r in results if isinstance(r, dict)]
    evidence = {
        "runs": len(dicts),
        "dates_in_date_field": sum(_is_date(r.get("date")) for r in dicts),
        "dates_in_agent_org_field": sum(_is_date(r.get("agent_org")) for r in dicts),
        "detail_url_agrees_straight": _url_agreement(dicts, MAPPINGS["straight"]),
        "detail_url_agrees_shifted": _url_agreement(dicts, MAPPINGS["shifted"]),
    }
    by_date = None
    if evidence["dates_in_agent_org_field"] > evidence["dates_in_date_field"]:
        by_date = "shifted"
    elif evidence["dates_in_date_field"] > evidence["dates_in_agent_org_field"]:
        by_date = "straight"
    by_url = None
    if evidence["detail_url_agrees_shifted"] > evidence["detail_url_agrees_straight"]:
        by_url = "shifted"
    elif evidence["detail_url_agrees_straight"] > evidence["detail_url_agrees_shifted"]:
        by_url = "straight"
    if by_date and by_url and by_date != by_url:
        evidence["conflict"] = f"dates say {by_date}, detail_url says {by_url}"
        return None, evidence
    return by_date or by_url, evidence


# -- line numbers ----------------------------------------------------------------------
class _Lines:
    """Line numbers of the result elements and of the keys inside them.

    ``json.loads`` gives no positions, so after it succeeds we walk the
    ``results`` array again with ``raw_decode`` to find where each element
    starts and ends, and map character offsets to 1-based lines.
    """

    def __init__(self, text: str, n_results: int):
        self.text = text
        self.newlines = np.flatnonzero(np.frombuffer(text.encode("utf-32-le"), dtype="<u4") == 10)
        self.spans: list[tuple[int, int]] = []
        m = None
        for m in re.finditer(r'"results"\s*:\s*\[', text):
            pass  # the last match: "results" is the last top-level key upstream
        if m is None:
            return
        dec = json.JSONDecoder()
        pos = m.end()
        for _ in range(n_results):
            while pos < len(text) and text[pos] in " \t\r\n,":
                pos += 1
            try:
                _, end = dec.raw_decode(text, pos)
            except json.JSONDecodeError:
                self.spans = []
                return
            self.spans.append((pos, end))
            pos = end

    def line(self, offset: int) -> int:
        return int(np.searchsorted(self.newlines, offset, side="left")) + 1

    def element(self, i: int) -> int | None:
        return self.line(self.spans[i][0]) if i < len(self.spans) else None

    def keys(self, i: int) -> dict[str, int]:
        """Key -> line of its first occurrence within element ``i`` (task keys after task_results)."""
        if i >= len(self.spans):
            return {}
        start, end = self.spans[i]
        out: dict[str, int] = {}
        in_tasks = False
        for m in _KEY.finditer(self.text, start, end):
            key = m.group(1)
            if "\\" in key:
                try:
                    key = json.loads(f'"{key}"')
                except json.JSONDecodeError:
                    pass
            if key == "task_results":
                in_tasks = True
            name = f"task_results.{key}" if in_tasks and key != "task_results" else key
            out.setdefault(name, self.line(m.start()))
        return out


# -- reader ---------------------------------------------------------------------------------
def read(path: str | Path, *, benchmark: str = DEFAULT_BENCHMARK, mapping: str = "auto",
         name: str | None = None, **other) -> Corpus:
    """Read a Terminal-Bench leaderboard meta.json into a corpus of binomial cells.

    Parameters
    ----------
    path
        The meta.json file.
    benchmark
        The benchmark name given to every record.
    mapping
        ``"auto"`` (detect the shifted-fields quirk), ``"shifted"`` or ``"straight"``.
    name
        Display name of the corpus (the benchmark name by default).
    other
        Options meant for other formats: ignored, each with a warning.

    Returns
    -------
    Corpus
        One record per (run, task): ``successes`` of ``trials``, trial id ``run-NN``.

    Raises
    ------
    CorpusError
        For invalid JSON, a missing ``results`` list, runs without a scaffold
        or model, malformed ``"k/n"`` cells (each named by line and field), or
        a layout whose mapping cannot be decided.
    """
    path = Path(path)
    if mapping not in ("auto", *MAPPINGS):
        raise CorpusError([error("bad-option", f"unknown mapping '{mapping}'.",
                                 "use mapping='auto', 'shifted' or 'straight'.", file=path, column="mapping")])
    data = path.read_bytes()
    if not data.strip():
        raise CorpusError([error("empty", "the file is empty.", "check that it is the right file.", file=path)])
    text = decode_text(data, path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorpusError([error("bad-json", f"invalid JSON ({exc.msg}, character {exc.colno}).",
                                 "repair the JSON (a missing comma or quote is the usual cause).",
                                 file=path, row=exc.lineno)]) from None
    except (RecursionError, ValueError) as exc:
        from ._common import json_problem

        raise CorpusError([error("bad-json", f"unreadable JSON ({json_problem(exc)}).",
                                 "check that this is a Terminal-Bench meta.json.", file=path)]) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise CorpusError([error("missing-field", "no 'results' list at the top level.",
                                 "a Terminal-Bench meta.json holds {\"results\": [{..., \"task_results\": "
                                 "{task: \"k/n\"}}, ...]}; check that this is such a file.",
                                 file=path, row=1, column="results")])
    results: list = doc["results"]
    lines = _Lines(text, len(results))
    issues: list[CorpusIssue] = []
    issues.extend(ignored_options(path, FORMAT, other))

    chosen, evidence = detect_mapping(results)
    if mapping != "auto":
        if chosen and chosen != mapping:
            issues.append(warning("mapping-forced", f"the fields look {chosen}, but mapping='{mapping}' was "
                                  f"forced ({evidence}).", "check the scaffold and model names in the result.",
                                  file=path, column="results"))
        chosen = mapping
    if chosen is None:
        raise CorpusError([error("mapping-undecided", "cannot tell whether the result fields are shifted "
                                 f"one place to the right (evidence: {evidence}).",
                                 "pass --field-mapping shifted or --field-mapping straight (from Python: "
                                 "mapping='shifted' or mapping='straight').",
                                 file=path, column="results")])
    fields = MAPPINGS[chosen]

    task_list = doc.get("task_list") if isinstance(doc.get("task_list"), list) else None
    rank_width = max(2, len(str(len(results))))
    runs: dict[str, dict] = {}
    swapped: list[str] = []
    cell_task: list[str] = []
    cell_value: list = []
    cell_run: list[int] = []
    cell_line: list[int] = []
    trial_of_run: list[str] = []
    model_of_run: list[str] = []
    scaffold_of_run: list[str] = []
    bad_cells = 0

    for i, r in enumerate(results):
        at = lines.element(i)
        if not isinstance(r, dict):
            issues.append(error("bad-run", f"result {i + 1} is a JSON {type(r).__name__}, not an object.",
                                "each element of 'results' must be an object.", file=path, row=at,
                                column="results"))
            trial_of_run.append("")
            model_of_run.append("")
            scaffold_of_run.append("")
            continue
        key_line = lines.keys(i)
        get = {k: r.get(f) for k, f in fields.items()}
        # name / org swapped within the model fields: detail_url names the model
        _, _, slugs = parse_detail_url(r.get("detail_url"))
        if (len(slugs) == 1 and isinstance(get["model_org"], str) and _squash(get["model_org"]) == _squash(slugs[0])
                and _squash(get["model"]) != _squash(slugs[0])):
            swapped.append(str(r.get(fields["rank"])))
            issues.append(warning("model-fields-swapped",
                                  f"model name and organisation are swapped in this run ('{fields['model']}' = "
                                  f"{get['model']!r}, '{fields['model_org']}' = {get['model_org']!r}); detail_url "
                                  f"names the model '{slugs[0]}', so the model is read as {get['model_org']!r}.",
                                  "nothing to do unless the swap is wrong; the original values are in provenance.",
                                  file=path, row=key_line.get(fields["model"], at), column=fields["model"]))
            original = {fields["model"]: get["model"], fields["model_org"]: get["model_org"]}
            get["model"], get["model_org"] = get["model_org"], get["model"]
        else:
            original = None
        for what in ("scaffold", "model"):
            v = get[what]
            if not isinstance(v, str) or not v.strip():
                issues.append(error("missing-value", f"the run has no {what} name (field '{fields[what]}' is "
                                    f"{v!r}).", f"fill in the {what} name in '{fields[what]}'.",
                                    file=path, row=key_line.get(fields[what], at), column=fields[what]))
        rank = get["rank"]
        try:
            trial = f"run-{int(str(rank).strip()):0{rank_width}d}"
        except ValueError:
            trial = f"run-at-{i + 1:0{rank_width}d}"
            issues.append(warning("no-rank", f"the run has no numeric rank (field '{fields['rank']}' is {shown(rank)}); "
                                  f"its trial id is '{trial}' from its position.",
                                  "give each run a rank if the trial ids matter.",
                                  file=path, row=key_line.get(fields["rank"], at), column=fields["rank"]))
        if trial in runs:
            issues.append(error("duplicate-run", f"two runs have the rank {shown(rank)} (trial id '{trial}').",
                                "give each leaderboard run its own rank.", file=path,
                                row=key_line.get(fields["rank"], at), column=fields["rank"]))
        runs[trial] = {k: get[k] for k in fields} | {"detail_url": r.get("detail_url"), "line": at}
        if original:
            runs[trial]["fields_as_written"] = original
        trial_of_run.append(trial)
        model_of_run.append(str(get["model"]).strip() if get["model"] is not None else "")
        scaffold_of_run.append(str(get["scaffold"]).strip() if get["scaffold"] is not None else "")

        tr = r.get("task_results")
        if not isinstance(tr, dict):
            issues.append(error("missing-field", "the run has no 'task_results' object.",
                                "give 'task_results': {task: \"k/n\", ...} for every run.",
                                file=path, row=at, column="task_results"))
            continue
        for task, value in tr.items():
            cell_task.append(task)
            cell_value.append(value)
            cell_run.append(i)
            cell_line.append(key_line.get(f"task_results.{task}", at or 1))

    # -- cells, vectorised ---------------------------------------------------------------
    values = pd.Series(cell_value, dtype="object")
    text_values = values.where(values.map(lambda v: isinstance(v, str)), None).astype("string")
    parts = text_values.str.extract(_CELL.pattern)
    bad = parts[0].isna().to_numpy()
    for j in np.flatnonzero(bad):
        bad_cells += 1
        if bad_cells <= MAX_LISTED:
            issues.append(error("bad-cell", f"the result of task '{cell_task[j]}' is {shown(cell_value[j])}, not "
                                "\"k/n\" (successes/trials).",
                                "write the cell as \"k/n\" with whole numbers, e.g. \"3/5\".",
                                file=path, row=cell_line[j], column=f"task_results.{cell_task[j]}"))
    if bad_cells > MAX_LISTED:
        issues.append(error("bad-cell", f"{bad_cells - MAX_LISTED} more cells are not \"k/n\".",
                            "write every cell as \"k/n\".", file=path, column="task_results",
                            count=bad_cells - MAX_LISTED))

    if task_list is not None:
        listed = set(map(str, task_list))
        extra = sorted(set(cell_task) - listed)
        if extra:
            issues.append(warning("task-not-listed", f"{len(extra)} tasks have results but are not in "
                                  f"'task_list' (e.g. {', '.join(extra[:3])}); they are kept.",
                                  "check 'task_list' if the leaderboard has a fixed task set.",
                                  file=path, column="task_list", count=len(extra)))
        unused = sorted(listed - set(cell_task))
        if unused:
            issues.append(warning("task-without-results", f"{len(unused)} tasks of 'task_list' have no result "
                                  f"in any run (e.g. {', '.join(unused[:3])}).", "nothing to do; they are absent.",
                                  file=path, column="task_list", count=len(unused)))

    run_idx = np.asarray(cell_run, dtype="int64")
    raw = pd.DataFrame({
        "benchmark": benchmark,
        "task": pd.Series(cell_task, dtype="object"),
        "model": np.asarray(model_of_run, dtype=object)[run_idx] if len(run_idx) else [],
        "scaffold": np.asarray(scaffold_of_run, dtype=object)[run_idx] if len(run_idx) else [],
        "trial": np.asarray(trial_of_run, dtype=object)[run_idx] if len(run_idx) else [],
        # malformed cells were reported above; 0/1 placeholders keep the validator from repeating them
        "successes": pd.to_numeric(parts[0], errors="coerce").fillna(0).astype("int64").to_numpy(),
        "trials": pd.to_numeric(parts[1], errors="coerce").fillna(1).astype("int64").to_numpy(),
        SOURCE_ROW: np.asarray(cell_line, dtype="int64"),
    })
    provenance = {
        "importer": FORMAT,
        "source": str(path),
        "benchmark": benchmark,
        "mapping": chosen,
        "mapping_fields": dict(fields),
        "mapping_evidence": evidence,
        "mapping_note": ("values sit one field to the right of their names upstream; read through the "
                         "'shifted' mapping" if chosen == "shifted" else "fields read as named"),
        "model_fields_swapped_in_runs": swapped,
        "runs": runs,
        "cells": int(len(raw)),
    }
    sources = {"task": "task_results", "successes": "task_results", "trials": "task_results",
               "model": fields["model"], "scaffold": fields["scaffold"], "trial": fields["rank"]}
    raise_if_nothing_left(len(raw), issues)
    return build_corpus(raw, file=path, format=FORMAT, name=name or benchmark, provenance=provenance,
                        column_sources=sources, issues=issues)
