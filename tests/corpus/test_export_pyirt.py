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
