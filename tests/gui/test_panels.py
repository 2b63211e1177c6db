"""Components, ranks and corpus panels, the typed-components dialog and the main window's hosting.

Each panel is checked against the core function that computes its numbers,
and every plot and table is exported (PNG, SVG, CSV) and read back.
"""

from __future__ import annotations

import csv
import json
import math
import sys

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QObject, Signal  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402

from ddr_explorer.core.components_io import read_components  # noqa: E402
from ddr_explorer.core.corpus.io import load_corpus  # noqa: E402
from ddr_explorer.core.design import coverage_matrix  # noqa: E402
from ddr_explorer.core.dstudy import DStudyDesign  # noqa: E402
from ddr_explorer.core.inspection import format_summary, inspect_corpus  # noqa: E402
from ddr_explorer.core.ranks import rank_analysis  # noqa: E402
from ddr_explorer.core.reliability import (VarianceComponents, capability_gap_ratio, summarize,  # noqa: E402
                                           variance_shares)
from ddr_explorer.gui import plots  # noqa: E402
from ddr_explorer.core.files import demo_corpus_path  # noqa: E402
from ddr_explorer.gui.components_entry import PRESETS, ComponentsEntryDialog  # noqa: E402
from ddr_explorer.gui.components_panel import ComponentsPanel  # noqa: E402
from ddr_explorer.gui.corpus_panel import CorpusPanel, connectivity_lines  # noqa: E402
from ddr_explorer.gui.main_window import TABS, MainWindow  # noqa: E402
from ddr_explorer.gui.ranks_panel import RanksPanel  # noqa: E402

S = 4000
SD = {"task": 3.0, "model": 1.74, "scaffold": 0.37, "task:model": 1.39, "task:scaffold": 1.11,
      "model:scaffold": 0.46}
LONG = "a-model-name-that-is-far-too-long-for-any-axis-label-v2.5-preview-2026-01-01"


@pytest.fixture(scope="module")
def components():
    rng = np.random.default_rng(11)
    return VarianceComponents.from_mapping({t: (v * np.exp(rng.normal(0, 0.2, S))) ** 2 for t, v in SD.items()},
                                           source="synthetic per-benchmark fit")


@pytest.fixture(scope="module")
def theta_names():
    rng = np.random.default_rng(12)
    names = [f"model {k}" for k in range(11)] + [LONG]
    theta = rng.normal(0, 1.3, len(names))[None, :] + rng.normal(0, 0.4, (S, len(names)))
    return theta, names


@pytest.fixture(scope="module")
def demo():
    corpus = load_corpus(demo_corpus_path())
    return corpus, inspect_corpus(corpus)


def _cell(table, r, c):
    it = table.item(r, c)
    full = it.data(0x0100)
    return full if full is not None else it.text()


def _read_csv(path):
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


def _check_exports(panel, tmp_path):
    for name in panel.plots():
        png = panel.export_plot(name, tmp_path / f"{name}.png")
        assert not QImage(str(png)).isNull()
        svg = panel.export_plot(name, tmp_path / f"{name}.svg")
        assert "<svg" in svg.read_text(encoding="utf-8")[:2000]
    for name, table in panel.tables().items():
        out = panel.export_table(name, tmp_path / f"{name}.csv")
        rows = _read_csv(out)
        assert len(rows) == table.rowCount() + 1 and len(rows[0]) == table.columnCount()


# ---------------------------------------------------------------------------
# Variance components
# ---------------------------------------------------------------------------

def test_components_panel_shows_core_summaries(qtbot, components, tmp_path):
    panel = ComponentsPanel(components)
    qtbot.addWidget(panel)
    panel.show()
    shares = variance_shares(components)
    terms = [*components.terms, "residual"]
    assert [_cell(panel.table, r, 0) for r in range(panel.table.rowCount())] == terms
    for r, t in enumerate(terms):
        s = summarize(components.draws[t] if t != "residual" else components.residual)
        sh = summarize(shares[t])
        got = [_cell(panel.table, r, c) for c in range(1, 7)]
        np.testing.assert_allclose(got, [s.median, *s.hdi95, sh.median, *sh.hdi95], rtol=1e-12)
    # the bars are the median shares, the error bars their 95% HDIs
    opts = panel.share_bars.opts
    np.testing.assert_allclose(opts["width"], [summarize(shares[t]).median for t in terms], rtol=1e-12)
    lo = np.array([summarize(shares[t]).hdi95[0] for t in terms])
    np.testing.assert_allclose(panel.share_errors.opts["left"], opts["width"] - lo, rtol=1e-12)
    g = summarize(capability_gap_ratio(components, "model"))
    assert plots.fmt_interval(g.median, *g.hdi95) in panel.caption.text()
    _check_exports(panel, tmp_path)
    rows = _read_csv(tmp_path / "Variance components.csv")
    assert rows[0][:2] == ["term", "median sigma^2"]
    assert float(rows[1][1]) == summarize(components.draws[terms[0]]).median  # full precision in the CSV


# ---------------------------------------------------------------------------
# Ranks
# ---------------------------------------------------------------------------

def test_ranks_panel_draws_core_rank_analysis(qtbot, theta_names, tmp_path):
    theta, names = theta_names
    ra = rank_analysis(theta, names)
    panel = RanksPanel(ra)
    qtbot.addWidget(panel)
    panel.show()
    order = ra.order
    assert [_cell(panel.table, r, 1) for r in range(panel.table.rowCount())] == ra.ordered_models
    np.testing.assert_allclose([_cell(panel.table, r, 2) for r in range(len(names))], ra.ranks.mean_rank[order])
    np.testing.assert_allclose([_cell(panel.table, r, 6) for r in range(len(names))], ra.global_dominance[order])
    # the tier column: core's tiers (not told apart from the tier's first), as `ddr compare --all`
    from ddr_explorer.core.rank_tiers import tiers_from_dominance

    tiers = tiers_from_dominance(ra.dominance, ra.models, ra.order)
    want = {n: k for k, t in enumerate(tiers.tiers, start=1) for n in t}
    assert [_cell(panel.table, r, 7) for r in range(len(names))] == [want[n] for n in ra.ordered_models]
    assert tiers.sentence() in panel.table.horizontalHeaderItem(7).toolTip()
    e = panel.interval_errors.opts
    np.testing.assert_allclose(e["x"] - e["left"], ra.ranks.interval95[order, 0])
    np.testing.assert_allclose(e["x"] + e["right"], ra.ranks.interval95[order, 1])
    mx, _ = panel.mean_points.getData()
    np.testing.assert_allclose(mx, ra.ranks.mean_rank[order])
    np.testing.assert_array_equal(panel.dominance_image.image, ra.ordered_dominance)
    # a long name is elided on the axis but whole in the table and the CSV
    left = panel.interval_plot.getPlotItem().getAxis("left")
    labels = [lab for _, lab in left._tickLevels[0]]
    assert all(len(lab) <= plots.MAX_LABEL_CHARS + 4 for lab in labels)
    _check_exports(panel, tmp_path)
    assert LONG in [row[1] for row in _read_csv(tmp_path / "Ranks.csv")]


# ---------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------

def test_corpus_panel_shows_summary_coverage_and_connectivity(qtbot, demo, tmp_path):
    corpus, summary = demo
    panel = CorpusPanel(corpus, summary)
    qtbot.addWidget(panel)
    panel.show()
    assert panel.summary_view.toPlainText() == format_summary(summary)
    cov = coverage_matrix(corpus)
    want = cov.trials.to_numpy(dtype=float)
    np.testing.assert_array_equal(panel.coverage_image.image, np.where(want > 0, want, np.nan))
    assert panel.benchmark_box.count() == 1 + len(summary["per_benchmark"])
    bench = next(iter(summary["per_benchmark"]))
    panel.set_benchmark(bench)
    assert panel.coverage.benchmark == bench
    panel.measure_box.setCurrentIndex(1)  # tasks per agent
    tasks = coverage_matrix(corpus, bench).tasks.to_numpy(dtype=float)
    np.testing.assert_array_equal(panel.coverage_image.image, np.where(tasks > 0, tasks, np.nan))
    text = panel.connectivity_view.text()
    for line in connectivity_lines(summary):
        assert line.split(":")[0].replace("&", "&amp;") in text
    with pytest.raises(ValueError, match="not in the corpus"):
        panel.set_benchmark("no such benchmark")
    _check_exports(panel, tmp_path)
    rows = _read_csv(panel.export_coverage_csv(tmp_path / "coverage.csv"))
    assert rows[0] == ["model", *[str(a) for a in cov.tasks.columns]]
    assert [int(x) for x in rows[1][1:]] == [int(x) for x in tasks[0]]


def test_connectivity_lines_of_a_one_benchmark_corpus(demo):
    """The demo corpus has one benchmark: the panel says so and lists no articulation vertex."""
    _, summary = demo
    lines = connectivity_lines(summary)
    assert "The design has one benchmark (articulation vertices do not apply)." in lines
    assert not any(line.startswith("Articulation vertices") for line in lines)
    two = dict(summary, n_benchmarks=2, articulation_vertices=["benchmark:B1"])
    assert "Articulation vertices (removing one splits the design): benchmark:B1" in connectivity_lines(two)


def test_empty_corpus_panel(qtbot):
    panel = CorpusPanel()
    qtbot.addWidget(panel)
    assert panel.summary_view.toPlainText() == "" and not panel.benchmark_box.isEnabled()


# ---------------------------------------------------------------------------
# Typed-in components
# ---------------------------------------------------------------------------

VALUES = {"task": 3.0, "model": 1.74, "scaffold": 0.37, "task:model": 1.39, "task:scaffold": 1.11,
          "model:scaffold": 0.46}


@pytest.mark.parametrize("scale, header", [("sd", "sigma"), ("variance", "sigma2")])
def test_typed_components_equal_read_components(qtbot, tmp_path, scale, header):
    dialog = ComponentsEntryDialog(rows=VALUES, scale=scale)
    qtbot.addWidget(dialog)
    typed = dialog.components()
    path = tmp_path / "components.csv"
    path.write_text(f"term,{header}\n" + "".join(f"{t},{v!r}\n" for t, v in VALUES.items()))
    read = read_components(path)
    assert typed.terms == read.terms
    for t in read.terms:
        np.testing.assert_array_equal(typed.draws[t], read.draws[t])
    np.testing.assert_array_equal(typed.residual, read.residual)


def test_typed_residual_matches_a_json_file(qtbot, tmp_path):
    dialog = ComponentsEntryDialog(rows={"model": 0.78, "task:model": 0.9}, scale="sd")
    qtbot.addWidget(dialog)
    dialog.residual_edit.setText("1.5")
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"scale": "sd", "components": {"model": 0.78, "task:model": 0.9}, "residual": 1.5}))
    np.testing.assert_array_equal(dialog.components().residual, read_components(path).residual)


def test_typed_components_errors_name_the_row(qtbot):
    dialog = ComponentsEntryDialog(rows={"model": 1.0})
    qtbot.addWidget(dialog)
    r = dialog.add_row("task:model", None)
    dialog.table.item(r, 1).setText("abc")
    with pytest.raises(ValueError, match=r"row 2 \(task:model\), column value: 'abc' is not a number"):
        dialog.components()
    dialog.table.item(r, 1).setText("-1")
    with pytest.raises(ValueError, match="cannot be negative"):
        dialog.components()
    dialog.accept()  # refuses to close and says why
    assert dialog.result() == 0 and "negative" in dialog.message.text()
    dialog.table.item(r, 1).setText("0.5")
    # the objects are those the typed terms support (core.reliability.objects_for_terms): no system without
    # scaffold terms
    box = dialog.object_box
    assert [box.itemData(i) for i in range(box.count())] == ["model"]
    dialog.add_row("model:scaffold", 0.2)
    assert [box.itemData(i) for i in range(box.count())] == ["model", "system"]
    box.setCurrentIndex(1)
    assert dialog.design().object_of_measurement == "system"
    dialog.table.removeRow(2)
    assert [box.itemData(i) for i in range(box.count())] == ["model"] and box.currentData() == "model"


def test_presets_and_design(qtbot):
    dialog = ComponentsEntryDialog()
    qtbot.addWidget(dialog)
    name = "Hardy et al. 2026, Table 8 (pooled, posterior means)"
    dialog.preset_box.setCurrentIndex(dialog.preset_box.findData(name))
    scale, rows, sizes = PRESETS[name]
    assert dialog.values() == rows and dialog.scale == scale
    dialog.models_spin.setValue(12)
    d = dialog.design()
    assert d == DStudyDesign(n_tasks=50, n_scaffolds=1, n_benchmarks=9, n_replicates=1, n_models=12, price_per_trial=0.0)


# ---------------------------------------------------------------------------
# The main window hosts the panels
# ---------------------------------------------------------------------------

@pytest.fixture
def window(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1200, 800)
    return w


def test_show_posterior_fills_the_tabs(window, qtbot, components, theta_names):
    theta, names = theta_names
    assert [window.tabs.tabText(k) for k in range(window.tabs.count())] == list(TABS)
    observed = DStudyDesign(n_tasks=89, n_scaffolds=3, n_replicates=5, n_models=len(names))
    with qtbot.waitSignal(window.posterior_shown):
        window.show_posterior(components, theta, names, observed)
    assert window.tabs.currentIndex() == TABS.index("D-study")
    assert window.components_panel.components is components
    assert window.ranks_panel.ranks.models == names
    dp = window.dstudy_panel
    assert dp.state is window.state and window.state.observed == {"n_tasks": 89.0, "n_scaffolds": 3.0,
                                                                  "n_benchmarks": 1.0, "n_replicates": 5.0}
    np.testing.assert_array_equal(dp.dominance_image.image, window.ranks_panel.ranks.ordered_dominance)
    # a second posterior replaces the panels; the old D-study panel stops listening to the state
    with qtbot.waitSignal(window.posterior_shown):
        window.show_posterior(components)
    assert window.ranks_panel is None and window.dstudy_panel is not dp
    # the listeners left: the new D-study panel and the model panel
    qtbot.waitUntil(lambda: len(window.state.events) == 2, timeout=5000)


def test_typed_components_open_the_dstudy(window, qtbot, monkeypatch):
    def fake_exec(dialog):
        dialog.set_rows(VALUES, "sd")
        dialog.size_spins["n_tasks"].setValue(120)
        return ComponentsEntryDialog.Accepted

    monkeypatch.setattr(ComponentsEntryDialog, "exec", fake_exec)
    with qtbot.waitSignal(window.posterior_shown):
        window.typed_components_action.trigger()
    dp = window.dstudy_panel
    assert dp.components.source == "typed-in components" and dp.components.n_draws == 1
    assert dp.view.design.n_tasks == 120.0
    assert window.ranks_panel is None


def test_corpus_load_sets_the_state_and_session_round_trip(window, qtbot, tmp_path, components):
    with qtbot.waitSignal(window.corpus_loaded, timeout=30_000):
        window.open_corpus(demo_corpus_path())
    assert window.state.observed == {"n_tasks": 89.0, "n_scaffolds": 3.0, "n_benchmarks": 1.0, "n_replicates": 5.0}
    assert window.corpus_panel.coverage is not None
    window.show_posterior(components)
    window.dstudy_panel.sliders["n_tasks"].setValue(5)
    window.state.update(target=0.8, budget=100.0)
    path = window.save_analysis(tmp_path / "a.ddr.json")
    saved = window.state.to_dict()
    other = MainWindow()
    qtbot.addWidget(other)
    with qtbot.waitSignal(other.corpus_loaded, timeout=30_000):
        other.open_analysis(path)
    assert other.state.to_dict() == saved  # the saved design wins over the corpus defaults


def test_refcount_guard_keeps_the_interpreter_alive():
    """PySide6 6.12.0 drops a reference to True per emit and to None per void call; the guard absorbs it."""
    class Emitter(QObject):
        ping = Signal()

    e = Emitter()
    for _ in range(5000):  # more than the ~600 references True starts with
        e.ping.emit()
        e.setObjectName("x")
    assert sys.getrefcount(True) > 0 and sys.getrefcount(None) > 0
    if plots.PYSIDE_REFCOUNT_GUARD:
        assert sys.getrefcount(True) > 1 << 39


def test_throttle_runs_leading_and_trailing_calls(qtbot):
    calls = []
    t = plots.Throttle(lambda: calls.append(1), 30)
    t()
    assert len(calls) == 1  # the first request runs at once
    for _ in range(10):
        t()
    assert len(calls) == 1 and t.pending
    qtbot.waitUntil(lambda: len(calls) == 2, timeout=2000)
    qtbot.wait(80)
    assert len(calls) == 2  # ten requests collapsed into one trailing call


def test_elide_keeps_both_ends():
    assert plots.elide("short") == "short"
    e = plots.elide(LONG, 24)
    assert len(e) == 24 and e.startswith(LONG[:11]) and e.endswith(LONG[-12:])
    assert plots.fmt_count(math.inf) == "never"
