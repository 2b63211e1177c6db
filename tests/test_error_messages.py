"""Error messages show numbers as a user typed them: ``2``, never ``np.int64(2)``."""

import numpy as np
import pytest

from ddr_explorer.core.dstudy import DStudyDesign
from ddr_explorer.core.errors import shown


def test_shown_unwraps_numpy_scalars():
    assert shown(np.int64(2)) == "2"
    assert shown(np.float64(0.5)) == "0.5"
    assert shown(np.array(3)) == "3"
    assert shown(2) == "2"
    assert shown("a b") == "'a b'"  # strings keep their quotes so blanks stay visible
    assert shown(np.str_("x")) == "'x'"


@pytest.mark.parametrize("kw, expected", [
    ({"n_tasks": np.int64(0)}, "n_tasks should be a number >= 1, got 0"),
    ({"n_models": np.int64(0)}, "n_models should be a whole number >= 1, got 0"),
    ({"n_models": np.float64(2.5)}, "n_models should be a whole number >= 1, got 2.5"),
    ({"price_per_trial": {"b": np.float64(-1.0)}}, "should be a number >= 0 (USD), got -1.0"),
    ({"tasks_per_benchmark": {"b": np.int64(0)}, "price_per_trial": {"b": 1.0}},
     "benchmark 'b' needs at least 1 task, got 0"),
])
def test_dstudy_design_messages_print_plain_numbers(kw, expected):
    with pytest.raises(ValueError) as err:
        DStudyDesign(**kw)
    assert expected in str(err.value)
    assert "np." not in str(err.value)


def test_target_message_prints_plain_number():
    from ddr_explorer.core.dstudy.curves import _check_target
    with pytest.raises(ValueError) as err:
        _check_target(np.float64(1.5))
    assert "got 1.5;" in str(err.value)


def test_non_binary_result_message_prints_the_value_as_written(tmp_path, capsys):
    """The message once shown: a CSV result of 2 read by pandas is np.int64(2); the user wrote 2."""
    from ddr_explorer.core.cli import main

    bad = tmp_path / "bad.csv"
    bad.write_text("benchmark,task,model,scaffold,result\nb,t,m,a,1\nb,t2,m,a,2\n")
    assert main(["inspect", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "line 3, column 'result': the result 2 is not 0 or 1." in err and "np." not in err


def test_missing_response_message_in_henderson():
    import pandas as pd

    from ddr_explorer.core.henderson import henderson_method1

    table = pd.DataFrame({"person": ["a", "b", "c"], "score": [1.0, np.nan, 2.0]})
    with pytest.raises(ValueError) as err:
        henderson_method1(table, ["person"], response="score")
    assert "not numeric in row 2 (nan)" in str(err.value)  # was "(np.float64(nan))"
