"""The look of the DDR sheet: page geometry, fonts, colours, paragraph and table styles.

Kept apart from the content (the rst2pdf habit: styles.py against
createpdf.py), so a change of look never touches what the sheet says, and
:mod:`.figures` and :mod:`.sheet` share one palette.

Fonts are the PDF base-14 fonts (Helvetica and Symbol): nothing to embed or
find on the user's machine, and reportlab substitutes Symbol for the Greek
letters and math signs Helvetica lacks (rho, sigma, >=), so text extracts as
Unicode.
"""

from __future__ import annotations

from functools import lru_cache

from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER, TA_LEFT, TA_RIGHT
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.platypus import TableStyle

# ---------------------------------------------------------------------------
# Page geometry (points)
# ---------------------------------------------------------------------------

PAGE_SIZE = A4
MARGIN_LEFT = MARGIN_RIGHT = 36.0
MARGIN_TOP = 30.0
#: Room kept below the frame for the three-line footer.
FOOTER_HEIGHT = 44.0
MARGIN_BOTTOM = 22.0 + FOOTER_HEIGHT
FRAME_WIDTH = PAGE_SIZE[0] - MARGIN_LEFT - MARGIN_RIGHT
FRAME_HEIGHT = PAGE_SIZE[1] - MARGIN_TOP - MARGIN_BOTTOM

# ---------------------------------------------------------------------------
# Fonts
# ---------------------------------------------------------------------------

FONT = "Helvetica"
FONT_BOLD = "Helvetica-Bold"
FONT_ITALIC = "Helvetica-Oblique"
FONT_MONO = "Courier"

# ---------------------------------------------------------------------------
# Colours (Okabe-Ito, safe for the common colour-vision deficiencies)
# ---------------------------------------------------------------------------

INK = colors.HexColor("#1a1a1a")
MUTED = colors.HexColor("#5c5c5c")
FAINT = colors.HexColor("#9a9a9a")
RULE = colors.HexColor("#c8c8c8")
PANEL = colors.HexColor("#f3f4f6")
BLUE = colors.HexColor("#0072B2")
SKY = colors.HexColor("#56B4E9")
ORANGE = colors.HexColor("#E69F00")
VERMILLION = colors.HexColor("#D55E00")
GREEN = colors.HexColor("#009E73")
PURPLE = colors.HexColor("#CC79A7")

#: Roles in figures.
MEDIAN = BLUE
BAND68 = colors.HexColor("#9cc6e4")
BAND95 = colors.HexColor("#d8e9f5")
DETECTION = colors.HexColor("#fbe3b0")
DETECTION_EDGE = colors.HexColor("#d9a441")
TARGET = VERMILLION
CEILING = MUTED
OBSERVED = INK
FRONTIER = GREEN
POINTS = colors.HexColor("#c4c4c4")

#: Warning boxes: serious problems and cautions.
SERIOUS_BG = colors.HexColor("#fde8e1")
SERIOUS_EDGE = VERMILLION
CAUTION_BG = colors.HexColor("#fff4d9")
CAUTION_EDGE = ORANGE
OK_BG = colors.HexColor("#e3f3ec")
OK_EDGE = GREEN
HEADLINE_BG = colors.HexColor("#eef4fa")

#: Verdict colour by reliability class (see :func:`..content.verdict`).
VERDICT_COLOURS = {"reliable": GREEN, "below target": ORANGE, "detection limit": ORANGE,
                   "below detection": VERMILLION, "near zero": VERMILLION}


def diverging(p: float) -> colors.Color:
    """Colour of a probability on a blue-white-vermillion scale (0 blue, 0.5 white, 1 vermillion)."""
    p = min(max(float(p), 0.0), 1.0)
    white = colors.white
    if p < 0.5:
        return colors.linearlyInterpolatedColor(BLUE, white, 0.0, 0.5, p)
    return colors.linearlyInterpolatedColor(white, VERMILLION, 0.5, 1.0, p)


def sequential(v: float) -> colors.Color:
    """Colour of a value in [0, 1] on a white-to-blue scale (0 white)."""
    v = min(max(float(v), 0.0), 1.0)
    return colors.linearlyInterpolatedColor(colors.HexColor("#eaf2f8"), BLUE, 0.0, 1.0, v)


# ---------------------------------------------------------------------------
# Paragraph styles
# ---------------------------------------------------------------------------

BODY_SIZE = 8.0
SMALL_SIZE = 7.0
TABLE_SIZE = 7.2
FOOTER_SIZE = 5.8


@lru_cache(maxsize=1)
def stylesheet() -> dict[str, ParagraphStyle]:
    """Paragraph styles by name (cached; treat as read-only)."""
    base = ParagraphStyle("body", fontName=FONT, fontSize=BODY_SIZE, leading=BODY_SIZE * 1.28, textColor=INK,
                          alignment=TA_LEFT)
    s = {"body": base}

    def add(name, **kw):
        s[name] = ParagraphStyle(name, parent=kw.pop("parent", base), **kw)

    add("title", fontName=FONT_BOLD, fontSize=16, leading=19, spaceAfter=1)
    add("question", fontName=FONT_BOLD, fontSize=11.5, leading=14, textColor=BLUE, spaceAfter=2)
    add("meta", fontSize=SMALL_SIZE + 0.3, leading=(SMALL_SIZE + 0.3) * 1.3, textColor=MUTED)
    add("h1", fontName=FONT_BOLD, fontSize=12.5, leading=15, spaceBefore=2, spaceAfter=5, textColor=INK)
    add("h2", fontName=FONT_BOLD, fontSize=9.2, leading=11.5, spaceBefore=6, spaceAfter=2.5, textColor=INK)
    add("h3", fontName=FONT_BOLD, fontSize=BODY_SIZE, leading=BODY_SIZE * 1.25, spaceBefore=3, spaceAfter=1)
    add("body_after", spaceAfter=4)
    add("small", fontSize=SMALL_SIZE, leading=SMALL_SIZE * 1.3, textColor=MUTED)
    add("caption", fontSize=SMALL_SIZE, leading=SMALL_SIZE * 1.3, textColor=MUTED, spaceBefore=1, spaceAfter=5)
    add("cell", fontSize=TABLE_SIZE, leading=TABLE_SIZE * 1.22)
    add("cell_right", parent=s["cell"], alignment=TA_RIGHT)
    add("cell_center", parent=s["cell"], alignment=TA_CENTER)
    add("cell_head", parent=s["cell"], fontName=FONT_BOLD, textColor=INK)
    add("cell_head_right", parent=s["cell_head"], alignment=TA_RIGHT)
    add("cell_muted", parent=s["cell"], textColor=MUTED)
    add("headline_number", fontName=FONT_BOLD, fontSize=22, leading=25, textColor=BLUE)
    add("headline_interval", fontSize=BODY_SIZE, leading=BODY_SIZE * 1.3, textColor=MUTED)
    add("headline_text", fontSize=BODY_SIZE + 0.4, leading=(BODY_SIZE + 0.4) * 1.3)
    add("verdict", fontName=FONT_BOLD, fontSize=BODY_SIZE + 0.8, leading=(BODY_SIZE + 0.8) * 1.25)
    add("warn_title", fontName=FONT_BOLD, fontSize=BODY_SIZE + 0.5, leading=(BODY_SIZE + 0.5) * 1.25)
    add("warn", fontSize=BODY_SIZE - 0.3, leading=(BODY_SIZE - 0.3) * 1.28, leftIndent=8, bulletIndent=0)
    add("decision_q", fontName=FONT_BOLD, fontSize=BODY_SIZE, leading=BODY_SIZE * 1.25)
    add("decision_a", fontSize=BODY_SIZE, leading=BODY_SIZE * 1.32)
    add("decision_status", fontSize=SMALL_SIZE - 0.5, leading=SMALL_SIZE * 1.2, textColor=MUTED)
    add("footer", fontSize=FOOTER_SIZE, leading=FOOTER_SIZE * 1.3, textColor=MUTED)
    # sub- and superscripts need more leading than running text
    add("equation", fontName=FONT, fontSize=BODY_SIZE, leading=BODY_SIZE * 1.6, leftIndent=12, spaceBefore=1,
        spaceAfter=2)
    add("method", leading=BODY_SIZE * 1.55, spaceAfter=4)
    add("note", fontSize=BODY_SIZE, leading=BODY_SIZE * 1.3, textColor=INK, backColor=PANEL, borderPadding=4,
        spaceBefore=4, spaceAfter=6)
    return s


# ---------------------------------------------------------------------------
# Table styles
# ---------------------------------------------------------------------------

def data_table_style(n_rows: int, *, header_rows: int = 1, zebra: bool = True) -> TableStyle:
    """A light data table: header rule, thin bottom rule, optional zebra rows."""
    cmds = [
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("LEFTPADDING", (0, 0), (-1, -1), 3),
        ("RIGHTPADDING", (0, 0), (-1, -1), 3),
        ("TOPPADDING", (0, 0), (-1, -1), 1.6),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 1.8),
        ("LINEBELOW", (0, header_rows - 1), (-1, header_rows - 1), 0.6, INK),
        ("LINEBELOW", (0, -1), (-1, -1), 0.4, RULE),
    ]
    if zebra:
        for r in range(header_rows + 1, n_rows, 2):
            cmds.append(("BACKGROUND", (0, r), (-1, r), PANEL))
    return TableStyle(cmds)


def box_style(background, edge, *, width: float = 0.9) -> TableStyle:
    """A one-cell (or one-column) coloured box with a border, for warnings and the headline."""
    return TableStyle([
        ("BACKGROUND", (0, 0), (-1, -1), background),
        ("BOX", (0, 0), (-1, -1), width, edge),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("LEFTPADDING", (0, 0), (-1, -1), 6),
        ("RIGHTPADDING", (0, 0), (-1, -1), 6),
        ("TOPPADDING", (0, 0), (-1, -1), 3),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 3),
    ])


def layout_style() -> TableStyle:
    """An invisible table used only to place flowables side by side."""
    return TableStyle([
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("LEFTPADDING", (0, 0), (-1, -1), 0),
        ("RIGHTPADDING", (0, 0), (-1, -1), 0),
        ("TOPPADDING", (0, 0), (-1, -1), 0),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 0),
    ])


def decision_style(n_rows: int) -> TableStyle:
    """The five decisions: number column, question, answer; thin rules between rows."""
    cmds = [
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("LEFTPADDING", (0, 0), (-1, -1), 3),
        ("RIGHTPADDING", (0, 0), (-1, -1), 3),
        ("TOPPADDING", (0, 0), (-1, -1), 2.5),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 3),
        ("LINEABOVE", (0, 0), (-1, 0), 0.8, INK),
        ("LINEBELOW", (0, -1), (-1, -1), 0.8, INK),
        ("FONTNAME", (0, 0), (0, -1), FONT_BOLD),
        ("FONTSIZE", (0, 0), (0, -1), 13),
        ("TEXTCOLOR", (0, 0), (0, -1), BLUE),
    ]
    for r in range(0, n_rows - 1):
        cmds.append(("LINEBELOW", (0, r), (-1, r), 0.3, RULE))
    return TableStyle(cmds)


# ---------------------------------------------------------------------------
# Text that must fit
# ---------------------------------------------------------------------------

ELLIPSIS = "\u2026"


def ellipsize(text: str, max_width: float, font: str = FONT, size: float = SMALL_SIZE) -> str:
    """``text`` cut at the end with an ellipsis so that it is at most ``max_width`` points wide.

    Long model names must not break a figure's layout; the full names stay in
    the tables, where they wrap.
    """
    text = str(text)
    if stringWidth(text, font, size) <= max_width:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # longest prefix that fits with the ellipsis
        mid = (lo + hi + 1) // 2
        if stringWidth(text[:mid] + ELLIPSIS, font, size) <= max_width:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo].rstrip() + ELLIPSIS if lo > 0 else ELLIPSIS


def text_width(text: str, font: str = FONT, size: float = SMALL_SIZE) -> float:
    """Width of ``text`` in points."""
    return stringWidth(str(text), font, size)
