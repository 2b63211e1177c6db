"""The sheet's keep-together block (coverage grid) moves to the next page when it does not fit."""

from __future__ import annotations

import io

import pytest

pytest.importorskip("reportlab")

from reportlab.platypus import BaseDocTemplate, Frame, PageTemplate, Spacer  # noqa: E402

from ddr_explorer.core.report import styles as st  # noqa: E402
from ddr_explorer.core.report.sheet import _ShrinkToFit  # noqa: E402


def test_block_too_tall_for_the_rest_of_a_page_moves_whole():
    """A page three-quarters full, then a block that even shrunk needs more: it moves, and the PDF builds
    (it raised AttributeError: getSpaceBefore when the block kept its shrunk copy in reportlab's ``_frame``)."""
    doc = BaseDocTemplate(io.BytesIO(), pagesize=st.PAGE_SIZE)
    doc.addPageTemplates([PageTemplate(id="p", frames=[Frame(st.MARGIN_LEFT, st.MARGIN_BOTTOM, st.FRAME_WIDTH,
                                                             st.FRAME_HEIGHT)])])
    pages = []
    doc.afterPage = lambda: pages.append(doc.page)
    doc.build([Spacer(1, 0.75 * st.FRAME_HEIGHT), _ShrinkToFit([Spacer(1, 0.6 * st.FRAME_HEIGHT)])])
    assert len(pages) == 2
