"""Structural identifiability: which variance components the design can separate.

Two variance components are separable when they imply different covariance
structures on the observed cells (seed 000 (Hardy et al. 2026) Prop. E.2; the replication patterns
of Table 15; Prop. E.3's conditions (i)-(iv)).  :func:`separability` examines
the random-intercept terms of the pooled model (Eq. 6) or, for one benchmark,
of the per-benchmark model (Eq. 2), exactly: the kernels' Gram matrix is
integer and its null space is found in rational arithmetic.
:func:`separable_terms` runs the same check on any set of terms.

This is kept apart from *practical estimability*, how precisely the data pin a
component down: that is the posterior's job, and here it appears only as
counts (how many models recur across benchmarks, what share of items more
than one model attempted, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..corpus.corpus import Corpus
from .cells import FACETS, CellIndex, _as_table, _exact_bincount_squares, _exact_sum_squares, cell_index
from .incidence import Connectivity, _bipartite_components
from ..references import cite

__all__ = [
    "POOLED_TERMS",
    "PER_BENCHMARK_TERMS",
    "Separation",
    "Condition",
    "ComponentSeparability",
    "Separability",
    "separability",
    "separable_terms",
]

#: Random-intercept terms of the pooled leaderboard model (seed 000 Eq. 6).
POOLED_TERMS: tuple[str, ...] = (
    "benchmark",
    "benchmark:task",
    "model",
    "scaffold",
    "benchmark:model",
    "benchmark:scaffold",
    "model:scaffold",
    "benchmark:task:model",
    "benchmark:task:scaffold",
    "benchmark:model:scaffold",
)

#: Random-intercept terms of the per-benchmark model (seed 000 Eq. 2).
PER_BENCHMARK_TERMS: tuple[str, ...] = (
    "task",
    "model",
    "scaffold",
    "task:model",
    "task:scaffold",
    "model:scaffold",
)

# Names of the nuisance kernels in the separability check.
_INTERCEPT = "(intercept)"
_RESIDUAL = "residual"
_CELL = "(terminal cell)"

# Facet sets are frozensets of facet names; the trial-level residual is a sentinel.
_TRIAL_LEVEL = "__trial__"


def _parse_term(term: str | Sequence[str]) -> tuple[str, ...]:
    parts = tuple(p.strip() for p in (term.split(":") if isinstance(term, str) else term))
    if not parts or any(not p for p in parts):
        raise ValueError(f"cannot read the term {term!r}. Fix: write facets joined by ':', e.g. 'benchmark:model'.")
    return parts


def _term_name(term: str | Sequence[str]) -> str:
    return ":".join(_parse_term(term))


def _rref(mat: list[list[int]]) -> tuple[list[list[Fraction]], list[int]]:
    """Exact reduced row echelon form of an integer matrix and its pivot columns."""
    a = [[Fraction(x) for x in row] for row in mat]
    nrows = len(a)
    ncols = len(a[0]) if a else 0
    pivots: list[int] = []
    r = 0
    for c in range(ncols):
        if r == nrows:
            break
        p = next((i for i in range(r, nrows) if a[i][c] != 0), None)
        if p is None:
            continue
        a[r], a[p] = a[p], a[r]
        piv = a[r][c]
        a[r] = [x / piv for x in a[r]]
        for i in range(nrows):
            if i != r and a[i][c] != 0:
                f = a[i][c]
                a[i] = [x - f * y for x, y in zip(a[i], a[r])]
        pivots.append(c)
        r += 1
    return a, pivots


def _well_conditioned(mat: list[list[int]]) -> bool:
    """True when a Gram matrix is certainly non-singular (checked in floating point).

    The matrix is scaled to unit diagonal; its eigenvalues then lie in [0, n]
    and are computed with an absolute error of order n * 1e-16, so a smallest
    eigenvalue above 1e-9 proves non-singularity.  Anything closer to singular
    goes to the exact rational elimination.
    """
    g = np.array([[float(x) for x in row] for row in mat])
    dg = np.sqrt(np.diag(g))
    if len(g) == 0:
        return True
    if np.any(dg == 0) or not np.all(np.isfinite(g)):
        return False
    c = g / np.outer(dg, dg)
    return bool(np.linalg.eigvalsh(c).min() > 1e-9)


@dataclass
class _GramAnalysis:
    """Which kernels are separable, and the greedy reduction (see :func:`_analyse_gram`)."""

    confounded: dict[str, list[str]]  # non-nuisance term -> other kernels in its dependencies
    kept: list[str]  # non-nuisance terms kept by the greedy reduction
    folded: dict[str, list[str]]  # folded term -> kept kernels that absorb it


def _analyse_gram(gram: list[list[int]], ks: Sequence["_Kernel"]) -> _GramAnalysis:
    """Exact Prop. E.2 analysis of the kernels' Gram matrix.

    *Separability.*  sigma_k^2 is identified iff no perturbation with a
    non-zero k-th coefficient leaves sum_j sigma_j^2 K_j unchanged, i.e. iff
    every vector of the null space of the kernels (= the null space of their
    Gram matrix, since G = A'A) has a zero k-th coordinate.

    *Greedy reduction.*  Columns are ordered intercept, residual, terminal
    cell, then the terms lowest order first (ties in the given order).  The
    pivot columns of the reduced row echelon form are exactly the kernels not
    spanned by the ones before them: those terms are kept; every other term is
    folded into the earlier pivots that express it (its RREF column).

    Exact duplicates (K_i = K_j iff G_ii = G_jj = G_ij) are removed first; if the
    rest is well conditioned, the duplicates are the only dependencies and no
    rational arithmetic is needed.
    """
    n = len(ks)
    nuis = [i for i in range(n) if ks[i].nuisance]
    terms = sorted((i for i in range(n) if not ks[i].nuisance), key=lambda i: (ks[i].order, i))
    order = nuis + terms
    g = [[gram[i][j] for j in order] for i in order]
    rep = list(range(n))
    for j in range(n):
        for i in range(j):
            if rep[i] == i and g[i][i] == g[j][j] == g[i][j]:
                rep[j] = i
                break
    uniq = [j for j in range(n) if rep[j] == j]
    if _well_conditioned([[g[a][b] for b in uniq] for a in uniq]):
        pivots = uniq
        expr = {j: [rep[j]] for j in range(n) if rep[j] != j}
        null = [{j: Fraction(1), rep[j]: Fraction(-1)} for j in range(n) if rep[j] != j]
    else:
        r, pivots = _rref(g)
        expr = {
            f: [pc for i, pc in enumerate(pivots) if r[i][f] != 0] for f in range(n) if f not in pivots
        }
        null = []
        for f in range(n):
            if f in pivots:
                continue
            v = {f: Fraction(1)}
            for i, pc in enumerate(pivots):
                if r[i][f] != 0:
                    v[pc] = -r[i][f]
            null.append(v)
    names = [ks[i].name for i in order]
    rank_of = {name: k for k, name in enumerate(names)}
    confounded: dict[str, list[str]] = {}
    for col in range(len(nuis), n):
        involved = [v for v in null if v.get(col, 0) != 0]
        if involved:
            # Kernels identical to this one are always named; beyond them the
            # null-space basis (pivots taken lowest order first) says which
            # kernels this one is a linear combination of, or enters.
            partners = {names[j] for j in range(n) if j != col and rep[j] == rep[col]}
            partners |= {names[j] for v in involved for j in v if j != col}
            confounded[names[col]] = sorted(partners, key=rank_of.__getitem__)
    kept = [names[c] for c in pivots if c >= len(nuis)]
    folded = {names[f]: [names[j] for j in expr[f]] for f in sorted(expr) if f >= len(nuis)}
    return _GramAnalysis(confounded, kept, folded)


@dataclass(frozen=True)
class _Kernel:
    name: str
    facets: frozenset | str  # frozenset of facets, or _TRIAL_LEVEL
    nuisance: bool
    order: int = 0  # number of facets as written in the term


def _kernels(d: CellIndex, terms: Sequence[tuple[str, ...]], cell_facets: Iterable[str]) -> list[_Kernel]:
    ks = [_Kernel(_INTERCEPT, frozenset(), True), _Kernel(_RESIDUAL, _TRIAL_LEVEL, True)]
    cell = d.facet_set(cell_facets)
    term_sets = [d.facet_set(t) for t in terms]
    if cell not in term_sets:
        ks.append(_Kernel(_CELL, cell, True))
    ks.extend(_Kernel(":".join(t), s, False, len(t)) for t, s in zip(terms, term_sets))
    return ks


def _gram(d: CellIndex, ks: Sequence[_Kernel], benchmark_wise: bool = False):
    """Frobenius inner products <K_j, K_k> = tr(K_j K_k) of the kernels, exact.

    With K = Z Z' for a 0/1 incidence matrix Z over trials,
    tr(K_j K_k) = sum over the joint levels of (j, k) of (trials in the level)^2,
    because (Z_j' Z_k)_{uv} counts the trials in level u of j and v of k.
    The intercept kernel is the all-ones matrix J (the empty facet set) and the
    residual kernel the identity I (tr(I K) = number of trials).

    With ``benchmark_wise`` the inner products are computed within each
    benchmark separately (every facet set is joined with ``benchmark``) and a
    list of matrices, one per benchmark, is returned.
    """
    n = len(ks)
    nb = d.sizes["benchmark"]
    cache: dict = {}

    def t(s) -> int | list[int]:
        if s == _TRIAL_LEVEL:
            if benchmark_wise:
                return [int(x) for x in np.bincount(d.cell["benchmark"], weights=d.cell_trials, minlength=nb)]
            return d.n_trials
        if benchmark_wise:
            s = d.facet_set(set(s) | {"benchmark"})
        if s not in cache:
            counts = d.trial_counts(s)
            if benchmark_wise:
                cache[s] = _exact_bincount_squares(d.group_benchmark(s), counts, nb)
            else:
                cache[s] = _exact_sum_squares(counts)
        return cache[s]

    def union(a, b):
        if a == _TRIAL_LEVEL or b == _TRIAL_LEVEL:
            return _TRIAL_LEVEL
        return d.facet_set(set(a) | set(b))

    vals = [[t(union(ks[i].facets, ks[j].facets)) for j in range(n)] for i in range(n)]
    if not benchmark_wise:
        return vals
    return [[[vals[i][j][b] for j in range(n)] for i in range(n)] for b in range(nb)]


@dataclass
class Separation:
    """One replication pattern of seed 000 Table 15 (or an extra one we check).

    ``coarse`` and ``fine`` are two variance-component terms; they are
    distinguished when some level of ``coarse`` is observed with at least two
    levels of ``fine`` (observations that share the coarse grouping without
    sharing the fine one).  ``count`` of ``of`` coarse levels meet it.
    """

    coarse: str
    fine: str
    requirement: str
    holds: bool
    count: int
    of: int
    source: str

    @property
    def evidence(self) -> str:
        if self.coarse == _INTERCEPT:
            return f"{self.count} {self.requirement}"
        return f"{self.count} of {self.of} {self.requirement}"

    def to_dict(self) -> dict:
        return {
            "coarse": self.coarse,
            "fine": self.fine,
            "requirement": self.requirement,
            "holds": self.holds,
            "count": self.count,
            "of": self.of,
            "evidence": self.evidence,
            "source": self.source,
        }


@dataclass
class Condition:
    """One of the design conditions (i)-(iv) of seed 000 Prop. E.3."""

    key: str
    statement: str
    applicable: bool
    holds: bool | None
    evidence: dict

    def to_dict(self) -> dict:
        return {
            "key": self.key,
            "statement": self.statement,
            "applicable": self.applicable,
            "holds": self.holds,
            "evidence": dict(self.evidence),
        }


@dataclass
class ComponentSeparability:
    """Whether one variance component is separable, and why."""

    term: str
    separable: bool
    confounded_with: list[str]
    reason: str

    def to_dict(self) -> dict:
        return {
            "term": self.term,
            "separable": self.separable,
            "confounded_with": list(self.confounded_with),
            "reason": self.reason,
        }


@dataclass
class Separability:
    """Which variance components the observed design can separate.

    Attributes
    ----------
    scope
        ``"pooled"`` (seed 000 Eq. 6, two or more benchmarks) or
        ``"per-benchmark"`` (Eq. 2, a single benchmark).
    terms
        The random-intercept terms examined, in formula spelling.
    conditions
        Prop. E.3's conditions (i)-(iv) with their evidence; for a single
        benchmark (i)-(iii) are marked not applicable.
    prop_e3_holds
        All four conditions hold (None when they do not apply).
    separations
        Table 15's replication patterns, plus the ones that separate the
        three-way terms from the terminal residual.
    components
        One entry per term: separable or not, the terms it is confounded with,
        and the reason in words.
    separable_components, not_separable
        The terms, split by the exact criterion (Prop. E.2).
    suggested_terms, folded
        A reduced formula the design identifies and, for every term dropped,
        the kept terms (or ``"(intercept)"``, ``"residual"``, ``"(terminal cell)"``)
        that absorb its variance.
    per_benchmark
        For a pooled corpus, the Eq. 2 separability within each benchmark
        (``separable_components``, ``confounded_with``, ``suggested_terms``, ``folded``).
    notes
        Plain-language remarks (e.g. that the benchmark-level split does not apply).
    """

    scope: str
    terms: list[str]
    conditions: list[Condition]
    prop_e3_holds: bool | None
    separations: list[Separation]
    components: list[ComponentSeparability]
    suggested_terms: list[str]
    folded: dict[str, list[str]]
    per_benchmark: dict[str, dict] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def separable_components(self) -> list[str]:
        return [c.term for c in self.components if c.separable]

    @property
    def not_separable(self) -> list[str]:
        return [c.term for c in self.components if not c.separable]

    def condition(self, key: str) -> Condition:
        for c in self.conditions:
            if c.key == key:
                return c
        raise KeyError(f"no condition {key!r}; conditions are {[c.key for c in self.conditions]}")

    def component(self, term: str) -> ComponentSeparability:
        name = _term_name(term)
        for c in self.components:
            if c.term == name:
                return c
        raise KeyError(f"no term {term!r}; terms are {self.terms}")

    def to_dict(self) -> dict:
        return {
            "scope": self.scope,
            "terms": list(self.terms),
            "conditions": {c.key: c.to_dict() for c in self.conditions},
            "prop_e3_holds": self.prop_e3_holds,
            "separations": [s.to_dict() for s in self.separations],
            "components": [c.to_dict() for c in self.components],
            "separable_components": self.separable_components,
            "not_separable": self.not_separable,
            "suggested_terms": list(self.suggested_terms),
            "folded": {k: list(v) for k, v in self.folded.items()},
            "per_benchmark": {b: dict(v) for b, v in self.per_benchmark.items()},
            "notes": list(self.notes),
        }


# (coarse, fine, words, source); "residual" as fine means the terminal cell
# (benchmark, task, model, scaffold), and "(intercept)" as coarse means "at least
# two levels of fine exist".
_POOLED_SEPARATIONS: tuple[tuple[str, str, str, str], ...] = (
    ("(intercept)", "benchmark", "benchmarks observed (>= 2 needed)", "extra"),
    ("model", "benchmark:model", "models appear on >= 2 benchmarks", "Table 15"),
    ("scaffold", "benchmark:scaffold", "scaffolds appear on >= 2 benchmarks", "Table 15"),
    ("model:scaffold", "benchmark:model:scaffold", "model-scaffold pairs recur on >= 2 benchmarks", "Table 15"),
    ("model", "model:scaffold", "models run under >= 2 scaffolds", "Table 15"),
    ("scaffold", "model:scaffold", "scaffolds are shared by >= 2 models", "Table 15"),
    ("benchmark:model", "benchmark:model:scaffold", "benchmark-model pairs run under >= 2 scaffolds", "Table 15"),
    ("benchmark:scaffold", "benchmark:model:scaffold", "benchmark-scaffold pairs run with >= 2 models", "extra"),
    ("benchmark", "benchmark:task", "benchmarks have >= 2 tasks", "extra"),
    ("benchmark:task", "benchmark:task:model", "benchmark items are attempted by >= 2 models", "Table 15"),
    ("benchmark:task", "benchmark:task:scaffold", "benchmark items are attempted under >= 2 scaffolds", "Table 15"),
    ("benchmark:task:model", "residual", "item-model pairs run under >= 2 scaffolds", "extra"),
    ("benchmark:task:scaffold", "residual", "item-scaffold pairs run with >= 2 models", "extra"),
    ("benchmark:model:scaffold", "residual", "benchmark-model-scaffold cells span >= 2 items", "extra"),
)

_PER_BENCHMARK_SEPARATIONS: tuple[tuple[str, str, str, str], ...] = (
    ("(intercept)", "task", "tasks observed (>= 2 needed)", "extra"),
    ("(intercept)", "model", "models observed (>= 2 needed)", "extra"),
    ("(intercept)", "scaffold", "scaffolds observed (>= 2 needed)", "extra"),
    ("model", "model:scaffold", "models run under >= 2 scaffolds", "Table 15"),
    ("scaffold", "model:scaffold", "scaffolds are shared by >= 2 models", "Table 15"),
    ("task", "task:model", "tasks are attempted by >= 2 models", "Table 15"),
    ("task", "task:scaffold", "tasks are attempted under >= 2 scaffolds", "Table 15"),
    ("task:model", "residual", "task-model pairs run under >= 2 scaffolds", "extra"),
    ("task:scaffold", "residual", "task-scaffold pairs run with >= 2 models", "extra"),
    ("model:scaffold", "residual", "model-scaffold pairs span >= 2 tasks", "extra"),
)


def _separations(d: CellIndex, spec) -> list[Separation]:
    out = []
    for coarse, fine, words, source in spec:
        fine_set = set(FACETS) if fine == "residual" else set(_parse_term(fine))
        if coarse == "(intercept)":
            n = d.n_groups(fine_set)
            out.append(Separation(coarse, fine, words, n >= 2, n, n, source))
            continue
        per = d.levels_per(_parse_term(coarse), fine_set)
        count = int((per >= 2).sum())
        out.append(Separation(coarse, fine, words, count > 0, count, int(len(per)), source))
    return out


def _conditions(d: CellIndex, conn_bm: int, conn_ba: int, pooled: bool) -> list[Condition]:
    nb = d.sizes["benchmark"]
    models_nb = d.levels_per({"model"}, {"benchmark"})
    scaff_nb = d.levels_per({"scaffold"}, {"benchmark"})
    pair_nb = d.levels_per({"model", "scaffold"}, {"benchmark"})
    item_nm = d.levels_per({"task"}, {"model"})
    item_na = d.levels_per({"task"}, {"scaffold"})
    n_items = int(len(item_nm))
    ev_i = {
        "benchmark_model_components": conn_bm,
        "models": int(len(models_nb)),
        "models_on_multiple_benchmarks": int((models_nb >= 2).sum()),
        "models_on_all_benchmarks": int((models_nb == nb).sum()) if nb >= 2 else 0,
    }
    ev_ii = {
        "benchmark_scaffold_components": conn_ba,
        "scaffolds": int(len(scaff_nb)),
        "scaffolds_on_multiple_benchmarks": int((scaff_nb >= 2).sum()),
        "scaffolds_on_all_benchmarks": int((scaff_nb == nb).sum()) if nb >= 2 else 0,
    }
    ev_iii = {
        "model_scaffold_pairs": int(len(pair_nb)),
        "pairs_on_multiple_benchmarks": int((pair_nb >= 2).sum()),
    }
    k_m = int((item_nm >= 2).sum())
    k_a = int((item_na >= 2).sum())
    ev_iv = {
        "items": n_items,
        "items_with_2plus_models": k_m,
        "items_with_2plus_scaffolds": k_a,
        "share_items_2plus_models": float(k_m / n_items) if n_items else 0.0,
        "share_items_2plus_scaffolds": float(k_a / n_items) if n_items else 0.0,
    }
    na = "not applicable: a single benchmark has no benchmark-level split"
    return [
        Condition(
            "i",
            "the benchmark-model incidence graph is connected and contains models observed on multiple benchmarks",
            pooled,
            (conn_bm == 1 and ev_i["models_on_multiple_benchmarks"] > 0) if pooled else None,
            ev_i if pooled else {**ev_i, "note": na},
        ),
        Condition(
            "ii",
            "the benchmark-scaffold incidence graph is connected and contains scaffolds observed on multiple "
            "benchmarks",
            pooled,
            (conn_ba == 1 and ev_ii["scaffolds_on_multiple_benchmarks"] > 0) if pooled else None,
            ev_ii if pooled else {**ev_ii, "note": na},
        ),
        Condition(
            "iii",
            "at least some model-scaffold pairs recur across benchmarks",
            pooled,
            (ev_iii["pairs_on_multiple_benchmarks"] > 0) if pooled else None,
            ev_iii if pooled else {**ev_iii, "note": na},
        ),
        Condition(
            "iv",
            "benchmark items are attempted by multiple models and by multiple scaffolds",
            True,
            k_m > 0 and k_a > 0,
            ev_iv,
        ),
    ]


def _component_reasons(
    terms: Sequence[str], deps: dict[str, list[str]], seps: Sequence[Separation]
) -> list[ComponentSeparability]:
    out = []
    for term in terms:
        related = [s for s in seps if term in (s.coarse, s.fine)]
        if term not in deps:
            support = "; ".join(s.evidence for s in related if s.holds)
            reason = (
                "its covariance kernel is linearly independent of the other terms' on the observed cells (Prop. E.2)"
            )
            if support:
                reason += f": {support}"
            out.append(ComponentSeparability(term, True, [], reason))
        else:
            partners = deps[term]
            failing = "; ".join("only " + s.evidence for s in related if not s.holds)
            reason = "confounded with " + (", ".join(partners) if partners else "a combination of other terms")
            reason += " (their kernels are linearly dependent on the observed cells, Prop. E.2)"
            if failing:
                reason += f": {failing}"
            out.append(ComponentSeparability(term, False, list(partners), reason))
    return out


def _separability(d: CellIndex, conn: Connectivity | None = None) -> Separability:
    nb = d.sizes["benchmark"]
    pooled = nb >= 2
    if conn is None:
        bm = _bipartite_components(d, "benchmark", "model")
        ba = _bipartite_components(d, "benchmark", "scaffold")
    else:
        bm, ba = conn.benchmark_model_components, conn.benchmark_scaffold_components
    conditions = _conditions(d, bm, ba, pooled)
    notes: list[str] = []
    eq2_terms = [_parse_term(t) for t in PER_BENCHMARK_TERMS]
    eq2_ks = _kernels(d, eq2_terms, FACETS)
    per_benchmark: dict[str, dict] = {}
    if pooled:
        terms = [_parse_term(t) for t in POOLED_TERMS]
        ks = _kernels(d, terms, FACETS)
        gram = _gram(d, ks)
        seps = _separations(d, _POOLED_SEPARATIONS)
        # Within-benchmark (Eq. 2) view, for per-benchmark fits.
        grams_b = _gram(d, eq2_ks, benchmark_wise=True)
        for k, name in enumerate(d.labels["benchmark"]):
            res_b = _analyse_gram(grams_b[k], eq2_ks)
            per_benchmark[name] = {
                "separable_components": [t for t in PER_BENCHMARK_TERMS if t not in res_b.confounded],
                "confounded_with": {t: res_b.confounded[t] for t in PER_BENCHMARK_TERMS if t in res_b.confounded},
                "suggested_terms": res_b.kept,
                "folded": res_b.folded,
            }
        scope = "pooled"
        prop = all(bool(c.holds) for c in conditions)
    else:
        terms, ks = eq2_terms, eq2_ks
        gram = _gram(d, ks)
        seps = _separations(d, _PER_BENCHMARK_SEPARATIONS)
        scope = "per-benchmark"
        prop = None
        notes.append(
            f"single benchmark: the benchmark-level split of {cite('hardy2026', 'Eq. 6')} (model vs benchmark:model, "
            "scaffold vs benchmark:scaffold, model:scaffold vs benchmark:model:scaffold) is not applicable; "
            "the per-benchmark terms of Eq. 2 are examined instead"
        )
    res = _analyse_gram(gram, ks)
    names = [":".join(t) for t in terms]
    comps = _component_reasons(names, res.confounded, seps)
    if d.n_cells and int((d.cell_trials > 1).sum()) == 0:
        notes.append(
            "no cell holds replicate trials: the highest-order interaction is folded into the residual "
            f"({cite('hardy2026', 'App. E.5')})"
        )
    return Separability(
        scope=scope,
        terms=names,
        conditions=conditions,
        prop_e3_holds=prop,
        separations=seps,
        components=comps,
        suggested_terms=res.kept,
        folded=res.folded,
        per_benchmark=per_benchmark,
        notes=notes,
    )


def separability(corpus: Corpus | pd.DataFrame) -> Separability:
    """Which variance components the corpus can separate (seed 000 App. E.3-E.6).

    Rules
    -----
    *Exact criterion (Prop. E.2).*  On the observed trials the latent linear
    predictor has covariance ``sum_k sigma_k^2 K_k`` with ``K_k = Z_k Z_k'``
    (Eq. 17).  A term is **separable** iff its kernel is not a linear
    combination of the other terms' kernels together with three nuisance
    kernels: the all-ones matrix J (the unknown intercept: a term with a single
    observed level is indistinguishable from the mean; equivalent to the REML
    projection, because every kernel has a unit diagonal), the identity I (the
    trial-level residual; a term whose levels each hold one trial is
    deterministically confounded with it, as App. E.5 says for the four-way
    cell) and the terminal-cell kernel of (benchmark, task, model, scaffold)
    (the unreplicated BIMA interaction that is folded into the residual).  The
    check is exact: inner products ``tr(K_j K_k)`` are sums of squared trial
    counts over joint levels, and the null space of their integer Gram matrix
    is found in rational arithmetic.  Separability is structural; how precisely
    a separable component is estimated depends on the replication counts
    reported alongside and on the posterior.

    *Terms.*  With two or more benchmarks the pooled terms of seed 000 Eq. 6
    (``POOLED_TERMS``) are examined, and ``per_benchmark`` repeats the check for
    the Eq. 2 terms within each benchmark.  With one benchmark the
    benchmark-level split is not applicable and the Eq. 2 terms
    (``PER_BENCHMARK_TERMS``: task, model, scaffold, task:model,
    task:scaffold, model:scaffold) are examined.

    *Replication patterns (Table 15).*  Two nested terms C and F (F refines C)
    are distinguished iff some level of C is observed with two or more levels
    of F.  Pooled: model vs benchmark:model (a model on >= 2 benchmarks);
    scaffold vs benchmark:scaffold (a scaffold on >= 2 benchmarks);
    model:scaffold vs benchmark:model:scaffold (a model-scaffold pair on >= 2
    benchmarks); model vs model:scaffold (a model under >= 2 scaffolds);
    scaffold vs model:scaffold (a scaffold shared by >= 2 models: Table 15's
    "overlap across models"); benchmark:model vs benchmark:model:scaffold (within
    a benchmark, a model under >= 2 scaffolds); benchmark:task vs
    benchmark:task:model and vs benchmark:task:scaffold (an item attempted by
    >= 2 models, under >= 2 scaffolds); and, beyond Table 15, the three-way terms
    against the terminal residual (e.g. benchmark:task:model needs an
    item-model pair under >= 2 scaffolds).  Per benchmark: model vs
    model:scaffold, scaffold vs model:scaffold, task vs task:model, task vs
    task:scaffold, the two-way terms vs the residual, and >= 2 levels of each
    main effect.  Each pattern is necessary for both of its terms; the exact
    criterion also catches dependencies among more than two terms.

    *Conditions (i)-(iv) of Prop. E.3* are reported with their evidence:
    (i) the benchmark-model graph is connected and at least one model is on
    >= 2 benchmarks; (ii) the same for scaffolds; (iii) at least one
    model-scaffold pair recurs on >= 2 benchmarks; (iv) at least one item is
    attempted by >= 2 models and at least one by >= 2 scaffolds (the structural
    minimum; the shares of such items measure strength).  (i)-(iii) are not
    applicable to a single benchmark.  Connectivity is required by (i)-(ii)
    because contrasts between disconnected parts are not identified (Lemma
    E.1), even where variances are.

    *Suggested formula.*  ``suggested_terms`` keeps terms lowest order first
    and folds a term whose kernel is already spanned; ``folded`` says which
    kept terms absorb its variance (e.g. with one scaffold, ``model:scaffold``
    is folded into ``model`` and ``scaffold`` into the intercept).  A folded
    variance is not zero: it is estimated as part of the absorbing terms, which
    then mean their sum.

    Parameters
    ----------
    corpus
        A corpus or its canonical table.

    Returns
    -------
    Separability
    """
    return _separability(cell_index(corpus))


def separable_terms(corpus: Corpus | pd.DataFrame, terms: Sequence[str]) -> dict:
    """Exact separability (Prop. E.2) of an arbitrary set of random-intercept terms.

    Parameters
    ----------
    corpus
        A corpus or its canonical table.
    terms
        Terms in formula spelling, e.g. ``["model", "task", "model:task"]`` or
        terms over extra facet columns (``"step"``, ``"error_category"``);
        ``task`` always means the (benchmark, task) pair.

    Returns
    -------
    dict
        ``separable`` (terms), ``confounded_with`` (term -> other terms or
        nuisance kernels in the dependency), ``suggested_terms`` and ``folded``
        as in :func:`separability`.  The nuisance kernels are the intercept,
        the trial-level residual and the cell of all facets used.
    """
    parsed = [_parse_term(t) for t in terms]
    extra = sorted({f for t in parsed for f in t if f not in FACETS})
    d = CellIndex(_as_table(corpus), extra_facets=extra)
    used = {f for t in parsed for f in t}
    ks = _kernels(d, parsed, used)
    gram = _gram(d, ks)
    res = _analyse_gram(gram, ks)
    names = [":".join(t) for t in parsed]
    return {
        "terms": names,
        "separable": [t for t in names if t not in res.confounded],
        "confounded_with": {t: res.confounded[t] for t in names if t in res.confounded},
        "suggested_terms": res.kept,
        "folded": res.folded,
    }
