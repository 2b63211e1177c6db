"""Small synthetic corpora in the shapes real leaderboards have, for the DDR sheet's shape matrix.

A leaderboard file can be shaped in many ways the sheet's layout must survive:
one benchmark or several; one scaffold for every model, one scaffold per model,
or scaffolds crossed with models; 2, 30 or 150 models (long label lists);
single binary responses, k of n trials per cell, or a number of trials that
varies from cell to cell; tasks nobody solves and tasks everybody solves;
with or without cost, model release dates, task metadata and error
categories; plain ids, or long ids with unicode and markup characters.  The
full cross product has thousands of shapes, so :data:`SHAPES` samples it: every
level of every dimension appears in at least two shapes, in varied company,
and the first shape is the public single-benchmark py-irt leaderboard on
which ``ddr report`` used to end in a traceback (one benchmark, 89 tasks,
112 subjects whose ids name no scaffold, one binary response each).

:func:`write_corpus` writes a shape's file (canonical CSV, or py-irt JSON lines).  The tables
are seeded: the same shape gives the same file.

Loaded by ``tests/test_sheet_shapes.py`` through :mod:`importlib` (pytest runs
with ``--import-mode=importlib``, so ``tests/`` is not on ``sys.path``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

#: The optional columns a shape may carry.
EXTRAS = ("cost", "dates", "metadata", "errors")


@dataclass(frozen=True)
class Shape:
    """One shape of leaderboard.

    Attributes
    ----------
    name
        Short id, used as the test id and the file stem.
    benchmarks
        Number of benchmarks (1, or 3 for a multi-benchmark leaderboard).
    scaffolds
        ``"one"`` (every model under one scaffold, or none named), ``"per-model"``
        (each model under its own scaffold) or ``"crossed"`` (each model under
        two or three of three shared scaffolds).
    models
        Number of models.
    tasks
        Tasks per benchmark.
    responses
        ``"binary"`` (one 0/1 response per task and agent), ``"k-of-n"``
        (5 trials per cell) or ``"varying"`` (1 to 6 trials, cell by cell).
    difficulty
        ``"mixed"`` (success rates spread out) or ``"extreme"`` (a third of the
        tasks never solved, a third always solved, and one model that solves
        none of the others).
    extras
        The optional columns present: a subset of :data:`EXTRAS`.
    names
        ``"plain"`` or ``"long-unicode"`` (ids of 70-100 characters with
        accents, CJK, ``&``, ``<`` and ``>``).
    format
        ``"csv"`` (canonical columns) or ``"py-irt"`` (JSON lines; the subject
        id is the model and names no scaffold).
    """

    name: str
    benchmarks: int = 1
    scaffolds: str = "one"
    models: int = 30
    tasks: int = 10
    responses: str = "binary"
    difficulty: str = "mixed"
    extras: frozenset = field(default_factory=frozenset)
    names: str = "plain"
    format: str = "csv"

    def __post_init__(self):
        assert self.scaffolds in ("one", "per-model", "crossed"), self.scaffolds
        assert self.responses in ("binary", "k-of-n", "varying"), self.responses
        assert self.difficulty in ("mixed", "extreme"), self.difficulty
        assert set(self.extras) <= set(EXTRAS), self.extras
        assert self.names in ("plain", "long-unicode"), self.names
        assert self.format in ("csv", "py-irt"), self.format
        assert self.format == "csv" or (self.responses == "binary" and self.scaffolds == "one"
                                        and self.benchmarks == 1 and not self.extras)


def _x(*names: str) -> frozenset:
    return frozenset(names)


#: The matrix: a sample of the shape space covering every level of every dimension (module note).
SHAPES: tuple[Shape, ...] = (
    Shape("pyirt-leaderboard-112", models=112, tasks=89, format="py-irt"),
    Shape("one-bench-2-models-extreme", models=2, difficulty="extreme"),
    Shape("one-bench-per-model-30-kofn-unicode", scaffolds="per-model", responses="k-of-n",
          extras=_x("cost", "dates"), names="long-unicode"),
    Shape("one-bench-crossed-150-varying-extreme", scaffolds="crossed", models=150, tasks=6, responses="varying",
          difficulty="extreme", extras=_x("metadata", "errors")),
    Shape("one-bench-crossed-2-kofn-unicode", scaffolds="crossed", models=2, responses="k-of-n",
          names="long-unicode"),
    Shape("one-bench-one-30-varying-dates-meta", responses="varying", difficulty="extreme",
          extras=_x("dates", "metadata")),
    Shape("three-bench-one-150-kofn-unicode", benchmarks=3, models=150, tasks=5, responses="k-of-n",
          extras=_x("cost", "metadata"), names="long-unicode"),
    Shape("three-bench-per-model-2-varying", benchmarks=3, scaffolds="per-model", models=2, responses="varying",
          extras=_x("errors", "dates")),
    Shape("three-bench-crossed-30-everything-unicode", benchmarks=3, scaffolds="crossed", tasks=6,
          difficulty="extreme", extras=_x(*EXTRAS), names="long-unicode"),
    Shape("three-bench-per-model-150-extreme-cost", benchmarks=3, scaffolds="per-model", models=150, tasks=5,
          difficulty="extreme", extras=_x("cost")),
    Shape("three-bench-crossed-2-cost-errors", benchmarks=3, scaffolds="crossed", models=2,
          extras=_x("cost", "errors")),
    Shape("one-bench-per-model-150-everything-unicode", scaffolds="per-model", models=150, tasks=6,
          extras=_x(*EXTRAS), names="long-unicode"),
)


def _label(kind: str, i: int, names: str) -> str:
    if names == "plain":
        return f"{kind}-{i:03d}"
    # Long ids with accents, CJK, markup characters and a space: names a leaderboard really prints.
    return (f"Ünïcødé {kind} «模型 {i:03d}» R&D <v2> " + "très-long-identifiant-" * 3)[:70 + (i * 7) % 31]


def corpus_table(shape: Shape, seed: int = 0) -> pd.DataFrame:
    """The canonical table of ``shape``: one row per (benchmark, task, model, scaffold) cell.

    Success probabilities come from a model ability plus a task easiness on the
    logit scale; ``difficulty="extreme"`` pins a third of the tasks at 0 and a
    third at 1 and makes model 0 fail the rest.
    """
    rng = np.random.default_rng(seed)
    models = [_label("model", i, shape.names) for i in range(shape.models)]
    benches = [_label("bench", b, shape.names) if shape.benchmarks > 1 else
               ("leaderboard" if shape.names == "plain" else _label("bench", 0, shape.names))
               for b in range(shape.benchmarks)]
    if shape.scaffolds == "one":
        pairs = [(m, "default") for m in models]
    elif shape.scaffolds == "per-model":
        pairs = [(m, _label("scaffold", i, shape.names)) for i, m in enumerate(models)]
    else:  # crossed: three shared scaffolds, each model under two or all three of them
        scaff = [_label("scaffold", k, shape.names) for k in range(3)]
        pairs = [(m, s) for i, m in enumerate(models) for k, s in enumerate(scaff) if k != i % 4]
    ability = dict(zip(models, rng.normal(0.0, 1.2, shape.models)))
    rows = []
    for b in benches:
        tasks = [_label("task", t, shape.names) + f"/{b[:3]}" for t in range(shape.tasks)]
        ease = rng.normal(0.0, 1.5, shape.tasks)
        for t, e in zip(tasks, ease):
            for m, s in pairs:
                p = 1.0 / (1.0 + np.exp(-(ability[m] + e)))
                if shape.difficulty == "extreme":
                    k = tasks.index(t) % 3
                    p = 0.0 if k == 0 else 1.0 if k == 1 else 0.0 if m == models[0] else p
                n = {"binary": 1, "k-of-n": 5, "varying": int(rng.integers(1, 7))}[shape.responses]
                rows.append({"benchmark": b, "task": t, "model": m, "scaffold": s, "successes": int(rng.binomial(n, p)),
                             "trials": n})
    table = pd.DataFrame(rows)
    if "cost" in shape.extras:
        price = dict(zip(models, np.exp(rng.normal(np.log(0.05), 0.8, shape.models))))
        table["cost"] = table["trials"] * table["model"].map(price)
    if "dates" in shape.extras:
        days = dict(zip(models, rng.integers(0, 700, shape.models)))
        table["release_date"] = [str(np.datetime64("2024-01-01") + int(days[m])) for m in table["model"]]
    if "metadata" in shape.extras:
        tasks = sorted(table["task"].unique())
        minutes = dict(zip(tasks, np.round(np.exp(rng.normal(3.0, 1.0, len(tasks))), 1)))
        table["human_minutes"] = table["task"].map(minutes)
        table["task_group"] = ["hard" if minutes[t] > 20 else "easy" for t in table["task"]]
    if "errors" in shape.extras:
        cats = ["planning", "tool use", "timeout", "verification"]
        fails = table["successes"] < table["trials"]
        table["error_category"] = [cats[i % 4] if f else "" for i, f in enumerate(fails)]
    return table


def write_corpus(shape: Shape, folder: Path, seed: int = 0) -> Path:
    """Write ``shape``'s corpus into ``folder`` and return its path (the file's extension names its format)."""
    table = corpus_table(shape, seed)
    if shape.format == "py-irt":
        path = folder / f"{shape.name}.jsonl"
        with path.open("w", encoding="utf-8") as f:
            for model, g in table.groupby("model", sort=False):
                f.write(json.dumps({"subject_id": model,
                                    "responses": dict(zip(g["task"], g["successes"].astype(int).tolist()))}) + "\n")
        return path
    path = folder / f"{shape.name}.csv"
    table.to_csv(path, index=False, encoding="utf-8")
    return path
