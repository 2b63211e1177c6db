"""Integrating a weakly identified term out by Gauss-Hermite quadrature (core/model/quadrature.py).

The quadrature is checked against known integrals (Gaussian moments, the logistic-normal
integral by adaptive numerical integration, hand-counted Bernoulli trials), the choice of term
against designs built to pass or fail each rule, and the sampler that uses it against the
sampler that does not, on the same data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import integrate
from scipy.special import expit

import ddr_explorer.core.model as M  # noqa: F401  (before jax: parallel CPU chains)
from ddr_explorer.core.model import SamplerSettings, build_design, fit
from ddr_explorer.core.model import quadrature as Qd
from ddr_explorer.core.model.geometry import rough_fit

ROOT = Path(__file__).resolve().parents[2]


def test_gauss_hermite_integrates_gaussian_moments_exactly():
    z, w = Qd.gauss_hermite(8)
    assert w.sum() == pytest.approx(1.0, abs=1e-14)
    # E Z^2 = 1, E Z^4 = 3, E Z^6 = 15, E Z^14 = 135135 (exact up to degree 2Q - 1 = 15)
    for p, m in [(1, 0.0), (2, 1.0), (4, 3.0), (6, 15.0), (14, 135135.0)]:
        assert np.sum(w * z ** p) == pytest.approx(m, rel=1e-10, abs=1e-10)


@pytest.mark.parametrize("eta, sigma", [(0.3, 0.8), (-2.0, 1.2), (3.0, 0.5)])
def test_logistic_normal_integral_matches_adaptive_integration(eta, sigma):
    # E logistic(eta + sigma Z): no closed form; scipy's adaptive quadrature is the reference
    ref, _ = integrate.quad(lambda t: expit(eta + sigma * t) * np.exp(-t * t / 2) / np.sqrt(2 * np.pi),
                            -np.inf, np.inf, epsabs=1e-13)
    z, w = Qd.gauss_hermite(8)
    assert np.sum(w * expit(eta + sigma * z)) == pytest.approx(ref, abs=2e-5)
    z, w = Qd.gauss_hermite(24)
    assert np.sum(w * expit(eta + sigma * z)) == pytest.approx(ref, abs=1e-9)


def _design():
    # 3 levels of task:model: (a, m1) 2 cells with 1 and 2 trials; (a, m2) one cell of 1 trial;
    # (b, m1) one cell of 3 trials.  Terms: task, task:model.
    df = pd.DataFrame({"task": ["a", "a", "a", "b"], "model": ["m1", "m1", "m2", "m1"],
                       "scaffold": ["s1", "s2", "s1", "s1"], "successes": [1, 1, 0, 2],
                       "trials": [1, 2, 1, 3]})
    return build_design(df, M.as_spec("(1|task) + (1|task:model)"))


def test_trial_layout_counts_bernoulli_trials_by_hand():
    d = _design()
    k = d.term_names.index("task:model")
    cell, sign, blocks = Qd.trial_layout(d, k)
    # 7 trials: levels with 1, 3 and 3 trials; groups: one level of 1 trial, two of 3
    assert cell.size == 7
    assert blocks == ((0, 1, 1), (1, 2, 3))
    assert int((sign > 0).sum()) == 4 and int((sign < 0).sum()) == 3  # successes 1+1+0+2
    # each level's trials are contiguous and come from that level's cells only
    lv = d.codes[k][cell]
    assert len(set(lv[:1])) == 1 and len(set(lv[1:4])) == 1 and len(set(lv[4:])) == 1
    # per cell: as many success trials as successes
    for c in range(d.n_cells):
        assert int((sign[cell == c] > 0).sum()) == int(d.successes[c])
        assert int((cell == c).sum()) == int(d.trials[c])


def test_level_marginals_match_numerical_integration_and_jax_matches_numpy():
    import jax

    d = _design()
    k = d.term_names.index("task:model")
    cell, sign, blocks = Qd.trial_layout(d, k)
    eta_cell = np.array([0.4, -0.3, 1.1, -0.8])
    sigma = 0.9
    # reference: per level, integrate prod over its cells of Binomial likelihood (without the
    # binomial coefficient) against N(0, sigma^2)
    y, n = d.successes.astype(float), d.trials.astype(float)
    ref = 0.0
    for j in range(d.n_levels[k]):
        cs = np.flatnonzero(d.codes[k] == j)

        def f(u, cs=cs):
            p = expit(eta_cell[cs] + u)
            return np.prod(p ** y[cs] * (1 - p) ** (n[cs] - y[cs])) * np.exp(-u * u / (2 * sigma ** 2)) / (
                np.sqrt(2 * np.pi) * sigma)

        ref += np.log(integrate.quad(f, -np.inf, np.inf, epsabs=1e-14)[0])
    z, w = Qd.gauss_hermite(24)
    got = Qd.level_log_marginals(eta_cell[cell], sign, blocks, sigma, z, w).sum()
    assert got == pytest.approx(ref, abs=1e-9)
    mt = Qd.MarginalTerm(term=k, name="task:model", n_levels=3, nodes=z, weights=w, trial_cell=cell, sign=sign,
                         blocks=blocks, checks={}, n_cells=d.n_cells)
    with jax.enable_x64(True):
        import jax.numpy as jnp

        ll = Qd.make_log_likelihood(mt, jnp.float64)
        # compiled whole, as the sampler runs it (op by op, its per-block loops cost seconds)
        value, grad = jax.jit(jax.value_and_grad(ll))(jnp.asarray(eta_cell), sigma)
        assert float(value) == pytest.approx(ref, abs=1e-9)
        # its gradient in eta is that of the reference (finite differences)
        g = np.asarray(grad)
        h = 1e-6
        for c in range(4):
            e1, e0 = eta_cell.copy(), eta_cell.copy()
            e1[c] += h
            e0[c] -= h
            fd = (Qd.level_log_marginals(e1[cell], sign, blocks, sigma, z, w).sum()
                  - Qd.level_log_marginals(e0[cell], sign, blocks, sigma, z, w).sum()) / (2 * h)
            assert g[c] == pytest.approx(fd, abs=1e-6)


def _part_of(d, seed=0):
    """A refit's counts on ``d``'s cells: a tenth of the cells dropped, about half of every other cell's trials."""
    rng = np.random.default_rng(seed)
    keep = rng.random(d.n_cells) > 0.1
    n = rng.binomial(d.trials, 0.5) * keep
    s = rng.hypergeometric(d.successes, d.trials - d.successes, n)
    return s, n


def test_a_trial_mask_makes_the_parents_layout_the_quadrature_of_the_refits_own_trials():
    """The shared compile of the refits (core/model/refit.py item 1): the parent's trial layout with a refit's
    mask gives the refit's own likelihood and gradient, exactly; counts that are not a part of the parent's
    get no mask."""
    import dataclasses

    import jax

    d = build_design(_weak_corpus(n_tasks=200, n_models=4, trials=3, seed=6), M.as_spec(FORMULA))
    k = d.term_names.index("task:model")
    s, n = _part_of(d)
    part = dataclasses.replace(d, successes=s, trials=n)
    mask = Qd.trial_mask(d, k, s, n)
    assert mask.shape == (int(d.trials.sum()),) and mask.sum() == n.sum()
    z, w = Qd.gauss_hermite(12)
    whole = Qd.MarginalTerm(k, "task:model", int(d.n_levels[k]), z, w, *Qd.trial_layout(d, k), {}, d.n_cells)
    own = Qd.MarginalTerm(k, "task:model", int(d.n_levels[k]), z, w, *Qd.trial_layout(part, k), {}, d.n_cells)
    eta = np.random.default_rng(1).normal(-0.2, 1.0, d.n_cells)
    with jax.enable_x64(True):
        import jax.numpy as jnp

        masked = Qd.make_log_likelihood(whole, jnp.float64, mask=jnp.asarray(mask))
        ref = Qd.make_log_likelihood(own, jnp.float64)
        # compiled whole, as the sampler runs them (op by op, the per-block loops cost seconds)
        masked_vg = jax.jit(jax.value_and_grad(masked, argnums=(0, 1)))
        ref_vg = jax.jit(jax.value_and_grad(ref, argnums=(0, 1)))
        for sigma in (0.5, 1.3):
            a, ga = masked_vg(jnp.asarray(eta), sigma)
            b, gb = ref_vg(jnp.asarray(eta), sigma)
            assert float(a) == pytest.approx(float(b), rel=1e-12, abs=1e-9)
            np.testing.assert_allclose(np.asarray(ga[0]), np.asarray(gb[0]), rtol=1e-10, atol=1e-12)
            assert float(ga[1]) == pytest.approx(float(gb[1]), rel=1e-10)
        # the numpy reference on the refit's own trials agrees too
        ref_np = Qd.level_log_marginals(eta[own.trial_cell], own.sign, own.blocks, 1.3, z, w).sum()
        assert float(masked_vg(jnp.asarray(eta), 1.3)[0]) == pytest.approx(ref_np, abs=1e-9)
    # every trial kept: all ones; a cell with one success more than the parent's: not a part
    assert np.all(Qd.trial_mask(d, k, d.successes, d.trials) == 1.0)
    more = d.successes.copy()
    more[np.flatnonzero(d.successes < d.trials)[0]] += 1
    assert Qd.trial_mask(d, k, more, d.trials) is None
    assert Qd.trial_mask(d, k, d.successes, d.trials * 2) is None


def _weak_corpus(n_tasks=600, n_models=4, trials=1, seed=0, sigma_tm=0.8):
    """Tasks x models, one cell per (task, model) with ``trials`` Bernoulli trials."""
    rng = np.random.default_rng(seed)
    t = np.repeat(np.arange(n_tasks), n_models)
    m = np.tile(np.arange(n_models), n_tasks)
    eta = (-0.2 + rng.normal(0, 1.3, n_tasks)[t] + rng.normal(0, 0.7, n_models)[m]
           + rng.normal(0, sigma_tm, t.size))
    return pd.DataFrame({"task": [f"t{i}" for i in t], "model": [f"m{i}" for i in m], "scaffold": "s",
                         "successes": rng.binomial(trials, expit(eta)), "trials": trials})


FORMULA = "(1|task) + (1|model) + (1|task:model)"


def test_choice_takes_the_weak_cell_level_term_and_checks_its_accuracy(monkeypatch):
    d = build_design(_weak_corpus(), M.as_spec(FORMULA))
    r = rough_fit(d)
    mt, why = Qd.choose_marginal_term(d, r, list(range(d.n_terms)))
    assert mt is not None and mt.name == "task:model" and mt.n_levels == 2400 and why == ""
    assert mt.n_nodes == 8 and max(mt.checks.values()) <= Qd.LOGLIK_TOLERANCE
    assert "8-node Gauss-Hermite" in mt.describe()
    # too few levels
    monkeypatch.setattr(Qd, "MIN_LEVELS", 5000)
    assert Qd.choose_marginal_term(d, r, list(range(d.n_terms)))[0] is None


def test_choice_takes_levels_of_moderate_information_when_the_check_passes():
    # 8 trials per (task, model): sigma^2 I up to about 1.3 (BRIDGE's pooled benchmark:task:model
    # reaches 1.47); the prefilter lets it through and the accuracy check needs more nodes
    d = build_design(_weak_corpus(trials=8, sigma_tm=1.3), M.as_spec(FORMULA))
    r = rough_fit(d)
    k = d.term_names.index("task:model")
    assert 1.0 < float(np.max(r.sigma[k] ** 2 * r.info[k])) <= Qd.MAX_SIGMA2_INFO
    mt, why = Qd.choose_marginal_term(d, r, list(range(d.n_terms)))
    assert mt is not None and mt.name == "task:model" and why == ""
    assert mt.n_nodes > 8 and max(mt.checks.values()) <= Qd.LOGLIK_TOLERANCE


def test_choice_refuses_levels_the_data_pin_down():
    # 12 trials per (task, model): sigma^2 I up to about 3, above the prefilter's 2
    d = build_design(_weak_corpus(trials=12, sigma_tm=1.5), M.as_spec(FORMULA))
    mt, why = Qd.choose_marginal_term(d, rough_fit(d), list(range(d.n_terms)))
    assert mt is None and "weakly informed" in why


def test_choice_raises_the_node_count_until_the_check_passes(monkeypatch):
    d = build_design(_weak_corpus(), M.as_spec(FORMULA))
    monkeypatch.setattr(Qd, "LOGLIK_TOLERANCE", 1e-9)
    mt, why = Qd.choose_marginal_term(d, rough_fit(d), list(range(d.n_terms)))
    # with a 1e-9 nat tolerance no node count of NODE_COUNTS passes on 2,400 levels
    assert mt is None and "not accurate enough" in why


def test_a_floor_on_the_nodes_takes_the_first_count_above_it_that_passes():
    d = build_design(_weak_corpus(), M.as_spec(FORMULA))
    r = rough_fit(d)
    cand = list(range(d.n_terms))
    assert Qd.choose_marginal_term(d, r, cand)[0].n_nodes == 8  # 8 pass (test above)
    for floor, want in ((9, 12), (12, 12), (13, 16), (24, 24)):
        mt, why = Qd.choose_marginal_term(d, r, cand, min_nodes=floor)
        assert mt is not None and mt.n_nodes == want and why == ""
        assert mt.nodes.size == want and "%d-node Gauss-Hermite" % want in mt.describe()
    mt, why = Qd.choose_marginal_term(d, r, cand, min_nodes=25)
    assert mt is None and "at least 25 nodes" in why


def test_settings_validate_marginalise():
    with pytest.raises(ValueError, match="marginalise"):
        SamplerSettings(marginalise="laplace")
    with pytest.raises(ValueError, match="quadrature_nodes"):
        SamplerSettings(quadrature_nodes=-1)


SHORT = dict(stop="fixed", draws=300, warmup=200, chains=2, seed=3, chunk_size=100)


@pytest.fixture(scope="module")
def weak_fits():
    # two trials per cell: with one, a cell-level term is barely identified and both posteriors
    # are wide ridges that short chains cannot compare
    data = _weak_corpus(n_tasks=300, n_models=6, trials=2, seed=2)
    on = fit(data, FORMULA, SamplerSettings(**SHORT))
    off = fit(data, FORMULA, SamplerSettings(marginalise="off", **SHORT))
    return on, off


def test_integrated_fit_reports_the_term_and_keeps_no_effects_for_it(weak_fits):
    on, off = weak_fits
    assert on.integrated == ["task:model"] and off.integrated == []
    assert "task:model" in on.sigma and on.sigma["task:model"].shape == (2, 300)
    assert on.quadrature_error is not None and on.quadrature_error < 0.05 and off.quadrature_error is None
    assert on.quadrature_nodes == 8 and off.quadrature_nodes is None
    assert "task:model" not in on.random_effects and "task:model" in off.random_effects
    assert any("integrated out of NUTS" in n for n in on.notes)


def test_integrating_out_leaves_the_posterior_unchanged(weak_fits):
    # the same model sampled two ways: posterior means of sigma^2 agree within Monte Carlo error
    on, off = weak_fits
    for term in on.sigma:
        a, b = on.sigma[term].ravel() ** 2, off.sigma[term].ravel() ** 2
        ess = min(on.diagnostics.table.loc[term, "ess_bulk"], off.diagnostics.table.loc[term, "ess_bulk"])
        assert ess >= 100, f"{term}: ESS {ess:.0f} is too small for the comparison to mean anything"
        se = np.sqrt(a.var() / ess + b.var() / ess)
        assert abs(a.mean() - b.mean()) < 4 * se + 1e-3, f"{term}: {a.mean():.3f} vs {b.mean():.3f} (se {se:.3f})"
    # and the integrated term mixes at least as well as when its 1,800 levels are sampled
    t = on.diagnostics.table
    assert t.loc["task:model", "ess_bulk"] >= off.diagnostics.table.loc["task:model", "ess_bulk"]


def test_a_fit_whose_quadrature_fails_the_check_samples_every_level_and_says_why(monkeypatch):
    monkeypatch.setattr(Qd, "LOGLIK_TOLERANCE", 1e-9)
    # weak_fits' corpus and run length (1,800 levels: above the collapsed block's 1,200 runs, so
    # task:model is a candidate): sampling every level is then weak_fits' "off" program, which the
    # compile cache holds (a corpus of its own compiled anew, about 10 s); another seed, so that
    # the draws are this fit's own, and one chunk of draws (the draws' count is an argument of the
    # compiled chunk, not part of the program: what is checked here is the choice, not the posterior)
    post = fit(_weak_corpus(n_tasks=300, n_models=6, trials=2, seed=2), FORMULA,
               SamplerSettings(**{**SHORT, "seed": 4, "draws": SHORT["chunk_size"]}))
    assert post.integrated == [] and "task:model" in post.random_effects
    assert any("not accurate enough" in n for n in post.notes)


def test_warm_refits_of_a_parent_that_integrated_a_term_share_its_rule_and_one_compile(weak_fits):
    """Refits keep the parent's integrated term and trial layout (their own trials by a mask), so they all
    run from one compile (one compile for a whole analysis), and each reports the quadrature's
    accuracy on its own trials."""
    from ddr_explorer.core.model.refit import RefitRequest, fit_refits

    on, _ = weak_fits
    data = _weak_corpus(n_tasks=300, n_models=6, trials=2, seed=2)  # the parent's data (weak_fits)
    d = build_design(data, M.as_spec(FORMULA))
    s, n = _part_of(d, seed=3)
    drop = d.cells["task"].isin(["t0", "t1", "t2"]).to_numpy()
    requests = [RefitRequest("half the trials", s, n),
                RefitRequest("three tasks less", d.successes * ~drop, d.trials * ~drop)]
    short = SamplerSettings(stop="fixed", draws=60, warmup=200, chains=2, seed=3, chunk_size=60)
    posts = fit_refits(d, FORMULA, requests, short, parent=on)
    for p in posts:
        assert p.integrated == ["task:model"] and p.quadrature_nodes == on.quadrature_nodes
        assert any("1 compile(s) for 2 refit(s)" in t for t in p.notes), p.notes
        assert any("the parent's quadrature rule, on this refit's own trials" in t for t in p.notes)
        assert p.quadrature_error is not None and p.quadrature_error < 0.05
        assert "task:model" not in p.random_effects and np.all(np.isfinite(p.sigma["task:model"]))
    assert not set(posts[1].levels["task"]["task"].astype(str)) & {"t0", "t1", "t2"}
    assert posts[1].n_trials == int((d.trials * ~drop).sum())
