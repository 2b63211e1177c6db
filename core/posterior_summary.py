"""Summaries of posterior draws: the median, the mean, 68% and 95% highest-density intervals.

Every estimand of :mod:`.reliability` (and of the D-study, the analyses and the sheet) is computed per
posterior draw and only then summarised here (SPEC sec. 2): a :class:`Summary` of one estimand's draws,
never a ratio of posterior means.  HDIs are the shortest intervals holding ``floor(prob * S) + 1``
sorted draws (the ArviZ convention).  :func:`to_jsonable` turns the numpy values of a summary (or any
result) into plain JSON values, non-finite floats into None.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Summary", "as_summary", "hdi", "hdi_sorted", "median_sorted", "summarize", "summarize_sorted",
           "to_jsonable"]


def hdi_sorted(sorted_draws: np.ndarray, prob: float) -> tuple[np.ndarray, np.ndarray]:
    """HDI of draws already sorted ascending along the last axis (vectorised over leading axes).

    The shortest window of ``floor(prob * S) + 1`` consecutive sorted draws.
    ``inf`` draws are allowed (a window spanning two infinities counts as infinitely wide).
    """
    if not 0 < prob <= 1:
        raise ValueError(f"HDI probability should be in the interval (0, 1], got {prob}")
    x = np.asarray(sorted_draws)
    n = x.shape[-1]
    k = min(int(math.floor(prob * n)), n - 1)
    widths = x[..., k:] - x[..., : n - k]
    if widths.dtype.kind == "f" and not np.isfinite(widths).all():
        widths = np.where(np.isnan(widths), np.inf, widths)
    j = np.argmin(widths, axis=-1)[..., None]
    lo = np.take_along_axis(x, j, axis=-1)[..., 0]
    hi = np.take_along_axis(x, j + k, axis=-1)[..., 0]
    return lo, hi


def hdi(draws, prob: float = 0.95, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """Highest-density interval of draws along ``axis`` (sorts a copy)."""
    x = np.sort(np.moveaxis(np.asarray(draws, dtype=np.float64), axis, -1), axis=-1)
    return hdi_sorted(x, prob)


def median_sorted(x: np.ndarray) -> np.ndarray:
    """Median of draws already sorted ascending along the last axis (the mean of the middle two for an
    even count)."""
    n = x.shape[-1]
    if n % 2:
        return x[..., n // 2]
    with np.errstate(invalid="ignore"):
        return 0.5 * (x[..., n // 2 - 1] + x[..., n // 2])


@dataclass(frozen=True)
class Summary:
    """Posterior summary of one estimand.

    Attributes
    ----------
    median, mean
        Posterior median and mean.
    hdi68, hdi95
        68% and 95% highest-density intervals.
    n_draws
        Number of draws summarised.
    prob_positive
        ``P(x > 0)`` (directional probability, for contrasts), else None.
    """

    median: float
    mean: float
    hdi68: tuple[float, float]
    hdi95: tuple[float, float]
    n_draws: int
    prob_positive: float | None = None

    def to_dict(self) -> dict:
        return to_jsonable({"median": self.median, "mean": self.mean, "hdi68": list(self.hdi68),
                            "hdi95": list(self.hdi95), "n_draws": self.n_draws,
                            "prob_positive": self.prob_positive})


def as_summary(x) -> Summary | None:
    """``x`` as a :class:`Summary`: None and summaries unchanged, draws summarised."""
    if x is None or isinstance(x, Summary):
        return x
    return summarize(np.asarray(x, dtype=np.float64))


def summarize(draws, *, prob_positive: bool = False) -> Summary:
    """Median, mean, 68% and 95% HDI of a 1-D array of draws."""
    return summarize_sorted(np.sort(np.asarray(draws, dtype=np.float64).ravel()), prob_positive=prob_positive)


def summarize_sorted(x: np.ndarray, *, prob_positive: bool = False) -> Summary:
    """:func:`summarize` for draws already sorted ascending (saves the sort when a caller has one)."""
    if x.size == 0:
        raise ValueError("cannot summarise an empty set of draws")
    lo68, hi68 = hdi_sorted(x, 0.68)
    lo95, hi95 = hdi_sorted(x, 0.95)
    with np.errstate(invalid="ignore"):
        mean = float(x.mean())
    return Summary(float(median_sorted(x)), mean, (float(lo68), float(hi68)), (float(lo95), float(hi95)),
                   int(x.size), float(np.mean(x > 0)) if prob_positive else None)


def to_jsonable(obj):
    """Plain Python (dict, list, float, int, str, bool, None) from numpy values; non-finite floats -> None."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if hasattr(obj, "to_dict") and callable(obj.to_dict):
        return obj.to_dict()
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else None
    return obj
