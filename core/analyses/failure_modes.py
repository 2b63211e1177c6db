"""Failure modes: what a failure taxonomy analysis hands the DDR sheet (seed 003 sec. 5.6, decision 5).

No analysis in the project computes a :class:`FailureTaxonomy` from a corpus yet (that needs an
``error_category`` facet and seed 003's four-facet G-study); the type fixes what the sheet's fifth
decision reads when one is supplied.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ranks import spearman_rho

@dataclass(frozen=True)
class FailureTaxonomy:
    """Where agents differ against where failures appear, per error category (seed 003 secs. 5.6-5.7).

    Attributes
    ----------
    categories
        Category names.
    interaction_variance
        ``(K,)`` per category, the agent-by-task variance (``sigma^2_a:t``,
        posterior median): where agents *differ*.
    activation_rate
        ``(K,)`` per category, the share of traces showing a failure of that
        category: where failures *appear*.
    """

    categories: tuple[str, ...]
    interaction_variance: np.ndarray
    activation_rate: np.ndarray

    def __post_init__(self):
        v = np.asarray(self.interaction_variance, dtype=np.float64).ravel()
        a = np.asarray(self.activation_rate, dtype=np.float64).ravel()
        if not (len(self.categories) == v.size == a.size) or v.size < 2:
            raise ValueError("failure taxonomy: give one interaction variance and one activation rate per "
                             f"category (>= 2 categories); got {len(self.categories)}, {v.size}, {a.size}")
        object.__setattr__(self, "categories", tuple(str(c) for c in self.categories))
        object.__setattr__(self, "interaction_variance", v)
        object.__setattr__(self, "activation_rate", a)

    @property
    def spearman(self) -> float:
        """Rank correlation of variance and frequency (descriptive; few categories)."""
        return spearman_rho(self.interaction_variance, self.activation_rate)


