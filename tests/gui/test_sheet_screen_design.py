"""File > Export DDR sheet answers the cost questions at the D-study tab's design.

The tab's what-if (its tasks, scaffolds, trials per cell, target, budget and price) goes to the sheet, and
the sheet's three cost answers are the tab's: the cheapest design for the target, the best design within
the budget (core's budget search) and the tasks for the target (the readout), not the observed design's.
"""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytest.importorskip("reportlab")
pytestmark = pytest.mark.gui

from ddr_explorer.core.fitting import components_from_posterior  # noqa: E402
from ddr_explorer.core.formatting import fmt_design, fmt_n  # noqa: E402


class _Captured(Exception):
    """Raised by the stand-in writer once it holds the sheet's inputs (nothing is drawn)."""


def _exported_inputs(w, qtbot, tmp_path, monkeypatch):
    """The inputs File > Export DDR sheet hands the writer (a stand-in writer keeps them and draws nothing)."""
    from ddr_explorer.core.report import sheet

    captured = {}

    def writer(inputs, path, **_kw):
        captured["inputs"] = inputs
        raise _Captured("captured")

    monkeypatch.setattr(sheet, "write_sheet", writer)
    with qtbot.waitSignal(w.sheet_failed, timeout=60_000):
        assert w.export_ddr_sheet(tmp_path / "s.pdf", date_invariant=True, analyses="skip")
    return captured["inputs"]


def test_the_exported_sheet_gives_the_dstudy_tabs_three_cost_answers(qtbot, tmp_path, fake_sampler, monkeypatch,
                                                                     small_fit_window):
    from ddr_explorer.core.report import sheet_content

    w = small_fit_window
    w.show_posterior(components_from_posterior(w.fit_result.posterior))
    bench = str(w.corpus.table["benchmark"].astype(str).iloc[0])
    assert w.state.observed["n_replicates"] == 2.0  # the corpus ran 2 trials per cell; the what-if asks for 3
    w.state.update(n_tasks=6.0, n_scaffolds=1.0, n_replicates=3.0, target=0.5, budget=400.0, prices={bench: 0.8})
    panel = w.dstudy_panel
    qtbot.waitUntil(lambda: panel.search is not None and panel._frontier_task is None
                    and not panel._frontier_timer.isActive(), timeout=60_000)
    panel.redraw_now()
    ct = sheet_content(_exported_inputs(w, qtbot, tmp_path, monkeypatch))
    words, search = panel.facet_words, panel.search.at_budget(400.0)
    assert search.cheapest is not None and search.best_in_budget is not None
    assert fmt_design(ct.search.design_at(ct.search.cheapest), "Erho2", words) == panel.readout_labels["cheapest"].text()
    assert fmt_design(ct.search.design_at(ct.search.best_in_budget), "Erho2", words) == \
        panel.readout_labels["budget"].text()
    q = panel.view.readouts.required.quantiles
    assert panel.readout_labels["min_n"].text().startswith(f"{fmt_n(q[0.5])} [{fmt_n(q[0.025])}, {fmt_n(q[0.975])}]")
    assert f"About <b>{fmt_n(q[0.5])} tasks</b>" in ct.decisions[0].answer
    assert f"{fmt_n(q[0.025])}\u2013{fmt_n(q[0.975])}" in ct.decisions[0].answer
    assert "3 trials per cell" in ct.decisions[0].answer and "3 trials per cell" in ct.decisions[2].answer


def test_a_what_if_that_changes_only_the_models_compared_reaches_the_sheet(qtbot, tmp_path, fake_sampler,
                                                                          monkeypatch, small_fit_window):
    w = small_fit_window
    w.show_posterior(components_from_posterior(w.fit_result.posterior))
    observed = w.state.observed_design().n_models
    w.state.update(n_models=observed + 3)  # the sizes stay the corpus's
    examined = _exported_inputs(w, qtbot, tmp_path, monkeypatch).examined_design
    assert examined is not None and examined.n_models == observed + 3  # was dropped: the costs used the corpus's
