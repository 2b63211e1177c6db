"""Presets meet the design: the terms of a preset that the corpus can separate.

A preset (seed 000 (Hardy et al. 2026) Eq. 2 or Eq. 6, seed 003 (DDR paper 2026) Eq. 1) names its random-intercept
terms without looking at the data.  On a corpus whose design cannot separate
some of them, e.g. a single benchmark where every model ran with one scaffold
of its own, the ``scaffold``, ``task:scaffold`` and ``model:scaffold`` kernels
are copies of the ``model``, ``task:model`` and ``model`` kernels: the sampler
would spend its time on variance splits the likelihood cannot tell apart.

:func:`supported_spec` runs the project's separability analysis
(:func:`.identifiability.separable_terms`, seed 000 Prop. E.2, the same exact
criterion ``ddr inspect`` reports) on the preset's sampled terms and keeps the
greedy reduction: terms lowest order first, a term left out when its kernel is
spanned by the kept ones and the nuisance kernels (intercept, residual,
terminal cell).  A left-out variance is not zero: it is absorbed by the terms
named in the note, which then estimate their sum.

Only presets are reduced.  A formula the user wrote is fitted as written: the
user chose its terms (``ddr inspect`` says which of them the design separates).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.formula import ModelSpecError
from ..references import cite

__all__ = ["TERMS_NOTE_PREFIX", "DroppedTerm", "TermCheck", "UnsupportedTermsError", "default_preset",
           "supported_spec"]

_CELL = "(terminal cell)"

#: How the note on a reduced fit begins (the fit's notes, the sheet's method notes look for it).
TERMS_NOTE_PREFIX = "Preset terms left out"


def default_preset(corpus) -> str:
    """The preset a command fits when none is given, one rule for ``ddr fit``, ``dstudy``, ``methods``,
    ``report`` and the app: ``pooled`` over several benchmarks (seed 000 Eq. 6), else
    ``per-benchmark`` (Eq. 2)."""
    table = getattr(corpus, "table", corpus)
    n = table["benchmark"].nunique() if "benchmark" in table.columns else 1
    return "pooled" if n > 1 else "per-benchmark"


@dataclass(frozen=True)
class DroppedTerm:
    """One preset term the design cannot separate."""

    term: str
    confounded_with: tuple[str, ...]
    absorbed_by: tuple[str, ...]

    @property
    def reason(self) -> str:
        partners = ", ".join(self.confounded_with) or "a combination of other terms"
        absorbed = ", ".join(self.absorbed_by) or "the intercept"
        return f"{self.term} is confounded with {partners} and absorbed by {absorbed}"

    def to_dict(self) -> dict:
        return {"term": self.term, "confounded_with": list(self.confounded_with),
                "absorbed_by": list(self.absorbed_by), "reason": self.reason}


@dataclass
class TermCheck:
    """A spec checked against a corpus's design.

    Attributes
    ----------
    spec
        The spec to fit: the given one when nothing is dropped (the very same
        object, so the cache key is unchanged), else the preset reduced to the
        terms the design separates (priors of the kept terms kept).
    requested
        The spec as given.
    dropped
        The preset's terms left out, with what they are confounded with.
    """

    spec: object
    requested: object
    dropped: list[DroppedTerm] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.dropped)

    @property
    def supported_formula(self) -> str:
        return self.spec.formula

    @property
    def note(self) -> str | None:
        """The note a reduced fit carries (None when nothing was dropped)."""
        if not self.dropped:
            return None
        names = ", ".join(d.term for d in self.dropped)
        return (f"{TERMS_NOTE_PREFIX}: {names} of the {self.requested.name} preset, which this corpus's design "
                f"cannot separate (their covariance kernels are linear combinations of other terms' on the "
                f"observed cells, {cite('hardy2026', 'Prop. E.2')}), so they were not sampled: "
                f"{'; '.join(d.reason for d in self.dropped)}. Fitted formula: {self.spec.formula}. "
                f"`ddr inspect` shows the design; --strict-terms refuses such a fit instead.")

    def to_dict(self) -> dict:
        return {"requested": self.requested.formula, "preset": self.requested.name,
                "fitted": self.spec.formula, "dropped": [d.to_dict() for d in self.dropped], "note": self.note}


class UnsupportedTermsError(ModelSpecError):
    """``--strict-terms``: the preset has terms the design cannot separate.

    ``check`` is the :class:`TermCheck`; ``supported_formula`` the formula the design supports.
    """

    def __init__(self, check: TermCheck):
        self.check = check
        self.supported_formula = check.supported_formula
        names = ", ".join(d.term for d in check.dropped)
        super().__init__(
            f"the {check.requested.name} preset has terms this corpus's design cannot separate: {names} "
            f"({'; '.join(d.reason for d in check.dropped)}; {cite('hardy2026', 'Prop. E.2')}). The design supports: "
            f"{check.supported_formula} . "
            f"Fix: fit that formula (--formula '{check.supported_formula}'), or leave out --strict-terms to "
            f"fit the preset without those terms.")


def _analysis_names(spec) -> dict[str, str]:
    """Each sampled term's name in the separability analysis: ``agent`` is the (model, scaffold) pair."""
    out = {}
    for t in spec.terms:
        facets: list[str] = []
        for f in t.facets:
            facets.extend(("model", "scaffold") if f == "agent" else (f,))
        out[t.name] = ":".join(dict.fromkeys(facets))
    return out


def supported_spec(corpus, spec) -> TermCheck:
    """The terms of a preset that the corpus's design separates (seed 000 Prop. E.2).

    Parameters
    ----------
    corpus
        A corpus (or its canonical table).
    spec
        A :class:`~ddr_explorer.core.model.formula.ModelSpec`.  Only a preset
        (``spec.name`` one of ``PRESET_FORMULAS``) is reduced; any other spec
        comes back unchanged.

    Returns
    -------
    TermCheck
        ``spec`` is the input itself when every term is separable.

    Notes
    -----
    The reduction is :func:`.identifiability.separable_terms`' greedy one
    (lowest order first, in the preset's order): every kept term is then
    separable, and each left-out term's variance is carried by the kept terms
    it names.
    """
    from ..model.formula import PRESET_FORMULAS, Priors, parse_formula
    from .identifiability import separable_terms

    if spec.name not in PRESET_FORMULAS:
        return TermCheck(spec, spec)
    table = getattr(corpus, "table", corpus)
    if any(c not in table.columns for c in spec.columns):
        return TermCheck(spec, spec)  # the fit's own validation names the missing column and the fix
    names = _analysis_names(spec)
    back = {v: k for k, v in names.items()}
    # The fitted model has no free cell-level variance besides its terms (the cell interaction is
    # pi^2/3, fixed), so the terminal cell enters as a term of highest order, last in the greedy
    # order, rather than as the nuisance kernel ``ddr inspect`` uses: a term whose levels happen to
    # be the cells (task:model when each model ran with one scaffold) is then kept when cells hold
    # replicate trials (their binomial spread identifies it) and left out, confounded with the
    # trial residual, when they do not.
    facets = list(dict.fromkeys(f for t in names.values() for f in t.split(":")))
    cell = ":".join(facets)
    back.setdefault(cell, _CELL)
    res = separable_terms(corpus, [*names.values(), *([cell] if cell not in names.values() else [])])
    kept = {back[t] for t in res["suggested_terms"] if back.get(t, _CELL) != _CELL}
    if len(kept) == len(names):
        return TermCheck(spec, spec)

    def spell(ts):  # nuisance kernels keep their names; terms get the formula's spelling
        return tuple(dict.fromkeys(back.get(t, t) for t in ts))

    dropped = [DroppedTerm(t, spell(res["confounded_with"].get(names[t], [])),
                           spell(res["folded"].get(names[t], [])))
               for t in spec.term_names if t not in kept]
    keep = [t for t in spec.term_names if t in kept]
    if not keep:
        raise ModelSpecError(
            f"the {spec.name} preset has no term this corpus's design can separate "
            f"({'; '.join(d.reason for d in dropped)}); `ddr inspect` shows the design.")
    lhs = spec.formula.split("~", 1)[0].strip() if "~" in spec.formula else "y"
    rhs = " + ".join(f"(1|{t})" for t in (*keep, *(f.name for f in spec.folded)))
    p = spec.priors
    priors = Priors(intercept=p.intercept, sigma=p.sigma,
                    sigma_by_term={k: v for k, v in p.sigma_by_term.items() if k in kept})
    reduced = parse_formula(f"{lhs} ~ 1 + {rhs}", priors)
    return TermCheck(reduced, spec, dropped)
