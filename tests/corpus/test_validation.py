"""Bad input gets an error that names the file, the line, the column and a fix."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddr_explorer.core.corpus.issues import CorpusError
from ddr_explorer.core.corpus.readers import read_canonical, write_canonical

HEADER = "benchmark,task,model,scaffold,trial,result,cost\n"
GOOD_ROWS = [
    "tb,t1,gpt,codex,1,1,0.10",
    "tb,t1,gpt,codex,2,0,0.12",
    "tb,t2,gpt,codex,1,0,0.20",
    "tb,t1,claude,codex,1,1,0.30",
    "tb,t2,claude,codex,1,1,0.25",
    "tb,t2,claude,goose,1,0,0.05",
]


def write(tmp_path: Path, text: str | bytes, name: str = "corpus.csv") -> Path:
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


def only_error(exc: pytest.ExceptionInfo) -> object:
    issues = exc.value.issues
    assert len(issues) == 1, [str(i) for i in issues]
    return issues[0]


def test_good_file_loads_with_counts(tmp_path):
    c = read_canonical(write(tmp_path, HEADER + "\n".join(GOOD_ROWS) + "\n"))
    assert c.n_records == 6 and c.n_trials == 6 and c.n_successes == 3
    assert c.n_levels("model") == 2 and c.n_levels("scaffold") == 2 and c.n_levels("agent") == 3
    assert c.table["cost"].sum() == pytest.approx(1.02)
    assert list(c.table.columns[:7]) == ["benchmark", "task", "model", "scaffold", "trial", "successes", "trials"]


def test_synonyms_map_to_canonical_names(tmp_path):
    text = "Benchmark,task_id,model_name,harness,run_id,passed,cost_usd\n" + "\n".join(GOOD_ROWS) + "\n"
    c = read_canonical(write(tmp_path, text))
    assert c.n_records == 6
    assert {"benchmark", "task", "model", "scaffold", "trial", "cost"} <= set(c.table.columns)


def test_misnamed_column_suggests_the_rename(tmp_path):
    text = HEADER.replace("model", "modle") + "\n".join(GOOD_ROWS) + "\n"
    with pytest.raises(CorpusError) as exc:
        read_canonical(write(tmp_path, text))
    issue = only_error(exc)
    assert issue.code == "missing-column" and issue.column == "model"
    assert "rename 'modle' to 'model'" in issue.fix
    assert str(tmp_path / "corpus.csv") in str(exc.value)


def test_missing_result_column(tmp_path):
    text = "benchmark,task,model,scaffold\ntb,t1,m,a\n"
    with pytest.raises(CorpusError) as exc:
        read_canonical(write(tmp_path, text))
    assert only_error(exc).code == "missing-column"
    assert "successes" in only_error(exc).fix


def test_non_binary_result_names_line_and_column(tmp_path):
    rows = list(GOOD_ROWS)
    rows[3] = "tb,t1,claude,codex,1,0.5,0.30"
    rows[4] = "tb,t2,claude,codex,1,2,0.25"
    with pytest.raises(CorpusError) as exc:
        read_canonical(write(tmp_path, HEADER + "\n".join(rows) + "\n"))
    issue = only_error(exc)
    assert issue.code == "non-binary-result"
    assert (issue.row, issue.column, issue.count) == (5, "result", 2)  # header is line 1
    assert "threshold" in issue.fix


def test_successes_greater_than_trials(tmp_path):
    text = "benchmark,task,model,scaffold,successes,trials\ntb,t1,m,a,3,5\ntb,t2,m,a,6,5\n"
    with pytest.raises(CorpusError) as exc:
        read_canonical(write(tmp_path, text))
    issue = only_error(exc)
    assert (issue.code, issue.row, issue.column) == ("successes-exceed-trials", 3, "successes")
    assert "(6) > trials (5)" in issue.message


def test_negative_and_nan_cost(tmp_path):
    rows = list(GOOD_ROWS)
    rows[1] = "tb,t1,gpt,codex,2,0,-0.5"
    rows[2] = "tb,t2,gpt,codex,1,0,"
    with pytest.raises(CorpusError) as exc:
        read_canonical(write(tmp_path, HEADER + "\n".join(rows) + "\n"))
    by_code = {i.code: i for i in exc.value.issues}
    assert by_code["negative-cost"].row == 3 and by_code["negative-cost"].column == "cost"
    assert by_code["missing-cost"].row == 4


def test_duplicate_keys_name_both_lines(tmp_path):
    rows = [*GOOD_ROWS, "tb,t1,gpt,codex,2,1,0.10"]
    with pytest.raises(CorpusError) as exc:
        read_canonical(write(tmp_path, HEADER + "\n".join(rows) + "\n"))
    issue = only_error(exc)
    assert issue.code == "duplicate-key" and issue.row == 8
    assert "first seen on line 3" in issue.message


def test_many_levels_do_not_make_distinct_records_duplicates(tmp_path):
    """1,024 rows over seven key columns of 1,023 levels each: the key packed into one int64 overflowed
    (radix 1,024 per column: the benchmark's code was shifted by 2**60, so b0016 read as b0000) and the
    last row was refused as a duplicate of line 2, which differs from it."""
    rows = ["benchmark,task,model,scaffold,trial,step,error_category,result"]
    rows += [f"b{i:04d},t{i:04d},m{i:04d},s{i:04d},{i},{i},e{i:04d},1" for i in range(1023)]
    rows.append("b0016,t0000,m0000,s0000,0,0,e0000,0")  # line 2 but for its benchmark
    corpus = read_canonical(write(tmp_path, "\n".join(rows) + "\n"))
    assert corpus.n_records == 1024
    rows.append("b0016,t0000,m0000,s0000,0,0,e0000,1")  # a true duplicate is still found, on its own line
    with pytest.raises(CorpusError) as exc:
        read_canonical(write(tmp_path, "\n".join(rows) + "\n"))
    issue = only_error(exc)
    assert issue.code == "duplicate-key" and issue.row == 1026 and "first seen on line 1025" in issue.message


@pytest.mark.parametrize("column, value", [("result", "0.99999999999999999"), ("successes", "0.99999999999999999"),
                                           ("trials", "2.0000000000000001"), ("trials", "1e999999")])
def test_a_near_integer_is_not_rounded_to_one(tmp_path, column, value):
    """A float holds about 16 digits: '0.99999999999999999' was read as 1 (a pass)."""
    cells = {"result": "1", "successes": "1", "trials": "2"}
    cells[column] = value
    head = "benchmark,task,model,scaffold," + ("result" if column == "result" else "successes,trials")
    row = "tb,t1,m,s," + (cells["result"] if column == "result" else f"{cells['successes']},{cells['trials']}")
    other = "tb,t2,m,s," + ("0" if column == "result" else "0,2")
    with pytest.raises(CorpusError) as exc:
        read_canonical(write(tmp_path, f"{head}\n{row}\n{other}\n"))
    issue = only_error(exc)
    assert issue.row == 2 and issue.column == column and value in issue.message
    assert ("is not 0 or 1" if column == "result" else "is not a finite number" if "e" in value else
            "is not a whole number") in issue.message


def test_exact_decimals_of_whole_numbers_still_pass(tmp_path):
    text = "benchmark,task,model,scaffold,successes,trials\ntb,t1,m,s,1.000,2.0\ntb,t2,m,s,0,1e1\n"
    assert read_canonical(write(tmp_path, text)).table["trials"].tolist() == [2, 10]


def test_duplicates_without_trial_column_ask_for_one(tmp_path):
    text = "benchmark,task,model,scaffold,result\ntb,t1,m,a,1\ntb,t1,m,a,0\n"
    with pytest.raises(CorpusError) as exc:
        read_canonical(write(tmp_path, text))
    assert "trial" in only_error(exc).fix


@pytest.mark.parametrize("text", ["", "   \n\n", HEADER])
def test_empty_file(tmp_path, text):
    with pytest.raises(CorpusError) as exc:
        read_canonical(write(tmp_path, text))
    assert only_error(exc).code == "empty"


def test_wrong_encoding_names_line_and_column(tmp_path):
    text = (HEADER + "\n".join(GOOD_ROWS[:2]) + "\ntb,t2,caf\u00e9-model,codex,1,0,0.2\n").encode("latin-1")
    with pytest.raises(CorpusError) as exc:
        read_canonical(write(tmp_path, text))
    issue = only_error(exc)
    assert (issue.code, issue.row, issue.column) == ("encoding", 4, "model")
    assert "--encoding" in issue.fix
    # and naming the encoding reads it
    c = read_canonical(tmp_path / "corpus.csv", encoding="latin-1")
    assert "caf\u00e9-model" in set(c.table["model"])


def test_utf8_bom_and_utf16_are_read(tmp_path):
    text = HEADER + "\n".join(GOOD_ROWS) + "\n"
    assert read_canonical(write(tmp_path, b"\xef\xbb\xbf" + text.encode(), "bom.csv")).n_records == 6
    assert read_canonical(write(tmp_path, text.encode("utf-16"), "u16.csv")).n_records == 6


@pytest.mark.parametrize("bad,line,code,column", [
    ("tb,t3,gpt,codex,1,1,0.1,extra", 8, "ragged-row", None),
    ("tb,t3,gpt,codex,1", 8, "ragged-row", "result"),
])
def test_ragged_rows(tmp_path, bad, line, code, column):
    with pytest.raises(CorpusError) as exc:
        read_canonical(write(tmp_path, HEADER + "\n".join([*GOOD_ROWS, bad]) + "\n"))
    issue = only_error(exc)
    assert (issue.code, issue.row, issue.column) == (code, line, column)


def test_invalid_json_line(tmp_path):
    text = '{"benchmark":"b","task":"t","model":"m","scaffold":"a","result":1}\n{"benchmark": "b", oops}\n'
    with pytest.raises(CorpusError) as exc:
        read_canonical(write(tmp_path, text, "c.jsonl"))
    issue = only_error(exc)
    assert (issue.code, issue.row) == ("bad-json", 2)


def test_missing_facet_value(tmp_path):
    rows = list(GOOD_ROWS)
    rows[0] = "tb,,gpt,codex,1,1,0.10"
    with pytest.raises(CorpusError) as exc:
        read_canonical(write(tmp_path, HEADER + "\n".join(rows) + "\n"))
    issue = only_error(exc)
    assert (issue.code, issue.row, issue.column) == ("missing-value", 2, "task")


def test_warnings_are_listed_not_fatal(tmp_path):
    rows = [*GOOD_ROWS, "tb,t3,gpt,codex,1,0,0.1", "tb,t3,claude,codex,1,0,0.1", "tb,t1,llama,goose,1,1,0.1"]
    c = read_canonical(write(tmp_path, HEADER + "\n".join(rows) + "\n"))
    codes = {w.code: w for w in c.warnings}
    assert codes["task-all-fail"].count == 1 and "tb/t3" in codes["task-all-fail"].message
    assert codes["model-seen-once"].count == 1 and "llama" in codes["model-seen-once"].message


@pytest.mark.parametrize("ext", ["csv", "tsv", "jsonl", "parquet"])
def test_round_trip_every_canonical_format(tmp_path, ext):
    src = read_canonical(write(tmp_path, HEADER + "\n".join(GOOD_ROWS) + "\n"))
    out = write_canonical(src, tmp_path / f"out.{ext}")
    back = read_canonical(out)
    assert back.content_hash == src.content_hash
    pd.testing.assert_frame_equal(back.table.reset_index(drop=True), src.table.reset_index(drop=True),
                                  check_categorical=False, check_dtype=False)


def test_content_hash_ignores_row_order(tmp_path):
    a = read_canonical(write(tmp_path, HEADER + "\n".join(GOOD_ROWS) + "\n", "a.csv"))
    b = read_canonical(write(tmp_path, HEADER + "\n".join(GOOD_ROWS[::-1]) + "\n", "b.csv"))
    changed = list(GOOD_ROWS)
    changed[0] = changed[0].replace(",1,1,", ",1,0,")
    c = read_canonical(write(tmp_path, HEADER + "\n".join(changed) + "\n", "c.csv"))
    assert a.content_hash == b.content_hash != c.content_hash


def test_aggregation_into_binomial_cells(tmp_path):
    c = read_canonical(write(tmp_path, HEADER + "\n".join(GOOD_ROWS) + "\n"))
    cells = c.aggregated()
    row = cells[(cells.task == "t1") & (cells.model == "gpt")]
    assert (int(row.successes.iloc[0]), int(row.trials.iloc[0])) == (1, 2)
    assert len(cells) == 5 and cells.trials.sum() == 6
    np.testing.assert_array_equal(np.sort(cells.successes.to_numpy()), [0, 0, 1, 1, 1])


def test_a_placeholder_model_id_is_flagged_at_import():
    """Terminal-Bench 2.0 lists a model "Multiple" (an agent that switched models): it is not one model."""
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.files import demo_corpus_path
    from ddr_explorer.core.inspection import inspect_corpus

    warnings = {w["code"]: w for w in inspect_corpus(load_corpus(demo_corpus_path()))["warnings"]}
    w = warnings["model-placeholder"]
    assert "model 'Multiple' names no single model" in w["message"] and w["column"] == "model"
    assert "ranked as one model" in w["fix"]


def test_a_near_integer_in_canonical_json_lines_is_refused_as_written(tmp_path):
    """pyarrow's JSON reader keeps no text: the bytes are scanned for counts a float rounds to whole."""
    text = ('{"benchmark":"tb","task":"t1","model":"m","scaffold":"s","result":0}\n'
            '{"benchmark":"tb","task":"t2","model":"m","scaffold":"s","result":0.99999999999999999}\n')
    with pytest.raises(CorpusError) as exc:
        read_canonical(write(tmp_path, text, "c.jsonl"))
    issue = only_error(exc)
    assert (issue.row, issue.column) == (2, "result") and "'0.99999999999999999' is not a whole number" in issue.message
    ok = text.replace("0.99999999999999999", "1.0")  # a whole number written with a point still reads
    assert read_canonical(write(tmp_path, ok, "c.jsonl")).n_records == 2


@pytest.mark.parametrize("style, line", [
    ("bridge", '{"model": "m1", "benchmark": "b", "task_id": "t1", "score": 0.99999999999999999}'),
    ("metr", '{"task_id": "t1", "model": "m1", "run_id": "r1", "score_binarized": 0.99999999999999999, '
             '"task_source": "b"}'),
])
def test_a_near_integer_score_of_normalized_results_is_not_read_as_a_pass(tmp_path, style, line):
    """JSON's float rounds '0.99999999999999999' to 1.0; the normalized importer kept the float (a pass)."""
    from ddr_explorer.core.corpus.io import load_corpus

    other = line.replace('"m1"', '"m2"').replace("0.99999999999999999", "0").replace('"r1"', '"r2"')
    path = tmp_path / "n.jsonl"
    path.write_text(line + "\n" + other + "\n", encoding="utf-8")
    with pytest.raises(CorpusError) as exc:
        load_corpus(path)
    issue = only_error(exc)
    assert issue.row == 1 and "the result 0.99999999999999999 is not 0 or 1" in issue.message
    path.write_text(line.replace("0.99999999999999999", "1.0") + "\n" + other + "\n", encoding="utf-8")
    assert load_corpus(path).n_successes == 1  # an exact 1.0 is still a pass


def test_a_note_is_not_read_as_a_ragged_table(tmp_path):
    """A prose file: the error says it has no corpus columns and lists what its first line holds."""
    note = write(tmp_path, "Hello, this is just a note.\nIt is not a corpus at all\nbut a, few, lines, of prose.\n",
                 "note.txt")
    from ddr_explorer.core.corpus.io import load_corpus

    with pytest.raises(CorpusError) as exc:
        load_corpus(note)  # as the app and ddr open it: the content says comma-separated
    issue = only_error(exc)
    assert (issue.code, issue.row, issue.column) == ("no-corpus-columns", 1, None)
    assert issue.message.startswith("this file has no corpus columns (found: 'Hello', 'this is just a note.');")
    assert "fields where the header has" not in issue.message and "--columns" in issue.fix
    # lines without a delimiter: one column, of no corpus name
    with pytest.raises(CorpusError) as exc:
        read_canonical(write(tmp_path, "Just a note without commas\nanother line\n", "note.csv"))
    assert only_error(exc).message.startswith("this file has no corpus columns (found: 'Just a note without commas')")
    # a table whose header names corpus columns keeps its row-shape message
    with pytest.raises(CorpusError) as exc:
        read_canonical(write(tmp_path, HEADER + "tb,t1,gpt\n"))
    assert only_error(exc).code == "ragged-row"
