"""The run length in the app: by the convergence gate by default, fixed on request.

The Model tab's "Run length" box edits ``SamplerSettings.stop`` in the analysis state; the draws
box then means the minimum (gate) or the exact number (fixed), each rule with its own default;
the progress bar of a gate-stopped run says the total is the gate's projection.
"""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytestmark = pytest.mark.gui

from ddr_explorer.core.model.posterior import DEFAULT_DRAWS, DEFAULT_MIN_DRAWS_GATE, SamplerSettings  # noqa: E402
from ddr_explorer.core.model.stopping import GATE_PHASE  # noqa: E402
from ddr_explorer.core.session import AnalysisState  # noqa: E402
from ddr_explorer.gui.model_panel import ModelPanel  # noqa: E402


@pytest.fixture
def panel(qtbot):
    p = ModelPanel(AnalysisState())
    qtbot.addWidget(p)
    return p


def _choose(panel, stop):
    panel.stop_box.setCurrentIndex(panel.stop_box.findData(stop))


def test_the_gate_is_the_default_and_the_draws_are_its_minimum(panel):
    assert panel.stop_box.currentData() == "gate" == SamplerSettings().stop
    assert panel.draws_spin.value() == DEFAULT_MIN_DRAWS_GATE == 200
    assert panel.draws_label.text() == "Draws per chain (at least)"
    assert panel.state.sampler == {}  # the defaults: the CLI's, so both reuse one cached fit


def test_switching_the_rule_gives_each_its_own_default_draws(panel):
    _choose(panel, "fixed")
    assert panel.state.sampler == {"stop": "fixed"}
    assert panel.state.sampler_settings() == SamplerSettings(stop="fixed")
    assert panel.draws_spin.value() == DEFAULT_DRAWS == 700 and panel.draws_label.text() == "Draws per chain"
    panel.draws_spin.setValue(900)
    assert panel.state.sampler == {"stop": "fixed", "draws": 900}
    # back to the gate: 900 was a fixed length, not a minimum; the gate's own default returns
    _choose(panel, "gate")
    assert panel.state.sampler == {} and panel.draws_spin.value() == 200
    panel.draws_spin.setValue(300)
    assert panel.state.sampler_settings() == SamplerSettings(draws=300)


def test_a_ceiling_of_the_gate_goes_when_the_run_becomes_fixed(panel):
    panel.state.update(sampler={"max_draws": 1000, "warmup": 150})
    _choose(panel, "fixed")
    assert panel.state.sampler == {"stop": "fixed", "warmup": 150}  # a fixed run has no ceiling
    assert panel.message.text() == ""


def test_the_gate_phase_shows_the_projected_length(panel):
    panel.set_running(True)
    panel.show_progress("warmup", 300, 300, 0.0)
    assert panel.progress.format() == "Warmup: 300 / 300"
    panel.show_progress(GATE_PHASE, 200, 300, 4.0)
    assert panel.progress.format() == "Sampling until converged: 200 / ~300"  # ~: the gate's projection
    assert (panel.progress.value(), panel.progress.maximum()) == (200, 300)
    panel.show_progress(GATE_PHASE, 250, 250, 0.0)
    assert panel.progress.format() == "Sampling until converged: 250 draws"
    assert "Sampling until converged" in panel.log_text()
    panel.show_progress("sampling", 10, 700, 1.0)  # a fixed run: a fixed total
    assert panel.progress.format() == "Sampling: 10 / 700"
