"""The corpus's cells: records with a missing facet are left out (core/design/cells.py)."""

from __future__ import annotations

import numpy as np

from ddr_design_cases import crossed, make_corpus

from ddr_explorer.core import design


def test_missing_facet_rows_are_left_out():
    corpus = make_corpus(crossed(["B1", "B2"], ["t1"], ["m1"], ["a1"]))
    corpus.table.loc[0, "model"] = np.nan
    c = design.facet_counts(corpus)
    assert c.records == 1 and c.dropped_records == 1
