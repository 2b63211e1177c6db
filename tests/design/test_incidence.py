"""Incidence graph and connectivity on designs with known components.

core/design/incidence.py; seed 000 App. E.1-E.2.
"""

from __future__ import annotations

from ddr_design_cases import make_corpus

from ddr_explorer.core import design


# ---------------------------------------------------------------------------
# A connected crossed design
# ---------------------------------------------------------------------------
def test_graph_crossed(crossed_corpus):
    g = design.incidence_graph(crossed_corpus)
    assert g.number_of_nodes() == 6
    # 2x2 benchmark-model + 2x2 benchmark-scaffold + 2x2 model-scaffold edges
    assert g.number_of_edges() == 12
    assert g.has_edge(("benchmark", "B1"), ("model", "m2"))
    assert g.edges[("model", "m1"), ("scaffold", "a1")]["trials"] == 6
    conn = design.connectivity(crossed_corpus)
    assert conn.connected and conn.n_components == 1
    assert conn.articulation_vertices == []
    assert conn.benchmark_degree == {"B1": 4, "B2": 4}
    assert conn.removal_change == {"B1": 0, "B2": 0}
    assert (conn.benchmark_model_components, conn.benchmark_scaffold_components,
            conn.model_scaffold_components) == (1, 1, 1)


# ---------------------------------------------------------------------------
# Two disconnected components
# ---------------------------------------------------------------------------
def test_two_components():
    rows = [("B1", t, m, "a1") for t in ("t1", "t2") for m in ("m1", "m2")]
    rows += [("B2", t, m, "a2") for t in ("t1", "t2") for m in ("m3", "m4")]
    corpus = make_corpus(rows)
    conn = design.connectivity(corpus)
    assert conn.n_components == 2 and not conn.connected
    assert conn.components == [
        ["benchmark:B1", "model:m1", "model:m2", "scaffold:a1"],
        ["benchmark:B2", "model:m3", "model:m4", "scaffold:a2"],
    ]
    assert conn.articulation_vertices == []
    assert conn.benchmark_degree == {"B1": 3, "B2": 3}
    # removing a benchmark's records removes its whole component
    assert conn.removal_change == {"B1": -1, "B2": -1}
    assert conn.benchmark_model_components == 2
    s = design.separability(corpus)
    assert s.condition("i").holds is False and s.condition("ii").holds is False
    assert s.condition("i").evidence["models_on_multiple_benchmarks"] == 0
    assert s.prop_e3_holds is False
    # every model sits on one benchmark: model and benchmark:model share one kernel
    assert "model" in s.not_separable and "benchmark:model" in s.not_separable
    assert "benchmark:model" in s.component("model").confounded_with


# ---------------------------------------------------------------------------
# Star designs with known articulation vertices
# ---------------------------------------------------------------------------
def test_star_scaffold_hub():
    # scaffold a0 is shared by three benchmarks, each with its own model
    rows = [(f"B{k}", t, f"m{k}", "a0") for k in (1, 2, 3) for t in ("t1", "t2")]
    corpus = make_corpus(rows)
    conn = design.connectivity(corpus)
    assert conn.connected
    assert conn.articulation_vertices == ["scaffold:a0"]
    assert conn.benchmark_degree == {"B1": 2, "B2": 2, "B3": 2}
    assert conn.removal_change == {"B1": 0, "B2": 0, "B3": 0}
    assert (conn.benchmark_model_components, conn.benchmark_scaffold_components) == (3, 1)
    s = design.separability(corpus)
    assert [s.condition(k).holds for k in ("i", "ii", "iii", "iv")] == [False, True, False, False]
    assert s.condition("ii").evidence["scaffolds_on_all_benchmarks"] == 1


def test_bridge_benchmark():
    # B3 alone joins the two halves, through scaffold a3 which only it uses
    rows = [("B1", "t1", "m1", "a1"), ("B1", "t1", "m2", "a1"),
            ("B2", "t1", "m3", "a2"), ("B2", "t1", "m4", "a2"),
            ("B3", "t1", "m2", "a3"), ("B3", "t1", "m3", "a3")]
    conn = design.connectivity(make_corpus(rows))
    assert conn.n_components == 1
    # B3 and a3 are not articulation vertices (each record is a triangle
    # benchmark-model-scaffold); the models that carry the bridge are
    assert conn.articulation_vertices == ["model:m2", "model:m3"]
    assert conn.removal_change == {"B1": 0, "B2": 0, "B3": 1}
    assert conn.benchmark_degree == {"B1": 3, "B2": 3, "B3": 3}
