"""The DDR sheet end to end: corpus or cached fit -> fit (or cache hit) -> PDF, and ``ddr report``.

A real NUTS fit with few draws (it does not converge, which is what the
unconverged-fit checks need) of a small simulated corpus for the pipeline, and
the demo corpus (Terminal-Bench 2.0) once through the CLI's ``main()``, fitted
by the moment stand-in (the CLI's plumbing is tested there, not the posterior).
The numbers on page 1 are checked against core's functions applied to the same
posterior.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("reportlab", reason="the DDR sheet needs reportlab (pip install reportlab)")

import ddr_explorer.core.model  # noqa: E402,F401 - before jax: parallel CPU chains
from ddr_explorer.core.cli import main  # noqa: E402
from ddr_explorer.core.corpus.io import load_corpus  # noqa: E402
from ddr_explorer.core.dstudy.summary import dstudy_summary  # noqa: E402
from ddr_explorer.core.fitting import components_from_posterior, theta_from_posterior  # noqa: E402
from ddr_explorer.core.model import SamplerSettings  # noqa: E402
from ddr_explorer.core.reliability import summarize  # noqa: E402
from ddr_explorer.core.ddr_sheet import SheetCancelled, write_ddr_sheet
from ddr_explorer.core.report import LooSummary  # noqa: E402
from ddr_explorer.core import ddr_sheet as pipeline  # noqa: E402
from ddr_explorer.core.report.content import fmt_coef, fmt_interval, fmt_n, fmt_var  # noqa: E402


def pdf_pages(path: Path) -> list[str]:
    """Text of each page, whitespace collapsed (pypdf, a test dependency)."""
    pypdf = pytest.importorskip("pypdf", reason="reading PDF text needs pypdf (pip install pypdf)")
    return [re.sub(r"\s+", " ", p.extract_text() or "") for p in pypdf.PdfReader(str(path)).pages]


ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "resources" / "demo" / "terminal-bench-2.csv"
SETTINGS = SamplerSettings(stop="fixed", draws=60, warmup=60, chains=2, seed=4, chunk_size=30)


def _simulate_module():
    spec = importlib.util.spec_from_file_location("ddr_bench_simulate_pipeline", ROOT / "bench" / "simulate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def small_csv(tmp_path_factory) -> Path:
    sim = _simulate_module()
    table = sim.simulate_per_benchmark(n_tasks=20, n_models=6, n_scaffolds=3, n_pairs=10, trials_per_cell=2,
                                       seed=9).table
    path = tmp_path_factory.mktemp("corpus") / "small.csv"
    table.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def first_build(small_csv, tmp_path_factory):
    """One real fit through the pipeline, with every progress call recorded."""
    cache = tmp_path_factory.mktemp("cache")
    out = tmp_path_factory.mktemp("out") / "sheet.pdf"
    calls = []
    result = write_ddr_sheet(small_csv, out, settings=SETTINGS, cache_dir=cache, date_invariant=True,
                             progress=lambda *a: calls.append(a))
    return result, cache, calls


def test_pipeline_fits_and_reports_progress(first_build):
    result, cache, calls = first_build
    assert not result.from_cache and result.fit_path.parent == cache and result.fit_path.exists()
    phases = [c[0] for c in calls]
    assert phases[:2] == ["load", "load"] and phases[-4:] == ["inputs", "inputs", "sheet", "sheet"]
    assert "compile" in phases and "diagnostics" in phases  # the sampler's own phases pass through
    assert all(0 <= c[1] <= c[2] for c in calls)
    assert len(pdf_pages(result.path)) == 7


def test_page_one_numbers_equal_core_on_the_fitted_posterior(first_build):
    result, _, _ = first_build
    inp = result.inputs
    page = pdf_pages(result.path)[0]
    # the sheet's components are the posterior's sigma^2 per draw (one implementation, core/fitting.py)
    assert set(inp.components.terms) == {"task", "model", "scaffold", "task:model", "task:scaffold",
                                         "model:scaffold"}
    assert inp.components.n_draws == SETTINGS.draws * SETTINGS.chains
    summary = dstudy_summary(inp.components, inp.observed_design, target=inp.target)
    # the headline is the reliability of observed success rates; the latent figure is beside it, labelled
    assert summary["scale"] == "observed"
    core = summary["observed_scores"]["Erho2"]
    assert f"E\u03c1\u00b2 = {fmt_coef(core['median'])}" in page
    assert f"95% interval {fmt_interval(core['lower95'], core['upper95'])}" in page
    latent = summary["estimands"]["Erho2"]["median"]
    assert f"latent ability ranking (Hardy et al. 2026) has E\u03c1\u00b2 {fmt_coef(latent)}" in page
    assert "observed success rates" in page
    for term in inp.components.terms:
        s = summarize(inp.components.draws[term])
        assert fmt_var(s.median) in page and fmt_interval(*s.hdi95, fmt=fmt_var) in page
    assert inp.theta.shape == (SETTINGS.draws * SETTINGS.chains, 6)


def test_unconverged_fit_is_said_plainly(first_build):
    result, _, _ = first_build
    assert result.converged is False
    assert any("did not converge" in m for m in result.messages)
    pages = pdf_pages(result.path)
    assert "The fit did not converge." in pages[0]
    assert all("NOT converged" in p for p in pages)


def test_cache_hit_gives_a_byte_identical_sheet(first_build, small_csv, tmp_path):
    result, cache, _ = first_build
    again = write_ddr_sheet(small_csv, tmp_path / "again.pdf", settings=SETTINGS, cache_dir=cache,
                            date_invariant=True)
    assert again.from_cache and again.fit_key == result.fit_key
    assert again.path.read_bytes() == result.path.read_bytes()


def test_sheet_from_the_cached_fit_file_equals_the_corpus_sheet(first_build, small_csv, tmp_path):
    result, _, _ = first_build
    from_file = write_ddr_sheet(result.fit_path, tmp_path / "f.pdf", corpus=small_csv, date_invariant=True)
    assert from_file.from_cache
    assert from_file.path.read_bytes() == result.path.read_bytes()
    with pytest.raises(ValueError, match="add --corpus"):
        write_ddr_sheet(result.fit_path, tmp_path / "g.pdf")
    other = load_corpus(DEMO)
    with pytest.raises(ValueError, match="content hash"):
        write_ddr_sheet(result.fit_path, tmp_path / "h.pdf", corpus=other)
    assert not (tmp_path / "g.pdf").exists() and not (tmp_path / "h.pdf").exists()


def test_cancel_writes_nothing(first_build, small_csv, tmp_path):
    _, cache, _ = first_build
    polls = []

    def cancel():  # cancel at the second poll: after the (cached) fit, before the PDF
        polls.append(1)
        return len(polls) >= 2

    with pytest.raises(SheetCancelled, match="nothing was written"):
        write_ddr_sheet(small_csv, tmp_path / "c.pdf", settings=SETTINGS, cache_dir=cache, cancel=cancel)
    assert list(tmp_path.iterdir()) == []


def test_analyses_ready_runner_and_failing(first_build, small_csv, tmp_path):
    _, cache, _ = first_build
    seen = {}

    def loo_runner(ctx):
        seen["ctx"] = ctx
        k = np.r_[np.full(990, 0.2), [0.8, 0.9, 1.4]]
        return LooSummary.from_pareto_k(k, elpd=-812.5, elpd_se=20.1)

    def broken(ctx):
        raise RuntimeError("refit exploded")

    res = write_ddr_sheet(small_csv, tmp_path / "a.pdf", settings=SETTINGS, cache_dir=cache, date_invariant=True,
                          analyses={"loo": loo_runner, "heldout": broken})
    assert seen["ctx"].posterior is not None and seen["ctx"].corpus.n_levels("model") == 6
    loo = res.inputs.analysis("loo")
    assert (loo.good, loo.bad, loo.very_bad) == (990, 2, 1)
    assert res.inputs.analysis("held_out") is None
    assert any("held out analysis failed (RuntimeError: refit exploded)" in m for m in res.messages)
    text = " ".join(pdf_pages(res.path))
    assert "PSIS-LOO" in text and "990" in text and "812.5" in text


def test_analysis_runner_names_what_is_missing():
    with pytest.raises(ValueError, match="unknown analysis 'bogus'"):
        pipeline.analysis_runner("bogus")
    # every analysis of the sheet has a runner in core now, the failure taxonomy and the frontier too
    assert callable(pipeline.analysis_runner("failures")) and callable(pipeline.analysis_runner("frontier"))


def test_analysis_runners_are_the_analyses_of_core():
    from ddr_explorer.core.analyses import difficulty, heldout, loo

    assert pipeline._RUNNER_MODULES["difficulty"]() is difficulty.run_difficulty_study
    assert pipeline._RUNNER_MODULES["held_out"]() is heldout.run_heldout
    assert pipeline._RUNNER_MODULES["loo"]() is loo.run_loo
    from ddr_explorer.core.analyses import failure_modes

    assert pipeline._RUNNER_MODULES["failure_taxonomy"]() is failure_modes.run_failure_taxonomy


# ---------------------------------------------------------------------------
# ddr report, end to end through main()
# ---------------------------------------------------------------------------

# the sheet alone (--analyses none): the default analyses' refits are tested in tests/test_refit_defaults.py
DEMO_FIT = ["--stop", "fixed", "--draws", "40", "--warmup", "40", "--chains", "2", "--seed", "1", "--analyses", "none"]


@pytest.fixture(scope="module")
def demo_cli(tmp_path_factory):
    """``ddr report`` on the demo corpus, fitted by the moment stand-in (``batch_fakes.moment_fit``) into a
    temporary cache.

    These tests check the CLI's plumbing (cache hit, byte-identical sheets, the fit file, prices, analyses), not
    the posterior: the real sampler's sheet is ``first_build``'s above, and the real sampler on the demo corpus is
    tests/test_verdict.py's.  A real fit here compiled TB2's sampler (about 25 s of CPU) for nothing they check.
    The later tests read this fit from the cache (same key: the sampler is not part of it)."""
    import ddr_batch_fakes as bf

    import ddr_explorer.core.model.refit as refit
    import ddr_explorer.core.model.sampler as sampler

    cache = tmp_path_factory.mktemp("demo-cache")
    out = tmp_path_factory.mktemp("demo-out")
    with pytest.MonkeyPatch.context() as mp:  # the fake_sampler fixture's patch, for this module-scoped fit
        mp.setattr(sampler, "fit", bf.moment_fit)
        mp.setattr(refit, "fit_refits", bf.cold_fit_refits)
        bf.CALLS.clear()
        rc = main(["report", str(DEMO), "-o", str(out / "a.pdf"), "--cache", str(cache), "--date-invariant",
                   *DEMO_FIT])
        assert bf.CALLS == ["terminal-bench-2"], bf.CALLS  # one fit, by the stand-in
    return rc, cache, out


def test_cli_report_on_the_demo_corpus(demo_cli, capsys):
    rc, cache, out = demo_cli
    assert rc == 0
    assert len(list(cache.glob("fit-*.h5"))) == 1
    pages = pdf_pages(out / "a.pdf")
    assert len(pages) == 7
    first = pages[0]
    assert "Deployment Decision Reliability \u2014 terminal-bench-2" in first and "One benchmark." in first
    assert "The fit did not converge." in first  # 2 x 40 draws, bulk ESS < 400: honest about it
    # the second run reuses the cached fit, says so on stderr and writes the same bytes
    rc = main(["report", str(DEMO), "-o", str(out / "b.pdf"), "--cache", str(cache), "--date-invariant", *DEMO_FIT])
    err = capsys.readouterr().err
    assert rc == 0 and "fit (cache hit): 1/1" in err and "sheet: 1/1" in err and "cached fit" in err
    assert (out / "b.pdf").read_bytes() == (out / "a.pdf").read_bytes()
    # the numbers equal core's on the cached posterior
    from ddr_explorer.core.cache import read_fit_file
    from ddr_explorer.core.fitting import posterior_from_entry

    post = posterior_from_entry(read_fit_file(next(cache.glob("fit-*.h5"))))
    comps = components_from_posterior(post)
    theta, names = theta_from_posterior(post)
    assert theta.shape[1] == len(names) == 29
    s = summarize(comps.draws["model"])
    assert fmt_interval(*s.hdi95, fmt=fmt_var) in first


def test_cli_report_with_prices_and_budget(demo_cli, tmp_path, capsys):
    _, cache, _ = demo_cli
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"terminal-bench-2.0": 0.85}))
    rc = main(["report", str(DEMO), "-o", str(tmp_path / "p.pdf"), "--cache", str(cache), "--prices", str(prices),
               "--budget", "20000", "--date-invariant", "--quiet", *DEMO_FIT])
    assert rc == 0, capsys.readouterr().err
    pages = pdf_pages(tmp_path / "p.pdf")
    assert "No cost data." not in pages[0] and "No cost data." not in pages[2]
    assert "Cost bands" in pages[2]


def test_cli_report_from_the_fit_file(demo_cli, tmp_path, capsys):
    _, cache, out = demo_cli
    fit = next(cache.glob("fit-*.h5"))
    assert main(["report", str(fit), "-o", str(tmp_path / "f.pdf"), "--corpus", str(DEMO), "--date-invariant",
                 "--quiet", "--analyses", "none"]) == 0
    assert (tmp_path / "f.pdf").read_bytes() == (out / "a.pdf").read_bytes()
    assert main(["report", str(fit), "-o", str(tmp_path / "g.pdf"), "--quiet"]) == 2
    assert "add --corpus CORPUS_FILE" in capsys.readouterr().err


def test_cli_report_bad_inputs(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("benchmark,task,model,scaffold,result\nb,t1,m1,s1,1\nb,t2,m1,s1,7\n")
    assert main(["report", str(bad), "-o", str(tmp_path / "x.pdf"), "--cache", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "bad.csv" in err and "result" in err
    assert main(["report", str(DEMO), "-o", str(tmp_path / "x.pdf"), "--analyses", "bogus"]) == 2
    assert "unknown analysis 'bogus'" in capsys.readouterr().err
    assert main(["report", str(DEMO), "-o", str(tmp_path / "nodir" / "x.pdf"), "--cache", str(tmp_path)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "x.pdf").exists()


def test_posterior_in_memory_is_used_as_is(first_build, small_csv, tmp_path):
    """The app's path: a fit it already holds, no refit, the same sheet."""
    from ddr_explorer.core.cache import read_fit_file
    from ddr_explorer.core.fitting import posterior_from_entry

    result, _, _ = first_build
    post = posterior_from_entry(read_fit_file(result.fit_path))
    corpus = load_corpus(small_csv)
    res = write_ddr_sheet(corpus, tmp_path / "m.pdf", posterior=post, date_invariant=True,
                          cache_dir=tmp_path / "empty-cache")
    assert not (tmp_path / "empty-cache").exists() and not res.from_cache and res.fit_path is None
    assert res.path.read_bytes() == result.path.read_bytes()


def test_cli_report_runs_the_analyses_it_is_asked_for(demo_cli, tmp_path, monkeypatch):
    """``--analyses`` resolves each name to a runner (the refit engine's, core.analyses.defaults) and passes its
    result to the sheet."""
    from ddr_explorer.core.analyses import defaults

    _, cache, _ = demo_cli
    asked = []

    def fake_runners(which, **kw):
        asked.extend(which)
        return {n: (lambda ctx: LooSummary.from_pareto_k(np.r_[np.full(7000, 0.1), np.full(209, 0.8)]))
                for n in which}

    monkeypatch.setattr(defaults, "sheet_runners", fake_runners)
    rc = main(["report", str(DEMO), "-o", str(tmp_path / "l.pdf"), "--cache", str(cache), "--date-invariant",
               "--quiet", *DEMO_FIT[:-2], "--analyses", "loo"])
    assert rc == 0 and asked == ["loo"]
    text = " ".join(pdf_pages(tmp_path / "l.pdf"))
    assert "7,000" in text and "209" in text


def test_cli_report_takes_the_what_if_design_of_the_app(demo_cli, tmp_path, capsys):
    """``ddr report --n-tasks 39 --n-scaffolds 2 --replicates 3 --price-per-trial 0.8``: the sheet's cost answers
    are those of the D-study tab at that design (its budget search and its tasks for the target).  The target is
    one the stand-in fit's components reach (their Erho2 is about 0.56 at this design)."""
    from ddr_explorer.core.cache import read_fit_file
    from ddr_explorer.core.dstudy import DStudyModel, budget_search
    from ddr_explorer.core.dstudy.curves import score_scale
    from ddr_explorer.core.fitting import posterior_from_entry
    from ddr_explorer.core.formatting import fmt_usd
    from ddr_explorer.core.session import AnalysisState

    _, cache, _ = demo_cli
    rc = main(["report", str(DEMO), "-o", str(tmp_path / "w.pdf"), "--cache", str(cache), "--date-invariant",
               "--quiet", "--analyses", "none", "--n-tasks", "39", "--n-scaffolds", "2", "--replicates", "3",
               "--price-per-trial", "0.8", "--target", "0.5", "--budget", "5000", *DEMO_FIT])
    assert rc == 0, capsys.readouterr().err
    text = " ".join(pdf_pages(tmp_path / "w.pdf"))
    assert "Design examined (what-if):" in text and "as in the design examined" in text
    assert "On the cost frontier at 3 trials per cell" in text
    # the app's state at the same what-if, through the D-study tab's core calls
    comps = components_from_posterior(posterior_from_entry(read_fit_file(next(cache.glob("fit-*.h5")))))
    corpus = load_corpus(DEMO)
    st = AnalysisState.from_corpus(corpus)
    st.follow_fit(comps, corpus)
    st.update(n_tasks=39, n_scaffolds=2, n_replicates=3, target=0.5, budget=5000.0,
              prices={"terminal-bench-2.0": 0.8})
    model = DStudyModel(comps, scale=score_scale(comps))
    search = budget_search(comps, st.design(), target=0.5, budget=5000.0, reference=st.observed_design(),
                           scale=model.scale)
    best = search.design_at(search.best_in_budget)
    assert f"Within your budget $5,000: {fmt_n(best['n_tasks'])} tasks" in text and fmt_usd(best["cost"]) in text
    q = model.readouts(st.design(), 0.5).required.quantiles
    assert f"About {fmt_n(q[0.5])} tasks reach" in text
    assert main(["report", str(DEMO), "-o", str(tmp_path / "x.pdf"), "--cache", str(cache), "--quiet",
                 "--replicates", "0", "--analyses", "none", *DEMO_FIT]) == 2
    assert "n_replicates should be at least 1, got 0" in capsys.readouterr().err
