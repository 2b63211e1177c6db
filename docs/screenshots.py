"""Regenerate the screenshots and DDR-sheet pages of the README and the user guide, offscreen.

One script, one step per kind of picture (each made from real data, as a user would get it)::

    python docs/screenshots.py all          # every step below in turn (slow: fits, analyses, Laplace)
    python docs/screenshots.py tabs         # every tab of the demo corpus, a fit running, the typed-components dialogs
    python docs/screenshots.py dialogs      # only the typed-components dialogs (seconds: no fit)
    python docs/screenshots.py preview      # the D-study preview from point estimates
    python docs/screenshots.py import       # the column dialog and the subject-id table
    python docs/screenshots.py analyses     # Failure modes, Frontier (BRIDGE), the slice chooser
    python docs/screenshots.py capability   # the Capability tab, from bench_capability_transfer.py's JSON
    python docs/screenshots.py sheet        # pages of the demo's DDR sheet (needs pdftoppm)

``make screenshots`` runs ``all``.  A step's own options follow its name (``tabs --help``).  Settings and the
last session go to a temporary folder, never the user's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

#: Window size of every screenshot of the main window.
SIZE = (1280, 820)
#: The main window's tabs are shot at the app's first size on a 1920 x 1080 screen (gui/window_size.py; the
#: offscreen platform's own screen is 800 x 600).  ``tabs --size 1280x800`` shoots the smallest size tested.
DEFAULT_SCREEN = (1920, 1050)
DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent

RUNS = """agent_run_id,metadata.instance_id,metadata.model_name,metadata.resolved,metadata.exit_status
run-0001,astropy__astropy-12907,gpt-4o-2024-08-06,True,submitted
run-0002,django__django-11099,gpt-4o-2024-08-06,True,submitted
run-0003,django__django-11133,gpt-4o-2024-08-06,False,submitted
run-0004,sympy__sympy-20590,gpt-4o-2024-08-06,False,exit_cost
run-0005,astropy__astropy-12907,claude-3-5-sonnet-20241022,True,submitted
run-0006,django__django-11099,claude-3-5-sonnet-20241022,True,submitted
run-0007,django__django-11133,claude-3-5-sonnet-20241022,True,submitted
run-0008,sympy__sympy-20590,claude-3-5-sonnet-20241022,False,submitted
"""



def _shoot_dialogs(ComponentsEntryDialog, shoot) -> None:  # noqa: N803 - the class, imported after QApplication
    """The typed-components dialog with Hardy et al. 2026's model terms, and with the DDR paper's agent
    terms (the objects and sizes follow the typed terms)."""
    dialog = ComponentsEntryDialog(rows={"task": 3.0, "model": 1.74, "scaffold": 0.37, "task:model": 1.39,
                                         "task:scaffold": 1.11, "model:scaffold": 0.46}, scale="sd")
    dialog.resize(560, 680)
    dialog.show()
    shoot(dialog, "components-entry.png")
    dialog.close()
    dialog.deleteLater()
    agents = ComponentsEntryDialog()
    agents.preset_box.setCurrentIndex(agents.preset_box.findData("Agent terms (DDR paper 2026, Eq. 1)"))
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


def app_tabs(argv=None) -> int:
    """Render each view of the app offscreen into docs/*.png, from a real fit of the demo corpus.

    The window opens the bundled Terminal-Bench 2.0 demo corpus, fits the
    per-benchmark model (Hardy et al. 2026, Eq. 2) through the Model tab exactly as a user
    would (the fit is cached, so a second run reopens it at once), and saves one
    screenshot per tab, one while the fit runs, and one of the typed-components
    dialog.  The demo corpus has no cost column: the screenshots use a made-up price of
    USD 0.80 per trial and a budget of USD 20,000.  The Analyses tab shows PSIS-LOO of
    the fit (no refit) by default; ``--analyses difficulty,heldout,loo --splits 3`` adds
    the refit-heavy ones (the committed screenshot was made so).

    Run:  python docs/screenshots.py tabs [--out docs] [--draws 500 --warmup 300 --chains 4] [--cache DIR]
                [--analyses difficulty,heldout,loo --splits 3]
    """
    ap = argparse.ArgumentParser(prog="docs/screenshots.py tabs",
                                 description=app_tabs.__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DOCS)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--cache", type=Path, default=None, help="fit cache folder (default: the app's)")
    ap.add_argument("--analyses", default="loo", help="analyses for the Analyses tab, e.g. difficulty,heldout,loo "
                    "(difficulty and heldout refit the model many times)")
    ap.add_argument("--splits", type=int, default=3, help="held-out splits")
    ap.add_argument("--tabs", help="only these tabs, comma-separated (e.g. D-study); default every tab (Failure "
                    "modes, Frontier and Capability are shot with their own data by the analyses and capability "
                    "steps)")
    ap.add_argument("--size", help="window size WxH (default: the app's default on a 1920 x 1080 screen)")
    ap.add_argument("--dialogs-only", action="store_true",
                    help="only the typed-components dialog shots (no fit): components-entry*.png")
    args = ap.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
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
        if tab == "Compare" and getattr(window, "compare_panel", None) is not None:
            cp = window.compare_panel  # the demo's two leaders, compared as a user would: press Compare
            cp.run()
            pump(until=lambda: cp.decision is not None or cp.run_button.isEnabled(), limit=300)
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



def preview(argv=None) -> int:
    """Render the D-study preview offscreen into docs/main-window-d-study-preview.png.

    The window opens the bundled Terminal-Bench 2.0 demo corpus and, without fitting, draws the D-study
    of point estimates (core.preview): the rough fit at once, then the Laplace GLMM, which is what the
    screenshot shows (``--stage rough`` stops at the first, what is on screen within seconds of opening,
    and writes ``main-window-d-study-preview-rough.png``).  As for the tabs the demo gets
    a made-up price of USD 0.80 per trial and a budget of USD 20,000.

    Run:  python docs/screenshots.py preview [--out docs] [--stage laplace|rough]
    """
    ap = argparse.ArgumentParser(prog="docs/screenshots.py preview",
                                 description=preview.__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DOCS)
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



def import_dialogs(argv=None) -> int:
    """Render the column dialog and the subject-id table offscreen into docs/import-dialog.png and docs/id-mapping.png.

    The column dialog opens a per-run leaderboard export made here (columns of a per-run export:
    ``agent_run_id, metadata.instance_id, metadata.model_name, metadata.resolved``, a few
    SWE-bench Verified instance ids, made-up results); the benchmark is typed in and the scaffold
    not yet, so the dialog shows what it still needs.  The subject-id table shows the BRIDGE py-irt
    file (shared corpora, McGill-NLP/BRIDGE, CC BY 4.0) as read without an alias option: the
    dataset alias file and the SWE-bench convention at work.

    Run:  python docs/screenshots.py import [--out docs] [--corpora ../shared/corpora]
    """
    ap = argparse.ArgumentParser(prog="docs/screenshots.py import",
                                 description=import_dialogs.__doc__.splitlines()[0])
    here = Path(__file__).resolve().parent
    ap.add_argument("--out", type=Path, default=here)
    ap.add_argument("--corpora", type=Path, default=Path(os.environ.get("DDR_SHARED_CORPORA", here.parents[1] /
                                                                        "shared" / "corpora")))
    args = ap.parse_args(argv)
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, tempfile.mkdtemp(prefix="ddr-shots-"))
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.gui.import_dialog import ColumnMappingDialog, IdMappingDialog

    folder = Path(tempfile.mkdtemp(prefix="ddr-import-"))
    runs = folder / "leaderboard_runs.csv"
    runs.write_text(RUNS, encoding="utf-8")
    d = ColumnMappingDialog(runs)
    d.resize(1180, 520)
    d.benchmark_edit.setText("swe-bench-verified")
    d.show()
    app.processEvents()
    d.grab().save(str(args.out / "import-dialog.png"))
    print("wrote", args.out / "import-dialog.png")

    bridge = args.corpora / "bridge" / "all_a_pyirt.jsonl"
    corpus = load_corpus(bridge)
    t = IdMappingDialog(corpus)
    t.resize(1180, 600)
    t.show()
    # scroll to the SWE-bench submissions the convention mapped, below the model-named subjects
    row = next(i for i in range(t.table.rowCount()) if t.table.item(i, 0).text().startswith("20241022"))
    t.table.scrollToItem(t.table.item(row, 0))
    app.processEvents()
    t.grab().save(str(args.out / "id-mapping.png"))
    print("wrote", args.out / "id-mapping.png")
    return 0



def analysis_tabs(argv=None) -> int:
    """Render the Failure modes and Frontier tabs and the slice chooser offscreen into docs/*.png.

    1. The SIMULATED failure-mode demo corpus (resources/demo/failure-modes-SIMULATED.csv): Analysis >
       Failure modes, run by the window as a user would (every fit through the cache: with the same
       ``--cache`` and sampler settings as an earlier ``ddr analyses --which failure-modes`` it samples nothing).
    2. BRIDGE's py-irt corpus with its release dates and human minutes joined (shared/corpora/bridge):
       the frontier over time of the models with a release date (the others are named and left out), then
       the same corpus on the slice ``human_minutes=60..480`` (the header names it) and the slice chooser.

    Run:  python docs/screenshots.py analyses [--out docs] [--cache DIR] [--draws 500 --warmup 500 --chains 2]
                [--bridge ../shared/corpora/bridge]
    """
    ap = argparse.ArgumentParser(prog="docs/screenshots.py analyses",
                                 description=analysis_tabs.__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DOCS)
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--bridge", type=Path, default=ROOT.parent / "shared" / "corpora" / "bridge")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, tempfile.mkdtemp(prefix="ddr-shots-"))
    from ddr_explorer.gui.slice_dialog import SliceDialog
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
    w.start_failure_or_frontier("failure-modes")
    pump(until=lambda: not w.failure_frontier_task.running)
    w.tabs.setCurrentIndex(TABS.index("Failure modes"))
    shoot(w, "main-window-failure-modes.png")

    b = args.bridge
    opts = {"release_dates": str(b / "model_run_mapping.json"), "task_metadata": str(b / "human_minutes_by_task.jsonl")}
    w.open_corpus(b / "all_a_pyirt.jsonl", None, opts)
    pump(until=lambda: not w.loading and w.corpus is not None and "release_dates" in w.corpus.provenance)
    w.start_failure_or_frontier("frontier", undated="drop")
    pump(until=lambda: not w.failure_frontier_task.running)
    w.tabs.setCurrentIndex(TABS.index("Frontier"))
    shoot(w, "main-window-frontier.png")
    w.open_corpus(b / "all_a_pyirt.jsonl", None, {**opts, "slice": "human_minutes=60..480"})
    pump(until=lambda: not w.loading and w.corpus is not None and w.corpus.provenance.get("slice"))
    w.start_failure_or_frontier("frontier", undated="drop")
    pump(until=lambda: not w.failure_frontier_task.running)
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



def capability(argv=None) -> int:
    """Render the Capability tab offscreen into docs/*.png from the JSON that
    ``bench/investigations/bench_capability_transfer.py`` wrote (the numbers of
    ``ddr analyses --which capability,transfer --json``).

    Run:  python docs/screenshots.py capability --json /tmp/irt-bench [--out docs]
    It writes ``main-window-capability-<corpus>.png`` for each corpus with a capability or transfer JSON file.
    """
    ap = argparse.ArgumentParser(prog="docs/screenshots.py capability",
                                 description=capability.__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, default=Path("/tmp/irt-bench"))
    ap.add_argument("--out", type=Path, default=DOCS)
    a = ap.parse_args(argv)
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
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



def sheet_pages(argv=None) -> int:
    """Render the demo corpus's DDR sheet to the PNG pages the README shows.

    Fits the demo corpus with the default sampler settings (or reopens the fit from the cache), writes
    the sheet in date-invariant mode, and renders pages with poppler's ``pdftoppm``::

        python docs/screenshots.py sheet [--pages 1,5] [--dpi 120] [--cache DIR]

    or renders the pages of a sheet ``ddr report`` wrote (``--pdf``).  The README's pages are the full
    sheet, with the analyses the 2-core default leaves out (about 2,300 CPU s from an empty cache)::

        ddr report resources/demo/terminal-bench-2.csv -o full.pdf --analyses difficulty,heldout,loo --date-invariant
        python docs/screenshots.py sheet --pdf full.pdf --pages 1,4,5
    """
    ap = argparse.ArgumentParser(prog="docs/screenshots.py sheet",
                                 description=sheet_pages.__doc__.splitlines()[0])
    ap.add_argument("--pages", default="1,5", help="pages to render (comma-separated)")
    ap.add_argument("--dpi", type=int, default=120)
    ap.add_argument("--cache", type=Path, help="fit cache folder (default: the user's)")
    ap.add_argument("--pdf", type=Path, help="render this sheet (written by `ddr report`) instead of writing one")
    args = ap.parse_args(argv)
    import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
    from ddr_explorer.core.ddr_sheet import write_ddr_sheet
    from ddr_explorer.core.files import demo_corpus_path

    if shutil.which("pdftoppm") is None:
        print("screenshots.py sheet: pdftoppm (poppler-utils) is needed", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        if args.pdf is not None:
            pdf = args.pdf
        else:
            pdf = Path(tmp) / "demo.pdf"
            res = write_ddr_sheet(demo_corpus_path(), pdf, cache_dir=args.cache, date_invariant=True,
                                  progress=lambda phase, i, n, eta: None)
            print(f"sheet from {'the cache' if res.from_cache else 'a new fit'}; {res.fit_path}")
        for page in (int(p) for p in args.pages.split(",")):
            stem = Path(tmp) / f"p{page}"
            subprocess.run(["pdftoppm", "-png", "-r", str(args.dpi), "-f", str(page), "-l", str(page),
                            "-singlefile", str(pdf), str(stem)], check=True)
            out = DOCS / f"ddr-sheet-page{page}.png"
            shutil.copyfile(stem.with_suffix(".png"), out)
            print(f"wrote {out}")
    return 0


def dialogs(argv=None) -> int:
    """The typed-components dialogs alone (no fit): components-entry.png and components-entry-agents.png."""
    return app_tabs([*(argv or []), "--dialogs-only"])


#: Step name -> function, in the order ``all`` runs them.
STEPS = {"tabs": app_tabs, "preview": preview, "import": import_dialogs, "analyses": analysis_tabs,
         "capability": capability, "sheet": sheet_pages, "dialogs": dialogs}


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in (*STEPS, "all"):
        print(__doc__)
        return 0 if not argv or argv[0] in ("-h", "--help") else 2
    what, rest = argv[0], argv[1:]
    if what != "all":
        return STEPS[what](rest)
    for name in ("tabs", "preview", "import", "analyses", "capability", "sheet"):
        print(f"== {name}", flush=True)
        rc = STEPS[name](rest)
        if rc:
            return rc
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
