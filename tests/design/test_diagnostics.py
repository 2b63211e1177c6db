"""All diagnostics in one pass: JSON and a large random design (core/design/diagnostics.py)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ddr_explorer.core import design
from ddr_explorer.core.corpus.corpus import Corpus


def test_diagnose_to_dict_is_json(crossed_corpus):
    out = design.diagnose(crossed_corpus).to_dict()
    assert set(out) == {"counts", "coverage", "connectivity", "separability"}
    assert set(out["separability"]) >= {"scope", "conditions", "separations", "components",
                                        "separable_components", "suggested_terms", "per_benchmark"}
    assert out["separability"]["conditions"]["iii"]["holds"] is True
    assert json.loads(json.dumps(out)) == out


def test_large_random_design_is_connected_and_fully_separable():
    # speed is measured in bench/bench_load.py, not asserted here (timed tests flake)
    rng = np.random.default_rng(0)
    n = 200_000
    df = pd.DataFrame({
        "benchmark": pd.Categorical.from_codes(rng.integers(0, 9, n), [f"b{k}" for k in range(9)]),
        "task": pd.Categorical.from_codes(rng.integers(0, 400, n), [f"t{k}" for k in range(400)]),
        "model": pd.Categorical.from_codes(rng.integers(0, 54, n), [f"m{k}" for k in range(54)]),
        "scaffold": pd.Categorical.from_codes(rng.integers(0, 13, n), [f"a{k}" for k in range(13)]),
        "successes": rng.integers(0, 2, n).astype(np.int64),
        "trials": np.ones(n, dtype=np.int64),
    })
    corpus = Corpus(table=df)
    out = design.diagnose(corpus)
    assert out.counts.records == n and out.connectivity.connected
    assert out.separability.separable_components == list(design.POOLED_TERMS)
