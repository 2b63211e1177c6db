"""py-irt export (ddr convert --to py-irt): the model/scaffold split survives the round trip."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from ddr_explorer.core import cli
from ddr_explorer.core.corpus.export_pyirt import write_pyirt
from ddr_explorer.core.corpus.importers import pyirt
from ddr_explorer.core.corpus.io import load_corpus

KEY = ["benchmark", "task", "model", "scaffold"]


def cells(table: pd.DataFrame) -> pd.DataFrame:
    t = table.astype({c: str for c in KEY})
    return t.groupby(KEY)[["successes", "trials"]].sum().sort_index()


CANONICAL = """benchmark,task,model,scaffold,trial,result
swe-bench,a__b-1,gpt-5,SWE-agent,1,1
swe-bench,a__b-1,gpt-5,SWE-agent,2,0
swe-bench,a__b-1,Qwen/Qwen3-8B,unknown,1,1
swe-bench,a__b-2,gpt-5,mini-SWE-agent,1,0
swe-bench-verified,a__b-1,gpt-5,SWE-agent,1,1
swe-bench-verified,x/y,Qwen/Qwen3-8B,unknown,1,0
"""


def test_round_trip_made_here(tmp_path, capsys):
    src = tmp_path / "c.csv"
    src.write_text(CANONICAL, encoding="utf-8")
    out = tmp_path / "c_pyirt.jsonl"
    assert cli.main(["convert", str(src), "--to", "py-irt", "-o", str(out)]) == 0
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    by = {d["subject_id"]: d["responses"] for d in lines}
    # subject "<scaffold>/<model>"; items "<benchmark>/<task>"; 2 trials -> {"successes", "trials"}
    assert set(by) == {"SWE-agent/gpt-5", "mini-SWE-agent/gpt-5", "unknown/Qwen/Qwen3-8B"}
    assert by["SWE-agent/gpt-5"] == {"swe-bench-verified/a__b-1": 1, "swe-bench/a__b-1": {"successes": 1, "trials": 2}}
    assert (tmp_path / "c_pyirt.aliases.toml").exists()
    back = pyirt.read(out)
    assert back.provenance["aliases_chosen"] == "sidecar"
    pd.testing.assert_frame_equal(cells(back.table), cells(load_corpus(src).table))
    assert not [w for w in back.warnings if w.code in ("subject-fallback", "item-unmatched")]


def test_single_benchmark_items_are_tasks(tmp_path):
    src = tmp_path / "one.csv"
    src.write_text("benchmark,task,model,scaffold,result\nb,t1,m,s,1\nb,t2,m,s,0\n", encoding="utf-8")
    data, alias = write_pyirt(load_corpus(src), tmp_path / "one.jsonl")
    assert json.loads(data.read_text().splitlines()[0]) == {"subject_id": "s/m", "responses": {"t1": 1, "t2": 0}}
    assert 'benchmark = "b"' in alias.read_text()
    assert set(load_corpus(data).table["benchmark"].astype(str)) == {"b"}


@pytest.mark.parametrize("name", ["bridge/all_a_pyirt.jsonl", "terminal-bench-2/responses_raw.jsonl"])
def test_round_trip_real_corpora(corpora_dir, tmp_path, name):
    original = load_corpus(corpora_dir / name)
    data, _ = write_pyirt(original, tmp_path / "export.jsonl")
    back = load_corpus(data)
    pd.testing.assert_frame_equal(cells(back.table), cells(original.table))
    for facet in ("model", "scaffold", "agent", "benchmark", "task"):
        assert back.n_levels(facet) == original.n_levels(facet), facet


def test_names_with_slashes_do_not_collide_and_read_back_identically(tmp_path, capsys):
    """Benchmark 'x/y' + task 't1' and benchmark 'x' + task 'y/t1' were both item 'x/y/t1' (and scaffold 'a/b' +
    model 'c' against scaffold 'a' + model 'b/c' both subject 'a/b/c'): one cell's counts replaced the other's,
    "wrote 8 records" and 6 read back."""
    src = tmp_path / "slashes.csv"
    src.write_text("benchmark,task,model,scaffold,successes,trials\n"
                   "x/y,t1,c,a/b,1,2\nx,y/t1,c,a/b,2,2\nx/y,t1,b/c,a,0,2\nx,y/t1,b/c,a,1,3\n"
                   "x,t2,c,a/b,1,1\nx/y,t2,b/c,a,0,1\n", encoding="utf-8")
    out = tmp_path / "slashes.jsonl"
    assert cli.main(["convert", str(src), "--to", "py-irt", "-o", str(out)]) == 0
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert {d["subject_id"] for d in lines} == {"a::b/c", "a/b::c"}  # '/' is in a scaffold: '::' joins
    by = {d["subject_id"]: d["responses"] for d in lines}
    assert by["a/b::c"] == {"x/y::t1": {"successes": 1, "trials": 2}, "x::y/t1": {"successes": 2, "trials": 2},
                            "x::t2": 1}
    original, back = load_corpus(src), load_corpus(out)
    assert back.n_records == original.n_records == 6
    pd.testing.assert_frame_equal(cells(back.table), cells(original.table))


def test_the_separator_is_the_first_no_name_contains():
    from ddr_explorer.core.corpus.export_pyirt import separator

    assert separator(["swe-bench", "tb2"]) == "/"
    assert separator(["x/y", "a::b"]) == " | "
    with pytest.raises(ValueError, match="the names contain every separator"):
        separator(["/ :: | ~ \t", "x"])
