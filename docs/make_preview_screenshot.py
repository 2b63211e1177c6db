"""Render the D-study preview (issue 21) offscreen into docs/main-window-d-study-preview.png.

The window opens the bundled Terminal-Bench 2.0 demo corpus and, without fitting, draws the D-study
of point estimates (core.preview): the rough fit at once, then the Laplace GLMM, which is what the
screenshot shows (``--stage rough`` stops at the first, what is on screen within seconds of opening,
and writes ``main-window-d-study-preview-rough.png``).  As in docs/make_screenshots.py the demo gets
a made-up price of USD 0.80 per trial and a budget of USD 20,000.

Run:  python docs/make_preview_screenshot.py [--out docs] [--stage laplace|rough]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

SIZE = (1280, 820)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    ap.add_argument("--stage", choices=["laplace", "rough"], default="laplace")
    args = ap.parse_args(argv)

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, tempfile.mkdtemp(prefix="ddr-shots-"))
    from ddr_explorer.core.files import demo_corpus_path
    from ddr_explorer.gui.main_window import TABS, MainWindow
    from ddr_explorer.gui.workers import wait_for_tasks

    window = MainWindow()
    window.resize(*SIZE)
    window.show()
    shown = []
    window.preview_shown.connect(lambda p: shown.append(p.method))
    window.tabs.setCurrentIndex(TABS.index("D-study"))  # a preview is drawn when its tab is on screen
    window.open_corpus(demo_corpus_path())
    t0 = time.perf_counter()
    while args.stage not in shown and time.perf_counter() - t0 < 1800:
        app.processEvents()
        time.sleep(0.01)
    if args.stage not in shown:
        raise SystemExit(f"no {args.stage} preview after 30 minutes")
    window.state.update(budget=20000.0, prices={"terminal-bench-2.0": 0.80})
    panel = window.dstudy_panel
    panel.wait_for_frontier()
    panel.wait_for_allocation()
    panel.redraw_now()
    for _ in range(20):
        app.processEvents()
        time.sleep(0.02)
    path = args.out / ("main-window-d-study-preview.png" if args.stage == "laplace"
                       else "main-window-d-study-preview-rough.png")
    window.grab().save(str(path))
    print(f"wrote {path} ({args.stage} preview, {time.perf_counter() - t0:.0f} s after opening)")
    wait_for_tasks(60)
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
