"""Subject ids of public leaderboards: harness_model ids split, model spellings merged, "unknown" never a scaffold."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ddr_explorer.core import cli
from ddr_explorer.core.corpus.importers import pyirt
from ddr_explorer.core.design.presets import supported_spec
from ddr_explorer.core.inspection import format_summary, inspect_corpus
from ddr_explorer.core.model.formula import preset

NOT_SEPARATED = "(scaffolds not separated)"

#: Terminal-Bench-style run ids as public leaderboards write them: no "_at_<org>", "_" inside names.
TB_IDS = {
    "claude_code_claude_opus_4_6": ("claude-opus-4-6", "Claude Code"),
    "terminus_2_claude-opus-4-6": ("claude-opus-4-6", "Terminus 2"),
    "terminus_2_gpt_5_2": ("gpt-5.2", "Terminus 2"),
    "codex_cli_gpt-5.2": ("gpt-5.2", "Codex CLI"),
    "codex_cli_gpt-5": ("gpt-5", "Codex CLI"),
    "openhands_claude-sonnet-4-5": ("claude-sonnet-4-5", "OpenHands"),
    "openhands_gpt-5": ("gpt-5", "OpenHands"),
    "gemini_cli_gemini_2_5_pro": ("gemini_2_5_pro", "Gemini CLI"),
    "mini_swe_agent_gpt-5": ("gpt-5", "Mini-SWE-Agent"),
}

#: SWE-bench Verified experiment names (BRIDGE's all_a_pyirt.jsonl; the last two spell a model anew).
SWE_IDS = ["20240620_sweagent_claude3.5sonnet", "20241029_epam-ai-run-claude-3-5-sonnet", "20240728_sweagent_gpt4o",
           "20240820_epam-ai-run-gpt-4o", "20240612_MASAI_gpt4o", "20240402_rag_gpt4",
           "20241029_OpenHands-CodeAct-2.1-sonnet-20241022", "20240820_honeycomb",
           "20241202_agentless-1.5_claude-3.5-sonnet", "20240615_appmap-navie_GPT-4o"]
TASKS = ["astropy__astropy-12907", "django__django-11099", "django__django-11133", "sympy__sympy-20590"]


def pyirt_file(path: Path, ids, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    rows = [{"subject_id": s, "responses": {t: int(rng.integers(0, 2)) for t in TASKS}} for s in ids]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _inspect(capsys, argv) -> tuple[dict, str]:
    assert cli.main(["inspect", "--json", *argv]) == 0
    js = json.loads(capsys.readouterr().out)
    assert cli.main(["inspect", *argv]) == 0
    return js, capsys.readouterr().out


def test_model_key_merges_spellings_only():
    from ddr_explorer.core.corpus.subject_ids.model_keys import merge_spellings, model_key

    assert model_key("GPT-4o") == model_key("gpt4o") == model_key("gpt-4o")
    assert model_key("claude3.5sonnet") == model_key("claude-3-5-sonnet") == model_key("claude-3.5-sonnet")
    assert model_key("gpt-5_2") == model_key("gpt-5.2")
    # sizes, suffixes and dates keep models apart
    assert len({model_key(m) for m in ("gpt-4o", "gpt-4o-mini", "claude-3-5-sonnet-20241022",
                                       "claude-3-5-sonnet")}) == 4
    rename, merges = merge_spellings(["gpt4o", "gpt4o", "gpt-4o", "GPT-4o", "o3"])
    assert rename == {"gpt-4o": "gpt4o", "GPT-4o": "gpt4o"}  # the spelling most subjects use
    assert merges == [{"model": "gpt4o", "key": "gpt4o", "spellings": {"GPT-4o": 1, "gpt-4o": 1, "gpt4o": 2}}]


def test_terminal_bench_style_ids_split_into_harness_and_model(tmp_path, capsys):
    path = pyirt_file(tmp_path / "tb_leaderboard.jsonl", TB_IDS)
    c = pyirt.read(path)
    subs = c.provenance["subjects"]
    assert {s: (v["model"], v["scaffold"]) for s, v in subs.items()} == TB_IDS
    m = c.provenance["id_mapping"]
    assert (m["ids"], m["split"], m["model_only"], m["no_rule"]) == (9, 9, 0, 0)
    assert m["by_rules"] == {"<harness>_<model>": 9}
    assert c.provenance["scaffolds_not_separated"] is None
    assert c.n_levels("scaffold") == 6 and c.n_levels("model") == 5
    assert "unknown" not in set(c.table["scaffold"].astype(str))
    assert [(x["model"], x["spellings"]) for x in c.provenance["model_merges"]] == [
        ("claude-opus-4-6", {"claude-opus-4-6": 1, "claude_opus_4_6": 1}), ("gpt-5.2", {"gpt-5.2": 1, "gpt_5_2": 1})]
    assert subs["terminus_2_gpt_5_2"]["spelled"] == "gpt_5_2"
    js, text = _inspect(capsys, [str(path)])
    assert js["subject_ids"]["split"] == 9 and js["subject_ids"]["not_split"] == 0
    assert "9 ids: 9 split into a model and a scaffold" in text
    assert "merged: claude-opus-4-6 (1) / claude_opus_4_6 (1) -> claude-opus-4-6" in text


@pytest.mark.parametrize("sid", ["goose_factory", "terminus_2_final_run", "codexgpt5"])
def test_harness_name_alone_is_not_a_split(sid):
    """The rest of the id must start like a model; otherwise the id stays whole (and is reported)."""
    from ddr_explorer.core.corpus.subject_ids.conventions import build_stack

    sub, layer = build_stack(None, "none (no file)").split(sid)
    assert layer is None or layer.label != "<harness>_<model>"
    assert sub.scaffold == "unknown"


def test_swe_bench_ids_unsplit_leave_no_scaffold_terms(tmp_path, capsys):
    path = pyirt_file(tmp_path / "swebench_verified.jsonl", SWE_IDS)
    c = pyirt.read(path)
    # two ids are products: no harness is named, so "unknown" is not made a scaffold level
    assert set(c.table["scaffold"].astype(str)) == {NOT_SEPARATED}
    ns = c.provenance["scaffolds_not_separated"]
    assert (ns["ids"], ns["not_split"]) == (10, 2)
    assert ns["examples"] == ["20241029_OpenHands-CodeAct-2.1-sonnet-20241022", "20240820_honeycomb"]
    assert ns["scaffolds_named"] == ["Agentless", "AppMap Navie", "EPAM AI/Run", "MASAI", "RAG baseline", "SWE-agent"]
    w = next(w for w in c.warnings if w.code == "scaffold-unknown")
    assert w.count == 2 and "2 of 10 subject ids name no scaffold" in w.message and "--aliases" in w.fix
    # the merges, shown
    merges = {x["model"]: x["spellings"] for x in c.provenance["model_merges"]}
    assert merges == {"claude-3-5-sonnet": {"claude-3-5-sonnet": 1, "claude-3.5-sonnet": 1, "claude3.5sonnet": 1},
                      "gpt4o": {"GPT-4o": 1, "gpt-4o": 1, "gpt4o": 2}}
    assert next(w for w in c.warnings if w.code == "model-spellings-merged").count == 6
    assert c.n_levels("model") == 5  # claude-3-5-sonnet, gpt4o, gpt4, and the two products
    # every fit of a preset leaves the scaffold terms out
    check = supported_spec(c, preset("per-benchmark"))
    assert "scaffold" not in check.spec.formula
    assert {d.term for d in check.dropped} >= {"scaffold", "task:scaffold", "model:scaffold"}
    js, text = _inspect(capsys, [str(path)])
    assert js["n_scaffolds"] == 1 and js["subject_ids"]["not_split"] == 2
    assert js["subject_ids"]["model_merges"][0]["model"] == "claude-3-5-sonnet"
    assert "2 ids name no scaffold (e.g. 20241029_OpenHands-CodeAct-2.1-sonnet-20241022, 20240820_honeycomb)" in text
    assert "merged: GPT-4o (1) / gpt-4o (1) / gpt4o (2) -> gpt4o" in text


def test_mapping_the_unsplit_ids_separates_scaffolds(tmp_path):
    path = pyirt_file(tmp_path / "swebench_verified.jsonl", SWE_IDS)
    aliases = tmp_path / "mine.toml"
    aliases.write_text('[subjects]\n"20240820_honeycomb" = { model = "honeycomb", scaffold = "Honeycomb" }\n'
                       '"20241029_OpenHands-CodeAct-2.1-sonnet-20241022" = { model = "claude-3-5-sonnet-20241022", '
                       'scaffold = "OpenHands" }\n', encoding="utf-8")
    c = pyirt.read(path, aliases=aliases)
    assert c.provenance["scaffolds_not_separated"] is None
    assert c.n_levels("scaffold") == 8 and "unknown" not in set(c.table["scaffold"].astype(str))
    assert inspect_corpus(c)["subject_ids"]["not_split"] == 0


def test_merge_models_false_keeps_spellings(tmp_path):
    path = pyirt_file(tmp_path / "swebench_verified.jsonl", SWE_IDS)
    aliases = tmp_path / "keep.toml"
    aliases.write_text("merge_models = false\n", encoding="utf-8")
    c = pyirt.read(path, aliases=aliases)
    assert c.provenance["model_merges"] == [] and c.n_levels("model") == 9
    assert not [w for w in c.warnings if w.code == "model-spellings-merged"]


def test_sheet_says_how_many_ids_were_not_split(tmp_path):
    pytest.importorskip("reportlab")
    from ddr_explorer.core.reliability import VarianceComponents
    from ddr_explorer.core.report import report_inputs_from
    from ddr_explorer.core.report.content import sheet_content

    c = pyirt.read(pyirt_file(tmp_path / "swebench_verified.jsonl", SWE_IDS))
    rng = np.random.default_rng(0)
    comps = VarianceComponents.from_mapping({t: (s * np.exp(rng.normal(0, 0.1, 400))) ** 2 for t, s in
                                             {"task": 2.0, "model": 1.0, "task:model": 0.8}.items()})
    inp = report_inputs_from(c, comps, fit_info={"method": "NUTS (numpyro)", "converged": True})
    notes = {n.title: n.text for n in sheet_content(inp).notices}
    assert "One scaffold." not in notes
    text = notes["Subject ids not split."]
    assert text.startswith("2 of 10 subject ids name no scaffold")
    assert "the fit has no scaffold terms" in text and "--aliases FILE" in text and "Subject ids" in text


def test_several_models_without_orgs(tmp_path):
    """A Terminal-Bench router run without "_at_<org>" parts: one harness, several models, reported."""
    c = pyirt.read(pyirt_file(tmp_path / "tb.jsonl", ["warp_claude-haiku-4-5,gpt-5_2", "claude_code_claude_opus_4_6",
                                                       "terminus_2_gpt_5_2"]))
    sub = c.provenance["subjects"]["warp_claude-haiku-4-5,gpt-5_2"]
    assert (sub["model"], sub["scaffold"]) == ("claude-haiku-4-5+gpt-5_2", "Warp")
    assert [w.row for w in c.warnings if w.code == "several-models"] == [1]
