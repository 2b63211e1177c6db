"""`ddr dstudy` says where its sizes come from, and what it does before it samples.

- A fit file records its corpus's observed design: `ddr dstudy FIT.h5` uses it (not the default 50 tasks and
  2 models), so it agrees with `ddr dstudy CORPUS`, and says where the sizes came from.
- `ddr dstudy CORPUS` without a cached fit says, before sampling, that it fits, at what scale, that progress
  follows, and points to `--preview`; with the fit cached it says nothing of the kind.
The sampler is the moment stand-in of ``batch_fakes``.
"""

from __future__ import annotations

import json

import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.cli import main
from ddr_explorer.core.fitting import observed_design_of_fit

import ddr_batch_fakes as bf  # noqa: E402 - registered by tests/conftest.py

FAST = ["--stop", "fixed", "--draws", "40", "--warmup", "10", "--chains", "2"]


@pytest.fixture
def corpus_csv(tmp_path):
    table = bf.simulate_module().simulate_per_benchmark(n_tasks=12, n_models=5, n_scaffolds=2, n_pairs=10,
                                                        trials_per_cell=3, seed=4).table
    p = tmp_path / "corpus.csv"
    table.to_csv(p, index=False)
    return p


def test_a_fit_file_gives_the_observed_design_it_records(fake_sampler, capsys, corpus_csv, tmp_path):
    cache = tmp_path / "cache"
    assert main(["dstudy", str(corpus_csv), "--cache", str(cache), *FAST, "--json", "--quiet"]) == 0
    a = json.loads(capsys.readouterr().out)
    (h5,) = cache.glob("*.h5")
    assert main(["dstudy", str(h5), "--json"]) == 0
    b = json.loads(capsys.readouterr().out)
    assert len(fake_sampler) == 1  # the file is read, nothing is fitted
    assert a["design"]["n_tasks"] == 12 and a["design"]["n_replicates"] == 3
    assert b["design"] == a["design"]
    assert b["estimands"]["Erho2"]["median"] == a["estimands"]["Erho2"]["median"]
    assert b["design_source"] == f"the observed design of corpus corpus, recorded in the fit file {h5.name}"
    assert a["design_source"] == "the observed design of corpus corpus (corpus.csv)"
    assert main(["dstudy", str(h5), "--n-tasks", "30"]) == 0
    text = capsys.readouterr().out
    assert f"sizes from the observed design of corpus corpus, recorded in the fit file {h5.name}; set on the " \
           "command line: --n-tasks 30.0" in text


def test_a_fit_file_without_a_recorded_design_says_its_sizes_are_defaults():
    assert observed_design_of_fit({}) is None
    d = observed_design_of_fit({"observed_design": {"n_tasks": 7.0, "n_models": 3, "n_scaffolds": 2.0,
                                                    "object_of_measurement": "model"}})
    assert (d.n_tasks, d.n_models, d.n_scaffolds) == (7.0, 3, 2.0)


def test_an_uncached_fit_is_announced_with_its_scale_progress_and_the_preview(fake_sampler, capsys, corpus_csv,
                                                                               tmp_path):
    cache = tmp_path / "cache"
    assert main(["dstudy", str(corpus_csv), "--cache", str(cache), *FAST]) == 0
    err = capsys.readouterr().err
    head = err.splitlines()[0]
    assert head.startswith("ddr dstudy: no cached fit of y ~ ") and "sampling it now (" in head
    assert "Terminal-Bench 2.0, per-benchmark (7,209 cells) took 42 s" in head
    assert f"ddr dstudy {corpus_csv} --preview" in head
    assert "sampling: 1/1" in err  # the sampler's progress follows the announcement
    assert main(["dstudy", str(corpus_csv), "--cache", str(cache), *FAST]) == 0
    assert "no cached fit" not in capsys.readouterr().err  # from the cache: nothing to announce
