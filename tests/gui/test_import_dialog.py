"""The column dialog for tables with other column names, and the subject-id table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytestmark = pytest.mark.gui

from ddr_explorer.core.corpus.importers import pyirt  # noqa: E402
from ddr_explorer.core.corpus.io import load_corpus  # noqa: E402
from ddr_explorer.gui.import_dialog import ColumnMappingDialog, IdMappingDialog  # noqa: E402
from ddr_explorer.gui.main_window import MainWindow  # noqa: E402
from PySide6.QtWidgets import QLabel  # noqa: E402

RUNS = """agent_run_id,metadata.instance_id,metadata.model_name,metadata.resolved
r1,django__django-11099,gpt-4o,True
r2,django__django-11133,gpt-4o,False
r3,django__django-11099,claude-3-5-sonnet,True
r4,django__django-11133,claude-3-5-sonnet,True
r5,astropy__astropy-12907,claude-3-5-sonnet,False
"""


def runs(tmp_path: Path, name: str = "runs.csv", extra_col: str = "") -> Path:
    p = tmp_path / name
    text = RUNS if not extra_col else "\n".join(
        (line + ("," + extra_col if i == 0 else ",x")) if line else line for i, line in enumerate(RUNS.split("\n")))
    p.write_text(text, encoding="utf-8")
    return p


def test_guesses_validates_and_gives_the_mapping(qtbot, tmp_path):
    d = ColumnMappingDialog(runs(tmp_path, extra_col="note"))
    qtbot.addWidget(d)
    assert d.roles() == {"agent_run_id": "trial", "metadata.instance_id": "task", "metadata.model_name": "model",
                         "metadata.resolved": "result", "note": ""}
    assert d.table.rowCount() == 6  # the role row and the 5 rows of the file
    ok = d.buttons.button(d.buttons.StandardButton.Ok)
    assert not ok.isEnabled()
    # no scaffold is one scaffold with a note (core/corpus/validate.py), not a problem of the mapping
    assert any("benchmark" in p for p in d.problem_list()) and not any("scaffold" in p for p in d.problem_list())
    d.benchmark_edit.setText("swe-bench-verified")
    d.scaffold_edit.setText("leaderboard harness")
    assert d.problem_list() == [] and ok.isEnabled()
    # a role given twice is refused as the user chooses it
    d.choosers["note"].setCurrentIndex(d.choosers["note"].findText("model"))
    assert not ok.isEnabled() and "'model' is given to 2 columns" in d.problem_list()[0]
    d.choosers["note"].setCurrentIndex(0)
    text = d.mapping_text()
    assert text == ("trial=agent_run_id,task=metadata.instance_id,model=metadata.model_name,"
                    "result=metadata.resolved,benchmark==swe-bench-verified,scaffold==leaderboard harness")
    c = load_corpus(d.path, columns=text)
    assert (c.n_records, c.n_successes, c.n_levels("model")) == (5, 3, 2)


def test_mapping_is_remembered_for_files_of_the_same_shape(qtbot, tmp_path):
    d = ColumnMappingDialog(runs(tmp_path, "a.csv", extra_col="tag"))
    qtbot.addWidget(d)
    d.benchmark_edit.setText("b1")
    d.scaffold_edit.setText("h1")
    d.accept()
    other = tmp_path / "other"
    other.mkdir()
    d2 = ColumnMappingDialog(runs(other, "b.csv", extra_col="tag"))
    qtbot.addWidget(d2)
    assert d2.constants() == {"benchmark": "b1", "scaffold": "h1"} and not d2.problem_list()


def test_window_offers_the_dialog_and_reopens_with_the_mapping(qtbot, tmp_path):
    w = MainWindow()
    qtbot.addWidget(w)
    path = runs(tmp_path, "leaderboard.csv", extra_col="comment")
    with qtbot.waitSignal(w.load_failed, timeout=30_000):
        w.open_corpus(path)
    d = w.column_dialog
    assert d.isVisible() and d.path == path
    d.benchmark_edit.setText("swe-bench-verified")
    d.scaffold_edit.setText("harness")
    with qtbot.waitSignal(w.corpus_loaded, timeout=30_000):
        d.accept()
    assert w.corpus.n_records == 5
    assert w.state.corpus_options["columns"] == d.mapping_text()  # saved with the analysis


def test_id_mapping_table_edit_and_save(qtbot, tmp_path):
    p = tmp_path / "subjects.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in [
        {"subject_id": "20240620_sweagent_claude3.5sonnet", "responses": {"t1": 1, "t2": 0}},
        {"subject_id": "20240820_honeycomb", "responses": {"t1": 1}},
        {"subject_id": "mystery", "responses": {"t2": 1}},
    ]), encoding="utf-8")
    c = pyirt.read(p, benchmark="swebench")
    d = IdMappingDialog(c)
    qtbot.addWidget(d)
    assert d.table.rowCount() == 3
    row = {d.table.item(i, 0).text(): i for i in range(3)}
    i = row["20240620_sweagent_claude3.5sonnet"]
    assert [d.table.item(i, j).text() for j in (1, 2, 3, 4)] == ["claude3.5sonnet", "SWE-agent",
                                                                 "SWE-bench experiment name", "pattern 1"]
    assert d.table.item(row["mystery"], 3).text() == "no rule (fallback)"
    # the user knows what honeycomb ran
    d.table.item(row["20240820_honeycomb"], 1).setText("gpt-4o")
    d.table.item(row["20240820_honeycomb"], 2).setText("Honeycomb")
    assert d.edited() == {"20240820_honeycomb": ("gpt-4o", "Honeycomb")}
    saved = d.save(tmp_path / "mine.toml")
    back = pyirt.read(p, benchmark="swebench", aliases=saved)
    s = back.provenance["subjects"]
    assert (s["20240820_honeycomb"]["model"], s["20240820_honeycomb"]["scaffold"]) == ("gpt-4o", "Honeycomb")
    assert (s["20240620_sweagent_claude3.5sonnet"]["model"], s["20240620_sweagent_claude3.5sonnet"]["scaffold"]) \
        == ("claude3.5sonnet", "SWE-agent")
    assert back.provenance["id_mapping"]["no_rule"] == 0  # every row is now an explicit entry
    # ... but "mystery" still names no scaffold: scaffolds stay not separated, and the table says so
    assert c.provenance["scaffolds_not_separated"]["not_split"] == 2
    assert back.provenance["scaffolds_not_separated"]["examples"] == ["mystery"]
    assert any("2 ids name no scaffold, so scaffolds are not separated" in lab.text() for lab in d.findChildren(QLabel))


def test_an_instance_column_is_guessed_as_the_task(qtbot, tmp_path):
    p = tmp_path / "swe.csv"
    p.write_text("instance,llm,resolved\ndjango-1,gpt-4o,1\ndjango-2,gpt-4o,0\n", encoding="utf-8")
    d = ColumnMappingDialog(p)
    qtbot.addWidget(d)
    assert d.roles() == {"instance": "task", "llm": "model", "resolved": "result"}


def test_the_window_says_no_failure_while_the_column_dialog_is_open(qtbot, tmp_path):
    """While the user maps the columns the status bar says what to do, no error shows, and the window keeps
    its size; Cancel says the file was not opened."""
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    size = w.size()
    with qtbot.waitSignal(w.load_failed, timeout=30_000):
        w.open_corpus(runs(tmp_path, "board.csv"))
    qtbot.wait(50)
    assert w.column_dialog.isVisible()
    message = w.statusBar().currentMessage()
    assert "could not be opened" not in message and "Choose which column of board.csv is which" in message
    assert not w.error_view.isVisible() and w.size() == size
    w.column_dialog.reject()
    assert w.statusBar().currentMessage() == "board.csv was not opened: its columns were not chosen."


def test_the_constant_fields_stay_put_as_the_needed_list_changes(qtbot, tmp_path):
    d = ColumnMappingDialog(runs(tmp_path, extra_col="note"))
    qtbot.addWidget(d)
    d.show()
    qtbot.waitExposed(d)

    def where():
        return (d.benchmark_edit.mapTo(d, d.benchmark_edit.rect().topLeft()),
                d.scaffold_edit.mapTo(d, d.scaffold_edit.rect().topLeft()), d.size())

    before = where()
    for col in ("agent_run_id", "metadata.instance_id", "metadata.model_name"):  # three more problems
        d.choosers[col].setCurrentIndex(0)
    qtbot.wait(20)
    assert len(d.problem_list()) == 3 and where() == before  # benchmark, task, model (a scaffold is optional)
    d.benchmark_edit.setText("b")
    d.scaffold_edit.setText("s")
    d.set_roles({"agent_run_id": "trial", "metadata.instance_id": "task", "metadata.model_name": "model"})
    qtbot.wait(20)
    assert d.problem_list() == [] and where() == before


def test_the_id_table_offers_to_leave_out_the_ids_that_name_no_scaffold(qtbot):
    """The choice of ``--unsplit-ids`` in the app: drop reopens the corpus without those ids, collapse with them."""
    from PySide6.QtWidgets import QComboBox

    board = Path(__file__).parents[1] / "corpus" / "fixtures" / "tb_binary_leaderboard.jsonl"
    w = MainWindow()
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.corpus_loaded, timeout=30_000):
        w.open_corpus(board)
    assert (w.corpus.n_levels("scaffold"), w.corpus.n_levels("model")) == (1, 6)
    d = w._on_id_mapping()
    box = d.findChild(QComboBox, "unsplit_ids")
    assert box.currentData() == "collapse" and box.count() == 2
    assert box.itemText(1) == "leave them out and fit the scaffolds the other ids name (--unsplit-ids drop)"
    box.setCurrentIndex(1)
    assert "reopened with this choice when you close this table" in d.status.text()
    with qtbot.waitSignal(w.corpus_loaded, timeout=30_000):
        d.reject()
    assert (w.corpus.n_records, w.corpus.n_levels("scaffold"), w.corpus.n_levels("model")) == (144, 4, 3)
    assert w.state.corpus_options["unsplit_ids"] == "drop"  # saved with the analysis, restored with the session
    d = w._on_id_mapping()
    box = d.findChild(QComboBox, "unsplit_ids")
    assert box.currentData() == "drop"
    grey = [d.table.item(i, 0).text() for i in range(d.table.rowCount())
            if d.table.item(i, 0).background().color().name() == "#e4e4e4"]
    assert sorted(grey) == sorted(["gpt-5-mini", "claude-opus-4-5", "Ob-1", "warp"])
    assert any("4 ids name no scaffold and are left out (grey rows)" in lab.text() for lab in d.findChildren(QLabel))
    box.setCurrentIndex(0)
    with qtbot.waitSignal(w.corpus_loaded, timeout=30_000):
        d.reject()
    assert (w.corpus.n_records, w.corpus.n_levels("scaffold")) == (192, 1)
    assert "unsplit_ids" not in w.state.corpus_options
