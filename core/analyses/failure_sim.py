"""A simulated failure-mode corpus with known parameters (seed 003 (DDR paper 2026) Eq. 1 plus a per-category a x t term).

SIMULATED DATA, not measurements of any agent.  It exists so the failure-mode path
(:mod:`.failure_modes`) runs end to end and can be tested against known answers; the demo file
``resources/demo/failure-modes-SIMULATED.csv`` is :func:`simulate_failure_table` with
:data:`DEMO` and seed 2026 (``tools/make_failure_demo.py`` writes it).

The generating model, for agent ``a`` (model x scaffold), task ``t``, step ``s``, category ``e``
and trace (trial) ``r``, on the logit scale::

    logit P(Y = 1) = mu + b_e + u_a + u_t + u_s + u_at + u_as + u_ts + u_ae + u_te + u_se + w_ate,
    w_ate ~ N(0, sd_at_e^2)  (a per-category agent x task term)

every main effect and all six two-way interactions of seed 003 Eq. 1 with a non-zero variance, plus
the per-category agent x task term whose variance sec. 5.7 compares across categories.

``Y = 1`` is a passed check; ``Y = 0`` a failure of category ``e`` at step ``s``.  Categories are
built so that where agents differ (large ``sd_at_e``) failures are rare (high ``b_e``): the true
rank correlation of per-category agent x task variance and activation rate is -1.

The demo's size (:data:`DEMO`) is chosen so that every fit of the analysis passes the convergence
gate: 5 models x 2 scaffolds (10 agents), 2 benchmarks x 20 tasks, 3 steps, 4 traces per
agent-task cell (seed 003's tau^2-bench runs 4 trials per task; MAST has 7 systems), and a task
sd of 1.0.  The first demo (3 models x 2 scaffolds, 10 tasks per benchmark, 1 trace per cell, and
no agent x step or task x step variance) never converged: with one trace, each agent-task cell of
a category holds 3 binary checks, and the per-category sigma^2_a:t (bulk ESS 170, R-hat 1.02) and
the zero-variance task:step term (bulk ESS 280) mixed too slowly.  With 8 agents and a task sd of
0.7, the task means of the category with the largest agent x task variance were so noisy
(task:agent variance / 8 agents about equal to the task variance) that its sigma[task] reached a
bulk ESS of 301 of 5,600 draws: more draws did not help, a better identified task effect does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["FailureSim", "DEMO", "simulate_failure_table", "true_interaction_variance", "true_activation_rates"]


@dataclass(frozen=True)
class FailureSim:
    """The known parameters of a simulated failure-mode corpus (standard deviations on the logit scale)."""

    categories: tuple[str, ...] = ("planning_or_execution", "tool_or_environment", "reasoning_or_verification",
                                   "communication_or_policy")
    b: tuple[float, ...] = (2.6, 2.0, 1.4, 0.8)  # category main effects: failures rarer in the first
    sd_at_e: tuple[float, ...] = (1.6, 1.1, 0.7, 0.3)  # per-category agent x task sd: largest in the first
    mu: float = 0.3
    sd_agent: float = 0.4
    sd_task: float = 1.0
    sd_step: float = 0.2
    sd_at: float = 0.5
    sd_ae: float = 0.3
    sd_te: float = 0.3
    sd_se: float = 0.15
    sd_as: float = 0.3  # agent x step
    sd_ts: float = 0.4  # task x step
    n_models: int = 5
    n_scaffolds: int = 2
    n_benchmarks: int = 2
    n_tasks: int = 20  # per benchmark
    n_steps: int = 3
    n_trials: int = 4  # traces per agent-task cell (seed 003's tau^2-bench: 4 trials per task)


DEMO = FailureSim()


def _draws(rng, sd, *shape):
    return rng.normal(0.0, sd, size=shape)


def _logits(p: FailureSim, rng, n_agents: int, n_tasks: int) -> np.ndarray:
    """``(A, T, S, K)`` logits of one draw of the random effects."""
    K, S = len(p.categories), p.n_steps
    b = np.asarray(p.b)
    sd_e = np.asarray(p.sd_at_e)
    return (p.mu + b[None, None, None, :]
            + _draws(rng, p.sd_agent, n_agents)[:, None, None, None]
            + _draws(rng, p.sd_task, n_tasks)[None, :, None, None]
            + _draws(rng, p.sd_step, S)[None, None, :, None]
            + _draws(rng, p.sd_at, n_agents, n_tasks)[:, :, None, None]
            + _draws(rng, p.sd_as, n_agents, S)[:, None, :, None]
            + _draws(rng, p.sd_ts, n_tasks, S)[None, :, :, None]
            + _draws(rng, p.sd_ae, n_agents, K)[:, None, None, :]
            + _draws(rng, p.sd_te, n_tasks, K)[None, :, None, :]
            + _draws(rng, p.sd_se, S, K)[None, None, :, :]
            + (rng.normal(size=(n_agents, n_tasks, K)) * sd_e)[:, :, None, :])


def simulate_failure_table(p: FailureSim = DEMO, seed: int = 2026, *, return_expected: bool = False):
    """One row per (benchmark, task, model, scaffold, trial, step, error_category): ``result`` 1 passed, 0 failed.

    With ``return_expected``, also the ``(K,)`` expected activation rates of this realised design (its own
    random effects; only the Bernoulli draws of the checks left to chance).
    """
    rng = np.random.default_rng(seed)
    A, T = p.n_models * p.n_scaffolds, p.n_benchmarks * p.n_tasks
    eta = _logits(p, rng, A, T)
    expected = (1.0 - (1.0 / (1.0 + np.exp(-eta))).prod(axis=2)).mean(axis=(0, 1))
    rows = []
    K, S = len(p.categories), p.n_steps
    for r in range(p.n_trials):
        y = rng.random(eta.shape) < 1.0 / (1.0 + np.exp(-eta))  # each trace its own Bernoulli draws
        for a in range(A):
            m, sc = divmod(a, p.n_scaffolds)
            for t in range(T):
                bi, ti = divmod(t, p.n_tasks)
                for s in range(S):
                    for k in range(K):
                        rows.append((f"sim-bench-{chr(97 + bi)}", f"{chr(97 + bi)}{ti + 1:02d}", f"model-{m + 1}",
                                     f"scaffold-{sc + 1}", f"r{r + 1}", s + 1, p.categories[k], int(y[a, t, s, k])))
    table = pd.DataFrame(rows, columns=["benchmark", "task", "model", "scaffold", "trial", "step", "error_category",
                                        "result"])
    return (table, expected) if return_expected else table


def true_interaction_variance(p: FailureSim = DEMO) -> np.ndarray:
    """``(K,)`` the agent x task variance within each category: ``sd_at^2 + sd_at_e^2``."""
    return p.sd_at ** 2 + np.asarray(p.sd_at_e) ** 2


def true_activation_rates(p: FailureSim = DEMO, n_mc: int = 400, seed: int = 7, *, return_sd: bool = False):
    """``(K,)`` the population activation rate of each category (P(any step fails) over traces), by Monte Carlo
    over the random effects of ``n_mc`` fresh designs of the same size.

    With ``return_sd``, also the ``(K,)`` standard deviation over those designs of a design's own expected rate:
    how far one realised design's rates stray from the population's through its random effects alone.
    """
    rng = np.random.default_rng(seed)
    A, T = p.n_models * p.n_scaffolds, p.n_benchmarks * p.n_tasks
    rates = np.empty((n_mc, len(p.categories)))
    for i in range(n_mc):
        prob_pass = 1.0 / (1.0 + np.exp(-_logits(p, rng, A, T)))
        rates[i] = (1.0 - prob_pass.prod(axis=2)).mean(axis=(0, 1))
    mean = rates.mean(axis=0)
    return (mean, rates.std(axis=0, ddof=1)) if return_sd else mean
