"""``ddr inspect``'s summary (core/inspection.py): articulation vertices of one- and two-benchmark designs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ddr_explorer.core import design
from ddr_explorer.core.corpus.corpus import Corpus
from ddr_explorer.core.inspection import format_summary, inspect_corpus

FACETS = ["benchmark", "task", "model", "scaffold"]


def make_corpus(rows) -> Corpus:
    df = pd.DataFrame(list(rows), columns=FACETS)
    for c in FACETS:
        df[c] = df[c].astype("category")
    df["trials"] = np.full(len(df), 4, dtype=np.int64)
    df["successes"] = (np.arange(len(df)) % 5).astype(np.int64).clip(0, 4)
    return Corpus(table=df)


def test_the_lone_benchmark_is_not_reported_as_an_articulation_vertex():
    # one benchmark, two agents with nothing in common: without the benchmark vertex the
    # graph falls apart, as it does for any one-benchmark corpus whose agents share nothing
    corpus = make_corpus([("B1", t, m, a) for t in ("t1", "t2") for m, a in (("m1", "a1"), ("m2", "a2"))])
    assert design.connectivity(corpus).articulation_vertices == ["benchmark:B1"]  # the graph's own fact
    s = inspect_corpus(corpus)
    assert s["n_benchmarks"] == 1
    assert s["articulation_vertices"] == []
    assert s["diagnostics"]["connectivity"]["articulation_vertices"] == ["benchmark:B1"]
    text = format_summary(s)
    assert "  articulation vertices: n/a (the design has one benchmark)" in text.splitlines()
    assert "benchmark:B1" not in text


def test_a_benchmark_that_splits_a_two_benchmark_design_is_still_reported():
    # B1 alone carries m1 and a1; removing it leaves {m1, a1} apart from {B2, m2, a2}
    rows = [("B1", "t1", "m1", "a1"), ("B1", "t1", "m2", "a2"), ("B2", "t1", "m2", "a2"), ("B2", "t2", "m2", "a2")]
    s = inspect_corpus(make_corpus(rows))
    assert s["n_benchmarks"] == 2
    assert s["articulation_vertices"] == ["benchmark:B1"]
    assert "  articulation vertices: benchmark:B1" in format_summary(s).splitlines()


def test_the_demo_corpus_says_it_has_one_benchmark(repo_root):
    from ddr_explorer.core.corpus.io import load_corpus

    s = inspect_corpus(load_corpus(repo_root / "resources" / "demo" / "terminal-bench-2.csv"))
    assert s["articulation_vertices"] == []
    assert s["diagnostics"]["connectivity"]["articulation_vertices"] == ["benchmark:terminal-bench-2.0"]
    assert "articulation vertices: n/a (the design has one benchmark)" in format_summary(s)
