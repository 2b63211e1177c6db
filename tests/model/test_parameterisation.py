"""The sampler's coordinates are an exact change of variables (core/model/parameterisation.py, items 1, 2 and 11).

NUTS samples z = (alpha, log sigma, w, x); the model lives in (sigma, mu, u).  The map adds
one auxiliary coordinate per term (mean(a x), item 1) with its own normal density.  So for
every z::

    U(z) = -log p(sigma, mu, u | y) - log q(aux) - log |det d(sigma, mu, u, aux) / dz| + const

and the test checks that the difference is the same constant at random points, with the
Jacobian computed by automatic differentiation.  It pins the density the sampler targets
for each parameterisation, nested centring included, and that the collapsed Gibbs move maps
back to coordinates that give the state it drew.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ddr_explorer.core.model as M  # noqa: F401  (before jax)
from ddr_explorer.core.model import parameterisation as P
from ddr_explorer.core.model.design_matrix import build_design
from ddr_explorer.core.model.formula import as_spec
from ddr_explorer.core.model.geometry import collapsed_group, rough_fit


def _table(seed=3):
    """A small pooled corpus: 2 benchmarks, a scaffold used on one benchmark only, uneven trials."""
    rng = np.random.default_rng(seed)
    rows = []
    for b, n_tasks in (("b1", 4), ("b2", 3)):
        for t in range(n_tasks):
            for m in ("m1", "m2", "m3"):
                for s in (("s1", "s2") if b == "b1" else ("s1", "s3")):
                    if rng.random() < 0.2:
                        continue
                    n = int(rng.integers(1, 6))
                    rows.append({"benchmark": b, "task": f"{b}-t{t}", "model": m, "scaffold": s,
                                 "successes": int(rng.binomial(n, 0.4)), "trials": n})
    return pd.DataFrame(rows)


def _setup(nested: bool, mode: str = "auto"):
    spec = as_spec("pooled")
    design = build_design(_table(), spec)
    rough = rough_fit(design)
    terms = list(range(design.n_terms))
    # min_ratio 0: every candidate host kept, so that the chains are exercised
    lay = P._make_layout(design, spec, rough, mode, terms, nested=nested, min_ratio=0.0)
    cols = [spec.term(n).columns for n in design.term_names]
    return spec, design, rough, lay, cols


def _model_log_density(design, lay, sigma, mu, u):
    """log p(sigma, mu, u | y) up to a constant: binomial-logit likelihood, normal random effects,
    half-Student-t sigmas, Student-t intercept (SPEC section 2)."""
    import jax.numpy as jnp
    from jax.nn import softplus

    eta = mu + sum(u[lay.offsets[i]:lay.offsets[i + 1]][design.codes[k]] for i, k in enumerate(lay.terms))
    y, n = jnp.asarray(design.successes, float), jnp.asarray(design.trials, float)
    lp = jnp.sum(y * eta - n * softplus(eta))
    for i in range(lay.K):
        ui = u[lay.offsets[i]:lay.offsets[i + 1]]
        lp += jnp.sum(-jnp.log(sigma[i]) - 0.5 * (ui / sigma[i]) ** 2)
        df, sc = lay.sigma_df[i], lay.sigma_scale[i]
        lp += -0.5 * (df + 1.0) * jnp.log1p((sigma[i] / sc) ** 2 / df)
    lp += -0.5 * (lay.mu_df + 1.0) * jnp.log1p(((mu - lay.mu_loc) / lay.mu_scale) ** 2 / lay.mu_df)
    return lp


@pytest.mark.parametrize("nested,mode", [(True, "auto"), (False, "auto"), (True, "centered"), (True, "term")])
def test_the_potential_is_the_model_density_after_the_change_of_variables(nested, mode):
    import jax
    import jax.numpy as jnp

    spec, design, rough, lay, cols = _setup(nested, mode)
    if nested:
        assert lay.nested  # benchmark:task is hosted by benchmark, and so on
    K, L = lay.K, lay.L
    with jax.enable_x64(True):
        pot_gen, constrain, _, _ = P._make_functions(design, lay, jnp.float64, cols, None, 0)
        potential = pot_gen(jnp.zeros((), jnp.float64))
        nG = 1 + 2 * K

        def unflat(v):
            return {"g": v[:nG], "x": v[nG:]}

        def target(v):  # (sigma, mu, u, aux) as one vector
            z = unflat(v)
            sigma, mu, u = constrain(z)
            aux = pot_gen.parts(z)[4]
            return jnp.concatenate([sigma, mu[None], u, aux])

        def rhs(v):
            z = unflat(v)
            sigma, mu, u = constrain(z)
            aux = pot_gen.parts(z)[4]
            lq = jnp.sum(-0.5 * lay.J * aux ** 2 / lay.sref ** 2)
            _, logdet = jnp.linalg.slogdet(jax.jacfwd(target)(v))
            return -(_model_log_density(design, lay, sigma, mu, u) + lq + logdet)

        rng = np.random.default_rng(0)
        diffs = []
        for _ in range(4):
            v = jnp.asarray(np.concatenate([[rng.normal()], np.log(rng.uniform(0.3, 2.0, K)), rng.normal(size=K),
                                            rng.normal(size=L)]))
            diffs.append(float(potential(unflat(v)) - rhs(v)))
    assert np.ptp(diffs) < 1e-8, diffs


def test_nested_centring_hosts_each_term_on_its_closest_ancestor():
    spec, design, rough, lay, cols = _setup(True)
    names = [design.term_names[k] for k in lay.terms]
    chains = {names[p]: [names[q] for q, _ in ch] for p, ch in enumerate(lay.chains)}
    assert chains["benchmark"] == [] and chains["model"] == [] and chains["scaffold"] == []
    assert chains["benchmark:task"] == ["benchmark"]
    # benchmark:task (7 levels) is closer than benchmark:scaffold (4 levels); one chain, never both
    assert chains["benchmark:task:scaffold"] == ["benchmark:task", "benchmark"]
    assert chains["benchmark:task:model"] == ["benchmark:task", "benchmark"]
    # level maps: each task's host level is its benchmark
    p = names.index("benchmark:task")
    labels = design.level_labels[lay.terms[p]]
    bench = design.level_labels[lay.terms[names.index("benchmark")]]["benchmark"].to_numpy()
    assert list(bench[lay.chains[p][0][1]]) == list(labels["benchmark"])


def test_the_collapsed_move_keeps_every_effect_the_likelihood_sees():
    """After the move, the state's u outside the group is unchanged, the group's run sums (with mu)
    are unchanged, and the auxiliary coordinates are unchanged: the move only re-splits the runs."""
    import jax
    import jax.numpy as jnp

    spec, design, rough, lay, cols = _setup(True)
    group = collapsed_group(design, cols)
    pri = [spec.priors.for_term(design.term_names[k]) for k in group.terms]
    gibbs = P._GibbsBlock(group=group, top_pos=lay.terms.index(group.terms[0]),
                          nuts_pos=[lay.terms.index(k) for k in group.terms], inner=[], J=np.zeros(0, np.int64),
                          offsets=np.zeros(1, np.int64), sigma_df=np.array([p.df for p in pri]),
                          sigma_scale=np.array([p.scale for p in pri]))
    with jax.enable_x64(True):
        pot_gen, constrain, move, _ = P._make_functions(design, lay, jnp.float64, cols, gibbs, 5)
        rng = np.random.default_rng(1)
        K = lay.K
        z = {"g": jnp.asarray(np.concatenate([[0.2], np.log(rng.uniform(0.4, 1.5, K)), rng.normal(size=K)])),
             "x": jnp.asarray(rng.normal(size=lay.L))}
        nP = len(group.terms) + 1
        z2, _, _, _ = move(z, jnp.zeros(0), jnp.zeros(0), jax.random.PRNGKey(0), 0.3 * jnp.eye(nP))
        s1, mu1, u1 = constrain(z)
        s2, mu2, u2 = constrain(z2)
        eta1 = pot_gen.eta(z["g"][0], pot_gen.parts(z)[5], 0.0)
        eta2 = pot_gen.eta(z2["g"][0], pot_gen.parts(z2)[5], 0.0)
        aux1, aux2 = pot_gen.parts(z)[4], pot_gen.parts(z2)[4]
    in_group = {lay.terms.index(k) for k in group.terms}
    assert not np.allclose(np.asarray(u1), np.asarray(u2))  # the move did move
    for p in range(K):
        a, b = lay.offsets[p], lay.offsets[p + 1]
        if p not in in_group:
            np.testing.assert_allclose(np.asarray(u2[a:b]), np.asarray(u1[a:b]), atol=1e-10)
    np.testing.assert_allclose(np.asarray(eta2), np.asarray(eta1), atol=1e-10)
    np.testing.assert_allclose(np.asarray(aux2), np.asarray(aux1), atol=1e-10)


def _nested_table(trials_per_task, n_tasks=30, sigma_task=2.0, seed=4):
    rng = np.random.default_rng(seed)
    rows = []
    for b, mu_b in (("b1", -0.5), ("b2", 0.7)):
        for t in range(n_tasks):
            p = 1 / (1 + np.exp(-(mu_b + sigma_task * rng.normal())))
            n = int(trials_per_task)
            rows.append({"benchmark": b, "task": f"{b}-{t}", "model": "m", "scaffold": "s",
                         "successes": int(rng.binomial(n, p)), "trials": n})
    return pd.DataFrame(rows)


def test_a_host_keeps_the_information_its_children_leave_it():
    """One host, one child term: I_eff(host level) = sum over its children of I_c / (1 + sigma_c^2 I_c)."""
    from ddr_explorer.core.model.geometry import RoughFit, host_chains, nested_information

    spec = as_spec("(1|benchmark) + (1|benchmark:task)")
    design = build_design(_nested_table(40), spec)
    cols = [spec.term(n).columns for n in design.term_names]
    mu, sig = 0.3, np.array([1.5, 2.0])
    p = 1 / (1 + np.exp(-mu))
    W = design.trials * p * (1 - p)
    info = [np.bincount(design.codes[k], weights=W, minlength=design.n_levels[k]) for k in range(2)]
    rough = RoughFit(sigma=sig, mu=mu, u=[np.zeros(int(j)) for j in design.n_levels], info=info,
                     precision=[info[k] + 1 / sig[k] ** 2 for k in range(2)], total_info=float(W.sum()),
                     iterations=0)
    chains = host_chains(design, cols, [0, 1])
    assert [q for q, _ in chains[1]] == [0] and chains[0] == []
    eff = nested_information(design, rough, [0, 1], chains)
    It = info[1]
    host_of_task = chains[1][0][1]
    expected = np.bincount(host_of_task, weights=It / (1 + sig[1] ** 2 * It), minlength=2)
    np.testing.assert_allclose(eff[0], expected, rtol=1e-12)
    np.testing.assert_allclose(eff[1], info[1])
    # 40 trials a task at p = 0.57: I_t = 9.8, so each task leaves its benchmark 9.8 / 40.3 = 0.24
    assert eff[0][0] == pytest.approx(30 * 9.8 / (1 + 4 * 9.8), rel=0.01)


@pytest.mark.parametrize("trials,kept", [(200, True), (1, False)])
def test_a_host_is_used_only_where_its_children_absorb_it(trials, kept):
    """benchmark:task is centred on benchmark when the tasks' data pin them (200 trials each: the
    benchmark's information drops by far more than MIN_ABSORBED_RATIO), not with one trial a task."""
    from ddr_explorer.core.model.geometry import MIN_ABSORBED_RATIO, absorbed_ratio, host_chains

    spec = as_spec("(1|benchmark) + (1|benchmark:task)")
    design = build_design(_nested_table(trials), spec)
    cols = [spec.term(n).columns for n in design.term_names]
    rough = rough_fit(design)
    ratio = absorbed_ratio(design, rough, [0, 1], 1, 0, host_chains(design, cols, [0, 1])[1][0][1])
    chains = host_chains(design, cols, [0, 1], rough)
    assert (ratio >= MIN_ABSORBED_RATIO) == kept
    assert (chains[1] != []) == kept
    if kept:
        assert ratio > 20
    else:
        assert ratio < 3
