"""An alias file's ``[models]`` and ``[scaffolds]`` tables applied to a table that names its models.

A canonical corpus (CSV, TSV, JSONL, Parquet) names its models and scaffolds in columns, so the subject-id
rules of an alias file (:mod:`.subject_ids.aliases`) have nothing to split; its rename tables still mean
something: two spellings of one model ("Claude 4.5 Sonnet" on one leaderboard entry, "Claude Sonnet 4.5" on
the others) are made one by ``[models] "Claude 4.5 Sonnet" = "Claude Sonnet 4.5"``.  Before this module an
alias file given to a canonical file was dropped without a word.

The renames are applied to the raw table, before validation (:func:`.validate.build_corpus`), so a rename
that makes two rows one cell key (the same task, model, scaffold and trial) is refused there with the line,
as any duplicate is.  Every rename is reported (warning ``names-renamed``, provenance ``renames``), and an
entry that matches no name is said (a misspelt alias would otherwise do nothing silently).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .issues import CorpusIssue, warning

__all__ = ["apply_renames"]

_TABLES = (("model", "models"), ("scaffold", "scaffolds"))


def apply_renames(raw: pd.DataFrame, aliases, *, file: str | Path | None = None
                  ) -> tuple[pd.DataFrame, dict, list[CorpusIssue]]:
    """Rename models and scaffolds of ``raw`` by the alias file ``aliases``.

    Parameters
    ----------
    raw
        The table as read, canonical column names (``model``, ``scaffold``), before validation.
    aliases
        The alias file (a path, read by :func:`.subject_ids.aliases.load_aliases`) or parsed rules.
    file
        The corpus file, named in the warnings.

    Returns
    -------
    raw
        The table with the names replaced (a copy when anything changed).
    renames
        ``{"source": alias file, "model": {old: new}, "scaffold": {old: new}}`` for the names found.
    issues
        One warning per facet listing the renames made, and one for alias entries that match no name.
    """
    from .subject_ids.aliases import AliasRules, load_aliases

    rules = aliases if isinstance(aliases, AliasRules) else load_aliases(aliases)
    out = {"source": rules.source}
    issues: list[CorpusIssue] = []
    for column, table in _TABLES:
        wanted: dict[str, str] = getattr(rules, table)
        if not wanted or column not in raw.columns:
            continue
        names = raw[column].astype("string")
        present = set(names.dropna().unique())
        made = {old: new for old, new in wanted.items() if old in present and old != new}
        unused = sorted(old for old in wanted if old not in present)
        if made:
            raw = raw.copy()  # the caller's table is left as read
            raw[column] = names.map(lambda x: made.get(x, x) if isinstance(x, str) else x)
            rows = int(names.isin(list(made)).sum())
            listed = "; ".join(f"{old!r} -> {new!r}" for old, new in list(made.items())[:6])
            more = f"; and {len(made) - 6} more" if len(made) > 6 else ""
            issues.append(warning("names-renamed", f"the alias file {Path(str(rules.source)).name} renamed "
                                  f"{len(made)} {column} name(s) on {rows:,} rows: {listed}{more}.",
                                  f"nothing to do; edit its [{table}] table to change this.", file=file,
                                  column=column, count=rows))
        if unused:
            listed = ", ".join(repr(x) for x in unused[:6]) + (f" and {len(unused) - 6} more" if len(unused) > 6
                                                              else "")
            issues.append(warning("alias-unused", f"the alias file's [{table}] names {listed}, which no row of "
                                  f"this file holds as a {column}; nothing was renamed for them.",
                                  f"check the spelling against the file's {column} names (ddr inspect lists them).",
                                  file=file, column=column, count=len(unused)))
        out[column] = made
    return raw, out, issues
