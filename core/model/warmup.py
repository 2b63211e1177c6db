"""A shorter warmup where the start is good (``SamplerSettings.adaptive_warmup``).

Warmup follows Stan's windows (numpyro's ``build_adaptation_schedule``): for 300 iterations an
initial fast buffer of 75, slow windows of 25, 50 and 100 that each end with a new mass matrix
(pooled across chains, :mod:`.parameterisation` item 5), and a final fast buffer of 50 where the
step size settles.  The slow windows exist to find the metric; the chains start near the mode
with a metric from the rough fit (:func:`.parameterisation._initial_point`), and with the pooled
adaptation each window estimates it from 4 chains.  So a later slow window often only re-estimates
the same metric.

The rule: just before a slow window closes, the metric it would set (numpyro's regularised
Welford estimate, from the pooled accumulator) is compared with the metric in use, block by block
(the dense block of the global coordinates ``g``, the diagonal of the random effects ``x``), by the
root mean square of the log ratios of the new to the old variances (the log eigenvalues of
old^-1/2 new old^-1/2 for a dense block).  Two estimates of the same covariance differ by noise
alone: for a d x d Wishart estimate from n draws the log eigenvalues scatter with an RMS of about
sqrt((d + 1) / n), so two estimates from n_old and n_new draws differ by about

    sqrt((d + 1) (1 / n_old + 1 / n_new))                         (:func:`expected_change`)

(a diagonal block: d = 1 per variance, the variance of a log sample variance being 2 / n).  The
window's metric has settled when every block changes by less than ``NOISE_FACTOR`` times that
(the draws of a window are autocorrelated, so their effective number is smaller than n: a factor
1.5 is an ESS of about 0.45 per draw).  The start metric (from the rough fit, not from draws) counts
as exact (1 / n_old = 0), so the first look needs the window's own noise alone.  Then the window
closes as usual and the runner jumps to the final fast buffer (the remaining slow windows are
skipped; the step size is adapted afresh in the final buffer's 50 iterations with the final metric,
so a change of the step size between windows, which follows the previous window's change of the
metric, is logged but not a criterion).  At most 100 + 50 iterations are saved of 300.

An earlier rule used fixed tolerances (a metric change below 0.35 and a step size log change below
0.25): it triggered on no corpus measured, because 0.35 lies below the noise floor of TB2's 13 x 13
global block.  Measured per corpus shape in
docs/sampler-measurements.md.
"""

from __future__ import annotations

import numpy as np

#: A block's metric has settled when it changes by less than this many times the change expected from
#: the noise of the two estimates alone (:func:`expected_change`).
NOISE_FACTOR = 1.5


def welford_metric(mean, m2, n) -> np.ndarray:
    """The inverse mass matrix numpyro sets when a window closes (regularised as Stan does)."""
    m2 = np.asarray(m2, np.float64)
    n = float(n)
    cov = m2 / max(n - 1.0, 1.0)
    scaled = (n / (n + 5.0)) * cov
    shrink = 1e-3 * (5.0 / (n + 5.0))
    return scaled + (shrink if scaled.ndim == 1 else shrink * np.eye(scaled.shape[0]))


def metric_change(old: np.ndarray, new: np.ndarray) -> float:
    """RMS of the log of the generalised eigenvalues of ``new`` against ``old`` (diagonal: the
    log ratios of the variances): 0 when the metric is unchanged; a factor 2 in every variance is 0.69."""
    old = np.asarray(old, np.float64)
    new = np.asarray(new, np.float64)
    if old.ndim == 1 and new.ndim == 1:
        lam = new / old
    else:
        o = old if old.ndim == 2 else np.diag(old)
        nw = new if new.ndim == 2 else np.diag(new)
        L = np.linalg.cholesky(o)
        Li = np.linalg.inv(L)
        lam = np.linalg.eigvalsh(Li @ nw @ Li.T)
    lam = np.clip(lam, 1e-300, None)
    return float(np.sqrt(np.mean(np.log(lam) ** 2)))


def expected_change(d: int, n_old: float | None, n_new: float, dense: bool = True) -> float:
    """RMS log eigenvalue change expected between two estimates of the same covariance from noise alone.

    Parameters
    ----------
    d
        Dimension of the block.
    n_old, n_new
        Draws behind the metric in use (``None``: not estimated from draws, counted as exact) and
        behind the window's new estimate.
    dense
        ``False`` for a diagonal block: each variance is estimated on its own (as d = 1).

    Returns
    -------
    float
        ``sqrt((k + 1) (1 / n_old + 1 / n_new))`` with ``k = d`` for a dense block, 1 for a diagonal one:
        a Wishart estimate's log eigenvalues scatter with RMS about ``sqrt((k + 1) / n)`` (for k = 1 the
        variance of a log sample variance, 2 / n), and the two estimates are independent.
    """
    k = d if dense else 1
    inv = 1.0 / max(float(n_new), 1.0) + (0.0 if n_old is None else 1.0 / max(float(n_old), 1.0))
    return float(np.sqrt((k + 1) * inv))


def settled_by_noise(changes: dict[str, float], noise: dict[str, float], factor: float | None = None) -> bool:
    """True when every block's metric change is below ``factor`` (default ``NOISE_FACTOR``) times its
    expected noise (:func:`expected_change`); the rule of ``SamplerSettings.adaptive_warmup``."""
    factor = NOISE_FACTOR if factor is None else factor
    if not changes:
        return False
    return all(np.isfinite(c) and k in noise and c < factor * noise[k] for k, c in changes.items())
