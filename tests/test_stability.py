"""Leave-one-benchmark-out and leave-one-model-out stability tables (seed 000 App. D.4-D.6): shape,
values against hand formulas, rank correlations, cache reuse.  Sampler: the moment stand-in of
``batch_fakes`` (sigma_model from the data, every other sigma 1, u_m = centred model logits)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.model import FitCancelled, SamplerSettings
from ddr_explorer.core.ranks import kendall_tau, spearman_rho
from ddr_explorer.core.analyses.stability import leave_one_benchmark_out, leave_one_model_out, stability_table


import ddr_batch_fakes as bf  # noqa: E402 - registered by tests/conftest.py
SETTINGS = SamplerSettings(stop="fixed", draws=40, warmup=10, chains=2, seed=1)
E = np.pi ** 2 / 3



def _bench(name, seed, n_tasks=8):
    sim = bf.simulate_module().simulate_per_benchmark(n_tasks=n_tasks, n_models=5, n_scaffolds=2, n_pairs=10,
                                                      trials_per_cell=2, seed=seed, benchmark=name)
    return sim.table.astype({c: str for c in ("benchmark", "task", "model", "scaffold")})


@pytest.fixture(scope="module")
def one_benchmark():
    return bf.corpus_of(_bench("b1", 1), "one")


@pytest.fixture(scope="module")
def three_benchmarks():
    return bf.corpus_of(pd.concat([_bench("b1", 1), _bench("b2", 2), _bench("b3", 3)], ignore_index=True), "three")


def test_leave_one_model_out_table(fake_sampler, one_benchmark, tmp_path):
    t = leave_one_model_out(one_benchmark, "per-benchmark", SETTINGS, cache_dir=tmp_path)
    assert list(t["left_out"]) == ["(none)", "m00", "m01", "m02", "m03", "m04"]
    assert list(t["n_models"]) == [5, 4, 4, 4, 4, 4] and t["error"].isna().all()
    assert {"sigma2[model]", "sigma2[task:model]", "erho2", "delta_erho2", "spearman", "kendall"} <= set(t.columns)
    models = one_benchmark.table["model"].astype(str)
    for _, row in t.iterrows():
        sub = one_benchmark.table if row.left_out == "(none)" else one_benchmark.table[models != row.left_out]
        s2 = bf.moment_sigma_model(sub) ** 2
        assert row["sigma2[model]"] == pytest.approx(s2, rel=5e-3)
        assert row["sigma2[task:model]"] == pytest.approx(1.0, rel=5e-3)
        # read at the full corpus's design: 8 tasks, 2 scaffolds, 2 trials per cell
        assert row.erho2 == pytest.approx(bf.erho2_model(np.sqrt(s2), 8, 2, 2), abs=2e-3)
        # leaving a model out does not move the others' logits: the ranking of the rest is unchanged
        assert row.spearman == pytest.approx(1.0) and row.kendall == pytest.approx(1.0)
    assert t["delta_erho2"].iloc[0] == 0.0
    assert t["delta_erho2"].iloc[2] == pytest.approx(t["erho2"].iloc[2] - t["erho2"].iloc[0])
    assert t.attrs["n_fitted"] == 11 and t.attrs["n_rerun"] == 5  # full fit, 5 refits, 5 gate reruns


def _pooled_erho2(s2m, nb, ni, na, nr):
    # seed 000 Table 1, leaderboard model ranking, every non-model sigma 1
    return s2m / (s2m + 1 / nb + 1 / na + 1 / (nb * na) + 1 / (nb * ni) + E / (nb * ni * na * nr))


def test_leave_one_benchmark_out_table(fake_sampler, three_benchmarks, tmp_path):
    t = leave_one_benchmark_out(three_benchmarks, "pooled", SETTINGS, cache_dir=tmp_path)
    assert list(t["left_out"]) == ["(none)", "b1", "b2", "b3"] and list(t["n_benchmarks"]) == [3, 2, 2, 2]
    assert set(t["model"]) == {"pooled"}
    full = bf.model_logits(three_benchmarks.table)
    bench = three_benchmarks.table["benchmark"].astype(str)
    for _, row in t.iterrows():
        sub = three_benchmarks.table if row.left_out == "(none)" else three_benchmarks.table[bench != row.left_out]
        s2 = bf.moment_sigma_model(sub) ** 2
        assert row.erho2 == pytest.approx(_pooled_erho2(s2, 3, 8, 2, 2), abs=2e-3)
        mine = bf.model_logits(sub)
        assert row.spearman == pytest.approx(spearman_rho(full.to_numpy(), mine[full.index].to_numpy()))
        assert row.kendall == pytest.approx(kendall_tau(full.to_numpy(), mine[full.index].to_numpy()))
    fake_sampler.clear()
    again = leave_one_benchmark_out(three_benchmarks, "pooled", SETTINGS, cache_dir=tmp_path)
    assert fake_sampler == [] and again.attrs["n_cached"] == 7  # full fit, 3 refits and their reruns
    pd.testing.assert_frame_equal(t, again)


def test_a_single_benchmark_left_is_fitted_per_benchmark(fake_sampler, three_benchmarks, tmp_path):
    two = bf.corpus_of(three_benchmarks.table[three_benchmarks.table["benchmark"] != "b3"].reset_index(drop=True),
                       "two")
    t = stability_table(two, "benchmark", "pooled", SETTINGS, cache_dir=tmp_path)
    assert list(t["model"]) == ["pooled", "per-benchmark", "per-benchmark"]
    assert t["sigma2[benchmark:model]"].iloc[1:].isna().all()  # no benchmark terms in a one-benchmark fit


def test_bad_facet_too_few_levels_and_cancel(fake_sampler, one_benchmark, tmp_path):
    with pytest.raises(ValueError, match="'benchmark' or 'model'"):
        stability_table(one_benchmark, "task")
    with pytest.raises(ValueError, match="at least 2"):
        leave_one_benchmark_out(one_benchmark)
    with pytest.raises(FitCancelled):
        leave_one_model_out(one_benchmark, "per-benchmark", SETTINGS, cache_dir=tmp_path,
                            cancel=lambda: len(bf.CALLS) >= 2)
    assert len(fake_sampler) == 2


def test_rank_correlations_of_a_disconnected_corpus_stay_within_its_parts(fake_sampler, tmp_path):
    """Two benchmarks that share no model or scaffold: LOMO's correlations count within-part pairs only."""
    from ddr_explorer.core.rank_parts import within_part_correlations

    a, b = _bench("b1", 1), _bench("b2", 2)
    b["model"], b["scaffold"] = "q-" + b["model"], "q-" + b["scaffold"]  # part 2 shares nothing with part 1
    corpus = bf.corpus_of(pd.concat([a, b], ignore_index=True), "two parts")
    t = leave_one_model_out(corpus, "pooled", SETTINGS, cache_dir=tmp_path)
    parts = t.attrs["rank_parts"]
    assert [len(p) for p in parts] == [5, 5] and all(m.startswith("q-") for m in parts[1])
    assert "share no benchmark or scaffold" in t.attrs["rank_part_reasons"][0]
    full = bf.model_logits(corpus.table)
    part_of = {m: k for k, p in enumerate(parts) for m in p}
    models = corpus.table["model"].astype(str)
    for _, row in t.iterrows():
        mine = bf.model_logits(corpus.table if row.left_out == "(none)" else corpus.table[models != row.left_out])
        common = [m for m in full.index if m in mine.index]
        rho, tau = within_part_correlations(full[common].to_numpy(), mine[common].to_numpy(),
                                            [part_of[m] for m in common])
        assert row.spearman == pytest.approx(rho) and row.kendall == pytest.approx(tau)
