"""The small pieces of text every page of the DDR sheet lays out: a paragraph in a named style, a name cut
for a table cell, a count with its noun, the claim's coefficient symbol."""

from __future__ import annotations

from reportlab.platypus import Paragraph

from ..formatting import fmt_n
from . import styles as st
from .content import E_RHO2, PHI, SheetContent, escape

__all__ = ["MAX_NAME_CHARS", "paragraph", "cell_name", "count_words", "symbol"]

#: Longest name printed in a table cell before it is cut with an ellipsis (the rest wraps).
MAX_NAME_CHARS = 60


def paragraph(text: str, style: str = "body") -> Paragraph:
    """``text`` (reportlab markup) as a paragraph of the sheet's style ``style``."""
    return Paragraph(text, st.stylesheet()[style])


def cell_name(text: str, limit: int = MAX_NAME_CHARS) -> str:
    """A name for a table cell: escaped, cut with an ellipsis past ``limit`` characters."""
    text = str(text)
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + st.ELLIPSIS
    return escape(text)


def count_words(n, word: str) -> str:
    """``3 tasks``, ``1 task``."""
    return f"{fmt_n(n)} {word}{'' if n == 1 else 's'}"


def symbol(ct: SheetContent) -> str:
    """The claim's coefficient: Erho2 for rankings, Phi for threshold decisions."""
    return E_RHO2 if ct.estimand == "Erho2" else PHI
