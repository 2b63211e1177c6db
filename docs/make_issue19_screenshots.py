"""Render the Failure modes and Frontier tabs and the slice chooser offscreen into docs/*.png (issue 19).

1. The SIMULATED failure-mode demo corpus (resources/demo/failure-modes-SIMULATED.csv): Analysis >
   Failure modes, run by the window as a user would (every fit through the cache: with the same
   ``--cache`` and sampler settings as an earlier ``ddr analyses --which failure-modes`` it samples nothing).
2. BRIDGE's py-irt corpus with its release dates and human minutes joined (shared/corpora/bridge):
   the frontier over time of the models with a release date (the others are named and left out), then
   the same corpus on the slice ``human_minutes=60..480`` (the header names it) and the slice chooser.

Run:  python docs/make_issue19_screenshots.py [--out docs] [--cache DIR] [--draws 500 --warmup 500 --chains 2]
            [--bridge ../shared/corpora/bridge]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
SIZE = (1280, 820)
ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--bridge", type=Path, default=ROOT.parent / "shared" / "corpora" / "bridge")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    import tempfile

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, tempfile.mkdtemp(prefix="ddr-shots-"))
    from ddr_explorer.gui.issue19_panels import SliceDialog
    from ddr_explorer.gui.main_window import TABS, MainWindow
    from ddr_explorer.gui.workers import wait_for_tasks

    def pump(seconds=0.0, until=None, limit=3600.0):
        t0 = time.perf_counter()
        while True:
            app.processEvents()
            el = time.perf_counter() - t0
            if (until is None and el >= seconds) or (until is not None and until()) or el > limit:
                return
            time.sleep(0.01)

    def shoot(widget, name):
        pump(0.3)
        path = args.out / name
        widget.grab().save(str(path))
        print(f"wrote {path}")

    w = MainWindow()
    w.resize(*SIZE)
    w.show()
    if args.cache is not None:
        w.cache_dir = args.cache
    w.open_corpus(ROOT / "resources" / "demo" / "failure-modes-SIMULATED.csv")
    pump(until=lambda: not w.loading)
    w.state.sampler = {"draws": args.draws, "warmup": args.warmup, "chains": args.chains}
    w.start_issue19("failure-modes")
    pump(until=lambda: not w.issue19_task.running)
    w.tabs.setCurrentIndex(TABS.index("Failure modes"))
    shoot(w, "main-window-failure-modes.png")

    b = args.bridge
    opts = {"release_dates": str(b / "model_run_mapping.json"), "task_metadata": str(b / "human_minutes_by_task.jsonl")}
    w.open_corpus(b / "all_a_pyirt.jsonl", None, opts)
    pump(until=lambda: not w.loading and w.corpus is not None and "release_dates" in w.corpus.provenance)
    w.start_issue19("frontier", undated="drop")
    pump(until=lambda: not w.issue19_task.running)
    w.tabs.setCurrentIndex(TABS.index("Frontier"))
    shoot(w, "main-window-frontier.png")
    w.open_corpus(b / "all_a_pyirt.jsonl", None, {**opts, "slice": "human_minutes=60..480"})
    pump(until=lambda: not w.loading and w.corpus is not None and w.corpus.provenance.get("slice"))
    w.start_issue19("frontier", undated="drop")
    pump(until=lambda: not w.issue19_task.running)
    w.tabs.setCurrentIndex(TABS.index("Frontier"))
    shoot(w, "main-window-frontier-slice.png")
    dlg = SliceDialog(w.corpus.table, w.corpus.provenance.get("slice") or "", w)
    dlg.resize(520, 480)
    dlg.column.setCurrentText("benchmark")
    dlg.values.item(0).setSelected(True)
    dlg.show()
    shoot(dlg, "slice-dialog.png")
    wait_for_tasks(120)
    for x in (dlg, w):
        x.close()
        x.deleteLater()
    pump(0.2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
