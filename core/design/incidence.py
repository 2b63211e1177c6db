"""Connectivity: do benchmarks, models and scaffolds form one comparison network?

The incidence graph of seed 000 (Hardy et al. 2026) App. E.2 joins two levels of benchmark, model
and scaffold when they co-occur in an observed record; its components say
which contrasts are identified at all (Lemma E.1: contrasts between models or
scaffolds of different components are not, App. E.7).  :func:`connectivity`
also reports articulation vertices, benchmark degrees, the three bipartite
sub-graphs that Prop. E.3 (i)-(ii) need, and what removing each benchmark's
records does to the graph (leave-one-benchmark-out, App. D.4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse import csgraph

from ..corpus.corpus import Corpus
from .cells import CellIndex, cell_index

if TYPE_CHECKING:  # imported where a graph is built: networkx costs ~0.15 s of every `ddr` start otherwise
    import networkx as nx

__all__ = ["Connectivity", "incidence_graph", "connectivity"]


def _label(vertex: tuple[str, str]) -> str:
    return f"{vertex[0]}:{vertex[1]}"


def _graph(d: CellIndex) -> nx.Graph:
    """Tripartite incidence graph of the benchmarks, models and scaffolds of a design."""
    import networkx as nx

    lab = d.labels
    g = nx.Graph()
    for facet in ("benchmark", "model", "scaffold"):
        g.add_nodes_from(((facet, name) for name in lab[facet]), facet=facet)
    for f1, f2 in (("benchmark", "model"), ("benchmark", "scaffold"), ("model", "scaffold")):
        c1, c2 = d.pairs(f1, f2)
        w = d.trial_counts({f1, f2})
        g.add_edges_from(
            ((f1, lab[f1][x]), (f2, lab[f2][y]), {"trials": t})
            for x, y, t in zip(c1.tolist(), c2.tolist(), w.tolist())
        )
    return g


def incidence_graph(corpus: Corpus | pd.DataFrame) -> nx.Graph:
    """The benchmark-model-scaffold incidence graph of seed 000 App. E.2.

    Vertices are ``("benchmark", name)``, ``("model", name)`` and
    ``("scaffold", name)`` (node attribute ``facet``).  "An edge joins two
    levels when they co-occur in at least one observed response": every record
    adds the three edges benchmark-model, benchmark-scaffold and model-scaffold.
    Tasks are not vertices: they are nested in benchmarks and never connect
    benchmarks.  Edge attribute ``trials`` is the number of trials behind it.

    Parameters
    ----------
    corpus
        A corpus or its canonical table.

    Returns
    -------
    networkx.Graph
    """
    return _graph(cell_index(corpus))


def _bipartite_components(d: CellIndex, f1: str, f2: str) -> int:
    """Connected components of the bipartite incidence graph of two facets."""
    a, b = d.pairs(f1, f2)
    n1, n2 = d.sizes[f1], d.sizes[f2]
    adj = sp.coo_matrix((np.ones(len(a), dtype=np.int8), (a, n1 + b)), shape=(n1 + n2, n1 + n2)).tocsr()
    return int(csgraph.connected_components(adj, directed=False)[0])


@dataclass
class Connectivity:
    """Connectivity of the incidence graph (seed 000 App. E.1).

    Attributes
    ----------
    n_components
        Connected components of the benchmark-model-scaffold graph.
    components
        Vertex labels (``"benchmark:<name>"``, ``"model:<name>"``,
        ``"scaffold:<name>"``) of each component, largest first.  Contrasts
        between models or scaffolds of different components are not identified
        and must never be reported (App. E.7).
    articulation_vertices
        Vertices whose removal splits their component.
    benchmark_degree
        Degree of each benchmark vertex (models + scaffolds observed on it).
    benchmark_models, benchmark_scaffolds
        The two parts of that degree.
    removal_change
        For each benchmark, the change in the number of components when its
        records are removed (leave-one-benchmark-out, App. D.4): positive values
        mark a benchmark that bridges otherwise separate parts of the design.
    benchmark_model_components, benchmark_scaffold_components, model_scaffold_components
        Components of the three bipartite sub-graphs.  Prop. E.3 (i)-(ii) need the
        first two connected; Lemma E.1 (model and scaffold contrasts of an
        additive model) needs the model-scaffold graph connected.
    """

    n_components: int
    components: list[list[str]]
    articulation_vertices: list[str]
    benchmark_degree: dict[str, int]
    benchmark_models: dict[str, int]
    benchmark_scaffolds: dict[str, int]
    removal_change: dict[str, int]
    benchmark_model_components: int
    benchmark_scaffold_components: int
    model_scaffold_components: int

    @property
    def connected(self) -> bool:
        return self.n_components == 1

    def to_dict(self) -> dict:
        return {
            "connected": self.connected,
            "n_components": self.n_components,
            "components": [list(c) for c in self.components],
            "articulation_vertices": list(self.articulation_vertices),
            "benchmark_degree": dict(self.benchmark_degree),
            "benchmark_models": dict(self.benchmark_models),
            "benchmark_scaffolds": dict(self.benchmark_scaffolds),
            "removal_change": dict(self.removal_change),
            "benchmark_model_components": self.benchmark_model_components,
            "benchmark_scaffold_components": self.benchmark_scaffold_components,
            "model_scaffold_components": self.model_scaffold_components,
        }


_FACET_ORDER = {"benchmark": 0, "model": 1, "scaffold": 2}


def _vertex_sort_key(v: tuple[str, str]) -> tuple[int, str]:
    return (_FACET_ORDER[v[0]], v[1])


def _leave_one_benchmark_out_components(d: CellIndex) -> np.ndarray:
    """Components of the incidence graph rebuilt without each benchmark's records.

    Removing a benchmark's records (not just its vertex) also removes the
    model-scaffold edges and the levels that only this benchmark supplied,
    which is what a leave-one-benchmark-out refit (seed 000 App. D.4) would
    see.  Each graph is a sparse adjacency matrix handed to scipy's
    connected-components routine; vertices left without edges are the levels
    that vanished and are not counted.
    """
    nb, nm, na = d.sizes["benchmark"], d.sizes["model"], d.sizes["scaffold"]
    n_vertices = nb + nm + na
    bm_b, bm_m = d.pairs("benchmark", "model")
    ba_b, ba_a = d.pairs("benchmark", "scaffold")
    ma_ids, n_ma, ma_first = d.grouping({"model", "scaffold"})
    ma_m, ma_a = d.cell["model"][ma_first], d.cell["scaffold"][ma_first]
    _, _, t_first = d.grouping({"benchmark", "model", "scaffold"})
    t_ma, t_b = ma_ids[t_first], d.cell["benchmark"][t_first]
    support = np.bincount(t_ma, minlength=n_ma)
    # the benchmark that alone supports a model-scaffold edge (-1: several do)
    sole = np.full(n_ma, -1, dtype=np.int64)
    alone = support[t_ma] == 1
    sole[t_ma[alone]] = t_b[alone]
    src = np.concatenate([bm_b, ba_b, nb + ma_m])
    dst = np.concatenate([nb + bm_m, nb + nm + ba_a, nb + nm + ma_a])
    owner = np.concatenate([bm_b, ba_b, sole])  # edge disappears with this benchmark
    # Sort the edges once by (source, target) so that every subgraph's CSR
    # arrays can be written directly, without scipy re-sorting them each time.
    order = np.lexsort((dst, src))
    src, dst, owner = src[order], dst[order], owner[order]
    out = np.zeros(nb, dtype=np.int64)
    for k in range(nb):
        keep = owner != k
        s, t = src[keep], dst[keep]
        indptr = np.zeros(n_vertices + 1, dtype=np.int64)
        np.cumsum(np.bincount(s, minlength=n_vertices), out=indptr[1:])
        adj = sp.csr_matrix((np.ones(len(s), dtype=np.int8), t, indptr), shape=(n_vertices, n_vertices))
        adj.has_sorted_indices = True
        n_comp, _ = csgraph.connected_components(adj, directed=False)
        used = np.zeros(n_vertices, dtype=bool)
        used[s] = True
        used[t] = True
        out[k] = n_comp - int((~used).sum())
    return out


def _connectivity(d: CellIndex) -> Connectivity:
    import networkx as nx

    g = _graph(d)
    comps = sorted(
        (sorted(c, key=_vertex_sort_key) for c in nx.connected_components(g)),
        key=lambda c: (-len(c), _vertex_sort_key(c[0])),
    )
    art = sorted(nx.articulation_points(g), key=_vertex_sort_key)
    n_comp = len(comps)
    bnames = d.labels["benchmark"]
    nb = len(bnames)
    bm_b, _ = d.pairs("benchmark", "model")
    ba_b, _ = d.pairs("benchmark", "scaffold")
    n_models_b = np.bincount(bm_b, minlength=nb)
    n_scaff_b = np.bincount(ba_b, minlength=nb)
    lobo = _leave_one_benchmark_out_components(d)
    removal = {name: int(lobo[k] - n_comp) for k, name in enumerate(bnames)}
    return Connectivity(
        n_components=n_comp,
        components=[[_label(v) for v in c] for c in comps],
        articulation_vertices=[_label(v) for v in art],
        benchmark_degree={name: int(g.degree[("benchmark", name)]) for name in bnames},
        benchmark_models={name: int(n_models_b[k]) for k, name in enumerate(bnames)},
        benchmark_scaffolds={name: int(n_scaff_b[k]) for k, name in enumerate(bnames)},
        removal_change=removal,
        benchmark_model_components=_bipartite_components(d, "benchmark", "model"),
        benchmark_scaffold_components=_bipartite_components(d, "benchmark", "scaffold"),
        model_scaffold_components=_bipartite_components(d, "model", "scaffold"),
    )


def connectivity(corpus: Corpus | pd.DataFrame) -> Connectivity:
    """Components, articulation vertices and benchmark degrees (seed 000 App. E.1).

    Parameters
    ----------
    corpus
        A corpus or its canonical table.

    Returns
    -------
    Connectivity
        See the class for every field.  ``removal_change[b]`` is the number of
        components of the graph built without benchmark ``b``'s records minus
        the number of the full graph (models or scaffolds seen only on ``b``
        vanish rather than becoming isolated; removing the only benchmark
        gives -1).
    """
    return _connectivity(cell_index(corpus))
