"""Presets meet the design: a preset's terms that the corpus's design cannot
separate are left out of the fit with a note naming them, or refused with ``--strict-terms``.

The confounded corpus: one benchmark, 4 models, 6 tasks, 3 trials per cell, and each model ran
with exactly one scaffold of its own (scaffold s_m for model m).  Then the scaffold, task:scaffold
and model:scaffold kernels equal the model, task:model and model kernels (seed 000 Prop. E.2), and
the per-benchmark preset (Eq. 2) can only be fitted as task + model + task:model.  The fits use
the moment stand-in of ``tests/batch_fakes.py`` (``fake_sampler``): everything but NUTS runs.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
import ddr_batch_fakes as bf  # noqa: E402 - registered by tests/conftest.py
from ddr_explorer.core.cli import main
from ddr_explorer.core.design.identifiability import separability
from ddr_explorer.core.design.presets import TERMS_NOTE_PREFIX, UnsupportedTermsError, supported_spec
from ddr_explorer.core.fitting import fit_corpus, fit_key
from ddr_explorer.core.model.formula import HalfStudentT, Priors, parse_formula, preset
from ddr_explorer.core.model.posterior import SamplerSettings

FAST = ["--stop", "fixed", "--draws", "20", "--warmup", "10", "--chains", "2"]
SETTINGS = SamplerSettings(stop="fixed", draws=20, warmup=10, chains=2)
SUPPORTED = "y ~ 1 + (1|task) + (1|model) + (1|task:model)"
DROPPED = ["scaffold", "task:scaffold", "model:scaffold"]


def _table(scaffold_of, n_models=4, n_tasks=6, trials=3, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(n_models):
        for a in scaffold_of(m):
            for t in range(n_tasks):
                rows.append({"benchmark": "tb", "task": f"t{t}", "model": f"m{m}", "scaffold": a,
                             "successes": int(rng.integers(0, trials + 1)), "trials": trials})
    return pd.DataFrame(rows)


def one_scaffold_per_model(**kw) -> pd.DataFrame:
    return _table(lambda m: [f"s{m}"], **kw)


def crossed(**kw) -> pd.DataFrame:
    return _table(lambda m: ["s0", "s1"], **kw)  # every model under both scaffolds


def test_confounded_preset_drops_exactly_the_scaffold_terms_with_a_note():
    corpus = bf.corpus_of(one_scaffold_per_model())
    spec = preset("per-benchmark")
    check = supported_spec(corpus, spec)
    assert [d.term for d in check.dropped] == DROPPED
    assert check.spec.term_names == ("task", "model", "task:model")
    assert check.supported_formula == SUPPORTED
    by = {d.term: d for d in check.dropped}
    assert by["scaffold"].absorbed_by == ("model",)
    assert by["task:scaffold"].absorbed_by == ("task:model",)
    assert by["model:scaffold"].absorbed_by == ("model",)
    assert "model" in by["scaffold"].confounded_with
    note = check.note
    assert note.startswith(TERMS_NOTE_PREFIX)
    assert "scaffold, task:scaffold, model:scaffold of the per-benchmark preset" in note
    assert "scaffold is confounded with model" in note and "absorbed by task:model" in note
    assert SUPPORTED in note
    # the same design verdict as `ddr inspect` for the dropped terms
    sep = separability(corpus)
    assert set(DROPPED) <= set(sep.not_separable)


def test_unreplicated_cells_also_drop_the_cell_level_interaction():
    # one trial per cell: task:model's levels are the cells and each holds one trial, so its kernel
    # is the trial residual's (seed 000 App. E.5) and it goes too
    check = supported_spec(bf.corpus_of(one_scaffold_per_model(trials=1)), preset("per-benchmark"))
    assert [d.term for d in check.dropped] == ["scaffold", "task:model", "task:scaffold", "model:scaffold"]
    assert check.supported_formula == "y ~ 1 + (1|task) + (1|model)"
    assert dict((d.term, d.absorbed_by) for d in check.dropped)["task:model"] == ("residual",)


def test_separable_design_is_fitted_unchanged_with_the_same_key():
    corpus = bf.corpus_of(crossed())
    spec = preset("per-benchmark")
    check = supported_spec(corpus, spec)
    assert check.dropped == [] and check.note is None
    assert check.spec is spec
    assert fit_key(corpus, check.spec, SETTINGS) == fit_key(corpus, spec, SETTINGS)


def test_a_written_formula_is_fitted_as_written():
    corpus = bf.corpus_of(one_scaffold_per_model())
    spec = parse_formula(preset("per-benchmark").formula)  # same terms, but no preset name
    assert supported_spec(corpus, spec).spec is spec


def test_priors_of_kept_terms_survive_the_reduction():
    priors = Priors(sigma_by_term={"model": HalfStudentT(3, 1.5), "scaffold": HalfStudentT(3, 0.5)})
    check = supported_spec(bf.corpus_of(one_scaffold_per_model()), preset("per-benchmark", priors))
    assert check.spec.priors.sigma_by_term == {"model": HalfStudentT(3, 1.5)}
    assert check.spec.priors.sigma == priors.sigma and check.spec.priors.intercept == priors.intercept


def test_fit_corpus_fits_the_supported_spec_and_keys_the_cache_by_it(fake_sampler, tmp_path):
    corpus = bf.corpus_of(one_scaffold_per_model())
    res = fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path)
    post = res.posterior
    assert sorted(post.sigma) == ["model", "task", "task:model"]
    assert post.spec.formula == SUPPORTED
    assert post.notes[0].startswith(TERMS_NOTE_PREFIX) and "model:scaffold" in post.notes[0]
    reduced = parse_formula(SUPPORTED)
    assert res.key == fit_key(corpus, reduced, SETTINGS) != fit_key(corpus, preset("per-benchmark"), SETTINGS)
    again = fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path)
    assert again.from_cache and again.key == res.key and len(fake_sampler) == 1
    assert again.posterior.notes[0] == post.notes[0]  # the note travels with the cached fit
    assert [d.term for d in again.terms.dropped] == DROPPED
    with pytest.raises(UnsupportedTermsError) as exc:
        fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path, strict_terms=True)
    assert exc.value.supported_formula == SUPPORTED and "task:scaffold" in str(exc.value)
    assert len(fake_sampler) == 1  # refused before sampling


def test_fit_corpus_on_a_separable_design_keeps_every_term(fake_sampler, tmp_path):
    corpus = bf.corpus_of(crossed())
    res = fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path, strict_terms=True)
    assert sorted(res.posterior.sigma) == sorted(preset("per-benchmark").term_names)
    assert res.key == fit_key(corpus, preset("per-benchmark"), SETTINGS)
    assert not any(n.startswith(TERMS_NOTE_PREFIX) for n in res.posterior.notes)


@pytest.fixture
def confounded_csv(tmp_path):
    p = tmp_path / "confounded.csv"
    one_scaffold_per_model().to_csv(p, index=False)
    return p


def test_ddr_fit_json_names_the_left_out_terms(fake_sampler, capsys, confounded_csv, tmp_path):
    code = main(["fit", str(confounded_csv), "--preset", "per-benchmark", "--cache", str(tmp_path / "c"),
                 *FAST, "--quiet", "--json", "--allow-unconverged"])  # few fake draws: exit 3 otherwise
    out = capsys.readouterr()
    assert code == 0, out.err
    d = json.loads(out.out)
    assert d["formula"] == SUPPORTED and d["terms"] == ["task", "model", "task:model"]
    assert [t["term"] for t in d["terms_left_out"]] == DROPPED
    assert d["notes"][0].startswith(TERMS_NOTE_PREFIX)


@pytest.mark.parametrize("command", [
    ["fit", "--preset", "per-benchmark"],
    ["dstudy", "--preset", "per-benchmark", "--json"],
    ["analyses", "--preset", "per-benchmark", "--which", "loo"],
    ["report", "--preset", "per-benchmark", "-o", "sheet.pdf"],
])
def test_strict_terms_exits_2_and_prints_the_supported_formula(fake_sampler, capsys, confounded_csv, tmp_path,
                                                                command):
    name, *rest = command
    rest = [str(tmp_path / r) if r.endswith(".pdf") else r for r in rest]
    code = main([name, str(confounded_csv), *rest, "--cache", str(tmp_path / "c"), *FAST, "--strict-terms"])
    err = capsys.readouterr().err
    assert code == 2
    assert "task:scaffold" in err and f"The design supports: {SUPPORTED}" in err
    assert fake_sampler == []  # nothing was fitted
    assert not (tmp_path / "sheet.pdf").exists()


def test_ddr_report_method_notes_name_the_left_out_terms(fake_sampler, capsys, confounded_csv, tmp_path):
    pypdf = pytest.importorskip("pypdf")
    pdf = tmp_path / "sheet.pdf"
    code = main(["report", str(confounded_csv), "--preset", "per-benchmark", "-o", str(pdf),
                 "--cache", str(tmp_path / "c"), *FAST, "--quiet", "--date-invariant", "--analyses", "none"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"ddr: {TERMS_NOTE_PREFIX}: scaffold, task:scaffold, model:scaffold" in err
    text = " ".join(p.extract_text() or "" for p in pypdf.PdfReader(str(pdf)).pages)
    text = " ".join(text.split())
    methods = text[text.index("Method notes"):]
    assert TERMS_NOTE_PREFIX in methods
    assert "scaffold, task:scaffold, model:scaffold of the per-benchmark preset" in methods
    assert "(1|task:model)" in methods


def test_child_process_fit_reopens_the_supported_spec(tmp_path):
    # real NUTS in a spawned child (the app's path): the parent must find the reduced spec's entry
    from ddr_explorer.core.fit_process import fit_corpus_in_process

    corpus = bf.corpus_of(one_scaffold_per_model())
    tiny = SamplerSettings(stop="fixed", draws=10, warmup=10, chains=1, chunk_size=5, seed=1)
    res = fit_corpus_in_process(corpus, "per-benchmark", tiny, cache_dir=tmp_path)
    assert res.posterior.spec.formula == SUPPORTED and sorted(res.posterior.sigma) == ["model", "task", "task:model"]
    assert [d.term for d in res.terms.dropped] == DROPPED
    assert res.key == fit_key(corpus, parse_formula(SUPPORTED), tiny)
    assert res.posterior.notes[0].startswith(TERMS_NOTE_PREFIX)


def test_loo_of_a_reduced_preset_fits_once(fake_sampler, tmp_path):
    # PSIS-LOO asks for the fitted terms' effects: those of the supported spec, not the preset's
    from ddr_explorer.core.analyses.loo import loo_study

    corpus = bf.corpus_of(one_scaffold_per_model())
    res = loo_study(corpus, spec="per-benchmark", settings=SETTINGS, cache_dir=tmp_path)
    assert len(fake_sampler) == 1  # no second, cache-less refit hunting for scaffold effects
    assert res is not None


def test_ddr_preset_on_a_corpus_without_its_columns_is_left_to_the_fits_validation():
    corpus = bf.corpus_of(one_scaffold_per_model())
    spec = preset("ddr")  # needs step and error_category columns
    assert supported_spec(corpus, spec).spec is spec


def test_ddr_preset_checks_agent_terms_as_model_scaffold_pairs():
    # seed 003's four facets; the error category is a function of (task, step), so task:error_category
    # is a copy of task:step and goes, every other term (agent = model:scaffold) stays
    rng = np.random.default_rng(1)
    rows = [{"benchmark": "b", "task": f"t{t}", "model": f"m{m}", "scaffold": f"s{m}", "trial": k,
             "step": f"k{k}", "error_category": f"e{(t + k) % 3}", "successes": int(rng.integers(0, 3)),
             "trials": 2} for m in range(3) for t in range(5) for k in range(2)]
    check = supported_spec(bf.corpus_of(pd.DataFrame(rows)), preset("ddr"))
    assert [(d.term, d.absorbed_by) for d in check.dropped] == [("task:error_category", ("task:step",))]
    assert "(1|agent)" in check.supported_formula and "(1|task:agent)" in check.supported_formula
    assert len(check.spec.terms) == len(preset("ddr").terms) - 1
