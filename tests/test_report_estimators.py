"""The DDR sheet's estimator table (opt-in ``methods`` analysis) and, for a claim about scores, the
observed-scale score reliability of seed 000 G.5 on page 1 and in the method notes.

The inputs are made by hand (no fit): the sheet only lays out what core computed, so every printed
number is checked against the object it was given.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("reportlab", reason="the DDR sheet needs reportlab (pip install reportlab)")

from ddr_explorer.core import ddr_sheet  # noqa: E402
from ddr_explorer.core.corpus.io import load_corpus  # noqa: E402
from ddr_explorer.core.estimators.bayes_lmm import ScoreReliability  # noqa: E402
from ddr_explorer.core.estimators.methods import ESTIMATORS, MethodsTable  # noqa: E402
from ddr_explorer.core.formatting import fmt_coef  # noqa: E402
from ddr_explorer.core.reliability import VarianceComponents, summarize  # noqa: E402
from ddr_explorer.core.report import build_sheet, report_inputs_from  # noqa: E402

DEMO = Path(__file__).resolve().parents[1] / "resources" / "demo" / "terminal-bench-2.csv"
TERMS = ["task", "model", "scaffold", "task:model", "task:scaffold", "model:scaffold"]
CONVERGED = {"method": "NUTS (numpyro)", "converged": True, "max_rhat": 1.004, "min_ess_bulk": 812,
             "divergences": 0}


def pdf_pages(path: Path) -> list[str]:
    pypdf = pytest.importorskip("pypdf", reason="reading PDF text needs pypdf (pip install pypdf)")
    return [re.sub(r"\s+", " ", p.extract_text() or "") for p in pypdf.PdfReader(str(path)).pages]


def _notes(pages: list[str]) -> str:
    """The method notes (they may run over two pages), footers included."""
    first = next(k for k, p in enumerate(pages) if "Method notes" in p)
    return " ".join(pages[first:])


@pytest.fixture(scope="module")
def corpus():
    return load_corpus(DEMO)


@pytest.fixture(scope="module")
def components():
    rng = np.random.default_rng(0)
    sig = {"task": 3.0, "model": 1.7, "scaffold": 0.4, "task:model": 1.4, "task:scaffold": 1.1, "model:scaffold": 0.5}
    return VarianceComponents.from_mapping({t: (s * np.exp(rng.normal(0, 0.1, 400))) ** 2 for t, s in sig.items()})


def _table() -> MethodsTable:
    """A comparison with distinct, recognisable numbers in every cell."""
    est = ["Henderson", "REML", "Bayes LMM", "Laplace", "DISCO"]
    terms = [*TERMS, "residual"]
    shares = {e: {t: round(0.011 * (i + 1) + 0.101 * j, 3) for j, t in enumerate(terms)} for i, e in enumerate(est)}
    shares["DISCO"]["residual"] = float("nan")
    coefs = {e: {"Erho2": 0.9 + 0.011 * i, "Phi": 0.7 + 0.013 * i} for i, e in enumerate(est)}
    coefs["DISCO"]["Phi"] = float("nan")
    return MethodsTable(formula="y ~ 1 + (1|task) + (1|model)", terms=terms, shares=shares, components=shares,
                        coefficients=coefs, scales={e: ESTIMATORS[e] for e in est},
                        seconds=dict.fromkeys(est, 1.5), notes=["Henderson: a test note."],
                        convergence={"Bayes LMM": {"converged": False, "problems": ["bulk ESS low"]}})


def _score(converged=True) -> ScoreReliability:
    rng = np.random.default_rng(2)
    erho = rng.beta(60, 4, 800)
    phi = erho * rng.beta(30, 8, 800)  # below Erho2 draw by draw
    return ScoreReliability(object_of_measurement="model", sizes={"task": 89}, phi=summarize(phi),
                            erho2=summarize(erho), gap=summarize(erho - phi), converged=converged,
                            verdict={"converged": converged, "problems": [] if converged else ["R-hat high"]})


def test_methods_table_on_the_method_notes_page(corpus, components, tmp_path):
    table = _table()
    inp = report_inputs_from(corpus, components, fit_info=CONVERGED, analyses={"methods": table})
    notes = _notes(pdf_pages(build_sheet(inp, tmp_path / "m.pdf", date_invariant=True)))
    assert "Method notes" in notes and "Estimators compared (Hardy et al. 2026, Tables 20" in notes
    for e in table.estimators:
        assert e in notes
    assert "Bayes LMM (observed), NOT converged" in notes  # an unconverged column is labelled
    for t in table.terms:  # every row, every printed cell
        row = " ".join(fmt_coef(table.shares[e][t]) for e in table.estimators)
        assert f"{t} {row}" in notes, t
    erho = " ".join(fmt_coef(table.coefficients[e]["Erho2"]) for e in table.estimators)
    assert f"E\u03c1\u00b2 (model) {erho}" in notes
    assert "Henderson: a test note." in notes
    # without the analysis there is no table (it is opt-in)
    bare = report_inputs_from(corpus, components, fit_info=CONVERGED)
    assert "Estimators compared" not in _notes(pdf_pages(build_sheet(bare, tmp_path / "b.pdf", date_invariant=True)))


def test_claim_about_scores_says_score_reliability_is_lower_on_page_one(corpus, components, tmp_path):
    score = _score()
    inp = report_inputs_from(corpus, components, fit_info=CONVERGED, claim="absolute",
                             analyses={"score_reliability": score})
    pages = pdf_pages(build_sheet(inp, tmp_path / "s.pdf", date_invariant=True))
    phi = f"{fmt_coef(score.phi.median)} [{fmt_coef(score.phi.hdi95[0])}, {fmt_coef(score.phi.hdi95[1])}]"
    erho = f"{fmt_coef(score.erho2.median)} [{fmt_coef(score.erho2.hdi95[0])}, {fmt_coef(score.erho2.hdi95[1])}]"
    assert "Scores on the observed scale." in pages[0]
    assert f"score reliability \u03a6 {phi} against ranking reliability E\u03c1\u00b2 {erho}" in pages[0]
    assert "Scores are less reliable than rankings" in pages[0]
    notes = _notes(pages)
    assert "Scores on the observed scale (Hardy et al. 2026, App. G.5)" in notes and phi in notes
    # a ranking claim does not carry it
    rel = report_inputs_from(corpus, components, fit_info=CONVERGED, analyses={"score_reliability": score})
    assert "Scores on the observed scale." not in pdf_pages(build_sheet(rel, tmp_path / "r.pdf",
                                                                         date_invariant=True))[0]


def test_claim_about_scores_without_the_lmm_says_so(corpus, components, tmp_path):
    inp = report_inputs_from(corpus, components, fit_info=CONVERGED, claim="absolute")
    first = pdf_pages(build_sheet(inp, tmp_path / "n.pdf", date_invariant=True))[0]
    assert "Scores on the observed scale." in first and "was not run or failed" in first
    unconv = report_inputs_from(corpus, components, fit_info=CONVERGED, claim="absolute",
                                analyses={"score_reliability": _score(converged=False)})
    first = pdf_pages(build_sheet(unconv, tmp_path / "u.pdf", date_invariant=True))[0]
    assert "Not converged (R-hat high): provisional" in first


def test_runners_are_named_and_scores_run_by_themselves_for_absolute_claims(monkeypatch):
    assert ddr_sheet.ANALYSIS_ALIASES["methods"] == "methods"
    assert ddr_sheet.ANALYSIS_ALIASES["scores"] == "score_reliability"
    assert callable(ddr_sheet.analysis_runner("methods")) and callable(ddr_sheet.analysis_runner("scores"))
    with pytest.raises(ValueError, match="methods, scores"):
        ddr_sheet.analysis_runner("nonsense")
