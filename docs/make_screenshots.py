"""Render each panel of the app offscreen into docs/*.png.

Data: the bundled Terminal-Bench 2.0 demo corpus for the corpus panel; for
the posterior panels, until the sampler's fit of the demo is wired in,
*synthetic* variance components shaped like a per-benchmark Terminal-Bench
fit (standard deviations on the latent scale: task 3.0, model 1.74, scaffold
0.37, task:model 1.39, task:scaffold 1.11, model:scaffold 0.46, scattered
log-normally across 4,000 draws) and synthetic latent model effects for
twelve made-up models.  The observed design is the demo's (89 tasks, 3
scaffolds per model, 5 trials per cell, 29 models) with a made-up price of
USD 0.80 per trial.

Run:  python docs/make_screenshots.py [--out docs]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

SD = {"task": 3.0, "model": 1.74, "scaffold": 0.37, "task:model": 1.39, "task:scaffold": 1.11,
      "model:scaffold": 0.46}
MODELS = ["alpha-1", "bravo-large-2025-preview", "charlie", "delta-mini", "echo-xl-instruct-v3.1",
          "foxtrot", "golf-nano", "hotel-7b", "india-reasoning-experimental-build-0412", "juliet",
          "kilo-coder", "lima"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = ap.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.dstudy import DStudyModel
    from ddr_explorer.core.inspection import inspect_corpus
    from ddr_explorer.core.ranks import rank_analysis
    from ddr_explorer.core.reliability import VarianceComponents
    import time

    from ddr_explorer.core.session import AnalysisState
    from ddr_explorer.gui.app import demo_corpus_path
    from ddr_explorer.gui.components_entry import ComponentsEntryDialog
    from ddr_explorer.gui.components_panel import ComponentsPanel
    from ddr_explorer.gui.corpus_panel import CorpusPanel
    from ddr_explorer.gui.dstudy_panel import DStudyPanel
    from ddr_explorer.gui.ranks_panel import RanksPanel

    rng = np.random.default_rng(2026)
    comps = VarianceComponents.from_mapping({t: (v * np.exp(rng.normal(0, 0.25, 4000))) ** 2 for t, v in SD.items()},
                                            source="synthetic, shaped like a Terminal-Bench per-benchmark fit")
    theta = np.sort(rng.normal(0, 1.74, len(MODELS)))[::-1][None, :] + rng.normal(0, 0.45, (4000, len(MODELS)))
    ranks = rank_analysis(theta, MODELS)
    corpus = load_corpus(demo_corpus_path())
    summary = inspect_corpus(corpus)
    state = AnalysisState.from_corpus(corpus, prices={"terminal-bench-2.0": 0.80}, budget=20000.0)

    shown = []

    def shoot(widget, name: str, size: tuple[int, int]) -> Path:
        shown.append(widget)
        widget.resize(*size)
        widget.show()
        for _ in range(5):
            app.processEvents()
        path = out / name
        widget.grab().save(str(path))
        print(f"wrote {path}")
        return path

    shoot(CorpusPanel(corpus, summary), "corpus-panel.png", (1400, 820))
    shoot(ComponentsPanel(comps), "components-panel.png", (1200, 560))
    panel = DStudyPanel(DStudyModel(comps), state.observed_design(), state, ranks)
    panel.resize(1500, 900)
    panel.show()
    panel.wait_for_frontier(120_000)
    shoot(panel, "dstudy-panel.png", (1500, 900))
    state.update(n_tasks=30.0, n_scaffolds=6.0, target=0.9)
    panel.wait_for_frontier(120_000)
    panel.redraw_now()
    shoot(panel, "dstudy-panel-moved.png", (1500, 900))
    shoot(RanksPanel(ranks), "ranks-panel.png", (1300, 760))
    dialog = ComponentsEntryDialog(rows=SD, scale="sd")
    shoot(dialog, "components-entry.png", (560, 680))

    # The main window at the app's default size, with every tab filled.
    from ddr_explorer.gui.main_window import MainWindow

    window = MainWindow()
    window.resize(1100, 720)
    window.show()
    window.open_corpus(demo_corpus_path())
    while window.loading:
        app.processEvents()
        time.sleep(0.01)
    window.show_posterior(comps, theta, MODELS)
    window.dstudy_panel.wait_for_frontier(120_000)
    for k, name in enumerate(("corpus", "components", "dstudy", "ranks")):
        window.tabs.setCurrentIndex(k)
        shoot(window, f"main-window-{name}.png", (1100, 720))
    # Tear the widgets down while the application exists: leaving it to interpreter exit can crash PySide6.
    from ddr_explorer.gui.dstudy_panel import wait_for_background_jobs

    wait_for_background_jobs(120)
    for w in shown:
        w.close()
        w.deleteLater()
    app.processEvents()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
