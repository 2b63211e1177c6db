"""Five estimators side by side: the method comparison of seed 000 App. G (Tables 20 and 21).

:func:`methods_table` runs, on one corpus and one model formula (the same objects the Bayesian fit
takes), every estimator that applies and returns per facet its share of the total variance:

============  ========  ==================================================================
estimator     scale     share of term k
============  ========  ==================================================================
Henderson     observed  sigma_k^2 / (sum_j sigma_j^2 + sigma_e^2), Method I, negatives floored
REML          observed  the same from the REML fit of the Gaussian LMM (lme4's lmer)
Laplace       logit     sigma_k^2 / (sum_j sigma_j^2 + pi^2/3) (glmer, nAGQ = 1)
Bayes GLMM    logit     posterior mean of the per-draw share (Table 20's convention), when a
                        cached fit of the same corpus, formula and settings exists
DISCO         none      eta_k / sum_j eta_j (seed 000 G.2), no residual row
============  ========  ==================================================================

Erho2 and Phi of the object of measurement (model by default) at the corpus's observed design
(:func:`~ddr_explorer.core.dstudy.observed_design`) come from each variance-component estimator through
:func:`~ddr_explorer.core.reliability.generalizability`, the function the D-study uses; DISCO's
analogue of Erho2 is the object grouping's eta (seed 000 App. C.5); it has no Phi.  The Bayesian LMM
on the observed scale (seed 000 C.2) is not implemented yet and has no column.
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

#: Column order and the scale of each estimator.
ESTIMATORS: dict[str, str] = {"Henderson": "observed", "REML": "observed", "Laplace": "logit",
                              "Bayes GLMM": "logit", "DISCO": "distance"}


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
                "seconds": self.seconds, "notes": self.notes}


def _coefficients(components: dict[str, float], obj: str, sizes: dict[str, float]) -> dict[str, float]:
    from ..reliability import generalizability

    comps = {k: max(float(v), 0.0) for k, v in components.items() if k != "residual"}
    try:
        rel = float(generalizability(comps | {"residual": components["residual"]}, obj, sizes, "relative")[0])
        absl = float(generalizability(comps | {"residual": components["residual"]}, obj, sizes, "absolute")[0])
    except (ValueError, KeyError):
        return {"Erho2": float("nan"), "Phi": float("nan")}
    return {"Erho2": rel, "Phi": absl}


def _shares(components: dict[str, float]) -> dict[str, float]:
    total = sum(max(v, 0.0) for v in components.values())
    return {k: max(v, 0.0) / total for k, v in components.items()}


def methods_table(data, spec: ModelSpec | str, *, posterior=None, object_of_measurement: str = "model",
                  estimators=("Henderson", "REML", "Laplace", "DISCO", "Bayes GLMM"), progress=None,
                  cancel=None) -> MethodsTable:
    """Variance shares per facet from each estimator (seed 000 Tables 20-21).

    Parameters
    ----------
    data
        A Corpus (or its canonical table: facet columns, successes, trials).
    spec
        A ModelSpec, preset name or formula.  Terms folded into the residual (the cell-level
        interaction) join the residual row, as in the Bayesian fit.
    posterior
        A fitted Bayesian GLMM of the same corpus and formula (optional): its posterior mean
        shares fill the "Bayes GLMM" column.
    object_of_measurement
        ``"model"`` or ``"system"`` for Erho2 / Phi.
    estimators
        Which columns to compute.
    progress, cancel
        ``progress(phase, i, n, eta)`` and ``cancel()``, passed to the iterative estimators.
    """
    from ..dstudy import observed_design

    spec = as_spec(spec)
    table = getattr(data, "table", data)
    design = MixedDesign.from_spec(data, spec)
    terms = [*spec.term_names, "residual"]
    try:
        sizes = observed_design(table, object_of_measurement=object_of_measurement).sizes()
    except Exception:  # a table without the four facets: Erho2 at one level of each facet
        sizes = {}
    out = MethodsTable(formula=spec.formula, terms=terms, shares={}, components={}, coefficients={}, scales={},
                       seconds={}, object_of_measurement=object_of_measurement, sizes=sizes,
                       notes=list(design.notes))

    def add(name, comps, shares, coefs, t0):
        out.components[name] = {t: float(comps.get(t, float("nan"))) for t in terms}
        out.shares[name] = {t: float(shares.get(t, float("nan"))) for t in terms}
        out.coefficients[name] = coefs
        out.scales[name] = ESTIMATORS[name]
        out.seconds[name] = time.perf_counter() - t0

    if "Henderson" in estimators:
        t0 = time.perf_counter()
        cells = build_design(data, spec).cells
        try:
            hm = henderson_method1(cells, {t.name: list(t.columns) for t in spec.terms})
            add("Henderson", hm.components, _shares(hm.components), _coefficients(hm.components,
                object_of_measurement, sizes), t0)
            if hm.flagged:
                out.notes.append(f"Henderson: negative estimate(s) floored at 0 for {', '.join(hm.flagged)}.")
        except ValueError as exc:
            out.notes.append(f"Henderson: {exc}")
    if "REML" in estimators:
        t0 = time.perf_counter()
        fit = reml(design, progress=progress, cancel=cancel)
        add("REML", fit.components, fit.shares, _coefficients(fit.components, object_of_measurement, sizes), t0)
        if not fit.converged:
            out.notes.append(f"REML: the optimiser stopped without converging ({fit.message}).")
    if "Laplace" in estimators:
        t0 = time.perf_counter()
        fit = laplace(design, progress=progress, cancel=cancel)
        add("Laplace", fit.components, fit.shares, _coefficients(fit.components, object_of_measurement, sizes), t0)
        if not fit.converged:
            out.notes.append(f"Laplace: the optimiser stopped without converging ({fit.message}).")
    if "Bayes GLMM" in estimators:
        if posterior is None:
            out.notes.append("Bayes GLMM: no cached fit of this corpus and formula; run `ddr fit` first.")
        else:
            t0 = time.perf_counter()
            from ..fitting import components_from_posterior
            from ..reliability import generalizability

            vc = components_from_posterior(posterior)
            draws = {t: np.asarray(vc.draws[t], dtype=np.float64) for t in spec.term_names if t in vc.draws}
            resid = np.broadcast_to(np.asarray(vc.residual, dtype=np.float64), next(iter(draws.values())).shape)
            total = sum(draws.values()) + resid
            shares = {t: float(np.mean(d / total)) for t, d in draws.items()}
            shares["residual"] = float(np.mean(resid / total))
            comps = {t: float(np.mean(d)) for t, d in draws.items()}
            comps["residual"] = float(np.mean(resid))
            try:
                # per draw, then the posterior mean (SPEC section 2: never a ratio of posterior means)
                coefs = {"Erho2": float(np.mean(generalizability(vc, object_of_measurement, sizes, "relative"))),
                         "Phi": float(np.mean(generalizability(vc, object_of_measurement, sizes, "absolute")))}
            except (ValueError, KeyError):
                coefs = {"Erho2": float("nan"), "Phi": float("nan")}
            add("Bayes GLMM", comps, shares, coefs, t0)
    if "DISCO" in estimators:
        t0 = time.perf_counter()
        res = disco(design)
        obj_term = {"model": "model", "system": "model:scaffold"}.get(object_of_measurement, object_of_measurement)
        coefs = {"Erho2": float(res.eta.get(obj_term, float("nan"))), "Phi": float("nan")}
        add("DISCO", res.eta, res.shares, coefs, t0)
    return out


def format_methods_table(table: MethodsTable) -> str:
    """Plain-text rendering of :class:`MethodsTable` for the terminal."""
    est = table.estimators
    w = max(12, *(len(t) for t in table.terms)) + 2
    head = f"{'facet':<{w}}" + "".join(f"{e:>12}" for e in est)
    scale = f"{'(scale)':<{w}}" + "".join(f"{table.scales[e]:>12}" for e in est)
    lines = [f"Variance shares by estimator; formula: {table.formula}", head, scale]
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
    if table.sizes:
        lines.append("Erho2/Phi at the observed design: " + ", ".join(f"{k} {v:g}" for k, v in table.sizes.items()))
    lines.append("Shares: sigma_k^2 over the total incl. the residual (observed scale: sigma_e^2; logit: pi^2/3); "
                 "Bayes: posterior mean of per-draw shares; DISCO: normalised over facets, no residual.")
    lines.append("wall time: " + ", ".join(f"{e} {table.seconds[e]:.1f} s" for e in est))
    lines.extend(f"note: {n}" for n in table.notes)
    return "\n".join(lines)
