"""Inspect AI logs: real logs made here with inspect_ai's mock model provider (no network), then imported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddr_explorer.core import cli
from ddr_explorer.core.corpus.importers import detect_format, inspect_logs
from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.corpus.issues import CorpusError

inspect_ai = pytest.importorskip("inspect_ai", reason="inspect-ai is not installed (pip install -e '.[inspect]')")
# inspect_ai's own retry set-up warns about a tenacity parameter it still uses; not ours to fix
pytestmark = pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning")

# what the mock model answers, per call, in order: samples q0..q2, epoch 1 then epoch 2
ANSWERS = {"m1": ["alpha", "nope", "gamma", "alpha", "beta", "x"],
           "m2": ["alpha", "beta", "no", "a", "beta", "gamma"]}


def _make_logs(folder: Path) -> dict[str, Path]:
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, Target, accuracy, includes, scorer
    from inspect_ai.solver import TaskState, generate, system_message

    @scorer(metrics=[accuracy()])
    def first_letter():
        async def score(state: TaskState, target: Target) -> Score:
            out = state.output.completion
            if out == target.text:
                return Score(value="C")
            return Score(value="P" if out[:1] == target.text[:1] else "I")
        return score

    def outputs(model: str) -> list:
        out = []
        for i, text in enumerate(ANSWERS[model]):
            o = ModelOutput.from_content(f"mockllm/{model}", text)
            # usage set here: otherwise the mock counts tokens with tiktoken, which downloads its tables
            o.usage = ModelUsage(input_tokens=10 + i, output_tokens=2, total_tokens=12 + i, total_cost=0.001 * i)
            out.append(o)
        return out

    samples = [Sample(id=f"q{i}", input=f"Say {w}", target=w, metadata={"difficulty": i, "source": "made here"})
               for i, w in enumerate(["alpha", "beta", "gamma"])]
    made = {}
    for model, solver, fmt in (("m1", [system_message("Be brief."), generate()], "eval"),
                               ("m2", [generate()], "json")):
        task = Task(name="words", dataset=samples, solver=solver, scorer=[includes(), first_letter()], epochs=2)
        log = eval(task, model=get_model(f"mockllm/{model}", custom_outputs=outputs(model)), log_dir=str(folder),
                   display="none", log_format=fmt)[0]
        assert log.status == "success"
        made[model] = Path(log.location)
    return made


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    return _make_logs(tmp_path_factory.mktemp("inspect_logs"))


def test_detects_both_log_formats(logs):
    assert logs["m1"].suffix == ".eval" and logs["m2"].suffix == ".json"
    assert detect_format(logs["m1"]) == detect_format(logs["m2"]) == "inspect"


def test_one_record_per_sample_and_epoch(logs):
    c = load_corpus(logs["m1"], scoring="all-pass")
    t = c.table.sort_values(["trial", "task"]).reset_index(drop=True)
    assert c.format == "inspect" and c.n_records == 6
    assert set(t["model"].astype(str)) == {"m1"}  # mockllm/m1 without its provider
    assert set(t["scaffold"].astype(str)) == {"system_message > generate"}
    assert set(t["benchmark"].astype(str)) == {"words"}
    assert [str(x).rsplit(":", 1)[1] for x in t["trial"]] == ["1"] * 3 + ["2"] * 3
    # includes: alpha, nope, gamma | alpha, beta, x ; first_letter: C, I, C | C, C, I
    assert list(t["verifier.includes"]) == [1, 0, 1, 1, 1, 0]
    assert list(t["verifier.first_letter"]) == [1, 0, 1, 1, 1, 0]
    assert list(t["successes"]) == [1, 0, 1, 1, 1, 0]
    assert list(t["input_tokens"]) == [10, 11, 12, 13, 14, 15]
    assert t["cost"].round(6).tolist() == [0.0, 0.001, 0.002, 0.003, 0.004, 0.005]
    assert list(t["difficulty"]) == [0, 1, 2, 0, 1, 2]  # task metadata kept, canonical name
    assert set(t["metadata.source"]) == {"made here"}
    log = c.provenance["logs"][0]
    assert (log["model"], log["model_used"], log["task"]) == ("mockllm/m1", "m1", "words")


def test_partial_credit_needs_a_threshold(logs):
    # m2 answers "no" for gamma (first letter differs: I) and "a" for alpha (first letter matches: P = 0.5)
    with pytest.raises(CorpusError) as exc:
        load_corpus(logs["m2"])
    issue = exc.value.issues[0]
    assert issue.code == "non-binary-score" and issue.column == "verifier.first_letter"
    assert "--scoring threshold" in issue.fix and "0.5" in issue.message
    c = load_corpus(logs["m2"], scoring="threshold", gamma=0.75)
    t = c.table.sort_values(["trial", "task"]).reset_index(drop=True)
    assert list(t["score.first_letter"]) == [1, 1, 0, 0.5, 1, 1]  # partial credit: not a verifier column
    assert "verifier.first_letter" not in t.columns and list(t["verifier.includes"]) == [1, 1, 0, 0, 1, 1]
    assert list(t["soft_score"]) == [1, 1, 0, 0.25, 1, 1]
    assert list(t["successes"]) == [1, 1, 0, 0, 1, 1]
    assert set(t["scaffold"].astype(str)) == {"generate"}


def test_folder_of_logs_and_cli(logs, capsys):
    folder = logs["m1"].parent
    c = load_corpus(folder, scoring="threshold", gamma=1.0, benchmark="toy", scaffold="plain")
    assert c.n_records == 12 and c.n_levels("model") == 2 and c.n_levels("trial") == 4
    assert set(c.table["benchmark"].astype(str)) == {"toy"} and set(c.table["scaffold"].astype(str)) == {"plain"}
    assert cli.main(["inspect", str(folder), "--scoring", "threshold", "--gamma", "1", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert (s["n_records"], s["n_models"], s["n_scaffolds"], s["n_tasks"]) == (12, 2, 2, 3)


def test_bad_log_is_named(tmp_path):
    bad = tmp_path / "broken.eval"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(CorpusError) as exc:
        load_corpus(bad)
    issue = exc.value.issues[0]
    assert issue.code == "bad-log" and issue.file == str(bad)


def test_missing_inspect_ai_is_a_clear_error(monkeypatch, logs):
    import builtins

    real = builtins.__import__

    def no_inspect(name, *a, **k):
        if name.startswith("inspect_ai"):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_inspect)
    with pytest.raises(CorpusError) as exc:
        inspect_logs.read(logs["m1"])
    issue = exc.value.issues[0]
    assert issue.code == "missing-dependency" and "pip install" in issue.fix


def test_score_values():
    assert [inspect_logs.score_value(v) for v in ("C", "I", "P", "N", True, 0.25, "1", "yes", None, [1])] == \
        [1.0, 0.0, 0.5, 0.0, 1.0, 0.25, 1.0, 1.0, None, None]
    assert inspect_logs.score_value({"a": "C", "b": 0}) == {"a": 1.0, "b": 0.0}
