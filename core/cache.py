"""The fit cache: one ArviZ InferenceData netCDF-4 file per fit, written atomically, verified on read.

A cache file is a netCDF-4 file (netCDF-4 is HDF5), written with ``h5netcdf``:
``arviz.from_netcdf(path)`` opens it with named dimensions and coordinates, and
plain ``h5py`` still reads every array.  Nothing in it is pickled.  Layout::

    /                       global attrs: format = "ddr-explorer-fit", format_version = 2,
                                   key (hex SHA-256), package_version, created,
                                   meta (JSON text: spec with priors, sampler settings,
                                   corpus hash and name, verdict, levels, notes, device, ...),
                                   content_sha256 (one checksum over the key, meta and every
                                   array's name, dimensions, labels and checksum),
                                   n_arrays (the number of arrays; written last)
    /posterior              mu (chain, draw); sigma (chain, draw, term), coordinate
                            term = the term names; u_<term> (chain, draw, <term>_level)
                            per kept random-effect term (":" written "__"), coordinate
                            <term>_level = the level labels as strings
    /sample_stats           diverging, energy, n_steps, tree_depth, acceptance_rate,
                            step_size, lp (ArviZ's names), and the sampler's own extras
    /warmup_sample_stats    the warmup's n_steps and diverging (when kept)

Each array is one netCDF variable of the group named by the first part of its
:class:`CacheEntry` name (``"posterior/mu"`` -> variable ``mu`` of ``/posterior``;
a name without a group goes to ``/ddr_arrays``).  Its attributes hold
``ddr_name`` (the entry name, so a read gives back exactly the entry written),
``ddr_dims`` (the entry's dimension names, JSON) and ``sha256`` (of the array's
bytes); a boolean array is stored as int8 with ``dtype = "bool"`` (netCDF has no
booleans; xarray and this reader decode it back).  Dimensions the entry does not name are called ``chain`` and ``draw``
for the first two axes of a posterior or sample-statistics array (ArviZ's
convention) and ``<variable>_dim_<i>`` otherwise; every dimension has a
coordinate (the entry's labels, or 0, 1, 2, ...).

The key hashes everything that determines the draws: the corpus content, the
formula, the priors, the sampler settings, the package version and the format
version (:func:`cache_key`), so a file of another format is never read as this
one.  A file is written under a unique temporary name in the same folder and
renamed over the final name (:func:`~.files.atomic_path`), so readers only ever
see a complete file, and two processes writing one key both leave a complete
file (the last rename wins; both are identical fits).  On read, the format
marker, version, key, array count, every array's checksum and the content checksum (which
covers the labels: a changed model name is found, not read as another model) are verified; a
truncated, corrupt or foreign file is reported as a :class:`CacheProblem` and
the caller refits.  The file is built in memory and only its bytes are written to disk: when
HDF5 itself meets a full disk, its failed write leaves the file object broken and closing it
ends the process with a segmentation fault (h5netcdf's close flushes attributes into it); a
plain write of bytes fails with an OSError instead, which :meth:`FitCache.store` says as
one :class:`CacheWriteError` line, leaving no temporary file behind.  A file of format version 1
(DDR Explorer's own HDF5 layout before this one) is reported as an old-format file and refitted once.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .files import write_bytes_atomic

FORMAT = "ddr-explorer-fit"
FORMAT_VERSION = 2
#: The plain-HDF5 layout of format version 1; read only to say that a file is old.
OLD_FORMAT_VERSIONS = (1,)
#: The group of arrays whose entry name has no group part.
DEFAULT_GROUP = "ddr_arrays"
#: Groups whose arrays are (chain, draw, ...) in ArviZ's scheme.
_DRAW_GROUPS = ("posterior", "sample_stats", "warmup_posterior", "warmup_sample_stats", "log_likelihood")


def _package_version() -> str:
    from .. import __version__

    return __version__


def canonical_json(obj) -> str:
    """JSON with sorted keys and no spaces: the same object always gives the same text."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def cache_key(*, corpus_hash: str, spec: dict, priors: dict, settings: dict, version: str | None = None,
              format_version: int = FORMAT_VERSION, slice: str | None = None) -> str:
    """SHA-256 key of a fit from everything that determines its draws (and the file format's version).

    ``format_version`` other than the current one gives the key an older release stored the same fit
    under (:meth:`FitCache.load` looks for such a file to say it is old).  ``slice`` is the slice of
    tasks the corpus was cut to (:mod:`.corpus.slicing`): the sliced corpus hashes differently anyway,
    and the slice is keyed too so that a fit is found by what the user asked for; an unsliced fit keeps
    the key it always had.
    """
    d = {"corpus": corpus_hash, "spec": spec, "priors": priors, "settings": settings,
         "version": version or _package_version(), "format": format_version}
    if slice:
        d["slice"] = slice
    payload = canonical_json(d)
    return hashlib.sha256(payload.encode()).hexdigest()


def _digest(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def _content_digest(key: str, meta_text: str, arrays: list[tuple[str, list[str], dict[str, list[str]], str]]) -> str:
    """SHA-256 of everything a cache file holds besides the arrays' bytes (whose own checksums it includes).

    The key, the metadata JSON (the levels' names, the spec, the settings), and per array its entry
    name, dimension names, the labels of those dimensions and its checksum: one flipped byte in a model
    name is found on read, not used as another model.
    """
    doc = {"key": key, "meta": meta_text,
           "arrays": sorted([name, list(dims), {d: list(v) for d, v in sorted(labels.items())}, sha]
                            for name, dims, labels, sha in arrays)}
    return hashlib.sha256(canonical_json(doc).encode()).hexdigest()


@dataclass
class CacheEntry:
    """What a cache file holds: named arrays, JSON-serialisable metadata, dimension names and labels.

    ``arrays`` are keyed ``"<group>/<variable>"`` (e.g. ``"posterior/mu"``); ``dims`` names the axes of
    an array; ``coords`` gives the labels (strings) of a dimension, e.g. the term names of ``"term"``.
    """

    arrays: dict[str, np.ndarray]
    meta: dict = field(default_factory=dict)
    dims: dict[str, list[str]] = field(default_factory=dict)
    coords: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class CacheProblem:
    """Why a cache file could not be used (the caller refits and says so)."""

    path: Path
    reason: str

    def __str__(self) -> str:
        return f"cached fit {self.path} is unusable ({self.reason}); refitting"


_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")


def _safe(name: str) -> str:
    """A netCDF-safe name: ":" becomes "__" (as in the ArviZ conversion), any other odd character "_"."""
    return _UNSAFE.sub("_", name.replace(":", "__"))


def _layout(entry: CacheEntry) -> dict[str, dict[str, tuple[str, np.ndarray, list[str]]]]:
    """group -> variable -> (entry name, array, netCDF dims), checked for clashes."""
    groups: dict[str, dict[str, tuple[str, np.ndarray, list[str]]]] = {}
    for name, arr in entry.arrays.items():
        arr = np.asarray(arr)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"cache arrays must be numeric; {name!r} is {arr.dtype}")
        group, _, var = name.partition("/") if "/" in name else (DEFAULT_GROUP, "", name)
        group, var = _safe(group), _safe(var.replace("/", "."))
        given = list(entry.dims.get(name, []))
        if given and len(given) != arr.ndim:
            raise ValueError(f"cache array {name!r} has {arr.ndim} axes but dims {given}")
        dims = [_safe(d) for d in given] if given else [
            ("chain", "draw")[i] if group in _DRAW_GROUPS and arr.ndim >= 2 and i < 2 else f"{var}_dim_{i}"
            for i in range(arr.ndim)]
        if var in groups.setdefault(group, {}):
            raise ValueError(f"cache arrays {groups[group][var][0]!r} and {name!r} map to one variable {var!r}")
        groups[group][var] = (name, arr, dims)
    return groups


class FitCache:
    """A folder of fit files named by key.

    Parameters
    ----------
    root
        The cache folder (created on first write).
    """

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.removed_temporaries = remove_stale_temporaries(self.root)

    def check_writable(self) -> None:
        """Raise :class:`CacheFolderError` unless a fit can be stored here (before a fit runs, not after).

        The folder is created when missing; a file in its place, or a folder that cannot be written, is
        an error that says so, so that a long fit is not lost at its end.
        """
        import os
        import tempfile

        if self.root.exists() and not self.root.is_dir():
            raise CacheFolderError(f"{self.root}: the cache folder is a file; name a folder (it is created when "
                                   "missing), or run without the cache (--no-cache)")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(dir=self.root, prefix=".write-check-", suffix=".tmp")
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise CacheFolderError(f"{self.root}: the cache folder cannot be written ({exc.strerror or exc}); name a "
                                   "writable folder, or run without the cache (--no-cache)") from None

    def path_for(self, key: str) -> Path:
        return self.root / f"fit-{key[:32]}.h5"

    # -- write ---------------------------------------------------------------------
    def store(self, key: str, entry: CacheEntry) -> Path:
        """Write ``entry`` under ``key`` atomically as an ArviZ netCDF-4 file and return its path.

        Raises
        ------
        CacheWriteError
            The file could not be written (disk full, permission); its message is one line that says
            the fit is not kept.  Nothing is left behind.
        """
        import io

        buffer = io.BytesIO()  # HDF5 never meets the disk: see the module's docstring (the segfault)
        self._write_netcdf(buffer, key, entry)
        final = self.path_for(key)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(final, buffer.getbuffer())
        except OSError as exc:
            raise CacheWriteError(f"the fit could not be stored in the cache folder {self.root} "
                                  f"({exc.strerror or exc}); the results stand, but the next run fits again") from exc
        return final

    @staticmethod
    def _write_netcdf(target, key: str, entry: CacheEntry) -> None:
        """The netCDF-4 file of ``entry`` written to ``target`` (a file-like object)."""
        import h5netcdf
        import h5py

        groups = _layout(entry)
        with h5netcdf.File(target, "w") as f:
            f.attrs["format"] = FORMAT
            f.attrs["format_version"] = FORMAT_VERSION
            f.attrs["key"] = key
            f.attrs["package_version"] = _package_version()
            f.attrs["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            meta_text = canonical_json(entry.meta)
            f.attrs["meta"] = meta_text
            covered = []
            for gname, variables in groups.items():
                g = f.create_group(gname)
                sizes: dict[str, int] = {}
                for name, arr, dims in variables.values():
                    for d, n in zip(dims, arr.shape):
                        if sizes.setdefault(d, n) != n:
                            raise ValueError(f"dimension {d!r} of group {gname!r} has lengths {sizes[d]} "
                                             f"and {n} (array {name!r})")
                g.dimensions = sizes
                for d, n in sizes.items():  # every dimension a coordinate: ArviZ indexes by them
                    labels = entry.coords.get(d)
                    if labels is not None:
                        labels = [str(x) for x in labels]
                        if len(labels) != n:
                            raise ValueError(f"coordinate {d!r} has {len(labels)} labels for {n} positions")
                        g.create_variable(d, (d,), data=np.array(labels, dtype=object),
                                          dtype=h5py.string_dtype())  # netCDF variable-length strings
                    else:
                        g.create_variable(d, (d,), data=np.arange(n, dtype=np.int64))
                for var, (name, arr, dims) in variables.items():
                    # netCDF has no booleans: int8 with xarray's own marker, which decodes it as bool
                    data = arr.astype(np.int8) if arr.dtype.kind == "b" else arr
                    v = g.create_variable(var, tuple(dims), data=data, compression="gzip",
                                          compression_opts=1, shuffle=True)
                    if arr.dtype.kind == "b":
                        v.attrs["dtype"] = "bool"
                    v.attrs["ddr_name"] = name
                    named = list(entry.dims.get(name, []))
                    v.attrs["ddr_dims"] = json.dumps(named)
                    v.attrs["sha256"] = sha = _digest(arr)
                    covered.append((name, named, {d: [str(x) for x in entry.coords[d]] for d in named
                                                  if d in entry.coords}, sha))
            f.attrs["content_sha256"] = _content_digest(key, meta_text, covered)
            f.attrs["n_arrays"] = len(entry.arrays)  # last: a file without it is incomplete

    # -- read ----------------------------------------------------------------------
    def load(self, key: str, old_keys: tuple[str, ...] = ()) -> tuple[CacheEntry | None, CacheProblem | None]:
        """Return ``(entry, None)``, ``(None, None)`` if absent, or ``(None, problem)``.

        ``old_keys``: the keys an older format stored this fit under (:func:`cache_key` with an old
        ``format_version``); when only such a file exists, it is reported as a problem that says it is
        old, and the caller refits once (the new file is found first from then on).
        """
        path = self.path_for(key)
        if not path.exists():
            for old in old_keys:
                old_path = self.path_for(old)
                if old_path.exists():
                    try:
                        read_fit_file(old_path)
                    except CacheFileError as exc:
                        return None, CacheProblem(old_path, str(exc))
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


class CacheWriteError(OSError):
    """A fit could not be written to the cache (disk full, permission): one line that says so.

    The fit's results stand (the caller reports them and this line); nothing is left in the folder.
    """

    def __str__(self) -> str:
        return str(self.args[0])


class CacheFolderError(ValueError):
    """The cache folder cannot hold a new fit (it is a file, or not writable); checked before sampling."""


#: Temporary files of a write older than this are a killed writer's leftovers (a write takes seconds).
STALE_SECONDS = 24 * 3600


def remove_stale_temporaries(root: Path, max_age: float = STALE_SECONDS) -> list[Path]:
    """Remove the temporary files a killed writer left in a cache folder (``.fit-<key>.h5.<random>.tmp``).

    Only files older than ``max_age`` seconds that no process holds locked are removed (HDF5 locks a
    file it writes), so a write in progress is never touched.

    Returns
    -------
    list of Path
        The files removed.
    """
    import fcntl
    import os

    removed = []
    try:
        candidates = list(Path(root).glob(".fit-*.tmp"))
    except OSError:
        return removed
    now = time.time()
    for p in candidates:
        try:
            if now - p.stat().st_mtime < max_age:
                continue
            fd = os.open(p, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # fails while a writer holds it
            except OSError:
                continue
            finally:
                os.close(fd)
            p.unlink()
            removed.append(p)
        except OSError:
            continue
    return removed


class CacheFileError(ValueError):
    """A cache file is not a complete, intact fit file of this format."""


def _text(v) -> str | None:
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.ndarray) and v.size == 1:
        return _text(v.reshape(-1)[0])
    return None if v is None else str(v)


def _int(v) -> int:
    """An integer attribute (netCDF writes scalars as one-element arrays); -1 when it is not one."""
    try:
        a = np.asarray(v).reshape(-1)
        return int(a[0]) if a.size == 1 and a.dtype.kind in "iu" else -1
    except (TypeError, ValueError):
        return -1


def read_fit_file(path: str | Path, expect_key: str | None = None) -> CacheEntry:
    """Open and verify a fit file; raise :class:`CacheFileError` on any problem.

    Read with ``h5py`` (a netCDF-4 file is an HDF5 file): every variable that carries a ``ddr_name``
    is an array of the entry; the coordinates of their dimensions come back as ``coords``.
    """
    import h5py

    from .side_files import regular_file

    path = Path(path)
    # a FIFO named as FIT.h5 blocked h5py's open for good; a folder gave HDF5's multi-line message
    regular_file(path, "fit file", error=lambda message: CacheFileError(message.split(": ", 1)[1]))
    try:
        f = h5py.File(path, "r")
    except (OSError, ValueError) as exc:
        raise CacheFileError(f"not a readable HDF5 file: {exc}") from None
    try:
        with f:
            return _read_open_file(f, expect_key)
    except CacheFileError:
        raise
    except Exception as exc:  # noqa: BLE001 - HDF5 raises KeyError, OSError, RuntimeError... for damaged bytes
        raise CacheFileError(f"damaged file ({type(exc).__name__}: {exc})") from None


def _read_open_file(f, expect_key: str | None) -> CacheEntry:
    """The entry of an open fit file, every checksum verified."""
    import h5py

    fmt = _text(f.attrs.get("format"))
    if fmt != FORMAT:
        raise CacheFileError(f"not a DDR Explorer fit file (format={fmt!r})")
    version = _int(f.attrs.get("format_version"))
    if version in OLD_FORMAT_VERSIONS:
        raise CacheFileError(f"old-format file: DDR Explorer fit format version {version} (plain HDF5), "
                             f"from before format {FORMAT_VERSION} (an ArviZ netCDF file); a new fit of its "
                             "corpus replaces it")
    if version != FORMAT_VERSION:
        raise CacheFileError(f"format version {f.attrs.get('format_version')} is not {FORMAT_VERSION}")
    if expect_key is not None and _text(f.attrs.get("key")) != expect_key:
        raise CacheFileError("the file belongs to another fit (key mismatch)")
    if "n_arrays" not in f.attrs:
        raise CacheFileError("the file is incomplete (its writer did not finish)")
    try:
        meta_text = _text(f.attrs["meta"])
        meta = json.loads(meta_text)
    except (KeyError, TypeError, ValueError, RecursionError) as exc:
        raise CacheFileError(f"unreadable metadata: {exc}") from None
    content = _text(f.attrs.get("content_sha256"))
    if content is None:
        raise CacheFileError("the file has no checksum of its labels and metadata (written by an older "
                             "version); a new fit replaces it")
    found: list[h5py.Dataset] = []

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and "ddr_name" in obj.attrs:
            found.append(obj)

    out: dict[str, np.ndarray] = {}
    dims: dict[str, list[str]] = {}
    coords: dict[str, list[str]] = {}
    shas: dict[str, str] = {}
    try:
        f.visititems(visit)
        for ds in found:
            name = _text(ds.attrs["ddr_name"])
            arr = ds[()]
            if _text(ds.attrs.get("dtype")) == "bool":
                arr = arr.astype(bool)
            shas[name] = _digest(arr)
            if shas[name] != _text(ds.attrs.get("sha256")):
                raise CacheFileError(f"array {name!r} fails its checksum")
            out[name] = arr
            dims[name] = json.loads(_text(ds.attrs.get("ddr_dims", "[]")))
            for d in dims[name]:
                c = ds.parent.get(_safe(d))
                if c is not None and c.dtype.kind in "OSU":
                    coords[d] = [_text(x) for x in c[()]]
    except (OSError, KeyError, RuntimeError, TypeError, ValueError) as exc:
        if isinstance(exc, CacheFileError):
            raise
        raise CacheFileError(f"damaged data: {exc}") from None
    if len(out) != _int(f.attrs["n_arrays"]):
        raise CacheFileError("the file holds fewer arrays than it was written with")
    covered = [(name, dims[name], {d: coords[d] for d in dims[name] if d in coords}, shas[name]) for name in out]
    if _content_digest(_text(f.attrs.get("key")), meta_text, covered) != content:
        raise CacheFileError("its labels or metadata fail their checksum (the file was changed after it was "
                             "written)")
    return CacheEntry(arrays=out, meta=meta, dims=dims, coords=coords)
