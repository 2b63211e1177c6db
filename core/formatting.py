"""How every number is printed: the app, ``ddr`` and the DDR sheet format through these functions.

One function per kind of number, so a coefficient, an interval, a price or a convergence verdict
reads the same on the screen, in the terminal and in the PDF (``$0.0566`` everywhere, not
``$0.06`` in one place and ``$0.0566`` in another).  The functions return plain text (Unicode
symbols, no markup); the sheet escapes it for reportlab where needed.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

# The convergence gate (SPEC sec. 2): R-hat <= 1.01, bulk ESS >= 400, no divergences.
from .gate import MAX_R_HAT, MIN_ESS_BULK

__all__ = [
    "E_RHO2", "PHI", "SIGMA2", "GEQ", "LEQ", "TIMES", "NDASH", "MAX_R_HAT", "MIN_ESS_BULK",
    "fmt_coef", "fmt_interval", "fmt_estimate", "fmt_var", "fmt_pct", "fmt_n", "fmt_usd", "fmt_sig3", "fmt_prob",
    "fmt_duration",
    "fmt_r", "estimand_symbol", "fmt_design", "convergence_verdict", "object_noun",
]

#: Symbols.
E_RHO2 = "E\u03c1\u00b2"
PHI = "\u03a6"
SIGMA2 = "\u03c3\u00b2"
GEQ = "\u2265"
LEQ = "\u2264"
TIMES = "\u00d7"
NDASH = "\u2013"


#: Object of measurement -> the noun for its levels (SPEC sec. 4; seed 003's agent is one model-scaffold pair).
_OBJECT_NOUNS = {"model": "model", "system": "system", "model:scaffold": "system", "agent_system": "agent",
                 "agent": "agent"}


def object_noun(obj) -> str:
    """The noun for what is ranked and measured: ``"model"``, ``"system"`` or ``"agent"``.

    Parameters
    ----------
    obj
        An object of measurement (``"model"``, ``"system"``, ``"agent"``, or facet names as a string
        ``"model:scaffold"`` or an iterable); other facet names are joined with hyphens.
    """
    if not isinstance(obj, str):
        obj = ":".join(sorted(obj))
    return _OBJECT_NOUNS.get(obj, obj.replace(":", "-"))



def _finite(x) -> bool:
    return x is not None and isinstance(x, (int, float, np.integer, np.floating)) and math.isfinite(float(x))


def fmt_coef(x, digits: int = 3) -> str:
    """A coefficient (Erho2, Phi, SNR, correlation-like) with three decimals: ``0.812``.

    ``n/a`` when undefined; an infinite value (an SNR at reliability 1) reads ``∞``.
    """
    if x is None or not isinstance(x, (int, float, np.integer, np.floating)) or math.isnan(float(x)):
        return "n/a"
    if math.isinf(float(x)):
        return "\u221e" if x > 0 else "-\u221e"
    return f"{float(x):.{digits}f}"


def fmt_interval(lo, hi, fmt=fmt_coef) -> str:
    """``[lo, hi]`` with the given formatter; an infinite bound reads ``never`` through :func:`fmt_n`."""
    return f"[{fmt(lo)}, {fmt(hi)}]"


def fmt_estimate(median, lo, hi, fmt=fmt_coef) -> str:
    """A median with its interval: ``0.812 [0.701, 0.880]``."""
    return f"{fmt(median)} {fmt_interval(lo, hi, fmt)}"


def fmt_var(x) -> str:
    """A variance on the logit scale: three significant figures, no exponent for usual sizes."""
    if not _finite(x):
        return "n/a"
    x = float(x)
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}" if abs(x) >= 0.001 else f"{x:.1e}"


def fmt_pct(x, digits: int = 1) -> str:
    """A share as a percentage (``0.123`` -> ``12.3%``)."""
    return f"{100 * float(x):.{digits}f}%" if _finite(x) else "n/a"


def fmt_n(x) -> str:
    """A count or design size: ``1,234``, ``12.5``; ``inf`` reads "never" (no size reaches the target)."""
    if x is None:
        return "n/a"
    x = float(x)
    if math.isinf(x):
        return "never"
    if math.isnan(x):
        return "n/a"
    return f"{x:,.0f}" if abs(x - round(x)) < 1e-9 else f"{x:,.1f}"


def fmt_usd(x) -> str:
    """USD with precision that suits the amount: ``$1,234``, ``$12.50``, ``$0.0566``."""
    if not _finite(x):
        return "n/a"
    x = float(x)
    if abs(x) >= 1000:
        return f"${x:,.0f}"
    if abs(x) >= 1:
        return f"${x:,.2f}"
    return f"${x:#.3g}"  # three significant digits, trailing zeros kept: $0.100 lines up with $0.0566


def fmt_sig3(x) -> str:
    """Three significant digits, trailing zeros kept, never in exponent form (27.0, 6.07, 1,234)."""
    if not _finite(x):
        return "n/a"
    x = float(x)
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:#.3g}"


def fmt_duration(seconds) -> str:
    """A wall-time estimate: "45 s", "12 min", "3.5 h" (n/a when unknown)."""
    if not _finite(seconds):
        return "n/a"
    s = max(float(seconds), 0.0)
    if s < 90:
        return f"{s:.0f} s"
    if s < 90 * 60:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def fmt_prob(x) -> str:
    """A probability with two decimals."""
    return f"{float(x):.2f}" if _finite(x) else "n/a"


def fmt_r(x) -> str:
    """A correlation with two decimals and a true minus sign."""
    if not _finite(x):
        return "n/a"
    return f"{float(x):.2f}".replace("-", "\u2212")


def estimand_symbol(estimand: str) -> str:
    """``Erho2`` -> ``Eρ²``, ``Phi`` -> ``Φ``; other names unchanged."""
    return {"Erho2": E_RHO2, "Phi": PHI}.get(estimand, estimand)


def fmt_design(d: Mapping, estimand: str | None = None) -> str:
    """A design of a frontier (:meth:`~.dstudy.BudgetSearch.design_at`) in one line.

    ``40 tasks × 1 scaffold × 3 benchmarks: Eρ² 0.861, $1,234`` (or ``…, 12,000 trials`` without
    prices, when ``d["cost"]`` is None).
    """
    def count(n, word):
        return f"{fmt_n(n)} {word}{'' if float(n) == 1 else 's'}"

    sizes = f" {TIMES} ".join(count(d[k], w) for k, w in (("n_tasks", "task"), ("n_scaffolds", "scaffold"),
                                                          ("n_benchmarks", "benchmark")))
    money = fmt_usd(d["cost"]) if d.get("cost") is not None else f"{fmt_n(d['trials'])} trials"
    coef = f"{estimand_symbol(estimand)} {fmt_coef(d['median'])}, " if estimand else ""
    return f"{sizes}: {coef}{money}"


def convergence_verdict(info: Mapping) -> str:
    """One line on a fit's convergence: ``converged (max R-hat 1.004, min bulk ESS 723, 0 divergences)``.

    ``info`` has ``converged`` (True, False or None when not checked) and optionally
    ``max_rhat``, ``min_ess_bulk`` and ``divergences``.  An unconverged fit reads
    ``NOT converged (...)`` with the gate each failed number needs.
    """
    conv = info.get("converged")
    bits = []
    if _finite(info.get("max_rhat")):
        r = float(info["max_rhat"])
        bits.append(f"max R-hat {r:.3f}" + (f" (needs {LEQ} {MAX_R_HAT})" if conv is False and r > MAX_R_HAT else ""))
    if _finite(info.get("min_ess_bulk")):
        e = float(info["min_ess_bulk"])
        bits.append(f"min bulk ESS {fmt_n(round(e))}" + (f" (needs {GEQ} {MIN_ESS_BULK})"
                                                          if conv is False and e < MIN_ESS_BULK else ""))
    if info.get("divergences") is not None:
        n = int(info["divergences"])
        bits.append(f"{fmt_n(n)} divergence{'' if n == 1 else 's'}")
    head = {True: "converged", False: "NOT converged"}.get(conv, "convergence not checked")
    return head + (f" ({', '.join(bits)})" if bits else "")


def run_length_text(settings: Mapping) -> str | None:
    """The run-length rule of a fit's sampler settings, for the sheet's footer: ``run length by the
    gate (at least 200, at most 4,000 draws/chain, 600 s)``; None for a fixed-length run (its
    ``draws`` say it).  The rule is :mod:`ddr_explorer.core.model.stopping`'s."""
    if settings.get("stop", "fixed") != "gate":
        return None
    ceil = [f"at most {fmt_n(settings['max_draws'])} draws/chain"] if settings.get("max_draws") else []
    if settings.get("max_seconds") is not None:
        ceil.append(f"{float(settings['max_seconds']):,.0f} s")
    return (f"run length by the gate (at least {fmt_n(settings.get('draws'))}"
            + "".join(f", {c}" for c in ceil) + ")")
