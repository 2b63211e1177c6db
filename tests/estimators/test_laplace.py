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
