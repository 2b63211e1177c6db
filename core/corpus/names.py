"""Names that look alike: the one check every model, scaffold, task and benchmark name passes on its way in.

Two names that print the same must not become two models without a word.  At the point where a
facet column becomes names (:func:`.validate.build_corpus`, through :func:`check_names`):

* every name is put in Unicode NFC, so the composed and decomposed spellings of one accented name
  (``"é"`` as U+00E9, or ``"e"`` + U+0301) are one name; when a file holds both, a warning shows both;
* a name holding a character that prints as nothing or as a plain space is refused, naming the line,
  the column and the character as ``U+XXXX`` and its Unicode name: control characters (C0, DEL and
  the C1 range U+0080-U+009F: the guide promises names without them), format characters such as a
  zero-width space or a direction mark (category Cf), and spaces other than the ASCII space (a
  non-breaking space prints as one);
* names that differ only by confusable letters (a Cyrillic ``о`` among Latin letters, a full-width
  ``Ａ``) are read as one name (the most used spelling), with a warning that names every spelling and
  the letters that differ, as the model-key merges do; the merge rule can be turned off
  (``--keep-lookalike-names``, ``load_corpus(..., keep_lookalike_names=True)``), and the names are then
  kept apart with the same warning.

Only the standard library's :mod:`unicodedata` is used: the confusable letters are the short table
:data:`LOOKALIKES` (the Cyrillic and Greek letters that print as Latin ones) after NFKC, which folds
full-width and other compatibility forms; that covers the cases seen in leaderboards without a new
dependency.
"""

from __future__ import annotations

import re
import unicodedata
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
import pandas as pd

from .issues import CorpusIssue, error, warning

__all__ = ["LOOKALIKES", "refused_character", "skeleton", "word_key", "check_names"]

#: Cyrillic and Greek letters that print like a Latin letter, mapped to it (Unicode's confusables
#: table, the letters of these two scripts that have a single Latin lookalike).
LOOKALIKES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y",
    "х": "x", "і": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ӏ": "l", "ԛ": "q", "ԝ": "w", "һ": "h",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "У": "Y",
    "Х": "X", "І": "I", "Ј": "J", "Ѕ": "S",
    "α": "a", "ο": "o", "ρ": "p", "ν": "v", "υ": "u", "ι": "i", "κ": "k", "τ": "t",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P",
    "Τ": "T", "Υ": "Y", "Χ": "X",
})


def refused_character(name: str) -> str | None:
    """The first character of ``name`` that may not be in a name (see the module docstring), else None."""
    for ch in name:
        if ch == " " or ch.isalnum():  # the common case, decided without a category lookup
            continue
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cf", "Zl", "Zp", "Zs", "Cs", "Cn"):
            return ch
    return None


def _describe(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, 'control character' if unicodedata.category(ch) == 'Cc' else '?')}"


def skeleton(name: str) -> str:
    """The form two confusable names share: NFKC (full-width letters folded) with :data:`LOOKALIKES` mapped."""
    return unicodedata.normalize("NFKC", name).translate(LOOKALIKES)


def _rows_of(raw: pd.DataFrame, col: pd.Series, names) -> tuple[int | None, int]:
    """(first line, count) of the rows holding one of ``names`` (the file's line numbers when it has them)."""
    mask = col.isin(list(names)).to_numpy()
    first = int(np.flatnonzero(mask)[0])
    row = int(raw["_source_row"].iat[first]) if "_source_row" in raw.columns else first + 1
    return row, int(mask.sum())


def check_names(col: pd.Series, raw: pd.DataFrame, c: str, fname, src: str,
                issues: list[CorpusIssue]) -> pd.Series | None:
    """NFC-normalise a facet column of names (a categorical) and check its names; None when one is refused.

    Parameters
    ----------
    col
        The names, a categorical (its categories are checked, not its rows: few names, many rows).
    raw
        The table as read (for the line numbers).
    c, src
        The facet (``"model"``) and the column as the file writes it.
    issues
        Refusals (errors) and the look-alike warnings are appended.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    index = col.cat.categories
    if c in _WORDED:
        _same_words([str(x) for x in index], col, raw, c, fname, src, issues)
    # only names beyond printable ASCII can hold what is checked: found in C (a million trial ids in ~0.3 s)
    beyond = pc.match_substring_regex(pa.array(index.to_numpy(dtype=object), type=pa.string()), r"[^\x20-\x7e]")
    plain = ~beyond.to_numpy(zero_copy_only=False).astype(bool)
    if plain.all():
        return col
    odd = [str(x) for x in index[~plain]]
    for name in odd:
        ch = refused_character(name)
        if ch is not None:
            row, n = _rows_of(raw, col, [name])
            kind = ("a control character" if unicodedata.category(ch) == "Cc" else
                    "a space that is not a plain space" if unicodedata.category(ch) == "Zs" else
                    "an invisible character")
            issues.append(error("invisible-character" if kind != "a control character" else "control-character",
                                f"the {c} name {name!r} holds {_describe(ch)}, {kind}.",
                                "remove it or write a plain space: names are printable text, and a name with it "
                                "prints like another name and would be counted as a different one.",
                                file=fname, row=row, column=src, count=n))
            return None
    cats = [str(x) for x in index]
    nfc = [unicodedata.normalize("NFC", x) if not ok else x for x, ok in zip(cats, plain)]
    if nfc != cats:
        by_form: dict[str, list[str]] = {}
        for old, new in zip(cats, nfc):
            by_form.setdefault(new, []).append(old)
        for new, olds in by_form.items():
            if len(olds) > 1:
                row, n = _rows_of(raw, col, olds)
                spellings = " and ".join(f"{o!r} ({' '.join(f'U+{ord(ch):04X}' for ch in o)})" for o in olds)
                issues.append(warning("names-merged-nfc", f"the {c} names {spellings} are one name written two "
                                      f"ways (composed and decomposed accents); they are read as {new!r}.",
                                      "nothing to do; write one spelling to silence this.", file=fname, row=row,
                                      column=src, count=n))
        codes = col.cat.codes.to_numpy()
        new_codes, uniques = pd.factorize(pd.Index(nfc))
        codes = np.where(codes >= 0, new_codes[np.maximum(codes, 0)], -1)
        col = pd.Series(pd.Categorical.from_codes(codes, categories=pd.Index(uniques).astype(str)), index=col.index)
        cats = [str(x) for x in col.cat.categories]
    return _lookalikes(cats, col, raw, c, fname, src, issues)


#: The facets whose names are checked for the same words in another order (a model or scaffold named two ways
#: is counted twice; task and benchmark names are ids, many and machine-written).
_WORDED = ("model", "scaffold")


def word_key(name: str) -> tuple[str, ...]:
    """The words of a name, case folded and sorted: ``"Claude 4.5 Sonnet"`` and ``"claude-sonnet-4.5"`` share it.

    Words are split at spaces, ``-``, ``_`` and ``/`` only, so a version keeps its dots (``GPT-4.5`` and
    ``GPT-5.4`` do not share a key).
    """
    return tuple(sorted(w for w in re.split(r"[\s\-_/]+", unicodedata.normalize("NFKC", name).casefold()) if w))


def _same_words(cats: list[str], col: pd.Series, raw: pd.DataFrame, c: str, fname, src: str,
                issues: list[CorpusIssue]) -> None:
    """Warn about names that hold the same words in another order, case or punctuation; they stay apart.

    Not merged, unlike look-alike letters: word order can be the only difference between two real names far
    less often than it is a leaderboard's second spelling of one, but a merge here would change what the
    file says without the user's word.  The fix names the alias-file line that merges them.
    """
    groups: dict[tuple[str, ...], list[str]] = {}
    for name in cats:
        groups.setdefault(word_key(name), []).append(name)
    for names in groups.values():
        if len(names) < 2:
            continue
        counts = col.value_counts()
        names = sorted(names, key=lambda n: (-int(counts.get(n, 0)), n))
        row, n = _rows_of(raw, col, names)
        spellings = " and ".join(repr(x) for x in names)
        lines = ", ".join(f'"{x}" = "{names[0]}"' for x in names[1:])
        issues.append(warning("same-words-names", f"the {c} names {spellings} hold the same words in another order "
                              f"or spelling; they are kept as {len(names)} {c}s.",
                              f"if they are one {c}, merge them with an alias file holding [{c}s] {lines} "
                              "(ddr ... --aliases FILE).", file=fname, row=row,
                              column=src, count=n))


#: Whether names that differ only by look-alike letters are kept apart (the merge rule turned off): set for
#: one import by :func:`keeping_lookalikes` (``load_corpus(..., keep_lookalike_names=True)``,
#: ``ddr ... --keep-lookalike-names``); a context variable, so a worker thread's import does not change another's.
KEEP_LOOKALIKES: ContextVar[bool] = ContextVar("keep_lookalike_names", default=False)


@contextmanager
def keeping_lookalikes(keep: bool):
    """Within the block, names that differ only by look-alike letters are kept apart (``keep``) or merged."""
    token = KEEP_LOOKALIKES.set(bool(keep))
    try:
        yield
    finally:
        KEEP_LOOKALIKES.reset(token)


def _merged_spelling(names: list[str], col: pd.Series) -> str:
    """The spelling a group of look-alikes is read as: the most used one, then an all-ASCII one, then the first."""
    counts = col.value_counts()
    return max(names, key=lambda n: (int(counts.get(n, 0)), n.isascii(), -names.index(n)))


def _lookalikes(cats: list[str], col: pd.Series, raw: pd.DataFrame, c: str, fname, src: str,
                issues: list[CorpusIssue]) -> pd.Series:
    """Names that differ only by confusable letters: merged into one spelling with a warning showing both (the
    rule of the model-key merges), or kept apart with the warning when the merge is turned off."""
    if all(x.isascii() for x in cats):  # the common case: nothing to confuse
        return col
    groups: dict[str, list[str]] = {}
    for name in cats:
        groups.setdefault(skeleton(name), []).append(name)
    keep = KEEP_LOOKALIKES.get()
    rename: dict[str, str] = {}
    for names in groups.values():
        if len(names) < 2:
            continue
        a, b = names[0], names[1]
        differ = [f"{x!r} {_describe(x)} against {y!r} {_describe(y)}" for x, y in zip(a, b) if x != y] if \
            len(a) == len(b) else [f"{len(a)} against {len(b)} characters"]
        row, n = _rows_of(raw, col, names)
        spellings = " and ".join(repr(x) for x in names)
        if keep:
            issues.append(warning("look-alike-names", f"the {c} names {spellings} print alike but differ "
                                  f"({'; '.join(differ[:3])}); they are kept as {len(names)} {c}s "
                                  "(--keep-lookalike-names).",
                                  f"if they are one {c}, write one spelling, or read the file without "
                                  "--keep-lookalike-names.", file=fname, row=row, column=src, count=n))
            continue
        into = _merged_spelling(names, col)
        rename.update({x: into for x in names if x != into})
        issues.append(warning("look-alike-names-merged", f"the {c} names {spellings} print alike but differ "
                              f"({'; '.join(differ[:3])}); they are read as one {c}, {into!r}.",
                              f"if they are different {c}s, read the file with --keep-lookalike-names (or rename "
                              "one).", file=fname, row=row, column=src, count=n))
    if not rename:
        return col
    names = col.astype(str).map(lambda x: rename.get(x, x))
    return names.astype("category").where(col.notna())
