"""The D-study answer for one design, as ``ddr dstudy`` prints it.

One function, :func:`dstudy_summary`, gathers the estimands with their
intervals, the smallest sizes that reach the target and ``P(target met)`` for a
design, from :mod:`.reliability` and :mod:`.dstudy`; the CLI, the app's
readouts and the DDR sheet all take their numbers from it.
"""

from __future__ import annotations

import math

from .dstudy import Design, DStudyModel, cost_frontier
from .reliability import as_components, estimand_table, to_jsonable

#: Facets a D-study can vary, with the design field each sets.
OVER = {"n_tasks": "task", "n_scaffolds": "scaffold", "n_benchmarks": "benchmark", "n_replicates": "replicate"}


def dstudy_summary(components, design: Design, target: float | None = None, budget: float | None = None) -> dict:
    """Estimands, minimum sizes and P(target met) for a design.

    Parameters
    ----------
    components
        Variance-component draws (:class:`~.reliability.VarianceComponents` or a mapping).
    design
        The design the user asks about.
    target
        Target of the claim's coefficient (Erho2 >= 0.85 for rankings, Phi >= 0.90
        for thresholds by default; SPEC sec. 4).
    budget
        Optional budget in USD: the best design on the cost frontier at that budget.

    Returns
    -------
    dict
        ``estimands`` (name -> median, 95% and 68% HDI, equation), ``min_n``
        (facet -> posterior distribution of the smallest size reaching the
        target, the others held at the design), ``p_target``, ``design``,
        ``target``, ``estimand`` and, with a budget, ``budget``.
    """
    c = as_components(components)
    model = DStudyModel(c)
    target = design.default_target if target is None else float(target)
    table = estimand_table(c, design.object_of_measurement, design.sizes())
    estimands = {}
    for name, s in table.summaries.items():
        estimands[name] = {"median": s.median, "lower95": s.hdi95[0], "upper95": s.hdi95[1],
                           "lower68": s.hdi68[0], "upper68": s.hdi68[1],
                           "equation": table.equations.get(name)}
        if s.prob_positive is not None:
            estimands[name]["prob_positive"] = s.prob_positive
    min_n = {}
    for over, facet in OVER.items():
        # a facet the fit has no term for cannot change reliability, except replicates (they divide e)
        if facet != "replicate" and facet not in c.facets:
            continue
        if facet in design.object_facets:
            continue
        req = model.required_n(design, over=over, target=target)
        q = req.quantiles
        min_n[over] = {"median": q[0.5], "lower95": q[0.025], "upper95": q[0.975],
                       "p_reachable": req.p_reachable, "observed": req.observed_n}
    out = {
        "object": table.object,
        "estimand": design.estimand,
        "target": target,
        "design": design.to_dict(),
        "sizes": table.sizes,
        "estimands": estimands,
        "min_n": min_n,
        "p_target": model.p_target_met(design, target),
        "n_draws": c.n_draws if hasattr(c, "n_draws") else None,
        "source": c.source,
    }
    if budget is not None:
        if design.mean_price() <= 0:
            out["budget"] = {"budget": budget, "error": "no price per trial: give --price-per-trial or a cost column"}
        else:
            frontier = cost_frontier(c, design, target=target)
            k = frontier.best_at_budget(budget)
            out["budget"] = {"budget": budget,
                             "best_design": None if k is None else frontier.design_at(k),
                             "cheapest_for_target": (None if frontier.cheapest is None
                                                     else frontier.design_at(frontier.cheapest))}
    return to_jsonable(out)


def format_dstudy(s: dict) -> str:
    """Readable text of :func:`dstudy_summary`."""
    d = s["design"]
    lines = [f"D-study for {s['object']} ({'ranking' if s['estimand'] == 'Erho2' else 'absolute decisions'}); "
             f"components from {s['source']}",
             f"design: {d['n_tasks']:g} tasks x {d['n_scaffolds']:g} scaffolds x {d['n_benchmarks']:g} benchmarks "
             f"x {d['n_replicates']:g} replicates; {d['trials']:,.0f} trials, ${d['cost']:,.2f}", "",
             f"{'estimand':<34}{'median':>9}{'95% interval':>22}"]

    def num(x):
        return "   n/a" if x is None else f"{x:.3f}"

    for name, e in s["estimands"].items():
        lines.append(f"{name:<34}{num(e['median']):>9}   [{num(e['lower95'])}, {num(e['upper95'])}]")
    lines += ["", f"target {s['estimand']} >= {s['target']:.2f}:  P(target met) = {s['p_target']:.2f}"]
    for over, m in s["min_n"].items():
        def n(x):
            return "never" if x is None or (isinstance(x, float) and math.isinf(x)) else f"{x:,.0f}"
        lines.append(f"  smallest {over:<13} median {n(m['median']):>8}   95% [{n(m['lower95'])}, {n(m['upper95'])}]"
                     f"   P(reachable) = {m['p_reachable']:.2f}")
    if "budget" in s:
        b = s["budget"]
        if "error" in b:
            lines.append(f"budget ${b['budget']:,.2f}: {b['error']}")
        elif b["best_design"]:
            bd = b["best_design"]
            lines.append(f"budget ${b['budget']:,.2f}: best design {bd['n_tasks']:g} tasks x {bd['n_scaffolds']:g} "
                         f"scaffolds x {bd['n_benchmarks']:g} benchmarks, median {s['estimand']} {bd['median']:.3f} "
                         f"(${bd['cost']:,.2f})")
        else:
            lines.append(f"budget ${b['budget']:,.2f}: no design of the grid fits the budget")
    return "\n".join(lines)
