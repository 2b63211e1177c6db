"""The DDR sheet's "Two agents" page: one pair read through every layer (seed 003 (DDR paper 2026) sec. 6).

Lays out a :class:`~ddr_explorer.core.pair_comparison.PairDecision` (``ddr report --compare A,B``, or the
app's export with a pair chosen): the buyer's sentence, the difference from the posterior beside the paired
test, the difficulty strata, cost, and the tasks a new evaluation needs to put the right one ahead.  Nothing
here computes: every number comes from :mod:`..pair_comparison` and :mod:`..pair_sizing`, as ``ddr compare``
prints them.
"""

from __future__ import annotations

import math
from html import escape

from reportlab.platypus import Paragraph, Spacer, Table

from . import styles as st
from .sheet_text import paragraph as _p

__all__ = ["pair_section", "pair_line"]


def _pts(x: float) -> str:
    return f"{x * 100:+.1f}"


def _n(x) -> str:
    return "never" if x is None or not math.isfinite(x) else f"{x:,.0f}"


def pair_line(decision) -> str:
    """Page 1's one line on the pair (under the decisions)."""
    c = decision.comparison
    s = decision.sizing
    n90 = s.tasks_for.get(0.9)
    if n90 is None or not math.isfinite(n90):
        more = (f"no number of tasks with {s.n_scaffolds:g} scaffold(s) per model puts the better one ahead "
                "with probability 0.9")
    else:
        more = f"a new evaluation needs {_n(n90)} tasks to put the better one ahead with probability 0.9"
    return f"<b>{escape(c.a)} or {escape(c.b)}?</b> {escape(c.sentence)} {more[0].upper()}{more[1:]} (page 2)."


def _table(rows, widths):
    t = Table(rows, colWidths=widths, repeatRows=1, hAlign="LEFT")
    t.setStyle(st.data_table_style(len(rows)))
    return t


def _difference_table(c) -> Table:
    f = c.paired
    rows = [[_p("", "cell_head"), _p("difference", "cell_head_right"), _p("95% interval", "cell_head_right"),
             _p("P(A ahead)", "cell_head_right"), _p("how", "cell_head")],
            [_p("latent ability (logit)", "cell"), _p(f"{c.latent_difference.median:+.3f}", "cell_right"),
             _p(f"{c.latent_difference.hdi95[0]:+.3f} to {c.latent_difference.hdi95[1]:+.3f}", "cell_right"),
             _p(f"{c.p_a_better:.2f}", "cell_right"), _p("posterior, per draw", "cell_muted")],
            [_p("success rate (points)", "cell"), _p(_pts(c.rate_difference.median), "cell_right"),
             _p(f"{_pts(c.rate_difference.hdi95[0])} to {_pts(c.rate_difference.hdi95[1])}", "cell_right"),
             _p(f"{c.p_a_better:.2f}", "cell_right"), _p("posterior: expected rates over tasks", "cell_muted")],
            [_p(f"paired test, {f.n_tasks} shared tasks", "cell"), _p(_pts(f.difference), "cell_right"),
             _p(f"{_pts(f.lower95)} to {_pts(f.upper95)}", "cell_right"), _p(f"{f.p_ahead:.2f}", "cell_right"),
             _p(f"task-clustered SE, p = {f.p_value:.3g}"
                + (f"; McNemar p = {f.mcnemar_p:.3g}" if f.mcnemar_p is not None else ""), "cell_muted")]]
    for label, v in c.by_stratum.items():
        rows.append([_p(f"{escape(label)}, {v['tasks']} tasks", "cell"), _p(_pts(v["difference"]), "cell_right"),
                     _p(f"{_pts(v['lower95'])} to {_pts(v['upper95'])}", "cell_right"),
                     _p(f"{v['p_a_ahead']:.2f}", "cell_right"), _p("observed cells, Bayesian bootstrap", "cell_muted")])
    for bench, v in c.by_benchmark.items():
        s = v["latent_difference"]
        rows.append([_p(f"benchmark {escape(bench)} (logit)", "cell"), _p(f"{s.median:+.3f}", "cell_right"),
                     _p(f"{s.hdi95[0]:+.3f} to {s.hdi95[1]:+.3f}", "cell_right"),
                     _p(f"{v['p_a_better']:.2f}", "cell_right"), _p("posterior, per draw", "cell_muted")])
    return _table(rows, [150, 60, 95, 55, st.FRAME_WIDTH - 360])


def _sizing_table(s) -> Table:
    rows = [[_p("scaffolds per model", "cell_head")]
            + [_p(f"tasks for P \u2265 {q}", "cell_head_right") for q in s.tasks_for]]
    by = s.by_scaffolds or {s.n_scaffolds: s.tasks_for}
    for k, v in by.items():
        mark = " (as observed)" if k == s.n_scaffolds else ""
        rows.append([_p(f"{k:g}{mark}", "cell")] + [_p(_n(n), "cell_right") for n in v.values()])
    return _table(rows, [150] + [90] * len(s.tasks_for))


def pair_section(decision, ss) -> list:
    """The page's story (nothing without a pair)."""
    if decision is None:
        return []
    c, s = decision.comparison, decision.sizing
    story = [Paragraph(f"Two agents: {escape(c.a)} or {escape(c.b)}?", ss["h1"]),
             _p(escape(c.sentence), "body_after"),
             _difference_table(c), Spacer(1, 3),
             _p("A is the first named. Posterior rows: per draw of the fit, A's and B's effects (and, for success "
                "rates, their expected rates over the population of tasks and scaffolds). The paired test and the "
                "strata use the observed cells of the tasks both ran (Miller 2024's clustered standard errors; "
                "the fit keeps no task-level effects, so the strata are not model-based)."
                + (f" {escape(c.disagreement)}." if c.disagreement else ""), "caption")]
    if c.cost:
        story.append(_p("Cost: " + "; ".join(f"{escape(k)} ${v['usd_per_trial']:.3f} per trial, "
                                              f"{v['successes_per_usd']:.2f} successes per dollar"
                                              for k, v in c.cost.items()) + ".", "body_after"))
    story += [Paragraph("How many tasks would settle it?", ss["h2"]),
              _p(f"The probability that a new evaluation of n fresh tasks ({s.n_scaffolds:g} scaffold(s) per model, "
                 f"{s.n_replicates:g} trial(s) per cell) puts the truly better one ahead, from the posterior "
                 f"predictive: {s.p_now:.2f} at this corpus's {s.observed_tasks:g} tasks, {s.p_limit:.2f} with "
                 "unlimited tasks (what is left is the luck of which scaffolds are drawn: more scaffolds reduce it).",
                 "body_after"),
              _sizing_table(s), Spacer(1, 3),
              _p("Smallest success-rate difference this design detects at 80% power (alpha 0.05): "
                 + (f"{s.mde_paired * 100:.1f} points by the paired test, " if s.mde_paired is not None else "")
                 + f"{s.mde_model * 100:.1f} points by the fit's predictive."
                 + (f" At the corpus's prices a task of this evaluation costs ${s.cost_per_task:,.2f}."
                    if s.cost_per_task else ""), "caption")]
    return story
