"""PSIS-LOO over binomial cells (seed 000 App. D.3): Pareto-k counts on a constructed case, the
pointwise binomial log-likelihood by hand, the stored result (a rerun fits nothing), and one real
fit of a well-specified simulated corpus."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.fitting import fit_corpus
from ddr_explorer.core.analyses.loo import loo_study, pointwise_log_likelihood, psis_loo, run_loo
from ddr_explorer.core.model import FitCancelled, SamplerSettings
from ddr_explorer.core.report.inputs import LooSummary


import ddr_batch_fakes as bf  # noqa: E402 - registered by tests/conftest.py
SETTINGS = SamplerSettings(stop="fixed", draws=40, warmup=10, chains=2, seed=1)


def _pareto_columns(shapes, draws=4000, seed=0):
    """Log-likelihood columns whose importance ratios 1/p are exactly Pareto with tail shape k:
    -log p = k * (-log U) at the evenly spaced quantiles U of the uniform, shuffled."""
    rng = np.random.default_rng(seed)
    u = (np.arange(draws) + 0.5) / draws
    return np.stack([(k * np.log(rng.permutation(u))).reshape(4, draws // 4) for k in shapes], axis=-1)


def test_pareto_k_counts_of_a_constructed_case():
    shapes = [0.1, 0.3, 0.5] * 5 + [0.8, 0.85, 0.9] + [1.3, 1.6]
    res = psis_loo(_pareto_columns(shapes))
    np.testing.assert_allclose(res.pareto_k[:15], np.tile([0.1, 0.3, 0.5], 5), atol=0.05)
    s = res.summary
    assert isinstance(s, LooSummary) and (s.good, s.bad, s.very_bad) == (15, 3, 2) and s.total == 20


def test_elpd_of_well_behaved_columns_is_log_one_minus_k():
    # elpd_i = -log E[1/p] = -log E[U^-k] = log(1 - k) when every k < 1/2 (raw IS is then exact enough)
    shapes = [0.1, 0.2, 0.3]
    res = psis_loo(_pareto_columns(shapes))
    assert res.elpd == pytest.approx(float(np.sum(np.log(1 - np.array(shapes)))), abs=0.02)
    assert res.summary.good == 3


def _tiny_corpus():
    rows = [("b", t, m, a, k, 3) for (t, m, a, k) in [("t1", "m1", "s1", 2), ("t1", "m2", "s1", 0),
                                                       ("t2", "m1", "s1", 3), ("t2", "m2", "s1", 1)]]
    return pd.DataFrame(rows, columns=["benchmark", "task", "model", "scaffold", "successes", "trials"])


def test_pointwise_log_likelihood_by_hand():
    from ddr_explorer.core.model.design_matrix import build_design
    from ddr_explorer.core.model.formula import as_spec
    from ddr_explorer.core.model.sampler import Posterior

    spec = as_spec("y ~ 1 + (1|task) + (1|model)")
    table = _tiny_corpus()
    design = build_design(table, spec)
    mu = np.array([[0.2, -0.1]])
    u_task = np.array([[[0.5, -0.5], [0.1, 0.3]]])
    u_model = np.array([[[1.0, -1.0], [0.0, 0.4]]])
    post = Posterior(sigma={"task": np.ones((1, 2)), "model": np.ones((1, 2))}, mu=mu,
                     random_effects={"task": u_task, "model": u_model},
                     levels={n: design.level_labels[k] for k, n in enumerate(design.term_names)}, spec=spec,
                     settings=SamplerSettings(), device="none", wall_seconds=0.0, timings={}, sample_stats={})
    ll, cells = pointwise_log_likelihood(post, table)
    assert ll.shape == (1, 2, 4)
    for c, (t, m, k) in enumerate(zip(cells["task"], cells["model"], cells["successes"])):
        ti, mi = int(str(t)[1]) - 1, int(str(m)[1]) - 1
        for s in range(2):
            eta = mu[0, s] + u_task[0, s, ti] + u_model[0, s, mi]
            assert ll[0, s, c] == pytest.approx(binom.logpmf(k, 3, 1 / (1 + np.exp(-eta))), rel=1e-10)
    post.random_effects.pop("task")
    with pytest.raises(ValueError, match="task"):
        pointwise_log_likelihood(post, table)



@pytest.fixture(scope="module")
def corpus():
    sim = bf.simulate_module().simulate_per_benchmark(n_tasks=10, n_models=5, n_scaffolds=2, n_pairs=6,
                                                      trials_per_cell=2, seed=8)
    return bf.corpus_of(sim.table, "sim")


def test_stored_result_means_no_fit_on_rerun(fake_sampler, corpus, tmp_path):
    a = loo_study(corpus, spec="per-benchmark", settings=SETTINGS, cache_dir=tmp_path)
    assert len(fake_sampler) == 1 and not a.from_cache and a.pareto_k.size == 60
    assert list(tmp_path.glob("loo-*.json"))
    fake_sampler.clear()
    b = loo_study(corpus, spec="per-benchmark", settings=SETTINGS, cache_dir=tmp_path)
    assert fake_sampler == [] and b.from_cache
    np.testing.assert_array_equal(a.pareto_k, b.pareto_k)
    assert run_loo(corpus, spec="per-benchmark", settings=SETTINGS, cache_dir=tmp_path) == a.summary


def test_cached_fit_without_task_effects_is_sampled_again(fake_sampler, corpus, tmp_path):
    first = fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path)
    cached = fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path)
    assert cached.from_cache and "task" not in cached.posterior.random_effects
    fake_sampler.clear()
    res = loo_study(corpus, posterior=cached.posterior, cache_dir=tmp_path)
    assert len(fake_sampler) == 1  # one refit that keeps the task effects
    direct = loo_study(corpus, posterior=first.posterior, cache_dir=tmp_path, use_cache=False)
    np.testing.assert_allclose(res.pareto_k, direct.pareto_k)
    with pytest.raises(FitCancelled):
        loo_study(corpus, spec="per-benchmark", settings=SamplerSettings(stop="fixed", draws=41, warmup=10, chains=2),
                  cache_dir=tmp_path, cancel=lambda: True)


REAL = SamplerSettings(stop="fixed", draws=150, warmup=150, chains=2, seed=4, chunk_size=150, collapsed="off", scale_steps=0)


@pytest.mark.slow
def test_real_fit_elpd_identity_and_beats_the_constant_rate(corpus, tmp_path):
    post = fit_corpus(corpus, "per-benchmark", REAL, cache_dir=tmp_path, use_cache=False).posterior
    res = loo_study(corpus, posterior=post, cache_dir=tmp_path)
    s = res.summary
    # one scaffold per model here, so (1|task:model) has one level per cell: such cell-level effects make
    # many k exceed 0.7 (each left-out cell takes its own effect's information with it), as seed 000 warns
    assert s.total == 60 and s.good + s.bad + s.very_bad == 60
    # elpd_loo = lppd - p_loo, with lppd the in-sample log pointwise predictive density
    ll, cells = pointwise_log_likelihood(post, corpus)
    lppd = float(np.sum(np.log(np.mean(np.exp(ll.reshape(-1, ll.shape[-1])), axis=0))))
    assert res.elpd == pytest.approx(lppd - res.p_loo, abs=1e-6)
    assert 0 < res.p_loo < 60
    # the G-study predicts left-out cells better than one success rate for every cell
    rate = cells["successes"].sum() / cells["trials"].sum()
    null = float(np.sum(binom.logpmf(cells["successes"], cells["trials"], rate)))
    assert res.elpd > null + 5, (res.elpd, null)


def test_a_fit_that_integrated_a_term_out_is_sampled_again_without_integrating(fake_sampler, corpus, tmp_path,
                                                                            monkeypatch):
    # a term integrated out by quadrature has no effect draws; LOO needs them, so it refits with
    # marginalise="off" (and not again with the same settings, which would integrate it again)
    import ddr_explorer.core.model.sampler as sampler

    seen = []

    def integrating_fit(data, spec="per-benchmark", settings=None, progress=None, cancel=None):
        post = bf.moment_fit(data, spec, settings, progress, cancel)
        seen.append(settings.marginalise)
        if settings.marginalise == "auto":
            del post.random_effects["task:model"]
            post.integrated = ["task:model"]
        return post

    monkeypatch.setattr(sampler, "fit", integrating_fit)
    res = loo_study(corpus, spec="per-benchmark", settings=SETTINGS, cache_dir=tmp_path)
    assert seen == ["auto", "off"]
    assert res.pareto_k.size == 60


# -- relative efficiency from the chains --------------------------------------------------

def _ar1_normal_log_lik(rho, chains=4, draws=1000, n_obs=6, seed=3):
    """Log-likelihood of n_obs observations y_i ~ N(theta, 1) over draws of theta that follow an
    AR(1) chain with autocorrelation rho (stationary N(0.3, 0.2^2)): rho = 0 gives independent
    draws, rho = 0.9 strongly autocorrelated ones."""
    rng = np.random.default_rng(seed)
    theta = np.empty((chains, draws))
    theta[:, 0] = rng.normal(0, 1, chains)
    for t in range(1, draws):
        theta[:, t] = rho * theta[:, t - 1] + np.sqrt(1 - rho**2) * rng.normal(0, 1, chains)
    theta = 0.3 + 0.2 * theta
    y = np.linspace(-1.5, 2.0, n_obs)
    return -0.5 * np.log(2 * np.pi) - 0.5 * (y[None, None, :] - theta[..., None]) ** 2


def test_r_eff_is_estimated_per_observation_and_matches_arviz_ess():
    import arviz as az
    from ddr_explorer.core.analyses.loo import r_eff

    ll = _ar1_normal_log_lik(0.9)
    r = r_eff(ll)
    # ArviZ's own ESS of one observation's likelihood, computed here independently
    for i in range(ll.shape[2]):
        ess_i = float(az.ess(np.exp(ll[:, :, i]), method="mean"))
        assert r[i] == pytest.approx(ess_i / ll[:, :, i].size, rel=1e-10)
    # AR(1) with rho = 0.9: ESS / S of theta itself is (1 - rho) / (1 + rho) = 0.053; the
    # likelihoods are smooth functions of theta and stay far from 1
    assert r.max() < 0.15 and r.min() > 0.02
    iid = r_eff(_ar1_normal_log_lik(0.0))
    assert np.all(np.abs(iid - 1.0) < 0.15)


def test_psis_loo_uses_r_eff_and_equals_arviz_loo_for_one_reff():
    import warnings

    import arviz as az

    ll = _ar1_normal_log_lik(0.9, n_obs=5)
    res = psis_loo(ll)  # r_eff from the chains
    assert res.r_eff is not None and res.r_eff.shape == (5,) and np.all(res.r_eff < 0.15)
    idata = az.from_dict(posterior={"_": np.zeros(ll.shape[:2])}, log_likelihood={"y": ll})
    for reff in (1.0, float(np.median(res.r_eff))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = az.loo(idata, pointwise=True, var_name="y", reff=reff)
        mine = psis_loo(ll, reff=reff)
        np.testing.assert_allclose(mine.pareto_k, np.asarray(ref.pareto_k), rtol=1e-12)
        assert mine.elpd == pytest.approx(float(ref.elpd_loo), rel=1e-12)
        assert mine.elpd_se == pytest.approx(float(ref.se), rel=1e-12)
        assert mine.p_loo == pytest.approx(float(ref.p_loo), rel=1e-12)
    # r_eff ~ 0.05 lengthens the tail from 3 sqrt(S) = 190 draws to S/5 = 800: the k move
    independent = psis_loo(ll, reff=1.0)
    assert not np.allclose(res.pareto_k, independent.pareto_k)
