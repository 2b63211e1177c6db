"""Whether a reliability projection is optimistic: one rule on a gap and its uncertainty (DDR paper 2026).

A projection (the headline coefficient, or the one projected from training cells) is compared with
a reference figure (the hardest stratum's coefficient, the one found on held-out cells).  The gap
is ``reference - projection``: negative where the projection promises more than the reference
delivers.  Every sentence that calls a projection optimistic, or says it holds, on the sheet, in
``ddr analyses`` and in the app, comes from :func:`gap_verdict`:

* **optimistic**: the 95% interval of the gap lies below 0 and the gap is at least ``negligible``;
* **pessimistic**: the interval lies above 0 and the gap is at least ``negligible``;
* **no detectable gap** otherwise: the interval reaches 0, or the gap is smaller than a
  difference the sheet would print as one (``negligible``, 0.01 by default: coefficients are read
  to two decimals in every decision; a mean gap of -0.00004 is no finding however tight).

The uncertainty is the caller's: the spread of the split-by-split gaps for held-out splits
(:func:`split_gap_interval`), the two fits' intervals for a stratum against the aggregate
(:func:`independent_gap_interval`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["GapVerdict", "gap_verdict", "split_gap_interval", "independent_gap_interval", "verdict_sentence",
           "NEGLIGIBLE_GAP"]

#: The smallest gap in a coefficient (Erho2 or Phi) that is called a gap at all.
NEGLIGIBLE_GAP = 0.01

OPTIMISTIC, NO_GAP, PESSIMISTIC = "optimistic", "no detectable gap", "pessimistic"


@dataclass(frozen=True)
class GapVerdict:
    """A gap ``reference - projection``, its 95% interval, and what it says of the projection.

    Attributes
    ----------
    word
        ``"optimistic"``, ``"no detectable gap"`` or ``"pessimistic"``.
    gap, lower, upper
        The gap and its 95% interval.
    """

    word: str
    gap: float
    lower: float
    upper: float

    @property
    def optimistic(self) -> bool:
        return self.word == OPTIMISTIC

    @property
    def detected(self) -> bool:
        return self.word != NO_GAP

    def to_dict(self) -> dict:
        return {"verdict": self.word, "gap": self.gap, "lower95": self.lower, "upper95": self.upper}


def gap_verdict(gap: float, lower: float, upper: float, negligible: float = NEGLIGIBLE_GAP) -> GapVerdict:
    """The rule of the module docstring on a gap (``reference - projection``) and its 95% interval.

    Raises
    ------
    ValueError
        A non-finite gap, or an interval that does not hold it.
    """
    gap, lower, upper = float(gap), float(lower), float(upper)
    if not np.isfinite(gap) or not (lower <= gap <= upper):
        raise ValueError(f"gap verdict: the gap {gap} must be finite and inside its interval [{lower}, {upper}]")
    if abs(gap) < negligible:
        word = NO_GAP
    elif upper < 0:
        word = OPTIMISTIC
    elif lower > 0:
        word = PESSIMISTIC
    else:
        word = NO_GAP
    return GapVerdict(word, gap, lower, upper)


def split_gap_interval(gaps) -> tuple[float, float, float]:
    """The mean of split-by-split gaps and the 2.5% and 97.5% quantiles of the gaps themselves.

    The splits resample one corpus: the standard error of their mean shrinks with the number of
    splits run, not with the data, so the interval is the spread of one split's gap (seed 003 sec.
    5.4 reads the gap split by split), widened to hold the mean.
    """
    g = np.asarray(gaps, dtype=np.float64).ravel()
    g = g[np.isfinite(g)]
    if g.size < 2:
        raise ValueError(f"gap interval: needs two or more split gaps, got {g.size}")
    mean = float(g.mean())
    lo, hi = np.quantile(g, [0.025, 0.975])
    return mean, min(float(lo), mean), max(float(hi), mean)


def independent_gap_interval(reference, projection) -> tuple[float, float, float]:
    """``median(reference) - median(projection)`` and a 95% interval from two separate fits' summaries.

    Each side's standard deviation is read off its 95% interval (width / 3.92, a normal posterior);
    the fits are separate, so their variances add (Notes of
    :class:`~.difficulty.DifficultyProfile`: their draws are not paired).
    """
    gap = float(reference.median - projection.median)
    sd = np.hypot((reference.hdi95[1] - reference.hdi95[0]) / 3.92, (projection.hdi95[1] - projection.hdi95[0]) / 3.92)
    return gap, gap - 1.96 * float(sd), gap + 1.96 * float(sd)


def _signed(x: float) -> str:
    text = f"{x:+.3f}"
    return "0.000" if text in ("+0.000", "-0.000") else text.replace("-", "\u2212")


def verdict_sentence(verdict, projection: str, reference: str) -> str:
    """One sentence of a :class:`GapVerdict` (or its ``to_dict()``), the same on every surface.

    ``projection`` and ``reference`` name the two figures, e.g. ``"the training-cell projection"`` and
    ``"the held-out figure"``: "The training-cell projection is optimistic here: the held-out figure
    falls short by 0.300 (gap −0.300, 95% interval [−0.41, −0.19])."
    """
    v = verdict.to_dict() if isinstance(verdict, GapVerdict) else verdict
    gap, lo, hi = v["gap"], v["lower95"], v["upper95"]
    interval = f"gap {_signed(gap)}, 95% interval [{_signed(lo)}, {_signed(hi)}]"
    head = projection[:1].upper() + projection[1:]
    if v["verdict"] == OPTIMISTIC:
        return f"{head} is optimistic here: {reference} falls short by {abs(gap):.3f} ({interval})."
    if v["verdict"] == PESSIMISTIC:
        return f"{head} is pessimistic here: {reference} exceeds it by {abs(gap):.3f} ({interval})."
    return f"No detectable gap between {projection} and {reference} ({interval})."
