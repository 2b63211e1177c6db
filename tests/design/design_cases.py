"""Hand-built corpora for the design-diagnostics tests (registered as ``ddr_design_cases`` by conftest.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ddr_explorer.core.corpus.corpus import Corpus

FACETS = ["benchmark", "task", "model", "scaffold"]


def make_corpus(rows, trials=None) -> Corpus:
    """Corpus from (benchmark, task, model, scaffold) tuples, one trial each unless ``trials`` says."""
    df = pd.DataFrame(list(rows), columns=FACETS)
    for c in FACETS:
        df[c] = df[c].astype("category")
    n = len(df)
    df["trials"] = np.asarray(trials if trials is not None else np.ones(n), dtype=np.int64)
    df["successes"] = (np.arange(n) % 2).astype(np.int64) * (df["trials"].to_numpy() > 0)
    return Corpus(table=df)


def crossed(benchmarks, tasks, models, scaffolds):
    """Fully crossed design; task labels are reused across benchmarks on purpose (nesting test)."""
    return [(b, t, m, a) for b in benchmarks for t in tasks for m in models for a in scaffolds]
