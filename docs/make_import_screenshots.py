"""Render the column dialog and the subject-id table offscreen into docs/import-dialog.png and docs/id-mapping.png.

The column dialog opens a per-run leaderboard export made here (the columns of issue 20:
``agent_run_id, metadata.instance_id, metadata.model_name, metadata.resolved``, a few
SWE-bench Verified instance ids, made-up results); the benchmark is typed in and the scaffold
not yet, so the dialog shows what it still needs.  The subject-id table shows the BRIDGE py-irt
file (shared corpora, McGill-NLP/BRIDGE, CC BY 4.0) as read without an alias option: the
dataset alias file and the SWE-bench convention at work.

Run:  python docs/make_import_screenshots.py [--out docs] [--corpora ../shared/corpora]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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


if __name__ == "__main__":
    raise SystemExit(main())
