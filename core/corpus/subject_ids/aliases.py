"""Alias files and subject ids: the rules that split a py-irt subject id into model and scaffold.

An alias file (TOML) holds explicit subjects, scaffold prefixes, subject patterns, the ``harness_model``
table (:mod:`.harnesses`), model and scaffold renames and benchmark patterns; :func:`split_subject`
applies them in that order and falls back to ``<scaffold>_<model>_at_<org>`` or the whole id.  The
format and the order are described in :mod:`.pyirt`'s docstring, the reader that uses them; the shipped
subject-id conventions (:mod:`.conventions`) layer more rules below a file's own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..issues import CorpusError, error
from ..patterns import PatternError, compile_user_pattern

UNKNOWN = "unknown"


# -- alias file -------------------------------------------------------------------------------
@dataclass
class AliasRules:
    """The parsed alias / mapping file (see the module docstring for its format)."""

    source: str | None = None
    benchmark: str | None = None
    default_scaffold: str = UNKNOWN
    multiple_models: str | None = None
    subjects: dict[str, dict] = field(default_factory=dict)
    scaffold_prefixes: list[tuple[str, str]] = field(default_factory=list)
    subject_patterns: list[tuple[re.Pattern, str | None, str | None]] = field(default_factory=list)
    models: dict[str, str] = field(default_factory=dict)
    scaffolds: dict[str, str] = field(default_factory=dict)
    benchmarks: list[tuple[str, re.Pattern]] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    merge_models: bool = True


def _alias_error(path, message: str, fix: str, column: str | None = None) -> CorpusError:
    return CorpusError([error("bad-alias-file", message, fix, file=path, column=column)])


def _strings_only(path: Path, text: str, table: str, entries: dict) -> None:
    """Refuse a value that is not a string (``m1 = ["a"]`` named a model "['a']"), naming the key and line."""
    from ...side_files import line_of

    for key, value in entries.items():
        if not isinstance(value, str):
            line = line_of(text, f"{key}") if key else None
            where = f" (line {line})" if line else ""
            raise _alias_error(path, f"[{table}] {key} = {value!r}{where}: the value must be a string (a name), "
                               f"not a {type(value).__name__}.", f'write {key} = "name" with one name in quotes.',
                               f"{table}.{key}")


def _is_shipped(path: Path) -> bool:
    """True for an alias file that ships with the product (``resources/aliases``)."""
    try:
        return path.resolve().is_relative_to(resources_dir().resolve() / "aliases")
    except (OSError, ValueError):
        return False


def load_aliases(path: str | Path) -> AliasRules:
    """Read an alias file (TOML).

    Raises
    ------
    CorpusError
        When the file is missing, not TOML, or a rule is malformed (a bad
        regex, a pattern without a model, a subject entry that is not a table).
    """
    path = Path(path)
    from ...side_files import loads_toml, problem_and_fix, read_side_text

    def refused(message: str) -> CorpusError:  # the side-file gate's message names the file first
        problem, fix = problem_and_fix(message)
        return CorpusError([error("bad-alias-file", problem + ".", fix + ".")])

    if not path.exists():
        raise _alias_error(path, "the alias file does not exist.", "check the path given as aliases=.")
    # the side-file gate: a regular file, a size cap, UTF-8 with the line, TOML nesting capped
    source_text = read_side_text(path, "alias file", error=refused)
    doc = loads_toml(source_text, path, "alias file", error=refused)
    # the shipped files are ours (and use lookaheads); a user's patterns run on the linear-time engine
    compile_pattern = re.compile if _is_shipped(path) else compile_user_pattern
    rules = AliasRules(source=str(path), meta=dict(doc.get("meta", {})))

    def text(key, where=None):
        v = (where or doc).get(key)
        if v is not None and not isinstance(v, str):
            raise _alias_error(path, f"'{key}' must be a string, not {v!r}.", f"quote the value of '{key}'.", key)
        return v

    rules.benchmark = text("benchmark")
    rules.default_scaffold = text("default_scaffold") or UNKNOWN
    rules.multiple_models = text("multiple_models")
    merge = doc.get("merge_models", True)
    if not isinstance(merge, bool):
        raise _alias_error(path, f"'merge_models' must be true or false, not {merge!r}.",
                           "write merge_models = false to keep every model spelling apart.", "merge_models")
    rules.merge_models = merge
    for table in ("subjects", "scaffold_prefixes", "models", "scaffolds"):
        if not isinstance(doc.get(table, {}), dict):
            raise _alias_error(path, f"'{table}' must be a table.", f"write it as [{table}].", table)
    for sid, entry in doc.get("subjects", {}).items():
        if not isinstance(entry, dict):
            raise _alias_error(path, f"the entry of subject '{sid}' is not a table.",
                               'write it as "<id>" = { model = "...", scaffold = "..." }.', f"subjects.{sid}")
        unknown = set(entry) - {"model", "scaffold", "scaffold_by_benchmark"}
        if unknown:
            raise _alias_error(path, f"subject '{sid}' has unknown keys {sorted(unknown)}.",
                               "use model, scaffold and scaffold_by_benchmark.", f"subjects.{sid}")
        rules.subjects[sid] = dict(entry)
    rules.scaffold_prefixes = sorted(((str(k), str(v)) for k, v in doc.get("scaffold_prefixes", {}).items()),
                                     key=lambda kv: -len(kv[0]))
    for i, pat in enumerate(doc.get("subject_patterns", []), start=1):
        where = f"subject_patterns[{i}]"
        try:
            rx = compile_pattern(pat["regex"])
        except (KeyError, TypeError):
            raise _alias_error(path, f"{where} has no regex.", "give regex = '...'.", where) from None
        except (re.error, PatternError) as exc:
            raise _alias_error(path, f"{where}: bad regex ({exc}).", "fix the regular expression.", where) from None
        if "model" not in rx.groupindex and not pat.get("model"):
            raise _alias_error(path, f"{where} gives no model.", "add a (?P<model>...) group or model = '...'.", where)
        rules.subject_patterns.append((rx, pat.get("scaffold"), pat.get("model")))
    if "harness_model" in doc:  # harness names as data (core/corpus/subject_ids/harnesses.py)
        from .harnesses import harness_patterns

        try:
            rules.subject_patterns.extend(harness_patterns(doc["harness_model"]))
        except ValueError as exc:
            raise _alias_error(path, str(exc), "see core/corpus/subject_ids/harnesses.py for the table's format.",
                               "harness_model") from None
    for table in ("models", "scaffolds", "scaffold_prefixes"):
        _strings_only(path, source_text, table, doc.get(table, {}))
    for sid, entry in rules.subjects.items():
        _strings_only(path, source_text, f"subjects.{sid}",
                      {k: v for k, v in entry.items() if k != "scaffold_by_benchmark"})
    rules.models = {str(k): v for k, v in doc.get("models", {}).items()}
    rules.scaffolds = {str(k): v for k, v in doc.get("scaffolds", {}).items()}
    for i, b in enumerate(doc.get("benchmarks", []), start=1):
        where = f"benchmarks[{i}]"
        if not isinstance(b, dict) or not isinstance(b.get("name"), str) or not isinstance(b.get("regex"), str):
            raise _alias_error(path, f"{where} needs a name and a regex.", "give name = '...' and regex = '...'.",
                               where)
        try:
            rules.benchmarks.append((b["name"], compile_pattern(b["regex"])))
        except (re.error, PatternError) as exc:
            raise _alias_error(path, f"{where}: bad regex ({exc}).", "fix the regular expression.", where) from None
    return rules


def resources_dir() -> Path:
    """The folder of bundled resources (``resources/`` in the repository): the alias files live there."""
    from .... import resources as res  # ddr_explorer.resources

    return Path(res.__file__).resolve().parent


def shipped_alias_files() -> dict[str, Path]:
    """The alias files that ship with the project, by stem (``"bridge"``, ``"terminal-bench-2"``)."""
    folder = resources_dir() / "aliases"
    return {p.stem: p for p in sorted(folder.glob("*.toml"))}


# -- subject ids ----------------------------------------------------------------------------------
@dataclass
class Subject:
    """How one subject id was split."""

    model: str
    scaffold: str
    rule: str
    fallback: bool = False
    orgs: list[str] = field(default_factory=list)
    scaffold_by_benchmark: dict[str, str] = field(default_factory=dict)
    several_models: bool = False


_AT = "_at_"


def _model_part(part: str, rules: AliasRules) -> tuple[str, list[str], bool, bool]:
    """Model name(s) of a model part; returns (model, orgs, several models, several named by a rule)."""
    names, orgs = [], []
    several = "," in part and all(p.strip() for p in part.split(","))  # "a_at_x,b_at_y" or, without orgs, "a,b"
    for piece in part.split(",") if several else [part]:
        piece = piece.strip()
        if _AT in piece:
            piece, org = piece.rsplit(_AT, 1)
            orgs.append(org)
        names.append(rules.models.get(piece, piece))
    if len(names) > 1:
        if rules.multiple_models:
            return rules.multiple_models, orgs, True, True
        return "+".join(names), orgs, True, False
    return names[0], orgs, False, False


def split_subject(sid: str, rules: AliasRules) -> Subject:
    """Split one subject id into model and scaffold by the rules of the module docstring."""
    scaffold_alias = lambda s: rules.scaffolds.get(s, s)  # noqa: E731
    if sid in rules.subjects:
        e = rules.subjects[sid]
        model = e.get("model") or sid
        model = rules.models.get(model, model)
        return Subject(model, scaffold_alias(e.get("scaffold") or rules.default_scaffold), "explicit",
                       scaffold_by_benchmark=dict(e.get("scaffold_by_benchmark", {})))
    for prefix, scaffold in rules.scaffold_prefixes:
        if sid.startswith(prefix) and len(sid) > len(prefix):
            model, orgs, several, named = _model_part(sid[len(prefix):], rules)
            return Subject(model, scaffold_alias(scaffold), f"prefix '{prefix}'", orgs=orgs,
                           several_models=several and not named)
    for i, (rx, scaffold, fixed_model) in enumerate(rules.subject_patterns, start=1):
        m = rx.fullmatch(sid)
        if m:
            groups = m.groupdict()
            part = groups.get("model") or fixed_model
            if not part:  # '(?P<model>)' matched an empty model: this rule names no model here, the next may
                continue
            model, orgs, several, named = _model_part(part, rules)
            if fixed_model and not groups.get("model"):
                model = rules.models.get(fixed_model, fixed_model)
            sc = groups.get("scaffold") or scaffold or rules.default_scaffold
            return Subject(model, scaffold_alias(sc), f"pattern {i} '{rx.pattern}'", orgs=orgs,
                           several_models=several and not named)
    if _AT in sid and "_" in sid.split(_AT, 1)[0]:
        scaffold, part = sid.split("_", 1)
        model, orgs, several, named = _model_part(part, rules)
        return Subject(model, scaffold_alias(scaffold), "fallback '<scaffold>_<model>_at_<org>'", fallback=True,
                       orgs=orgs, several_models=several and not named)
    return Subject(rules.models.get(sid, sid), scaffold_alias(rules.default_scaffold), "fallback whole id",
                   fallback=True)


def _coverage(ids: list[str], rules: AliasRules) -> float:
    """Share of subject ids the alias rules map without a fallback."""
    if not ids:
        return 0.0
    return sum(not split_subject(s, rules).fallback for s in ids) / len(ids)
