"""Separability of variance components on designs whose answers are known.

core/design/identifiability.py; seed 000 App. E.3-E.6.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from ddr_design_cases import FACETS, crossed, make_corpus

from ddr_explorer.core import design
from ddr_explorer.core.corpus.corpus import Corpus


# ---------------------------------------------------------------------------
# A connected crossed design
# ---------------------------------------------------------------------------
def test_separability_crossed(crossed_corpus):
    s = design.separability(crossed_corpus)
    assert s.scope == "pooled"
    assert s.separable_components == list(design.POOLED_TERMS)
    assert s.not_separable == [] and s.folded == {}
    assert [c.holds for c in s.conditions] == [True, True, True, True]
    assert s.prop_e3_holds is True
    ev = s.condition("iv").evidence
    assert ev["items"] == 6 and ev["share_items_2plus_models"] == 1.0 and ev["share_items_2plus_scaffolds"] == 1.0
    assert s.condition("i").evidence["models_on_all_benchmarks"] == 2
    # within each benchmark, Eq. 2 is fully separable
    assert s.per_benchmark["B1"]["separable_components"] == list(design.PER_BENCHMARK_TERMS)
    assert any("no cell holds replicate trials" in n for n in s.notes)


# ---------------------------------------------------------------------------
# Single benchmark
# ---------------------------------------------------------------------------
def test_single_benchmark_crossed():
    corpus = make_corpus(crossed(["B1"], ["t1", "t2", "t3"], ["m1", "m2"], ["a1", "a2"]))
    s = design.separability(corpus)
    assert s.scope == "per-benchmark"
    assert s.terms == list(design.PER_BENCHMARK_TERMS)
    assert s.separable_components == list(design.PER_BENCHMARK_TERMS)
    assert [c.applicable for c in s.conditions] == [False, False, False, True]
    assert s.condition("i").holds is None and s.prop_e3_holds is None
    assert "not applicable" in s.condition("iii").evidence["note"]
    assert any("not applicable" in n for n in s.notes)
    assert s.per_benchmark == {}
    json.dumps(s.to_dict())


def test_single_benchmark_single_scaffold():
    # the shape of an MLE-bench export: one scaffold, one trial per task-model cell
    corpus = make_corpus(crossed(["B1"], ["t1", "t2", "t3"], ["m1", "m2", "m3"], ["a1"]))
    s = design.separability(corpus)
    assert s.separable_components == []
    assert s.component("model").confounded_with == ["model:scaffold"]
    assert s.component("scaffold").confounded_with == ["(intercept)"]
    # no replicates: the terminal cell kernel is the identity as well
    assert s.component("task:model").confounded_with == ["residual", "(terminal cell)"]
    assert "only 0 of 3 models run under >= 2 scaffolds" in s.component("model").reason
    # the reduced formula the design supports
    assert s.suggested_terms == ["task", "model"]
    assert s.folded == {"scaffold": ["(intercept)"], "task:model": ["residual"],
                        "task:scaffold": ["task"], "model:scaffold": ["model"]}


def test_replicates_separate_task_model_from_residual():
    # one scaffold, but every task-model cell has 2 trials: task:model is still
    # confounded with the terminal cell (the unreplicated BIMA interaction)
    rows = crossed(["B1"], ["t1", "t2"], ["m1", "m2"], ["a1"])
    s = design.separability(make_corpus(rows, trials=[2] * len(rows)))
    assert "(terminal cell)" in s.component("task:model").confounded_with
    assert design.facet_counts(make_corpus(rows, trials=[2] * len(rows))).replicated_cells == 4


# ---------------------------------------------------------------------------
# Conditions (i)-(iv) false one at a time
# ---------------------------------------------------------------------------
def _holds(rows):
    s = design.separability(make_corpus(rows))
    return [s.condition(k).holds for k in ("i", "ii", "iii", "iv")], s


def test_condition_i_false_only():
    # B3 has its own model: the benchmark-model graph splits, although m1, m2 recur
    rows = crossed(["B1", "B2"], ["t1", "t2"], ["m1", "m2"], ["a1", "a2"])
    rows += crossed(["B3"], ["t1", "t2"], ["m3"], ["a1", "a2"])
    holds, s = _holds(rows)
    assert holds == [False, True, True, True]
    ev = s.condition("i").evidence
    assert ev["benchmark_model_components"] == 2 and ev["models_on_multiple_benchmarks"] == 2
    assert ev["models_on_all_benchmarks"] == 0
    # (iv): the 4 items of B1 and B2 have two models, the 2 of B3 only one
    assert s.condition("iv").evidence["items_with_2plus_models"] == 4
    assert s.condition("iv").evidence["share_items_2plus_models"] == pytest.approx(4 / 6)


def test_condition_ii_false_only():
    rows = crossed(["B1", "B2"], ["t1", "t2"], ["m1", "m2"], ["a1", "a2"])
    rows += crossed(["B3"], ["t1", "t2"], ["m1", "m2"], ["a3"])
    holds, s = _holds(rows)
    assert holds == [True, False, True, True]
    assert s.condition("ii").evidence["benchmark_scaffold_components"] == 2
    assert s.condition("ii").evidence["scaffolds_on_multiple_benchmarks"] == 2


def test_condition_iii_false_only():
    # models and scaffolds both recur, but each model-scaffold pair lives on one benchmark
    pairs = {"B1": [("m1", "a1"), ("m2", "a2"), ("m3", "a1")], "B2": [("m1", "a2"), ("m2", "a1"), ("m3", "a2")]}
    rows = [(b, t, m, a) for b, ps in pairs.items() for t in ("t1", "t2") for m, a in ps]
    holds, s = _holds(rows)
    assert holds == [True, True, False, True]
    assert s.condition("iii").evidence == {"model_scaffold_pairs": 6, "pairs_on_multiple_benchmarks": 0}
    # MA, BMA and BM have one and the same kernel here (each benchmark-model
    # pair has one scaffold too); the rest stays separable
    assert s.separable_components == ["benchmark", "benchmark:task", "model", "scaffold",
                                      "benchmark:scaffold", "benchmark:task:scaffold"]
    assert s.component("model:scaffold").confounded_with == ["benchmark:model", "benchmark:model:scaffold"]
    assert s.folded["model:scaffold"] == ["benchmark:model"]
    sep = {(x.coarse, x.fine): x for x in s.separations}
    assert sep[("model:scaffold", "benchmark:model:scaffold")].holds is False
    assert sep[("model:scaffold", "benchmark:model:scaffold")].evidence == (
        "0 of 6 model-scaffold pairs recur on >= 2 benchmarks")
    assert sep[("model", "benchmark:model")].count == 3
    assert sep[("scaffold", "model:scaffold")].count == 2


def test_latin_square_confounds_main_effects():
    # a 2x2x2 Latin square: any two cells share exactly one of benchmark, model,
    # scaffold, so K_MA = (K_B + K_M + K_A - J) / 2 and the main effects cannot
    # be told apart from the pair effect (a dependency among more than two terms)
    rows = [("B1", t, "m1", "a1") for t in ("t1", "t2")] + [("B1", t, "m2", "a2") for t in ("t1", "t2")]
    rows += [("B2", t, "m1", "a2") for t in ("t1", "t2")] + [("B2", t, "m2", "a1") for t in ("t1", "t2")]
    s = design.separability(make_corpus(rows))
    assert s.separable_components == ["benchmark:task"]
    # every Table 15 pattern for the main effects holds: only the exact check sees it
    sep = {(x.coarse, x.fine): x.holds for x in s.separations}
    assert sep[("model", "benchmark:model")] and sep[("scaffold", "benchmark:scaffold")]
    assert s.folded["model:scaffold"] == ["(intercept)", "benchmark", "model", "scaffold"]


def test_condition_iv_false_only():
    # every item is attempted by exactly one agent
    rows = []
    for b, offset in (("B1", 0), ("B2", 4)):
        for k, (m, a) in enumerate(itertools.product(("m1", "m2"), ("a1", "a2"))):
            rows.append((b, f"t{offset + k}", m, a))
    holds, s = _holds(rows)
    assert holds == [True, True, True, False]
    ev = s.condition("iv").evidence
    assert ev["items"] == 8 and ev["items_with_2plus_models"] == 0 and ev["items_with_2plus_scaffolds"] == 0
    # item effects coincide with the item-model and item-scaffold interactions
    for term in ("benchmark:task", "benchmark:task:model", "benchmark:task:scaffold"):
        assert term in s.not_separable
    # and, with one trial per item, the item effect itself is the residual
    assert s.folded["benchmark:task"] == ["residual"]
    assert s.component("benchmark:task:model").confounded_with[:2] == ["residual", "(terminal cell)"]


# ---------------------------------------------------------------------------
# The exact criterion against explicit kernel matrices (Prop. E.2)
# ---------------------------------------------------------------------------
def _dense_separable(df: pd.DataFrame, terms) -> list[str]:
    """Separable terms from explicit n x n kernels over trials (numpy rank)."""
    rows = df.loc[df.index.repeat(df["trials"])].reset_index(drop=True)
    n = len(rows)

    def kernel(facets):
        if facets == "I":
            return np.eye(n)
        f = set(facets)
        if "task" in f:
            f.add("benchmark")
        if not f:
            return np.ones((n, n))
        key = rows[sorted(f)].astype(str).agg("|".join, axis=1).to_numpy()
        return (key[:, None] == key[None, :]).astype(float)

    mats = [kernel(()), kernel("I"), kernel(FACETS)] + [kernel(t.split(":")) for t in terms]
    a = np.stack([m.ravel() for m in mats], axis=1)
    full = np.linalg.matrix_rank(a)
    return [t for i, t in enumerate(terms) if np.linalg.matrix_rank(np.delete(a, 3 + i, axis=1)) < full]


@pytest.mark.parametrize("seed", range(12))
def test_exact_criterion_matches_dense_kernels(seed):
    rng = np.random.default_rng(seed)
    nb, nt, nm, na = (int(x) for x in rng.integers(1, 4, size=4))
    grid = list(itertools.product([f"B{i}" for i in range(nb)], [f"t{i}" for i in range(nt)],
                                  [f"m{i}" for i in range(nm)], [f"a{i}" for i in range(na)]))
    keep = rng.random(len(grid)) < rng.uniform(0.3, 0.9)
    rows = [g for g, k in zip(grid, keep) if k] or grid[:1]
    trials = rng.integers(1, 3, size=len(rows))
    corpus = make_corpus(rows, trials=trials)
    s = design.separability(corpus)
    df = corpus.table[FACETS + ["trials"]].astype({c: str for c in FACETS})
    assert s.separable_components == _dense_separable(df, s.terms)
    for b, v in s.per_benchmark.items():
        sub = df[df["benchmark"] == b].reset_index(drop=True)
        assert v["separable_components"] == _dense_separable(sub, list(design.PER_BENCHMARK_TERMS))
    # the suggested formula is independent and spans every kernel
    kept = design.separable_terms(corpus, s.suggested_terms)
    assert kept["separable"] == s.suggested_terms


def test_separable_terms_extra_facet():
    rows = crossed(["B1"], ["t1", "t2"], ["m1", "m2"], ["a1"])
    df = make_corpus(rows).table
    df = pd.concat([df, df], ignore_index=True)
    df["judge"] = pd.Categorical(["j1"] * 4 + ["j2"] * 4)
    res = design.separable_terms(Corpus(table=df), ["task", "model", "judge", "task:model"])
    assert res["separable"] == ["task", "model", "judge", "task:model"]
    with pytest.raises(ValueError, match="facet 'step' is not a column"):
        design.separable_terms(Corpus(table=df), ["step"])
