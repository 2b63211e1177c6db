"""File > Export DDR sheet writes through ``ddr report``'s writer and shows the same line for a section left out."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytest.importorskip("reportlab")
pytestmark = pytest.mark.gui

from ddr_explorer.gui.main_window import MainWindow  # noqa: E402


def test_export_of_an_incomplete_sheet_writes_it_and_shows_the_cli_line(qtbot, tmp_path, fake_sampler, monkeypatch,
                                                                        small_fit_window):
    from reportlab.platypus import Spacer

    from ddr_explorer.core.report import figures
    from ddr_explorer.core.report.sections import LeftOutSection

    w = small_fit_window
    out = tmp_path / "sheet.pdf"
    monkeypatch.setattr(figures, "rank_dominance_figure", lambda *a, **k: [Spacer(1, 2)])  # not a flowable
    with qtbot.waitSignal(w.sheet_written, timeout=120_000) as blocker:
        assert w.export_ddr_sheet(out, date_invariant=True, analyses="skip")
    assert blocker.args[0] == out and out.read_bytes()[:5] == b"%PDF-"
    text = w.error_view.text()
    expected = LeftOutSection("ranks and dominance", "").message().split(" ()")[0]  # the line `ddr report` prints
    assert w.error_view.isVisibleTo(w) and text.startswith("The DDR sheet is incomplete:\n" + expected)
    assert "(TypeError: the builder of section 'ranks and dominance' returned a list" in text
    assert w.statusBar().currentMessage() == f"Wrote {out} without 1 of its sections"

    monkeypatch.undo()  # a whole sheet: nothing to say, and the earlier sheet's line goes
    with qtbot.waitSignal(w.sheet_written, timeout=120_000):
        assert w.export_ddr_sheet(out, date_invariant=True, analyses="skip")
    assert not w.error_view.isVisibleTo(w) and w.statusBar().currentMessage() == f"Wrote {out}"
