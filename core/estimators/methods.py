"""Five estimators side by side: the method comparison of seed 000 (Hardy et al. 2026) App. G (Tables 20 and 21).

:func:`methods_table` runs, on one corpus and one model formula (the same objects the Bayesian fit
takes), every estimator that applies and returns per facet its share of the total variance:

============  ========  ==================================================================
estimator     scale     share of term k
============  ========  ==================================================================
Henderson     observed  sigma_k^2 / (sum_j sigma_j^2 + sigma_e^2), Method I, negatives floored
REML          observed  the same from the REML fit of the Gaussian LMM (lme4's lmer)
Bayes LMM     observed  posterior mean of the per-draw share of the Bayesian LMM (seed 000 C.2)
Laplace       logit     sigma_k^2 / (sum_j sigma_j^2 + pi^2/3) (glmer, nAGQ = 1)
Bayes GLMM    logit     posterior mean of the per-draw share (Table 20's convention), when a
                        cached fit of the same corpus, formula and settings exists
DISCO         none      eta_k / sum_j eta_j (seed 000 G.2), no residual row
============  ========  ==================================================================

Erho2 and Phi of the object of measurement (model by default) at the corpus's observed design
(:func:`~ddr_explorer.core.dstudy.observed_design`) come from each variance-component estimator through
:func:`~ddr_explorer.core.reliability.generalizability`, the function the D-study uses; DISCO's
analogue of Erho2 is the object grouping's eta (seed 000 App. C.5); it has no Phi.  The Bayesian
estimators' Erho2 and Phi are posterior means of the per-draw coefficients, with 95% HDIs in
``intervals``; the Bayesian LMM's are the *score* reliabilities of seed 000 G.5 (Phi <= Erho2 draw by
draw: reliable rankings need not mean reliable scores), and its convergence verdict is in
``convergence`` (a column from an unconverged fit is labelled so in every view).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..henderson import henderson_method1
from ..model.design_matrix import build_design
from ..model.formula import ModelSpec, as_spec
from .design import MixedDesign
from .disco import disco
from .laplace import laplace
from .reml import reml
from ..references import cite

#: Column order and the scale of each estimator.
ESTIMATORS: dict[str, str] = {"Henderson": "observed", "REML": "observed", "Bayes LMM": "observed",
                              "Laplace": "logit", "Bayes GLMM": "logit", "DISCO": "distance"}


@dataclass
class MethodsTable:
    """Per-facet variance shares from every available estimator, and Erho2 / Phi where defined.

    Attributes
    ----------
    terms
        Row names: the model's terms in formula order, then ``"residual"``.
    shares
        Estimator -> term -> share (NaN where undefined, e.g. DISCO's residual).
    components
        Estimator -> term -> sigma^2 on the estimator's scale (DISCO: eta).
    coefficients
        Estimator -> {"Erho2": value, "Phi": value} for :attr:`object_of_measurement` (NaN if undefined).
    scales
        Estimator -> ``"observed"``, ``"logit"`` or ``"distance"``.
    seconds
        Estimator -> wall time.
    notes
        Why an estimator is missing, flagged negative estimates, and similar remarks.
    intervals
        Estimator -> {"Erho2": (lo, hi), "Phi": (lo, hi)}: 95% HDIs of the per-draw coefficients
        (Bayesian estimators only).
    convergence
        Estimator -> the convergence verdict (:meth:`~ddr_explorer.core.model.diagnostics.Diagnostics.verdict`)
        of a sampled estimator.
    requested_formula
        The formula or preset asked for (:attr:`formula` is the one every estimator fitted).
    dropped
        The preset's terms the design cannot separate, left out of every estimator
        (:meth:`~ddr_explorer.core.design.presets.DroppedTerm.to_dict`: term, confounded_with,
        absorbed_by, reason).
    disco_eta
        DISCO's eta of the object's grouping (seed 000 App. C.5): its analogue of Erho2, not a
        generalizability coefficient, so it has its own row.
    """

    formula: str
    terms: list[str]
    shares: dict[str, dict[str, float]]
    components: dict[str, dict[str, float]]
    coefficients: dict[str, dict[str, float]]
    scales: dict[str, str]
    seconds: dict[str, float]
    object_of_measurement: str = "model"
    sizes: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    intervals: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)
    convergence: dict[str, dict] = field(default_factory=dict)
    #: The Bayesian LMM's per-draw score reliability at :attr:`sizes`
    #: (:class:`~.bayes_lmm.ScoreReliability`, seed 000 G.5), None when that column was not run: the DDR
    #: sheet prints what the comparison computed rather than running the LMM again.
    score_reliability: object = None
    requested_formula: str | None = None
    dropped: list[dict] = field(default_factory=list)
    disco_eta: float = float("nan")

    def converged(self, estimator: str) -> bool | None:
        """The gate's verdict on a sampled estimator (None: not sampled, or verdict unknown)."""
        v = self.convergence.get(estimator)
        return None if v is None else v.get("converged")

    def score_gap(self) -> dict | None:
        """Seed 000 G.5 in numbers: the Bayesian LMM's score reliability Phi against its ranking
        reliability Erho2 (posterior means and 95% HDIs), or None without that column."""
        if "Bayes LMM" not in self.coefficients:
            return None
        c, iv = self.coefficients["Bayes LMM"], self.intervals.get("Bayes LMM", {})
        return {"Phi": c["Phi"], "Erho2": c["Erho2"], "Phi_hdi95": iv.get("Phi"), "Erho2_hdi95": iv.get("Erho2"),
                "converged": self.converged("Bayes LMM")}

    @property
    def estimators(self) -> list[str]:
        return [e for e in ESTIMATORS if e in self.shares]

    def to_dict(self) -> dict:
        def clean(v):
            return None if isinstance(v, float) and math.isnan(v) else v

        return {"formula": self.formula, "terms": self.terms, "estimators": self.estimators,
                "scales": self.scales, "object_of_measurement": self.object_of_measurement, "sizes": self.sizes,
                "shares": {e: {t: clean(v) for t, v in d.items()} for e, d in self.shares.items()},
                "components": {e: {t: clean(v) for t, v in d.items()} for e, d in self.components.items()},
                "coefficients": {e: {k: clean(v) for k, v in d.items()} for e, d in self.coefficients.items()},
                "intervals": {e: {k: list(v) for k, v in d.items()} for e, d in self.intervals.items()},
                "convergence": self.convergence, "seconds": self.seconds, "notes": self.notes,
                "requested_formula": self.requested_formula or self.formula, "terms_left_out": self.dropped,
                "disco_eta": clean(self.disco_eta)}


def _coefficients(components: dict[str, float], obj: str, sizes: dict[str, float]) -> dict[str, float]:
    from ..reliability import generalizability

    comps = {k: max(float(v), 0.0) for k, v in components.items() if k != "residual"}
    try:
        rel = float(generalizability(comps | {"residual": components["residual"]}, obj, sizes, "relative")[0])
        absl = float(generalizability(comps | {"residual": components["residual"]}, obj, sizes, "absolute")[0])
    except (ValueError, KeyError):
        return {"Erho2": float("nan"), "Phi": float("nan")}
    return {"Erho2": rel, "Phi": absl}


def _bayes_coefficients(vc, obj: str, sizes) -> tuple[dict, dict]:
    """Posterior means and 95% HDIs of Erho2 and Phi, each computed per draw first (SPEC section 2:
    never a ratio of posterior means)."""
    from ..reliability import generalizability, hdi

    coefs, ivs = {}, {}
    for name, claim in (("Erho2", "relative"), ("Phi", "absolute")):
        try:
            x = generalizability(vc, obj, sizes, claim)
        except (ValueError, KeyError):
            coefs[name] = float("nan")
            continue
        coefs[name] = float(np.mean(x))
        lo, hi = hdi(x, 0.95)
        ivs[name] = (float(lo), float(hi))
    return coefs, ivs


def _shares(components: dict[str, float]) -> dict[str, float]:
    total = sum(max(v, 0.0) for v in components.values())
    return {k: max(v, 0.0) / total for k, v in components.items()}


def methods_table(data, spec: ModelSpec | str, *, posterior=None, object_of_measurement: str | None = None,
                  estimators=("Henderson", "REML", "Bayes LMM", "Laplace", "DISCO", "Bayes GLMM"), progress=None,
                  cancel=None, lmm_settings=None, strict_terms: bool = False) -> MethodsTable:
    """Variance shares per facet from each estimator (seed 000 Tables 20-21).

    Every estimator fits the formula the Bayesian fit fits: a preset is first reduced to the terms
    the corpus's design separates (:func:`~..design.presets.supported_spec`, as
    :func:`~..fitting.fit_corpus` does), so no column splits a variance the data cannot split (a
    scaffold with one level, task:model with one trial per cell).  The terms left out are in
    :attr:`MethodsTable.dropped` and the notes.

    Parameters
    ----------
    data
        A Corpus (or its canonical table: facet columns, successes, trials).
    spec
        A ModelSpec, preset name or formula.  Terms folded into the residual (the cell-level
        interaction) join the residual row, as in the Bayesian fit.
    posterior
        A fitted Bayesian GLMM of the same corpus and formula (optional): its posterior mean
        shares fill the "Bayes GLMM" column.  A posterior of other terms is not used (a note says so).
    object_of_measurement
        ``"model"``, ``"system"`` or ``"agent"`` for Erho2 / Phi; None: the model's own
        (:func:`~..reliability.object_for_terms`: agent for the ddr preset, seed 003 (DDR paper 2026) Eq. 1, else model).
    estimators
        Which columns to compute.
    progress, cancel
        ``progress(phase, i, n, eta)`` and ``cancel()``, passed to the iterative estimators.
    lmm_settings
        :class:`~.bayes_lmm.BayesLmmSettings` of the Bayesian LMM (default: 4 chains, continued until
        the gate passes or 8,000 draws per chain).
    strict_terms
        Refuse a preset with terms the design cannot separate
        (:class:`~..design.presets.UnsupportedTermsError`, naming the supported formula) instead of
        comparing the estimators on the reduced formula.

    Raises
    ------
    UnsupportedTermsError
        With ``strict_terms``, when the preset has terms the design cannot separate.
    """
    from ..design.presets import UnsupportedTermsError, supported_spec
    from ..dstudy import observed_design
    from ..reliability import object_for_terms, split_term

    check = supported_spec(data, as_spec(spec))
    if check.changed and strict_terms:
        raise UnsupportedTermsError(check)
    spec = check.spec
    object_of_measurement = object_for_terms(spec.term_names, object_of_measurement)
    table = getattr(data, "table", data)
    design = MixedDesign.from_spec(data, spec)
    facets = {f for t in spec.term_names for f in split_term(t)}  # seed 003's steps and categories are sized too
    try:
        sizes = observed_design(table, object_of_measurement=object_of_measurement, facets=facets).sizes()
    except Exception:  # a table without the four facets: Erho2 at one level of each facet
        sizes = {}
    out = MethodsTable(formula=spec.formula, terms=[*spec.term_names, "residual"], shares={}, components={},
                       coefficients={}, scales={}, seconds={}, object_of_measurement=object_of_measurement,
                       sizes=sizes, notes=[*([check.note] if check.note else []), *design.notes],
                       requested_formula=check.requested.formula,
                       dropped=[d.to_dict() for d in check.dropped])

    def henderson():
        cells = build_design(data, spec).cells
        return henderson_method1(cells, {t.name: list(t.columns) for t in spec.terms})

    _run_estimators(out, design, henderson, spec.priors, estimators, progress, cancel, lmm_settings)
    if "Bayes GLMM" in estimators:
        _bayes_glmm_column(out, spec, posterior)
    return out


def _run_estimators(out: MethodsTable, design: MixedDesign, henderson, priors, estimators, progress, cancel,
                    lmm_settings, scores=None) -> None:
    """Fill ``out`` with the columns of every estimator but the cached Bayesian GLMM.

    ``henderson()`` gives the Henderson Method I result of the same terms; ``scores`` (numeric
    observations and each term's level of every observation) lets DISCO decompose a score table.
    """
    obj, sizes, terms = out.object_of_measurement, out.sizes, out.terms

    def add(name, comps, shares, coefs, t0):
        out.components[name] = {t: float(comps.get(t, float("nan"))) for t in terms}
        out.shares[name] = {t: float(shares.get(t, float("nan"))) for t in terms}
        out.coefficients[name] = coefs
        out.scales[name] = ESTIMATORS[name]
        out.seconds[name] = time.perf_counter() - t0

    if "Henderson" in estimators:
        t0 = time.perf_counter()
        try:
            hm = henderson()
            add("Henderson", hm.components, _shares(hm.components), _coefficients(hm.components, obj, sizes), t0)
            if hm.flagged:
                out.notes.append(f"Henderson: negative estimate(s) floored at 0 for {', '.join(hm.flagged)}.")
        except ValueError as exc:
            out.notes.append(f"Henderson: {exc}")
    if "REML" in estimators:
        t0 = time.perf_counter()
        fit = reml(design, progress=progress, cancel=cancel)
        add("REML", fit.components, fit.shares, _coefficients(fit.components, obj, sizes), t0)
        if not fit.converged:
            out.notes.append(f"REML: the optimiser stopped without converging ({fit.message}).")
    if "Bayes LMM" in estimators:
        from .bayes_lmm import bayes_lmm

        t0 = time.perf_counter()
        fit = bayes_lmm(design, priors, lmm_settings, progress=progress, cancel=cancel)
        add("Bayes LMM", fit.posterior_means(), fit.shares(), {}, t0)
        coefs, ivs = _bayes_coefficients(fit.components(), obj, sizes)
        out.coefficients["Bayes LMM"], out.intervals["Bayes LMM"] = coefs, ivs
        out.convergence["Bayes LMM"] = fit.diagnostics.verdict()
        if obj in ("model", "system"):  # the objects score_reliability defines
            from .bayes_lmm import score_reliability

            out.score_reliability = score_reliability(fit, obj, sizes)
        if not fit.converged:
            out.notes.append("Bayes LMM: NOT converged (" + "; ".join(fit.diagnostics.problems)
                             + "): its column is provisional.")
    if "Laplace" in estimators:
        if design.binary:
            t0 = time.perf_counter()
            fit = laplace(design, progress=progress, cancel=cancel)
            add("Laplace", fit.components, fit.shares, _coefficients(fit.components, obj, sizes), t0)
            if not fit.converged:
                out.notes.append(f"Laplace: the optimiser stopped without converging ({fit.message}).")
        else:
            out.notes.append("Laplace: the logit-scale GLMM needs a 0/1 response; this response is a numeric "
                             "score, so the observed-scale estimators are the ones that apply.")
    if "DISCO" in estimators:
        from .disco import disco_scores

        t0 = time.perf_counter()
        res = disco(design) if design.binary or scores is None else disco_scores(*scores)
        obj_term = {"model": "model", "system": "model:scaffold"}.get(obj, obj)
        # DISCO's eta of the object's grouping is its analogue of Erho2 (seed 000 App. C.5), kept apart from
        # the Erho2 row: it is not a generalizability coefficient.
        add("DISCO", res.eta, res.shares, {"Erho2": float("nan"), "Phi": float("nan")}, t0)
        out.disco_eta = float(res.eta.get(obj_term, float("nan")))


def _bayes_glmm_column(out: MethodsTable, spec: ModelSpec, posterior) -> None:
    """The Bayes GLMM column from a cached fit of the same terms (never fitted here)."""
    if posterior is None:
        out.notes.append(f"Bayes GLMM: no cached fit of {spec.formula} with these sampler settings; "
                         "`ddr fit` (same preset or formula) stores one.")
        return
    fitted = tuple(getattr(getattr(posterior, "spec", None), "term_names", ()) or posterior.sigma)
    if set(fitted) != set(spec.term_names):
        out.notes.append(f"Bayes GLMM: the fit given is of {' + '.join(fitted)}, not of the compared formula "
                         f"{spec.formula}: no Bayes GLMM column.")
        return
    t0 = time.perf_counter()
    from ..fitting import components_from_posterior

    obj, sizes = out.object_of_measurement, out.sizes
    vc = components_from_posterior(posterior)
    draws = {t: np.asarray(vc.draws[t], dtype=np.float64) for t in spec.term_names if t in vc.draws}
    resid = np.broadcast_to(np.asarray(vc.residual, dtype=np.float64), next(iter(draws.values())).shape)
    total = sum(draws.values()) + resid
    shares = {t: float(np.mean(d / total)) for t, d in draws.items()}
    shares["residual"] = float(np.mean(resid / total))
    comps = {t: float(np.mean(d)) for t, d in draws.items()}
    comps["residual"] = float(np.mean(resid))
    coefs, ivs = _bayes_coefficients(vc, obj, sizes)
    out.components["Bayes GLMM"] = {t: float(comps.get(t, float("nan"))) for t in out.terms}
    out.shares["Bayes GLMM"] = {t: float(shares.get(t, float("nan"))) for t in out.terms}
    out.coefficients["Bayes GLMM"] = coefs
    out.scales["Bayes GLMM"] = ESTIMATORS["Bayes GLMM"]
    out.seconds["Bayes GLMM"] = time.perf_counter() - t0
    out.intervals["Bayes GLMM"] = ivs
    diag = getattr(posterior, "diagnostics", None)
    if diag is not None and hasattr(diag, "verdict"):
        out.convergence["Bayes GLMM"] = diag.verdict()


def format_methods_table(table: MethodsTable) -> str:
    """Plain-text rendering of :class:`MethodsTable` for the terminal."""
    est = table.estimators
    w = max(12, *(len(t) for t in table.terms)) + 2
    head = f"{'facet':<{w}}" + "".join(f"{e:>12}" for e in est)
    scale = f"{'(scale)':<{w}}" + "".join(f"{table.scales[e]:>12}" for e in est)
    lines = [f"Variance shares by estimator; formula: {table.formula}"]
    if table.dropped:  # before the numbers: every column is of the reduced formula
        lines.append("Terms left out of every estimator (this design cannot separate them; Hardy et al. 2026, "
                     "Prop. E.2): " + "; ".join(d["reason"] for d in table.dropped) + ".")
    lines += [head, scale]
    for t in table.terms:
        row = f"{t:<{w}}"
        for e in est:
            v = table.shares[e].get(t, float("nan"))
            row += f"{'NA' if math.isnan(v) else f'{v:.3f}':>12}"
        lines.append(row)
    obj = table.object_of_measurement
    for coef in ("Erho2", "Phi"):
        row = f"{coef + ' (' + obj + ')':<{w}}"
        for e in est:
            v = table.coefficients[e].get(coef, float("nan"))
            row += f"{'NA' if math.isnan(v) else f'{v:.3f}':>12}"
        lines.append(row)
    if "DISCO" in est and not math.isnan(table.disco_eta):
        lines.append(f"DISCO eta of the {obj} grouping (its analogue of Erho2, Hardy et al. 2026, App. C.5): "
                     f"{table.disco_eta:.3f}")
    gap = table.score_gap()
    if gap is not None:
        lines.append(score_gap_sentence(gap, obj))
    if table.sizes:
        lines.append("Erho2/Phi at the observed design: " + ", ".join(f"{k} {v:g}" for k, v in table.sizes.items()))
    lines.append("Shares: sigma_k^2 over the total incl. the residual (observed scale: sigma_e^2; logit: pi^2/3); "
                 "Bayes: posterior mean of per-draw shares; DISCO: normalised over facets, no residual.")
    lines.append("wall time: " + ", ".join(f"{e} {table.seconds[e]:.1f} s" for e in est))
    from ..design.presets import TERMS_NOTE_PREFIX

    # the terms left out are said once, above the numbers
    lines.extend(f"note: {n}" for n in table.notes if not (table.dropped and n.startswith(TERMS_NOTE_PREFIX)))
    return "\n".join(lines)


def score_gap_sentence(gap: dict, obj: str = "model", *, symbols: tuple[str, str] = ("Phi", "Erho2")) -> str:
    """Seed 000 G.5's point in one sentence, from :meth:`MethodsTable.score_gap` (plain text)."""
    from ..formatting import fmt_coef

    def iv(v):
        return "" if not v else f" [{fmt_coef(v[0])}, {fmt_coef(v[1])}]"

    phi, erho = symbols
    head = (f"Scores vs rankings (Bayes LMM, observed scale, {obj}): {phi} {fmt_coef(gap['Phi'])}{iv(gap['Phi_hdi95'])} "
            f"vs {erho} {fmt_coef(gap['Erho2'])}{iv(gap['Erho2_hdi95'])} (posterior means, 95% HDIs)")
    if gap["Phi"] < gap["Erho2"]:
        tail = ("; score reliability is lower than ranking reliability: reliable rankings do not imply reliable "
                f"scores ({cite('hardy2026', 'App. G.5')})")
    elif gap["Phi"] == gap["Erho2"]:  # no absolute-only error term (Eq. 22 holds with equality)
        tail = f"; scores are as reliable as rankings here ({cite('hardy2026', 'App. G.5, Eq. 22')})"
    else:  # undefined (NaN) at this design
        tail = ""
    if gap.get("converged") is False:
        tail += "; NOT converged: provisional"
    return head + tail + "."
