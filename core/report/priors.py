"""The priors a fit used, as the sheet, ``ddr fit --json`` and the app print them.

The priors are read from the fit itself (``posterior.spec.priors``, which the
cache stores in the fit's spec metadata and :func:`~ddr_explorer.core.fitting.posterior_from_entry`
rebuilds), never assumed: a user who edits them in the Model tab must see the
edited values next to the numbers they produced (SPEC sec. 2; the defaults are
brms's, seed 000 (Hardy et al. 2026) App. C.1.3).

The dictionary form is :meth:`~ddr_explorer.core.model.formula.Priors.to_dict`:
``{"intercept": {"df", "loc", "scale"}, "sigma": {"df", "scale"},
"sigma_by_term": {term: {"df", "scale"}}}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import escape

__all__ = ["priors_of", "priors_text", "priors_are_default"]


def priors_of(posterior) -> dict | None:
    """The priors of a fit (``posterior.spec.priors``) as a plain dict, or None when it records none.

    Accepts a :class:`~ddr_explorer.core.model.formula.Priors` (anything with
    ``to_dict``) or a mapping already in that form; read by attribute, so the
    sampler is not imported.
    """
    spec = getattr(posterior, "spec", None)
    pri = getattr(spec, "priors", None)
    if pri is None:
        return None
    if hasattr(pri, "to_dict"):
        return pri.to_dict()
    return dict(pri) if isinstance(pri, Mapping) else None


def _num(x: Any) -> str:
    # as written: 1.0 -> "1", 2.5 -> "2.5" (the user typed a number, not a float repr)
    return f"{float(x):g}"


def _half_t(p: Mapping) -> str:
    return f"half-Student-t({_num(p['df'])}, 0, {_num(p['scale'])})"


def _t(p: Mapping) -> str:
    return f"Student-t({_num(p['df'])}, {_num(p.get('loc', 0.0))}, {_num(p['scale'])})"


def priors_text(priors: Mapping, *, markup: bool = False) -> str:
    """One line naming every prior: ``σ_F ~ half-Student-t(3, 0, 2.5), μ ~ Student-t(3, 0, 2.5)``.

    Parameters
    ----------
    priors
        The :meth:`Priors.to_dict` form (see the module note).
    markup
        True for reportlab markup (subscripts, escaped term names); False for plain text.
    """
    def sigma(sub: str) -> str:
        return f"\u03c3<sub>{escape(sub)}</sub>" if markup else f"\u03c3_{sub}"

    parts = [f"{sigma('F')} ~ {_half_t(priors['sigma'])}"]
    for term, p in sorted((priors.get("sigma_by_term") or {}).items()):
        parts.append(f"{sigma(term)} ~ {_half_t(p)}")
    parts.append(f"\u03bc ~ {_t(priors['intercept'])}")
    return ", ".join(parts)


def priors_are_default(priors: Mapping) -> bool:
    """True when ``priors`` are the defaults of :class:`~ddr_explorer.core.model.formula.Priors`."""
    from ..model.formula import Priors

    d = Priors().to_dict()

    def same(a: Mapping, b: Mapping) -> bool:
        return all(float(a.get(k, 0.0)) == float(b.get(k, 0.0)) for k in ("df", "loc", "scale"))

    return (same(priors["sigma"], d["sigma"]) and same(priors["intercept"], d["intercept"])
            and not priors.get("sigma_by_term"))
