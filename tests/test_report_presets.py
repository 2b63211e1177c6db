"""The object of measurement follows the fitted model: the DDR sheet is written for every preset.

Seed 003's model (the ``ddr`` preset, Eq. 1) measures agents and has no ``model`` term; the sheet, its
D-study and its ranks used to assume models and failed ("no variance component for the object 'model'").
"""

from __future__ import annotations

import dataclasses

import pytest

from ddr_explorer.core.analyses.failure_sim import DEMO, simulate_failure_table
from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.dstudy import observed_design
from ddr_explorer.core.model.posterior import SamplerSettings
from ddr_explorer.core.reliability import generalizability, object_for_terms

DDR_TERMS = ("agent", "task", "step", "error_category", "task:agent", "agent:step", "agent:error_category",
             "task:step", "task:error_category", "error_category:step")
SMALL = dataclasses.replace(DEMO, n_models=2, n_scaffolds=2, n_benchmarks=2, n_tasks=4, n_steps=2, n_trials=2)


@pytest.fixture(scope="module")
def small_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("presets") / "small-failure-SIMULATED.csv"
    simulate_failure_table(SMALL, seed=5).to_csv(path, index=False)
    return path


def test_object_follows_the_model():
    assert object_for_terms(DDR_TERMS) == "agent"
    assert object_for_terms(DDR_TERMS, "system") == "agent"  # an agent is one model-scaffold pair
    assert object_for_terms(("task", "model", "scaffold", "task:model")) == "model"
    assert object_for_terms(("task", "model", "scaffold", "task:model"), "system") == "system"
    assert object_for_terms(("task", "model", "scaffold", "task:model"), "agent") == "system"
    with pytest.raises(ValueError, match="measures agents.*--object agent"):
        object_for_terms(DDR_TERMS, "model")


def test_observed_design_sizes_the_extra_facets_of_seed_003(small_csv):
    """Steps and categories are facets of the design, and a replicate is one trace's check (hand count)."""
    corpus = load_corpus(small_csv)
    plain = observed_design(corpus)
    assert plain.extra_facets == {} and plain.n_replicates == SMALL.n_trials * SMALL.n_steps * 4
    d = observed_design(corpus, object_of_measurement="agent", facets={"agent", "task", "step", "error_category"})
    assert d.extra_facets == {"step": 2.0, "error_category": 4.0}
    # no benchmark facet in seed 003's model: its task facet holds both benchmarks' tasks
    assert d.n_replicates == SMALL.n_trials and d.n_tasks == 2 * SMALL.n_tasks and d.n_benchmarks == 1
    # it compares agents (model-scaffold pairs), each run once: agents x tasks x traces (hand count 4 x 8 x 2)
    assert d.n_models == SMALL.n_models * SMALL.n_scaffolds and d.n_scaffolds == 1
    assert d.trial_count() == 4 * 8 * 2 and plain.n_models == SMALL.n_models
    # hand-computed Erho2 of one draw: s2_a / (s2_a + s2_at/nt + s2_as/ns + s2_ae/ne + pi^2/3 / (nt ns ne nr))
    import math

    import numpy as np

    from ddr_explorer.core.reliability import VarianceComponents

    vals = dict.fromkeys(DDR_TERMS, 0.0) | {"agent": 1.0, "task:agent": 0.5, "agent:step": 0.2,
                                            "agent:error_category": 0.4}
    c = VarianceComponents({k: np.array([v]) for k, v in vals.items()}, np.array([math.pi ** 2 / 3]))
    rel = float(generalizability(c, "agent", d.sizes(), "relative")[0])
    err = 0.5 / 8 + 0.2 / 2 + 0.4 / 4 + (math.pi ** 2 / 3) / (8 * 2 * 4 * 2)
    assert rel == pytest.approx(1.0 / (1.0 + err), rel=1e-12)


def _one_benchmark(corpus):
    from ddr_explorer.core.analyses.refits import sub_corpus

    return sub_corpus(corpus, corpus.table["benchmark"].astype(str) == "sim-bench-a", "one benchmark")


@pytest.mark.parametrize("preset", ["per-benchmark", "pooled", "ddr"])
def test_report_is_written_for_every_preset(fake_sampler, small_csv, tmp_path, preset):
    """The sheet of each preset (stand-in sampler, draws known by hand): ddr measures agents, the others models."""
    from ddr_explorer.core.ddr_sheet import write_ddr_sheet

    corpus = load_corpus(small_csv)
    if preset == "per-benchmark":  # seed 000 Eq. 2 is a model of one benchmark
        corpus = _one_benchmark(corpus)
    out = tmp_path / f"{preset}.pdf"
    res = write_ddr_sheet(corpus, out, preset=preset, settings=SamplerSettings(stop="fixed", draws=40, warmup=20, chains=2),
                          cache_dir=tmp_path / "cache", analyses={})
    assert out.is_file() and out.read_bytes()[:5] == b"%PDF-" and len(fake_sampler) == 1
    d = res.inputs.observed_design
    if preset == "ddr":
        assert d.object_of_measurement == "agent"
        assert d.extra_facets == {"step": 2.0, "error_category": 4.0} and d.n_replicates == SMALL.n_trials
        assert res.inputs.theta is not None and res.inputs.theta.shape[1] == SMALL.n_models * SMALL.n_scaffolds
    else:
        assert d.object_of_measurement == "model" and d.extra_facets == {}
        assert res.inputs.theta is not None and res.inputs.theta.shape[1] == SMALL.n_models
    with pytest.raises(ValueError, match="measures agents") if preset == "ddr" else _no_error():
        write_ddr_sheet(corpus, tmp_path / "m.pdf", preset=preset, settings=SamplerSettings(stop="fixed", draws=40, warmup=20,
                        chains=2), cache_dir=tmp_path / "cache", analyses={}, object_of_measurement="model")


def _pdf_text(path) -> str:
    import re

    pypdf = pytest.importorskip("pypdf")
    return " ".join(re.sub(r"\s+", " ", p.extract_text() or "") for p in pypdf.PdfReader(str(path)).pages)


@pytest.mark.parametrize("preset", ["pooled", "ddr"])
def test_sheet_words_follow_the_object(fake_sampler, small_csv, tmp_path, preset):
    """The ranks page (and the few-objects notice) count what is ranked: 4 agents of the ddr fit, 2 models else."""
    from ddr_explorer.core.ddr_sheet import write_ddr_sheet

    out = tmp_path / f"{preset}.pdf"
    res = write_ddr_sheet(load_corpus(small_csv), out, preset=preset, analyses={}, cache_dir=tmp_path / "cache",
                          settings=SamplerSettings(stop="fixed", draws=40, warmup=20, chains=2))
    text = _pdf_text(out)
    noun, n = ("agent", SMALL.n_models * SMALL.n_scaffolds) if preset == "ddr" else ("model", SMALL.n_models)
    other = "model" if preset == "ddr" else "agent"
    assert f"the mean over other {noun}s of P(" in text and f"; {n} {noun}s, 80 posterior draws" in text
    assert f"P(row {noun} ranks above column {noun})" in text and f"The most dominant {noun}," in text
    assert f"{noun}s with a certain rank" in text and f"{other}s with a certain rank" not in text
    assert f"Few {noun}s. Only {n} {noun}s: the {noun} variance rests on {n} values" in text
    assert f"mean over other {other}s" not in text and f"Few {other}s" not in text
    # seed 003's model has no benchmark facet: its 8 tasks are one facet over both benchmarks, and a replicate is
    # one trace of an agent on a task (core.formatting.facet_words: the app's words too)
    words = "Observed design: 8 tasks \u00d7 2 traces per agent-task pair \u00d7 2 steps \u00d7 4 error categories" \
        if preset == "ddr" else \
        "Observed design: 4 tasks per benchmark \u00d7 2 scaffolds per model \u00d7 2 benchmarks \u00d7 16 trials per cell"
    assert words in text
    if preset == "ddr":
        # the smallest-design table and the trial count of the cost page: agents, tasks and traces (4 x 8 x 2)
        assert "needed 95% interval P(reachable) latent scale tasks 8 " in text and " traces per agent-task pair 2 " in text
        # the design's count says it is a full design's, and the file's own count stands beside it
        table = load_corpus(small_csv).table
        cells = table.groupby(["benchmark", "task", "model", "scaffold"]).ngroups
        ran = f"{int(table['trials'].sum()):,} traces in {cells:,} cells"
        assert ("64 traces in a full design of these sizes (4 agents \u00d7 8 tasks \u00d7 2 traces per agent-task "
                f"pair); the corpus ran {ran}") in text
        for wrong in ("scaffolds per model", "Models compared", "models compared", "tasks per benchmark 8",
                      "8 tasks per benchmark", "trials per cell"):
            assert wrong not in text, wrong
    else:
        assert "needed 95% interval P(reachable) latent scale tasks per benchmark 4 " in text
        assert "scaffolds per model 2 " in text and "traces" not in text
    # the agreement with the observed success compares like with like: one observed mean per ranked object
    assert set(res.inputs.model_accuracy) == set(res.inputs.model_names) and len(res.inputs.model_names) == n


class _no_error:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.slow
def test_ddr_preset_report_with_the_real_sampler(small_csv, tmp_path, capsys):
    """``ddr report --preset ddr``: a real, short fit of seed 003 Eq. 1 and its sheet (it failed with "no variance
    component for the object 'model'")."""
    from ddr_explorer.core.cli import main

    out = tmp_path / "ddr.pdf"
    # a fixed run: by the default gate, "--draws 30" was only the first look and the run went on past it
    code = main(["report", str(small_csv), "--preset", "ddr", "-o", str(out), "--analyses", "none", "--stop", "fixed",
                 "--draws", "30", "--warmup", "30", "--chains", "2", "--cache", str(tmp_path / "cache"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert out.read_bytes()[:5] == b"%PDF-"


def test_methods_object_defaults_to_the_models_own(small_csv, capsys):
    """``ddr methods --preset ddr`` measures agents without ``--object`` (it defaulted to model and failed), at the
    design the fit's facets see; Erho2 of the REML column checked by hand from its components (seed 003 Eq. 1)."""
    import json

    from ddr_explorer.core.cli import main

    code = main(["methods", str(small_csv), "--preset", "ddr", "--no-bayes", "--quiet", "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    d = json.loads(out.out)
    assert d["object_of_measurement"] == "agent"
    # an agent is one model-scaffold pair: the agent design runs each agent once (scaffold size 1; no scaffold term)
    assert d["sizes"] == {"task": 8.0, "scaffold": 1.0, "benchmark": 1.0, "replicate": 2.0, "step": 2.0,
                          "error_category": 4.0}
    v = d["components"]["REML"]
    err = v["task:agent"] / 8 + v["agent:step"] / 2 + v["agent:error_category"] / 4 + v["residual"] / (8 * 2 * 4 * 2)
    assert d["coefficients"]["REML"]["Erho2"] == pytest.approx(v["agent"] / (v["agent"] + err), rel=1e-9)
    assert main(["methods", str(small_csv), "--preset", "ddr", "--no-bayes", "--quiet", "--object", "model"]) == 2
    assert "measures agents" in capsys.readouterr().err


def test_report_runs_the_failure_analysis_by_name(fake_sampler, small_csv, tmp_path, capsys):
    """``ddr report --analyses failures`` (README): decision 5 computed on the sheet.  The refit engine's default
    plan had taken over ``--analyses`` and refused every name but difficulty, heldout and loo."""
    from ddr_explorer.core.cli import main

    out = tmp_path / "failures.pdf"
    fast = ["--stop", "fixed", "--draws", "40", "--warmup", "20", "--chains", "2", "--cache", str(tmp_path / "cache"),
            "--quiet", "--date-invariant"]
    code = main(["report", str(small_csv), "--preset", "ddr", "--analyses", "failures", "--splits", "5", "-o", str(out),
                 *fast])
    assert code == 0, capsys.readouterr().err
    text = _pdf_text(out)
    assert "How should we read a failure taxonomy?" in text and "not computed" not in text.split("failure taxonomy?")[1][:60]
    assert "per-category" in text or "activation" in text
    # an unknown name is still named, with the analyses there are
    assert main(["report", str(small_csv), "--analyses", "loo,bogus", "-o", str(tmp_path / "x.pdf"), *fast]) == 2
    err = capsys.readouterr().err
    assert "unknown analysis 'bogus'" in err and "failures" in err
