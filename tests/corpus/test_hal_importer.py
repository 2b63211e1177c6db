"""The HAL response matrix of Hardy et al. (2026) as a named format: detection, the authors' filtering
(exact duplicates and missing scores dropped and counted), located errors, and the paper's design summary
on the real file (29,923 rollouts / 9 benchmarks / 54 models / 13 scaffolds, seed 000 sec. 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddr_explorer.core.corpus.importers import DESCRIPTIONS, IMPORTERS, detect_format, hal
from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.corpus.issues import CorpusError

HEADER = "run_id,benchmark,task_id,agent_name,model_name,reasoning_effort,score\n"

#: Seven rows: row 4 repeats row 2 exactly (dropped), row 6 has no score (dropped), row 7 is a second run of
#: task t1 by the same agent (a replicate: kept, although its facets and score equal row 2's).
ROWS = ("r1,gaia,t1,hal_generalist,gpt_4_1high,high,1\n"
        "r1,gaia,t2,hal_generalist,gpt_4_1high,high,0\n"
        "r1,gaia,t1,hal_generalist,gpt_4_1high,high,1\n"
        "r2,gaia,t1,hf_open_deep_research,o3medium,medium,0\n"
        "r2,gaia,t2,hf_open_deep_research,o3medium,medium,\n"
        "r3,gaia,t1,hal_generalist,gpt_4_1high,high,1\n"
        "r4,usaco,p9,usaco_episodic_semantic,o3medium,medium,1\n")


def hal_file(tmp_path: Path, body: str = ROWS, header: str = HEADER, name: str = "hal.csv") -> Path:
    p = tmp_path / name
    p.write_text(header + body, encoding="utf-8")
    return p


def test_detected_by_its_header_and_listed(tmp_path):
    assert detect_format(hal_file(tmp_path)) == "hal"
    assert IMPORTERS["hal"] is hal and "agent_name" in DESCRIPTIONS["hal"]
    # a canonical CSV that names its scaffold column 'scaffold' is not claimed
    plain = tmp_path / "plain.csv"
    plain.write_text("benchmark,task,model,scaffold,result\ngaia,t1,m,a,1\n", encoding="utf-8")
    assert detect_format(plain) == "csv"


def test_agent_name_is_the_scaffold_and_filtering_is_counted(tmp_path):
    c = load_corpus(hal_file(tmp_path))
    assert c.format == "hal"
    assert c.n_records == 5 and c.n_successes == 3
    assert (c.n_levels("benchmark"), c.n_levels("model"), c.n_levels("scaffold"), c.n_levels("task")) == (2, 2, 3, 3)
    assert sorted(c.table["scaffold"].astype(str).unique()) == ["hal_generalist", "hf_open_deep_research",
                                                                "usaco_episodic_semantic"]
    assert c.provenance["filtering"] == {"rows_read": 7, "duplicate_rows_dropped": 1,
                                         "missing_scores_dropped": 1, "rows_kept": 5}
    dup = next(w for w in c.warnings if w.code == "duplicate-row-dropped")
    miss = next(w for w in c.warnings if w.code == "missing-score-dropped")
    assert (dup.row, dup.count) == (4, 1)
    assert (miss.row, miss.column, miss.count) == (6, "score", 1)
    # the replicate (run r3) is kept: task t1 of that agent has two trials, both solved
    cells = c.aggregated()
    t1 = cells[(cells["task"] == "t1") & (cells["model"] == "gpt_4_1high")]
    assert (int(t1["successes"].iloc[0]), int(t1["trials"].iloc[0])) == (2, 2)


def test_a_bad_score_is_located(tmp_path):
    with pytest.raises(CorpusError) as exc:
        load_corpus(hal_file(tmp_path, ROWS + "r5,gaia,t3,hal_generalist,o3medium,medium,0.5\n"))
    bad = [i for i in exc.value.issues if i.severity == "error"][0]
    assert (bad.row, bad.column) == (9, "score")


def test_a_missing_column_is_named_with_the_fix(tmp_path):
    p = hal_file(tmp_path, "r1,gaia,t1,hal_generalist,1\n", header="run_id,benchmark,task_id,agent_name,score\n")
    with pytest.raises(CorpusError) as exc:
        hal.read(p)
    (issue,) = exc.value.issues
    assert (issue.column, issue.row) == ("model_name", 1) and "--columns" in issue.fix


def test_several_efforts_under_one_model_name_are_said(tmp_path):
    body = ROWS + "r6,usaco,p9,usaco_episodic_semantic,o3medium,high,0\n"
    c = load_corpus(hal_file(tmp_path, body))
    w = next(w for w in c.warnings if w.code == "effort-not-in-model-name")
    assert (w.row, w.column, w.count) == (5, "model_name", 1)


def test_the_real_file_gives_the_papers_design_summary(corpora_dir):
    path = corpora_dir / "hal" / "hal_response_matrix.csv"
    if not path.exists():
        pytest.skip(f"{path} not found")
    c = load_corpus(path)
    assert c.format == "hal"
    assert (c.n_records, c.n_levels("benchmark"), c.n_levels("model"), c.n_levels("scaffold")) == (29923, 9, 54, 13)
    # 1,117 benchmark-task units and 209 model-scaffold pairs (seed 000 App. C.1.1 and Table 8)
    assert (c.n_levels("task"), c.n_levels("agent")) == (1117, 209)
    assert c.provenance["filtering"]["duplicate_rows_dropped"] == 0
    gaia = load_corpus(path, slice="benchmark=gaia")
    # seed 000 Table 2: GAIA has 21 models, 165 tasks, 2 scaffolds, 34 model-scaffold pairs
    assert (gaia.n_levels("model"), gaia.n_levels("task"), gaia.n_levels("scaffold"),
            gaia.n_levels("agent")) == (21, 165, 2, 34)


def test_a_benchmark_slice_has_its_own_design_warnings(tmp_path):
    path = hal_file(tmp_path)
    whole = load_corpus(path)
    (never,) = [w for w in whole.warnings if w.code == "task-all-fail"]
    assert never.message.startswith("1 of 3 tasks")  # gaia/t2: its one scored rollout failed
    usaco = load_corpus(path, slice="benchmark=usaco")
    assert not [w for w in usaco.warnings if w.code == "task-all-fail"]  # its one task was solved
    assert [w.code for w in usaco.warnings if w.code == "duplicate-row-dropped"]  # the file's own warnings stay
