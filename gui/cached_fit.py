"""What the views of a fit need, and the cached fit of a corpus reopened as soon as the corpus opens.

Both run on a worker thread (pure core, no Qt): the D-study components, the rank draws of every
object the fit supports and the fit itself are computed there, so the GUI thread only draws.
"""

from __future__ import annotations

import time


def fit_outputs(result, t0: float) -> dict:
    """The views' inputs of a :class:`~ddr_explorer.core.fitting.FitResult` (``t0``: when the job started).

    Returns ``{"result", "components", "ranks", "score_moments", "seconds"}``; ``ranks`` maps ``"model"``,
    ``"system"`` and ``"agent"`` to ``(theta, names)`` or None when the fit kept no effects of that kind;
    ``score_moments`` the observed-score moments per object (:class:`~ddr_explorer.core.dstudy.DStudyModel`'s).
    """
    from ..core.fitting import components_from_posterior, theta_from_posterior

    post = result.posterior
    components = components_from_posterior(post)
    ranks = {}
    for obj in ("model", "system", "agent"):  # agent: the ddr preset's object (seed 003 (DDR paper 2026) Eq. 1)
        try:
            ranks[obj] = theta_from_posterior(post, obj)
        except (ValueError, KeyError):  # no model (or model:scaffold) effects kept: no ranks of that kind
            ranks[obj] = None
    return {"result": result, "components": components, "ranks": ranks, "score_moments": _score_moments(components),
            "seconds": time.perf_counter() - t0}


def _score_moments(components) -> dict:
    """The logit-normal moments of the observed-score coefficient for the model and system objects, computed
    here on the worker (about half a second on 4,000 draws) so that the D-study tab opens without it."""
    from ..core.dstudy.curves import score_scale
    from ..core.reliability import SYSTEM
    from ..core.score_reliability import score_moments

    out = {}
    if score_scale(components) != "observed":
        return out
    for obj in ("model", SYSTEM):
        try:
            out[frozenset([obj] if isinstance(obj, str) else obj)] = score_moments(components, obj)
        except ValueError:  # no term for that object
            continue
    return out


def cached_fit_job(corpus, spec, settings, cache_dir):
    """Worker part of reopening the corpus's cached fit: the views' inputs, or None when nothing is cached
    (the user then presses Fit; nothing is sampled here)."""
    from ..core.fitting import cached_fit

    def run():
        t0 = time.perf_counter()
        result = cached_fit(corpus, spec, settings, cache_dir=cache_dir)
        return None if result is None else fit_outputs(result, t0)

    return run


def reopen_cached_fit(window) -> bool:
    """Show ``window``'s open corpus's cached fit of its state's model and sampler at once (looked up and read
    on a worker; nothing is sampled): the window's ``_on_fit_done`` draws it as any fit's end.

    Returns False when no look-up starts (no corpus, a job running, a model the corpus cannot take: that
    is said when the user presses Fit).
    """
    from ..core.session import SessionError
    from .workers import BackgroundTask

    if window.corpus is None or window._busy():
        return False
    try:
        spec, settings = window.state.model_spec(), window.state.sampler_settings()
        spec.validate(window.corpus.table.columns)
    except (ValueError, SessionError):
        return False
    corpus = window.corpus

    def done(out) -> None:
        if out is None or window.corpus is not corpus or window._busy() or window.fit_result is not None:
            return  # nothing cached, or the user moved on (another corpus, a fit of their own)
        window.model_panel.append_log(f"A fit of {spec.formula} with these settings is in the cache")
        window._on_fit_done(out)

    window._jobs.append(BackgroundTask(cached_fit_job(corpus, spec, settings, window.cache_dir), on_done=done,
                                       on_error=lambda _exc: None, parent=window))  # unreadable: Fit refits it
    return True


__all__ = ["cached_fit_job", "fit_outputs", "reopen_cached_fit"]
