"""Scoring rules, rescoring and counterfactual comparison (seed 002 sec. 3 and 5.2)."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddr_explorer.core.corpus import scoring
from ddr_explorer.core.corpus.corpus import Corpus

NAN = float("nan")

# Ragged rows: the fourth trial has five verifiers, the others three.
ROWS = [[1, 1, 1], [1, 1, 0], [1, 0, 0], [1, 1, 1, 1, 0], [0, 0, 0]]


# ---------------------------------------------------------------------------
# The rules on hand-computed rows
# ---------------------------------------------------------------------------
def test_all_pass():
    np.testing.assert_array_equal(scoring.all_pass(ROWS), [1, 0, 0, 0, 0])


def test_soft():
    np.testing.assert_allclose(scoring.soft(ROWS), [1, 2 / 3, 1 / 3, 0.8, 0])


@pytest.mark.parametrize(
    ("gamma", "expected"),
    [(0.5, [1, 1, 0, 1, 0]), (2 / 3, [1, 1, 0, 1, 0]), (0.8, [1, 0, 0, 1, 0]), (0.9, [1, 0, 0, 0, 0]),
     (0.0, [1, 1, 1, 1, 1])],
)
def test_threshold(gamma, expected):
    np.testing.assert_array_equal(scoring.threshold(ROWS, gamma), expected)


def test_threshold_other_summaries():
    # count of positives >= 2, via a callable on the observed results
    np.testing.assert_array_equal(scoring.threshold(ROWS, 2, g=np.sum), [1, 1, 0, 1, 0])
    np.testing.assert_array_equal(scoring.threshold(ROWS, 1, g="min"), [1, 0, 0, 0, 0])
    # a single continuous verifier: g is the identity
    np.testing.assert_array_equal(scoring.threshold([[0.7], [0.3], [0.5]], 0.5, g="max"), [1, 0, 1])
    with pytest.raises(ValueError, match="unknown summary"):
        scoring.threshold(ROWS, 0.5, g="mode")


def test_near_pass():
    # only the 4-of-5 trial fails all-pass with >= 80% positive
    np.testing.assert_array_equal(scoring.near_pass(ROWS), [0, 0, 0, 1, 0])
    # with frac = 0.6, 2 of 3 qualifies as well
    np.testing.assert_array_equal(scoring.near_pass(ROWS, frac=0.6), [0, 1, 0, 1, 0])
    with pytest.raises(ValueError, match=r"frac must be in \(0, 1\]"):
        scoring.near_pass(ROWS, frac=0)


def test_direct():
    np.testing.assert_array_equal(scoring.direct(ROWS), [1, 1, 1, 1, 0])
    np.testing.assert_array_equal(scoring.direct(ROWS, 2), [1, 0, 0, 1, 0])
    df = pd.DataFrame({"verifier.tests": [1, 0], "verifier.lint": [0, 0]})
    np.testing.assert_array_equal(scoring.direct(df, "lint"), [0, 0])
    np.testing.assert_array_equal(scoring.direct(df, "verifier.tests"), [1, 0])
    with pytest.raises(ValueError, match="no verifier named 'style'"):
        scoring.direct(df, "style")


def test_missing_policies():
    r = [[1, NAN, 1], [0, NAN, NAN], [NAN, NAN, NAN]]
    np.testing.assert_array_equal(scoring.all_pass(r), [1, 0, NAN])
    np.testing.assert_array_equal(scoring.soft(r), [1, 0, NAN])
    np.testing.assert_array_equal(scoring.all_pass(r, missing="fail"), [0, 0, 0])
    np.testing.assert_allclose(scoring.soft(r, missing="fail"), [2 / 3, 0, 0])
    np.testing.assert_array_equal(scoring.all_pass(r, missing="propagate"), [NAN, NAN, NAN])
    np.testing.assert_array_equal(scoring.near_pass([[1, 1, 1, 1, 0, NAN]]), [1])
    np.testing.assert_array_equal(scoring.direct(r, 1), [NAN, NAN, NAN])
    np.testing.assert_array_equal(scoring.direct(r, 1, missing="fail"), [0, 0, 0])
    with pytest.raises(ValueError, match="missing must be"):
        scoring.all_pass(r, missing="drop")


def test_binary_rules_reject_numbers():
    with pytest.raises(ValueError, match=r"needs 0/1 verifier results, but verifier 'v1' holds 0.5 in row 2"):
        scoring.all_pass([[1, 1], [0.5, 1]])
    # soft and threshold accept numerical results
    np.testing.assert_allclose(scoring.soft([[0.5, 1]]), [0.75])


def test_rank_correlation_keeps_float_ties():
    # 0.1 + 0.2 and 0.3 are one mean reached by two summation orders: a tie
    x = np.array([0.3, 0.1 + 0.2, 0.5])
    assert scoring._rank_corr(x, np.array([1.0, 2.0, 3.0]), "spearman") == pytest.approx(math.sqrt(3) / 2)
    assert math.isnan(scoring._rank_corr(np.array([1.0, 1.0]), np.array([0.0, 1.0]), "kendall"))


def test_dataframe_uses_verifier_columns_only():
    df = pd.DataFrame({"model": ["a", "b"], "verifier.x": [1.0, 1.0], "verifier.y": [1.0, 0.0]})
    values, names = scoring.verifier_matrix(df)
    assert names == ["x", "y"] and values.shape == (2, 2)
    np.testing.assert_array_equal(scoring.all_pass(df), [1, 0])
    # booleans count as 0/1
    np.testing.assert_array_equal(scoring.all_pass(np.array([[True, False], [True, True]])), [0, 1])


# ---------------------------------------------------------------------------
# A small corpus with verifier results
# ---------------------------------------------------------------------------
def make_verifier_corpus() -> Corpus:
    """Benchmark X: agents m1, m2, m3 (scaffold s) with 2 trials each; benchmark Y: one agent."""
    trials = [
        ("X", "t1", "m1", [1, 1, 1, NAN, NAN]),
        ("X", "t2", "m1", [1, 1, 0, NAN, NAN]),
        ("X", "t1", "m2", [1, 0, 0, NAN, NAN]),
        ("X", "t2", "m2", [0, 0, 0, NAN, NAN]),
        ("X", "t3", "m3", [1, 1, 1, 1, 0]),
        ("X", "t4", "m3", [1, 1, 1, 1, 1]),
        ("Y", "u1", "m1", [1, 1, NAN, NAN, NAN]),
        ("Y", "u2", "m1", [NAN, NAN, NAN, NAN, NAN]),  # no verifier result at all
    ]
    df = pd.DataFrame({
        "benchmark": pd.Categorical([t[0] for t in trials]),
        "task": pd.Categorical([t[1] for t in trials]),
        "model": pd.Categorical([t[2] for t in trials]),
        "scaffold": pd.Categorical(["s"] * len(trials)),
        "successes": np.zeros(len(trials), dtype=np.int64),
        "trials": np.ones(len(trials), dtype=np.int64),
    })
    for j in range(5):
        df[f"verifier.c{j + 1}"] = [t[3][j] for t in trials]
    return Corpus(table=df, name="toy", provenance={"scoring_rule": {"rule": "direct"}})


def test_rescore_all_pass():
    corpus = make_verifier_corpus()
    out = scoring.rescore(corpus, "all_pass")
    assert out.n_records == 7 and out.n_trials == 7
    np.testing.assert_array_equal(out.table["successes"], [1, 0, 0, 0, 0, 1, 1])
    assert out.table["successes"].dtype == np.int64 and out.table["trials"].dtype == np.int64
    np.testing.assert_allclose(out.table["soft_score"], [1, 2 / 3, 1 / 3, 0, 0.8, 1, 1])
    rule = out.provenance["scoring_rule"]
    assert rule["rule"] == "all-pass" and rule["dropped_trials"] == 1 and rule["scored_trials"] == 7
    assert rule["verifiers"] == [f"verifier.c{j}" for j in range(1, 6)]
    assert out.provenance["previous_scoring_rule"] == {"rule": "direct"}
    assert [w.code for w in out.warnings] == ["unscored-trials"]
    # the input is untouched
    assert corpus.n_records == 8 and "previous_scoring_rule" not in corpus.provenance


def test_rescore_threshold_and_direct():
    corpus = make_verifier_corpus()
    out = scoring.rescore(corpus, "threshold", gamma=0.5)
    np.testing.assert_array_equal(out.table["successes"], [1, 1, 0, 0, 1, 1, 1])
    assert out.provenance["scoring_rule"]["params"] == {"missing": "ignore", "gamma": 0.5, "g": "mean"}
    out = scoring.rescore(corpus, "direct", verifier="c3")
    np.testing.assert_array_equal(out.table["successes"], [1, 0, 0, 0, 1, 1])
    assert out.provenance["scoring_rule"]["params"]["verifier"] == "c3"


def test_rescore_errors():
    corpus = make_verifier_corpus()
    with pytest.raises(ValueError, match="soft score is not a binary trial result"):
        scoring.rescore(corpus, "soft")
    with pytest.raises(ValueError, match="unknown scoring rule"):
        scoring.rescore(corpus, "majority")
    bare = Corpus(table=corpus.table.drop(columns=corpus.verifier_columns), name="bare")
    with pytest.raises(ValueError, match="corpus 'bare' has no verifier result columns"):
        scoring.rescore(bare, "all-pass")
    agg = corpus.table.copy()
    agg.loc[2, "trials"] = 3
    with pytest.raises(ValueError, match=r"rows 3 of the canonical table \(1 in all\) aggregate several trials"):
        scoring.rescore(Corpus(table=agg, name="agg"), "all-pass")


def test_comparison_hand_computed():
    cmp = scoring.scoring_rule_comparison(make_verifier_corpus())
    x = cmp.table.set_index("benchmark").loc["X"]
    assert (x["trials"], x["verifiers"], x["agents"]) == (6, 5, 3)
    assert x["all_pass"] == pytest.approx(2 / 6)
    assert x["soft"] == pytest.approx((1 + 2 / 3 + 1 / 3 + 0 + 0.8 + 1) / 6)
    assert x["threshold"] == pytest.approx(4 / 6)
    assert x["direct"] == pytest.approx(5 / 6)
    assert x["near_pass"] == pytest.approx(1 / 6)
    # agent means: all-pass (0.5, 0, 0.5), soft (5/6, 1/6, 0.9); ranks (2.5, 1, 2.5) vs (2, 1, 3)
    assert x["spearman_soft_all_pass"] == pytest.approx(1.5 / math.sqrt(1.5 * 2))
    assert x["kendall_soft_all_pass"] == pytest.approx(2 / math.sqrt(6))
    means = cmp.agent_means["X"]
    np.testing.assert_allclose(means["soft"].to_numpy(), [5 / 6, 1 / 6, 0.9])
    sp = cmp.spearman["X"]
    assert list(sp.columns) == ["direct", "all-pass", "threshold", "soft"]
    assert sp.loc["all-pass", "soft"] == sp.loc["soft", "all-pass"] == pytest.approx(0.8660254)
    # direct (c1) means (1, 0.5, 1) and threshold means (1, 0, 1)
    assert sp.loc["direct", "threshold"] == pytest.approx(1.0)
    # benchmark Y has one agent (and one scored trial): no rank correlation
    y = cmp.table.set_index("benchmark").loc["Y"]
    assert y["trials"] == 1 and math.isnan(y["spearman_soft_all_pass"])
    d = cmp.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["table"][1]["spearman_soft_all_pass"] is None


# ---------------------------------------------------------------------------
# The real multi-verifier file: MLE-bench (3 verifiers per trial)
# ---------------------------------------------------------------------------
VERIFIERS = ["above_median", "any_medal", "valid_submission"]


def _read_mlebench(corpora_dir: Path) -> list[dict]:
    with (corpora_dir / "bridge" / "mlebench_normalized_results.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _mlebench_corpus(records: list[dict]) -> Corpus:
    df = pd.DataFrame({
        "benchmark": pd.Categorical(["mlebench"] * len(records)),
        "task": pd.Categorical([r["task_id"] for r in records]),
        "model": pd.Categorical([r["model"] for r in records]),
        "scaffold": pd.Categorical(["unknown"] * len(records)),
        "successes": np.array([r["score"]["any_medal"] for r in records], dtype=np.int64),
        "trials": np.ones(len(records), dtype=np.int64),
    })
    for v in VERIFIERS:
        df[f"verifier.{v}"] = np.array([r["score"][v] for r in records], dtype=np.float64)
    return Corpus(table=df, name="mlebench")


def _average_ranks(values: list) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _pearson(x: list, y: list) -> float:
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy)


def _kendall_tau_b(x: list, y: list) -> float:
    concordant = discordant = tied_x = tied_y = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            dx = (x[i] > x[j]) - (x[i] < x[j])
            dy = (y[i] > y[j]) - (y[i] < y[j])
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tied_x += 1
            elif dy == 0:
                tied_y += 1
            elif dx == dy:
                concordant += 1
            else:
                discordant += 1
    n = concordant + discordant
    return (concordant - discordant) / math.sqrt((n + tied_x) * (n + tied_y))


def test_mlebench_counterfactual_scoring(corpora_dir):
    records = _read_mlebench(corpora_dir)
    corpus = _mlebench_corpus(records)
    cmp = scoring.scoring_rule_comparison(corpus)
    row = cmp.table.iloc[0]

    # Independent computation with plain Python over the parsed records.
    ap = [int(all(r["score"][v] == 1 for v in VERIFIERS)) for r in records]
    sf = [sum(r["score"][v] for v in VERIFIERS) / 3 for r in records]
    th = [int(s >= 0.5) for s in sf]
    near = [int(a == 0 and s >= 0.8) for a, s in zip(ap, sf)]
    by_model: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        by_model.setdefault(r["model"], []).append(i)
    models = sorted(by_model)
    # exact rational agent means, so that equal means tie exactly (e.g. four
    # models share a mean soft score of 37/114)
    ap_m = [Fraction(sum(ap[i] for i in by_model[m]), len(by_model[m])) for m in models]
    sf_m = [sum(Fraction(sum(records[i]["score"][v] for v in VERIFIERS), 3) for i in by_model[m])
            / len(by_model[m]) for m in models]
    assert sf_m.count(Fraction(37, 114)) == 4
    rho = _pearson(_average_ranks(ap_m), _average_ranks(sf_m))

    tau = _kendall_tau_b(ap_m, sf_m)

    # the independent computation ...
    assert len(records) == 494 and sum(ap) == 17 and sum(th) == 36 and sum(near) == 0
    assert sum(sf) / len(sf) == pytest.approx(0.3191632928, abs=1e-10)
    assert rho == pytest.approx(0.5205270159, abs=1e-10)
    assert tau == pytest.approx(0.4254650979, abs=1e-10)
    # ... and the module agree
    assert (row["trials"], row["agents"], row["verifiers"]) == (494, 13, 3)
    assert row["all_pass"] == pytest.approx(17 / 494, abs=1e-12)
    assert row["soft"] == pytest.approx(sum(sf) / len(sf), abs=1e-12)
    assert row["threshold"] == pytest.approx(36 / 494, abs=1e-12)
    # three verifiers: 2 of 3 is 67% < 80%, so no trial can be a near-pass
    assert row["near_pass"] == 0.0
    assert row["spearman_soft_all_pass"] == pytest.approx(rho, abs=1e-12)
    assert row["kendall_soft_all_pass"] == pytest.approx(tau, abs=1e-12)
    # rescoring with all-pass reproduces the counts
    rescored = scoring.rescore(corpus, "all-pass")
    assert rescored.n_successes == 17 and rescored.n_trials == 494
    assert rescored.provenance["scoring_rule"]["rule"] == "all-pass"
