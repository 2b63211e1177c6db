"""A fit in a child process (core.fit_process): the same draws as a fit in this process, cancellation,
and a failing child named."""

from __future__ import annotations

import numpy as np
import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.fit_process import FitProcessError, fit_corpus_in_process
from ddr_explorer.core.fitting import fit_corpus
from ddr_explorer.core.model.sampler import FitCancelled, SamplerSettings


import ddr_batch_fakes as bf  # noqa: E402 - registered by tests/conftest.py
#: NUTS alone (no collapsed Gibbs or scale moves, their own tests are in tests/model/): what is checked is that
#: the child's draws are this process's, and the sampler compiles in about half the time without them.
TINY = SamplerSettings(stop="fixed", draws=15, warmup=15, chains=2, chunk_size=5, seed=3, collapsed="off",
                       scale_steps=0)


@pytest.fixture(scope="module")
def corpus():
    t = bf.simulate_module().simulate_per_benchmark(n_tasks=8, n_models=4, n_scaffolds=2, n_pairs=6,
                                                    trials_per_cell=2, seed=5).table
    return bf.corpus_of(t)


def test_child_fit_equals_a_fit_here(corpus, tmp_path):
    events = []
    child = fit_corpus_in_process(corpus, "per-benchmark", TINY, cache_dir=tmp_path / "a",
                                  progress=lambda *a: events.append(a))
    assert not child.from_cache and child.cache_path.exists()
    assert events[0][0] == "compile" and {"warmup", "sampling"} <= {e[0] for e in events}
    here = fit_corpus(corpus, "per-benchmark", TINY, cache_dir=tmp_path / "b")
    assert set(child.posterior.sigma) == set(here.posterior.sigma)
    for term, s in here.posterior.sigma.items():  # same seed and settings -> the same draws
        np.testing.assert_allclose(child.posterior.sigma[term], s, rtol=1e-6)
    again = fit_corpus_in_process(corpus, "per-benchmark", TINY, cache_dir=tmp_path / "a")
    assert again.from_cache  # the child found it in the cache and sampled nothing


def test_cancel_reaches_the_child(corpus, tmp_path):
    with pytest.raises(FitCancelled):
        fit_corpus_in_process(corpus, "per-benchmark", TINY, cache_dir=tmp_path, cancel=lambda: True)
    assert not list(tmp_path.glob("*.h5"))


def test_a_failing_child_is_named(corpus, tmp_path):
    with pytest.raises(FitProcessError, match="ModelSpecError|unknown|column"):
        fit_corpus_in_process(corpus, "y ~ (1|task) + (1|no_such_facet)", TINY, cache_dir=tmp_path)
