"""Henderson Method I against closed-form ANOVA answers."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from ddr_explorer.core.henderson import henderson_method1


def nested_design(n_p=6, n_t=3, n_r=4, seed=1, s2=(4.0, 1.5, 0.8, 1.2, 0.5)):
    """Balanced persons x (raters : tasks) with 0-9-like scores."""
    rng = np.random.default_rng(seed)
    s_p, s_t, s_rt, s_pt, s_e = np.sqrt(s2)
    up, ut = rng.normal(0, s_p, n_p), rng.normal(0, s_t, n_t)
    urt, upt = rng.normal(0, s_rt, (n_t, n_r)), rng.normal(0, s_pt, (n_p, n_t))
    rows = []
    for p, t, r in itertools.product(range(n_p), range(n_t), range(n_r)):
        y = 5 + up[p] + ut[t] + urt[t, r] + upt[p, t] + rng.normal(0, s_e)
        rows.append((f"p{p}", f"t{t}", f"r{r}", y))
    return pd.DataFrame(rows, columns=["person", "task", "rater", "score"])


def anova_nested(df, n_p, n_t, n_r):
    """Classical EMS solution for p x (r:t), written out from the ANOVA table."""
    y = df.sort_values(["person", "task", "rater"])["score"].to_numpy().reshape(n_p, n_t, n_r)
    m = y.mean()
    mp, mt = y.mean(axis=(1, 2)), y.mean(axis=(0, 2))
    mrt, mpt = y.mean(axis=0), y.mean(axis=2)
    ss_p = n_t * n_r * np.sum((mp - m) ** 2)
    ss_t = n_p * n_r * np.sum((mt - m) ** 2)
    ss_rt = n_p * np.sum((mrt - mt[:, None]) ** 2)
    ss_pt = n_r * np.sum((mpt - mp[:, None] - mt[None, :] + m) ** 2)
    ss_e = np.sum((y - mpt[:, :, None] - mrt[None, :, :] + mt[None, :, None]) ** 2)
    ms_p = ss_p / (n_p - 1)
    ms_t = ss_t / (n_t - 1)
    ms_rt = ss_rt / (n_t * (n_r - 1))
    ms_pt = ss_pt / ((n_p - 1) * (n_t - 1))
    ms_e = ss_e / ((n_p - 1) * n_t * (n_r - 1))
    s2_e = ms_e
    s2_pt = (ms_pt - ms_e) / n_r
    s2_rt = (ms_rt - ms_e) / n_p
    s2_p = (ms_p - ms_pt) / (n_t * n_r)
    s2_t = (ms_t - ms_pt - ms_rt + ms_e) / (n_p * n_r)
    return {"person": s2_p, "task": s2_t, "task:rater": s2_rt, "person:task": s2_pt, "residual": s2_e}


def test_balanced_nested_design_equals_anova_ems():
    df = nested_design()
    got = henderson_method1(df, ["person", "task", "task:rater", "person:task"], response="score")
    want = anova_nested(df, 6, 3, 4)
    for term, value in want.items():
        assert got.raw[term] == pytest.approx(value, rel=1e-10, abs=1e-12), term


def test_hand_computed_tiny_nested_design():
    """2 persons x (2 raters : 2 tasks), every mean square worked out by hand.

    scores y[p, t, r]:  p1: t1 (1, 3), t2 (6, 8);   p2: t1 (3, 7), t2 (6, 10)
    grand mean 5.5; person means 4.5, 6.5; task means 3.5, 7.5;
    person-task means 2, 7, 5, 8; rater-within-task means t1 (2, 5), t2 (6, 9).
    SS_total = 62
    SS_p   = 4 * (1 + 1)                        = 8    MS_p   = 8   (df 1)
    SS_t   = 4 * (4 + 4)                        = 32   MS_t   = 32  (df 1)
    SS_r:t = 2 * (2.25 + 2.25 + 2.25 + 2.25)    = 18   MS_r:t = 9   (df 2)
    SS_pt  = 2 * 4 * 0.5^2 (residuals +-0.5)    = 2    MS_pt  = 2   (df 1)
    SS_e   = 62 - 8 - 32 - 18 - 2               = 2    MS_e   = 1   (df 2)
    EMS solution: s2_e = 1; s2_pt = (2 - 1)/2 = 0.5; s2_r:t = (9 - 1)/2 = 4;
    s2_p = (8 - 2)/4 = 1.5; s2_t = (32 - 2 - 9 + 1)/4 = 5.5.
    """
    y = {("p1", "t1"): (1, 3), ("p1", "t2"): (6, 8), ("p2", "t1"): (3, 7), ("p2", "t2"): (6, 10)}
    rows = [(p, t, f"r{i}", v) for (p, t), vals in y.items() for i, v in enumerate(vals)]
    df = pd.DataFrame(rows, columns=["person", "task", "rater", "score"])
    got = henderson_method1(df, ["person", "task", "task:rater", "person:task"], response="score")
    assert got.raw == pytest.approx({"person": 1.5, "task": 5.5, "task:rater": 4.0, "person:task": 0.5,
                                     "residual": 1.0})
    assert got.flagged == [] and got.n_obs == 8 and got.grand_mean == 5.5


def test_negative_estimates_are_floored_and_flagged():
    # persons identical in expectation and a tiny sample: the person component comes out negative
    df = pd.DataFrame({"person": ["a", "a", "b", "b"], "task": ["x", "y", "x", "y"], "score": [1.0, 5.0, 2.0, 4.0]})
    df = pd.concat([df, df.assign(score=df.score + [0.5, -0.5, -0.5, 0.5])], ignore_index=True)
    got = henderson_method1(df, ["person", "task", "person:task"], response="score")
    assert "person" in got.flagged and got.raw["person"] < 0 and got.components["person"] == 0.0


def test_binomial_cells_equal_expanded_binary_trials():
    rng = np.random.default_rng(3)
    cells = pd.DataFrame([(f"t{i}", f"m{m}", f"a{a}") for i in range(8) for m in range(5) for a in range(3)
                          if rng.random() < 0.8], columns=["task", "model", "scaffold"])
    cells["trials"] = rng.integers(1, 6, len(cells))
    cells["successes"] = rng.binomial(cells["trials"], 0.4)
    terms = ["task", "model", "scaffold", "task:model", "task:scaffold", "model:scaffold"]
    agg = henderson_method1(cells, terms)
    rows = cells.loc[cells.index.repeat(cells.trials)].copy()
    rows["y"] = np.concatenate([[1.0] * k + [0.0] * (n - k) for k, n in zip(cells.successes, cells.trials)])
    flat = henderson_method1(rows, terms, response="y")
    assert agg.raw == pytest.approx(flat.raw, rel=1e-9, abs=1e-12)


def test_unbalanced_crossed_recovers_known_components_on_average():
    rng = np.random.default_rng(7)
    est = []
    for _ in range(40):
        n_a, n_b = 30, 20
        ua, ub = rng.normal(0, 2.0, n_a), rng.normal(0, 1.0, n_b)
        keep = rng.random((n_a, n_b)) < 0.6  # unbalanced: 40% of cells missing
        a, b = np.nonzero(keep)
        y = ua[a] + ub[b] + rng.normal(0, 0.5, len(a))
        df = pd.DataFrame({"a": a, "b": b, "y": y})
        est.append(list(henderson_method1(df, ["a", "b"], response="y").raw.values()))
    mean = np.mean(est, axis=0)
    np.testing.assert_allclose(mean, [4.0, 1.0, 0.25], rtol=0.25)


def test_confounded_terms_are_named():
    df = pd.DataFrame({"task": ["t1", "t2", "t3", "t4"] * 2, "group": ["g1", "g2", "g3", "g4"] * 2, "y": np.arange(8.0)})
    with pytest.raises(ValueError, match="cannot separate"):
        henderson_method1(df, ["task", "group"], response="y")


def test_missing_facet_names_the_column():
    df = pd.DataFrame({"task": ["a"], "y": [1.0]})
    with pytest.raises(ValueError, match="no column 'rater'"):
        henderson_method1(df, ["task", "task:rater"], response="y")
