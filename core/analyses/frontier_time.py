"""The frontier over time: the best result on each task among models released by each quarter.

Seed 002 (Krsteski et al. 2026) sec. 5.1 (Figure 2f): "For each quarter, we consider only agents whose models had been
released by then.  For each task, we calculate each eligible agent's fraction of successful trials
and retain the highest value.  The benchmark frontier is the mean of these task values, and the
group frontier is the mean of its benchmark frontiers."  Because the best agent is chosen per task,
the frontier need not be the score of any single agent.

This is a descriptive statistic of the observed success fractions, as in the seed; it has no
posterior.  Its uncertainty over the sample of tasks is given by a bootstrap of tasks within each
benchmark (95% percentile interval).  The maximum of observed fractions is biased upwards when
cells have few trials and many agents compete: say so when reading small cells.

An agent is a model-scaffold pair; its model's ``release_date`` decides the first quarter it counts
in.  When any model of the corpus has no release date the analysis names those models and stops
(:class:`MissingReleaseDates`): a frontier that silently left them out, or counted them from the
start, would misstate the date of progress.  A task that no eligible agent ran yet has no value in
that quarter; the benchmark frontier is the mean over the tasks that have one, and the coverage is
reported next to it.

Benchmark groups: ``groups`` maps benchmark -> group; by default the corpus's ``task_group`` when it
is constant within each benchmark, else each benchmark is its own group (a mean over benchmarks
that enter the corpus at different quarters would move with the mix, not with progress).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..corpus import schema
from ..references import cite

__all__ = ["MissingReleaseDates", "FrontierOverTime", "frontier_over_time", "format_frontier"]


class MissingReleaseDates(ValueError):
    """Some models have no release date: the frontier over time cannot place them and stops.

    Attributes
    ----------
    models
        The models without a date.
    """

    def __init__(self, models, n_models: int, has_column: bool):
        self.models = sorted(map(str, models))
        shown = ", ".join(self.models[:12]) + (f" and {len(self.models) - 12} more" if len(self.models) > 12 else "")
        where = ("the corpus has no release_date column" if not has_column else
                 f"{len(self.models)} of {n_models} models have no release date: {shown}")
        super().__init__(f"frontier over time: {where}. Every model needs its release date ({cite('krsteski2026', 'sec. 5.1')} counts "
                         "an agent from its model's release); add a release_date column to the corpus or join one "
                         "with --release-dates FILE (CSV model,release_date; JSON {model: date}; BRIDGE's "
                         "model_run_mapping.json)")


@dataclass
class FrontierOverTime:
    """The frontier per quarter, per benchmark and per benchmark group (seed 002 sec. 5.1).

    Attributes
    ----------
    quarters
        ``"2024Q3"`` labels from the first release quarter to the last, in order.
    quarter_end
        The last day of each quarter (ISO date).
    n_agents
        ``(Q,)`` eligible agents (model-scaffold pairs) per quarter.
    benchmarks, groups
        Benchmark names; group name per benchmark (``group_of``) and the group names.
    benchmark_frontier, benchmark_lower, benchmark_upper
        ``(B, Q)`` mean over tasks of the best eligible success fraction, and its 95% task-bootstrap
        interval (NaN before any eligible agent ran a task of the benchmark).
    benchmark_coverage
        ``(B, Q)`` share of the benchmark's tasks that have a value.
    group_frontier, group_lower, group_upper
        ``(G, Q)`` mean of the group's benchmark frontiers (over those with a value), with the interval
        from the same bootstrap draws.
    n_tasks
        ``(B,)`` tasks per benchmark.
    best_agent
        Per benchmark, the agent that holds the most task maxima in the last quarter (ties: first).
    slice
        The slice of tasks the corpus was cut to ("" when none).
    """

    quarters: list[str]
    quarter_end: list[str]
    n_agents: np.ndarray
    benchmarks: list[str]
    group_of: dict[str, str]
    groups: list[str]
    benchmark_frontier: np.ndarray
    benchmark_lower: np.ndarray
    benchmark_upper: np.ndarray
    benchmark_coverage: np.ndarray
    group_frontier: np.ndarray
    group_lower: np.ndarray
    group_upper: np.ndarray
    n_tasks: np.ndarray
    best_agent: dict[str, str] = field(default_factory=dict)
    n_boot: int = 0
    slice: str = ""
    left_out_models: list[str] = field(default_factory=list)

    def net_growth(self, group: str) -> float | None:
        """Last minus first observed frontier of a group (seed 002: programming +0.63)."""
        row = self.group_frontier[self.groups.index(group)]
        ok = np.flatnonzero(np.isfinite(row))
        return None if ok.size == 0 else float(row[ok[-1]] - row[ok[0]])

    def to_dict(self) -> dict:
        def arr(a):
            return [[None if not np.isfinite(v) else float(v) for v in row] for row in np.asarray(a, dtype=float)]

        return {"quarters": list(self.quarters), "quarter_end": list(self.quarter_end),
                "left_out_models_without_release_date": list(self.left_out_models),
                "n_agents": [int(n) for n in self.n_agents], "n_boot": int(self.n_boot), "slice": self.slice,
                "benchmarks": [{"benchmark": b, "group": self.group_of[b], "n_tasks": int(self.n_tasks[i]),
                                "frontier": arr(self.benchmark_frontier)[i], "lower95": arr(self.benchmark_lower)[i],
                                "upper95": arr(self.benchmark_upper)[i],
                                "coverage": arr(self.benchmark_coverage)[i],
                                "best_agent_last_quarter": self.best_agent.get(b)}
                               for i, b in enumerate(self.benchmarks)],
                "groups": [{"group": g, "frontier": arr(self.group_frontier)[k], "lower95": arr(self.group_lower)[k],
                            "upper95": arr(self.group_upper)[k], "net_growth": self.net_growth(g)}
                           for k, g in enumerate(self.groups)]}


def _quarter_label(p: pd.Period) -> str:
    return f"{p.year}Q{p.quarter}"


def frontier_over_time(corpus, groups: dict[str, str] | None = None, n_boot: int = 1000, seed: int = 0,
                       cancel=None, undated: str = "stop") -> FrontierOverTime:
    """Frontier per release quarter (seed 002 sec. 5.1).

    Parameters
    ----------
    corpus
        A validated corpus with a ``release_date`` for every model.
    groups
        Benchmark -> group (default: ``task_group`` when constant within each benchmark, else each benchmark).
    n_boot
        Task-bootstrap replicates for the 95% intervals (0: none).
    seed
        Seed of the bootstrap.
    cancel
        Polled between quarters; True raises :class:`~.model.posterior.FitCancelled`.
    undated
        ``"stop"`` (default): models without a release date stop the analysis; ``"drop"``: their records are
        left out, and the result names them (``left_out_models``) so that no reader takes the frontier for
        the whole corpus.

    Raises
    ------
    MissingReleaseDates
        When the corpus has no ``release_date`` column or some model has none.
    """
    t = corpus.table
    has = "release_date" in t.columns
    models = t["model"].astype(str)
    if not has:
        raise MissingReleaseDates(sorted(models.unique()), int(models.nunique()), False)
    dates = pd.to_datetime(t["release_date"], errors="coerce")
    per_model = pd.DataFrame({"model": models, "date": dates}).groupby("model")["date"].min()
    missing = per_model.index[per_model.isna()].tolist()
    if missing and (undated != "drop" or len(missing) == len(per_model)):
        raise MissingReleaseDates(missing, len(per_model), True)
    if missing:  # the user asked for it: the frontier of the dated models only, said so in the result
        keep = ~models.isin(missing).to_numpy()
        t, models, dates = t.loc[keep], models[keep], dates[keep]
        per_model = per_model.dropna()

    # one row per (benchmark, task, agent): the agent's success fraction on the task
    agent = models + " / " + t["scaffold"].astype(str)
    cells = pd.DataFrame({"benchmark": t["benchmark"].astype(str), "task": t["task"].astype(str), "agent": agent,
                          "s": t[schema.SUCCESSES].to_numpy(float), "n": t[schema.TRIALS].to_numpy(float),
                          "date": models.map(per_model).to_numpy()})
    cells = cells.groupby(["benchmark", "task", "agent"], sort=True).agg(s=("s", "sum"), n=("n", "sum"),
                                                                          date=("date", "min")).reset_index()
    cells = cells[cells["n"] > 0]
    cells["frac"] = cells["s"] / cells["n"]
    first = per_model.min().to_period("Q")
    last = per_model.max().to_period("Q")
    periods = pd.period_range(first, last, freq="Q")
    q_end = [p.end_time.normalize() for p in periods]
    benchmarks = sorted(cells["benchmark"].unique())
    if groups is None:
        groups = _default_groups(t, benchmarks)
    group_of = {b: str(groups.get(b, "other")) for b in benchmarks}
    group_names = sorted(set(group_of.values()))
    B, Q, G = len(benchmarks), len(periods), len(group_names)
    front = np.full((B, Q), np.nan)
    cover = np.zeros((B, Q))
    n_tasks = np.zeros(B, dtype=int)
    boot = np.full((B, Q, max(n_boot, 0)), np.nan)
    rng = np.random.default_rng(seed)
    best_agent: dict[str, str] = {}
    n_agents = np.array([int(cells.loc[cells["date"] <= e, "agent"].nunique()) for e in q_end])
    for i, b in enumerate(benchmarks):
        cb = cells[cells["benchmark"] == b]
        tasks = sorted(cb["task"].unique())
        n_tasks[i] = len(tasks)
        tix = {k: j for j, k in enumerate(tasks)}
        # bootstrap: the same resampled task sets in every quarter, so the series' intervals are coherent
        idx = rng.integers(0, len(tasks), size=(n_boot, len(tasks))) if n_boot > 0 else None
        for q, end in enumerate(q_end):
            if cancel is not None and cancel():
                from ..model.posterior import FitCancelled

                raise FitCancelled("frontier over time cancelled by the user")
            el = cb[cb["date"] <= end]
            if el.empty:
                continue
            best = el.groupby("task")["frac"].max()
            vals = np.full(len(tasks), np.nan)
            vals[[tix[k] for k in best.index]] = best.to_numpy()
            ok = np.isfinite(vals)
            cover[i, q] = ok.mean()
            front[i, q] = float(np.nanmean(vals))
            if idx is not None:
                with np.errstate(invalid="ignore"):
                    sample = vals[idx]
                    cnt = np.isfinite(sample).sum(axis=1)
                    boot[i, q] = np.where(cnt > 0, np.nansum(sample, axis=1) / np.maximum(cnt, 1), np.nan)
        last_el = cb[cb["date"] <= q_end[-1]]
        if not last_el.empty:
            top = last_el.loc[last_el.groupby("task")["frac"].idxmax(), "agent"]
            best_agent[b] = str(top.value_counts().index[0])
    lo, hi = _interval(boot, n_boot)
    gf = np.full((G, Q), np.nan)
    glo, ghi = np.full((G, Q), np.nan), np.full((G, Q), np.nan)
    for k, g in enumerate(group_names):
        rows = [i for i, b in enumerate(benchmarks) if group_of[b] == g]
        with np.errstate(invalid="ignore"):
            gf[k] = _nanmean_or_nan(front[rows], axis=0)
            if n_boot > 0:
                glo[k], ghi[k] = _interval(_nanmean_or_nan(boot[rows], axis=0), n_boot)  # (Q, n_boot) -> (Q,)
    return FrontierOverTime(quarters=[_quarter_label(p) for p in periods],
                            quarter_end=[e.strftime("%Y-%m-%d") for e in q_end], n_agents=n_agents,
                            benchmarks=benchmarks, group_of=group_of, groups=group_names, benchmark_frontier=front,
                            benchmark_lower=lo, benchmark_upper=hi, benchmark_coverage=cover, group_frontier=gf,
                            group_lower=glo, group_upper=ghi, n_tasks=n_tasks, best_agent=best_agent, n_boot=n_boot,
                            slice=str(corpus.provenance.get("slice") or ""), left_out_models=sorted(missing))


def _nanmean_or_nan(a: np.ndarray, axis: int) -> np.ndarray:
    cnt = np.isfinite(a).sum(axis=axis)
    return np.where(cnt > 0, np.nansum(a, axis=axis) / np.maximum(cnt, 1), np.nan)


def _interval(boot: np.ndarray, n_boot: int) -> tuple[np.ndarray, np.ndarray]:
    shape = boot.shape[:-1]
    if n_boot <= 0:
        return np.full(shape, np.nan), np.full(shape, np.nan)
    lo, hi = np.full(shape, np.nan), np.full(shape, np.nan)
    ok = np.isfinite(boot).all(axis=-1)
    if ok.any():
        lo[ok] = np.percentile(boot[ok], 2.5, axis=-1)
        hi[ok] = np.percentile(boot[ok], 97.5, axis=-1)
    return lo, hi


def _default_groups(t: pd.DataFrame, benchmarks) -> dict[str, str]:
    if "task_group" in t.columns and t["task_group"].notna().all():
        per = t.groupby(t["benchmark"].astype(str))["task_group"].nunique()
        if (per <= 1).all():
            g = t.groupby(t["benchmark"].astype(str))["task_group"].first()
            return {b: str(g[b]) for b in benchmarks}
    return {b: b for b in benchmarks}  # no grouping known: each benchmark its own group


def format_frontier(d: dict) -> str:
    """Plain text of :meth:`FrontierOverTime.to_dict` (or of the stop record)."""
    if "stopped" in d:
        return f"Frontier over time: stopped - {d['stopped']}"
    lines = [f"Frontier over time ({cite('krsteski2026', 'sec. 5.1')}): best eligible agent's success fraction per task, mean over "
             f"tasks; 95% intervals: task bootstrap ({d['n_boot']})" + (f"; slice {d['slice']}" if d.get("slice") else "")]
    left = d.get("left_out_models_without_release_date") or []
    if left:
        lines.append(f"  LEFT OUT: {len(left)} models without a release date ({', '.join(left[:8])}"
                     + (f" and {len(left) - 8} more" if len(left) > 8 else "") + "); the frontier is of the dated ones")
    qs = d["quarters"]
    lines.append(f"  {'quarter':<10}{'agents':>7}  " + "  ".join(f"{g['group'][:18]:>18}" for g in d["groups"]))
    for q, label in enumerate(qs):
        cells = []
        for g in d["groups"]:
            v, lo, hi = g["frontier"][q], g["lower95"][q], g["upper95"][q]
            cells.append(f"{'-':>18}" if v is None else
                         f"{v:.3f}" + (f" [{lo:.2f}, {hi:.2f}]" if lo is not None else "").rjust(0))
        lines.append(f"  {label:<10}{d['n_agents'][q]:>7}  " + "  ".join(f"{c:>18}" for c in cells))
    for b in d["benchmarks"]:
        last = next((v for v in reversed(b["frontier"]) if v is not None), None)
        lines.append(f"  {b['benchmark']}: {b['n_tasks']} tasks, last frontier "
                     + ("n/a" if last is None else f"{last:.3f}")
                     + (f", most task maxima held by {b['best_agent_last_quarter']}" if b.get("best_agent_last_quarter")
                        else ""))
    for g in d["groups"]:
        if g["net_growth"] is not None:
            lines.append(f"  {g['group']}: net growth over the window {g['net_growth']:+.3f}")
    return "\n".join(lines)
