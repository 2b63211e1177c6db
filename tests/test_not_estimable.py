"""A quantity that depends on a term the fit does not have is reported as not estimable, with the reason.

With one 0/1 response per model-task cell ``ddr fit`` leaves task:model out (it cannot be told from the
trial residual); the capability-gap ratio s2_model / (s2_model + s2_task:model) would then be 1 in every draw
by construction.  It must never be printed as "a uniform capability gap": core, `ddr dstudy` (text and
JSON) and the DDR sheet say it is not estimable and why (the app: tests/gui/test_panels.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from ddr_explorer.core.dstudy import DStudyDesign
from ddr_explorer.core.dstudy.summary import dstudy_summary, format_dstudy
from ddr_explorer.core.reliability import (NotEstimable, VarianceComponents, capability_gap_ratio, estimand_table,
                                           gap_ratio_not_estimable)


def comps(terms) -> VarianceComponents:
    rng = np.random.default_rng(0)
    return VarianceComponents.from_mapping({t: rng.uniform(0.5, 2.0, 400) for t in terms}, source="stand-in fit")


REDUCED = comps(["task", "model"])  # the per-benchmark preset on a one-scaffold, one-response corpus


def test_the_ratio_without_a_model_by_task_term_is_not_estimable():
    why = gap_ratio_not_estimable(REDUCED, "model")
    assert "no model-by-task term" in why and "1 by construction" in why
    with pytest.raises(NotEstimable, match="capability-gap ratio is not estimable"):
        capability_gap_ratio(REDUCED, "model")
    assert gap_ratio_not_estimable(comps(["task", "model", "task:model"]), "model") is None


def test_estimand_table_and_dstudy_say_why_instead_of_a_number():
    t = estimand_table(REDUCED, "model", {"task": 40})
    assert "capability_gap_ratio" not in t.summaries
    assert "no model-by-task term" in t.to_dict()["not_estimable"]["capability_gap_ratio"]
    s = dstudy_summary(REDUCED, DStudyDesign(n_tasks=40, n_models=20))
    assert "capability_gap_ratio" not in s["estimands"]
    assert "no model-by-task term" in s["not_estimable"]["capability_gap_ratio"]
    text = format_dstudy(s)
    line = next(ln for ln in text.splitlines() if ln.startswith("capability_gap_ratio"))
    assert "not estimable" in line and "1.000" not in line


def test_the_sheet_does_not_read_a_ratio_of_one_as_a_finding():
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.files import demo_corpus_path
    from ddr_explorer.core.report import report_inputs_from, sheet_content

    corpus = load_corpus(demo_corpus_path())
    ct = sheet_content(report_inputs_from(corpus, REDUCED))
    assert ct.gap is None
    assert "not estimable" in ct.gap_text and "uniform capability gap" not in ct.gap_text
    assert "no model-by-task term" in ct.gap_text
    assert "capability_gap_ratio" in ct.summary["not_estimable"]  # page 2's table says so in its own row
    full = sheet_content(report_inputs_from(corpus, comps(["task", "model", "task:model"])))
    assert full.gap is not None and "not estimable" not in full.gap_text
