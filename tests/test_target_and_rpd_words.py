"""A target prints as it was typed (0.875 is not "0.88"); reliability per dollar reads the same on screen, CLI, sheet."""

from __future__ import annotations

import numpy as np
import pytest

from ddr_explorer.core.dstudy import DStudyDesign, DStudyModel, cost_frontier
from ddr_explorer.core.formatting import fmt_target, fmt_usd
from ddr_explorer.core.reliability import VarianceComponents


def _components() -> VarianceComponents:
    rng = np.random.default_rng(5)
    sd = {"task": 3.0, "model": 1.74, "scaffold": .37, "task:model": 1.39, "task:scaffold": 1.11,
          "model:scaffold": .46}
    return VarianceComponents.from_mapping({t: (v * np.exp(rng.normal(0, .2, 300))) ** 2 for t, v in sd.items()},
                                           source="synthetic")


def _strings(drawing) -> list[str]:
    from reportlab.graphics.shapes import String

    out, stack = [], list(drawing.contents)
    while stack:
        x = stack.pop()
        if isinstance(x, String):
            out.append(x.text)
        stack.extend(getattr(x, "contents", []))
    return out


def test_fmt_target_keeps_the_typed_decimals():
    assert [fmt_target(t) for t in (0.875, 0.85, 0.9, 0.999, 0.8)] == ["0.875", "0.85", "0.90", "0.999", "0.80"]


def test_the_sheet_figures_label_target_0875_as_typed():
    from ddr_explorer.core.report import figures as fig

    c = _components()
    d = DStudyDesign(n_tasks=39, n_scaffolds=2, n_replicates=3, n_models=29,
                     price_per_trial={"terminal-bench-2.0": 0.8})
    curve = DStudyModel(c).curve(d, "n_tasks", grid=np.array([1.0, 10.0, 100.0]), target=0.875)
    assert "target 0.875" in _strings(fig.dstudy_figure(curve))
    frontier = cost_frontier(c, d, n_tasks=np.array([10.0, 40.0]), n_scaffolds=np.array([1.0, 2.0]),
                             n_benchmarks=np.array([1.0]), target=0.875)
    labels = _strings(fig.cost_frontier_figure(frontier))
    assert "target 0.875" in labels and "target 0.88" not in labels


def test_fmt_rpd_says_what_the_ratio_divides():
    """RPD = Erho2 / mean cost per trial (DDR paper 2026): "1.21 per USD per trial" read as nothing to a buyer."""
    from ddr_explorer.core.formatting import fmt_rpd

    assert fmt_rpd(0.968 / 0.8, 0.968, 0.8) == ("reliability per dollar 1.21 (E\u03c1\u00b2 0.968 \u00f7 $0.800 "
                                                 "mean cost per trial)")
    assert fmt_rpd(None, 0.9, 0.8) == "reliability per dollar n/a"


def test_ddr_dstudy_prints_reliability_per_dollar_in_the_same_words(capsys, tmp_path):
    import json

    from ddr_explorer.core.cli import main
    from ddr_explorer.core.formatting import fmt_rpd

    comps = tmp_path / "c.json"
    comps.write_text(json.dumps({"scale": "sd", "components": {"task": 3.0, "model": 1.74, "task:model": 1.39}}))
    argv = ["dstudy", "--components", str(comps), "--n-tasks", "39", "--price-per-trial", "0.8"]
    assert main([*argv, "--json"]) == 0
    rpd = json.loads(capsys.readouterr().out)["rpd"]
    assert rpd["median"] == pytest.approx(rpd["coefficient"] / 0.8) and rpd["price_per_trial"] == 0.8
    assert main(argv) == 0
    text = capsys.readouterr().out
    words = fmt_rpd(rpd["median"], rpd["coefficient"], 0.8, rpd["estimand"])
    assert f"  {words}\n" in text and "per USD per trial" not in text



def test_the_sheet_says_reliability_per_dollar_in_the_same_words(tmp_path):
    """Decision 3 and the cost page's caption read "reliability per dollar 1.21 (Eρ² ... ÷ $0.800 mean cost per
    trial)", the words of the screen and ``ddr dstudy``; "per USD per trial" is gone."""
    from pathlib import Path

    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.formatting import fmt_rpd
    from ddr_explorer.core.report import report_inputs_from, sheet_content
    from ddr_explorer.core.report.sheet import _cost_page

    demo = Path(__file__).resolve().parents[1] / "resources" / "demo" / "terminal-bench-2.csv"
    corpus = load_corpus(demo)
    inputs = report_inputs_from(corpus, _components(), prices={"terminal-bench-2.0": 0.8}, target=0.875,
                                fit_info={"converged": True})
    ct = sheet_content(inputs)
    r = ct.view.readouts
    words = fmt_rpd(r.rpd.median, r.coefficient.median, 0.8, r.estimand)
    cost = next(d for d in ct.decisions if d.number == 3)
    assert words in cost.answer and "per USD per trial" not in cost.answer
    captions = [getattr(f, "text", "") for f in _cost_page(ct)]
    assert any(c.startswith("R" + words[1:] + " for the observed design") for c in captions)
    assert not any("per USD per trial" in c for c in captions)
