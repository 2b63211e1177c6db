"""Refits of one parent (core.model.refit): masked counts, one compile, warm starts, batches.

With the real sampler on a small simulated per-benchmark corpus (seed 000 Eq. 2): a parent fit,
then two refits (three tasks dropped; about half of every cell's trials) warm-started from it in
one batch, compared with cold fits of the same kept cells.  The sampler is exact whatever the
start and mass matrix, so the posterior means of every sigma must agree within Monte Carlo
error; the levels without trials must be gone from the output.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import ddr_explorer.core.model as M  # noqa: F401  (before jax: parallel CPU chains)
from ddr_explorer.core.model import FitCancelled, SamplerSettings, build_design, fit
from ddr_explorer.core.model.refit import (RefitRequest, _to_coordinates, batch_layout, fit_refits, masked_design,
                                           request_cells, request_seed)

ROOT = Path(__file__).resolve().parents[2]
TRUTH = {"task": 1.5, "model": 1.0, "scaffold": 0.5, "task:model": 0.8, "task:scaffold": 0.6,
         "model:scaffold": 0.4}
SETTINGS = SamplerSettings(stop="fixed", draws=200, warmup=150, chains=2, seed=3, chunk_size=50)
#: Run length by the gate (at least 100 draws per chain, a look every 50, at most 600).
GATE = SamplerSettings(draws=100, warmup=150, chains=2, seed=3, chunk_size=50, stop="gate", check_every=50,
                       max_draws=600)
DROPPED = ["t000", "t001", "t002"]


def _simulate_module():
    spec = importlib.util.spec_from_file_location("ddr_bench_simulate", ROOT / "bench" / "simulate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def design():
    sim = _simulate_module().simulate_per_benchmark(n_tasks=30, n_models=6, n_scaffolds=3, n_pairs=10,
                                                    trials_per_cell=4, sigmas=TRUTH, mu=-0.3, seed=5)
    return build_design(sim.table, "per-benchmark")


@pytest.fixture(scope="module")
def requests(design):
    keep = ~design.cells["task"].isin(DROPPED).to_numpy()
    rng = np.random.default_rng(1)
    n_half = rng.binomial(design.trials, 0.5)
    s_half = rng.hypergeometric(design.successes, design.trials - design.successes, np.maximum(n_half, 0))
    return [RefitRequest("drop three tasks", design.successes * keep, design.trials * keep),
            RefitRequest("half the trials", s_half, n_half)]


@pytest.fixture(scope="module")
def parent(design):
    return fit(design, "per-benchmark", SETTINGS)


@pytest.fixture(scope="module")
def events():
    return []


@pytest.fixture(scope="module")
def polls():
    return []


@pytest.fixture(scope="module")
def warm(design, requests, parent, events, polls):
    return fit_refits(design, "per-benchmark", requests, SETTINGS, parent=parent,
                      progress=lambda *a: events.append(a), cancel=lambda: polls.append(1) and False)


@pytest.fixture(scope="module")
def cold(design, requests):
    """The cold fit of the first request's kept cells (one compile: the suite's time is short)."""
    return fit(request_cells(design, requests[0]), "per-benchmark", SETTINGS)


def test_masked_design_keeps_cells_and_counts_levels(design, requests):
    dm = masked_design(design, requests[0])
    assert dm.n_cells == design.n_cells and np.array_equal(dm.codes, design.codes)
    k = design.index("task")
    empty = design.level_labels[k]["task"].isin(DROPPED).to_numpy()
    assert (dm.level_trials[k][empty] == 0).all() and (dm.level_trials[k][~empty] > 0).all()
    assert dm.n_trials == int(requests[0].trials.sum())


def test_coordinates_round_trip(design, requests):
    """Draws mapped into a refit's coordinates come back unchanged through the potential's own map."""
    import jax.numpy as jnp

    from ddr_explorer.core.model.geometry import rough_fit
    from ddr_explorer.core.model.parameterisation import _make_functions, _make_layout

    spec = M.as_spec("per-benchmark")
    dm = masked_design(design, requests[0])
    rough = rough_fit(dm)
    terms = list(range(dm.n_terms))
    lay = _make_layout(dm, spec, rough, "auto", terms)
    rng = np.random.default_rng(0)
    sigma = np.exp(rng.normal(-0.3, 0.4, (3, len(terms))))
    mu = rng.normal(size=3)
    u = [rng.normal(size=(3, int(j))) for j in lay.J]
    g, x = _to_coordinates(lay, sigma, mu, u)
    cols = [spec.term(n).columns for n in dm.term_names]
    import jax

    with jax.enable_x64(True):
        _, constrain, _, _ = _make_functions(dm, lay, jnp.float64, cols, None, 0, consts={
            "y": dm.successes, "n": dm.trials, "c0": lay.c0, "c1": lay.c1, "pi": lay.pi, "pi_norm": lay.pi_norm,
            "sref2": lay.sref ** 2})
        constrain = jax.jit(constrain)  # one compile (op by op, the map cost seconds)
        for i in range(3):
            s, m, uu = constrain({"g": jnp.asarray(g[i]), "x": jnp.asarray(x[i])})
            assert np.allclose(s, sigma[i], rtol=1e-10)
            assert np.isclose(m, mu[i], rtol=1e-10, atol=1e-10)
            assert np.allclose(uu, np.concatenate([v[i] for v in u]), rtol=1e-8, atol=1e-10)


def test_batch_layout():
    assert batch_layout(10, 2, "cpu", 4) == (2, 4)  # one chain per CPU device
    assert batch_layout(10, 4, "cpu", 4) == (1, 4)
    assert batch_layout(50, 2, "gpu", 1) == (50, 100)  # every split in one vmapped batch
    assert batch_layout(1000, 4, "gpu", 1) == (128, 512)


def test_refits_read_like_cold_fits_of_the_kept_cells(design, requests, warm, cold):
    assert len(warm) == 2
    w, c = warm[0], cold
    assert w.n_cells == c.n_cells and w.n_trials == c.n_trials
    assert set(w.sigma) == set(c.sigma)
    for name in c.levels:
        assert w.levels[name].equals(c.levels[name]), name
        assert w.random_effects[name].shape == c.random_effects[name].shape
    assert len(w.levels["task"]) == design.n_levels[design.index("task")] - len(DROPPED)
    for r, p in zip(requests, warm):
        assert p.diagnostics is not None
        assert p.sigma["task"].shape == (SETTINGS.chains, SETTINGS.draws)
        assert p.n_trials == int(r.trials.sum()) and p.n_cells == int((r.trials > 0).sum())


@pytest.fixture(scope="module")
def failures_only(design, requests, parent):
    """A refit that keeps only the failures of the first model (a part of the parent's trials, so the
    batch of two runs the ``warm`` refits' program, read from the compile cache)."""
    k = design.index("model")
    m0 = design.level_labels[k]["model"].iloc[0]
    mine = (design.cells["model"] == m0).to_numpy()
    req = RefitRequest(f"{m0}: failures only", np.where(mine, 0, design.successes),
                       np.where(mine, design.trials - design.successes, design.trials))
    return m0, fit_refits(design, "per-benchmark", [requests[0], req], SETTINGS, parent=parent)[1]


def test_a_refit_samples_its_own_counts_not_its_parents(parent, failures_only):
    """The refit's likelihood is its request's counts: the model that kept only its failures falls far
    below where the parent put it, and no other model moves as much.  (A refit that read the parent's
    counts passed the agreement tests above, whose requests leave every model's rate about as it was.)"""
    m0, refit = failures_only

    def effect_means(post):
        names = post.levels["model"]["model"].tolist()
        u = np.asarray(post.random_effects["model"]).reshape(-1, len(names))
        return dict(zip(names, u.mean(axis=0))), dict(zip(names, u.std(axis=0)))

    (before, sd), (after, _) = effect_means(parent), effect_means(refit)
    shift = {m: after[m] - before[m] for m in before}
    assert shift[m0] < -1.0 and shift[m0] < -4 * sd[m0], (shift, sd[m0])
    assert all(abs(v) < abs(shift[m0]) / 2 for m, v in shift.items() if m != m0), shift
    assert "1 compile(s) for 2 refit(s)" in refit.notes[-1]


def test_one_compile_for_all_refits(warm):
    notes = [p.notes[-1] for p in warm]
    assert all("1 compile(s) for 2 refit(s)" in n for n in notes), notes
    assert all("warm start" in n for n in notes)


def _assert_means_agree_within_monte_carlo_error(w, c):
    """Every sigma's posterior mean in ``w`` and ``c`` within 4 Monte Carlo standard errors (from bulk ESS)."""
    for name in TRUTH:
        a, b = w.sigma[name].ravel(), c.sigma[name].ravel()
        ess_a = float(w.diagnostics.table.loc[name, "ess_bulk"])
        ess_b = float(c.diagnostics.table.loc[name, "ess_bulk"])
        mcse = np.sqrt(a.var() / ess_a + b.var() / ess_b)
        assert abs(a.mean() - b.mean()) <= 4 * mcse, (name, a.mean(), b.mean(), mcse)


def test_warm_refits_agree_with_cold_fits_within_monte_carlo_error(warm, cold):
    _assert_means_agree_within_monte_carlo_error(warm[0], cold)


def test_progress_counts_refits(events):
    assert events[0][0] == "compile"
    refit_events = [e for e in events if e[0] == "refits"]
    assert refit_events and refit_events[-1][1:3] == (2, 2)
    assert all(e[3] is None or e[3] >= 0 for e in refit_events)
    assert [e[1] for e in refit_events] == sorted(e[1] for e in refit_events)


def test_cancel_is_polled_between_chunks(warm, polls, design, requests):
    from ddr_explorer.core.model.refit import WARM_WARMUP

    chunks = -(-SETTINGS.draws // SETTINGS.chunk_size) + -(-WARM_WARMUP // SETTINGS.chunk_size)  # sampling + warmup
    assert len(polls) >= len(requests) + chunks  # once per request prepared, then once per chunk


def test_cancel_stops_the_refits(design, requests):
    with pytest.raises(FitCancelled, match="cancelled"):
        fit_refits(design, "per-benchmark", requests, SETTINGS, cancel=lambda: True)


def test_requests_are_checked(design):
    bad = RefitRequest("bad", np.zeros(design.n_cells - 1, int), np.zeros(design.n_cells - 1, int))
    with pytest.raises(ValueError, match="bad"):
        fit_refits(design, "per-benchmark", [bad], SETTINGS)


def test_collapsed_block_positions_follow_a_refit_that_integrates_a_term():
    """A refit whose rough fit integrates a term out samples one NUTS term fewer than the parent's
    structure: the collapsed block's positions must be counted among the refit's own terms (the
    engine crashed with KeyError 5 in the potential when they were not)."""
    from types import SimpleNamespace

    from ddr_explorer.core.model.parameterisation import _GibbsBlock
    from ddr_explorer.core.model.refit import _gibbs_for

    # parent NUTS terms 0..5, collapsed group (5, 1, 2): run term 5 hosts terms 1 and 2
    block = _GibbsBlock(group=SimpleNamespace(terms=(5, 1, 2)), top_pos=5, nuts_pos=[5, 1, 2], inner=[], J=np.zeros(0),
                        offsets=np.zeros(1), sigma_df=np.ones(3), sigma_scale=np.ones(3))
    moved = _gibbs_for(block, [0, 1, 2, 4, 5])  # term 3 integrated out by quadrature
    assert moved.top_pos == 4 and moved.nuts_pos == [4, 1, 2]
    assert block.top_pos == 5  # the shared structure is left alone
    assert _gibbs_for(None, [0, 1]) is None


@pytest.fixture(scope="module")
def gate_runs(design, requests, parent):
    """Both requests, then the second again, the run length of each set by the gate.

    Two refits per batch (2 chains each on 4 CPU devices; capped at two where there are more
    devices): the first batch holds both requests, the second the second request alone, first in
    its batch and padded with a copy of itself.  One call, so both batches run the one compiled
    program (warmup and chunk as the ``warm`` refits': the compile cache holds it); a call with the
    request alone runs a batch of one refit, another program, and compiled it anew (16 s of its
    22 s, measured)."""
    import ddr_explorer.core.model.refit as refit_module

    layout = refit_module.batch_layout
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(refit_module, "batch_layout", lambda n, chains, kind, n_dev: layout(min(n, 2), chains, kind, n_dev))
        return fit_refits(design, "per-benchmark", [*requests, requests[1]], GATE, parent=parent, warmup=50)


@pytest.fixture(scope="module")
def gate_batch(gate_runs):
    """Both requests in one batch."""
    return gate_runs[:2]


@pytest.fixture(scope="module")
def gate_alone(gate_runs):
    """The second request alone in its batch (padded with a copy of itself)."""
    return gate_runs[2]


def test_request_seed_depends_on_the_seed_and_the_counts_only(requests):
    a, b = requests
    assert request_seed(3, a) == request_seed(3, RefitRequest("another label", a.successes.copy(), a.trials.copy()))
    assert request_seed(3, a) != request_seed(3, b)
    assert request_seed(3, a) != request_seed(4, a)
    assert 0 <= request_seed(3, a) < 2 ** 31


def test_a_refit_gives_the_same_draws_alone_and_in_a_batch(gate_batch, gate_alone):
    """Its seed comes from its counts, not its place, and its run length from its own chains' gate
    (the batch may run on for its batch-mate): bitwise the same draws, the same length."""
    b = gate_batch[1]
    assert "batch of 2 refit(s)" in b.notes[0] and "batch of 1 refit(s)" in gate_alone.notes[0]
    assert b.mu.shape == gate_alone.mu.shape
    np.testing.assert_array_equal(b.mu, gate_alone.mu)
    for t in b.sigma:
        np.testing.assert_array_equal(b.sigma[t], gate_alone.sigma[t])
    np.testing.assert_array_equal(b.sample_stats["step_size"], gate_alone.sample_stats["step_size"])


def test_gate_stopping_stops_each_refit_at_its_own_look(gate_batch):
    from ddr_explorer.core.model.stopping import check_gate

    for p in gate_batch:
        n = p.mu.shape[1]
        note = next(x for x in p.notes if x.startswith("run length by the gate"))
        assert f"at {n} draws per chain" in note, note
        assert GATE.draws <= n <= GATE.max_draws and (n - GATE.draws) % GATE.check_every == 0
        sig = np.stack([p.sigma[t] for t in p.sigma], axis=-1)
        div = int(np.sum(p.sample_stats["diverging"]))
        if "every component passed" in note:
            assert check_gate(sig, div).passed  # the draws kept are the ones that passed
            if n > GATE.draws:  # and the look before did not pass: it stopped at the first look
                assert not check_gate(sig[:, :n - GATE.check_every], div).passed
        assert p.settings.stop == "gate"


def test_gate_stopped_warm_refit_agrees_with_the_cold_fit(gate_batch, cold):
    _assert_means_agree_within_monte_carlo_error(gate_batch[0], cold)
