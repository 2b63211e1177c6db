"""Which analyses a corpus supports, and why not, in the analysis's own words (the app's run buttons)."""

import pytest

from ddr_explorer.core.analyses.availability import OFFERED, unavailable_reason
from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.files import demo_corpus_path


def test_terminal_bench_supports_all_but_failure_modes_the_frontier_and_capability():
    c = load_corpus(demo_corpus_path())
    reasons = {name: unavailable_reason(c, name) for name in OFFERED}
    assert reasons["analyses"] is None and reasons["methods"] is None
    assert "has no error_category column" in reasons["failure-modes"]
    assert "no release_date column" in reasons["frontier"] and "Krsteski et al. 2026" in reasons["frontier"]
    # one benchmark: no scale across benchmarks, no transfer between them
    assert reasons["capability"] == (
        "The capability scale and the transfer study compare benchmarks: one IRT scale across benchmarks and how "
        "a ranking on one carries to another (Krsteski et al. 2026, sec. 5.3). The corpus has one benchmark "
        "(terminal-bench-2.0); open a corpus with two or more.")


def test_the_failure_mode_demo_supports_failure_modes_and_capability():
    c = load_corpus(demo_corpus_path().with_name("failure-modes-SIMULATED.csv"))  # two benchmarks
    assert unavailable_reason(c, "failure-modes") is None
    assert unavailable_reason(c, "capability") is None


def test_an_unknown_analysis_is_refused():
    with pytest.raises(ValueError, match="unknown analysis 'loo'"):
        unavailable_reason(load_corpus(demo_corpus_path()), "loo")
