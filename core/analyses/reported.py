"""What a refit reports: the quantities its run length and its convergence verdict are judged on.

A refit of an analysis is read for a few numbers computed per posterior draw from its variance
components, not for each component on its own:

- a hold-out split's two fits (seed 003 (DDR paper 2026) sec. 5.4; :mod:`.heldout`): the posterior median of the
  per-draw Erho2 at the split's held-out design;
- a difficulty stratum (seed 003 sec. 5.3; :mod:`.difficulty`): the median and 95% HDI of the
  per-draw coefficient at the whole corpus's design.

:class:`ReportedQuantity` names one such estimand declaratively (a frozen dataclass: the estimand,
its design or term; no function), so it is part of the refit's cache key (:meth:`to_dict`) and
travels to a Dask worker with its request.  :meth:`ReportedQuantity.draws` turns the sigma draws
into the per-draw estimand with the functions the analysis reports with
(:func:`~ddr_explorer.core.fitting.components_from_posterior` and
:meth:`~ddr_explorer.core.dstudy.DStudyModel.coefficient`, as :func:`.refits.coefficient_draws`).

The stopping rule of such a refit (:func:`~ddr_explorer.core.model.stopping.check_reported`): split
R-hat <= 1.01 on every variance component AND every reported quantity, bulk and tail ESS >= 1.1 x 400
on every reported quantity, no divergence.  Its verdict (:func:`reported_verdict`, the same with the
gate's 400) is what the analysis counts as "converged" for that refit; the posterior's own
:attr:`~ddr_explorer.core.model.diagnostics.Diagnostics.converged` (every component's bulk ESS >= 400,
:mod:`ddr_explorer.core.gate`) is left as it is, so a refit's posterior shown as a G-study is never
upgraded by it.

Leave-one-benchmark/model-out (:mod:`.stability`) keeps the component rule: its table reports every
component's median and a model ranking, so every component is a reported quantity there.

Why not every component: the slowest components of a Terminal-Bench 2.0 refit (task:model,
task:scaffold) mix at about a third of the effective draws per draw of Erho2, so asking each of them
for 440 effective draws ran each hold-out refit about twice as long as its reported number needs
(docs/sampler-measurements.md, "Refits stopped on what they report").
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

__all__ = ["ReportedQuantity", "ReportedVerdict", "reported_verdict", "describe"]


@dataclass(frozen=True, eq=True)
class ReportedQuantity:
    """One estimand a refit reports, computed per posterior draw.

    Attributes
    ----------
    kind
        ``"coefficient"`` (Erho2 or Phi of ``design``, by its claim; seed 000 (Hardy et al. 2026) Table 1) or
        ``"component"`` (sigma^2 of ``term``).
    design
        The :class:`~ddr_explorer.core.dstudy.DStudyDesign` of a coefficient (its object, claim and
        facet sizes).
    term
        The variance component of a ``"component"``.
    where
        A few words on what the design is (``"the held-out design"``), for the verdict's text.
    """

    kind: str
    design: Any = None
    term: str | None = None
    where: str = ""

    def __post_init__(self):
        if self.kind == "coefficient" and self.design is None:
            raise ValueError("a reported coefficient needs its design (a DStudyDesign)")
        if self.kind == "component" and not self.term:
            raise ValueError("a reported variance component needs its term")
        if self.kind not in ("coefficient", "component"):
            raise ValueError(f"reported quantity: kind should be 'coefficient' or 'component', got {self.kind!r}")

    @classmethod
    def coefficient(cls, design, where: str = "") -> "ReportedQuantity":
        return cls("coefficient", design=design, where=where)

    @property
    def label(self) -> str:
        """``Erho2 at the held-out design (12.0 tasks per benchmark, 1 scaffold(s), 2 trial(s))``."""
        if self.kind == "component":
            return f"sigma2[{self.term}]"
        d = self.design
        sizes = (f"{d.effective_n_tasks:g} tasks per benchmark, {float(d.n_scaffolds):g} scaffold(s), "
                 f"{d.effective_n_benchmarks:g} benchmark(s), {float(d.n_replicates):g} trial(s)")
        return f"{d.estimand} at {self.where + ' ' if self.where else ''}({sizes})"

    def to_dict(self) -> dict:
        """Plain JSON: part of the refit's cache key (:func:`~.engine.refit_key`)."""
        return {"kind": self.kind, "term": self.term,
                "design": None if self.design is None else self.design.to_dict()}

    def draws(self, sigma: dict, spec) -> np.ndarray:
        """The per-draw quantity, (chains, draws), from ``sigma`` (term -> (chains, draws) sigma_F).

        The same functions as :func:`.refits.coefficient_draws` (seed 000 Table 1, per draw).
        """
        first = next(iter(sigma.values()))
        shape = np.shape(first)
        if self.kind == "component":
            return np.asarray(sigma[self.term], np.float64) ** 2
        from ..dstudy import DStudyModel
        from ..fitting import components_from_posterior

        post = SimpleNamespace(sigma={t: np.asarray(v, np.float64) for t, v in sigma.items()}, spec=spec)
        vals = DStudyModel(components_from_posterior(post), band_draws=None).coefficient(self.design)
        return np.asarray(vals, np.float64).reshape(shape)


@dataclass(frozen=True)
class ReportedVerdict:
    """The convergence verdict of a refit on what it reports (:func:`reported_verdict`).

    Attributes
    ----------
    converged
        R-hat <= 1.01 on every component and reported quantity, bulk and tail ESS >= 400 on every
        reported quantity, no divergence, and an integrated term's quadrature accurate at the
        posterior (as :func:`~ddr_explorer.core.model.diagnostics.diagnose` checks it).
    on
        The quantities' labels.
    problems
        What fails, in words.
    text
        One line: what the verdict was checked on.
    """

    converged: bool
    on: tuple
    problems: tuple
    text: str
    #: Whether the sampling passed (the R-hat, ESS and divergence checks), whatever the quadrature.
    sampled: bool = True
    #: The rule judged by: ``"precision"`` (:class:`~ddr_explorer.core.model.stopping.PrecisionRule`) or
    #: ``"gate"`` (R-hat, bulk and tail ESS >= 400 on the reported quantities).
    rule: str = "gate"
    #: The largest MCSE of a quantile the analysis takes (the precision rule; NaN under the gate).
    max_mcse: float = float("nan")

    def to_dict(self) -> dict:
        return {"converged": self.converged, "on": list(self.on), "problems": list(self.problems),
                "text": self.text}


def reported_verdict(posterior, quantities, precision=None) -> ReportedVerdict:
    """The gate (R-hat <= 1.01, ESS >= 400, no divergence) on what a refit reports (module note); with
    ``precision`` (a :class:`~ddr_explorer.core.model.stopping.PrecisionRule`) that rule instead, its MCSE
    held to the rule's ceiling (``max_mcse``; the tolerance a run was held to can only be tighter).

    Computed from the posterior's stored sigma draws, so a refit reopened from the cache gets the same
    verdict; the posterior's component verdict (``posterior.diagnostics``) is not changed.
    """
    from ..gate import MAX_R_HAT, MIN_ESS_BULK
    from ..model.stopping import check_precision, check_reported

    names = list(posterior.sigma)
    sig = np.stack([np.asarray(posterior.sigma[t], np.float64) for t in names], axis=-1)
    div = int(np.sum(posterior.sample_stats.get("diverging", 0)))
    from ..model.diagnostics import quadrature_off

    if precision is not None:
        chk = check_precision(sig, div, names, quantities, posterior.spec, precision)
    else:
        chk = check_reported(sig, div, names, quantities, posterior.spec, min_ess=MIN_ESS_BULK)
    on = tuple(q.label for q in quantities)
    reasons = list(chk.reasons)
    if quadrature_off(posterior):  # the likelihood itself is approximated too coarsely: more draws do not help
        reasons.append(f"the quadrature that integrates {', '.join(posterior.integrated)} out is off by "
                       f"{posterior.quadrature_error:.2g} nats at the posterior")
    if chk.passed and not reasons and precision is not None:
        text = (f"converged on {'; '.join(on)} under the precision rule ({precision.r_hat_words()} and bulk ESS >= "
                f"{precision.min_ess:g} on every component and quantity, MCSE {chk.max_mcse:.4f} <= "
                f"{precision.max_mcse:g}); no divergence")
    elif chk.passed and not reasons:
        text = (f"converged on {'; '.join(on)} (R-hat <= {MAX_R_HAT}, bulk and tail ESS >= {MIN_ESS_BULK}); "
                f"every component's R-hat <= {MAX_R_HAT}; no divergence")
    else:
        text = f"NOT converged on {'; '.join(on)}: {'; '.join(reasons)}"
    return ReportedVerdict(bool(chk.passed) and not reasons, on, tuple(reasons), text, sampled=bool(chk.passed),
                           rule="gate" if precision is None else "precision", max_mcse=float(chk.max_mcse))


def describe(quantities) -> str:
    """``"Erho2 at ..."``: the quantities' labels, for notes and --json."""
    return "; ".join(q.label for q in quantities)
