"""Importer for py-irt response files (JSON lines, one line per subject).

Each line is ``{"subject_id": str, "responses": {item_id: value}}`` where a
value is a binary response ``0``/``1`` or an aggregated cell
``{"successes": k, "trials": n}``.  Items a subject did not attempt are simply
absent (sparse designs are fine).

A py-irt *subject* is one evaluated system and its id usually mixes the
scaffold and the model (``"factory_droid_gpt-5_2_at_openai"``,
``"20240620_sweagent_claude3.5sonnet"``, ``"gpt-5-mini"``); an *item* is a
task, sometimes of one of several benchmarks.  The importer splits both with
the documented rules below and an editable alias file, and reports every id
that only a fallback could map: nothing is dropped and nothing is guessed
silently.  Each subject's id is kept as the trial id of its records, so two
subjects that map to the same agent remain two runs.

Splitting a subject id (first rule that applies wins)
-----------------------------------------------------
1. **explicit**: the id has an entry in the alias file's ``[subjects]`` table.
2. **prefix**: the id starts with a key of ``[scaffold_prefixes]`` (the
   longest such key wins); the scaffold is the key's value and the rest of
   the id is the *model part*.
3. **pattern**: the id fully matches a ``[[subject_patterns]]`` regex; the
   named groups ``model`` (and optionally ``scaffold``) give the parts, or
   the pattern's fixed ``model`` / ``scaffold`` values.
4. **fallback "_at_"** (reported): ``<scaffold>_<model part>`` where the model
   part contains ``_at_<org>`` (the Terminal-Bench ``responses_raw.jsonl``
   convention): the scaffold is the text before the first ``_``.
5. **fallback whole id** (reported): the whole id is the model and the
   scaffold is ``default_scaffold`` (``"unknown"``).

A model part of the form ``<model>_at_<org>`` loses its ``_at_<org>`` suffix
(the organisation is kept in provenance); a comma-separated list of such parts
is a run with several models, named ``multiple_models`` if the alias file sets
it, else the names joined with ``+`` (reported).  Model and scaffold names
then go through the ``[models]`` and ``[scaffolds]`` alias tables.

Two file-wide rules follow (:mod:`.unsplit`, both reported): model names that
differ only in case and ``-_.`` are merged (``gpt4o`` / ``gpt-4o``; alias key
``merge_models = false`` keeps them apart), and when some records' scaffold is
unknown, "unknown" is not made a scaffold level: every record gets the one
scaffold ``"(scaffolds not separated)"`` and fits have no scaffold terms.

Benchmark and task of an item
-----------------------------
The ``benchmark=`` option names one benchmark for every item.  Otherwise the
first ``[[benchmarks]]`` rule whose regex fully matches the item id gives its
benchmark; the regex's ``task`` group (default: the whole id) gives the task
and a ``verifier`` group marks the item as one verifier result of that task
(MLE-bench's ``"competition::metric"``).  Items no rule matches fall back on
the alias file's top-level ``benchmark``, else go to a benchmark named after
the file (its name without the extension; reported, never ``"unknown"``).
By default the verifier results of a task are folded into one record with
``verifier.<name>`` columns and a binary result from the scoring rule
(``"all-pass"`` unless ``scoring=`` says otherwise); ``verifiers="items"``
keeps each verifier result as its own task instead.

Alias file format (TOML, read with :mod:`tomllib`)
--------------------------------------------------
Every key is optional::

    benchmark = "terminal-bench-2.0"   # benchmark of items no [[benchmarks]] rule matches
    default_scaffold = "unknown"       # scaffold of subjects whose id names none
    multiple_models = "Multiple"       # model name of runs that list several models
    merge_models = false               # keep model spellings apart (default: merged, see model_keys.py)

    [meta]                             # free text, shown in provenance
    description = "..."

    [subjects]                         # explicit mapping by exact subject id
    "gpt-5-mini" = {}                  # model = the id (through [models]), scaffold = default_scaffold
    "claude-3-opus" = { model = "claude-3-opus", scaffold = "unknown",
                        scaffold_by_benchmark = { swebench = "SWE-agent" } }

    [scaffold_prefixes]                # id prefix -> scaffold name
    "factory_droid_" = "Droid"

    [[subject_patterns]]               # Python regexes, full match, tried in file order
    regex = '^\\d{8}_sweagent_(?P<model>.+)$'
    scaffold = "SWE-agent"             # or a (?P<scaffold>...) group; model = "..." fixes the model

    [models]                           # model aliases: name as found -> name used
    "gpt-5_2" = "GPT-5.2"

    [scaffolds]                        # scaffold aliases
    "terminus-2" = "Terminus 2"

    [[benchmarks]]                     # item id -> benchmark, first full match wins
    name = "mlebench"
    regex = '^(?P<task>.+)::(?P<verifier>[A-Za-z0-9_]+)$'

    [harness_model]                    # "<harness>_<model>" ids, harness names as data
    model_start = '(?:gpt|claude)'     # (core/corpus/subject_ids/harnesses.py)
    [harness_model.harnesses]
    "Claude Code" = ["claude-code"]

``scaffold_by_benchmark`` gives a subject a different scaffold on some
benchmarks (BRIDGE's model-named subjects ran each benchmark in another
harness).  The shipped files are ``resources/aliases/terminal-bench-2.toml``
and ``resources/aliases/bridge.toml``.  With ``aliases="auto"`` (the default)
the importer uses ``<file stem>.aliases.toml`` next to the data file if there
is one, else the shipped file that maps most subject ids by rules 1-3 (at
least half of them), and says which in a warning.  Below that file, the
shipped subject-id conventions (SWE-bench experiment names, Terminal-Bench run
ids, Inspect and HAL names, bare model names) map the ids it leaves; see
:mod:`.conventions` for the layering, and the ``subject-ids-mapped`` warning
for the share of ids mapped.  ``aliases=None`` switches all of it off.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from .. import schema
from ..corpus import Corpus
from ...errors import shown
from ..issues import CorpusError, CorpusIssue, error, warning
from ..validate import MAX_COUNT, SOURCE_ROW, build_corpus
from ..subject_ids.aliases import (UNKNOWN, AliasRules, Subject, _coverage, load_aliases,  # noqa: F401 - re-exported
                      shipped_alias_files, split_subject)
from ._common import (MAX_LISTED, check_scoring_options, head_object, ignored_options, raise_if_nothing_left,
                      read_json_lines, score_verifiers)

FORMAT = "py-irt"


def sniff(path: Path, head: bytes) -> bool:
    """True if the first line of ``head`` is a py-irt subject record."""
    obj = head_object(head)
    if obj is not None:
        return "subject_id" in obj and isinstance(obj.get("responses"), dict)
    # a first line longer than the head: look for the two keys in its beginning
    line = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    return line.startswith(b"{") and b'"subject_id"' in line and re.search(rb'"responses"\s*:\s*\{', line) is not None


def resolve_aliases(aliases, path: Path, subject_ids: list[str]) -> tuple[AliasRules, str]:
    """Pick the alias rules for ``aliases`` (see :func:`read`); returns (rules, how they were chosen)."""
    if aliases is None or aliases is False or (isinstance(aliases, str) and aliases.lower() == "none"):
        return AliasRules(), "none"
    if isinstance(aliases, AliasRules):
        return aliases, "given"
    shipped = shipped_alias_files()
    if isinstance(aliases, str) and aliases != "auto" and aliases in shipped:
        return load_aliases(shipped[aliases]), "shipped"
    if isinstance(aliases, (str, Path)) and str(aliases) != "auto":
        return load_aliases(Path(aliases)), "given"
    sidecar = path.parent / f"{path.stem}.aliases.toml"
    if sidecar.exists():
        return load_aliases(sidecar), "sidecar"
    best, best_cov = None, 0.0
    for p in shipped.values():
        rules = load_aliases(p)
        cov = _coverage(subject_ids, rules)
        if cov > best_cov:
            best, best_cov = rules, cov
    if best is not None and best_cov >= 0.5:
        return best, f"auto ({best_cov:.0%} of subject ids mapped by its rules)"
    return AliasRules(), "none (no shipped alias file fits)"


# -- reader ---------------------------------------------------------------------------------------------
def read(path: str | Path, *, aliases="auto", benchmark: str | None = None, verifiers: str = "fold",
         scoring: str | None = None, gamma: float | None = None, verifier: str | None = None,
         name: str | None = None, **other) -> Corpus:
    """Read a py-irt JSON-lines file.

    Parameters
    ----------
    path
        The file: one ``{"subject_id", "responses"}`` object per line.
    aliases
        ``"auto"`` (default, see the module docstring), the stem of a shipped
        alias file (``"terminal-bench-2"``, ``"bridge"``), a path to a TOML
        alias file, or None for no alias file (fallback rules only).
    benchmark
        One benchmark name for every item (overrides the alias file's rules).
    verifiers
        ``"fold"`` (default): items that are verifier results of one task
        become one record with ``verifier.<name>`` columns; ``"items"``: keep
        every item as a task of its own.
    scoring, gamma, verifier
        Scoring rule of folded verifier results: ``"all-pass"`` (default),
        ``"direct"`` (``verifier`` names which; default the first in the
        file), or ``"threshold"`` with ``gamma``.
    name
        Display name of the corpus (the file stem by default).
    other
        Options meant for other formats: ignored, each with a warning.

    Raises
    ------
    CorpusError
        Invalid JSON, a line without ``subject_id`` or ``responses``, a
        repeated subject id, or a response that is not 0/1 or a valid
        ``{"successes", "trials"}`` cell; every error names its line and field.
    """
    path = Path(path)
    check_scoring_options(path, scoring, gamma)
    if verifiers not in ("fold", "items"):
        raise CorpusError([error("bad-option", f"unknown verifiers='{verifiers}'.", "use 'fold' or 'items'.",
                                 file=path, column="verifiers")])
    records, issues = read_json_lines(path)
    issues.extend(ignored_options(path, FORMAT, other))

    # -- structure ------------------------------------------------------------------------------
    subj_ids: list[str] = []
    subj_lines: list[int] = []
    seen: dict[str, int] = {}
    item_l: list[str] = []
    k_l: list[int] = []
    n_l: list[int] = []
    subj_of_cell: list[int] = []
    bad_values: list[CorpusIssue] = []
    for line, obj in records:
        sid = obj.get("subject_id")
        resp = obj.get("responses")
        if not isinstance(sid, str) or not sid.strip():
            issues.append(error("missing-field", "the line has no subject id (\"subject_id\" is "
                                f"{'absent' if 'subject_id' not in obj else repr(sid)}).",
                                "give every line a non-empty \"subject_id\" string.", file=path, row=line,
                                column="subject_id"))
            continue
        if not isinstance(resp, dict):
            issues.append(error("missing-field", f"subject '{sid}' has no \"responses\" object"
                                f"{'' if 'responses' not in obj else f' (it is a {type(resp).__name__})'}.",
                                "give \"responses\": {item_id: 0 or 1, ...} on every line.", file=path,
                                row=line, column="responses"))
            continue
        if sid in seen:
            issues.append(error("duplicate-subject", f"subject '{sid}' appears again (first on line {seen[sid]}).",
                                "merge the two lines or give the second run its own subject id.",
                                file=path, row=line, column="subject_id"))
            continue
        seen[sid] = line
        s = len(subj_ids)
        subj_ids.append(sid)
        subj_lines.append(line)
        for item, v in resp.items():
            tv = type(v)
            if tv is int and (v == 0 or v == 1):
                k, n = v, 1
            elif tv is bool:
                k, n = int(v), 1
            elif tv is float and (v == 0.0 or v == 1.0):
                k, n = int(v), 1
            elif tv is dict:
                k, n = v.get("successes"), v.get("trials")
                problem = None
                if not (_whole(k) and _whole(n)):
                    problem = (f"the cell {shown(v)} needs whole-number \"successes\" and \"trials\"",
                               "write {\"successes\": k, \"trials\": n} with whole numbers.")
                elif int(n) < 1:
                    problem = (f"the cell has trials = {n}", "a cell needs at least one trial; drop the item.")
                elif int(n) > MAX_COUNT:  # 2**63 trials overflowed int64 (a traceback); no real cell comes near
                    problem = (f"trials = {n} is more than {MAX_COUNT:,} trials in one cell",
                               "check that \"trials\" holds a count of trials, not an id or a size.")
                elif int(k) > int(n):
                    problem = (f"successes ({k}) > trials ({n})",
                               "successes count the trials that passed: 0 <= successes <= trials.")
                elif int(k) < 0:
                    problem = (f"successes ({k}) < 0", "successes count the trials that passed, from 0.")
                if problem:
                    bad_values.append(error("bad-response", f"subject '{sid}', item '{item}': {problem[0]}.",
                                            problem[1], file=path, row=line, column=f"responses.{item}"))
                    continue
                k, n = int(k), int(n)
            else:
                bad_values.append(error("bad-response", f"subject '{sid}', item '{item}': the response {shown(v)} is "
                                        "not 0 or 1.", "write 0 or 1, or {\"successes\": k, \"trials\": n} for "
                                        "repeated trials; leave out items that were not attempted.",
                                        file=path, row=line, column=f"responses.{item}"))
                continue
            item_l.append(item)
            k_l.append(k)
            n_l.append(n)
            subj_of_cell.append(s)
    issues.extend(bad_values[:MAX_LISTED])
    if len(bad_values) > MAX_LISTED:
        issues.append(error("bad-response", f"{len(bad_values) - MAX_LISTED} more responses are invalid.",
                            "see the first ones above.", file=path, column="responses",
                            count=len(bad_values) - MAX_LISTED))

    # -- subjects -> model, scaffold --------------------------------------------------------------
    from ..subject_ids.conventions import build_stack, format_mapping, mapping_summary
    from ..subject_ids.unsplit import (SCAFFOLDS_NOT_SEPARATED, UNSPLIT_IDS, merge_model_spellings,
                                       pool_unnamed_scaffolds, unsplit_provenance)

    rules, how = resolve_aliases(aliases, path, subj_ids)
    stack = build_stack(rules, how, conventions=how != "none")
    if how.startswith("auto"):
        issues.append(warning("aliases-auto", f"subject ids were mapped with the shipped alias file "
                              f"{rules.source} ({how[6:-1]}).",
                              "pass aliases=<file> (--aliases) to use another mapping, or aliases=None for none.",
                              file=path, column="subject_id"))
    split = [stack.split(s) for s in subj_ids]
    subjects, model_merges, more = merge_model_spellings([sub for sub, _ in split], rules.merge_models and how != "none",
                                                        file=path)
    issues.extend(more)
    id_mapping = mapping_summary([(sid, sub, lay) for sid, (sub, lay) in zip(subj_ids, split)],
                                 stack.unknown_scaffolds)
    if subj_ids and stack.layers:
        issues.append(warning("subject-ids-mapped", format_mapping(id_mapping),
                              "pass --aliases FILE (aliases=) to add rules or rename; see "
                              "resources/aliases/conventions/ for the conventions applied.",
                              file=path, column="subject_id", count=id_mapping["no_rule"]))
    for sid, sub, line in zip(subj_ids, subjects, subj_lines):
        if sub.fallback:
            names = (f"with scaffold '{sub.scaffold}'" if sub.scaffold not in stack.unknown_scaffolds else
                     "and names no scaffold, so its records are left out (--unsplit-ids drop)"
                     if UNSPLIT_IDS.get() == "drop" else
                     f"and names no scaffold, so the file's records share the one scaffold '{SCAFFOLDS_NOT_SEPARATED}'")
            issues.append(warning("subject-fallback", f"subject '{sid}' matched no alias rule; by the "
                                  f"{sub.rule[9:]} rule it is model '{sub.model}' {names}.",
                                  "add the id to the alias file ([subjects] or [scaffold_prefixes]) if this is "
                                  "wrong.", file=path, row=line, column="subject_id"))
        if sub.several_models:
            issues.append(warning("several-models", f"subject '{sid}' runs several models; its model is named "
                                  f"'{sub.model}'.", "set multiple_models in the alias file to name such runs.",
                                  file=path, row=line, column="subject_id"))
    used_layers = {stack.layers.index(lay) for _, lay in split if lay is not None}
    item_rules = stack.item_rules(used_layers)

    # -- items -> benchmark, task, verifier (once per distinct item) ----------------------------------
    items = pd.Series(item_l, dtype="object")
    codes, uniques = pd.factorize(items)
    u_bench, u_task, u_ver, unmatched = [], [], [], []
    for item in uniques:
        b, t, v = _classify_item(item, item_rules, benchmark)
        if b is None:  # no rule, no option, no alias benchmark: the file's name, said below (never "unknown")
            unmatched.append(item)
            b = path.stem
        u_bench.append(b)
        u_task.append(t)
        u_ver.append(v if verifiers == "fold" else None)
        if verifiers == "items":
            u_task[-1] = item
    if unmatched:
        issues.append(warning("item-unmatched", f"{len(unmatched)} item ids match no benchmark rule (e.g. "
                              f"{', '.join(map(repr, unmatched[:3]))}) and the file names no benchmark; they are "
                              f"put in benchmark '{path.stem}', named after the file.",
                              "name the benchmark with --benchmark NAME (benchmark=...), or add a [[benchmarks]] "
                              "rule to the alias file.",
                              file=path, column="responses", count=len(unmatched)))

    subj_idx = np.asarray(subj_of_cell, dtype="int64")
    sub_models = np.array([s.model for s in subjects] or [""], dtype=object)
    sub_scaffolds = np.array([s.scaffold for s in subjects] or [""], dtype=object)
    bench = np.asarray(u_bench, dtype=object)[codes] if len(codes) else np.array([], dtype=object)
    scaffold = sub_scaffolds[subj_idx] if len(subj_idx) else np.array([], dtype=object)
    # per-benchmark scaffolds of explicitly mapped subjects
    for s, sub in enumerate(subjects):
        for b, sc in sub.scaffold_by_benchmark.items():
            mask = (subj_idx == s) & (bench == b)
            scaffold[mask] = sc  # already renamed by the alias stack
    raw = pd.DataFrame({
        "benchmark": bench,
        "task": np.asarray(u_task, dtype=object)[codes] if len(codes) else [],
        "model": sub_models[subj_idx] if len(subj_idx) else [],
        "scaffold": scaffold,
        "trial": np.asarray(subj_ids, dtype=object)[subj_idx] if len(subj_idx) else [],
        "successes": np.asarray(k_l, dtype="int64"),
        "trials": np.asarray(n_l, dtype="int64"),
        SOURCE_ROW: np.asarray(subj_lines, dtype="int64")[subj_idx] if len(subj_idx) else [],
    })
    ver = np.asarray(u_ver, dtype=object)[codes] if len(codes) else np.array([], dtype=object)
    scoring_note = None
    is_ver = pd.notna(ver) if len(ver) else np.zeros(0, dtype=bool)
    if is_ver.any():
        raw, scoring_note = _fold_verifiers(raw, ver, is_ver, scoring or "all-pass", gamma, verifier, path, issues)

    named = {sid for sid, (sub, lay) in zip(subj_ids, split)  # a [subjects] entry's scaffold is the user's word
             if sub.rule == "explicit" and lay is not None and "scaffold" in lay.rules.subjects.get(sid, {})}
    raw, not_separated, more = pool_unnamed_scaffolds(raw, raw["trial"].to_numpy(), subj_ids,
                                                      stack.unknown_scaffolds, named=named, file=path)
    issues.extend(more)
    repeated = _repeated_agents(raw)
    if repeated:
        ex = "; ".join(f"{m} with {a} ({n} runs)" for m, a, n in repeated[:3])
        issues.append(warning("agent-repeated-runs", f"{len(repeated)} agents (model, scaffold) have several "
                              f"subjects on the same tasks (e.g. {ex}); each subject is kept as a trial of its "
                              "own (trial = subject id).",
                              "give the subjects distinct scaffold or model names in the alias file if they "
                              "are different systems rather than repeated runs.", file=path, column="subject_id"))

    provenance = {
        "importer": FORMAT,
        "source": str(path),
        "aliases": rules.source,
        "aliases_chosen": how,
        "conventions": [lay.label for lay in stack.layers if lay.is_convention],
        "id_mapping": id_mapping,
        "model_merges": model_merges,
        **unsplit_provenance(not_separated),  # ids that name no scaffold: pooled, or left out
        "alias_meta": rules.meta,
        "benchmark_option": benchmark,
        "benchmark_from_file_name": path.stem if unmatched else None,
        "subjects": {sid: {"model": sub.model, "scaffold": sub.scaffold, "rule": sub.rule, "line": line,
                           "mapped_by": None if lay is None else lay.label,
                           **({"spelled": found.model} if found.model != sub.model else {}),
                           **({"orgs": sub.orgs} if sub.orgs else {}),
                           **({"scaffold_by_benchmark": sub.scaffold_by_benchmark}
                              if sub.scaffold_by_benchmark else {})}
                     for sid, sub, line, (found, lay) in zip(subj_ids, subjects, subj_lines, split)},
        "fallback_subjects": [sid for sid, sub in zip(subj_ids, subjects) if sub.fallback],
        "agents_with_repeated_runs": [{"model": m, "scaffold": a, "runs": n} for m, a, n in repeated],
        "unmatched_items": list(map(str, unmatched)),
        "cells": int(len(item_l)),
        "verifiers": verifiers,
        "scoring": scoring_note,
        "trial": "the subject id (one py-irt subject = one run)",
    }
    sources = {"task": "responses", "successes": "responses", "trials": "responses", "model": "subject_id",
               "scaffold": "subject_id", "trial": "subject_id", "benchmark": "responses", "result": "responses"}
    raise_if_nothing_left(len(raw), issues)
    return build_corpus(raw, file=path, format=FORMAT, name=name, provenance=provenance, column_sources=sources,
                        issues=issues)


def _repeated_agents(raw: pd.DataFrame) -> list[tuple[str, str, int]]:
    """Agents with more than one subject (run) on some task: (model, scaffold, most runs on a task)."""
    if raw.empty:
        return []
    runs = raw.groupby(["benchmark", "task", "model", "scaffold"], sort=False)["trial"].nunique()
    runs = runs[runs > 1]
    if runs.empty:
        return []
    per_agent = runs.groupby(level=["model", "scaffold"], sort=True).max()
    return [(str(m), str(a), int(n)) for (m, a), n in per_agent.items()]


def _whole(x) -> bool:
    return (type(x) is int) or (type(x) is float and float(x).is_integer())


def _classify_item(item: str, rules: AliasRules, benchmark: str | None) -> tuple[str | None, str, str | None]:
    """(benchmark or None, task, verifier or None) of an item id."""
    for bname, rx in rules.benchmarks:
        m = rx.fullmatch(item)
        if m:
            g = m.groupdict()
            return benchmark or bname, g.get("task") or item, g.get("verifier")
    return benchmark or rules.benchmark, item, None


def _fold_verifiers(raw: pd.DataFrame, ver: np.ndarray, is_ver: np.ndarray, rule: str, gamma, verifier,
                    path: Path, issues: list[CorpusIssue]) -> tuple[pd.DataFrame, str]:
    """Turn items that are verifier results of one task into one record with verifier.* columns."""
    part = raw.loc[is_ver].copy()
    part["_verifier"] = ver[is_ver].astype(str)
    multi = part["trials"] != 1
    if multi.any():
        i = int(np.flatnonzero(multi.to_numpy())[0])
        issues.append(error("verifier-not-binary", "a verifier result is an aggregated cell "
                            f"({part['successes'].iat[i]}/{part['trials'].iat[i]}), not 0 or 1.",
                            "give verifier items as 0/1 per subject, or load with verifiers='items'.",
                            file=path, row=int(part[SOURCE_ROW].iat[i]), column="responses", count=int(multi.sum())))
    key = ["benchmark", "task", "model", "scaffold", "trial"]
    names = list(dict.fromkeys(part["_verifier"]))  # file order: "direct" uses the first
    wide = part.pivot_table(index=key, columns="_verifier", values="successes", aggfunc="first", observed=True,
                            sort=False)
    wide = wide.reindex(columns=names)
    lines = part.groupby(key, sort=False, observed=True)[SOURCE_ROW].first().reindex(wide.index)
    if rule == "direct" and verifier is not None and verifier not in names:
        raise CorpusError([error("bad-option", f"no verifier named '{verifier}'.",
                                 f"use one of: {', '.join(names)}.", file=path, column="verifier")])
    missing = wide.isna().any(axis=1).to_numpy()
    if missing.any():
        issues.append(warning("verifier-missing", f"{int(missing.sum())} folded records lack some verifier "
                              "results; the scoring rule uses the ones present.",
                              "check the file if every verifier should be reported.", file=path,
                              row=int(lines.iloc[int(np.flatnonzero(missing)[0])]), column="responses",
                              count=int(missing.sum())))
    result, soft, desc = score_verifiers(wide, rule, gamma=gamma, verifier=verifier)
    folded = wide.index.to_frame(index=False)
    folded["successes"] = result.astype("int64")
    folded["trials"] = 1
    folded[schema.SOFT_SCORE] = soft
    for c in names:
        folded[schema.VERIFIER_PREFIX + c] = wide[c].to_numpy()
    folded[SOURCE_ROW] = lines.to_numpy().astype("int64")
    out = pd.concat([raw.loc[~is_ver], folded], ignore_index=True)
    n_tasks = len(folded.groupby(["benchmark", "task"], observed=True))
    return out, f"{desc}; {int(is_ver.sum())} verifier items folded into {len(folded)} records of {n_tasks} tasks"
