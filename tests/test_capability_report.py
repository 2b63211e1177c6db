"""The DDR sheet carries the capability scale and the transfer study: their section shows core's sentences
and figures, decision 1 says whether a ranking transfers, and a sheet without them has no such page."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

from ddr_explorer.core.analyses.capability import (CapabilityStudy, IrtFit, _ability_table, _gate, _item_table,
                                                   capability_lines, irt_cells)
from ddr_explorer.core.analyses.transfer import transfer_from_posteriors, transfer_lines
from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.report import build_sheet
from ddr_explorer.core.report.content import sheet_content
from ddr_explorer.core.report.inputs import report_inputs_from

ROOT = Path(__file__).resolve().parents[1]


def _report_tests():
    spec = importlib.util.spec_from_file_location("ddr_test_report_helpers", ROOT / "tests" / "test_report.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def capability_study(corpus):
    """A capability study of the demo corpus from hand-made draws (no sampler): abilities = observed logits."""
    cells = irt_cells(corpus)
    rng = np.random.default_rng(0)
    k = np.bincount(cells.subject, weights=cells.successes) + 0.5
    n = np.bincount(cells.subject, weights=cells.trials) + 1
    u = np.log(k / (n - k))
    theta = u - u.mean() + 0.2 * rng.standard_normal((2, 100, len(u)))
    theta -= theta.mean(-1, keepdims=True)
    beta = np.zeros((2, 100, len(cells.tasks))) + 0.1 * rng.standard_normal((2, 100, len(cells.tasks)))
    sig = {"sigma_theta": 1 + 0.1 * rng.standard_normal((2, 100))}
    fit = IrtFit("1pl", cells, theta, beta, None, sig, _gate({"theta": theta, "beta": beta, **sig}, 0, 200))
    return CapabilityStudy("best-scaffold", {"1pl": fit}, {"1pl": _ability_table(fit, cells.parts())},
                           {"1pl": _item_table(fit)}, [cells.subjects])


def transfer_study_inverted():
    names = ["a", "b", "c", "d"]
    u = np.array([0.0, 1.0, 2.0, 3.0]) + 0.1 * np.random.default_rng(1).standard_normal((60, 4))

    def post(x, s):
        return SimpleNamespace(sigma={"model": np.full((1, 60), s), "task:model": np.ones((1, 60))},
                               random_effects={"model": x[None]}, levels={"model": pd.DataFrame({"model": names})},
                               diagnostics=SimpleNamespace(converged=True))

    return transfer_from_posteriors({"bench-x": post(u, 1.0), "bench-y": post(-u, 0.8)})


def test_sheet_shows_capability_and_transfer(tmp_path):
    rt = _report_tests()
    corpus = load_corpus(rt.DEMO)
    comps = rt.synthetic_components(rt.TB_SIGMAS, rt.TB_SPREAD)
    theta, names = rt.synthetic_theta(corpus.table)
    cap, tr = capability_study(corpus), transfer_study_inverted()
    inputs = report_inputs_from(corpus, comps, theta, model_names=names, fit_info=rt.CONVERGED,
                                analyses={"capability": cap, "transfer": tr})
    ct = sheet_content(inputs)
    d1 = ct.decisions[0]
    assert "Does a ranking transfer?" in d1.answer and "need not hold on yours" in d1.answer
    pdf = build_sheet(inputs, tmp_path / "sheet.pdf", date_invariant=True)
    pages = rt.pdf_pages(pdf)
    assert len(pages) == 8  # the seven pages of the demo sheet and this section
    sec = next(p for p in pages if "Capability scale and transfer across benchmarks" in p)
    for line in capability_lines(cap.to_dict()) + transfer_lines(tr.to_dict()):
        assert " ".join(line.split()).replace(" ", "")[:60] in sec.replace(" ", ""), line
    assert "Does a ranking transfer?" in pages[0]
