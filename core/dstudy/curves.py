"""D-study curves: reliability, SNR, required sizes and P(target met) of a design, per posterior draw.

Everything here is a function of a posterior of variance components (see
:mod:`.reliability`) and a :class:`DStudyDesign`; every estimand is computed per
draw and then summarised, and the GUI, the CLI and the PDF call the same
functions, so they show the same numbers.

Speed (the D-study view's slider)
---------------------------------
For one facet ``f`` varied with the others fixed, every error variance of the
D-study rule is ``A + B / n_f`` per draw (each term is divided by ``n_f`` once
or not at all), and the universe score ``U`` does not depend on the design.
:class:`DStudyModel` keeps the ``(S, T)`` matrix of draws; a curve is three
matrix-vector products (``U``, ``A``, ``B``), one broadcast over the grid and
one sort per curve for the median and HDIs.  The sort is what costs: curve
bands use an evenly thinned subset of at most ``band_draws`` draws (1,000 by
default; ``None`` for all draws).  Point readouts at the design, the
probability of meeting a target, the required-n distribution and the
asymptotes always use every draw.  ``bench/investigations/bench_dstudy.py`` measures a move.

Definitions chosen where the papers are loose
---------------------------------------------
* **Meeting a target** with assurance ``prob``: ``P(coefficient >= target | y)
  >= prob``; ``prob = 0.5`` means the posterior median reaches the target.
* **Required n** (budget frontier): per draw, the smallest integer ``n >= 1``
  of the varied facet whose coefficient reaches the target (``inf`` if the
  limit ``n -> inf`` stays below it).  From ``U / (U + A + B/n) >= T``:
  ``n >= B / (U (1 - T) / T - A)``.
* **Cost**: a design runs ``n_models x n_scaffolds x sum_b n_tasks_b x
  n_replicates`` trials; its cost is the sum of their per-trial prices.  With
  prices per benchmark but no per-benchmark task counts, each benchmark is
  charged the mean price (benchmarks are exchangeable draws).
* **Unequal tasks per benchmark**: the benchmark-averaged score (the
  unweighted mean of per-benchmark means, as Eq. 7 of seed 000 (Hardy et al. 2026) assumes) has
  task-level error ``(1/n_b^2) sum_b (s2_IM[B] + e/(n_a n_r)) / n_i,b``, i.e.
  Eq. 7 with ``n_i`` replaced by the harmonic mean of the ``n_i,b``.
* **Reliability per dollar** (seed 003 (DDR paper 2026)): ``RPD = Erho2 / mean cost per
  observation`` for a design, per draw; agents are ranked by *accuracy per
  dollar* = mean success / mean cost per trial, because ``Erho2`` is a
  property of the design and population, not of one agent (seed 003's
  per-agent ``RPD(a, B)`` would otherwise rank agents by cost alone).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..errors import shown
from ..posterior_summary import Summary, hdi_sorted, median_sorted, summarize, summarize_sorted, to_jsonable
from ..reliability import (snr_from_reliability, DETECTION_ERHO2, DETECTION_SNR, REPLICATE, VarianceComponents,
                          as_components, design_weights, thin_index)

from ..score_reliability import (LATENT_LABEL, OBSERVED_LABEL, ScoreMoments, has_score_scale, score_coef_matrix,
                                score_moments, score_parts)
from .grids import default_grid
from .sizes import DEFAULT_BAND_DRAWS, DEFAULT_TARGETS, DStudyDesign, _facet_of

# ---------------------------------------------------------------------------
# The precomputed D-study engine
# ---------------------------------------------------------------------------

#: The scales of a coefficient: ``"observed"``, the correlation of observed success rates
#: (:mod:`..score_reliability`; what a buyer reads as scores), and ``"latent"``, the logit-scale
#: coefficient of Hardy et al. 2026 (latent ability ranking).
SCALES = ("observed", "latent")


def score_scale(components) -> str:
    """``"observed"`` when the components can give observed-score coefficients (a binomial-logit fit with
    intercept draws), ``"latent"`` otherwise (a typed-in table, a probability-scale LMM)."""
    c = as_components(components)
    return "observed" if c.intercept is not None and has_score_scale(c) else "latent"


@dataclass(frozen=True)
class CoefficientParts:
    """Per-draw ``U``, ``A``, ``B`` of ``coef(n) = U / (U + A + B/n)`` for one varied facet.

    Attributes
    ----------
    facet
        The varied facet.
    applies
        False when the facet is absent from the fit or part of the object (``B = 0``).
    u, a, b
        ``(S,)`` universe-score variance, error not divided by ``n``, error divided by ``n``.
    """

    facet: str
    applies: bool
    u: np.ndarray
    a: np.ndarray
    b: np.ndarray


def _coef(u, a, b, inv_n, snr=False):
    """Coefficient (or SNR) per draw at ``1/n = inv_n`` with the conventions of :mod:`.reliability`."""
    err = a + b * inv_n
    with np.errstate(divide="ignore", invalid="ignore"):
        out = u / err if snr else u / (u + err)
    return np.where(u > 0, out, 0.0)


@dataclass
class DStudyCurve:
    """One D-study curve: a coefficient against the size of one facet.

    Attributes
    ----------
    over
        The varied facet (``"task"``, ``"scaffold"``, ``"benchmark"``, ``"replicate"``, ...).
    estimand
        ``"Erho2"``, ``"Phi"`` or ``"SNR"``.
    grid
        ``(G,)`` sizes of the facet.
    median, hdi68, hdi95
        ``(G,)`` posterior median and ``(G, 2)`` HDIs of the estimand at each size.
    asymptote
        Summary of the limit as the facet size -> infinity (the task-only
        ceiling when ``over`` is tasks; seed 000 Eq. 8).
    observed_x, observed
        The design's size of the facet and the summary there (all draws).
    detection_band
        The SNR 2-3 reference band on the estimand's scale (seed 000 Fig. 3).
    target, p_target
        The target on the coefficient scale and ``(G,)`` ``P(coef >= target)``
        at each size (all draws).
    applies
        False when the facet is absent from the fit or part of the object (the curve is flat).
    band_draws
        Number of draws behind ``median``/``hdi*``.
    scale
        ``"observed"`` (success rates) or ``"latent"`` (logit scale; :data:`SCALES`).
    """

    over: str
    estimand: str
    grid: np.ndarray
    median: np.ndarray
    hdi68: np.ndarray
    hdi95: np.ndarray
    asymptote: Summary
    observed_x: float
    observed: Summary
    detection_band: tuple[float, float]
    target: float
    p_target: np.ndarray
    applies: bool
    band_draws: int
    scale: str = "latent"

    def to_dict(self) -> dict:
        return to_jsonable({k: getattr(self, k) for k in (
            "over", "estimand", "grid", "median", "hdi68", "hdi95", "asymptote", "observed_x", "observed",
            "detection_band", "target", "p_target", "applies", "band_draws", "scale")})


@dataclass
class RequiredN:
    """Posterior distribution of the smallest facet size that reaches a target (the budget frontier).

    Attributes
    ----------
    over, estimand, target
        The varied facet, coefficient and target.
    draws
        ``(S,)`` smallest integer size per draw (``inf``: unreachable, the ceiling is below the target).
    p_reachable
        ``P(ceiling >= target)``.
    quantiles
        Size needed for assurance ``q`` for q in 0.025, 0.16, 0.5, 0.84, 0.975:
        the smallest ``n`` with ``P(n* <= n) >= q`` (an order statistic; ``inf`` if unreachable).
    observed_n, p_target_met
        The design's size and ``P(coef >= target)`` there.
    """

    over: str
    estimand: str
    target: float
    draws: np.ndarray
    p_reachable: float
    quantiles: dict[float, float]
    observed_n: float
    p_target_met: float

    @property
    def median(self) -> float:
        return self.quantiles[0.5]

    def n_for_assurance(self, prob: float) -> float:
        """Smallest integer size with ``P(coef >= target) >= prob`` (``inf`` if none)."""
        return _order_stat(np.sort(self.draws), prob)

    def cdf(self, grid) -> np.ndarray:
        """``P(n* <= n)`` for each ``n`` of ``grid``: the probability that size ``n`` meets the target."""
        s = np.sort(self.draws)
        return np.searchsorted(s, np.asarray(grid, dtype=np.float64), side="right") / len(s)

    def to_dict(self) -> dict:
        return to_jsonable({"over": self.over, "estimand": self.estimand, "target": self.target,
                            "p_reachable": self.p_reachable,
                            "quantiles": {str(k): v for k, v in self.quantiles.items()},
                            "observed_n": self.observed_n, "p_target_met": self.p_target_met,
                            "n_draws": len(self.draws)})


def _order_stat(sorted_x: np.ndarray, q: float) -> float:
    n = len(sorted_x)
    k = min(max(int(math.ceil(q * n - 1e-12)) - 1, 0), n - 1)
    return float(sorted_x[k])


_ASSURANCE = (0.025, 0.16, 0.5, 0.84, 0.975)


@dataclass
class Readouts:
    """Point readouts of a design (all draws).

    Attributes
    ----------
    estimand
        The claim's coefficient (``"Erho2"`` or ``"Phi"``).
    coefficient, erho2, phi, snr, ceiling
        Summaries: the claim's coefficient, ``Erho2``, ``Phi``, ``SNR`` and the
        task-only ceiling of the claim's coefficient.
    target, p_target_met
        Target and ``P(coef >= target)``.
    required
        :class:`RequiredN` over tasks.
    cost, trials, rpd
        DStudyDesign cost (USD), trial count, and reliability per dollar
        (``coef / mean cost per trial``; None when the price is 0).
    scale
        ``"observed"`` (success rates) or ``"latent"`` (logit scale) for every coefficient above.
    latent
        With an observed scale, the same readouts on the latent scale (Hardy et al. 2026's figures,
        shown beside the observed ones); None otherwise.
    """

    estimand: str
    coefficient: Summary
    erho2: Summary
    phi: Summary
    snr: Summary
    ceiling: Summary
    target: float
    p_target_met: float
    required: RequiredN
    cost: float
    trials: float
    rpd: Summary | None
    scale: str = "latent"
    latent: "Readouts | None" = None

    def to_dict(self) -> dict:
        out = {k: getattr(self, k) for k in (
            "estimand", "coefficient", "erho2", "phi", "snr", "ceiling", "target", "p_target_met", "required",
            "cost", "trials", "rpd", "scale")}
        out["scale_label"] = OBSERVED_LABEL if self.scale == "observed" else LATENT_LABEL
        if self.latent is not None:
            lat = self.latent
            out["latent"] = {"scale_label": LATENT_LABEL, "coefficient": lat.coefficient, "erho2": lat.erho2,
                             "phi": lat.phi, "ceiling": lat.ceiling, "p_target_met": lat.p_target_met,
                             "required": lat.required}
        return to_jsonable(out)


@dataclass
class DStudyView:
    """Everything the D-study view shows for one design: curves over each facet and the readouts."""

    design: DStudyDesign
    curves: dict[str, DStudyCurve]
    readouts: Readouts

    def to_dict(self) -> dict:
        return to_jsonable({"design": self.design.to_dict(), "curves": {k: v.to_dict() for k, v in self.curves.items()},
                            "readouts": self.readouts.to_dict()})


class DStudyModel:
    """A posterior prepared for fast D-studies (one object per fit; reuse it across slider moves).

    Parameters
    ----------
    components
        Mapping term -> ``sigma^2`` draws, or :class:`~.reliability.VarianceComponents`.
    band_draws
        Draws behind curve medians and HDIs (evenly thinned; ``None``: all).
    scale
        ``"latent"`` (the logit-scale coefficients of Hardy et al. 2026) or ``"observed"`` (the reliability
        of observed success rates, :mod:`..score_reliability`; needs intercept draws).
    moments
        Observed-score moments already computed, by object facets (:func:`..score_reliability.score_moments`).
    """

    def __init__(self, components, band_draws: int | None = DEFAULT_BAND_DRAWS, scale: str = "latent",
                 moments: Mapping[frozenset, ScoreMoments] | None = None):
        self.components: VarianceComponents = as_components(components)
        c = self.components
        if scale not in SCALES:
            raise ValueError(f"scale should be one of {', '.join(SCALES)}, got {scale!r}")
        if scale == "observed" and score_scale(c) != "observed":
            raise ValueError(f"{c.source}: no observed-score coefficient (it needs a binomial-logit fit with "
                             "intercept draws); use scale='latent'")
        self.scale = scale
        self._x = c.matrix
        self._e = c.residual
        # the observed-score moments per object: given (computed on a worker thread) or computed on first use
        self._moments: dict[frozenset, ScoreMoments] = dict(moments or {})
        idx = thin_index(c.n_draws, band_draws)
        self._band_idx = idx
        self.band_draws = c.n_draws if idx is None else len(idx)
        self._band_arg = band_draws

    @property
    def latent(self) -> "DStudyModel":
        """The same posterior on the latent scale (itself when it is latent)."""
        if self.scale == "latent":
            return self
        twin = getattr(self, "_latent", None)
        if twin is None:
            twin = self._latent = DStudyModel(self.components, self._band_arg, "latent")
        return twin

    def moments(self, obj) -> ScoreMoments:
        """The logit-normal moments of the object (computed once per object; :mod:`..score_reliability`)."""
        o = frozenset(obj)
        if o not in self._moments:
            self._moments[o] = score_moments(self.components, o)
        return self._moments[o]

    @property
    def n_draws(self) -> int:
        return self.components.n_draws

    # -- per-draw coefficient arrays --------------------------------------
    def parts(self, design: DStudyDesign, over: str = "task", claim: str | None = None) -> CoefficientParts:
        """``U``, ``A``, ``B`` per draw for ``coef(n) = U / (U + A + B/n)`` as facet ``over`` varies."""
        c = self.components
        claim = claim or design.claim
        f = _facet_of(over)
        o = design.object_facets
        sizes = design.sizes()
        sizes[f] = 1.0
        if self.scale == "observed":
            u, a, b = score_parts(c, self.moments(o), sizes, f, claim)
            return CoefficientParts(f, f not in o and (f in c.facets or f == REPLICATE), u, a, b)
        w = design_weights(c, o, sizes)
        werr = w.error(claim)
        # Which weights carry 1/n_f: a term's divisor is F(t) - o (relative) or F(t) (absolute-only).
        applies = f not in o and (f in c.facets or f == REPLICATE)
        inc = np.array([applies and f in fs for fs in c.facet_sets], dtype=np.float64)
        res_inc = 1.0 if applies else 0.0
        u = self._x @ w.universe
        a = self._x @ (werr * (1 - inc)) + self._e * (w.residual * (1 - res_inc))
        b = self._x @ (werr * inc) + self._e * (w.residual * res_inc)
        return CoefficientParts(f, applies, u, a, b)

    def coefficient(self, design: DStudyDesign, claim: str | None = None) -> np.ndarray:
        """Per-draw coefficient (Erho2 or Phi) of the design."""
        p = self.parts(design, "task", claim)
        return _coef(p.u, p.a, p.b, 1.0 / design.effective_n_tasks)

    # -- curves -----------------------------------------------------------
    def curve(self, design: DStudyDesign, over: str = "n_tasks", grid=None, estimand: str | None = None,
              target: float | None = None) -> DStudyCurve:
        """D-study curve of the design's coefficient (or ``"SNR"``) as one facet varies.

        See :func:`d_study_curve`.
        """
        return self._curve(design, over, grid, estimand, target)

    def _curve(self, design: DStudyDesign, over: str, grid, estimand: str | None, target: float | None,
               parts: CoefficientParts | None = None, observed: Summary | None = None,
               asymptote: Summary | None = None) -> DStudyCurve:
        # ``observed``/``asymptote``: summaries a caller already has (the view shares them across curves).
        f = _facet_of(over)
        estimand = estimand or design.estimand
        if estimand not in ("Erho2", "Phi", "SNR"):
            raise ValueError(f"estimand should be 'Erho2', 'Phi' or 'SNR', got {estimand!r}")
        claim = "absolute" if estimand == "Phi" else "relative"  # SNR is relative (seed 000 Table 1)
        target = design.default_target if target is None else _check_target(target)
        p = parts or self.parts(design, f, claim)
        x_obs = design.size_of(f)
        grid = default_grid(f, x_obs) if grid is None else np.asarray(grid, dtype=np.float64)
        if grid.ndim != 1 or grid.size == 0 or not (grid > 0).all():
            raise ValueError("grid should be a non-empty 1-D array of positive sizes")
        snr = estimand == "SNR"
        idx = self._band_idx
        u, a, b = (p.u, p.a, p.b) if idx is None else (p.u[idx], p.a[idx], p.b[idx])
        # The hot path: (G, s) C-ordered so each grid point's draws are contiguous for the sort.
        y = np.multiply.outer(1.0 / grid, b)
        y += a
        if not snr:
            y += u
        with np.errstate(divide="ignore", invalid="ignore"):
            np.divide(u, y, out=y)
        if not (u > 0).all():
            y[:, ~(u > 0)] = 0.0
        y.sort(axis=1)
        med = median_sorted(y)
        h68 = np.column_stack(hdi_sorted(y, 0.68))
        h95 = np.column_stack(hdi_sorted(y, 0.95))
        thr = _continuous_threshold(p, target)
        p_t = np.searchsorted(thr, grid, side="right") / len(thr)
        band = DETECTION_SNR if snr else DETECTION_ERHO2
        asymptote = asymptote or summarize(_coef(p.u, p.a, p.b, 0.0, snr))
        observed = observed or summarize(_coef(p.u, p.a, p.b, 1.0 / x_obs, snr))
        return DStudyCurve(f, estimand, grid, med, h68, h95, asymptote, x_obs, observed, band, target, p_t,
                           p.applies, self.band_draws, self.scale)

    # -- budget frontier --------------------------------------------------
    def required_n(self, design: DStudyDesign, over: str = "n_tasks", target: float | None = None,
                   claim: str | None = None) -> RequiredN:
        """Posterior distribution of the smallest size of ``over`` reaching the target (closed form per draw).

        See :func:`required_n`.
        """
        return self._required_n(design, over, target, claim)

    def _required_n(self, design: DStudyDesign, over: str, target: float | None, claim: str | None = None,
                    parts: CoefficientParts | None = None) -> RequiredN:
        claim = claim or design.claim
        target = DEFAULT_TARGETS[claim] if target is None else _check_target(target)
        p = parts or self.parts(design, over, claim)
        n = _required_integer(p, target)
        s = np.sort(n)
        x_obs = design.size_of(p.facet)
        met = float(np.mean(_coef(p.u, p.a, p.b, 1.0 / x_obs) >= target))
        return RequiredN(p.facet, "Phi" if claim == "absolute" else "Erho2", target, n,
                         float(np.mean(np.isfinite(n))), {q: _order_stat(s, q) for q in _ASSURANCE}, x_obs, met)

    def p_target_met(self, design: DStudyDesign, target: float | None = None, claim: str | None = None) -> float:
        """``P(coef >= target | y)`` of a design (all draws)."""
        claim = claim or design.claim
        target = DEFAULT_TARGETS[claim] if target is None else _check_target(target)
        return float(np.mean(self.coefficient(design, claim) >= target))

    # -- one slider move --------------------------------------------------
    def readouts(self, design: DStudyDesign, target: float | None = None) -> Readouts:
        """Point readouts of the design (all draws)."""
        return self._readouts(design, target)[0]

    def _readouts(self, design: DStudyDesign, target: float | None, parts: CoefficientParts | None = None):
        target = design.default_target if target is None else _check_target(target)
        p = parts or self.parts(design, "task")
        q = self.parts(design, "task", "relative" if design.claim == "absolute" else "absolute")
        inv = 1.0 / design.effective_n_tasks
        coef = np.sort(_coef(p.u, p.a, p.b, inv))
        coef2 = np.sort(_coef(q.u, q.a, q.b, inv))
        s_coef, s_coef2 = summarize_sorted(coef), summarize_sorted(coef2)
        erho2, s_erho2, s_phi = (coef, s_coef, s_coef2) if design.claim == "relative" else (coef2, s_coef2, s_coef)
        # SNR = Erho2 / (1 - Erho2) is increasing in Erho2, so the sorted Erho2 gives sorted SNR.
        s_snr = summarize_sorted(snr_from_reliability(erho2))
        ceiling = summarize(_coef(p.u, p.a, p.b, 0.0))
        price = design.mean_price()
        rpd = _scaled(s_coef, 1.0 / price) if price > 0 else None
        met = 1.0 - np.searchsorted(coef, target, side="left") / len(coef)
        latent = self.latent._readouts(design, target)[0] if self.scale == "observed" else None
        out = Readouts(design.estimand, s_coef, s_erho2, s_phi, s_snr, ceiling, target, float(met),
                       self._required_n(design, "task", target, parts=p), design.cost(), design.trial_count(), rpd,
                       self.scale, latent)
        return out, p

    def view(self, design: DStudyDesign, grids: Mapping[str, Sequence[float]] | None = None, target: float | None = None,
             overs: Iterable[str] = ("n_tasks", "n_scaffolds", "n_benchmarks"),
             previous: DStudyView | None = None) -> DStudyView:
        """Every curve and readout of the D-study view for one design (one slider move).

        The curves share the readouts' summary at the observed design and the
        task-only ceiling, so the view shows one number for each.

        ``previous`` (the view of the last move, from this model) lets a curve be reused when only
        its own facet's size changed: the curve over facet f holds every other size at the design
        and sets n_f on its grid, so it does not depend on n_f (:meth:`parts` sets ``sizes[f] = 1``);
        only its marker (``observed_x``, ``observed``) moves.  The result is the same as without
        ``previous``; a move of the task slider then sorts no draws for the task curve.
        """
        grids = dict(grids or {})
        readouts, p_task = self._readouts(design, target)
        curves = {}
        for over in overs:
            f = _facet_of(over)
            g = grids.get(over, grids.get(f))
            old = None if previous is None else previous.curves.get(over)
            if old is not None and self._reusable(old, previous.design, design, f, g, readouts.target):
                curves[over] = dataclasses.replace(old, observed_x=design.size_of(f), observed=readouts.coefficient)
                continue
            p = p_task if f == "task" else self.parts(design, f)
            curves[over] = self._curve(design, f, g, None, readouts.target, p, readouts.coefficient,
                                       readouts.ceiling if f == "task" else None)
        return DStudyView(design, curves, readouts)

    @staticmethod
    def _reusable(old: DStudyCurve, old_design: DStudyDesign, design: DStudyDesign, f: str, grid, target: float) -> bool:
        """The curve ``old`` over ``f`` is this design's too: only n_f changed (same grid, target, claim...)."""
        if old.target != target or old.estimand != design.estimand:
            return False
        if grid is None or len(grid) != len(old.grid) or not np.array_equal(np.asarray(grid, dtype=np.float64),
                                                                             old.grid):
            return False
        try:
            return old_design.with_size(f, design.size_of(f)) == design
        except (TypeError, ValueError):
            return False


def _scaled(s: Summary, k: float) -> Summary:
    """Summary of ``k x`` from that of ``x`` (k > 0: order, median and HDI windows are unchanged)."""
    return Summary(s.median * k, s.mean * k, (s.hdi68[0] * k, s.hdi68[1] * k), (s.hdi95[0] * k, s.hdi95[1] * k),
                   s.n_draws, s.prob_positive)


def _check_target(target: float) -> float:
    t = float(target)
    if not 0 < t < 1:
        raise ValueError(f"target should be a coefficient in the interval (0, 1), got {shown(target)}; "
                         "for an SNR target s use s / (1 + s)")
    return t


def _continuous_threshold(p: CoefficientParts, target: float) -> np.ndarray:
    """Sorted per-draw real ``n`` at which ``coef(n) = target`` (0 if always met, inf if never)."""
    d = p.u * (1 - target) / target - p.a  # error budget left for B/n
    with np.errstate(divide="ignore", invalid="ignore"):
        thr = np.where(p.b > 0, np.where(d > 0, p.b / d, np.inf), np.where(d >= 0, 0.0, np.inf))
    thr[~(p.u > 0)] = np.inf
    return np.sort(thr)


def _required_integer(p: CoefficientParts, target: float) -> np.ndarray:
    """Smallest integer n >= 1 with ``coef(n) >= target`` per draw, exact against direct evaluation."""
    d = p.u * (1 - target) / target - p.a
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = np.where(p.b > 0, np.where(d > 0, p.b / d, np.inf), np.where(d >= 0, 1.0, np.inf))
    raw[~(p.u > 0)] = np.inf
    fin = np.isfinite(raw)
    n = np.full(raw.shape, np.inf)
    n[fin] = np.maximum(1.0, np.ceil(raw[fin]))
    # Floating-point guard at the boundary: make n agree with evaluating the coefficient itself.
    k = np.flatnonzero(fin)
    if k.size:
        u, a, b, nk = p.u[k], p.a[k], p.b[k], n[k]
        up = _coef(u, a, b, 1.0 / nk) < target
        nk = nk + up
        down = (nk > 1) & (_coef(u, a, b, 1.0 / np.maximum(nk - 1, 1)) >= target)
        n[k] = nk - down
    return n


# ---------------------------------------------------------------------------
# Module-level entry points (accept components or a prepared model)
# ---------------------------------------------------------------------------

def _model(components, band_draws=DEFAULT_BAND_DRAWS) -> DStudyModel:
    return components if isinstance(components, DStudyModel) else DStudyModel(components, band_draws)


def d_study_curve(components, design: DStudyDesign, over: str = "n_tasks", grid=None, *, estimand: str | None = None,
                  target: float | None = None, band_draws: int | None = DEFAULT_BAND_DRAWS) -> DStudyCurve:
    """D-study curve: the design's coefficient (or SNR) against the size of one facet (SPEC sec. 4).

    Parameters
    ----------
    components
        Mapping term -> ``sigma^2`` draws, :class:`~.reliability.VarianceComponents`
        or a prepared :class:`DStudyModel` (reuse one for many calls).
    design
        The current design; the other facets stay at its sizes.
    over
        ``"n_tasks"``, ``"n_scaffolds"``, ``"n_benchmarks"``, ``"n_replicates"``
        or a facet name.
    grid
        Sizes to evaluate; default :func:`default_grid`.
    estimand
        ``"Erho2"``, ``"Phi"`` or ``"SNR"``; default from the design's claim.
    target
        Target on the coefficient scale; default 0.85 (relative) / 0.90 (absolute).
    band_draws
        Draws behind the bands when ``components`` is not a prepared model.

    Returns
    -------
    DStudyCurve
        Median, 68% and 95% HDI per grid point, the asymptote (the task-only
        ceiling of seed 000 Eq. 8 when ``over`` is tasks), the observed design,
        the detection band (SNR 2-3) and ``P(target met)`` per grid point.
    """
    return _model(components, band_draws).curve(design, over, grid, estimand, target)


def required_n(components, design: DStudyDesign, over: str = "n_tasks", target: float | None = None) -> RequiredN:
    """Posterior distribution of the smallest size of ``over`` reaching the target (the budget frontier).

    Per draw, ``U / (U + A + B/n) >= T`` is solved in closed form:
    ``n >= B / (U (1 - T)/T - A)``, ``inf`` when ``U (1 - T)/T <= A`` (the limit
    ``n -> inf`` is below the target; seed 000 Prop. 3.1).
    """
    return _model(components, None).required_n(design, over, target)


def p_target_met(components, design: DStudyDesign, target: float | None = None) -> float:
    """``P(coef >= target | y)`` for a design (default target by claim)."""
    return _model(components, None).p_target_met(design, target)


# ---------------------------------------------------------------------------
# Fixed task budget: breadth versus depth (Corollary 3.2)
# ---------------------------------------------------------------------------

@dataclass
class BreadthCurve:
    """The coefficient when a fixed task budget ``N = n_b n_i`` is spread over ``n_b`` benchmarks.

    Attributes
    ----------
    total_tasks
        ``N`` (tasks per scaffold).
    n_benchmarks, tasks_per_benchmark
        ``(G,)`` grid of ``n_b`` and ``N / n_b`` (fractional when ``n_b`` does not divide ``N``, as in Eq. 9).
    median, hdi68, hdi95
        Posterior summaries per grid point (all draws).
    estimand
        ``"Erho2"`` or ``"Phi"``.
    """

    total_tasks: float
    n_benchmarks: np.ndarray
    tasks_per_benchmark: np.ndarray
    median: np.ndarray
    hdi68: np.ndarray
    hdi95: np.ndarray
    estimand: str

    def to_dict(self) -> dict:
        return to_jsonable({k: getattr(self, k) for k in (
            "total_tasks", "n_benchmarks", "tasks_per_benchmark", "median", "hdi68", "hdi95", "estimand")})


def _weight_matrix(c: VarianceComponents, obj, size_list: Sequence[Mapping[str, float]], claim: str):
    """Universe weights and ``(T, D)`` error weights, ``(D,)`` residual weights for many designs."""
    ws = [design_weights(c, obj, s) for s in size_list]
    return ws[0].universe, np.column_stack([w.error(claim) for w in ws]), np.array([w.residual for w in ws])


def _coef_matrix(c: VarianceComponents, obj, size_list, claim: str, scale: str = "latent") -> np.ndarray:
    """``(D, S)`` coefficients of many designs, per draw, on the latent or the observed-score scale."""
    if scale == "observed":
        return score_coef_matrix(c, score_moments(c, obj), size_list, claim)
    uw, k, r = _weight_matrix(c, obj, size_list, claim)
    u = c.matrix @ uw
    err = (c.matrix @ k).T + np.multiply.outer(r, c.residual)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = u / (u + err)
    return np.where(u > 0, out, 0.0)


def fixed_budget_breadth(components, total_tasks: float, design: DStudyDesign | None = None,
                         n_benchmarks: Sequence[float] | None = None) -> BreadthCurve:
    """Coefficient at a fixed task budget as it is spread over more benchmarks (seed 000 Corollary 3.2, Eq. 9).

    With ``n_i = N / n_b``, Eq. 7's error is ``s2_MA/n_a + (s2_BM + s2_BMA/n_a)/n_b
    + (s2_IM[B] + e/n_a)/N``: only the benchmark-conditioned part changes, so
    breadth raises reliability whenever ``s2_BM + s2_BMA/n_a > 0``.

    Parameters
    ----------
    components
        A pooled fit (with benchmark terms).
    total_tasks
        ``N``, tasks per scaffold in all.
    design
        Supplies ``n_scaffolds``, ``n_replicates``, object and claim (default: model, relative, one scaffold).
    n_benchmarks
        Grid of ``n_b`` (default ``1..min(N, 20)``).
    """
    c = as_components(components)
    design = design or DStudyDesign()
    if not total_tasks >= 1:
        raise ValueError(f"total_tasks should be >= 1, got {shown(total_tasks)}")
    grid = (np.arange(1, min(int(total_tasks), 20) + 1, dtype=np.float64) if n_benchmarks is None
            else np.asarray(n_benchmarks, dtype=np.float64))
    if grid.ndim != 1 or grid.size == 0 or (grid < 1).any() or (grid > total_tasks).any():
        raise ValueError(f"n_benchmarks should be sizes between 1 and total_tasks ({total_tasks})")
    base = design.sizes()
    size_list = [{**base, "benchmark": nb, "task": total_tasks / nb} for nb in grid]
    y = np.sort(_coef_matrix(c, design.object_facets, size_list, design.claim), axis=1)
    return BreadthCurve(float(total_tasks), grid, total_tasks / grid, median_sorted(y),
                        np.column_stack(hdi_sorted(y, 0.68)), np.column_stack(hdi_sorted(y, 0.95)), design.estimand)


