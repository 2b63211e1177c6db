"""Which analyses a corpus supports, and why not, in the analysis's own words (the app's run buttons)."""

import pytest

from ddr_explorer.core.analyses.availability import OFFERED, unavailable_reason
from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.files import demo_corpus_path


def test_terminal_bench_supports_all_but_failure_modes_and_the_frontier():
    c = load_corpus(demo_corpus_path())
    reasons = {name: unavailable_reason(c, name) for name in OFFERED}
    assert reasons["analyses"] is None and reasons["methods"] is None and reasons["capability"] is None
    assert "has no error_category column" in reasons["failure-modes"]
    assert "no release_date column" in reasons["frontier"] and "Krsteski et al. 2026" in reasons["frontier"]


def test_the_failure_mode_demo_supports_failure_modes():
    c = load_corpus(demo_corpus_path().with_name("failure-modes-SIMULATED.csv"))
    assert unavailable_reason(c, "failure-modes") is None


def test_an_unknown_analysis_is_refused():
    with pytest.raises(ValueError, match="unknown analysis 'loo'"):
        unavailable_reason(load_corpus(demo_corpus_path()), "loo")
