"""The sizes of a D-study design: how many tasks, scaffolds, benchmarks and trials, at what prices.

A :class:`DStudyDesign` is what the D-study sliders move (seed 000 (Hardy et al. 2026) Table 1's ``n_f``; SPEC sec. 4):
tasks per benchmark (or an unequal allocation), scaffolds per model, benchmarks, trials per cell,
the price per trial, the models compared, the object of measurement and the claim.  It knows its
trial count and cost; the coefficients it reaches are computed in :mod:`.curves`.

Cost (a definition chosen where the papers are loose): a design runs ``n_models x n_scaffolds x
sum_b n_tasks_b x n_replicates`` trials; its cost is the sum of their per-trial prices.  With prices
per benchmark but no per-benchmark task counts, each benchmark is charged the mean price
(benchmarks are exchangeable draws).  Unequal tasks per benchmark enter the D-study rule through
the harmonic mean of the ``n_i,b`` (see :mod:`.curves`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from ..errors import shown
from ..reliability import (REPLICATE, _object_name, object_facets,
                          to_jsonable)



#: Default targets by claim (SPEC sec. 4): ranking Erho2 >= 0.85, threshold decisions Phi >= 0.90.
DEFAULT_TARGETS: dict[str, float] = {"relative": 0.85, "absolute": 0.90}

#: Draws used for curve bands (see the module note on speed).
DEFAULT_BAND_DRAWS = 1000

#: DStudyDesign field -> facet name of the D-study rule.
_FIELD_FACET = {"n_tasks": "task", "n_scaffolds": "scaffold", "n_benchmarks": "benchmark",
                "n_replicates": REPLICATE}
_FACET_FIELD = {v: k for k, v in _FIELD_FACET.items()}


# ---------------------------------------------------------------------------
# DStudyDesign
# ---------------------------------------------------------------------------

#: The largest size of a facet in a D-study design (the saved analysis caps its sizes at the same 10 million).
MAX_DESIGN_SIZE = 1e7


@dataclass(frozen=True)
class DStudyDesign:
    """A measurement design (SPEC sec. 4; seed 000 Table 1's ``n_f``).

    Attributes
    ----------
    n_tasks
        Tasks per benchmark (equal allocation).
    n_scaffolds, n_benchmarks, n_replicates
        Scaffolds per model, benchmarks, trials per (task, model, scaffold) cell.
    price_per_trial
        USD per trial: one number, or ``{benchmark: price}``.
    n_models
        Number of models compared (enters the cost only).
    object_of_measurement
        ``"model"`` or ``"system"`` (model-scaffold pair), or facet names.
    claim
        ``"relative"`` (ranking; Erho2) or ``"absolute"`` (threshold decisions; Phi).
    tasks_per_benchmark
        Optional unequal allocation ``{benchmark: n_tasks}``; overrides
        ``n_tasks`` and ``n_benchmarks`` (see the module note).
    extra_facets
        Sizes of further facets of the fit (e.g. seed 003 (DDR paper 2026)'s ``step``).
    """

    n_tasks: float = 50
    n_scaffolds: float = 1
    n_benchmarks: float = 1
    n_replicates: float = 1
    price_per_trial: float | Mapping[str, float] = 0.0
    n_models: int = 2
    object_of_measurement: str | tuple[str, ...] = "model"
    claim: str = "relative"
    tasks_per_benchmark: Mapping[str, float] | None = None
    extra_facets: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self):
        for name in ("n_tasks", "n_scaffolds", "n_benchmarks", "n_replicates"):
            v = getattr(self, name)
            # finite and bounded: inf or 1e308 tasks gave NaN curves and a TypeError in the formatter
            if not (isinstance(v, (int, float, np.integer, np.floating)) and 1 <= v <= MAX_DESIGN_SIZE):
                raise ValueError(f"design: {name} should be a number >= 1, got {shown(v)} (sizes are at most "
                                 f"{MAX_DESIGN_SIZE:,.0f})")
        if not (isinstance(self.n_models, (int, np.integer)) and self.n_models >= 1):
            raise ValueError(f"design: n_models should be a whole number >= 1, got {shown(self.n_models)}")
        if self.claim not in DEFAULT_TARGETS:
            raise ValueError(f"design: claim should be 'relative' (ranking) or 'absolute' (thresholds), "
                             f"got {self.claim!r}")
        object_facets(self.object_of_measurement)  # validates
        prices = self.price_per_trial
        values = prices.items() if isinstance(prices, Mapping) else [("(all)", prices)]
        for b, p in values:
            if not (isinstance(p, (int, float, np.integer, np.floating)) and math.isfinite(p) and p >= 0):
                raise ValueError(f"design: price per trial of benchmark {b!r} should be a number >= 0 (USD), got {shown(p)}")
        if isinstance(prices, Mapping) and not prices:
            raise ValueError("design: price_per_trial is an empty mapping; give {benchmark: USD per trial} or a number")
        if self.tasks_per_benchmark is not None:
            if not self.tasks_per_benchmark:
                raise ValueError("design: tasks_per_benchmark is empty; give {benchmark: n_tasks} or None")
            for b, n in self.tasks_per_benchmark.items():
                if not (isinstance(n, (int, float, np.integer, np.floating)) and n >= 1):
                    raise ValueError(f"design: benchmark {b!r} needs at least 1 task, got {shown(n)}")
            if isinstance(prices, Mapping):
                missing = [b for b in self.tasks_per_benchmark if b not in prices]
                if missing:
                    raise ValueError(f"design: no price for benchmark(s) {', '.join(map(repr, missing))}; "
                                     "add them to price_per_trial")
        for f, n in self.extra_facets.items():
            if f in _FACET_FIELD:
                raise ValueError(f"design: set {_FACET_FIELD[f]} rather than extra_facets[{f!r}]")
            if not n >= 1:
                raise ValueError(f"design: size of facet {f!r} should be >= 1, got {shown(n)}")

    # -- sizes -------------------------------------------------------------
    @property
    def object_facets(self) -> frozenset[str]:
        return object_facets(self.object_of_measurement)

    @property
    def effective_n_benchmarks(self) -> float:
        return float(len(self.tasks_per_benchmark)) if self.tasks_per_benchmark else float(self.n_benchmarks)

    @property
    def effective_n_tasks(self) -> float:
        """Tasks per benchmark; the harmonic mean of an unequal allocation."""
        if self.tasks_per_benchmark:
            n = np.array(list(self.tasks_per_benchmark.values()), dtype=np.float64)
            return float(len(n) / np.sum(1.0 / n))
        return float(self.n_tasks)

    @property
    def total_tasks(self) -> float:
        if self.tasks_per_benchmark:
            return float(sum(self.tasks_per_benchmark.values()))
        return float(self.n_tasks) * float(self.n_benchmarks)

    def sizes(self) -> dict[str, float]:
        """Facet -> sample size for the D-study rule of :mod:`.reliability`."""
        out = {"task": self.effective_n_tasks, "scaffold": float(self.n_scaffolds),
               "benchmark": self.effective_n_benchmarks, REPLICATE: float(self.n_replicates)}
        out.update({f: float(n) for f, n in self.extra_facets.items()})
        return out

    def size_of(self, over: str) -> float:
        return self.sizes()[_facet_of(over)]

    def with_size(self, over: str, n: float) -> "DStudyDesign":
        """A copy with one facet's size changed (an unequal allocation is dropped when tasks change)."""
        f = _facet_of(over)
        if f in _FACET_FIELD:
            kw = {_FACET_FIELD[f]: n}
            if f in ("task", "benchmark") and self.tasks_per_benchmark:
                kw["tasks_per_benchmark"] = None
                kw.setdefault("n_tasks", self.effective_n_tasks)
                kw.setdefault("n_benchmarks", self.effective_n_benchmarks)
            return dataclasses.replace(self, **kw)
        return dataclasses.replace(self, extra_facets={**self.extra_facets, f: n})

    @property
    def estimand(self) -> str:
        return "Phi" if self.claim == "absolute" else "Erho2"

    @property
    def default_target(self) -> float:
        return DEFAULT_TARGETS[self.claim]

    # -- cost --------------------------------------------------------------
    def trial_count(self) -> float:
        """``n_models x n_scaffolds x sum_b n_tasks_b x n_replicates`` (SPEC sec. 4)."""
        return float(self.n_models) * float(self.n_scaffolds) * self.total_tasks * float(self.n_replicates)

    def mean_price(self) -> float:
        """Mean USD per trial of this design."""
        p = self.price_per_trial
        if not isinstance(p, Mapping):
            return float(p)
        if self.tasks_per_benchmark:
            tot = sum(float(n) * float(p[b]) for b, n in self.tasks_per_benchmark.items())
            return tot / self.total_tasks
        return float(np.mean(list(p.values())))

    def cost(self) -> float:
        """Total USD: the sum of the per-trial prices of every trial."""
        return self.trial_count() * self.mean_price()

    def to_dict(self) -> dict:
        return to_jsonable({
            "n_tasks": self.n_tasks, "n_scaffolds": self.n_scaffolds, "n_benchmarks": self.n_benchmarks,
            "n_replicates": self.n_replicates,
            "price_per_trial": dict(self.price_per_trial) if isinstance(self.price_per_trial, Mapping)
            else self.price_per_trial,
            "n_models": self.n_models, "object_of_measurement": _object_name(self.object_facets),
            "claim": self.claim,
            "tasks_per_benchmark": dict(self.tasks_per_benchmark) if self.tasks_per_benchmark else None,
            "extra_facets": dict(self.extra_facets), "effective_n_tasks": self.effective_n_tasks,
            "trials": self.trial_count(), "cost": self.cost()})


def _facet_of(over: str) -> str:
    if over in _FIELD_FACET:
        return _FIELD_FACET[over]
    if over.startswith("n_") and over[2:] and over not in _FIELD_FACET:
        raise ValueError(f"cannot vary {over!r}; use one of {', '.join(_FIELD_FACET)} or a facet name")
    return over


def same_sizes(a: DStudyDesign, b: DStudyDesign) -> bool:
    """True when two designs have the same sizes (tasks, scaffolds, benchmarks, trials, extra facets).

    Prices, object and claim are not sizes: a what-if design differs from the observed one only when
    the sliders moved a size.
    """
    def sizes(d: DStudyDesign) -> dict:
        out = {"n_tasks": d.effective_n_tasks, "n_scaffolds": d.n_scaffolds,
               "n_benchmarks": d.effective_n_benchmarks, "n_replicates": d.n_replicates}
        out.update({f"extra:{k}": v for k, v in dict(d.extra_facets).items()})
        out.update({f"tasks:{k}": v for k, v in dict(d.tasks_per_benchmark or {}).items()})
        return out

    sa, sb = sizes(a), sizes(b)
    return sa.keys() == sb.keys() and all(math.isclose(float(sa[k]), float(sb[k]), rel_tol=1e-9) for k in sa)
