"""The DDR sheet (core/report): sections, numbers equal to core's, honest warnings, byte-identical builds.

Text is extracted with pypdf (a test dependency) or, failing that, poppler's
``pdftotext``; the tests that read text are skipped, with the reason, when
neither is available.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("reportlab", reason="the DDR sheet needs reportlab (pip install reportlab)")

from ddr_explorer.core.corpus.io import load_corpus  # noqa: E402
from ddr_explorer.core.dstudy import cost_frontier  # noqa: E402
from ddr_explorer.core.dstudy.summary import dstudy_summary  # noqa: E402
from ddr_explorer.core.reliability import VarianceComponents, capability_gap_ratio, summarize  # noqa: E402
from ddr_explorer.core.report import (DifficultyProfile, FailureTaxonomy, HeldOutReliability,  # noqa: E402
                                      LooSummary, ReportInputs, build_sheet, report_inputs_from, sheet_content)
from ddr_explorer.core.report import figures  # noqa: E402
from ddr_explorer.core.report import styles  # noqa: E402
from ddr_explorer.core.report.content import fmt_coef, fmt_interval, fmt_pct, fmt_r, fmt_usd, fmt_var  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "resources" / "demo" / "terminal-bench-2.csv"

#: Terminal-Bench 2.0 per-benchmark posterior means of sigma (the brief's synthetic fit).
TB_SIGMAS = {"task": 3.0, "model": 1.74, "scaffold": 0.37, "task:model": 1.39, "task:scaffold": 1.11,
             "model:scaffold": 0.46}
#: Relative posterior spread of each sigma (wider for terms with few levels).
TB_SPREAD = {"task": 0.08, "model": 0.14, "scaffold": 0.3, "task:model": 0.05, "task:scaffold": 0.08,
             "model:scaffold": 0.25}
CONVERGED = {"method": "NUTS (numpyro)", "converged": True, "max_rhat": 1.004, "min_ess_bulk": 812,
             "divergences": 0, "settings": {"chains": 4, "draws": 500, "warmup": 400, "seed": 0, "target_accept": 0.8},
             "device": "cpu (4 devices)", "wall_seconds": 95.0}


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

def synthetic_components(sigmas, spread=0.15, n_draws=2000, seed=0, source="synthetic fit") -> VarianceComponents:
    """sigma^2 draws: sigma x lognormal noise, so each term has a posterior with spread."""
    rng = np.random.default_rng(seed)
    cv = spread if isinstance(spread, dict) else dict.fromkeys(sigmas, spread)
    return VarianceComponents.from_mapping(
        {t: (s * np.exp(rng.normal(0.0, cv[t], n_draws))) ** 2 for t, s in sigmas.items()}, source=source)


def synthetic_theta(table: pd.DataFrame, n_draws=2000, sd=0.35, seed=1):
    """Latent capability draws centred on the observed log-odds of each model."""
    rng = np.random.default_rng(seed)
    g = table.groupby("model", observed=True)[["successes", "trials"]].sum()
    acc = ((g["successes"] + 0.5) / (g["trials"] + 1)).to_numpy()
    u = np.log(acc / (1 - acc))
    theta = (u - u.mean())[None, :] + rng.normal(0.0, sd, (n_draws, len(u)))
    return theta, [str(m) for m in g.index]


def _simulate_module():
    spec = importlib.util.spec_from_file_location("ddr_bench_simulate_report", ROOT / "bench" / "simulate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def pdf_pages(path: Path) -> list[str]:
    """Text of each page, whitespace collapsed (pypdf, else pdftotext)."""
    try:
        import pypdf
    except ImportError:
        pypdf = None
    if pypdf is not None:
        pages = [p.extract_text() or "" for p in pypdf.PdfReader(str(path)).pages]
    elif shutil.which("pdftotext"):
        out = subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, check=True).stdout
        pages = out.decode("utf-8").split("\f")
        if pages and not pages[-1].strip():
            pages = pages[:-1]
    else:
        pytest.skip("reading PDF text needs pypdf (pip install pypdf) or poppler's pdftotext")
    return [re.sub(r"\s+", " ", p) for p in pages]


def _contains(text: str, *needles: str) -> None:
    missing = [n for n in needles if n not in text]
    assert not missing, f"missing from the page: {missing}"


# ---------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo_corpus():
    return load_corpus(DEMO)


@pytest.fixture(scope="module")
def demo_inputs(demo_corpus) -> ReportInputs:
    comps = synthetic_components(TB_SIGMAS, TB_SPREAD, source="synthetic Terminal-Bench fit")
    theta, names = synthetic_theta(demo_corpus.table)
    return report_inputs_from(demo_corpus, comps, theta, model_names=names, fit_info=CONVERGED)


@pytest.fixture(scope="module")
def pooled_corpus(tmp_path_factory):
    """A HAL-like pooled leaderboard over five benchmarks, with a cost column."""
    sim = _simulate_module()
    s = sim.simulate_pooled(seed=3, n_models=24, n_everywhere=6, model_scale=0.6, pair_scale=0.5,
                            benchmarks=sim.HAL_BENCHMARKS[:5])
    t = s.table.copy()
    rng = np.random.default_rng(7)
    models = sorted(t["model"].astype(str).unique())
    price = dict(zip(models, np.exp(rng.normal(np.log(0.05), 0.9, len(models)))))
    bench = {b: m for b, m in zip(sorted(t["benchmark"].astype(str).unique()), (0.6, 1.0, 2.5, 1.4, 0.8))}
    t["cost"] = (t["trials"] * t["model"].astype(str).map(price) * t["benchmark"].astype(str).map(bench)
                 * np.exp(rng.normal(0, 0.2, len(t))))
    path = tmp_path_factory.mktemp("pooled") / "pooled-sim.csv"
    t.to_csv(path, index=False)
    return load_corpus(path), s


def _pooled_analyses(seed=5) -> dict:
    """Hand-made analysis results, for layout tests of *supplied* results.

    The failure taxonomy's numbers are typed in: no code of the project computes a
    :class:`FailureTaxonomy` from a corpus yet, so the tests that read them check how the sheet
    lays out a supplied result, not an analysis (``test_no_failure_taxonomy_says_what_it_needs``
    pins what the sheet says without one).
    """
    rng = np.random.default_rng(seed)
    labels = ("Q1 (easiest)", "Q2", "Q3", "Q4 (hardest)")
    strata = [np.clip(rng.normal(m, 0.05, 2000), 0, 1) for m in (0.91, 0.86, 0.71, 0.35)]
    projected = rng.normal(0.82, 0.03, 50)
    held = 1.45 - 1.0 * projected + rng.normal(0, 0.015, 50)
    return {
        "difficulty": DifficultyProfile.from_draws(labels, strata, np.clip(rng.normal(0.84, 0.04, 2000), 0, 1),
                                                   mean_success=[0.8, 0.45, 0.2, 0.04]),
        "held_out": HeldOutReliability(projected, held),
        "loo": LooSummary.from_pareto_k(np.concatenate([rng.uniform(0, 0.7, 9000), [0.8, 0.9, 1.3]]),
                                        elpd=-5120.4, elpd_se=61.2),
        "failure_taxonomy": FailureTaxonomy(("planning", "tool use", "communication", "verification"),
                                            [0.9, 0.4, 0.2, 0.6], [0.12, 0.35, 0.30, 0.08]),
    }


@pytest.fixture(scope="module")
def pooled_inputs(pooled_corpus) -> ReportInputs:
    corpus, s = pooled_corpus
    sim = _simulate_module()
    comps = synthetic_components(sim.HAL_SIGMAS, 0.15, source="synthetic pooled fit")
    theta, names = synthetic_theta(corpus.table, sd=0.3)
    return report_inputs_from(corpus, comps, theta, model_names=names, fit_info=CONVERGED, budget=2000.0,
                              analyses=_pooled_analyses())


@pytest.fixture(scope="module")
def demo_pdf(demo_inputs, tmp_path_factory) -> Path:
    return build_sheet(demo_inputs, tmp_path_factory.mktemp("demo") / "demo-sheet.pdf", date_invariant=True)


@pytest.fixture(scope="module")
def pooled_pdf(pooled_inputs, tmp_path_factory) -> Path:
    return build_sheet(pooled_inputs, tmp_path_factory.mktemp("pooled") / "pooled-sheet.pdf", date_invariant=True)


# ---------------------------------------------------------------------------
# The demo sheet
# ---------------------------------------------------------------------------

SECTIONS = ["2 \u00b7 The design study in detail", "3 \u00b7 What reliability costs",
            "4 \u00b7 Hard tasks and replications", "5 \u00b7 Ranks and dominance",
            "6 \u00b7 Diagnostics and data coverage", "7 \u00b7 Method notes"]
QUESTIONS = ["How many tasks should we sample?", "Which difficulty bucket should we target?",
             "Which cost band should we constrain on?", "Which hold-out protocol should we demand from the vendor?",
             "How should we read a failure taxonomy?"]


def test_demo_sheet_pages_and_sections(demo_pdf, demo_inputs):
    pages = pdf_pages(demo_pdf)
    assert len(pages) == 7
    first = pages[0]
    _contains(first, "Deployment Decision Reliability \u2014 terminal-bench-2",
              "Does this leaderboard rank models reliably?", "Object of measurement: models", "Claim: ranking",
              "Where the variance is", "Budget frontier", "Five decisions for a buyer", *QUESTIONS)
    rest = " ".join(pages[1:])
    _contains(rest, *SECTIONS)
    for k, section in enumerate(SECTIONS):  # each section opens its own page, in order
        assert any(p.startswith(section) or f" {section}" in p[:200] for p in pages[1:]), section
    for i, page in enumerate(pages, start=1):  # the footer is on every page
        _contains(page, "corpus terminal-bench-2", f"sha256 {demo_inputs.corpus_hash[:12]}", f"page {i} of 7",
                  "numpy", "reportlab", "Convergence: converged", "(1|task:model)")


def test_demo_headline_numbers_equal_core(demo_pdf, demo_inputs):
    first = pdf_pages(demo_pdf)[0]
    d = demo_inputs.observed_design
    core = dstudy_summary(demo_inputs.components, d, target=demo_inputs.target)["estimands"]["Erho2"]
    _contains(first, f"E\u03c1\u00b2 = {fmt_coef(core['median'])}",
              f"95% interval {fmt_interval(core['lower95'], core['upper95'])}")
    c = demo_inputs.components
    for term in c.terms:  # the variance-component table carries core's medians and intervals
        s = summarize(c.draws[term])
        _contains(first, fmt_var(s.median), fmt_interval(*s.hdi95, fmt=fmt_var))
    gap = summarize(capability_gap_ratio(c, "model"))
    _contains(first, f"= {fmt_coef(gap.median)} {fmt_interval(*gap.hdi95)}")
    req = dstudy_summary(c, d, target=demo_inputs.target)["min_n"]["n_tasks"]
    # seed 000 Eq. 2 is a model of one benchmark (no benchmark facet): its task facet is that benchmark's tasks
    _contains(first, f"About {req['median']:,.0f} tasks reach")
    assert "tasks per benchmark" not in first


def test_demo_is_honest_about_what_it_lacks(demo_pdf):
    pages = pdf_pages(demo_pdf)
    first = pages[0]
    _contains(first, "One benchmark.", "No cost data.", "Not run here")  # single benchmark, no cost, no splits
    assert "did not converge" not in first
    _contains(pages[2], "No cost data.")
    _contains(pages[3], "Not run.")


def test_date_invariant_builds_are_byte_identical(demo_inputs, tmp_path):
    a = build_sheet(demo_inputs, tmp_path / "a.pdf", date_invariant=True).read_bytes()
    b = build_sheet(demo_inputs, tmp_path / "b.pdf", date_invariant=True).read_bytes()
    assert a == b
    assert b"/CreationDate (D:20000101000000" in a  # reportlab's invariant date, not today's
    dated = build_sheet(demo_inputs, tmp_path / "c.pdf")
    import datetime

    assert f"built {datetime.date.today().isoformat()}" in pdf_pages(dated)[0]
    assert "built " not in pdf_pages(tmp_path / "a.pdf")[0]


def test_build_writes_atomically(demo_inputs, tmp_path):
    out = build_sheet(demo_inputs, tmp_path / "sheet.pdf", date_invariant=True)
    assert out.read_bytes().startswith(b"%PDF-")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sheet.pdf"]  # no temporary file left behind
    with pytest.raises(FileNotFoundError, match="does not exist"):
        build_sheet(demo_inputs, tmp_path / "missing" / "sheet.pdf")


# ---------------------------------------------------------------------------
# The pooled sheet (every optional analysis present, cost data)
# ---------------------------------------------------------------------------

def test_pooled_sheet_numbers(pooled_pdf, pooled_inputs):
    """Numbers core computes reach the sheet; the failure-taxonomy line is a layout test of a supplied
    (hand-made) result, see :func:`_pooled_analyses`."""
    pages = pdf_pages(pooled_pdf)
    text = " ".join(pages)
    first = pages[0]
    inp = pooled_inputs
    d = inp.observed_design
    assert d.n_benchmarks == 5 and inp.has_cost and inp.price_source == "cost column"
    core = dstudy_summary(inp.components, d, target=inp.target)["estimands"]["Erho2"]
    _contains(first, f"E\u03c1\u00b2 = {fmt_coef(core['median'])}")
    assert "One benchmark." not in first and "No cost data." not in first
    # decision 3 reads the cost frontier core computes
    f = cost_frontier(inp.components, d, target=inp.target)
    assert f.cheapest is not None
    _contains(first, f"from {fmt_usd(f.cost[f.cheapest])}")
    _contains(text, "Cost bands", "Accuracy and accuracy per dollar", f"Spearman correlation of the two rankings "
              f"{fmt_r(inp.accuracy.spearman)}")
    held = inp.analysis("held_out")
    _contains(text, f"r = {fmt_r(held.pearson_r)}", "Held-out against projected reliability")
    prof = inp.analysis("difficulty")
    _contains(first, f"by {fmt_coef(prof.gap)}")
    loo = inp.analysis("loo")
    _contains(text, "PSIS-LOO", f"{loo.good:,}", "elpd")
    _contains(first, "Where agents differ most", fmt_r(inp.analysis("failure_taxonomy").spearman))
    _contains(text, "benchmarks sharing")  # the fixed-budget breadth curve of a pooled fit
    for q in QUESTIONS:
        _contains(first, q)


def test_all_five_decisions_answered_when_every_analysis_ran(pooled_inputs):
    """Layout test of supplied results: decision 5 reads the hand-made taxonomy of :func:`_pooled_analyses`."""
    ct = sheet_content(pooled_inputs)
    assert [d.status for d in ct.decisions] == ["answered"] * 5
    assert [d.number for d in ct.decisions] == [1, 2, 3, 4, 5]


# ---------------------------------------------------------------------------
# Bad inputs still give an honest sheet
# ---------------------------------------------------------------------------

def _first_page(inputs, tmp_path) -> str:
    return pdf_pages(build_sheet(inputs, tmp_path / "s.pdf", date_invariant=True))[0]


def test_no_cost_data(pooled_corpus, pooled_inputs, tmp_path):
    corpus, _ = pooled_corpus
    bare = dataclasses.replace(corpus, table=corpus.table.drop(columns="cost"))
    inp = report_inputs_from(bare, pooled_inputs.components, fit_info=CONVERGED)
    assert not inp.has_cost
    first = _first_page(inp, tmp_path)
    _contains(first, "No cost data.", "No cost data: supply per-trial costs")


def test_single_scaffold(demo_corpus, tmp_path):
    t = demo_corpus.table
    keep = t["scaffold"].astype(str) == "Terminus 2"
    one = dataclasses.replace(demo_corpus, table=t[keep].reset_index(drop=True))
    comps = synthetic_components({"task": 3.0, "model": 1.74, "task:model": 1.39})
    inp = report_inputs_from(one, comps, fit_info=CONVERGED)
    first = _first_page(inp, tmp_path)
    _contains(first, "One scaffold.", "The scaffold, model \u00d7 scaffold and task \u00d7 scaffold variances cannot "
              "be estimated")


def test_unconverged_fit(demo_inputs, tmp_path):
    info = {**CONVERGED, "converged": False, "max_rhat": 1.083, "min_ess_bulk": 87, "divergences": 12}
    inp = dataclasses.replace(demo_inputs, fit_info=info)
    pages = pdf_pages(build_sheet(inp, tmp_path / "s.pdf", date_invariant=True))
    _contains(pages[0], "The fit did not converge.", "max R-hat 1.083", "min bulk ESS 87", "12 divergent",
              "Read with care: the evidence is weak")
    assert all("NOT converged" in p for p in pages)  # and the footer says so on every page


def test_disconnected_design(demo_corpus, tmp_path):
    t = demo_corpus.table.copy()
    twin = t.copy()
    for col in ("benchmark", "model", "scaffold"):
        twin[col] = "twin-" + twin[col].astype(str)
    both = pd.concat([t.astype({c: str for c in ("benchmark", "task", "model", "scaffold", "trial")}),
                      twin.astype({c: str for c in ("benchmark", "task", "model", "scaffold", "trial")})],
                     ignore_index=True)
    for col in ("benchmark", "task", "model", "scaffold", "trial"):
        both[col] = both[col].astype("category")
    corpus = dataclasses.replace(demo_corpus, table=both)
    inp = report_inputs_from(corpus, synthetic_components(TB_SIGMAS, TB_SPREAD), fit_info=CONVERGED)
    assert inp.corpus_summary["connected"] is False
    _contains(_first_page(inp, tmp_path), "Disconnected design.", "falls into 2 components")


def test_reliability_near_zero(demo_corpus, tmp_path):
    weak = dict(TB_SIGMAS, model=0.02)
    inp = report_inputs_from(demo_corpus, synthetic_components(weak, 0.1), fit_info=CONVERGED)
    first = _first_page(inp, tmp_path)
    _contains(first, "Reliability near zero.", "Near zero: the ranking is essentially noise.")
    assert "Approximate method." not in first  # the project's fits are NUTS: no approximation is flagged


def test_no_failure_taxonomy_says_what_it_needs(demo_pdf, demo_inputs):
    """No failure-taxonomy result and no error-category facet: decision 5 prints no number and says
    what is needed (an error-category facet) and how to get one."""
    assert demo_inputs.analysis("failure_taxonomy") is None
    assert not any("error_category" in t for t in demo_inputs.components.terms)
    ct = sheet_content(demo_inputs)
    assert ct.decisions[4].status == "not run"
    first = pdf_pages(demo_pdf)[0]
    _contains(first, "How should we read a failure taxonomy?",
              "Not computed: a failure taxonomy needs an error-category facet, and this corpus has none.",
              "add an error_category column", "fit the ddr preset")
    assert "Where agents differ most" not in first


def test_components_supplied_without_fit(demo_corpus, tmp_path):
    inp = report_inputs_from(demo_corpus, synthetic_components(TB_SIGMAS, TB_SPREAD))
    pages = pdf_pages(build_sheet(inp, tmp_path / "s.pdf", date_invariant=True))
    _contains(pages[0], "Convergence not checked here.")
    _contains(" ".join(pages), "Not computed.")  # no theta: no rank pages, said so


def test_long_model_names_do_not_break_layout(demo_corpus, tmp_path):
    t = demo_corpus.table.copy()
    long = "An-Extremely-Long-Model-Name-From-A-Vendor-Who-Likes-Details " * 3
    t["model"] = t["model"].astype(str).replace({"GPT-5.2": long.strip()}).astype("category")
    corpus = dataclasses.replace(demo_corpus, table=t)
    theta, names = synthetic_theta(t)
    inp = report_inputs_from(corpus, synthetic_components(TB_SIGMAS, TB_SPREAD), theta, model_names=names,
                             fit_info=CONVERGED)
    pages = pdf_pages(build_sheet(inp, tmp_path / "s.pdf", date_invariant=True))
    assert len(pages) == 7
    assert "\u2026" in pages[4] and long.strip() not in pages[4]  # cut with an ellipsis in the rank figure


@pytest.mark.parametrize("obj, claim, question", [
    ("system", "relative", "Does this leaderboard rank model-scaffold systems reliably?"),
    ("model", "absolute", "Can this leaderboard's scores of models be trusted against a fixed threshold?"),
])
def test_object_and_claim(demo_corpus, tmp_path, obj, claim, question):
    inp = report_inputs_from(demo_corpus, synthetic_components(TB_SIGMAS, TB_SPREAD), object_of_measurement=obj,
                             claim=claim, fit_info=CONVERGED)
    first = _first_page(inp, tmp_path)
    est = "Erho2" if claim == "relative" else "Phi"
    core = dstudy_summary(inp.components, inp.observed_design, target=inp.target)["estimands"][est]
    sym = "E\u03c1\u00b2" if claim == "relative" else "\u03a6"
    _contains(first, question, f"{sym} = {fmt_coef(core['median'])}")
    if claim == "absolute":
        _contains(first, "task difficulty (error for absolute scores)", f"target {sym} \u2265 0.900")


def test_seed_003_agent_facets(demo_corpus, tmp_path):
    """Seed 003's four-facet formula (agent, task, step, error category) reports on agents."""
    from ddr_explorer.core.dstudy import DStudyDesign

    comps = synthetic_components({"agent": 0.5, "task": 2.0, "step": 0.8, "error_category": 0.6, "task:agent": 1.2,
                                  "agent:step": 0.3, "agent:error_category": 0.4, "task:step": 0.5,
                                  "task:error_category": 0.4, "error_category:step": 0.2})
    design = DStudyDesign(n_tasks=175, object_of_measurement="agent", extra_facets={"step": 3, "error_category": 4},
                    n_models=17)
    inp = report_inputs_from(demo_corpus, comps, design=design, fit_info=CONVERGED)
    first = _first_page(inp, tmp_path)
    _contains(first, "Does this leaderboard rank agents reliably?", "3 steps", "4 error categories",
              "The fit has error-category terms")


def test_posterior_duck_typing(demo_corpus, tmp_path):
    """A posterior object is read by attribute; the sampler module is never imported."""
    rng = np.random.default_rng(2)
    models = sorted(demo_corpus.table["model"].astype(str).unique())
    sigma = {t: s * np.exp(rng.normal(0, 0.1, (4, 250))) for t, s in TB_SIGMAS.items()}
    post = SimpleNamespace(
        sigma=sigma, mu=np.zeros((4, 250)),
        random_effects={"model": rng.normal(0, 1.7, (4, 250, len(models)))},
        levels={"model": pd.DataFrame({"model": models})},
        spec=SimpleNamespace(formula="y ~ 1 + (1|task) + (1|model)"),
        settings=SimpleNamespace(__dataclass_fields__={"chains": None, "draws": None}, chains=4, draws=250),
        diagnostics=SimpleNamespace(converged=False, max_r_hat=1.2, min_ess_bulk=40.0, divergences=3,
                                    problems=["R-hat of sigma_model is 1.2"]),
        device="cpu", wall_seconds=12.5)
    inp = report_inputs_from(demo_corpus, posterior=post)
    assert inp.theta.shape == (1000, len(models)) and inp.model_names == models
    assert inp.components.n_draws == 1000
    assert inp.fit_info["converged"] is False and inp.fit_info["max_rhat"] == 1.2
    assert inp.fit_info["settings"] == {"chains": 4, "draws": 250}
    _contains(_first_page(inp, tmp_path), "The fit did not converge.", "max R-hat 1.200")


# ---------------------------------------------------------------------------
# Inputs, figures, layering
# ---------------------------------------------------------------------------

def test_inputs_validation(demo_inputs):
    with pytest.raises(ValueError, match="model names for"):
        dataclasses.replace(demo_inputs, model_names=["a", "b"])
    with pytest.raises(ValueError, match="unknown analysis key"):
        dataclasses.replace(demo_inputs, analyses={"sensitivity": None})
    with pytest.raises(TypeError, match="HeldOutReliability"):
        dataclasses.replace(demo_inputs, analyses={"held_out": [0.1, 0.2]})
    with pytest.raises(ValueError, match="target"):
        dataclasses.replace(demo_inputs, target=1.5)
    with pytest.raises(ValueError, match="one length"):
        HeldOutReliability([0.1, 0.2], [0.3])


def test_difficulty_quartiles(demo_inputs):
    diff = demo_inputs.difficulty
    assert diff.n_strata == 4 and diff.stratum_n.sum() == len(diff.tasks) == 89
    assert np.all(np.diff(diff.stratum_mean) < 0)  # Q1 easiest ... Q4 hardest
    assert diff.stratum_n.max() - diff.stratum_n.min() <= 1


def test_dstudy_figure_draws_core_numbers(demo_inputs):
    ct = sheet_content(demo_inputs)
    curve = ct.view.curves["n_tasks"]
    d = figures.dstudy_figure(curve, 260, 190)
    lines = [s for s in d.contents if type(s).__name__ == "PolyLine" and s.strokeColor == styles.MEDIAN]
    assert len(lines) == 1
    ys = np.asarray(lines[0].points[1::2])
    # invert the plot's mapping: y points back to coefficient values
    plot_y0, plot_h = 27.0, 190 - 27 - 11
    np.testing.assert_allclose((ys - plot_y0) / plot_h, np.clip(curve.median, 0, 1), atol=1e-9)


def test_ellipsize_fits_width():
    s = styles.ellipsize("x" * 200, 50, styles.FONT, 6)
    assert s.endswith("\u2026") and styles.text_width(s, styles.FONT, 6) <= 50
    assert styles.ellipsize("short", 50) == "short"


def test_report_never_imports_qt():
    code = ("import sys; import ddr_explorer.core.report as r; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'jax', 'numpyro') "
            "or m.startswith('ddr_explorer.gui') or m.startswith('ddr_explorer.core.model')]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_formatters():
    assert fmt_coef(0.96912) == "0.969" and fmt_pct(0.1234) == "12.3%"
    assert fmt_var(8.973) == "8.97" and fmt_var(0.1374) == "0.137" and fmt_var(12.06) == "12.1"
    assert fmt_usd(1234.5) == "$1,234" and fmt_usd(12.345) == "$12.35" and fmt_usd(0.01234) == "$0.0123"
    assert fmt_r(-0.9) == "\u22120.90"


def test_pooled_sheet_cost_page_shows_the_budget_allocation(pooled_pdf, pooled_inputs):
    """The budget's tasks per benchmark on the cost page, the numbers of allocate_budget."""
    from ddr_explorer.core.dstudy import allocate_budget

    inp = pooled_inputs
    a = allocate_budget(inp.components, inp.observed_design, inp.budget)
    ct = sheet_content(inp)
    assert ct.allocation["tasks"] == a.tasks and sum(a.tasks.values()) > len(a.tasks)
    assert a.costs["optimal"] <= inp.budget
    text = "\n".join(pdf_pages(pooled_pdf))
    _contains(text, f"Tasks per benchmark within {fmt_usd(inp.budget)}",
              f"{fmt_coef(a.summaries['optimal'].median)} for {fmt_usd(a.costs['optimal'])}",
              f"against {fmt_coef(a.summaries['equal'].median)}")
    for b in a.benchmarks:
        _contains(text, f"{b} {fmt_usd(a.prices[b])} {fmt_var(a.task_variance[b])} {a.tasks[b]:,} {a.equal[b]:,}")


@pytest.mark.parametrize("projected, held, words", [
    # seed 003's finding: the held-out falls short and moves against the projection
    ([0.80, 0.82, 0.84, 0.86], [0.50, 0.49, 0.47, 0.45], "The training-cell projection is optimistic here"),
    # the TB2 demo's full sheet: r < 0 across splits, held-out about the projection on average
    ([0.968, 0.970, 0.972, 0.974], [0.975, 0.972, 0.971, 0.968], "On average the projection holds, but not split by split"),
    # the projection tracks the held-out value
    ([0.80, 0.82, 0.84, 0.86], [0.81, 0.82, 0.85, 0.86], "The projection generalises here"),
    # a mean gap of -0.00004 with r < 0 was called optimistic; the splits' gaps straddle 0
    ([0.970, 0.971, 0.972, 0.973], [0.9720, 0.9712, 0.9712, 0.97144], "On average the projection holds, but not split by split"),
])
def test_hold_out_decision_reads_the_gap_and_the_correlation_together(demo_inputs, projected, held, words):
    """The word on the projection comes from the rule on the split gaps and their spread
    (core.analyses.gap_verdict), never from the sign of the mean alone: the sheet once said "optimistic"
    next to a held-out value above the projection (TB2, 50 splits, r = -0.63), and beside a mean gap of
    -0.00004."""
    h = HeldOutReliability(projected, held)
    ct = sheet_content(dataclasses.replace(demo_inputs, analyses={"held_out": h}))
    d4 = next(d for d in ct.decisions if d.number == 4)
    assert words in d4.answer, d4.answer
    optimistic = words.startswith("The training-cell projection is optimistic")
    assert h.verdict.optimistic == optimistic
    assert ("falls short by" in d4.answer) == optimistic
    assert ("No detectable gap between the training-cell projection and the held-out figure" in d4.answer) \
        == (not optimistic)
    others = {"The training-cell projection is optimistic here", "On average the projection holds, but not split by split",
              "The projection generalises here"} - {words}
    assert not any(o in d4.answer for o in others), d4.answer
    # the held-out section on page 4 reads the splits with the same sentence
    from ddr_explorer.core.report.content import held_out_reading

    assert held_out_reading(h) in d4.answer


def test_difficulty_decision_says_the_rules_sentence(demo_inputs):
    """Decision 2 words the aggregate - hardest gap by the rule on it and its interval ("falls
    short by 0.002" was printed for a gap inside the two fits' noise)."""
    from ddr_explorer.core.reliability import Summary

    def s(median, lo, hi):
        return Summary(median=median, mean=median, hdi68=(lo, hi), hdi95=(lo, hi), n_draws=4000)

    labels = ("Q1 (easiest)", "Q2", "Q3", "Q4 (hardest)")
    near = DifficultyProfile(labels, (s(0.99, 0.98, 0.995),) * 3 + (s(0.987, 0.975, 0.994),), s(0.989, 0.984, 0.993))
    d2 = next(d for d in sheet_content(dataclasses.replace(demo_inputs, analyses={"difficulty": near})).decisions
              if d.number == 2)
    assert "No detectable gap between the all-tasks figure and Q4 at its 22 tasks (gap \u22120.002" in d2.answer, d2.answer
    assert "falls short" not in d2.answer
    far = DifficultyProfile(labels, (s(0.99, 0.98, 0.995),) * 3 + (s(0.60, 0.45, 0.75),), s(0.989, 0.984, 0.993))
    d2 = next(d for d in sheet_content(dataclasses.replace(demo_inputs, analyses={"difficulty": far})).decisions
              if d.number == 2)
    assert "The all-tasks figure is optimistic here: Q4 at its 22 tasks falls short by 0.389" in d2.answer, d2.answer
