"""The D-study answer for one design, as ``ddr dstudy`` prints it.

One function, :func:`dstudy_summary`, gathers the estimands with their
intervals, the smallest sizes that reach the target and ``P(target met)`` for a
design, from :mod:`..reliability` and :mod:`.curves`, and with a budget the
cheapest design for the target and the best design within the budget from
:func:`.budget.budget_search`; the CLI, the app's readouts and the DDR sheet all
take their numbers from it, and :func:`format_dstudy` prints them with
:mod:`..formatting`.
"""

from __future__ import annotations

from ..formatting import (convergence_verdict, estimand_symbol, facet_words, fmt_coef, fmt_design, fmt_n, fmt_prob,
                          fmt_rpd, fmt_usd, fmt_var)
from ..reliability import as_components, estimand_table, to_jsonable
from .allocation import allocation_for_summary
from ..score_reliability import LATENT_LABEL, OBSERVED_LABEL
from .curves import DStudyModel, score_scale
from .objects import by_object
from .budget import budget_search
from .sizes import DStudyDesign
from .trial_counts import design_trials_text

#: Facets a D-study can vary, with the design field each sets.
OVER = {"n_tasks": "task", "n_scaffolds": "scaffold", "n_benchmarks": "benchmark", "n_replicates": "replicate"}


def dstudy_summary(components, design: DStudyDesign, target: float | None = None, budget: float | None = None,
                   observed: DStudyDesign | None = None, verdict: dict | None = None, scale: str | None = None,
                   not_answered: dict | None = None) -> dict:
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
        Optional budget in USD: the best design on the cost frontier at that budget and the
        cheapest design reaching the target (:func:`~.budget.budget_search`).
    observed
        The corpus's own design, whose sizes set the frontier's grid (default: ``design``).
    not_answered
        Size field -> why the corpus's design cannot support its smallest size for the target
        (:func:`~ddr_explorer.core.design.overlap.sizes_not_answered`: benchmarks that share no model);
        that size's ``min_n`` is left out and the reason kept under ``not_answered``.
    verdict
        The convergence verdict of the fit the components come from
        (:meth:`~ddr_explorer.core.model.diagnostics.Diagnostics.verdict`); None for components
        that do not come from a fit here (typed in, read from a paper).
    scale
        The scale of the answers a buyer reads (``min_n``, ``p_target``, the budget's designs):
        ``"observed"`` success rates (:mod:`..score_reliability`) or ``"latent"``; default: observed
        whenever the components allow it (:func:`.curves.score_scale`).  With an observed scale the
        latent answers are beside them under ``latent``; the paper's ``estimands`` are always latent.

    Returns
    -------
    dict
        ``estimands`` (name -> median, 95% and 68% HDI, equation), ``min_n``
        (facet -> posterior distribution of the smallest size reaching the
        target, the others held at the design), ``p_target``, ``design``,
        ``target``, ``estimand`` and, with a budget, ``budget`` and ``allocation`` (the budget's
        tasks per benchmark, :func:`~.allocation.allocate_budget`, or ``{"why_none": ...}``).
    """
    c = as_components(components)
    scale = scale or score_scale(c)
    model = DStudyModel(c, scale=scale)
    target = design.default_target if target is None else float(target)
    table = estimand_table(c, design.object_of_measurement, design.sizes())
    estimands = {}
    for name, s in table.summaries.items():
        estimands[name] = {"median": s.median, "mean": s.mean, "lower95": s.hdi95[0], "upper95": s.hdi95[1],
                           "lower68": s.hdi68[0], "upper68": s.hdi68[1],
                           "equation": table.equations.get(name)}
        if s.prob_positive is not None:
            estimands[name]["prob_positive"] = s.prob_positive
    min_n = _min_n(model, c, design, target, not_answered)
    out = {
        # the verdict first: every number below is only as good as the fit behind it
        "converged": None if verdict is None else bool(verdict["converged"]),
        "verdict": verdict,
        "object": table.object,
        "facets": sorted(c.facets),  # the words of the sizes follow them (formatting.facet_words)
        "estimand": design.estimand,
        "target": target,
        "design": design.to_dict(),
        "sizes": table.sizes,
        "estimands": estimands,
        # estimands this fit cannot estimate, with the reason (never a number that follows from a left-out term)
        "not_estimable": dict(table.not_estimable),
        "estimands_scale": LATENT_LABEL,
        "scale": scale,
        "scale_label": OBSERVED_LABEL if scale == "observed" else LATENT_LABEL,
        "min_n": min_n,
        # sizes the design cannot support a minimum for, with why (never a number the data cannot back)
        "not_answered": dict(not_answered or {}),
        # model, scaffold and system read from the same fit at this design (seed 000 Table 17)
        "by_object": by_object(c, design.sizes(), design.n_models),
        "p_target": model.p_target_met(design, target),
        "n_draws": c.n_draws if hasattr(c, "n_draws") else None,
        "source": c.source,
    }
    if design.mean_price() > 0:  # reliability per dollar (DDR paper 2026), the app's and the sheet's figure
        r = model.readouts(design, target)
        out["rpd"] = {"median": r.rpd.median, "lower95": r.rpd.hdi95[0], "upper95": r.rpd.hdi95[1],
                      "coefficient": r.coefficient.median, "estimand": r.estimand, "scale": r.scale,
                      "price_per_trial": design.mean_price()}
    if scale == "observed":
        out["observed_scores"] = _observed_block(model, design)
        out["latent"] = {"scale_label": LATENT_LABEL, "min_n": _min_n(model.latent, c, design, target, not_answered),
                         "p_target": model.latent.p_target_met(design, target)}
    if budget is not None:
        out["budget"] = budget_search(c, design, target=target, budget=budget, reference=observed,
                                      scale=scale).to_dict()
        alloc, why = allocation_for_summary(c, design, budget)
        out["allocation"] = alloc if alloc is not None else {"why_none": why}
    return to_jsonable(out)


def _min_n(model: DStudyModel, c, design: DStudyDesign, target: float, not_answered: dict | None = None) -> dict:
    """Posterior distribution of the smallest size of each facet reaching the target (others at the design);
    the facets in ``not_answered`` are left out (the design cannot support a minimum for them)."""
    min_n = {}
    for over, facet in OVER.items():
        # a facet the fit has no term for cannot change reliability, except replicates (they divide e)
        if facet != "replicate" and facet not in c.facets:
            continue
        if facet in design.object_facets or over in (not_answered or {}):
            continue
        req = model.required_n(design, over=over, target=target)
        q = req.quantiles
        min_n[over] = {"median": q[0.5], "lower95": q[0.025], "upper95": q[0.975],
                       "p_reachable": req.p_reachable, "observed": req.observed_n}
    return min_n


def _observed_block(model: DStudyModel, design: DStudyDesign) -> dict:
    """The observed-score coefficients of the design (success rates; :mod:`..score_reliability`)."""
    r = model.readouts(design)

    def row(s):
        return {"median": s.median, "lower95": s.hdi95[0], "upper95": s.hdi95[1], "lower68": s.hdi68[0],
                "upper68": s.hdi68[1]}
    return {"label": OBSERVED_LABEL, "method": SCORE_METHOD, "Erho2": row(r.erho2), "Phi": row(r.phi),
            "Erho2_task_ceiling" if design.claim == "relative" else "Phi_task_ceiling": row(r.ceiling)}


#: How the observed-score coefficient is computed, in one line (the CLI, the JSON and the sheet).
SCORE_METHOD = ("expected correlation of the success rates of two fresh evaluations of the design, per posterior "
                "draw, from the fitted binomial GLMM by exact logit-normal moments (Gauss-Hermite quadrature; "
                "checked against simulation)")


#: What a negative model-versus-scaffold contrast means, printed wherever the contrasts are.
DELTA_RHO2_NOTE = ("delta_rho2_*: the model's share minus the scaffold's share of one system variance (Hardy et al. "
                   "2026, Eqs. 11-15), in [-1, 1]: below 0 where the scaffold matters more than the model, so an "
                   "interval reaching below 0 means the data do not say which matters more; P(>0) is the "
                   "posterior probability that the model does.")


def format_dstudy(s: dict) -> str:
    """Readable text of :func:`dstudy_summary` (numbers through :mod:`..formatting`)."""
    d = s["design"]
    sym = estimand_symbol(s["estimand"])
    v = s.get("verdict")
    if v is None:
        head = "fit: none here (components supplied): no convergence check"
    elif v["converged"]:
        head = f"fit: {convergence_verdict(v)}"
    else:
        head = (f"fit: {convergence_verdict(v)}; EVERY NUMBER BELOW IS PROVISIONAL: "
                + "; ".join(v.get("problems") or []))
    cost = fmt_usd(d["cost"]) if d["cost"] > 0 else "no prices"
    # the app's and the sheet's words for the sizes (a ddr fit: tasks, traces per agent-task pair, agents)
    facets = s.get("facets") or ("benchmark", "task", "model", "scaffold")
    w = facet_words(d["object_of_measurement"], facets)
    sizes = [w.count("n_tasks", d["effective_n_tasks"] if d.get("tasks_per_benchmark") else d["n_tasks"])]
    sizes += [w.count(k, d[k]) for k in w.sizes if k != "n_tasks"]
    sizes += [w.count("n_replicates", d["n_replicates"])] + [w.count(f, n) for f, n in d["extra_facets"].items()]
    lines = [head, f"D-study for {s['object']} ({'ranking' if s['estimand'] == 'Erho2' else 'absolute decisions'}); "
             f"components from {s['source']}",
             f"design: {' x '.join(sizes)}; {fmt_n(d['n_models'])} {w.compared.lower()}; {cost}",
             *([f"  {fmt_rpd(r['median'], r['coefficient'], r['price_per_trial'], r['estimand'])}"]
               if (r := s.get("rpd")) else []),
             # the design's count is of a full design; the file's own count beside it
             f"{w.noun('n_replicates').lower()}: {design_trials_text(d, w, s.get('corpus_counts'), 'x')}",
             *([f"sizes from {s['design_source']}"] if s.get("design_source") else []), "",
             f"{'estimand':<34}{'median':>9}{'95% interval':>22}"]
    for name, e in s["estimands"].items():
        # a contrast's P(>0), which DELTA_RHO2_NOTE explains below, printed where the note says it is
        pp = f"   P(>0) = {fmt_prob(e['prob_positive'])}" if e.get("prob_positive") is not None else ""
        lines.append(f"{name:<34}{fmt_coef(e['median']):>9}   [{fmt_coef(e['lower95'])}, {fmt_coef(e['upper95'])}]{pp}")
    for name, why in (s.get("not_estimable") or {}).items():
        lines.append(f"{name:<34}{'n/a':>9}   not estimable: {why}")
    if any(name.startswith("delta_rho2") for name in s["estimands"]):
        lines.append(DELTA_RHO2_NOTE)
    lines += format_by_object(s.get("by_object"))
    lines += _format_answers(s, sym, w)
    for over, why in (s.get("not_answered") or {}).items():
        lines.append(f"  smallest {w.axis(over):<26} not answered: {why}")
    if "budget" in s:
        b = s["budget"]
        money = fmt_usd(b["budget"])
        if b["cheapest_for_target"] is not None:
            lines.append(f"cheapest design for the target: {fmt_design(b['cheapest_for_target'], s['estimand'], w)}")
        else:
            lines.append(f"cheapest design for the target: no design of the grid reaches {fmt_coef(s['target'])}")
        if b["best_design"] is not None:
            lines.append(f"best design within {money}: {fmt_design(b['best_design'], s['estimand'], w)}")
        else:
            lines.append(f"best design within {money}: {b['why_no_budget_design']}")
        lines += format_allocation(s.get("allocation"), s["estimand"], w.allocation)
    return "\n".join(lines)


def _format_answers(s: dict, sym: str, w) -> list[str]:
    """The target lines: observed success rates first where the fit gives them, the latent figures beside."""
    def n(x):
        return fmt_n(float("inf") if x is None else x)

    obs = s.get("observed_scores")
    lines = [""]
    if obs is not None:
        e = obs[s["estimand"]]
        lines += [f"{sym} of observed success rates (the scores a reader compares) at this design: "
                  f"{fmt_coef(e['median'])} [{fmt_coef(e['lower95'])}, {fmt_coef(e['upper95'])}]",
                  f"  ({obs['method']}); the table above is the latent ability ranking (Hardy et al. 2026)"]
    scale = "observed success rates" if obs is not None else "latent scale"
    if obs is None:
        lines.append("the figures below are the latent ability ranking (Hardy et al. 2026), not the correlation of "
                     "success rates; a components file gets that with --success-rate P (the population's mean)")
    lines.append(f"target {sym} >= {fmt_coef(s['target'])} ({scale}):  P(target met) = {fmt_prob(s['p_target'])}")
    lat = s.get("latent")
    if lat is not None:
        lines[-1] += f"   latent ability ranking: {fmt_prob(lat['p_target'])}"
    for over, m in s["min_n"].items():
        line = (f"  smallest {w.axis(over):<26} median {n(m['median']):>8}   95% [{n(m['lower95'])}, {n(m['upper95'])}]"
                f"   P(reachable) = {fmt_prob(m['p_reachable'])}")
        if lat is not None and over in lat["min_n"]:
            line += f"   latent: {n(lat['min_n'][over]['median'])}"
        lines.append(line)
    return lines


def format_by_object(objects: dict | None) -> list[str]:
    """Lines of the ``by_object`` block: Erho2, the task-only ceiling and the task reliability per object."""
    if not objects or len(objects) < 2:
        return []
    out = ["", f"{'by object of measurement':<26}{'Erho2':>9}{'ceiling':>10}{'task rel.':>11}   (medians, latent)"]
    for name, e in objects.items():
        task = e.get("task_reliability")
        out.append(f"  {name:<24}{fmt_coef(e['Erho2']['median']):>9}{fmt_coef(e['Erho2_task_ceiling']['median']):>10}"
                   f"{fmt_coef(task['median']) if task else 'n/a':>11}")
    return out


def format_allocation(a: dict | None, estimand: str, head: str = "Tasks per benchmark") -> list[str]:
    """Lines of the budget's tasks per benchmark (:func:`~.allocation.allocate_budget`), or why there are none.

    ``head``: :attr:`~..formatting.FacetWords.allocation` of the fit (its words for the allocation)."""
    if not a:
        return []
    if "why_none" in a:
        return [f"{head.lower()} within the budget: {a['why_none']}"]
    sym = estimand_symbol(estimand)
    med = {k: a["summaries"][k]["median"] for k in a["summaries"]}
    out = [f"tasks per benchmark within {fmt_usd(a['budget'])} (reliability-aware allocation)",
           f"  {a['variance_source']}",
           f"  {'benchmark':<24}{'USD/trial':>10}{'task var':>10}{'tasks':>8}{'equal':>8}"]
    for b in a["benchmarks"]:
        out.append(f"  {b:<24}{fmt_usd(a['prices'][b]):>10}{fmt_var(a['task_variance'][b]):>10}"
                   f"{fmt_n(a['tasks'][b]):>8}{fmt_n(a['equal'].get(b, 0)):>8}")
    line = f"  {sym} {fmt_coef(med['optimal'])} for {fmt_usd(a['costs']['optimal'])}"
    if "equal" in med:
        line += f"; equal split {fmt_coef(med['equal'])} for {fmt_usd(a['costs']['equal'])}"
    out.append(line)
    return out
