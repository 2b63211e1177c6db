"""Words of the D-study tab's readouts that put the latent figures beside the observed-score ones.

The readouts of :class:`~.dstudy_panel.DStudyPanel` are on the scale of observed success rates where the fit
allows (core/score_reliability.py); these lines give the latent ability ranking of Hardy et al. 2026 beside
them, and the same design read for each object of measurement (core/dstudy/objects.py, Table 17's columns).
Nothing is computed here but the call to core.
"""

from __future__ import annotations

from ..core.formatting import estimand_symbol as _symbol
from ..core.formatting import fmt_coef, fmt_rpd
from .plots import fmt_count, fmt_usd

__all__ = ["cost_words", "latent_words", "object_words"]


def cost_words(r, design) -> str:
    """The Cost readout: the design's cost and its reliability per dollar, in ``ddr dstudy``'s and the sheet's words."""
    price = design.mean_price()
    if not price > 0:
        return "no prices entered"
    text = fmt_usd(r.cost)
    if r.rpd is not None:
        text += f"; {fmt_rpd(r.rpd.median, r.coefficient.median, price, r.estimand)}"
    return text


def object_words(components, design) -> str:
    """The design read for every object the fit has terms for (one line; empty with a single object)."""
    from ..core.dstudy.objects import by_object

    try:
        objects = by_object(components, design.sizes(), design.n_models)
    except ValueError:
        return ""
    if len(objects) < 2:
        return ""
    return ", ".join(f"{name} {fmt_coef(e['Erho2']['median'])}" for name, e in objects.items())


def latent_words(r) -> str:
    """The latent ability ranking's figures (Hardy et al. 2026) beside the observed-score readouts."""
    lat = r.latent
    if lat is None:
        return ("these readouts are the latent ability ranking (Hardy et al. 2026): no intercept draws "
                "for a success-rate figure" if r.scale == "latent" else "")
    q = lat.required.quantiles
    return (f"{_symbol(lat.estimand)} {fmt_coef(lat.coefficient.median)}, tasks for target {fmt_count(q[0.5])}  "
            "(latent ability ranking, Hardy et al. 2026)")
