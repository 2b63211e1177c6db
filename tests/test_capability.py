"""The capability scale (seed 002 sec. 5.3): a simulated Rasch corpus with known abilities is recovered
with about nominal 90% interval coverage, a task simulated against the model is listed as fitting badly,
the best scaffold per model-benchmark pair is the one kept, and the per-draw Kendall tau is exact on
hand-made draws."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.analyses.capability import (IDENTIFICATION, capability_study, fit_irt, irt_cells, item_fit,
                                                   kendall_draws_between)
from ddr_explorer.core.corpus.validate import build_corpus


def rasch_corpus(n_models=20, n_tasks=60, trials=3, seed=1, reversed_task=None):
    """Seed 002 Eq. 1 with theta ~ N(0, 1.2) (centred: the 1PL's scale has mean ability 0), beta ~ N(0, 1.2);
    ``reversed_task``: that task's success falls with ability (a task the Rasch model cannot fit)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1.2, n_models)
    theta -= theta.mean()
    beta = rng.normal(0, 1.2, n_tasks)
    rows = []
    for m in range(n_models):
        for t in range(n_tasks):
            eta = theta[m] - beta[t] if t != reversed_task else -3.0 * theta[m]
            rows.append(dict(benchmark="b1" if t < n_tasks // 2 else "b2", task=f"t{t:02d}", model=f"m{m:02d}",
                             scaffold="s", successes=int(rng.binomial(trials, 1 / (1 + np.exp(-eta)))), trials=trials))
    return build_corpus(pd.DataFrame(rows), file=None, format="simulated", name="rasch"), theta


#: The run of the module's Rasch fit: 2 x 200 draws recover the abilities, and fail the gate (bulk ESS < 400
#: for some of the 80 identified quantities), so one fit serves the recovery and the unconverged-label tests.
RUN = {"chains": 2, "warmup": 200, "draws": 200, "seed": 3}


@pytest.fixture(scope="module")
def rasch_corpus_fixture():
    return rasch_corpus(reversed_task=7)


@pytest.fixture(scope="module")
def rasch_fit(rasch_corpus_fixture):
    from ddr_explorer.core.model.devices import _enable_compilation_cache

    # the fit sampler's disk cache of compiled programs (the run's, tests/conftest.py): the capability study
    # below fits this corpus again with the same run and reads the programs back instead of compiling them
    _enable_compilation_cache()
    corpus, theta = rasch_corpus_fixture
    cells = irt_cells(corpus)
    return cells, theta, fit_irt(cells, "1pl", **RUN)


def test_rasch_recovers_known_abilities_with_nominal_coverage(rasch_fit):
    cells, theta, fit = rasch_fit
    truth = theta[[int(s[1:]) for s in cells.subjects]]
    draws = fit.flat(fit.theta)
    lo, hi = np.quantile(draws, [0.05, 0.95], axis=0)
    covered = int(np.sum((lo <= truth) & (truth <= hi)))
    # 90% intervals of 20 abilities: Binomial(20, 0.9) puts P(covered <= 13) at 0.2%
    assert covered >= 14, (covered, lo, hi, truth)
    assert np.corrcoef(draws.mean(0), truth)[0, 1] > 0.9
    # identification: mean ability 0 in every draw (module note), discrimination 1
    assert np.allclose(draws.mean(axis=1), 0.0, atol=1e-9)
    assert fit.a is None and "mean ability" in IDENTIFICATION["1pl"]
    assert set(fit.convergence) >= {"converged", "max_rhat", "min_ess_bulk", "divergences", "problems"}


def test_a_task_against_the_model_is_listed_as_misfitting(rasch_fit):
    _, _, fit = rasch_fit
    items = item_fit(fit)
    row = items.set_index("task").loc["b1 / t07"]
    assert row["misfit"] == "under" and row["ppp"] < 0.025 and row["outfit"] > 2
    # a well-fitting model flags few tasks: the reversed one and at most a handful of chance ones
    assert (items["misfit"] != "").sum() <= 6


def test_best_scaffold_per_model_benchmark_pair_is_kept():
    rows = [dict(benchmark="b", task=f"t{t}", model=m, scaffold=a, successes=k, trials=4)
            for t in range(3) for m, a, k in (("x", "good", 3), ("x", "bad", 1), ("y", "bad", 2), ("y", "good", 0))]
    rows += [dict(benchmark="c", task="u", model=m, scaffold="good", successes=1, trials=4) for m in ("x", "y")]
    corpus = build_corpus(pd.DataFrame(rows), file=None, format="simulated", name="scaffolds")
    cells = irt_cells(corpus)
    chosen = cells.chosen.set_index(["model", "benchmark"])["scaffold"].to_dict()
    assert chosen == {("x", "b"): "good", ("y", "b"): "bad", ("x", "c"): "good", ("y", "c"): "good"}
    assert cells.subjects == ["x", "y"] and cells.n_cells == 8
    got = {(cells.subjects[s], cells.tasks[t]): k for s, t, k in zip(cells.subject, cells.task, cells.successes)}
    assert got[("x", "b / t0")] == 3 and got[("y", "b / t0")] == 2
    every = irt_cells(corpus, "every-agent")
    assert "x / bad" in every.subjects and len(every.subjects) == 4


def test_kendall_tau_per_draw_by_hand():
    a = np.array([[1.0, 2.0, 3.0, 4.0]] * 5)
    assert np.allclose(kendall_draws_between(a, a), 1.0)
    assert np.allclose(kendall_draws_between(a, -a), -1.0)
    # order 2,1,3,4 against 1,2,3,4: one discordant pair of six -> tau = (5 - 1) / 6
    b = np.array([[2.0, 1.0, 3.0, 4.0]] * 5)
    assert np.allclose(kendall_draws_between(a, b), 4 / 6)
    # only pairs inside one part are compared: the discordant pair (0, 1) masked out -> 1
    i, j = np.triu_indices(4, 1)
    assert np.allclose(kendall_draws_between(a, b, ~((i == 0) & (j == 1))), 1.0)


def test_unconverged_fit_is_labelled(rasch_corpus_fixture, rasch_fit):
    # the module's corpus and run (RUN): the same programs as rasch_fit's, read from the disk cache
    st = capability_study(rasch_corpus_fixture[0], models=["1pl"], **RUN)
    d = st.to_dict()
    m = d["models"]["1pl"]
    assert m["convergence"] == rasch_fit[2].convergence  # the same draws: the study's fit is the fixture's
    assert not m["convergence"]["converged"] and m["label"].startswith("UNCONVERGED")
    assert d["gstudy"] is None and d["n_fits"] == 1 and d["n_converged"] == 0


def test_irt_length_follows_a_fixed_run_and_keeps_its_own_under_the_gate():
    """The runner passes the user's fixed length to the IRT fits, but not the gate's first look (200 draws)."""
    from ddr_explorer.core.analyses.runner import _irt_length
    from ddr_explorer.core.model.posterior import SamplerSettings

    assert _irt_length(SamplerSettings(stop="fixed", draws=700, warmup=300)) == {"warmup": 300, "draws": 700}
    assert _irt_length(SamplerSettings()) == {}  # the gate: capability_study's 500 + 1,000
