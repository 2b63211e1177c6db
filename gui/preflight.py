"""Linux start-up preflight: can Qt load its platform plugin here?

PySide6's wheels (and the frozen build) bring Qt, but not the system libraries Qt's
platform plugins link against: the ``xcb`` plugin needs ``libxcb-cursor0``,
``libxcb-icccm4``, ``libxcb-keysyms1`` and friends, which pip cannot install.  When one
is missing, Qt aborts (SIGABRT) with "Could not load the Qt platform plugin" and advises
reinstalling, which does not help.  This module runs *before* anything imports a Qt
module: it works out which platform plugin Qt will pick, asks the system's dynamic
loader whether every library of that plugin resolves, and when one does not, says which
and how to install it on the common distribution families, then exits with a non-zero
code.  A session with no display at all gets its own message.

The check is split so that each part can be tested on its own:

* :func:`read_needed` reads an ELF file's ``DT_NEEDED`` entries (the library list);
* :func:`ldd_resolution` asks the loader (``ldd``, the real ``ld.so`` of this system,
  with this process's ``LD_LIBRARY_PATH``) where each library of the closure resolves;
  :func:`parse_ldd` reads its output;
* :func:`unresolved` is a pure function of the two: it walks the library lists from the
  plugin through every library the loader resolved and returns those it did not, each
  with the library that needs it;
* :func:`decide` turns the per-platform results into a verdict, and
  :func:`missing_message` / :func:`no_display_message` write the text.

Nothing here imports Qt: PySide6's folder is found with :func:`importlib.util.find_spec`,
which does not execute the package.  On other systems than Linux every entry point is a
no-op (Qt bundles its platform plugins there).
"""

from __future__ import annotations

import mmap
import os
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: Exit codes of ``ddr-explorer`` when the preflight stops it (never Qt's SIGABRT, 134).
EXIT_MISSING_LIBRARIES = 3
EXIT_NO_DISPLAY = 4

#: Set to 1 to skip the preflight (if it were ever wrong about this system).
SKIP_ENV = "DDR_SKIP_PREFLIGHT"

# -- packages: which package of each family provides a library ------------------------------------
#: The distribution families the messages name, in order: key, who uses it, install command.
FAMILIES: tuple[tuple[str, str, str], ...] = (
    ("apt", "Debian, Ubuntu", "sudo apt install"),
    ("dnf", "Fedora, RHEL", "sudo dnf install"),
    ("zypper", "openSUSE", "sudo zypper install"),
    ("pacman", "Arch", "sudo pacman -S --needed"),
)

#: soname -> package per family (apt, dnf, zypper, pacman).  The libraries of Qt's xcb,
#: wayland and offscreen plugins that a desktop installation may lack (the closure of
#: PySide6 6.11's plugins, less glibc, libstdc++ and what every desktop has anyway).
PACKAGES: dict[str, tuple[str, str, str, str]] = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor", "libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm", "libxcb-icccm4", "xcb-util-wm"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms", "libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image", "libxcb-image0", "xcb-util-image"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil", "libxcb-render-util0",
                                "xcb-util-renderutil"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util", "libxcb-util1", "xcb-util"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb", "libxcb-randr0", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb", "libxcb-render0", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb", "libxcb-shape0", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb", "libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb", "libxcb-sync1", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb", "libxcb-xfixes0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb", "libxcb-xkb1", "libxcb"),
    "libxcb.so.1": ("libxcb1", "libxcb", "libxcb1", "libxcb"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb", "libX11-xcb1", "libx11"),
    "libX11.so.6": ("libx11-6", "libX11", "libX11-6", "libx11"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11", "libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon", "libxkbcommon0", "libxkbcommon"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl", "libEGL1", "libglvnd"),
    "libGL.so.1": ("libgl1", "libglvnd-glx", "libGL1", "libglvnd"),
    "libGLX.so.0": ("libglx0", "libglvnd-glx", "libGLX0", "libglvnd"),
    "libGLdispatch.so.0": ("libglvnd0", "libglvnd", "libGLdispatch0", "libglvnd"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl", "libOpenGL0", "libglvnd"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig", "libfontconfig1", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype", "libfreetype6", "freetype2"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs", "libdbus-1-3", "dbus"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2", "libglib-2_0-0", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2", "libgthread-2_0-0", "glib2"),
    "libwayland-client.so.0": ("libwayland-client0", "libwayland-client", "libwayland-client0", "wayland"),
    "libwayland-cursor.so.0": ("libwayland-cursor0", "libwayland-cursor", "libwayland-cursor0", "wayland"),
    "libwayland-egl.so.1": ("libwayland-egl1", "libwayland-egl", "libwayland-egl1", "wayland"),
}

#: The libraries the README's Quick start and packaging/install-linux.sh install: what
#: the xcb plugin needs beyond a base system (the first three are the usual culprits).
DESKTOP_LIBRARIES: tuple[str, ...] = (
    "libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-image.so.0",
    "libxcb-render-util.so.0", "libxcb-randr.so.0", "libxcb-shape.so.0", "libxcb-xkb.so.1",
    "libxkbcommon-x11.so.0", "libX11-xcb.so.1", "libEGL.so.1", "libGL.so.1", "libfontconfig.so.1",
    "libdbus-1.so.3",
)


def install_commands(libraries: Sequence[str]) -> list[tuple[str, str]]:
    """One ``(family, command)`` per family of :data:`FAMILIES` that installs ``libraries``.

    Packages are listed once each, in the order of the libraries.  A library the table
    does not know is left out of the commands (:func:`missing_message` says how to find
    its package).
    """
    out = []
    for k, (_, who, cmd) in enumerate(FAMILIES):
        pkgs: list[str] = []
        for lib in libraries:
            pkg = PACKAGES.get(lib, (None,) * len(FAMILIES))[k]
            if pkg is not None and pkg not in pkgs:
                pkgs.append(pkg)
        if pkgs:
            out.append((who, f"{cmd} {' '.join(pkgs)}"))
    return out


# -- the library list: DT_NEEDED of an ELF file ------------------------------------------------------
_PT_LOAD, _PT_DYNAMIC = 1, 2
_DT_NULL, _DT_NEEDED, _DT_STRTAB = 0, 1, 5


def read_needed(path: str | os.PathLike) -> list[str]:
    """The ``DT_NEEDED`` entries of an ELF shared object or executable, in file order.

    Reads the program headers (``PT_DYNAMIC`` and the ``PT_LOAD`` segments that map the
    string table's address to a file offset); 32- and 64-bit, either byte order.

    Raises
    ------
    ValueError
        When the file is not ELF or has no dynamic section.
    """
    # mapped, not read: the closure of a Qt plugin holds tens of MB (ICU's data alone 30 MB)
    with open(path, "rb") as f:
        if f.read(4) != b"\x7fELF":
            raise ValueError(f"{path}: not an ELF file")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _needed_of(data, path)


def _needed_of(data, path) -> list[str]:
    is64 = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    if is64:
        phoff, = struct.unpack_from(end + "Q", data, 0x20)
        phentsize, phnum = struct.unpack_from(end + "HH", data, 0x36)
    else:
        phoff, = struct.unpack_from(end + "I", data, 0x1C)
        phentsize, phnum = struct.unpack_from(end + "HH", data, 0x2A)
    loads, dynamic = [], None
    for i in range(phnum):
        at = phoff + i * phentsize
        if is64:
            p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(end + "IIQQQQ", data, at)
        else:
            p_type, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(end + "IIIII", data, at)
        if p_type == _PT_LOAD:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == _PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
    if dynamic is None:
        raise ValueError(f"{path}: no dynamic section (a static executable?)")
    fmt, size = (end + "qQ", 16) if is64 else (end + "iI", 8)
    needed_offsets, strtab = [], None
    off, stop = dynamic[0], dynamic[0] + dynamic[1]
    while off + size <= stop:
        tag, val = struct.unpack_from(fmt, data, off)
        off += size
        if tag == _DT_NULL:
            break
        if tag == _DT_NEEDED:
            needed_offsets.append(val)
        elif tag == _DT_STRTAB:
            strtab = val
    if strtab is None:
        return []
    # DT_STRTAB holds an address: the PT_LOAD segment that maps it gives the file offset
    for vaddr, offset, filesz in loads:
        if vaddr <= strtab < vaddr + filesz:
            base = strtab - vaddr + offset
            break
    else:
        base = strtab
    return [data[base + o:data.find(b"\0", base + o)].decode("utf-8", "replace") for o in needed_offsets]


# -- the loader's answer -----------------------------------------------------------------------------
_LDD_LINE = re.compile(r"^\s*(\S+)\s+=>\s+(not found|\S+)")
_LDD_DIRECT = re.compile(r"^\s*(/\S+)\s+\(0x[0-9a-fA-F]+\)")


def parse_ldd(text: str) -> dict[str, str | None]:
    """Library name -> path (None: "not found") from ``ldd``'s output."""
    out: dict[str, str | None] = {}
    for line in text.splitlines():
        m = _LDD_LINE.match(line)
        if m:
            name, where = m.groups()
            # a library found twice keeps its first answer; "not found" never overrides a path
            if out.get(name) is None:
                out[name] = None if where == "not found" else where
            continue
        m = _LDD_DIRECT.match(line)  # the dynamic loader itself: "/lib64/ld-linux-x86-64.so.2 (0x...)"
        if m:
            out.setdefault(os.path.basename(m.group(1)), m.group(1))
    return out


def ldd_resolution(path: str | os.PathLike, run: Callable[..., subprocess.CompletedProcess] = subprocess.run
                   ) -> dict[str, str | None] | None:
    """Ask the system's loader where each library of ``path``'s closure resolves.

    Runs ``ldd`` with this process's environment (so ``LD_LIBRARY_PATH``, which the frozen
    build sets, counts as it will for Qt).  None when ``ldd`` is missing or fails: the
    preflight then cannot tell, and lets Qt start.
    """
    ldd = shutil.which("ldd")
    if ldd is None:
        return None
    try:
        proc = run([ldd, os.fspath(path)], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0 and "=>" not in proc.stdout:
        return None
    return parse_ldd(proc.stdout)


@dataclass(frozen=True)
class Missing:
    """A library the loader did not find, and the library whose ``DT_NEEDED`` names it."""

    library: str
    needed_by: str


def unresolved(root: str, needed: Callable[[str], Sequence[str]], resolved: Mapping[str, str | None]
               ) -> list[Missing]:
    """The libraries of ``root``'s closure that the loader did not resolve.

    A pure function of the library lists and the loader's answer.

    Parameters
    ----------
    root
        Path of the plugin.
    needed
        The library list of a path (:func:`read_needed`).
    resolved
        The loader's answer: library name -> path, or None when not found
        (:func:`ldd_resolution`).  A name the answer does not mention counts as missing:
        the loader would have listed it had it found it.

    Returns
    -------
    list of Missing
        Breadth first from ``root``, each missing name once (with the first library seen
        needing it).
    """
    out: list[Missing] = []
    seen_missing: set[str] = set()
    seen_paths = {root}
    queue = [root]
    while queue:
        path = queue.pop(0)
        try:
            names = needed(path)
        except (OSError, ValueError):
            continue  # an unreadable library: the loader's answer alone cannot go further
        for name in names:
            where = resolved.get(name)
            if where is None:
                if name not in seen_missing:
                    seen_missing.add(name)
                    out.append(Missing(name, os.path.basename(path)))
            elif where not in seen_paths:
                seen_paths.add(where)
                queue.append(where)
    return out


# -- which platform Qt will pick, and whether it can --------------------------------------------------
def requested_platforms(environ: Mapping[str, str]) -> tuple[list[str], bool]:
    """The platform plugins Qt will try, in order, and whether ``QT_QPA_PLATFORM`` chose them.

    ``QT_QPA_PLATFORM`` may list several (``"wayland;xcb"``) and carry arguments
    (``"xcb:dpi=96"``).  Unset, Qt 6 tries ``wayland`` first in a Wayland session
    (``WAYLAND_DISPLAY`` or ``XDG_SESSION_TYPE=wayland``), then ``xcb``.
    """
    raw = environ.get("QT_QPA_PLATFORM", "").strip()
    if raw:
        names = [p.split(":", 1)[0].strip() for p in raw.split(";")]
        return [n for n in names if n], True
    wayland = bool(environ.get("WAYLAND_DISPLAY")) or environ.get("XDG_SESSION_TYPE", "").lower() == "wayland"
    return (["wayland", "xcb"] if wayland else ["xcb"]), False


def has_display(platform: str, environ: Mapping[str, str], exists: Callable[[str], bool] = os.path.exists
                ) -> bool | None:
    """Whether the session has the display ``platform`` connects to (None: it needs none)."""
    if platform == "xcb":
        return bool(environ.get("DISPLAY"))
    if platform.startswith("wayland"):
        if environ.get("WAYLAND_DISPLAY"):
            return True
        runtime = environ.get("XDG_RUNTIME_DIR")  # libwayland's default socket is wayland-0
        return bool(runtime) and exists(os.path.join(runtime, "wayland-0"))
    return None


def pyside_dir() -> Path | None:
    """PySide6's folder, found without importing it (None when it is not installed)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("PySide6")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return Path(list(spec.submodule_search_locations)[0])
    meipass = getattr(sys, "_MEIPASS", None)  # the frozen build's folder
    if meipass and (Path(meipass) / "PySide6").is_dir():
        return Path(meipass) / "PySide6"
    return None


def plugin_dirs(environ: Mapping[str, str], pyside: Path | None) -> list[Path]:
    """Where Qt looks for platform plugins, in its order."""
    dirs = []
    if environ.get("QT_QPA_PLATFORM_PLUGIN_PATH"):
        dirs.append(Path(environ["QT_QPA_PLATFORM_PLUGIN_PATH"]))
    for p in environ.get("QT_PLUGIN_PATH", "").split(os.pathsep):
        if p:
            dirs.append(Path(p) / "platforms")
    if pyside is not None:
        dirs += [pyside / "Qt" / "plugins" / "platforms", pyside / "plugins" / "platforms"]
    return dirs


def find_plugin(platform: str, dirs: Sequence[Path]) -> Path | None:
    """The plugin file of ``platform`` (``libq<name>.so``; every ``wayland-*`` variant is in
    ``libqwayland.so`` in Qt 6)."""
    names = [f"libq{platform}.so"] + (["libqwayland.so"] if platform.startswith("wayland-") else [])
    for d in dirs:
        for n in names:
            if (d / n).is_file():
                return d / n
    return None


@dataclass
class PlatformCheck:
    """What the preflight found for one platform plugin.

    Attributes
    ----------
    name
        The platform (``xcb``, ``wayland``, ``offscreen`` ...).
    plugin
        Its plugin file; None when not found (the preflight then cannot tell).
    missing
        The libraries the loader did not resolve; None when the loader could not be asked.
    display
        Whether the session has its display; None for platforms that need none.
    """

    name: str
    plugin: Path | None = None
    missing: list[Missing] | None = None
    display: bool | None = None

    @property
    def libraries_ok(self) -> bool:
        """No library known to be missing (an unknown answer never blocks)."""
        return self.plugin is None or self.missing is None or not self.missing

    @property
    def usable(self) -> bool:
        return self.libraries_ok and self.display is not False


def check_platform(name: str, environ: Mapping[str, str], dirs: Sequence[Path],
                   resolve: Callable[[Path], Mapping[str, str | None] | None] = ldd_resolution,
                   needed: Callable[[str], Sequence[str]] = read_needed) -> PlatformCheck:
    """Find ``name``'s plugin and check its libraries with the loader."""
    check = PlatformCheck(name, display=has_display(name, environ))
    check.plugin = find_plugin(name, dirs)
    if check.plugin is not None:
        answer = resolve(check.plugin)
        if answer is not None:
            check.missing = unresolved(str(check.plugin), needed, answer)
    return check


@dataclass
class Verdict:
    """The preflight's conclusion: ``"ok"``, ``"missing"`` or ``"no-display"``."""

    status: str
    checks: list[PlatformCheck] = field(default_factory=list)
    explicit: bool = False

    @property
    def exit_code(self) -> int:
        return {"ok": 0, "missing": EXIT_MISSING_LIBRARIES, "no-display": EXIT_NO_DISPLAY}[self.status]


def decide(checks: Sequence[PlatformCheck], explicit: bool = False) -> Verdict:
    """Qt tries the platforms in order and uses the first that loads and connects.

    ``ok`` when one is usable (or the preflight cannot tell); ``no-display`` when none
    has its display; else ``missing`` (the platforms with a display lack libraries).
    """
    checks = list(checks)
    if not checks or any(c.usable for c in checks):
        return Verdict("ok", checks, explicit)
    if all(c.display is False for c in checks):
        return Verdict("no-display", checks, explicit)
    return Verdict("missing", checks, explicit)


# -- the messages ------------------------------------------------------------------------------------
def _missing_of(checks: Sequence[PlatformCheck]) -> list[Missing]:
    seen, out = set(), []
    for c in checks:
        for m in c.missing or []:
            if m.library not in seen:
                seen.add(m.library)
                out.append(m)
    return out


def missing_message(checks: Sequence[PlatformCheck], program: str = "ddr-explorer", *, would: bool = False) -> str:
    """Which libraries are missing for which plugin, and the install command per family.

    ``would``: the text of a check made ahead (``--check-system``, the self-test) rather
    than at the start itself ("would not start" instead of "cannot start").
    """
    failing = [c for c in checks if c.missing and c.display is not False]
    missing = _missing_of(failing)
    names = " or ".join(f"'{c.name}'" for c in failing)
    width = max(len(m.library) for m in missing)
    lines = [f"{program} {'would not' if would else 'cannot'} start: Qt's platform plugin {names} needs system "
             f"librar{'y' if len(missing) == 1 else 'ies'} that {'is' if len(missing) == 1 else 'are'} not installed:"]
    lines += [f"  {m.library:<{width}}  (needed by {m.needed_by})" for m in missing]
    lines.append("pip cannot install system libraries; install them with the system's package manager:")
    cmds = install_commands([m.library for m in missing])
    w = max((len(who) for who, _ in cmds), default=0) + 1
    lines += [f"  {who + ':':<{w}} {cmd}" for who, cmd in cmds]
    unknown = [m.library for m in missing if m.library not in PACKAGES]
    for lib in unknown:
        lines.append(f"  {lib}: find its package with  apt-file search {lib}  |  dnf provides '*/{lib}'  |  "
                     f"zypper search --provides {lib}  |  pacman -F {lib}")
    again = "" if would else " again"
    lines.append(f"then start {program}{again}.  The command line `ddr` needs none of these.")
    plugins = ", ".join(str(c.plugin) for c in failing if c.plugin is not None)
    lines.append(f"(Checked {plugins} with ldd; {SKIP_ENV}=1 skips this check.)")
    return "\n".join(lines)


def no_display_message(checks: Sequence[PlatformCheck], explicit: bool, program: str = "ddr-explorer") -> str:
    """The message for a session without a display."""
    if explicit:
        want = " and ".join(f"'{c.name}'" for c in checks)
        why = (f"QT_QPA_PLATFORM asks for {want}, but this session has no display for it "
               "(DISPLAY / WAYLAND_DISPLAY are not set).")
    else:
        why = "this session has no display (neither DISPLAY nor WAYLAND_DISPLAY is set)."
    return "\n".join([
        f"{program} needs a graphical display, and {why}",
        "  - over ssh: connect with `ssh -X` (X11 forwarding), or start the app on the machine's own desktop;",
        "  - without a display, the command line `ddr` does the same work headless: "
        "ddr inspect, ddr fit, ddr dstudy, ddr report ...;",
        f"  - to check this installation without a display: QT_QPA_PLATFORM=offscreen {program} --self-test",
    ])


# -- entry points --------------------------------------------------------------------------------------
def run_preflight(environ: Mapping[str, str] | None = None, *, platform: str | None = None,
                  pyside: Path | None = None,
                  resolve: Callable[[Path], Mapping[str, str | None] | None] = ldd_resolution) -> Verdict:
    """Check the platforms Qt will try under ``environ`` (default: this process's)."""
    environ = os.environ if environ is None else environ
    if (platform or sys.platform) != "linux" or environ.get(SKIP_ENV, "") not in ("", "0"):
        return Verdict("ok")
    names, explicit = requested_platforms(environ)
    dirs = plugin_dirs(environ, pyside if pyside is not None else pyside_dir())
    return decide([check_platform(n, environ, dirs, resolve) for n in names], explicit)


def message(verdict: Verdict, program: str = "ddr-explorer") -> str:
    """The text for a verdict that stops the start ("" for ``ok``)."""
    if verdict.status == "missing":
        return missing_message(verdict.checks, program)
    if verdict.status == "no-display":
        return no_display_message(verdict.checks, verdict.explicit, program)
    return ""


def ensure_startable(stream=None) -> int:
    """Run the preflight for this process; print the message and return the exit code (0: go on).

    Called by ``ddr-explorer`` before it imports any Qt module.
    """
    verdict = run_preflight()
    if verdict.status != "ok":
        print(message(verdict), file=stream or sys.stderr, flush=True)
    return verdict.exit_code


def desktop_checks(environ: Mapping[str, str], *, pyside: Path | None = None,
                   resolve: Callable[[Path], Mapping[str, str | None] | None] = ldd_resolution
                   ) -> list[PlatformCheck]:
    """The platforms a desktop start would try under ``environ``, display or not.

    ``QT_QPA_PLATFORM`` counts when it names a desktop platform (xcb, wayland); otherwise
    (unset, or ``offscreen`` as the self-test sets) the session's default: ``wayland`` and
    ``xcb`` in a Wayland session, else ``xcb``.
    """
    names, explicit = requested_platforms(environ)
    if not explicit or not any(n == "xcb" or n.startswith("wayland") for n in names):
        names, _ = requested_platforms({k: v for k, v in environ.items() if k != "QT_QPA_PLATFORM"})
    dirs = plugin_dirs(environ, pyside if pyside is not None else pyside_dir())
    return [check_platform(n, environ, dirs, resolve) for n in names]


def system_report(environ: Mapping[str, str], *, platform: str | None = None, pyside: Path | None = None,
                  resolve: Callable[[Path], Mapping[str, str | None] | None] = ldd_resolution
                  ) -> tuple[bool, str, str]:
    """The self-test's ``system`` check: ``(passed, one-line detail, message on failure)``.

    ``environ`` is the environment the user started the self-test with (before it sets
    ``QT_QPA_PLATFORM=offscreen``).  The offscreen plugin the self-test runs on must load;
    so must the desktop plugin when the session has a display for it (the app would
    abort there).  Without a display the desktop plugin's missing libraries are reported
    in the detail, not as a failure: a headless build machine need not have them.
    """
    if (platform or sys.platform) != "linux":
        return True, f"{platform or sys.platform}: Qt brings its own platform plugin, nothing to check", ""
    if environ.get(SKIP_ENV, "") not in ("", "0"):
        return True, f"skipped ({SKIP_ENV} is set)", ""
    pyside = pyside if pyside is not None else pyside_dir()
    dirs = plugin_dirs(environ, pyside)
    off = check_platform("offscreen", environ, dirs, resolve)
    if not off.libraries_ok:
        return False, "the offscreen platform plugin lacks libraries", missing_message([off], "the self-test")
    desk = desktop_checks(environ, pyside=pyside, resolve=resolve)
    verdict = decide(desk)
    names = "/".join(c.name for c in desk)
    if verdict.status == "missing":
        return False, f"the desktop platform plugin ({names}) lacks libraries", missing_message(desk, would=True)
    # a plugin or loader not found is no evidence either way: say so, never "loads"
    unknown = [c.name for c in [off, *desk] if c.plugin is None or c.missing is None]
    note = f"could not check {', '.join(unknown)} (platform plugin or ldd not found)" if unknown else ""
    parts = [] if "offscreen" in unknown else ["offscreen plugin loads"]
    if verdict.status == "no-display":
        missing = _missing_of(desk)
        if missing:
            cmds = dict(install_commands([m.library for m in missing]))
            hint = cmds.get(FAMILIES[0][1], "")
            parts.append(f"no display in this session, and the desktop plugin ({names}) lacks "
                         + ", ".join(m.library for m in missing) + (f" ({hint})" if hint else ""))
        elif not any(c.name in unknown for c in desk):
            parts.append(f"no display in this session; the desktop plugin ({names}) would load")
        else:
            parts.append("no display in this session")
    elif not unknown:
        parts = [f"offscreen and desktop ({names}) platform plugins load: every library resolves"]
    return True, "; ".join(parts + ([note] if note else [])), ""


def check_system(environ: Mapping[str, str] | None = None, stream=None, *, platform: str | None = None,
                 pyside: Path | None = None,
                 resolve: Callable[[Path], Mapping[str, str | None] | None] = ldd_resolution) -> int:
    """``ddr-explorer --check-system``: are the desktop plugin's system libraries installed?

    For installers (packaging/install-linux.sh): the display does not matter, the
    libraries do.  Prints one line when they resolve (exit 0), the message otherwise
    (exit :data:`EXIT_MISSING_LIBRARIES`).
    """
    environ = os.environ if environ is None else environ
    stream = stream or sys.stdout
    if (platform or sys.platform) != "linux":
        print("not Linux: Qt brings its own platform plugin; nothing to check", file=stream)
        return 0
    checks = desktop_checks(environ, pyside=pyside, resolve=resolve)
    for c in checks:
        c.display = None  # an installer may run without a display: only the libraries count here
    verdict = decide(checks)
    if verdict.status == "ok":
        told = [c for c in checks if c.plugin is not None and c.missing is not None]
        if told:
            print("system libraries for the desktop app: all present ("
                  + ", ".join(f"{c.name}: {c.plugin.name}" for c in told) + ")", file=stream)
        else:
            print("system libraries for the desktop app: could not check (platform plugin or ldd not found)",
                  file=stream)
        return 0
    print(missing_message(checks, would=True), file=stream, flush=True)
    return EXIT_MISSING_LIBRARIES
