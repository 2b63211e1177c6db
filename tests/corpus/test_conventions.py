"""Subject-id conventions (resources/aliases/conventions/): applied by default, reported, overridable."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from ddr_explorer.core import cli
from ddr_explorer.core.corpus.importers import pyirt
from ddr_explorer.core.corpus.subject_ids.conventions import build_stack, label_of, shipped_conventions

REPO = Path(__file__).resolve().parents[2]


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def split(sid: str) -> tuple[str, str, str | None]:
    """(model, scaffold, convention) of one id under the shipped conventions alone."""
    sub, layer = build_stack(None, "none (no file)").split(sid)
    return sub.model, sub.scaffold, None if layer is None else layer.label


def test_shipped_conventions_parse_in_order():
    names = [label_of(r) for r in shipped_conventions()]
    assert names == ["Terminal-Bench run id", "<harness>_<model>", "SWE-bench experiment name", "Inspect <provider>/<model>",
                     "HAL <scaffold>/<model>", "bare model name"]


@pytest.mark.parametrize("sid, model, scaffold", [
    # date, scaffold, model
    ("20240620_sweagent_claude3.5sonnet", "claude3.5sonnet", "SWE-agent"),
    ("20250726_mini-v1.0.0_o3-2025-04-16", "o3-2025-04-16", "mini-SWE-agent"),
    ("20250720_mini-v0.0.0-Llama-4-Maverick-17B-Instruct", "Llama-4-Maverick-17B-Instruct", "mini-SWE-agent"),
    ("20241202_agentless-1.5_claude-3.5-sonnet-20241022", "claude-3.5-sonnet-20241022", "Agentless"),
    ("20250511_sweagent_lm_32b", "lm_32b", "SWE-agent"),  # known scaffold: any model
    ("20241108_autocoderover-v2.0-claude-3-5-sonnet-20241022", "claude-3-5-sonnet-20241022", "AutoCodeRover"),
    ("20240820_epam-ai-run-gpt-4o", "gpt-4o", "EPAM AI/Run"),
    ("20240918_lingma-agent_lingma-swe-gpt-72b", "lingma-swe-gpt-72b", "Lingma Agent"),
    ("20250929_Prometheus_v1.2_gpt5", "gpt5", "Prometheus"),
    ("20250516_cortexa_o3", "o3", "CortexA"),
    ("20241212_google_jules_gemini_2.0_flash_experimental", "gemini_2.0_flash_experimental", "Jules"),
    ("20250804_codesweep_sweagent_kimi_k2_instruct", "kimi_k2_instruct", "SWE-agent (CodeSweep)"),
    # date and product only: the id is the model, no scaffold named
    ("20240820_honeycomb", "20240820_honeycomb", "unknown"),
    ("20240628_autocoderover-v20240620", "20240628_autocoderover-v20240620", "unknown"),
    ("20250203_openhands_4x_scaled", "20250203_openhands_4x_scaled", "unknown"),
    # a known scaffold that also names products alone: split only before a model family name
    ("20250524_openhands_claude_4_sonnet", "claude_4_sonnet", "OpenHands"),
    # a training method, not a scaffold: no rule can tell, so it stays a product
    ("20250226_swerl_llama3_70b", "20250226_swerl_llama3_70b", "unknown"),
    ("20241106_navie-2-gpt4o-sonnet", "20241106_navie-2-gpt4o-sonnet", "unknown"),
])
def test_swe_bench_experiment_names(sid, model, scaffold):
    assert split(sid) == (model, scaffold, "SWE-bench experiment name")


@pytest.mark.parametrize("sid, model, scaffold, convention", [
    ("terminus-2_gpt-5_at_openai", "gpt-5", "Terminus 2", "Terminal-Bench run id"),
    ("factory_droid_claude-opus-4-5_at_anthropic", "claude-opus-4-5", "Droid", "Terminal-Bench run id"),
    ("openai/gpt-4o", "gpt-4o", "unknown", "Inspect <provider>/<model>"),
    ("openrouter/meta-llama/llama-3.1-70b-instruct", "meta-llama/llama-3.1-70b-instruct", "unknown",
     "Inspect <provider>/<model>"),
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "Qwen/Qwen3-Coder-30B-A3B-Instruct", "unknown", "HAL <scaffold>/<model>"),
    ("hal_generalist_agent/o4-mini-high", "o4-mini-high", "hal_generalist_agent", "HAL <scaffold>/<model>"),
    ("SWE-agent (gpt-4o)", "gpt-4o", "SWE-agent", "HAL <scaffold>/<model>"),
    ("gpt-5-mini", "gpt-5-mini", "unknown", "bare model name"),
    ("o3-mini", "o3-mini", "unknown", "bare model name"),
    ("my-own-system", "my-own-system", "unknown", None),  # no convention: the whole-id fallback
])
def test_other_conventions(sid, model, scaffold, convention):
    assert split(sid) == (model, scaffold, convention)


def test_conventions_agree_with_bridge_patterns(corpora_dir):
    """Every BRIDGE id that bridge.toml splits by a pattern gets the same scaffold from the conventions alone."""
    bridge = pyirt.load_aliases(pyirt.shipped_alias_files()["bridge"])
    ids = [json.loads(line)["subject_id"] for line in (corpora_dir / "bridge" / "all_a_pyirt.jsonl").open()]
    by_pattern = [s for s in ids if pyirt.split_subject(s, bridge).rule.startswith("pattern")]
    assert len(by_pattern) == 58
    for sid in by_pattern:
        assert split(sid)[1] == pyirt.split_subject(sid, bridge).scaffold, sid


def test_swe_bench_file_without_aliases(tmp_path):
    """A SWE-bench leaderboard py-irt file no dataset alias file fits: split by the convention, items in swebench."""
    rows = [
        {"subject_id": "20240620_sweagent_claude3.5sonnet", "responses": {"astropy__astropy-12907": 1,
                                                                         "django__django-11099": 0}},
        {"subject_id": "20240728_sweagent_gpt4o", "responses": {"astropy__astropy-12907": 0,
                                                               "django__django-11099": 1}},
        {"subject_id": "20241022_tools_claude-3-5-haiku", "responses": {"astropy__astropy-12907": 1}},
        {"subject_id": "20240820_honeycomb", "responses": {"astropy__astropy-12907": 1, "django__django-11099": 1}},
        {"subject_id": "20250519_trae", "responses": {"django__django-11099": 1}},
        {"subject_id": "20250623_warp", "responses": {"django__django-11099": 1}},
        {"subject_id": "20240824_gru", "responses": {"django__django-11099": 0}},
        {"subject_id": "20250826_mini-v1.13.0_gpt-5-mini", "responses": {"django__django-11099": 0}},
        {"subject_id": "mystery", "responses": {"django__django-11099": 0}},
    ]
    c = pyirt.read(jsonl(tmp_path / "swebench_verified.jsonl", rows))
    s = c.provenance["subjects"]
    # bridge.toml's rules map 4 of these 9 ids (44%): it does not fit, the conventions alone apply
    assert c.provenance["aliases_chosen"] == "none (no shipped alias file fits)"
    assert (s["20240620_sweagent_claude3.5sonnet"]["model"], s["20240620_sweagent_claude3.5sonnet"]["scaffold"]) \
        == ("claude3.5sonnet", "SWE-agent")
    assert (s["20241022_tools_claude-3-5-haiku"]["model"], s["20241022_tools_claude-3-5-haiku"]["scaffold"]) \
        == ("claude-3-5-haiku", "Anthropic tools")
    assert (s["20240820_honeycomb"]["model"], s["20240820_honeycomb"]["scaffold"]) == ("20240820_honeycomb",
                                                                                         "unknown")
    m = c.provenance["id_mapping"]
    assert (s["20250826_mini-v1.13.0_gpt-5-mini"]["model"], s["20250826_mini-v1.13.0_gpt-5-mini"]["scaffold"]) \
        == ("gpt-5-mini", "mini-SWE-agent")
    m = c.provenance["id_mapping"]
    assert (m["mapped"], m["split"], m["model_only"], m["no_rule"]) == (8, 4, 4, 1)
    assert m["by_rules"] == {"SWE-bench experiment name": 8}
    assert "8 of 9 subject ids (89%)" in next(w for w in c.warnings if w.code == "subject-ids-mapped").message
    fallback = [w for w in c.warnings if w.code == "subject-fallback"]
    assert [w.row for w in fallback] == [9]
    # the convention's item rule: every item is a SWE-bench Verified instance
    assert set(c.table["benchmark"].astype(str)) == {"swebench"}
    # 4 ids name no scaffold: "unknown" is not made a scaffold, every record gets the one scaffold
    # "(scaffolds not separated)" (core/corpus/subject_ids/unsplit.py)
    assert c.n_levels("scaffold") == 1 and c.n_records == 12
    assert c.provenance["scaffolds_not_separated"]["not_split"] == 5


def test_aliases_add_and_override(tmp_path):
    p = jsonl(tmp_path / "runs.jsonl", [
        {"subject_id": "20240620_sweagent_claude3.5sonnet", "responses": {"t1": 1}},
        {"subject_id": "20240820_honeycomb", "responses": {"t1": 0}},
        {"subject_id": "openai/gpt-4o", "responses": {"t1": 1}},
    ])
    a = tmp_path / "mine.toml"
    a.write_text('benchmark = "b"\n[subjects]\n"20240820_honeycomb" = { model = "claude-3-5-sonnet", '
                 'scaffold = "Honeycomb" }\n[models]\n"claude3.5sonnet" = "claude-3-5-sonnet"\n'
                 '[scaffolds]\n"SWE-agent" = "swe-agent"\n', encoding="utf-8")
    c = pyirt.read(p, aliases=a)
    s = c.provenance["subjects"]
    # the convention splits the id, the user's tables rename its parts
    assert (s["20240620_sweagent_claude3.5sonnet"]["model"], s["20240620_sweagent_claude3.5sonnet"]["scaffold"]) \
        == ("claude-3-5-sonnet", "swe-agent")
    assert s["20240620_sweagent_claude3.5sonnet"]["mapped_by"] == "SWE-bench experiment name"
    # the user's explicit entry wins over the convention
    assert (s["20240820_honeycomb"]["model"], s["20240820_honeycomb"]["scaffold"], s["20240820_honeycomb"]["rule"]) \
        == ("claude-3-5-sonnet", "Honeycomb", "explicit")
    assert s["openai/gpt-4o"]["model"] == "gpt-4o"
    assert c.provenance["id_mapping"]["by_rules"] == {"mine.toml": 1, "SWE-bench experiment name": 1,
                                                      "Inspect <provider>/<model>": 1}


def test_aliases_none_switches_conventions_off(tmp_path):
    p = jsonl(tmp_path / "r.jsonl", [{"subject_id": "20240620_sweagent_claude3.5sonnet", "responses": {"t": 1}}])
    c = pyirt.read(p, aliases=None, benchmark="b")
    sub = c.provenance["subjects"]["20240620_sweagent_claude3.5sonnet"]
    assert (sub["model"], sub["scaffold"], sub["mapped_by"]) == ("20240620_sweagent_claude3.5sonnet", "unknown", None)
    assert c.provenance["conventions"] == []


def _inspect_json(capsys, argv) -> dict:
    assert cli.main(["inspect", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_bridge_split_same_without_aliases(corpora_dir, capsys):
    """`ddr inspect all_a_pyirt.jsonl` gives the split of `--aliases resources/aliases/bridge.toml`."""
    path = str(corpora_dir / "bridge" / "all_a_pyirt.jsonl")
    auto = _inspect_json(capsys, [path])
    given = _inspect_json(capsys, [path, "--aliases", str(REPO / "resources" / "aliases" / "bridge.toml")])
    for key in ("n_models", "n_scaffolds", "n_agents", "n_records", "per_benchmark"):
        assert auto[key] == given[key], key
    # 107 ids name no scaffold for some records, so scaffolds are not separated; 4 spellings merged
    assert (auto["n_models"], auto["n_scaffolds"], auto["n_agents"]) == (128, 1, 128)
    pick = lambda s: {k: (v["model"], v["scaffold"], v.get("scaffold_by_benchmark")) for k, v in  # noqa: E731
                      s["provenance"]["subjects"].items()}
    assert pick(auto) == pick(given)
    assert auto["provenance"]["id_mapping"] == given["provenance"]["id_mapping"]
    assert auto["provenance"]["id_mapping"]["share_mapped"] == 1.0
    # and the tables agree row for row
    a = pyirt.read(path).table
    g = pyirt.read(path, aliases=REPO / "resources" / "aliases" / "bridge.toml").table
    pd.testing.assert_frame_equal(a, g)
