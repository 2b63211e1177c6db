"""Simulate agent-evaluation corpora with known variance components.

Two shapes, both seeded (same seed -> same table):

- :func:`simulate_per_benchmark`: one benchmark, seed 000 Eq. 2 (task, model, scaffold,
  task:model, task:scaffold, model:scaffold), k-of-n trials per cell, partially crossed
  model x scaffold runs, like Terminal-Bench 2.0 (89 tasks, 29 models, 18 scaffolds,
  83 runs, 5 trials).
- :func:`simulate_pooled`: a HAL-like leaderboard, seed 000 Eq. 6, with HAL's sparsity
  (seed 000 Tables 2, 7 and 8): not every model on every benchmark (nine models on all of
  them), scaffolds mostly benchmark-specific with one generalist scaffold shared by eight
  benchmarks and one browser scaffold shared by two, mostly single trials.

The latent truth is drawn exactly from the model: eta = mu + sum_F u_F, u_F ~ N(0, sigma_F^2),
y ~ Binomial(n, logistic(eta)).  The realised random effects are returned too.

Run as a script to print a corpus summary: ``python bench/simulate.py pooled``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

#: Posterior means of seed 000 Table 8 (pooled HAL fit), the truth of the pooled simulation.
HAL_SIGMAS: dict[str, float] = {
    "benchmark": 2.45, "benchmark:task": 2.41, "model": 0.78, "scaffold": 0.79,
    "benchmark:scaffold": 0.69, "benchmark:model": 0.52, "benchmark:model:scaffold": 0.55,
    "benchmark:task:scaffold": 1.03, "benchmark:task:model": 0.88, "model:scaffold": 0.36,
}
HAL_MU = -1.95

#: Terminal-Bench 2.0 per-benchmark posterior means (PERF-NOTES), the truth of the per-benchmark shape.
TB2_SIGMAS: dict[str, float] = {
    "task": 3.0, "model": 1.74, "scaffold": 0.37, "task:model": 1.39, "task:scaffold": 1.11,
    "model:scaffold": 0.46,
}
TB2_MU = 0.0

#: HAL's benchmarks (seed 000 Table 2): (name, models, tasks, model-scaffold pairs) and their
#: scaffolds (Table 7); "hal_generalist" spans eight benchmarks, "browser-use" two.
HAL_BENCHMARKS: tuple[tuple[str, int, int, int, tuple[str, ...]], ...] = (
    ("assistantbench", 18, 33, 30, ("hal_generalist", "browser-use")),
    ("corebench_hard", 34, 45, 56, ("hal_generalist", "coreagent", "claude_code")),
    ("gaia", 21, 165, 34, ("hal_generalist", "hf_open_deep_research")),
    ("online_mind2web", 13, 300, 23, ("browser-use", "seeact")),
    ("scicode", 17, 65, 37, ("hal_generalist", "tool_calling_agent", "scicode_zero")),
    ("scienceagentbench", 19, 102, 25, ("hal_generalist", "sab_selfdebug")),
    ("swebench_verified_mini", 24, 50, 26, ("hal_generalist", "sweagent")),
    ("taubench_airline", 23, 50, 42, ("hal_generalist", "taubench_tool_calling", "taubench_fewshot")),
    ("usaco", 13, 307, 14, ("hal_generalist", "usaco_episodic_semantic")),
)


@dataclass
class SimulatedCorpus:
    """A simulated corpus and the truth it was drawn from."""

    table: pd.DataFrame
    sigmas: dict[str, float]
    mu: float
    effects: dict[str, pd.Series] = field(default_factory=dict)
    description: str = ""

    @property
    def n_trials(self) -> int:
        return int(self.table["trials"].sum())


def _draw_effects(rng, cells: pd.DataFrame, sigmas: dict[str, float]) -> tuple[np.ndarray, dict[str, pd.Series]]:
    eta = np.zeros(len(cells))
    effects = {}
    for name, sigma in sigmas.items():
        cols = name.split(":")
        if "task" in cols and "benchmark" not in cols:
            cols = ["benchmark", *cols]  # tasks are nested in benchmarks
        g = cells.groupby(cols, sort=True, observed=True)
        code = g.ngroup().to_numpy()
        u = rng.normal(0.0, sigma, size=int(code.max()) + 1)
        eta += u[code]
        effects[name] = pd.Series(u, index=pd.MultiIndex.from_frame(g.size().reset_index()[cols]) if len(cols) > 1
                                  else pd.Index(g.size().index, name=cols[0]))
    return eta, effects


def _finish(rng, cells: pd.DataFrame, sigmas, mu, description) -> SimulatedCorpus:
    eta, effects = _draw_effects(rng, cells, sigmas)
    p = 1.0 / (1.0 + np.exp(-(mu + eta)))
    cells = cells.copy()
    cells["successes"] = rng.binomial(cells["trials"].to_numpy(), p).astype("int64")
    cells["trials"] = cells["trials"].astype("int64")
    for c in ("benchmark", "task", "model", "scaffold"):
        cells[c] = cells[c].astype("category")
    return SimulatedCorpus(cells.reset_index(drop=True), dict(sigmas), mu, effects, description)


def _pairs(rng, models: list[str], scaffolds: list[str], n_pairs: int) -> list[tuple[str, str]]:
    """n_pairs distinct (model, scaffold) pairs, every model and every scaffold used at least once."""
    n_pairs = max(n_pairs, len(models), len(scaffolds))
    n_pairs = min(n_pairs, len(models) * len(scaffolds))
    pairs: set[tuple[str, str]] = set()
    order = rng.permutation(len(models))
    for i, m in enumerate(np.asarray(models)[order]):
        pairs.add((str(m), scaffolds[i % len(scaffolds)]))
    for s in scaffolds:
        if not any(p[1] == s for p in pairs):
            pairs.add((str(rng.choice(models)), s))
    free = [(m, s) for m in models for s in scaffolds if (m, s) not in pairs]
    extra = n_pairs - len(pairs)
    if extra > 0:
        pick = rng.choice(len(free), size=extra, replace=False)
        pairs.update(free[i] for i in pick)
    return sorted(pairs)


def simulate_per_benchmark(n_tasks: int = 89, n_models: int = 29, n_scaffolds: int = 18, n_pairs: int = 83,
                           trials_per_cell: int = 5, sigmas: dict[str, float] | None = None,
                           mu: float = TB2_MU, seed: int = 0, benchmark: str = "sim-bench") -> SimulatedCorpus:
    """One benchmark in the shape of Terminal-Bench 2.0 (seed 000 Eq. 2).

    Every (model, scaffold) run attempts every task ``trials_per_cell`` times.
    """
    rng = np.random.default_rng(seed)
    sigmas = dict(TB2_SIGMAS if sigmas is None else sigmas)
    models = [f"m{i:02d}" for i in range(n_models)]
    scaffolds = [f"s{i:02d}" for i in range(n_scaffolds)]
    pairs = _pairs(rng, models, scaffolds, n_pairs)
    tasks = [f"t{i:03d}" for i in range(n_tasks)]
    rows = [(benchmark, t, m, s) for (m, s) in pairs for t in tasks]
    cells = pd.DataFrame(rows, columns=["benchmark", "task", "model", "scaffold"])
    cells["trials"] = trials_per_cell
    desc = (f"per-benchmark: {n_tasks} tasks, {n_models} models, {n_scaffolds} scaffolds, {len(pairs)} runs, "
            f"{trials_per_cell} trials per cell")
    return _finish(rng, cells, sigmas, mu, desc)


def simulate_pooled(sigmas: dict[str, float] | None = None, mu: float = HAL_MU, seed: int = 0,
                    n_models: int = 54, n_everywhere: int = 9, model_scale: float = 1.45, pair_scale: float = 1.45,
                    repeat_fraction: float = 0.012, benchmarks=HAL_BENCHMARKS) -> SimulatedCorpus:
    """A HAL-scale pooled leaderboard (seed 000 Eq. 6) with HAL's sparsity.

    Parameters
    ----------
    sigmas, mu
        The truth; seed 000 Table 8 by default.
    n_models, n_everywhere
        54 models, 9 of which run on every benchmark (seed 000 App. E); the others run on a
        random subset so that each benchmark has its Table 2 number of models.
    model_scale, pair_scale
        Multiply Table 2's models and model-scaffold pairs per benchmark (capped at the
        possible).  HAL itself has 29,923 trials; the default 1.45 gives about 41,000 binomial
        cells and 32,000 latent values, the size PERF-NOTES measured.
    repeat_fraction
        Fraction of cells that hold a second trial (repeats are rare in HAL).
    """
    rng = np.random.default_rng(seed)
    sigmas = dict(HAL_SIGMAS if sigmas is None else sigmas)
    models = [f"model{i:02d}" for i in range(n_models)]
    everywhere, others = models[:n_everywhere], models[n_everywhere:]
    # distribute the remaining benchmark slots over the other models, each at least once
    per_b = {b[0]: min(n_models, max(n_everywhere, int(round(b[1] * model_scale)))) for b in benchmarks}
    slots = {b: k - n_everywhere for b, k in per_b.items()}
    on: dict[str, list[str]] = {b[0]: list(everywhere) for b in benchmarks}
    names = [b[0] for b in benchmarks]
    for m in rng.permutation(others):
        open_b = [b for b in names if slots[b] > 0]
        b = open_b[int(rng.integers(len(open_b)))] if open_b else names[int(rng.integers(len(names)))]
        on[b].append(str(m))
        slots[b] -= 1
    for b in names:
        while slots[b] > 0:
            cand = [m for m in others if m not in on[b]]
            m = cand[int(rng.integers(len(cand)))]
            on[b].append(m)
            slots[b] -= 1
    rows = []
    for name, _, n_tasks, n_pairs, scaffolds in benchmarks:
        pairs = _pairs(rng, on[name], list(scaffolds), int(round(n_pairs * pair_scale)))
        tasks = [f"{name}/t{i:03d}" for i in range(n_tasks)]
        rows.extend((name, t, m, s) for (m, s) in pairs for t in tasks)
    cells = pd.DataFrame(rows, columns=["benchmark", "task", "model", "scaffold"])
    cells["trials"] = 1 + (rng.random(len(cells)) < repeat_fraction)
    desc = (f"pooled HAL-like: {len(benchmarks)} benchmarks, {n_models} models, "
            f"{len({s for b in benchmarks for s in b[4]})} scaffolds, {cells['task'].nunique()} tasks, "
            f"{len(cells)} cells, {int(cells['trials'].sum())} trials")
    return _finish(rng, cells, sigmas, mu, desc)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shape", choices=["pooled", "per-benchmark"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write the table as CSV here")
    a = ap.parse_args(argv)
    sim = simulate_pooled(seed=a.seed) if a.shape == "pooled" else simulate_per_benchmark(seed=a.seed)
    print(sim.description)
    t = sim.table
    print(t.groupby("benchmark", observed=True).agg(models=("model", "nunique"), tasks=("task", "nunique"),
                                                     scaffolds=("scaffold", "nunique"), cells=("trials", "size")))
    if a.out:
        t.to_csv(a.out, index=False)


if __name__ == "__main__":
    main()
