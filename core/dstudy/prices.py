"""Prices per trial from a corpus (its cost column or token counts) and cost-aware rankings of agents.

Reliability per dollar (seed 003 (DDR paper 2026)): ``RPD = Erho2 / mean cost per observation`` for a design, per
draw; agents are ranked by *accuracy per dollar* = mean success / mean cost per trial, because
``Erho2`` is a property of the design and population, not of one agent (seed 003's per-agent
``RPD(a, B)`` would otherwise rank agents by cost alone).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import shown
from ..ranks import kendall_tau, rank_values, spearman_rho
from ..reliability import (Summary, summarize, to_jsonable)


# ---------------------------------------------------------------------------
# Prices and cost-aware rankings
# ---------------------------------------------------------------------------

def _need_columns(table: pd.DataFrame, cols: Iterable[str], what: str) -> None:
    missing = [c for c in cols if c not in table.columns]
    if missing:
        raise ValueError(f"{what} needs column(s) {', '.join(map(repr, missing))}; columns available: "
                         f"{', '.join(map(str, table.columns))}")


def prices_from_cost_column(table: pd.DataFrame, by: str | Sequence[str] = "benchmark", cost: str = "cost",
                            trials: str = "trials") -> dict:
    """Mean USD per trial per group from a corpus table's cost column.

    The canonical ``cost`` is USD for the whole row (all its ``trials``), so the
    price of a group is ``sum(cost) / sum(trials)`` over its rows with a cost.
    Groups with no costed row are left out.

    Returns
    -------
    dict
        ``{group: USD per trial}`` (tuple keys when ``by`` lists several columns).
    """
    by = [by] if isinstance(by, str) else list(by)
    _need_columns(table, [*by, cost, trials], "prices from the cost column")
    t = table.loc[table[cost].notna(), [*by, cost, trials]]
    if t.empty:
        raise ValueError(f"column {cost!r} has no values; fill it or give prices per benchmark by hand")
    g = t.groupby(by if len(by) > 1 else by[0], observed=True, sort=True)[[cost, trials]].sum()
    return {k: float(v) for k, v in (g[cost] / g[trials]).items()}


def row_costs_from_tokens(table: pd.DataFrame, price_table: Mapping[str, tuple[float, float]],
                          model: str = "model", input_tokens: str = "input_tokens",
                          output_tokens: str = "output_tokens") -> pd.Series:
    """USD per row from token counts and ``{model: (USD per 1M input, USD per 1M output tokens)}``.

    Rows missing a token count are NaN.  Raises if a model has no price.
    """
    _need_columns(table, [model, input_tokens, output_tokens], "costs from tokens")
    models = pd.unique(table[model].dropna())
    missing = sorted(str(m) for m in models if m not in price_table)
    if missing:
        shown = ", ".join(map(repr, missing[:5])) + (" ..." if len(missing) > 5 else "")
        raise ValueError(f"no price for model(s) {shown} ({len(missing)} in all); add them to the price table "
                         "as model: (USD per 1M input tokens, USD per 1M output tokens)")
    # object dtype first: mapping a categorical column would give a categorical, which cannot multiply
    names = table[model].astype(object)
    p_in = names.map(lambda m: float(price_table[m][0])).astype(float)
    p_out = names.map(lambda m: float(price_table[m][1])).astype(float)
    return (table[input_tokens].astype(float) * p_in + table[output_tokens].astype(float) * p_out) / 1e6


def prices_from_tokens(table: pd.DataFrame, price_table: Mapping[str, tuple[float, float]],
                       by: str | Sequence[str] = "benchmark", trials: str = "trials", **columns) -> dict:
    """Mean USD per trial per group from token counts x a price table (see :func:`row_costs_from_tokens`)."""
    t = table.copy()
    t["__cost__"] = row_costs_from_tokens(table, price_table, **columns)
    return prices_from_cost_column(t, by, "__cost__", trials)


@dataclass
class CostRanking:
    """Agents ranked by accuracy and by accuracy per dollar (seed 003 sec. 3, "RPD ranks").

    Attributes
    ----------
    agents
        Agent labels (facet values joined by ``" / "``).
    accuracy
        Mean success: ``sum(successes) / sum(trials)``.
    cost_per_trial
        ``sum(cost) / sum(trials)`` over costed rows (NaN if none).
    accuracy_per_dollar
        ``accuracy / cost_per_trial`` (NaN without a positive cost).
    rank_accuracy, rank_per_dollar
        Ranks, 1 = best, average ranks for ties; NaN where undefined.
    spearman, kendall
        Rank correlations between accuracy and accuracy per dollar over agents with both.
    missing_cost
        Agents without a positive cost (left out of the per-dollar ranking).
    """

    agents: list[str]
    accuracy: np.ndarray
    cost_per_trial: np.ndarray
    accuracy_per_dollar: np.ndarray
    rank_accuracy: np.ndarray
    rank_per_dollar: np.ndarray
    spearman: float
    kendall: float
    missing_cost: list[str]

    def to_dict(self) -> dict:
        return to_jsonable({k: getattr(self, k) for k in (
            "agents", "accuracy", "cost_per_trial", "accuracy_per_dollar", "rank_accuracy", "rank_per_dollar",
            "spearman", "kendall", "missing_cost")})


def accuracy_per_dollar(table: pd.DataFrame, agent: str | Sequence[str] = ("model", "scaffold"), *,
                        successes: str = "successes", trials: str = "trials", cost: str = "cost") -> CostRanking:
    """Rank agents by accuracy and by accuracy per dollar, and correlate the two rankings.

    ``accuracy_per_dollar = mean success / mean cost per trial``.  This is the
    per-agent reading of seed 003's RPD ranks: a design-level ``Erho2`` is
    common to all agents, so ``Erho2 / cost`` would rank agents by cost alone
    (see :func:`reliability_per_dollar` for the design-level RPD).  A zero or
    missing cost leaves the agent out of the per-dollar ranking (listed in
    ``missing_cost``).
    """
    agent = [agent] if isinstance(agent, str) else list(agent)
    _need_columns(table, [*agent, successes, trials], "accuracy per dollar")
    t = table[[*agent, successes, trials]].copy()
    t["__cost__"] = table[cost] if cost in table.columns else np.nan
    t["__ctrials__"] = np.where(t["__cost__"].notna(), t[trials], 0)
    g = t.groupby(agent, observed=True, sort=True).agg(s=(successes, "sum"), n=(trials, "sum"),
                                                      c=("__cost__", "sum"), cn=("__ctrials__", "sum"))
    labels = [" / ".join(map(str, k)) if isinstance(k, tuple) else str(k) for k in g.index]
    acc = (g["s"] / g["n"]).to_numpy(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        cpt = np.where(g["cn"] > 0, g["c"] / g["cn"], np.nan)
        apd = np.where(cpt > 0, acc / cpt, np.nan)
    ok = np.isfinite(apd)
    r_acc = rank_values(acc)
    r_apd = np.full(len(acc), np.nan)
    r_apd[ok] = rank_values(apd[ok])
    sp = spearman_rho(acc[ok], apd[ok]) if ok.sum() >= 2 else float("nan")
    kt = kendall_tau(acc[ok], apd[ok]) if ok.sum() >= 2 else float("nan")
    return CostRanking(labels, acc, cpt, apd, r_acc, r_apd, sp, kt, [lab for lab, o in zip(labels, ok) if not o])


def reliability_per_dollar(coefficient_draws, cost_per_observation: float) -> Summary:
    """Reliability per dollar of a design (seed 003): ``RPD = Erho2 / mean cost per observation``, per draw.

    Parameters
    ----------
    coefficient_draws
        Per-draw ``Erho2`` (or ``Phi``) of the design.
    cost_per_observation
        Mean USD per trial of the design (:meth:`DStudyDesign.mean_price`), > 0.
    """
    c = float(cost_per_observation)
    if not (math.isfinite(c) and c > 0):
        raise ValueError(f"cost per observation should be a positive number of USD, got {shown(cost_per_observation)}")
    return summarize(np.asarray(coefficient_draws, dtype=np.float64) / c)
