"""The analysis state: validation, change events, atomic JSON round trip, defaults from a corpus (no Qt)."""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pandas as pd
import pytest

from ddr_explorer.core.dstudy import DStudyDesign, observed_sizes, prices_from_cost_column
from ddr_explorer.core.session import FILE_FORMAT, FILE_VERSION, AnalysisState, Session, SessionError


def _table(with_cost: bool = True) -> pd.DataFrame:
    """Two benchmarks (3 and 5 tasks), 3 models, scaffolds per model 1, 2, 2; 2 trials per cell."""
    rows = []
    agents = [("m1", "a1"), ("m2", "a1"), ("m2", "a2"), ("m3", "a2"), ("m3", "a3")]
    for b, n_tasks, price in (("bench-A", 3, 0.10), ("bench-B", 5, 0.30)):
        for t in range(n_tasks):
            for m, a in agents:
                rows.append({"benchmark": b, "task": f"t{t}", "model": m, "scaffold": a, "successes": 1, "trials": 2,
                             "cost": price * 2 if with_cost else np.nan})
    df = pd.DataFrame(rows)
    for c in ("benchmark", "task", "model", "scaffold"):
        df[c] = df[c].astype("category")
    return df


def test_defaults_are_valid_and_session_is_an_alias():
    s = AnalysisState()
    assert Session is AnalysisState
    assert s.effective_target == 0.85
    assert s.design() == DStudyDesign(n_tasks=50, price_per_trial=0.0)
    assert s.observed_design() is None


@pytest.mark.parametrize("field, value, match", [
    ("n_tasks", 0, "'n_tasks' should be a number >= 1"),
    ("n_scaffolds", float("nan"), "'n_scaffolds' should be a number >= 1"),
    ("n_models", 2.5, "'n_models' should be a whole number"),
    ("claim", "ranking", "'claim' should be 'relative'"),
    ("object_of_measurement", "task", "'object_of_measurement' should be one of model, system, agent"),
    ("target", 1.2, r"interval \(0, 1\)"),
    ("budget", -5, "positive number of USD"),
    ("prices", {"b": -1}, "benchmark 'b' the price -1"),
    ("extra_facets", {"task": 3}, "names .task., which is a design size of its own"),
    ("extra_facets", {"step": 0}, "gives step = 0.0; levels are numbers >= 1"),
    ("model", "y ~ (1|", "'model' is not a valid model"),
    ("sampler", {"draws": 0}, "'sampler' is invalid"),
    ("sampler", {"n_draws": 10}, "unknown setting"),
    ("observed", {"n_tasks": 0.5}, "sizes are numbers >= 1"),
])
def test_invalid_values_name_the_field(field, value, match):
    with pytest.raises(SessionError, match=match):
        AnalysisState(**{field: value})
    s = AnalysisState()
    with pytest.raises(SessionError, match=match):
        s.update(**{field: value})


def test_update_emits_changed_names_once_and_validates_atomically():
    s = AnalysisState()
    seen = []
    s.events.connect(seen.append)
    assert s.update(n_tasks=200, target=0.9) == frozenset({"n_tasks", "target"})
    assert seen == [frozenset({"n_tasks", "target"})]
    assert s.update(n_tasks=200) == frozenset()  # no change, no event
    assert len(seen) == 1
    with pytest.raises(SessionError):
        s.update(n_tasks=300, claim="nonsense")
    assert s.n_tasks == 200.0  # nothing applied
    with pytest.raises(SessionError, match="unknown field"):
        s.update(n_task=3)
    s.events.disconnect(seen.append)
    s.update(n_tasks=5)
    assert len(seen) == 1


def test_claim_sets_the_default_target():
    s = AnalysisState(claim="absolute")
    assert s.effective_target == 0.90 and s.design().estimand == "Phi"
    s.update(target=0.8)
    assert s.effective_target == 0.8


def test_round_trip(tmp_path):
    s = AnalysisState(corpus_path="data/x.csv", corpus_format="canonical-csv", model="pooled",
                      sampler={"draws": 800, "seed": 3}, object_of_measurement="system", claim="absolute",
                      n_tasks=44.5, n_scaffolds=3, n_benchmarks=4, n_replicates=2, n_models=12,
                      prices={"bench-A": 0.1, "bench \u00e9 long name": 0.25}, target=0.8, budget=1500.0,
                      observed={"n_tasks": 40, "n_scaffolds": 2, "n_benchmarks": 4, "n_replicates": 1})
    path = s.save(tmp_path / "a.ddr.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == FILE_FORMAT and data["version"] == FILE_VERSION
    back = AnalysisState.load(path)
    assert back.to_dict() == s.to_dict()
    assert back.design() == s.design()
    assert back.observed_design() == s.observed_design()
    assert back.sampler_settings().draws == 800


def test_save_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "a.json"
    AnalysisState(n_tasks=10).save(path)
    before = path.read_text()

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        AnalysisState(n_tasks=99).save(path)
    assert path.read_text() == before  # the old file is intact
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]  # no temporary file left behind


@pytest.mark.parametrize("text, match", [
    ("{not json", r"a.json, line 1, column 2: invalid JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"format": "something-else"}', "not a saved DDR Explorer analysis"),
    ('{"version": 99}', "newer DDR Explorer"),
    ('{"n_tasks": "fifty"}', r"a.json: field 'n_tasks' should be a number >= 1, got 'fifty'"),
    ('{"tasks": 5}', "unknown field"),
])
def test_load_errors_name_the_file_and_field(tmp_path, text, match):
    path = tmp_path / "a.json"
    path.write_text(text)
    with pytest.raises(SessionError, match=match):
        AnalysisState.load(path)


def test_load_missing_file(tmp_path):
    with pytest.raises(SessionError, match="does not exist"):
        AnalysisState.load(tmp_path / "nope.json")


def test_missing_fields_take_defaults(tmp_path):
    path = tmp_path / "a.json"
    path.write_text('{"n_tasks": 12}')
    s = AnalysisState.load(path)
    assert s.n_tasks == 12.0 and s.claim == "relative" and s.prices == {}


def test_observed_sizes_and_defaults_from_a_corpus():
    table = _table()
    sizes = observed_sizes(table)
    assert sizes == {"n_tasks": 4.0, "n_scaffolds": 2.0, "n_benchmarks": 2.0, "n_replicates": 2.0}
    s = AnalysisState.from_corpus(table, path="c.csv", fmt="canonical-csv")
    assert s.sizes == sizes and s.observed == sizes
    assert s.model == "pooled" and s.n_models == 3
    assert s.prices == pytest.approx(prices_from_cost_column(table))
    assert s.prices == pytest.approx({"bench-A": 0.10, "bench-B": 0.30})
    assert s.corpus_path == "c.csv" and s.corpus_format == "canonical-csv"
    d = s.design()
    assert d.mean_price() == pytest.approx(0.2)
    assert d.trial_count() == 3 * 2 * (4 * 2) * 2


def test_corpus_without_cost_has_no_prices_and_fields_override():
    s = AnalysisState.from_corpus(_table(with_cost=False), claim="absolute")
    assert s.prices == {} and s.claim == "absolute"
    one = _table()
    one = one[one["benchmark"] == "bench-A"]
    assert AnalysisState.from_corpus(one).model == "per-benchmark"


def test_demo_corpus_defaults():
    from ddr_explorer.core.corpus.io import load_corpus
    from importlib.resources import files

    corpus = load_corpus(str(files("ddr_explorer.resources") / "demo" / "terminal-bench-2.csv"))
    s = AnalysisState.from_corpus(corpus)
    assert s.sizes == {"n_tasks": 89.0, "n_scaffolds": 3.0, "n_benchmarks": 1.0, "n_replicates": 5.0}
    assert s.n_models == 29 and s.corpus_path.endswith("terminal-bench-2.csv")


def test_core_session_imports_no_qt():
    import subprocess

    code = ("import sys, ddr_explorer.core.session as s; s.AnalysisState(); "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6')]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_version_1_file_keeps_its_fixed_run_length(tmp_path):
    """Version 1 was written when every run had a fixed length: its ``draws`` meant exactly that many, so it
    reopens as stop="fixed" (same fit, same cache key); a file of this version says which rule it chose."""
    old = {"format": FILE_FORMAT, "version": 1, "sampler": {"draws": 800, "seed": 3}}
    s = AnalysisState.from_dict(old)
    assert s.sampler == {"draws": 800, "seed": 3, "stop": "fixed"}
    assert s.sampler_settings().stop == "fixed" and s.sampler_settings().draws == 800
    # no length chosen: the current default rule (the gate)
    assert AnalysisState.from_dict({"format": FILE_FORMAT, "version": 1, "sampler": {"seed": 3}}).sampler_settings().stop == "gate"
    # the current version keeps what it says
    now = AnalysisState.from_dict({"format": FILE_FORMAT, "version": FILE_VERSION, "sampler": {"draws": 300}})
    assert now.sampler_settings().stop == "gate" and now.sampler_settings().draws == 300


def _components(terms, value=0.5):
    from ddr_explorer.core.reliability import VarianceComponents

    return VarianceComponents({t: np.full(3, value) for t in terms}, np.full(3, np.pi ** 2 / 3))


def test_follow_fit_takes_the_object_and_design_of_the_fit():
    """Seed 003 Eq. 1 (ddr preset) measures agents over steps and error categories; the other presets models."""
    rows = [{"benchmark": b, "task": f"{b}{t}", "model": m, "scaffold": a, "step": s, "error_category": e,
             "successes": 1, "trials": 2}
            for b in ("A", "B") for t in range(3) for m, a in (("m1", "s1"), ("m1", "s2"), ("m2", "s1"))
            for s in (1, 2) for e in ("x", "y", "z")]
    table = pd.DataFrame(rows)
    s = AnalysisState.from_corpus(table)
    # the plain design: 3 tasks per benchmark, 2 benchmarks, every step and category a replicate (2 x 2 x 3)
    assert s.object_of_measurement == "model" and s.observed == {"n_tasks": 3.0, "n_scaffolds": 1.5,
                                                                "n_benchmarks": 2.0, "n_replicates": 12.0}
    ddr = ("agent", "task", "step", "error_category", "task:agent", "agent:step", "agent:error_category")
    assert s.follow_fit(_components(ddr), table) >= {"object_of_measurement", "observed", "extra_facets"}
    # all 6 tasks are one facet, no benchmark facet; a replicate is one trace's check (2 trials)
    assert s.object_of_measurement == "agent" and s.extra_facets == {"step": 2.0, "error_category": 3.0}
    # it compares the 3 agents (model-scaffold pairs), each run once (scaffold size 1): 3 x 6 tasks x 2 traces
    assert s.observed == s.sizes == {"n_tasks": 6.0, "n_scaffolds": 1.0, "n_benchmarks": 1.0, "n_replicates": 2.0}
    assert s.n_models == 3
    d = s.design()
    assert d.object_of_measurement == "agent" and d.sizes() == {"task": 6.0, "scaffold": 1.0, "benchmark": 1.0,
                                                               "replicate": 2.0, "step": 2.0, "error_category": 3.0}
    assert d.trial_count() == 3 * 6 * 2
    assert AnalysisState.from_design(d).object_of_measurement == "agent"
    assert AnalysisState.from_dict(s.to_dict()).design() == d  # saved and read back
    assert s.follow_fit(_components(ddr), table) == frozenset()  # the same fit again changes nothing
    # a fit with a model term: models again (agent is not its object), on the plain design
    plain = ("benchmark", "task", "model", "scaffold", "task:model", "model:scaffold")
    s.follow_fit(_components(plain), table)
    assert s.object_of_measurement == "model" and s.extra_facets == {} and s.observed["n_replicates"] == 12.0
    assert s.n_models == 2  # models compared again
    s.update(object_of_measurement="system")
    s.follow_fit(_components(plain))  # a system is a model fit's object: kept
    assert s.object_of_measurement == "system"
    s.follow_fit(_components(("task", "model", "task:model")))  # no scaffold facet: no systems
    assert s.object_of_measurement == "model"


def test_version_1_files_read_without_extra_facets():
    """Files written before the agent object (version 1) have no ``extra_facets``: they read as a plain design."""
    s = AnalysisState.from_dict({"format": FILE_FORMAT, "version": 1, "n_tasks": 30, "object_of_measurement": "system"})
    assert FILE_VERSION == 2 and s.extra_facets == {} and s.design().extra_facets == {}
    assert s.to_dict()["version"] == 2 and s.object_of_measurement == "system"


def test_a_key_given_twice_in_a_saved_analysis_is_refused_with_its_line(tmp_path):
    """JSON keeps the last value without a word: a hand-edited file with two "target" keys used the second."""
    from ddr_explorer.core.session import AnalysisState, SessionError

    p = tmp_path / "a.ddr.json"
    p.write_text('{\n "target": 0.8,\n "target": 0.9\n}\n')
    with pytest.raises(SessionError, match=r"a.ddr.json, line 3: the key 'target' is given twice in one object"):
        AnalysisState.load(p)


def test_tasks_per_benchmark_are_a_count_the_corpus_has():
    """Two benchmarks of 1 and 2 tasks ran 1 task per benchmark (a count one of them has), never 1.5."""
    rows = [(b, t, m, "s", 1, 2) for b, tasks in (("bench-A", ["a1"]), ("bench-B", ["b1", "b2"]))
            for t in tasks for m in ("m1", "m2", "m3")]
    table = pd.DataFrame(rows, columns=["benchmark", "task", "model", "scaffold", "successes", "trials"])
    sizes = observed_sizes(table)
    assert sizes["n_tasks"] == 1.0 and sizes["n_benchmarks"] == 2.0
    assert AnalysisState.from_corpus(table).n_tasks == 1.0
