"""One number for one thing: a count says what it counts, a share is not rounded to
a certainty it does not have.

- A D-study design's trial count is a full design's (models x scaffolds x tasks x trials per cell);
  the corpus's own trials and cells are printed beside it, never under the same word.
- A share strictly between 0 and 1 never prints as 0% or 100%.
"""

from __future__ import annotations

import pandas as pd

from ddr_explorer.core.dstudy import DStudyDesign
from ddr_explorer.core.dstudy.summary import dstudy_summary, format_dstudy
from ddr_explorer.core.dstudy.trial_counts import corpus_counts, design_trials_text
from ddr_explorer.core.formatting import facet_words, fmt_pct
from ddr_explorer.core.reliability import VarianceComponents


def _binary_leaderboard() -> pd.DataFrame:
    """3 models x 4 tasks, one trial per cell except two cells run five times: 12 cells, 20 trials."""
    rows = [dict(benchmark="b", task=f"t{t}", model=f"m{m}", scaffold="s", successes=1, trials=1)
            for m in range(3) for t in range(4)]
    rows[0]["trials"] = rows[5]["trials"] = 5
    return pd.DataFrame(rows)


def test_the_design_count_and_the_files_count_are_told_apart():
    table = _binary_leaderboard()
    assert corpus_counts(table) == {"trials": 20, "cells": 12}
    d = DStudyDesign(n_tasks=4, n_models=3, n_replicates=1)  # the median cell holds one trial
    w = facet_words("model", ("task", "model"))
    assert design_trials_text(d.to_dict(), w, corpus_counts(table), "x") == (
        "12 trials in a full design of these sizes (3 models x 1 scaffold per model x 4 tasks x 1 trial per cell); "
        "the corpus ran 20 trials in 12 cells")
    # the sheet passes the inspection summary's names
    assert design_trials_text(d.to_dict(), w, {"n_trials": 20, "n_cells": 12}, "x").endswith("20 trials in 12 cells")
    assert design_trials_text(d.to_dict(), w).endswith("\u00d7 1 trial per cell)")  # no corpus: no claim on it


def test_ddr_dstudy_prints_both_counts():
    c = VarianceComponents.from_mapping({"task": 1.0, "model": 1.0, "task:model": 0.5}, source="typed")
    s = dstudy_summary(c, DStudyDesign(n_tasks=89, n_models=58, n_replicates=1))
    s["corpus_counts"] = {"trials": 9968, "cells": 5101}
    text = format_dstudy(s)
    assert "58 models compared; no prices" in text
    assert ("trials: 5,162 trials in a full design of these sizes (58 models x 1 scaffold per model x 89 tasks x "
            "1 trial per cell); the corpus ran 9,968 trials in 5,101 cells") in text
    assert "5,162 trials, " not in text


def test_a_share_short_of_certain_is_not_printed_as_certain():
    assert (fmt_pct(0.998, 0), fmt_pct(1 - 0.998, 0)) == ("over 99%", "under 1%")
    assert (fmt_pct(0.9996), fmt_pct(0.0004)) == ("over 99.9%", "under 0.1%")
    assert (fmt_pct(1.0, 0), fmt_pct(0.0, 0), fmt_pct(0.994, 0), fmt_pct(0.123)) == ("100%", "0%", "99%", "12.3%")


def _typed(terms, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    return VarianceComponents.from_mapping({t: rng.gamma(20, 0.05, 200) for t in terms}, source="typed")


def test_p_above_zero_is_printed_where_it_is_named_and_not_as_an_empty_column():
    from ddr_explorer.core.report.sheet import _estimands_table

    crossed = ("task", "model", "scaffold", "task:model", "task:scaffold", "model:scaffold")
    s = dstudy_summary(_typed(crossed), DStudyDesign(n_tasks=30, n_scaffolds=3, n_models=5))
    p = s["estimands"]["delta_rho2_universe"]["prob_positive"]
    assert 0 < p < 1
    line = next(x for x in format_dstudy(s).splitlines() if x.startswith("delta_rho2_universe"))
    assert line.endswith(f"P(>0) = {p:.2f}")
    assert len(_estimands_table(s["estimands"], "Estimand")._cellvalues[0]) == 6  # with the P(> 0) column
    # one scaffold, no model-versus-scaffold contrast: no P(> 0) column standing empty
    one = dstudy_summary(_typed(("task", "model", "task:model")), DStudyDesign(n_tasks=30, n_models=5))
    assert not any("prob_positive" in e for e in one["estimands"].values())
    head = _estimands_table(one["estimands"], "Estimand")._cellvalues[0]
    assert len(head) == 5 and not any("P(" in c.text for c in head)


def test_the_observed_label_does_not_overprint_the_ceiling_label():
    """A 500-task leaderboard near its ceiling: the observed marker sits at the right end under the
    ceiling's label (rendered and looked at: "observed (500)" touched "task-only ceiling 1.00")."""
    import numpy as np
    from reportlab.graphics.shapes import String

    from ddr_explorer.core.dstudy.curves import DStudyModel
    from ddr_explorer.core.report import figures as fig
    from ddr_explorer.core.report import styles as st

    rng = np.random.default_rng(0)
    c = VarianceComponents.from_mapping({"task": rng.gamma(50, 0.04, 400), "model": rng.gamma(50, 0.02, 400),
                                         "task:model": rng.gamma(50, 0.03, 400)}, source="typed")
    curve = DStudyModel(c).curve(DStudyDesign(n_tasks=500, n_models=50), "n_tasks")
    assert curve.observed.median > 0.98 and curve.asymptote.median > 0.99  # the crowded corner

    def strings(node):
        for x in getattr(node, "contents", []):
            yield from ([x] if isinstance(x, String) else strings(x))

    def box(s):
        w = st.text_width(s.text, s.fontName, s.fontSize)
        x0 = s.x - {"start": 0.0, "middle": w / 2, "end": w}[s.textAnchor]
        return x0, s.y - 0.28 * s.fontSize, x0 + w, s.y + 0.84 * s.fontSize

    labels = {s.text: box(s) for s in strings(fig.dstudy_figure(curve, 230, 206))}
    obs, ceil = labels["observed (500)"], labels["task-only ceiling 1.00"]
    gap = 1.5  # points between the boxes: the old placement left 0.4 (the glyphs touched)
    assert (obs[3] + gap <= ceil[1] or ceil[3] + gap <= obs[1] or obs[2] + gap <= ceil[0]
            or ceil[2] + gap <= obs[0]), (obs, ceil)


def test_an_issue_names_the_files_line_line_in_json():
    from ddr_explorer.core.corpus.issues import CorpusIssue

    d = CorpusIssue("warning", "x", "a value is odd", file="f.csv", row=7, column="result").to_dict()
    assert d["line"] == 7 and "row" not in d
