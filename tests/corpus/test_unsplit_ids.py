"""Subject ids that name no scaffold: pooled under one scaffold (the default) or left out, by choice.

The fixture ``fixtures/tb_binary_leaderboard.jsonl`` is a binary Terminal-Bench-style leaderboard in
py-irt form: 12 run ids ``<harness>_<model>_at_<org>`` (4 harnesses x 3 models, split by the shipped
terminal-bench-2 alias file) and 4 that name no harness (two bare model names, ``Ob-1`` and ``warp``),
12 tasks, one 0/1 result per id and task (made with numpy's generator seeded 46).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ddr_explorer.core import cli
from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.corpus.issues import CorpusError
from ddr_explorer.core.inspection import inspect_corpus

LEADERBOARD = Path(__file__).parent / "fixtures" / "tb_binary_leaderboard.jsonl"
UNSPLIT = ["gpt-5-mini", "claude-opus-4-5", "Ob-1", "warp"]
SCAFFOLDS = ["Claude Code", "Codex CLI", "Goose", "Terminus 2"]


def test_collapse_is_the_default_and_says_so():
    c = load_corpus(LEADERBOARD)
    assert (c.n_records, c.n_levels("model"), c.n_levels("scaffold")) == (192, 6, 1)
    assert set(c.table["scaffold"].astype(str)) == {"(scaffolds not separated)"}
    assert c.provenance["unsplit_ids_left_out"] is None
    assert c.provenance["scaffolds_not_separated"]["unsplit"] == UNSPLIT
    w = next(w for w in c.warnings if w.code == "scaffold-unknown")
    assert w.message.startswith("4 of 16 subject ids name no scaffold for some or all of their records")
    assert "(--unsplit-ids collapse, the default)" in w.message and "--unsplit-ids drop" in w.fix
    assert "unsplit_ids" not in c.provenance["load_options"]  # the default is not written into sessions


def test_drop_keeps_the_split_ids_scaffolds_and_names_the_ids_left_out():
    c = load_corpus(LEADERBOARD, unsplit_ids="drop")
    assert (c.n_records, c.n_levels("model"), c.n_levels("scaffold")) == (144, 3, 4)
    assert sorted(set(c.table["scaffold"].astype(str))) == SCAFFOLDS
    assert not set(c.table["trial"].astype(str)) & set(UNSPLIT)
    assert c.provenance["scaffolds_not_separated"] is None
    left = c.provenance["unsplit_ids_left_out"]
    assert (left["choice"], left["unsplit"], left["records"]) == ("drop", UNSPLIT, 48)
    w = next(w for w in c.warnings if w.code == "unsplit-ids-left-out")
    assert w.count == 4 and w.message == (
        "4 of 16 subject ids name no scaffold and were left out (--unsplit-ids drop), 48 records: gpt-5-mini, "
        "claude-opus-4-5, Ob-1, warp. The other 12 ids keep their 4 scaffolds (Claude Code, Codex CLI, Goose, "
        "Terminus 2), which are fitted; the systems left out are not ranked.")
    assert not [w for w in c.warnings if w.code == "scaffold-unknown"]
    assert c.provenance["load_options"]["unsplit_ids"] == "drop"  # a session reopens it the same way
    s = inspect_corpus(c)["subject_ids"]
    assert (s["unsplit_ids"], s["left_out"], s["left_out_ids"], s["not_split"]) == ("drop", 4, UNSPLIT, 0)


def test_the_choice_is_a_different_corpus_and_fit():
    from ddr_explorer.core.fitting import fit_key
    from ddr_explorer.core.model import SamplerSettings, as_spec

    pooled, dropped = load_corpus(LEADERBOARD), load_corpus(LEADERBOARD, unsplit_ids="drop")
    assert pooled.content_hash != dropped.content_hash
    spec, settings = as_spec("per-benchmark"), SamplerSettings()
    assert fit_key(pooled, spec, settings) != fit_key(dropped, spec, settings)


def test_fallback_ids_are_not_said_to_get_scaffold_unknown():
    for choice, says in (("collapse", "so the file's records share the one scaffold '(scaffolds not separated)'"),
                         ("drop", "so its records are left out (--unsplit-ids drop)")):
        c = load_corpus(LEADERBOARD, unsplit_ids=choice)
        fallback = {w.message for w in c.warnings if w.code == "subject-fallback"}
        assert fallback == {f"subject '{sid}' matched no alias rule; by the whole id rule it is model '{sid}' and "
                            f"names no scaffold, {says}." for sid in ("Ob-1", "warp")}
        assert not any("scaffold 'unknown'" in w.message for w in c.warnings)


def test_drop_refuses_a_file_where_no_id_names_a_scaffold(tmp_path):
    path = tmp_path / "bare.jsonl"
    path.write_text("".join(json.dumps({"subject_id": s, "responses": {"t1": 1, "t2": 0}}) + "\n"
                            for s in ("gpt-5-mini", "claude-opus-4-5")), encoding="utf-8")
    with pytest.raises(CorpusError) as exc:
        load_corpus(path, unsplit_ids="drop")
    issue = exc.value.issues[0]
    assert issue.code == "unsplit-ids-left-out" and "would leave no record" in issue.message
    assert "--unsplit-ids collapse" in issue.fix
    with pytest.raises(CorpusError) as exc:
        load_corpus(path, unsplit_ids="split")
    assert exc.value.issues[0].code == "bad-option" and "collapse, drop" in exc.value.issues[0].fix


def test_a_table_subject_column_drops_the_same_way(tmp_path):
    rows = ["run,task,passed"] + [f"{sid},t{k},{(i + k) % 2}" for i, sid in
                                  enumerate(["terminus-2_gpt-5_2_at_openai", "codex_gpt-5_2_at_openai",
                                             "gpt-5-mini"]) for k in range(3)]
    path = tmp_path / "runs.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    cols = "subject=run,task=task,result=passed,benchmark==tb"
    assert load_corpus(path, columns=cols).n_levels("scaffold") == 1
    c = load_corpus(path, columns=cols, unsplit_ids="drop")
    assert (c.n_records, c.n_levels("scaffold")) == (6, 2)
    assert sorted(set(c.table["trial"].astype(str))) == ["codex_gpt-5_2_at_openai", "terminus-2_gpt-5_2_at_openai"]
    assert [w.count for w in c.warnings if w.code == "unsplit-ids-left-out"] == [1]


def test_ddr_inspect_fit_and_report_take_the_choice(capsys):
    assert cli.main(["inspect", "--json", str(LEADERBOARD), "--unsplit-ids", "drop"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert (js["n_scaffolds"], js["n_models"], js["subject_ids"]["left_out_ids"]) == (4, 3, UNSPLIT)
    assert cli.main(["inspect", str(LEADERBOARD), "--unsplit-ids", "drop"]) == 0
    text = capsys.readouterr().out
    assert ("  4 ids name no scaffold and were left out (--unsplit-ids drop), 48 records: gpt-5-mini, "
            "claude-opus-4-5, Ob-1, warp") in text
    assert cli.main(["inspect", str(LEADERBOARD)]) == 0
    assert "--unsplit-ids drop to leave those ids out" in capsys.readouterr().out
    from ddr_explorer.core.corpus.columns import options_from_args

    parser = cli.build_parser()
    for argv in (["fit", str(LEADERBOARD)], ["report", str(LEADERBOARD), "-o", "x.pdf"]):
        args = parser.parse_args([*argv, "--unsplit-ids", "drop"])
        assert options_from_args(args)["unsplit_ids"] == "drop"
        with pytest.raises(SystemExit):
            parser.parse_args([*argv, "--unsplit-ids", "keep"])


def test_the_sheet_names_the_choice():
    pytest.importorskip("reportlab")
    from ddr_explorer.core.reliability import VarianceComponents
    from ddr_explorer.core.report import report_inputs_from
    from ddr_explorer.core.report.content import sheet_content

    rng = np.random.default_rng(0)
    comps = VarianceComponents.from_mapping({t: (s * np.exp(rng.normal(0, 0.1, 400))) ** 2 for t, s in
                                             {"task": 2.0, "model": 1.0, "task:model": 0.8}.items()})

    def notes(corpus):
        inp = report_inputs_from(corpus, comps, fit_info={"method": "NUTS (numpyro)", "converged": True})
        return {n.title: n.text for n in sheet_content(inp).notices}

    dropped = notes(load_corpus(LEADERBOARD, unsplit_ids="drop"))
    assert dropped["Subject ids not split, left out."].startswith(
        "4 of 16 subject ids name no scaffold and were left out (--unsplit-ids drop; 48 records): gpt-5-mini, "
        "claude-opus-4-5, Ob-1, warp. The scaffolds the other ids name are fitted")
    assert "Subject ids not split." not in dropped and "One scaffold." not in dropped
    pooled = notes(load_corpus(LEADERBOARD))
    text = pooled["Subject ids not split."]
    assert text.startswith("4 of 16 subject ids name no scaffold (e.g. gpt-5-mini, claude-opus-4-5)")
    assert "(--unsplit-ids collapse, the default)" in text and "--unsplit-ids drop" in text


def test_an_analysis_keeps_the_choice(tmp_path):
    from ddr_explorer.core.session import AnalysisState

    state = AnalysisState.from_corpus(load_corpus(LEADERBOARD, unsplit_ids="drop"), LEADERBOARD)
    assert state.corpus_options == {"unsplit_ids": "drop"}
    back = AnalysisState.load(state.save(tmp_path / "a.ddr.json"))
    assert back.corpus_options == {"unsplit_ids": "drop"}
    assert load_corpus(LEADERBOARD, **back.corpus_options).n_levels("scaffold") == 4
