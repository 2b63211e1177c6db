"""Random-intercept formulas, presets, priors and the design matrix built from them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ddr_explorer.core.model.design_matrix import build_design
from ddr_explorer.core.model.formula import (
    PRESET_FORMULAS, HalfStudentT, ModelSpecError, Priors, StudentT, Term, as_spec, parse_formula, preset,
)


def test_parses_terms_in_formula_order():
    spec = parse_formula("y ~ 1 + (1|task) + (1|model) + (1|task:model)")
    assert spec.term_names == ("task", "model", "task:model")
    assert spec.folded == ()


def test_lhs_and_intercept_are_optional_and_spaces_ignored():
    a = parse_formula("(1 | task) + ( 1|model )")
    b = parse_formula("successes | trials(trials) ~ 1 + (1|task) + (1|model)")
    assert a.term_names == b.term_names == ("task", "model")


@pytest.mark.parametrize("written, canonical", [
    ("model:benchmark", "benchmark:model"),
    ("scaffold:model:benchmark", "benchmark:model:scaffold"),
    ("scaffold:task", "task:scaffold"),
    ("step:error_category", "error_category:step"),
    ("agent:task", "task:agent"),
])
def test_term_names_use_the_canonical_facet_order(written, canonical):
    assert parse_formula(f"y ~ (1|{written}) + (1|other)").term_names[0] == canonical


def test_nesting_expands_like_lme4():
    spec = parse_formula("y ~ 1 + (1|benchmark/task) + (1|model)")
    assert spec.term_names == ("benchmark", "benchmark:task", "model")
    spec = parse_formula("y ~ (1|benchmark/model/scaffold)")
    assert spec.term_names == ("benchmark", "benchmark:model", "benchmark:model:scaffold")


def test_brms_spellings_of_seed_000_are_accepted():
    spec = parse_formula("score ~ 1 + (1|task_id) + (1|model_name) + (1|agent_name) + (1|model_name:agent_name)")
    assert spec.term_names == ("task", "model", "scaffold", "model:scaffold")


def test_per_benchmark_preset_is_eq_2():
    spec = preset("per-benchmark")
    assert spec.term_names == ("task", "model", "scaffold", "task:model", "task:scaffold", "model:scaffold")
    assert spec.name == "per-benchmark"
    assert math.isclose(spec.residual_variance, math.pi ** 2 / 3)


def test_pooled_preset_is_eq_6():
    spec = preset("pooled")
    assert set(spec.term_names) == {
        "benchmark", "benchmark:task", "model", "scaffold", "benchmark:model", "benchmark:scaffold",
        "model:scaffold", "benchmark:task:model", "benchmark:task:scaffold", "benchmark:model:scaffold"}
    assert len(spec.term_names) == 10


def test_ddr_preset_is_seed_003_eq_1():
    spec = preset("ddr")
    mains = {"agent", "task", "step", "error_category"}
    assert mains <= set(spec.term_names)
    two_way = {t for t in spec.term_names if ":" in t}
    assert len(two_way) == 6
    assert spec.term("agent").columns == ("model", "scaffold")  # agent = model:scaffold pair
    assert set(spec.columns) >= {"task", "model", "scaffold", "step", "error_category"}


def test_as_spec_accepts_preset_names_formulas_and_specs():
    assert as_spec("pooled").name == "pooled"
    assert as_spec("y ~ (1|model) + (1|task)").term_names == ("model", "task")
    s = preset("per-benchmark")
    assert as_spec(s) is s


def test_cell_level_interaction_is_folded_into_the_residual():
    spec = parse_formula("y ~ (1|task) + (1|model) + (1|scaffold) + (1|task:model:scaffold)")
    assert spec.term_names == ("task", "model", "scaffold")
    assert [t.name for t in spec.folded] == ["task:model:scaffold"]
    df = _cells()
    design = build_design(df, spec)
    assert any("task:model:scaffold" in n and "folded" in n for n in design.notes)


def test_a_single_facet_model_is_not_folded():
    spec = parse_formula("y ~ (1|model)")
    assert spec.term_names == ("model",)


@pytest.mark.parametrize("formula, match", [
    ("y ~ x + (1|task)", "not a random intercept"),
    ("y ~ (x|task)", "random slope"),
    ("y ~ 0 + (1|task)", "intercept"),
    ("y ~ (1|task) + (1|task)", "appears twice"),
    ("y ~ (1|benchmark/task) + (1|benchmark)", "appears twice"),
    ("y ~ (1|task) + (1|benchmark:task)", "same levels"),
    ("y ~ (1|agent) + (1|model:scaffold)", "same levels"),
    ("y ~ 1", "no random-intercept term"),
    ("", "empty"),
    ("y ~ (1|task", "unbalanced"),
    ("y ~ (1|task) + + (1|model)", "stray"),
    ("y ~ (1|task-id)", "not a facet name"),
    ("y ~ (1||task)", "not supported"),
])
def test_bad_formulas_say_what_is_wrong(formula, match):
    with pytest.raises(ModelSpecError, match=match):
        parse_formula(formula)


def test_unknown_preset():
    with pytest.raises(ModelSpecError, match="unknown preset 'flat'.*per-benchmark"):
        preset("flat")


def test_unknown_column_names_the_column_and_the_available_ones():
    spec = parse_formula("y ~ (1|task) + (1|judge) + (1|task:judge)")
    with pytest.raises(ModelSpecError, match=r"'judge' \(needed by judge, task:judge\).*Available columns: "
                                             r"benchmark, task, model, scaffold"):
        build_design(_cells(), spec)


def test_priors_are_editable_and_default_to_spec_section_2():
    p = Priors()
    assert (p.sigma.df, p.sigma.scale) == (3.0, 2.5)
    assert (p.intercept.df, p.intercept.loc, p.intercept.scale) == (3.0, 0.0, 2.5)
    q = Priors(sigma_by_term={"model": HalfStudentT(3, 1.0)}, intercept=StudentT(3, -1, 2))
    spec = preset("per-benchmark").with_priors(q)
    assert spec.priors.for_term("model").scale == 1.0
    assert spec.priors.for_term("task").scale == 2.5
    with pytest.raises(ModelSpecError, match="unknown term"):
        preset("per-benchmark").with_priors(Priors(sigma_by_term={"benchmark": HalfStudentT()}))
    with pytest.raises(ModelSpecError, match="scale > 0"):
        HalfStudentT(3, 0.0)


def test_term_columns_expand_derived_facets():
    assert Term(("task",)).columns == ("benchmark", "task")
    assert Term(("task", "agent")).columns == ("benchmark", "task", "model", "scaffold")


def _cells() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = [("b", f"t{i}", m, s) for i in range(4) for m in ("m1", "m2") for s in ("s1", "s2")]
    df = pd.DataFrame(rows, columns=["benchmark", "task", "model", "scaffold"])
    df["trials"] = 2
    df["successes"] = rng.integers(0, 3, len(df))
    return df


def test_design_codes_levels_and_trials():
    df = _cells()
    # the same records twice: they are summed into one binomial cell each
    design = build_design(pd.concat([df, df]), "per-benchmark")
    assert design.n_cells == len(df)
    assert design.trials.tolist() == [4] * len(df)
    assert dict(zip(design.term_names, design.n_levels.tolist())) == {
        "task": 4, "model": 2, "scaffold": 2, "task:model": 8, "task:scaffold": 8, "model:scaffold": 4}
    assert design.codes.dtype == np.int32 and design.codes.shape == (6, len(df))
    k = design.index("model")
    assert design.level_trials[k].tolist() == [32, 32]  # 8 cells x 4 trials per model
    assert design.level_labels[k]["model"].tolist() == ["m1", "m2"]
    # codes point at the right labels
    for c in range(design.n_cells):
        assert design.level_labels[k]["model"].iloc[design.codes[k, c]] == design.cells["model"].iloc[c]


def test_tasks_are_nested_in_benchmarks():
    df = pd.concat([_cells(), _cells().assign(benchmark="b2")])
    design = build_design(df, "y ~ (1|task) + (1|model)")
    assert design.n_levels[design.index("task")] == 8  # t0..t3 in each of two benchmarks


def test_binary_result_column_is_accepted_and_missing_results_are_not():
    df = _cells().drop(columns=["successes", "trials"]).assign(result=1)
    design = build_design(df, "y ~ (1|task) + (1|model)")
    assert design.n_trials == len(df)
    with pytest.raises(ModelSpecError, match="successes"):
        build_design(df.drop(columns=["result"]), "y ~ (1|task)")


def test_presets_are_listed():
    assert set(PRESET_FORMULAS) == {"per-benchmark", "pooled", "ddr"}
