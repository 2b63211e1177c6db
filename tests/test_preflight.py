"""The Linux start-up preflight (gui/preflight.py): library lists, the loader's answer, the verdict, the text.

The check is a function of the library lists and the loader's answer, so most tests hand it
fakes: a plugin whose list names a library the "loader" did not find.  The tests at the end
run the real loader (``ldd``) on a copy of a real ELF file with one ``DT_NEEDED`` entry
renamed to a library no system has, through the same entry points the app uses.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ddr_explorer.gui import preflight as pf
from ddr_explorer.gui.preflight import Missing, PlatformCheck

REPO = Path(__file__).resolve().parents[1]


# -- the pure walk: library lists x the loader's answer --------------------------------------------
GRAPH = {
    "/qt/plugins/platforms/libqxcb.so": ["libQt6XcbQpa.so.6", "libQt6Gui.so.6", "libc.so.6"],
    "/qt/lib/libQt6XcbQpa.so.6": ["libxcb-icccm.so.4", "libxcb-cursor.so.0", "libQt6Gui.so.6", "libc.so.6"],
    "/qt/lib/libQt6Gui.so.6": ["libQt6XcbQpa.so.6", "libEGL.so.1", "libc.so.6"],  # a cycle back to XcbQpa
    "/lib/libEGL.so.1": ["libGLdispatch.so.0", "libc.so.6"],
    "/lib/libc.so.6": [],
}
ANSWER = {"libQt6XcbQpa.so.6": "/qt/lib/libQt6XcbQpa.so.6", "libQt6Gui.so.6": "/qt/lib/libQt6Gui.so.6",
          "libc.so.6": "/lib/libc.so.6", "libEGL.so.1": "/lib/libEGL.so.1",
          "libxcb-icccm.so.4": None,  # the loader said "not found"
          "libGLdispatch.so.0": None}
# libxcb-cursor.so.0 is absent from the answer altogether: the loader would have listed it had it found it


def test_unresolved_names_each_missing_library_once_with_who_needs_it():
    got = pf.unresolved("/qt/plugins/platforms/libqxcb.so", GRAPH.__getitem__, ANSWER)
    assert got == [Missing("libxcb-icccm.so.4", "libQt6XcbQpa.so.6"),
                   Missing("libxcb-cursor.so.0", "libQt6XcbQpa.so.6"),
                   Missing("libGLdispatch.so.0", "libEGL.so.1")]


def test_unresolved_is_empty_when_the_loader_found_everything():
    answer = {k: (v or f"/lib/{k}") for k, v in ANSWER.items()} | {"libxcb-cursor.so.0": "/lib/libxcb-cursor.so.0"}
    graph = dict(GRAPH) | {f"/lib/{k}": [] for k in ("libxcb-icccm.so.4", "libGLdispatch.so.0",
                                                       "libxcb-cursor.so.0")}
    assert pf.unresolved("/qt/plugins/platforms/libqxcb.so", graph.__getitem__, answer) == []


def test_unresolved_goes_on_past_an_unreadable_library():
    def needed(path):
        if path == "/lib/libEGL.so.1":
            raise ValueError("not an ELF file")
        return GRAPH[path]

    got = pf.unresolved("/qt/plugins/platforms/libqxcb.so", needed, ANSWER)
    assert [m.library for m in got] == ["libxcb-icccm.so.4", "libxcb-cursor.so.0"]


LDD_OUTPUT = """\
\tlinux-vdso.so.1 (0x00007ffc3a1f5000)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/plugins/platforms/./../../lib/libQt6XcbQpa.so.6 (0x00007f0061491000)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb-icccm.so.4 => not found
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f005f800000)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f0061561000)
"""


def test_parse_ldd_reads_paths_not_found_and_the_loader_itself():
    assert pf.parse_ldd(LDD_OUTPUT) == {
        "libQt6XcbQpa.so.6": "/venv/PySide6/Qt/plugins/platforms/./../../lib/libQt6XcbQpa.so.6",
        "libxcb-icccm.so.4": None,
        "libxcb-keysyms.so.1": None,
        "libc.so.6": "/lib/x86_64-linux-gnu/libc.so.6",
        "ld-linux-x86-64.so.2": "/lib64/ld-linux-x86-64.so.2",
    }


def test_ldd_resolution_is_none_when_the_loader_cannot_be_asked(monkeypatch, tmp_path):
    def broken(*a, **k):
        raise OSError("no such file")

    monkeypatch.setattr(pf.shutil, "which", lambda name: "/usr/bin/ldd")
    assert pf.ldd_resolution(tmp_path / "libqxcb.so", run=broken) is None
    monkeypatch.setattr(pf.shutil, "which", lambda name: None)
    assert pf.ldd_resolution(tmp_path / "libqxcb.so") is None


# -- which platform, which display ------------------------------------------------------------------
@pytest.mark.parametrize("env, expected", [
    ({}, (["xcb"], False)),
    ({"DISPLAY": ":0"}, (["xcb"], False)),
    ({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, (["wayland", "xcb"], False)),
    ({"XDG_SESSION_TYPE": "Wayland"}, (["wayland", "xcb"], False)),
    ({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"}, (["offscreen"], True)),
    ({"QT_QPA_PLATFORM": "xcb:dpi=96;wayland"}, (["xcb", "wayland"], True)),
    ({"QT_QPA_PLATFORM": "  "}, (["xcb"], False)),
])
def test_requested_platforms_follow_qt(env, expected):
    assert pf.requested_platforms(env) == expected


def test_has_display():
    assert pf.has_display("xcb", {"DISPLAY": ":1"}) is True
    assert pf.has_display("xcb", {"WAYLAND_DISPLAY": "wayland-0"}) is False
    assert pf.has_display("wayland", {"WAYLAND_DISPLAY": "wayland-1"}) is True
    # libwayland's default socket
    assert pf.has_display("wayland", {"XDG_RUNTIME_DIR": "/run/user/1000"},
                          exists=lambda p: p == "/run/user/1000/wayland-0") is True
    assert pf.has_display("wayland", {"XDG_RUNTIME_DIR": "/run/user/1000"}, exists=lambda p: False) is False
    assert pf.has_display("offscreen", {}) is None


# -- the verdict -------------------------------------------------------------------------------------
PLUGIN = Path("/qt/plugins/platforms/libqxcb.so")
ICCCM = [Missing("libxcb-icccm.so.4", "libQt6XcbQpa.so.6")]


@pytest.mark.parametrize("checks, status", [
    ([PlatformCheck("xcb", PLUGIN, ICCCM, True)], "missing"),
    ([PlatformCheck("xcb", PLUGIN, [], True)], "ok"),
    ([PlatformCheck("xcb", PLUGIN, [], False)], "no-display"),
    ([PlatformCheck("xcb", PLUGIN, ICCCM, False)], "no-display"),  # no display is the first thing to fix
    ([PlatformCheck("xcb", None, None, True)], "ok"),  # plugin not found: cannot tell, Qt speaks
    ([PlatformCheck("xcb", PLUGIN, None, True)], "ok"),  # the loader could not be asked
    # Wayland session: the wayland plugin lacks a library, Qt falls back to xcb (XWayland)
    ([PlatformCheck("wayland", PLUGIN, [Missing("libwayland-cursor.so.0", "libqwayland.so")], True),
      PlatformCheck("xcb", PLUGIN, [], True)], "ok"),
    # ... unless there is no XWayland
    ([PlatformCheck("wayland", PLUGIN, [Missing("libwayland-cursor.so.0", "libqwayland.so")], True),
      PlatformCheck("xcb", PLUGIN, [], False)], "missing"),
    ([PlatformCheck("offscreen", PLUGIN, [Missing("libfontconfig.so.1", "libQt6Gui.so.6")], None)], "missing"),
])
def test_decide(checks, status):
    v = pf.decide(checks)
    assert v.status == status
    assert v.exit_code == {"ok": 0, "missing": 3, "no-display": 4}[status]


# -- the text ----------------------------------------------------------------------------------------
def test_missing_message_names_the_libraries_and_the_command_of_every_family():
    checks = [PlatformCheck("xcb", PLUGIN, [Missing("libxcb-icccm.so.4", "libQt6XcbQpa.so.6"),
                                            Missing("libxcb-keysyms.so.1", "libQt6XcbQpa.so.6"),
                                            Missing("libxcb-cursor.so.0", "libqxcb.so")], True)]
    text = pf.missing_message(checks)
    lines = text.splitlines()
    assert lines[0] == ("ddr-explorer cannot start: Qt's platform plugin 'xcb' needs system libraries that are "
                        "not installed:")
    assert lines[1:4] == ["  libxcb-icccm.so.4    (needed by libQt6XcbQpa.so.6)",
                          "  libxcb-keysyms.so.1  (needed by libQt6XcbQpa.so.6)",
                          "  libxcb-cursor.so.0   (needed by libqxcb.so)"]
    assert lines[5:9] == [
        "  Debian, Ubuntu: sudo apt install libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0",
        "  Fedora, RHEL:   sudo dnf install xcb-util-wm xcb-util-keysyms xcb-util-cursor",
        "  openSUSE:       sudo zypper install libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0",
        "  Arch:           sudo pacman -S --needed xcb-util-wm xcb-util-keysyms xcb-util-cursor",
    ]
    assert "then start ddr-explorer again" in text
    assert str(PLUGIN) in text and "DDR_SKIP_PREFLIGHT=1" in text


def test_missing_message_for_one_library_and_one_no_table_knows():
    checks = [PlatformCheck("xcb", PLUGIN, [Missing("libxcb-icccm.so.4", "libqxcb.so")], True)]
    assert "needs system library that is not installed:" in pf.missing_message(checks).splitlines()[0]
    checks = [PlatformCheck("xcb", PLUGIN, [Missing("libxcb-icccm.so.4", "libqxcb.so"),
                                            Missing("libfoo-bar.so.7", "libQt6XcbQpa.so.6")], True)]
    text = pf.missing_message(checks)
    assert "  Debian, Ubuntu: sudo apt install libxcb-icccm4\n" in text  # the unknown library is in no command
    assert ("  libfoo-bar.so.7: find its package with  apt-file search libfoo-bar.so.7  |  "
            "dnf provides '*/libfoo-bar.so.7'  |  zypper search --provides libfoo-bar.so.7  |  "
            "pacman -F libfoo-bar.so.7") in text


def test_no_display_message_points_to_the_headless_ways():
    text = pf.no_display_message([PlatformCheck("xcb", PLUGIN, [], False)], explicit=False)
    assert text.splitlines()[0] == ("ddr-explorer needs a graphical display, and this session has no display "
                                    "(neither DISPLAY nor WAYLAND_DISPLAY is set).")
    assert "`ddr` does the same work headless" in text
    assert "QT_QPA_PLATFORM=offscreen ddr-explorer --self-test" in text
    text = pf.no_display_message([PlatformCheck("xcb", PLUGIN, [], False)], explicit=True)
    assert "QT_QPA_PLATFORM asks for 'xcb', but this session has no display for it" in text


def test_install_commands_of_the_desktop_libraries():
    cmds = dict(pf.install_commands(pf.DESKTOP_LIBRARIES))
    assert cmds["Debian, Ubuntu"].startswith("sudo apt install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 ")
    # packages once each: the xcb extension libraries are one package outside Debian/openSUSE
    assert cmds["Arch"].split().count("libxcb") == 1 and cmds["Fedora, RHEL"].split().count("libxcb") == 1
    assert len(cmds) == 4 and len(pf.FAMILIES) == 4


def test_readme_lists_the_same_packages():
    """README's Quick start and the guide's installation page show one install line per family: the ones
    the code prints."""
    readme = (REPO / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    guide = (REPO / "docs" / "guide" / "install.md").read_text()
    for who, cmd in pf.install_commands(pf.DESKTOP_LIBRARIES):
        assert f"{cmd}" in quick, (who, cmd)
        assert f"{cmd}" in guide, (who, cmd)


def test_not_linux_is_a_no_op(tmp_path):
    assert pf.run_preflight({}, platform="darwin").status == "ok"
    passed, detail, msg = pf.system_report({}, platform="win32")
    assert passed and "nothing to check" in detail and msg == ""


def test_skip_variable(tmp_path):
    assert pf.run_preflight({pf.SKIP_ENV: "1"}, platform="linux").status == "ok"


# -- the real loader on a renamed copy ---------------------------------------------------------------
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("ldd") is None,
                                reason="needs Linux and ldd")


def _renamed_copy(dest: Path) -> tuple[str, str]:
    """Copy this Python's executable to ``dest`` with its first DT_NEEDED entry renamed to a
    library that exists nowhere; return (old name, new name)."""
    exe = Path(sys.executable).resolve()
    names = [n for n in pf.read_needed(exe) if not n.startswith("ld-linux")]
    if not names:
        pytest.skip(f"{exe} needs no shared library")
    old = names[0]
    new = "ddq" + old[3:] if old.startswith("lib") else "q" + old[1:]  # same length: the string table keeps its layout
    data = exe.read_bytes()
    patched = data.replace(b"\0" + old.encode() + b"\0", b"\0" + new.encode() + b"\0")
    assert patched != data
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(patched)
    return old, new


@linux_only
def test_read_needed_agrees_with_the_loader():
    exe = Path(sys.executable).resolve()
    needed = pf.read_needed(exe)
    answer = pf.ldd_resolution(exe)
    assert needed and answer is not None
    assert set(needed) <= set(answer), (needed, answer)
    assert pf.unresolved(str(exe), pf.read_needed, answer) == []


def test_read_needed_rejects_what_is_not_elf(tmp_path):
    (tmp_path / "x.so").write_bytes(b"#!/bin/sh\n")
    with pytest.raises(ValueError, match="not an ELF file"):
        pf.read_needed(tmp_path / "x.so")


@linux_only
def test_a_plugin_with_a_library_no_system_has(tmp_path):
    plugins = tmp_path / "platforms"
    old, new = _renamed_copy(plugins / "libqxcb.so")
    env = {"DISPLAY": ":99", "QT_QPA_PLATFORM_PLUGIN_PATH": str(plugins)}
    verdict = pf.run_preflight(env, pyside=tmp_path / "no-pyside")
    assert verdict.status == "missing" and verdict.exit_code == pf.EXIT_MISSING_LIBRARIES
    assert verdict.checks[0].missing == [Missing(new, "libqxcb.so")]
    text = pf.message(verdict)
    assert f"  {new}  (needed by libqxcb.so)" in text
    # the same plugin without a display: the display is what the message is about
    assert pf.run_preflight({"QT_QPA_PLATFORM_PLUGIN_PATH": str(plugins)},
                            pyside=tmp_path / "no-pyside").status == "no-display"
    # the self-test's check: fails with a display, reports without one
    passed, detail, msg = pf.system_report(env, pyside=tmp_path / "no-pyside")
    assert not passed and new in msg
    # (the offscreen plugin is not in this folder: not found, so it cannot block)
    passed, detail, msg = pf.system_report({"QT_QPA_PLATFORM_PLUGIN_PATH": str(plugins)},
                                           pyside=tmp_path / "no-pyside")
    assert passed and f"lacks {new}" in detail


def _app(args, env, tmp_path):
    code = ("import sys\nfrom ddr_explorer.gui.app import main\nrc = main(sys.argv[1:])\n"
            "print('qt loaded:', any(m.startswith('PySide6.Qt') for m in sys.modules))\nsys.exit(rc)")
    full = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM",
                                                             "XDG_SESSION_TYPE", "XDG_RUNTIME_DIR")}
    full.update(env)
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=full,
                          cwd=tmp_path, timeout=120)


@linux_only
def test_the_app_exits_with_the_message_before_loading_qt(tmp_path):
    plugins = tmp_path / "platforms"
    _, new = _renamed_copy(plugins / "libqxcb.so")
    env = {"QT_QPA_PLATFORM_PLUGIN_PATH": str(plugins), "HOME": str(tmp_path)}
    proc = _app([], env | {"DISPLAY": ":99"}, tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert "cannot start: Qt's platform plugin 'xcb' needs system library" in proc.stderr
    assert new in proc.stderr
    assert "qt loaded: False" in proc.stdout
    proc = _app([], env, tmp_path)  # no display at all
    assert proc.returncode == 4, proc.stderr
    assert "needs a graphical display" in proc.stderr and "qt loaded: False" in proc.stdout
    proc = _app(["--check-system"], env, tmp_path)  # what install-linux.sh runs: libraries only
    assert proc.returncode == 3 and new in proc.stdout
    assert proc.stdout.startswith("ddr-explorer would not start: ")


def test_system_report_when_the_desktop_plugin_is_not_found(tmp_path):
    # no PySide6 folder and no plugin path: nothing to check, and the detail says so
    passed, detail, msg = pf.system_report({}, platform="linux", pyside=tmp_path / "none",
                                           resolve=lambda p: {})
    assert passed and msg == ""
    assert detail == "no display in this session; could not check offscreen, xcb (platform plugin or ldd not found)"
