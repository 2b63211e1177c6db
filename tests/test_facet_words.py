"""One source of the words of a design's sizes: ``core.formatting.facet_words``.

The app's D-study panel, ``ddr dstudy``'s text and the DDR sheet word a fit's sizes by its facets and object: a
pooled model fit (seed 000 Eq. 6) has tasks per benchmark, scaffolds per model and benchmarks; a fit without a
benchmark facet (seed 000 Eq. 2 of one benchmark, seed 003 Eq. 1) has one task facet ("tasks"); seed 003's
agent fit compares agents, and its replicate is one trace of an agent on a task.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ddr_explorer.core.dstudy import DStudyDesign, DStudyModel
from ddr_explorer.core.dstudy.summary import dstudy_summary, format_dstudy
from ddr_explorer.core.formatting import facet_words, fmt_design, plural
from ddr_explorer.core.reliability import VarianceComponents, object_for_terms

DDR_TERMS = ("agent", "task", "step", "error_category", "task:agent", "agent:step", "agent:error_category",
             "task:step", "task:error_category", "error_category:step")
POOLED_TERMS = ("benchmark", "benchmark:task", "model", "scaffold", "benchmark:model", "benchmark:scaffold",
                "model:scaffold", "benchmark:task:model", "benchmark:task:scaffold", "benchmark:model:scaffold")
PER_BENCHMARK_TERMS = ("task", "model", "scaffold", "task:model", "task:scaffold", "model:scaffold")


def test_plural():
    assert [plural(w) for w in ("task", "error category", "day", "trace")] == \
        ["tasks", "error categories", "days", "traces"]
    assert plural("step", 1) == "step" and plural("step", 1.0) == "step" and plural("step", 0) == "steps"


def test_agent_fit_words():
    w = facet_words(object_for_terms(DDR_TERMS), DDR_TERMS)
    assert (w.object, w.objects, w.compared) == ("agent", "agents", "Agents compared")
    assert w.label("n_tasks") == "Tasks" and w.axis("task") == "tasks"  # no benchmark facet: one task facet
    assert w.axis("n_replicates") == w.axis("replicate") == "traces per agent-task pair"
    assert w.count("n_replicates", 1) == "1 trace per agent-task pair"
    assert w.count("error_category", 4) == "4 error categories" and w.count("step", 1) == "1 step"
    assert w.label("error_category") == "Error categories"
    assert w.sizes == ("n_tasks",)  # the agent holds its scaffold; there is no benchmark facet
    assert w.allocation == "Tasks across benchmarks"


def test_pooled_and_per_benchmark_words():
    pooled = facet_words("model", POOLED_TERMS)
    assert pooled.label("n_tasks") == "Tasks per benchmark" and pooled.count("n_tasks", 1) == "1 task per benchmark"
    assert pooled.axis("n_scaffolds") == "scaffolds per model" and pooled.count("n_benchmarks", 9) == "9 benchmarks"
    assert pooled.axis("n_replicates") == "trials per cell" and pooled.compared == "Models compared"
    assert pooled.sizes == ("n_tasks", "n_scaffolds", "n_benchmarks")
    assert pooled.allocation == "Tasks per benchmark"
    # seed 000 Eq. 2 is a model of one benchmark: its task facet is that benchmark's tasks
    one = facet_words("model", PER_BENCHMARK_TERMS)
    assert one.label("n_tasks") == "Tasks" and one.axis("n_scaffolds") == "scaffolds per model"
    assert one.sizes == ("n_tasks", "n_scaffolds")
    system = facet_words("system", PER_BENCHMARK_TERMS)
    assert (system.object, system.objects, system.compared) == ("system", "systems", "Models compared")
    assert system.sizes == ("n_tasks",)  # the system holds its scaffold
    # a frontier design in the fit's words
    d = {"n_tasks": 40, "n_scaffolds": 1, "n_benchmarks": 3, "cost": 12.0, "median": 0.8}
    assert fmt_design(d, "Erho2") == "40 tasks \u00d7 1 scaffold \u00d7 3 benchmarks: E\u03c1\u00b2 0.800, $12.00"
    assert fmt_design(d, "Erho2", facet_words("agent", DDR_TERMS)) == "40 tasks: E\u03c1\u00b2 0.800, $12.00"


def _ddr_components():
    vals = dict.fromkeys(DDR_TERMS, 0.1) | {"agent": 1.0, "task:agent": 0.5, "agent:step": 0.2,
                                            "agent:error_category": 0.4}
    return VarianceComponents.from_mapping(vals, source="typed")


def test_cli_text_of_an_agent_dstudy():
    """``ddr dstudy``'s text: the agent design in the app's words; Erho2 by hand (seed 003 Eq. 1)."""
    c = _ddr_components()
    d = DStudyDesign(n_tasks=40, n_replicates=4, n_models=10, object_of_measurement="agent",
                     extra_facets={"step": 3, "error_category": 4})
    s = dstudy_summary(c, d)
    text = format_dstudy(s)
    # 10 agents x 40 tasks x 4 traces = 1,600 traces (the sheet's cost page counts them the same way)
    assert "design: 40 tasks x 4 traces per agent-task pair x 3 steps x 4 error categories; 10 agents compared; " \
           "no prices" in text
    assert "traces: 1,600 traces in a full design of these sizes (10 agents x 40 tasks x 4 traces per agent-task " \
           "pair)" in text
    assert "scaffold" not in text and "benchmark" not in text and "models" not in text
    assert "smallest tasks " in text and "smallest traces per agent-task pair" in text
    err = 0.5 / 40 + 0.2 / 3 + 0.4 / 4 + (math.pi ** 2 / 3) / (40 * 3 * 4 * 4)
    assert s["estimands"]["Erho2"]["median"] == pytest.approx(1.0 / (1.0 + err), rel=1e-12)
    # a pooled fit keeps its words
    p = VarianceComponents.from_mapping(dict.fromkeys(POOLED_TERMS, 0.3), source="typed")
    text = format_dstudy(dstudy_summary(p, DStudyDesign(n_tasks=50, n_benchmarks=9, n_models=12)))
    assert "design: 50 tasks per benchmark x 1 scaffold per model x 9 benchmarks x 1 trial per cell; " \
           "12 models compared; no prices" in text
    assert "trials: 5,400 trials in a full design of these sizes (12 models x 1 scaffold per model x 450 tasks x " \
           "1 trial per cell)" in text  # 12 x 1 x 50 x 9 x 1
    assert "smallest tasks per benchmark " in text and "smallest scaffolds per model " in text


def test_sheet_axis_follows_the_fit():
    """The D-study figure of the sheet labels its axis with the fit's words (``figures.dstudy_figure``)."""
    from reportlab.graphics.shapes import String

    from ddr_explorer.core.report import figures as fig

    c = _ddr_components()
    d = DStudyDesign(n_tasks=40, n_replicates=4, n_models=10, object_of_measurement="agent",
                     extra_facets={"step": 3, "error_category": 4})
    curve = DStudyModel(c).curve(d, "n_tasks", grid=np.array([1.0, 10.0, 100.0]))

    def strings(drawing):
        out, stack = [], list(drawing.contents)
        while stack:
            x = stack.pop()
            if isinstance(x, String):
                out.append(x.text)
            stack.extend(getattr(x, "contents", []))
        return out

    words = facet_words("agent", c.facets)
    assert "tasks (log scale)" in strings(fig.dstudy_figure(curve, xlabel=words.axis(curve.over)))
    # without the fit's words: the pooled model fit's (the default of a bare curve)
    assert "tasks per benchmark (log scale)" in strings(fig.dstudy_figure(curve))
