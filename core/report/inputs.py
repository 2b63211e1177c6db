"""What the DDR sheet is built from: one plain dataclass, and a builder that fills it from core.

The sheet (:mod:`.sheet`) never fits anything and never reads a corpus file:
it draws a :class:`ReportInputs`.  That keeps the PDF independent of the
sampler (any posterior, a paper's table typed in, or an approximate method can
feed it) and makes a build from ready inputs fast (``bench/bench_report.py``).

:func:`report_inputs_from` computes everything that core can compute cheaply
from a corpus and a posterior of variance components (the corpus summary, the
observed design, prices, accuracy per agent, task difficulty quartiles), so
the app's integration is one call.  The analyses that need extra fits
(difficulty-conditional G-studies, held-out splits, PSIS-LOO, a failure
taxonomy) are optional: pass them in ``analyses`` when they were run; the
sheet says "not run" for the others, and what running them would take.

Nothing here imports the sampler: :func:`fit_info_from_posterior` and the
posterior readers it shares with the app (:func:`~ddr_explorer.core.fitting.components_from_posterior`,
:func:`~ddr_explorer.core.fitting.theta_from_posterior`, re-exported here) read
a posterior by attribute (duck typing), so a sampler under construction cannot
break the report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import shown
from ..analyses.difficulty import DifficultyProfile, TaskDifficulty, task_difficulty
from ..analyses.failure_modes import FailureTaxonomy
from ..analyses.frontier_time import FrontierOverTime
from ..analyses.heldout import HeldOutReliability
from ..analyses.loo import LooSummary
from ..analyses.capability import CapabilityStudy
from ..analyses.transfer import TransferStudy
from ..dstudy import (DEFAULT_TARGETS, CostRanking, DStudyDesign, accuracy_per_dollar, corpus_prices, observed_design,
                      same_sizes)
from ..fitting import components_from_posterior, theta_from_posterior
from ..reliability import VarianceComponents, as_components, object_for_terms
from .answer_design import examined_from_sizes
from .priors import priors_of

__all__ = [
    "ANALYSIS_KEYS",
    "TaskDifficulty",
    "DifficultyProfile",
    "HeldOutReliability",
    "LooSummary",
    "FailureTaxonomy",
    "ReportInputs",
    "task_difficulty",
    "formula_from_terms",
    "software_versions",
    "fit_info_from_posterior",
    "components_from_posterior",
    "theta_from_posterior",
    "report_inputs_from",
]

#: Keys of :attr:`ReportInputs.analyses` and the type each holds.
ANALYSIS_KEYS: tuple[str, ...] = ("difficulty", "held_out", "loo", "failure_taxonomy", "frontier", "methods",
                                   "score_reliability", "capability", "transfer")


_ANALYSIS_TYPES = {"difficulty": DifficultyProfile, "held_out": HeldOutReliability, "loo": LooSummary,
                   "failure_taxonomy": FailureTaxonomy, "frontier": FrontierOverTime}
_ANALYSIS_TYPES.update(capability=CapabilityStudy, transfer=TransferStudy)  # seed 002 (Krsteski et al. 2026) sec. 5.3, seed 003 (DDR paper 2026) sec. 5.5


def _analysis_type(key: str) -> type:
    """The type an analysis result must have; the estimators' types are imported only when such a
    result is given (they import the model package, which the report must not load by itself)."""
    if key == "methods":
        from ..estimators.methods import MethodsTable

        return MethodsTable
    if key == "score_reliability":
        from ..estimators.bayes_lmm import ScoreReliability

        return ScoreReliability
    return _ANALYSIS_TYPES[key]


# ---------------------------------------------------------------------------
# The sheet's input
# ---------------------------------------------------------------------------

@dataclass
class ReportInputs:
    """Everything the DDR sheet shows, ready to draw.

    Attributes
    ----------
    corpus_name, corpus_hash
        Display name and SHA-256 content hash of the corpus.
    corpus_summary
        :func:`ddr_explorer.core.inspection.inspect_corpus` of the corpus
        (counts, connectivity, separability, coverage, warnings).
    components
        Posterior draws of the variance components.
    observed_design
        The design the corpus ran (object of measurement and claim included).
    examined_design
        A what-if design the user examined (the app's D-study sliders), reported beside the
        observed one under its own label; None when the user examined no other sizes.  The sheet's
        headline, decisions and tables stay those of the observed design: a buyer reads what the
        corpus ran, and the what-if only as a what-if.
    target
        Target of the claim's coefficient (default: 0.85 for rankings, 0.90
        for threshold decisions; SPEC sec. 4).
    budget
        Optional budget in USD.
    prices
        USD per trial per benchmark; empty when there is no cost data.
    price_source
        Where the prices came from (``"cost column"``, ``"user"``, ``"none"``).
    theta, model_names
        ``(S, M)`` latent-capability draws and the M model names (None: the
        rank pages say the ranks were not computed).
    fit_info
        How the components were obtained.  Keys (all optional): ``method``
        (e.g. ``"NUTS (numpyro)"``), ``formula``, ``settings`` (dict: chains,
        draws, warmup, seed, target_accept, ...), ``converged`` (bool or None
        when unknown), ``max_rhat``, ``min_ess_bulk``, ``divergences``,
        ``device``, ``wall_seconds``, ``approximate`` (bool), ``problems``
        (list of str), ``n_draws``, ``priors`` (the fit's priors,
        :meth:`~ddr_explorer.core.model.formula.Priors.to_dict` form; absent: not recorded).
    accuracy
        Mean success and mean cost per trial per agent, with the accuracy and
        accuracy-per-dollar ranks (:func:`~ddr_explorer.core.dstudy.accuracy_per_dollar`).
    model_accuracy
        Observed mean success per model (to compare with the latent ranking); per agent
        (``"model / scaffold"``) when the object is the agent (the ddr preset, seed 003 Eq. 1).
    difficulty
        Task difficulty strata from the corpus (:func:`task_difficulty`).
    analyses
        Optional results keyed by :data:`ANALYSIS_KEYS`:
        ``"difficulty"`` (:class:`DifficultyProfile`), ``"held_out"``
        (:class:`HeldOutReliability`), ``"loo"`` (:class:`LooSummary`),
        ``"failure_taxonomy"`` (:class:`FailureTaxonomy`), ``"frontier"``
        (:class:`~..analyses.frontier_time.FrontierOverTime`), ``"methods"`` (the estimator comparison,
        :class:`~ddr_explorer.core.estimators.methods.MethodsTable`), ``"score_reliability"``
        (the observed-scale Bayesian LMM's Phi and Erho2 of scores,
        :class:`~ddr_explorer.core.estimators.bayes_lmm.ScoreReliability`), ``"capability"``
        (:class:`~..analyses.capability.CapabilityStudy`), ``"transfer"``
        (:class:`~..analyses.transfer.TransferStudy`).
    versions
        Software name -> version, printed in the footer.
    title
        Sheet title (default: the corpus name).
    score_check
        The corpus's split-half correlation of success rates beside the fit's prediction
        (:class:`~ddr_explorer.core.split_half.SplitHalfCheck`), printed on page 1's method line; None
        when the fit has no observed-score scale or the corpus is too small to split.
    pair
        A pair the buyer asked about (:class:`~ddr_explorer.core.pair_comparison.PairDecision`): a "Two
        agents" page after page 1 and one line under page 1's decisions; None without one.
    """

    corpus_name: str
    corpus_hash: str
    corpus_summary: Mapping[str, Any]
    components: VarianceComponents
    observed_design: DStudyDesign
    target: float | None = None
    budget: float | None = None
    prices: Mapping[str, float] = field(default_factory=dict)
    price_source: str = "none"
    theta: np.ndarray | None = None
    model_names: Sequence[str] | None = None
    fit_info: Mapping[str, Any] = field(default_factory=dict)
    accuracy: CostRanking | None = None
    model_accuracy: Mapping[str, float] = field(default_factory=dict)
    difficulty: TaskDifficulty | None = None
    analyses: Mapping[str, Any] = field(default_factory=dict)
    versions: Mapping[str, str] = field(default_factory=dict)
    title: str | None = None
    examined_design: DStudyDesign | None = None
    score_check: Any = None
    pair: Any = None

    def __post_init__(self):
        self.components = as_components(self.components)
        if getattr(self.components, "preview", False):  # a preview from point estimates is never printed on the sheet
            raise ValueError(f"{self.components.source}: these are preview point estimates, not a posterior; the DDR "
                             "sheet needs the fitted posterior: fit the model (ddr fit, or Fit in the app) first")
        if not isinstance(self.observed_design, DStudyDesign):
            raise TypeError(f"observed_design should be a DStudyDesign, got {type(self.observed_design).__name__}")
        if self.examined_design is not None and not isinstance(self.examined_design, DStudyDesign):
            raise TypeError(f"examined_design should be a DStudyDesign or None, "
                            f"got {type(self.examined_design).__name__}")
        if self.examined_design is not None and same_sizes(self.examined_design, self.observed_design) and \
                self.examined_design.n_models == self.observed_design.n_models:
            self.examined_design = None  # the sliders at the corpus's own sizes and models examine nothing else
        if self.target is None:
            self.target = DEFAULT_TARGETS[self.observed_design.claim]
        t = float(self.target)
        if not 0 < t < 1:
            raise ValueError(f"target should be a coefficient in the interval (0, 1), got {shown(self.target)}")
        self.target = t
        if self.budget is not None and not (math.isfinite(float(self.budget)) and float(self.budget) > 0):
            raise ValueError(f"budget should be a positive number of USD, got {shown(self.budget)}")
        self.prices = {str(k): float(v) for k, v in dict(self.prices or {}).items()}
        for b, p in self.prices.items():
            if not (math.isfinite(p) and p >= 0):
                raise ValueError(f"price per trial of benchmark {b!r} should be a number >= 0 (USD), got {p!r}")
        if self.theta is not None:
            th = np.asarray(self.theta, dtype=np.float64)
            if th.ndim != 2 or th.shape[1] < 1:
                raise ValueError(f"theta should be an array of shape (draws, models), got shape {th.shape}")
            names = list(self.model_names) if self.model_names is not None else [f"model {k + 1}" for k in
                                                                                  range(th.shape[1])]
            if len(names) != th.shape[1]:
                raise ValueError(f"{len(names)} model names for {th.shape[1]} columns of theta; give one per column")
            self.theta, self.model_names = th, [str(n) for n in names]
        unknown = sorted(set(self.analyses) - set(ANALYSIS_KEYS))
        if unknown:
            raise ValueError(f"unknown analysis key(s) {', '.join(unknown)}; use {', '.join(ANALYSIS_KEYS)}")
        for key, value in self.analyses.items():
            if value is not None and not isinstance(value, _analysis_type(key)):
                raise TypeError(f"analyses[{key!r}] should be a {_analysis_type(key).__name__} or None, "
                                f"got {type(value).__name__}")
        self.analyses = dict(self.analyses)

    # -- derived -----------------------------------------------------------
    @property
    def has_cost(self) -> bool:
        """True when a positive price per trial is known (cost frontier and RPD can be computed)."""
        return bool(self.prices) and self.observed_design.mean_price() > 0

    def analysis(self, key: str):
        """An optional analysis result, or None when it was not run."""
        return self.analyses.get(key)


# ---------------------------------------------------------------------------
# Helpers that read a fit without importing the sampler
# ---------------------------------------------------------------------------

def formula_from_terms(terms: Sequence[str]) -> str:
    """The lme4/brms formula of a set of random-intercept terms (``y ~ 1 + (1|task) + ...``)."""
    return "y ~ 1 + " + " + ".join(f"(1|{t})" for t in terms) if terms else "y ~ 1"


def software_versions() -> dict[str, str]:
    """Versions of ddr-explorer, numpy, jax/numpyro (when installed) and reportlab.

    Read from the installed distributions' metadata, so jax is never imported
    (importing it takes seconds and would set up a device for nothing).
    """
    out = {}
    for name in ("ddr-explorer", "numpy", "jax", "numpyro", "reportlab"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            if name == "ddr-explorer":
                out[name] = "source tree"
    return out


def _get(obj, *names, default=None):
    for n in names:
        obj = getattr(obj, n, None) if not isinstance(obj, Mapping) else obj.get(n)
        if obj is None:
            return default
    return obj


def fit_info_from_posterior(posterior) -> dict:
    """The :attr:`ReportInputs.fit_info` of a posterior (read by attribute; the sampler is not imported).

    Reads ``spec.formula``, ``spec.priors`` (key ``priors``, see :mod:`.priors`), ``settings``
    (a dataclass or dict), ``diagnostics``
    (``converged``, ``max_r_hat``/``max_rhat``, ``min_ess_bulk``,
    ``divergences``, ``problems``), ``device`` and ``wall_seconds``; missing
    attributes are left out.
    """
    info: dict[str, Any] = {"method": "NUTS (numpyro)", "approximate": False}
    formula = _get(posterior, "spec", "formula")
    if formula:
        info["formula"] = str(formula)
    priors = priors_of(posterior)  # the fit's own priors, printed in the method notes and footer
    if priors is not None:
        info["priors"] = priors
    settings = getattr(posterior, "settings", None)
    if settings is not None:
        if hasattr(settings, "__dataclass_fields__"):
            info["settings"] = {k: getattr(settings, k) for k in settings.__dataclass_fields__}
        elif isinstance(settings, Mapping):
            info["settings"] = dict(settings)
    diag = getattr(posterior, "diagnostics", None)
    if diag is not None:
        info["converged"] = bool(_get(diag, "converged", default=False))
        for key, names in (("max_rhat", ("max_r_hat", "max_rhat")), ("min_ess_bulk", ("min_ess_bulk",)),
                           ("divergences", ("divergences",))):
            for n in names:
                v = getattr(diag, n, None)
                if v is not None:
                    info[key] = float(v) if key != "divergences" else int(v)
                    break
        problems = getattr(diag, "problems", None)
        if problems:
            info["problems"] = [str(p) for p in problems]
    else:
        info["converged"] = None
    for key in ("device", "wall_seconds"):
        v = getattr(posterior, key, None)
        if v is not None:
            info[key] = v
    # a preset fitted without the terms the design cannot separate says so (core/design/presets.py)
    from ..design.presets import TERMS_NOTE_PREFIX

    term_notes = [str(n) for n in (getattr(posterior, "notes", None) or []) if str(n).startswith(TERMS_NOTE_PREFIX)]
    if term_notes:
        info["term_notes"] = term_notes
    sigma = getattr(posterior, "sigma", None)
    if isinstance(sigma, Mapping) and sigma:
        info["n_draws"] = int(np.asarray(next(iter(sigma.values()))).size)
    return info


# ---------------------------------------------------------------------------
# The builder
# ---------------------------------------------------------------------------

def report_inputs_from(corpus, components=None, theta=None, *, model_names: Sequence[str] | None = None,
                       posterior=None, fit_info: Mapping[str, Any] | None = None,
                       object_of_measurement: str | None = None, claim: str = "relative",
                       design: DStudyDesign | None = None, target: float | None = None, budget: float | None = None,
                       prices: Mapping[str, float] | float | None = None,
                       analyses: Mapping[str, Any] | None = None,
                       corpus_summary: Mapping[str, Any] | None = None, title: str | None = None,
                       examined_design: DStudyDesign | None = None,
                       examined_sizes: Mapping[str, float] | None = None) -> ReportInputs:
    """Fill a :class:`ReportInputs` from a corpus and a posterior with core's functions.

    Parameters
    ----------
    corpus
        A validated :class:`~ddr_explorer.core.corpus.corpus.Corpus`.
    components
        Variance-component draws (:class:`~ddr_explorer.core.reliability.VarianceComponents`
        or a term -> draws mapping); taken from ``posterior`` when omitted.
    theta, model_names
        ``(S, M)`` latent-capability draws and their names; taken from
        ``posterior`` (term ``model``) when omitted and it kept random effects.
    posterior
        Optional fit, read by attribute (see :func:`fit_info_from_posterior`).
    fit_info
        Overrides the fit description (see :attr:`ReportInputs.fit_info`).
    object_of_measurement, claim
        ``"model"``, ``"system"`` or ``"agent"``; default (None): the fit's own object, ``"agent"`` for
        seed 003's model (the ``ddr`` preset), else ``"model"``
        (:func:`~ddr_explorer.core.reliability.object_for_terms`).  ``"relative"`` (ranking) or ``"absolute"``.
    design
        The design the corpus ran; default: the corpus's own design
        (:func:`~ddr_explorer.core.dstudy.observed_design`) with its models and prices.  Never a
        what-if design: pass that as ``examined_design``.
    examined_design
        A what-if design (the app's sliders), printed beside the observed one as "Design examined";
        dropped when its sizes are the observed design's.  The sheet's cost answers and tasks for the
        target are computed at it, as the app's D-study tab computes them (:mod:`.answer_design`).
    examined_sizes
        Instead of ``examined_design``: the sizes of the what-if set on the observed design
        (``n_tasks``, ``n_scaffolds``, ``n_benchmarks``, ``n_replicates``, ``n_models``; ``ddr report``'s
        options), :func:`~.answer_design.examined_from_sizes`.
    target, budget
        Target coefficient (default by claim) and an optional budget in USD.
    prices
        USD per trial per benchmark (a number: the same for every benchmark); default: from the corpus's cost column
        when it has one (sum of cost / sum of trials per benchmark), else none.
    analyses
        Optional analysis results keyed by :data:`ANALYSIS_KEYS`.
    corpus_summary
        A ready :func:`~ddr_explorer.core.inspection.inspect_corpus` result (computed if omitted).
    title
        Sheet title (default: the corpus name).

    Returns
    -------
    ReportInputs

    Raises
    ------
    ValueError
        Neither components nor a posterior, or inconsistent inputs (see :class:`ReportInputs`).
    """
    from ..inspection import inspect_corpus

    if components is None:
        if posterior is None:
            raise ValueError("report inputs need variance components: pass components= or posterior=")
        components = components_from_posterior(posterior)
    c = as_components(components)
    obj = object_for_terms(c.terms, object_of_measurement) if design is None else design.object_of_measurement
    if theta is None and posterior is not None:
        try:  # the ranks are of the object: agents for seed 003's model, else models
            theta, names = theta_from_posterior(posterior, "agent" if obj == "agent" else "model")
            model_names = model_names or names
        except ValueError:  # no model effects kept: the rank pages say ranks were not computed
            theta = None
    info: dict[str, Any]
    if posterior is not None:
        info = fit_info_from_posterior(posterior)
    else:
        info = {"method": f"components supplied ({c.source})", "converged": None, "approximate": False}
    info.setdefault("formula", formula_from_terms(c.terms))
    info.setdefault("n_draws", c.n_draws)
    info.update(dict(fit_info or {}))

    table = corpus.table
    summary = dict(corpus_summary) if corpus_summary is not None else inspect_corpus(corpus)
    if isinstance(prices, (int, float)):  # one price for every benchmark (`ddr report --price-per-trial`)
        prices = {str(b): float(prices) for b in table["benchmark"].astype(str).unique()}
    if prices is not None:
        price_map, source = {str(k): float(v) for k, v in prices.items()}, "user"
    else:
        price_map = corpus_prices(corpus)
        source = "cost column" if price_map else "none"
    if design is None:
        design = observed_design(corpus, object_of_measurement=obj, claim=claim, prices=price_map,
                                 facets=c.facets)
    accuracy = accuracy_per_dollar(table, ("model", "scaffold"))
    if obj == "agent":  # the ranks are of agents (model / scaffold pairs, theta_from_posterior's names)
        g = table.groupby(["model", "scaffold"], observed=True, sort=True)[["successes", "trials"]].sum()
        keys = [f"{m} / {a}" for m, a in g.index]
    else:
        g = table.groupby("model", observed=True, sort=True)[["successes", "trials"]].sum()
        keys = [str(m) for m in g.index]
    if examined_design is None:
        examined_design = examined_from_sizes(design, examined_sizes)
    model_acc = {k: float(s / n) for k, s, n in zip(keys, g["successes"], g["trials"]) if n > 0}
    score_check = _score_check(table, c, design)
    return ReportInputs(
        corpus_name=corpus.name, corpus_hash=corpus.content_hash, corpus_summary=summary, components=c,
        observed_design=design, target=target, budget=budget, prices=price_map, price_source=source,
        theta=theta, model_names=model_names, fit_info=info, accuracy=accuracy, model_accuracy=model_acc,
        difficulty=task_difficulty(table), analyses=dict(analyses or {}), versions=software_versions(),
        title=title, examined_design=examined_design, score_check=score_check)


def _score_check(table, components: VarianceComponents, design: DStudyDesign):
    """The split-half check of the fit's claim about scores (:mod:`..split_half`), or None where it cannot run."""
    from ..dstudy.curves import score_scale
    from ..split_half import split_half_check

    if score_scale(components) != "observed" or not design.object_facets <= {"model", "scaffold"}:
        return None
    try:
        return split_half_check(table, components, design.sizes(), design.object_facets)
    except ValueError:  # too few tasks or objects to split: the sheet says nothing rather than guess
        return None
