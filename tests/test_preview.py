"""The D-study preview from point estimates (core.preview, ddr dstudy --preview).

The preview's components must be exactly the estimator's (Laplace as ``ddr methods`` runs it, or the
sampler's rough fit), marked ``preview=True`` so that the sheet refuses them, and the D-study of them
must be the G-theory rule applied to those numbers (checked by hand for one design).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from ddr_explorer.core.cli import main
from ddr_explorer.core.corpus.validate import build_corpus
from ddr_explorer.core.dstudy import DStudyDesign, observed_design
from ddr_explorer.core.estimators.design import MixedDesign
from ddr_explorer.core.estimators.laplace import laplace
from ddr_explorer.core.model.design_matrix import build_design
from ddr_explorer.core.model.formula import RESIDUAL_VARIANCE, as_spec
from ddr_explorer.core.model.geometry import rough_fit
from ddr_explorer.core.preview import (LAPLACE_MAX_EFFECTS, PreviewCancelled, choose_method, next_preview,
                                       preview_components, preview_stages, preview_summary)
from ddr_explorer.core.reliability import VarianceComponents

#: Standard deviations on the logit scale of the simulated per-benchmark corpus.
SD = {"task": 1.5, "model": 1.0, "scaffold": 0.3, "task:model": 0.7, "task:scaffold": 0.4, "model:scaffold": 0.3}


def simulated_table(seed: int = 3, n_tasks: int = 14, n_models: int = 6, n_scaffolds: int = 2,
                    trials: int = 4, return_effects: bool = False):
    rng = np.random.default_rng(seed)
    eff = {t: {} for t in SD}
    rows = []
    for i in range(n_tasks):
        for m in range(n_models):
            for s in range(n_scaffolds):
                keys = {"task": (i,), "model": (m,), "scaffold": (s,), "task:model": (i, m),
                        "task:scaffold": (i, s), "model:scaffold": (m, s)}
                eta = -0.2
                for term, key in keys.items():
                    if key not in eff[term]:
                        eff[term][key] = rng.normal(0, SD[term])
                    eta += eff[term][key]
                k = int(rng.binomial(trials, 1 / (1 + math.exp(-eta))))
                rows.append({"benchmark": "sim", "task": f"t{i}", "model": f"m{m}", "scaffold": f"s{s}",
                             "successes": k, "trials": trials})
    return (pd.DataFrame(rows), eff) if return_effects else pd.DataFrame(rows)


@pytest.fixture(scope="module")
def corpus():
    return build_corpus(simulated_table(), file=None, format="simulated", name="preview-sim")


@pytest.fixture(scope="module")
def laplace_preview(corpus):
    return preview_components(corpus, "per-benchmark", method="laplace")


def test_preview_components_are_the_laplace_estimates(corpus, laplace_preview):
    want = laplace(MixedDesign.from_spec(corpus, as_spec("per-benchmark")))
    c = laplace_preview.components
    assert laplace_preview.method == "laplace" and c.preview is True
    assert c.n_draws == 1 and set(c.terms) == set(SD)
    for term in SD:  # the preview starts the search at the rough fit: another path to the same optimum
        assert c.draws[term][0] == pytest.approx(want.components[term], rel=1e-4, abs=1e-6), term
    assert c.residual[0] == RESIDUAL_VARIANCE == want.components["residual"]
    assert laplace_preview.converged == want.converged
    # the estimates are sensible: the largest simulated component comes out largest
    assert max(c.terms, key=lambda t: c.draws[t][0]) == "task"


def test_rough_preview_is_the_samplers_rough_fit(corpus):
    p = preview_components(corpus, "per-benchmark", method="rough")
    dm = build_design(corpus, as_spec("per-benchmark"))
    sigma = rough_fit(dm).sigma
    assert p.method == "rough" and p.components.preview
    for term, s in zip(dm.term_names, sigma):
        assert p.components.draws[term][0] == pytest.approx(s * s, rel=1e-12)


def test_auto_picks_laplace_up_to_the_size_limit(corpus):
    assert choose_method(LAPLACE_MAX_EFFECTS) == "laplace"
    assert choose_method(LAPLACE_MAX_EFFECTS + 1) == "rough"
    assert choose_method(10, "rough") == "rough"
    with pytest.raises(ValueError, match="unknown preview method"):
        choose_method(10, "reml")
    assert preview_stages(corpus, "per-benchmark") == ["rough", "laplace"]
    first, rest = next_preview(corpus, "per-benchmark")  # the app's job: the rough fit first, Laplace left
    assert first.method == "rough" and rest == ["laplace"]


def test_dstudy_of_the_preview_is_the_rule_by_hand(laplace_preview):
    """Erho2 and Phi of the model at 10 tasks x 2 scaffolds x 3 trials (seed 000 Eqs. 3-4), by hand."""
    v = {t: float(x[0]) for t, x in laplace_preview.components.draws.items()}
    e = RESIDUAL_VARIANCE
    nt, ns, nr = 10.0, 2.0, 3.0
    rel = v["task:model"] / nt + v["model:scaffold"] / ns + e / (nt * ns * nr)
    absolute = rel + v["task"] / nt + v["scaffold"] / ns + v["task:scaffold"] / (nt * ns)
    design = DStudyDesign(n_tasks=nt, n_scaffolds=ns, n_replicates=nr, n_models=6)
    s = preview_summary(laplace_preview, design)
    assert s["preview"] is True and s["preview_method"] == "laplace"
    erho2 = s["estimands"]["Erho2"]
    assert erho2["median"] == pytest.approx(v["model"] / (v["model"] + rel), rel=1e-12)
    assert erho2["lower95"] == erho2["median"] == erho2["upper95"]  # one set of estimates: no interval
    assert s["estimands"]["Phi"]["median"] == pytest.approx(v["model"] / (v["model"] + absolute), rel=1e-12)
    assert s["p_target"] in (0.0, 1.0)


def test_sheet_refuses_preview_components(corpus, laplace_preview):
    from ddr_explorer.core.report.inputs import report_inputs_from

    with pytest.raises(ValueError, match="preview point estimates, not a posterior"):
        report_inputs_from(corpus, components=laplace_preview.components)
    # the same numbers without the flag are accepted: the refusal is about the flag
    c = laplace_preview.components
    plain = VarianceComponents(c.draws, c.residual, "typed-in")
    assert report_inputs_from(corpus, components=plain).components.preview is False


def test_the_flag_survives_thinning():
    c = VarianceComponents.from_mapping({"model": [1.0, 2.0, 3.0]})
    import dataclasses

    p = dataclasses.replace(c, preview=True)
    assert p.thin(2).preview and p.posterior_mean().preview and not c.thin(2).preview


def test_cancel_stops_the_preview(corpus):
    with pytest.raises(PreviewCancelled):
        preview_components(corpus, "per-benchmark", method="laplace", cancel=lambda: True)


# -- ddr dstudy --preview -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("preview") / "sim.csv"
    simulated_table().to_csv(path, index=False)
    return path


def test_cli_preview_json_is_labelled_and_matches_core(corpus_csv, corpus, laplace_preview, capsys):
    assert main(["dstudy", str(corpus_csv), "--preview", "--preview-method", "laplace", "--n-tasks", "10",
                 "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["preview"] is True and got["preview_method"] == "laplace"
    assert got["source"].startswith("preview: Laplace")
    obs = observed_design(corpus)
    import dataclasses

    want = preview_summary(laplace_preview, dataclasses.replace(obs, n_tasks=10.0), observed=obs)
    # the file's corpus codes its levels in file order: the optimiser takes another path to the same optimum
    assert got["estimands"]["Erho2"]["median"] == pytest.approx(want["estimands"]["Erho2"]["median"], rel=1e-6)
    assert got["preview_estimates"]["components"]["task"] == pytest.approx(
        float(laplace_preview.components.draws["task"][0]), rel=1e-4)


def test_cli_preview_text_says_preview(corpus_csv, capsys):
    assert main(["dstudy", str(corpus_csv), "--preview", "--preview-method", "rough"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PREVIEW: from rough") and "not a posterior" in out and "Erho2" in out


def test_cli_preview_needs_a_corpus(tmp_path, capsys):
    comp = tmp_path / "c.json"
    comp.write_text(json.dumps({"scale": "variance", "components": {"model": 1.0}}))
    assert main(["dstudy", "--components", str(comp), "--preview"]) != 0
    assert "--preview needs a corpus" in capsys.readouterr().err


def test_laplace_preview_recovers_known_components():
    """The preview's numbers are honest: on a simulated corpus (60 tasks x 12 models x 3 scaffolds x 5 trials)
    the Laplace estimates lie within 35% of the variances of the effects actually drawn for every term with
    12 or more levels (scaffold, with 3, is left out: its own sampling error is larger than that), while the
    rough fit, the first stage in the app, is biased low on the binary scale."""
    table, drawn = simulated_table(seed=11, n_tasks=60, n_models=12, n_scaffolds=3, trials=5, return_effects=True)
    corpus = build_corpus(table, file=None, format="simulated", name="preview-known")
    preview = preview_components(corpus, "per-benchmark", method="laplace")
    got = {t: float(v[0]) for t, v in preview.components.draws.items()}
    for term in ("task", "model", "task:model", "task:scaffold", "model:scaffold"):
        truth = float(np.var(list(drawn[term].values()), ddof=1))
        assert got[term] == pytest.approx(truth, rel=0.35), (term, got[term], truth)
    assert preview.converged
    # the exact gradient's quasi-Newton search: tens of evaluations where the derivative-free one took hundreds
    assert 0 < preview.evaluations <= 40
    rough = preview_components(corpus, "per-benchmark", method="rough").components
    for term in ("task", "task:model", "task:scaffold"):
        assert float(rough.draws[term][0]) < 0.9 * got[term], term
