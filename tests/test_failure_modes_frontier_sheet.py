"""The DDR sheet with the failure-mode and frontier analyses: decision 5 computed, the frontier
figure with decision 2, and the slice named on page one."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("reportlab", reason="the DDR sheet needs reportlab (pip install reportlab)")

from ddr_explorer.core.analyses.failure_modes import FailureTaxonomy  # noqa: E402
from ddr_explorer.core.analyses.frontier_time import frontier_over_time  # noqa: E402
from ddr_explorer.core.corpus.io import load_corpus  # noqa: E402
from ddr_explorer.core.report import build_sheet, report_inputs_from, sheet_content  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _load(name):
    spec = importlib.util.spec_from_file_location(f"ddr_test_{name}", ROOT / "tests" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


rep = _load("test_report")
fr = _load("test_frontier_slices")

TAX = FailureTaxonomy(("planning", "tools", "verification", "policy"), np.array([2.8, 1.5, 0.7, 0.3]),
                      np.array([0.27, 0.34, 0.44, 0.58]), spearman_interval=(-0.8, -1.0, 0.2),
                      holdout={"n_splits": 50, "trace_mae": 0.43, "cell_mae": 0.12, "cell_r": 0.71}, converged=True,
                      n_traces=120)


@pytest.fixture(scope="module")
def sheet(tmp_path_factory):
    corpus = load_corpus(rep.DEMO, slice="task=" + "|".join(
        sorted(load_corpus(rep.DEMO).table["task"].astype(str).unique())[:40]))
    comps = rep.synthetic_components(rep.TB_SIGMAS, rep.TB_SPREAD)
    theta, names = rep.synthetic_theta(corpus.table)
    front = frontier_over_time(fr.tiny(groups={"A": "programming", "B": "gui"}), n_boot=100)
    inputs = report_inputs_from(corpus, comps, theta, model_names=names, fit_info=rep.CONVERGED,
                                analyses={"failure_taxonomy": TAX, "frontier": front})
    path = build_sheet(inputs, tmp_path_factory.mktemp("i19") / "sheet.pdf", date_invariant=True)
    return inputs, rep.pdf_pages(path)


def test_decision_5_is_computed_from_the_taxonomy(sheet):
    inputs, pages = sheet
    d5 = sheet_content(inputs).decisions[4]
    assert d5.status == "answered"
    for words in ("planning", "policy", "\u22121.00", "MAE 0.430", "0.120", "r = 0.71"):
        assert words in d5.answer, words
    rep._contains(pages[0], "How should we read a failure taxonomy?", "per draw")


def test_slice_on_page_one_and_the_failure_and_frontier_sections(sheet):
    _, pages = sheet
    rep._contains(pages[0], "Slice: task=", "(40 of 89 tasks)")
    text = " ".join(pages)
    rep._contains(text, "Failure modes: variance is not frequency", "Frontier over time", "programming 0.750",
                  "Spearman \u22121.00 over 4 categories")
