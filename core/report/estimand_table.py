"""The DDR sheet's table of every estimand of a design (its D-study pages): the observed-score coefficients
first where the fit has them, then the papers' latent estimands, with intervals, P(> 0) and the source."""

from __future__ import annotations

from reportlab.platypus import Table

from . import styles as st
from .content import E_RHO2, NDASH, PHI, escape, fmt_coef, fmt_interval, fmt_prob
from .sheet_text import paragraph as _p

__all__ = ["estimands_table", "with_scores", "by_object_table", "ESTIMAND_NAMES"]

ESTIMAND_NAMES = {
    "scores:Erho2": f"{E_RHO2} of observed success rates",
    "scores:Phi": f"{PHI} of observed success rates",
    "Erho2": f"{E_RHO2}: ranking reliability (latent)",
    "SNR": "SNR: signal-to-noise ratio",
    "Phi": f"{PHI}: absolute (dependability)",
    "Erho2_task_ceiling": f"{E_RHO2} task-only ceiling",
    "Phi_task_ceiling": f"{PHI} task-only ceiling",
    "capability_gap_ratio": "capability-gap ratio",
    "rho_AA": "\u03c1<sub>AA'</sub>: inter-scaffold reliability",
    "delta_rho2_universe": "\u0394\u03c1\u00b2 model \u2212 scaffold (universe)",
    "delta_rho2_benchmark": "\u0394\u03c1\u00b2 model \u2212 scaffold (benchmark)",
    "delta_rho2_task": "\u0394\u03c1\u00b2 model \u2212 scaffold (task)",
}


def with_scores(summary: dict) -> dict:
    """The estimand table's rows: the observed-score coefficients first (where the fit has them), then the
    papers' latent estimands."""
    obs = summary.get("observed_scores")
    if not obs:
        return summary["estimands"]
    rows = {}
    for key, name in (("Erho2", "scores:Erho2"), ("Phi", "scores:Phi")):
        if key in obs:
            rows[name] = {**obs[key], "equation": "success rates; exact logit-normal moments"}
    return {**rows, **summary["estimands"]}


def estimands_table(estimands: dict, head: str, not_estimable: dict | None = None) -> Table:
    """The estimands of one design (median, 95% and 68% intervals, P(> 0), equation), shares left out;
    ``not_estimable`` (name -> why) are said, never printed as a number.  P(> 0) is a contrast's
    (delta_rho2): without one the column would stand empty, so it is left out."""
    shown = {k: e for k, e in estimands.items() if not k.startswith("share:")}
    with_p = any(e.get("prob_positive") is not None for e in shown.values())
    rows = [[_p(head, "cell_head"), _p("median", "cell_head_right"),
             _p("95% interval", "cell_head_right"), _p("68% interval", "cell_head_right"),
             *([_p("P(&gt; 0)", "cell_head_right")] if with_p else []), _p("source", "cell_head")]]
    for name, e in shown.items():
        label = ESTIMAND_NAMES.get(name, escape(name))
        pp = e.get("prob_positive")
        fmt = (lambda x: f"{x:,.2f}") if name == "SNR" else fmt_coef
        rows.append([_p(label, "cell"), _p(fmt(e["median"]), "cell_right"),
                     _p(fmt_interval(e["lower95"], e["upper95"], fmt), "cell_right"),
                     _p(fmt_interval(e["lower68"], e["upper68"], fmt), "cell_right"),
                     *([_p(fmt_prob(pp) if pp is not None else NDASH, "cell_right")] if with_p else []),
                     _p(escape(e.get("equation") or ""), "cell_muted")])
    for name, why in (not_estimable or {}).items():
        rows.append([_p(ESTIMAND_NAMES.get(name, escape(name)), "cell"), _p("not estimable", "cell_right"),
                     _p("", "cell_right"), _p("", "cell_right"), *([_p("", "cell_right")] if with_p else []),
                     _p(escape(why), "cell_muted")])
    widths = [170, 50, 85, 85, *([40] if with_p else [])]
    t = Table(rows, colWidths=[*widths, st.FRAME_WIDTH - sum(widths)], repeatRows=1, hAlign="LEFT")
    t.setStyle(st.data_table_style(len(rows)))
    return t


def by_object_table(objects: dict | None) -> Table | None:
    """Model, scaffold and system read from one fit at the observed design (seed 000 Table 17's columns):
    latent Erho2, its task-only ceiling (Eq. 8) and the task reliability; None with fewer than two objects
    (seed 000 is Hardy et al. 2026)."""
    if not objects or len(objects) < 2:
        return None
    rows = [[_p("Object of measurement (latent)", "cell_head"), _p(f"{E_RHO2} mean", "cell_head_right"),
             _p("median", "cell_head_right"), _p("95% interval", "cell_head_right"),
             _p("task-only ceiling", "cell_head_right"), _p("task reliability", "cell_head_right")]]
    for name, e in objects.items():
        r, c, t = e["Erho2"], e["Erho2_task_ceiling"], e.get("task_reliability")
        rows.append([_p(escape(name), "cell"), _p(fmt_coef(r["mean"]), "cell_right"), _p(fmt_coef(r["median"]), "cell_right"),
                     _p(fmt_interval(r["lower95"], r["upper95"]), "cell_right"), _p(fmt_coef(c["median"]), "cell_right"),
                     _p(fmt_coef(t["median"]) if t else "n/a", "cell_right")])
    widths = [170, 55, 50, 85, 70]
    t = Table(rows, colWidths=[*widths, st.FRAME_WIDTH - sum(widths)], repeatRows=1, hAlign="LEFT")
    t.setStyle(st.data_table_style(len(rows)))
    return t
