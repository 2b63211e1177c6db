"""Tracebacks users met, each now a clean refusal (exit 2) naming what to fix."""

from __future__ import annotations

import json

import pytest

from ddr_explorer.core.cli import main as ddr


def test_arabic_indic_and_full_width_digits_are_not_counts(tmp_path, capsys):
    p = tmp_path / "c.csv"
    p.write_text("benchmark,task,model,scaffold,successes,trials\nb,t1,m1,s,\u0661,\u0662\nb,t2,m1,s,0,\uff11\n",
                 encoding="utf-8")
    assert ddr(["inspect", str(p)]) == 2  # was ArrowInvalid: the regex's \d matched them, pyarrow's cast did not
    err = capsys.readouterr().err
    assert "line 2, column 'successes': '\u0661' is not a whole number" in err
    assert "line 2, column 'trials': '\u0662' is not a whole number. (2 rows in all)" in err


def test_pyirt_trials_beyond_int64_are_refused(tmp_path, capsys):
    p = tmp_path / "r.jsonl"
    p.write_text('{"subject_id": "s/m", "responses": {"t1": {"successes": 1, "trials": 9223372036854775808}}}\n')
    assert ddr(["inspect", str(p)]) == 2  # was OverflowError
    assert "trials = 9223372036854775808 is more than 1,000,000,000 trials in one cell" in capsys.readouterr().err


def test_an_alias_pattern_with_an_empty_model_group_names_no_model(tmp_path, capsys):
    aliases = tmp_path / "a.toml"
    aliases.write_text('[[subject_patterns]]\nregex = "^(?P<model>)x$"\n')
    p = tmp_path / "r.jsonl"
    p.write_text('{"subject_id": "x", "responses": {"t1": 1, "t2": 0}}\n'
                 '{"subject_id": "y", "responses": {"t1": 1, "t2": 0}}\n')
    assert ddr(["inspect", str(p), "--aliases", str(aliases), "--json"]) == 0  # was TypeError
    out = json.loads(capsys.readouterr().out)
    assert out["n_models"] == 2 and out["n_records"] == 4  # x and y, each by the whole-id fallback


@pytest.mark.parametrize("flag", ["--n-tasks", "--n-scaffolds", "--n-benchmarks"])
@pytest.mark.parametrize("value", ["inf", "1e308"])
def test_design_sizes_must_be_finite_and_bounded(tmp_path, capsys, flag, value):
    c = tmp_path / "c.json"
    c.write_text('{"scale": "sd", "components": {"model": 0.8, "task": 1.0}}')
    assert ddr(["dstudy", "--components", str(c), flag, value]) == 2  # was a TypeError in the formatter
    name = {"--n-tasks": "n_tasks", "--n-scaffolds": "n_scaffolds", "--n-benchmarks": "n_benchmarks"}[flag]
    assert f"design: {name} should be a number >= 1, got {float(value):g}" in capsys.readouterr().err
