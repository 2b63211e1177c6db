"""The DDR sheet for every shape of leaderboard the product can fit: ``ddr report`` exits 0 with page 1 whole.

The shapes come from ``tests/report_shapes.py`` (one benchmark or three; one scaffold, one per model or
crossed; 2, 30, 150 models; binary, k-of-n and varying trials; extreme tasks; cost, dates, task metadata,
error categories; long unicode ids; the py-irt leaderboard of 89 tasks and 112 subjects that used to end in a
traceback).  The fit is the suite's moment stand-in (``fake_sampler``): the sheet's layout, not the
posterior, is under test: the whole file takes about 20 s of CPU time (a minute of wall time on two
cores shared by several test runs).

Before the coverage block of the diagnostics page could move to the next page, six of the twelve shapes
ended in reportlab's ``AttributeError: getSpaceBefore``: every one whose model-by-scaffold coverage grid did
not fit under the fit table (112 or 150 models, or 30 models crossed with three scaffolds).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("reportlab", reason="the DDR sheet needs reportlab (pip install reportlab)")
pypdf = pytest.importorskip("pypdf", reason="reading PDF text needs pypdf (pip install pypdf)")

from ddr_explorer.core.cli import main  # noqa: E402


def _shapes_module():
    spec = importlib.util.spec_from_file_location("ddr_report_shapes", Path(__file__).with_name("report_shapes.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


shapes = _shapes_module()

QUESTIONS = ["How many tasks should we sample?", "Which difficulty bucket should we target?",
             "Which cost band should we constrain on?", "Which hold-out protocol should we demand from the vendor?",
             "How should we read a failure taxonomy?"]


def test_the_matrix_covers_every_dimension():
    """Every level of every dimension the sheet must survive is in the matrix, the issue's leaderboard first."""
    s = shapes.SHAPES
    assert len(s) == 12 and len({x.name for x in s}) == len(s)
    assert {x.benchmarks for x in s} == {1, 3}
    assert {x.scaffolds for x in s} == {"one", "per-model", "crossed"}
    assert {2, 30, 150} <= {x.models for x in s}
    assert {x.responses for x in s} == {"binary", "k-of-n", "varying"}
    assert {x.difficulty for x in s} == {"mixed", "extreme"}
    assert {x.names for x in s} == {"plain", "long-unicode"}
    assert {x.format for x in s} == {"csv", "py-irt"}
    for extra in shapes.EXTRAS:
        assert any(extra in x.extras for x in s) and any(extra not in x.extras for x in s), extra
    first = s[0]
    assert (first.format, first.benchmarks, first.tasks, first.models, first.responses) == ("py-irt", 1, 89, 112,
                                                                                            "binary")


def test_extreme_tasks_are_all_zero_and_all_one():
    table = shapes.corpus_table(shapes.Shape("x", models=5, tasks=6, responses="k-of-n", difficulty="extreme"))
    task = table.groupby("task")[["successes", "trials"]].sum()
    rate = task["successes"] / task["trials"]
    assert (rate == 0).sum() >= 2 and (rate == 1).sum() == 2
    model = table.groupby("model")[["successes", "trials"]].sum()
    assert model.loc["model-000", "successes"] == 2 * 5  # the always-solved tasks only


@pytest.mark.parametrize("shape", shapes.SHAPES, ids=lambda s: s.name)
def test_ddr_report_writes_the_whole_sheet(shape, tmp_path, fake_sampler, capsys):
    path = shapes.write_corpus(shape, tmp_path)
    out = tmp_path / "sheet.pdf"
    rc = main(["report", str(path), "-o", str(out), "--no-cache", "--analyses", "none", "--date-invariant", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "left out (" not in err and "Traceback" not in err
    reader = pypdf.PdfReader(str(out))
    assert len(reader.pages) >= 7  # page 1 and every appendix (exit 0: none left out)
    first = re.sub(r"\s+", " ", reader.pages[0].extract_text() or "")
    assert "Deployment Decision Reliability" in first and "Five decisions for a buyer" in first
    missing = [q for q in QUESTIONS if q not in first]
    assert not missing, f"page 1 lacks {missing}"
