"""Render the Capability tab offscreen into docs/*.png from the JSON that
``bench/bench_capability_transfer.py`` wrote (the numbers of ``ddr analyses --which capability,transfer --json``).

Run:  python docs/make_capability_shots.py --json /tmp/irt-bench [--out docs]
It writes ``main-window-capability-<corpus>.png`` for each corpus with a capability or transfer JSON file.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

SIZE = (1280, 820)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, default=Path("/tmp/irt-bench"))
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    a = ap.parse_args(argv)
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    import tempfile

    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, tempfile.mkdtemp(prefix="ddr-shots-"))
    from ddr_explorer.gui.capability_panel import CapabilityPanel
    from ddr_explorer.gui.main_window import TABS, MainWindow

    for corpus in ("tb2", "bridge"):
        results = {}
        for name in ("capability", "transfer"):
            f = a.json / f"{corpus}-{name}.json"
            if f.exists():
                results[name] = json.loads(f.read_text())
        if not results:
            continue
        w = MainWindow()
        w.resize(*SIZE)
        if corpus == "tb2":  # the corpus the numbers are of, in the header (BRIDGE takes long to load)
            import time

            from ddr_explorer.core.files import demo_corpus_path

            loaded = []
            w.corpus_loaded.connect(loaded.append)
            w.open_corpus(demo_corpus_path())
            t0 = time.time()
            while not loaded and time.time() - t0 < 120:
                app.processEvents()
                time.sleep(0.05)
        w.capability_panel = CapabilityPanel(results)  # what start_capability's done() shows
        w._slots["Capability"].replace(w.capability_panel)
        w.tabs.setCurrentIndex(TABS.index("Capability"))
        w.show()
        for _ in range(10):
            app.processEvents()
        path = a.out / f"main-window-capability-{corpus}.png"
        w.grab().save(str(path))
        print(f"wrote {path}")
        w.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
