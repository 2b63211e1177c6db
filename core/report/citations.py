"""The DDR sheet's References block: the full entries of exactly the works its text cites.

The sheet cites through :func:`ddr_explorer.core.references.cite`; this module reads the citations back
from the laid-out story (paragraphs, tables and the blocks that hold them) so the list on the last page
always matches what the pages say, whichever sections a sheet has.
"""

from __future__ import annotations

from reportlab.platypus import Flowable, Paragraph, Table

from ..references import cited_keys, reference_entries

__all__ = ["story_text", "story_cited_keys", "references_block"]


def story_text(flowables) -> list[str]:
    """Every paragraph's and table cell's text (markup included) in ``flowables``, nested blocks opened."""
    out: list[str] = []
    stack = [flowables]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Paragraph):
            out.append(item.text)
        elif isinstance(item, Table):
            stack.extend(cell for row in item._cellvalues for cell in row)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, Flowable) and isinstance(getattr(item, "_content", None), (list, tuple)):
            stack.extend(item._content)  # KeepTogether, KeepInFrame and the sheet's shrink-to-fit blocks
    return out


def story_cited_keys(flowables) -> list[str]:
    """The keys of :data:`~ddr_explorer.core.references.REFERENCES` cited in ``flowables``, in table order."""
    return cited_keys(story_text(flowables))


def references_block(flowables, heading_style, entry_style) -> list[Flowable]:
    """A "References" heading and one paragraph per work cited in ``flowables`` (empty when none is).

    Parameters
    ----------
    flowables
        The sheet's story so far.
    heading_style, entry_style
        reportlab paragraph styles of the heading and of the entries.
    """
    entries = reference_entries(story_cited_keys(flowables))
    if not entries:
        return []
    from xml.sax.saxutils import escape
    return [Paragraph("References", heading_style), *(Paragraph(escape(e), entry_style) for e in entries)]
