"""The one rerun of a fit that failed: its sampler settings, by why it failed.

A refit of the refit engine (:mod:`.engine`) or a cold part of a batch (:func:`.refits.cold_fits`) that
fails the convergence gate (:mod:`ddr_explorer.core.gate`), or whose integrated term's quadrature was off
at its posterior, is fitted once more under :func:`rerun_settings` (its own cache key).  Both the engine
and the cold loop read the rule from here, so neither imports the other for it.
"""

from __future__ import annotations

import dataclasses

__all__ = ["RERUN_DRAWS_FACTOR", "rerun_settings"]

#: An unconverged refit is rerun once with this many times its draws (and as many warmup iterations).
RERUN_DRAWS_FACTOR = 2


def rerun_settings(settings, posterior=None, *, sampling: bool | None = None):
    """Settings of the one rerun of an unconverged refit (or cold part), by why it failed.

    Parameters
    ----------
    settings
        The first run's settings.
    posterior
        The first run's posterior (None: a sampling failure is assumed).
    sampling
        Whether the sampling failed its rule (R-hat, ESS, divergences); None: read from
        ``posterior``'s diagnostics (every component's R-hat and bulk ESS, divergences).

    Returns
    -------
    SamplerSettings
        A sampling failure: :data:`RERUN_DRAWS_FACTOR` x draws and warmup (and x the ceiling of a run
        length set by the gate).  An integrated term whose quadrature was off at the posterior
        (:func:`~ddr_explorer.core.model.diagnostics.quadrature_off`): the next Gauss-Hermite node
        count above the one used (``quadrature_nodes``), or, above the largest, that term's levels
        sampled (``marginalise="off"``); more draws cannot mend a rule's error (a pooled LOBO refit
        passed the gate on every component at 1,250 draws per chain with its 8-node rule off by 0.054
        nats at the posterior).  Both when both failed.
    """
    from ..gate import MAX_R_HAT, MIN_ESS_BULK
    from ..model.diagnostics import quadrature_off
    from ..model.quadrature import NODE_COUNTS, next_node_count

    change: dict = {}
    quad = posterior is not None and quadrature_off(posterior)
    if sampling is None:
        d = getattr(posterior, "diagnostics", None)
        sampling = (d is None or not (d.max_r_hat <= MAX_R_HAT and d.min_ess_bulk >= MIN_ESS_BULK
                                      and int(d.divergences) == 0))
    if sampling or not quad:
        change.update(draws=settings.draws * RERUN_DRAWS_FACTOR, warmup=settings.warmup * RERUN_DRAWS_FACTOR)
        if getattr(settings, "stop", "fixed") == "gate" and settings.max_draws:
            change["max_draws"] = settings.max_draws * RERUN_DRAWS_FACTOR
    if quad:
        used = getattr(posterior, "quadrature_nodes", None) or min(
            (q for q in NODE_COUNTS if q >= settings.quadrature_nodes), default=NODE_COUNTS[-1])
        more = next_node_count(used)
        if more:
            change["quadrature_nodes"] = more
        else:
            change["marginalise"] = "off"
    return dataclasses.replace(settings, **change)
