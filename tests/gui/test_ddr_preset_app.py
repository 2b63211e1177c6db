"""The app with the ``ddr`` preset (seed 003 Eq. 1): the object of measurement is the agent.

A ddr fit has an agent facet and no model term; the app used to keep "model" as the object and failed
("no variance component for the object 'model'").  The fit runs in the window's worker thread (not the
child process) so that the moment stand-in sampler of tests/batch_fakes.py replaces NUTS; the demo corpus
is resources/demo/failure-modes-SIMULATED.csv (its step and error_category facets).
"""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

import numpy as np  # noqa: E402

import ddr_explorer.gui.fit_flow as fit_flow  # noqa: E402
import ddr_explorer.gui.main_window as main_window  # noqa: E402
from ddr_explorer.core.corpus.io import load_corpus  # noqa: E402
from ddr_explorer.core.corpus.importers._common import resources_dir  # noqa: E402
from ddr_explorer.core.dstudy import DStudyModel, observed_design  # noqa: E402
from ddr_explorer.core.dstudy.curves import score_scale  # noqa: E402
from ddr_explorer.core.fitting import components_from_posterior, theta_from_posterior  # noqa: E402
from ddr_explorer.core.reliability import generalizability  # noqa: E402
from ddr_explorer.core.score_reliability import score_moments, score_reliability  # noqa: E402
from ddr_explorer.gui.main_window import MainWindow  # noqa: E402

SAMPLER = {"stop": "fixed", "draws": 20, "warmup": 10, "chains": 2}


def _fit(qtbot, w, path, model):
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(path)
    w.state.update(model=model, sampler=SAMPLER)
    assert w.start_fit()
    qtbot.waitUntil(lambda: not w.fitting, timeout=120_000)
    assert w.fit_result is not None, w.model_panel.log_text()


def _assert_agent_labels(panel):
    """The D-study panel of an agent fit shows the agent words, never the model ones."""
    from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel

    texts = [lab.text() for lab in panel.findChildren(QLabel)]
    texts += [box.title() for box in panel.findChildren(QGroupBox)]
    for form in panel.findChildren(QFormLayout):
        for r in range(form.rowCount()):
            item = form.itemAt(r, QFormLayout.LabelRole)
            if item is not None and item.widget() is not None:
                texts.append(item.widget().text())
    assert "Agents compared" in texts and "Tasks" in texts
    assert any(t.startswith("Replicates (traces per agent-task pair)") for t in texts)
    assert "Tasks across benchmarks within the budget" in texts
    for wrong in ("Models compared", "Tasks per benchmark", "Scaffolds per model", "Tasks per benchmark within the budget"):
        assert wrong not in texts, wrong
    assert panel.models_spin.toolTip().startswith("Agents compared")


def test_ddr_fit_shows_the_agent_dstudy_of_core(qtbot, fake_sampler, monkeypatch, tmp_path):
    monkeypatch.setattr(fit_flow, "FIT_IN_CHILD_PROCESS", False)
    path = resources_dir() / "demo" / "failure-modes-SIMULATED.csv"
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1300, 850)
    w.cache_dir = tmp_path / "cache"
    _fit(qtbot, w, path, "ddr")
    assert len(fake_sampler) == 1
    post = w.fit_result.posterior
    comp = components_from_posterior(post)
    assert "agent" in comp.facets and "model" not in comp.facets
    # the state follows the fit: agents, and the design the fit's facets see (core.dstudy.observed_design)
    corpus = load_corpus(path)
    want = observed_design(corpus, object_of_measurement="agent", claim="relative", facets=comp.facets)
    assert w.state.object_of_measurement == "agent"
    assert w.state.extra_facets == {"step": 3.0, "error_category": 4.0} == dict(want.extra_facets)
    panel = w.dstudy_panel
    box = panel.object_box
    assert [box.itemData(i) for i in range(box.count())] == ["agent"] and box.currentData() == "agent"
    # D-study numbers: core's, for the agent object at the observed design
    d = panel.view.design
    assert d.object_of_measurement == "agent" and d.sizes() == want.sizes()
    core_view = DStudyModel(comp, scale=score_scale(comp)).view(want, panel.grids, w.state.effective_target,
                                                                overs=panel.curve_fields)
    assert panel.view.readouts.coefficient.median == pytest.approx(core_view.readouts.coefficient.median, rel=1e-12)
    # per draw, on success rates (core.score_reliability), with the latent Erho2 (seed 003's figure) beside it
    per_draw = score_reliability(comp, score_moments(comp, "agent"), want.sizes(), "relative")
    assert panel.view.readouts.coefficient.median == pytest.approx(float(np.median(per_draw)), rel=1e-9)
    latent = generalizability(comp, "agent", want.sizes(), "relative")
    assert panel.view.readouts.latent.coefficient.median == pytest.approx(float(np.median(latent)), rel=1e-9)
    for f, curve in core_view.curves.items():
        np.testing.assert_allclose(panel.view.curves[f].median, curve.median, rtol=1e-12)
    assert not panel.message.text()
    # no benchmark facet: the task facet holds every benchmark's tasks, and the words say so; the words of the
    # sizes are core's (core.formatting.facet_words), the CLI's and the sheet's: agents, traces, error categories
    assert panel.words["n_tasks"][0] == "Tasks" and any(k.endswith(" vs tasks") for k in panel.plots())
    _assert_agent_labels(panel)
    # the design compares the corpus's 10 agents (model-scaffold pairs), each run once
    assert w.state.n_models == 10 and panel.models_spin.value() == 10 and d.n_scaffolds == 1
    # Ranks of the agents (model / scaffold pairs), core's
    theta, names = theta_from_posterior(post, "agent")
    assert w.ranks_panel is not None and w.ranks_panel.ranks.models == names and len(names) == 10
    assert w.ranks_panel.caption.text().startswith("10 agents, ordered by global dominance")
    assert w.ranks_panel.table.horizontalHeaderItem(1).text() == "agent"
    # the Model tab's object box shows the agent too (it would set "model" back otherwise)
    assert w.model_panel.object_box.currentData() == "agent"
    # the capability-gap ratio of the Variance components tab is the agents' (seed 003)
    assert w.components_panel.gap_ratio is not None
    for tab in ("Variance components", "Ranks", "D-study"):  # every tab draws (screenshots to look at)
        w.tabs.setCurrentIndex(main_window.TABS.index(tab))
        qtbot.wait(200)
        out = tmp_path / f"ddr-{tab.replace(' ', '-').lower()}.png"
        w.grab().save(str(out))
        assert out.stat().st_size > 0

    # the DDR sheet from the app reports the agents at the state's design (steps and categories included)
    sheet = tmp_path / "ddr.pdf"
    with qtbot.waitSignal(w.sheet_written, timeout=300_000):
        assert w.export_ddr_sheet(sheet, date_invariant=True, analyses="skip")
    pypdf = pytest.importorskip("pypdf")
    text = " ".join(" ".join((p.extract_text() or "").split()) for p in pypdf.PdfReader(str(sheet)).pages)
    assert "Object of measurement: agent." in text and "; 10 agents, 40 posterior draws" in text
    assert ("Observed design: 40 tasks \u00d7 4 traces per agent-task pair \u00d7 3 steps \u00d7 4 error categories"
            in text)
    assert "scaffolds per model" not in text and "Models compared" not in text

    # a pooled fit afterwards measures models again, on the corpus's plain design
    _fit(qtbot, w, path, "pooled")
    assert w.state.object_of_measurement == "model" and w.state.extra_facets == {}
    box = w.dstudy_panel.object_box
    assert [box.itemData(i) for i in range(box.count())] == ["model", "system"]
    assert w.ranks_panel.caption.text().startswith("5 models,")
    plain = observed_design(corpus)
    assert w.dstudy_panel.view.design.sizes() == plain.sizes()


def test_ddr_preview_draws_the_agent_dstudy(qtbot, fake_sampler, monkeypatch, tmp_path):
    """The D-study preview (point estimates, before any fit) of the ddr preset measures agents too."""
    import dataclasses

    from ddr_explorer.core.analyses.failure_sim import DEMO, simulate_failure_table

    small = dataclasses.replace(DEMO, n_models=2, n_scaffolds=2, n_benchmarks=2, n_tasks=4, n_steps=2, n_trials=2)
    path = tmp_path / "small-failure-SIMULATED.csv"
    simulate_failure_table(small, seed=5).to_csv(path, index=False)
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1300, 850)
    w.cache_dir = tmp_path / "cache"
    w.tabs.setCurrentIndex(main_window.TABS.index("D-study"))  # the preview is drawn when its tab is on screen
    shown = []
    w.preview_shown.connect(shown.append)
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(path)
    w.state.update(model="ddr")
    qtbot.waitUntil(lambda: any("agent" in p.components.facets for p in shown), timeout=120_000)
    qtbot.waitUntil(lambda: w.dstudy_panel is not None and "agent" in w.dstudy_panel.components.facets,
                    timeout=10_000)
    panel = w.dstudy_panel
    assert w.state.object_of_measurement == "agent" and panel.object_box.currentData() == "agent"
    assert w.state.extra_facets == {"step": 2.0, "error_category": 4.0}
    want = observed_design(load_corpus(path), object_of_measurement="agent", facets=panel.components.facets)
    assert panel.view.design.sizes() == want.sizes() and not panel.message.text()
    _assert_agent_labels(panel)
    assert panel.view.readouts.coefficient.median == pytest.approx(
        float(np.median(generalizability(panel.components, "agent", want.sizes(), "relative"))), rel=1e-9)
