"""Typed variance components of seed 003 Eq. 1 (the ddr preset's agent terms) open the agent D-study.

The dialog offers the objects the typed terms support (``core.reliability.objects_for_terms``) and sizes their
facets (steps and error categories as ``DStudyDesign.extra_facets``) in the app's words
(``core.formatting.facet_words``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from PySide6.QtWidgets import QFormLayout  # noqa: E402

from ddr_explorer.core.reliability import generalizability  # noqa: E402
from ddr_explorer.gui.components_entry import PRESETS, ComponentsEntryDialog  # noqa: E402
from ddr_explorer.gui.main_window import MainWindow  # noqa: E402

AGENT_SET = "Agent terms (DDR paper 2026, Eq. 1)"
VALUES = {"agent": 1.0, "task": 0.3, "step": 0.1, "error_category": 0.2, "task:agent": 0.5, "agent:step": 0.2,
          "agent:error_category": 0.4, "task:step": 0.1, "task:error_category": 0.1, "error_category:step": 0.05}


def _rows(dialog) -> dict[str, str]:
    """Visible label -> field object name of the "Design to study" box."""
    form = dialog.design_form
    out = {}
    for r in range(form.rowCount()):
        if form.isRowVisible(r):
            out[form.itemAt(r, QFormLayout.LabelRole).widget().text()] = \
                form.itemAt(r, QFormLayout.FieldRole).widget().objectName()
    return out


def _fill(dialog, values):
    for r in range(dialog.table.rowCount()):
        term = dialog.table.item(r, 0).text()
        dialog.table.item(r, 1).setText(repr(values[term]))


def _fill_agent_design(dialog):
    """The agent terms' values and a design of 10 agents x 40 tasks x 4 traces, 3 steps, 4 error categories."""
    _fill(dialog, VALUES)
    dialog.size_spins["n_tasks"].setValue(40)
    dialog.size_spins["n_replicates"].setValue(4)
    dialog.facet_spins["step"].setValue(3)
    dialog.facet_spins["error_category"].setValue(4)
    dialog.models_spin.setValue(10)


def test_agent_term_set_offers_the_agent_and_its_sizes(qtbot):
    dialog = ComponentsEntryDialog()
    qtbot.addWidget(dialog)
    box = dialog.object_box
    assert [box.itemData(i) for i in range(box.count())] == ["model", "system"]  # a blank table: the model objects
    dialog.preset_box.setCurrentIndex(dialog.preset_box.findData(AGENT_SET))
    scale, rows, _ = PRESETS[AGENT_SET]
    # seed 003 Eq. 1's ten terms; the seed gives only sigma2_a and sigma2_a:t (Table 1, % of total): blank
    assert scale == "variance" and set(dialog.typed_terms()) == set(VALUES) and all(v is None for v in rows.values())
    assert "Table 1" in dialog.message.text()
    assert [box.itemData(i) for i in range(box.count())] == ["agent"]
    shown = _rows(dialog)
    assert shown == {"Tasks": "size_n_tasks", "Replicates (traces per agent-task pair)": "size_n_replicates",
                     "Steps": "size_step", "Error categories": "size_error_category",
                     "Agents compared": "", "Price per trial": "", "Object": "object_box", "Claim": ""}
    with pytest.raises(ValueError, match="no value"):
        dialog.components()
    _fill_agent_design(dialog)
    d = dialog.design()
    assert d.object_of_measurement == "agent" and d.extra_facets == {"step": 3.0, "error_category": 4.0}
    assert (d.n_tasks, d.n_replicates, d.n_scaffolds, d.n_benchmarks, d.n_models) == (40, 4, 1, 1, 10)
    assert d.trial_count() == 10 * 40 * 4  # agents x tasks x traces
    # back to a model term set: the model objects and sizes again, no step or category size
    dialog.preset_box.setCurrentIndex(dialog.preset_box.findData("Pooled model terms (Hardy et al. 2026, Eq. 6)"))
    assert [box.itemData(i) for i in range(box.count())] == ["model", "system"]
    assert set(_rows(dialog)) == {"Tasks per benchmark", "Scaffolds per model", "Benchmarks",
                                  "Replicates (trials per cell)", "Models compared", "Price per trial", "Object",
                                  "Claim"}


def test_typed_agent_components_open_the_agent_dstudy(qtbot, monkeypatch):
    def fake_exec(dialog):
        dialog.preset_box.setCurrentIndex(dialog.preset_box.findData(AGENT_SET))
        _fill_agent_design(dialog)
        return ComponentsEntryDialog.Accepted

    monkeypatch.setattr(ComponentsEntryDialog, "exec", fake_exec)
    w = MainWindow()
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.posterior_shown):
        w.typed_components_action.trigger()
    panel = w.dstudy_panel
    assert w.state.object_of_measurement == "agent" and w.state.extra_facets == {"step": 3.0, "error_category": 4.0}
    assert panel.words["n_tasks"][0] == "Tasks" and panel.words["n_replicates"][2] == "traces per agent-task pair"
    assert panel.models_spin.value() == 10
    # the coefficient at the typed design, by hand (seed 003 Eq. 1): the agent's error terms over their sizes
    err = 0.5 / 40 + 0.2 / 3 + 0.4 / 4 + (math.pi ** 2 / 3) / (40 * 3 * 4 * 4)
    med = panel.view.readouts.coefficient.median
    assert med == pytest.approx(1.0 / (1.0 + err), rel=1e-12)
    assert med == pytest.approx(float(np.median(generalizability(panel.components, "agent", panel.view.design.sizes(),
                                                                 "relative"))), rel=1e-12)
