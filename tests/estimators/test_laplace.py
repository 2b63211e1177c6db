"""Laplace GLMM (binomial logit, nAGQ = 1) against glmer's numbers on the same cells."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddr_explorer.core.estimators.design import MixedDesign
from ddr_explorer.core.estimators.laplace import LaplaceProblem, laplace
from ddr_explorer.core.model.formula import RESIDUAL_VARIANCE

FIXTURES = Path(__file__).parent / "fixtures"
TERMS = ["task", "model", "scaffold", "task:model", "task:scaffold", "model:scaffold"]


def glmer() -> dict[str, float]:
    """glmer's numbers, written once by fixtures/lme4_fit.R (R 4.2.2, lme4 1.1.31, bobyqa rhoend 1e-10)."""
    t = pd.read_csv(FIXTURES / "lme4_results.csv")
    t = t[(t.dataset == "binary_cells") & (t.method == "Laplace")]
    return dict(zip(t.quantity, t.value))


@pytest.fixture(scope="module")
def design():
    return MixedDesign.from_spec(pd.read_csv(FIXTURES / "binary_cells.csv"), "per-benchmark")


def test_laplace_matches_glmer(design):
    fit = laplace(design)
    want = glmer()
    for term in TERMS:
        assert fit.components[term] == pytest.approx(want[term], rel=1e-3), term
    assert fit.intercept == pytest.approx(want["intercept"], rel=1e-3)
    assert fit.components["residual"] == RESIDUAL_VARIANCE and fit.scale == "logit"
    # at least as good an optimum as glmer's, on glmer's own deviance (-2 logLik, constants included)
    assert fit.criterion <= want["deviance"] + 1e-6
    assert fit.criterion == pytest.approx(want["deviance"], abs=1e-3)


def test_deviance_at_glmer_estimates_is_glmer_deviance(design):
    want = glmer()
    x = np.r_[np.sqrt([want[t] for t in design.term_names]), want["intercept"]]
    assert LaplaceProblem(design).deviance(x) == pytest.approx(want["deviance"], abs=1e-3)


def test_conditional_mode_solves_the_penalised_score_equations(design):
    prob = LaplaceProblem(design)
    theta = np.array([1.8, 0.9, 0.3, 1.0, 0.7, 0.4])
    out = prob.evaluate(theta, 0.5)
    lam = theta[design.term_of_column]
    p = 1 / (1 + np.exp(-out["eta"]))
    score = lam * (prob.zt @ (design.s - design.n * p)) - out["u"]
    assert np.max(np.abs(score)) < 1e-6


def test_numeric_scores_are_refused():
    d = MixedDesign.from_table(pd.DataFrame({"p": ["a", "b"], "y": [0.5, 1.5]}), ["p"], response="y")
    with pytest.raises(ValueError, match="binary trials"):
        laplace(d)


def test_derivative_free_search_reaches_the_same_optimum(design):
    grad = laplace(design)
    free = laplace(design, gradient=False)
    assert grad.n_evaluations < free.n_evaluations / 5  # the gradient's point: far fewer evaluations
    assert grad.criterion == pytest.approx(free.criterion, abs=1e-6)
    for term in TERMS:
        assert grad.components[term] == pytest.approx(free.components[term], rel=1e-4), term


def test_inverse_on_g_is_the_dense_inverse_there(design):
    prob = LaplaceProblem(design)
    theta = np.array([1.8, 0.9, 0.3, 1.0, 0.7, 0.4])
    prob.evaluate(theta, 0.5)
    system = prob._covariance_system()
    lam = theta[design.term_of_column]
    p = 1 / (1 + np.exp(-prob.evaluate(theta, 0.5)["eta"]))
    w = design.n * p * (1 - p)
    g = prob._g_values(w)
    system.factor(lam, g)
    g_full = (prob.zt @ (prob.z.multiply(w[:, None]))).toarray()
    dense = np.linalg.inv(lam[:, None] * g_full * lam[None, :] + np.eye(lam.size))
    col = np.repeat(np.arange(lam.size), np.diff(system.g_indptr))
    np.testing.assert_allclose(system.inverse_on_g(), dense[system.g_indices, col], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("beta, elimination", [(0.5, False), (-1.2, False), (0.5, True)])
def test_gradient_is_the_deviance_derivative(design, beta, elimination):
    """The exact gradient against central differences of the deviance with PIRLS run to 1e-15, with PIRLS on
    the full sparse LU and on the block elimination of large designs."""
    prob = LaplaceProblem(design, elimination=elimination)
    x = np.r_[1.8, 0.9, 0.3, 1.0, 0.7, 0.4, beta]
    value, grad = prob.deviance_and_gradient(x)
    assert value == pytest.approx(prob.deviance(x), abs=1e-6)

    def dev(y):
        prob.u[:] = 0.0
        return prob.evaluate(y[:-1], y[-1], tol=1e-15, max_iter=200)["deviance"]

    h = 1e-5
    fd = np.array([(dev(x + h * e) - dev(x - h * e)) / (2 * h) for e in np.eye(x.size)])
    np.testing.assert_allclose(grad, fd, atol=1e-5 * max(1.0, float(np.max(np.abs(fd)))))
