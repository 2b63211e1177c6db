"""What a one-benchmark corpus cannot answer is not offered, and the reason is the real one.

Terminal-Bench 2.0 is one benchmark: no allocation of a budget across benchmarks (the sheet says nothing
of it, the app and ``ddr dstudy`` say why: one benchmark, not "needs the pooled preset"), and no
Benchmarks slider (the D-study tab says why); the capability scale and transfer are disabled in the app and
refused by ``ddr analyses`` with the same reason.
"""

from __future__ import annotations

import numpy as np
import pytest

from ddr_explorer.core.analyses.availability import size_unavailable_reason
from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.dstudy import allocation_for_summary
from ddr_explorer.core.files import demo_corpus_path
from ddr_explorer.core.inspection import inspect_corpus
from ddr_explorer.core.reliability import VarianceComponents
from ddr_explorer.core.report import report_inputs_from, sheet_content
from ddr_explorer.core.report.sheet import render_sheet

ONE_BENCHMARK = "the design has one benchmark: there are no benchmarks to spread the budget's tasks across"


@pytest.fixture(scope="module")
def demo():
    rng = np.random.default_rng(3)
    scale = {"task": 3.0, "model": 0.9, "scaffold": 0.1, "task:model": 1.1, "task:scaffold": 0.3,
             "model:scaffold": 0.05}
    c = VarianceComponents.from_mapping({t: v * rng.gamma(40.0, 1 / 40.0, 200) for t, v in scale.items()},
                                        intercept=rng.normal(-0.4, 0.1, 200), source="hand-made draws")
    corpus = load_corpus(demo_corpus_path())
    return corpus, c, inspect_corpus(corpus)


def test_the_allocation_on_one_benchmark_gives_the_real_reason(demo):
    corpus, c, _ = demo
    inputs = report_inputs_from(corpus, components=c, budget=5000.0, prices={"terminal-bench-2.0": 0.8})
    assert allocation_for_summary(c, inputs.observed_design, 5000.0) == (None, ONE_BENCHMARK)


def test_the_sheet_of_one_benchmark_says_nothing_of_an_allocation_across_benchmarks(demo):
    corpus, c, summary = demo
    ct = sheet_content(report_inputs_from(corpus, components=c, budget=5000.0, corpus_summary=summary,
                                          prices={"terminal-bench-2.0": 0.8}))
    assert ct.allocation is None and ct.allocation_text == ""
    from io import BytesIO

    from pypdf import PdfReader

    text = " ".join(" ".join(p.extract_text().split()) for p in PdfReader(BytesIO(render_sheet(ct))).pages)
    assert "Tasks across benchmarks" not in text and "needs the pooled preset" not in text
    assert "One benchmark." in text  # the notice that says what one benchmark cannot tell


def test_the_missing_benchmarks_and_scaffolds_sliders_have_their_reasons(demo):
    _, c, summary = demo
    assert size_unavailable_reason("n_benchmarks", c.facets, summary) == (
        "No Benchmarks slider: the corpus has one benchmark (terminal-bench-2.0), so the fit has no benchmark "
        "term and cannot say how reliability changes with more benchmarks.")
    assert size_unavailable_reason("n_scaffolds", c.facets, summary) is None  # the fit has a scaffold term
    assert "fit the pooled preset" in size_unavailable_reason("n_benchmarks", c.facets, {"n_benchmarks": 2})
    assert "every model ran with one scaffold" in size_unavailable_reason("n_scaffolds", ("task", "model"),
                                                                          {"n_scaffolds": 1})


@pytest.mark.parametrize("which", ["capability", "transfer", "difficulty,capability"])
def test_ddr_analyses_refuses_capability_on_one_benchmark_with_the_apps_reason(which, capsys, tmp_path):
    from ddr_explorer.core.cli import main

    # refused before any fit (the app disables the same analysis with the same words)
    assert main(["analyses", str(demo_corpus_path()), "--which", which, "--cache", str(tmp_path), "--quiet"]) == 2
    err = capsys.readouterr().err
    asked = ",".join(w for w in which.split(",") if w != "difficulty")
    assert f"--which {asked} cannot run on this corpus." in err
    assert "The corpus has one benchmark (terminal-bench-2.0)" in err
    assert not any(tmp_path.iterdir())  # nothing fitted
