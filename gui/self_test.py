"""``ddr-explorer --self-test``: check that an installation (or a frozen build) works end to end.

The self-test exercises every layer a user touches, with a fit small enough for a
2-core laptop (under a minute, most of it JAX compiling the sampler):

0. Linux: the start-up preflight (:mod:`ddr_explorer.gui.preflight`) checks that the
   offscreen platform plugin's libraries resolve, and the desktop's (xcb/wayland) too; a
   desktop plugin that lacks libraries fails the check when the session has a display
   (the app would not start there) and is reported without failing when it has none
   (a headless build machine); skipped with ``--no-gui``.
1. Qt starts on the ``offscreen`` platform (``QT_QPA_PLATFORM`` is set before Qt
   loads) and the main window is drawn; skipped with ``--no-gui`` (a GPU server
   without PySide6).
2. JAX initialises; its version, default backend and devices are printed.
3. The bundled demo corpus (``resources/demo``, Terminal-Bench 2.0) loads and validates.
4. A tiny Bayesian G-study (seed 000 (Hardy et al. 2026) Eq. 2, the per-benchmark crossed model) runs through
   :func:`ddr_explorer.core.fitting.fit_corpus`, cached in a temporary folder:
   2 chains x (40 warmup + 40 draws).
5. Every variance-component draw is finite and positive, and (demo corpus only) the
   posterior means of sigma are near the published full-length fit of Terminal-Bench 2.0
   (PERF-NOTES: task 3.0, model 1.74, scaffold .37, task:model 1.39, task:scaffold 1.11,
   model:scaffold .46), within a tolerance wide enough for 80 draws but not for a broken
   sampler.
6. The fit reopens from the HDF5 cache with identical draws.
7. With Qt: the main window draws the posterior's panels (pyqtgraph).
8. The DDR sheet is built (:func:`ddr_explorer.core.report.report_inputs_from` and
   :func:`~ddr_explorer.core.report.build_sheet`; the report has no page-1-only mode, so
   the whole sheet is built) and the PDF is checked: it parses, has at least one page, and
   page 1 carries the sheet's title.

It prints one line per check (``ok`` or ``FAIL``) and a summary with the JAX device the
fit ran on, and exits 0 when every check passed, 1 otherwise (with the reason on stderr).
"""

from __future__ import annotations

import argparse
import base64
import os
import platform
import re
import sys
import tempfile
import time
import traceback
import zlib
from pathlib import Path

#: Posterior means of sigma for Terminal-Bench 2.0 (the demo corpus) under the
#: per-benchmark model, from two independent full-length samplers (PERF-NOTES.md).
TB2_SIGMA = {"task": 3.0, "model": 1.74, "scaffold": 0.37, "task:model": 1.39, "task:scaffold": 1.11,
             "model:scaffold": 0.46}

#: |mean - reference| allowed for a posterior mean of sigma in the tiny fit: 25 % of the
#: reference plus 0.15.  80 draws give a Monte Carlo error of a few hundredths; a sampler
#: that ignores the data or mixes up terms misses by far more.
REL_TOL, ABS_TOL = 0.25, 0.15

#: The tiny fit: enough draws to estimate the means, few enough to run in seconds; a fixed length
#: (the default run length, by the gate, would sample on until converged).
TINY = {"chains": 2, "warmup": 40, "draws": 40, "seed": 0, "chunk_size": 20, "stop": "fixed"}


class SelfTestFailure(RuntimeError):
    """A check failed; the message says which and why."""


# -- PDF inspection without third-party readers (the frozen app carries no pypdf) -------------
_OBJ_RE = re.compile(rb"(\d+)\s+0\s+obj\b(.*?)endobj", re.S)


def _pdf_objects(data: bytes) -> dict[int, bytes]:
    return {int(m.group(1)): m.group(2) for m in _OBJ_RE.finditer(data)}


def _decode_stream(obj: bytes) -> bytes:
    """The decoded stream of a PDF object (ASCII85 and Flate filters, as reportlab writes them)."""
    m = re.search(rb"stream\r?\n", obj)
    if m is None:
        return b""
    head = obj[:m.start()]
    length = re.search(rb"/Length\s+(\d+)(?!\s+\d+\s+R)", head)
    if length is not None:  # a direct length: exact, whatever the bytes hold
        raw = obj[m.end():m.end() + int(length.group(1))]
    else:
        end = obj.rfind(b"endstream")
        raw = obj[m.end():end].rstrip(b"\r\n")
    filters = re.findall(rb"/(ASCII85Decode|FlateDecode|A85|Fl)\b", head)
    for f in filters:
        if f in (b"ASCII85Decode", b"A85"):
            body = raw.strip()
            if body.startswith(b"<~"):
                body = body[2:]
            if not body.endswith(b"~>"):
                body += b"~>"
            raw = base64.a85decode(b"<~" + body, adobe=True)
        else:
            raw = zlib.decompressobj().decompress(raw)
    return raw


def pdf_pages(data: bytes) -> list[bytes]:
    """The decoded content of each page of a PDF, in page order.

    Follows the page tree from the document catalogue (``/Root`` -> ``/Pages`` ->
    ``/Kids``), so the order is the reading order, not the file order.  Handles
    uncompressed cross-references and the ASCII85/Flate filters reportlab uses; it is a
    check of our own output, not a general PDF reader.

    Raises
    ------
    SelfTestFailure
        When the bytes are not a PDF or its page tree cannot be followed.
    """
    if not data.startswith(b"%PDF-"):
        raise SelfTestFailure("the sheet is not a PDF (no %PDF- header)")
    objs = _pdf_objects(data)
    root = re.search(rb"/Root\s+(\d+)\s+0\s+R", data)
    if root is None or int(root.group(1)) not in objs:
        raise SelfTestFailure("the PDF has no document catalogue (/Root)")
    pages_ref = re.search(rb"/Pages\s+(\d+)\s+0\s+R", objs[int(root.group(1))])
    if pages_ref is None:
        raise SelfTestFailure("the PDF catalogue names no page tree (/Pages)")

    def leaves(n: int, depth: int = 0) -> list[int]:
        if depth > 32 or n not in objs:
            raise SelfTestFailure(f"the PDF page tree is broken at object {n}")
        body = objs[n]
        if re.search(rb"/Type\s*/Pages\b", body):
            kids = re.search(rb"/Kids\s*\[(.*?)\]", body, re.S)
            refs = [int(k) for k in re.findall(rb"(\d+)\s+0\s+R", kids.group(1))] if kids else []
            return [p for k in refs for p in leaves(k, depth + 1)]
        return [n]

    out = []
    for n in leaves(int(pages_ref.group(1))):
        body = objs[n]
        m = re.search(rb"/Contents\s+(?:(\d+)\s+0\s+R|\[(.*?)\])", body, re.S)
        refs = [] if m is None else ([int(m.group(1))] if m.group(1) else
                                     [int(k) for k in re.findall(rb"(\d+)\s+0\s+R", m.group(2))])
        out.append(b"".join(_decode_stream(objs[r]) for r in refs if r in objs))
    return out


# -- the checks ------------------------------------------------------------------------------------
class _Report:
    def __init__(self, stream=None):
        self.stream = stream or sys.stdout
        self.results: list[tuple[str, bool, str]] = []

    def ok(self, name: str, detail: str) -> None:
        self.results.append((name, True, detail))
        print(f"  ok    {name:<11} {detail}", file=self.stream, flush=True)

    def fail(self, name: str, detail: str) -> None:
        self.results.append((name, False, detail))
        print(f"  FAIL  {name:<11} {detail}", file=self.stream, flush=True)


def _check_qt(rep: _Report):
    """Start Qt offscreen and draw the main window; return (app, window)."""
    try:
        from PySide6 import __version__ as pyside_version
        from PySide6.QtWidgets import QApplication
    except ImportError as exc:
        raise SelfTestFailure(f"PySide6 cannot be imported ({exc}); install the 'gui' extra "
                              "(pip install 'ddr-explorer[gui]') or run the self-test with --no-gui") from None
    from .main_window import MainWindow

    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "ddr-explorer"])
    app.setApplicationName("DDR Explorer")
    window = MainWindow()
    window.resize(1000, 700)
    window.show()
    app.processEvents()
    image = window.grab().toImage()
    if image.isNull() or image.width() < 100:
        raise SelfTestFailure("the main window drew an empty image")
    rep.ok("qt", f"PySide6 {pyside_version}, platform '{app.platformName()}', main window drawn "
                 f"{image.width()}x{image.height()}")
    return app, window


def _check_jax(rep: _Report) -> str:
    from ..core import model as _model  # noqa: F401  (sets XLA_FLAGS for parallel CPU chains before jax loads)
    import jax

    devices = jax.devices()
    kinds: dict[str, int] = {}
    for d in devices:
        kinds[d.device_kind] = kinds.get(d.device_kind, 0) + 1
    desc = ", ".join(f"{n} x {k}" for k, n in kinds.items())
    rep.ok("jax", f"jax {jax.__version__}, backend {jax.default_backend()}, devices: {desc}")
    return jax.default_backend()


def _sigma_summary(post) -> dict[str, float]:
    import numpy as np

    return {t: float(np.mean(s)) for t, s in post.sigma.items()}


def _check_system(rep: _Report, environ) -> None:
    """The start-up preflight (gui/preflight.py) under the environment the user started with."""
    from .preflight import system_report

    passed, detail, message = system_report(environ)
    if not passed:
        raise SelfTestFailure(f"{detail}\n{message}")
    rep.ok("system", detail)


def run_self_test(*, corpus_path: Path | None = None, device: str = "auto", gui: bool = True,
                  keep: Path | None = None, stream=None, environ=None) -> dict:
    """Run the checks; return a summary dict, raise :class:`SelfTestFailure` on the first failure.

    Parameters
    ----------
    corpus_path
        The corpus to fit (default: the bundled demo corpus; the plausibility check of the
        posterior means runs for the demo corpus only).
    device
        ``"auto"``, ``"cpu"`` or ``"gpu"`` (:class:`~ddr_explorer.core.model.SamplerSettings`).
    gui
        Start Qt offscreen and draw the main window and the posterior's panels.
    keep
        A folder to keep the sheet (``ddr-self-test.pdf``) in; by default everything is
        written to a temporary folder that is removed afterwards.
    stream
        Where the check lines go (stdout).
    environ
        The environment the user started the self-test with, before it set
        ``QT_QPA_PLATFORM=offscreen``: with ``gui``, the ``system`` check runs the start-up
        preflight (:mod:`ddr_explorer.gui.preflight`) under it (default: this process's).
    """
    import numpy as np

    rep = _Report(stream)
    t_start = time.perf_counter()
    timings: dict[str, float] = {}
    app = window = None

    def step(name, fn):
        t0 = time.perf_counter()
        try:
            return fn()
        except SelfTestFailure as exc:
            rep.fail(name, str(exc).splitlines()[0])  # the whole text follows on stderr
            raise
        except Exception as exc:  # any other error is a failure of this check, reported with its cause
            rep.fail(name, f"{type(exc).__name__}: {exc}")
            raise SelfTestFailure(f"{name}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}") from exc
        finally:
            timings[name] = time.perf_counter() - t0

    if gui:
        step("system", lambda: _check_system(rep, os.environ if environ is None else environ))
        app, window = step("qt", lambda: _check_qt(rep))
    backend = step("jax", lambda: _check_jax(rep))

    from ..core.corpus.io import load_corpus
    from ..core.files import demo_corpus_path

    is_demo = corpus_path is None
    path = Path(corpus_path) if corpus_path is not None else demo_corpus_path()

    def load():
        if not path.is_file():
            raise SelfTestFailure(f"corpus {path} not found" + (" (the demo corpus is missing from this build: "
                                                               "resources/demo must be bundled)" if is_demo else ""))
        corpus = load_corpus(path)
        if corpus.table.empty:
            raise SelfTestFailure(f"corpus {path} has no records")
        rep.ok("corpus", f"{path.name}: {len(corpus.table):,} records, {corpus.n_levels('benchmark')} benchmark(s), "
                         f"{corpus.n_levels('task')} tasks, {corpus.n_levels('model')} models, "
                         f"{corpus.n_levels('scaffold')} scaffolds")
        return corpus

    corpus = step("corpus", load)

    from ..core.fitting import components_from_posterior, fit_corpus, theta_from_posterior
    from ..core.model import SamplerSettings

    spec_name = "per-benchmark" if corpus.n_levels("benchmark") == 1 else "pooled"
    settings = SamplerSettings(device=device, **TINY)
    with tempfile.TemporaryDirectory(prefix="ddr-self-test-") as tmp:
        cache_dir = Path(tmp) / "cache"
        # the compiled sampler too goes to the temporary folder: the self-test leaves the user's
        # cache folder alone (the self-test is a process of its own, so this changes nothing else)
        os.environ["DDR_JAX_CACHE_DIR"] = str(Path(tmp) / "jax-compiled")

        def fit():
            res = fit_corpus(corpus, spec_name, settings, cache_dir=cache_dir)
            post = res.posterior
            if res.from_cache:
                raise SelfTestFailure("a fresh cache folder returned a cached fit")
            if res.cache_path is None or not Path(res.cache_path).is_file():
                raise SelfTestFailure(f"the fit was not written to the cache ({res.cache_path})")
            t = post.timings
            compile_s = float(t.get("compile", t.get("compile_init", 0.0)))  # "compile" counts from the start
            rep.ok("fit", f"{spec_name}, {settings.chains} chains x ({settings.warmup} warmup + {settings.draws} "
                          f"draws) on {post.device} in {time.perf_counter() - t0:.1f} s "
                          f"(compiling {compile_s:.1f} s)")
            return res

        t0 = time.perf_counter()
        res = step("fit", fit)
        post = res.posterior

        def components():
            n_expected = settings.chains * settings.draws
            bad = []
            for term, s in post.sigma.items():
                s = np.asarray(s, dtype=np.float64)
                if s.size != n_expected:
                    bad.append(f"{term}: {s.size} draws, expected {n_expected}")
                elif not np.all(np.isfinite(s)) or not np.all(s > 0):
                    bad.append(f"{term}: {int(np.sum(~np.isfinite(s) | (s <= 0)))} non-finite or non-positive draws")
            if not np.all(np.isfinite(np.asarray(post.mu))):
                bad.append("mu: non-finite draws")
            if not post.sigma:
                bad.append("no variance components")
            if bad:
                raise SelfTestFailure("; ".join(bad))
            vc = components_from_posterior(post)
            means = _sigma_summary(post)
            rep.ok("components", f"{len(means)} terms x {n_expected} draws, all finite and positive; posterior mean "
                                 "of sigma: " + ", ".join(f"{k} {v:.2f}" for k, v in means.items()))
            return vc, means

        vc, means = step("components", components)

        if is_demo:
            def plausible():
                off = [f"{t}: {means.get(t, float('nan')):.2f} vs {ref:.2f}" for t, ref in TB2_SIGMA.items()
                       if not abs(means.get(t, float("nan")) - ref) <= REL_TOL * ref + ABS_TOL]
                if off:
                    raise SelfTestFailure("posterior means of sigma far from the published Terminal-Bench 2.0 fit "
                                          "(" + "; ".join(off) + ")")
                worst = max(abs(means[t] - r) for t, r in TB2_SIGMA.items())
                rep.ok("plausible", f"all {len(TB2_SIGMA)} sigmas within {int(REL_TOL * 100)} % + {ABS_TOL} of the "
                                    f"published Terminal-Bench 2.0 fit (largest difference {worst:.2f})")

            step("plausible", plausible)

        def cache():
            again = fit_corpus(corpus, spec_name, settings, cache_dir=cache_dir)
            if not again.from_cache:
                raise SelfTestFailure(f"the second fit did not reopen the cache ({again.cache_problem or 'no entry'})")
            for term, s in post.sigma.items():
                if not np.array_equal(np.asarray(s), np.asarray(again.posterior.sigma[term])):
                    raise SelfTestFailure(f"cached draws of {term} differ from the fit's")
            size = Path(again.cache_path).stat().st_size
            rep.ok("cache", f"reopened {Path(again.cache_path).name} ({size / 1024:.0f} kB), draws identical")

        step("cache", cache)

        if window is not None:
            def panels():
                got = theta_from_posterior(post, "model")
                theta, names = got
                window.show_posterior(vc, theta, names)
                app.processEvents()
                image = window.grab().toImage()
                if image.isNull():
                    raise SelfTestFailure("the posterior's panels drew an empty image")
                rep.ok("panels", f"components, D-study and ranks panels drawn for {len(names)} models")

            step("panels", panels)

        def sheet():
            from ..core.report import build_sheet, report_inputs_from

            out_dir = Path(keep) if keep is not None else Path(tmp)
            if out_dir.exists() and not out_dir.is_dir():
                raise SelfTestFailure(f"--keep {out_dir}: a file of that name exists; name a folder")
            out_dir.mkdir(parents=True, exist_ok=True)
            inputs = report_inputs_from(corpus, posterior=post)
            pdf = build_sheet(inputs, out_dir / "ddr-self-test.pdf")
            data = pdf.read_bytes()
            pages = pdf_pages(data)
            if len(pages) < 1:
                raise SelfTestFailure(f"{pdf} has no pages")
            if b"Deployment Decision Reliability" not in pages[0]:
                raise SelfTestFailure(f"page 1 of {pdf} does not carry the sheet's title")
            where = f" -> {pdf}" if keep is not None else ""
            rep.ok("sheet", f"{len(pages)} page(s), {len(data) / 1024:.0f} kB, page 1 titled{where}")
            return len(pages)

        n_pages = step("sheet", sheet)

    if window is not None:
        window.close()
    total = time.perf_counter() - t_start
    return {"device": post.device, "backend": backend, "seconds": total, "pages": n_pages,
            "sigma_means": means, "timings": timings, "checks": [r[0] for r in rep.results]}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ddr-explorer --self-test",
                                description="Check the installation end to end: Qt offscreen, JAX, the demo corpus, "
                                            "a tiny fit, the cache and the DDR sheet.")
    p.add_argument("--corpus", type=Path, help="fit this corpus instead of the bundled demo corpus")
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto",
                   help="where JAX samples (default: the GPU when JAX sees one)")
    p.add_argument("--no-gui", action="store_true", help="skip the Qt checks (servers without PySide6)")
    p.add_argument("--keep", type=Path, help="keep the sheet in this folder")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``ddr-explorer --self-test`` and ``python -m ddr_explorer.gui.self_test``."""
    # before Qt loads: the self-test never opens a window on the user's screen (the
    # preflight still checks the desktop's platform plugin under the user's environment)
    user_environ = dict(os.environ)
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    args = build_parser().parse_args(argv)
    from .. import APP_NAME, __version__

    frozen = "yes" if getattr(sys, "frozen", False) else "no"
    print(f"{APP_NAME} {__version__} self-test (Python {platform.python_version()}, {platform.system()} "
          f"{platform.machine()}, frozen: {frozen})", flush=True)
    try:
        summary = run_self_test(corpus_path=args.corpus, device=args.device, gui=not args.no_gui, keep=args.keep,
                                environ=user_environ)
    except SelfTestFailure as exc:
        print(f"self-test FAILED: {exc}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        print("self-test interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # outside the checks: still a clear failure, never a silent pass
        traceback.print_exc()
        print(f"self-test FAILED: unexpected {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return 1
    print(f"self-test passed: {len(summary['checks'])} checks in {summary['seconds']:.1f} s "
          f"(JAX device: {summary['device']})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
