"""Reliability estimands of Bayesian Generalizability theory, computed per posterior draw.

The input is a posterior of variance components: a mapping from a term name to
a 1-D array of ``sigma^2`` draws, e.g. ``{"model": ..., "benchmark:model": ...,
"benchmark:task:model": ...}`` (facets joined by ``":"``, canonical order
benchmark, task, model, scaffold; other facet names, e.g. seed 003's
``agent``/``step``, are allowed and follow in alphabetical order).  The latent
logistic residual ``e = pi^2/3`` is added unless the mapping has a
``"residual"`` entry.  A paper's table (one value per term) is the same thing
with one draw, so typed-in values and ``ddr dstudy --components FILE`` go
through the same code.

Every estimand is computed **per draw** and only then summarised (median, 68%
and 95% HDI): never as a ratio of posterior means (SPEC sec. 2).

The D-study rule (SPEC sec. 3; seed 000 (Hardy et al. 2026) Tables 1 and 9; Brennan 2001, ch. 4)
------------------------------------------------------------------------------
Let ``o`` be the facet set of the object of measurement (``{"model"}``, or
``{"model", "scaffold"}`` for a model-scaffold *system*) and ``n_f`` the number
of levels of facet ``f`` that the design averages over (``task`` is nested in
``benchmark``: ``n_task`` is tasks *per benchmark*, so a benchmark-task term is
divided by ``n_benchmark * n_task``).  For every term ``t`` with facet set
``F(t)``:

* ``F(t)`` a subset of ``o``: universe-score (signal) variance, undivided;
* ``F(t)`` meets ``o`` and has other facets: relative error, divided by
  ``prod(n_f for f in F(t) - o)`` (object-by-facet interactions change
  orderings);
* ``F(t)`` disjoint from ``o``: absolute error only (a facet main effect, or an
  interaction of non-object facets, shifts every object equally, so it cancels
  from rankings but not from absolute scores), divided by ``prod(n_f for f in
  F(t))``;
* the residual ``e``: divided by the product of the sizes of every non-object
  facet the model contains, times ``n_replicate``.

``Erho2 = s2_o / (s2_o + s2_delta)`` (Eq. 1 of seed 000), ``Phi = s2_o / (s2_o +
s2_Delta)`` and ``SNR = s2_o / s2_delta = Erho2 / (1 - Erho2)``.  The rule
reproduces Eqs. 3, 4 and 7 of seed 000 term by term (see the named
convenience functions and their tests).

Conventions (where the papers are silent)
-----------------------------------------
* **Missing terms count as zero.**  A facet that appears in no term (e.g. the
  benchmark facet of a per-benchmark fit) has its sample size forced to 1:
  there is nothing to average over, and the residual must not be divided by
  it.  The effective sizes are returned with every result.
* **Replicates** divide only the residual.  This treats ``e`` as within-cell
  trial noise; the highest-order cell interaction folded into ``e`` (seed 000
  sec. 3.2.1) does not shrink with replicates, so replicate gains are an upper
  bound.
* A draw with no universe-score variance (``s2_o = 0``) has reliability 0 and
  SNR 0 (there is nothing to rank); with zero error and positive signal the
  coefficient is 1 and the SNR infinite.
* HDIs are the shortest intervals holding ``floor(prob * S)`` + 1 sorted draws
  (the ArviZ convention; :mod:`.posterior_summary`, which also holds :class:`Summary`
  and :func:`summarize`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Mapping, Sequence

import numpy as np
from .posterior_summary import Summary, as_summary, hdi, hdi_sorted, summarize, summarize_sorted, to_jsonable
from .references import cite

__all__ = [
    "RESIDUAL_LOGISTIC",
    "FACET_ORDER",
    "REPLICATE",
    "SYSTEM",
    "DETECTION_SNR",
    "DETECTION_ERHO2",
    "VarianceComponents",
    "DesignWeights",
    "Summary",  # the summaries of draws live in core.posterior_summary; kept importable from here
    "EstimandTable",
    "as_components",
    "split_term",
    "canonical_term",
    "object_facets",
    "object_for_terms",
    "objects_for_terms",
    "design_weights",
    "universe_variance",
    "error_variance",
    "generalizability",
    "dependability",
    "signal_to_noise",
    "snr_from_reliability",
    "task_only_ceiling",
    "model_reliability_within_benchmark",
    "system_reliability_within_benchmark",
    "inter_scaffold_reliability",
    "leaderboard_model_reliability",
    "variance_shares",
    "capability_gap_ratio",
    "NotEstimable",
    "gap_ratio_not_estimable",
    "model_scaffold_contrast",
    "CONTRAST_EQUATIONS",
    "estimand_draws",
    "estimand_table",
    "as_summary",
    "hdi",
    "hdi_sorted",
    "summarize",
    "summarize_sorted",
    "to_jsonable",
]

#: Variance of the standard logistic distribution: the latent-scale residual (SPEC sec. 2).
RESIDUAL_LOGISTIC: float = math.pi**2 / 3

#: Canonical order of the record facets in a term name (task is nested in benchmark).
FACET_ORDER: tuple[str, ...] = ("benchmark", "task", "model", "scaffold")

#: Pseudo-facet of repeated trials of one cell; it divides only the residual.
REPLICATE = "replicate"

#: Facets of a model-scaffold system as the object of measurement (seed 000 Eq. 4).
SYSTEM: tuple[str, ...] = ("model", "scaffold")

#: Detection-limit reference band on the SNR scale (seed 000 Fig. 3; descriptive, not calibrated).
DETECTION_SNR: tuple[float, float] = (2.0, 3.0)

#: The same band on the reliability scale: SNR 2..3 <=> Erho2 2/3..3/4 (SPEC sec. 4).
DETECTION_ERHO2: tuple[float, float] = (2.0 / 3.0, 3.0 / 4.0)

_RESIDUAL_KEYS = ("residual", "e", "(residual)")
_OBJECT_ALIASES = {"system": SYSTEM, "agent_system": SYSTEM}


# ---------------------------------------------------------------------------
# Terms and facets
# ---------------------------------------------------------------------------

def _facet_key(f: str) -> tuple[int, str]:
    return (FACET_ORDER.index(f), "") if f in FACET_ORDER else (len(FACET_ORDER), f)


def split_term(term: str | Iterable[str]) -> tuple[str, ...]:
    """The facets of a term, in canonical order.

    Parameters
    ----------
    term
        ``"benchmark:task:model"``, ``"task:model"``, or an iterable of facet names.

    Raises
    ------
    ValueError
        If the term is empty, repeats a facet or names the replicate pseudo-facet.
    """
    parts = [p.strip() for p in term.split(":")] if isinstance(term, str) else [str(p).strip() for p in term]
    if not parts or any(not p for p in parts):
        raise ValueError(f"term {term!r} has an empty facet name; write facets joined by ':' "
                         "(e.g. 'benchmark:task:model')")
    if len(set(parts)) != len(parts):
        raise ValueError(f"term {term!r} names a facet twice; each facet may appear once")
    if REPLICATE in parts:
        raise ValueError(f"term {term!r}: '{REPLICATE}' is not a variance term (the residual absorbs "
                         "within-cell variation); set the number of replicates in the design instead")
    return tuple(sorted(parts, key=_facet_key))


def canonical_term(term: str | Iterable[str]) -> str:
    """Canonical spelling of a term (``"model:task"`` -> ``"task:model"``)."""
    return ":".join(split_term(term))


def object_facets(obj: str | Iterable[str]) -> frozenset[str]:
    """Facet set of an object of measurement.

    ``"model"`` -> {model}; ``"system"`` (or ``"model:scaffold"``) -> {model,
    scaffold}; any facet name or iterable of names is taken literally (seed 003 (DDR paper 2026)
    uses ``"agent"``).
    """
    if isinstance(obj, str):
        if obj in _OBJECT_ALIASES:
            return frozenset(_OBJECT_ALIASES[obj])
        return frozenset(split_term(obj))
    return frozenset(split_term(obj))


#: Facet of seed 003's model: the agent, one model-scaffold pair (``(1|agent)`` in the ``ddr`` preset).
AGENT = "agent"


def object_for_terms(terms: Iterable[str], requested: str | None = None) -> str:
    """The object of measurement of a fit: the one the caller asked for, or the one its model measures.

    The object follows the model (SPEC sec. 4; seed 003 sec. 3): a fit with an ``agent`` facet (the
    ``ddr`` preset, seed 003 Eq. 1) measures agents, and has no ``model`` term; any other fit measures
    models unless ``"system"`` is asked for (seed 000 Eq. 4).

    Parameters
    ----------
    terms
        The fit's variance terms (``VarianceComponents.terms`` or a spec's term names).
    requested
        ``None`` (the model's own object), ``"model"``, ``"system"`` or ``"agent"``.  On an
        agent fit, ``"system"`` and ``"agent"`` are the same object (an agent is one model-scaffold
        pair); on a fit without an agent facet, ``"agent"`` is read as ``"system"``.

    Returns
    -------
    str
        ``"agent"``, ``"model"`` or ``"system"`` (or ``requested`` itself when it names other facets).

    Raises
    ------
    ValueError
        ``"model"`` asked of an agent fit: it has no model term, so its models' universe score is
        undefined; the message names the object to use.
    """
    facets = {f for t in terms for f in split_term(t)}
    if AGENT in facets:
        if requested in (None, AGENT, "system", "agent_system"):
            return AGENT
        if requested == "model" and "model" not in facets:
            raise ValueError("this fit measures agents (its model has an agent facet, one model-scaffold pair per "
                             f"level, as {cite('ddr2026', 'Eq. 1')}) and has no model term; use --object agent (the default for "
                             "this model), or fit a preset with a model term (per-benchmark, pooled) to compare "
                             "models")
        return requested
    if requested is None:
        return "model"
    return "system" if requested == AGENT else requested


def objects_for_terms(terms: Iterable[str]) -> tuple[str, ...]:
    """The objects of measurement a fit supports, in the order the app offers them.

    An agent fit (seed 003 Eq. 1) measures agents only (it has no model term: :func:`object_for_terms`);
    any other fit measures models, and model-scaffold systems (seed 000 Eq. 4) when it has a scaffold
    facet.

    Returns
    -------
    tuple of str
        ``("agent",)``, ``("model",)`` or ``("model", "system")``.
    """
    facets = {f for t in terms for f in split_term(t)}
    if AGENT in facets:
        return (AGENT,)
    return ("model", "system") if "scaffold" in facets else ("model",)


def _object_name(obj: frozenset[str]) -> str:
    return ":".join(sorted(obj, key=_facet_key))


# ---------------------------------------------------------------------------
# Posterior of variance components
# ---------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class VarianceComponents:
    """Posterior draws of variance components on the latent scale.

    Attributes
    ----------
    draws
        Canonical term -> ``(S,)`` float64 array of ``sigma^2`` draws (>= 0).
        A table of fixed values is the case ``S = 1``.
    residual
        ``(S,)`` residual variance (``pi^2/3`` unless given).
    source
        Where the values came from (a file name, ``"typed-in"``); used in messages.
    preview
        True for point estimates standing in for a posterior while it runs (:mod:`..preview`): one
        "draw", no uncertainty.  The app draws them as a preview, ``ddr dstudy --preview`` labels
        them, and the DDR sheet refuses them (:class:`~.report.inputs.ReportInputs`).
    intercept
        ``(S,)`` draws of the latent intercept ``mu`` of a binomial-logit fit, or None (a typed-in
        table).  The latent coefficients do not use it; the reliability of observed success rates
        (:mod:`.score_reliability`) does: how far success rates sit from one half decides how much the
        logistic link compresses them.
    """

    draws: Mapping[str, np.ndarray]
    residual: np.ndarray
    source: str = "components"
    preview: bool = False
    intercept: np.ndarray | None = None

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, object], residual: float | Sequence[float] | None = None, *,
                     scale: str = "variance", source: str = "components",
                     intercept=None) -> "VarianceComponents":
        """Validate and canonicalise a term -> draws mapping.

        Parameters
        ----------
        mapping
            Term -> scalar or 1-D array.  Arrays must share one length; scalars
            are broadcast.  A ``"residual"`` (or ``"e"``) entry overrides the
            default residual.
        residual
            Residual variance (scalar or per draw); default ``pi^2/3``.
        scale
            ``"variance"`` (values are ``sigma^2``) or ``"sd"`` (values are
            ``sigma``, as in seed 000 Table 8; they are squared).
        source
            Name used in error messages.
        intercept
            Draws (or one value) of the latent intercept ``mu``; broadcast to the draws.

        Raises
        ------
        ValueError
            On an unknown scale, a negative or non-finite value, a non-1-D
            array, draws of unequal length, or two spellings of one term.
        """
        if scale not in ("variance", "sd"):
            raise ValueError(f"scale should be 'variance' or 'sd', got {scale!r}")
        raw: dict[str, np.ndarray] = {}
        res_value = residual
        for key, value in mapping.items():
            name = str(key).strip()
            if name in _RESIDUAL_KEYS:
                if residual is None:
                    res_value = value
                continue
            term = canonical_term(name)
            if term in raw:
                raise ValueError(f"{source}: term {name!r} is given twice (as {term!r}); keep one spelling")
            raw[term] = _as_draws(value, f"{source}: term {name!r}", scale)
        if not raw:
            raise ValueError(f"{source}: no variance components; give at least one term such as 'model'")
        res = _as_draws(RESIDUAL_LOGISTIC if res_value is None else res_value, f"{source}: residual",
                        scale if res_value is not None else "variance")
        mu = None if intercept is None else np.asarray(intercept, dtype=np.float64).reshape(-1)
        lengths = {len(v) for v in raw.values()} | {len(res)} | ({len(mu)} if mu is not None else set())
        lengths.discard(1)
        if len(lengths) > 1:
            detail = ", ".join(f"{t}: {len(v)}" for t, v in raw.items())
            raise ValueError(f"{source}: draws have different lengths ({detail}, residual: {len(res)}); "
                             "every term needs the same number of posterior draws (or one value)")
        s = lengths.pop() if lengths else 1
        draws = {t: np.broadcast_to(raw[t], (s,)).astype(np.float64) for t in sorted(raw, key=_term_key)}
        if mu is not None:
            if not np.isfinite(mu).all():
                raise ValueError(f"{source}: the intercept needs finite values")
            mu = np.broadcast_to(mu, (s,)).astype(np.float64)
        return cls(draws=draws, residual=np.broadcast_to(res, (s,)).astype(np.float64), source=source,
                   intercept=mu)

    # -- shape -------------------------------------------------------------
    @property
    def n_draws(self) -> int:
        return len(self.residual)

    @cached_property
    def terms(self) -> tuple[str, ...]:
        return tuple(self.draws)

    @cached_property
    def facet_sets(self) -> tuple[frozenset[str], ...]:
        return tuple(frozenset(split_term(t)) for t in self.terms)

    @cached_property
    def facets(self) -> frozenset[str]:
        """Every facet that appears in some term."""
        return frozenset().union(*self.facet_sets)

    @cached_property
    def matrix(self) -> np.ndarray:
        """``(S, T)`` C-ordered matrix of the draws, columns in ``terms`` order."""
        return np.ascontiguousarray(np.column_stack([self.draws[t] for t in self.terms]))

    def get(self, term: str) -> np.ndarray:
        """Draws of a term; zeros if the fit has no such term."""
        t = canonical_term(term)
        return self.draws[t] if t in self.draws else np.zeros(self.n_draws)

    def thin(self, max_draws: int | None) -> "VarianceComponents":
        """An evenly spaced subset of at most ``max_draws`` draws (all if None)."""
        idx = thin_index(self.n_draws, max_draws)
        if idx is None:
            return self
        return VarianceComponents({t: v[idx] for t, v in self.draws.items()}, self.residual[idx], self.source,
                                  self.preview, None if self.intercept is None else self.intercept[idx])

    def posterior_mean(self) -> "VarianceComponents":
        """One draw holding the posterior mean of each ``sigma^2`` (for plug-in comparisons only)."""
        return VarianceComponents({t: np.array([v.mean()]) for t, v in self.draws.items()},
                                  np.array([self.residual.mean()]), self.source + " (posterior means)",
                                  self.preview,
                                  None if self.intercept is None else np.array([self.intercept.mean()]))

    def to_dict(self) -> dict:
        return {"source": self.source, "n_draws": self.n_draws, "terms": list(self.terms),
                "summary": {t: summarize(v).to_dict() for t, v in self.draws.items()},
                "residual": summarize(self.residual).to_dict()}


def _term_key(term: str) -> tuple:
    fs = split_term(term)
    return (len(fs), [_facet_key(f) for f in fs])


def _as_draws(value, what: str, scale: str) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{what} should be one number or a 1-D array of draws, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{what} has a non-finite value at draw {k} ({arr[k]}); drop or fix that draw")
    if scale == "sd":
        if (arr < 0).any():
            k = int(np.flatnonzero(arr < 0)[0])
            raise ValueError(f"{what} is a standard deviation and cannot be negative (draw {k}: {arr[k]})")
        arr = arr**2
    elif (arr < 0).any():
        k = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"{what} is a variance and cannot be negative (draw {k}: {arr[k]}); "
                         "floor it at 0 or pass standard deviations with scale='sd'")
    return arr


def as_components(components, residual=None) -> VarianceComponents:
    """Accept a :class:`VarianceComponents` or a term -> draws mapping."""
    if isinstance(components, VarianceComponents):
        return components
    if isinstance(components, Mapping):
        return VarianceComponents.from_mapping(components, residual)
    raise TypeError(f"expected a mapping term -> sigma^2 draws or VarianceComponents, got {type(components).__name__}")


def thin_index(n: int, max_draws: int | None) -> np.ndarray | None:
    """Evenly spaced indices of at most ``max_draws`` out of ``n`` (None: keep all)."""
    if max_draws is None or n <= max_draws:
        return None
    if max_draws < 1:
        raise ValueError(f"max_draws should be at least 1, got {max_draws}")
    return np.unique(np.linspace(0, n - 1, int(max_draws)).round().astype(np.int64))


# ---------------------------------------------------------------------------
# The D-study rule
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class DesignWeights:
    """Coefficients of each variance component in a D-study.

    ``s2_o = matrix @ universe``, ``s2_delta = matrix @ relative + e * residual``,
    ``s2_Delta = matrix @ absolute + e * residual``.

    Attributes
    ----------
    terms
        Term order of the weight vectors.
    universe, relative, absolute
        ``(T,)`` weights (``absolute`` includes ``relative``).
    residual
        Weight of the residual ``e`` (the same in both errors).
    sizes
        The sample sizes actually used (facets absent from the fit forced to 1).
    """

    terms: tuple[str, ...]
    universe: np.ndarray
    relative: np.ndarray
    absolute: np.ndarray
    residual: float
    sizes: dict[str, float]

    def error(self, claim: str) -> np.ndarray:
        return self.absolute if _check_claim(claim) == "absolute" else self.relative


def _check_claim(claim: str) -> str:
    if claim not in ("relative", "absolute"):
        raise ValueError(f"claim should be 'relative' (ranking, Erho2) or 'absolute' (dependability, Phi), "
                         f"got {claim!r}")
    return claim


def _effective_sizes(present: frozenset[str], obj: frozenset[str], sizes: Mapping[str, float] | None) -> dict:
    sizes = dict(sizes or {})
    for f, n in sizes.items():
        n = float(n)
        if not n > 0:  # also rejects NaN
            raise ValueError(f"sample size of facet {f!r} should be positive, got {n}")
    out = {f: (float(sizes.get(f, 1.0)) if f in present else 1.0) for f in sorted(present - obj, key=_facet_key)}
    out[REPLICATE] = float(sizes.get(REPLICATE, 1.0))
    return out


def _inv_prod(facets: Iterable[str], sizes: Mapping[str, float]) -> float:
    p = 1.0
    for f in facets:
        p *= sizes[f]
    return 0.0 if math.isinf(p) else 1.0 / p


def design_weights(components: VarianceComponents, obj: str | Iterable[str] = "model",
                   sizes: Mapping[str, float] | None = None) -> DesignWeights:
    """Weights of every component in the universe score and error variances (the D-study rule).

    Parameters
    ----------
    components
        The fit (only its terms are used).
    obj
        Object of measurement: ``"model"``, ``"system"`` or facet names.
    sizes
        Facet -> number of levels averaged over (``"task"`` per benchmark,
        ``"replicate"`` for trials per cell).  ``inf`` gives the limit.
        Facets not given default to 1; facets absent from the fit are forced to 1.

    Returns
    -------
    DesignWeights

    Raises
    ------
    ValueError
        If the fit has no term for the object (its universe score would be 0
        by construction), or a size is not positive.
    """
    o = object_facets(obj)
    present = components.facets
    if not any(fs <= o for fs in components.facet_sets):
        raise ValueError(f"{components.source}: no variance component for the object "
                         f"{_object_name(o)!r}; terms are {', '.join(components.terms)}")
    eff = _effective_sizes(present, o, sizes)
    t = len(components.terms)
    uni, rel, ab = np.zeros(t), np.zeros(t), np.zeros(t)
    for k, fs in enumerate(components.facet_sets):
        if fs <= o:
            uni[k] = 1.0
        elif fs & o:
            rel[k] = ab[k] = _inv_prod(fs - o, eff)
        else:
            ab[k] = _inv_prod(fs, eff)
    res = _inv_prod(eff, eff)  # every non-object facet of the fit, and replicates
    return DesignWeights(components.terms, uni, rel, ab, res, eff)


def _ratio(num: np.ndarray, den_rest: np.ndarray) -> np.ndarray:
    """``num / (num + den_rest)`` with 0 where there is no signal (see module conventions)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / (num + den_rest)
    return np.where(num > 0, out, 0.0)


def _snr(num: np.ndarray, err: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / err
    return np.where(num > 0, out, 0.0)


def universe_variance(components, obj="model") -> np.ndarray:
    """Per-draw universe-score variance ``s2_o``: the sum of the terms inside the object."""
    c = as_components(components)
    w = design_weights(c, obj, None)
    return c.matrix @ w.universe


def error_variance(components, obj="model", sizes=None, claim: str = "relative") -> np.ndarray:
    """Per-draw error variance: ``s2_delta`` (relative) or ``s2_Delta`` (absolute) of a design."""
    c = as_components(components)
    w = design_weights(c, obj, sizes)
    return c.matrix @ w.error(claim) + c.residual * w.residual


def generalizability(components, obj="model", sizes: Mapping[str, float] | None = None,
                     claim: str = "relative") -> np.ndarray:
    """Per-draw generalizability coefficient ``Erho2`` (or ``Phi`` for ``claim="absolute"``).

    ``Erho2_o = s2_o / (s2_o + s2_delta(D))`` (seed 000 Eq. 1 / Table 1) under the
    module's D-study rule.

    Parameters
    ----------
    components
        Mapping term -> ``sigma^2`` draws, or :class:`VarianceComponents`.
    obj
        ``"model"``, ``"system"`` or facet names.
    sizes
        Facet -> sample size, e.g. ``{"benchmark": 9, "task": 14, "scaffold": 1}``.
    claim
        ``"relative"`` (ranking) or ``"absolute"`` (dependability).

    Returns
    -------
    numpy.ndarray
        ``(S,)`` coefficients in [0, 1].
    """
    c = as_components(components)
    w = design_weights(c, obj, sizes)
    x = c.matrix
    return _ratio(x @ w.universe, x @ w.error(claim) + c.residual * w.residual)


def dependability(components, obj="model", sizes=None) -> np.ndarray:
    """Per-draw dependability ``Phi`` (absolute error; SPEC sec. 3).  Always ``Phi <= Erho2``."""
    return generalizability(components, obj, sizes, "absolute")


def signal_to_noise(components, obj="model", sizes=None, claim: str = "relative") -> np.ndarray:
    """Per-draw ``SNR_o = s2_o / s2_delta`` (seed 000 Table 1); equals ``Erho2 / (1 - Erho2)``."""
    c = as_components(components)
    w = design_weights(c, obj, sizes)
    x = c.matrix
    return _snr(x @ w.universe, x @ w.error(claim) + c.residual * w.residual)


def snr_from_reliability(erho2) -> np.ndarray:
    """``SNR = Erho2 / (1 - Erho2)`` (inf at 1)."""
    r = np.asarray(erho2, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(r < 1, r / (1 - np.minimum(r, 1)), np.inf)


def task_only_ceiling(components, obj="model", sizes=None, claim: str = "relative",
                      task_facet: str = "task") -> np.ndarray:
    """Per-draw limit of the coefficient as tasks per benchmark -> infinity (seed 000 Eq. 8, Prop. 3.1).

    Every term whose divisor contains the task facet vanishes; benchmark- and
    scaffold-indexed error remains.
    """
    s = dict(sizes or {})
    s[task_facet] = math.inf
    return generalizability(components, obj, s, claim)


# ---------------------------------------------------------------------------
# The named estimands of seed 000 (Tables 1 and 9)
# ---------------------------------------------------------------------------

def model_reliability_within_benchmark(components, n_tasks: float, n_scaffolds: float = 1,
                                       n_replicates: float = 1) -> np.ndarray:
    """Model ranking within one benchmark, seed 000 Eq. 3.

    ``Erho2_M(b) = s2_M / (s2_M + s2_IM/n_i + s2_MA/n_a + e/(n_i n_a))`` for a
    per-benchmark fit (Eq. 2; terms ``model``, ``task:model``, ``model:scaffold``).
    """
    return generalizability(components, "model",
                            {"task": n_tasks, "scaffold": n_scaffolds, REPLICATE: n_replicates})


def system_reliability_within_benchmark(components, n_tasks: float, n_replicates: float = 1) -> np.ndarray:
    """Model-scaffold system ranking within one benchmark, seed 000 Eq. 4.

    ``Erho2_MA(b) = (s2_M + s2_A + s2_MA) / (s2_M + s2_A + s2_MA + (s2_IM + s2_IA + e)/n_i)``.
    """
    return generalizability(components, SYSTEM, {"task": n_tasks, REPLICATE: n_replicates})


def leaderboard_model_reliability(components, n_benchmarks: float, n_tasks: float, n_scaffolds: float = 1,
                                  n_replicates: float = 1) -> np.ndarray:
    """Pooled leaderboard model ranking, seed 000 Eq. 7.

    ``s2_M / (s2_M + s2_BM/n_b + s2_MA/n_a + s2_BMA/(n_b n_a) + s2_IM[B]/(n_b n_i) + e/(n_b n_i n_a))``
    for the pooled fit (Eq. 6); ``n_tasks`` is tasks per benchmark.
    """
    return generalizability(components, "model", {"benchmark": n_benchmarks, "task": n_tasks,
                                                  "scaffold": n_scaffolds, REPLICATE: n_replicates})


def inter_scaffold_reliability(components, n_tasks: float, n_benchmarks: float = 1,
                               n_replicates: float = 1, model: str = "model",
                               scaffold: str = "scaffold") -> np.ndarray:
    """Inter-scaffold reliability ``rho_AA'`` (seed 000 Eq. 5), per draw.

    The correlation of model scores under two independently sampled scaffolds
    on the same tasks (and benchmarks).  Components shared by the two scores
    (terms with the model facet but not the scaffold facet) form the numerator;
    the denominator adds the scaffold-specific terms (model and scaffold facets)
    and the residual, each with ``n_a = 1``:

    ``rho_AA' = (s2_M + s2_IM/n_i) / (s2_M + s2_IM/n_i + s2_MA + e/n_i)`` for a
    per-benchmark fit (Eq. 5 exactly).  For a pooled fit the same rule adds
    ``s2_BM/n_b`` and ``s2_IM[B]/(n_b n_i)`` to the shared part and
    ``s2_BMA/n_b`` and ``e/(n_b n_i)`` to the specific part (our extension).
    Facet main effects and task-by-scaffold terms cancel from model contrasts.
    """
    c = as_components(components)
    if model not in c.facets or scaffold not in c.facets:
        raise ValueError(f"{c.source}: inter-scaffold reliability needs '{model}' and '{scaffold}' facets; "
                         f"terms are {', '.join(c.terms)}")
    o = frozenset({model})
    eff = _effective_sizes(c.facets, o, {"task": n_tasks, "benchmark": n_benchmarks, scaffold: 1.0,
                                         REPLICATE: n_replicates})
    shared, specific = np.zeros(len(c.terms)), np.zeros(len(c.terms))
    for k, fs in enumerate(c.facet_sets):
        if model in fs and scaffold not in fs:
            shared[k] = _inv_prod(fs - o, eff)
        elif model in fs:
            specific[k] = _inv_prod(fs - o - {scaffold}, eff)
    x = c.matrix
    num = x @ shared
    return _ratio(num, x @ specific + c.residual * _inv_prod(eff, eff))


def variance_shares(components) -> dict[str, np.ndarray]:
    """Per-draw variance shares ``pi_k = s2_k / (sum_j s2_j + e)`` (SPEC sec. 3), residual included."""
    c = as_components(components)
    total = c.matrix.sum(axis=1) + c.residual
    out = {t: c.draws[t] / total for t in c.terms}
    out["residual"] = c.residual / total
    return out


class NotEstimable(ValueError):
    """A quantity the fit cannot estimate: it depends on a term the fit does not have (left out because
    the design cannot separate it, or not in the formula).  ``reason`` says which and why."""

    def __init__(self, quantity: str, reason: str):
        self.quantity, self.reason = quantity, reason
        super().__init__(f"{quantity} is not estimable: {reason}")


def _gap_parts(c: VarianceComponents, o: frozenset[str], task: str) -> tuple[np.ndarray, np.ndarray]:
    uni, inter = np.zeros(len(c.terms)), np.zeros(len(c.terms))
    for k, fs in enumerate(c.facet_sets):
        if fs <= o:
            uni[k] = 1.0
        elif fs & o and task in fs and fs - o <= {task, "benchmark"}:
            inter[k] = 1.0
    return uni, inter


def gap_ratio_not_estimable(components, obj="model", task: str = "task") -> str | None:
    """Why the capability-gap ratio cannot be estimated from this fit, or None when it can.

    The ratio compares the object's variance with its by-task interaction.  A fit without any
    object-by-task term (``task:model`` left out because, with one response per model-task cell,
    its variance cannot be told from the trial residual; seed 000 Prop. E.2) would give 1 in every
    draw by construction: that is not a finding about the agents, so it is not reported as one.
    """
    c = as_components(components)
    o = object_facets(obj)
    uni, inter = _gap_parts(c, o, task)
    name = _object_name(o)
    if not uni.any():
        return f"the fit has no variance component for the {name}"
    if not inter.any():
        return (f"the fit has no {name}-by-task term: the design cannot separate it from the trial residual "
                f"(one response per {name}-task cell) or the formula leaves it out, so the ratio would be 1 by "
                "construction; more than one trial per cell (or a formula with that term) makes it estimable")
    return None


def capability_gap_ratio(components, obj="model", task: str = "task") -> np.ndarray:
    """Capability-gap ratio ``s2_agent / (s2_agent + s2_agent:task)`` (seed 003 sec. 3), per draw.

    ``s2_agent`` is the universe-score variance of the object: ``s2_M`` for
    models, ``s2_M + s2_A + s2_MA`` for systems (``obj="system"``), ``s2_a`` for
    seed 003's single ``agent`` facet.  ``s2_agent:task`` is the sum of the
    object-by-task interaction terms: every term that meets the object and
    whose other facets are the task facet, or the task nested in its
    benchmark (``task:model``, ``benchmark:task:model``; for systems also the
    task-by-scaffold terms).  Object-by-benchmark terms are in neither part.
    Near 0: agents differ in *which* tasks they solve, not overall (a
    specialisation pattern).  A draw with both parts 0 gives 0.

    Raises
    ------
    NotEstimable
        The fit has no object term or no object-by-task term (:func:`gap_ratio_not_estimable`).
    """
    c = as_components(components)
    o = object_facets(obj)
    why = gap_ratio_not_estimable(c, o, task)
    if why is not None:
        raise NotEstimable("the capability-gap ratio", why)
    uni, inter = _gap_parts(c, o, task)
    x = c.matrix
    return _ratio(x @ uni, x @ inter)


#: Seed 000 equation numbers of the model-versus-scaffold contrasts, by (fit, level).
CONTRAST_EQUATIONS: dict[tuple[str, str], int] = {
    ("per-benchmark", "universe"): 11, ("per-benchmark", "task"): 12,
    ("pooled", "universe"): 13, ("pooled", "benchmark"): 14, ("pooled", "task"): 15,
}
_CONTRAST_LEVELS = {"universe": frozenset(), "benchmark": frozenset({"benchmark"}),
                    "task": frozenset({"benchmark", "task"})}


def model_scaffold_contrast(components, level: str = "universe", n_tasks: float = 1, n_benchmarks: float = 1,
                            n_replicates: float = 1, model: str = "model", scaffold: str = "scaffold") -> np.ndarray:
    """Model-versus-scaffold contrast ``Delta rho^2`` (seed 000 Eqs. 11-15), per draw, in [-1, 1].

    Definition used (the seed's Table 9 is loose: its row formula
    ``sigma_o^2 / (sigma_o^2 + sigma_delta^2)`` with ``sigma_o^2 = s2_M - s2_A``
    can be negative and unbounded)::

        Delta = (V_M - V_A) / D

    ``D`` is the total system variance of the design, the denominator of the
    system reliability (Eq. 4 per benchmark; its pooled analogue)::

        D = s2_M + s2_A + s2_MA + (s2_BM + s2_BA + s2_BMA)/n_b
            + (s2_IM[B] + s2_IA[B] + e/n_r)/(n_b n_i)

    and ``V_M`` (``V_A``) sums the model-only (scaffold-only) terms at the
    requested level, each divided by its sample sizes:

    * ``"universe"`` (Eq. 11 per benchmark, Eq. 13 pooled): ``V_M = s2_M``, ``V_A = s2_A``;
    * ``"benchmark"`` (Eq. 14): ``V_M = s2_M + s2_BM/n_b``, ``V_A = s2_A + s2_BA/n_b``;
    * ``"task"`` (Eq. 12, Eq. 15): adds ``s2_IM[B]/(n_b n_i)`` and ``s2_IA[B]/(n_b n_i)``.

    So ``Delta`` is the difference between the model's and the scaffold's
    shares of one common denominator; it lies in [-1, 1] and is positive when
    the model contribution is larger (the reading of seed 000 Fig. 2, "over
    denominator from Eq. 4").  A draw with ``D = 0`` gives 0.
    """
    if level not in _CONTRAST_LEVELS:
        raise ValueError(f"level should be one of {', '.join(_CONTRAST_LEVELS)}, got {level!r}")
    c = as_components(components)
    if model not in c.facets or scaffold not in c.facets:
        raise ValueError(f"{c.source}: the model-versus-scaffold contrast needs '{model}' and '{scaffold}' "
                         f"facets; terms are {', '.join(c.terms)}")
    sizes = {"task": n_tasks, "benchmark": n_benchmarks, REPLICATE: n_replicates}
    o = frozenset({model, scaffold})
    w = design_weights(c, o, sizes)
    allowed = _CONTRAST_LEVELS[level]
    vm, va = np.zeros(len(c.terms)), np.zeros(len(c.terms))
    for k, fs in enumerate(c.facet_sets):
        for f, vec in ((model, vm), (scaffold, va)):
            if fs & o == {f} and fs - {f} <= allowed:
                vec[k] = _inv_prod(fs - {f}, w.sizes)
    x = c.matrix
    den = x @ (w.universe + w.relative) + c.residual * w.residual
    num = x @ (vm - va)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / den
    return np.where(den > 0, out, 0.0)


# ---------------------------------------------------------------------------
# Every estimand of a design at once
# ---------------------------------------------------------------------------

def estimand_draws(components, obj="model", sizes: Mapping[str, float] | None = None) -> dict[str, np.ndarray]:
    """Per-draw arrays of every estimand that applies to a fit and design.

    Keys: ``Erho2``, ``SNR``, ``Phi``, ``Erho2_task_ceiling``,
    ``Phi_task_ceiling``, ``capability_gap_ratio`` (when estimable: :func:`gap_ratio_not_estimable`),
    ``share:<term>`` and
    ``share:residual``; with model and scaffold facets and a model object also
    ``rho_AA`` (Eq. 5) and the contrasts ``delta_rho2_universe`` (Eq. 11/13),
    ``delta_rho2_task`` (Eq. 12/15) and, for pooled fits,
    ``delta_rho2_benchmark`` (Eq. 14).
    """
    c = as_components(components)
    sizes = dict(sizes or {})
    o = object_facets(obj)
    out = {
        "Erho2": generalizability(c, o, sizes),
        "SNR": signal_to_noise(c, o, sizes),
        "Phi": dependability(c, o, sizes),
        "Erho2_task_ceiling": task_only_ceiling(c, o, sizes),
        "Phi_task_ceiling": task_only_ceiling(c, o, sizes, "absolute"),
    }
    if gap_ratio_not_estimable(c, o) is None:
        out["capability_gap_ratio"] = capability_gap_ratio(c, o)
    if {"model", "scaffold"} <= c.facets:
        nt, nb, nr = sizes.get("task", 1.0), sizes.get("benchmark", 1.0), sizes.get(REPLICATE, 1.0)
        if o == {"model"}:
            out["rho_AA"] = inter_scaffold_reliability(c, nt, nb, nr)
        levels = ("universe", "benchmark", "task") if "benchmark" in c.facets else ("universe", "task")
        for level in levels:
            out[f"delta_rho2_{level}"] = model_scaffold_contrast(c, level, nt, nb, nr)
    for t, v in variance_shares(c).items():
        out[f"share:{t}"] = v
    return out


@dataclass
class EstimandTable:
    """Summaries of every estimand of one fit and design (the numbers the CLI, GUI and PDF show).

    Attributes
    ----------
    object
        Object of measurement (facets joined by ':').
    sizes
        Effective sample sizes (facets absent from the fit forced to 1).
    summaries
        Estimand name -> :class:`Summary`.
    equations
        Estimand name -> where it comes from (seed and equation).
    not_estimable
        Estimand name -> why this fit cannot estimate it (no summary is given for it).
    """

    object: str
    sizes: dict[str, float]
    summaries: dict[str, Summary]
    equations: dict[str, str] = field(default_factory=dict)
    not_estimable: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return to_jsonable({"object": self.object, "sizes": self.sizes,
                            "summaries": {k: v.to_dict() for k, v in self.summaries.items()},
                            "equations": self.equations, "not_estimable": self.not_estimable})


def estimand_table(components, obj="model", sizes: Mapping[str, float] | None = None) -> EstimandTable:
    """Summarise :func:`estimand_draws` (median, 68% and 95% HDI; ``P(>0)`` for contrasts)."""
    c = as_components(components)
    o = object_facets(obj)
    draws = estimand_draws(c, o, sizes)
    pooled = "benchmark" in c.facets
    fit = "pooled" if pooled else "per-benchmark"
    eq = {"Erho2": cite("hardy2026", "Eq. 7" if pooled else ("Eq. 3" if o == {"model"} else "Eq. 4")),
          "SNR": cite("hardy2026", "Table 1"), "Phi": f"{cite('brennan2001')} (absolute error)",
          "Erho2_task_ceiling": cite("hardy2026", "Eq. 8"), "Phi_task_ceiling": "limit n_tasks -> inf",
          "capability_gap_ratio": cite("ddr2026", "sec. 3"), "rho_AA": cite("hardy2026", "Eq. 5")}
    for level in ("universe", "benchmark", "task"):
        n = CONTRAST_EQUATIONS.get((fit, level))
        if n:
            eq[f"delta_rho2_{level}"] = cite("hardy2026", f"Eq. {n}")
    summaries = {k: summarize(v, prob_positive=k.startswith("delta_rho2")) for k, v in draws.items()}
    w = design_weights(c, o, sizes)
    why = gap_ratio_not_estimable(c, o)
    return EstimandTable(_object_name(o), w.sizes, summaries,
                         {k: v for k, v in eq.items() if k in summaries} |
                         {k: "variance share (residual pi^2/3 in the total)" for k in summaries if k.startswith("share:")},
                         {} if why is None else {"capability_gap_ratio": why})
