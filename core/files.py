"""Where the project's files live, and the one way every file is written.

Every file DDR Explorer writes (fit caches, saved analyses, DDR sheets,
canonical corpora, LOO results, exported tables) goes through
:func:`atomic_path`: the content is written to a temporary file in the target's
folder, made durable with ``fsync``, and then moved over the target with
:func:`os.replace`.  A crash or an exception mid-write leaves the previous file
(or no file) behind, never half of one, and a reader never sees a partial file.

Before anything is written, :func:`check_output` (the output gate, which
:func:`atomic_path` also applies) refuses a target that is one of the command's
input files (also through a link), that is not a regular file (a device, a
FIFO, a socket, a folder: replacing ``/dev/null`` with a regular file breaks a
system), whose folder is missing, whose extension the writer does not write, or
that is a side file the user did not ask to have replaced.  Each refusal is an
:class:`OutputRefused` that names the path and says what would fix it.

This module sits below every other part of ``core``: it imports nothing of the
project, so the model package and the corpus readers can use it too.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import Iterator

__all__ = ["default_cache_dir", "demo_corpus_path", "hal_demo_corpus_path", "OutputRefused", "check_output", "protect_inputs", "atomic_path",
           "write_bytes_atomic", "write_text_atomic"]

#: The files the app has open as its inputs (device, inode): no writer of this process replaces them, whatever
#: path it is given (:func:`protect_inputs`; the app's exports know no corpus path).
_PROTECTED: dict[tuple[int, int], str] = {}


def protect_inputs(paths) -> None:
    """Make ``paths`` the process's protected inputs (replacing the previous ones): :func:`check_output` refuses
    to write over them.  The app calls it with the corpus it opened; a path that cannot be read is skipped."""
    _PROTECTED.clear()
    for p in paths:
        try:
            st = os.stat(p)
        except (OSError, TypeError, ValueError):
            continue
        _PROTECTED[(st.st_dev, st.st_ino)] = str(p)


class OutputRefused(OSError, ValueError):
    """A path the product will not write: the message names it, says why and what would fix it.

    A ValueError (the command line asked for something that cannot be done: ``ddr`` exits 2, before
    any work) and an OSError (what every writer's caller already catches, the app's dialogs
    included, which show ``strerror``).
    """

    def __init__(self, message: str):
        super().__init__(errno.EINVAL, message)

    def __str__(self) -> str:
        return str(self.strerror)


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


def _kind_of(mode: int) -> str:
    return ("a folder" if stat.S_ISDIR(mode) else "a named pipe (FIFO)" if stat.S_ISFIFO(mode) else
            "a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode) else
            "a socket" if stat.S_ISSOCK(mode) else "not a regular file")


def _same_file(a: os.stat_result, b: os.stat_result | None) -> bool:
    return b is not None and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _stat_or_none(path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):  # a missing input is the reader's to say; ValueError: a NUL in the name
        return None


def check_output(path: str | Path, *, inputs=(), suffixes=None, side_file_of: str | None = None,
                 replace_side_file: bool = False, make_parents: bool = False) -> Path:
    """The output gate: return the path to write, or raise :class:`OutputRefused` saying why not.

    Parameters
    ----------
    path
        The file to write.  A link to a regular file is followed (the file it names is rewritten,
        as a plain write would), so the path returned may differ from ``path``.
    inputs
        Files the command reads: writing over one of them (compared by device and inode, so also
        through links and other spellings) would destroy what the user had.
    suffixes
        The extensions the writer writes (``(".csv", ".tsv")``); another is refused with the list,
        never written in a format its name does not say.
    side_file_of
        For a file written beside the one the user named (py-irt's ``*.aliases.toml``): the first
        line a file of ours starts with.  An existing file that does not start with it is the user's
        own and is refused unless ``replace_side_file``.
    replace_side_file
        The user asked to replace side files (``--force``).
    make_parents
        A missing folder will be created, so it is not refused.

    Raises
    ------
    OutputRefused
        With the path, the reason and the fix in its message.
    """
    if not str(path).strip() or Path(path) == Path("."):  # argparse's Path("") is "."
        raise OutputRefused("the output path is empty. Fix: name the file to write.")
    named = Path(path)
    path = Path(os.path.realpath(named)) if named.is_symlink() else named
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        st = None
    except OSError as exc:
        raise OutputRefused(f"{path}: cannot be checked before writing ({exc.strerror or exc}). Fix: choose "
                            "another path.") from None
    if st is not None:
        # the input first: "this is your corpus" matters more than "wrong extension"
        opened = _PROTECTED.get((st.st_dev, st.st_ino))
        for source in [*inputs, *([opened] if opened else [])]:
            if source is not None and _same_file(st, _stat_or_none(source)):
                raise OutputRefused(f"{named}: this is the input file {source}; writing the output would destroy "
                                    "it. Fix: name another output file.")
        if not stat.S_ISREG(st.st_mode):
            raise OutputRefused(f"{named}: this is {_kind_of(st.st_mode)}, not a regular file, and writing the "
                                "output would replace it. Fix: name a new file or a regular file to overwrite.")
    if suffixes is not None and named.suffix.lower() not in suffixes:
        raise OutputRefused(f"{named}: cannot write a '{named.suffix or '(no extension)'}' file here. Fix: name a "
                            f"file ending in one of {', '.join(suffixes)}.")
    if st is not None and side_file_of is not None and not replace_side_file and not _starts_with(path, side_file_of):
        raise OutputRefused(f"{named}: a file of that name exists and was not written by ddr; writing beside "
                            "the output would replace it. Fix: move it away, choose another output name, or pass "
                            "--force to replace it.")
    folder = path.parent if str(path.parent) else Path(".")
    if not make_parents and not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise OutputRefused(f"cannot write {path}: the folder {folder} {what}. Fix: create it or choose another "
                            "path.")
    return path


def _starts_with(path: Path, first_line: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(len(first_line.encode("utf-8"))) == first_line.encode("utf-8")
    except OSError:
        return False


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
def atomic_path(path: str | Path, *, make_parents: bool = False, keep_suffix: bool = False,
                inputs=()) -> Iterator[Path]:
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
    inputs
        Files the writer reads, which it must not replace (:func:`check_output`).

    Yields
    ------
    Path
        A temporary file in ``path``'s folder (it exists, empty).  Write to it by
        name (``h5py.File(tmp, "w")``, ``table.to_parquet(tmp)``, ...).

    Notes
    -----
    On success the temporary file is fsynced and moved over ``path`` with
    :func:`os.replace` (atomic on POSIX and Windows within one file system); on
    any exception it is removed and ``path`` is untouched.  The output gate
    (:func:`check_output`) runs first: a device, a FIFO, a folder or an input
    file is refused (:class:`OutputRefused`), never replaced.
    """
    path = check_output(path, inputs=inputs, make_parents=make_parents)
    folder = path.parent if str(path.parent) else Path(".")
    if make_parents:
        folder.mkdir(parents=True, exist_ok=True)
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
