"""How every number is printed: the app, ``ddr`` and the DDR sheet format through these functions.

One function per kind of number, so a coefficient, an interval, a price or a convergence verdict
reads the same on the screen, in the terminal and in the PDF (``$0.0566`` everywhere, not
``$0.06`` in one place and ``$0.0566`` in another).  The functions return plain text (Unicode
symbols, no markup); the sheet escapes it for reportlab where needed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import numpy as np

# The convergence gate (SPEC sec. 2): R-hat <= 1.01, bulk ESS >= 400, no divergences.
from .gate import MAX_R_HAT, MIN_ESS_BULK

__all__ = [
    "E_RHO2", "PHI", "SIGMA2", "GEQ", "LEQ", "TIMES", "NDASH", "MAX_R_HAT", "MIN_ESS_BULK",
    "fmt_coef", "fmt_target", "fmt_interval", "fmt_estimate", "fmt_var", "fmt_pct", "fmt_n", "fmt_usd", "fmt_sig3", "fmt_rpd", "fmt_prob",
    "fmt_duration",
    "fmt_r", "estimand_symbol", "fmt_design", "convergence_verdict", "object_noun", "FacetWords", "facet_words",
    "plural", "fmt_device",
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




# ---------------------------------------------------------------------------
# The words of a design's sizes
# ---------------------------------------------------------------------------

#: D-study size field -> facet of the D-study rule (core.dstudy.sizes), and back.
_SIZE_FACET = {"n_tasks": "task", "n_scaffolds": "scaffold", "n_benchmarks": "benchmark", "n_replicates": "replicate"}
_FACET_SIZE = {v: k for k, v in _SIZE_FACET.items()}
#: Facet -> its noun (singular); facets not listed read as their name with underscores as spaces.
_FACET_NOUN = {"benchmark": "benchmark", "task": "task", "model": "model", "scaffold": "scaffold", "agent": "agent",
               "step": "step", "error_category": "error category", "judge": "judge"}
#: Seed 003's trace-level facets: with one of them in an agent fit a replicate is one trace.
_TRACE_FACETS = frozenset({"step", "error_category"})


def plural(word: str, n=2) -> str:
    """``category`` -> ``categories``, ``task`` -> ``tasks``; the word itself when ``n == 1``."""
    if n is not None and float(n) == 1:
        return word
    return word[:-1] + "ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else word + "s"


@dataclass(frozen=True)
class FacetWords:
    """The words of a fit's design sizes and of its object (:func:`facet_words`).

    Attributes
    ----------
    object, objects
        The object's noun, singular and plural (``"agent"``, ``"agents"``).
    units
        Size field (``n_tasks``, ``n_scaffolds``, ``n_benchmarks``, ``n_replicates`` or an extra facet's
        name) -> (singular noun, plural noun, qualifier), e.g. ``("task", "tasks", " per benchmark")``.
    sizes
        The size fields among tasks, scaffolds and benchmarks that the fit's design varies: tasks, and
        scaffolds or benchmarks where the fit has the facet and the object does not hold it.
    """

    object: str
    objects: str
    units: Mapping[str, tuple[str, str, str]] = field(default_factory=dict)
    sizes: tuple[str, ...] = ("n_tasks", "n_scaffolds", "n_benchmarks")

    def _unit(self, size: str) -> tuple[str, str, str]:
        size = _FACET_SIZE.get(size, size)  # a facet name ("task") reads as its field ("n_tasks")
        if size in self.units:
            return self.units[size]
        noun = _FACET_NOUN.get(size, size.replace("_", " "))
        return noun, plural(noun), ""

    def axis(self, size: str) -> str:
        """Lower-case words of a size, for an axis or a sentence: ``tasks per benchmark``."""
        _, many, qual = self._unit(size)
        return many + qual

    def label(self, size: str) -> str:
        """The same, capitalised, for a slider or a table row: ``Tasks per benchmark``."""
        text = self.axis(size)
        return text[:1].upper() + text[1:]

    def count(self, size: str, n) -> str:
        """``40 tasks per benchmark``, ``1 scaffold per model``, ``3 error categories``."""
        one, many, qual = self._unit(size)
        return f"{fmt_n(n)} {one if n is not None and float(n) == 1 else many}{qual}"

    def noun(self, size: str, n=2) -> str:
        """The bare noun of a size (``task``/``tasks``), without its qualifier."""
        one, many, _ = self._unit(size)
        return one if n is not None and float(n) == 1 else many

    @property
    def compared(self) -> str:
        """The label of the design's ``n_models`` (it enters the cost only): ``Agents compared``."""
        return f"{self.objects[:1].upper()}{self.objects[1:]} compared" if self.object == "agent" else "Models compared"

    @property
    def allocation(self) -> str:
        """The head of the budget's allocation of tasks (seed 000 (Hardy et al. 2026) sec. 5.4): ``Tasks per benchmark`` for a
        fit with a benchmark facet, else ``Tasks across benchmarks`` (the allocation needs a pooled fit)."""
        return "Tasks per benchmark" if self.units.get("n_tasks", ("", "", ""))[2] else "Tasks across benchmarks"


def facet_words(obj, facets: Iterable[str] = ()) -> FacetWords:
    """The words of a fit's design sizes and object, the same in the app, ``ddr`` and the DDR sheet.

    The words follow the fit (SPEC sec. 4): what a D-study size counts depends on the model's facets.

    * **Tasks.** With a ``benchmark`` facet (seed 000 Eq. 6, pooled) a design has ``n_tasks`` tasks in
      each of ``n_benchmarks`` benchmarks: "tasks per benchmark".  Without one (seed 000 Eq. 2 of one
      benchmark; seed 003 (DDR paper 2026) Eq. 1) the task facet holds every task of the corpus
      (:func:`~.dstudy.observed.observed_sizes`): "tasks".
    * **Scaffolds** are counted per model ("scaffolds per model", seed 000 Eq. 2).
    * **Replicates** divide the residual: trials per (task, model, scaffold) cell; in an agent fit with
      seed 003's step or error-category facet a replicate is one trace of an agent on a task, checked at
      every step and category: "traces per agent-task pair".
    * **Objects**: models, model-scaffold systems (seed 000 Eq. 4) or agents (seed 003 sec. 3), as
      :func:`object_noun`; extra facets by their names ("error categories").

    Parameters
    ----------
    obj
        The object of measurement (``"model"``, ``"system"``, ``"agent"`` or facet names), e.g.
        :func:`~.reliability.object_for_terms` of the fit's terms.
    facets
        The fit's facets (``VarianceComponents.facets``); a term name counts as its facets.

    Returns
    -------
    FacetWords
    """
    fs = {f for t in facets for f in str(t).split(":")}
    one = object_noun(obj)
    many = "systems" if one == "system" else plural(one)
    units = {"n_tasks": ("task", "tasks", " per benchmark" if "benchmark" in fs else ""),
             "n_scaffolds": ("scaffold", "scaffolds", " per model"),
             "n_benchmarks": ("benchmark", "benchmarks", "")}
    if one == "agent" and fs & _TRACE_FACETS:
        units["n_replicates"] = ("trace", "traces", " per agent-task pair")
    else:
        units["n_replicates"] = ("trial", "trials", " per cell")
    held = {"model", "scaffold"} if one == "system" else {one}
    sizes = ("n_tasks",) + tuple(k for k, f in (("n_scaffolds", "scaffold"), ("n_benchmarks", "benchmark"))
                                 if (f in fs or not fs) and f not in held)
    return FacetWords(one, many, units, sizes)


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


def fmt_target(x) -> str:
    """A target coefficient as it was typed: two decimals, three when the third is not zero.

    ``0.85`` -> ``0.85``, ``0.875`` -> ``0.875`` (two decimals read it as "0.88", another target),
    ``0.9`` -> ``0.90``.  The D-study boxes take three decimals, so three are always enough.
    """
    if x is None or not isinstance(x, (int, float, np.integer, np.floating)) or not math.isfinite(float(x)):
        return "n/a"
    three = f"{float(x):.3f}"
    return three[:-1] if three.endswith("0") else three


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
    """A share as a percentage (``0.123`` -> ``12.3%``).

    A share strictly between 0 and 1 that would round to 0% or 100% reads "under 1%" / "over 99%"
    (at ``digits`` decimals): 99.8% of the spread printed as "100% real, 0% luck" claims a
    certainty the figure does not have.  Words, not "<" / ">", because the text goes into
    reportlab markup as well as the terminal.
    """
    if not _finite(x):
        return "n/a"
    x = float(x)
    step = 10.0 ** -digits
    text = f"{100 * x:.{digits}f}"
    if 0 < x < 1 and float(text) >= 100:
        return f"over {100 - step:.{digits}f}%"
    if 0 < x < 1 and float(text) <= 0:
        return f"under {step:.{digits}f}%"
    return f"{text}%"


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


def fmt_rpd(rpd, coefficient, price_per_trial, estimand: str = "Erho2") -> str:
    """Reliability per dollar in words a buyer reads, on the screen, in ``ddr dstudy`` and on the sheet.

    The DDR paper (2026) defines ``RPD = Erho2 / mean cost per trial``: the coefficient of the design
    divided by what one trial costs on average.  It was printed as "1.21 per USD per trial", a unit no
    buyer reads; here the ratio says what it divides: ``reliability per dollar 1.21 (Eρ² 0.968 ÷ $0.80
    mean cost per trial)``.  ``rpd``, ``coefficient`` and ``price_per_trial`` are numbers (medians).
    """
    if not (_finite(rpd) and _finite(coefficient) and _finite(price_per_trial)):
        return "reliability per dollar n/a"
    return (f"reliability per dollar {fmt_sig3(rpd)} ({estimand_symbol(estimand)} {fmt_coef(coefficient)} "
            f"\u00f7 {fmt_usd(price_per_trial)} mean cost per trial)")


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


def fmt_design(d: Mapping, estimand: str | None = None, words: "FacetWords | None" = None) -> str:
    """A design of a frontier (:meth:`~.dstudy.BudgetSearch.design_at`) in one line.

    ``40 tasks × 1 scaffold × 3 benchmarks: Eρ² 0.861, $1,234`` (or ``…, 12,000 trials`` without
    prices, when ``d["cost"]`` is None).  With a fit's ``words`` (:func:`facet_words`), only the sizes its
    design varies, in its words (a ddr fit: ``40 tasks: …``).
    """
    def count(n, word):
        return f"{fmt_n(n)} {word}{'' if float(n) == 1 else 's'}"

    if words is not None:
        sizes = f" {TIMES} ".join(count(d[k], words.noun(k, 1)) for k in words.sizes)
    else:
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


def fmt_device(device, cores: int | None = None, short: bool = False) -> str:
    """Where a fit ran, in words: ``"cpu x4"`` -> ``"CPU, 4 chains in parallel (one JAX device each)"``.

    The sampler gives each chain its own JAX CPU device, so "4 JAX devices" on a 2-core machine means 4
    chains sharing 2 cores, not 4 processors; ``cores`` (this machine's, when known) says so.  ``short``
    gives the status bar's form (``"CPU, 4 chains on 2 cores"``), whose label has room for about 40
    characters beside the message; the long form is its tooltip and the Model tab's.
    """
    text = str(device or "")
    if text.startswith("cpu x") and text[len("cpu x"):].isdigit():
        n = int(text[len("cpu x"):])
        chains = f"{n} chain{'s' if n != 1 else ''}"
        if n == 1:
            return "CPU, 1 chain"
        if cores is None:
            return f"CPU, {chains}" if short else f"CPU, {chains} in parallel (one JAX device each)"
        return f"CPU, {chains}{'' if short else ' in parallel'} on {cores} core{'s' if cores != 1 else ''}"
    return text

