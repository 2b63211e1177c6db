"""The `ddr` command line: inspect, convert, henderson; exit codes and messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ddr_explorer.core.cli import main

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "resources" / "demo" / "terminal-bench-2.csv"
REQUIRED_KEYS = {"n_records", "n_trials", "n_benchmarks", "n_tasks", "n_models", "n_scaffolds", "n_agents",
                 "components", "articulation_vertices", "separable_components", "warnings", "errors"}


def run_json(capsys, *argv) -> dict:
    assert main(["inspect", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_inspect_demo_json(capsys):
    out = run_json(capsys, DEMO)
    assert REQUIRED_KEYS <= set(out)
    assert (out["n_models"], out["n_scaffolds"], out["n_agents"], out["n_tasks"], out["n_records"]) == (29, 18, 81, 89, 7387)
    assert out["n_trials"] == 36867 and out["n_benchmarks"] == 1
    assert len(out["components"]) == 1 and out["errors"] == []
    assert out["separable_components"] == ["task", "model", "scaffold", "task:model", "task:scaffold", "model:scaffold"]


@pytest.mark.parametrize("rel,counts", [
    ("terminal-bench-2/meta.json", dict(n_records=7387, n_trials=36867, n_models=29, n_scaffolds=18, n_agents=81, n_tasks=89)),
    ("terminal-bench-2/responses_raw.jsonl", dict(n_records=7304, n_trials=36452, n_models=29, n_scaffolds=18, n_agents=81, n_tasks=88)),
    ("bridge/all_a_pyirt.jsonl", dict(n_records=85453, n_trials=85453, n_benchmarks=5, n_tasks=943, n_models=128, n_scaffolds=1, n_agents=128)),
    ("bridge/gdpval_normalized_results.jsonl", dict(n_records=3520, n_models=16, n_tasks=220)),
    ("bridge/swebench_normalized_results.jsonl", dict(n_records=2994, n_models=6, n_tasks=500)),
    ("bridge/mlebench_normalized_results.jsonl", dict(n_records=494, n_models=13, n_tasks=38)),
    ("bridge/cybench_normalized_results.jsonl", dict(n_records=112, n_models=8, n_tasks=15)),
])
def test_inspect_every_real_corpus(capsys, corpora_dir, rel, counts):
    out = run_json(capsys, corpora_dir / rel)
    assert REQUIRED_KEYS <= set(out)
    assert {k: out[k] for k in counts} == counts


def test_mlebench_reports_scoring_rules(capsys, corpora_dir):
    out = run_json(capsys, corpora_dir / "bridge/mlebench_normalized_results.jsonl")
    assert out["verifiers"] == ["above_median", "any_medal", "valid_submission"]
    assert "scoring_rules" in out and "error" not in out["scoring_rules"]


def test_invalid_input_exits_2_with_message_on_stderr(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("benchmark,task,model,scaffold,result\nb,t,m,a,1\nb,t2,m,a,7\n")
    assert main(["inspect", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.csv, line 3, column 'result'" in err and "not 0 or 1" in err


def test_invalid_input_json_lists_errors(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("benchmark,task,model,scaffold,result\nb,t,m,a,1\nb,t2,m,a,7\n")
    assert main(["inspect", str(bad), "--json"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["errors"][0]["code"] == "non-binary-result" and out["errors"][0]["line"] == 3


def test_missing_file_and_unknown_format(tmp_path, capsys):
    assert main(["inspect", str(tmp_path / "nope.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err
    weird = tmp_path / "weird.bin"
    weird.write_bytes(b"\x00\x01\x02 not a corpus")
    assert main(["inspect", str(weird)]) == 2
    assert "--format" in capsys.readouterr().err


def test_convert_round_trip(tmp_path, capsys, corpora_dir):
    out = tmp_path / "tb.parquet"
    assert main(["convert", str(corpora_dir / "terminal-bench-2/meta.json"), "-o", str(out)]) == 0
    capsys.readouterr()
    back = run_json(capsys, out)
    assert (back["n_records"], back["n_trials"], back["n_agents"]) == (7387, 36867, 81)


def test_henderson_on_a_g_study_table(tmp_path, capsys):
    # the hand-computed 2 persons x (2 raters : 2 tasks) design of tests/test_henderson.py
    rows = ["person,task,rater,score", "p1,t1,r0,1", "p1,t1,r1,3", "p1,t2,r0,6", "p1,t2,r1,8",
            "p2,t1,r0,3", "p2,t1,r1,7", "p2,t2,r0,6", "p2,t2,r1,10"]
    path = tmp_path / "g.csv"
    path.write_text("\n".join(rows) + "\n")
    assert main(["henderson", str(path), "--formula", "score ~ (1|person) + (1|task/rater) + (1|person:task)",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["components"] == pytest.approx({"person": 1.5, "task": 5.5, "task:rater": 4.0, "task:person": 0.5,
                                               "residual": 1.0})


def test_henderson_on_the_demo_corpus(capsys):
    assert main(["henderson", str(DEMO), "--formula", "per-benchmark", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["components"]) == {"task", "model", "scaffold", "task:model", "task:scaffold", "model:scaffold",
                                      "residual"}
    assert out["n_obs"] == 36867 and out["flagged"] == ["model:scaffold"]
    assert out["components"]["task"] == pytest.approx(0.070438, abs=1e-6)


def test_console_script_runs():
    proc = subprocess.run([sys.executable, "-m", "ddr_explorer.core.cli", "inspect", str(DEMO)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Agents              81" in proc.stdout


def test_fitting_commands_share_the_apps_sampler_defaults():
    # a fit made in the app is a cache hit for `ddr fit/report/analyses/dstudy`, and the reverse:
    # the cache key holds every sampler setting, so one differing default means a refit
    import argparse

    from ddr_explorer.core.cli import build_parser
    from ddr_explorer.core.fitting import settings_from_args
    from ddr_explorer.core.model.sampler import SamplerSettings

    app = SamplerSettings()
    parser = build_parser()
    for argv in (["fit", "c.csv"], ["report", "c.csv", "-o", "x.pdf"], ["analyses", "c.csv"]):
        a = parser.parse_args(argv)
        # (`ddr fit` leaves --draws unset: its default depends on --stop; settings_from_args fills it in)
        assert settings_from_args(a) == app, argv
    # dstudy leaves them unset, and settings_from_args fills in the app's defaults
    a = parser.parse_args(["dstudy", "c.csv"])
    assert settings_from_args(a) == app
    assert settings_from_args(argparse.Namespace(draws=50, warmup=0, chains=None)) == SamplerSettings(draws=50, warmup=0)
    # the mend a fit's verdict names for a quadrature off at the posterior
    a = parser.parse_args(["fit", "c.csv", "--quadrature-nodes", "12"])
    assert settings_from_args(a) == SamplerSettings(quadrature_nodes=12)


def test_fit_progress_in_a_log_prints_phase_changes_and_every_30_seconds(capsys):
    from ddr_explorer.core.terminal_progress import TerminalProgress as _TerminalProgress

    now = [0.0]
    prog = _TerminalProgress(True, every=30.0, clock=lambda: now[0])
    prog.tty = False  # stderr redirected to a log
    for phase, i, total, t in [("compile", 0, 1, 0), ("compile", 1, 1, 5), ("warmup", 25, 400, 6),
                               ("warmup", 50, 400, 20), ("warmup", 75, 400, 37), ("warmup", 100, 400, 50),
                               ("warmup", 400, 400, 300), ("sampling", 25, 700, 301)]:
        now[0] = t
        prog(phase, i, total, None)
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["compile: 0/1", "compile: 1/1", "warmup: 25/400", "warmup: 75/400", "warmup: 400/400",
                     "sampling: 25/700"]
