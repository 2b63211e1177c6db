"""A preview of the D-study from point estimates, while the posterior runs.

Sampling the posterior of a corpus takes from a minute (Terminal-Bench 2.0) to half an hour (BRIDGE
pooled) on a 2-core workstation.  A point estimate of the variance components takes seconds, and the
D-study is a function of the components, so the app can draw the D-study of the point estimates
first and replace it with the posterior's when the fit ends.  Everything here returns an ordinary
:class:`~.reliability.VarianceComponents` (one "draw": the estimates) with ``preview=True``, so the
D-study functions (:mod:`.dstudy`) take it unchanged, and nothing downstream can take it for a
posterior: the app draws it dashed and without bands under a banner, ``ddr dstudy --preview`` labels
it, and the DDR sheet refuses it (:class:`~.report.inputs.ReportInputs`).

Which point estimates
---------------------
The D-study works on the latent logit scale with the logistic residual pi^2/3 (seed 000 (Hardy et al. 2026) Sec. 3.2),
so the estimates must be on that scale too; the observed-scale estimators (Henderson's Method I,
REML of the Gaussian LMM) estimate other quantities and are not used.  Two logit-scale estimates are
offered, chosen by the size of the design:

``"laplace"``
    The Laplace approximation of the binomial-logit GLMM by PIRLS (lme4's ``glmer``, nAGQ = 1;
    :func:`~.estimators.laplace.laplace`; seed 000 App. C.4), the same fit as the Laplace column of
    ``ddr methods``.  It is the preview's estimate whenever it is affordable: designs with at most
    :data:`LAPLACE_MAX_EFFECTS` random effects (Terminal-Bench 2.0 has 4,400).  The search uses the
    deviance's exact gradient and starts at the rough fit below: on Terminal-Bench 2.0 about 24
    evaluations, 2.5-4 s of CPU, where the derivative-free search took 500 evaluations and 25 s
    (``ddr dstudy --preview`` from a cold start, bench/bench_preview.py ``--cli``, shared 2-core box at
    load average 11-18: 4.3-5.0 s of CPU for the whole command against 25.8 s).  One single evaluation
    of BRIDGE pooled (82,589 random effects) took 59 s, so a fit there still takes far too long.
``"rough"``
    The sampler's own quick look at the posterior (:func:`~.model.geometry.rough_fit`): penalised
    IRLS by backfitting for the conditional modes and an EM-like update
    ``sigma_k^2 = (|u_k|^2 + sum_j 1/h_kj) / J_k`` with the diagonal conditional precisions.  It is
    penalised quasi-likelihood in spirit and biased low for binary data (on Terminal-Bench 2.0 the
    task variance is 5.4 where Laplace finds 8.5), but it takes 0.2 s there and 4 s on BRIDGE
    pooled.  The app shows it first and replaces it with Laplace when Laplace applies; on larger
    designs it is the preview.

``"auto"`` (the default) is Laplace when the design has at most :data:`LAPLACE_MAX_EFFECTS` random
effects, else the rough fit.  The observed-scale fallbacks were measured too: Henderson's Method I
takes 0.6 s on Terminal-Bench 2.0 but tried to allocate 33 GB on BRIDGE pooled, and REML takes
minutes at the HAL scale (:mod:`.estimators.sparse`).

The model fitted is the one the posterior will be: the preset reduced to the terms the design
separates (:func:`~.design.presets.supported_spec`), as :func:`~.fitting.fit_corpus` does.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

from .reliability import VarianceComponents

__all__ = ["LAPLACE_MAX_EFFECTS", "METHODS", "Preview", "PreviewCancelled", "choose_method", "format_preview", "next_preview",
           "preview_components", "preview_for_dstudy", "preview_summary", "preview_stages"]

#: Largest design (random effects) whose Laplace fit the preview waits for (TB2: 4,400; HAL: 32,000).
LAPLACE_MAX_EFFECTS = 10_000
#: Preview estimators: ``"auto"`` picks one of the other two by the design's size.
METHODS = ("auto", "laplace", "rough")
#: How each estimate is named wherever the preview is shown.
METHOD_LABELS = {"laplace": "Laplace GLMM point estimates (glmer nAGQ = 1)",
                 "rough": "rough PQL-like point estimates (the sampler's starting fit; biased low)"}


class PreviewCancelled(RuntimeError):
    """The user cancelled a preview (a new corpus or preset, or the window closed)."""


@dataclass
class Preview:
    """Point estimates of the variance components, standing in for the posterior while it runs.

    Attributes
    ----------
    components
        ``sigma^2`` per term (one draw) and the residual pi^2/3, with ``preview=True``.
    method
        ``"laplace"`` or ``"rough"``.
    formula
        The model fitted (the preset as the posterior fit will reduce it).
    seconds
        Wall time of the estimate (design matrix included).
    converged
        The optimiser's verdict (Laplace); True for the rough fit, which has no optimum to reach.
    n_effects
        Random effects of the design (what decides ``"auto"``).
    evaluations
        Laplace deviance evaluations the search took (0 for the rough fit).
    notes
        Plain-language remarks (terms left out, an unconverged optimiser).
    """

    components: VarianceComponents
    method: str
    formula: str
    seconds: float
    converged: bool = True
    n_effects: int = 0
    evaluations: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return METHOD_LABELS[self.method]

    def to_dict(self) -> dict:
        return {"preview": True, "method": self.method, "label": self.label, "formula": self.formula,
                "seconds": self.seconds, "converged": self.converged, "n_effects": self.n_effects,
                "evaluations": self.evaluations,
                "components": {t: float(v[0]) for t, v in self.components.draws.items()}
                | {"residual": float(self.components.residual[0])}, "notes": list(self.notes)}


def _spec_of(corpus, spec):
    """The spec the posterior fit will use, and the note when preset terms are left out."""
    from .design.presets import supported_spec
    from .model.formula import as_spec

    check = supported_spec(corpus, as_spec(spec))
    return check.spec, (check.note or None)


def choose_method(n_effects: int, method: str = "auto") -> str:
    """``"laplace"`` or ``"rough"`` for a design with ``n_effects`` random effects (see the module note)."""
    if method not in METHODS:
        raise ValueError(f"unknown preview method {method!r}; use {', '.join(METHODS)}")
    if method != "auto":
        return method
    return "laplace" if n_effects <= LAPLACE_MAX_EFFECTS else "rough"


def _components(values: dict[str, float], residual: float, method: str, formula: str) -> VarianceComponents:
    vc = VarianceComponents.from_mapping(values, residual=residual,
                                         source=f"preview: {METHOD_LABELS[method]} of {formula}")
    return dataclasses.replace(vc, preview=True)


def preview_components(corpus, spec="per-benchmark", *, method: str = "auto", progress=None,
                       cancel=None) -> Preview:
    """Point estimates of the variance components of ``corpus`` under ``spec``, marked as a preview.

    Parameters
    ----------
    corpus
        A :class:`~.corpus.corpus.Corpus` (or its canonical table).
    spec
        A ModelSpec, preset name or formula; reduced to the terms the design separates, as the fit is.
    method
        ``"auto"``, ``"laplace"`` or ``"rough"`` (module note).
    progress, cancel
        ``progress(phase, i, n, eta)``; ``cancel()`` polled between steps and, for Laplace, between
        criterion evaluations.

    Returns
    -------
    Preview

    Raises
    ------
    PreviewCancelled
        ``cancel()`` returned True.
    """
    return _run(corpus, spec, method, progress, cancel)[0]


def _run(corpus, spec, method, progress, cancel):
    """The preview for ``method`` and whether Laplace is still to come after it (a rough fit where "auto"
    picks Laplace); the design matrix is built once for both questions."""
    from .estimators.design import EstimationCancelled, MixedDesign
    from .model.design_matrix import build_design
    from .model.formula import RESIDUAL_VARIANCE

    if method not in METHODS:
        raise ValueError(f"unknown preview method {method!r}; use {', '.join(METHODS)}")
    t0 = time.perf_counter()
    spec, note = _spec_of(corpus, spec)
    notes = [note] if note else []
    if cancel is not None and cancel():
        raise PreviewCancelled("preview cancelled before it started")
    dm = build_design(corpus, spec)
    n_effects = int(dm.n_levels.sum())
    chosen = choose_method(n_effects, method)
    if chosen == "laplace":
        import numpy as np

        from .estimators.laplace import laplace
        from .model.geometry import rough_fit

        design = MixedDesign.from_spec(corpus, spec)
        # the rough fit (0.1-0.2 s here) starts the search nearer the optimum than sigma = 1: a fifth fewer
        # evaluations on Terminal-Bench 2.0; the optimum is the same (the search runs to convergence)
        rough = rough_fit(dm)
        sd = dict(zip(dm.term_names, np.asarray(rough.sigma, dtype=np.float64)))
        x0 = np.r_[[sd.get(t, 1.0) for t in design.term_names], float(rough.mu)]
        try:
            fit = laplace(design, x0=x0, progress=progress, cancel=cancel)
        except EstimationCancelled as exc:
            raise PreviewCancelled(str(exc)) from None
        values = {t: fit.components[t] for t in design.term_names}
        converged, evaluations = bool(fit.converged), int(fit.n_evaluations)
        if not converged:
            notes.append(f"Laplace: the optimiser stopped without converging ({fit.message}).")
    else:
        from .model.geometry import rough_fit

        if progress is not None:
            progress("rough fit", 0, 1, None)
        rough = rough_fit(dm)
        if cancel is not None and cancel():
            raise PreviewCancelled("preview cancelled after the rough fit")
        values = {t: float(sd) ** 2 for t, sd in zip(dm.term_names, rough.sigma)}
        converged, evaluations = True, 0
        if progress is not None:
            progress("rough fit", 1, 1, 0.0)
    comps = _components(values, RESIDUAL_VARIANCE, chosen, spec.formula)
    preview = Preview(components=comps, method=chosen, formula=spec.formula, seconds=time.perf_counter() - t0,
                      converged=converged, n_effects=n_effects, evaluations=evaluations,
                      notes=notes + list(dm.notes))
    return preview, (choose_method(n_effects) == "laplace" and chosen == "rough")


def preview_stages(corpus, spec="per-benchmark") -> list[str]:
    """The estimates the app shows in turn: the rough fit at once, then Laplace where it applies."""
    from .model.design_matrix import build_design

    spec, _ = _spec_of(corpus, spec)
    n = int(build_design(corpus, spec).n_levels.sum())
    return ["rough"] if choose_method(n) == "rough" else ["rough", "laplace"]


def next_preview(corpus, spec="per-benchmark", stages: list[str] | None = None, *, progress=None,
                 cancel=None) -> tuple[Preview, list[str]]:
    """The app's worker job: the first preview stage and the stages left.

    With ``stages`` None, the rough fit runs first and ``["laplace"]`` is left where the design is
    small enough (:func:`preview_stages`); otherwise the first of ``stages`` runs.  Parameters and
    errors as :func:`preview_components`.
    """
    if stages is None:
        preview, more = _run(corpus, spec, "rough", progress, cancel)
        return preview, (["laplace"] if more else [])
    if not stages:
        raise ValueError("no preview stage left to run")
    return preview_components(corpus, spec, method=stages[0], progress=progress, cancel=cancel), list(stages[1:])


def preview_summary(preview: Preview, design, *, target: float | None = None, budget: float | None = None,
                    observed=None, not_answered: dict | None = None) -> dict:
    """:func:`~.dstudy.summary.dstudy_summary` of the point estimates, marked ``"preview": true``.

    The numbers are the D-study's own functions applied to one set of estimates, so every interval
    collapses to the point; the keys ``preview``, ``preview_method`` and ``preview_note`` say so.
    """
    from .dstudy.summary import dstudy_summary

    out = dstudy_summary(preview.components, design, target=target, budget=budget, observed=observed,
                         not_answered=not_answered)
    out["preview"] = True
    out["preview_method"] = preview.method
    out["preview_estimates"] = preview.to_dict()
    out["preview_note"] = (f"from {preview.label} of {preview.formula}, not a posterior: no uncertainty "
                           "(every interval is the point itself); fit the model for the posterior. "
                           "Never on the DDR sheet.")
    return out


def preview_for_dstudy(args):
    """For ``ddr dstudy CORPUS --preview``: the :class:`Preview` of the corpus under ``--preset`` and the
    corpus's observed design (:func:`~.dstudy.observed_design`), without sampling."""
    from pathlib import Path

    from .corpus.columns import options_from_args
    from .corpus.io import load_corpus
    from .dstudy import observed_design

    path = Path(args.path)
    if path.suffix in (".h5", ".hdf5"):
        raise ValueError(f"{path} is a fitted posterior already; --preview needs a corpus file (point estimates "
                         "stand in for a posterior that is not there yet)")
    corpus = load_corpus(path, getattr(args, "format", None), **options_from_args(args))
    prices = None
    token_prices = getattr(args, "token_prices", None)
    if token_prices is not None:
        from .dstudy import prices_from_tokens
        from .price_tables import read_token_prices

        prices = prices_from_tokens(corpus.table, read_token_prices(token_prices))
    observed = observed_design(corpus, object_of_measurement=getattr(args, "object", "model"),
                               claim=getattr(args, "claim", "relative"), prices=prices)
    from .design.presets import default_preset

    preset = getattr(args, "preset", None) or default_preset(corpus)
    from .dstudy.trial_counts import corpus_counts

    args.corpus_counts = corpus_counts(corpus)  # printed beside the design's own count of trials
    from .design.overlap import model_overlap, sizes_not_answered

    args.not_answered = sizes_not_answered(model_overlap(corpus))  # benchmarks that share no model
    return preview_components(corpus, preset, method=getattr(args, "preview_method", None) or "auto"), observed


def format_preview(summary: dict) -> str:
    """Text of :func:`preview_summary`: the D-study's text under a preview banner."""
    from .dstudy.summary import format_dstudy
    from .formatting import fmt_var

    est = summary["preview_estimates"]
    lines = [f"PREVIEW: {summary['preview_note']}",
             f"estimates ({est['seconds']:.1f} s, logit scale): "
             + ", ".join(f"{t} {fmt_var(v)}" for t, v in est["components"].items())]
    lines += [f"note: {n}" for n in est["notes"]]
    body = format_dstudy(summary).splitlines()
    # format_dstudy's first line is about a fit's convergence; a preview has no fit
    return "\n".join(lines + body[1:])
