"""The same-run load reference of the benches: how long ``np.sort`` of 4,000 x 100 draws takes now.

A bench prints it before and after its own timings, so a figure taken on a loaded machine can be read
as a ratio to it (the standards: compare against a reference measured in the same run).
"""

from __future__ import annotations

import time

import numpy as np


def reference_ms(repeats: int = 15) -> float:
    """Median milliseconds of ``np.sort(x, axis=0)`` over ``repeats`` runs, x a (4000, 100) normal sample."""
    x = np.random.default_rng(0).normal(size=(4000, 100))
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.sort(x, axis=0)
        out.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(out))
