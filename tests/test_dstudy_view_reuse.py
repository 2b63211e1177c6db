"""DStudyModel.view(previous=...): the curve of the facet that moved is reused, and nothing changes.

A slider move of the app changes one size; the curve over that facet holds every other size at the
design, so it is the same curve with its marker moved (fewer sorts per slider move).
"""

from __future__ import annotations

import numpy as np
import pytest

from ddr_explorer.core.dstudy import DStudyDesign, DStudyModel
from ddr_explorer.core.dstudy.grids import curve_grid
from ddr_explorer.core.reliability import VarianceComponents

SD = {"task": 3.0, "model": 1.74, "scaffold": 0.37, "task:model": 1.39, "task:scaffold": 1.11, "model:scaffold": 0.46}
OVERS = ("n_tasks", "n_scaffolds", "n_replicates")


@pytest.fixture(scope="module")
def setup():
    rng = np.random.default_rng(1)
    comps = VarianceComponents.from_mapping({t: (v * np.exp(rng.normal(0, 0.25, 600))) ** 2 for t, v in SD.items()})
    d = DStudyDesign(n_tasks=89, n_scaffolds=3, n_replicates=5, n_models=29, price_per_trial=0.8)
    grids = {f: curve_grid(f, [d.size_of(f)]) for f in OVERS}
    return DStudyModel(comps, band_draws=300), d, grids


def _same(a, b):
    assert a.design == b.design
    assert a.readouts.coefficient.median == b.readouts.coefficient.median
    for f in OVERS:
        x, y = a.curves[f], b.curves[f]
        for k in ("grid", "median", "hdi68", "hdi95", "p_target"):
            np.testing.assert_array_equal(getattr(x, k), getattr(y, k), err_msg=f"{f}.{k}")
        assert x.observed_x == y.observed_x and x.observed.median == y.observed.median
        assert x.asymptote.median == y.asymptote.median and x.target == y.target


@pytest.mark.parametrize("field,value", [("n_tasks", 20.0), ("n_scaffolds", 7.0), ("n_replicates", 2.0)])
def test_moving_one_facet_reuses_its_curve_and_changes_nothing(setup, field, value):
    model, d, grids = setup
    before = model.view(d, grids, 0.85, overs=OVERS)
    moved = d.with_size(field, value)
    fresh = model.view(moved, grids, 0.85, overs=OVERS)
    reused = model.view(moved, grids, 0.85, overs=OVERS, previous=before)
    _same(reused, fresh)
    assert reused.curves[field].median is before.curves[field].median  # not recomputed
    for other in set(OVERS) - {field}:  # the other curves hold n_field: recomputed
        assert reused.curves[other].median is not before.curves[other].median


def test_no_reuse_when_more_than_the_facet_changed(setup):
    model, d, grids = setup
    before = model.view(d, grids, 0.85, overs=OVERS)
    for moved, target in ((d.with_size("n_tasks", 20.0).with_size("n_scaffolds", 2.0), 0.85),
                          (d.with_size("n_tasks", 20.0), 0.9)):
        got = model.view(moved, grids, target, overs=OVERS, previous=before)
        _same(got, model.view(moved, grids, target, overs=OVERS))
        assert got.curves["n_tasks"].median is not before.curves["n_tasks"].median


def test_another_claim_is_not_reused(setup):
    import dataclasses

    model, d, grids = setup
    before = model.view(d, grids, 0.9, overs=OVERS)
    moved = dataclasses.replace(d, n_tasks=20.0, claim="absolute")
    got = model.view(moved, grids, 0.9, overs=OVERS, previous=before)
    _same(got, model.view(moved, grids, 0.9, overs=OVERS))
    assert got.curves["n_tasks"].estimand == "Phi"
