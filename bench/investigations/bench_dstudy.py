"""Benchmark: one slider move of the D-study view on 4,000 posterior draws.

A move recomputes everything the view shows (:meth:`DStudyModel.view`): three
curves (over tasks, scaffolds and benchmarks, 100 grid points each) with
median and 68%/95% HDI bands, the asymptotes, the observed design, P(target
met) per grid point, the readouts (Erho2, Phi, SNR, ceiling, RPD) and the
posterior distribution of the required number of tasks.

Target (issue brief): at most 10 ms per move.  The reference measured in the
same run is the straightforward code: a loop over grid points that evaluates
the general D-study rule (:func:`reliability.generalizability`) on every draw
and summarises with ``np.percentile``, plus the same readouts by the general
functions and the required n by searching n = 1, 2, ... per grid.

Run:  python bench/investigations/bench_dstudy.py [--draws 4000] [--moves 200] [--band-draws 1000]
"""

from __future__ import annotations

import sys as _sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

#: bench/ (simulate, _child, _reference, bench_sampler, bench_recovery) and this folder, importable by name.
_BENCH = _Path(__file__).resolve().parents[1]
_sys.path[:0] = [p for p in (str(_BENCH), str(_BENCH / "investigations")) if p not in _sys.path]

import argparse
import time

import numpy as np

from ddr_explorer.core import reliability as rel
from ddr_explorer.core.dstudy import DStudyDesign, DStudyModel

#: Posterior means of seed 000 Table 8 (standard deviations on the latent scale).
TABLE8_SD = {"scaffold": .79, "benchmark": 2.45, "benchmark:scaffold": .69, "benchmark:model": .52,
             "benchmark:model:scaffold": .55, "benchmark:task": 2.41, "benchmark:task:scaffold": 1.03,
             "benchmark:task:model": .88, "model": .78, "model:scaffold": .36}


def synthetic_posterior(n_draws: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Draws of sigma^2 scattered log-normally around Table 8's means."""
    rng = np.random.default_rng(seed)
    return {t: (sd * np.exp(rng.normal(0, 0.3, n_draws))) ** 2 for t, sd in TABLE8_SD.items()}


GRIDS = {"n_tasks": np.unique(np.round(np.geomspace(1, 2000, 130)))[:100].astype(float),
         "n_scaffolds": np.arange(1, 101, dtype=float),
         "n_benchmarks": np.arange(1, 101, dtype=float)}


def naive_move(comps: rel.VarianceComponents, design: DStudyDesign, target: float) -> None:
    """The reference: per-grid-point evaluation of the general rule with np.percentile."""
    q = [2.5, 16, 50, 84, 97.5]
    facet = {"n_tasks": "task", "n_scaffolds": "scaffold", "n_benchmarks": "benchmark"}
    for over, grid in GRIDS.items():
        for n in grid:
            sizes = design.sizes() | {facet[over]: n}
            y = rel.generalizability(comps, "model", sizes)
            np.percentile(y, q)
            np.mean(y >= target)
        np.percentile(rel.generalizability(comps, "model", design.sizes() | {facet[over]: np.inf}), q)
    for y in (rel.generalizability(comps, "model", design.sizes()), rel.dependability(comps, "model", design.sizes()),
              rel.signal_to_noise(comps, "model", design.sizes()), rel.task_only_ceiling(comps, "model", design.sizes())):
        np.percentile(y, q)
    need = np.full(comps.n_draws, np.inf)
    for n in GRIDS["n_tasks"]:  # required n by search over the task grid
        ok = rel.generalizability(comps, "model", design.sizes() | {"task": n}) >= target
        need = np.where(np.isinf(need) & ok, n, need)
    np.percentile(need[np.isfinite(need)], q) if np.isfinite(need).any() else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=4000)
    ap.add_argument("--moves", type=int, default=200)
    ap.add_argument("--band-draws", type=int, default=1000, help="draws behind the curve bands (0: all)")
    args = ap.parse_args()
    comps = rel.VarianceComponents.from_mapping(synthetic_posterior(args.draws), source="synthetic Table 8")
    band = None if args.band_draws == 0 else args.band_draws

    t0 = time.perf_counter()
    model = DStudyModel(comps, band_draws=band)
    prep_ms = (time.perf_counter() - t0) * 1e3
    rng = np.random.default_rng(1)
    designs = [DStudyDesign(n_tasks=float(rng.integers(1, 300)), n_scaffolds=float(rng.integers(1, 6)),
                      n_benchmarks=float(rng.integers(1, 12)), price_per_trial=0.4, n_models=20)
               for _ in range(args.moves)]
    model.view(designs[0], GRIDS)  # warm-up
    times = []
    for d in designs:
        t = time.perf_counter()
        view = model.view(d, GRIDS)
        times.append((time.perf_counter() - t) * 1e3)
    times = np.array(times)
    n_points = sum(len(c.grid) for c in view.curves.values())

    naive = []
    for d in designs[: max(3, args.moves // 40)]:
        t = time.perf_counter()
        naive_move(comps, d, 0.85)
        naive.append((time.perf_counter() - t) * 1e3)
    naive_med = float(np.median(naive))

    # For transparency: the same move with every draw behind the bands (no thinning).
    full = DStudyModel(comps, band_draws=None)
    full.view(designs[0], GRIDS)
    full_times = []
    for d in designs[: max(10, args.moves // 10)]:
        t = time.perf_counter()
        full.view(d, GRIDS)
        full_times.append((time.perf_counter() - t) * 1e3)

    med, p95 = float(np.median(times)), float(np.percentile(times, 95))
    print(f"draws: {args.draws}  curve-band draws: {model.band_draws}  curves: {len(view.curves)}  "
          f"grid points: {n_points}  moves: {args.moves}")
    print(f"prepare (once per fit): {prep_ms:.2f} ms")
    print(f"one slider move: median {med:.2f} ms, p95 {p95:.2f} ms  (target <= 10 ms: "
          f"{'met' if p95 <= 10 else 'NOT met'})")
    print(f"same move with all {args.draws} draws behind the bands: median {np.median(full_times):.2f} ms, "
          f"p95 {np.percentile(full_times, 95):.2f} ms")
    print(f"naive reference (per-grid-point loop + np.percentile): median {naive_med:.1f} ms "
          f"over {len(naive)} moves; ratio naive / fast = {naive_med / med:.0f}x")


if __name__ == "__main__":
    main()
