"""A fit in a child process: the caller's process keeps its interpreter lock free.

JAX traces, lowers and compiles the sampler partly in C++ code that holds Python's global
interpreter lock for long stretches (measured: 150-210 ms at a time while the demo fit
compiled), so a fit on a *thread* of the desktop app stalls the GUI's event loop that long.  In a
child process it cannot.  The child runs :func:`~.fitting.fit_corpus`, which stores the posterior
in the HDF5 fit cache; the parent then reopens it from there (a verified read, never a pickle),
so the result is the same object a cache hit gives.  Progress travels over a queue, cancellation
over an event, exactly as :func:`~.fitting.fit_corpus` takes them.

The child is started with the ``spawn`` method (a fresh interpreter: JAX is not fork-safe), so, as
for any spawned process, the program's main script must be import-safe (its work under
``if __name__ == "__main__":``; the ``ddr-explorer`` entry point, ``python -m ddr_explorer.gui.app``
and pytest are).  The frozen build calls ``multiprocessing.freeze_support()`` (packaging/launcher.py).
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import time
from pathlib import Path

from .cache import FitCache
from .files import default_cache_dir
from .fitting import FitResult, fit_corpus, fit_key, posterior_from_entry

__all__ = ["FitProcessError", "fit_corpus_in_process"]

#: Seconds the child gets to stop by itself after a cancel before it is terminated.
CANCEL_GRACE_S = 20.0


class FitProcessError(RuntimeError):
    """The fit's child process failed or ended without a result."""


def _child(corpus, spec, settings, cache_dir, messages, cancel_event) -> None:
    """Child process: fit through the cache; report progress, then ("done" | "cancelled" | "error", ...)."""
    import ddr_explorer.core.model  # noqa: F401 - sets XLA_FLAGS (one CPU device per chain) before jax loads
    from .model.posterior import FitCancelled

    def progress(phase, i, n, eta):
        messages.put(("progress", (phase, i, n, eta)))

    try:
        result = fit_corpus(corpus, spec, settings, cache_dir=cache_dir, use_cache=True, progress=progress,
                            cancel=cancel_event.is_set)
        messages.put(("done", (result.from_cache, result.cache_problem, result.posterior.wall_seconds,
                               None if result.cache_path is None else str(result.cache_path))))
    except FitCancelled as exc:
        messages.put(("cancelled", str(exc)))
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent, named
        messages.put(("error", f"{type(exc).__name__}: {exc}"))


def fit_corpus_in_process(corpus, spec="per-benchmark", settings=None, *, cache_dir: str | Path | None = None,
                          progress=None, cancel=None, poll_s: float = 0.05) -> FitResult:
    """:func:`~.fitting.fit_corpus` in a child process, through the fit cache.

    Parameters
    ----------
    corpus, spec, settings, cache_dir
        As :func:`~.fitting.fit_corpus` (the cache is always used: it carries the result back).
    progress, cancel
        ``progress(phase, i, n, eta)`` is called in the caller's thread as the child reports;
        ``cancel()`` is polled every ``poll_s`` seconds and forwarded to the child, which stops
        between sampler chunks.

    Returns
    -------
    FitResult
        The posterior reopened from the cache; ``from_cache`` is True only when the child found the
        fit already cached (nothing was sampled).

    Raises
    ------
    FitCancelled
        The user cancelled.
    FitProcessError
        The child failed (its error message is kept) or died (its exit code is named).
    """
    from .model.formula import as_spec
    from .model.posterior import FitCancelled, SamplerSettings

    spec = as_spec(spec)
    settings = settings or SamplerSettings()
    cache_dir = Path(cache_dir or default_cache_dir())
    ctx = mp.get_context("spawn")
    messages = ctx.Queue()
    cancel_event = ctx.Event()
    child = ctx.Process(target=_child, args=(corpus, spec, settings, str(cache_dir), messages, cancel_event),
                        name="ddr-fit", daemon=True)
    child.start()
    outcome = None
    cancelled_at = None
    try:
        while outcome is None:
            try:
                kind, payload = messages.get(timeout=poll_s)
            except queue.Empty:
                if cancel is not None and cancel() and cancelled_at is None:
                    cancel_event.set()
                    cancelled_at = time.monotonic()
                if cancelled_at is not None and time.monotonic() - cancelled_at > CANCEL_GRACE_S:
                    child.terminate()
                    raise FitCancelled("fit cancelled by the user (its process was stopped)") from None
                if not child.is_alive() and messages.empty():
                    raise FitProcessError(f"the fit process ended without a result (exit code {child.exitcode}); "
                                          "run the fit with `ddr fit` to see its error") from None
                continue
            if kind == "progress":
                if progress is not None:
                    progress(*payload)
            else:
                outcome = (kind, payload)
    finally:
        if outcome is None and child.is_alive():
            cancel_event.set()
            child.join(2.0)
            if child.is_alive():
                child.terminate()
        child.join(5.0)
    kind, payload = outcome
    if kind == "cancelled":
        raise FitCancelled(payload)
    if kind == "error":
        raise FitProcessError(payload)
    from_cache, problem, _wall, _path = payload
    # reopen what the child stored (verified read); never sample here.  The child fitted the preset
    # reduced to the terms the design separates (fit_corpus): its key is that spec's.
    from .design.presets import supported_spec

    check = supported_spec(corpus, spec)
    key = fit_key(corpus, check.spec, settings)
    cache = FitCache(cache_dir)
    entry, trouble = cache.load(key)
    if entry is None:
        raise FitProcessError(f"the fit process stored its result, but the cache {cache_dir} cannot give it back"
                              + (f" ({trouble})" if trouble is not None else ""))
    return FitResult(posterior_from_entry(entry), key, cache.path_for(key), from_cache, problem, terms=check)
