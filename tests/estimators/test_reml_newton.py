"""REML's fast path: the block elimination of the Schur complement and the AI-REML Newton iteration.

Every number is checked against a dense computation of the same formula (the inverse of A, the REML
projector P built from V) or against the derivative-free optimiser's optimum.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddr_explorer.core.estimators.design import MixedDesign
from ddr_explorer.core.estimators.reml import RemlProblem, reml

FIXTURES = Path(__file__).parent / "fixtures"
POOLED_TERMS = {"benchmark": ["benchmark"], "benchmark:task": ["benchmark", "task"], "model": ["model"],
                "scaffold": ["scaffold"], "benchmark:model": ["benchmark", "model"],
                "model:scaffold": ["model", "scaffold"], "benchmark:task:model": ["benchmark", "task", "model"],
                "benchmark:task:scaffold": ["benchmark", "task", "scaffold"]}


def pooled_table(seed: int = 0) -> pd.DataFrame:
    """A small pooled corpus shaped like HAL: tasks nested in benchmarks, each benchmark run by its own
    subset of (model, scaffold) pairs, one score per run and task, a few runs missing a task."""
    rng = np.random.default_rng(seed)
    sd = {"benchmark": 0.8, "benchmark:task": 1.0, "model": 0.5, "scaffold": 0.3, "benchmark:model": 0.3,
          "model:scaffold": 0.2, "benchmark:task:model": 0.6, "benchmark:task:scaffold": 0.4}
    rows = []
    for b in range(4):
        models = rng.choice(8, size=rng.integers(3, 6), replace=False)
        scaffolds = rng.choice(4, size=2, replace=False)
        for t in range(int(rng.integers(5, 9))):
            for m in models:
                for s in scaffolds:
                    if rng.random() < 0.15:
                        continue
                    rows.append((f"b{b}", f"t{t}", f"m{m}", f"s{s}"))
    df = pd.DataFrame(rows, columns=["benchmark", "task", "model", "scaffold"])
    y = np.full(len(df), 0.5)
    for term, cols in POOLED_TERMS.items():
        codes = df.groupby(cols, sort=True).ngroup().to_numpy()
        y += rng.normal(0, sd[term], codes.max() + 1)[codes]
    df["score"] = y + rng.normal(0, 0.7, len(df))
    return df


def dense_a(problem: RemlProblem, theta: np.ndarray) -> np.ndarray:
    lam = theta[problem.term_of]
    g = problem.g.toarray()
    return lam[:, None] * g * lam[None, :] + np.eye(g.shape[0])


def test_pooled_design_is_eliminated_blockwise_by_benchmark():
    d = MixedDesign.from_table(pooled_table(), POOLED_TERMS, response="score")
    p = RemlProblem(d)
    assert p.blocks, "the nested task-level columns should be eliminated blockwise"
    plan = p.system.plan
    # a group of blocks shares one benchmark (the products are taken per group), or everything is one group
    # (chosen when the dense rest is small, as here: fewer calls)
    bench_of_col = p._coarse_labels()[d.term_names.index("benchmark")][p.system.i2]
    t = plan.block_of >= 0
    groups = plan.group_of_block[plan.block_of[t]]
    if groups.max() > 0:
        assert all(np.unique(bench_of_col[t][groups == g]).size == 1 for g in np.unique(groups))
    plan_fine = __import__("ddr_explorer.core.estimators.schur", fromlist=["plan_blocks"]).plan_blocks(
        p.system.indices, p.system.indptr, p.term_of[p.system.i2], [bench_of_col])
    assert plan_fine is not None
    # benchmark:task and benchmark:task:scaffold are eliminated blockwise; the run-level terms stay dense
    names = np.array(d.term_names)[p.term_of[p.system.i2]]
    assert set(names[plan.block_of >= 0]) == {"benchmark:task", "benchmark:task:scaffold"}


@pytest.mark.parametrize("zero", [None, "model:scaffold", "benchmark:task"])
def test_block_elimination_equals_the_dense_system(zero):
    """log|A|, A^{-1} b and the block traces of A^{-1} from the block elimination equal the dense ones and
    the sparse LU's, also with a term at theta = 0."""
    d = MixedDesign.from_table(pooled_table(), POOLED_TERMS, response="score")
    p, lu = RemlProblem(d), RemlProblem(d, blocks=False)
    assert p.blocks and not lu.blocks
    theta = np.linspace(0.3, 1.2, d.n_terms)
    if zero is not None:
        theta[d.term_names.index(zero)] = 0.0
    lam = theta[p.term_of]
    a = dense_a(p, theta)
    want_logdet = np.linalg.slogdet(a)[1]
    assert p.system.factor(lam) == pytest.approx(want_logdet, rel=1e-12)
    assert lu.system.factor(lam) == pytest.approx(want_logdet, rel=1e-12)
    b = np.random.default_rng(1).normal(size=(d.n_effects, 3))
    np.testing.assert_allclose(p.system.solve(b), np.linalg.solve(a, b), rtol=1e-9, atol=1e-12)
    tr1, tr2 = p.system.inverse_traces(p.term_of[p.system.i2], d.n_terms)
    want = np.bincount(p.term_of, weights=np.diag(np.linalg.inv(a)), minlength=d.n_terms)
    got = tr2.copy()
    got[p.largest] = tr1
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_newton_gradient_and_average_information_equal_the_dense_formulas():
    """d d_R / d phi_k = tr(P V_k) - df y'P V_k P y / r^2 and H = (df / r^2)[a'Pa - c c' / r^2], with P
    formed densely from V = I + sum phi_k Z_k Z_k' on the crossed fixture (one score per row)."""
    df = pd.read_csv(FIXTURES / "crossed.csv")
    terms = ["person", "item", "rater", "person:item"]
    d = MixedDesign.from_table(df, terms, response="score")
    p = RemlProblem(d)
    theta = np.array([1.1, 0.6, 0.4, 0.8])
    out = p.evaluate(theta)
    grad, hess = p.newton_terms(theta, out)
    # the dense trial-level model, one row per score (levels numbered in sorted order, as the design does)
    y = df.score.to_numpy()
    n = y.size
    zk = []
    for k, t in enumerate(terms):
        codes = df.groupby(t.split(":"), sort=True).ngroup().to_numpy()
        zk.append(np.eye(d.n_levels[k])[codes])
    v = np.eye(n) + sum(t * t * m @ m.T for t, m in zip(theta, zk))
    vinv = np.linalg.inv(v)
    x = np.ones((n, 1))
    pm = vinv - vinv @ x @ np.linalg.inv(x.T @ vinv @ x) @ x.T @ vinv
    r2 = y @ pm @ y
    dfree = n - 1
    assert r2 == pytest.approx(out["r2"], rel=1e-10)
    py = pm @ y
    a = [m @ (m.T @ py) for m in zk]
    c = np.array([py @ ak for ak in a])
    want_grad = np.array([np.trace(pm @ m @ m.T) for m in zk]) - dfree * c / r2
    want_hess = dfree / r2 * (np.array([[ai @ pm @ aj for aj in a] for ai in a]) - np.outer(c, c) / r2)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-8)
    np.testing.assert_allclose(hess, want_hess, rtol=1e-8)
    # and the gradient is the derivative of the criterion in phi = theta^2
    h = 1e-6
    phi = theta ** 2
    fd = np.array([(p.deviance(np.sqrt(phi + e)) - p.deviance(np.sqrt(phi - e))) / (2 * h) for e in np.eye(4) * h])
    np.testing.assert_allclose(grad, fd, rtol=1e-5)


@pytest.mark.parametrize("seed", [0, 3])
def test_newton_reaches_the_derivative_free_optimum_in_few_evaluations(seed):
    d = MixedDesign.from_table(pooled_table(seed), POOLED_TERMS, response="score")
    n, f = reml(d), reml(d, method="cobyqa")
    assert n.converged and f.converged
    assert n.criterion <= f.criterion + 1e-7
    for t in f.components:
        assert n.components[t] == pytest.approx(f.components[t], rel=1e-4, abs=1e-8), t
    assert n.n_evaluations * 5 < f.n_evaluations


def test_newton_from_a_start_far_from_the_optimum_and_with_a_term_at_zero():
    """Started with every theta at 3 (and a term with no variance in the data), the iteration still ends
    at the derivative-free optimum; the empty term is exactly 0."""
    df = pooled_table(1)
    # the scaffold effect removed: each scaffold's mean score is set to the overall mean
    df["score"] = df["score"] - df.groupby("scaffold")["score"].transform("mean") + df["score"].mean()
    d = MixedDesign.from_table(df, POOLED_TERMS, response="score")
    n = reml(d, theta0=np.full(d.n_terms, 3.0))
    f = reml(d, method="cobyqa")
    assert n.converged
    assert n.components["scaffold"] == 0.0
    assert n.criterion <= f.criterion + 1e-7
    for t in f.components:
        assert n.components[t] == pytest.approx(f.components[t], rel=1e-4, abs=1e-7), t


@pytest.mark.parametrize("zero", [False, True])
def test_laplace_with_the_eliminated_system_equals_the_full_factorisation(zero):
    """Laplace's PIRLS renews G's values at every step: with the largest term eliminated and the rest
    blockwise, the conditional mode and the Laplace deviance equal those of the full sparse LU."""
    from ddr_explorer.core.estimators.laplace import LaplaceProblem

    d = MixedDesign.from_spec(pd.read_csv(FIXTURES / "binary_cells.csv"), "per-benchmark")
    fast, full = LaplaceProblem(d, elimination=True), LaplaceProblem(d, elimination=False)
    assert fast.system.plan is not None  # the block elimination is in use
    theta = np.array([1.8, 0.9, 0.3, 1.0, 0.7, 0.4])
    if zero:
        theta[int(np.argmax(d.n_levels))] = 0.0
    a, b = fast.evaluate(theta, 0.5), full.evaluate(theta, 0.5)
    assert a["deviance"] == pytest.approx(b["deviance"], rel=1e-12)
    np.testing.assert_allclose(a["u"], b["u"], rtol=1e-7, atol=1e-9)


def test_a_failed_newton_iteration_falls_back_to_the_derivative_free_search(monkeypatch):
    """The safety net: if the Newton iteration stops unconverged, the search finishes derivative-free from
    its last point and reaches the same optimum."""
    import importlib

    reml_module = importlib.import_module("ddr_explorer.core.estimators.reml")

    d = MixedDesign.from_table(pooled_table(0), POOLED_TERMS, response="score")
    want = reml(d, method="cobyqa")

    def broken(problem, theta0, **kw):
        raise FloatingPointError("simulated breakdown")

    monkeypatch.setattr(reml_module, "minimise_newton", broken)
    got = reml(d)
    assert got.converged
    assert got.criterion == pytest.approx(want.criterion, abs=1e-6)
    for t in want.components:
        assert got.components[t] == pytest.approx(want.components[t], rel=1e-4, abs=1e-8), t
