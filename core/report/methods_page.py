"""The DDR sheet's method notes (page 7): the model, the estimands and their equations, the decision studies
and cost, ranks, difficulty and hold-out, the refits' convergence and Monte Carlo precision, the estimator
comparison and the sources.  Equations cite Hardy et al. 2026 (seed 000) and the DDR paper (seed 003)."""

from __future__ import annotations

from reportlab.platypus import KeepTogether, Paragraph, Table

from ..references import cite
from . import styles as st
from .content import E_RHO2, PHI, SheetContent, escape, refit_convergence_notes
from .priors import priors_are_default, priors_text
from .sheet_text import paragraph as _p

__all__ = ["methods_page"]


def _priors_note(info) -> str:
    """The method notes' sentence on priors: those the fit used (``fit_info["priors"]``), never assumed."""
    pri = info.get("priors")
    if not pri:
        return "Priors: not recorded with these components (they were supplied, not fitted here)."
    origin = (f"brms defaults, {cite('hardy2026', 'App. C.1.3')}" if priors_are_default(pri) else
              f"edited from the brms defaults of {cite('hardy2026', 'App. C.1.3')}")
    return f"Priors of this fit ({origin}): {priors_text(pri, markup=True)}."


def _refit_precision(ct: SheetContent) -> list:
    """The method notes' paragraph on the refits' rule and Monte Carlo SE (:mod:`.refit_precision`), if any ran."""
    from .refit_precision import refit_precision_text

    text = refit_precision_text(ct.inputs.analysis("difficulty"), ct.inputs.analysis("held_out"))
    return [] if text is None else [_p(text, "method")]


def _estimators_section(ct: SheetContent) -> list:
    """The estimator comparison (the ``methods`` analysis) and the score reliability, when they were run."""
    from .estimators import methods_rows, score_sentence

    ss = st.stylesheet()
    out = []
    table = ct.inputs.analysis("methods")
    if table is not None:
        mr = methods_rows(table)
        n = len(mr.header) - 1
        rows = [[_p(h, "cell_head" if k == 0 else "cell_head_right") for k, h in enumerate(mr.header)]]
        rows += [[_p(escape(r[0]), "cell"), *(_p(c, "cell_right") for c in r[1:])] for r in mr.rows]
        first = 100
        t = Table(rows, colWidths=[first] + [(st.FRAME_WIDTH - first) / n] * n, repeatRows=1, hAlign="LEFT")
        t.setStyle(st.data_table_style(len(rows)))
        out += [KeepTogether([Paragraph(f"Estimators compared ({cite('hardy2026', 'Tables 20–21')})", ss["h2"]), t]),
                _p(mr.caption, "method")]
    score = ct.inputs.analysis("score_reliability")
    if score is not None:
        out += [Paragraph(f"Scores on the observed scale ({cite('hardy2026', 'App. G.5')})", ss["h2"]),
                _p(score_sentence(score), "method")]
    return out


def methods_page(ct: SheetContent) -> list:
    """The method-notes page's flowables."""
    ss = st.stylesheet()
    inp = ct.inputs
    info = inp.fit_info
    e = lambda t: _p(t, "equation")  # noqa: E731 - a local shorthand keeps the equations readable
    b = lambda t: _p(t, "method")  # noqa: E731
    story = [Paragraph("7 \u00b7 Method notes", ss["h1"]),
             Paragraph("Model", ss["h2"]),
             b("Each trial succeeds with probability p, logit p = \u03b7 = \u03bc + \u03a3<sub>F</sub> u<sub>F</sub>, "
               "with an independent random intercept u<sub>F</sub> ~ N(0, \u03c3\u00b2<sub>F</sub>) for "
               f"every term F of the formula ({cite('hardy2026', 'Eqs. 2 and 6')}; {cite('ddr2026', 'Eq. 1')}). The latent residual is the "
               "logistic variance e = \u03c0\u00b2/3 \u2248 3.29; the highest-order cell interaction is "
               f"folded into it. {_priors_note(info)} This sheet's formula: "
               f"<font face='{st.FONT_MONO}' size='7'>{escape(info.get('formula', 'n/a'))}</font>."),
             *(b(escape(n)) for n in info.get("term_notes", ())),  # preset terms the design cannot separate
             Paragraph("Reliability", ss["h2"]),
             b("Every estimand is computed per posterior draw and then summarised by its median and 68%/95% "
               "highest-density intervals, never as a ratio of posterior means. For an object o (model, or "
               "model-scaffold system) and design D:"),
             e(f"{E_RHO2}<sub>o</sub> = \u03c3\u00b2<sub>o</sub> / (\u03c3\u00b2<sub>o</sub> + "
               "\u03c3\u00b2<sub>\u03b4</sub>(D)),  SNR = \u03c3\u00b2<sub>o</sub> / "
               f"\u03c3\u00b2<sub>\u03b4</sub> = {E_RHO2} / (1 \u2212 {E_RHO2})   ({cite('hardy2026', 'Eq. 1')})"),
             e("\u03c3\u00b2<sub>\u03b4</sub>(D) = \u03a3 over terms that contain the object and other "
               "facets of \u03c3\u00b2<sub>F</sub> / \u03a0 n<sub>f</sub> (f in F outside the object), "
               "plus e / \u03a0 n<sub>f</sub> over every non-object facet and replicates"),
             e("per benchmark: E\u03c1\u00b2<sub>M</sub> = \u03c3\u00b2<sub>M</sub> / "
               "(\u03c3\u00b2<sub>M</sub> + \u03c3\u00b2<sub>IM</sub>/n<sub>i</sub> + "
               "\u03c3\u00b2<sub>MA</sub>/n<sub>a</sub> + e/(n<sub>i</sub> n<sub>a</sub>))   "
               f"({cite('hardy2026', 'Eq. 3')})"),
             e("pooled: \u03c3\u00b2<sub>\u03b4</sub> = \u03c3\u00b2<sub>BM</sub>/n<sub>b</sub> "
               "+ \u03c3\u00b2<sub>MA</sub>/n<sub>a</sub> + \u03c3\u00b2<sub>BMA</sub>/"
               "(n<sub>b</sub>n<sub>a</sub>) + \u03c3\u00b2<sub>IM[B]</sub>/(n<sub>b</sub>n<sub>i</sub>)"
               f" + e/(n<sub>b</sub>n<sub>i</sub>n<sub>a</sub>)   ({cite('hardy2026', 'Eq. 7')})"),
             b(f"{PHI} (dependability, for threshold decisions) adds the main effects of the non-object facets and "
               f"their interactions to the error, so {PHI} \u2264 {E_RHO2}. The task-only ceiling is the limit as "
               f"tasks \u2192 \u221e ({cite('hardy2026', 'Eq. 8')}). Variance shares: \u03c0<sub>k</sub> = "
               "\u03c3\u00b2<sub>k</sub> / (\u03a3<sub>j</sub> \u03c3\u00b2<sub>j</sub> + e). "
               f"Capability-gap ratio ({cite('ddr2026', 'sec. 3')}): \u03c3\u00b2<sub>agent</sub> / "
               "(\u03c3\u00b2<sub>agent</sub> + \u03c3\u00b2<sub>agent\u00d7task</sub>), with "
               "the object's universe-score variance as \u03c3\u00b2<sub>agent</sub> and its task "
               "interactions (nested in benchmark where pooled) as \u03c3\u00b2<sub>agent\u00d7task</sub>. "
               "Detection-limit band: SNR 2\u20133, i.e. E\u03c1\u00b2 0.667\u20130.750 "
               f"({cite('hardy2026', 'Fig. 3')}), descriptive reference lines, not calibrated thresholds."),
             b(f"Model-versus-scaffold contrasts \u0394\u03c1\u00b2 ({cite('hardy2026', 'Eqs. 11–15')}): "
               "(V<sub>M</sub> \u2212 V<sub>A</sub>) / D, where D is the total system variance of the design (the "
               "denominator of the system reliability) and V<sub>M</sub>, V<sub>A</sub> sum the model-only and "
               "scaffold-only terms at the level named, so the contrast lies in [\u22121, 1]; the paper's row "
               f"formula can be unbounded. Inter-scaffold reliability \u03c1<sub>AA'</sub>: {cite('hardy2026', 'Eq. 5')}."),
             Paragraph("Decision studies and cost", ss["h2"]),
             b("Budget frontier: per draw, the smallest whole n whose coefficient reaches the target, from "
               "U/(U + A + B/n) \u2265 T, i.e. n \u2265 B/(U(1 \u2212 T)/T \u2212 A) (\u201cnever\u201d when the "
               "limit stays below T); reported as its posterior median and 95% interval, and as P(target met) for "
               "a given design. A design runs n<sub>models</sub> \u00d7 n<sub>scaffolds</sub> \u00d7 "
               "\u03a3<sub>b</sub> n<sub>i,b</sub> \u00d7 replicates trials; its cost is the sum of their per-trial "
               "prices. The cost frontier is the best median coefficient reachable at each cost over a grid of "
               "designs; the cheapest design meeting the target needs P(coefficient \u2265 target) \u2265 0.5."),
             b(f"Reliability per dollar ({cite('ddr2026')}): RPD = {E_RHO2} / mean cost per trial (one trial "
               f"is one observation), for a design, printed with both its parts ({E_RHO2} \u00f7 mean cost per trial). The "
               "paper's per-agent RPD(a, B) is loose: a design's reliability is shared by all agents, so dividing it "
               "by each agent's cost would rank agents by cost alone. Agents are therefore ranked by accuracy per "
               "dollar = mean success / mean cost per trial, against their ranking by accuracy."),
             b(f"Tasks per benchmark within a budget ({cite('hardy2026', 'sec. 5.4')}): with n<sub>b</sub> tasks in benchmark b "
               "the pooled error is Eq. 7's with the task terms replaced by (1/K²) Σ<sub>b</sub> "
               "v<sub>b</sub> / n<sub>b</sub>, v<sub>b</sub> the error one task of b adds; the counts maximise the "
               "median coefficient within the budget (continuous optimum n<sub>b</sub> ∝ "
               "√(v<sub>b</sub> / price<sub>b</sub>), then an integer search). A pooled fit has one task "
               "variance for all benchmarks, so there the prices set the split."),
             Paragraph("Ranks, difficulty, hold-out", ss["h2"]),
             b("Latent capability \u03b8<sub>m</sub> = u<sub>m</sub> (per benchmark, or the leaderboard universe "
               "score when pooled). Dominance P(\u03b8<sub>m</sub> &gt; \u03b8<sub>m'</sub> | y) per "
               "pair, global dominance = its mean over m' \u2260 m, rank intervals = 2.5% and 97.5% order "
               f"statistics of each model's rank ({cite('hardy2026', 'Figs. 13–14')}). Difficulty strata: quartiles of the "
               "tasks' mean success across agents (every agent weighted equally), Q1 easiest; one G-study per "
               "stratum; gap = aggregate \u2212 hardest (difference of medians; the fits are separate). Held-out "
               "reliability: 50 random 70/30 splits stratified by (agent, task) cell, projected against held-out "
               f"coefficient, Pearson r across splits and the mean gap ({cite('ddr2026', 'sec. 5.4')}). PSIS-LOO Pareto-k "
               f"classes \u2264 0.7, 0.7\u20131, &gt; 1 ({cite('hardy2026', 'App. D.3')}), each cell's tail sized by its "
               f"relative efficiency ESS/S estimated from the chains ({cite('vehtari2017')})."),
             *(b(t) for t in refit_convergence_notes(ct)),
             *_refit_precision(ct),
             *_estimators_section(ct),
             Paragraph("Sources", ss["h2"]),
             _p(f"{cite('hardy2026')}: Bayesian G-theory for sparse leaderboards (estimands, D-studies, detection "
                f"limits, dominance). {cite('krsteski2026')}: record schema, scoring rules. {cite('ddr2026')}: "
                "four-facet G-study, capability-gap ratio, cost-aware, difficulty-conditional and held-out "
                f"reliability, the DDR sheet. {cite('brennan2001')}: generalizability theory.", "small")]
    return story
