"""What the DDR sheet's method notes say about the refit analyses' Monte Carlo precision: which run-length
rule the difficulty and hold-out refits ran under, and the Monte Carlo SE of the numbers the sheet prints
from them (computed by :mod:`ddr_explorer.core.analyses.precision`; laid out by :mod:`.sheet`)."""

from __future__ import annotations

from xml.sax.saxutils import escape

import numpy as np

from ..formatting import E_RHO2, GEQ, LEQ
from ..references import cite

__all__ = ["refit_precision_text"]


def _se(x: float | None, digits: int = 4) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"\u00b1{x:.{digits}f}"


def _agree_words(rule) -> str:
    """The rule's test of agreeing chains, with the sheet's symbols."""
    if rule.r_hat == "fixed":
        return f"rank-normalised R-hat {LEQ} 1.01 on every component"
    return (f"rank-normalised R-hat on every component within the threshold of {rule.min_ess:g} effective draws, "
            f"{cite('vats2021')}")


def _rule_sentence(rule: str | None, what: str) -> str:
    from ..model.stopping import PRECISION_MAX_MCSE, PRECISION_MIN_ESS, PRECISION_SPREAD_SHARE, PrecisionRule

    if rule == "gate":
        return (f"The {what} refits ran to the gate on the {E_RHO2} they report (R-hat {LEQ} 1.01, bulk and tail ESS "
                f"{GEQ} 440; --refit-rule gate).")
    return (f"The {what} refits ran under the precision rule: each until its chains agreed "
            f"({_agree_words(PrecisionRule())}; bulk ESS {GEQ} {PRECISION_MIN_ESS}; no divergence) and the Monte Carlo "
            f"SE of each number the analysis takes from it was at most {PRECISION_SPREAD_SHARE:g} of that number's "
            f"spread across refits and never above {PRECISION_MAX_MCSE:g} (quantile MCSE, {cite('vehtari2021')}).")


def refit_precision_text(difficulty=None, held_out=None) -> str | None:
    """One method-notes paragraph, or None when neither analysis ran (or neither says how it ran).

    Parameters
    ----------
    difficulty
        A :class:`~ddr_explorer.core.analyses.difficulty.DifficultyProfile` (its ``refit_rule`` and per
        stratum ``mcse``: median, 2.5% and 97.5% quantiles).
    held_out
        A :class:`~ddr_explorer.core.analyses.heldout.HeldOutReliability` (its ``refit_rule``,
        ``pearson_r_mcse`` and ``mean_gap_mcse``).
    """
    parts = []
    rules = {r for r in (getattr(difficulty, "refit_rule", None), getattr(held_out, "refit_rule", None)) if r}
    if len(rules) == 1:
        what = " and ".join(w for w, a in (("difficulty", difficulty), ("hold-out", held_out))
                            if getattr(a, "refit_rule", None))
        parts.append(_rule_sentence(next(iter(rules)), what))
    else:
        for w, a in (("difficulty", difficulty), ("hold-out", held_out)):
            if getattr(a, "refit_rule", None):
                parts.append(_rule_sentence(a.refit_rule, w))
    if held_out is not None and getattr(held_out, "projected_mcse", None) is not None:
        parts.append(f"Monte Carlo SE of the hold-out results (delta method over the {held_out.n_splits} splits' "
                     f"medians): r {_se(held_out.pearson_r_mcse, 3)}, mean gap {_se(held_out.mean_gap_mcse)}.")
    mc = getattr(difficulty, "mcse", None)
    if difficulty is not None and mc:
        each = [f"{escape(str(lab).split()[0])} {_se(m[0])} (interval ends {_se(max(m[1:]))})"
                for lab, m in zip(difficulty.labels, mc) if m is not None]
        if each:
            parts.append(f"Monte Carlo SE of each stratum's {E_RHO2} median: {'; '.join(each)}.")
    return " ".join(parts) or None
