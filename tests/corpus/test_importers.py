"""Importers of real formats: exact counts on the real corpora, located errors on bad input.

The real files live in ``../shared/corpora`` (fixture ``corpora_dir`` in
tests/conftest.py; the tests that need them are skipped when it is missing).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from ddr_explorer.core.corpus.importers import DESCRIPTIONS, IMPORTERS, detect_format
from ddr_explorer.core.corpus.importers import normalized, pyirt, terminal_bench
from ddr_explorer.core.corpus.issues import CorpusError
from ddr_explorer.core.corpus.readers import read_canonical

REPO = Path(__file__).resolve().parents[2]


# -- helpers ----------------------------------------------------------------------------------------------
def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def jsonl(tmp_path: Path, name: str, rows: list) -> Path:
    return write(tmp_path, name, "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")


def issues_of(exc: pytest.ExceptionInfo) -> list:
    return exc.value.issues


def find(issues, code):
    hits = [i for i in issues if i.code == code]
    assert hits, f"no {code!r} among {[str(i) for i in issues]}"
    return hits[0]


def cells(table: pd.DataFrame, by=("model", "scaffold", "task")) -> pd.DataFrame:
    t = table.astype({c: str for c in by})
    return t.groupby(list(by))[["successes", "trials"]].sum().sort_index()


@pytest.fixture(scope="module")
def tb_dir(corpora_dir):
    return corpora_dir / "terminal-bench-2"


@pytest.fixture(scope="module")
def bridge_dir(corpora_dir):
    return corpora_dir / "bridge"


@pytest.fixture(scope="module")
def tb_meta(tb_dir):
    return terminal_bench.read(tb_dir / "meta.json")


@pytest.fixture(scope="module")
def tb_pyirt(tb_dir):
    return pyirt.read(tb_dir / "responses_raw.jsonl")


@pytest.fixture(scope="module")
def bridge_pyirt(bridge_dir):
    return pyirt.read(bridge_dir / "all_a_pyirt.jsonl")


# -- Terminal-Bench meta.json -------------------------------------------------------------------------------
def test_meta_json_counts(tb_meta):
    c = tb_meta
    assert c.format == "terminal-bench"
    assert c.n_records == 7387  # 83 runs x 89 tasks
    assert c.n_trials == 36867
    assert c.n_successes == 13477
    assert c.n_levels("model") == 29
    assert c.n_levels("scaffold") == 18
    assert c.n_levels("agent") == 81
    assert c.n_levels("task") == 89
    assert c.n_levels("trial") == 83
    assert set(c.table["benchmark"].astype(str)) == {"terminal-bench-2.0"}
    assert c.table.groupby("trial", observed=True).size().eq(89).all()


def test_meta_json_shift_is_detected_and_recorded(tb_meta):
    prov = tb_meta.provenance
    assert prov["mapping"] == "shifted"
    assert prov["mapping_fields"]["model"] == "date" and prov["mapping_fields"]["scaffold"] == "model"
    ev = prov["mapping_evidence"]
    assert ev["dates_in_agent_org_field"] == 83 and ev["dates_in_date_field"] == 0
    assert ev["detail_url_agrees_shifted"] > ev["detail_url_agrees_straight"]
    run = prov["runs"]["run-01"]
    assert (run["scaffold"], run["model"], run["model_org"], run["date"]) == ("Droid", "GPT-5.2", "OpenAI", "2025-12-24")


def test_meta_json_names_are_the_leaderboards(tb_meta):
    t = tb_meta.table.astype({"model": str, "scaffold": str, "trial": str})
    first = t[t["trial"] == "run-07"].iloc[0]
    assert (first["model"], first["scaffold"]) == ("Multiple", "Warp")
    # the same agent in several leaderboard runs: kept apart by the trial id
    assert t[(t["model"] == "Multiple") & (t["scaffold"] == "Warp")]["trial"].nunique() == 3
    assert "Droid" not in set(t["model"]) and "GPT-5.2" not in set(t["scaffold"])


def test_meta_json_swapped_model_fields_are_reported(tb_meta):
    assert tb_meta.provenance["model_fields_swapped_in_runs"] == ["41", "53"]
    models = set(tb_meta.table["model"].astype(str))
    assert "MiniMax-M2.1" in models and "MiniMax" not in models
    swaps = [w for w in tb_meta.warnings if w.code == "model-fields-swapped"]
    assert [w.row for w in swaps] == [3941, 5153]  # the lines of the "date" fields
    assert all(w.column == "date" and w.fix for w in swaps)


def _unshift(doc: dict) -> dict:
    """The same leaderboard written with every value under its own name."""
    out = dict(doc)
    out["results"] = []
    for r in doc["results"]:
        out["results"].append({"rank": r["agent"], "agent": r["model"], "model": r["date"], "agent_org": r["model_org"],
                               "model_org": r["accuracy"], "date": r["agent_org"], "accuracy": "50.0%",
                               "detail_url": r["detail_url"], "task_results": r["task_results"]})
    return out


def test_meta_json_not_shifted_is_read_straight(tb_dir, tb_meta, tmp_path):
    doc = json.loads((tb_dir / "meta.json").read_text())
    p = write(tmp_path, "meta.json", json.dumps(_unshift(doc), indent=2))
    c = terminal_bench.read(p)
    assert c.provenance["mapping"] == "straight"
    pd.testing.assert_frame_equal(cells(c.table, ("model", "scaffold", "trial", "task")),
                                  cells(tb_meta.table, ("model", "scaffold", "trial", "task")))


def test_meta_json_mapping_can_be_forced(tb_dir, tmp_path):
    doc = json.loads((tb_dir / "meta.json").read_text())
    doc["results"] = doc["results"][:2]
    p = write(tmp_path, "meta.json", json.dumps(doc, indent=2))
    c = terminal_bench.read(p, mapping="straight")
    assert c.provenance["mapping"] == "straight"
    assert any(w.code == "mapping-forced" for w in c.warnings)


def _mini_meta(task_results: dict, **fields) -> dict:
    run = {"rank": "", "agent": "1", "model": "Droid", "agent_org": "2025-12-24", "model_org": "Factory",
           "date": "GPT-5.2", "accuracy": "OpenAI",
           "detail_url": "https://www.tbench.ai/leaderboard/terminal-bench/2.0/Factory%20Droid/unknown/gpt-5.2%40openai",
           "task_results": task_results}
    run.update(fields)
    return {"agents": 1, "tasks": len(task_results), "task_list": list(task_results), "results": [run]}


def test_meta_json_malformed_cell_names_line_and_field(tmp_path):
    p = write(tmp_path, "meta.json", json.dumps(_mini_meta({"a": "1/5", "b": "3 of 5", "c": "2/5"}), indent=2))
    with pytest.raises(CorpusError) as exc:
        terminal_bench.read(p)
    issue = find(issues_of(exc), "bad-cell")
    lines = p.read_text().splitlines()
    assert issue.column == "task_results.b"
    assert '"b": "3 of 5"' in lines[issue.row - 1]
    assert issue.file == str(p) and "k/n" in issue.fix


def test_meta_json_successes_above_trials(tmp_path):
    p = write(tmp_path, "meta.json", json.dumps(_mini_meta({"a": "1/5", "b": "6/5"}), indent=2))
    with pytest.raises(CorpusError) as exc:
        terminal_bench.read(p)
    issue = find(issues_of(exc), "successes-exceed-trials")
    assert '"b": "6/5"' in p.read_text().splitlines()[issue.row - 1]
    assert issue.column == "task_results"


def test_meta_json_structure_errors(tmp_path):
    bad = write(tmp_path, "bad.json", '{\n  "results": [\n    {"agent": "1",,}\n  ]\n}\n')
    with pytest.raises(CorpusError) as exc:
        terminal_bench.read(bad)
    assert find(issues_of(exc), "bad-json").row == 3
    empty = write(tmp_path, "noresults.json", '{"agents": 0}')
    with pytest.raises(CorpusError) as exc:
        terminal_bench.read(empty)
    assert find(issues_of(exc), "missing-field").column == "results"
    no_model = _mini_meta({"a": "1/5"}, date="")
    p = write(tmp_path, "nomodel.json", json.dumps(no_model, indent=2))
    with pytest.raises(CorpusError) as exc:
        terminal_bench.read(p)
    issue = find(issues_of(exc), "missing-value")
    assert issue.column == "date" and '"date": ""' in p.read_text().splitlines()[issue.row - 1]


def test_meta_json_undecidable_mapping_asks_for_the_option(tmp_path):
    doc = _mini_meta({"a": "1/5"}, agent_org="Factory", detail_url="")
    p = write(tmp_path, "meta.json", json.dumps(doc))
    with pytest.raises(CorpusError) as exc:
        terminal_bench.read(p)
    issue = find(issues_of(exc), "mapping-undecided")
    assert "mapping='shifted'" in issue.fix
    assert terminal_bench.read(p, mapping="shifted").n_records == 1


# -- py-irt: Terminal-Bench responses_raw.jsonl ------------------------------------------------------------
def test_pyirt_terminal_bench_counts(tb_pyirt):
    c = tb_pyirt
    assert c.format == "py-irt"
    assert c.n_records == 7304  # 83 subjects x 88 tasks
    assert c.n_trials == 36452
    assert c.n_successes == 13180
    assert c.n_levels("trial") == 83
    assert c.n_levels("task") == 88
    assert (c.n_levels("model"), c.n_levels("scaffold"), c.n_levels("agent")) == (29, 18, 81)
    assert c.provenance["aliases"].endswith("terminal-bench-2.toml")
    assert c.provenance["fallback_subjects"] == []
    assert not [w for w in c.warnings if w.code in ("subject-fallback", "item-unmatched", "scaffold-unknown")]


def test_pyirt_terminal_bench_agrees_with_meta_json(tb_pyirt, tb_meta):
    agents = lambda c: set(map(tuple, c.table[["model", "scaffold"]].astype(str).drop_duplicates().to_numpy()))  # noqa: E731
    assert agents(tb_pyirt) == agents(tb_meta)
    meta_cells = cells(tb_meta.table)
    raw_cells = cells(tb_pyirt.table)
    # responses_raw.jsonl lacks one task of the leaderboard; every other cell is identical
    missing = set(meta_cells.index.get_level_values("task")) - set(raw_cells.index.get_level_values("task"))
    assert missing == {"headless-terminal"}
    shared = meta_cells[meta_cells.index.get_level_values("task") != "headless-terminal"]
    pd.testing.assert_frame_equal(shared, raw_cells)


def test_pyirt_without_aliases_reports_every_fallback(tb_dir):
    c = pyirt.read(tb_dir / "responses_raw.jsonl", aliases=None)
    fallbacks = [w for w in c.warnings if w.code == "subject-fallback"]
    assert len(fallbacks) == 83
    assert fallbacks[0].row == 1 and fallbacks[0].column == "subject_id"
    assert sum(w.code == "several-models" for w in c.warnings) == 4
    assert find(c.warnings, "item-unmatched").count == 88
    first = c.provenance["subjects"]["codex_gpt-5_2_at_openai"]
    assert (first["scaffold"], first["model"], first["orgs"]) == ("codex", "gpt-5_2", ["openai"])
    assert c.n_records == 7304  # nothing dropped


# -- py-irt: BRIDGE all_a_pyirt.jsonl ---------------------------------------------------------------------------
def test_pyirt_bridge_counts(bridge_pyirt):
    c = bridge_pyirt
    prov = c.provenance
    assert len(prov["subjects"]) == 176
    assert prov["cells"] == 86441
    assert c.n_levels("trial") == 176
    # MLE-bench: 1,482 verifier items (13 subjects x 38 competitions x 3) folded into 494 records
    assert c.n_records == 86441 - 1482 + 494 == 85453
    assert c.n_trials == 85453 and c.n_successes == 42570
    assert c.n_levels("task") == 943  # 1,019 items with 114 verifier items -> 38 competitions
    # 107 of 176 ids name no scaffold for some of their records (products such as 20240820_honeycomb; every
    # METR, GDPval, Cybench and MLE-bench record): "unknown" is not made a scaffold, so the file has one
    # scaffold and no scaffold terms; 4 model spellings are merged (claude3.5sonnet -> claude-3-5-sonnet, ...)
    assert (c.n_levels("model"), c.n_levels("scaffold"), c.n_levels("agent")) == (128, 1, 128)
    assert prov["scaffolds_not_separated"]["not_split"] == 107
    assert len(prov["scaffolds_not_separated"]["scaffolds_named"]) == 27  # kept in provenance, not fitted
    per = c.table.groupby("benchmark", observed=True)["task"].agg(["size", "nunique"])
    assert per.to_dict("index") == {
        "cybench": {"size": 112, "nunique": 15},
        "gdpval": {"size": 3520, "nunique": 220},
        "metr": {"size": 2333, "nunique": 170},
        "mlebench": {"size": 494, "nunique": 38},
        "swebench": {"size": 78994, "nunique": 500},
    }
    assert prov["unmatched_items"] == []


def test_pyirt_bridge_reports_mapping_and_unknown_scaffolds(bridge_pyirt):
    c = bridge_pyirt
    # bridge.toml maps 110 ids; the 66 it leaves are SWE-bench experiment names, which the shipped
    # convention recognises: 2 name a known scaffold and a model, 64 only a date and a product
    assert c.provenance["fallback_subjects"] == []
    assert not [w for w in c.warnings if w.code == "subject-fallback"]
    m = c.provenance["id_mapping"]
    assert m["by_rules"] == {"bridge.toml": 110, "SWE-bench experiment name": 66}
    assert (m["ids"], m["mapped"], m["split"], m["model_only"], m["no_rule"]) == (176, 176, 83, 93, 0)
    summary = find(c.warnings, "subject-ids-mapped")
    assert "176 of 176 subject ids (100%)" in summary.message and summary.column == "subject_id"
    trae = c.provenance["subjects"]["20250928_trae_doubao_seed_code"]
    assert (trae["model"], trae["scaffold"], trae["mapped_by"]) == ("doubao_seed_code", "Trae",
                                                                    "SWE-bench experiment name")
    navie = c.provenance["subjects"]["20241106_navie-2-gpt4o-sonnet"]  # not a known scaffold slug: a product
    assert (navie["model"], navie["scaffold"]) == ("20241106_navie-2-gpt4o-sonnet", "unknown")
    honeycomb = c.provenance["subjects"]["20240820_honeycomb"]
    assert (honeycomb["model"], honeycomb["scaffold"]) == ("20240820_honeycomb", "unknown")
    assert find(c.warnings, "scaffold-unknown")
    assert find(c.warnings, "aliases-auto")
    sweagent = c.provenance["subjects"]["20240620_sweagent_claude3.5sonnet"]
    assert (sweagent["model"], sweagent["scaffold"], sweagent["spelled"]) == ("claude-3-5-sonnet", "SWE-agent",
                                                                              "claude3.5sonnet")
    # scaffold per benchmark: claude-3-opus ran SWE-bench in SWE-agent, METR in an unnamed harness
    t = c.table.astype(str)
    opus = t[t["trial"] == "claude-3-opus"].groupby("benchmark")["scaffold"].unique().to_dict()
    assert c.provenance["subjects"]["claude-3-opus"]["scaffold_by_benchmark"]["swebench"] == "SWE-agent"
    # ... in the table, that and the unnamed METR harness are the one scaffold: METR's names none
    assert list(opus["swebench"]) == list(opus["metr"]) == ["(scaffolds not separated)"]


def test_pyirt_bridge_agrees_with_normalized_files(bridge_pyirt, bridge_dir):
    t = bridge_pyirt.table
    for bench in ("gdpval", "mlebench", "cybench"):
        norm = normalized.read(bridge_dir / f"{bench}_normalized_results.jsonl").table
        part = t[t["benchmark"] == bench]
        ver = [c for c in norm.columns if c.startswith("verifier.")]
        a = part.astype({"trial": str, "task": str}).set_index(["trial", "task"])[["successes", *ver]].sort_index()
        b = norm.astype({"model": str, "task": str}).rename_axis(None).set_index(["model", "task"])[
            ["successes", *ver]].sort_index()
        b.index.names = ["trial", "task"]
        pd.testing.assert_frame_equal(a, b, check_dtype=False)


def test_pyirt_bridge_items_mode_keeps_every_item(bridge_dir):
    c = pyirt.read(bridge_dir / "all_a_pyirt.jsonl", verifiers="items")
    assert c.n_records == 86441 and c.n_levels("task") == 1019 and c.n_successes == 43026
    assert not c.verifier_columns


# -- py-irt: alias files and errors --------------------------------------------------------------------
def test_shipped_alias_files_parse():
    shipped = pyirt.shipped_alias_files()
    assert {"terminal-bench-2", "bridge"} <= set(shipped)
    for path in shipped.values():
        rules = pyirt.load_aliases(path)
        assert rules.source == str(path)
    assert pyirt.load_aliases(shipped["bridge"]).benchmarks[0][0] == "swebench"


ALIASES = """
benchmark = "bench"
multiple_models = "Several"
[subjects]
"odd-one" = { model = "m-x", scaffold = "S-x" }
[scaffold_prefixes]
"my_agent_" = "My Agent"
"my_" = "Short"
[[subject_patterns]]
regex = '^\\d{8}_(?P<scaffold>[a-z]+)_(?P<model>.+)$'
[models]
"gpt4" = "GPT-4"
[scaffolds]
"swe" = "SWE-agent"
[[benchmarks]]
name = "other"
regex = '^o-(?P<task>.+)$'
"""


def test_pyirt_alias_rules_in_order(tmp_path):
    aliases = write(tmp_path, "a.toml", ALIASES)
    p = jsonl(tmp_path, "r.jsonl", [
        {"subject_id": "odd-one", "responses": {"t1": 1}},
        {"subject_id": "my_agent_gpt4", "responses": {"t1": 0, "o-t2": 1}},
        {"subject_id": "20240101_swe_gpt4", "responses": {"t1": {"successes": 2, "trials": 3}}},
        {"subject_id": "my_a_at_x,b_at_y", "responses": {"t1": 1}},
        {"subject_id": "plainmodel", "responses": {"t1": 1}},
    ])
    c = pyirt.read(p, aliases=aliases)
    s = c.provenance["subjects"]
    assert (s["odd-one"]["model"], s["odd-one"]["scaffold"], s["odd-one"]["rule"]) == ("m-x", "S-x", "explicit")
    assert (s["my_agent_gpt4"]["model"], s["my_agent_gpt4"]["scaffold"]) == ("GPT-4", "My Agent")  # longest prefix
    assert (s["20240101_swe_gpt4"]["model"], s["20240101_swe_gpt4"]["scaffold"]) == ("GPT-4", "SWE-agent")
    assert (s["my_a_at_x,b_at_y"]["model"], s["my_a_at_x,b_at_y"]["scaffold"]) == ("Several", "Short")
    assert (s["plainmodel"]["model"], s["plainmodel"]["scaffold"]) == ("plainmodel", "unknown")
    assert [w.row for w in c.warnings if w.code == "subject-fallback"] == [5]
    t = c.table.astype({"benchmark": str, "task": str})
    assert set(zip(t["benchmark"], t["task"])) == {("bench", "t1"), ("other", "t2")}
    assert c.n_trials == 8


def test_pyirt_sidecar_alias_file_is_used(tmp_path):
    p = jsonl(tmp_path, "runs.jsonl", [{"subject_id": "my_agent_gpt4", "responses": {"t1": 1}}])
    write(tmp_path, "runs.aliases.toml", ALIASES)
    c = pyirt.read(p)
    assert c.provenance["aliases_chosen"] == "sidecar"
    assert c.provenance["subjects"]["my_agent_gpt4"]["model"] == "GPT-4"


def test_pyirt_bad_alias_file(tmp_path):
    p = jsonl(tmp_path, "r.jsonl", [{"subject_id": "a", "responses": {"t": 1}}])
    bad = write(tmp_path, "bad.toml", "[[subject_patterns]]\nregex = '(unclosed'\n")
    with pytest.raises(CorpusError) as exc:
        pyirt.read(p, aliases=bad)
    issue = find(issues_of(exc), "bad-alias-file")
    assert issue.file == str(bad) and issue.column == "subject_patterns[1]"
    not_toml = write(tmp_path, "nt.toml", "this is = = not toml")
    with pytest.raises(CorpusError) as exc:
        pyirt.read(p, aliases=not_toml)
    assert "TOML" in find(issues_of(exc), "bad-alias-file").message


def test_pyirt_errors_name_line_and_field(tmp_path):
    p = jsonl(tmp_path, "bad.jsonl", [
        {"subject_id": "a", "responses": {"t1": 1, "t2": 0}},
        '{"subject_id": "b", "responses": {"t1": 1,}',
        {"subject_id": "c"},
        {"subject_id": "d", "responses": {"t1": 2}},
        {"subject_id": "e", "responses": {"t1": {"successes": 6, "trials": 5}}},
        {"subject_id": "a", "responses": {"t3": 1}},
        {"responses": {"t1": 1}},
    ])
    with pytest.raises(CorpusError) as exc:
        pyirt.read(p, aliases=None, benchmark="b")
    got = {(i.code, i.row, i.column) for i in issues_of(exc)}
    assert ("bad-json", 2, None) in got
    assert ("missing-field", 3, "responses") in got
    assert ("bad-response", 4, "responses.t1") in got
    assert ("bad-response", 5, "responses.t1") in got
    assert ("duplicate-subject", 6, "subject_id") in got
    assert ("missing-field", 7, "subject_id") in got
    assert all(i.file == str(p) and i.fix for i in issues_of(exc))
    over = find(issues_of(exc), "bad-response")
    assert "not 0 or 1" in over.message


def test_pyirt_successes_above_trials_message(tmp_path):
    p = jsonl(tmp_path, "bad.jsonl", [{"subject_id": "e", "responses": {"t1": {"successes": 6, "trials": 5}}}])
    with pytest.raises(CorpusError) as exc:
        pyirt.read(p, aliases=None, benchmark="b")
    issue = only = issues_of(exc)[0]
    assert len(issues_of(exc)) == 1 and only.row == 1
    assert "successes (6) > trials (5)" in issue.message and "t1" in issue.message


# -- normalized results ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, rows, models, tasks, successes, has_trial", [
    ("gdpval", 3520, 16, 220, 1654, False),
    ("swebench", 2994, 6, 500, 971, False),
    ("mlebench", 494, 13, 38, 17, False),
    ("cybench", 112, 8, 15, 49, True),
])
def test_normalized_counts(bridge_dir, name, rows, models, tasks, successes, has_trial):
    c = normalized.read(bridge_dir / f"{name}_normalized_results.jsonl")
    assert c.format == "normalized"
    assert c.n_records == rows and c.n_trials == rows  # one binary trial per line
    assert c.n_levels("model") == models
    assert c.n_levels("task") == tasks
    assert c.n_successes == successes
    assert c.has_trial_ids is has_trial
    assert set(c.table["benchmark"].astype(str)) == {name}
    assert set(c.table["scaffold"].astype(str)) == {"unknown"}
    assert find(c.warnings, "scaffold-unknown").count == rows
    if not has_trial:
        assert c.provenance["trial"].startswith("none")


def test_normalized_bridge_metadata_columns(bridge_dir):
    c = normalized.read(bridge_dir / "gdpval_normalized_results.jsonl")
    for col in ("input_tokens", "output_tokens", "reasoning_tokens", "total_tokens", "num_turns"):
        assert col in c.table
    assert c.table["input_tokens"].iloc[0] == 4445.0


def test_normalized_mlebench_verifiers_and_rules(bridge_dir):
    path = bridge_dir / "mlebench_normalized_results.jsonl"
    c = normalized.read(path)
    assert c.verifier_columns == ["verifier.above_median", "verifier.any_medal", "verifier.valid_submission"]
    assert int(c.table["verifier.valid_submission"].sum()) == 420
    assert "all-pass" in c.provenance["scoring"]
    assert c.table["soft_score"].between(0, 1).all()
    assert normalized.read(path, scoring="direct").n_successes == 36  # first verifier: above_median
    assert normalized.read(path, scoring="direct", verifier="valid_submission").n_successes == 420
    assert normalized.read(path, scoring="threshold", gamma=0.5).n_successes == 36
    with pytest.raises(CorpusError) as exc:
        normalized.read(path, scoring="threshold")
    assert find(issues_of(exc), "bad-option").column == "gamma"
    with pytest.raises(CorpusError):
        normalized.read(path, scoring="direct", verifier="no_such")


def test_normalized_metr_rows(bridge_dir):
    c = normalized.read(bridge_dir / "cybench_normalized_results.jsonl")
    assert c.provenance["style"] == "metr"
    assert c.n_levels("trial") == 8  # run_id: one run per model
    assert "cost" not in c.table  # generation_cost is 0.0 on every row: not recorded
    assert find(c.warnings, "cost-all-zero").column == "generation_cost"
    assert c.table["human_minutes"].notna().all() and "soft_score" in c.table
    kept = normalized.read(bridge_dir / "cybench_normalized_results.jsonl", zero_cost="keep", scaffold="cybench-agent")
    assert kept.has_cost and kept.table["cost"].eq(0).all()
    assert set(kept.table["scaffold"].astype(str)) == {"cybench-agent"}
    assert not any(w.code == "scaffold-unknown" for w in kept.warnings)


def test_normalized_repeats_get_sequence_trials(tmp_path):
    row = {"model": "m", "benchmark": "b", "task_id": "t", "score": 1, "metadata": {"input_tokens": 5}}
    p = jsonl(tmp_path, "rep.jsonl", [row, {**row, "score": 0, "metadata": {"input_tokens": 7}}, row,
                                      {**row, "task_id": "u"}])
    c = normalized.read(p)
    assert list(c.table["trial"].astype(str)) == ["1", "2", "3", "1"]
    assert "sequence number" in c.provenance["trial"]
    w = find(c.warnings, "repeated-trials")
    assert w.row == 2 and w.count == 2 and "identical" in w.message


def test_normalized_errors_name_line_and_field(tmp_path):
    ok = {"model": "m", "benchmark": "b", "task_id": "t1", "score": 1}
    p = jsonl(tmp_path, "bad.jsonl", [ok, {**ok, "task_id": "t2", "score": 0.5}, {**ok, "task_id": "t3", "score": None}])
    with pytest.raises(CorpusError) as exc:
        normalized.read(p)
    got = {(i.code, i.row, i.column) for i in issues_of(exc)}
    assert ("missing-field", 3, "score") in got
    p2 = jsonl(tmp_path, "bad2.jsonl", [ok, {**ok, "task_id": "t2", "score": 0.5}])
    with pytest.raises(CorpusError) as exc:
        normalized.read(p2)
    issue = find(issues_of(exc), "non-binary-result")
    assert (issue.row, issue.column) == (2, "score") and "threshold" in issue.fix
    assert normalized.read(p2, scoring="threshold", gamma=0.5).n_successes == 2
    p3 = jsonl(tmp_path, "bad3.jsonl", [ok, "not json", {"model": "m", "benchmark": "b", "score": 1}])
    with pytest.raises(CorpusError) as exc:
        normalized.read(p3)
    got = {(i.code, i.row, i.column) for i in issues_of(exc)}
    assert ("bad-json", 2, None) in got and ("missing-field", 3, "task_id") in got


def test_normalized_verifier_values_must_be_binary(tmp_path):
    row = {"model": "m", "benchmark": "b", "task_id": "t", "score": {"a": 1, "b": 3}}
    p = jsonl(tmp_path, "v.jsonl", [{**row, "score": {"a": 1, "b": 0}, "task_id": "s"}, row])
    with pytest.raises(CorpusError) as exc:
        normalized.read(p)
    issue = find(issues_of(exc), "non-binary-verifier")
    assert (issue.row, issue.column) == (2, "score.b")


# -- detection -------------------------------------------------------------------------------------------------
def test_detect_real_files(tb_dir, bridge_dir):
    assert detect_format(tb_dir / "meta.json") == "terminal-bench"
    assert detect_format(tb_dir / "responses_raw.jsonl") == "py-irt"
    assert detect_format(bridge_dir / "all_a_pyirt.jsonl") == "py-irt"
    for name in ("gdpval", "swebench", "mlebench", "cybench"):
        assert detect_format(bridge_dir / f"{name}_normalized_results.jsonl") == "normalized"
    for not_a_corpus in (bridge_dir / "human_minutes_by_task.jsonl", bridge_dir / "model_run_mapping.json",
                         tb_dir / "LICENSE"):
        with pytest.raises(CorpusError) as exc:
            detect_format(not_a_corpus)
        issue = find(issues_of(exc), "unknown-format")
        assert "--format" in issue.fix and all(f in issue.fix for f in DESCRIPTIONS)


def test_detect_canonical_files(tmp_path):
    assert detect_format(write(tmp_path, "c.csv", "benchmark,task,model,scaffold,result\nb,t,m,s,1\n")) == "csv"
    assert detect_format(write(tmp_path, "c.tsv", "benchmark\ttask\n")) == "tsv"
    assert detect_format(write(tmp_path, "c.txt", "benchmark\ttask\tmodel\n")) == "tsv"
    canon = {"benchmark": "b", "task": "t", "model": "m", "scaffold": "s", "result": 1}
    assert detect_format(jsonl(tmp_path, "c.jsonl", [canon])) == "jsonl"
    assert detect_format(jsonl(tmp_path, "c.json", [canon])) == "jsonl"
    # a scaffold field marks canonical rows even with BRIDGE-like field names
    assert detect_format(jsonl(tmp_path, "d.jsonl", [{"benchmark": "b", "task_id": "t", "model": "m",
                                                      "scaffold": "s", "score": 1}])) == "jsonl"
    pd.DataFrame([canon]).to_parquet(tmp_path / "c.parquet")
    assert detect_format(tmp_path / "c.parquet") == "parquet"
    with pytest.raises(CorpusError):
        detect_format(jsonl(tmp_path, "x.jsonl", [{"foo": 1}]))
    with pytest.raises(CorpusError):
        detect_format(write(tmp_path, "empty.csv", ""))


def test_importer_registry():
    assert set(IMPORTERS) == {"inspect", "terminal-bench", "py-irt", "normalized", "hal"}
    for module in IMPORTERS.values():
        assert callable(module.sniff) and callable(module.read)


def test_load_corpus_dispatches_to_importers(tb_dir):
    from ddr_explorer.core.corpus.io import load_corpus

    assert load_corpus(tb_dir / "meta.json").n_records == 7387
    assert load_corpus(tb_dir / "responses_raw.jsonl", format="py-irt", aliases="terminal-bench-2").n_records == 7304


# -- demo corpus -------------------------------------------------------------------------------------------------
def test_demo_corpus_is_bundled_with_attribution():
    demo = REPO / "resources" / "demo"
    c = read_canonical(demo / "terminal-bench-2.csv")
    assert (c.n_records, c.n_trials, c.n_levels("model"), c.n_levels("scaffold"), c.n_levels("agent")) == (
        7387, 36867, 29, 18, 81)
    assert list(c.table.columns) == ["benchmark", "task", "model", "scaffold", "trial", "successes", "trials"]
    readme = (demo / "README.md").read_text()
    for needle in ("dariakryvosheieva/agent-psychometrics", "62851ff8", "Terminal-Bench 2.0", "MIT"):
        assert needle in readme
    assert "MIT License" in (demo / "LICENSE-terminal-bench-2").read_text()


def test_demo_corpus_regenerates_identically(tb_dir, tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_demo_corpus", REPO / "tools" / "make_demo_corpus.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    tool.build(tb_dir, tmp_path)
    demo = REPO / "resources" / "demo"
    for name in ("terminal-bench-2.csv", "README.md", "LICENSE-terminal-bench-2"):
        assert (tmp_path / name).read_bytes() == (demo / name).read_bytes(), name


def test_demo_matches_meta_json(tb_meta):
    demo = read_canonical(REPO / "resources" / "demo" / "terminal-bench-2.csv")
    pd.testing.assert_frame_equal(cells(demo.table, ("model", "scaffold", "trial", "task")),
                                  cells(tb_meta.table, ("model", "scaffold", "trial", "task")))


def test_options_of_other_formats_are_ignored_with_a_warning(tmp_path):
    p = write(tmp_path, "meta.json", json.dumps(_mini_meta({"a": "1/5"})))
    c = terminal_bench.read(p, aliases="bridge", scoring=None)
    w = find(c.warnings, "option-ignored")
    assert w.column == "aliases" and sum(x.code == "option-ignored" for x in c.warnings) == 1


def test_pyirt_sniff_long_first_line():
    line = json.dumps({"subject_id": "s", "responses": {f"item-{i}": i % 2 for i in range(20000)}}).encode()
    assert len(line) > 65536
    assert pyirt.sniff(Path("x.jsonl"), line[:65536])
    assert not normalized.sniff(Path("x.jsonl"), line[:65536])
    assert not pyirt.sniff(Path("x.jsonl"), b'{"model": "m", "task_id": "t", "score": 1}\n')


@pytest.mark.parametrize("text, line", [
    ('{"subject_id": "s/m", "responses": {"t1": 1,\\u0020"t1": 0, "t2": 0}}\n', 1),
    ('{"subject_id": "s/m", "responses": {"t2": 0}}\n{"subject_id": "s/n", "subject_id": "x", "responses": {}}\n', 2),
])
def test_a_json_key_given_twice_in_py_irt_is_refused_with_its_line(tmp_path, text, line):
    """{"t1": 1, "t1": 0} read t1 as 0 without a word (JSON keeps the last value)."""
    from ddr_explorer.core.corpus.io import load_corpus

    p = tmp_path / "r.jsonl"
    p.write_text(text.replace("\\u0020", " "))
    with pytest.raises(CorpusError) as exc:
        load_corpus(p, format="py-irt")
    (issue,) = [i for i in exc.value.issues if i.code == "duplicate-json-key"]
    assert issue.row == line and "is given twice in one object" in issue.message


def test_a_json_key_given_twice_in_canonical_json_lines_is_named(tmp_path):
    from ddr_explorer.core.corpus.io import load_corpus

    p = tmp_path / "c.jsonl"
    p.write_text('{"benchmark":"b","task":"t2","model":"m","scaffold":"s","result":0}\n'
                 '{"benchmark":"b","task":"t1","model":"m","scaffold":"s","result":1,"result":0}\n')
    with pytest.raises(CorpusError) as exc:
        load_corpus(p)
    (issue,) = exc.value.issues
    assert (issue.code, issue.row, issue.column) == ("duplicate-json-key", 2, "result")


def test_py_irt_numbers_that_a_float_rounds_to_whole_are_refused_as_written(tmp_path):
    """0.99999999999999999 was read as 1 (a pass); trials 2.0000000000000001 as 2."""
    from ddr_explorer.core.corpus.io import load_corpus

    p = tmp_path / "near.jsonl"
    p.write_text('{"subject_id": "s/m", "responses": {"t1": 0.99999999999999999, "t2": 0}}\n'
                 '{"subject_id": "s/n", "responses": {"t1": {"successes": 1, "trials": 2.0000000000000001}, '
                 '"t2": 1.0}}\n')
    with pytest.raises(CorpusError) as exc:
        load_corpus(p, format="py-irt")
    first, second = exc.value.issues
    assert first.row == 1 and "the response 0.99999999999999999 is not 0 or 1" in first.message
    assert second.row == 2 and "'trials': 2.0000000000000001} needs whole-number" in second.message
