"""Where the chains run: one CPU device per chain (or the GPU), single-threaded BLAS inside each,
and JAX's compiled samplers kept on disk between fits.  (The CPU devices themselves are created by
``XLA_FLAGS``, which :mod:`ddr_explorer.core.model` sets when it is imported before jax.)

Measurements behind each choice: docs/sampler-measurements.md.
"""

from __future__ import annotations

import contextlib


# -- compiled-code cache -------------------------------------------------------------------
#: Upper bound of the compiled-sampler cache on disk (JAX evicts least recently used entries).
COMPILATION_CACHE_BYTES = 512 * 2 ** 20


def _enable_compilation_cache() -> str | None:
    """Keep JAX's compiled samplers on disk, so that a refit of the same shapes (another seed,
    prior or number of draws; the app restarted) skips most of the compile: TB2's chunk compiles
    in 11.4 s cold and 3.5 s from the cache (measured).  The folder is ``$DDR_JAX_CACHE_DIR``,
    else ``jax-compiled`` in the fit cache folder; ``DDR_JAX_CACHE_DIR=off`` disables it, and a
    cache folder the user configured in JAX is left alone.  JAX stores serialised executables,
    not pickles, and recompiles when an entry cannot be read.

    Upgrades: an entry's key hashes the lowered program with the jax and jaxlib versions, the
    backend and the XLA flags, so a new JAX, a changed sampler or another machine misses and
    compiles afresh (never a stale executable); the entries nobody reads any more are evicted,
    least recently used first, once the folder passes :data:`COMPILATION_CACHE_BYTES` (JAX needs
    ``filelock`` for that, a dependency: without it the folder grew without bound).  The key also
    holds the data (closed over as constants), so another corpus compiles anew; another seed or
    number of draws of the same corpus does not (the seed's key and the chunk length are
    arguments).  bench/investigations/bench_compile.py measures a TB2 fit cold, from the cache and without it.
    """
    import os

    import jax

    env = os.environ.get("DDR_JAX_CACHE_DIR", "")
    if env.lower() in ("off", "0", "none"):
        return None
    current = jax.config.jax_compilation_cache_dir
    if current:
        return current
    if env:
        path = env
    else:
        from ..files import default_cache_dir

        path = str(default_cache_dir() / "jax-compiled")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:  # a read-only home: compile every time, as before
        return None
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)
    _quiet_cache_eviction_race()
    try:  # JAX bounds the folder only with filelock installed (about 1 MB per compiled shape)
        import filelock  # noqa: F401
    except ImportError:
        pass
    else:
        jax.config.update("jax_compilation_cache_max_size", COMPILATION_CACHE_BYTES)
    return path


def _quiet_cache_eviction_race() -> None:
    """Silence JAX's warning when another process evicted a cache entry while this one wrote it.

    Two fits in two processes (the app and a ``ddr`` run, or a Dask worker and the app) share the
    folder; when one evicts least-recently-used entries while the other writes, the writer's
    ``-atime`` file can vanish under it and JAX warns "Error writing persistent compilation cache
    entry ... FileNotFoundError".  Nothing is lost but that one entry (the next fit of the shape
    compiles and writes it again), so the warning only alarms users.  Every other cache-write
    error still shows.
    """
    import warnings

    warnings.filterwarnings("ignore", message=r"Error writing persistent compilation cache entry .*FileNotFoundError",
                            category=UserWarning)


# -- data onto the device ------------------------------------------------------------------
def _to_device(a, dtype):
    """``jnp.asarray(a, dtype)`` without compiling anything.

    ``jnp.asarray(x, dtype)`` of a numpy array runs a jitted ``convert_element_type`` (or, without
    a dtype, ``stage``) on the device, and each new shape is an XLA compilation of its own: a TB2
    fit made 25 of them besides its two samplers (bench/investigations/bench_compile.py).  Converting on the host
    and ``jax.device_put`` compiles nothing.  Arrays already on the device (or traced: the refits
    pass their counts as arguments) go through ``jnp.asarray`` as before.
    """
    import jax
    import numpy as np

    if isinstance(a, jax.Array):  # also true of tracers
        import jax.numpy as jnp

        return jnp.asarray(a, dtype)
    return jax.device_put(np.asarray(a, dtype=np.dtype(dtype)))


# -- where the chains run ------------------------------------------------------------------
def _single_threaded_blas():
    """Limit OpenBLAS (which JAX's CPU Cholesky and triangular solves call) to one thread.

    The chains run as parallel CPU devices, one thread each; a multi-threaded BLAS inside each
    of them oversubscribes the cores and spins: the collapsed move of the pooled model (a
    416 x 416 Cholesky per Metropolis step) took 158 ms per chain with the default threads and
    43 ms with one (2 chains on 2 cores, measured).
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a declared dependency; without it only slower
        return contextlib.nullcontext()
    # threadpoolctl limits the libraries loaded when it is entered: load the LAPACK that jaxlib's
    # CPU kernels use (scipy's) first, or the limit misses it
    import scipy.linalg.cython_lapack  # noqa: F401

    return threadpool_limits(limits=1, user_api="blas")


def _devices(kind: str):
    import jax

    if kind in ("auto", "gpu"):
        try:
            gpus = jax.devices("gpu")
        except RuntimeError:
            gpus = []
        if gpus:
            return gpus, "gpu"
        if kind == "gpu":
            raise RuntimeError("device='gpu' was asked for but JAX sees no GPU; use device='auto' or 'cpu'.")
    return jax.devices("cpu"), "cpu"


def _chain_layout(chains: int, n_devices: int) -> int:
    """Devices to spread the chains over: the largest divisor of chains not above n_devices."""
    for d in range(min(chains, n_devices), 0, -1):
        if chains % d == 0:
            return d
    return 1
