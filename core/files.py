"""Where the project's files live, and the one way every file is written.

Every file DDR Explorer writes (fit caches, saved analyses, DDR sheets,
canonical corpora, LOO results, exported tables) goes through
:func:`atomic_path`: the content is written to a temporary file in the target's
folder, made durable with ``fsync``, and then moved over the target with
:func:`os.replace`.  A crash or an exception mid-write leaves the previous file
(or no file) behind, never half of one, and a reader never sees a partial file.

This module sits below every other part of ``core``: it imports nothing of the
project, so the model package and the corpus readers can use it too.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Iterator

__all__ = ["default_cache_dir", "demo_corpus_path", "hal_demo_corpus_path", "atomic_path", "write_bytes_atomic", "write_text_atomic"]


def default_cache_dir() -> Path:
    """``$DDR_CACHE_DIR``, else the user's cache folder (``$XDG_CACHE_HOME/ddr-explorer``, ``~/.cache/ddr-explorer``)."""
    env = os.environ.get("DDR_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ddr-explorer"


def demo_corpus_path() -> Path:
    """The bundled Terminal-Bench 2.0 demo corpus (``resources/demo/terminal-bench-2.csv``)."""
    from importlib.resources import files

    return Path(str(files("ddr_explorer.resources") / "demo" / "terminal-bench-2.csv"))


def hal_demo_corpus_path() -> Path:
    """The bundled HAL demo corpus: tau-bench Airline of Hardy et al. (2026)'s response matrix
    (``resources/demo/hal-taubench-airline.csv``, MIT; README-hal-taubench-airline.md beside it)."""
    from importlib.resources import files

    return Path(str(files("ddr_explorer.resources") / "demo" / "hal-taubench-airline.csv"))


def _fsync_file(path: Path) -> None:
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def _mode_for(path: Path) -> int:
    """The permission bits of a rewritten file: the old file's, else what ``open(path, "w")`` gives."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    # Linux shows the umask in /proc without changing it; elsewhere set and restore it (a brief,
    # process-wide change: another thread creating a file at that instant would get mode 0666).
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


@contextlib.contextmanager
def atomic_path(path: str | Path, *, make_parents: bool = False, keep_suffix: bool = False) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces ``path`` atomically.

    Parameters
    ----------
    path
        The file to (re)write.
    make_parents
        Create the folder when it is missing (else a missing folder is an error
        that names it).
    keep_suffix
        End the temporary name with ``path``'s suffix, for writers that pick the
        format from it (Qt's image writer: ``.png``).

    Yields
    ------
    Path
        A temporary file in ``path``'s folder (it exists, empty).  Write to it by
        name (``h5py.File(tmp, "w")``, ``table.to_parquet(tmp)``, ...).

    Notes
    -----
    On success the temporary file is fsynced and moved over ``path`` with
    :func:`os.replace` (atomic on POSIX and Windows within one file system); on
    any exception it is removed and ``path`` is untouched.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if make_parents:
        folder.mkdir(parents=True, exist_ok=True)
    elif not folder.is_dir():
        raise FileNotFoundError(f"cannot write {path}: the folder {folder} does not exist; create it or choose "
                                "another path")
    mode = _mode_for(path)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=(f".tmp{path.suffix}" if keep_suffix else ".tmp"),
                                dir=folder)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        _fsync_file(tmp)  # the bytes are durable before the rename publishes them
        os.chmod(tmp, mode)  # mkstemp makes 0600 files: give the file the mode a plain write would
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_bytes_atomic(path: str | Path, data: bytes, *, make_parents: bool = False) -> Path:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_path`); return the path."""
    path = Path(path)
    with atomic_path(path, make_parents=make_parents) as tmp:
        tmp.write_bytes(data)
    return path


def write_text_atomic(path: str | Path, text: str, *, make_parents: bool = False, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_path`); return the path."""
    return write_bytes_atomic(path, text.encode(encoding), make_parents=make_parents)
