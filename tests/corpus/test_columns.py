"""Column mapping (--columns, --benchmark, --scaffold): any table, nested JSON, located errors, saved in the session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddr_explorer.core import cli
from ddr_explorer.core.corpus.columns import ColumnMapping, parse_columns
from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.corpus.issues import CorpusError
from ddr_explorer.core.session import AnalysisState, SessionError

MAPPING = "task=metadata.instance_id,model=metadata.model_name,result=metadata.resolved,trial=agent_run_id"

# the per-run export of the issue: flattened dotted names, no benchmark and no scaffold
RUNS_CSV = """agent_run_id,metadata.instance_id,metadata.model_name,metadata.resolved
r1,django__django-11099,gpt-4o,True
r2,django__django-11133,gpt-4o,False
r3,django__django-11099,claude-3-5-sonnet,True
r4,django__django-11133,claude-3-5-sonnet,True
r5,astropy__astropy-12907,claude-3-5-sonnet,False
"""


def runs_jsonl(path: Path) -> Path:
    rows = [{"agent_run_id": f"r{i}", "metadata": {"instance_id": t, "model_name": m, "resolved": r,
                                                    "usage": {"input_tokens": 100 * i}}}
            for i, (t, m, r) in enumerate([("t1", "gpt-4o", True), ("t2", "gpt-4o", False),
                                           ("t1", "o3", True)], start=1)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def runs_csv(tmp_path) -> Path:
    p = tmp_path / "runs.csv"
    p.write_text(RUNS_CSV, encoding="utf-8")
    return p


def test_parse_columns():
    m = parse_columns("task=metadata.instance_id, model = m ,scaffold==the leaderboard's harness", benchmark="swe")
    assert m.columns == {"task": "metadata.instance_id", "model": "m"}
    assert m.constants == {"scaffold": "the leaderboard's harness", "benchmark": "swe"}
    assert parse_columns(m.to_text()).to_dict() == m.to_dict()
    assert parse_columns({"task": "id", "scaffold": {"value": "h"}}).to_dict() == {
        "columns": {"task": "id"}, "constants": {"scaffold": "h"}}
    assert not parse_columns(None)


@pytest.mark.parametrize("text, kw, column, words", [
    ("task", {}, None, "has no '='"),
    ("tsk=id", {}, "tsk", "did you mean 'task'"),
    ("task_id=id", {}, "task_id", "did you mean 'task'"),
    ("task=a,task=b", {}, "task", "given twice"),
    ("benchmark=suite", {"benchmark": "x"}, "benchmark", "both set the benchmark"),
    ("model=", {}, "model", "names no column"),
])
def test_parse_columns_errors(text, kw, column, words):
    with pytest.raises(CorpusError) as exc:
        parse_columns(text, file="f.csv", **kw)
    issue = exc.value.issues[0]
    assert issue.code == "bad-column-mapping" and issue.column == column and issue.fix
    assert words in issue.message + issue.fix


def test_csv_refused_without_mapping_says_how(runs_csv):
    with pytest.raises(CorpusError) as exc:
        load_corpus(runs_csv)
    # task, model and result are synonyms under the dotted prefix; no scaffold is one scaffold: only the
    # benchmark is missing, and the fix is the --columns line the column guesser would use
    [issue] = exc.value.issues
    assert (issue.code, issue.column) == ("missing-column", "benchmark")
    assert ("(columns found: agent_run_id, metadata.instance_id, metadata.model_name, metadata.resolved)"
            in issue.message)
    assert ("the column guesser reads this file as: --columns trial=agent_run_id,task=metadata.instance_id,"
            "model=metadata.model_name,result=metadata.resolved --benchmark NAME") in issue.fix


def test_dotted_synonyms_and_one_scaffold(runs_csv):
    c = load_corpus(runs_csv, benchmark="swe-bench-verified")
    t = c.table.astype(str)
    assert (c.n_records, c.n_levels("task"), c.n_levels("model"), c.n_successes) == (5, 3, 2, 3)
    assert set(t["scaffold"]) == {"(scaffold not named)"}
    w = next(w for w in c.warnings if w.code == "scaffold-not-named")
    assert w.count == 5 and "--scaffold NAME" in w.fix and "no scaffold terms" in w.message


def test_missing_roles_list_the_files_own_header(tmp_path):
    """Columns the synonyms renamed are listed as the file writes them, not by their canonical names."""
    p = tmp_path / "runs.csv"
    p.write_text("Model_Name,Task_ID,passed,harness\ngpt-4o,t1,1,h\n", encoding="utf-8")
    with pytest.raises(CorpusError) as exc:
        load_corpus(p)
    [issue] = exc.value.issues
    assert "(columns found: Model_Name, Task_ID, passed, harness)" in issue.message
    assert "--columns model=Model_Name,task=Task_ID,result=passed,scaffold=harness --benchmark NAME" in issue.fix


def test_csv_with_mapping_and_constants(runs_csv):
    c = load_corpus(runs_csv, columns=MAPPING + ",scaffold==leaderboard harness", benchmark="swe-bench-verified")
    t = c.table.astype(str)
    assert c.n_records == 5 and c.n_successes == 3
    assert set(t["benchmark"]) == {"swe-bench-verified"} and set(t["scaffold"]) == {"leaderboard harness"}
    assert sorted(set(t["model"])) == ["claude-3-5-sonnet", "gpt-4o"]
    assert list(t.sort_values("trial")["trial"]) == ["r1", "r2", "r3", "r4", "r5"]
    r3 = c.table[c.table["trial"] == "r3"].iloc[0]
    assert (str(r3["task"]), int(r3["successes"])) == ("django__django-11099", 1)
    assert c.provenance["load_options"]["benchmark"] == "swe-bench-verified"


def test_nested_json_dotted_names(tmp_path):
    p = runs_jsonl(tmp_path / "runs.jsonl")
    c = load_corpus(p, columns=MAPPING + ",input_tokens=metadata.usage.input_tokens", benchmark="b",
                    scaffold="h")
    t = c.table.sort_values("trial")
    assert c.n_records == 3 and c.n_successes == 2
    assert list(t["input_tokens"]) == [100, 200, 300]
    assert sorted(map(str, set(t["model"]))) == ["gpt-4o", "o3"]


def test_unknown_column_names_it_and_lists_the_file(tmp_path):
    p = runs_jsonl(tmp_path / "runs.jsonl")
    with pytest.raises(CorpusError) as exc:
        load_corpus(p, columns="task=metadata.instance,model=metadata.model_name,result=metadata.resolved",
                    benchmark="b", scaffold="h")
    issue = exc.value.issues[0]
    assert issue.code == "unknown-column" and issue.column == "metadata.instance" and issue.file == str(p)
    assert "metadata.instance_id" in issue.message and "task=" in issue.fix


def test_mapping_displaces_a_synonym(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("benchmark,task_id,instance,model,scaffold,result\nb,x1,i1,m,s,1\nb,x2,i1,m,s,0\n", encoding="utf-8")
    # by its name task_id would be the task; the user says the task is 'instance' (and x1/x2 are attempts)
    c = load_corpus(p, columns="task=instance,trial=task_id")
    assert c.n_levels("task") == 1 and c.n_levels("trial") == 2
    w = [w for w in c.warnings if w.code == "column-remapped"]
    assert len(w) == 1 and w[0].column == "task_id"


def test_subject_role_splits_system_ids(tmp_path):
    p = tmp_path / "leaderboard.csv"
    p.write_text("system,instance_id,resolved\n20240620_sweagent_claude3.5sonnet,a__b-1,1\n"
                 "20240620_sweagent_claude3.5sonnet,a__b-2,0\n20240728_sweagent_gpt4o,a__b-1,1\n"
                 "20240820_honeycomb,a__b-1,0\n", encoding="utf-8")
    c = load_corpus(p, columns="subject=system", benchmark="swebench")
    t = c.table.astype(str).drop_duplicates("trial").set_index("trial")
    # honeycomb names no scaffold: "unknown" is not made a scaffold, the file has one scaffold (unsplit.py)
    assert t.loc["20240620_sweagent_claude3.5sonnet", "model"] == "claude3.5sonnet"
    assert t.loc["20240820_honeycomb", "model"] == "20240820_honeycomb"
    assert set(t["scaffold"]) == {"(scaffolds not separated)"}
    assert "1 of 3 subject ids name no scaffold" in next(w for w in c.warnings if w.code == "scaffold-unknown").message
    w = next(w for w in c.warnings if w.code == "subject-ids-mapped")
    assert "3 of 3 subject ids (100%)" in w.message


def test_every_corpus_command_takes_the_mapping():
    parser = cli.build_parser()
    extra = ["--columns", "task=id", "--scaffold", "h", "--benchmark", "b"]
    for argv in (["inspect", "f.csv"], ["convert", "f.csv", "-o", "o.csv"], ["henderson", "f.csv", "--formula", "x"],
                 ["fit", "f.csv"], ["report", "f.csv", "-o", "o.pdf"], ["analyses", "f.csv"], ["dstudy", "f.csv"]):
        args = parser.parse_args(argv + extra)
        assert (args.columns, args.scaffold, args.benchmark) == ("task=id", "h", "b"), argv[0]


def test_ddr_inspect_and_convert_with_mapping(runs_csv, tmp_path, capsys):
    argv = [str(runs_csv), "--columns", MAPPING, "--benchmark", "swe", "--scaffold", "harness"]
    assert cli.main(["inspect", *argv, "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert (s["n_records"], s["n_models"], s["n_scaffolds"], s["n_tasks"]) == (5, 2, 1, 3)
    out = tmp_path / "canonical.csv"
    assert cli.main(["convert", *argv, "-o", str(out)]) == 0
    assert load_corpus(out).n_successes == 3
    assert cli.main(["inspect", str(runs_csv), "--columns", "task=nope"]) == 2
    assert "no such column" in capsys.readouterr().err


def test_session_keeps_the_mapping(runs_csv, tmp_path):
    c = load_corpus(runs_csv, columns=MAPPING, benchmark="swe", scaffold="harness")
    state = AnalysisState.from_corpus(c)
    assert state.corpus_options == {"columns": MAPPING, "benchmark": "swe", "scaffold": "harness"}
    path = state.save(tmp_path / "a.ddr.json")
    back = AnalysisState.load(path)
    assert back.corpus_options == state.corpus_options
    assert load_corpus(back.corpus_path, back.corpus_format, **back.corpus_options).content_hash == c.content_hash
    with pytest.raises(SessionError, match="corpus_options"):
        AnalysisState(corpus_options={"colums": "x"})
    assert ColumnMapping({"task": "a"}).to_text() == "task=a"


def test_guess_roles_by_name_then_values(tmp_path):
    from ddr_explorer.core.corpus.column_guess import guess_roles, mapping_problems, preview, shape_key, to_mapping

    df = preview(runs_jsonl(tmp_path / "runs.jsonl"))
    assert list(df.columns) == ["agent_run_id", "metadata.instance_id", "metadata.model_name", "metadata.resolved",
                                "metadata.usage.input_tokens"]
    roles = guess_roles(df)
    assert roles == {"agent_run_id": "trial", "metadata.instance_id": "task", "metadata.model_name": "model",
                     "metadata.resolved": "result", "metadata.usage.input_tokens": "input_tokens"}
    problems = mapping_problems(roles, {}, df)
    # without a scaffold column the file loads with one scaffold and a note: not a problem
    assert len(problems) == 1 and problems[0].startswith("no column is the benchmark")
    assert mapping_problems(roles, {"benchmark": "b", "scaffold": "h"}, df) == []
    text = to_mapping(roles, {"benchmark": "b", "scaffold": "h"}).to_text()
    assert load_corpus(tmp_path / "runs.jsonl", columns=text).n_records == 3
    # by values: an unnamed 0/1 column is the result, a column of system ids is the subject
    p = tmp_path / "t.csv"
    p.write_text("who,what,ok\n20240620_sweagent_claude3.5sonnet,a,1\n20250726_mini-v1.0.0_o3,b,0\n", encoding="utf-8")
    assert guess_roles(preview(p)) == {"who": "subject", "what": "", "ok": "result"}
    bad = {"who": "subject", "what": "task", "ok": "task"}
    assert "'task' is given to 2 columns (what, ok): choose one." in mapping_problems(bad, {"benchmark": "b"})
    assert shape_key(["a", "b"]) == shape_key(["b", "a"]) != shape_key(["a", "c"])


def test_nested_per_run_jsonl_is_read_by_dotted_synonyms(tmp_path):
    """{"metadata": {"instance_id", "model_name", "resolved"}} rows: detected, flattened, matched; no scaffold."""
    c = load_corpus(runs_jsonl(tmp_path / "runs.jsonl"), benchmark="swe-bench-verified")
    assert c.format == "jsonl"
    assert (c.n_records, c.n_levels("task"), c.n_levels("model"), c.n_successes) == (3, 2, 2, 2)
    assert set(c.table["scaffold"].astype(str)) == {"(scaffold not named)"}
    assert list(c.table["input_tokens"]) == [100, 200, 300]  # usage.input_tokens
    with pytest.raises(CorpusError) as exc:
        load_corpus(tmp_path / "runs.jsonl")
    [issue] = exc.value.issues
    assert "(columns found: agent_run_id, metadata.instance_id, metadata.model_name, metadata.resolved, " \
           "metadata.usage.input_tokens)" in issue.message
