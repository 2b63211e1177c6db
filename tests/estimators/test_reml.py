"""REML on the observed scale: the ANOVA solution on balanced data, lme4's numbers on unbalanced data."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddr_explorer.core.estimators.design import EstimationCancelled, MixedDesign
from ddr_explorer.core.estimators.reml import RemlProblem, reml

FIXTURES = Path(__file__).parent / "fixtures"
_spec = importlib.util.spec_from_file_location("_henderson_tests", Path(__file__).parents[1] / "test_henderson.py")
_ht = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ht)


def lme4(dataset: str, method: str) -> dict[str, float]:
    """lme4's numbers, written once by fixtures/lme4_fit.R (R 4.2.2, lme4 1.1.31)."""
    t = pd.read_csv(FIXTURES / "lme4_results.csv")
    t = t[(t.dataset == dataset) & (t.method == method)]
    return dict(zip(t.quantity, t.value))


def test_balanced_nested_design_equals_the_anova_ems_solution():
    # seed 2 of the Henderson tests' persons x (raters : tasks) design has no negative mean-square estimate
    df = _ht.nested_design(seed=2)
    want = _ht.anova_nested(df, 6, 3, 4)
    assert min(want.values()) > 0
    fit = reml(MixedDesign.from_table(df, ["person", "task", "task:rater", "person:task"], response="score"))
    for term, value in want.items():
        # exact up to the optimiser's resolution of a criterion that is flat at its optimum
        assert fit.components[term] == pytest.approx(value, rel=2e-6), term
    assert fit.intercept == pytest.approx(df.score.mean(), rel=1e-12)


def test_balanced_negative_anova_estimate_is_truncated_at_zero():
    # seed 1: the ANOVA task component is negative; REML sits on the boundary theta_task = 0
    df = _ht.nested_design(seed=1)
    assert _ht.anova_nested(df, 6, 3, 4)["task"] < 0
    fit = reml(MixedDesign.from_table(df, ["person", "task", "task:rater", "person:task"], response="score"))
    assert fit.components["task"] < 1e-8
    assert all(v >= 0 for v in fit.components.values())


@pytest.mark.parametrize("dataset, terms", [
    ("crossed", ["person", "item", "rater", "person:item"]),
    ("nested", ["person", "task", "task:rater", "person:task"]),
])
def test_unbalanced_matches_lme4(dataset, terms):
    df = pd.read_csv(FIXTURES / f"{dataset}.csv")
    fit = reml(MixedDesign.from_table(df, terms, response="score"))
    want = lme4(dataset, "REML")
    for term in [*terms, "residual"]:
        assert fit.components[term] == pytest.approx(want[term], rel=1e-4), term
    assert fit.intercept == pytest.approx(want["intercept"], rel=1e-6)
    # same criterion, constants included (Bates et al. 2015, eq. 41)
    assert fit.criterion == pytest.approx(want["REMLcrit"], abs=1e-6)


def test_binomial_cells_match_lme4_on_expanded_trials():
    """The observed-scale LMM of 0/1 trials from cell totals (k of n) equals lmer on one row per trial."""
    cells = pd.read_csv(FIXTURES / "binary_cells.csv")
    fit = reml(MixedDesign.from_spec(cells, "per-benchmark"))
    want = lme4("binary_cells", "REML")
    for term in ["task", "model", "scaffold", "task:model", "task:scaffold", "model:scaffold", "residual"]:
        assert fit.components[term] == pytest.approx(want[term], rel=1e-4), term
    assert fit.criterion == pytest.approx(want["REMLcrit"], abs=1e-6)
    assert fit.scale == "observed" and fit.n_obs == cells.trials.sum()


def test_criterion_is_invariant_to_cell_aggregation():
    """Cells (n, sum y, sum y^2) and single rows give the same REML criterion at any theta."""
    df = pd.read_csv(FIXTURES / "crossed.csv")
    terms = ["person", "item", "rater", "person:item"]
    agg = RemlProblem(MixedDesign.from_table(df, terms, response="score"))
    codes = [df.groupby(t.split(":"), sort=True).ngroup().to_numpy() for t in terms]
    y = df.score.to_numpy()
    rows = MixedDesign(term_names=tuple(terms), codes=np.stack(codes), n_levels=[c.max() + 1 for c in codes],
                       n=np.ones(len(df)), s=y, q=y * y, binary=False)
    assert rows.n_cells == len(df) > agg.design.n_cells
    theta = np.array([1.3, 0.5, 0.6, 0.8])
    assert agg.deviance(theta) == pytest.approx(RemlProblem(rows).deviance(theta), rel=1e-12)


def test_cancel_stops_between_evaluations():
    df = pd.read_csv(FIXTURES / "nested.csv")
    d = MixedDesign.from_table(df, ["person", "task", "task:rater", "person:task"], response="score")
    calls = []
    with pytest.raises(EstimationCancelled, match="cancelled"):
        reml(d, cancel=lambda: len(calls) > 3 or calls.append(1) or False)


def test_bad_response_names_the_row():
    df = pd.DataFrame({"person": ["a", "b", "c"], "score": [1.0, "x", 2.0]})
    with pytest.raises(ValueError, match="row 2"):
        MixedDesign.from_table(df, ["person"], response="score")
    with pytest.raises(ValueError, match="no column 'rater'"):
        MixedDesign.from_table(df, ["person", "rater"], response="score")


@pytest.mark.parametrize("zero_block", [False, True])
def test_eliminated_block_gives_the_full_factorisation(zero_block):
    """log|A| and A^{-1} b with the largest term eliminated in closed form equal the full sparse LU."""
    from ddr_explorer.core.estimators.sparse import EliminatedSystem, PenalisedSystem

    d = MixedDesign.from_spec(pd.read_csv(FIXTURES / "binary_cells.csv"), "per-benchmark")
    g = d.z.T @ d.z.multiply(d.n[:, None])
    k = int(np.argmax(d.n_levels))
    full, elim = PenalisedSystem(g), EliminatedSystem(g, np.flatnonzero(d.term_of_column == k))
    theta = np.array([0.7, 0.3, 0.1, 0.45, 0.28, 0.16])
    if zero_block:
        theta[k] = 0.0
    lam = theta[d.term_of_column]
    assert elim.factor(lam) == pytest.approx(full.factor(lam), rel=1e-12)
    b = np.random.default_rng(0).normal(size=(d.n_effects, 2))
    np.testing.assert_allclose(elim.solve(b), full.solve(b), rtol=1e-10, atol=1e-12)


def test_block_traces_of_the_inverse_equal_the_dense_inverse():
    """The selected inverse (Takahashi) of the Schur complement gives tr(A^{-1}) block by block exactly."""
    from ddr_explorer.core.estimators.sparse import EliminatedSystem

    d = MixedDesign.from_spec(pd.read_csv(FIXTURES / "binary_cells.csv"), "per-benchmark")
    g = d.z.T @ d.z.multiply(d.n[:, None])
    k = int(np.argmax(d.n_levels))
    elim = EliminatedSystem(g, np.flatnonzero(d.term_of_column == k))
    lam = np.array([0.7, 0.3, 0.1, 0.45, 0.28, 0.16])[d.term_of_column]
    elim.factor(lam)
    tr1, tr2 = elim.inverse_traces(d.term_of_column[elim.i2], d.n_terms)
    a = np.diag(lam) @ g.toarray() @ np.diag(lam) + np.eye(d.n_effects)
    diag = np.diag(np.linalg.inv(a))
    want = np.bincount(d.term_of_column, weights=diag, minlength=d.n_terms)
    assert tr1 == pytest.approx(want[k], rel=1e-10)
    others = [j for j in range(d.n_terms) if j != k]
    np.testing.assert_allclose(tr2[others], want[others], rtol=1e-10)


def test_analytic_gradient_equals_finite_differences():
    d = MixedDesign.from_spec(pd.read_csv(FIXTURES / "binary_cells.csv"), "per-benchmark")
    p = RemlProblem(d)
    theta = np.array([1.3, 0.7, 0.2, 0.5, 0.4, 0.3])
    grad = p.evaluate(theta, gradient=True)["gradient"]
    h = 1e-5
    fd = np.array([(p.deviance(theta + e) - p.deviance(theta - e)) / (2 * h) for e in np.eye(6) * h])
    np.testing.assert_allclose(grad, fd, rtol=1e-5)


def test_gradient_and_derivative_free_searches_agree():
    """The three optimisers reach the same REML optimum; the gradient ones in far fewer evaluations."""
    d = MixedDesign.from_spec(pd.read_csv(FIXTURES / "binary_cells.csv"), "per-benchmark")
    g, f, n = reml(d, method="lbfgs"), reml(d, method="cobyqa"), reml(d, method="newton")
    assert g.converged and f.converged and n.converged
    assert g.criterion == pytest.approx(f.criterion, abs=1e-6)
    assert n.criterion <= f.criterion + 1e-8
    for t in g.components:
        assert g.components[t] == pytest.approx(f.components[t], rel=1e-4, abs=1e-9)
        assert n.components[t] == pytest.approx(f.components[t], rel=1e-4, abs=1e-9)
    assert n.n_evaluations < g.n_evaluations < f.n_evaluations
