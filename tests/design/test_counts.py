"""Facet counts and coverage on hand-built corpora (core/design/counts.py; SPEC section 6)."""

from __future__ import annotations

import numpy as np
import pytest

from ddr_explorer.core import design


def test_counts_crossed(crossed_corpus):
    c = design.facet_counts(crossed_corpus)
    assert (c.records, c.trials, c.cells, c.replicated_cells) == (24, 24, 24, 0)
    assert c.successes == 12
    # "t1" on B1 and on B2 are different tasks: 6, not 3
    assert (c.benchmarks, c.tasks, c.models, c.scaffolds, c.agents) == (2, 6, 2, 2, 4)
    assert c.per_benchmark["B1"] == {
        "records": 12, "trials": 12, "successes": 6, "cells": 12,
        "tasks": 3, "models": 2, "scaffolds": 2, "agents": 4,
    }


def test_coverage_crossed(crossed_corpus):
    cov = design.coverage_matrix(crossed_corpus)
    assert list(cov.trials.index) == ["m1", "m2"] and list(cov.trials.columns) == ["a1", "a2"]
    np.testing.assert_array_equal(cov.trials.to_numpy(), [[6, 6], [6, 6]])
    np.testing.assert_array_equal(cov.tasks.to_numpy(), [[6, 6], [6, 6]])
    assert cov.fill == 1.0
    b1 = design.coverage_matrix(crossed_corpus, benchmark="B1")
    np.testing.assert_array_equal(b1.trials.to_numpy(), [[3, 3], [3, 3]])
    with pytest.raises(ValueError, match="benchmark 'B9' is not in the corpus"):
        design.coverage_matrix(crossed_corpus, benchmark="B9")
