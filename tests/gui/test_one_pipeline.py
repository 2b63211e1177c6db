"""The app, ``ddr dstudy --json`` and the DDR sheet, put in one state, show the same designs and numbers.

One fit of the demo corpus (cached, few draws), one state: prices USD 0.80 per trial, target
Erho2 >= 0.80, budget USD 3,000.  The cheapest design for the target, the best design within the
budget and the reliability of the observed design must come out identical in the app's D-study tab,
in ``ddr dstudy`` (JSON and text) and in the sheet (its content and the PDF's text), because all
three call core.dstudy.budget_search over core.dstudy.grids and print with core.formatting.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from ddr_explorer.core.cli import main  # noqa: E402
from ddr_explorer.core.corpus.io import load_corpus  # noqa: E402
from ddr_explorer.core.files import demo_corpus_path  # noqa: E402
from ddr_explorer.core.fitting import components_from_posterior, fit_corpus, theta_from_posterior  # noqa: E402
from ddr_explorer.core.formatting import facet_words, fmt_coef, fmt_design, fmt_usd  # noqa: E402
from ddr_explorer.core.model.sampler import SamplerSettings  # noqa: E402
from ddr_explorer.core.report import report_inputs_from, sheet_content  # noqa: E402
from ddr_explorer.core.report.sheet import render_sheet  # noqa: E402
from ddr_explorer.gui.main_window import MainWindow  # noqa: E402
from ddr_explorer.gui.workers import wait_for_tasks  # noqa: E402

#: The warmup and chains of tests/gui/test_fit.py's fit of the demo (one compiled sampler serves both files).
FIT = ["--stop", "fixed", "--draws", "40", "--warmup", "40", "--chains", "2", "--seed", "3"]
SETTINGS = SamplerSettings(stop="fixed", draws=40, warmup=40, chains=2, seed=3)
PRICE, TARGET, BUDGET = 0.8, 0.8, 3000.0
BENCH = "terminal-bench-2.0"


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    cache = tmp_path_factory.mktemp("one-pipeline-cache")
    assert main(["fit", str(demo_corpus_path()), "--preset", "per-benchmark", "--cache", str(cache), "--quiet",
                 "--allow-unconverged",
                 "--json", *FIT]) == 0
    corpus = load_corpus(demo_corpus_path())
    result = fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=cache)
    assert result.from_cache
    return {"cache": cache, "corpus": corpus, "posterior": result.posterior}


def _cli(state, capsys, *extra):
    capsys.readouterr()
    rc = main(["dstudy", str(demo_corpus_path()), "--cache", str(state["cache"]), *FIT,
               "--price-per-trial", str(PRICE), "--target", str(TARGET), "--budget", str(BUDGET), *extra])
    assert rc == 0
    return capsys.readouterr().out


def test_app_cli_and_sheet_find_the_same_designs_and_print_them_alike(state, capsys, qtbot):
    # -- ddr dstudy --json and text ------------------------------------------------------------
    cli = json.loads(_cli(state, capsys, "--json"))
    cli_text = _cli(state, capsys)
    cheapest, best = cli["budget"]["cheapest_for_target"], cli["budget"]["best_design"]
    assert cheapest is not None and best is not None  # the state is chosen so both exist
    assert best["cost"] <= BUDGET and cheapest["median"] >= TARGET

    # -- the DDR sheet -----------------------------------------------------------------------------
    inputs = report_inputs_from(state["corpus"], posterior=state["posterior"], prices={BENCH: PRICE},
                                target=TARGET, budget=BUDGET)
    ct = sheet_content(inputs)
    assert ct.search.design_at(ct.search.cheapest) == cheapest
    assert ct.search.design_at(ct.search.best_in_budget) == best

    # -- the app's D-study tab -------------------------------------------------------------------
    w = MainWindow()
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(demo_corpus_path())
    theta, names = theta_from_posterior(state["posterior"], "model")
    w.show_posterior(components_from_posterior(state["posterior"]), theta, names)
    w.state.update(prices={BENCH: PRICE}, target=TARGET, budget=BUDGET)
    panel = w.dstudy_panel
    qtbot.waitUntil(lambda: panel.search is not None and panel.frontier_jobs >= 2 and panel._frontier_task is None,
                    timeout=60_000)
    panel.redraw_now()
    assert panel.search.design_at(panel.search.cheapest) == cheapest
    assert panel.search.design_at(panel.search.at_budget(BUDGET).best_in_budget) == best

    # -- the same words and digits everywhere --------------------------------------------------------
    # in the fit's words (core.formatting.facet_words): seed 000 Eq. 2 of one benchmark has no benchmark size
    words = facet_words(w.state.object_of_measurement, panel.components.facets)
    cheap_text, best_text = fmt_design(cheapest, "Erho2", words), fmt_design(best, "Erho2", words)
    assert "benchmark" not in cheap_text and " scaffold" in cheap_text
    assert panel.readout_labels["cheapest"].text() == cheap_text
    assert panel.readout_labels["budget"].text() == best_text
    assert f"cheapest design for the target: {cheap_text}" in cli_text
    assert f"best design within {fmt_usd(BUDGET)}: {best_text}" in cli_text
    from io import BytesIO

    from pypdf import PdfReader

    pdf = " ".join(" ".join(p.extract_text().split()) for p in PdfReader(BytesIO(render_sheet(ct))).pages)
    for d in (cheapest, best):
        assert fmt_usd(d["cost"]) in pdf and fmt_coef(d["median"]) in pdf

    # The observed design's reliability: the CLI's estimand, the app's readout, the sheet's headline.
    w.state.update(**{k: v for k, v in w.state.observed.items()})
    view = panel.redraw_now()
    coef = view.readouts.coefficient.median
    assert ct.view.readouts.coefficient.median == coef
    # the screen, the CLI and the sheet read success rates (the scale a buyer reads); the latent estimands beside
    assert cli["scale"] == "observed"
    erho2 = [cli["observed_scores"]["Erho2"]]
    assert erho2 and fmt_coef(erho2[0]["median"]) == fmt_coef(coef)
    assert panel.readout_labels["coefficient"].text().startswith(fmt_coef(coef))
    assert fmt_coef(coef) in pdf

    # The budget's tasks per benchmark (core.dstudy.allocation): one benchmark, so the CLI and the app say why
    # there is none, in the same words; the sheet says nothing of it (its "One benchmark" notice covers it).
    why = cli["allocation"]["why_none"]
    assert why.startswith("the design has one benchmark") and ct.allocation is None and ct.allocation_text == ""
    assert panel.wait_for_allocation() and panel.allocation is None and panel.allocation_why == why
    assert why in panel.allocation_label.text()
    wait_for_tasks(60)
