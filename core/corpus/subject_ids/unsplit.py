"""What a file's subject ids leave undecided, settled in the open.

Two rules, applied by every importer that splits subject ids (py-irt files and
a table's ``subject`` column, :mod:`.columns`):

* **Model spellings are merged** (:mod:`.model_keys`): ``gpt4o``, ``gpt-4o`` and
  ``GPT-4o`` are one model.  Every merge is reported (warning
  ``model-spellings-merged``, provenance ``model_merges``); an alias file with
  ``merge_models = false`` keeps the spellings apart.
* **"unknown" is never a level of the scaffold facet.**  An id that names no
  scaffold (a product such as ``20240820_honeycomb``, a bare model name, an id
  no rule splits) does not say which harness ran; putting all such ids under
  one scaffold "unknown" would fit a scaffold variance between that grab-bag and
  the real harnesses (seed 000 (Hardy et al. 2026) Eq. 2 reads a scaffold level as one harness).  So
  when any record's scaffold is unknown, every record gets the one scaffold
  :data:`SCAFFOLDS_NOT_SEPARATED`: the scaffold facet has a single level, the
  presets' scaffold terms are left out of every fit (:mod:`..design.presets`),
  and a model's effect averages over the harnesses its runs used.  The split
  each id got is kept (provenance ``subjects``, the app's id table, ``ddr
  inspect``), the warning ``scaffold-unknown`` and provenance
  ``scaffolds_not_separated`` say how many ids were not split, and the DDR
  sheet's "Read with care" box says how to map them (``--aliases FILE``, or the
  app's Subject ids table, which saves one).

  Collapsing is the default (``--unsplit-ids collapse``).  The other choice,
  ``--unsplit-ids drop`` (``load_corpus(..., unsplit_ids="drop")``, the app's
  Subject ids table), keeps the scaffolds the split ids name and leaves out the
  records of the ids that name none: the warning ``unsplit-ids-left-out`` names
  them and their count, provenance ``unsplit_ids_left_out`` keeps them all, and
  the sheet's "Read with care" box says which choice was made.  The left-out
  records change the corpus, so its content hash and every fit's cache key.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace

import numpy as np
import pandas as pd

from ..issues import CorpusError, CorpusIssue, error, warning
from .model_keys import format_merges, merge_spellings

__all__ = ["SCAFFOLDS_NOT_SEPARATED", "HOW_TO_MAP", "UNSPLIT_CHOICES", "UNSPLIT_IDS", "unsplit_rule",
           "merge_model_spellings", "pool_unnamed_scaffolds", "carried_marker", "subject_id_summary",
           "format_subject_ids", "unsplit_provenance"]

#: The one scaffold of a file whose ids do not all name their scaffold.
SCAFFOLDS_NOT_SEPARATED = "(scaffolds not separated)"

#: How a user maps ids to their scaffolds (messages, the sheet, the app).
HOW_TO_MAP = ("map the ids to their scaffolds with an alias file (--aliases FILE; the app's Analysis > Subject ids "
              "table saves one) to fit scaffold terms")


#: What becomes of the ids that name no scaffold: every record pooled under one scaffold (the
#: default), or those ids' records left out so that the other ids' scaffolds are fitted.
UNSPLIT_CHOICES = ("collapse", "drop")

#: The choice for one import, set by :func:`unsplit_rule` (``load_corpus(..., unsplit_ids=...)``,
#: ``ddr ... --unsplit-ids``); a context variable, so a worker thread's import does not change another's.
UNSPLIT_IDS: ContextVar[str] = ContextVar("unsplit_ids", default="collapse")


@contextmanager
def unsplit_rule(choice: str | None, *, file=None):
    """Within the block, ids that name no scaffold are pooled (``"collapse"``) or left out (``"drop"``)."""
    choice = choice or "collapse"
    if choice not in UNSPLIT_CHOICES:
        raise CorpusError([error("bad-option", f"unsplit_ids = {choice!r} is not a choice for ids that name no "
                                 "scaffold.", f"use one of: {', '.join(UNSPLIT_CHOICES)} (--unsplit-ids).",
                                 file=None if file is None else str(file), column="unsplit_ids")])
    token = UNSPLIT_IDS.set(choice)
    try:
        yield
    finally:
        UNSPLIT_IDS.reset(token)


def merge_model_spellings(subjects: list, enabled: bool = True, *, file=None, column: str = "subject_id"
                          ) -> tuple[list, list[dict], list[CorpusIssue]]:
    """Merge the spellings of one model among the subjects' models (see the module docstring).

    Parameters
    ----------
    subjects
        One split subject (:class:`.pyirt.Subject`) per id.
    enabled
        False (``merge_models = false`` in the alias file): nothing is merged.

    Returns
    -------
    subjects, merges, issues
        The subjects with merged model names, the merges (:func:`.model_keys.merge_spellings`)
        and a warning naming them.
    """
    if not enabled or not subjects:
        return subjects, [], []
    rename, merges = merge_spellings(s.model for s in subjects)
    if not merges:
        return subjects, [], []
    out = [replace(s, model=rename.get(s.model, s.model)) for s in subjects]
    n_sp = sum(len(m["spellings"]) for m in merges)
    issue = warning("model-spellings-merged",
                    f"{n_sp} model spellings that differ only in case and '-', '_', '.' were merged into "
                    f"{len(merges)} models: {format_merges(merges)}.",
                    "set merge_models = false in an alias file (--aliases) to keep them apart, or rename models "
                    "in its [models] table.", file=None if file is None else str(file), column=column,
                    count=n_sp)
    return out, merges, [issue]


def pool_unnamed_scaffolds(raw: pd.DataFrame, id_of_row, subject_ids: list[str], unknown: set[str], *,
                           named=frozenset(), file=None, column: str = "subject_id", choice: str | None = None
                           ) -> tuple[pd.DataFrame, dict | None, list[CorpusIssue]]:
    """Settle the records whose scaffold is unknown: one scaffold for all, or those left out (module docstring).

    Parameters
    ----------
    raw
        The importer's table (``scaffold`` column as split).
    id_of_row
        The subject id of each row of ``raw``.
    subject_ids
        Every subject id of the file, in file order.
    unknown
        Scaffold names that mean "the id names no scaffold".
    named
        Subject ids whose scaffold an alias file's ``[subjects]`` entry gives by name: taken as
        written, even "unknown" (the user's word; ``ddr convert --to py-irt`` writes such entries
        so that a table reads back as it was).
    choice
        ``"collapse"`` (every record gets :data:`SCAFFOLDS_NOT_SEPARATED`) or ``"drop"`` (the
        records of unknown scaffold are left out); by default the import's :data:`UNSPLIT_IDS`.

    Returns
    -------
    raw, info, issues
        ``info`` (None when every record names its scaffold) holds ``choice``, ``ids``,
        ``not_split`` (ids with a record of unknown scaffold), ``examples``, ``unsplit`` (all
        those ids), ``records``, ``scaffolds_named`` (the real scaffolds the split ids named) and
        ``scaffold`` (the one scaffold given to every record; None when they were left out).
        :func:`unsplit_provenance` files it under the provenance key of its choice.
    """
    choice = choice or UNSPLIT_IDS.get()
    if raw.empty:
        return raw, None, []
    is_unknown = raw["scaffold"].astype(str).isin(unknown).to_numpy().copy()
    if named:
        is_unknown &= ~pd.Series(np.asarray(id_of_row, dtype=object)).isin(set(named)).to_numpy()
    if not is_unknown.any():
        return raw, None, []
    hit = set(np.asarray(id_of_row, dtype=object)[is_unknown])
    named = sorted(set(raw["scaffold"].astype(str)[~is_unknown]))
    ids = [s for s in subject_ids if s in hit]
    info = {"choice": choice, "ids": len(subject_ids), "not_split": len(ids), "examples": ids[:5], "unsplit": ids,
            "records": int(is_unknown.sum()), "scaffolds_named": named, "scaffold": SCAFFOLDS_NOT_SEPARATED}
    where = {"file": None if file is None else str(file), "column": column, "count": len(ids)}
    if choice == "drop":
        return _leave_out(raw, is_unknown, info, subject_ids, where)
    raw = raw.copy()
    raw["scaffold"] = SCAFFOLDS_NOT_SEPARATED
    kept = (f"; the {len(named)} scaffold{'s' if len(named) != 1 else ''} the other ids name "
            f"({', '.join(named[:4])}{', ...' if len(named) > 4 else ''}) are kept in the id table but not fitted"
            if named else "")
    other = (" Or leave these ids out and fit the other ids' scaffolds: --unsplit-ids drop (the app: the Subject "
             "ids table's choice for ids that name no scaffold)." if named else "")
    issue = warning("scaffold-unknown",
                    f"{len(ids)} of {len(subject_ids)} subject ids name no scaffold for some or all of their records "
                    f"(e.g. {', '.join(ids[:3])}). "
                    f"'unknown' is not made a scaffold: every record gets the one scaffold "
                    f"'{SCAFFOLDS_NOT_SEPARATED}' (--unsplit-ids collapse, the default), so fits have no scaffold "
                    f"terms and a model's effect averages over the harnesses its runs used{kept}.",
                    HOW_TO_MAP + "." + other, **where)
    return raw, info, [issue]


def _leave_out(raw: pd.DataFrame, is_unknown: np.ndarray, info: dict, subject_ids: list[str], where: dict
               ) -> tuple[pd.DataFrame, dict, list[CorpusIssue]]:
    """The ``drop`` choice: the records of unknown scaffold left out, their ids named (refused when none is left)."""
    ids = info["unsplit"]
    if is_unknown.all():
        raise CorpusError([error("unsplit-ids-left-out", f"none of the {len(subject_ids)} subject ids names a "
                                 "scaffold, so leaving out the ids that name none (--unsplit-ids drop) would leave "
                                 "no record.", "use --unsplit-ids collapse (every record one scaffold), or "
                                 + HOW_TO_MAP + ".", file=where["file"], column=where["column"],
                                 count=len(ids))])
    info = {**info, "scaffold": None}
    shown = ", ".join(ids[:12]) + (f", ... ({len(ids) - 12} more: ddr inspect lists them)" if len(ids) > 12 else "")
    named = info["scaffolds_named"]
    issue = warning("unsplit-ids-left-out",
                    f"{len(ids)} of {len(subject_ids)} subject ids name no scaffold and were left out "
                    f"(--unsplit-ids drop), {info['records']:,} records: {shown}. The other "
                    f"{len(subject_ids) - len(ids)} ids keep their {len(named)} "
                    f"scaffold{'s' if len(named) != 1 else ''} ({', '.join(named[:4])}"
                    f"{', ...' if len(named) > 4 else ''}), which are fitted; the systems left out are not ranked.",
                    HOW_TO_MAP + " and keep these ids, or --unsplit-ids collapse to keep every id under one "
                    "scaffold.", **where)
    return raw.loc[~is_unknown].reset_index(drop=True), info, [issue]


def unsplit_provenance(info: dict | None) -> dict:
    """The provenance keys of :func:`pool_unnamed_scaffolds`'s ``info``: ``scaffolds_not_separated`` (ids
    pooled under one scaffold) and ``unsplit_ids_left_out`` (ids left out), one of them or neither set."""
    drop = bool(info) and info.get("choice") == "drop"
    return {"scaffolds_not_separated": None if drop else info, "unsplit_ids_left_out": info if drop else None}


def carried_marker(raw: pd.DataFrame, *, file=None) -> tuple[pd.DataFrame, dict | None, list[CorpusIssue]]:
    """Read :data:`SCAFFOLDS_NOT_SEPARATED` in a table's ``scaffold`` column as the marker it is.

    ``ddr convert`` writes a corpus whose ids named no scaffold with the marker in the scaffold
    column; read back, it would be one scaffold's name, and the DDR sheet said every model "ran in
    one harness".  Here it is the marker again: provenance
    ``scaffolds_not_separated`` as the importer records it, the warning ``scaffold-unknown``, and,
    when other rows name real scaffolds (a converted file concatenated with another), every row gets
    the marker, as the importer's rule gives (module docstring).

    Returns
    -------
    raw, info, issues
        ``info`` None when no row carries the marker.
    """
    if "scaffold" not in raw.columns:
        return raw, None, []
    marked = raw["scaffold"].astype(str).str.strip().eq(SCAFFOLDS_NOT_SEPARATED).to_numpy()
    if not marked.any():
        return raw, None, []
    models = list(dict.fromkeys(raw["model"].astype(str))) if "model" in raw.columns else []
    hit = list(dict.fromkeys(raw.loc[marked, "model"].astype(str))) if "model" in raw.columns else []
    named = sorted(set(raw["scaffold"].astype(str)[~marked]))
    info = {"ids": len(models), "not_split": len(hit), "examples": hit[:5], "records": int(marked.sum()),
            "scaffolds_named": named, "scaffold": SCAFFOLDS_NOT_SEPARATED, "carried": True}
    raw = raw.copy()
    raw["scaffold"] = SCAFFOLDS_NOT_SEPARATED
    kept = (f"; the other rows' scaffolds ({', '.join(named[:4])}{', ...' if len(named) > 4 else ''}) are pooled "
            "with them, since a harness not named cannot be told from one named" if named else "")
    issue = warning("scaffold-unknown",
                    f"{int(marked.sum()):,} records of {len(hit)} models carry the marker '{SCAFFOLDS_NOT_SEPARATED}' "
                    f"in the scaffold column (ids that named no scaffold, as ddr convert writes them): it is read "
                    f"as that marker, not as a scaffold, so fits have no scaffold terms and a model's effect "
                    f"averages over the harnesses its runs used{kept}.", HOW_TO_MAP + ".",
                    file=None if file is None else str(file), column="scaffold", count=int(marked.sum()))
    return raw, info, [issue]


def subject_id_summary(provenance: dict | None) -> dict | None:
    """How a corpus's subject ids were read, for ``ddr inspect`` and the DDR sheet (None: no subject ids).

    Keys: ``ids``, ``split`` (into a model and a scaffold), ``model_only``, ``no_rule``,
    ``by_rules`` (ids per convention or alias file), ``model_merges``, ``not_split`` (ids whose
    records name no scaffold and were pooled; 0 when the scaffold facet is fitted),
    ``scaffolds_not_separated`` (True when every record got :data:`SCAFFOLDS_NOT_SEPARATED`),
    ``unsplit_ids`` (the choice made for ids that name no scaffold: ``"collapse"``, ``"drop"``, or
    None when every id names one), ``left_out`` and ``left_out_ids`` (the ids ``"drop"`` left out),
    ``left_out_records`` and ``how_to_map``.
    """
    p = provenance or {}
    m = p.get("id_mapping")
    pooled = p.get("scaffolds_not_separated") or None
    dropped = p.get("unsplit_ids_left_out") or None
    if not m and pooled and pooled.get("carried"):  # a converted file's marker (:func:`carried_marker`)
        m = {"ids": pooled["ids"], "model_only": pooled["ids"]}
    if not m:
        return None
    return {"ids": m.get("ids", 0), "split": m.get("split", 0), "model_only": m.get("model_only", 0),
            "no_rule": m.get("no_rule", 0), "by_rules": dict(m.get("by_rules") or {}),
            "model_merges": list(p.get("model_merges") or []),
            "not_split": pooled["not_split"] if pooled else 0,
            "not_split_examples": pooled["examples"] if pooled else [],
            "scaffolds_not_separated": bool(pooled), "how_to_map": HOW_TO_MAP,
            "carried": bool(pooled and pooled.get("carried")),
            "unsplit_ids": "drop" if dropped else "collapse" if pooled else None,
            "left_out": len(dropped["unsplit"]) if dropped else 0,
            "left_out_ids": list(dropped["unsplit"]) if dropped else [],
            "left_out_records": dropped["records"] if dropped else 0}


def format_subject_ids(s: dict) -> list[str]:
    """The ``Subject ids`` lines of ``ddr inspect``: every heuristic split and merge, counted."""
    by = ", ".join(f"{k} {v}" for k, v in sorted(s["by_rules"].items(), key=lambda kv: -kv[1])) or "none"
    if s.get("carried"):  # no ids in the file: its scaffold column carries the marker (carried_marker)
        lines = ["Subject ids", f"  the scaffold column carries the marker '{SCAFFOLDS_NOT_SEPARATED}' for "
                                f"{s['not_split']} of {s['ids']} models (written from ids that named no scaffold)"]
    else:
        lines = ["Subject ids",
                 f"  {s['ids']} ids: {s['split']} split into a model and a scaffold, {s['model_only']} read as a "
                 f"model only, {s['no_rule']} matched no rule (rules used: {by})"]
    if s["scaffolds_not_separated"]:
        lines.append(f"  {s['not_split']} ids name no scaffold (e.g. {', '.join(s['not_split_examples'][:3])}): "
                     f"scaffolds are not separated, fits have no scaffold terms (--unsplit-ids collapse)")
        lines.append(f"  to fit them: {s['how_to_map']}; or --unsplit-ids drop to leave those ids out")
    if s.get("left_out"):
        lines.append(f"  {s['left_out']} ids name no scaffold and were left out (--unsplit-ids drop), "
                     f"{s['left_out_records']:,} records: {', '.join(s['left_out_ids'])}")
        lines.append(f"  to keep them: {s['how_to_map'].replace(' to fit scaffold terms', '')}, or --unsplit-ids "
                     "collapse (one scaffold for every id)")
    for m in s["model_merges"]:
        lines.append("  merged: " + " / ".join(f"{k} ({n})" for k, n in m["spellings"].items())
                     + f" -> {m['model']}")
    return lines
