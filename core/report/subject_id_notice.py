"""The DDR sheet's "Read with care" line on subject ids that name no scaffold.

What the import did with them (:mod:`..corpus.subject_ids.unsplit`) changes what the sheet's numbers
are about, so the sheet names the choice: ids pooled under one scaffold (``--unsplit-ids collapse``,
the default: no scaffold terms) or left out (``--unsplit-ids drop``: the other ids' scaffolds are
fitted, the systems left out are not in the ranking).
"""

from __future__ import annotations

from xml.sax.saxutils import escape

__all__ = ["subject_ids_notice"]


def subject_ids_notice(ids: dict | None) -> tuple[str, str] | None:
    """(title, text) of the notice, reportlab markup escaped; None when every id names its scaffold.

    Parameters
    ----------
    ids
        :func:`~..corpus.subject_ids.unsplit.subject_id_summary` of the corpus (the inspect summary's
        ``subject_ids``).
    """
    ids = ids or {}
    how = escape(str(ids.get("how_to_map", "")).replace(" to fit scaffold terms", ""))
    if ids.get("left_out"):
        names = ids.get("left_out_ids") or []
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        return ("Subject ids not split, left out.",
                f"{ids['left_out']} of {ids['ids']} subject ids name no scaffold and were left out "
                f"(--unsplit-ids drop; {ids.get('left_out_records', 0):,} records): {escape(shown)}. The scaffolds "
                "the other ids name are fitted, but the systems left out are in no number or ranking of this "
                f"sheet. To keep them, {how}, or use --unsplit-ids collapse (every id under one scaffold).")
    if ids.get("scaffolds_not_separated"):
        return ("Subject ids not split.",
                f"{ids['not_split']} of {ids['ids']} subject ids name no scaffold (e.g. "
                f"{escape(', '.join(ids.get('not_split_examples', [])[:2]))}), so scaffolds were not "
                "separated (--unsplit-ids collapse, the default): the fit has no scaffold terms, 'model' averages "
                "over the harnesses its runs used, and the reliability ignores how rankings change across "
                f"scaffolds. To fit them, {how}; or leave those ids out with --unsplit-ids drop.")
    return None
