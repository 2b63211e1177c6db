"""Two agents, one decision (core/pair_comparison.py, core/pair_sizing.py, ddr compare).

Known answers: the paired test and McNemar's test by hand, the expected success rate against Monte Carlo,
P(A better) from constructed draws, and the sizing's P(right one ahead) against whole simulated evaluations.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ddr_explorer.core.pair_comparison import PairError, compare_pair, expected_rate, paired_test, resolve
from ddr_explorer.core.pair_sizing import size_pair_decision
from ddr_explorer.core.reliability import VarianceComponents

# binary outcomes of two models on six tasks (one trial each) and a third model on four of them
Y = {"A": [1, 1, 1, 0, 1, 0], "B": [0, 1, 0, 0, 1, 1], "C": [1, 0, 0, 0]}


def _table():
    rows = [("bench", f"t{i}", m, "s", y, 1) for m, ys in Y.items() for i, y in enumerate(ys)]
    return pd.DataFrame(rows, columns=["benchmark", "task", "model", "scaffold", "successes", "trials"])


def test_paired_test_and_mcnemar_by_hand():
    t = paired_test(_table(), "model", "A", "B")
    d = np.array(Y["A"]) - np.array(Y["B"])          # 1, 0, 1, 0, 0, -1
    se = d.std(ddof=1) / math.sqrt(6)
    assert t.n_tasks == 6 and t.difference == pytest.approx(1 / 6)
    assert t.se == pytest.approx(se)
    assert (t.lower95, t.upper95) == pytest.approx((1 / 6 - stats.t.ppf(0.975, 5) * se, 1 / 6 + stats.t.ppf(0.975, 5) * se))
    assert t.p_value == pytest.approx(2 * stats.t.sf((1 / 6) / se, 5))
    assert t.discordant == (2, 1)                      # A only on t0, t2; B only on t5
    assert t.mcnemar_p == pytest.approx(1.0)           # exact binomial, 1 of 3 discordant
    assert 0.5 < t.p_ahead < 1.0
    # only the shared tasks count: C ran four
    assert paired_test(_table(), "model", "A", "C").n_tasks == 4


def test_names_resolve_case_and_space_insensitively_or_name_the_near_ones():
    names = ["GPT-5.2", "Claude Opus 4.5", "Gemini 3 Pro"]
    assert resolve("claude  opus 4.5", names, "model") == 1
    with pytest.raises(PairError, match="did you mean 'Gemini 3 Pro'"):
        resolve("Gemni 3 Pro", names, "model")


def _posterior(theta: np.ndarray, names):
    """A posterior-like object with model effects only (what the comparison reads)."""
    return SimpleNamespace(random_effects={"model": theta[None]}, levels={"model": pd.DataFrame({"model": names})},
                           mu=None)


def test_expected_rate_is_the_logit_normal_mean():
    c = VarianceComponents.from_mapping({"model": 1.0, "task": 2.0, "task:model": 0.5}, intercept=[-0.5, 0.3])
    theta = np.array([0.8, -1.2])
    rng = np.random.default_rng(0)
    z = rng.standard_normal(400_000)
    mc = [np.mean(1 / (1 + np.exp(-(mu + th + math.sqrt(2.5) * z)))) for mu, th in zip([-0.5, 0.3], theta)]
    assert expected_rate(c, theta, "model") == pytest.approx(mc, abs=2e-3)


def test_comparison_from_constructed_draws():
    rng = np.random.default_rng(1)
    s = 2000
    theta = np.column_stack([rng.normal(1.2, 0.3, s), rng.normal(0.0, 0.3, s), rng.normal(-0.2, 0.3, s)])
    c = VarianceComponents.from_mapping({"model": np.full(s, 0.5), "task": np.full(s, 1.0),
                                         "task:model": np.full(s, 0.3)}, intercept=np.zeros(s))
    cmp = compare_pair(_posterior(theta, ["A", "B", "C"]), _table(), c, "A", "B")
    assert cmp.p_a_better == pytest.approx(np.mean(theta[:, 0] > theta[:, 1]))
    assert cmp.latent_difference.median == pytest.approx(np.median(theta[:, 0] - theta[:, 1]))
    assert cmp.rate_difference.median > 0.05
    assert "A ranks above B" in cmp.sentence and "real" in cmp.sentence
    with pytest.raises(PairError, match="compared with itself"):
        compare_pair(_posterior(theta, ["A", "B", "C"]), _table(), c, "A", "a")


def _simulate_right_ahead(c, theta_pair, n, sims, rng):
    """Whole evaluations of n fresh tasks (one trial per cell): P(observed order = true order)."""
    s2t, s2tm = c.draws["task"][0], c.draws["task:model"][0]
    mu = c.intercept[0]
    right = 0.0
    truth = np.sign(expected_rate(c, theta_pair[0], "model")[0] - expected_rate(c, theta_pair[0][::-1], "model")[0])
    for _ in range(sims):
        eta = mu + theta_pair[0][:, None] + rng.normal(0, math.sqrt(s2t), n) + rng.normal(0, math.sqrt(s2tm), (2, n))
        y = rng.binomial(1, 1 / (1 + np.exp(-eta))).mean(axis=1)
        d = np.sign(y[0] - y[1])
        right += 0.5 if d == 0 else float(d == truth)
    return right / sims


@pytest.mark.parametrize("n", [5, 40, 300])
def test_sizing_matches_whole_simulated_evaluations(n):
    c = VarianceComponents.from_mapping({"model": 1.0, "task": 2.0, "task:model": 0.6}, intercept=-0.4)
    theta = np.array([[0.35, 0.0]])
    delta = expected_rate(c, theta[:, 0], "model") - expected_rate(c, theta[:, 1], "model")
    sz = size_pair_decision(c, theta, delta, {"task": n, "replicate": 1}, max_draws=1)
    sim = _simulate_right_ahead(c, theta, n, 4000, np.random.default_rng(n))
    assert sz.p_now == pytest.approx(sim, abs=0.03)
    # the answer is monotone and consistent with the curve
    q = sz.tasks_for
    assert q[0.8] <= q[0.9] <= q[0.95] < math.inf
    k = int(np.searchsorted(sz.curve_n, q[0.9]))
    assert sz.curve_p[k] >= 0.9 - 1e-9


def test_sizing_says_never_when_a_tie_cannot_be_broken():
    c = VarianceComponents.from_mapping({"model": 1.0, "task": 2.0, "task:model": 0.6}, intercept=0.0)
    theta = np.array([[0.0, 0.0]])
    sz = size_pair_decision(c, theta, np.zeros(1), {"task": 50, "replicate": 1}, max_draws=1)
    assert sz.tasks_for[0.8] == math.inf and sz.p_limit <= 0.5 + 1e-9


def test_tiers_cut_where_an_object_is_told_apart_from_the_tier_leader():
    rng = np.random.default_rng(3)
    s = 4000
    # three well separated groups; within a group the means differ by far less than the draws' spread
    means = [3.0, 2.9, 1.0, 0.9, 0.8, -1.0]
    theta = np.column_stack([rng.normal(m, 0.2, s) for m in means])
    names = ["a1", "a2", "b1", "b2", "b3", "c1"]
    from ddr_explorer.core.rank_tiers import rank_tiers

    t = rank_tiers(theta, names)
    assert t.tiers == [["a1", "a2"], ["b1", "b2", "b3"], ["c1"]]
    told = {(a, b) for a, b, _ in t.pairs}
    assert ("a1", "b1") in told and ("b3", "c1") in told and ("a1", "a2") not in told
    assert len(t.pairs) == 2 * 3 + 2 + 3  # across groups only: a x b, a x c, b x c
    assert t.n_pairs == 15 and "11 of 15 pairs" in t.sentence()
    with pytest.raises(ValueError, match="probability in"):
        rank_tiers(theta, names, 0.4)


def _corpus_with_gap(tmp_path, gap: float, seed: int):
    """A simulated corpus (12 models, 30 tasks, 3 trials per cell) where theta_A - theta_B = gap, known."""
    from ddr_explorer.core.corpus.io import load_corpus

    rng = np.random.default_rng(seed)
    n_models, n_tasks, trials = 12, 30, 3
    um = rng.normal(0, 1.0, n_models)
    um[0], um[1] = 0.2 + gap / 2, 0.2 - gap / 2
    eta = -0.3 + um[:, None] + rng.normal(0, 1.5, n_tasks)[None, :] + rng.normal(0, 0.5, (n_models, n_tasks))
    y = rng.binomial(trials, 1 / (1 + np.exp(-eta)))
    names = ["A", "B"] + [f"m{k:02d}" for k in range(2, n_models)]
    m, t = np.meshgrid(np.arange(n_models), np.arange(n_tasks), indexing="ij")
    path = tmp_path / f"gap{gap}.csv"
    pd.DataFrame({"benchmark": "sim", "task": [f"t{k:02d}" for k in t.ravel()],
                  "model": [names[k] for k in m.ravel()], "scaffold": "s",
                  "successes": y.ravel(), "trials": trials}).to_csv(path, index=False)
    return load_corpus(path)


@pytest.mark.parametrize("gap, seed", [(2.0, 11), (0.0, 12)])
def test_a_fitted_simulated_corpus_recovers_a_known_gap(tmp_path, gap, seed):
    """The product's own fit (short chains) of a corpus with a known latent gap: the 95% interval covers it,
    P(A better) is near 1 for a large gap and undecided for none, and the sentence says which.  The coverage
    over many data sets is bench/bench_pair_recovery.py's."""
    from ddr_explorer.core.fitting import components_from_posterior, fit_corpus
    from ddr_explorer.core.model.sampler import SamplerSettings

    corpus = _corpus_with_gap(tmp_path, gap, seed)
    settings = SamplerSettings(draws=200, warmup=200, chains=2, stop="fixed", seed=seed)
    post = fit_corpus(corpus, "per-benchmark", settings, cache_dir=tmp_path / "cache").posterior
    c = compare_pair(post, corpus.table, components_from_posterior(post), "A", "B")
    lo, hi = c.latent_difference.hdi95
    assert lo <= gap <= hi
    assert hi - lo < 2.0  # an interval that says something (about +-0.6 here)
    if gap:
        assert c.p_a_better > 0.99 and c.paired.p_value < 0.01
        assert "A ranks above B" in c.sentence
    else:
        assert 0.05 < c.p_a_better < 0.95 and c.paired.p_value > 0.05
        assert "do not settle" in c.sentence
