"""A shorter warmup where the start is good (``SamplerSettings.adaptive_warmup``).

Warmup follows Stan's windows (numpyro's ``build_adaptation_schedule``): for 300 iterations an
initial fast buffer of 75, slow windows of 25, 50 and 100 that each end with a new mass matrix
(pooled across chains, :mod:`.parameterisation` item 5), and a final fast buffer of 50 where the
step size settles.  The slow windows exist to find the metric; the chains start near the mode
with a metric from the rough fit (:func:`.parameterisation._initial_point`), and with the pooled
adaptation each window estimates it from 4 chains.  So a later slow window often only re-estimates
the same metric.

The rule: just before a slow window closes, the metric it would set (numpyro's regularised
Welford estimate, from the pooled accumulator) is compared with the metric in use; when both
change little, namely

- the root mean square of the log ratios of the new to the old variances (the eigenvalues of
  old^-1/2 new old^-1/2 for the dense block of the global coordinates) is below
  ``METRIC_TOLERANCE``, the noise of a variance estimated from a few hundred draws, and
- the step size adapted in this window differs from the one adapted in the previous one by less
  than ``STEP_TOLERANCE`` (log ratio),

the window closes as usual and the runner jumps to the final fast buffer (the remaining slow
windows are skipped; the step size still gets its 50 iterations with the final metric).  At most
100 + 50 iterations are saved of 300.  Measured per corpus shape in docs/sampler-measurements.md.
"""

from __future__ import annotations

import numpy as np

#: RMS log ratio of the new to the old mass-matrix variances below which the metric has settled.
METRIC_TOLERANCE = 0.35
#: |log(step size ratio)| between two windows below which the step size has settled.
STEP_TOLERANCE = 0.25


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


def settled(changes: dict[str, float], step_change: float | None) -> bool:
    """True when every block's metric change and the step size change are within tolerance."""
    if step_change is None or not np.isfinite(step_change):
        return False
    return all(np.isfinite(c) and c < METRIC_TOLERANCE for c in changes.values()) and abs(step_change) < STEP_TOLERANCE
