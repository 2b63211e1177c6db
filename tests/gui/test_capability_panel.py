"""The Capability tab draws core's capability and transfer results as they are (numbers from
core.analyses.capability / transfer on hand-made draws, no sampler); the window runs them in the
background and cancels."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from ddr_explorer.core.analyses.capability import (CapabilityStudy, IrtFit, _ability_table, _gate,  # noqa: E402
                                                   _item_table, capability_lines, irt_cells)
from ddr_explorer.core.analyses.transfer import transfer_from_posteriors, transfer_lines  # noqa: E402
from ddr_explorer.core.corpus.validate import build_corpus  # noqa: E402
from ddr_explorer.core.files import demo_corpus_path  # noqa: E402
from ddr_explorer.gui.capability_panel import CapabilityPanel  # noqa: E402
from ddr_explorer.gui.main_window import TABS, MainWindow  # noqa: E402


def capability_dict():
    rng = np.random.default_rng(0)
    rows = [dict(benchmark="b", task=f"t{t}", model=f"m{m}", scaffold="s", successes=int(rng.integers(0, 4)), trials=3)
            for m in range(5) for t in range(12)]
    cells = irt_cells(build_corpus(pd.DataFrame(rows), file=None, format="simulated", name="gui"))
    theta = np.arange(5.0)[None, None, :] - 2 + 0.3 * rng.standard_normal((2, 100, 5))
    theta -= theta.mean(-1, keepdims=True)
    beta = rng.standard_normal((2, 100, 12)) * 0.2 + np.linspace(-1, 1, 12)
    sig = {"sigma_theta": np.abs(rng.standard_normal((2, 100))) + 1}
    fit = IrtFit("1pl", cells, theta, beta, None, sig, _gate({"theta": theta, "beta": beta, **sig}, 0, 200))
    st = CapabilityStudy("best-scaffold", {"1pl": fit}, {"1pl": _ability_table(fit, cells.parts())},
                         {"1pl": _item_table(fit)}, [cells.subjects])
    return st.to_dict()


def fake_posterior(u, sigma_model, sigma_tm, names):
    s = u.shape[0]
    return SimpleNamespace(sigma={"model": np.full((1, s), sigma_model), "task:model": np.full((1, s), sigma_tm)},
                           random_effects={"model": u[None]}, levels={"model": pd.DataFrame({"model": names})},
                           diagnostics=SimpleNamespace(converged=True))


def transfer_dict():
    names = ["a1", "b1", "c1", "d1"]
    u = np.array([0.0, 1.0, 2.0, 3.0]) + 0.1 * np.random.default_rng(1).standard_normal((50, 4))
    posts = {"x": fake_posterior(u, 1.0, 1.0, names), "y": fake_posterior(-u, 0.5, 1.0, names)}
    return transfer_from_posteriors(posts).to_dict()


def test_capability_panel_draws_cores_numbers(qtbot, tmp_path):
    cap, tr = capability_dict(), transfer_dict()
    panel = CapabilityPanel({"capability": cap, "transfer": tr})
    qtbot.addWidget(panel)
    ab = cap["models"]["1pl"]["abilities"]
    x, y = panel.ability_points.getData()
    np.testing.assert_allclose(x, [r["median"] for r in ab])
    assert y[0] == len(ab)  # best at the top
    e = panel.ability_errors.opts
    np.testing.assert_allclose(e["x"] - e["left"], [r["lower90"] for r in ab])
    np.testing.assert_allclose(e["x"] + e["right"], [r["upper90"] for r in ab])
    assert [panel.ability_table.item(r, 0).data(0x0100) for r in range(5)] == [r["subject"] for r in ab]
    items = cap["models"]["1pl"]["items"]
    n_bad = cap["models"]["1pl"]["n_misfit"]
    assert len(panel.item_points.getData()[0]) + len(panel.misfit_points.getData()[0]) == len(items)
    assert panel.misfit_table.rowCount() == n_bad == len(panel.misfit_points.getData()[0])
    gx, gy = panel.gap_points.getData()
    np.testing.assert_allclose(gy, [0.5, 0.2])  # 1 / (1 + 1) and 0.25 / (0.25 + 1)
    assert panel.pairs_table.item(0, 2).data(0x0100) == pytest.approx(tr["pairs"][0]["rho_median"])
    assert tr["pairs"][0]["rho"] == pytest.approx(-1.0)
    text = panel.summary.text()
    for line in capability_lines(cap) + transfer_lines(tr):
        assert line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in text
    for name in panel.plots():
        assert panel.export_plot(name, tmp_path / f"{name}.png").stat().st_size > 0
    for name in panel.tables():
        rows = panel.export_table(name, tmp_path / f"{name}.csv").read_text().splitlines()
        assert len(rows) == panel.tables()[name].rowCount() + 1


def test_capability_runs_in_the_background_and_cancels(qtbot, tmp_path):
    w = MainWindow()
    qtbot.addWidget(w)
    w.cache_dir = tmp_path
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):  # two benchmarks: one scale across them
        w.open_corpus(demo_corpus_path().with_name("failure-modes-SIMULATED.csv"))
    w.state.update(sampler={"stop": "fixed", "draws": 10, "warmup": 10, "chains": 1})
    with qtbot.waitSignal(w.analyses_failed, timeout=600_000) as blocker:
        assert w.start_capability()
        assert not w.start_fit()  # one long job at a time
        w.model_panel.cancel_button.click()
    assert "cancel" in blocker.args[0].lower()
    assert w.capability_panel is None and w.tabs.tabText(TABS.index("Capability")) == "Capability"
