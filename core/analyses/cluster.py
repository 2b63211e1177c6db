"""Refits on a Dask distributed cluster (``ddr analyses --scheduler ADDRESS``, ``$DDR_SCHEDULER``).

The refit engine (:mod:`.engine`) hands its pending refits of one parent here when a scheduler is
named.  The parent's design, model, posterior and sampler settings are scattered to the cluster
once; the requests go in batches, one future per batch, each calling
:func:`~ddr_explorer.core.model.refit.fit_refits` on its worker (:func:`refit_batch`).  A worker
writes every refit it finishes through the project's cache contract
(:class:`~ddr_explorer.core.cache.FitCache`: atomic, keyed, so two workers writing one key both
leave a complete file) in the cache folder it is given, and sends back the cache entries (plain
arrays and metadata); the engine stores any entry its own cache folder lacks (a cluster that shares
no disk with the client).

Failures.  A worker that dies takes its futures with it; the scheduler resubmits them on another
worker (Dask reschedules the tasks of a lost worker), and ``retries`` resubmits a future whose
worker raised anything but a ``ValueError`` (a part that cannot be fitted is a result, not an
accident: its message comes back in place of the entry).  Cancel cancels every future of the batch.

PSIS-LOO's refit of the whole corpus (every random effect kept, which the cache does not store) goes
to the cluster too when a scheduler is named (:func:`posterior_on_cluster`): one future whose result
is the posterior itself, carried back by Dask, not through the cache.

``distributed`` is an optional extra (``pip install ddr-explorer[cluster]``); without a scheduler
nothing here is imported.
"""

from __future__ import annotations

import math
import time
from typing import Sequence

__all__ = ["refit_batch", "refit_on_cluster", "client_for", "RETRIES", "refit_whole_task", "posterior_on_cluster"]

#: Times a future is resubmitted after its worker failed (a lost worker's tasks are rescheduled anyway).
RETRIES = 3


def client_for(address: str):
    """A :class:`distributed.Client` connected to the scheduler at ``address`` (a clear error without it)."""
    try:
        from distributed import Client
    except ImportError:
        raise ValueError(f"refits on the Dask scheduler {address} need the 'distributed' package: "
                         "pip install 'ddr-explorer[cluster]' (or unset DDR_SCHEDULER to run locally)") from None
    try:
        return Client(address, timeout="20s")
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"cannot reach the Dask scheduler at {address} ({exc}); start it with `dask-scheduler` "
                         "and workers with `dask-worker ADDRESS`, or unset DDR_SCHEDULER to run locally") from None


def refit_batch(design, spec, requests, settings, parent, keys: Sequence[str], cache_dir: str | None):
    """On a worker: fit ``requests`` (:func:`~ddr_explorer.core.model.refit.fit_refits`), store each under
    its key in ``cache_dir`` (when given) and return their cache entries, or a ``ValueError``'s message in
    place of all of them when the batch cannot be fitted."""
    import ddr_explorer.core.model  # noqa: F401 - before jax: the worker's chains run in parallel

    from ..cache import FitCache
    from ..fitting import posterior_to_entry
    from ..model.refit import fit_refits

    cache = FitCache(cache_dir) if cache_dir else None
    out = []
    for key in keys:  # a resubmitted batch reopens what its lost worker already stored
        entry = None
        if cache is not None:
            entry, _ = cache.load(key)
        out.append(entry)
    todo = [i for i, e in enumerate(out) if e is None]
    if todo:
        try:
            posts = fit_refits(design, spec, [requests[i] for i in todo], settings, parent=parent)
        except ValueError as exc:
            return [str(exc)] * len(keys)
        for i, post in zip(todo, posts):
            entry = posterior_to_entry(post, None)
            if cache is not None:
                try:
                    cache.store(keys[i], entry)
                except OSError:  # the folder is the client's alone: the client stores what comes back
                    pass
            out[i] = entry
    return out


def refit_on_cluster(address: str, design, spec, requests, settings, *, parent=None, keys: Sequence[str],
                     cache_dir: str | None = None, batch_size: int | None = None, progress=None, cancel=None,
                     client=None) -> list:
    """Fit ``requests`` on the cluster at ``address``; one cache entry (or error message) per request, in order.

    Parameters
    ----------
    address
        The scheduler (``tcp://host:8786``).
    design, spec, requests, settings, parent
        As for :func:`~ddr_explorer.core.model.refit.fit_refits`.
    keys
        The refits' cache keys (:func:`~.engine.refit_key`).
    cache_dir
        The cache folder the workers write to (a shared disk; the client stores what they send back anyway).
    batch_size
        Requests per future; by default the requests spread evenly over the workers.
    progress, cancel
        ``progress(phase, done, n, eta)`` as futures finish; ``cancel()`` polled while waiting, and every
        future is cancelled when it says so.
    client
        An existing :class:`distributed.Client` (tests); otherwise one is opened and closed here.
    """
    from ..model.posterior import FitCancelled

    own = client is None
    client = client or client_for(address)
    try:
        n = len(requests)
        if batch_size is None:
            workers = max(len(client.scheduler_info().get("workers", {})), 1)
            batch_size = max(1, math.ceil(n / workers))
        # the parent's shared parts travel once; every future refers to them
        shared = client.scatter([design, spec, settings, parent], broadcast=True)
        futures, spans = [], []
        for lo in range(0, n, batch_size):
            hi = min(lo + batch_size, n)
            futures.append(client.submit(refit_batch, *shared[:2], list(requests[lo:hi]), shared[2], shared[3],
                                         list(keys[lo:hi]), cache_dir, retries=RETRIES, pure=False,
                                         key=f"ddr-refits-{keys[lo][:16]}-{hi - lo}"))
            spans.append((lo, hi))
        out: list = [None] * n
        done = 0
        t0 = time.perf_counter()
        if progress is not None:
            progress("refits on the cluster", 0, n, None)
        pending = list(range(len(futures)))
        while pending:
            if cancel is not None and cancel():
                client.cancel(futures)
                raise FitCancelled(f"refits cancelled by the user ({done} of {n} done; their futures cancelled)")
            finished = [k for k in pending if futures[k].done()]
            if not finished:
                time.sleep(0.2)
                continue
            for k in finished:
                pending.remove(k)
                lo, hi = spans[k]
                out[lo:hi] = futures[k].result()  # a batch that failed after its retries raises here
                done += hi - lo
                if progress is not None:
                    per = (time.perf_counter() - t0) / done
                    progress("refits on the cluster", done, n, per * (n - done))
        return out
    finally:
        if own:
            client.close()


def refit_whole_task(design, spec, request, settings, parent):
    """On a worker: one refit with every random effect kept (PSIS-LOO's refit of the whole corpus,
    :meth:`~.engine.RefitEngine.refit_whole`), returned as the posterior itself: the fit cache keeps no
    task-level effects, so this refit is not stored; Dask carries it back to the client."""
    import ddr_explorer.core.model  # noqa: F401 - before jax: the worker's chains run in parallel

    from ..model.refit import fit_refits

    return fit_refits(design, spec, [request], settings, parent=parent)[0]


def posterior_on_cluster(address: str, design, spec, request, settings, *, parent=None, progress=None, cancel=None,
                         client=None):
    """:func:`refit_whole_task` on the cluster at ``address`` (resubmitted after a lost worker like the other
    refits, ``retries`` = :data:`RETRIES`); ``cancel()`` polled while waiting cancels the future."""
    from ..model.posterior import FitCancelled

    own = client is None
    client = client or client_for(address)
    try:
        fut = client.submit(refit_whole_task, design, spec, request, settings, parent, retries=RETRIES, pure=False)
        if progress is not None:
            progress("refit on the cluster", 0, 1, None)
        while not fut.done():
            if cancel is not None and cancel():
                client.cancel([fut])
                raise FitCancelled("refit cancelled by the user (its future cancelled)")
            time.sleep(0.2)
        post = fut.result()
        if progress is not None:
            progress("refit on the cluster", 1, 1, 0.0)
        return post
    finally:
        if own:
            client.close()
