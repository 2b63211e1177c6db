"""The D-study panel draws exactly what core computes, for every slider, throttled.

Change the widget, read the state and the plot; change the state, read the
widget (napari's test_qt_dims pattern).  Every plotted array is compared with
an independent call of core on the same design.
"""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from PySide6.QtGui import QImage  # noqa: E402

from ddr_explorer.core.dstudy import DStudyDesign, DStudyModel, cost_frontier  # noqa: E402
from ddr_explorer.core.formatting import fmt_rpd  # noqa: E402
from ddr_explorer.core.ranks import rank_analysis  # noqa: E402
from ddr_explorer.core.reliability import DETECTION_ERHO2, VarianceComponents  # noqa: E402
from ddr_explorer.core.session import AnalysisState  # noqa: E402
from ddr_explorer.gui.dstudy_panel import (DStudyPanel, curve_grid, slider_values,  # noqa: E402
                                            wait_for_background_jobs)
from ddr_explorer.gui.plots import fmt_count, fmt_interval, fmt_usd  # noqa: E402

S = 4000
#: Standard deviations shaped like a per-benchmark fit of Terminal-Bench (latent scale).
PER_BENCHMARK_SD = {"task": 3.0, "model": 1.74, "scaffold": 0.37, "task:model": 1.39, "task:scaffold": 1.11,
                    "model:scaffold": 0.46}
#: Seed 000 Table 8 (pooled HAL fit), standard deviations.
POOLED_SD = {"benchmark": 2.45, "benchmark:task": 2.41, "model": .78, "scaffold": .79, "benchmark:model": .52,
             "benchmark:scaffold": .69, "model:scaffold": .36, "benchmark:task:model": .88,
             "benchmark:task:scaffold": 1.03, "benchmark:model:scaffold": .55}


def synthetic_components(sd: dict, seed: int, spread: float = 0.25) -> VarianceComponents:
    """``S`` draws of sigma^2 scattered log-normally around the given standard deviations."""
    rng = np.random.default_rng(seed)
    return VarianceComponents.from_mapping({t: (v * np.exp(rng.normal(0, spread, S))) ** 2 for t, v in sd.items()},
                                           source=f"synthetic seed {seed}")


FITS = {
    "per-benchmark": (PER_BENCHMARK_SD, DStudyDesign(n_tasks=89, n_scaffolds=3, n_replicates=5, n_models=29,
                                               price_per_trial={"terminal-bench-2.0": 0.8})),
    "pooled": (POOLED_SD, DStudyDesign(n_tasks=50, n_scaffolds=2, n_benchmarks=9, n_models=10,
                                 price_per_trial={f"benchmark with a very long name number {k}": 0.1 * (k + 1)
                                                  for k in range(9)})),
}


@pytest.fixture(scope="module")
def components():
    return {name: synthetic_components(sd, seed) for seed, (name, (sd, _)) in enumerate(FITS.items())}


@pytest.fixture(scope="module")
def ranks():
    rng = np.random.default_rng(7)
    theta = rng.normal(0, 1.5, 8)[None, :] + rng.normal(0, 0.5, (S, 8))
    return rank_analysis(theta, [f"model {k} with a name long enough to need eliding" for k in range(8)])


@pytest.fixture(params=list(FITS))
def fit(request, components):
    return request.param, components[request.param], FITS[request.param][1]


def _make_panel(qtbot, comps, observed, ranks=None, state=None):
    panel = DStudyPanel(DStudyModel(comps), observed, state=state, ranks=ranks)
    qtbot.addWidget(panel)
    panel.resize(1300, 800)
    panel.show()
    yield_panel = panel
    return yield_panel


@pytest.fixture
def make_panel(qtbot):
    made = []

    def make(comps, observed, ranks=None, state=None):
        p = _make_panel(qtbot, comps, observed, ranks, state)
        made.append(p)
        return p

    yield make
    # Frontier jobs run on the pool: let them finish before the widgets go.
    assert wait_for_background_jobs(120)


def core_view(comps, panel, design=None):
    """An independent core computation of what the panel should show."""
    st = panel.state
    return DStudyModel(comps).view(design or st.design(), panel.grids, st.effective_target, overs=panel.curve_fields)


def assert_panel_shows(panel, want):
    """Every drawn array of every curve equals core's, and the readouts show core's numbers."""
    got = panel.view
    assert got.design == want.design
    for f, items in panel.curve_items.items():
        c = want.curves[f]
        np.testing.assert_allclose(got.curves[f].median, c.median, rtol=1e-12)
        x, y = items.median.getOriginalDataset()
        np.testing.assert_allclose(x, c.grid, rtol=0)
        np.testing.assert_allclose(y, c.median, rtol=1e-12)
        for band, h in ((items.band68, c.hdi68), (items.band95, c.hdi95)):
            np.testing.assert_allclose(band.lower.getOriginalDataset()[1], h[:, 0], rtol=1e-12)
            np.testing.assert_allclose(band.upper.getOriginalDataset()[1], h[:, 1], rtol=1e-12)
            np.testing.assert_allclose(band.upper.getOriginalDataset()[0], c.grid, rtol=0)
        if f == "n_tasks":  # log axis: pyqtgraph draws log10 of core's sizes
            np.testing.assert_allclose(items.median.getData()[0], np.log10(c.grid), rtol=1e-12)
        else:
            np.testing.assert_allclose(items.median.getData()[0], c.grid, rtol=0)
        assert items.asymptote.value() == pytest.approx(c.asymptote.median, rel=1e-12)
        assert items.target.value() == pytest.approx(c.target, rel=1e-12)
        assert tuple(items.detection.getRegion()) == pytest.approx(DETECTION_ERHO2)
        px, py = items.current_point.getOriginalDataset()
        assert px[0] == c.observed_x and py[0] == pytest.approx(c.observed.median, rel=1e-12)
    r, lab = want.readouts, panel.readout_labels
    assert fmt_interval(r.coefficient.median, *r.coefficient.hdi95) in lab["coefficient"].text()
    assert fmt_interval(r.snr.median, *r.snr.hdi95, digits=2) == lab["snr"].text()
    assert lab["p_target"].text().startswith(f"{r.p_target_met:.3f}")
    q = r.required.quantiles
    assert lab["min_n"].text().startswith(f"{fmt_count(q[0.5])} [{fmt_count(q[0.025])}, {fmt_count(q[0.975])}]")
    assert lab["trials"].text() == fmt_count(r.trials)
    if want.design.mean_price() > 0:
        # the cost, then its reliability per dollar in ddr dstudy's and the sheet's words (formatting.fmt_rpd)
        assert lab["cost"].text() == (f"{fmt_usd(r.cost)}; " + fmt_rpd(r.rpd.median, r.coefficient.median,
                                                                     want.design.mean_price(), r.estimand))


# ---------------------------------------------------------------------------

def test_initial_view_is_the_observed_design(fit, make_panel):
    name, comps, observed = fit
    panel = make_panel(comps, observed)
    st = panel.state
    assert st.sizes == {"n_tasks": observed.effective_n_tasks, "n_scaffolds": observed.n_scaffolds,
                        "n_benchmarks": observed.effective_n_benchmarks, "n_replicates": observed.n_replicates}
    assert_panel_shows(panel, core_view(comps, panel))
    # the observed design's markers come from core's view of the observed design
    obs_view = core_view(comps, panel, st.observed_design())
    for f, items in panel.curve_items.items():
        x, y = items.observed_point.getOriginalDataset()
        assert x[0] == obs_view.curves[f].observed_x
        assert y[0] == pytest.approx(obs_view.readouts.coefficient.median, rel=1e-12)


def test_sliders_follow_the_facets_of_the_fit(components, make_panel):
    per = make_panel(components["per-benchmark"], FITS["per-benchmark"][1])
    assert set(per.sliders) == {"n_tasks", "n_scaffolds", "n_replicates"}
    # the observed design has 5 trials per cell: a trial facet exists, so its curve is drawn
    assert set(per.curve_items) == {"n_tasks", "n_scaffolds", "n_replicates"}
    pooled = make_panel(components["pooled"], FITS["pooled"][1])
    assert set(pooled.sliders) == {"n_tasks", "n_scaffolds", "n_benchmarks", "n_replicates"}
    assert set(pooled.curve_items) == {"n_tasks", "n_scaffolds", "n_benchmarks"}  # one trial per cell
    only_tasks = VarianceComponents.from_mapping({"model": 1.0, "task:model": 2.0})
    p = make_panel(only_tasks, DStudyDesign(n_tasks=20))
    assert set(p.sliders) == {"n_tasks", "n_replicates"}


def test_slider_scales():
    tasks = slider_values("n_tasks", [89])
    assert tasks[0] == 1 and tasks[-1] == 2000 and 89 in tasks
    # every integer at the low end, then log-spaced steps of a few percent: no big jumps anywhere
    np.testing.assert_array_equal(tasks[:20], np.arange(1, 21))
    ratios = tasks[1:] / tasks[:-1]
    assert ratios[tasks[:-1] >= 20].max() < 1.07
    np.testing.assert_array_equal(slider_values("n_scaffolds"), np.arange(1, 21))
    np.testing.assert_array_equal(slider_values("n_benchmarks"), np.arange(1, 31))
    np.testing.assert_array_equal(slider_values("n_replicates"), np.arange(1, 11))
    assert curve_grid("n_tasks")[-1] == 2000 and len(curve_grid("n_tasks")) <= 100
    # every whole number up to 200 is a position: a log step skipped 40 (39 -> 41)
    np.testing.assert_array_equal(tasks[:200], np.arange(1, 201))


def test_the_task_slider_steps_one_task_at_a_time_where_corpora_are(components, make_panel, qtbot):
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    panel = make_panel(components["per-benchmark"], FITS["per-benchmark"][1])
    panel.state.update(n_tasks=39.0)
    slider = panel.sliders["n_tasks"]
    slider.setFocus()
    QTest.keyClick(slider, Qt.Key_Right)
    assert panel.state.n_tasks == 40.0 and panel.slider_labels["n_tasks"].text() == "40"
    QTest.keyClick(slider, Qt.Key_Right)
    assert panel.state.n_tasks == 41.0


@pytest.mark.parametrize("field", ["n_tasks", "n_scaffolds", "n_benchmarks", "n_replicates"])
def test_each_slider_redraws_core_numbers(fit, make_panel, qtbot, field):
    name, comps, observed = fit
    panel = make_panel(comps, observed)
    if field not in panel.sliders:
        pytest.skip(f"the {name} fit has no {field} slider")
    slider, values = panel.sliders[field], panel.slider_values[field]
    for pos in (0, len(values) // 3, len(values) - 1):
        slider.setValue(pos)
        want_value = float(values[pos])
        assert getattr(panel.state, field) == want_value  # the widget wrote the state at once
        qtbot.waitUntil(lambda: getattr(panel.view.design, field) == want_value, timeout=5000)
        assert panel.slider_labels[field].text() == fmt_count(want_value)
        assert_panel_shows(panel, core_view(comps, panel))


def test_state_changes_move_the_widgets(components, make_panel, qtbot):
    comps = components["pooled"]
    panel = make_panel(comps, FITS["pooled"][1])
    panel.state.update(n_tasks=300.0, n_benchmarks=4.0, claim="absolute", target=0.8)
    assert panel.slider_values["n_tasks"][panel.sliders["n_tasks"].value()] == pytest.approx(300, rel=0.05)
    assert panel.slider_values["n_benchmarks"][panel.sliders["n_benchmarks"].value()] == 4
    assert panel.claim_box.currentData() == "absolute"
    assert panel.target_spin.value() == pytest.approx(0.8)
    qtbot.waitUntil(lambda: panel.view.design.claim == "absolute" and panel.view.design.n_tasks == 300.0,
                    timeout=5000)
    assert panel.view.readouts.estimand == "Phi"
    assert_panel_shows(panel, core_view(comps, panel))


def test_slider_drag_is_throttled_and_ends_on_the_last_position(components, make_panel, qtbot):
    comps = components["per-benchmark"]
    panel = make_panel(comps, FITS["per-benchmark"][1])
    qtbot.wait(50)
    n0 = len(panel.timings)
    slider = panel.sliders["n_tasks"]
    for pos in range(0, 120):  # a fast drag: 120 valueChanged without the event loop running
        slider.setValue(pos)
    last = float(panel.slider_values["n_tasks"][119])
    qtbot.waitUntil(lambda: panel.view.design.n_tasks == last, timeout=5000)
    assert len(panel.timings) - n0 <= 2  # the leading call and one trailing call
    assert_panel_shows(panel, core_view(comps, panel))


def test_target_budget_and_prices(components, make_panel, qtbot):
    comps = components["pooled"]
    panel = make_panel(comps, FITS["pooled"][1])
    assert panel.wait_for_frontier()
    panel.target_spin.setValue(0.7)
    assert panel.state.target == pytest.approx(0.7)
    qtbot.waitUntil(lambda: panel.view.readouts.target == pytest.approx(0.7), timeout=5000)
    with qtbot.waitSignal(panel.frontier_ready, timeout=60_000):
        pass
    assert panel.frontier.target == pytest.approx(0.7)
    assert_panel_shows(panel, core_view(comps, panel))

    # a price typed in the table reaches the state, the cost readout and the frontier
    bench = panel.price_table.item(0, 0).data(0x0100)
    panel.price_table.item(0, 1).setText("2.5")
    assert panel.state.prices[bench] == 2.5
    qtbot.waitUntil(lambda: panel.view.design.price_per_trial[bench] == 2.5, timeout=5000)
    assert panel.readout_labels["cost"].text().startswith(f"{fmt_usd(panel.state.design().cost())}; "
                                                          "reliability per dollar ")
    panel.wait_for_frontier()
    want = cost_frontier(comps, panel.state.design(), target=panel.state.effective_target, **panel.frontier_grids)
    np.testing.assert_allclose(panel.frontier.cost, want.cost)
    np.testing.assert_allclose(panel.frontier.median, want.median)
    x, y = panel.frontier_line.getOriginalDataset()
    np.testing.assert_allclose(x, want.cost[want.pareto])
    np.testing.assert_allclose(y, want.median[want.pareto])

    # a bad price is refused and the state's value comes back
    panel.price_table.item(0, 1).setText("-3")
    assert panel.state.prices[bench] == 2.5
    assert "USD per trial" in panel.message.text()
    assert float(panel.price_table.item(0, 1).text()) == 2.5

    # a budget picks the best design of core's frontier
    panel.budget_spin.setValue(5000.0)
    assert panel.state.budget == 5000.0
    qtbot.waitUntil(lambda: "tasks" in panel.readout_labels["budget"].text(), timeout=5000)
    k = want.best_at_budget(5000.0)
    d = want.design_at(k)
    assert f"{d['median']:.3f}" in panel.readout_labels["budget"].text()
    assert fmt_usd(d["cost"]) in panel.readout_labels["budget"].text()
    bx, _ = panel.frontier_budget.getOriginalDataset()
    assert list(bx) == [5000.0, 5000.0]


def test_budget_allocation_table_shows_cores_tasks_per_benchmark(components, make_panel, qtbot):
    """The budget's tasks per benchmark, computed by core off the GUI thread, drawn read-only."""
    from ddr_explorer.core.dstudy import allocate_budget

    comps = components["pooled"]
    panel = make_panel(comps, FITS["pooled"][1])
    assert panel.wait_for_allocation()
    assert panel.allocation is None and panel.allocation_label.text() == "Enter a budget."
    assert panel.allocation_table.isHidden()
    panel.budget_spin.setValue(5000.0)
    qtbot.waitUntil(lambda: panel.allocation is not None, timeout=10_000)
    want = allocate_budget(comps, panel.state.design(), 5000.0)
    assert panel.allocation["tasks"] == want.tasks
    t = panel.allocation_table
    assert t.rowCount() == 9 and not t.isHidden()
    assert t.editTriggers() == t.EditTrigger.NoEditTriggers
    for r, b in enumerate(want.benchmarks):
        assert t.item(r, 0).toolTip() == b
        assert t.item(r, 1).text() == f"{want.tasks[b]:,}"
        assert t.item(r, 2).text() == f"{want.equal[b]:,}"
    assert f"{want.summaries['optimal'].median:.3f} for {fmt_usd(want.costs['optimal'])}" in \
        panel.allocation_label.text()
    # a budget too small for one task per benchmark says so, and the table goes
    panel.budget_spin.setValue(10.0)
    qtbot.waitUntil(lambda: panel.allocation is None, timeout=10_000)
    assert "cannot buy one task per benchmark" in panel.allocation_label.text() and t.isHidden()


def test_without_prices_the_frontier_is_drawn_over_trials(components, make_panel):
    comps = components["per-benchmark"]
    panel = make_panel(comps, DStudyDesign(n_tasks=40, n_scaffolds=2, n_models=5))
    assert panel.state.prices == {}
    assert panel.wait_for_frontier()
    x, _ = panel.frontier_points.getOriginalDataset()
    np.testing.assert_allclose(x, panel.frontier.trials)
    assert panel.readout_labels["cost"].text() == "no prices entered"
    assert panel.price_table.rowCount() == 1  # one price for all benchmarks can be typed


def test_frontier_is_computed_off_the_slider_path(components, make_panel, qtbot):
    comps = components["per-benchmark"]
    panel = make_panel(comps, FITS["per-benchmark"][1])
    assert panel.wait_for_frontier()
    jobs = panel.frontier_jobs
    panel.sliders["n_tasks"].setValue(10)
    qtbot.waitUntil(lambda: panel.view.design.n_tasks == panel.slider_values["n_tasks"][10], timeout=5000)
    assert panel.frontier_jobs == jobs  # tasks do not change the frontier: no new job
    x, y = panel.frontier_current.getOriginalDataset()
    assert x[0] == pytest.approx(panel.view.readouts.cost) and y[0] == panel.view.readouts.coefficient.median


def test_dominance_heatmap_is_cores_ordered_matrix(components, ranks, make_panel):
    panel = make_panel(components["per-benchmark"], FITS["per-benchmark"][1], ranks=ranks)
    np.testing.assert_array_equal(panel.dominance_image.image, ranks.ordered_dominance)
    empty = make_panel(components["per-benchmark"], FITS["per-benchmark"][1])
    assert empty.dominance_image is None


def test_exports(components, ranks, make_panel, tmp_path):
    panel = make_panel(components["pooled"], FITS["pooled"][1], ranks=ranks)
    panel.wait_for_frontier()
    for name in panel.plots():
        png = panel.export_plot(name, tmp_path / f"{name}.png")
        svg = panel.export_plot(name, tmp_path / f"{name}.svg")
        img = QImage(str(png))
        assert not img.isNull() and img.width() >= 800
        assert "<svg" in svg.read_text(encoding="utf-8")[:2000]
    with pytest.raises(ValueError, match=".png or .svg"):
        panel.export_plot("Cost frontier", tmp_path / "x.jpg")
    prices = panel.export_table("Prices per benchmark", tmp_path / "prices.csv")
    rows = list(csv.reader(prices.open(encoding="utf-8")))
    assert rows[0] == ["benchmark", "USD per trial"]
    assert rows[1][0] == "benchmark with a very long name number 0"  # full name, not the elided one
    curves = list(csv.DictReader(panel.export_curves_csv(tmp_path / "curves.csv").open(encoding="utf-8")))
    tasks = [r for r in curves if r["over"] == "n_tasks"]
    np.testing.assert_array_equal([float(r["median"]) for r in tasks], panel.view.curves["n_tasks"].median)
    front = list(csv.DictReader(panel.export_frontier_csv(tmp_path / "front.csv").open(encoding="utf-8")))
    assert len(front) == panel.frontier.cost.size
    assert sum(int(r["pareto"]) for r in front) == len(panel.frontier.pareto)


def test_panel_writes_a_shared_state_and_stops_listening_when_deleted(components, qtbot):
    comps = components["per-benchmark"]
    state = AnalysisState(n_tasks=30, n_scaffolds=2, observed={"n_tasks": 30.0})
    panel = DStudyPanel(DStudyModel(comps), DStudyDesign(n_tasks=30, n_scaffolds=2), state=state)  # deleted below
    assert len(state.events) == 1
    panel.sliders["n_scaffolds"].setValue(4)
    assert state.n_scaffolds == 5.0
    panel.deleteLater()
    qtbot.waitUntil(lambda: len(state.events) == 0, timeout=5000)
    assert wait_for_background_jobs(120)
    state.update(n_tasks=70)  # no callback into a deleted widget


def test_redraw_is_fast_enough(components, make_panel):
    """A smoke check of bench/bench_slider.py: core + drawing well under 100 ms per move on a busy CI box."""
    panel = make_panel(components["pooled"], FITS["pooled"][1])
    for pos in range(0, 150, 15):
        panel.sliders["n_tasks"].setValue(pos)
        panel.redraw_now()
    core_ms, draw_ms = np.median(np.array(panel.timings[-10:]), axis=0)
    assert core_ms + draw_ms < 100, (core_ms, draw_ms)
    assert math.isfinite(core_ms)


@pytest.mark.parametrize("per_chain", [250, 1350])
def test_a_fit_stopped_by_the_gate_draws_core_numbers_at_its_length(make_panel, per_chain):
    """The run length of the default sampler is set by the gate: 4 chains x a multiple of 50
    draws, not 4 x 700.  The panel shows core's numbers for whatever number of draws the fit has."""
    rng = np.random.default_rng(per_chain)
    n = 4 * per_chain
    comps = VarianceComponents.from_mapping({t: (v * np.exp(rng.normal(0, 0.25, n))) ** 2
                                             for t, v in PER_BENCHMARK_SD.items()}, source="gate-stopped fit")
    panel = make_panel(comps, FITS["per-benchmark"][1])
    assert panel.model.components.n_draws == n
    assert_panel_shows(panel, core_view(comps, panel))
