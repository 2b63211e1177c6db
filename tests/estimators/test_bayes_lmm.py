"""The Bayesian LMM on the observed scale (seed 000 C.2) and its score reliability (seed 000 G.5)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ddr_explorer.core.estimators import MixedDesign
from ddr_explorer.core.estimators.bayes_lmm import BayesLmmSettings, bayes_lmm, score_reliability
from ddr_explorer.core.gate import MAX_R_HAT, MIN_ESS_BULK
from ddr_explorer.core.henderson import henderson_method1
from ddr_explorer.core.reliability import generalizability

#: One shape for every simulated data set, so the sampler compiles once for this module.
N_TASK, N_MODEL, N_REP = 40, 15, 2
TRUTH = {"task": 0.5, "model": 0.4, "task:model": 0.2, "residual": 0.3}
TERMS = ["task", "model", "task:model"]
SMALL = BayesLmmSettings(chains=4, warmup=250, draws=500, thin=2, max_draws=1000)


def _simulate(seed: int) -> pd.DataFrame:
    """Balanced crossed task x model scores with replicates: y = 1 + u_task + u_model + u_tm + e."""
    rng = np.random.default_rng(seed)
    t, m, _ = np.meshgrid(np.arange(N_TASK), np.arange(N_MODEL), np.arange(N_REP), indexing="ij")
    t, m = t.ravel(), m.ravel()
    y = (1.0 + rng.normal(0, TRUTH["task"] ** 0.5, N_TASK)[t] + rng.normal(0, TRUTH["model"] ** 0.5, N_MODEL)[m]
         + rng.normal(0, TRUTH["task:model"] ** 0.5, (N_TASK, N_MODEL))[t, m]
         + rng.normal(0, TRUTH["residual"] ** 0.5, t.size))
    return pd.DataFrame({"task": t, "model": m, "y": y})


def _fit(df, seed=0):
    design = MixedDesign.from_table(df, TERMS, response="y")
    return bayes_lmm(design, settings=BayesLmmSettings(**{**SMALL.to_dict(), "seed": seed}))


@pytest.fixture(scope="module")
def fits():
    return [(_simulate(s), _fit(_simulate(s), s)) for s in range(6)]


def test_ninety_percent_intervals_cover_the_known_components(fits):
    """Across 6 simulated data sets x 4 components, central 90% intervals cover the truth about 90% of the time.

    A biased sampler (e.g. one that forgot the residual's within-cell sum of squares, or mixed up
    sigma and sigma^2) covers far less: 18 of 24 fails with probability < 2% for a correct one.
    """
    hits, n = 0, 0
    for _, fit in fits:
        for term, true in TRUTH.items():
            lo, hi = np.quantile(fit.variances[term], [0.05, 0.95])
            hits += int(lo <= true <= hi)
            n += 1
    assert hits >= 18, f"{hits} of {n} intervals cover"


def test_gate_is_checked_and_reported(fits):
    for _, fit in fits:
        v = fit.diagnostics.verdict()
        assert v["converged"] == fit.converged
        assert v["divergences"] == 0
        if fit.converged:
            assert v["max_rhat"] <= MAX_R_HAT and v["min_ess_bulk"] >= MIN_ESS_BULK
        else:
            assert v["problems"] and any("NOT converged" in n for n in fit.notes)
    assert sum(f.converged for _, f in fits) >= 5  # easy posteriors: the gate passes


def test_balanced_posterior_means_are_near_the_anova_solution(fits):
    """On balanced data ANOVA (Henderson Method I) is the classical answer.  With a prior nearly flat in
    sigma, a component whose mean square has df degrees of freedom has posterior mean about
    ANOVA x df / (df - 3) (the mean of sigma^2 ~ SS / chi^2_(df - 1), SS = df x MS): 1.08 for task (df 39),
    1.27 for model (df 14), 1.00 for task:model (df 546) and the residual (df 600)."""
    df, fit = fits[0]
    hm = henderson_method1(df, {t: t.split(":") for t in TERMS}, response="y")
    means = fit.posterior_means()
    dof = {"task": N_TASK - 1, "model": N_MODEL - 1, "task:model": (N_TASK - 1) * (N_MODEL - 1),
           "residual": N_TASK * N_MODEL * (N_REP - 1)}
    for term, d in dof.items():
        assert means[term] == pytest.approx(hm.components[term] * d / (d - 3), rel=0.08), term
    # the well-determined ones: the posterior mean is the ANOVA estimate
    for term in ("task:model", "residual"):
        assert means[term] == pytest.approx(hm.components[term], rel=0.03), term


def test_score_reliability_is_per_draw_and_below_ranking_reliability(fits):
    _, fit = fits[0]
    sizes = {"task": 10, "replicate": 1}
    sr = score_reliability(fit, "model", sizes)
    vc = fit.components()
    phi = generalizability(vc, "model", sizes, "absolute")
    rel = generalizability(vc, "model", sizes, "relative")
    assert np.all(phi <= rel + 1e-12)  # seed 000 Eq. 22, draw by draw
    assert sr.phi.median == pytest.approx(np.median(phi)) and sr.erho2.median == pytest.approx(np.median(rel))
    assert sr.gap.median > 0
    # by hand for one draw: Phi = m / (m + (task + tm)/n_task + e/n_task)
    k = 7
    v = {t: fit.variances[t].ravel()[k] for t in fit.variances}
    want = v["model"] / (v["model"] + (v["task"] + v["task:model"] + v["residual"]) / 10)
    assert phi[k] == pytest.approx(want, rel=1e-10)


def test_cancel_stops_the_sampler():
    design = MixedDesign.from_table(_simulate(0), TERMS, response="y")
    from ddr_explorer.core.estimators import EstimationCancelled

    with pytest.raises(EstimationCancelled):
        bayes_lmm(design, settings=SMALL, cancel=lambda: True)
