"""`ddr dstudy --components`: a D-study from a paper's table, no corpus needed."""

from __future__ import annotations

import json

import pytest

from ddr_explorer.core.cli import main
from ddr_explorer.core.components_io import ComponentsFileError, read_components

# seed 000 Table 8: posterior means of the group-level standard deviations (pooled fit, Eq. 6)
TABLE8_SD = {"model": 0.78, "benchmark:model": 0.52, "model:scaffold": 0.36, "benchmark:model:scaffold": 0.55,
             "benchmark:task:model": 0.88, "scaffold": 0.79, "benchmark": 2.45, "benchmark:task": 2.41,
             "benchmark:scaffold": 0.69, "benchmark:task:scaffold": 1.03}


@pytest.fixture
def table8_json(tmp_path):
    p = tmp_path / "table8.json"
    p.write_text(json.dumps({"scale": "sd", "components": TABLE8_SD}))
    return p


def dstudy(capsys, *argv) -> dict:
    assert main(["dstudy", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_fixed_budget_of_126_tasks_one_versus_nine_benchmarks(capsys, table8_json):
    # Corollary 3.2 check (Hardy et al. 2026): 0.4530 in one benchmark, 0.7296 spread over nine (n_a = 1)
    one = dstudy(capsys, "--components", table8_json, "--n-tasks", 126, "--n-benchmarks", 1)
    nine = dstudy(capsys, "--components", table8_json, "--n-tasks", 14, "--n-benchmarks", 9)
    assert one["estimands"]["Erho2"]["median"] == pytest.approx(0.4530, abs=5e-5)
    assert nine["estimands"]["Erho2"]["median"] == pytest.approx(0.7296, abs=5e-5)
    assert {"estimands", "min_n", "p_target"} <= set(nine)
    assert nine["p_target"] == 0.0  # 0.73 < 0.85
    # the MA/n_a term caps the benchmark-only ceiling at .6084/(.6084+.1296) = 0.824 < 0.85
    assert nine["min_n"]["n_benchmarks"]["p_reachable"] == 0.0
    assert nine["min_n"]["n_scaffolds"]["median"] == 3


def test_csv_of_variances_equals_json_of_sds(tmp_path, table8_json):
    csv = tmp_path / "t8.csv"
    csv.write_text("term,sigma2\n" + "\n".join(f"{k},{v * v!r}" for k, v in TABLE8_SD.items()) + "\n")
    a, b = read_components(csv), read_components(table8_json)
    for term in TABLE8_SD:
        assert a.draws[term][0] == pytest.approx(b.draws[term][0])


@pytest.mark.parametrize("text,match", [
    ('{"components": {"model": 1}}', "scale"),
    ("term,value\nmodel,1\n", "sigma"),
    ("term,sigma\nmodel,abc\n", "line 2"),
    ('{"scale": "sd", "components": {"model": -1}}', "model"),
    ("{oops", "line 1"),
])
def test_bad_components_files(tmp_path, text, match):
    p = tmp_path / ("c.json" if text.startswith("{") else "c.csv")
    p.write_text(text)
    with pytest.raises(ComponentsFileError, match=match):
        read_components(p)


def test_budget_answer(capsys, table8_json):
    out = dstudy(capsys, "--components", table8_json, "--n-tasks", 14, "--n-benchmarks", 9, "--price-per-trial", 0.5,
                 "--n-models", 10, "--budget", 5000)
    best = out["budget"]["best_design"]
    assert best["cost"] <= 5000 and best["median"] > out["estimands"]["Erho2"]["median"]


def test_bad_file_exit_code(capsys, tmp_path):
    p = tmp_path / "c.json"
    p.write_text('{"components": {"model": 1}}')
    assert main(["dstudy", "--components", str(p)]) == 2
    assert "scale" in capsys.readouterr().err


# -- the budget's tasks per benchmark (seed 000 sec. 5.4) -----------------------------------

def _priced_pooled_corpus(tmp_path):
    import pandas as pd

    import ddr_batch_fakes as bf

    sim = bf.simulate_module()
    parts = []
    for i, (bench, price) in enumerate([("cheap", 0.01), ("mid", 0.04), ("dear", 0.16)]):
        t = sim.simulate_per_benchmark(n_tasks=8, n_models=4, n_scaffolds=1, n_pairs=4, trials_per_cell=1,
                                       seed=20 + i, benchmark=bench).table
        parts.append(t.assign(cost=t["trials"] * price))
    p = tmp_path / "pooled.csv"
    pd.concat(parts, ignore_index=True).to_csv(p, index=False)
    return p


def test_budget_shows_tasks_per_benchmark(fake_sampler, capsys, tmp_path):
    from ddr_explorer.core.dstudy.allocation import POOLED_SOURCE
    from ddr_explorer.core.fitting import components_from_posterior  # noqa: F401 - same draws as the CLI

    path = _priced_pooled_corpus(tmp_path)
    argv = ["dstudy", str(path), "--preset", "pooled", "--cache", str(tmp_path / "c"), "--stop", "fixed", "--draws", "40", "--warmup",
            "10", "--chains", "2", "--budget", "20"]
    out = dstudy(capsys, *argv[1:])
    a = out["allocation"]
    assert a["benchmarks"] == ["cheap", "dear", "mid"] or set(a["benchmarks"]) == {"cheap", "mid", "dear"}
    assert a["prices"] == pytest.approx({"cheap": 0.01, "mid": 0.04, "dear": 0.16})
    assert a["variance_source"] == POOLED_SOURCE
    # 4 models x 1 scaffold x 1 replicate: a task of benchmark b costs 4 p_b; the budget is spent
    spent = sum(4 * a["prices"][b] * n for b, n in a["tasks"].items())
    assert a["costs"]["optimal"] == pytest.approx(spent) and 20 - 4 * 0.01 < spent <= 20 + 1e-9
    # one shared task variance: n_b follows 1/sqrt(p_b), so cheap:mid:dear = 4:2:1
    assert a["continuous"]["cheap"] / a["continuous"]["dear"] == pytest.approx(4.0)
    assert a["tasks"]["cheap"] > a["tasks"]["mid"] > a["tasks"]["dear"] >= 1
    assert a["summaries"]["optimal"]["median"] >= a["summaries"]["equal"]["median"]
    # the text prints the same table
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "tasks per benchmark within $20.00" in text
    assert f"{'cheap':<24}{'$0.0100':>10}" in text


def test_budget_without_per_benchmark_prices_says_why(capsys, table8_json):
    out = dstudy(capsys, "--components", table8_json, "--price-per-trial", 0.5, "--n-models", 10, "--budget", 5000)
    assert "two benchmarks" in out["allocation"]["why_none"]


@pytest.mark.parametrize("budget", ["-5", "0"])
def test_a_budget_that_is_not_positive_is_refused(capsys, table8_json, budget):
    """``--budget -5`` searched "within $-5.00"; the sheet's rule now holds for ``ddr dstudy`` too."""
    assert main(["dstudy", "--components", str(table8_json), "--budget", budget]) == 2
    assert capsys.readouterr().err.strip() == f"ddr: budget should be a positive number of USD, got {float(budget)}"
