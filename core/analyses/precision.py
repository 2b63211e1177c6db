"""How precisely a refit analysis knows its own results, and which run-length rule its refits ran under.

Two rules (``--refit-rule``; :data:`REFIT_RULES`):

- ``"precision"`` (``--refit-rule precision``): each refit runs until its chains agree and the Monte Carlo standard
  error of every number the analysis takes from it is below a tolerance the analysis sets
  (:class:`~ddr_explorer.core.model.stopping.PrecisionRule`: a tenth of the spread of that number across
  the analysis's refits so far, at most 0.005; Vehtari et al. 2021 for the quantile MCSE);
- ``"gate"`` (the default): each refit runs until what it reports has bulk and tail ESS >= 440
  (:func:`~ddr_explorer.core.model.stopping.check_reported`).

The gate stays the default because it is the cheaper of the two.  Replayed on the same 24 TB2 hold-out
refits (bench/investigations/bench_refit_rule_replay.py, docs/sampler-measurements.md) the precision rule
took 1.14x the gate's leapfrog steps per refit and gave the r nearest a long run's (-0.765 against -0.762;
the gate -0.730): its tolerance, a tenth of a spread across splits that is narrow next to each refit's
posterior (SD 0.0015 against about 0.01 on TB2), asks for more effective draws than the gate's 440, and a
looser share attenuates r (-0.635 at a quarter).  The precision rule's chains-agree test is the R-hat
threshold of its own 100 effective draws (:func:`~ddr_explorer.core.model.stopping.matched_r_hat`); R-hat
<= 1.01, which asks 200-400 effective draws of every component, made it 1.27x the gate.

The parent fit keeps its own gate either way.  Whatever the rule, each analysis states the Monte Carlo
error of its own results, from the quantile MCSE of each refit's draws (:func:`draws_mcse`):

- hold-out (seed 003 (DDR paper 2026) sec. 5.4): the Pearson r across splits and the mean gap, by the delta method
  (:func:`heldout_mcse`): each split's projected and held-out medians carry independent Monte Carlo
  errors (separate refits), propagated through the first-order change of r and of the mean;
- difficulty (sec. 5.3): each stratum's Erho2 median and interval ends.
"""

from __future__ import annotations

import numpy as np

__all__ = ["REFIT_RULES", "DEFAULT_REFIT_RULE", "check_refit_rule", "precision_rule", "draws_mcse",
           "heldout_mcse", "rule_words", "quantile_mcse_factor", "needed_ess", "expected_spread"]

#: The run-length rules of a refit analysis (``--refit-rule``).
REFIT_RULES: tuple[str, ...] = ("precision", "gate")
#: The rule the analyses run under unless told otherwise (see the module note for why it is the gate).
DEFAULT_REFIT_RULE = "gate"


def check_refit_rule(rule) -> str:
    """``rule`` if it is one of :data:`REFIT_RULES` (None: the default); a ValueError naming the choices otherwise."""
    if rule is None:
        return DEFAULT_REFIT_RULE
    if rule not in REFIT_RULES:
        raise ValueError(f"refit rule {rule!r} is not one of {', '.join(REFIT_RULES)}: 'precision' stops each refit "
                         "when what the analysis takes from it is precise enough, 'gate' when it has 400 effective "
                         "draws (the rule before)")
    return rule


def precision_rule(rule: str | None, group: str, probs=(0.5,)):
    """The :class:`~ddr_explorer.core.model.stopping.PrecisionRule` of refits in ``group`` under ``rule``
    (None under ``"gate"``)."""
    from ..model.stopping import PrecisionRule

    return PrecisionRule(group=group, probs=tuple(probs)) if check_refit_rule(rule) == "precision" else None


def rule_words(rule: str | None) -> str:
    """One phrase for notes and the sheet: which rule the refits ran under."""
    from ..model.stopping import PRECISION_MAX_MCSE, PRECISION_MIN_ESS, PRECISION_SPREAD_SHARE

    if check_refit_rule(rule) == "gate":
        return ("refits run to the gate on what they report (bulk and tail ESS >= 440, R-hat <= 1.01; "
                "--refit-rule gate)")
    from ..model.stopping import PrecisionRule

    return (f"refits run to the precision rule: chains agree ({PrecisionRule().r_hat_words()}, bulk ESS >= "
            f"{PRECISION_MIN_ESS}, no divergence) and the Monte Carlo SE of what the analysis takes is <= "
            f"{PRECISION_SPREAD_SHARE:g} x its "
            f"spread across refits, at most {PRECISION_MAX_MCSE:g} (Vehtari et al. 2021)")


def draws_mcse(draws, chains_shape, probs=(0.5,)) -> tuple[float, ...]:
    """MCSE of the ``probs`` quantiles of per-draw values (:func:`~ddr_explorer.core.model.stopping.mcse_quantile`),
    the draws laid out as the posterior's (chains, draws) ``chains_shape``; NaN where they cannot be."""
    from ..model.stopping import mcse_quantile

    x = np.asarray(draws, np.float64)
    try:
        x = x.reshape(chains_shape)
    except ValueError:
        x = x.reshape(1, -1)
    return tuple(mcse_quantile(x, p) for p in probs)


def heldout_mcse(projected, held_out, projected_mcse, held_out_mcse) -> tuple[float, float]:
    """Monte Carlo SE of the Pearson r across splits and of the mean gap, by the delta method.

    Each split's projected value ``x_i`` and held-out value ``y_i`` (posterior medians of separate refits)
    carry independent Monte Carlo errors ``a_i`` and ``b_i``.  The mean gap ``mean(y - x)`` has
    ``sqrt(sum(a_i^2 + b_i^2)) / n``; r = Sxy / sqrt(Sxx Syy) has ``sqrt(sum((dr/dx_i a_i)^2 +
    (dr/dy_i b_i)^2))`` with ``dr/dx_i = (y_i - ybar) / sqrt(Sxx Syy) - r (x_i - xbar) / Sxx`` (and the same
    with x and y swapped).  NaN where an MCSE is unknown or r is undefined.
    """
    x, y = np.asarray(projected, np.float64), np.asarray(held_out, np.float64)
    a, b = np.asarray(projected_mcse, np.float64), np.asarray(held_out_mcse, np.float64)
    n = x.size
    gap = float(np.sqrt(np.sum(a ** 2 + b ** 2)) / n) if n else float("nan")
    dx, dy = x - x.mean(), y - y.mean()
    sxx, syy = float(np.sum(dx ** 2)), float(np.sum(dy ** 2))
    if n < 3 or sxx <= 0 or syy <= 0:
        return float("nan"), gap
    r = float(np.sum(dx * dy)) / np.sqrt(sxx * syy)
    gx = dy / np.sqrt(sxx * syy) - r * dx / sxx
    gy = dx / np.sqrt(sxx * syy) - r * dy / syy
    return float(np.sqrt(np.sum((gx * a) ** 2 + (gy * b) ** 2))), gap


def quantile_mcse_factor(prob: float) -> float:
    """The MCSE of the ``prob`` quantile of a normal posterior, in posterior SDs, times sqrt(ESS):
    ``sqrt(p (1 - p)) / phi(Phi^-1(p))`` (1.2533 for the median, 2.6696 for the 2.5% quantile)."""
    from scipy import stats

    z = stats.norm.ppf(prob)
    return float(np.sqrt(prob * (1 - prob)) / stats.norm.pdf(z))


def expected_spread(sd_whole: float, share: float) -> float | None:
    """The spread (SD across splits) a part keeping ``share`` of the trials is expected to show, from the
    whole corpus's posterior SD ``sd_whole`` of the same number: a random part of a fixed corpus moves an
    estimate by ``sd_whole x sqrt((1 - f) / f)`` (subsampling without replacement; the posterior SD stands
    for the estimator's sampling SD).  0.65 x for a 70% training part, 1.53 x for its 30% held-out part.
    None for a share outside (0, 1) (no split: the strata's spread cannot be predicted this way)."""
    if not 0 < share < 1 or not np.isfinite(sd_whole) or sd_whole <= 0:
        return None
    return float(sd_whole * np.sqrt((1 - share) / share))


def needed_ess(rule, sd: float, spread: float | None) -> float:
    """Effective draws a refit needs under ``rule`` (a :class:`~ddr_explorer.core.model.stopping.PrecisionRule`):
    the rule's bulk ESS, and enough for each quantile it takes to reach its tolerance at a posterior SD
    ``sd`` (:func:`quantile_mcse_factor`; the tolerance from the expected ``spread``, the ceiling when None)."""
    tol = rule.tolerance(spread)
    need = max((quantile_mcse_factor(p) * sd / tol) ** 2 for p in rule.probs) if np.isfinite(sd) and sd > 0 else 0.0
    return float(max(rule.min_ess, need))
