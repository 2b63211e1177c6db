"""Pooled corpora whose benchmarks share no model: said and refused, not fitted silently.

Two leaderboards concatenated (3 models on A, 3 others on B): benchmark-by-model variance cannot be told
from model variance, so ``ddr inspect`` warns, ``ddr dstudy`` and the sheet leave the number of
benchmarks unanswered, and the sheet's box says why.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from ddr_explorer.core import cli
from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.design.overlap import model_overlap, sizes_not_answered
from ddr_explorer.core.dstudy import DStudyDesign
from ddr_explorer.core.dstudy.summary import dstudy_summary, format_dstudy
from ddr_explorer.core.reliability import VarianceComponents


def _boards(shared: bool) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    groups = (("A", ["m1", "m2", "m3"]), ("B", ["m3" if shared else "m4", "m5", "m6"]))
    return pd.DataFrame([dict(benchmark=b, task=f"{b}{t}", model=m, scaffold="s", result=int(rng.random() < 0.5))
                         for b, ms in groups for m in ms for t in range(5)])


def test_the_overlap_of_two_leaderboards(tmp_path, capsys):
    apart, joined = model_overlap(_boards(False)), model_overlap(_boards(True))
    assert apart.no_model_in_common and apart.shared == () and apart.models_per_benchmark == {"A": 3, "B": 3}
    assert not joined.no_model_in_common and joined.shared == ("m3",) and joined.cannot_tell() is None
    assert "the 2 benchmarks share no model (each of the 6 models ran on one benchmark)" in apart.cannot_tell()
    assert sizes_not_answered(apart.to_dict()) == {"n_benchmarks": apart.cannot_tell()}
    assert sizes_not_answered(joined) == {}
    path = tmp_path / "two.csv"
    _boards(False).to_csv(path, index=False)
    assert cli.main(["inspect", str(path)]) == 0
    assert "WARNING: the 2 benchmarks share no model" in capsys.readouterr().out
    assert cli.main(["inspect", str(path), "--json"]) == 0
    import json

    assert json.loads(capsys.readouterr().out)["model_overlap"]["no_model_in_common"] is True


def test_dstudy_leaves_the_number_of_benchmarks_unanswered():
    c = VarianceComponents.from_mapping({"benchmark": 0.5, "benchmark:task": 1.0, "model": 1.0,
                                         "benchmark:task:model": 0.5}, source="typed")
    d = DStudyDesign(n_tasks=5, n_benchmarks=2, n_models=6)
    assert "n_benchmarks" in dstudy_summary(c, d)["min_n"]  # what was printed without the check
    why = model_overlap(_boards(False)).cannot_tell()
    s = dstudy_summary(c, d, not_answered={"n_benchmarks": why})
    assert "n_benchmarks" not in s["min_n"] and "n_tasks" in s["min_n"] and s["not_answered"] == {"n_benchmarks": why}
    assert f"smallest benchmarks                 not answered: {why}" in format_dstudy(s)


def test_the_sheet_says_what_the_design_cannot_tell(tmp_path):
    from ddr_explorer.core.inspection import inspect_corpus
    from ddr_explorer.core.report.content import _notices

    path = tmp_path / "two.csv"
    _boards(False).to_csv(path, index=False)
    summary = inspect_corpus(load_corpus(path))
    inputs = SimpleNamespace(corpus_summary=summary, fit_info={"converged": True},
                             components=SimpleNamespace(terms=("benchmark", "benchmark:task", "model")),
                             has_cost=False, observed_design=DStudyDesign(n_tasks=5, n_benchmarks=2, n_models=6),
                             analysis=lambda key: None)
    notes = {n.title: n.text for n in _notices(SimpleNamespace(inputs=inputs, headline={"median": 0.9},
                                                                estimand="Erho2"))}
    assert "how many benchmarks a ranking needs is not answered" in notes["No model in common across benchmarks."]


def test_two_pyirt_files_concatenated_are_two_groups_under_one_benchmark(tmp_path, capsys):
    """No benchmark names: one benchmark "unknown" holds both files, and the benchmark-model-scaffold graph
    is connected through it; the models of the two files never attempted a common task."""
    import json

    path = tmp_path / "both.jsonl"
    with path.open("w") as f:
        for models, items in ((["gpt-4o", "claude-3-opus"], "a"), (["llama-3-70b", "mistral-large"], "b")):
            for k, m in enumerate(models):
                f.write(json.dumps({"subject_id": m, "responses": {f"{items}{t}": (t + k) % 2 for t in range(6)}}) + "\n")
    corpus = load_corpus(path)
    assert corpus.table["benchmark"].nunique() == 1
    ov = model_overlap(corpus)
    assert ov.n_task_groups == 2 and not ov.no_model_in_common
    assert model_overlap(_boards(True)).n_task_groups == 1  # a shared model links the two boards
    assert cli.main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "incidence graph: connected" in out  # what inspect said, and still says of that graph
    assert "WARNING: the models fall into 2 groups that attempted no task in common" in out
    from ddr_explorer.core.inspection import inspect_corpus
    from ddr_explorer.core.report.content import _notices

    inputs = SimpleNamespace(corpus_summary=inspect_corpus(corpus), fit_info={"converged": True},
                             components=SimpleNamespace(terms=("task", "model")), has_cost=False,
                             observed_design=DStudyDesign(n_tasks=12, n_models=4), analysis=lambda key: None)
    titles = [n.title for n in _notices(SimpleNamespace(inputs=inputs, headline={"median": 0.9}, estimand="Erho2"))]
    assert "Models that never met on a task." in titles and "Disconnected design." not in titles


def test_ddr_dstudy_preview_refuses_the_benchmark_count(tmp_path, capsys):
    path = tmp_path / "two.csv"
    _boards(False).to_csv(path, index=False)
    assert cli.main(["dstudy", str(path), "--preview", "--json"]) == 0
    out = __import__("json").loads(capsys.readouterr().out)
    assert "n_benchmarks" not in out["min_n"] and "n_tasks" in out["min_n"]
    assert out["not_answered"]["n_benchmarks"].startswith("the 2 benchmarks share no model")
