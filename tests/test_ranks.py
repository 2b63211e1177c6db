"""Posterior ranks, dominance and rank agreement."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose
from scipy import stats

from ddr_explorer.core import ranks

# Four draws of three models' theta.  Ranks (1 = best) per draw:
#   draw 0: a=3 > b=2 > c=1  -> a1 b2 c3
#   draw 1: b=5 > a=4 > c=0  -> b1 a2 c3
#   draw 2: a=2 > c=1.5 > b=1 -> a1 c2 b3
#   draw 3: a=9 > b=8 > c=7  -> a1 b2 c3
THETA = np.array([[3.0, 2.0, 1.0], [4.0, 5.0, 0.0], [2.0, 1.0, 1.5], [9.0, 8.0, 7.0]])
MODELS = ["a", "b", "c"]


def test_rank_distribution_by_hand():
    rd = ranks.rank_distribution(THETA, MODELS)
    # a: rank 1 in draws 0, 2, 3 and rank 2 in draw 1
    assert_allclose(rd.probabilities[0], [0.75, 0.25, 0.0])
    # b: ranks 2, 1, 3, 2
    assert_allclose(rd.probabilities[1], [0.25, 0.5, 0.25])
    # c: ranks 3, 3, 2, 3
    assert_allclose(rd.probabilities[2], [0.0, 0.25, 0.75])
    assert_allclose(rd.mean_rank, [1.25, 2.0, 2.75])
    assert_allclose(rd.median_rank, [1.0, 2.0, 3.0])
    assert_allclose(rd.interval95, [[1, 2], [1, 3], [2, 3]])
    assert_allclose(rd.probabilities.sum(axis=1), 1.0)
    assert_allclose(rd.probabilities.sum(axis=0), 1.0)


def test_dominance_by_hand():
    p = ranks.dominance_matrix(THETA)
    # P(a > b): draws 0, 2, 3 -> 0.75 ; P(a > c) = 1 ; P(b > c): draws 0, 1, 3 -> 0.75
    assert_allclose(p, [[0.5, 0.75, 1.0], [0.25, 0.5, 0.75], [0.0, 0.25, 0.5]])
    g = ranks.global_dominance(p)
    # a: (0.75 + 1)/2 ; b: (0.25 + 0.75)/2 ; c: (0 + 0.25)/2
    assert_allclose(g, [0.875, 0.5, 0.125])


def test_rank_analysis_orders_by_global_dominance():
    ra = ranks.rank_analysis(THETA[:, ::-1], MODELS[::-1])  # columns c, b, a
    assert ra.ordered_models == ["a", "b", "c"]
    assert_allclose(ra.ordered_dominance, [[0.5, 0.75, 1.0], [0.25, 0.5, 0.75], [0.0, 0.25, 0.5]])
    assert_allclose(ra.ordered_rank_probabilities[0], [0.75, 0.25, 0.0])
    json.dumps(ra.to_dict())


@settings(max_examples=50, deadline=None)
@given(arrays(np.int8, st.tuples(st.integers(1, 30), st.integers(2, 7)), elements=st.integers(-3, 3)))
def test_dominance_antisymmetry_and_rank_rows(theta):
    # small integers make ties frequent: ties count 1/2, so P + P^T = 1 exactly off the diagonal
    t = theta.astype(float)
    p = ranks.dominance_matrix(t)
    m = t.shape[1]
    off = ~np.eye(m, dtype=bool)
    assert_allclose((p + p.T)[off], 1.0)
    assert_allclose(np.diag(p), 0.5)
    rd = ranks.rank_distribution(t)
    assert_allclose(rd.probabilities.sum(axis=1), 1.0)
    assert_allclose(rd.probabilities.sum(axis=0), 1.0)
    # global dominance averages to 1/2 over models
    assert ranks.global_dominance(p).mean() == pytest.approx(0.5)


def test_strict_dominance_without_ties():
    rng = np.random.default_rng(0)
    t = rng.normal(size=(500, 6))
    p = ranks.dominance_matrix(t)
    for i in range(6):
        for j in range(6):
            if i != j:
                assert p[i, j] == pytest.approx(float(np.mean(t[:, i] > t[:, j])))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=3, max_size=25))
def test_kendall_and_spearman_match_scipy(pairs):
    x, y = np.array(pairs, dtype=float).T
    tau = ranks.kendall_tau(x, y)
    rho = ranks.spearman_rho(x, y)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        assert np.isnan(tau) and np.isnan(rho)
        return
    assert tau == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    assert rho == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)


def test_rank_values_ties_average():
    assert_allclose(ranks.rank_values([0.9, 0.5, 0.9, 0.1]), [1.5, 3, 1.5, 4])
    assert_allclose(ranks.rank_values([3, 1, 2], higher_is_better=False), [3, 1, 2])


def test_agreement_with_observed_scores():
    rng = np.random.default_rng(1)
    truth = np.array([2.0, 1.0, 0.0, -1.0, -2.0])
    theta = truth + rng.normal(0, 0.3, (2000, 5))
    observed = np.array([0.9, 0.7, 0.75, 0.3, 0.1])  # models 2 and 3 swapped
    ag = ranks.ranking_agreement(theta, observed, list("abcde"))
    # latent order a b c d e vs observed a c b d e: one discordant pair of 10 -> tau = (9 - 1)/10 = 0.8
    assert ag.kendall_tau == pytest.approx(0.8)
    # Spearman: d = (0, 1, 1, 0, 0) -> 1 - 6 x 2 / (5 x 24) = 0.9
    assert ag.spearman_rho == pytest.approx(0.9)
    assert ag.kendall_draws.n_draws == 2000
    assert -1 <= ag.kendall_draws.hdi95[0] <= ag.kendall_draws.median <= ag.kendall_draws.hdi95[1] <= 1
    # per-draw tau equals scipy's for a few draws
    for s in (0, 7, 1999):
        sub = ranks.ranking_agreement(theta[s:s + 1], observed, list("abcde"))
        assert sub.kendall_tau == pytest.approx(stats.kendalltau(theta[s], observed).statistic)
        assert sub.spearman_draws.median == pytest.approx(stats.spearmanr(theta[s], observed).statistic)


def test_agreement_with_external_ranking_reports_missing_models():
    theta = np.tile(np.array([3.0, 2.0, 1.0, 0.0]), (10, 1))
    external = {"a": 1, "b": 3, "c": 2, "zeta": 4}  # ranks, 1 = best; d absent, zeta unknown
    ag = ranks.ranking_agreement(theta, external, ["a", "b", "c", "d"], kind="rank")
    assert ag.models == ["a", "b", "c"]
    assert ag.missing_in_reference == ["d"]
    assert ag.missing_in_posterior == ["zeta"]
    # latent a > b > c vs external a > c > b: pairs (a,b) +, (a,c) +, (b,c) - -> tau = 1/3
    assert ag.kendall_tau == pytest.approx(1 / 3)
    as_scores = ranks.ranking_agreement(theta, {"a": 0.9, "b": 0.5, "c": 0.7}, ["a", "b", "c", "d"])
    assert as_scores.kendall_tau == pytest.approx(1 / 3)
    json.dumps(ag.to_dict())


@pytest.mark.parametrize("args, match", [
    ((np.zeros((3, 2)), {"x": 1, "y": 2}, ["a", "b"]), "only 0 model"),
    ((np.zeros((3, 2)), [1.0, 2.0, 3.0], ["a", "b"]), "has 3 values for 2 models"),
    ((np.zeros((3, 2)), [1.0, 2.0], ["a", "a"]), "names repeat"),
    ((np.zeros((3, 2)), [1.0, 2.0], ["a"]), "1 model names for 2 columns"),
    ((np.array([[0.0, np.nan]]), [1.0, 2.0], None), "non-finite value at draw 0"),
])
def test_agreement_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        ranks.ranking_agreement(*args)


def test_agreement_bad_kind():
    with pytest.raises(ValueError, match="kind should be"):
        ranks.ranking_agreement(np.zeros((2, 2)), [1.0, 2.0], kind="order")
