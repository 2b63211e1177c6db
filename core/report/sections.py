"""The DDR sheet laid out section by section: a section that cannot be laid out is left out, not fatal.

The sheet is a story of reportlab flowables built by one function per section
(:mod:`.sheet`).  Two things can go wrong with a section for some shape of
corpus: its builder raises, or returns something that is not a flowable (a
nested list, ``None``, a bare string), which reportlab only notices deep in
its layout with an ``AttributeError``; or a flowable of it cannot be laid out
(reportlab's ``LayoutError``, or any error from a figure's drawing code).
Either way, one section must not cost the user the rest of the sheet and the
fit they waited for.  :func:`build_sections` therefore

1. checks every section's flowables (:func:`check_flowables`) and leaves a
   section whose builder fails or returns a non-flowable out, naming it;
2. tags every flowable with its section, so that when the layout fails,
   :class:`SectionDocTemplate` knows in which section it was, and lays the
   whole sheet out again without that section;
3. puts a line saying what was left out and why in the section's place, and
   returns the sections left out (:class:`LeftOutSection`), whose
   :meth:`~LeftOutSection.message` ``ddr report`` prints on stderr (it then
   exits with status 4, ``core.cli.EXIT_SHEET_INCOMPLETE``) and the app shows.

Nothing here knows what a section says; :mod:`.sheet` gives the builders.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from reportlab.platypus import BaseDocTemplate, Frame, PageBreak, PageTemplate, Paragraph
from reportlab.platypus.flowables import Flowable

from ..errors import DDRWarning
from . import styles as st
from .content import escape

__all__ = ["LeftOutSection", "SectionDocTemplate", "SheetLayout", "SheetLayoutError",
           "SheetWritten", "build_sections", "check_flowables", "incomplete_message", "left_out_note", "sheet_doc",
           "warn_if_incomplete"]

#: Longest reason quoted on the sheet and on stderr (reportlab's messages quote whole flowables).
MAX_REASON_CHARS = 240


class SheetLayoutError(RuntimeError):
    """The sheet could not be laid out even with the failing sections left out (nothing was written)."""


@dataclass(frozen=True)
class LeftOutSection:
    """A section of the sheet that was left out, and why.

    Attributes
    ----------
    section
        The section's name as the sheet and the message print it (``"ranks and dominance"``).
    reason
        What went wrong: the error's type and message, shortened.
    """

    section: str
    reason: str

    def message(self) -> str:
        """The line ``ddr report`` prints on stderr and the app shows."""
        return (f"the DDR sheet's section '{self.section}' could not be laid out and was left out ({self.reason}); "
                "the rest of the sheet was written, and the fit is kept")


def incomplete_message(left_out: Sequence[LeftOutSection]) -> str:
    """One paragraph for every section left out (empty when the sheet is complete)."""
    return "\n".join(s.message() for s in left_out)


def left_out_note(left: LeftOutSection) -> list:
    """What the sheet prints in the place of a section left out."""
    return [Paragraph(f"<b>Section left out: {escape(left.section)}.</b> It could not be laid out for this corpus "
                      f"({escape(left.reason)}). The rest of the sheet is complete, and the fit is kept.",
                      st.stylesheet()["note"])]


def warn_if_incomplete(left_out: Sequence[LeftOutSection]) -> None:
    """A :class:`~..errors.DDRWarning` for callers of the bytes-or-path API, which has no room for the list."""
    if left_out:
        warnings.warn(incomplete_message(left_out), DDRWarning, stacklevel=3)


def _reason(exc: BaseException) -> str:
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 1].rstrip() + "\u2026"


def _not_flowables(value, where: str, *, top: bool):
    """``(where, value)`` of every element under ``value`` that reportlab cannot lay out.

    At the top of a section only flowables are allowed; inside a table's cell
    reportlab also takes a string, ``None`` or a list of flowables.  The
    contents of container flowables (``KeepTogether``, ``KeepInFrame``, the
    sheet's shrink-to-fit block) and of table cells are checked too.
    """
    if isinstance(value, Flowable):
        content = getattr(value, "_content", None)
        if isinstance(content, (list, tuple)):
            for i, item in enumerate(content):
                yield from _not_flowables(item, f"{where} > item {i + 1}", top=True)
        cells = getattr(value, "_cellvalues", None)
        if isinstance(cells, (list, tuple)):
            for r, row in enumerate(cells):
                for c, cell in enumerate(row):
                    yield from _not_flowables(cell, f"{where} > cell ({r + 1}, {c + 1})", top=False)
        return
    if not top:
        if value is None or isinstance(value, str):
            return
        if isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                yield from _not_flowables(item, f"{where} > item {i + 1}", top=True)
            return
    yield where, value


def check_flowables(section: str, part) -> None:
    """Raise :class:`TypeError` naming ``section`` unless ``part`` is a list of flowables reportlab can lay out.

    Parameters
    ----------
    section
        The section's name, for the message.
    part
        What the section's builder returned.

    Raises
    ------
    TypeError
        ``part`` is not a list, or an element of it (or inside a container or
        a table cell of it) is not a flowable, e.g. a nested list, ``None`` or
        a bare string.
    """
    if not isinstance(part, list):
        raise TypeError(f"the builder of section '{section}' returned {type(part).__name__}, not a list of "
                        "flowables")
    for i, value in enumerate(part):
        for where, bad in _not_flowables(value, f"item {i + 1}", top=True):
            raise TypeError(f"the builder of section '{section}' returned a {type(bad).__name__} "
                            f"({repr(bad)[:60]}) at {where}, not a reportlab flowable")


class SectionDocTemplate(BaseDocTemplate):
    """A document template that knows which section the flowable it is laying out belongs to.

    :func:`build_sections` tags each flowable of a section with ``_ddr_section``;
    pieces reportlab splits off a flowable carry no tag and stay in the section
    of the flowable before them.  Once the last flowable is placed the section
    is cleared, so a failure while the footers are drawn is blamed on no section.
    """

    current_section: str | None = None

    def handle_flowable(self, flowables):
        section = getattr(flowables[0], "_ddr_section", None) if flowables else None
        if section is not None:
            self.current_section = section
        return super().handle_flowable(flowables)

    def _endBuild(self):  # reportlab's end of build: page ends and canvas save, outside any section
        self.current_section = None
        return super()._endBuild()


def sheet_doc(buf, *, title: str, subject: str, invariant: bool) -> SectionDocTemplate:
    """The sheet's document template (one body frame per page) writing into ``buf``.

    ``invariant``: reportlab's fixed creation date and document ID, for byte-identical builds.
    """
    doc = SectionDocTemplate(buf, pagesize=st.PAGE_SIZE, leftMargin=st.MARGIN_LEFT, rightMargin=st.MARGIN_RIGHT,
                             topMargin=st.MARGIN_TOP, bottomMargin=st.MARGIN_BOTTOM, title=title,
                             author="DDR Explorer", subject=subject, creator="DDR Explorer",
                             keywords="generalizability theory, reliability, agent evaluation",
                             invariant=1 if invariant else 0)
    frame = Frame(st.MARGIN_LEFT, st.MARGIN_BOTTOM, st.FRAME_WIDTH, st.FRAME_HEIGHT, id="body", leftPadding=0,
                  rightPadding=0, topPadding=0, bottomPadding=0)
    doc.addPageTemplates([PageTemplate(id="page", frames=[frame])])
    return doc


@dataclass(frozen=True)
class SheetLayout:
    """The PDF bytes and the sections left out of them (empty when the sheet is complete)."""

    data: bytes
    left_out: tuple[LeftOutSection, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.left_out


#: The name under which the closing block of the last page (the References) is left out when it fails.
CLOSING = "References"


def build_sections(sections: Sequence[tuple[str, Callable[[], list]]], *,
                   new_doc: Callable[[io.BytesIO], SectionDocTemplate],
                   note: Callable[[LeftOutSection], list], canvasmaker,
                   closing: Callable[[list], list] | None = None) -> SheetLayout:
    """Lay the sections out as one PDF, leaving out (with ``note``) each one that fails.

    Parameters
    ----------
    sections
        ``(name, builder)`` in page order; ``builder()`` returns the section's
        flowables (an empty list: the section has nothing to say and takes no
        page).  Each section after the first starts on a new page.
    new_doc
        Makes a fresh document template writing into the buffer it is given.
    note
        The flowables put in the place of a section left out.
    canvasmaker
        Passed to ``doc.build``.
    closing
        Optional: given the laid-out story, the flowables that end the last page (the sheet's
        References block, which lists the works the story cites); left out like a section, under the
        name "References", when it fails.

    Returns
    -------
    SheetLayout

    Raises
    ------
    SheetLayoutError
        The layout failed outside every section (the footers), or the note
        that replaced a section failed too.

    Notes
    -----
    A layout failure is found only while reportlab places the flowables, after
    earlier flowables may have been split and wrapped, so the sheet is built
    afresh, from new flowables, each time a section is left out: at most one
    build more than there are sections.
    """
    left_out: dict[str, LeftOutSection] = {}
    while True:
        story: list = []
        for name, builder in sections:
            part = None
            if name not in left_out:
                try:
                    part = builder()
                    check_flowables(name, part)
                except Exception as exc:  # noqa: BLE001 - any failure of one section leaves that section out
                    left_out[name] = LeftOutSection(name, _reason(exc))
            if name in left_out:
                part = note(left_out[name])
            if not part:
                continue
            for flowable in part:
                flowable._ddr_section = name
            story += [*part, PageBreak()]
        if story:
            story.pop()  # no blank last page
        if closing is not None:
            if CLOSING not in left_out:
                try:
                    extra = closing(story)
                    check_flowables(CLOSING, extra)
                except Exception as exc:  # noqa: BLE001 - as for a section: left out with a line saying why
                    left_out[CLOSING] = LeftOutSection(CLOSING, _reason(exc))
            if CLOSING in left_out:
                extra = note(left_out[CLOSING])
            for flowable in extra:
                flowable._ddr_section = CLOSING
            story += extra
        buf = io.BytesIO()
        doc = new_doc(buf)
        try:
            doc.build(story, canvasmaker=canvasmaker)
        except Exception as exc:  # noqa: BLE001 - the section it happened in is left out and the sheet rebuilt
            name = doc.current_section
            if name is None or name in left_out:
                raise SheetLayoutError(f"the DDR sheet could not be laid out ({_reason(exc)})"
                                       + (f" in section '{name}'" if name else "")) from exc
            left_out[name] = LeftOutSection(name, _reason(exc))
            continue
        order = [name for name, _ in sections] + [CLOSING]
        return SheetLayout(buf.getvalue(), tuple(sorted(left_out.values(), key=lambda s: order.index(s.section))))


@dataclass(frozen=True)
class SheetWritten:
    """What :func:`~.sheet.write_sheet` wrote: the PDF's path and the sections left out of it."""

    path: Path
    left_out: tuple[LeftOutSection, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.left_out

    def message(self) -> str:
        """The lines to print or show when the sheet is incomplete (empty when it is complete)."""
        return incomplete_message(self.left_out)
