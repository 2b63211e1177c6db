"""DISCO distance components against their definition (seed 000 Eqs. 18-19; Rizzo & Szekely 2010)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddr_explorer.core.estimators.design import MixedDesign
from ddr_explorer.core.estimators.disco import disco, disco_scores, pairwise_abs_sum

FIXTURES = Path(__file__).parent / "fixtures"


def brute_eta(x, g):
    """Eqs. (18)-(19) with explicit double loops."""
    n = len(x)
    s_t = sum(abs(x[i] - x[j]) for i in range(n) for j in range(i + 1, n)) / n
    s_w = 0.0
    for level in np.unique(g):
        xs = x[g == level]
        s_w += sum(abs(xs[i] - xs[j]) for i in range(len(xs)) for j in range(i + 1, len(xs))) / len(xs)
    return (s_t - s_w) / s_t, s_t, s_w


def energy_between(x, g):
    """Rizzo & Szekely's between-sample component: sum_{j<k} n_j n_k / (2N) * energy distance (alpha = 1)."""
    levels = np.unique(g)
    total = 0.0
    for a in range(len(levels)):
        for b in range(a + 1, len(levels)):
            xa, xb = x[g == levels[a]], x[g == levels[b]]
            e = (2 * np.abs(xa[:, None] - xb[None, :]).mean() - np.abs(xa[:, None] - xa[None, :]).mean()
                 - np.abs(xb[:, None] - xb[None, :]).mean())
            total += len(xa) * len(xb) / (2 * len(x)) * e
    return total


def test_scores_match_the_definition_and_the_energy_distance_identity():
    rng = np.random.default_rng(4)
    x = np.round(rng.gamma(2.0, 1.0, 60), 3)
    g = rng.integers(0, 5, 60)
    h = rng.integers(0, 3, 60)
    res = disco_scores(x, {"g": g, "h": h})
    eta, s_t, s_w = brute_eta(x, g)
    assert res.eta["g"] == pytest.approx(eta, rel=1e-12)
    assert res.s_total == pytest.approx(s_t, rel=1e-12) and res.s_within["g"] == pytest.approx(s_w, rel=1e-12)
    assert s_t - s_w == pytest.approx(energy_between(x, g), rel=1e-10)
    assert res.eta["h"] == pytest.approx(brute_eta(x, h)[0], rel=1e-12)
    assert sum(res.shares.values()) == pytest.approx(1.0)
    assert res.shares["g"] == pytest.approx(res.eta["g"] / (res.eta["g"] + res.eta["h"]))


def test_pairwise_sum_by_sorting():
    x = np.array([3.0, -1.0, 2.5, 2.5, 7.0])
    assert pairwise_abs_sum(x)[0] == pytest.approx(sum(abs(a - b) for i, a in enumerate(x) for b in x[i + 1:]))


def test_binomial_cells_equal_expanded_trials():
    cells = pd.read_csv(FIXTURES / "binary_cells.csv")
    d = MixedDesign.from_spec(cells, "per-benchmark")
    res = disco(d)
    idx = np.repeat(np.arange(d.n_cells), d.n.astype(int))
    y = np.concatenate([[1.0] * int(k) + [0.0] * int(n - k) for k, n in zip(d.s, d.n)])
    flat = disco_scores(y, {name: d.codes[t][idx] for t, name in enumerate(d.term_names)})
    for name in d.term_names:
        assert res.eta[name] == pytest.approx(flat.eta[name], rel=1e-12), name
    # interactions group more finely, so they separate at least as much dispersion as their main effects
    assert res.eta["task:model"] >= res.eta["task"] and res.eta["task:model"] >= res.eta["model"]


def test_constant_data_is_refused():
    with pytest.raises(ValueError, match="no dispersion"):
        disco_scores(np.ones(5), {"g": np.array([0, 0, 1, 1, 1])})
