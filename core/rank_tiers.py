"""Which pairs can be told apart: distinguishable pairs and tiers of a leaderboard (SPEC sec. 5).

From the pairwise dominance ``P(theta_m > theta_m' | y)`` (:func:`~.ranks.dominance_matrix`; seed 000
(Hardy et al. 2026) Fig. 13), a pair is *told apart* when the better one's probability reaches the
threshold (0.95 by default, a setting).  Tiers summarise the leaderboard for a reader: the objects in order
of posterior mean capability are cut where an object is told apart from the *first* one of the current tier,
so that every member of a tier is indistinguishable from the tier's leader (the "statistically tied with
the leader" reading of leaderboard tiers, as Chatbot Arena and mteb's win-probability tables use it).
Members of one tier may still be told apart from each other at the tier's two ends; the pairs list is
the exact statement, the tiers a reading aid.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .posterior_summary import to_jsonable
from .ranks import dominance_matrix

__all__ = ["RankTiers", "rank_tiers", "tiers_from_dominance", "DEFAULT_THRESHOLD"]

DEFAULT_THRESHOLD = 0.95


@dataclass
class RankTiers:
    """Distinguishable pairs and tiers.

    Attributes
    ----------
    names
        Objects in order of posterior mean capability (best first).
    threshold
        ``P(better)`` at which a pair counts as told apart.
    pairs
        ``(better, worse, P(better))`` for every pair told apart, strongest first within the order.
    tiers
        Lists of names; tier 1 holds the leader and every object not told apart from it.
    n_pairs
        Pairs in all (``M (M - 1) / 2``).
    """

    names: list[str]
    threshold: float
    pairs: list[tuple[str, str, float]]
    tiers: list[list[str]]
    n_pairs: int

    def sentence(self) -> str:
        k = len(self.pairs)
        return (f"{k} of {self.n_pairs} pairs can be told apart (P(better) >= {self.threshold:.2f}); "
                f"{len(self.tiers)} tier(s), the first of {len(self.tiers[0])}")

    def to_dict(self) -> dict:
        return to_jsonable({"names": self.names, "threshold": self.threshold,
                            "pairs": [{"better": a, "worse": b, "p_better": p} for a, b, p in self.pairs],
                            "tiers": self.tiers, "n_pairs": self.n_pairs, "sentence": self.sentence()})


def rank_tiers(theta: np.ndarray, names: list[str], threshold: float = DEFAULT_THRESHOLD) -> RankTiers:
    """Distinguishable pairs and tiers from ``(S, M)`` capability draws (module docstring)."""
    theta = np.asarray(theta, dtype=np.float64)
    return tiers_from_dominance(dominance_matrix(theta), names, np.argsort(-theta.mean(axis=0), kind="stable"),
                                threshold)


def tiers_from_dominance(p: np.ndarray, names: list[str], order, threshold: float = DEFAULT_THRESHOLD) -> RankTiers:
    """The same from a dominance matrix and an order, best first (the Ranks tab's and the sheet's
    :class:`~.ranks.RankAnalysis` give both: its global-dominance order)."""
    if not 0.5 < threshold < 1:
        raise ValueError(f"the threshold is a probability in (0.5, 1), got {threshold}")
    order = [int(i) for i in order]
    ordered = [names[i] for i in order]
    pairs = []
    for x, i in enumerate(order):
        for j in order[x + 1:]:
            better, worse, pb = (i, j, p[i, j]) if p[i, j] >= p[j, i] else (j, i, p[j, i])
            if pb >= threshold:
                pairs.append((names[better], names[worse], float(pb)))
    tiers: list[list[str]] = []
    lead = None
    for i in order:
        if lead is None or p[lead, i] >= threshold:
            tiers.append([])
            lead = i
        tiers[-1].append(names[i])
    m = len(names)
    return RankTiers(ordered, float(threshold), pairs, tiers, m * (m - 1) // 2)
