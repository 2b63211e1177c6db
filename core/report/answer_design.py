"""The design the sheet's answers are computed at: the one the app's D-study tab shows.

The app's D-study tab answers "tasks for target", "cheapest for target" and "best in budget" at the
design its sliders hold: their sizes, their trials per cell, the prices and the models compared.  A
buyer who reads the screen and then the sheet must find the same answers, so the sheet computes them
at the same design with the same core calls (:func:`~ddr_explorer.core.dstudy.budget_search` with the
observed design as the grid's reference, :meth:`~ddr_explorer.core.dstudy.DStudyModel.readouts`):
the design examined (what-if) when the user set one (``ddr report --n-tasks ... --replicates ...``, or the
app's sliders), else the observed design.  The headline stays the observed design's; every cost answer
says at how many trials per cell it was computed, because the trials per cell multiply every cost.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Mapping

from ..dstudy import BudgetSearch, DStudyDesign, DStudyModel, budget_search
from ..dstudy.curves import Readouts
from ..formatting import FacetWords, fmt_n

__all__ = ["AnswerDesign", "answer_design", "examined_from_sizes", "EXAMINED_SIZES"]

#: The sizes a what-if design may set (``ddr report``'s options, the app's sliders).
EXAMINED_SIZES = ("n_tasks", "n_scaffolds", "n_benchmarks", "n_replicates", "n_models")


@dataclass(frozen=True)
class AnswerDesign:
    """The design of the sheet's answers and the answers the screen shows at it.

    Attributes
    ----------
    design
        The design examined when there is one, else the observed design.
    examined
        True when ``design`` is the what-if design examined (not the one the corpus ran).
    search
        The budget search at ``design`` (the cheapest design for the target, the best within the budget).
    readouts
        The readouts of ``design``: its coefficient, P(target met) and the tasks the target needs (with
        the design's other sizes and trials per cell held), as the screen's readout panel shows them.
    widen
        Size field (``n_scaffolds``, ``n_benchmarks``) -> the median size that reaches the target with the
        design's other sizes held, for the sizes the fit varies and the corpus can answer (``inf``: none).
    """

    design: DStudyDesign
    examined: bool
    search: BudgetSearch
    readouts: Readouts
    widen: dict = field(default_factory=dict)

    def tasks_needed(self) -> dict:
        """The tasks the target needs at this design, in the shape of ``dstudy_summary``'s ``min_n`` entries."""
        r = self.readouts.required
        q = r.quantiles
        return {"median": q[0.5], "lower95": q[0.025], "upper95": q[0.975], "p_reachable": r.p_reachable,
                "observed": r.observed_n}

    def latent_tasks_needed(self) -> float | None:
        """The median tasks the latent ability ranking needs at this design (None on the latent scale)."""
        lat = self.readouts.latent
        return None if lat is None else lat.required.quantiles[0.5]

    def trials_words(self, words: FacetWords) -> str:
        """``3 trials per cell`` (the design's replicates, in the fit's words)."""
        return words.count("n_replicates", self.design.n_replicates)

    def which(self) -> str:
        """``the design examined`` or ``the observed design``."""
        return "the design examined" if self.examined else "the observed design"

    def cost_basis(self, words: FacetWords) -> str:
        """What every cost figure of the frontier holds: ``3 trials per cell and 2 models compared (the design
        examined)``."""
        d = self.design
        return (f"{self.trials_words(words)} and {fmt_n(d.n_models)} {words.compared.split(' ')[0].lower()} "
                f"compared ({self.which()})")


def answer_design(inputs, model: DStudyModel, target: float, not_answered=()) -> AnswerDesign:
    """The design of the sheet's answers (module note) with its budget search and readouts.

    Parameters
    ----------
    inputs
        The sheet's :class:`~.inputs.ReportInputs` (components, observed and examined designs, budget).
    model
        The :class:`~ddr_explorer.core.dstudy.DStudyModel` of the sheet (its scale is the screen's).
    target
        The target coefficient.
    not_answered
        The sizes the corpus's design cannot answer a minimum for (benchmarks that share no model).
    """
    observed = inputs.observed_design
    design = inputs.examined_design or observed
    search = budget_search(inputs.components, design, target=target, budget=inputs.budget, reference=observed,
                           scale=model.scale)
    widen = {over: model.required_n(design, over=over, target=target).quantiles[0.5]
             for over, facet in (("n_scaffolds", "scaffold"), ("n_benchmarks", "benchmark"))
             if facet in inputs.components.facets and facet not in design.object_facets and over not in not_answered}
    return AnswerDesign(design, inputs.examined_design is not None, search, model.readouts(design, target), widen)


def examined_from_sizes(observed: DStudyDesign, sizes: Mapping[str, float] | None) -> DStudyDesign | None:
    """The what-if design of ``observed`` with ``sizes`` set (``ddr report --n-tasks 39 --replicates 3``).

    ``n_tasks`` sets the tasks per benchmark of every benchmark (the corpus's own counts per benchmark are
    the observed design's).  None when ``sizes`` sets nothing.

    Raises
    ------
    ValueError
        An unknown size or one below 1.
    """
    sizes = {k: v for k, v in dict(sizes or {}).items() if v is not None}
    if not sizes:
        return None
    unknown = sorted(set(sizes) - set(EXAMINED_SIZES))
    if unknown:
        raise ValueError(f"unknown design size(s) {', '.join(unknown)}; give {', '.join(EXAMINED_SIZES)}")
    for k, v in sizes.items():
        if not float(v) >= 1:
            raise ValueError(f"{k} should be at least 1, got {v!r}")
    kw = {"n_tasks": observed.effective_n_tasks, "n_benchmarks": observed.effective_n_benchmarks,
          "tasks_per_benchmark": None}
    kw.update({k: (int(v) if k == "n_models" else float(v)) for k, v in sizes.items()})
    return dataclasses.replace(observed, **kw)
