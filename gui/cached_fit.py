"""What the views of a fit need, and the cached fit of a corpus reopened as soon as the corpus opens.

Both run on a worker thread (pure core, no Qt): the D-study components, the rank draws of every
object the fit supports and the fit itself are computed there, so the GUI thread only draws.
"""

from __future__ import annotations

import time


def fit_outputs(result, t0: float) -> dict:
    """The views' inputs of a :class:`~ddr_explorer.core.fitting.FitResult` (``t0``: when the job started).

    Returns ``{"result", "components", "ranks", "seconds"}``; ``ranks`` maps ``"model"``, ``"system"``
    and ``"agent"`` to ``(theta, names)`` or None when the fit kept no effects of that kind.
    """
    from ..core.fitting import components_from_posterior, theta_from_posterior

    post = result.posterior
    components = components_from_posterior(post)
    ranks = {}
    for obj in ("model", "system", "agent"):  # agent: the ddr preset's object (seed 003 Eq. 1)
        try:
            ranks[obj] = theta_from_posterior(post, obj)
        except (ValueError, KeyError):  # no model (or model:scaffold) effects kept: no ranks of that kind
            ranks[obj] = None
    return {"result": result, "components": components, "ranks": ranks, "seconds": time.perf_counter() - t0}


def cached_fit_job(corpus, spec, settings, cache_dir):
    """Worker part of reopening the corpus's cached fit: the views' inputs, or None when nothing is cached
    (the user then presses Fit; nothing is sampled here)."""
    from ..core.fitting import cached_fit

    def run():
        t0 = time.perf_counter()
        result = cached_fit(corpus, spec, settings, cache_dir=cache_dir)
        return None if result is None else fit_outputs(result, t0)

    return run


__all__ = ["cached_fit_job", "fit_outputs"]
