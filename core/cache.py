"""The fit cache: one HDF5 file per fit, written atomically, verified on read.

Layout of a cache file (open it with plain ``h5py``; nothing in it is pickled)::

    /                       attrs: format = "ddr-explorer-fit", format_version,
                                   key (hex SHA-256), package_version, created,
                                   meta (JSON text: spec, priors, sampler settings,
                                   corpus hash and name, diagnostics, device, ...)
    /<group>/<name>         one dataset per array, e.g. /posterior/sigma_task
                            with shape (chain, draw, ...); attrs: sha256 of the
                            array's bytes, dims (JSON list of dimension names)
    /complete               attrs: n_arrays; written last

The key hashes everything that determines the draws: the corpus content, the
formula, the priors, the sampler settings and the package version
(:func:`cache_key`).  A file is written under a unique temporary name in the
same folder and renamed over the final name, so readers only ever see a
complete file, and two processes writing one key both leave a complete file
(the last rename wins; both are identical fits).  On read, the format marker,
version, key, completeness flag and every array's checksum are verified; a
truncated, corrupt or foreign file is reported as a :class:`CacheProblem` and
the caller refits.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .files import atomic_path

FORMAT = "ddr-explorer-fit"
FORMAT_VERSION = 1


def _package_version() -> str:
    from .. import __version__

    return __version__


def canonical_json(obj) -> str:
    """JSON with sorted keys and no spaces: the same object always gives the same text."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def cache_key(*, corpus_hash: str, spec: dict, priors: dict, settings: dict, version: str | None = None) -> str:
    """SHA-256 key of a fit from everything that determines its draws."""
    payload = canonical_json({"corpus": corpus_hash, "spec": spec, "priors": priors, "settings": settings,
                              "version": version or _package_version(), "format": FORMAT_VERSION})
    return hashlib.sha256(payload.encode()).hexdigest()


def _digest(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


@dataclass
class CacheEntry:
    """What a cache file holds: named arrays and JSON-serialisable metadata."""

    arrays: dict[str, np.ndarray]
    meta: dict = field(default_factory=dict)
    dims: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class CacheProblem:
    """Why a cache file could not be used (the caller refits and says so)."""

    path: Path
    reason: str

    def __str__(self) -> str:
        return f"cached fit {self.path} is unusable ({self.reason}); refitting"


class FitCache:
    """A folder of fit files named by key.

    Parameters
    ----------
    root
        The cache folder (created on first write).
    """

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path_for(self, key: str) -> Path:
        return self.root / f"fit-{key[:32]}.h5"

    # -- write ---------------------------------------------------------------------
    def store(self, key: str, entry: CacheEntry) -> Path:
        """Write ``entry`` under ``key`` atomically and return the file's path."""
        import h5py

        self.root.mkdir(parents=True, exist_ok=True)
        final = self.path_for(key)
        with atomic_path(final) as tmp:
            with h5py.File(tmp, "w") as f:
                f.attrs["format"] = FORMAT
                f.attrs["format_version"] = FORMAT_VERSION
                f.attrs["key"] = key
                f.attrs["package_version"] = _package_version()
                f.attrs["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                f.attrs["meta"] = canonical_json(entry.meta)
                for name, arr in entry.arrays.items():
                    arr = np.asarray(arr)
                    if arr.dtype.kind not in "biuf":
                        raise TypeError(f"cache arrays must be numeric; {name!r} is {arr.dtype}")
                    ds = f.create_dataset(name, data=arr, compression="gzip", compression_opts=1, shuffle=True)
                    ds.attrs["sha256"] = _digest(arr)
                    ds.attrs["dims"] = json.dumps(entry.dims.get(name, []))
                done = f.create_group("complete")
                done.attrs["n_arrays"] = len(entry.arrays)
                f.flush()
        return final

    # -- read ----------------------------------------------------------------------
    def load(self, key: str) -> tuple[CacheEntry | None, CacheProblem | None]:
        """Return ``(entry, None)``, ``(None, None)`` if absent, or ``(None, problem)``."""
        path = self.path_for(key)
        if not path.exists():
            return None, None
        try:
            return read_fit_file(path, expect_key=key), None
        except CacheFileError as exc:
            return None, CacheProblem(path, str(exc))

    def discard(self, key: str) -> None:
        """Remove the file of ``key`` (e.g. after a problem was reported)."""
        try:
            self.path_for(key).unlink()
        except FileNotFoundError:
            pass


class CacheFileError(ValueError):
    """A cache file is not a complete, intact fit file of this format."""


def read_fit_file(path: str | Path, expect_key: str | None = None) -> CacheEntry:
    """Open and verify a fit file; raise :class:`CacheFileError` on any problem."""
    import h5py

    path = Path(path)
    try:
        f = h5py.File(path, "r")
    except (OSError, ValueError) as exc:
        raise CacheFileError(f"not a readable HDF5 file: {exc}") from None
    with f:
        if f.attrs.get("format") != FORMAT:
            raise CacheFileError(f"not a DDR Explorer fit file (format={f.attrs.get('format')!r})")
        if int(f.attrs.get("format_version", -1)) != FORMAT_VERSION:
            raise CacheFileError(f"format version {f.attrs.get('format_version')} is not {FORMAT_VERSION}")
        if expect_key is not None and f.attrs.get("key") != expect_key:
            raise CacheFileError("the file belongs to another fit (key mismatch)")
        if "complete" not in f:
            raise CacheFileError("the file is incomplete (its writer did not finish)")
        try:
            meta = json.loads(f.attrs["meta"])
        except (KeyError, ValueError) as exc:
            raise CacheFileError(f"unreadable metadata: {exc}") from None
        arrays: dict[str, np.ndarray] = {}
        dims: dict[str, list[str]] = {}

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                arrays[name] = obj

        try:
            f.visititems(visit)
            out = {}
            for name, ds in arrays.items():
                arr = ds[()]
                if _digest(arr) != ds.attrs.get("sha256"):
                    raise CacheFileError(f"array {name!r} fails its checksum")
                out[name] = arr
                dims[name] = json.loads(ds.attrs.get("dims", "[]"))
        except (OSError, KeyError, RuntimeError) as exc:
            raise CacheFileError(f"damaged data: {exc}") from None
        if len(out) != int(f["complete"].attrs.get("n_arrays", -1)):
            raise CacheFileError("the file holds fewer arrays than it was written with")
    return CacheEntry(arrays=out, meta=meta, dims=dims)
