"""Whether the benchmarks of a pooled corpus share models.

Two leaderboards concatenated with no model in common fit a pooled model (seed 000 (Hardy et al.
2026) Eq. 6) whose benchmark-by-model term is confounded with the model term: every model has one
benchmark, so ``u_m`` and ``u_bm`` are the same effect (Prop. E.3 (i) fails), and the term is left
out of the fit (:func:`.presets.supported_spec`).  Its variance is then carried by ``s2_M``, as if a
model's advantage held on every benchmark, and the pooled D-study, which divides ``s2_BM`` by the
number of benchmarks, answers "a fresh sample of 95.5 tasks and 2 benchmarks" with nothing behind
the benchmarks.  Models of different benchmarks are compared only through the benchmarks' mean
difficulty.  :func:`model_overlap` says so, and what the design cannot tell is refused where it
would be claimed (``ddr dstudy``'s benchmark count, the sheet's notice).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

__all__ = ["ModelOverlap", "model_overlap", "sizes_not_answered", "task_model_groups"]


@dataclass(frozen=True)
class ModelOverlap:
    """The models each benchmark ran and those run on several.

    Attributes
    ----------
    n_benchmarks, n_models
        Levels in the corpus.
    shared
        Models that ran on two or more benchmarks.
    models_per_benchmark
        Benchmark -> its number of models.
    """

    n_benchmarks: int
    n_models: int
    shared: tuple[str, ...]
    models_per_benchmark: dict
    #: Groups of models that attempted no task in common with another group (1: one connected design).
    n_task_groups: int = 1

    @property
    def no_model_in_common(self) -> bool:
        """Two or more benchmarks and not one model run on more than one of them."""
        return self.n_benchmarks >= 2 and not self.shared

    def cannot_tell(self) -> str | None:
        """The sentence of what the design cannot tell (None when the benchmarks share a model)."""
        if not self.no_model_in_common:
            return None
        return (f"the {self.n_benchmarks} benchmarks share no model (each of the {self.n_models} models ran on one "
                "benchmark): benchmark-by-model variance cannot be told from model variance, so how many "
                "benchmarks a ranking needs is not answered, and models of different benchmarks are compared "
                "only through the benchmarks' mean difficulty; read each benchmark on its own "
                "(--slice benchmark=NAME)")

    def groups_text(self) -> str | None:
        """The sentence on models that never met on a task (None when every model is linked to every other
        through shared tasks)."""
        if self.n_task_groups < 2:
            return None
        return (f"the models fall into {self.n_task_groups} groups that attempted no task in common (files "
                "concatenated under one benchmark name?): a model is compared with another group's only through "
                "the model and task variances' assumptions, not through data; rank within a group")

    def to_dict(self) -> dict:
        return {"n_benchmarks": self.n_benchmarks, "n_models": self.n_models, "shared_models": list(self.shared),
                "models_per_benchmark": dict(self.models_per_benchmark),
                "no_model_in_common": self.no_model_in_common, "n_task_groups": self.n_task_groups}


def model_overlap(corpus) -> ModelOverlap:
    """The :class:`ModelOverlap` of a corpus (or its canonical table)."""
    table: pd.DataFrame = getattr(corpus, "table", corpus)
    per = table.groupby("model", observed=True)["benchmark"].nunique()
    by_b = table.groupby("benchmark", observed=True)["model"].nunique()
    return ModelOverlap(int(table["benchmark"].nunique()), int(table["model"].nunique()),
                        tuple(sorted(str(m) for m in per.index[per >= 2])),
                        {str(b): int(n) for b, n in by_b.items()}, task_model_groups(table))


def task_model_groups(table: pd.DataFrame) -> int:
    """The connected components of the bipartite graph of (benchmark, task) and model, counted over models.

    The benchmark-model-scaffold graph of ``ddr inspect`` (seed 000 App. E) is connected when two py-irt
    files without benchmark names are concatenated (one benchmark "unknown" holds both); the models of
    the two files still never attempted a common task.  This counts such groups.
    """
    import numpy as np
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    task = table.groupby(["benchmark", "task"], observed=True, sort=False).ngroup().to_numpy()
    model = pd.factorize(table["model"].astype(str))[0]
    n_t, n_m = int(task.max()) + 1, int(model.max()) + 1
    adj = coo_matrix((np.ones(len(task)), (task, n_t + model)), shape=(n_t + n_m, n_t + n_m))
    _, label = connected_components(adj, directed=False)
    return int(len(set(label[n_t:])))


def sizes_not_answered(overlap) -> dict[str, str]:
    """D-study sizes whose "smallest size for the target" the design cannot support, with why:
    ``{"n_benchmarks": ...}`` when the benchmarks share no model, else empty.  ``overlap`` is a
    :class:`ModelOverlap` or its ``to_dict()`` (``ddr inspect``'s ``model_overlap``)."""
    if isinstance(overlap, dict):
        if not overlap.get("no_model_in_common"):
            return {}
        overlap = ModelOverlap(overlap["n_benchmarks"], overlap["n_models"], (), {})
    why = overlap.cannot_tell()
    return {} if why is None else {"n_benchmarks": why}
