"""Harness names as data: the ``[harness_model]`` table of an alias file.

Leaderboards in the style of Terminal-Bench name a run ``<harness>_<model>``
("claude_code_claude_opus_4_6", "terminus_2_gpt_5_2", "codex_cli_gpt-5"), and
write the words of a harness's name with ``-``, ``_``, ``" "`` or nothing
between them.  A regex per id style would be long and easy to get wrong, so the
alias format (:mod:`.pyirt`) takes the harness names as a table::

    [harness_model]
    model_start = '(?:gpt|claude|gemini|...)'   # what the model part must begin with

    [harness_model.harnesses]
    "Claude Code" = ["claude-code"]             # display name = the slugs ids use
    "Codex CLI" = ["codex-cli", "codex"]

and :func:`harness_patterns` turns it into ordinary subject patterns (rule 3 of
:mod:`.pyirt`), one per harness, longest slug first so that ``terminus_2_...``
is Terminus 2 and not Terminus.  The model part must start with
``model_start``: a product whose name merely begins like a harness stays whole
(and is reported as not split).
"""

from __future__ import annotations

import re

__all__ = ["harness_patterns", "slug_regex"]

_SEP = "[-_ ]"


def slug_regex(slug: str) -> str:
    """The regex of one harness slug: its words joined by any of ``-``, ``_``, ``" "`` or nothing."""
    words = [w for w in re.split(_SEP, slug.strip()) if w]
    return f"{_SEP}?".join(re.escape(w) for w in words)


def harness_patterns(table: dict) -> list[tuple[re.Pattern, str, None]]:
    """Subject patterns ``(regex, scaffold, None)`` of a ``[harness_model]`` table.

    Raises
    ------
    ValueError
        With a message naming the key at fault: no ``harnesses`` table, a
        harness whose slugs are not a list of strings, a bad ``model_start``.
    """
    if not isinstance(table, dict):
        raise ValueError("'harness_model' must be a table ([harness_model]).")
    start = table.get("model_start", r"[A-Za-z]")
    if not isinstance(start, str):
        raise ValueError("'harness_model.model_start' must be a string (a regex).")
    try:
        re.compile(start)
    except re.error as exc:
        raise ValueError(f"'harness_model.model_start' is not a valid regex ({exc}).") from None
    harnesses = table.get("harnesses")
    if not isinstance(harnesses, dict) or not harnesses:
        raise ValueError("'harness_model' needs a [harness_model.harnesses] table: display name = [slugs].")
    rows: list[tuple[int, str, str]] = []
    for name, slugs in harnesses.items():
        if isinstance(slugs, str):
            slugs = [slugs]
        if not isinstance(slugs, list) or not slugs or not all(isinstance(s, str) and s.strip() for s in slugs):
            raise ValueError(f"harness '{name}' must list its slugs as strings: \"{name}\" = [\"slug\", ...].")
        longest = max(len(s) for s in slugs)
        alts = "|".join(slug_regex(s) for s in sorted(slugs, key=len, reverse=True))
        rows.append((longest, str(name), alts))
    rows.sort(key=lambda r: -r[0])  # a longer harness name first: "terminus-2" before "terminus"
    return [(re.compile(rf"(?i)^(?:{alts}){_SEP}(?P<model>{start}[^\s]*)$"), name, None) for _, name, alts in rows]
