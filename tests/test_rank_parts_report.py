"""A disconnected design on the DDR sheet and in ``ddr dstudy --external-ranking``: ranks per part, never across."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("reportlab", reason="the DDR sheet needs reportlab (pip install reportlab)")

from ddr_explorer.core.analyses.external_ranking import (ExternalRanking, _external_by_part,  # noqa: E402
                                                         format_external)
from ddr_explorer.core.corpus.io import load_corpus  # noqa: E402
from ddr_explorer.core.ranks import rank_analysis  # noqa: E402
from ddr_explorer.core.reliability import VarianceComponents  # noqa: E402
from ddr_explorer.core.report import build_sheet, report_inputs_from, sheet_content  # noqa: E402
from ddr_explorer.core.report import figures  # noqa: E402

CONVERGED = {"method": "NUTS (numpyro)", "converged": True, "max_rhat": 1.004, "min_ess_bulk": 812,
             "divergences": 0, "settings": {"chains": 4, "draws": 500, "warmup": 400, "seed": 0, "target_accept": 0.8},
             "device": "cpu", "wall_seconds": 9.0}
MODELS = ["A", "B", "C", "D", "E"]


@pytest.fixture(scope="module")
def disconnected(tmp_path_factory):
    """Models A, B, C on benchmark B1 with scaffold s1; D, E on B2 with s2 (no shared benchmark or scaffold)."""
    rng = np.random.default_rng(0)
    rows = []
    for b, a, ms in (("B1", "s1", "ABC"), ("B2", "s2", "DE")):
        for t in range(8):
            for m in ms:
                rows.append((b, f"{b}-t{t}", m, a, int(rng.integers(0, 6)), 5))
    df = pd.DataFrame(rows, columns=["benchmark", "task", "model", "scaffold", "successes", "trials"])
    path = tmp_path_factory.mktemp("parts") / "two-parts.csv"
    df.to_csv(path, index=False)
    corpus = load_corpus(path)
    rng = np.random.default_rng(1)
    comps = VarianceComponents.from_mapping(
        {t: (s * np.exp(rng.normal(0, 0.1, 2000))) ** 2 for t, s in
         {"task": 1.5, "model": 1.0, "task:model": 0.8}.items()}, source="synthetic")
    theta = rng.normal([0.0, 0.5, -0.4, 3.0, 2.5], 0.6, size=(2000, 5))
    return corpus, comps, theta


def test_sheet_ranks_per_part(disconnected, tmp_path):
    corpus, comps, theta = disconnected
    inp = report_inputs_from(corpus, comps, theta, model_names=MODELS, fit_info=CONVERGED)
    ct = sheet_content(inp)
    ra = ct.ranks
    assert ra.parts == [["A", "B", "C"], ["D", "E"]]
    for p in ra.parts:  # within-part numbers are those of the part ranked alone
        idx = [MODELS.index(m) for m in p]
        alone = rank_analysis(theta[:, idx], p)
        np.testing.assert_array_equal(ra.dominance[np.ix_(idx, idx)], alone.dominance)
        np.testing.assert_array_equal(ra.ranks.interval95[idx], alone.ranks.interval95)
    assert np.isnan(ra.dominance[:3, 3:]).all() and np.isnan(ra.dominance[3:, :3]).all()
    # no agreement across parts; one per part against the observed mean success
    assert ct.agreement is None and [k for k, _ in ct.part_agreements] == [0, 1]
    assert ct.part_agreements[1][1].models == ["D", "E"]
    # the figure prints a number in each within-part cell only: 3*2 + 2*1 = 8, not 5*4 = 20
    d = figures.rank_dominance_figure(ra, 523)
    cells = [s for s in d.contents if type(s).__name__ == "String" and s.fontSize == 4.3]  # the cell numbers
    assert len(cells) == 8
    pdf = build_sheet(inp, tmp_path / "parts.pdf", date_invariant=True)
    pypdf = pytest.importorskip("pypdf")
    text = " ".join(re.sub(r"\s+", " ", p.extract_text() or "") for p in pypdf.PdfReader(str(pdf)).pages)
    assert "Ranked within 2 parts of a disconnected design" in text
    assert "models D, E share no benchmark or scaffold" in text
    assert "Part 2: agreement with the observed mean success" in text


def test_connected_sheet_ranks_unchanged(disconnected):
    corpus, comps, theta = disconnected
    t = corpus.table.copy()
    t["scaffold"] = "s1"  # one scaffold links both benchmarks: connected
    from ddr_explorer.core.corpus.corpus import Corpus

    one = Corpus(table=t)
    ct = sheet_content(report_inputs_from(one, comps, theta, model_names=MODELS, fit_info=CONVERGED))
    today = rank_analysis(theta, MODELS)
    assert ct.ranks.parts is None and ct.part_agreements == [] and ct.agreement is not None
    np.testing.assert_array_equal(ct.ranks.dominance, today.dominance)
    np.testing.assert_array_equal(ct.ranks.ranks.probabilities, today.ranks.probabilities)
    d = figures.rank_dominance_figure(ct.ranks, 523)
    assert sum(type(s).__name__ == "String" and s.fontSize == 4.3 for s in d.contents) == 20  # every pair


def test_external_ranking_per_part(disconnected):
    _, _, theta = disconnected
    ranking = ExternalRanking({"A": 3.0, "B": 1.0, "C": 2.0, "D": 5.0, "E": 4.0}, "rank", "lb.csv")
    d = _external_by_part(theta, MODELS, ranking, [["A", "B", "C"], ["D", "E"]], "lb.csv")
    assert d["connected"] is False and [p["models"] for p in d["parts"]] == [["A", "B", "C"], ["D", "E"]]
    # part 1: latent order B > A > C, the file's B > C > A: pairs BA +, BC +, AC -: tau = 1/3
    a1 = d["parts"][0]["agreement"]
    assert a1["n_models"] == 3 and a1["kendall_tau"] == pytest.approx(1 / 3)
    # part 2: D above E in theta, the file says E (4) above D (5): tau = -1 over the one pair
    assert d["parts"][1]["agreement"]["kendall_tau"] == pytest.approx(-1.0)
    assert "kendall_tau" not in d  # no figure over all models
    text = format_external(d)
    assert "within 2 parts of a disconnected design" in text and "part 2: Part 2 of 2: models D, E" in text
    one = ExternalRanking({"A": 1.0, "D": 2.0}, "rank", "lb.csv")
    from ddr_explorer.core.analyses.external_ranking import ExternalRankingError
    with pytest.raises(ExternalRankingError, match="no part of the design has two models"):
        _external_by_part(theta, MODELS, one, [["A", "B", "C"], ["D", "E"]], "lb.csv")


def test_cli_parts_come_from_the_corpus_or_the_fit(disconnected, tmp_path):
    from types import SimpleNamespace

    from ddr_explorer.core.analyses.external_ranking import _rank_parts

    corpus, _, _ = disconnected
    csv = tmp_path / "c.csv"
    corpus.table.to_csv(csv, index=False)
    assert _rank_parts(SimpleNamespace(path=str(csv)), None, MODELS) == [["A", "B", "C"], ["D", "E"]]
    # a cached fit: its benchmark:model levels are the observed pairs
    post = SimpleNamespace(levels={"benchmark:model": corpus.table[["benchmark", "model"]].drop_duplicates()})
    assert _rank_parts(SimpleNamespace(path=str(tmp_path / "fit.h5")), post, MODELS) == [["A", "B", "C"], ["D", "E"]]
