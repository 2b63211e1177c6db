"""Sizing a pairwise decision: how many tasks would put the right agent of a pair ahead.

For a pair A, B of a fitted corpus and a new evaluation of ``n`` fresh tasks (the design's scaffolds per
model and trials per cell), the posterior predictive probability that the new evaluation's success rates
put the truly better one ahead (SPEC sec. 4 in the pair's terms; the sizing question of Miller 2024, sec. 5,
answered from the posterior instead of a guessed effect size):

    P_n = E_s[ P(sign(D_n) = sign(delta_s) | draw s) ]

where ``delta_s`` is the difference of the two's expected success rates in draw ``s``
(:func:`.pair_comparison.expected_rate`) and ``D_n`` the difference of their observed success rates on a
new evaluation.  Within a draw, ``D_n`` is a mean over ``n`` independent tasks given the evaluation's
scaffold effects, so ``D_n ~ N(delta_s, s2_S + s2_T / n)`` (central limit theorem over tasks): ``s2_T`` is
the variance of one task's difference (task-by-object effects, task-by-scaffold effects and trial noise)
and ``s2_S`` the part that more tasks cannot average away (the scaffolds the evaluation draws, and the
object-by-scaffold effects).  Both are estimated per draw by simulating evaluations from the fitted
binomial GLMM (fresh levels of every non-object term, the pair's own effects held); the tests check the
approximation against direct simulation of whole evaluations.  Then

    P_n = E_s[ Phi(|delta_s| / sqrt(s2_S + s2_T / n)) ]

is increasing in ``n`` with the limit ``E_s[Phi(|delta_s| / s_S)]``.  Up to the simulated task count (200)
``P_n`` is read directly off the simulated evaluations instead (ties one half): the normal approximation is
poor for a few tasks with success rates near 0 or 1.  The number of tasks for assurance 0.8, 0.9, 0.95 is
the first that reaches it, ``inf`` where even unlimited tasks do not.

The smallest difference the current design can detect is given twice: the frequentist minimum detectable
effect of the paired test at 80% power and alpha 0.05 (``(z_0.975 + z_0.8) x SE``, the task-clustered SE of
the corpus), and the same from the model's ``s2_S + s2_T / n`` at the corpus's task count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .posterior_summary import to_jsonable
from .reliability import REPLICATE, VarianceComponents, _facet_key, object_facets
from .score_reliability import effect_shape, logistic

__all__ = ["PairSizing", "size_pair_decision", "ASSURANCES"]

ASSURANCES = (0.8, 0.9, 0.95)
_Z80 = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)


@dataclass
class PairSizing:
    """Tasks a new evaluation needs to put the right one of a pair ahead (module docstring).

    Attributes
    ----------
    tasks_for
        Assurance -> tasks (``inf`` when unlimited tasks do not reach it).
    p_now
        ``P_n`` at the corpus's task count.
    p_limit
        ``P_n`` as ``n -> inf`` (the scaffold-level noise left).
    curve_n, curve_p
        ``P_n`` on a grid of task counts (for the curve on screen).
    mde_paired, mde_model
        The smallest success-rate difference detectable at 80% power, alpha 0.05: from the corpus's
        task-clustered SE, and from the model at the corpus's task count.
    cost_per_task
        USD per task of the pair's evaluation (2 objects x scaffolds x trials x mean price), or None.
    """

    observed_tasks: float
    n_scaffolds: float
    n_replicates: float
    tasks_for: dict[float, float]
    p_now: float
    p_limit: float
    curve_n: np.ndarray
    curve_p: np.ndarray
    mde_paired: float | None
    mde_model: float
    cost_per_task: float | None
    n_draws: int
    by_scaffolds: dict[float, dict[float, float]] | None = None

    def cost_for(self, assurance: float) -> float | None:
        n = self.tasks_for[assurance]
        return None if self.cost_per_task is None or not math.isfinite(n) else n * self.cost_per_task

    def to_dict(self) -> dict:
        return to_jsonable({
            "observed_tasks": self.observed_tasks, "n_scaffolds": self.n_scaffolds,
            "n_replicates": self.n_replicates,
            "tasks_for_assurance": {str(k): v for k, v in self.tasks_for.items()},
            "cost_for_assurance": {str(k): self.cost_for(k) for k in self.tasks_for},
            "p_right_ahead_now": self.p_now, "p_right_ahead_limit": self.p_limit,
            "curve": {"n_tasks": self.curve_n, "p_right_ahead": self.curve_p},
            "mde_paired_80": self.mde_paired, "mde_model_80": self.mde_model, "cost_per_task": self.cost_per_task,
            "n_draws": self.n_draws,
            "tasks_for_assurance_by_scaffolds": None if self.by_scaffolds is None else
            {str(k): {str(q): n for q, n in v.items()} for k, v in self.by_scaffolds.items()}})


class _Predictive:
    """Per draw: ``s2_S``, ``s2_T`` and, for ``n`` up to the simulated task count, ``P(right ahead)`` read
    directly off the simulated evaluations (ties count one half): exact where the normal approximation is
    poor (a few tasks, success rates near 0 or 1), the normal approximation beyond."""

    def __init__(self, s2s, s2t, direct, delta):
        self.s2s, self.s2t, self.direct, self.delta = s2s, s2t, direct, delta

    def p(self, n: float) -> float:
        if math.isfinite(n) and 1 <= n <= self.direct.shape[1]:
            return float(min(self.direct[:, int(round(n)) - 1].mean(), 1.0))
        return _p_right(self.delta, self.s2s, self.s2t, n)


def _pair_variances(c: VarianceComponents, obj: str, theta_pair: np.ndarray, mu: np.ndarray, sizes: dict,
                    draws: np.ndarray, rng, delta: np.ndarray, n_sets: int | None = None,
                    n_tasks: int = 200) -> _Predictive:
    """Per draw, ``(s2_S, s2_T)``: scaffold-level and one-task variances of the pair's difference, and the
    direct estimate of ``P(right ahead)`` for up to ``n_tasks`` tasks.  ``n_sets`` simulated evaluations per
    draw (default: 8,000 evaluations in all, at least 20 per draw, so that few draws are not noisy)."""
    n_sets = n_sets or max(20, -(-8000 // len(draws)))
    o = object_facets(obj)
    facets = tuple(sorted(c.facets - o, key=_facet_key))
    size = {f: int(max(1, round(sizes.get(f, 1)))) for f in facets}
    if "task" in size:
        size["task"] = n_tasks
    if "benchmark" in size:
        size["benchmark"] = 1  # a new evaluation of one benchmark's kind: tasks are the sized facet
    reps = int(max(1, round(sizes.get(REPLICATE, 1))))
    task_axis = 1 + facets.index("task") if "task" in facets else None
    s2s, s2t = np.empty(len(draws)), np.empty(len(draws))
    direct = np.zeros((len(draws), n_tasks if task_axis is not None else 1))
    counts = np.arange(1, direct.shape[1] + 1)
    for j, s in enumerate(draws):
        per_set, within = np.empty(n_sets), np.empty(n_sets)
        sign = np.sign(delta[j])
        for k in range(n_sets):
            eta = mu[s] + theta_pair[s].reshape((2,) + (1,) * len(facets))
            for t, fs in zip(c.terms, c.facet_sets):
                if fs <= o:
                    continue  # the pair's own effects are theta
                eta = eta + rng.normal(0.0, math.sqrt(c.draws[t][s]), effect_shape(facets, fs, o, size, 2))
            eta = np.broadcast_to(eta, (2, *[size[f] for f in facets]))
            y = rng.binomial(reps, logistic(eta)) / reps
            d = y[0] - y[1]
            if task_axis is not None:  # one difference per task: averaged over the other facets' levels
                d = np.moveaxis(d, task_axis - 1, 0).reshape(size["task"], -1).mean(axis=1)
            else:
                d = d.reshape(1)
            per_set[k], within[k] = d.mean(), d.var(ddof=1) if d.size > 1 else 0.0
            run = np.sign(np.round(np.cumsum(d) / counts, 12))  # the first n tasks' mean difference, per n
            direct[j] += np.where(run == 0, 0.5, (run == sign).astype(float)) / n_sets
        s2t[j] = within.mean()
        s2s[j] = max(per_set.var(ddof=1) - s2t[j] / n_tasks, 0.0)
    return _Predictive(s2s, s2t, direct, delta)


def _p_right(delta: np.ndarray, s2s: np.ndarray, s2t: np.ndarray, n: float) -> float:
    sd = np.sqrt(s2s + (s2t / n if math.isfinite(n) else 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sd > 0, np.abs(delta) / sd, np.where(delta != 0, np.inf, 0.0))
    return float(np.mean(stats.norm.cdf(z)))


def _tasks_for(pred: _Predictive, q: float, limit: int = 10 ** 6) -> float:
    """Smallest task count whose ``P(right ahead) >= q``: scanned where it is simulated, bisection beyond."""
    m = pred.direct.shape[1]
    scan = pred.direct.mean(axis=0)
    hit = np.flatnonzero(scan >= q)
    if hit.size:
        return float(hit[0] + 1)
    if pred.p(math.inf) < q:
        return math.inf
    lo, hi = m, 2 * m
    while pred.p(hi) < q:
        lo, hi = hi, hi * 2
        if hi > limit:
            return math.inf
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pred.p(mid) >= q:
            hi = mid
        else:
            lo = mid
    return float(hi)


def size_pair_decision(c: VarianceComponents, theta_pair: np.ndarray, delta: np.ndarray, sizes: dict,
                       obj: str = "model", *, paired_se: float | None = None, price_per_trial: float = 0.0,
                       max_draws: int = 200, seed: int = 0) -> PairSizing:
    """How many tasks a new evaluation needs to put the right one of a pair ahead (module docstring).

    Parameters
    ----------
    c
        The fit's variance components with intercept draws.
    theta_pair
        ``(S, 2)`` the pair's latent effects per draw (A, B).
    delta
        ``(S,)`` the difference of their expected success rates per draw.
    sizes
        The corpus's observed design (``task``, ``scaffold``, ``replicate``, ...).
    paired_se
        The corpus's task-clustered SE of the paired difference (for the frequentist MDE).
    price_per_trial
        Mean USD per trial (0: no cost).
    """
    if c.intercept is None:
        raise ValueError("sizing a pair needs the fit's intercept draws")
    draws = np.unique(np.linspace(0, c.n_draws - 1, min(max_draws, c.n_draws)).round().astype(int))
    rng = np.random.default_rng(seed)
    d = np.asarray(delta)[draws]
    pred = _pair_variances(c, obj, np.asarray(theta_pair), c.intercept, sizes, draws, rng, d)
    s2s, s2t = pred.s2s, pred.s2t
    n_obs = float(sizes.get("task", 1))
    grid = np.unique(np.round(np.geomspace(1, max(4 * n_obs, 2000), 40)))
    curve = np.array([pred.p(n) for n in grid])
    o = object_facets(obj)
    has_scaffolds = "scaffold" in c.facets and "scaffold" not in o
    n_a = float(sizes.get("scaffold", 1)) if has_scaffolds else 1.0
    reps = float(sizes.get(REPLICATE, 1))
    per_task = 2 * n_a * reps * price_per_trial if price_per_trial > 0 else None
    out = PairSizing(n_obs, n_a, reps, {q: _tasks_for(pred, q) for q in ASSURANCES},
                     pred.p(n_obs), pred.p(math.inf), grid, curve,
                     None if paired_se is None or not math.isfinite(paired_se) else float(_Z80 * paired_se),
                     float(_Z80 * math.sqrt(np.median(s2s) + np.median(s2t) / n_obs)), per_task, len(draws))
    if has_scaffolds:  # the scaffold-level noise more tasks cannot remove: more scaffolds can
        out.by_scaffolds = {n_a: dict(out.tasks_for)}
        for k in sorted({1.0, 2.0, 4.0, 8.0} - {n_a}):
            v = _pair_variances(c, obj, np.asarray(theta_pair), c.intercept, {**sizes, "scaffold": k}, draws,
                                np.random.default_rng(seed + int(k)), d, n_sets=max(10, -(-2000 // len(draws))))
            out.by_scaffolds[k] = {q: _tasks_for(v, q) for q in ASSURANCES}
        out.by_scaffolds = dict(sorted(out.by_scaffolds.items()))
    return out
