"""The DDR sheet as a PDF: page 1 stands alone, the following pages are appendices.

:func:`build_sheet` computes the content (:func:`.content.sheet_content`),
lays it out with reportlab's platypus (styles from :mod:`.styles`, figures
from :mod:`.figures`) and writes the file atomically.  Nothing here computes
a statistic.

Pages
-----
1. The claim and the object of measurement, warnings about weak evidence,
   the headline coefficient with its interval and its plain meaning, the
   variance-component table with the capability-gap ratio, the D-study budget
   frontier, and the five decisions (seed 003 sec. 6).  Page 1 is shrunk to
   fit one page whatever it holds, so it always stands alone.
2. The design study in detail (curves over every facet, every estimand,
   smallest designs).
3. Cost: the cost frontier and the accuracy-versus-accuracy-per-dollar
   ranking, or an honest note that there is no cost data.
4. Difficulty-conditional profile, held-out against projected reliability,
   PSIS-LOO.
5. Ranks: the rank-dominance heatmap and rank intervals.
6. Diagnostics and data coverage.
7. Method notes.

Every page carries a footer with the corpus hash, formula, sampler settings,
convergence summary, software versions and (unless ``date_invariant``) the
build date.  With ``date_invariant=True`` reportlab's creation date and
document ID are fixed too (``invariant=1``), so two builds of the same inputs
are byte-identical.
"""

from __future__ import annotations

import datetime as _dt
import math
from functools import partial
from pathlib import Path

import numpy as np
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus.flowables import Flowable, _listWrapOn
from reportlab.platypus import (CondPageBreak, KeepInFrame, KeepTogether, Paragraph, Spacer, Table)

from ..analyses.gap_verdict import verdict_sentence
from ..dstudy.trial_counts import design_trials_text
from ..files import write_bytes_atomic
from ..formatting import convergence_verdict, facet_words, fmt_rpd, object_noun, run_length_text
from ..references import cite
from . import figures as fig
from . import styles as st
from .citations import references_block
from .content import (E_RHO2, GEQ, SIGMA2, TIMES, SheetContent, escape, fmt_coef, fmt_interval, fmt_n,
                      fmt_pct, fmt_prob, fmt_r, fmt_sig3, fmt_usd, fmt_var, held_out_estimator_note, held_out_reading,
                      sheet_content, term_label)
from .heldout_text import split_se_text
from .inputs import ReportInputs
from .priors import priors_text
from .methods_page import methods_page as _methods_page
from .sections import SheetLayout, SheetWritten, build_sections, left_out_note, sheet_doc, warn_if_incomplete
from .estimand_table import by_object_table, estimands_table as _estimands_table, with_scores as _with_scores
from .sheet_text import cell_name as _name, count_words as _count, paragraph as _p, symbol as _sym

__all__ = ["SheetWritten", "build_sheet", "footer_lines", "lay_out_sheet", "render_sheet", "write_sheet"]

# ---------------------------------------------------------------------------
# Footer
# ---------------------------------------------------------------------------

def footer_lines(inputs: ReportInputs, *, date: str | None) -> list[str]:
    """The footer's lines (markup): corpus and formula; fit and convergence; software and date."""
    info = inputs.fit_info
    s = inputs.corpus_summary
    l1 = (f"<b>DDR Explorer</b> \u00b7 corpus <b>{escape(inputs.corpus_name)}</b> \u00b7 sha256 "
          f"{escape(inputs.corpus_hash[:12])} \u00b7 {fmt_n(s.get('n_records'))} records, {fmt_n(s.get('n_trials'))} "
          f"trials \u00b7 formula <font face='{st.FONT_MONO}'>{escape(info.get('formula', 'n/a'))}</font>")
    settings = info.get("settings") or {}
    if settings:
        keys = [("chains", "chains"), ("draws", "draws/chain"), ("warmup", "warmup"), ("seed", "seed"),
                ("target_accept", "target accept"), ("max_tree_depth", "max depth")]
        run_length = run_length_text(settings)  # a gate-stopped run: its rule and ceilings, not a draws count
        sset = ", ".join(f"{label} {settings[k]}" for k, label in keys if k in settings
                         and not (run_length and k == "draws")) + (f", {run_length}" if run_length else "")
        if settings.get("adaptive_warmup") and "warmup" in settings:  # slow windows end once the metric settled
            sset = sset.replace(f"warmup {settings['warmup']}", f"warmup at most {settings['warmup']} (adaptive)", 1)
    else:
        sset = "settings not recorded"
    extra = []
    if info.get("device"):
        extra.append(f"device {escape(info['device'])}")
    if info.get("wall_seconds") is not None:
        extra.append(f"{float(info['wall_seconds']):,.0f} s")
    if info.get("n_draws"):
        extra.append(f"{fmt_n(info['n_draws'])} draws")
    # The same verdict line as `ddr fit` prints (core.formatting), in bold when the fit did not converge.
    ctext = escape(convergence_verdict(info)).replace("NOT converged", "<b>NOT converged</b>")
    if info.get("approximate"):
        ctext += "; <b>approximate method</b>"
    if info.get("priors"):  # the fit's own priors (see _priors_note)
        extra.append(f"priors {priors_text(info['priors'], markup=True)}")
    l2 = (f"Fit: {escape(info.get('method', 'n/a'))}; {escape(sset)}" + (f"; {'; '.join(extra)}" if extra else "")
          + f" \u00b7 Convergence: {ctext}")
    sw = ", ".join(f"{escape(k)} {escape(v)}" for k, v in inputs.versions.items())
    l3 = f"Software: {sw}" + (f" \u00b7 built {date}" if date else "")
    return [l1, l2, l3]


class _ShrinkToFit(Flowable):
    """Keep a block together; shrink it (down to ``min_scale``) rather than start a new page for it.

    A large coverage grid under a long fit table would otherwise push the rest of
    a section onto a page of its own; shrunk by up to about a third it stays readable.
    When even that does not fit, the block moves whole to the next page, and there
    it is shrunk as far as it must be to fit the page.
    """

    def __init__(self, flowables, min_scale: float = 0.62):
        super().__init__()
        self._content = list(flowables)
        self.min_scale = min_scale
        # Not ``_frame``: reportlab sets ``flowable._frame`` to the page's Frame before it asks a
        # flowable to split, and a split that returned that Frame ended the build in an
        # AttributeError (getSpaceBefore) whenever the block had to move to the next page.
        self._shrunk = None

    def wrap(self, aw, ah):
        _, natural = _listWrapOn(self._content, aw, self.canv)
        # ``_postponed`` is reportlab's mark of a flowable it already moved to a new frame: on a
        # fresh page there is no better place, so shrink as much as it takes.
        if natural <= ah or ah >= self.min_scale * natural or getattr(self, "_postponed", False):
            self._shrunk = KeepInFrame(aw, ah, self._content, mode="shrink")
            self._shrunk.canv = self.canv
            return self._shrunk.wrap(aw, ah)
        self._shrunk = None
        return aw, natural

    def split(self, aw, ah):
        if self._shrunk is not None:
            return [self._shrunk]
        return []  # too little room even shrunk: the frame moves the whole block to the next page

    def draw(self):
        self._shrunk.drawOn(self.canv, 0, 0)


class _SheetCanvas(Canvas):
    """A canvas that draws the footer with "page n of N" once the page count is known."""

    def __init__(self, *args, footer: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self._footer = footer
        self._pages: list[dict] = []

    def showPage(self):
        self._pages.append(dict(self.__dict__))
        self._startPage()

    def save(self):
        total = len(self._pages)
        for state in self._pages:
            self.__dict__.update(state)
            self._draw_footer(total)
            super().showPage()
        super().save()

    def _draw_footer(self, total: int):
        ss = st.stylesheet()
        w = st.FRAME_WIDTH - 48
        y = st.MARGIN_BOTTOM - 8
        self.saveState()
        self.setStrokeColor(st.RULE)
        self.setLineWidth(0.5)
        self.line(st.MARGIN_LEFT, y, st.MARGIN_LEFT + st.FRAME_WIDTH, y)
        y -= 2
        for line in self._footer:
            para = Paragraph(line, ss["footer"])
            _, h = para.wrapOn(self, w, 100)
            y -= h
            para.drawOn(self, st.MARGIN_LEFT, y)
        self.setFont(st.FONT, 7)
        self.setFillColor(st.MUTED)
        self.drawRightString(st.MARGIN_LEFT + st.FRAME_WIDTH, st.MARGIN_BOTTOM - 17,
                             f"page {self._pageNumber} of {total}")
        self.restoreState()


# ---------------------------------------------------------------------------
# Page 1
# ---------------------------------------------------------------------------

def _notice_box(ct: SheetContent) -> Table:
    ss = st.stylesheet()
    if not ct.notices:
        t = Table([[_p("<b>No weakness of the evidence was flagged:</b> converged fit, connected design, several "
                       "scaffolds and benchmarks, cost data present.", "body")]], colWidths=[st.FRAME_WIDTH])
        t.setStyle(st.box_style(st.OK_BG, st.OK_EDGE))
        return t
    serious = bool(ct.serious)
    n = len(ct.notices)
    head = (f"Read with care: the evidence is weak in {n} way{'s' if n > 1 else ''}" if serious else
            f"Read with care: {n} limit{'s' if n > 1 else ''} of this evidence")
    rows = [[Paragraph(head, ss["warn_title"])]]
    for note in ct.notices:
        colour = st.SERIOUS_EDGE if note.severity == "serious" else st.CAUTION_EDGE
        rows.append([Paragraph(f"<font color='{colour.hexval()}'><b>{escape(note.title)}</b></font> {note.text}",
                               ss["warn"], bulletText="\u2022")])
    t = Table(rows, colWidths=[st.FRAME_WIDTH])
    t.setStyle(st.box_style(st.SERIOUS_BG if serious else st.CAUTION_BG,
                            st.SERIOUS_EDGE if serious else st.CAUTION_EDGE))
    t.setStyle([("TOPPADDING", (0, 1), (-1, -1), 0.6), ("BOTTOMPADDING", (0, 1), (-1, -1), 0.6),
                ("BOTTOMPADDING", (0, -1), (-1, -1), 3.5)])
    return t


def _headline_box(ct: SheetContent) -> Table:
    h = ct.headline
    colour = st.VERDICT_COLOURS.get(ct.verdict_key, st.INK)
    if ct.serious and colour == st.GREEN:  # never green over doubtful numbers
        colour = st.ORANGE
    left = [_p(f"{_sym(ct)} = {fmt_coef(h['median'])}", "headline_number"),
            _p(f"95% interval {fmt_interval(h['lower95'], h['upper95'])}", "headline_interval"),
            _p("observed design, posterior median", "headline_interval"),
            _p("observed success rates" if ct.scale == "observed" else "latent logit scale", "headline_interval")]
    right = [_p(f"<font color='{colour.hexval()}'>{escape(ct.verdict_text)}</font>", "verdict"),
             Spacer(1, 2), _p(ct.meaning_text, "headline_text")]
    t = Table([[left, right]], colWidths=[150, st.FRAME_WIDTH - 150])
    t.setStyle(st.box_style(st.HEADLINE_BG, st.BLUE, width=0.6))
    t.setStyle([("LINEAFTER", (0, 0), (0, 0), 0.4, st.RULE), ("TOPPADDING", (0, 0), (-1, -1), 5),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 5)])
    return t


def _components_table(ct: SheetContent, width: float) -> Table:
    rows = [[_p("Component", "cell_head"), _p(f"{SIGMA2} median", "cell_head_right"),
             _p("95% interval", "cell_head_right"), _p("share", "cell_head_right")]]
    for r in ct.components:
        label = f"<b>{escape(r.label)}</b><br/><font size='6' color='{st.MUTED.hexval()}'>{r.meaning}</font>"
        rows.append([_p(label, "cell"), _p(fmt_var(r.variance.median), "cell_right"),
                     _p(fmt_interval(*r.variance.hdi95, fmt=fmt_var), "cell_right"),
                     _p(fmt_pct(r.share.median), "cell_right")])
    w = [width - 150, 42, 68, 40]
    t = Table(rows, colWidths=w, repeatRows=1, hAlign="LEFT")
    t.setStyle(st.data_table_style(len(rows)))
    return t


def _decisions_table(ct: SheetContent) -> Table:
    ss = st.stylesheet()
    rows = []
    status_words = {"answered": "answered", "partial": "partly answered: analysis not run",
                    "not run": "analysis not run"}
    for dcs in ct.decisions:
        q = [Paragraph(escape(dcs.question), ss["decision_q"]),
             Paragraph(status_words.get(dcs.status, dcs.status), ss["decision_status"])]
        rows.append([str(dcs.number), q, Paragraph(dcs.answer, ss["decision_a"])])
    t = Table(rows, colWidths=[16, 112, st.FRAME_WIDTH - 128])
    t.setStyle(st.decision_style(len(rows)))
    return t


def _examined_words(ct: SheetContent) -> str:
    """The what-if design's sizes and its coefficient, e.g. '42 tasks x 6 scaffolds ...: Erho2 0.81 [...]'."""
    ex = ct.examined
    h = ex["headline"]
    return (f"{ex['text']}: {_sym(ct)} {fmt_coef(h['median'])} {fmt_interval(h['lower95'], h['upper95'])}, "
            f"P({_sym(ct)} {GEQ} {fmt_coef(ct.inputs.target)}) = {fmt_prob(ex['p_target'])}")


def _page_one(ct: SheetContent) -> list:
    inp = ct.inputs
    ss = st.stylesheet()
    d = ct.design
    title = inp.title or inp.corpus_name
    obj = d.object_facets
    if obj == {"model"}:
        obj_text = "models (each averaged over the scaffolds it runs with)"
    elif obj == {"model", "scaffold"}:
        obj_text = "model-scaffold systems (each pairing as a unit)"
    else:
        obj_text = escape(ct.object_label)
    meta = (f"<b>Object of measurement:</b> {obj_text}. <b>Claim:</b> {ct.claim_label}, target {_sym(ct)} "
            f"{GEQ} {fmt_coef(inp.target)}. <b>Observed design:</b> {ct.design_text}.")
    if ct.examined is not None:  # a what-if is stated as one, beside the observed design, never in its place
        meta += f" <b>Design examined (what-if):</b> {_examined_words(ct)}."
    prov = (inp.corpus_summary or {}).get("provenance") or {}
    if prov.get("slice"):  # every number of this sheet is of the slice, so say it at the top
        kept = prov.get("slice_tasks")
        meta += (f" <b>Slice:</b> {escape(str(prov['slice']))}"
                 + (f" ({fmt_n(kept[0])} of {fmt_n(kept[1])} tasks)." if kept else "."))
    story = [
        _p(f"Deployment Decision Reliability \u2014 {escape(title)}", "title"),
        _p(escape(ct.question), "question"),
        _p(meta, "meta"),
        Spacer(1, 5),
        _notice_box(ct),
        Spacer(1, 6),
        _headline_box(ct),
        Spacer(1, 3),
        _p(ct.method_text, "small"),
        Spacer(1, 5),
    ]
    left_w = 268
    right_w = st.FRAME_WIDTH - left_w - 10
    curve = ct.view.curves["n_tasks"]
    req = ct.summary["min_n"].get("n_tasks", {}).get("median")
    price = d.mean_price()
    per_task = (d.trial_count() / d.effective_n_tasks) * price if price > 0 else None
    drawing = fig.dstudy_figure(curve, right_w, 206, required=req, cost_per_unit=per_task,
                                xlabel=_words(ct).axis(curve.over))
    left = [Paragraph("Where the variance is (logit scale)", ss["h3"]), _components_table(ct, left_w),
            Spacer(1, 3), _p(ct.gap_text, "small")]
    right = [Paragraph(f"Budget frontier: {_sym(ct)} against tasks"
                       + (" (success rates)" if ct.scale == "observed" else " (latent scale)"), ss["h3"]), drawing,
             _p("Bands: 68% and 95% posterior intervals. Shaded: detection limit (SNR 2\u20133). "
                + (f"Top axis: cost of the observed design at that many tasks "
                   f"({_words(ct).count('n_replicates', d.n_replicates)}). " if per_task else "")
                + ("Dotted: tasks needed for the target (median)" + (" at the observed design; decision 1 gives them at "
                   "the design examined." if ct.examined else ".") if req is not None and math.isfinite(req) else
                   "The target is out of reach by tasks alone."), "caption")]
    mid = Table([[left, "", right]], colWidths=[left_w, 10, right_w])
    mid.setStyle(st.layout_style())
    story += [mid, Spacer(1, 6), Paragraph("Five decisions for a buyer", ss["h2"]), _decisions_table(ct)]
    if inp.pair is not None:  # the buyer's own pair, in one line; its page follows
        from .pair_page import pair_line

        story += [Spacer(1, 3), _p(pair_line(inp.pair), "small")]
    return story


# ---------------------------------------------------------------------------
# Following pages
# ---------------------------------------------------------------------------

def _dstudy_pages(ct: SheetContent) -> list:
    ss = st.stylesheet()
    inp = ct.inputs
    d = ct.design
    story = [Paragraph("2 \u00b7 The design study in detail", ss["h1"]),
             _p(f"Each curve varies one facet of the design and holds the others at the observed design "
                f"({ct.design_text}). The coefficient is computed per posterior draw and summarised by its median "
                f"and 68%/95% highest-density intervals; the detection band marks SNR 2\u20133 ({E_RHO2} "
                f"0.667\u20130.750), a descriptive reference, not a calibrated threshold ({cite('hardy2026', 'Fig. 3')})."
                + (" The curves and the smallest designs are for observed success rates (the correlation of two "
                   "fresh evaluations' scores); the estimand table is the latent ability ranking of the papers, "
                   "with the success-rate coefficients in its first rows." if ct.scale == "observed" else
                   " Every figure here is on the latent logit scale (latent ability ranking)."),
                "body_after")]
    half = (st.FRAME_WIDTH - 12) / 2
    drawings, flat = [], []
    for over, word in (("n_tasks", "tasks"), ("n_scaffolds", "scaffolds"), ("n_benchmarks", "benchmarks")):
        curve = ct.view.curves.get(over)
        if curve is None or curve.over in d.object_facets:
            continue
        if not curve.applies:  # the fit has no term for this facet: a flat line says nothing
            flat.append(word)
            continue
        if over in (ct.summary.get("not_answered") or {}):  # the design cannot back this curve (see the notice)
            continue
        m = ct.summary["min_n"].get(over)
        req = m["median"] if m else None
        drawings.append(fig.dstudy_figure(curve, half, 178, required=req, legend=True,
                                          title=f"{_sym(ct)} against {word}", xlabel=_words(ct).axis(curve.over)))
    if ct.breadth is not None:
        drawings.append(fig.breadth_figure(ct.breadth, half, 178, observed_benchmarks=d.effective_n_benchmarks,
                                           target=inp.target, title=f"{_sym(ct)} (latent) at a fixed budget of "
                                           f"{fmt_n(ct.breadth.total_tasks)} tasks"))
    while len(drawings) % 2:
        drawings.append("")
    grid = Table([[drawings[i], "", drawings[i + 1]] for i in range(0, len(drawings), 2)],
                 colWidths=[half, 12, half])
    grid.setStyle(st.layout_style())
    story += [grid]
    if flat:
        story.append(_p(f"No curve over {' or '.join(flat)}: the fit has no variance term for "
                        f"{'that facet' if len(flat) == 1 else 'those facets'}, so changing "
                        f"{'its' if len(flat) == 1 else 'their'} number cannot change the coefficient here "
                        "(the corpus cannot say how much it would matter).", "caption"))
    if ct.breadth is not None:
        story.append(_p(f"Bottom right: a fixed budget of {fmt_n(ct.breadth.total_tasks)} tasks spread over more "
                        f"benchmarks ({cite('hardy2026', 'Corollary 3.2')}): breadth raises reliability whenever benchmark-by-model "
                        "variance is present.", "caption"))
    story += [Paragraph("Every estimand of the observed design", ss["h2"]),
              _estimands_table(_with_scores(ct.summary), "Estimand (observed design)",
                               ct.summary.get("not_estimable"))]
    if any(name.startswith("delta_rho2") for name in ct.summary["estimands"]):
        story.append(_p("\u0394\u03c1\u00b2: the model's share minus the scaffold's share of one system variance "
                        f"({cite('hardy2026', 'Eqs. 11–15')}), in [\u22121, 1]. Below 0 the scaffold matters more "
                        "than the model; an interval that reaches below 0 means the data do not say which matters "
                        "more. P(&gt; 0) is the posterior probability that the model does.", "caption"))
    objects = by_object_table(ct.summary.get("by_object"))
    if objects is not None:  # Table 17's columns of Hardy et al. 2026: one fit read for each object
        story += [Spacer(1, 4), objects,
                  _p(f"The same fit read for each object at the observed design ({cite('hardy2026', 'Table 17')}; "
                     "the paper's tables are at one scaffold per model and one model per scaffold). Posterior means "
                     "as the paper reports them, medians as this sheet does.", "caption")]
    if ct.examined is not None:
        story += [KeepTogether([
            Paragraph("Every estimand of the design examined (what-if)", ss["h2"]),
            _p(f"{_examined_words(ct)}. A what-if design set in the app: the corpus did not run it; the "
               "headline and the decisions are the observed design's.", "caption"),
            _estimands_table(ct.examined["estimands"], "Estimand (design examined)",
                             ct.summary.get("not_estimable"))])]
    # smallest designs
    latent = (ct.summary.get("latent") or {}).get("min_n", {})
    rows = [[_p("Facet varied (others at the observed design)", "cell_head"), _p("observed", "cell_head_right"),
             _p("median needed", "cell_head_right"), _p("95% interval", "cell_head_right"),
             _p("P(reachable)", "cell_head_right"), _p("latent scale" if latent else "", "cell_head_right")]]
    words = _words(ct)  # the app's words (core.formatting.facet_words)
    for over, m in ct.summary["min_n"].items():
        lat = latent.get(over, {}).get("median") if latent else None
        rows.append([_p(words.axis(over), "cell"), _p(fmt_n(m["observed"]), "cell_right"),
                     _p(fmt_n(m["median"]), "cell_right"),
                     _p(f"{fmt_n(m['lower95'])}\u2013{fmt_n(m['upper95'])}", "cell_right"),
                     _p(fmt_prob(m["p_reachable"]), "cell_right"),
                     _p(fmt_n(math.inf if lat is None else lat) if latent else "", "cell_right")])
    refused = ct.summary.get("not_answered") or {}
    for over in refused:
        rows.append([_p(words.axis(over), "cell"), _p("", "cell_right"), _p("not answered", "cell_right"),
                     _p("", "cell_right"), _p("", "cell_right"), _p("", "cell_right")])
    t = Table(rows, colWidths=[200, 60, 75, 90, 70, st.FRAME_WIDTH - 495], repeatRows=1, hAlign="LEFT")
    t.setStyle(st.data_table_style(len(rows)))
    story += [KeepTogether([Paragraph(f"Smallest design reaching {_sym(ct)} {GEQ} {fmt_coef(inp.target)}", ss["h2"]),
                            t, _p(f"Per draw, the smallest whole size whose coefficient reaches the target; "
                                  f"\u201cnever\u201d when even an infinite number stays below it. P(target met) at "
                                  f"the observed design: {fmt_prob(ct.summary['p_target'])}. "
                                  + (f"90% assurance needs {fmt_n(ct.required_90)} tasks." if
                                     math.isfinite(ct.required_90) else
                                     "No number of tasks gives 90% assurance.")
                                  + "".join(f" {escape(words.axis(o)).capitalize()} not answered: {escape(why)}."
                                            for o, why in refused.items()), "caption")])]
    return story


def _agent_table(ct: SheetContent, with_cost: bool, top: int = 15) -> Table:
    acc = ct.inputs.accuracy
    order = ct.agent_order[:top]
    if with_cost:
        head = ["Agent (model / scaffold)", "accuracy", "USD / trial", "accuracy per $", "rank", "rank per $"]
        w = [st.FRAME_WIDTH - 270, 50, 55, 65, 45, 55]
    else:
        head = ["Agent (model / scaffold)", "accuracy", "rank"]
        w = [st.FRAME_WIDTH - 110, 60, 50]
    rows = [[_p(head[0], "cell_head")] + [_p(h, "cell_head_right") for h in head[1:]]]
    for k in order:
        r = [_p(_name(acc.agents[k]), "cell"), _p(fmt_pct(acc.accuracy[k]), "cell_right")]
        if with_cost:
            r += [_p(fmt_usd(acc.cost_per_trial[k]), "cell_right"),
                  _p(fmt_sig3(acc.accuracy_per_dollar[k]), "cell_right"),
                  _p(fmt_n(acc.rank_accuracy[k]), "cell_right"), _p(fmt_n(acc.rank_per_dollar[k]), "cell_right")]
        else:
            r += [_p(fmt_n(acc.rank_accuracy[k]), "cell_right")]
        rows.append(r)
    t = Table(rows, colWidths=w, repeatRows=1, hAlign="LEFT")
    t.setStyle(st.data_table_style(len(rows)))
    return t


def _trials_text(ct: SheetContent) -> str:
    """``64 traces in a full design of these sizes (4 agents × 8 tasks × 2 traces per agent-task pair); the
    corpus ran 61 traces in 30 cells``: the design's count in its words, the file's beside it."""
    return design_trials_text(ct.design.to_dict(), _words(ct), ct.inputs.corpus_summary)


def _cost_page(ct: SheetContent) -> list:
    ss = st.stylesheet()
    inp = ct.inputs
    d = ct.design
    story = [Paragraph("3 \u00b7 What reliability costs", ss["h1"])]
    n_agents = len(inp.accuracy.agents) if inp.accuracy is not None else 0
    if ct.frontier is None:
        story.append(_p("<b>No cost data.</b> The corpus has no cost column and no price per trial was given, so the "
                        "cost frontier, reliability per dollar (RPD) and the accuracy-per-dollar ranking cannot be "
                        "computed. What would be needed: a <i>cost</i> column (USD per row), or token counts with a "
                        "price table per model, or a price per trial for each benchmark. The design's size in "
                        f"trials is known: the observed design ran {_trials_text(ct)}.", "note"))
        if inp.accuracy is not None:
            story += [Paragraph(f"Observed accuracy, top {min(15, n_agents)} of {n_agents} agents", ss["h2"]),
                      _agent_table(ct, False),
                      _p("Raw mean success per agent (successes / trials) from the corpus, not a posterior "
                         "estimate; ranks 1 = best, ties averaged.", "caption")]
        return story
    prices = inp.prices
    ptxt = ", ".join(f"{escape(b)} {fmt_usd(p)}" for b, p in list(prices.items())[:8])
    if len(prices) > 8:
        ptxt += f", \u2026 ({len(prices)} benchmarks)"
    story.append(_p(f"Prices per trial ({escape(inp.price_source)}): {ptxt}. A design's cost is "
                    f"models {TIMES} scaffolds {TIMES} tasks {TIMES} benchmarks {TIMES} trials per cell {TIMES} the "
                    "mean price per trial.", "body_after"))
    left_w, right_w = 300, st.FRAME_WIDTH - 312
    ob = ct.view.readouts.coefficient
    fr = fig.cost_frontier_figure(ct.frontier, left_w, 210, observed_cost=d.cost(), observed=ob, budget=inp.budget)
    right = ([fig.rank_shift_figure(inp.accuracy, right_w, 210)] if ct.agent_cost_ranking else
             [_p("<b>No per-agent costs.</b> The prices are per benchmark, the same for every agent, so ranking "
                 "agents by accuracy per dollar would repeat their ranking by accuracy. A cost-aware ranking needs "
                 "each agent's own cost (a cost column, or token counts with a price table per model).", "small")])
    t = Table([[fr, "", right]], colWidths=[left_w, 12, right_w])
    t.setStyle(st.layout_style())
    story += [t, _p(f"Left: reliability of every design of the grid against its total cost, at "
                    f"{ct.answers.cost_basis(_words(ct))}; the line is the best median reachable at each cost."
                    + (" Right: each agent's rank by accuracy against its rank by accuracy per dollar." if ct.agent_cost_ranking
                       else ""), "caption")]
    b = ct.cost_bands
    f = ct.frontier
    rows = [[_p("Cost band", "cell_head"), _p("from", "cell_head_right"), _p("design", "cell_head"),
             _p(f"median {_sym(ct)}", "cell_head_right")]]
    if b.get("detect") is not None:
        k = b["detect"]
        rows.append([_p("leaves the detection band (SNR &gt; 2)", "cell"), _p(fmt_usd(f.cost[k]), "cell_right"),
                     _p(_design_text(f, k, _words(ct)), "cell"), _p(fmt_coef(f.median[k]), "cell_right")])
    if b.get("target") is not None:
        k = b["target"]
        rows.append([_p(f"meets the target (P(target met) {GEQ} {f.prob:.2f})", "cell"), _p(fmt_usd(f.cost[k]), "cell_right"),
                     _p(_design_text(f, k, _words(ct)), "cell"), _p(fmt_coef(f.median[k]), "cell_right")])
    rows.append([_p("observed design", "cell"), _p(fmt_usd(d.cost()), "cell_right"),
                 _p(f"{_count(d.effective_n_tasks, 'task')} {TIMES} {_count(d.n_scaffolds, 'scaffold')} {TIMES} "
                    f"{_count(d.effective_n_benchmarks, 'benchmark')}, {_words(ct).count('n_replicates', d.n_replicates)} "
                    f"({fmt_n(d.trial_count())} trials in a full design of these sizes)", "cell"),
                 _p(fmt_coef(ob.median), "cell_right")])
    if inp.budget is not None and b.get("budget") is not None:
        k = b["budget"]
        rows.append([_p(f"best within budget {fmt_usd(inp.budget)}", "cell"), _p(fmt_usd(f.cost[k]), "cell_right"),
                     _p(_design_text(f, k, _words(ct)), "cell"), _p(fmt_coef(f.median[k]), "cell_right")])
    t = Table(rows, colWidths=[170, 60, st.FRAME_WIDTH - 290, 60])
    t.setStyle(st.data_table_style(len(rows)))
    story += [Paragraph(f"Cost bands (frontier at {ct.answers.cost_basis(_words(ct))})", ss["h2"]), t]
    story += _allocation_table(ct)
    r = ct.view.readouts
    if r.rpd is not None:  # the screen's and ddr dstudy's words (formatting.fmt_rpd)
        words = fmt_rpd(r.rpd.median, r.coefficient.median, ct.design.mean_price(), r.estimand)
        story.append(_p(f"{words[:1].upper()}{words[1:]} for the observed design ({cite('ddr2026')}: RPD = "
                        f"{_sym(ct)} / mean cost per trial; 95% interval "
                        f"{fmt_sig3(r.rpd.hdi95[0])}\u2013{fmt_sig3(r.rpd.hdi95[1])}).", "caption"))
    acc = inp.accuracy
    if acc is None:
        return story
    if not ct.agent_cost_ranking:
        story += [CondPageBreak(150),
                  Paragraph(f"Observed accuracy, top {min(15, n_agents)} of {n_agents} agents", ss["h2"]),
                  _agent_table(ct, False),
                  _p("Raw mean success per agent (successes / trials) from the corpus, not a posterior estimate; "
                     "ranks 1 = best, ties averaged.", "caption")]
        return story
    story += [CondPageBreak(150),
              Paragraph(f"Accuracy and accuracy per dollar, top {min(15, n_agents)} of {n_agents} agents by accuracy",
                        ss["h2"]),
              _agent_table(ct, True),
              _p(f"Accuracy per dollar = mean success / mean cost per trial (the per-agent reading of the RPD of {cite('ddr2026')} "
                 f"ranks; see method notes). Spearman correlation of the two rankings {fmt_r(acc.spearman)}, "
                 f"Kendall {fmt_r(acc.kendall)}."
                 + (f" Agents without cost: {len(acc.missing_cost)}." if acc.missing_cost else ""), "caption")]
    return story


def _words(ct: SheetContent):
    """The words of the design's sizes and object, the app's and ``ddr``'s (:func:`~..formatting.facet_words`)."""
    return ct.words or facet_words(ct.design.object_of_measurement, ct.inputs.components.facets)


def _allocation_table(ct: SheetContent) -> list:
    """The budget's tasks per benchmark (:attr:`SheetContent.allocation`), or the sentence saying why not."""
    a = ct.allocation
    if a is None:
        return [_p(ct.allocation_text, "caption")] if ct.allocation_text else []
    ss = st.stylesheet()
    rows = [[_p("benchmark", "cell_head"), _p("USD per trial", "cell_head_right"),
             _p("task variance", "cell_head_right"), _p("tasks", "cell_head_right"),
             _p("equal split", "cell_head_right")]]
    for b in a["benchmarks"]:
        rows.append([_p(escape(b), "cell"), _p(fmt_usd(a["prices"][b]), "cell_right"),
                     _p(fmt_var(a["task_variance"][b]), "cell_right"), _p(fmt_n(a["tasks"][b]), "cell_right"),
                     _p(fmt_n(a["equal"].get(b, 0)), "cell_right")])
    t = Table(rows, colWidths=[st.FRAME_WIDTH - 280, 70, 70, 70, 70])
    t.setStyle(st.data_table_style(len(rows)))
    return [CondPageBreak(60 + 14 * len(rows)), Paragraph(f"{_words(ct).allocation} within {fmt_usd(a['budget'])}", ss["h2"]),
            t, _p(ct.allocation_text, "caption")]


def _design_text(f, k: int, words) -> str:
    """A design of the cost frontier: the sizes the fit varies, in its words (``formatting.fmt_design``'s)."""
    sizes = {"n_tasks": f.n_tasks[k], "n_scaffolds": f.n_scaffolds[k], "n_benchmarks": f.n_benchmarks[k]}
    return (f" {TIMES} ".join(_count(sizes[s], words.noun(s, 1)) for s in words.sizes)
            + f" ({fmt_n(f.trials[k])} {words.noun('n_replicates', f.trials[k])})")


def _difficulty_page(ct: SheetContent) -> list:
    ss = st.stylesheet()
    inp = ct.inputs
    prof = inp.analysis("difficulty")
    diff = inp.difficulty
    held = inp.analysis("held_out")
    loo = inp.analysis("loo")
    story = [Paragraph("4 \u00b7 Hard tasks and replications", ss["h1"]),
             Paragraph("Difficulty-conditional reliability", ss["h2"])]
    half = (st.FRAME_WIDTH - 12) / 2
    if diff is not None or prof is not None:
        drawing = fig.difficulty_figure(diff, prof, half, 180, target=inp.target, estimand=ct.estimand)
        scores = prof.scores if prof is not None and prof.scores is not None else None
        rows = [[_p("Stratum", "cell_head"), _p("tasks", "cell_head_right"), _p("mean success", "cell_head_right"),
                 _p(f"{_sym(ct)}" + (" latent" if scores else ""), "cell_head_right"),
                 _p("95% interval", "cell_head_right"), *([_p("success rates", "cell_head_right")] if scores else [])]]
        labels = prof.labels if prof is not None else diff.labels
        for i, lab in enumerate(labels):
            n_t = fmt_n(diff.stratum_n[i]) if diff is not None and i < diff.n_strata else ""
            ms = (prof.mean_success[i] if prof is not None and prof.mean_success is not None else
                  (diff.stratum_mean[i] if diff is not None and i < diff.n_strata else None))
            s = prof.erho2[i] if prof is not None else None
            rows.append([_p(escape(lab), "cell"), _p(n_t, "cell_right"),
                         _p(fmt_pct(ms, 0) if ms is not None else "", "cell_right"),
                         _p(fmt_coef(s.median) if s else "not run", "cell_right"),
                         _p(fmt_interval(*s.hdi95) if s else "", "cell_right"),
                         *([_p(fmt_coef(scores[i].median) if scores[i] else "", "cell_right")] if scores else [])])
        agg = prof.aggregate if prof is not None else None
        rows.append([_p("all tasks", "cell"), _p(fmt_n(len(diff.tasks)) if diff is not None else "", "cell_right"),
                     _p(fmt_pct(ct.mean_success_all, 0) if ct.mean_success_all is not None else "", "cell_right"),
                     _p(fmt_coef((agg or ct.view.readouts.coefficient).median), "cell_right"),
                     _p(fmt_interval(*(agg or ct.view.readouts.coefficient).hdi95), "cell_right"),
                     *([_p(fmt_coef(prof.scores_aggregate.median) if prof.scores_aggregate else "", "cell_right")]
                       if scores else [])])
        t = Table(rows, colWidths=[62, 28, 45, 40, half - 175 - 12 - (44 if scores else 0), *([44] if scores else [])])
        t.setStyle(st.data_table_style(len(rows)))
        if prof is not None:
            v = prof.verdict
            txt = (f"One G-study per stratum of tasks (quartiles of mean success across agents; {cite('ddr2026', 'sec. 5.3')}), "
                   f"each stratum's {_sym(ct)} at its own number of tasks, all tasks at the corpus's. "
                   + (verdict_sentence(v, "the all-tasks figure", "the hardest stratum") + " " if v is not None else "")
                   + "A buyer whose production tasks are hard should read the hardest stratum's number.")
        else:
            txt = (f"<b>Not run.</b> The per-stratum G-studies (one fit per quartile) were not supplied, so "
                   f"{_sym(ct)} by difficulty is unknown; the figure shows how the tasks split into quartiles of mean "
                   f"success across agents, the strata those fits would use. {cite('ddr2026')} found aggregate 0.752 "
                   f"collapsing to 0.000 in the hardest quartile on \u03c4\u00b2 action_checks.")
            if diff is not None and (diff.n_never_solved or diff.n_always_solved):
                txt += (f" {_count(diff.n_never_solved, 'task')} never solved and {fmt_n(diff.n_always_solved)} "
                        "always solved carry no ranking information.")
        right = [t, Spacer(1, 4), _p(txt, "small")]
        lay = Table([[drawing, "", right]], colWidths=[half, 12, half])
        lay.setStyle(st.layout_style())
        story.append(lay)
    story.append(Paragraph("Held-out against projected reliability", ss["h2"]))
    if held is not None:
        drawing = fig.held_out_figure(held, half, 180, estimand=ct.estimand)
        r, gap = held.pearson_r, held.mean_gap
        gap_txt = f"{gap:+.3f}".replace("-", "\u2212")  # as the figure's legend: +0.001, not 0.00
        txt = (f"{held.n_splits} random {round(100 * held.train_fraction)}/{round(100 * (1 - held.train_fraction))} "
               f"splits stratified by {escape(held.stratified_by)}. For each split the G-study "
               f"({escape(held.estimator_label)}) was fitted on the "
               f"training cells, {_sym(ct)} projected for the observed design, and compared with {_sym(ct)} on the "
               f"held-out cells ({cite('ddr2026', 'sec. 5.4')}). Pearson r = <b>{fmt_r(r)}</b> (Spearman {fmt_r(held.spearman)}); "
               f"mean held-out \u2212 projected = <b>{gap_txt}</b>{split_se_text(held)}. "
               + held_out_reading(held) + " " + held_out_estimator_note(held))
        lay = Table([[drawing, "", _p(txt, "body")]], colWidths=[half, 12, half])
        lay.setStyle(st.layout_style())
        story.append(lay)
    else:
        story.append(_p("<b>Not run.</b> Held-out reliability needs 50 random 70/30 splits (100 refits) of the cells "
                        "stratified by (agent, task) cell; for each, fit on the training cells, project "
                        f"{_sym(ct)} for the observed design, and compute {_sym(ct)} on the held-out cells; report "
                        f"the Pearson r across splits and the mean gap. {cite('ddr2026')} found r = \u22120.90 and a 0.30 "
                        "shortfall on \u03c4\u00b2 action_checks with three agents: training-cell projections can be "
                        "optimistic when agents are few.", "note"))
    story.append(Paragraph(f"PSIS-LOO ({cite('hardy2026', 'App. D.3')}; {cite('vehtari2017')})", ss["h2"]))
    if loo is not None:
        rows = [[_p("Pareto k", "cell_head"), _p("observations", "cell_head_right"), _p("share", "cell_head_right")]]
        for lab, n in (("good (k \u2264 0.7)", loo.good), ("bad (0.7 < k \u2264 1)", loo.bad),
                       ("very bad (k > 1)", loo.very_bad)):
            share = n / loo.total if loo.total else float("nan")
            rows.append([_p(escape(lab), "cell"), _p(fmt_n(n), "cell_right"),
                         _p("&lt; 0.1%" if 0 < share < 0.001 else "&gt; 99.9%" if 0.999 < share < 1 else fmt_pct(share),
                            "cell_right")])
        t = Table(rows, colWidths=[120, 70, 60], hAlign="LEFT")
        t.setStyle(st.data_table_style(len(rows)))
        story.append(t)
        if loo.elpd is not None:
            elpd = f"{loo.elpd:,.1f}".replace("-", "\u2212")  # a typographic minus, as everywhere else
            se = f" \u00b1 {loo.elpd_se:,.1f}" if loo.elpd_se is not None else ""
            story.append(_p(f"elpd<sub>loo</sub> = {elpd}{se}", "caption"))
    else:
        story.append(_p("<b>Not run.</b> PSIS-LOO needs the pointwise log-likelihood of the fit; it would count the "
                        "observations whose Pareto k exceeds 0.7 (importance sampling unreliable there).", "note"))
    story += _failure_and_frontier_sections(ct, half)
    return story


def _failure_and_frontier_sections(ct: SheetContent, half: float) -> list:
    """Failure modes (decision 5) and the frontier over time (decision 2), when they were run."""
    ss = st.stylesheet()
    out = []
    tax, front = ct.inputs.analysis("failure_taxonomy"), ct.inputs.analysis("frontier")
    if tax is not None:
        cap = ("Each point an error category: where agents differ (agent × task variance, its own G-study) "
               f"against where failures appear (share of traces). {cite('ddr2026', 'sec. 5.7')}. Decision 5 reads this.")
        out += [Paragraph("Failure modes: variance is not frequency", ss["h2"]),
                Table([[[fig.failure_modes_figure(tax, half, 170), _p(cap, "caption")], "",
                        [_p(ct.decisions[4].answer, "small")]]], colWidths=[half, 12, half])]
    if front is not None:
        last = [(g, row[np.isfinite(row)][-1]) for g, row in zip(front.groups, front.group_frontier)
                if np.isfinite(row).any()]
        txt = ("Best success fraction per task among agents whose models were released by each quarter, mean over "
               f"tasks, then over benchmarks ({cite('krsteski2026', 'sec. 5.1')}). Last quarter: "
               + "; ".join(f"{escape(g)} {fmt_coef(v)}" for g, v in last) + ". A group near 1 is saturated: its "
               "tasks no longer separate the best agents, so target harder tasks (decision 2).")
        if front.left_out_models:
            txt += f" <b>{fmt_n(len(front.left_out_models))} models without a release date are left out.</b>"
        out += [Paragraph("Frontier over time", ss["h2"]),
                Table([[[fig.frontier_time_figure(front, half, 170)], "", [_p(txt, "small")]]],
                      colWidths=[half, 12, half])]
    return out


def _ranks_page(ct: SheetContent) -> list:
    ss = st.stylesheet()
    inp = ct.inputs
    story = [Paragraph("5 \u00b7 Ranks and dominance", ss["h1"])]
    if ct.ranks is None:
        story.append(_p("<b>Not computed.</b> Posterior ranks need draws of each model's latent capability "
                        "(\u03b8<sub>m</sub> = u<sub>m</sub>, kept when the fit stores its random effects). These "
                        "inputs carry variance components only, so the rank-dominance heatmap and rank intervals are "
                        "missing. The headline reliability on page 1 still says how far any ranking can be "
                        "trusted.", "note"))
        return story
    ra = ct.ranks
    m = len(ra.models)
    shown = min(m, 60)
    noun = object_noun(ct.design.object_of_measurement)  # what is ranked: models, systems or agents (ddr preset)
    story.append(_p(f"Rows and columns ordered by global dominance (the mean over other {noun}s of P(\u03b8<sub>m</sub> "
                    f"&gt; \u03b8<sub>m'</sub>)); {fmt_n(ra.ranks.probabilities.shape[0])} {noun}s, "
                    f"{fmt_n(inp.theta.shape[0])} posterior draws ({cite('hardy2026', 'Figs. 13–14')})."
                    + (f" The {shown} most dominant of {m} {noun}s are shown." if shown < m else ""), "body_after"))
    if ra.parts is not None:
        story.append(_p(f"<b>Ranked within {len(ra.parts)} parts of a disconnected design.</b> Models are numbered "
                        "and ordered part by part; a dominance between two parts is not identified and is left "
                        "blank. " + " ".join(escape(r) for r in ra.part_reasons), "note"))
    story.append(fig.rank_dominance_figure(ra, st.FRAME_WIDTH, noun=noun))
    top = ra.order[0]
    lo, hi = ra.ranks.interval95[top]
    txt = (f"The most dominant {noun}{' of part 1' if ra.parts is not None else ''}, {escape(_name(ra.models[top], 50))}, has a 95% rank interval "
           f"{fmt_n(lo)}\u2013{fmt_n(hi)}. ")
    txt += (f"Median width of the 95% rank intervals: {fmt_n(ct.rank_width_median)} places; "
            f"{_count(ct.n_certain_ranks, noun)} with a certain rank.")
    if ra.parts is None:  # which pairs can be told apart, and the tiers (core.rank_tiers; ddr compare --all)
        from ..rank_tiers import tiers_from_dominance

        tiers = tiers_from_dominance(ra.dominance, ra.models, ra.order)
        txt += (f" {escape(tiers.sentence())}. Tiers (each {noun} not told apart from its tier's first): "
                + "; ".join(f"{k}. {escape(', '.join(_name(n, 30) for n in t))}" for k, t in
                            enumerate(tiers.tiers[:8], start=1)) + ("; ..." if len(tiers.tiers) > 8 else "") + ".")
    if ct.agreement is not None:
        a = ct.agreement
        txt += (f" Agreement of the latent ranking with the observed mean success per {noun} ({cite('hardy2026', 'Table 10')}): "
                f"Kendall \u03c4 = {fmt_r(a.kendall_tau)}, Spearman \u03c1 = {fmt_r(a.spearman_rho)} "
                f"(per draw: \u03c4 median {fmt_r(a.kendall_draws.median)}, 95% "
                f"{fmt_r(a.kendall_draws.hdi95[0])}\u2013{fmt_r(a.kendall_draws.hdi95[1])}).")
    for k, a in ct.part_agreements:
        txt += (f" Part {k + 1}: agreement with the observed mean success per {noun}, Kendall \u03c4 = "
                f"{fmt_r(a.kendall_tau)}, Spearman \u03c1 = {fmt_r(a.spearman_rho)} ({_count(a.n_models, noun)}).")
    story.append(_p(txt, "caption"))
    return story


def _capability_page(ct: SheetContent) -> list:
    """The capability scale and transfer (:mod:`.capability_page`); nothing when neither ran."""
    from .capability_page import capability_section

    inp = ct.inputs
    return capability_section(inp.analysis("capability"), inp.analysis("transfer"), _p, st.stylesheet(),
                              st.FRAME_WIDTH)


def _pair_page(ct: SheetContent) -> list:
    """Two agents (:mod:`.pair_page`); nothing when no pair was asked for."""
    from .pair_page import pair_section

    return pair_section(ct.inputs.pair, st.stylesheet())


def _diagnostics_page(ct: SheetContent) -> list:
    ss = st.stylesheet()
    inp = ct.inputs
    info = inp.fit_info
    s = inp.corpus_summary
    story = [Paragraph("6 \u00b7 Diagnostics and data coverage", ss["h1"])]
    conv = info.get("converged")
    settings = info.get("settings") or {}
    fit_rows = [("method", escape(info.get("method", "n/a"))),
                ("formula", f"<font face='{st.FONT_MONO}' size='6.5'>{escape(info.get('formula', 'n/a'))}</font>"),
                ("settings", escape(", ".join(f"{k}={v}" for k, v in settings.items())) if settings else
                 "not recorded"),
                ("converged", {True: "yes", False: "<b>NO</b>", None: "not checked here"}[conv]),
                ("max split R-hat", f"{float(info['max_rhat']):.3f} (needs \u2264 1.01; {cite('vehtari2021')})"
                 if info.get("max_rhat") is not None else "n/a"),
                ("min bulk ESS", f"{fmt_n(round(float(info['min_ess_bulk'])))} (needs \u2265 400)"
                 if info.get("min_ess_bulk") is not None else "n/a"),
                ("divergent transitions", fmt_n(info["divergences"]) if info.get("divergences") is not None else "n/a"),
                ("draws", fmt_n(info.get("n_draws", inp.components.n_draws))),
                ("device, wall time", ", ".join(x for x in (escape(info.get("device", "")),
                                                           f"{float(info['wall_seconds']):,.1f} s"
                                                           if info.get("wall_seconds") is not None else "") if x)
                 or "n/a"),
                ("approximate method", "yes" if info.get("approximate") else "no")]
    problems = list(info.get("problems") or [])
    if problems:  # every problem is counted; the first six are spelled out in one row to keep the page whole
        fit_rows.append((f"problems ({len(problems)})", escape("; ".join(problems[:6]))
                         + (f"; and {len(problems) - 6} more" if len(problems) > 6 else "")))
    rows = [[_p("Fit", "cell_head"), _p("", "cell_head")]] + [[_p(k, "cell"), _p(v, "cell")] for k, v in fit_rows]
    t1 = Table(rows, colWidths=[80, st.FRAME_WIDTH / 2 - 86])
    t1.setStyle(st.data_table_style(len(rows)))
    counts = [("records", s.get("n_records")), ("trials", s.get("n_trials")), ("successes", s.get("n_successes")),
              ("benchmarks", s.get("n_benchmarks")), ("tasks", s.get("n_tasks")), ("models", s.get("n_models")),
              ("scaffolds", s.get("n_scaffolds")), ("agents (model-scaffold pairs)", s.get("n_agents")),
              ("binomial cells", s.get("n_cells"))]
    rows = [[_p("Corpus", "cell_head"), _p("", "cell_head")]] + [[_p(k, "cell"), _p(fmt_n(v), "cell_right")]
                                                              for k, v in counts]
    t2 = Table(rows, colWidths=[140, st.FRAME_WIDTH / 2 - 146])
    t2.setStyle(st.data_table_style(len(rows)))
    lay = Table([[t1, "", t2]], colWidths=[st.FRAME_WIDTH / 2 - 6, 12, st.FRAME_WIDTH / 2 - 6])
    lay.setStyle(st.layout_style())
    story.append(lay)
    # connectivity and separability
    story.append(Paragraph(f"Connectivity and separability ({cite('hardy2026', 'App. E')})", ss["h2"]))
    n_comp = len(s.get("components") or [])
    av = s.get("articulation_vertices") or []
    state = "connected" if s.get("connected") else f"{n_comp} components"
    txt = (f"Incidence graph of benchmarks, models and scaffolds: <b>{state}</b>"
           + ("" if s.get("connected") else " \u2014 contrasts across components are not identified")
           + ". Articulation vertices (whose removal disconnects the design): "
           + (escape(", ".join(av[:8])) + (" \u2026" if len(av) > 8 else "") if av else "none") + ".")
    story.append(_p(txt, "body_after"))
    sep = (s.get("diagnostics") or {}).get("separability") or {}
    conds = sep.get("conditions") or {}
    rows = [[_p("Condition (Prop. E.3)", "cell_head"), _p("holds", "cell_head")]]
    for key in ("i", "ii", "iii", "iv"):
        cnd = conds.get(key)
        if not cnd:
            continue
        holds = {True: "yes", False: "<b>NO</b>", None: "n/a"}[cnd.get("holds")]
        rows.append([_p(f"({key}) {escape(cnd.get('statement', ''))}", "cell"), _p(holds, "cell")])
    if len(rows) > 1:
        t = Table(rows, colWidths=[st.FRAME_WIDTH - 60, 60])
        t.setStyle(st.data_table_style(len(rows)))
        story.append(t)
    sepc = s.get("separable_components") or []
    nots = s.get("not_separable") or []
    story.append(_p(f"Separable components: {escape(', '.join(term_label(x) for x in sepc)) or 'none'}."
                    + (f" <b>Not separable:</b> {escape(', '.join(term_label(x) for x in nots))}." if nots else ""),
                    "caption"))
    warns = s.get("warnings") or []
    if warns:
        story.append(Paragraph(f"Corpus warnings ({len(warns)})", ss["h2"]))
        for w in warns[:8]:
            story.append(_p(escape(w.get("message", "")), "small"))
        if len(warns) > 8:
            story.append(_p(f"\u2026 and {len(warns) - 8} more (see ddr inspect --json).", "small"))
    cov = (s.get("diagnostics") or {}).get("coverage")
    if cov and cov.get("models") and cov.get("scaffolds"):
        nm, ns = len(cov["models"]), len(cov["scaffolds"])
        cut = []
        if nm > 60:
            cut.append(f"first 60 of {nm} models")
        if ns > 45:
            cut.append(f"first 45 of {ns} scaffolds")
        story.append(_ShrinkToFit([
            Spacer(1, 6),
            Paragraph(f"Model {TIMES} scaffold coverage ({fmt_n(cov.get('observed_agents'))} of {fmt_n(nm * ns)} "
                      f"pairs run, {fmt_pct(cov.get('fill', 0), 0)} of the grid)", ss["h2"]),
            fig.coverage_figure(cov, st.FRAME_WIDTH),
            _p("Shade: trials of each model-scaffold pair, pooled over benchmarks (log scale); blank: never run. "
               "Separating model, scaffold and model-by-scaffold variance needs models run under several scaffolds "
               "and scaffolds shared by several models." + (f" Shown: {', '.join(cut)}." if cut else ""),
               "caption")]))
    return story


# ---------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------

#: The sheet's sections in page order, with the name a note or message gives one left out (:mod:`.sections`).
_SECTIONS = (("page 1", _page_one), ("two agents", _pair_page), ("the design study", _dstudy_pages), ("what reliability costs", _cost_page),
             ("hard tasks and replications", _difficulty_page), ("ranks and dominance", _ranks_page),
             ("capability scale and transfer", _capability_page),
             ("diagnostics and data coverage", _diagnostics_page), ("method notes", _methods_page))


def lay_out_sheet(content: SheetContent, *, date_invariant: bool = False, date: str | None = None) -> SheetLayout:
    """The PDF of a computed sheet, and the sections that had to be left out of it.

    Parameters
    ----------
    content
        From :func:`.content.sheet_content`.
    date_invariant
        Omit the build date and fix reportlab's creation date and document ID.
    date
        The date printed in the footer (default: today, ISO format); ignored
        when ``date_invariant``.

    Returns
    -------
    SheetLayout
        ``data`` (the PDF bytes) and ``left_out``: each section whose builder
        failed, returned something that is not a flowable, or could not be laid
        out, is left out with a line saying why (:func:`.sections.build_sections`).
    """
    inp = content.inputs
    if date_invariant:
        date = None
    elif date is None:
        date = _dt.date.today().isoformat()
    title = f"Deployment Decision Reliability \u2014 {inp.title or inp.corpus_name}"
    new_doc = partial(sheet_doc, title=title, subject=content.question, invariant=date_invariant)

    def page_one():
        # Page 1 must stand alone: whatever it holds is shrunk to one page rather than spilling over.
        return [KeepInFrame(st.FRAME_WIDTH, st.FRAME_HEIGHT - 1, _page_one(content), mode="shrink")]

    # A section with nothing to say (capability and transfer not run) takes no page.
    sections = [(name, page_one if build is _page_one else partial(build, content)) for name, build in _SECTIONS]
    ss = st.stylesheet()
    return build_sections(sections, new_doc=new_doc, note=left_out_note,
                          canvasmaker=partial(_SheetCanvas, footer=footer_lines(inp, date=date)),
                          # the last page lists exactly the works the sheet cites
                          closing=lambda story: references_block(story, ss["h2"], ss["small"]))


def render_sheet(content: SheetContent, *, date_invariant: bool = False, date: str | None = None) -> bytes:
    """The PDF bytes of a computed sheet: :func:`lay_out_sheet` (same parameters), with a
    :class:`~..errors.DDRWarning` naming any section left out."""
    layout = lay_out_sheet(content, date_invariant=date_invariant, date=date)
    warn_if_incomplete(layout.left_out)
    return layout.data


def write_sheet(inputs: ReportInputs, path, *, date_invariant: bool = False) -> SheetWritten:
    """Build the DDR sheet of ``inputs``, write it to ``path`` atomically, and say which sections were left out.

    ``ddr report`` (through :func:`~...ddr_sheet.write_ddr_sheet`) and the app's File > Export DDR sheet
    call it and print or show :meth:`.sections.SheetWritten.message`.  Parameters as for :func:`build_sheet`.

    Raises
    ------
    FileNotFoundError
        The folder of ``path`` does not exist.
    SheetLayoutError
        Nothing could be laid out (nothing is written).
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"cannot write the DDR sheet to {path}: the folder {path.parent} does not exist; "
                                "create it or choose another path")
    layout = lay_out_sheet(sheet_content(inputs), date_invariant=date_invariant)
    write_bytes_atomic(path, layout.data)
    return SheetWritten(path, layout.left_out)


def build_sheet(inputs: ReportInputs, path, *, date_invariant: bool = False) -> Path:
    """Build the DDR sheet of ``inputs`` and write it to ``path`` atomically.

    Parameters
    ----------
    inputs
        A :class:`~.inputs.ReportInputs` (see :func:`~.inputs.report_inputs_from`).
    path
        Where to write the PDF; its folder must exist.
    date_invariant
        Omit the build date and fix reportlab's creation date and document ID
        (``invariant=1``): two builds of the same inputs are byte-identical.

    Returns
    -------
    pathlib.Path
        The path written.

    Notes
    -----
    The PDF is written to a temporary file in the same folder and moved over
    ``path`` with :func:`os.replace`, so a failed build never leaves a
    half-written sheet (or destroys the previous one).  A section that cannot
    be laid out is left out with a line saying why, and a
    :class:`~..errors.DDRWarning` names it; :func:`write_sheet` returns the
    sections left out instead.
    """
    written = write_sheet(inputs, path, date_invariant=date_invariant)
    warn_if_incomplete(written.left_out)
    return written.path
