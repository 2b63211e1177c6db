"""The sheet answers the cost questions at the design the app's D-study tab shows.

The screen's three cost answers (tasks for the target, the cheapest design for it, the best design within
the budget) are computed at the sliders' design: its sizes, its trials per cell, its prices.  The sheet
must print the same answers for the same what-if, and say at how many trials per cell each cost holds,
instead of answering at the observed 5 trials per cell without saying so.  Both are computed here through
the core calls each surface makes (gui/dstudy_panel.py: ``budget_search`` with the observed design as the
grid's reference and ``DStudyModel.readouts``; the sheet: ``report_inputs_from`` -> ``sheet_content``).
"""

from __future__ import annotations

import numpy as np
import pytest

from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.dstudy import DStudyModel, budget_search
from ddr_explorer.core.dstudy.curves import score_scale
from ddr_explorer.core.files import demo_corpus_path
from ddr_explorer.core.formatting import facet_words, fmt_design, fmt_n
from ddr_explorer.core.reliability import VarianceComponents
from ddr_explorer.core.report import report_inputs_from, sheet_content
from ddr_explorer.core.report.answer_design import examined_from_sizes
from ddr_explorer.core.session import AnalysisState

BENCH = "terminal-bench-2.0"
#: The what-if of the issue: 39 tasks, 2 scaffolds, 3 trials per cell, target 0.875, $5,000, $0.80 per trial.
WHAT_IF = {"n_tasks": 39.0, "n_scaffolds": 2.0, "n_replicates": 3.0}
TARGET, BUDGET, PRICE = 0.875, 5000.0, 0.8


@pytest.fixture(scope="module")
def demo():
    """The demo corpus and components of its per-benchmark fit's shape (draws by hand, no sampler)."""
    rng = np.random.default_rng(7)
    scale = {"task": 3.0, "model": 0.9, "scaffold": 0.1, "task:model": 1.1, "task:scaffold": 0.3,
             "model:scaffold": 0.05}
    draws = {t: v * rng.gamma(40.0, 1 / 40.0, 400) for t, v in scale.items()}
    c = VarianceComponents.from_mapping(draws, intercept=rng.normal(-0.4, 0.1, 400), source="hand-made draws")
    return load_corpus(demo_corpus_path()), c


def _state(corpus, c) -> AnalysisState:
    st = AnalysisState.from_corpus(corpus)
    st.follow_fit(c, corpus)
    st.update(**WHAT_IF, target=TARGET, budget=BUDGET, prices={BENCH: PRICE})
    return st


def _screen(c, st: AnalysisState):
    """What the D-study tab computes for the state (gui/dstudy_panel.py's calls)."""
    model = DStudyModel(c, scale=score_scale(c))  # success rates where the fit allows it (gui/main_window.py)
    search = budget_search(c, st.design(), target=st.effective_target, budget=st.budget,
                           reference=st.observed_design(), scale=model.scale)
    return search, model.readouts(st.design(), st.effective_target).required


def test_the_sheet_gives_the_screens_three_cost_answers_for_the_same_what_if(demo):
    corpus, c = demo
    st = _state(corpus, c)
    assert st.observed_design().n_replicates == 5  # the corpus ran 5 trials per cell; the screen asks for 3
    search, required = _screen(c, st)
    ct = sheet_content(report_inputs_from(corpus, components=c, examined_design=st.design(), target=st.target,
                                          budget=st.budget, prices=dict(st.prices)))
    words = facet_words(st.object_of_measurement, c.facets)
    for k_screen, k_sheet in ((search.cheapest, ct.search.cheapest), (search.best_in_budget, ct.search.best_in_budget)):
        assert k_screen is not None
        assert fmt_design(ct.search.design_at(k_sheet), "Erho2", words) == \
            fmt_design(search.design_at(k_screen), "Erho2", words)
    q = required.quantiles
    tasks = ct.decisions[0].answer
    assert f"About <b>{fmt_n(q[0.5])} tasks</b>" in tasks
    assert f"95% interval {fmt_n(q[0.025])}\u2013{fmt_n(q[0.975])}" in tasks
    assert "2 scaffolds per model and 3 trials per cell as in the design examined" in tasks
    assert f"{fmt_n(required.n_for_assurance(0.9))} tasks give 90% assurance" in tasks
    # every cost figure says its trials per cell: the frontier's (the what-if's) and the observed design's
    cost = ct.decisions[2].answer
    assert "On the cost frontier at 3 trials per cell" in cost and "(the design examined)" in cost
    assert "The observed design (5 trials per cell) costs" in cost


def test_without_a_what_if_the_sheet_answers_at_the_observed_design_and_says_its_trials(demo):
    corpus, c = demo
    st = AnalysisState.from_corpus(corpus)
    st.follow_fit(c, corpus)
    st.update(target=TARGET, budget=BUDGET, prices={BENCH: PRICE})
    search, required = _screen(c, st)
    ct = sheet_content(report_inputs_from(corpus, components=c, target=TARGET, budget=BUDGET,
                                          prices={BENCH: PRICE}))
    assert ct.search.design_at(ct.search.best_in_budget) == search.design_at(search.best_in_budget)
    assert f"About <b>{fmt_n(required.quantiles[0.5])} tasks</b>" in ct.decisions[0].answer
    assert "3 scaffolds per model and 5 trials per cell as observed" in ct.decisions[0].answer
    assert "On the cost frontier at 5 trials per cell and" in ct.decisions[2].answer


def test_ddr_report_sizes_make_the_same_what_if_as_the_apps_sliders(demo):
    corpus, c = demo
    st = _state(corpus, c)
    inputs = report_inputs_from(corpus, components=c, target=TARGET, budget=BUDGET, prices=PRICE,
                                examined_sizes=WHAT_IF)
    assert inputs.prices == {BENCH: PRICE}
    e = inputs.examined_design
    assert (e.effective_n_tasks, e.n_scaffolds, e.n_replicates) == (39.0, 2.0, 3.0)
    assert e.cost() == st.design().cost()
    with pytest.raises(ValueError, match="n_replicates should be at least 1, got 0"):
        examined_from_sizes(inputs.observed_design, {"n_replicates": 0})
