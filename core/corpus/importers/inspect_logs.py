"""Importer for Inspect AI evaluation logs (``.eval`` and ``.json``; one file or a folder of them).

The logs are read through Inspect AI's own log-reading API
(``inspect_ai.log.read_eval_log`` for the header, ``read_eval_log_sample_summaries``
for the samples), so every log format version Inspect reads is read here; the
package is an optional dependency (``pip install 'ddr-explorer[inspect]'``) and
is imported only when a log is opened.

One record per sample and epoch
-------------------------------
* **benchmark**: ``benchmark=`` (``--benchmark``) if given, else the log's task
  name (``inspect_evals/gpqa_diamond``);
* **task**: the sample id;
* **model**: the log's model, through the subject-id conventions
  (:mod:`..subject_ids.conventions`): Inspect writes ``<provider>/<model>``
  (``openai/gpt-4o``) and the provider says how the model was reached, not
  which it is, so ``gpt-4o``; the provider is kept in provenance.  An alias
  file (``aliases=``) renames models as in :mod:`.pyirt`;
* **scaffold**: ``scaffold=`` (``--scaffold``) if given, else the solver or
  agent the eval ran (the log's ``solver``, e.g. ``react``), else the steps of
  its plan joined with ``" > "`` (``system_message > generate``);
* **trial**: ``<eval id>:<epoch>``, so that two logs of the same task and
  agent stay two runs;
* **verifier.<scorer>**: each scorer's value as a number, by Inspect's own
  value conventions (``"C"`` correct 1, ``"I"`` incorrect 0, ``"P"`` partial
  0.5, ``"N"`` no answer 0, booleans, numbers); a scorer that returns a dict
  gives ``verifier.<scorer>.<key>`` columns;
* **result**: the scoring rule over the verifier columns (SPEC sec. 1): ``direct``
  when the log has one scorer, else ``all-pass``, unless ``scoring=`` says
  otherwise.  A scorer with partial credit (``"P"``, fractions) needs
  ``threshold`` with ``gamma``: result = 1[mean of the scorer values >= gamma];
  verifier columns must be binary, so such a scorer's values are kept as
  ``score.<scorer>`` instead;
* **input_tokens, output_tokens, reasoning_tokens, total_tokens, cost**: the
  sample's model usage summed over the models it called, where the log has them;
* **task metadata**: each scalar key of the sample's metadata becomes a column
  (its canonical name when it is one, like ``difficulty``; else
  ``metadata.<key>``).

Samples that ended in an error or have no score are left out and reported
(they are not failures of the agent on the task); logs whose status is not
``success`` are read and reported.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .. import schema
from ..corpus import Corpus
from ..issues import CorpusError, CorpusIssue, error, warning
from ..validate import SOURCE_ROW, build_corpus
from ._common import check_scoring_options, ignored_options, raise_if_nothing_left, score_verifiers

FORMAT = "inspect"
SUFFIXES = (".eval", ".json")
#: Largest size (MiB) one member of an ``.eval`` archive (or one ``.json`` log) may inflate to before it is
#: read: far above a real header or sample summary list, far below what exhausts a laptop's memory
#: (inspect_ai parses a member whole; a 2 GiB member of blanks peaks near 4.4 GB).
MAX_MEMBER_MB = 1024
#: Largest size (MiB) all members of one archive together may inflate to.
MAX_TOTAL_MB = 8192

#: Inspect's letter values (inspect_ai.scorer: CORRECT, INCORRECT, PARTIAL, NOANSWER).
_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_TRUE = {"true": 1.0, "yes": 1.0, "correct": 1.0, "false": 0.0, "no": 0.0, "incorrect": 0.0}
_JSON_HEAD = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')


def sniff(path: Path, head: bytes) -> bool:
    """True for an Inspect ``.eval`` archive or a ``.json`` log (``{"version": n, "status": ...``)."""
    suffix = path.suffix.lower()
    if suffix == ".eval":
        return head.startswith(b"PK\x03\x04")
    if suffix == ".json":
        return _JSON_HEAD.match(head) is not None and b'"eval"' in head
    return False


def log_files(folder: Path) -> list[Path]:
    """The Inspect logs in a folder and its subfolders, in name order."""
    out = []
    for p in sorted(folder.rglob("*")):
        if p.is_file() and p.suffix.lower() in SUFFIXES:
            with open(p, "rb") as fh:
                if sniff(p, fh.read(4096)):
                    out.append(p)
    return out


def check_log_size(path: Path, max_member_mb: float = MAX_MEMBER_MB, max_total_mb: float = MAX_TOTAL_MB) -> None:
    """Refuse a log that would inflate past the caps, before inspect_ai reads any of it.

    An ``.eval`` log is a zip archive: each member's inflated size is in the archive's directory, and
    Python's zip reader (which inspect_ai uses) never yields more than that size, so the directory is
    checked without inflating anything.  A ``.json`` log is checked by its size on disk.

    Raises
    ------
    CorpusError
        Naming the log, the member, its size and the cap, and the option that raises the cap.
    """
    import zipfile

    cap, total_cap = max_member_mb * 2 ** 20, max_total_mb * 2 ** 20
    fix = (f"check that this is an Inspect log you trust; if it is, raise the cap with --max-log-mb "
           f"(now {max_member_mb:g} MiB; from Python: max_member_mb=).")
    if path.suffix.lower() != ".eval":
        size = path.stat().st_size
        if size > cap:
            raise CorpusError([error("log-too-large", f"the log is {size / 2 ** 20:,.0f} MiB, above the cap of "
                                     f"{max_member_mb:g} MiB on what is read of one log.", fix, file=path)])
        return
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise CorpusError([error("bad-log", f"not a readable .eval archive ({exc}).",
                                 "check that the file is a complete Inspect log (an interrupted eval leaves a "
                                 "partial one); re-run or remove it.", file=path)]) from None
    total = 0
    for info in infos:
        total += info.file_size
        if info.file_size > cap:
            raise CorpusError([error("log-member-too-large", f"member '{info.filename}' inflates to "
                                     f"{info.file_size / 2 ** 20:,.0f} MiB ({info.compress_size / 2 ** 20:,.1f} MiB "
                                     f"compressed), above the cap of {max_member_mb:g} MiB per member.", fix,
                                     file=path, column=info.filename)])
    if total > total_cap:
        raise CorpusError([error("log-too-large", f"its members inflate to {total / 2 ** 20:,.0f} MiB in all, above "
                                 f"the cap of {max_total_mb:g} MiB per log.", "check that this is an Inspect log "
                                 "you trust; from Python, raise max_total_mb=.", file=path)])


def _inspect_api(path: Path):
    try:
        from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries
    except ImportError:
        raise CorpusError([error("missing-dependency", "reading Inspect AI logs needs the inspect-ai package, which "
                                 "is not installed.", "install it: pip install 'ddr-explorer[inspect]' "
                                 "(or pip install inspect-ai).", file=path)]) from None
    return read_eval_log, read_eval_log_sample_summaries


def score_value(value) -> float | dict | None:
    """A scorer's value as a number (Inspect's value conventions); a dict of them; None if it has none."""
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(value, str):
        v = value.strip()
        if v in _LETTERS:
            return _LETTERS[v]
        if v.lower() in _TRUE:
            return _TRUE[v.lower()]
        try:
            return float(v)
        except ValueError:
            return None
    if isinstance(value, dict):
        return {str(k): score_value(v) for k, v in value.items()}
    return None


def _scaffold_of(header) -> str:
    solver = getattr(header.eval, "solver", None)
    if solver:
        return str(solver)
    steps = [s.solver for s in (header.plan.steps if header.plan else [])]
    return " > ".join(steps) if steps else "unknown"


def read(path: str | Path, *, benchmark: str | None = None, scaffold: str | None = None, aliases=None,
         scoring: str | None = None, gamma: float | None = None, verifier: str | None = None,
         name: str | None = None, max_member_mb: float = MAX_MEMBER_MB, max_total_mb: float = MAX_TOTAL_MB,
         **other) -> Corpus:
    """Read one Inspect AI log or a folder of them.

    Parameters
    ----------
    path
        An ``.eval`` or ``.json`` log, or a folder (searched recursively).
    benchmark
        One benchmark name for every record (default: each log's task name).
    scaffold
        One scaffold name for every record (default: each log's solver or plan).
    aliases
        An alias file (TOML, :mod:`.pyirt` format) whose ``[models]`` and
        ``[scaffolds]`` rename what the logs say.
    scoring, gamma, verifier
        Scoring rule over the scorers (default ``direct`` for one scorer,
        ``all-pass`` for several); ``threshold`` needs ``gamma``.
    name
        Display name of the corpus (the file or folder name by default).
    max_member_mb, max_total_mb
        Caps (MiB) on what one member of an ``.eval`` archive, and all its members together, inflate to
        (:func:`check_log_size`); ``--max-log-mb`` raises the first.

    Raises
    ------
    CorpusError
        inspect-ai is not installed; a log cannot be read; a folder holds no
        log; a scorer gives values a binary rule cannot use.
    """
    path = Path(path)
    check_scoring_options(path, scoring, gamma)
    files = log_files(path) if path.is_dir() else [path]
    if not files:
        raise CorpusError([error("no-logs", "the folder holds no Inspect AI log (.eval or .json).",
                                 "name a folder of Inspect logs, or one log file.", file=path)])
    for f in files:  # every log's sizes before inspect_ai reads (or is even imported for) any of them
        check_log_size(f, max_member_mb, max_total_mb)
    read_header, read_summaries = _inspect_api(path)
    issues: list[CorpusIssue] = list(ignored_options(path, FORMAT, other))
    from ..subject_ids.conventions import build_stack
    from .pyirt import load_aliases

    stack = build_stack(load_aliases(aliases) if aliases else None, "given" if aliases else "none (no file)")
    rows: list[dict] = []
    logs_meta = []
    skipped_error, skipped_unscored = [], []
    for f in files:
        try:
            header = read_header(str(f), header_only=True)
            summaries = read_summaries(str(f))
        except Exception as exc:  # noqa: BLE001 - inspect raises many types for damaged logs
            raise CorpusError([error("bad-log", f"Inspect AI cannot read this log ({type(exc).__name__}: {exc}).",
                                     "check that the file is a complete Inspect log (an interrupted eval "
                                     "leaves a partial one); re-run or remove it.", file=f)]) from None
        spec = header.eval
        sub, _layer = stack.split(str(spec.model))
        log_scaffold = scaffold or stack.top.scaffolds.get(_scaffold_of(header), _scaffold_of(header))
        bench = benchmark or str(spec.task)
        if header.status != "success":
            issues.append(warning("log-incomplete", f"the log's status is '{header.status}': its samples that "
                                  "have scores are read, the others are missing.",
                                  "re-run the eval to complete it if the missing samples matter.", file=f))
        logs_meta.append({"file": str(f), "task": str(spec.task), "model": str(spec.model), "model_used": sub.model,
                          "scaffold": log_scaffold, "status": str(header.status), "eval_id": str(spec.eval_id),
                          "run_id": str(spec.run_id), "created": str(spec.created),
                          "solver": getattr(spec, "solver", None),
                          "plan": [s.solver for s in (header.plan.steps if header.plan else [])],
                          "task_args": _plain(spec.task_args), "epochs": getattr(spec.config, "epochs", None)})
        for i, s in enumerate(summaries, start=1):
            where = f"{s.id} (epoch {s.epoch})"
            if s.error:
                skipped_error.append((f, where))
                continue
            if not s.scores:
                skipped_unscored.append((f, where))
                continue
            rec = {"benchmark": bench, "task": str(s.id), "model": sub.model, "scaffold": log_scaffold,
                   "trial": f"{spec.eval_id}:{s.epoch}", SOURCE_ROW: i, "_file": str(f)}
            for scorer, sc in s.scores.items():
                v = score_value(sc.value)
                if isinstance(v, dict):
                    for k, kv in v.items():
                        rec[f"{schema.VERIFIER_PREFIX}{scorer}.{k}"] = kv
                else:
                    rec[f"{schema.VERIFIER_PREFIX}{scorer}"] = v
            _usage(rec, s.model_usage)
            for k, v in (s.metadata or {}).items():
                if isinstance(v, (str, int, float, bool)) and v is not None:
                    rec[_metadata_column(k)] = v
            rows.append(rec)
    for what, skipped, fix in (("ended in an error", skipped_error, "fix the error and re-run those samples"),
                               ("have no score", skipped_unscored, "score the log (inspect score) first")):
        if skipped:
            f, where = skipped[0]
            issues.append(warning("sample-skipped", f"{len(skipped)} samples {what} and are left out (e.g. "
                                  f"sample {where}).", fix + "; an errored sample is not a failure of the agent.",
                                  file=f, column="samples", count=len(skipped)))
    if not rows:
        raise CorpusError([i for i in issues if i.severity == "error"] or [
            error("empty", "the logs hold no scored sample.", "score the logs, or check the folder.", file=path)])
    raw = pd.DataFrame(rows)
    ver_cols = [c for c in raw.columns if c.startswith(schema.VERIFIER_PREFIX)]
    raw, note = _result(raw, ver_cols, scoring, gamma, verifier, path, issues)
    provenance = {"importer": FORMAT, "source": str(path), "logs": logs_meta,
                  "scorers": [c[len(schema.VERIFIER_PREFIX):] for c in ver_cols], "scoring": note,
                  "model": "the log's model without its Inspect provider prefix (conventions: "
                           "Inspect <provider>/<model>)",
                  "scaffold": "option" if scaffold else "the log's solver, else its plan steps joined by ' > '",
                  "trial": "<eval id>:<epoch>", "skipped_samples": len(skipped_error) + len(skipped_unscored)}
    raw = raw.drop(columns="_file")
    if len(files) > 1:  # rows are numbered within each log
        provenance["rows"] = "sample number within its log (see logs)"
    raise_if_nothing_left(len(raw), issues)
    return build_corpus(raw, file=path, format=FORMAT, name=name or (path.name if path.is_dir() else path.stem),
                        provenance=provenance, column_sources={c: "samples" for c in ("task", "result")},
                        issues=issues)


def _plain(obj):
    try:
        return json.loads(json.dumps(obj, default=str))
    except (TypeError, ValueError):
        return str(obj)


def _usage(rec: dict, usage: dict) -> None:
    """Token counts and cost of a sample, summed over the models it called (missing stays missing)."""
    if not usage:
        return
    for col, attr in (("input_tokens", "input_tokens"), ("output_tokens", "output_tokens"),
                      ("reasoning_tokens", "reasoning_tokens"), ("total_tokens", "total_tokens"),
                      ("cost", "total_cost")):
        vals = [getattr(u, attr, None) for u in usage.values()]
        vals = [v for v in vals if v is not None]
        if vals:
            rec[col] = float(sum(vals)) if col == "cost" else int(sum(vals))


def _metadata_column(key: str) -> str:
    canonical = schema.synonym_table().get(schema.normalise_name(key))
    if canonical in (*schema.NUMERIC_METADATA, *schema.TEXT_METADATA) and canonical != schema.COST:
        return canonical
    return f"metadata.{key}"


def _result(raw: pd.DataFrame, ver_cols: list[str], scoring, gamma, verifier, path: Path,
            issues: list[CorpusIssue]) -> tuple[pd.DataFrame, str]:
    """The binary result from the verifier columns by the scoring rule."""
    rule = scoring or ("direct" if len(ver_cols) == 1 else "all-pass")
    wide = raw[ver_cols].astype("float64")
    wide.columns = [c[len(schema.VERIFIER_PREFIX):] for c in ver_cols]
    if rule != "threshold":
        used = [verifier] if (rule == "direct" and verifier) else (wide.columns[:1] if rule == "direct"
                                                                    else list(wide.columns))
        for c in used:
            if c not in wide.columns:
                raise CorpusError([error("bad-option", f"no scorer named '{c}'.",
                                         f"use one of: {', '.join(wide.columns)}.", file=path, column="verifier")])
            vals = wide[c].to_numpy()
            bad = ~np.isnan(vals) & (vals != 0) & (vals != 1)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise CorpusError([error("non-binary-score", f"scorer '{c}' gives {vals[i]:g} for sample "
                                         f"{raw['task'].iat[i]} ({int(bad.sum())} non-binary values); the "
                                         f"{rule} rule needs 0/1.", "binarise with a threshold: --scoring threshold "
                                         "--gamma G (scoring='threshold', gamma=G).", file=path,
                                         row=int(raw[SOURCE_ROW].iat[i]), column=f"verifier.{c}",
                                         count=int(bad.sum()))])
    result, soft, desc = score_verifiers(wide, rule, gamma=gamma, verifier=verifier)
    missing = np.isnan(result)
    if missing.any():
        issues.append(warning("sample-skipped", f"{int(missing.sum())} samples have no usable score and are "
                              "left out.", "check their scorers' values.", file=path,
                              row=int(raw[SOURCE_ROW].iat[int(np.flatnonzero(missing)[0])]), column="scores",
                              count=int(missing.sum())))
        raw, result, soft = raw.loc[~missing].reset_index(drop=True), result[~missing], soft[~missing]
    raw = raw.copy()
    raw["result"] = result.astype("int64")
    if len(ver_cols) > 1 or rule == "threshold":
        raw[schema.SOFT_SCORE] = soft
    # verifier columns are binary (SPEC sec. 1); a scorer with partial credit keeps its values as score.<name>
    moved = {}
    for c in ver_cols:
        v = raw[c].to_numpy(dtype="float64")
        if (~np.isnan(v) & (v != 0) & (v != 1)).any():
            moved[c] = "score." + c[len(schema.VERIFIER_PREFIX):]
    if moved:
        raw = raw.rename(columns=moved)
        desc += f"; non-binary scorers kept as {', '.join(moved.values())} (not verifier columns)"
    return raw, desc
