"""Reliability by object of measurement: the model, the scaffold and the model-scaffold system side by side.

Seed 000 (Hardy et al. 2026) Table 17 reports, for one benchmark's fit (Eq. 2), the same data read for three
objects: models (Eq. 3), scaffolds and model-scaffold systems (Eq. 4), each with its task reliability
``s2_o / (s2_o + s2_io)`` and models also with the task-saturated ceiling (Eq. 8).  A D-study of one object
(``ddr dstudy --object``) gives one of these columns; :func:`by_object` gives them all at one design, so that
every coefficient of the table is in one ``ddr dstudy --json`` (its ``by_object`` block).

The design's sizes apply to every object: ``n_tasks`` tasks, ``n_scaffolds`` scaffolds per model (the model
object), ``n_models`` models per scaffold (the scaffold object), ``n_benchmarks`` for a pooled fit.  The
paper's Tables 16 and 17 are at one scaffold per model and one model per scaffold
(``ddr dstudy --n-scaffolds 1 --n-models 1``), which is what reproduces them (docs/guide/reproductions.md).
"""

from __future__ import annotations

from ..posterior_summary import summarize
from ..reliability import (SYSTEM, VarianceComponents, as_components, capability_gap_ratio, gap_ratio_not_estimable,
                           generalizability, task_only_ceiling)
from ..references import cite

#: Objects in the table's order, with the facets that make each.
OBJECTS: dict[str, tuple[str, ...]] = {"model": ("model",), "scaffold": ("scaffold",), "system": SYSTEM}

#: Where each coefficient comes from (the seed's equation or definition).
EQUATIONS = {"model": cite("hardy2026", "Eq. 3"), "scaffold": cite("hardy2026", "Table 17, E rho2_A(b)"),
             "system": cite("hardy2026", "Eq. 4"), "task_ceiling": cite("hardy2026", "Eq. 8"),
             "task_reliability": cite("hardy2026", "Table 17, s2_o / (s2_o + s2_io)")}


def _entry(draws) -> dict:
    s = summarize(draws)
    return {"mean": s.mean, "median": s.median, "lower95": s.hdi95[0], "upper95": s.hdi95[1],
            "lower68": s.hdi68[0], "upper68": s.hdi68[1]}


def by_object(components, sizes: dict[str, float], n_models: float) -> dict[str, dict]:
    """Erho2, its task-only ceiling and the task reliability of every object the fit has terms for.

    Parameters
    ----------
    components
        Variance-component draws (:class:`~..reliability.VarianceComponents` or a mapping).
    sizes
        The D-study sizes (``task``, ``scaffold``, ``benchmark``, ``replicate``), as
        :meth:`~.sizes.DStudyDesign.sizes` gives them.
    n_models
        Models per scaffold, the averaging size of the scaffold object.

    Returns
    -------
    dict
        Object -> ``{"Erho2": {...}, "Erho2_task_ceiling": {...}, "task_reliability": {...}, "equation": ...}``
        (each a mean, median and 68%/95% HDI of per-draw values); ``task_reliability`` only where the fit has
        the object's task interaction.  Objects without a variance component of their own are left out.
    """
    c: VarianceComponents = as_components(components)
    out: dict[str, dict] = {}
    for name, facets in OBJECTS.items():
        if not set(facets) <= c.facets:
            continue
        s = {**sizes, "model": float(n_models)} if name == "scaffold" else dict(sizes)
        try:
            entry = {"Erho2": _entry(generalizability(c, facets, s)),
                     "Erho2_task_ceiling": _entry(task_only_ceiling(c, facets, s)),
                     "equation": EQUATIONS[name]}
        except ValueError:  # no variance component for this object (e.g. scaffold terms left out of the fit)
            continue
        if name != "system" and gap_ratio_not_estimable(c, facets) is None:
            entry["task_reliability"] = _entry(capability_gap_ratio(c, facets))
        out[name] = entry
    return out
