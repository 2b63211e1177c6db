"""Benchmark: from opening a corpus in the app to the D-study preview on screen.

The window opens the corpus (load and inspect on a worker), then computes point estimates of the
variance components on a worker (:mod:`ddr_explorer.core.preview`: the rough fit at once, then the
Laplace GLMM where the design is small enough) and draws the D-study tab as a preview.  Measured
here, offscreen, per corpus:

* **loaded**: ``open_corpus`` to the ``corpus_loaded`` signal;
* **preview on screen**: ``open_corpus`` to the first preview's D-study panel painted (the tab
  shown and the event loop drained), and the same for the Laplace stage where it runs;
* the estimate's own time (on the worker) for each stage;
* for the first open, also from the bench's process start (Python, Qt and the app's imports, the
  window built), which is what a user who starts the app and opens the demo waits.

Nothing is cached from an earlier run: the fit cache (``DDR_CACHE_DIR``) is pointed at a new empty
folder unless ``--keep-cache`` is given, and the preview compiles nothing (numpy and scipy only).

Targets: the Terminal-Bench 2.0 demo within 5 s, BRIDGE pooled
(``shared/corpora/bridge/all_a_pyirt.jsonl``) within 30 s.  A same-run reference (``np.sort`` of
4,000 x 100 draws, the bench_slider reference) says how loaded the machine was.

Run:  python bench/bench_preview.py [--corpus tb2|bridge|both] [--bridge PATH] [--no-laplace]
"""

from __future__ import annotations

import time

T_PROCESS = time.perf_counter()  # the bench's process started: no module of the app imported yet

import argparse  # noqa: E402
import os  # noqa: E402
from pathlib import Path  # noqa: E402

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


ROOT = Path(__file__).resolve().parents[1]
BRIDGE = ROOT.parent / "shared" / "corpora" / "bridge" / "all_a_pyirt.jsonl"


from _reference import reference_ms  # noqa: E402 - bench/ is on sys.path when a bench runs


def measure(app, path: Path, *, wait_laplace: bool, timeout_s: float = 900.0, window=None) -> dict:
    from ddr_explorer.gui.main_window import TABS, MainWindow

    w = window or MainWindow()
    w.resize(1400, 900)
    w.show()
    app.processEvents()
    events: list[tuple[str, float, float | None]] = []
    w.corpus_loaded.connect(lambda _c: events.append(("loaded", time.perf_counter(), None)))

    def shown(preview):
        # on screen: the D-study tab in front and every pending paint done
        w.tabs.setCurrentIndex(TABS.index("D-study"))
        app.processEvents()
        w.dstudy_panel.grab()
        events.append((preview.method, time.perf_counter(), preview.seconds))

    w.preview_shown.connect(shown)
    w.tabs.setCurrentIndex(TABS.index("D-study"))  # the user looks at the D-study tab (its panel is built then)
    app.processEvents()
    t0 = time.perf_counter()
    out_start = t0 - T_PROCESS
    w.open_corpus(path)
    want = 2 if wait_laplace else 1
    while time.perf_counter() - t0 < timeout_s:
        app.processEvents()
        time.sleep(0.005)
        n = sum(1 for e in events if e[0] != "loaded")
        if n >= want or (n >= 1 and w.preview_task is None):  # no Laplace stage on a large design
            break
    out = {"events": [(name, t - t0, s) for name, t, s in events], "n_effects": None, "since_process": out_start}
    if w.preview is not None:
        out["n_effects"] = w.preview.n_effects
        out["formula"] = w.preview.formula
        out["components"] = w.preview.to_dict()["components"]
    if w.preview_task is not None:
        w.preview_task.discard()
    w.preview_shown.disconnect(shown)
    out["window"] = w
    return out


def report(name: str, path: Path, target: float, res: dict, ref_ms: float | None = None) -> None:
    print(f"\n{name}: {path.name}" + (f", {res['n_effects']:,} random effects" if res["n_effects"] else ""))
    first = None
    for stage, t, est in res["events"]:
        if stage == "loaded":
            print(f"  corpus loaded and inspected      {t:7.2f} s")
            continue
        first = t if first is None else first
        print(f"  preview on screen ({stage:<7})     {t:7.2f} s   (estimate on the worker {est:.2f} s)")
    if first is None:
        print("  NO preview shown")
    else:
        print(f"  first preview on screen: {first:.2f} s (target <= {target:g} s: {'met' if first <= target else 'NOT met'})")
        if ref_ms:  # the figure to compare across runs on a shared box
            print(f"  ratio first preview / reference: {first * 1e3 / ref_ms:,.0f} (reference {ref_ms:.2f} ms, same run)")
        if res.get("cold"):
            print(f"  from the process start (imports, window, open): {first + res['since_process']:.2f} s")
    if "components" in res:
        print("  last preview's components: " + ", ".join(f"{k} {v:.3g}" for k, v in res["components"].items()))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", choices=["tb2", "bridge", "both"], default="both")
    ap.add_argument("--bridge", type=Path, default=BRIDGE, help="the BRIDGE pooled py-irt file")
    ap.add_argument("--no-laplace", action="store_true", help="stop after the first (rough) preview")
    ap.add_argument("--keep-cache", action="store_true", help="use the user's fit cache (default: a new empty one)")
    args = ap.parse_args(argv)
    if not args.keep_cache:
        import tempfile

        os.environ["DDR_CACHE_DIR"] = tempfile.mkdtemp(prefix="ddr-bench-preview-")

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from ddr_explorer.core.files import demo_corpus_path
    from ddr_explorer.gui.workers import wait_for_tasks

    runs = []
    if args.corpus in ("tb2", "both"):
        runs.append(("Terminal-Bench 2.0 demo (per-benchmark)", demo_corpus_path(), 5.0, not args.no_laplace))
    if args.corpus in ("bridge", "both"):
        if not args.bridge.exists():
            print(f"skipping BRIDGE: {args.bridge} not found (give --bridge PATH)")
        else:
            runs.append(("BRIDGE pooled", args.bridge, 30.0, not args.no_laplace))
    ref_before = reference_ms()
    print(f"reference before (np.sort of 4,000 x 100 draws): {ref_before:.2f} ms; shared 2-core box, offscreen")
    for name, path, target, laplace in runs:
        # first open in this process (imports included), then the same file again in the same window
        res = measure(app, path, wait_laplace=laplace)
        res["cold"] = not runs.index((name, path, target, laplace))  # the process's first open
        wait_for_tasks(120)
        report(name + ", first open (cold)", path, target, res, ref_before)
        again = measure(app, path, wait_laplace=False, window=res["window"])
        wait_for_tasks(120)
        report(name + ", opened again (warm)", path, target, again, ref_before)
        w = again["window"]
        w.close()
        w.deleteLater()
        app.processEvents()
    ref_after = reference_ms()
    print(f"\nreference after: {ref_after:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
