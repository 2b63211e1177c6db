"""Which models can be ranked against which: the connected parts of a design (SPEC sec. 6; seed 000 (Hardy et al. 2026) App. E).

Seed 000 App. E represents the observed design as the benchmark-model-scaffold
incidence graph (:func:`~.design.incidence.connectivity`): an edge joins two
levels that co-occur in an observed record.  Contrasts within one connected
component are informed by observed paths; contrasts across components are not
identified, and the paper reports none (App. E, "Data-supported contrasts").
The priors of a Bayesian fit still produce draws of ``u_m - u_m'`` for two
models in different components, but those draws only restate the prior.

Which graph defines a "part" for model ranks: the full tripartite graph, not
the model-scaffold graph of Lemma E.1.  Lemma E.1 is about a purely additive
fixed-effect model; in the random-effects model of seed 000 eq. 6 two models
evaluated on a common benchmark are compared through that benchmark's tasks
even with different scaffolds (the scaffold contrast is then shrunk, not
unidentified), which is exactly a path in the tripartite graph.  Two models are
in one part when a chain of shared benchmarks or scaffolds links them.

A system (``"model / scaffold"``, ``--object system``) is in its model's part:
a model and its scaffold co-occur, so they always lie in one component.
"""

from __future__ import annotations

from typing import Iterable, Sequence
from .references import cite

__all__ = ["model_parts", "parts_from_posterior", "part_reasons", "within_part_correlations"]


def _model_of(name: str) -> str:
    # system names are "model / scaffold" (fitting.theta_from_posterior)
    return str(name).split(" / ")[0]


def model_parts(components: Iterable[Iterable[str]] | None, names: Sequence[str], *,
                require_known: bool = False) -> list[list[str]] | None:
    """Group ranked levels (models or systems) by the connected part of the design they lie in.

    Parameters
    ----------
    components
        The components of the incidence graph as vertex labels
        (``"benchmark:<b>"``, ``"model:<m>"``, ``"scaffold:<a>"``), largest first:
        :attr:`~.design.incidence.Connectivity.components` or the ``"components"``
        of a corpus summary.  None or a single component: connected.
    names
        The names of the ranked columns (model names, or ``"model / scaffold"``).

    Returns
    -------
    list of lists of str, or None
        The names per part, parts in the order of ``components`` and names in
        column order, when the ranked levels fall into two or more parts; None
        when they all lie in one part (rank them together, as always).  A name
        the graph does not know is kept in a part of its own (it cannot be
        linked to the others either).  With ``require_known``, a name the
        graph does not know gives None instead (the ranked levels are not of
        this corpus: the app's posterior may come from another file).
    """
    comps = [list(c) for c in (components or [])]
    if len(comps) < 2:
        return None
    where: dict[str, int] = {}
    for k, comp in enumerate(comps):
        for v in comp:
            facet, _, level = str(v).partition(":")
            if facet == "model":
                where[level] = k
    groups: dict[int, list[str]] = {}
    unknown: list[list[str]] = []
    for n in names:
        k = where.get(_model_of(n))
        if k is None:
            unknown.append([str(n)])
        else:
            groups.setdefault(k, []).append(str(n))
    if unknown and require_known:
        return None
    parts = [groups[k] for k in sorted(groups)] + unknown
    return parts if len(parts) > 1 else None


def parts_from_posterior(post, names: Sequence[str]) -> list[list[str]] | None:
    """:func:`model_parts` from a fit alone (a cached ``.h5`` without its corpus).

    The level tables of a fit's interaction terms (``benchmark:model``,
    ``model:scaffold``, ...) list exactly the observed pairs, so they rebuild the
    incidence graph's edges.  A fit with no term that pairs models with
    benchmarks (a per-benchmark fit of one benchmark, where every model shares
    that benchmark) gives None (one part).
    """
    import networkx as nx

    g = nx.Graph()
    linked = False
    for term, levels in (getattr(post, "levels", None) or {}).items():
        if levels is None:
            continue
        cols = [c for c in getattr(levels, "columns", []) if c in ("benchmark", "model", "scaffold")]
        # only a term pairing models with benchmarks shows every benchmark a model ran on
        linked |= "model" in cols and "benchmark" in cols
        for c in cols:
            g.add_nodes_from(f"{c}:{v}" for v in levels[c].astype(str))
        for i in range(len(cols)):
            for j in range(i + 1, len(cols)):
                g.add_edges_from(zip((f"{cols[i]}:{v}" for v in levels[cols[i]].astype(str)),
                                     (f"{cols[j]}:{v}" for v in levels[cols[j]].astype(str))))
    if not linked:  # one benchmark (per-benchmark fit), or the fit cannot tell: one part, as always
        return None
    comps = sorted((sorted(c) for c in nx.connected_components(g)), key=lambda c: (-len(c), c))
    return model_parts(comps, names)


def _names(xs: Sequence[str], limit: int = 6) -> str:
    xs = list(xs)
    return ", ".join(xs[:limit]) + (f" and {len(xs) - limit} more" if len(xs) > limit else "")


def part_reasons(parts: Sequence[Sequence[str]], what: str = "models") -> list[str]:
    """One sentence per part saying why it is ranked on its own (for the app, ``ddr`` and the sheet)."""
    n = len(parts)
    out = []
    for k, p in enumerate(parts):
        others = [m for j, q in enumerate(parts) if j != k for m in q]
        out.append(f"Part {k + 1} of {n}: {what} {_names(p)} share no benchmark or scaffold, directly or through "
                   f"other {what}, with {_names(others)}, so no rank or dominance between the parts is identified "
                   f"({cite('hardy2026', 'App. E')}); they are ranked among themselves.")
    return out


def within_part_correlations(x, y, part_of) -> tuple[float, float]:
    """Spearman rho and Kendall tau-b between two rankings, over comparisons inside one part only.

    With one part these are :func:`~.ranks.spearman_rho` and
    :func:`~.ranks.kendall_tau` exactly.  With several, Kendall's tau-b counts
    only the pairs of models in one part (a pair across parts has no
    identified order, seed 000 App. E), and Spearman's rho is the Pearson
    correlation of the ranks taken within each part and centred per part (the
    pooled within-part rank correlation).  NaN when no part holds two models.

    Parameters
    ----------
    x, y
        Scores of the same models (higher is better in both or lower in both).
    part_of
        The part index of each model.
    """
    import numpy as np
    from scipy.stats import rankdata

    x, y, g = (np.asarray(v) for v in (x, y, part_of))
    x, y = x.astype(np.float64), y.astype(np.float64)
    i, j = np.triu_indices(len(x), 1)
    keep = g[i] == g[j]
    i, j = i[keep], j[keep]
    sx, sy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    den = np.sqrt(np.count_nonzero(sx) * np.count_nonzero(sy))
    tau = float(np.dot(sx, sy) / den) if den > 0 else float("nan")
    rx, ry = np.zeros(len(x)), np.zeros(len(y))
    for k in np.unique(g):
        m = g == k
        if m.sum() >= 2:
            rx[m] = rankdata(x[m]) - rankdata(x[m]).mean()
            ry[m] = rankdata(y[m]) - rankdata(y[m]).mean()
    den = np.sqrt(np.dot(rx, rx) * np.dot(ry, ry))
    rho = float(np.dot(rx, ry) / den) if den > 0 else float("nan")
    return rho, tau
