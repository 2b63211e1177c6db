"""core.fitting.cached_fit: the fit fit_corpus would reopen, or None; it never samples nor writes."""

from ddr_explorer.core.fitting import cached_fit, fit_corpus


def test_cached_fit_finds_only_what_fit_corpus_stored(tmp_path, fake_sampler):
    import ddr_batch_fakes as bf

    from ddr_explorer.core.model import SamplerSettings

    sim = bf.simulate_module().simulate_per_benchmark(n_tasks=6, n_models=3, n_scaffolds=2, n_pairs=6,
                                                      trials_per_cell=2, seed=4)
    corpus = bf.corpus_of(sim.table, "sim")
    settings = SamplerSettings(stop="fixed", draws=40, warmup=10, chains=2)
    cache = tmp_path / "cache"
    assert cached_fit(corpus, "per-benchmark", settings, cache_dir=cache) is None
    assert not cache.exists() and len(fake_sampler) == 0  # a look-up writes and samples nothing
    stored = fit_corpus(corpus, "per-benchmark", settings, cache_dir=cache)
    found = cached_fit(corpus, "per-benchmark", settings, cache_dir=cache)
    assert found is not None and found.from_cache and found.cache_path == stored.cache_path
    assert cached_fit(corpus, "per-benchmark", SamplerSettings(stop="fixed", draws=41, warmup=10, chains=2),
                      cache_dir=cache) is None  # other settings: another fit
