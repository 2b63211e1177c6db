"""Closed-form G-study answers the estimator tests compare with (imported as ``ddr_closed_forms``)."""

from __future__ import annotations

import numpy as np


def nested_anova(y: np.ndarray) -> dict[str, float]:
    """p x (r:t) from its mean squares; ``y[p, t, r]`` (Brennan 2001, Table 3.3)."""
    n_p, n_t, n_r = y.shape
    g, mp, mt, mtr, mpt = y.mean(), y.mean((1, 2)), y.mean((0, 2)), y.mean(0), y.mean(2)
    ms_p = n_t * n_r * ((mp - g) ** 2).sum() / (n_p - 1)
    ms_t = n_p * n_r * ((mt - g) ** 2).sum() / (n_t - 1)
    ms_rt = n_p * ((mtr - mt[:, None]) ** 2).sum() / (n_t * (n_r - 1))
    ms_pt = n_r * ((mpt - mp[:, None] - mt[None, :] + g) ** 2).sum() / ((n_p - 1) * (n_t - 1))
    e = y - mpt[:, :, None] - mtr[None, :, :] + mt[None, :, None]
    ms_e = (e ** 2).sum() / ((n_p - 1) * n_t * (n_r - 1))
    return {"p": (ms_p - ms_pt) / (n_t * n_r), "t": (ms_t - ms_rt - ms_pt + ms_e) / (n_p * n_r),
            "r:t": (ms_rt - ms_e) / n_p, "p:t": (ms_pt - ms_e) / n_r, "residual": ms_e}
