"""The "(scaffolds not separated)" marker survives ``ddr convert`` as a marker.

A py-irt file whose ids name no scaffold gets the one scaffold "(scaffolds not separated)"; ``ddr convert``
writes it in the scaffold column.  Read back, the column's value is the marker again, not a harness's
name: the provenance says scaffolds were not separated, ``ddr inspect`` says so, and the sheet's "Read
with care" box says "Subject ids not split", never "every model ran in one harness".
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pandas as pd

from ddr_explorer.core import cli
from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.corpus.subject_ids.unsplit import SCAFFOLDS_NOT_SEPARATED, carried_marker
from ddr_explorer.core.inspection import inspect_corpus

MODELS = ["gpt-4o", "claude-3-5-sonnet", "llama-3-70b"]


def _pyirt(path):
    with path.open("w") as f:
        for k, m in enumerate(MODELS):
            f.write(json.dumps({"subject_id": m, "responses": {f"t{t}": int((t + k) % 3 == 0) for t in range(6)}}) + "\n")
    return path


def test_convert_then_load_keeps_the_marker_a_marker(tmp_path, capsys):
    src = _pyirt(tmp_path / "board.jsonl")
    assert load_corpus(src).table["scaffold"].astype(str).unique().tolist() == [SCAFFOLDS_NOT_SEPARATED]
    out = tmp_path / "board.csv"
    assert cli.main(["convert", str(src), "-o", str(out)]) == 0
    assert set(pd.read_csv(out)["scaffold"]) == {SCAFFOLDS_NOT_SEPARATED}  # what the file carries
    back = load_corpus(out)
    pooled = back.provenance["scaffolds_not_separated"]
    assert (pooled["not_split"], pooled["ids"], pooled["records"], pooled["carried"]) == (3, 3, 18, True)
    s = inspect_corpus(back)
    assert s["subject_ids"]["scaffolds_not_separated"] and s["subject_ids"]["not_split"] == 3
    assert any(w["code"] == "scaffold-unknown" for w in s["warnings"])
    capsys.readouterr()
    assert cli.main(["inspect", str(out)]) == 0
    assert f"the scaffold column carries the marker '{SCAFFOLDS_NOT_SEPARATED}' for 3 of 3 models" in \
        capsys.readouterr().out


def test_the_sheet_says_not_separated_not_one_harness(tmp_path):
    from ddr_explorer.core.report.content import _notices

    src = _pyirt(tmp_path / "board.jsonl")
    out = tmp_path / "board.csv"
    assert cli.main(["convert", str(src), "-o", str(out)]) == 0
    summary = inspect_corpus(load_corpus(out))
    from ddr_explorer.core.dstudy import DStudyDesign

    inputs = SimpleNamespace(corpus_summary=summary, fit_info={"converged": True},
                             components=SimpleNamespace(terms=("task", "model", "task:model")), has_cost=False,
                             observed_design=DStudyDesign(n_tasks=6, n_models=3), analysis=lambda key: None)
    titles = [n.title for n in _notices(SimpleNamespace(inputs=inputs, headline={"median": 0.9}, estimand="Erho2"))]
    assert "Subject ids not split." in titles and "One scaffold." not in titles, titles


def test_a_converted_file_concatenated_with_a_named_one_pools_every_row():
    raw = pd.DataFrame({"model": ["a", "a", "b", "b"], "scaffold": [SCAFFOLDS_NOT_SEPARATED] * 2 + ["swe-agent"] * 2})
    out, info, issues = carried_marker(raw)
    assert set(out["scaffold"]) == {SCAFFOLDS_NOT_SEPARATED} and info["scaffolds_named"] == ["swe-agent"]
    assert (info["not_split"], info["ids"], info["records"]) == (1, 2, 2)
    assert "pooled with them" in issues[0].message and issues[0].count == 2
    same, none, no_issue = carried_marker(raw.assign(scaffold="swe-agent"))
    assert none is None and no_issue == [] and same["scaffold"].eq("swe-agent").all()
