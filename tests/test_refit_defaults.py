"""The DDR sheet's default analyses (core/analyses/defaults.py): the estimate from the parent
fit's wall time, ``ddr report`` running difficulty + hold-out + PSIS-LOO under the 15-minute budget (the
estimate printed first), naming the flag above it, ``--analyses none`` opting out, and one progress count
over the whole batch.  The sampler is the moment stand-in of ``batch_fakes``."""

from __future__ import annotations

import dataclasses

import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.analyses import defaults
from ddr_explorer.core.analyses.defaults import BatchProgress, plan_sheet_analyses
from ddr_explorer.core.cli import main
from ddr_explorer.core.fitting import fit_corpus
from ddr_explorer.core.model import SamplerSettings

import ddr_batch_fakes as bf  # noqa: E402 - registered by tests/conftest.py

FAST = ["--stop", "fixed", "--draws", "40", "--warmup", "10", "--chains", "2"]
SETTINGS = SamplerSettings(stop="fixed", draws=40, warmup=10, chains=2, seed=0)


@pytest.fixture(scope="module")
def table():
    return bf.simulate_module().simulate_per_benchmark(n_tasks=8, n_models=4, n_scaffolds=2, n_pairs=8,
                                                       trials_per_cell=2, seed=9).table


@pytest.fixture
def corpus_csv(table, tmp_path):
    p = tmp_path / "corpus.csv"
    table.to_csv(p, index=False)
    return p


def test_the_estimate_is_the_parent_pace_per_refit_plus_one_compile_per_analysis(fake_sampler, table, tmp_path):
    from ddr_explorer.core.analyses.engine import REFIT_SPEEDUP, expected_draws, refit_seconds
    from ddr_explorer.core.analyses.heldout import split_settings

    corpus = bf.corpus_of(table)
    post = fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path).posterior

    def paced(run_seconds):  # the parent's warmup + sampling took run_seconds; compile 10 s
        return dataclasses.replace(post, timings={"warmup": 0.0, "sampling": run_seconds, "compile": 10.0})

    from ddr_explorer.core.analyses.reported import ReportedQuantity
    from ddr_explorer.core.dstudy import observed_design

    from ddr_explorer.core.analyses.calibration import DEFAULT_CALIBRATION as CAL

    plan = plan_sheet_analyses(corpus, paced(100.0), n_splits=10, refit_rule="gate", cache_dir=tmp_path)
    assert plan.n_refits == {"difficulty": 4, "heldout": 20, "loo": 0}  # the fit kept every effect: no LOO refit
    # (a fixed-length parent: its strata run its fixed draws, whatever the rule, so no correction applies), times
    # the calibration of estimates against measured runs (16 / 13 before any run here)
    assert plan.calibration == {"difficulty": CAL, "heldout": CAL, "loo": 1.0}
    assert plan.seconds["difficulty"] == pytest.approx(CAL * (10.0 + 4 * refit_seconds(paced(100.0), SETTINGS)))
    split = split_settings(SETTINGS)
    # the splits stop on the Erho2 they report: their run length from its ESS per draw on the parent
    rep = (ReportedQuantity.coefficient(observed_design(corpus)),)
    assert plan.seconds["heldout"] == pytest.approx(CAL * (10.0 + 20 * refit_seconds(paced(100.0), split, reported=rep)))
    assert plan.seconds["loo"] == 0.0
    # the parent's 2 x (10 + 40) in 100 s: 1 s per chain-iteration; a difficulty refit 2 x (10 + 40) = 100 s;
    # a split refit runs as long as the gate will need at the parent's ESS per draw (engine.expected_draws)
    # (times the measured cost of a refit's chain-iteration relative to its parent's, REFIT_SPEEDUP)
    k = REFIT_SPEEDUP
    assert refit_seconds(paced(100.0), SETTINGS) == pytest.approx(100.0 * k)
    n = expected_draws(post, split, reported=rep)
    assert split.stop == "gate" and split.draws <= n <= split.max_draws
    assert refit_seconds(paced(100.0), split, reported=rep) == pytest.approx(2 * (10 + n) * k)
    assert not plan.runs_by_default
    fast = plan_sheet_analyses(corpus, paced(1.0), n_splits=10, refit_rule="gate", cache_dir=tmp_path)
    assert fast.total_seconds == pytest.approx(CAL * (20.0 + (4 * 1.0 + 20 * 0.02 * (10 + n)) * k))  # 0.01 s an iteration
    assert fast.runs_by_default
    slow = plan_sheet_analyses(corpus, paced(1000.0), n_splits=10, refit_rule="gate", cache_dir=tmp_path)
    assert not slow.runs_by_default
    assert slow.flag == "--analyses difficulty,heldout,loo --splits 10"  # the gate is the default
    assert "24 refits, estimated" in slow.describe()


def test_the_estimate_follows_the_precision_rule_when_asked(fake_sampler, table, tmp_path):
    """Under the precision rule (``--refit-rule precision``; the gate is the default) a split refit is priced at the draws that rule needs
    (engine.precision_draws: bulk ESS 100, and the median's MCSE within a tenth of the expected spread across
    splits, at most 0.005), the training and held-out parts at their own shares of the trials."""
    from ddr_explorer.core.analyses.engine import REFIT_SPEEDUP, precision_draws, reported_sd
    from ddr_explorer.core.analyses.heldout import split_settings
    from ddr_explorer.core.analyses.precision import expected_spread, needed_ess
    from ddr_explorer.core.analyses.reported import ReportedQuantity
    from ddr_explorer.core.dstudy import observed_design
    from ddr_explorer.core.model.stopping import PrecisionRule

    corpus = bf.corpus_of(table)
    post = fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path).posterior
    paced = dataclasses.replace(post, timings={"warmup": 0.0, "sampling": 100.0, "compile": 10.0})
    assert plan_sheet_analyses(corpus, paced, n_splits=10).refit_rule == "gate"
    plan = plan_sheet_analyses(corpus, paced, n_splits=10, refit_rule="precision", cache_dir=tmp_path)
    assert plan.refit_rule == "precision" and "--refit-rule precision" in plan.flag
    from ddr_explorer.core.analyses.calibration import DEFAULT_CALIBRATION as CAL

    split = split_settings(SETTINGS)
    rep = (ReportedQuantity.coefficient(observed_design(corpus)),)
    train = precision_draws(paced, split, rep, PrecisionRule(group="projected"), 0.7, 0.7)
    held = precision_draws(paced, split, rep, PrecisionRule(group="held-out"), 0.3, 0.3)
    k = REFIT_SPEEDUP
    assert plan.seconds["heldout"] == pytest.approx(CAL * (10.0 + 20 * ((2 * (10 + train) + 2 * (10 + held)) / 2) * k))
    # the tolerance of a training part: a tenth of 0.65 x the parent's SD (its expected spread across splits)
    sd = reported_sd(paced, rep)
    assert expected_spread(sd, 0.7) == pytest.approx(sd * (0.3 / 0.7) ** 0.5)
    assert needed_ess(PrecisionRule(), sd / 0.7 ** 0.5, expected_spread(sd, 0.7)) >= 100
    assert split.draws <= train <= split.max_draws and split.draws <= held <= split.max_draws
    gate = plan_sheet_analyses(corpus, paced, n_splits=10, refit_rule="gate")
    assert gate.seconds["heldout"] != plan.seconds["heldout"]
    with pytest.raises(ValueError, match="refit rule 'fast' is not one of precision, gate"):
        plan_sheet_analyses(corpus, paced, n_splits=10, refit_rule="fast")


def test_a_parent_fitted_on_a_loaded_machine_is_priced_at_its_idle_pace(fake_sampler, table, tmp_path, monkeypatch):
    """The estimate scales the parent's pace; a parent fitted beside other work (wall 4x its CPU over its cores)
    is priced from its CPU seconds over the share of the cores an idle fit keeps busy, never above its wall."""
    from ddr_explorer.core.analyses import engine
    from ddr_explorer.core.analyses.engine import IDLE_CORE_SHARE, refit_seconds

    corpus = bf.corpus_of(table)
    post = fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path).posterior
    monkeypatch.setattr(engine.os, "cpu_count", lambda: 2)

    def parent(sampling, cpu, device="cpu x4"):
        return dataclasses.replace(post, device=device,
                                   timings={"warmup": 0.0, "sampling": sampling, "cpu_run": cpu, "compile": 10.0})

    idle = refit_seconds(parent(100.0, 2 * IDLE_CORE_SHARE * 100.0), SETTINGS)
    assert idle == pytest.approx(refit_seconds(parent(100.0, 0.0), SETTINGS))  # idle: CPU and wall agree
    loaded = parent(400.0, 2 * IDLE_CORE_SHARE * 100.0)  # the same CPU, 4x the wall: priced as the idle one
    assert refit_seconds(loaded, SETTINGS) == pytest.approx(idle)
    assert refit_seconds(parent(400.0, 0.0), SETTINGS) == pytest.approx(4 * idle)  # no CPU figure: the wall
    assert refit_seconds(parent(50.0, 2 * IDLE_CORE_SHARE * 100.0), SETTINGS) == pytest.approx(idle / 2)  # never above the wall
    # one CPU device: one core's pace
    assert refit_seconds(parent(400.0, IDLE_CORE_SHARE * 100.0, "cpu x1"), SETTINGS) == pytest.approx(idle)


def test_the_estimate_prices_only_the_refits_not_in_the_cache(fake_sampler, table, tmp_path):
    """Refits already stored cost nothing: a rerun of a sheet whose refits are cached is not "over the budget"
    (session 18: a fully cached TB2 sheet was estimated at 5.8 h, and a default report said "not run")."""
    from ddr_explorer.core.analyses.difficulty import difficulty_study
    from ddr_explorer.core.analyses.engine import refit_seconds
    from ddr_explorer.core.analyses.heldout import held_out_study, split_settings
    from ddr_explorer.core.analyses.reported import ReportedQuantity
    from ddr_explorer.core.dstudy import observed_design

    corpus = bf.corpus_of(table)
    res = fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path)
    post = dataclasses.replace(res.posterior, timings={"warmup": 0.0, "sampling": 100.0, "compile": 10.0})
    before = plan_sheet_analyses(corpus, post, n_splits=3, cache_dir=tmp_path)
    assert before.n_cached == {"difficulty": 0, "heldout": 0, "loo": 0}
    held_out_study(corpus, res.posterior.spec, res.posterior.settings, tmp_path, n_splits=2, parent=res)
    mid = plan_sheet_analyses(corpus, post, n_splits=3, cache_dir=tmp_path)
    assert mid.n_cached == {"difficulty": 0, "heldout": 4, "loo": 0}  # splits 1 and 2 of 3 are stored
    rep = (ReportedQuantity.coefficient(observed_design(corpus)),)
    one = refit_seconds(post, split_settings(SETTINGS), reported=rep)  # the gate, the default rule
    from ddr_explorer.core.analyses.calibration import DEFAULT_CALIBRATION as CAL

    assert mid.seconds["heldout"] == pytest.approx(CAL * (10.0 + 2 * one))  # split 3's two refits and one compile
    assert mid.seconds["difficulty"] == pytest.approx(before.seconds["difficulty"])
    assert "heldout (6 refits, 4 in the cache)" in mid.describe() and "10 refits, 6 to run" in mid.describe()
    difficulty_study(corpus, res.posterior.spec, res.posterior.settings, tmp_path, parent=res)
    held_out_study(corpus, res.posterior.spec, res.posterior.settings, tmp_path, n_splits=3, parent=res)
    done = plan_sheet_analyses(corpus, post, n_splits=3, cache_dir=tmp_path)
    assert done.n_cached == {"difficulty": 4, "heldout": 6, "loo": 0} and done.total_seconds == 0.0
    assert done.runs_by_default and "10 refits, all cached, estimated" in done.describe()
    # another cache folder holds none of them
    assert plan_sheet_analyses(corpus, post, n_splits=3, cache_dir=tmp_path / "other").n_cached["heldout"] == 0


def test_ddr_report_runs_the_sheet_analyses_by_default_and_prints_the_estimate_first(fake_sampler, capsys,
                                                                                    corpus_csv, tmp_path):
    pypdf = pytest.importorskip("pypdf")
    pdf = tmp_path / "sheet.pdf"
    assert main(["report", str(corpus_csv), "-o", str(pdf), "--cache", str(tmp_path / "c"), "--splits", "3",
                 *FAST]) == 0
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if "estimated" in x)
    assert "difficulty (4 refits), heldout (6 refits), loo (0 refits): 10 refits" in line and "running them" in line
    assert "--analyses none skips them" in line
    assert err.index("estimated") < err.index("difficulty - ")  # printed before the refits start
    text = " ".join(" ".join((p.extract_text() or "").split()) for p in pypdf.PdfReader(str(pdf)).pages)
    assert "by difficulty stratum" in text and "Across 3 random 70/30 splits" in text
    # the stand-in's 80 draws never converge: the sheet labels both analyses
    assert ("PROVISIONAL: 5 of 5 fits (the whole corpus and 4 strata) did not converge (aggregate, Q1 (easiest), "
            "Q2, Q3 and 1 more)") in text
    assert "PROVISIONAL: 6 of 6 refits did not converge (split 1 train" in text
    # the criterion is in the method notes
    assert "Difficulty strata: 0 of 5 fits (the whole corpus and its strata) converged" in text
    # after the run: each analysis's estimate beside what it took; the method notes say which rule ran
    took = next(x for x in err.splitlines() if "estimated / took" in x)
    assert took.startswith("ddr: analyses estimated / took: difficulty ") and "; heldout " in took
    assert "; loo " in took and " estimated, " in took and took.endswith(" taken")
    assert "The difficulty and hold-out refits ran to the gate on the E\u03c1\u00b2 they report" in text
    precise = tmp_path / "precision.pdf"
    assert main(["report", str(corpus_csv), "-o", str(precise), "--cache", str(tmp_path / "c"), "--splits", "3",
                 "--refit-rule", "precision", *FAST]) == 0
    assert "(--refit-rule precision)" in capsys.readouterr().err
    text = " ".join(" ".join((p.extract_text() or "").split()) for p in pypdf.PdfReader(str(precise)).pages)
    assert "The difficulty and hold-out refits ran under the precision rule" in text


def test_over_the_budget_the_cli_names_the_flag_and_none_opts_out(fake_sampler, capsys, corpus_csv, tmp_path,
                                                                 monkeypatch):
    pypdf = pytest.importorskip("pypdf")
    monkeypatch.setattr(defaults, "AUTO_BUDGET_SECONDS", 0.0)
    pdf = tmp_path / "sheet.pdf"
    assert main(["report", str(corpus_csv), "-o", str(pdf), "--cache", str(tmp_path / "c"), "--splits", "3",
                 *FAST]) == 0
    err = capsys.readouterr().err
    assert "over the 15 min default budget" in err
    assert "run them with `--analyses difficulty,heldout,loo --splits 3`" in err
    text = " ".join(" ".join((p.extract_text() or "").split()) for p in pypdf.PdfReader(str(pdf)).pages)
    assert "Not run here" in text
    n = len(fake_sampler)
    assert n == 1  # the main fit only
    assert main(["report", str(corpus_csv), "-o", str(pdf), "--cache", str(tmp_path / "c"), "--analyses", "none",
                 *FAST]) == 0
    assert "estimated" not in capsys.readouterr().err and len(fake_sampler) == n


def test_over_the_budget_the_analyses_that_fit_in_it_together_still_run():
    """A sheet whose three analyses are over the budget together runs those that fit in it, cheapest first: on the
    TB2 demo on 2 cores, difficulty (minutes) and PSIS-LOO, while the 100 hold-out refits (about 20 min) wait."""
    plan = defaults.AnalysesPlan(defaults.SHEET_DEFAULT, {"difficulty": 4, "heldout": 100, "loo": 0},
                                 {"difficulty": 240.0, "heldout": 1200.0, "loo": 0.0}, 50,
                                 {"difficulty": 0, "heldout": 10, "loo": 0})
    assert not plan.runs_by_default
    assert plan.within_budget() == ("difficulty", "loo")  # 240 s together, under 900; hold-out alone is over
    assert plan.within_budget(budget=1500.0) == ("difficulty", "heldout", "loo")  # all: under 1,500 s together
    assert plan.within_budget(budget=1300.0) == ("difficulty", "loo")  # 1,440 s: cheapest first, hold-out left
    assert plan.within_budget(budget=0.0) == ()
    assert plan.beyond_budget() == ("heldout",) and plan.beyond_budget(budget=0.0) == plan.which
    # cheapest first, not plan order: a budget that fits hold-out or difficulty alone takes difficulty and LOO
    dear = dataclasses.replace(plan, seconds={"difficulty": 800.0, "heldout": 850.0, "loo": 60.0})
    assert dear.within_budget() == ("difficulty", "loo")
    part = plan.part(("loo", "difficulty"))
    assert part.which == ("difficulty", "loo") and part.total_refits == 4 and part.total_seconds == 240.0
    assert part.n_cached == {"difficulty": 0, "loo": 0} and part.n_splits == 50
    assert part.describe() == "analyses difficulty (4 refits), loo (0 refits): 4 refits, estimated 4 min on this machine"


def test_ddr_report_runs_the_analyses_within_the_budget_and_names_the_flag_for_the_rest(fake_sampler, capsys,
                                                                                         corpus_csv, tmp_path,
                                                                                         monkeypatch):
    pypdf = pytest.importorskip("pypdf")
    real = defaults.plan_sheet_analyses

    def priced(corpus, posterior, **kw):  # the TB2 demo's proportions on 2 cores: hold-out over the budget alone
        plan = real(corpus, posterior, **kw)
        return dataclasses.replace(plan, seconds={"difficulty": 240.0, "heldout": 1200.0, "loo": 0.0})

    monkeypatch.setattr(defaults, "plan_sheet_analyses", priced)
    pdf = tmp_path / "sheet.pdf"
    assert main(["report", str(corpus_csv), "-o", str(pdf), "--cache", str(tmp_path / "c"), "--splits", "3",
                 *FAST]) == 0
    err = capsys.readouterr().err
    assert ("analyses difficulty (4 refits), loo (0 refits): 4 refits, estimated 4 min on this machine; running "
            "them (--analyses none skips them)") in err
    assert ("analyses heldout (6 refits): 6 refits, estimated 20 min on this machine: would take the sheet over the "
            "15 min default budget, so the sheet says \"not run\" for heldout; run every analysis with "
            "`--analyses difficulty,heldout,loo --splits 3`") in err
    assert "split 1" not in err  # no hold-out refit ran
    text = " ".join(" ".join((p.extract_text() or "").split()) for p in pypdf.PdfReader(str(pdf)).pages)
    assert "by difficulty stratum" in text  # decision 2 answered
    assert "Across 3 random 70/30 splits" not in text and "Not run here (it needs 50 splits: 100 refits)" in text
    # the main fit and the 4 strata, each rerun once (the stand-in never converges); no split's 2 x 3 refits
    assert len(fake_sampler) == 1 + 2 * 4


def test_batch_progress_counts_refits_over_the_whole_plan():
    plan = defaults.AnalysesPlan(("difficulty", "heldout"), {"difficulty": 4, "heldout": 6}, {}, 3)
    seen = []
    bp = BatchProgress(lambda *a: seen.append(a), plan)
    d, h = bp.for_analysis("difficulty"), bp.for_analysis("heldout")
    d("Q1: sampling", 2, 4, None)
    d("done", 4, 4, 0.0)
    h("split 1 train", 3, 6, None)
    h("done", 6, 6, 0.0)
    assert [(s[1], s[2]) for s in seen] == [(2, 10), (4, 10), (7, 10), (10, 10)]
    assert seen[-1][3] == 0.0 and seen[0][0] == "difficulty - Q1: sampling"


def test_duration_text():
    from ddr_explorer.core.formatting import fmt_duration

    assert [fmt_duration(x) for x in (45, 89.4, 12 * 60, 3.5 * 3600, float("nan"))] == \
        ["45 s", "89 s", "12 min", "3.5 h", "n/a"]


def test_the_estimate_is_calibrated_by_what_runs_took_here(tmp_path):
    """The full demo sheet read about 1.2x low (13 min estimated, 16 taken): estimates carry 16 / 13 until this
    machine has run the analyses; then the median ratio of the last runs here (time taken over the uncalibrated
    estimate), kept beside the fit cache; runs estimated under 30 s (the cache's time) are not kept."""
    from ddr_explorer.core.analyses.calibration import DEFAULT_CALIBRATION, calibration
    from ddr_explorer.core.analyses.defaults import AnalysesPlan

    assert DEFAULT_CALIBRATION == pytest.approx(1.23, abs=0.005)
    assert calibration(tmp_path, "heldout") == DEFAULT_CALIBRATION
    # a plan estimated 600 s (calibrated by 1.2: 500 uncalibrated) that took 900 s: 1.8
    plan = AnalysesPlan(("difficulty", "heldout"), {"difficulty": 4, "heldout": 100},
                        {"difficulty": 10.0, "heldout": 600.0}, calibration={"difficulty": 1.2, "heldout": 1.2})
    assert plan.remember({"difficulty": 50.0, "heldout": 900.0}, cache_dir=tmp_path) == {"heldout": 1.8}
    assert calibration(tmp_path, "heldout") == pytest.approx(1.8)
    assert calibration(tmp_path, "difficulty") == DEFAULT_CALIBRATION  # estimated 10 s: not kept
    plan.remember({"heldout": 500.0}, cache_dir=tmp_path)  # 1.0
    plan.remember({"heldout": 550.0}, cache_dir=tmp_path)  # 1.1
    assert calibration(tmp_path, "heldout") == pytest.approx(1.1)  # the median of 1.8, 1.0, 1.1
    for _ in range(3):  # a box loaded for hours: the last 5 are 1.0, 1.1 and 3 x 100
        plan.remember({"heldout": 50000.0}, cache_dir=tmp_path)
    assert calibration(tmp_path, "heldout") == 4.0  # bounded
    assert "estimated / took: difficulty 10 s / 50 s; heldout 10 min / 15 min" in plan.estimate_and_actual(
        {"difficulty": 50.0, "heldout": 900.0})
