"""`ddr methods` fits what the design separates, and runs on plain G-study tables.

- On a one-scaffold corpus of single 0/1 responses (a public py-irt leaderboard file) every estimator
  fits the preset reduced to the terms the design separates, as `ddr fit` does: no column splits a
  one-level scaffold or a task:model term confounded with the residual; the terms left out are said;
  ``--strict-terms`` refuses; a fit already in the cache fills the Bayes GLMM column.
- A Brennan-style balanced p x (r:t) score table (persons, raters nested in tasks) goes through
  Henderson, REML and DISCO (and the Laplace GLMM for a 0/1 response) with a formula; the balanced
  design's ANOVA (expected mean squares) answer is known in closed form.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import ddr_explorer.core.estimators.methods as methods_mod
from ddr_closed_forms import nested_anova  # registered by tests/conftest.py
from ddr_explorer.core import cli
from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.design.presets import UnsupportedTermsError
from ddr_explorer.core.estimators import MixedDesign, reml
from ddr_explorer.core.estimators.methods import format_methods_table, methods_table
from ddr_explorer.core.estimators.score_table import observed_sizes, score_table_methods

FAST = ("Henderson", "REML", "Laplace", "DISCO")
BRENNAN = "score ~ (1|p) + (1|t) + (1|r:t) + (1|p:t)"


@pytest.fixture(scope="module")
def pyirt_file(tmp_path_factory):
    """One benchmark, 20 tasks, 12 models under one (unnamed) scaffold, one 0/1 response per cell."""
    rng = np.random.default_rng(1)
    b, a = rng.normal(0, 1.2, 20), rng.normal(0, 1.0, 12)
    path = tmp_path_factory.mktemp("pyirt") / "one.jsonl"
    with path.open("w") as f:
        for m in range(12):
            p = 1 / (1 + np.exp(-(a[m] - b)))
            resp = {f"task{t:02d}": int(rng.random() < p[t]) for t in range(20)}
            f.write(json.dumps({"subject_id": f"model{m:02d}", "responses": resp}) + "\n")
    return path


@pytest.fixture(scope="module")
def corpus(pyirt_file):
    return load_corpus(pyirt_file)


def test_every_estimator_fits_the_terms_the_design_separates(corpus):
    t = methods_table(corpus, "per-benchmark", estimators=FAST)
    assert t.formula == "y ~ 1 + (1|task) + (1|model)"
    assert t.terms == ["task", "model", "residual"]
    assert [d["term"] for d in t.dropped] == ["scaffold", "task:model", "task:scaffold", "model:scaffold"]
    assert t.requested_formula.endswith("(1|model:scaffold)")
    r = reml(MixedDesign.from_spec(corpus, "y ~ 1 + (1|task) + (1|model)"))
    for term in t.terms:
        assert t.shares["REML"][term] == pytest.approx(r.shares[term], rel=1e-9)
    text = format_methods_table(t)
    assert "Terms left out of every estimator" in text and "scaffold is confounded with (intercept)" in text
    assert "scaffold  " not in text.split("(scale)")[1]  # no row for a one-level scaffold
    d = t.to_dict()
    assert d["formula"] == t.formula and [x["term"] for x in d["terms_left_out"]][0] == "scaffold"


def test_strict_terms_refuses_in_core_and_in_the_cli(corpus, pyirt_file, capsys, tmp_path):
    with pytest.raises(UnsupportedTermsError, match=r"\(1\|task\) \+ \(1\|model\)"):
        methods_table(corpus, "per-benchmark", estimators=FAST, strict_terms=True)
    code = cli.main(["methods", str(pyirt_file), "--strict-terms", "--no-bayes", "--quiet",
                     "--cache", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "cannot separate" in err and "--formula 'y ~ 1 + (1|task) + (1|model)'" in err


def test_the_cached_fit_of_the_reduced_preset_fills_the_bayes_glmm_column(fake_sampler, pyirt_file, capsys,
                                                                           tmp_path, monkeypatch):
    cache = str(tmp_path / "cache")
    assert cli.main(["fit", str(pyirt_file), "--cache", cache, "--quiet", "--allow-unconverged"]) == 0
    capsys.readouterr()
    real = methods_mod.methods_table  # the observed-scale LMM samples for a minute: not under test here
    monkeypatch.setattr(methods_mod, "methods_table",
                        lambda *a, **k: real(*a, **k, estimators=(*FAST, "Bayes GLMM")))
    assert cli.main(["methods", str(pyirt_file), "--cache", cache, "--quiet", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "Bayes GLMM" in out["estimators"]
    assert not any("no cached fit" in n for n in out["notes"])
    assert set(out["shares"]["Bayes GLMM"]) == {"task", "model", "residual"}


def test_a_posterior_of_other_terms_is_not_used(corpus):
    from types import SimpleNamespace

    from ddr_explorer.core.model.formula import preset

    post = SimpleNamespace(sigma={t: np.ones((2, 3)) for t in preset("per-benchmark").term_names},
                           spec=preset("per-benchmark"))
    t = methods_table(corpus, "per-benchmark", posterior=post, estimators=("REML", "Bayes GLMM"))
    assert t.estimators == ["REML"]
    assert any("not of the compared formula y ~ 1 + (1|task) + (1|model)" in n for n in t.notes)


# -- a plain G-study table -------------------------------------------------------------------------------
def brennan_table(n_p=30, n_t=3, n_r=4, seed=0) -> pd.DataFrame:
    """Balanced p x (r:t): persons cross tasks, raters nested in tasks (Brennan 2001, sec. 4)."""
    rng = np.random.default_rng(seed)
    up, ut = rng.normal(0, 1.0, n_p), rng.normal(0, 0.5, n_t)
    urt, upt = rng.normal(0, 0.6, (n_t, n_r)), rng.normal(0, 0.7, (n_p, n_t))
    rows = [(f"p{p}", f"t{t}", f"r{r}", 5 + up[p] + ut[t] + urt[t, r] + upt[p, t] + rng.normal(0, 0.8))
            for p in range(n_p) for t in range(n_t) for r in range(n_r)]
    return pd.DataFrame(rows, columns=["p", "t", "r", "score"])


def anova_components(df: pd.DataFrame, n_p=30, n_t=3, n_r=4) -> dict[str, float]:
    """The balanced design's ANOVA estimates from its mean squares (Brennan 2001, Table 3.3 for p x (r:t))."""
    y = df.sort_values(["p", "t", "r"], key=lambda c: c.str[1:].astype(int))["score"].to_numpy()
    y = y.reshape(n_p, n_t, n_r)
    return nested_anova(y)


def test_a_brennan_table_gets_the_closed_form_anova_answer_from_henderson_and_reml():
    df = brennan_table()
    want = anova_components(df)
    t = score_table_methods(df, BRENNAN, "score", estimators=("Henderson", "REML", "Laplace", "DISCO"))
    assert t.object_of_measurement == "p" and t.terms == ["p", "t", "r:t", "p:t", "residual"]
    assert t.sizes == {"t": 3.0, "r": 4.0, "replicate": 1.0}
    for est in ("Henderson", "REML"):
        for term, v in want.items():
            assert t.components[est][term] == pytest.approx(v, rel=1e-6), (est, term)
    # Erho2_p = s2_p / (s2_p + s2_pt / n_t + s2_pr:t,e / (n_r n_t)); Phi adds s2_t / n_t and s2_r:t / (n_r n_t)
    erho = want["p"] / (want["p"] + want["p:t"] / 3 + want["residual"] / 12)
    phi = want["p"] / (want["p"] + want["t"] / 3 + want["p:t"] / 3 + want["r:t"] / 12 + want["residual"] / 12)
    assert t.coefficients["REML"]["Erho2"] == pytest.approx(erho, rel=1e-6)
    assert t.coefficients["Henderson"]["Phi"] == pytest.approx(phi, rel=1e-6)
    assert "Laplace" not in t.estimators and any("needs a 0/1 response" in n for n in t.notes)
    assert t.estimators == ["Henderson", "REML", "DISCO"] and not np.isnan(t.disco_eta)


def test_nested_labels_reused_within_tasks_are_sized_per_task():
    df = brennan_table(n_p=5, n_t=2, n_r=3)
    assert observed_sizes(df, {"p": ["p"], "t": ["t"], "r:t": ["r", "t"], "p:t": ["p", "t"]}, "p") == {
        "t": 2.0, "r": 3.0, "replicate": 1.0}


def test_a_binary_score_table_gets_the_logit_scale_estimators_too():
    rng = np.random.default_rng(3)
    df = brennan_table(n_p=15, n_t=3, n_r=3)
    df["correct"] = (df["score"] + rng.normal(0, 1, len(df)) > 5).astype(int)
    t = score_table_methods(df, "correct ~ (1|p) + (1|t) + (1|r:t)", "correct", estimators=FAST)
    assert t.estimators == ["Henderson", "REML", "Laplace", "DISCO"]
    assert t.scales["Laplace"] == "logit" and t.components["Laplace"]["residual"] == pytest.approx(np.pi ** 2 / 3)


def test_cli_methods_on_a_score_table_text_and_json(tmp_path, capsys):
    df = brennan_table()
    path = tmp_path / "brennan.csv"
    df.to_csv(path, index=False)
    want = anova_components(df)
    assert cli.main(["methods", str(path), "--formula", BRENNAN, "--no-bayes", "--quiet", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["response"] == "score" and out["rows"] == 360 and out["object_of_measurement"] == "p"
    assert out["components"]["REML"]["p:t"] == pytest.approx(want["p:t"], rel=1e-6)
    assert cli.main(["methods", str(path), "--formula", BRENNAN, "--no-bayes", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"{path}: 360 observations of 'score'")
    assert f"Erho2 (p)" in text and "r:t" in text
    assert cli.main(["methods", str(path), "--formula", BRENNAN, "--object", "q", "--no-bayes", "--quiet"]) == 2
    assert "brennan.csv" in capsys.readouterr().err



def test_the_cli_runs_the_bayesian_lmm_on_a_score_table(tmp_path, capsys, monkeypatch):
    """The sampled column is asked for and filled (a stand-in for the sampler: its own tests are in
    test_bayes_lmm.py; a real run compiles for a minute)."""
    from types import SimpleNamespace

    import ddr_explorer.core.estimators.bayes_lmm as bl

    seen = {}

    def stand_in(design, priors=None, settings=None, progress=None, cancel=None):
        seen["terms"], seen["binary"] = design.term_names, design.binary
        comps = reml(design).components
        draws = {k: np.full(8, v) for k, v in comps.items()}
        total = sum(comps.values())
        verdict = {"converged": True, "problems": []}
        return SimpleNamespace(posterior_means=lambda: comps, shares=lambda: {k: v / total for k, v in comps.items()},
                               components=lambda: draws, converged=True,
                               diagnostics=SimpleNamespace(verdict=lambda: verdict, problems=[]))

    monkeypatch.setattr(bl, "bayes_lmm", stand_in)
    df = brennan_table()
    path = tmp_path / "brennan.csv"
    df.to_csv(path, index=False)
    assert cli.main(["methods", str(path), "--formula", BRENNAN, "--quiet", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert seen == {"terms": ("p", "t", "r:t", "p:t"), "binary": False}
    assert out["estimators"] == ["Henderson", "REML", "Bayes LMM", "DISCO"]
    assert out["coefficients"]["Bayes LMM"]["Erho2"] == pytest.approx(out["coefficients"]["REML"]["Erho2"])


def test_the_sheets_score_reliability_fits_the_reduced_preset_too(corpus, monkeypatch):
    import ddr_explorer.core.estimators.bayes_lmm as bl
    from ddr_explorer.core.estimators.sheet import run_score_reliability

    seen = {}
    monkeypatch.setattr(bl, "bayes_lmm", lambda design, *a, **k: seen.setdefault("terms", design.term_names))
    monkeypatch.setattr(bl, "score_reliability", lambda fit, obj, sizes: (fit, obj))
    assert run_score_reliability(corpus) == (("task", "model"), "model")
