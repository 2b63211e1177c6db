"""A py-irt file that names no benchmark: the benchmark is named after the file, and says so."""

from __future__ import annotations

import json

from ddr_explorer.core import cli
from ddr_explorer.core.corpus.io import load_corpus


def _board(tmp_path):
    path = tmp_path / "tb2-binary.jsonl"
    path.write_text("".join(json.dumps({"subject_id": s, "responses": {f"task-{t}": (t + k) % 2 for t in range(4)}})
                            + "\n" for k, s in enumerate(["alpha", "beta", "gamma"])), encoding="utf-8")
    return path


def test_the_benchmark_is_named_after_the_file(tmp_path, capsys):
    path = _board(tmp_path)
    c = load_corpus(path, aliases=None)
    assert list(c.table["benchmark"].astype(str).unique()) == ["tb2-binary"]
    w = next(w for w in c.warnings if w.code == "item-unmatched")
    assert w.message == ("4 item ids match no benchmark rule (e.g. 'task-0', 'task-1', 'task-2') and the file names "
                         "no benchmark; they are put in benchmark 'tb2-binary', named after the file.")
    assert "--benchmark NAME" in w.fix
    assert c.provenance["benchmark_from_file_name"] == "tb2-binary"
    assert cli.main(["inspect", str(path), "--aliases", str(_no_rules(tmp_path))]) == 0
    assert "they are put in benchmark 'tb2-binary', named after the file" in capsys.readouterr().out


def _no_rules(tmp_path):
    path = tmp_path / "none.toml"
    path.write_text("[meta]\ndescription = 'no rules'\n", encoding="utf-8")
    return path


def test_benchmark_option_names_it(tmp_path):
    c = load_corpus(_board(tmp_path), benchmark="terminal-bench-2.0")
    assert list(c.table["benchmark"].astype(str).unique()) == ["terminal-bench-2.0"]
    assert not [w for w in c.warnings if w.code == "item-unmatched"]
    assert c.provenance["benchmark_from_file_name"] is None
