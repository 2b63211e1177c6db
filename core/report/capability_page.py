"""The DDR sheet's capability-scale and transfer section (seed 002 (Krsteski et al. 2026) sec. 5.3, seed 003 (DDR paper 2026) sec. 5.5).

Lays out what :mod:`~ddr_explorer.core.analyses.capability` and
:mod:`~ddr_explorer.core.analyses.transfer` computed: core's headline sentences
(:func:`~ddr_explorer.core.analyses.capability.capability_lines`,
:func:`~ddr_explorer.core.analyses.transfer.transfer_lines`, the same the app prints), the abilities
with their 90% intervals and the capability-gap ratio per benchmark with its 95% interval, drawn
with the sheet's plotting kit.  :func:`transfer_sentence` is the addendum of decision 1 (how many
tasks, and from where): whether a ranking made on one benchmark carries over to another.
"""

from __future__ import annotations

from html import escape

from reportlab.graphics.shapes import Drawing, Line, String

from ..formatting import fmt_coef, fmt_estimate, fmt_r
from ..references import cite
from . import styles as st
from .figures import Plot, nice_ticks

__all__ = ["ability_figure", "gap_ratio_figure", "capability_section", "transfer_sentence"]


def ability_figure(abilities: list, width: float = 260, *, max_rows: int = 30, label_width: float = 96) -> Drawing:
    """Median ability with its 90% interval per subject, best at the top (the first ``max_rows``)."""
    rows = abilities[:max_rows]
    n = len(rows)
    row_h = 8.5
    height = 34 + n * row_h
    d = Drawing(width, height)
    lo = min(r["lower90"] for r in rows)
    hi = max(r["upper90"] for r in rows)
    pad = 0.05 * (hi - lo or 1.0)
    p = Plot(d, label_width, 24, width - label_width - 6, n * row_h, (lo - pad, hi + pad), (n + 0.5, 0.5))
    p.axes(xticks=nice_ticks(lo - pad, hi + pad, 5), yticks=[], xlabel="ability (scale of the fit)", ygrid=False)
    for k, r in enumerate(rows, start=1):
        yy = float(p.py(k))
        p.add(String(label_width - 3, yy - 2.2, _short(r["subject"], 24), fontName=st.FONT, fontSize=5.8,
                     fillColor=st.INK, textAnchor="end"))
        a, b = float(p.px(r["lower90"])), float(p.px(r["upper90"]))
        p.add(Line(a, yy, b, yy, strokeColor=st.BLUE, strokeWidth=0.8))
        p.point(r["median"], k, 1.7, st.BLUE, stroke_width=0.3)
    if len(abilities) > n:
        d.add(String(width - 4, height - 8, f"best {n} of {len(abilities)}", fontName=st.FONT, fontSize=5.8,
                     fillColor=st.MUTED, textAnchor="end"))
    return d


def gap_ratio_figure(gaps: list, width: float = 240, height: float = 150) -> Drawing:
    """The capability-gap ratio per benchmark: median and 95% interval (seed 003 sec. 5.5)."""
    d = Drawing(width, height)
    rows = [g for g in gaps if not g.get("error") and g.get("gap_median") is not None]
    n = max(len(rows), 1)
    p = Plot(d, 32, 30, width - 40, height - 30 - 10, (0.5, n + 0.5), (0.0, 1.0))
    p.axes(xticks=[], yticks=[0, 0.25, 0.5, 0.75, 1.0], yfmt=lambda v: f"{v:.2f}",
           ylabel="\u03c3\u00b2a / (\u03c3\u00b2a + \u03c3\u00b2a:t)")
    for k, g in enumerate(rows, start=1):
        color = st.BLUE if g.get("converged") else st.VERMILLION
        p.errorbar(k, g["gap_lower95"], g["gap_upper95"], color)
        p.point(k, g["gap_median"], 2.2, color)
        d.add(String(float(p.px(k)), 30 - 10, _short(g["benchmark"], 14), fontName=st.FONT, fontSize=5.8,
                     fillColor=st.INK, textAnchor="middle"))
    return d


def _short(text, limit: int) -> str:
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + st.ELLIPSIS


def transfer_sentence(transfer) -> str | None:
    """Decision 1's addendum: do rankings transfer between benchmarks (markup), or None when not run."""
    if transfer is None:
        return None
    d = transfer.to_dict()
    done = [p for p in d["pairs"] if not p["skipped"]]
    prov = "" if d["converged"] else " (provisional: some per-benchmark fits did not converge)"
    if not done:
        why = ("the corpus has one benchmark" if not d["pairs"] else
               "no two benchmarks share three model families")
        return f" <b>Transfer:</b> not assessed ({why}); sample tasks from the domain you will deploy in."
    neg = [p for p in done if p["rho_median"] < 0]
    worst = min(done, key=lambda p: p["rho_median"])
    text = (f" <b>Does a ranking transfer?</b> Family rankings agree across {len(done)} benchmark pair(s) with "
            f"Spearman \u03c1 from {fmt_r(worst['rho_median'])} ({escape(str(worst['benchmark_a']))} vs "
            f"{escape(str(worst['benchmark_b']))}, 95% {fmt_r(worst['rho_lower95'])}\u2013"
            f"{fmt_r(worst['rho_upper95'])}){prov}. ")
    if neg or worst["rho_lower95"] < 0:
        text += (f"A ranking from another benchmark need not hold on yours ({cite('ddr2026', 'sec. 5.5')}): sample the tasks "
                 "from your own domain.")
    else:
        text += "Rankings carry over between these benchmarks; a new domain still needs its own sample."
    s = d.get("gap_spread")
    if s:
        text += (f" The capability-gap ratio varies across benchmarks by {fmt_estimate(s['median'], *s['hdi95'], fmt_coef)}"
                 " (population-level diagnostics transfer when this is small).")
    return text


def capability_section(capability, transfer, p, ss, width: float) -> list:
    """Flowables of the section (empty when neither analysis ran).

    ``p(text, style)`` makes a paragraph and ``ss`` is the stylesheet (the sheet's own helpers).
    """
    from reportlab.platypus import Paragraph, Table, TableStyle

    from ..analyses.capability import capability_lines
    from ..analyses.transfer import transfer_lines

    if capability is None and transfer is None:
        return []
    story = [Paragraph("Capability scale and transfer across benchmarks", ss["h1"])]
    figs = []
    if capability is not None:
        d = capability.to_dict()
        story.append(Paragraph(f"Capability scale (IRT; {cite('krsteski2026', 'sec. 5.3')})", ss["h2"]))
        for line in capability_lines(d):
            story.append(p(escape(line.strip()), "body_after"))
        main = next(iter(d["models"]))
        figs.append(ability_figure(d["models"][main]["abilities"], width * 0.5 - 6))
    if transfer is not None:
        t = transfer.to_dict()
        story.append(Paragraph(f"Transfer across benchmarks ({cite('ddr2026', 'sec. 5.5')})", ss["h2"]))
        for line in transfer_lines(t):
            story.append(p(escape(line), "body_after"))
        if any(not g.get("error") for g in t["gap_ratio"]):
            figs.append(gap_ratio_figure(t["gap_ratio"], width * 0.5 - 6))
    if figs:
        lay = Table([figs], colWidths=[width / len(figs)] * len(figs))
        lay.setStyle(TableStyle([("VALIGN", (0, 0), (-1, -1), "TOP"), ("LEFTPADDING", (0, 0), (-1, -1), 0),
                                 ("RIGHTPADDING", (0, 0), (-1, -1), 0)]))
        story.append(lay)
        cap = []
        if capability is not None:
            cap.append("Left: median ability and 90% interval of the main IRT fit, best first.")
        if transfer is not None:
            cap.append("Right: capability-gap ratio per benchmark, median and 95% HDI (vermillion: fit not "
                       "converged).")
        story.append(p(" ".join(cap), "caption"))
    return story
