"""Task metadata from several files: ``--task-metadata`` is repeatable, files merge by task id.

BRIDGE keeps human minutes in two places: ``human_minutes_by_task.jsonl`` (METR and SWE-bench tasks) and the
Cybench run rows ``cybench_normalized_results.jsonl`` (METR-style, one line per run, ``human_minutes`` on each).
A run-rows file reads as task metadata (the fields that describe the task, once per task), and a slice by human
minutes then covers every benchmark of the pooled corpus.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.corpus.issues import CorpusError
from ddr_explorer.core.corpus.metadata import join_task_metadata, merge_task_metadata, read_task_metadata
from ddr_explorer.core.corpus.validate import build_corpus

# (benchmark, task, model, successes, trials): the frontier test's corpus (tests/test_frontier_slices.py)
ROWS = [("A", "a1", "m1", 1, 2), ("A", "a2", "m1", 0, 2), ("B", "b1", "m1", 1, 4),
        ("A", "a1", "m2", 2, 2), ("A", "a2", "m2", 1, 2),
        ("A", "a2", "m3", 0, 2), ("B", "b1", "m3", 3, 4)]
DATES = {"m1": "2024-02-10", "m2": "2024-05-01", "m3": "2024-11-15"}


def _metr_run(task, model, minutes, label="easy", score=1):
    return {"task_id": task, "task_id_base": task, "run_id": f"{model}_run", "alias": model, "model": model,
            "score_cont": float(score), "score_binarized": score, "fatal_error_from": None, "human_minutes": minutes,
            "human_score": 1.0, "human_source": "fst", "task_source": "B", "difficulty_label": label,
            "eval_mode": "unguided", "generation_cost": 0.0}


@pytest.fixture
def files(tmp_path):
    corpus = tmp_path / "c.csv"
    pd.DataFrame(ROWS, columns=["benchmark", "task", "model", "successes", "trials"]).assign(scaffold="s").to_csv(
        corpus, index=False)
    dates = tmp_path / "dates.csv"
    dates.write_text("model,release_date\n" + "".join(f"{m},{d}\n" for m, d in DATES.items()))
    # benchmark A's minutes (a table keyed by task_id, as BRIDGE's human_minutes_by_task.jsonl)
    minutes = tmp_path / "minutes.jsonl"
    minutes.write_text("".join(json.dumps(r) + "\n" for r in ({"task_id": "a1", "human_minutes": 10.0},
                                                              {"task_id": "a2", "human_minutes": 90.0})))
    # benchmark B's minutes in METR run rows (as cybench_normalized_results.jsonl): two runs of b1
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in (_metr_run("b1", "m1", 45.0, "medium", 0),
                                                           _metr_run("b1", "m3", 45.0, "medium", 1))))
    return {"corpus": corpus, "dates": dates, "minutes": minutes, "runs": runs, "dir": tmp_path}


def _corpus():
    raw = pd.DataFrame(ROWS, columns=["benchmark", "task", "model", "successes", "trials"])
    raw["scaffold"] = "s"
    return build_corpus(raw, file="c.csv", format="canonical")


def test_metr_run_rows_read_as_task_metadata(files):
    t = read_task_metadata(files["runs"])
    # one row per task, the task fields only (not scores, costs, models or runs)
    assert t.to_dict("records") == [{"task": "b1", "human_minutes": 45.0, "difficulty_label": "medium"}]


def test_runs_that_disagree_on_a_task_field_name_the_lines(files):
    bad = files["dir"] / "bad-runs.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in (_metr_run("b1", "m1", 45.0), _metr_run("b1", "m3", 50.0))))
    with pytest.raises(CorpusError) as exc:
        read_task_metadata(bad)
    msg = str(exc.value)
    for w in ("bad-runs.jsonl", "'b1'", "human_minutes", "45.0", "50.0", "line 1", "line 2"):
        assert w in msg, msg


def test_several_files_merge_by_task_id(files):
    c = join_task_metadata(_corpus(), [files["minutes"], files["runs"]])
    by_task = c.table.groupby("task", observed=True)[["human_minutes", "difficulty_label"]].first()
    assert by_task["human_minutes"].to_dict() == {"a1": 10.0, "a2": 90.0, "b1": 45.0}
    assert by_task["difficulty_label"].isna().tolist() == [True, True, False]  # only the run rows label tasks
    prov = c.provenance["task_metadata"]
    assert prov["files"] == [str(files["minutes"]), str(files["runs"])]
    assert prov["tasks_matched"] == prov["tasks"] == 3 and prov["columns"] == ["human_minutes", "difficulty_label"]
    assert not [w for w in c.warnings if w.code == "metadata-partial"]
    # one file covers only A: the others are named as without metadata
    one = join_task_metadata(_corpus(), files["minutes"])
    assert one.provenance["task_metadata"]["tasks_matched"] == 2
    assert any(w.code == "metadata-partial" and "2 of 3 tasks" in w.message for w in one.warnings)


def test_files_that_agree_merge_and_files_that_disagree_are_named(files):
    same = files["dir"] / "same.csv"
    same.write_text("task,human_minutes,task_group\na2,90,build\nb1,45,web\n")  # 90 == 90.0: agrees
    merged, keys = merge_task_metadata([files["minutes"], files["runs"], same])
    assert keys == ["task"]
    assert merged.set_index("task")["human_minutes"].to_dict() == {"a1": 10.0, "a2": 90.0, "b1": 45.0}
    assert merged.set_index("task")["task_group"].fillna("none").to_dict() == {"a1": "none", "a2": "build", "b1": "web"}
    other = files["dir"] / "other.csv"
    other.write_text("task,human_minutes\na2,95\n")
    with pytest.raises(CorpusError) as exc:
        join_task_metadata(_corpus(), [files["minutes"], other])
    msg = str(exc.value)
    for w in ("minutes.jsonl", "other.csv", "disagree", "human_minutes", "'a2'", ": 90 against 95"):
        assert w in msg, msg
    # a file none of whose tasks is the corpus's is named
    stray = files["dir"] / "stray.csv"
    stray.write_text("task,human_minutes\nzz,3\n")
    with pytest.raises(CorpusError, match="stray.csv.*none of the 1 tasks"):
        join_task_metadata(_corpus(), [files["minutes"], stray])


def test_cli_repeats_task_metadata_and_the_slice_covers_both_files(files, capsys):
    """``ddr analyses --which frontier --slice human_minutes=..60`` with two metadata files: a1 (10 min) of
    benchmark A and b1 (45 min, from the run rows) of B; hand-computed frontier as in test_frontier_slices."""
    from ddr_explorer.core.cli import main

    argv = ["analyses", str(files["corpus"]), "--release-dates", str(files["dates"]), "--which", "frontier",
            "--slice", "human_minutes=..60", "--json"]
    code = main([*argv, "--task-metadata", str(files["minutes"]), "--task-metadata", str(files["runs"])])
    out = capsys.readouterr()
    assert code == 0, out.err
    f = json.loads(out.out)["frontier"]
    bench = {b["benchmark"]: b for b in f["benchmarks"]}
    assert set(bench) == {"A", "B"} and bench["A"]["n_tasks"] == 1 and bench["B"]["n_tasks"] == 1
    # a1: m1 .5, m2 1 (Q2); b1: m1 .25, m3 .75 (Q4)
    assert bench["A"]["frontier"] == [0.5, 1.0, 1.0, 1.0] and bench["B"]["frontier"] == [0.25, 0.25, 0.25, 0.75]
    # with the first file only, B has no minutes and the slice keeps no task of it
    code = main([*argv, "--task-metadata", str(files["minutes"])])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert {b["benchmark"] for b in json.loads(out.out)["frontier"]["benchmarks"]} == {"A"}


def test_a_saved_analysis_keeps_both_files(files):
    from ddr_explorer.core.session import AnalysisState

    corpus = load_corpus(files["corpus"], task_metadata=[files["minutes"], files["runs"]],
                         slice="human_minutes=..60")
    state = AnalysisState.from_corpus(corpus)
    assert state.corpus_options["task_metadata"] == [str(files["minutes"]), str(files["runs"])]
    again = AnalysisState.from_dict(json.loads(json.dumps(state.to_dict())))
    reopened = load_corpus(files["corpus"], **again.corpus_options)
    assert reopened.content_hash == corpus.content_hash
    assert set(reopened.table["task"].astype(str)) == {"a1", "b1"}


def test_bridge_cybench_minutes_join_the_pooled_corpus(corpora_dir):
    """The real BRIDGE files: Cybench's human minutes come from its run rows, the others' from the task file."""
    b = corpora_dir / "bridge"
    corpus = load_corpus(b / "all_a_pyirt.jsonl",
                         task_metadata=[b / "human_minutes_by_task.jsonl", b / "cybench_normalized_results.jsonl"])
    t = corpus.table
    timed = t[t["human_minutes"].notna()].groupby("benchmark", observed=True)["task"].nunique().to_dict()
    cyb = t[t["benchmark"].astype(str) == "cybench"]
    assert timed.get("cybench") == cyb["task"].nunique() > 0  # every Cybench task of the corpus has minutes
    assert timed.get("metr", 0) > 0 and timed.get("swebench", 0) > 0
    # the minutes are the run rows' own (one value per task there)
    runs = pd.read_json(b / "cybench_normalized_results.jsonl", lines=True)
    want = runs.groupby("task_id")["human_minutes"].first()
    got = cyb.groupby("task", observed=True)["human_minutes"].first()
    assert (got == want.reindex(got.index.astype(str)).to_numpy()).all()
    only_file = load_corpus(b / "all_a_pyirt.jsonl", task_metadata=b / "human_minutes_by_task.jsonl").table
    assert only_file.loc[only_file["benchmark"].astype(str) == "cybench", "human_minutes"].isna().all()
