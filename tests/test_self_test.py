"""``ddr-explorer --self-test``, run from source as a user would run it (a subprocess).

The frozen build (packaging/build.sh) runs the same self-test; CI never builds it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from ddr_explorer.gui.self_test import SelfTestFailure, TB2_SIGMA, pdf_pages  # noqa: E402

#: One check line per step, in this order (gui/self_test.py).
CHECKS = ["system", "qt", "jax", "corpus", "fit", "components", "plausible", "cache", "panels", "sheet"]


def _env(tmp_path: Path) -> dict:
    env = dict(os.environ)
    env["DDR_CACHE_DIR"] = str(tmp_path / "user-cache")  # the self-test must not touch it
    env.pop("QT_QPA_PLATFORM", None)  # the self-test sets offscreen itself
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _run(args: list[str], tmp_path: Path, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ddr_explorer.gui.app", "--self-test", *args],
                          capture_output=True, text=True, timeout=timeout, cwd=tmp_path, env=_env(tmp_path))


# -- the PDF page reader, on documents with known pages ------------------------------------------
@pytest.mark.parametrize("compress", [0, 1])
def test_pdf_pages_follows_the_page_tree(tmp_path, compress):
    from reportlab.pdfgen.canvas import Canvas

    path = tmp_path / "three.pdf"
    c = Canvas(str(path), pageCompression=compress)
    for text in ("first page", "Deployment Decision Reliability", "third page"):
        c.drawString(72, 720, text)
        c.showPage()
    c.save()
    pages = pdf_pages(path.read_bytes())
    assert len(pages) == 3
    assert [b"Deployment Decision Reliability" in p for p in pages] == [False, True, False]
    assert b"first page" in pages[0] and b"third page" in pages[2]


def test_pdf_pages_rejects_what_is_not_a_pdf():
    with pytest.raises(SelfTestFailure, match="not a PDF"):
        pdf_pages(b"<html>no</html>")
    with pytest.raises(SelfTestFailure, match="catalogue"):
        pdf_pages(b"%PDF-1.4\n1 0 obj << >> endobj\n")


# -- the self-test itself --------------------------------------------------------------------------
@pytest.mark.slow
def test_self_test_passes_from_source(tmp_path):
    keep = tmp_path / "kept"
    proc = _run(["--keep", str(keep)], tmp_path, timeout=600)
    out = proc.stdout
    assert proc.returncode == 0, f"stdout:\n{out}\nstderr:\n{proc.stderr}"
    names = re.findall(r"^  ok    (\S+)", out, re.M)
    assert names == CHECKS, out
    assert "FAIL" not in out
    assert "platform 'offscreen'" in out
    assert "7,387 records" in out  # the demo corpus: Terminal-Bench 2.0, one row per binomial cell
    assert "2 chains x (40 warmup + 40 draws)" in out
    # every published sigma is printed, and the printed means are near the published ones
    means = dict(re.findall(r"(\S+) (\d+\.\d\d)(?:,|$)", out.split("posterior mean of sigma:")[1].splitlines()[0]))
    assert set(means) == set(TB2_SIGMA)
    for term, ref in TB2_SIGMA.items():
        assert abs(float(means[term]) - ref) <= 0.25 * ref + 0.15, (term, means[term])
    m = re.search(r"self-test passed: 10 checks in [\d.]+ s \(JAX device: (.+)\)", out)
    assert m and m.group(1).startswith(("cpu", "gpu")), out
    # the sheet it kept is a real PDF, with the page count it printed
    pdf = keep / "ddr-self-test.pdf"
    pypdf = pytest.importorskip("pypdf")
    n = len(pypdf.PdfReader(pdf).pages)
    assert n >= 1
    assert re.search(rf"ok    sheet\s+{n} page\(s\)", out)
    # the user's cache was left alone: the fit went to a temporary folder
    assert not (tmp_path / "user-cache").exists()


def test_self_test_fails_clearly(tmp_path):
    proc = _run(["--no-gui", "--corpus", str(tmp_path / "missing.csv")], tmp_path, timeout=300)
    assert proc.returncode == 1
    assert re.search(r"^  FAIL  corpus\s+corpus .*missing\.csv not found", proc.stdout, re.M), proc.stdout
    assert "self-test FAILED" in proc.stderr
    assert "ok    qt" not in proc.stdout  # --no-gui skipped Qt


def test_self_test_runs_the_start_up_preflight(tmp_path):
    """With a display, a desktop plugin that lacks a library fails the first check ('system')."""
    import shutil

    from ddr_explorer.gui import preflight

    if not sys.platform.startswith("linux") or shutil.which("ldd") is None:
        pytest.skip("needs Linux and ldd")
    # a copy of this Python's executable posing as the xcb plugin, one DT_NEEDED renamed to nothing real
    exe = Path(sys.executable).resolve()
    old = next(n for n in preflight.read_needed(exe) if not n.startswith("ld-linux"))
    new = "ddq" + old[3:] if old.startswith("lib") else "q" + old[1:]
    plugins = tmp_path / "platforms"
    plugins.mkdir()
    (plugins / "libqxcb.so").write_bytes(exe.read_bytes().replace(b"\0" + old.encode() + b"\0",
                                                                  b"\0" + new.encode() + b"\0"))
    env = _env(tmp_path)
    env.update(DISPLAY=":99", QT_QPA_PLATFORM_PLUGIN_PATH=str(plugins))
    env.pop("WAYLAND_DISPLAY", None)
    env.pop("XDG_SESSION_TYPE", None)
    proc = subprocess.run([sys.executable, "-m", "ddr_explorer.gui.app", "--self-test"], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 1
    assert re.search(r"^  FAIL  system\s+the desktop platform plugin \(xcb\) lacks libraries$", proc.stdout, re.M)
    assert "ok    qt" not in proc.stdout  # it stopped before Qt
    assert f"  {new}  (needed by libqxcb.so)" in proc.stderr
    assert "ddr-explorer would not start: Qt's platform plugin 'xcb'" in proc.stderr
