"""Hold-out by REML refits (core/analyses/heldout_reml.py) and the estimator choice (core/analyses/heldout_choice.py).

The corpus is simulated on the observed scale with known components (one benchmark, 8 models x 30 tasks,
10 trials per cell; p = 0.5 + model + task + model:task, SDs 0.12, 0.15, 0.06), so REML's observed-scale
components are the simulated ones.  The long-run reference is the same study over 200 splits (seed 12345):
r = -0.779 (split SE 0.028), mean gap -0.0488 (split SE 0.0102), measured with this module's ``simulated``
and ``held_out_study_reml(corpus, "per-benchmark", n_splits=200, seed=12345)`` (26 s on a loaded 2-core box).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ddr_explorer.core.analyses import defaults
from ddr_explorer.core.analyses.heldout import HeldOutReliability, held_out_jobs
from ddr_explorer.core.analyses.heldout_choice import choose_heldout_estimator
from ddr_explorer.core.analyses.heldout_reml import held_out_study_reml

LONG_RUN_R, LONG_RUN_R_SE = -0.779, 0.028
LONG_RUN_GAP, LONG_RUN_GAP_SE = -0.0488, 0.0102
SDS = {"model": 0.12, "task": 0.15, "task:model": 0.06}


def simulated(seed: int = 1, n_models: int = 8, n_tasks: int = 30, n_trials: int = 10, effects: bool = False):
    """Binomial cells whose success probabilities are a sum of random effects on the observed scale
    (with ``effects``: also the model and model:task effects drawn)."""
    from ddr_explorer.core.corpus.corpus import Corpus

    rng = np.random.default_rng(seed)
    a, b = rng.normal(0, SDS["model"], n_models), rng.normal(0, SDS["task"], n_tasks)
    c = rng.normal(0, SDS["task:model"], (n_models, n_tasks))
    rows = []
    for m in range(n_models):
        for t in range(n_tasks):
            p = float(np.clip(0.5 + a[m] + b[t] + c[m, t], 0.02, 0.98))
            rows.append(dict(benchmark="B", task=f"t{t}", model=f"m{m}", scaffold="s",
                             successes=int(rng.binomial(n_trials, p)), trials=n_trials))
    table = pd.DataFrame(rows)
    for col in ("benchmark", "task", "model", "scaffold"):
        table[col] = table[col].astype("category")
    corpus = Corpus(table=table, name="simulated")
    return (corpus, a, c) if effects else corpus


@pytest.fixture(scope="module")
def study():
    return held_out_study_reml(simulated(), "per-benchmark", n_splits=20)


def test_the_reml_hold_out_agrees_with_its_long_run_reference(study):
    h = study.result
    assert h.estimator == "reml" and h.scale == "observed 0/1" and h.n_splits == 20
    r_se, gap_se = h.split_se
    # within three of the two runs' combined split SEs (20 splits here, 200 in the reference)
    assert abs(h.pearson_r - LONG_RUN_R) < 3 * np.hypot(r_se, LONG_RUN_R_SE), h.pearson_r
    assert abs(h.mean_gap - LONG_RUN_GAP) < 3 * np.hypot(gap_se, LONG_RUN_GAP_SE), h.mean_gap
    assert h.pearson_r < -0.5  # the complementary parts of a split: the anti-correlation seed 003 reports
    assert study.n_fits == study.n_converged == 40 and not study.errors


def test_the_reml_projection_reads_the_known_components_at_the_held_out_design(study):
    """Mean projected Erho2 (the training parts' REML components read at the held-out design) against the
    Erho2 of the simulated components at that design
    (30 tasks, 3 trials per cell): sigma2_model / (sigma2_model + sigma2_tm / 30 + sigma2_e / 90), with the
    simulated effects' own variances and the Bernoulli residual of the cells (unbiased mean of p (1 - p))."""
    corpus, a, c = simulated(effects=True)
    t = corpus.table
    phat = t["successes"] / t["trials"]
    residual = float(np.mean(phat * (1 - phat) * t["trials"] / (t["trials"] - 1)))
    assert 0.19 < residual < 0.23
    s2m, s2tm = float(np.var(a, ddof=1)), float(np.var(c, ddof=1))
    truth = s2m / (s2m + s2tm / 30 + residual / 90)
    # the 70% parts (7 trials per cell) recover it: 0.756 over the 200 reference splits against 0.762; the 30%
    # parts' own fits read lower (0.707 there: a ratio of noisy components), the reference's negative gap
    assert abs(float(np.mean(study.result.projected)) - truth) < 0.02, (np.mean(study.result.projected), truth)
    assert float(np.mean(study.result.held_out)) < truth


def test_the_reml_hold_out_uses_the_bayesian_hold_outs_splits(study):
    """Same seeds, same cells: each split's trial counts are those of the Bayesian refits' jobs."""
    _, _, sizes = held_out_jobs(simulated(), "per-benchmark", n_splits=20)
    got = list(zip(study.splits["n_train_trials"], study.splits["n_held_out_trials"]))
    assert got == sizes
    d = study.to_dict()
    assert d["estimator"] == "reml" and d["scale"] == "observed 0/1"
    assert d["pearson_r_split_se"] == pytest.approx(study.result.split_se[0])


@pytest.mark.parametrize("seconds, other, expected", [
    (4 * 60, 60, "bayes"),      # a fast box: 5 min with the other analyses
    (16 * 60, 0, "reml"),       # a 2-core box: the 16 minutes
    (12 * 60, 4 * 60, "reml"),  # under the budget alone, over it with the strata beside it
    (None, 0, "bayes"),         # no estimate: the estimator before the choice
])
def test_auto_chooses_bayes_when_the_estimate_fits_the_budget(seconds, other, expected):
    c = choose_heldout_estimator("auto", seconds, other_seconds=other)
    assert c.estimator == expected and c.requested == "auto"
    if expected == "reml":
        assert c.line.startswith("hold-out by REML refits (observed 0/1 scale): Bayesian refits were estimated at "
                                 f"{seconds // 60} min on this machine")
        assert c.line.endswith(("(16 min with the sheet's other analyses)" if other else "") + ", over the 15 min "
                               "budget; run with --heldout-estimator bayes for them")
    assert choose_heldout_estimator("bayes", 3600).estimator == "bayes"
    assert choose_heldout_estimator("reml", 1).estimator == "reml"


def test_auto_in_the_plan_follows_the_monkeypatched_estimate(monkeypatch, study):
    """plan_sheet_analyses: a slow Bayesian estimate makes the hold-out REML, priced at 2 x splits REML fits."""
    import ddr_explorer.core.analyses.engine as engine
    import ddr_explorer.core.analyses.heldout_reml as hr

    class Parent:  # what the plan reads of a parent fit
        spec = "per-benchmark"
        settings = defaults.split_settings(None)

    import ddr_explorer.core.analyses.calibration as calibration

    monkeypatch.setattr(calibration, "DEFAULT_CALIBRATION", 1.0)  # the refit estimate as priced, uncalibrated
    monkeypatch.setattr(engine, "compile_seconds", lambda posterior: 0.0)
    monkeypatch.setattr(hr, "reml_part_seconds", lambda corpus, spec: 0.5)
    monkeypatch.setattr(defaults, "_n_cached", lambda *a, **k: 0)
    corpus = simulated()
    for per_refit, expected in ((1.0, "bayes"), (60.0, "reml")):  # 100 refits: 100 s or 100 min
        monkeypatch.setattr(engine, "refit_seconds", lambda *a, _s=per_refit, **k: _s)
        plan = defaults.plan_sheet_analyses(corpus, Parent(), which=("heldout",), heldout_estimator="auto")
        assert plan.heldout_estimator == expected
        assert plan.seconds["heldout"] == pytest.approx(100.0 if expected == "bayes" else 100 * 0.5)
    assert "1.7 h on this machine" in plan.heldout_choice.line


def test_the_sheet_reads_a_reml_hold_out_on_its_gap_and_says_so():
    from ddr_explorer.core.report.content import REML_R_CAVEAT, held_out_reading, held_out_verdict

    x = np.linspace(0.90, 0.95, 10)
    reml = HeldOutReliability(x, x[::-1] + 0.001, estimator="reml",
                              choice=choose_heldout_estimator("auto", 16 * 60).line)
    bayes = HeldOutReliability(x, x[::-1] + 0.001)
    assert held_out_verdict(reml) == held_out_verdict(bayes) == "not split by split"
    # one rule on the gap and its spread for both estimators (core.analyses.gap_verdict): +0.001 is no gap
    assert held_out_reading(bayes).startswith("No detectable gap between the training-cell projection")
    assert "On average the projection holds, but not split by split" in held_out_reading(bayes)
    # REML's r never decides the reading: it says what to run for the split-by-split one
    assert held_out_reading(reml).startswith("No detectable gap") and "(REML refits.)" in held_out_reading(reml)
    assert REML_R_CAVEAT in held_out_reading(reml) and "--heldout-estimator bayes" in REML_R_CAVEAT
    assert reml.estimator_label == "REML refits, observed 0/1 scale"
    short = HeldOutReliability(x, x[::-1] - 0.001, estimator="reml")  # a tiny shortfall is no detectable gap
    assert held_out_verdict(HeldOutReliability(x, x[::-1] - 0.001)) == "not split by split"
    assert "(REML refits.) Still demand" in held_out_reading(short)
    far = held_out_reading(HeldOutReliability(x, x - 0.06, estimator="reml"))
    assert far.startswith("The training-cell projection is optimistic here") and "(REML refits.) Demand" in far
    with pytest.raises(ValueError, match="unknown estimator"):
        HeldOutReliability(x, x, estimator="lme4")


def test_ddr_report_runs_the_hold_out_by_reml_when_the_bayesian_estimate_is_over_the_budget(fake_sampler, capsys,
                                                                                           tmp_path, monkeypatch):
    """The default ``--heldout-estimator auto`` with Bayesian refits estimated at 10 min each (6 of them): REML runs, the
    terminal and decision 4 say so, and ``--json`` of ``ddr analyses`` carries the estimator and scale."""
    pypdf = pytest.importorskip("pypdf")
    import json

    import ddr_explorer.core.analyses.engine as engine
    from ddr_explorer.core.cli import main

    import ddr_explorer.core.analyses.calibration as calibration

    monkeypatch.setattr(calibration, "DEFAULT_CALIBRATION", 1.0)  # the refit estimate as priced, uncalibrated
    monkeypatch.setattr(engine, "refit_seconds", lambda *a, **k: 600.0)
    csv = tmp_path / "sim.csv"
    simulated().table.to_csv(csv, index=False)
    pdf = tmp_path / "sheet.pdf"
    fast = ["--stop", "fixed", "--draws", "40", "--warmup", "10", "--chains", "2"]
    assert main(["report", str(csv), "-o", str(pdf), "--cache", str(tmp_path / "c"), "--analyses", "heldout",
                 "--splits", "3", *fast]) == 0
    err = capsys.readouterr().err
    assert ("ddr: hold-out by REML refits (observed 0/1 scale): Bayesian refits were estimated at 60 min on this "
            "machine, over the 15 min budget; run with --heldout-estimator bayes for them") in err
    assert "split 1 train" not in err  # no Bayesian refit ran
    assert len(fake_sampler) == 1  # the main fit only
    text = " ".join(" ".join((p.extract_text() or "").split()) for p in pypdf.PdfReader(str(pdf)).pages)
    assert "Across 3 random 70/30 splits" in text and "(REML refits, observed 0/1 scale) correlate at" in text
    assert "Hold-out by REML refits (observed 0/1 scale): Bayesian refits were estimated at 60 min" in text
    assert "the split-by-split reading needs --heldout-estimator bayes" in text  # REML's r does not decide it
    assert main(["analyses", str(csv), "--which", "heldout", "--splits", "3", "--heldout-estimator", "reml",
                 "--cache", str(tmp_path / "c"), "--json", "--quiet", *fast]) == 0
    h = json.loads(capsys.readouterr().out)["heldout"]
    assert (h["estimator"], h["scale"], h["n_splits"]) == ("reml", "observed 0/1", 3)
    assert h["choice"] == "hold-out by REML refits (observed 0/1 scale): asked for with --heldout-estimator reml"


def test_the_method_notes_say_what_a_reml_parts_convergence_was_checked_on(study):
    """The sheet's method notes: "Held-out splits: 40 of 40 refits converged, by the REML optimiser's own test"."""
    import dataclasses

    from ddr_explorer.core.report.content import refit_convergence_notes

    class Inputs:
        def analysis(self, key):
            return study.result if key == "held_out" else None

    class Content:
        inputs = Inputs()

    notes = refit_convergence_notes(Content())
    assert notes == ["Held-out splits: 40 of 40 refits converged, by the REML optimiser's own test (point "
                     "estimates: no Monte Carlo error)."]
    assert dataclasses.replace(study.result, choice="x").converged
