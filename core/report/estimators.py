"""What the DDR sheet says about the other estimators (seed 000 (Hardy et al. 2026) App. C and G): computed here, laid out by
:mod:`.sheet`.

- :func:`methods_rows`: the method-notes page's table of variance shares from every estimator (the
  ``methods`` analysis, :func:`~ddr_explorer.core.estimators.methods.methods_table`; seed 000 Tables 20-21),
  its cells printed through :mod:`ddr_explorer.core.formatting`.
- :func:`score_notice`: for a claim about *scores* (``claim="absolute"``), page 1's notice that score
  reliability on the observed scale (Bayesian LMM, seed 000 C.2) is lower than ranking reliability
  (seed 000 G.5, Eq. 22), with both coefficients and their 95% HDIs.
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import escape

from ..formatting import E_RHO2, PHI, fmt_coef
from ..references import cite

__all__ = ["MethodsRows", "methods_rows", "score_sentence", "score_notice_text"]


@dataclass
class MethodsRows:
    """The estimator table as printed strings: ``header`` (first cell ``"facet"``), one row per term, then
    Erho2 and Phi of the object; ``caption`` says what the shares are and how long each estimator took."""

    header: list[str]
    rows: list[list[str]]
    caption: str


def methods_rows(table) -> MethodsRows:
    """Printed cells of a :class:`~ddr_explorer.core.estimators.methods.MethodsTable` (or its ``to_dict()``)."""
    data = table.to_dict() if hasattr(table, "to_dict") else dict(table)
    est = list(data["estimators"])
    conv = data.get("convergence") or {}

    def head(e):
        lab = f"{e} ({data['scales'][e]})"
        return lab + (", NOT converged" if (conv.get(e) or {}).get("converged") is False else "")

    def val(x):
        return fmt_coef(float("nan") if x is None else x)

    rows = [[t, *(val(data["shares"][e].get(t)) for e in est)] for t in data["terms"]]
    obj = data.get("object_of_measurement", "model")
    for coef, sym in (("Erho2", E_RHO2), ("Phi", PHI)):
        rows.append([f"{sym} ({obj})", *(val(data["coefficients"][e].get(coef)) for e in est)])
    if "DISCO" in est:  # DISCO's analogue of Erho2 (seed 000 App. C.5) on its own row: not a G coefficient
        rows.append([f"DISCO \u03b7 ({obj})", *(val(data.get("disco_eta") if e == "DISCO" else None) for e in est)])
    secs = data.get("seconds") or {}
    caption = ("Share of each term in the total variance per estimator (observed scale: over \u03c3\u00b2 incl. "
               "\u03c3\u00b2<sub>e</sub>; logit: incl. \u03c0\u00b2/3; Bayesian columns: posterior means of per-draw "
               f"shares, as {cite('hardy2026', 'Table 20')}; Henderson's Method I: {cite('henderson1953')}; REML: lme4's "
               f"criterion, {cite('bates2015')}; DISCO ({cite('rizzo2010')}): normalised over facets, no residual). {E_RHO2} and {PHI} at "
               "the corpus's observed design; DISCO has none: its \u03b7 row is the object grouping's \u03b7. Formula "
               f"{escape(str(data.get('formula', '')))}. Wall time: "
               + ", ".join(f"{e} {secs[e]:.1f} s" for e in est if e in secs) + ".")
    notes = data.get("notes") or []
    if notes:
        caption += " " + " ".join(escape(n) for n in notes)
    return MethodsRows(header=["facet", *(head(e) for e in est)], rows=rows, caption=caption)


def score_sentence(score) -> str:
    """Seed 000 G.5 for one :class:`~ddr_explorer.core.estimators.bayes_lmm.ScoreReliability` (markup)."""
    phi, erho = score.phi, score.erho2
    iv = lambda s: f"[{fmt_coef(s.hdi95[0])}, {fmt_coef(s.hdi95[1])}]"  # noqa: E731
    text = (f"On the observed (0/1) scale, the Bayesian linear mixed model ({cite('hardy2026', 'App. C.2')}) gives score "
            f"reliability {PHI} {fmt_coef(phi.median)} {iv(phi)} against ranking reliability {E_RHO2} "
            f"{fmt_coef(erho.median)} {iv(erho)} (medians, 95% HDIs, per draw at this design). ")
    if phi.median < erho.median:
        text += ("Scores are less reliable than rankings: a stable order of models does not make their scores, or "
                 f"a threshold decision on them, reproducible ({cite('hardy2026', 'App. G.5')}).")
    else:
        text += f"Here scores are as reliable as rankings ({PHI} = {E_RHO2}, {cite('hardy2026', 'Eq. 22')})."
    if not score.converged:
        problems = "; ".join(score.verdict.get("problems") or [])
        text += f" <b>Not converged</b> ({escape(problems)}): provisional."
    return text


def score_notice_text(score) -> str:
    """Page 1's notice for a claim about scores: the sentence, or why there is none."""
    if score is None:
        return (f"Absolute reliability of scores is most interpretable on the observed scale ({cite('hardy2026', 'App. G.5')}), "
                "but the observed-scale Bayesian LMM was not run or failed; the latent-scale "
                f"{PHI} above is the only one on this sheet.")
    return score_sentence(score)
