"""Whether the benchmarks of a pooled corpus share models (issue 47, item 5).

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

__all__ = ["ModelOverlap", "model_overlap", "sizes_not_answered"]


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

    def to_dict(self) -> dict:
        return {"n_benchmarks": self.n_benchmarks, "n_models": self.n_models, "shared_models": list(self.shared),
                "models_per_benchmark": dict(self.models_per_benchmark),
                "no_model_in_common": self.no_model_in_common}


def model_overlap(corpus) -> ModelOverlap:
    """The :class:`ModelOverlap` of a corpus (or its canonical table)."""
    table: pd.DataFrame = getattr(corpus, "table", corpus)
    per = table.groupby("model", observed=True)["benchmark"].nunique()
    by_b = table.groupby("benchmark", observed=True)["model"].nunique()
    return ModelOverlap(int(table["benchmark"].nunique()), int(table["model"].nunique()),
                        tuple(sorted(str(m) for m in per.index[per >= 2])),
                        {str(b): int(n) for b, n in by_b.items()})


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
