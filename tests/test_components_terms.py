"""A components file names facets the D-study knows: "Task" or "tasks" is refused, never a new facet that
``--n-tasks`` does not reach (Erho2 0.132 at 100 tasks instead of 0.938)."""

from __future__ import annotations

import json

import pytest

from ddr_explorer.core.cli import main
from ddr_explorer.core.components_io import ComponentsFileError, read_components


def _json(tmp_path, components: dict, name="c.json"):
    p = tmp_path / name
    p.write_text(json.dumps({"scale": "variance", "components": components}, indent=1))
    return p


@pytest.mark.parametrize("term, bad, hint", [("Task", "Task", "did you mean 'task'? "),
                                             ("tasks:model", "tasks", "did you mean 'task'? "),
                                             ("model:harness", "harness", "")])
def test_an_unknown_facet_is_refused_with_its_line_and_the_known_ones(tmp_path, term, bad, hint):
    p = _json(tmp_path, {"model": 1.0, term: 2.0})
    with pytest.raises(ComponentsFileError) as info:
        read_components(p)
    assert str(info.value) == (f"{p}, line 5: the term {term!r} names an unknown facet {bad!r}; {hint}a term joins "
                               "facets from benchmark, task, model, scaffold, agent, step, error_category, judge "
                               "with ':' (or is 'residual')")


def test_csv_terms_are_checked_on_their_line(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text("term,sigma2\nmodel,1\nTask,30\n")
    with pytest.raises(ComponentsFileError, match=r"c.csv, line 3: the term 'Task' names an unknown facet 'Task'"):
        read_components(p)
    p.write_text("term,sigma2\nmodel,1\ntask,30\nmodel,2\n")
    with pytest.raises(ComponentsFileError, match=r"line 4: the term 'model' is given twice \(first on line 2\)"):
        read_components(p)


def test_spaces_around_a_facet_are_layout_and_n_tasks_reaches_it(tmp_path, capsys):
    p = _json(tmp_path, {"model": 1.0, " task ": 30.0, "task:model": 3.0})
    assert set(read_components(p).draws) == {"model", "task", "task:model"}
    assert main(["dstudy", "--components", str(p), "--n-tasks", "100", "--json"]) == 0
    few = json.loads(capsys.readouterr().out)["estimands"]["Erho2"]["median"]
    # sigma2_model / (sigma2_model + (3 + pi^2/3) / 100) = 1 / (1 + 6.29/100)
    assert few == pytest.approx(1 / (1 + (3 + 3.289868) / 100), abs=1e-4)


def test_a_key_given_twice_is_refused_not_the_last_kept(tmp_path):
    p = tmp_path / "c.json"
    p.write_text('{"scale": "sd",\n "components": {"model": 0.8,\n  "model": 0.1}}')
    with pytest.raises(ComponentsFileError, match=r"c.json, line 3: the key 'model' is given twice in one object"):
        read_components(p)
