"""`ddr methods` on plain G-study tables against Brennan's (2001) closed forms, crossed and nested.

For balanced designs the variance components are the ANOVA (expected-mean-squares) solution and
every coefficient is a textbook ratio of them (Brennan 2001, ch. 4): the
expected numbers here are computed by hand from mean squares, never by the code under test.
The facet sizes are the crux: a nested facet counts its levels within its nest
(raters per task), a crossed facet all its levels (tasks), whatever the labels.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ddr_closed_forms import nested_anova  # registered by tests/conftest.py
from ddr_explorer.core import cli
from ddr_explorer.core.estimators.methods import _coefficients
from ddr_explorer.core.estimators.score_table import nesting_facets, observed_sizes, score_table_methods

CHEAP = ("Henderson", "REML")
NESTED = "score ~ (1|p) + (1|t) + (1|r:t) + (1|p:t)"
NESTED_TERMS = {"p": ["p"], "t": ["t"], "r:t": ["r", "t"], "p:t": ["p", "t"]}


def _nested_table(n_p=30, n_t=3, n_r=4, *, unique_raters: bool, seed=0) -> pd.DataFrame:
    """Balanced p x (r:t); raters labelled 1..n_r within each task, or 1..n_t*n_r across tasks
    (Brennan's Synthetic Data Set No. 3 numbers them across tasks)."""
    rng = np.random.default_rng(seed)
    up, ut = rng.normal(0, 1.0, n_p), rng.normal(0, 0.5, n_t)
    urt, upt = rng.normal(0, 0.6, (n_t, n_r)), rng.normal(0, 0.7, (n_p, n_t))
    rows = [(p, t, t * n_r + r if unique_raters else r, 5 + up[p] + ut[t] + urt[t, r] + upt[p, t] + rng.normal(0, 0.8))
            for p in range(n_p) for t in range(n_t) for r in range(n_r)]
    return pd.DataFrame(rows, columns=["p", "t", "r", "score"])


# -- Brennan's own numbers ------------------------------------------------------------------------------
#: G-study estimates of Synthetic Data Set No. 3, p x (r:t), 10 persons, 3 tasks, 4 raters per task
#: (Brennan 2001, sec. 3.2; gtheory's Brennan.3.2 reproduces them).
BRENNAN_3 = {"p": 0.4731, "t": 0.3252, "r:t": 0.6475, "p:t": 0.5596, "residual": 2.3802}


def test_brennans_synthetic_data_set_3_sizes_tasks_as_tasks_and_raters_per_task():
    shape = _nested_table(n_p=10, n_t=3, n_r=4, unique_raters=True)  # raters 0..11, as in Brennan.3.2
    sizes = observed_sizes(shape, NESTED_TERMS, "p")
    assert sizes == {"t": 3.0, "r": 4.0, "replicate": 1.0}  # was {"t": 1, "r": 4}: tasks per rater
    c = _coefficients(BRENNAN_3, "p", sizes)
    # Erho2 = s2_p / (s2_p + s2_pt/n_t + s2_pr:t,e/(n_r n_t)) = 0.4731 / (0.4731 + 0.18653 + 0.19835)
    assert c["Erho2"] == pytest.approx(0.5514, abs=5e-5)
    # Phi adds s2_t/n_t + s2_r:t/(n_r n_t) = 0.10840 + 0.05396
    assert c["Phi"] == pytest.approx(0.4637, abs=5e-5)


@pytest.mark.parametrize("unique_raters", [False, True])
def test_nested_p_x_r_in_t_every_estimand_against_the_closed_form(unique_raters):
    df = _nested_table(unique_raters=unique_raters)
    y = df.sort_values(["p", "t", "r"])["score"].to_numpy().reshape(30, 3, 4)
    want = nested_anova(y)
    t = score_table_methods(df.astype({"p": str, "t": str, "r": str}), NESTED, "score", estimators=CHEAP)
    assert t.sizes == {"t": 3.0, "r": 4.0, "replicate": 1.0}
    erho = want["p"] / (want["p"] + want["p:t"] / 3 + want["residual"] / 12)
    phi = want["p"] / (want["p"] + want["t"] / 3 + want["p:t"] / 3 + want["r:t"] / 12 + want["residual"] / 12)
    total = sum(want.values())
    for est in CHEAP:
        for term, v in want.items():
            assert t.components[est][term] == pytest.approx(v, rel=1e-6), (est, term)
            assert t.shares[est][term] == pytest.approx(v / total, rel=1e-6), (est, term)
        assert t.coefficients[est]["Erho2"] == pytest.approx(erho, rel=1e-6)
        assert t.coefficients[est]["Phi"] == pytest.approx(phi, rel=1e-6)
    assert 0.5 < phi < erho < 0.95  # a design where a wrong divisor shows


# -- crossed designs ------------------------------------------------------------------------------------
def test_crossed_p_x_i_is_cronbachs_alpha():
    rng = np.random.default_rng(5)
    n_p, n_i = 40, 6
    y = 3 + rng.normal(0, 1, (n_p, 1)) + rng.normal(0, 0.7, (1, n_i)) + rng.normal(0, 1.1, (n_p, n_i))
    df = pd.DataFrame([(f"p{p}", f"i{i}", y[p, i]) for p in range(n_p) for i in range(n_i)],
                      columns=["p", "i", "score"])
    t = score_table_methods(df, "score ~ (1|p) + (1|i)", "score", estimators=CHEAP)
    assert t.sizes == {"i": 6.0, "replicate": 1.0}
    g = y.mean()
    ms_p = n_i * ((y.mean(1) - g) ** 2).sum() / (n_p - 1)
    ms_i = n_p * ((y.mean(0) - g) ** 2).sum() / (n_i - 1)
    ms_e = ((y - y.mean(1, keepdims=True) - y.mean(0, keepdims=True) + g) ** 2).sum() / ((n_p - 1) * (n_i - 1))
    s_p, s_i = (ms_p - ms_e) / n_i, (ms_i - ms_e) / n_p
    cov = np.cov(y, rowvar=False)  # alpha = n/(n-1) (1 - sum var_i / var_total): Erho2 of p x i
    alpha = n_i / (n_i - 1) * (1 - np.trace(cov) / cov.sum())
    for est in CHEAP:
        assert t.components[est]["p"] == pytest.approx(s_p, rel=1e-6)
        assert t.components[est]["i"] == pytest.approx(s_i, rel=1e-6)
        assert t.components[est]["residual"] == pytest.approx(ms_e, rel=1e-6)
        assert t.coefficients[est]["Erho2"] == pytest.approx(alpha, rel=1e-6)
        assert t.coefficients[est]["Phi"] == pytest.approx(s_p / (s_p + (s_i + ms_e) / n_i), rel=1e-6)


def test_crossed_p_x_i_x_o_every_component_and_coefficient():
    rng = np.random.default_rng(11)
    n_p, n_i, n_o = 25, 5, 3
    sd = {"p": 1.0, "i": 0.6, "o": 0.4, "pi": 0.5, "po": 0.6, "io": 0.5, "e": 0.7}
    y = (rng.normal(0, sd["p"], (n_p, 1, 1)) + rng.normal(0, sd["i"], (1, n_i, 1)) + rng.normal(0, sd["o"], (1, 1, n_o))
         + rng.normal(0, sd["pi"], (n_p, n_i, 1)) + rng.normal(0, sd["po"], (n_p, 1, n_o))
         + rng.normal(0, sd["io"], (1, n_i, n_o)) + rng.normal(0, sd["e"], (n_p, n_i, n_o)))
    df = pd.DataFrame([(f"p{p}", f"i{i}", f"o{o}", y[p, i, o]) for p in range(n_p) for i in range(n_i)
                       for o in range(n_o)], columns=["p", "i", "o", "score"])
    t = score_table_methods(df, "score ~ (1|p) + (1|i) + (1|o) + (1|p:i) + (1|p:o) + (1|i:o)", "score",
                            estimators=CHEAP)
    assert t.sizes == {"i": 5.0, "o": 3.0, "replicate": 1.0}
    g = y.mean()
    m_p, m_i, m_o = y.mean((1, 2)), y.mean((0, 2)), y.mean((0, 1))
    m_pi, m_po, m_io = y.mean(2), y.mean(1), y.mean(0)
    ms = {"p": n_i * n_o * ((m_p - g) ** 2).sum() / (n_p - 1),
          "i": n_p * n_o * ((m_i - g) ** 2).sum() / (n_i - 1),
          "o": n_p * n_i * ((m_o - g) ** 2).sum() / (n_o - 1),
          "pi": n_o * ((m_pi - m_p[:, None] - m_i[None] + g) ** 2).sum() / ((n_p - 1) * (n_i - 1)),
          "po": n_i * ((m_po - m_p[:, None] - m_o[None] + g) ** 2).sum() / ((n_p - 1) * (n_o - 1)),
          "io": n_p * ((m_io - m_i[:, None] - m_o[None] + g) ** 2).sum() / ((n_i - 1) * (n_o - 1))}
    r = (y - m_pi[:, :, None] - m_po[:, None, :] - m_io[None] + m_p[:, None, None] + m_i[None, :, None]
         + m_o[None, None, :] - g)
    ms["e"] = (r ** 2).sum() / ((n_p - 1) * (n_i - 1) * (n_o - 1))
    # Brennan 2001, Table 3.2: each mean square's expectation solved for its component
    want = {"i:p": (ms["pi"] - ms["e"]) / n_o, "o:p": (ms["po"] - ms["e"]) / n_i, "i:o": (ms["io"] - ms["e"]) / n_p,
            "residual": ms["e"]}
    want["p"] = (ms["p"] - ms["pi"] - ms["po"] + ms["e"]) / (n_i * n_o)
    want["i"] = (ms["i"] - ms["pi"] - ms["io"] + ms["e"]) / (n_p * n_o)
    want["o"] = (ms["o"] - ms["po"] - ms["io"] + ms["e"]) / (n_p * n_i)
    assert min(want.values()) > 0  # no component floored at zero: REML must equal ANOVA
    rel = want["i:p"] / n_i + want["o:p"] / n_o + want["residual"] / (n_i * n_o)
    ab = rel + want["i"] / n_i + want["o"] / n_o + want["i:o"] / (n_i * n_o)
    for est in CHEAP:
        for term, v in want.items():
            assert t.components[est][term] == pytest.approx(v, rel=1e-6), (est, term)
        assert t.coefficients[est]["Erho2"] == pytest.approx(want["p"] / (want["p"] + rel), rel=1e-6)
        assert t.coefficients[est]["Phi"] == pytest.approx(want["p"] / (want["p"] + ab), rel=1e-6)


# -- unbalanced nesting (Rajaratnam, Cronbach & Gleser 1965: subtests of 2, 2 and 4 items) -------------
def _subtest_table(seed=2) -> pd.DataFrame:
    """p x (i:h), items numbered 1..n within each subtest (labels reused across subtests)."""
    rng = np.random.default_rng(seed)
    n_items = (2, 2, 4)
    up, uph = rng.normal(0, 1, 20), rng.normal(0, 0.6, (20, 3))
    rows = [(f"P{p}", f"S{h}", f"I{i}", up[p] + uph[p, h] + rng.normal(0, 1))
            for p in range(20) for h, n in enumerate(n_items) for i in range(n)]
    return pd.DataFrame(rows, columns=["Person", "Subtest", "Item", "Score"])


def test_unbalanced_items_in_subtests_count_three_subtests(tmp_path, capsys):
    df = _subtest_table()
    formula = "Score ~ (1|Person) + (1|Subtest) + (1|Item:Subtest) + (1|Person:Subtest)"
    terms = {"Person": ["Person"], "Subtest": ["Subtest"], "Item:Subtest": ["Item", "Subtest"],
             "Person:Subtest": ["Person", "Subtest"]}
    assert nesting_facets(terms, "Item") == ["Subtest"] and nesting_facets(terms, "Subtest") == []
    sizes = observed_sizes(df, terms, "Person")
    assert sizes == {"Subtest": 3.0, "Item": pytest.approx(8 / 3), "replicate": 1.0}  # was Subtest 2
    t = score_table_methods(df, formula, "Score", estimators=CHEAP)
    for est in CHEAP:
        c = t.components[est]
        # s2_ph over the 3 subtests, s2_pi:h,e over all 8 items
        erho = c["Person"] / (c["Person"] + c["Person:Subtest"] / 3 + c["residual"] / 8)
        assert t.coefficients[est]["Erho2"] == pytest.approx(erho, rel=1e-9)
    path = tmp_path / "subtests.csv"
    df.to_csv(path, index=False)
    assert cli.main(["methods", str(path), "--formula", formula, "--no-bayes", "--quiet", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sizes"]["Subtest"] == 3.0
