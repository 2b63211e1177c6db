"""Ranks of a disconnected design are computed within its connected parts only (SPEC sec. 6; seed 000 App. E)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from ddr_explorer.core.corpus.corpus import Corpus
from ddr_explorer.core.design import connectivity
from ddr_explorer.core.rank_parts import model_parts, part_reasons, parts_from_posterior
from ddr_explorer.core.ranks import rank_analysis

FACETS = ["benchmark", "task", "model", "scaffold"]


def _corpus(rows) -> Corpus:
    df = pd.DataFrame(list(rows), columns=FACETS)
    for c in FACETS:
        df[c] = df[c].astype("category")
    df["trials"] = np.ones(len(df), dtype=np.int64)
    df["successes"] = (np.arange(len(df)) % 2).astype(np.int64)
    return Corpus(table=df)


def disconnected_corpus() -> Corpus:
    """Models A, B, C on benchmark B1 with scaffold s1; models D, E on B2 with s2: no shared benchmark or scaffold."""
    rows = [("B1", t, m, "s1") for t in ("t1", "t2") for m in ("A", "B", "C")]
    rows += [("B2", t, m, "s2") for t in ("u1", "u2") for m in ("D", "E")]
    return _corpus(rows)


MODELS = ["A", "D", "B", "E", "C"]  # columns deliberately interleave the parts


def _theta(seed=0, s=4000):
    rng = np.random.default_rng(seed)
    # D and E are far above A-C: a joint ranking would put them first with certainty
    return rng.normal([0.0, 3.0, 0.5, 2.5, -0.4], 0.6, size=(s, 5))


def test_parts_of_a_disconnected_corpus():
    conn = connectivity(disconnected_corpus())
    assert model_parts(conn.components, MODELS) == [["A", "B", "C"], ["D", "E"]]
    # systems ("model / scaffold") follow their model
    assert model_parts(conn.components, ["A / s1", "D / s2", "B / s1"]) == [["A / s1", "B / s1"], ["D / s2"]]
    # a connected design has one part: None, rank all together
    rows = [("B1", "t1", m, "s1") for m in "ABC"] + [("B2", "u1", m, "s2") for m in "CDE"]
    assert model_parts(connectivity(_corpus(rows)).components, list("ABCDE")) is None


def test_within_part_ranks_equal_the_ranks_of_each_part_alone():
    th = _theta()
    parts = model_parts(connectivity(disconnected_corpus()).components, MODELS)
    ra = rank_analysis(th, MODELS, parts)
    for p in parts:
        idx = [MODELS.index(m) for m in p]
        alone = rank_analysis(th[:, idx], p)
        np.testing.assert_array_equal(ra.ranks.mean_rank[idx], alone.ranks.mean_rank)
        np.testing.assert_array_equal(ra.ranks.median_rank[idx], alone.ranks.median_rank)
        np.testing.assert_array_equal(ra.ranks.interval95[idx], alone.ranks.interval95)
        np.testing.assert_array_equal(ra.ranks.probabilities[np.ix_(idx, range(len(p)))], alone.ranks.probabilities)
        np.testing.assert_array_equal(ra.dominance[np.ix_(idx, idx)], alone.dominance)
        np.testing.assert_array_equal(ra.global_dominance[idx], alone.global_dominance)
    # D, E: ranks 1-2 of their part, never ranks 3-5; A-C: 1-3
    # within its part D's mean rank is 1 + P(theta_E > theta_D) = 1 + Phi(-0.5 / (0.6 sqrt 2)) = 1.278
    assert ra.ranks.mean_rank[MODELS.index("D")] == pytest.approx(1 + norm.cdf(-0.5 / (0.6 * np.sqrt(2))), abs=0.02)
    assert ra.ranks.interval95.max() <= 3
    np.testing.assert_allclose(ra.ranks.probabilities.sum(axis=1), 1.0)
    assert ra.ranks.probabilities[[1, 3]][:, 2:].sum() == 0  # part 2 never has rank 3+
    # no cross-part dominance anywhere: NaN in the matrix, null in JSON
    cross = ra.part_of[:, None] != ra.part_of[None, :]
    assert cross.sum() == 12 and np.isnan(ra.dominance[cross]).all()
    assert not np.isnan(ra.dominance[~cross]).any()
    d = json.loads(json.dumps(ra.to_dict()))
    dom = np.array(d["dominance"], dtype=object)
    assert all(v is None for v in dom[cross]) and d["parts"] == [["A", "B", "C"], ["D", "E"]]
    assert ra.ordered_models[:3] == ["B", "A", "C"] and ra.ordered_models[3:] == ["D", "E"]
    assert "D, E" in d["part_reasons"][1] and "no rank or dominance between the parts" in d["part_reasons"][1]


def test_connected_design_gives_todays_numbers():
    th = _theta(1)
    today = rank_analysis(th, MODELS)
    for parts in (None, [MODELS]):
        ra = rank_analysis(th, MODELS, parts)
        assert ra.parts is None and ra.part_reasons == []
        np.testing.assert_array_equal(ra.dominance, today.dominance)
        np.testing.assert_array_equal(ra.ranks.probabilities, today.ranks.probabilities)
        np.testing.assert_array_equal(ra.order, today.order)
        assert ra.to_dict() == today.to_dict() and "parts" not in ra.to_dict()
    # the joint ranking puts B below D and E (P(rank <= 2) ~ 0.01): a cross-part claim the parts refuse to make;
    # within its part B ranks first with probability P(B > A, B > C) ~ 0.6
    b = MODELS.index("B")
    assert today.ranks.probabilities[b, :2].sum() < 0.03
    parted = rank_analysis(th, MODELS, [["A", "B", "C"], ["D", "E"]])
    assert 0.5 < parted.ranks.probabilities[b, 0] < 0.7


def test_parts_from_a_fit_alone():
    class Post:  # the level tables of a fit's interaction terms are the observed pairs
        levels = {"model": pd.DataFrame({"model": MODELS}),
                  "benchmark:model": pd.DataFrame({"benchmark": ["B1"] * 3 + ["B2"] * 2,
                                                   "model": ["A", "B", "C", "D", "E"]})}
    assert parts_from_posterior(Post(), MODELS) == [["A", "B", "C"], ["D", "E"]]
    Post.levels["benchmark:model"].loc[5] = ["B1", "E"]  # E also ran on B1: one part
    assert parts_from_posterior(Post(), MODELS) is None

    class OneBenchmark:  # one scaffold per model (a leaderboard), no benchmark column: one benchmark, one part
        levels = {"model:scaffold": pd.DataFrame({"model": ["A", "B"], "scaffold": ["s1", "s2"]}),
                  "task:model": pd.DataFrame({"task": ["t1", "u1"], "model": ["A", "B"]})}
    assert parts_from_posterior(OneBenchmark(), ["A", "B"]) is None


def test_bad_parts_and_reasons():
    with pytest.raises(ValueError, match="each of the 5 models once"):
        rank_analysis(_theta(), MODELS, [["A", "B"], ["D", "E"]])
    r = part_reasons([["A", "B"], ["C"]])
    assert r[0].startswith("Part 1 of 2: models A, B share no benchmark or scaffold") and "with C," in r[0]


def test_within_part_correlations():
    from ddr_explorer.core.ranks import kendall_tau, spearman_rho
    from ddr_explorer.core.rank_parts import within_part_correlations

    x, y = np.array([3.0, 1.0, 2.0, 10.0, 20.0]), np.array([2.0, 1.0, 3.0, -5.0, -9.0])
    rho, tau = within_part_correlations(x, y, [0] * 5)
    assert rho == pytest.approx(spearman_rho(x, y)) and tau == pytest.approx(kendall_tau(x, y))
    # parts {0,1,2} and {3,4}: within-part pairs (0,1)+ (0,2)- (1,2)+ (3,4)-  -> tau = 0 over 4 pairs;
    # the cross-part pairs (all discordant here) do not count
    rho, tau = within_part_correlations(x, y, [0, 0, 0, 1, 1])
    assert tau == pytest.approx(0.0)
    # centred within-part ranks: x (1, -1, 0, -.5, .5), y (0, -1, 1, .5, -.5): (1 - 0.5) / 2.5 = 0.2
    assert rho == pytest.approx(0.2)
    assert kendall_tau(x, y) < -0.3  # the joint figure mixes in the unidentified cross-part pairs
