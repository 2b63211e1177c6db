"""Reliability by object of measurement (core/dstudy/objects.py): seed 000 Table 17's model, scaffold and system
columns from one fit, in ``ddr dstudy --json``'s ``by_object`` block, checked against hand-computed values."""

from __future__ import annotations

import math

import pytest

from ddr_explorer.core.dstudy import DStudyDesign
from ddr_explorer.core.dstudy.objects import by_object
from ddr_explorer.core.dstudy.summary import dstudy_summary, format_dstudy

E = math.pi ** 2 / 3
#: One draw of a per-benchmark fit (Eq. 2), typed in.
COMPONENTS = {"task": 1.0, "model": 1.0, "scaffold": 0.5, "task:model": 0.5, "task:scaffold": 0.25,
              "model:scaffold": 0.25}


def test_each_object_by_hand():
    out = by_object(COMPONENTS, {"task": 10.0, "scaffold": 1.0}, n_models=1)
    # model, Eq. 3 at n_a = 1: s2_M / (s2_M + s2_IM/n_i + s2_MA + e/n_i); ceiling Eq. 8; s2_M / (s2_M + s2_IM)
    assert out["model"]["Erho2"]["mean"] == pytest.approx(1 / (1 + 0.05 + 0.25 + E / 10))
    assert out["model"]["Erho2_task_ceiling"]["mean"] == pytest.approx(1 / 1.25)
    assert out["model"]["task_reliability"]["mean"] == pytest.approx(1 / 1.5)
    # scaffold at one model per scaffold: s2_A / (s2_A + s2_IA/n_i + s2_MA + e/n_i)
    assert out["scaffold"]["Erho2"]["mean"] == pytest.approx(0.5 / (0.5 + 0.025 + 0.25 + E / 10))
    assert out["scaffold"]["task_reliability"]["mean"] == pytest.approx(0.5 / 0.75)
    # system, Eq. 4: (s2_M + s2_A + s2_MA) / (... + (s2_IM + s2_IA + e)/n_i)
    assert out["system"]["Erho2"]["mean"] == pytest.approx(1.75 / (1.75 + (0.75 + E) / 10))
    assert "task_reliability" not in out["system"]


def test_models_per_scaffold_average_the_scaffold_object():
    one = by_object(COMPONENTS, {"task": 10.0}, n_models=1)["scaffold"]["Erho2"]["mean"]
    many = by_object(COMPONENTS, {"task": 10.0}, n_models=20)["scaffold"]["Erho2"]["mean"]
    assert many == pytest.approx(0.5 / (0.5 + 0.025 + 0.25 / 20 + E / 200))
    assert many > one + 0.3


def test_a_fit_without_scaffold_terms_has_the_model_only():
    out = by_object({"task": 1.0, "model": 1.0, "task:model": 0.5}, {"task": 10.0}, n_models=5)
    assert list(out) == ["model"]


def test_the_dstudy_summary_carries_means_and_every_object():
    design = DStudyDesign(n_tasks=10, n_scaffolds=1, n_models=1)
    s = dstudy_summary(COMPONENTS, design)
    assert s["estimands"]["Erho2"]["mean"] == pytest.approx(s["by_object"]["model"]["Erho2"]["mean"])
    assert set(s["by_object"]) == {"model", "scaffold", "system"}
    assert "by object of measurement" in format_dstudy(s)
