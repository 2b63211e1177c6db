"""Render each view of the app offscreen into docs/*.png, from a real fit of the demo corpus.

The window opens the bundled Terminal-Bench 2.0 demo corpus, fits the
per-benchmark model (seed 000 Eq. 2) through the Model tab exactly as a user
would (the fit is cached, so a second run reopens it at once), and saves one
screenshot per tab, one while the fit runs, and one of the typed-components
dialog.  The demo corpus has no cost column: the screenshots use a made-up price of
USD 0.80 per trial and a budget of USD 20,000.  The Analyses tab shows PSIS-LOO of
the fit (no refit) by default; ``--analyses difficulty,heldout,loo --splits 3`` adds
the refit-heavy ones (the committed screenshot was made so).

Run:  python docs/make_screenshots.py [--out docs] [--draws 500 --warmup 300 --chains 4] [--cache DIR]
            [--analyses difficulty,heldout,loo --splits 3]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

#: Window size of every screenshot: the app's first size on a 1920 x 1080 screen (gui/window_size.py; the
#: offscreen platform's own screen is 800 x 600).  ``--size 1280x800`` shoots the smallest size tested.
DEFAULT_SCREEN = (1920, 1050)


def _shoot_dialogs(ComponentsEntryDialog, shoot) -> None:  # noqa: N803 - the class, imported after QApplication
    """The typed-components dialog with seed 000's model terms, and with seed 003's agent terms (issue 19: the
    objects and sizes follow the typed terms)."""
    dialog = ComponentsEntryDialog(rows={"task": 3.0, "model": 1.74, "scaffold": 0.37, "task:model": 1.39,
                                         "task:scaffold": 1.11, "model:scaffold": 0.46}, scale="sd")
    dialog.resize(560, 680)
    dialog.show()
    shoot(dialog, "components-entry.png")
    dialog.close()
    dialog.deleteLater()
    agents = ComponentsEntryDialog()
    agents.preset_box.setCurrentIndex(agents.preset_box.findData("Agent terms (seed 003 Eq. 1)"))
    for field, n in (("n_tasks", 40), ("n_replicates", 4)):  # the SIMULATED failure demo's design
        agents.size_spins[field].setValue(n)
    for facet, n in (("step", 3), ("error_category", 4)):
        agents.facet_spins[facet].setValue(n)
    agents.models_spin.setValue(10)
    agents.resize(560, 760)
    agents.show()
    shoot(agents, "components-entry-agents.png")
    agents.close()
    agents.deleteLater()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--cache", type=Path, default=None, help="fit cache folder (default: the app's)")
    ap.add_argument("--analyses", default="loo", help="analyses for the Analyses tab, e.g. difficulty,heldout,loo "
                    "(difficulty and heldout refit the model many times)")
    ap.add_argument("--splits", type=int, default=3, help="held-out splits")
    ap.add_argument("--tabs", help="only these tabs, comma-separated (e.g. D-study); default every tab (the issue-19 "
                    "tabs are shot with their own data by make_issue19_screenshots.py and make_capability_shots.py)")
    ap.add_argument("--size", help="window size WxH (default: the app's default on a 1920 x 1080 screen)")
    ap.add_argument("--dialogs-only", action="store_true",
                    help="only the typed-components dialog shots (no fit): components-entry*.png")
    args = ap.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    import tempfile

    # Never touch the user's settings or last session.
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, tempfile.mkdtemp(prefix="ddr-shots-"))
    from ddr_explorer.core.files import demo_corpus_path
    from ddr_explorer.gui.components_entry import ComponentsEntryDialog
    from ddr_explorer.gui.main_window import TABS, MainWindow
    from ddr_explorer.gui.workers import wait_for_tasks

    def pump(seconds: float = 0.0, until=None, limit: float = 1800.0) -> None:
        t0 = time.perf_counter()
        while True:
            app.processEvents()
            elapsed = time.perf_counter() - t0
            if (until is None and elapsed >= seconds) or (until is not None and until()) or elapsed > limit:
                return
            time.sleep(0.01)

    def shoot(widget, name: str) -> Path:
        pump(0.3)
        path = out / name
        widget.grab().save(str(path))
        print(f"wrote {path}")
        return path

    if args.dialogs_only:
        _shoot_dialogs(ComponentsEntryDialog, shoot)
        return 0
    from PySide6.QtCore import QSize

    from ddr_explorer.gui.window_size import default_window_size

    size = (tuple(int(v) for v in args.size.lower().split("x")) if args.size else
            default_window_size(QSize(*DEFAULT_SCREEN)).toTuple())
    window = MainWindow()
    window.resize(*size)
    window.show()
    if args.cache is not None:
        window.cache_dir = args.cache
    window.open_corpus(demo_corpus_path())
    pump(until=lambda: not window.loading and window.device is not None)
    window.state.update(budget=20000.0, prices={"terminal-bench-2.0": 0.80})
    mp = window.model_panel
    mp.draws_spin.setValue(args.draws)
    mp.warmup_spin.setValue(args.warmup)
    mp.chains_spin.setValue(args.chains)
    tabs = [t.strip() for t in args.tabs.split(",")] if args.tabs else list(TABS)
    window.tabs.setCurrentIndex(TABS.index("Corpus"))
    if "Corpus" in tabs:
        shoot(window, "main-window-corpus.png")

    window.start_fit()
    # A shot while it runs (when the fit is not cached yet): once warmup has begun.
    pump(until=lambda: not window.fitting or "Warmup" in mp.log_text())
    if window.fitting and not args.tabs:
        pump(1.0)
        shoot(window, "main-window-fitting.png")
    pump(until=lambda: not window.fitting)
    if window.fit_result is None:
        print("the fit failed:\n" + mp.log_text())
        return 1
    which = tuple(a.strip() for a in args.analyses.split(",") if a.strip() and a.strip() != "none")
    if which:
        window.start_analyses(which=which, n_splits=args.splits)
        pump(until=lambda: not window.analyses_task.running)
    window.dstudy_panel.wait_for_frontier(120_000)
    window.dstudy_panel.wait_for_allocation(120_000)
    for tab in tabs:
        window.tabs.setCurrentIndex(TABS.index(tab))
        shoot(window, f"main-window-{tab.lower().replace(' ', '-')}.png")

    if not args.tabs:
        _shoot_dialogs(ComponentsEntryDialog, shoot)

    # Tear the widgets down while the application exists: leaving it to interpreter exit can crash PySide6.
    from ddr_explorer.gui.dstudy_panel import wait_for_background_jobs

    wait_for_tasks(120)
    wait_for_background_jobs(120)
    window.close()  # the dialogs close in _shoot_dialogs
    window.deleteLater()
    pump(0.2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
