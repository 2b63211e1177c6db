"""Frontier over time (seed 002 sec. 5.1) on a hand-computed corpus, and slices of tasks."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ddr_explorer.core.analyses.frontier_time import MissingReleaseDates, frontier_over_time
from ddr_explorer.core.corpus.issues import CorpusError
from ddr_explorer.core.corpus.slicing import apply_slice, parse_slice, slice_choices
from ddr_explorer.core.corpus.validate import build_corpus

# (benchmark, task, model, successes, trials): fractions m1 a1 .5 a2 0 b1 .25; m2 a1 1 a2 .5; m3 a2 0 b1 .75
ROWS = [("A", "a1", "m1", 1, 2), ("A", "a2", "m1", 0, 2), ("B", "b1", "m1", 1, 4),
        ("A", "a1", "m2", 2, 2), ("A", "a2", "m2", 1, 2),
        ("A", "a2", "m3", 0, 2), ("B", "b1", "m3", 3, 4)]
DATES = {"m1": "2024-02-10", "m2": "2024-05-01", "m3": "2024-11-15"}
MINUTES = {"a1": 10.0, "a2": 90.0, "b1": 300.0}


def tiny(dates=DATES, groups=None):
    raw = pd.DataFrame(ROWS, columns=["benchmark", "task", "model", "successes", "trials"])
    raw["scaffold"] = "s"
    raw["release_date"] = raw["model"].map(dates)
    raw["human_minutes"] = raw["task"].map(MINUTES)
    if groups is not None:
        raw["task_group"] = raw["benchmark"].map(groups)
    return build_corpus(raw, file="tiny.csv", format="canonical")


def test_frontier_hand_computed_quarters():
    f = frontier_over_time(tiny(), groups={"A": "all", "B": "all"}, n_boot=0)
    assert f.quarters == ["2024Q1", "2024Q2", "2024Q3", "2024Q4"]
    assert f.quarter_end[0] == "2024-03-31"
    assert f.n_agents.tolist() == [1, 2, 2, 3]
    a, b = f.benchmarks.index("A"), f.benchmarks.index("B")
    # Q1: m1 only; Q2-Q3: m1, m2 (best per task); Q4: m3 lifts b1 to .75
    np.testing.assert_allclose(f.benchmark_frontier[a], [0.25, 0.75, 0.75, 0.75])
    np.testing.assert_allclose(f.benchmark_frontier[b], [0.25, 0.25, 0.25, 0.75])
    np.testing.assert_allclose(f.group_frontier[0], [0.25, 0.5, 0.5, 0.75])  # mean of the benchmark frontiers
    assert f.net_growth("all") == pytest.approx(0.5)
    assert frontier_over_time(tiny(), n_boot=0).groups == ["A", "B"]  # no grouping known: one per benchmark
    np.testing.assert_allclose(f.benchmark_coverage[a], [1, 1, 1, 1])


def test_frontier_groups_from_task_group_and_bootstrap_brackets_the_value():
    f = frontier_over_time(tiny(groups={"A": "programming", "B": "gui"}), n_boot=200)
    assert f.groups == ["gui", "programming"]
    np.testing.assert_allclose(f.group_frontier[1], [0.25, 0.75, 0.75, 0.75])
    assert np.all(f.group_lower[1] <= f.group_frontier[1] + 1e-12)
    assert np.all(f.group_upper[1] >= f.group_frontier[1] - 1e-12)
    # one task in B: the bootstrap interval collapses onto the value
    np.testing.assert_allclose(f.group_lower[0], f.group_frontier[0])
    json.dumps(f.to_dict())


def test_frontier_stops_naming_the_models_without_dates():
    with pytest.raises(MissingReleaseDates) as exc:
        frontier_over_time(tiny(dates={"m1": "2024-02-10", "m2": "2024-05-01"}))
    assert exc.value.models == ["m3"]
    assert "m3" in str(exc.value) and "--release-dates" in str(exc.value)
    raw = pd.DataFrame(ROWS, columns=["benchmark", "task", "model", "successes", "trials"]).assign(scaffold="s")
    with pytest.raises(MissingReleaseDates, match="no release_date column"):
        frontier_over_time(build_corpus(raw, file=None, format="canonical"))


def test_slice_selects_the_right_rows():
    c = tiny(groups={"A": "programming", "B": "gui"})
    s = apply_slice(c, "task_group=programming")
    assert set(s.table["task"].astype(str)) == {"a1", "a2"} and s.n_records == 5
    assert s.provenance["slice"] == "task_group=programming" and s.provenance["slice_tasks"] == [2, 3]
    assert list(s.table["benchmark"].cat.categories) == ["A"]  # unused levels dropped
    r = apply_slice(c, "human_minutes=60..300")
    assert set(r.table["task"].astype(str)) == {"a2", "b1"}
    assert set(apply_slice(c, "human_minutes=..10").table["task"].astype(str)) == {"a1"}
    assert set(apply_slice(c, ["benchmark=A", "human_minutes=50.."]).table["task"].astype(str)) == {"a2"}
    assert set(apply_slice(c, "task=a1|b1").table["task"].astype(str)) == {"a1", "b1"}
    assert r.content_hash != c.content_hash
    ch = slice_choices(c.table)
    assert ch["human_minutes"] == {"kind": "numeric", "min": 10.0, "max": 300.0, "n_tasks": 3}
    assert ch["task_group"]["values"] == {"programming": 2, "gui": 1}
    assert "release_date" not in ch  # a model's date varies within a task


@pytest.mark.parametrize("text, words", [
    ("task_group=enterprise", ["'task_group'", "programming (2)", "gui (1)"]),
    ("colour=red", ["no column 'colour'", "task_group", "human_minutes"]),
    ("human_minutes=1000..2000", ["matches no task", "from 10 to 300"]),
    ("task_group=1..2", ["not numeric", "programming"]),
    ("release_date=2024-02-10", ["varies within tasks"]),
    ("human_minutes", ["COLUMN=VALUE"]),
    ("human_minutes=a..b", ["must be numbers"]),
    # 'inf..inf' was written back as the open range '..' and kept every task (4); nan matched nothing
    ("human_minutes=inf..inf", ["a range end must be a finite number", "human_minutes=240.."]),
    ("human_minutes=nan..5", ["a range end must be a finite number"]),
])
def test_bad_slice_names_the_column_and_the_values(text, words):
    with pytest.raises(CorpusError) as exc:
        apply_slice(tiny(groups={"A": "programming", "B": "gui"}), text)
    msg = str(exc.value)
    for w in words:
        assert w in msg, msg


def test_a_slice_of_models_keeps_their_records_and_the_tasks_they_ran():
    c = apply_slice(tiny(), "model=m1|m3")
    t = c.table
    assert sorted(t["model"].astype(str).unique()) == ["m1", "m3"]
    assert len(t) == 5 and int(t["successes"].sum()) == 5  # m1: 1+0+1, m3: 0+3
    assert c.provenance["slice_tasks"] == [3, 3]
    # with a task condition: both must hold; m3 ran no task of benchmark A but a2
    both = apply_slice(tiny(), "model=m3;benchmark=A")
    assert list(both.table["task"].astype(str)) == ["a2"] and both.provenance["slice_tasks"] == [1, 3]


@pytest.mark.parametrize("text, words", [
    ("model=m9", ["no record has model = 'm9'", "m1 (3)", "m3 (2)"]),
    ("model=1..2", ["takes names, not a range"]),
    ("model=m2;benchmark=B", ["no record meets every condition"]),
])
def test_bad_model_slice_names_the_models(text, words):
    with pytest.raises(CorpusError) as exc:
        apply_slice(tiny(), text)
    for w in words:
        assert w in str(exc.value), str(exc.value)


def test_parse_slice_round_trip():
    conds = parse_slice(["group=a|b", "minutes=..30"])
    assert [c.text() for c in conds] == ["task_group=a|b", "human_minutes=..30"]  # synonyms read as the schema's


def test_slice_is_in_the_fit_key():
    from ddr_explorer.core.fitting import fit_key
    from ddr_explorer.core.model.formula import preset
    from ddr_explorer.core.model.posterior import SamplerSettings

    c = tiny(groups={"A": "programming", "B": "gui"})
    s = apply_slice(c, "human_minutes=0..1000")  # every task: same rows, same content
    assert s.content_hash == c.content_hash
    spec, st = preset("per-benchmark"), SamplerSettings()
    assert fit_key(s, spec, st) != fit_key(c, spec, st)


def test_cli_fit_and_dstudy_on_a_slice(fake_sampler, tmp_path, capsys):
    """``ddr fit`` / ``ddr dstudy --slice``: the slice is named, keyed apart from the whole corpus, and reused."""
    from ddr_explorer.core.cli import main

    rows = [(f"B{b}", f"t{b}{k}", f"m{m}", "s", (k + m) % 3, 2, f"g{k % 2}") for b in range(2) for k in range(6)
            for m in range(4)]
    path = tmp_path / "c.csv"
    pd.DataFrame(rows, columns=["benchmark", "task", "model", "scaffold", "successes", "trials", "task_group"]
                 ).to_csv(path, index=False)
    fast = ["--stop", "fixed", "--draws", "40", "--warmup", "10", "--chains", "2", "--cache", str(tmp_path / "cache")]

    def fit(*extra):
        code = main(["fit", str(path), "--preset", "pooled", "--json", "--quiet", "--allow-unconverged", *fast,
                     *extra])
        out = capsys.readouterr()
        assert code == 0, out.err
        return json.loads(out.out)

    whole, part = fit(), fit("--slice", "task_group=g0")
    assert "slice" not in whole and part["slice"] == {"slice": "task_group=g0", "tasks": [6, 12]}
    assert part["cache"]["key"] != whole["cache"]["key"] and part["n_cells"] == whole["n_cells"] // 2
    assert fit("--slice", "group=g0")["cache"]["hit"]  # the synonym reads as the same slice: the same fit
    code = main(["dstudy", str(path), "--preset", "pooled", "--slice", "task_group=g0", "--json", *fast])
    out = capsys.readouterr()
    assert code == 0 and json.loads(out.out)["slice"] == "task_group=g0"
    assert len(fake_sampler) == 2  # the whole corpus and the slice; everything else from the cache
    code = main(["fit", str(path), "--preset", "pooled", "--slice", "task_group=g9", *fast])
    assert code == 2 and "task_group" in capsys.readouterr().err


def test_a_saved_analysis_keeps_the_slice(tmp_path):
    """The app's saved analysis reopens the corpus on the same slice (AnalysisState.corpus_options)."""
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.session import AnalysisState

    path = tmp_path / "tiny.csv"
    tiny(groups={"A": "programming", "B": "gui"}).table.to_csv(path, index=False)
    corpus = load_corpus(path, slice="task_group=gui")
    state = AnalysisState.from_corpus(corpus)
    assert state.corpus_options["slice"] == "task_group=gui"
    again = load_corpus(path, **state.corpus_options)
    assert again.content_hash == corpus.content_hash and again.provenance["slice"] == "task_group=gui"


def test_the_sheet_runner_drops_undated_models_when_asked_and_stops_otherwise():
    """``ddr report --analyses frontier --undated drop`` takes the same path as ``ddr analyses --undated drop``."""
    from ddr_explorer.core.ddr_sheet import AnalysisContext, analysis_runner

    ctx = AnalysisContext(corpus=tiny(dates={"m1": "2024-02-10", "m2": "2024-05-01"}), posterior=None, spec=None,
                          settings=None, cache_dir=None, progress=None, cancel=None)
    with pytest.raises(MissingReleaseDates):
        analysis_runner("frontier")(ctx)
    f = analysis_runner("frontier", undated="drop")(ctx)
    # m3 left out: b1 stays at m1's 0.25 in every quarter (with m3 it reached 0.75 in Q4)
    assert f.quarters == ["2024Q1", "2024Q2"]
    np.testing.assert_allclose(f.benchmark_frontier[f.benchmarks.index("B")], [0.25, 0.25])
    np.testing.assert_allclose(f.benchmark_frontier[f.benchmarks.index("A")], [0.25, 0.75])
