"""One model, several spellings: a normalised model key and the merges it makes.

Ids from different leaderboards (or different entries of one) spell the same
model differently: ``gpt4o``, ``gpt-4o`` and ``GPT-4o``; ``claude3.5sonnet``,
``claude-3-5-sonnet`` and ``claude-3.5-sonnet``; Terminal-Bench's ``gpt-5_2`` for
GPT-5.2.  Left apart, each spelling is a model of its own and the model facet
counts one model several times.  :func:`model_key` is what the spellings share:
lower case, without the separators ``-``, ``_``, ``.``, ``" "``.  It keeps
everything else (sizes, versions, dates, suffixes such as ``-mini`` or
``-updated``), so two models that differ in anything but punctuation and case
keep apart: ``gpt-4o`` and ``gpt-4o-mini``, ``claude-3-5-sonnet`` and
``claude-3-5-sonnet-20241022`` are not merged.

:func:`merge_spellings` applies the key to the model names of one file and
returns what it merged; the importers report every merge (warning
``model-spellings-merged`` and provenance ``model_merges``, shown by
``ddr inspect``), and an alias file with ``merge_models = false`` switches it off.
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["model_key", "merge_spellings", "format_merges"]

_SEPARATORS = re.compile(r"[-_.\s]+")


def model_key(name: str) -> str:
    """The spelling-free key of a model name: lower case, separators ``-_. `` removed."""
    return _SEPARATORS.sub("", str(name).lower())


def _display(spellings: Counter) -> str:
    """The spelling a merged model is named by: the most used; on a tie the one with most separators
    (``claude-3.5-sonnet`` reads better than ``claude3.5sonnet``), then the first in sort order."""
    return min(spellings, key=lambda s: (-spellings[s], -len(_SEPARATORS.findall(s)), s))


def merge_spellings(names) -> tuple[dict[str, str], list[dict]]:
    """Merge the spellings of one model among ``names`` (one entry per subject, repeats count).

    Returns
    -------
    rename
        Spelling -> the name used, for the spellings that change.
    merges
        One entry per merged model: ``{"model", "key", "spellings": {spelling: subjects}}``,
        sorted by name.
    """
    by_key: dict[str, Counter] = {}
    for n in names:
        by_key.setdefault(model_key(n), Counter())[str(n)] += 1
    rename: dict[str, str] = {}
    merges: list[dict] = []
    for key, spellings in by_key.items():
        if len(spellings) < 2 or not key:
            continue
        chosen = _display(spellings)
        rename.update({s: chosen for s in spellings if s != chosen})
        merges.append({"model": chosen, "key": key, "spellings": dict(sorted(spellings.items()))})
    merges.sort(key=lambda m: m["model"].lower())
    return rename, merges


def format_merges(merges: list[dict], limit: int = 6) -> str:
    """The merges in words: ``GPT-4o (1) / gpt-4o (3) / gpt4o (2) -> gpt-4o; ...`` (subjects per spelling)."""
    parts = [" / ".join(f"{s} ({n})" for s, n in m["spellings"].items()) + f" -> {m['model']}"
             for m in merges[:limit]]
    more = f"; and {len(merges) - limit} more" if len(merges) > limit else ""
    return "; ".join(parts) + more
