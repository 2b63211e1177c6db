"""Two agents, one decision: A against B from the fitted posterior, with the frequentist cross-check beside it.

The DDR paper's worked example (seed 003 (DDR paper 2026) sec. 6) reads one pair through every layer: how
much of the gap is the agent and how much the sample of tasks, which one wins per dollar, whether the
order holds on the hardest quartile, and what evaluation would settle it.  :func:`compare_pair` answers
the same questions for any two models, scaffolds or model-scaffold systems of a fitted corpus.

Bayesian (per posterior draw, then summarised; SPEC sec. 2-3)
    * the latent difference ``theta_A - theta_B`` on the logit scale (``theta`` as the ranks take it:
      ``u_m``, ``u_a``, or ``u_m + u_a + u_ma`` for a system; Hardy et al. 2026 sec. 5);
    * the difference in expected success rate over the population of tasks (and scaffolds, benchmarks):
      ``E[logistic(mu + theta + Z)]`` with ``Z`` normal with the variance of every term that is not the
      object's own, by Gauss-Hermite quadrature (:mod:`.score_reliability`);
    * ``P(A better than B) = P(theta_A > theta_B | y)``;
    * per benchmark where the fit has benchmark-by-model effects (``theta + u_bm``).
Frequentist cross-check on the same cells (Miller 2024, "Adding Error Bars to Evals", arXiv 2411.00640)
    * the paired difference of mean success over the tasks both ran, with a task-clustered standard
      error (each task one cluster: the standard deviation of the per-task differences over sqrt(n));
    * McNemar's exact test where every shared task has one binary outcome per agent;
    * per difficulty quartile (the difficulty analysis's strata, :func:`~.analyses.difficulty.task_difficulty`):
      the same paired difference on the stratum's tasks and ``P(A ahead)`` by the Bayesian bootstrap over
      tasks (Rubin 1981): the cached fit keeps no task-level effects, so the strata are read from the
      observed cells, and said so.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .posterior_summary import Summary, summarize, to_jsonable
from .reliability import VarianceComponents, object_facets
from .score_reliability import expected_success

__all__ = ["PairError", "PairedTest", "PairComparison", "compare_pair", "object_rates"]

#: Where a posterior probability counts as decisive (both ways), for the words only.
DECISIVE = 0.95
#: A lead smaller than this (success-rate points) is "small" in the buyer's sentence.
SMALL_LEAD = 0.05


class PairError(ValueError):
    """A name that is not one of the corpus's objects, or a pair that cannot be compared."""


@dataclass(frozen=True)
class PairedTest:
    """The paired difference of mean success over shared tasks, task-clustered (Miller 2024, sec. 3).

    Attributes
    ----------
    n_tasks
        Tasks both ran.
    rate_a, rate_b
        Mean over those tasks of each one's success rate on the task.
    difference, se, lower95, upper95, p_value
        ``rate_a - rate_b``, its task-clustered standard error, the t interval and two-sided p-value.
    mcnemar_p, discordant
        McNemar's exact p-value and the discordant counts ``(A only, B only)`` when every shared task has
        one binary outcome per agent; None otherwise.
    p_ahead
        ``P(A ahead)`` under the Bayesian bootstrap over the shared tasks.
    """

    n_tasks: int
    rate_a: float
    rate_b: float
    difference: float
    se: float
    lower95: float
    upper95: float
    p_value: float
    mcnemar_p: float | None
    discordant: tuple[int, int] | None
    p_ahead: float

    def to_dict(self) -> dict:
        return to_jsonable(self.__dict__)


@dataclass
class PairComparison:
    """Everything ``ddr compare`` says about one pair (module docstring)."""

    a: str
    b: str
    object: str
    latent_difference: Summary
    rate_difference: Summary
    rate_a: Summary
    rate_b: Summary
    p_a_better: float
    paired: PairedTest
    by_benchmark: dict[str, dict] = field(default_factory=dict)
    by_stratum: dict[str, dict] = field(default_factory=dict)
    cost: dict | None = None
    disagreement: str | None = None
    sentence: str = ""

    def to_dict(self) -> dict:
        return to_jsonable({
            "a": self.a, "b": self.b, "object": self.object,
            "latent_difference": self.latent_difference, "success_rate_difference": self.rate_difference,
            "success_rate_a": self.rate_a, "success_rate_b": self.rate_b, "p_a_better": self.p_a_better,
            "frequentist": self.paired.to_dict(), "by_benchmark": self.by_benchmark,
            "by_difficulty_stratum": self.by_stratum, "cost": self.cost, "disagreement": self.disagreement,
            "sentence": self.sentence})


# ---------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------

def resolve(name: str, names: list[str], what: str) -> int:
    """Index of ``name`` among ``names`` (exact, then case- and space-insensitive), or a PairError naming
    the closest ones."""
    if name in names:
        return names.index(name)
    fold = {" ".join(n.split()).casefold(): i for i, n in enumerate(names)}
    key = " ".join(str(name).split()).casefold()
    if key in fold:
        return fold[key]
    near = difflib.get_close_matches(name, names, n=5, cutoff=0.4)
    hint = f"did you mean {', '.join(map(repr, near))}?" if near else f"the {what}s are: {', '.join(names[:12])}"
    raise PairError(f"no {what} named {name!r} in this corpus; {hint}")


def _object_key(table: pd.DataFrame, obj: str) -> pd.Series:
    if obj == "system":
        return table["model"].astype(str) + " / " + table["scaffold"].astype(str)
    return table[obj].astype(str)


def object_rates(table: pd.DataFrame, obj: str, name: str) -> pd.Series:
    """One object's success rate per task (``(benchmark, task)`` index), pooled over its cells there."""
    rows = table[_object_key(table, obj) == name]
    g = rows.groupby(["benchmark", "task"], observed=True)[["successes", "trials"]].sum()
    return g["successes"] / g["trials"]


# ---------------------------------------------------------------------------
# Frequentist cross-check
# ---------------------------------------------------------------------------

def _bayes_bootstrap(d: np.ndarray, rng, n: int = 4000) -> float:
    if d.size == 0:
        return 0.5
    w = rng.dirichlet(np.ones(d.size), size=n)
    m = w @ d
    return float(np.mean(m > 0) + 0.5 * np.mean(m == 0))


def paired_test(table: pd.DataFrame, obj: str, a: str, b: str, tasks=None, seed: int = 0) -> PairedTest:
    """The task-clustered paired difference of A and B (and McNemar's test where it applies)."""
    from scipy import stats

    ra, rb = object_rates(table, obj, a), object_rates(table, obj, b)
    shared = ra.index.intersection(rb.index)
    if tasks is not None:
        shared = shared[shared.isin(tasks)]
    d = (ra.loc[shared] - rb.loc[shared]).to_numpy(np.float64)
    n = d.size
    if n == 0:
        raise PairError(f"{a!r} and {b!r} ran no task in common: no paired comparison")
    mean = float(d.mean())
    se = float(d.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf
    t = stats.t.ppf(0.975, n - 1) if n > 1 else math.inf
    p = float(2 * stats.t.sf(abs(mean) / se, n - 1)) if n > 1 and se > 0 else (1.0 if mean == 0 else 0.0)
    mc, disc = None, None
    keys = _object_key(table, obj)
    both = table[keys.isin([a, b])]
    per = both.assign(_o=keys[both.index]).groupby(["benchmark", "task", "_o"], observed=True)["trials"].sum()
    if len(per) and (per.to_numpy() == 1).all():
        only_a = int(((ra.loc[shared] == 1) & (rb.loc[shared] == 0)).sum())
        only_b = int(((ra.loc[shared] == 0) & (rb.loc[shared] == 1)).sum())
        disc = (only_a, only_b)
        mc = float(stats.binomtest(min(only_a, only_b), only_a + only_b, 0.5).pvalue) if only_a + only_b else 1.0
    return PairedTest(n, float(ra.loc[shared].mean()), float(rb.loc[shared].mean()), mean, se,
                      mean - t * se, mean + t * se, p, mc, disc, _bayes_bootstrap(d, np.random.default_rng(seed)))


# ---------------------------------------------------------------------------
# Bayesian
# ---------------------------------------------------------------------------

def _theta(post, obj: str) -> tuple[np.ndarray, list[str]]:
    from .fitting import theta_from_posterior

    return theta_from_posterior(post, obj)


def _rest_variance(c: VarianceComponents, obj: str) -> np.ndarray:
    """Per draw, the variance of every term that is not the object's own (what a success rate averages over)."""
    o = object_facets(obj)
    keep = np.array([0.0 if fs <= o else 1.0 for fs in c.facet_sets])
    return c.matrix @ keep


def expected_rate(c: VarianceComponents, theta: np.ndarray, obj: str) -> np.ndarray:
    """Per draw, ``E[logistic(mu + theta + Z)]`` over the population of tasks (and other facets)."""
    if c.intercept is None:
        raise PairError("the fit has no intercept draws: refit it to compare success rates")
    return expected_success(c.intercept + theta, _rest_variance(c, obj), 48)


def _by_benchmark(post, table, c, obj, ia, ib, names) -> dict[str, dict]:
    """Latent difference per benchmark where the fit has benchmark-by-model effects (model object only)."""
    from .fitting import _effect_draws

    if obj != "model":
        return {}
    u, levels = _effect_draws(post, "benchmark:model")
    if u is None or levels is None:
        return {}
    th, _ = _theta(post, "model")
    out = {}
    lv = levels.astype(str)
    for bench in sorted(lv["benchmark"].unique()):
        sel = lv["benchmark"] == bench
        idx = {m: j for j, m in zip(np.flatnonzero(sel), lv.loc[sel, "model"])}
        if names[ia] not in idx or names[ib] not in idx:
            continue
        diff = th[:, ia] + u[:, idx[names[ia]]] - th[:, ib] - u[:, idx[names[ib]]]
        out[bench] = {"latent_difference": summarize(diff), "p_a_better": float(np.mean(diff > 0))}
    return out


def _by_stratum(table, obj, a, b) -> dict[str, dict]:
    from .analyses.difficulty import task_difficulty

    diff = task_difficulty(table)
    idx = pd.MultiIndex.from_tuples([tuple(t.split("/", 1)) for t in diff.tasks], names=["benchmark", "task"])
    out = {}
    for s, label in enumerate(diff.labels, start=1):
        tasks = idx[diff.quartile == s]
        try:
            t = paired_test(table, obj, a, b, tasks=tasks, seed=s)
        except PairError:
            continue
        out[label] = {"tasks": t.n_tasks, "rate_a": t.rate_a, "rate_b": t.rate_b, "difference": t.difference,
                      "se": t.se, "lower95": t.lower95, "upper95": t.upper95, "p_a_ahead": t.p_ahead}
    return out


def _cost(table, obj, a, b, rate_a: float, rate_b: float) -> dict | None:
    if "cost" not in table.columns or table["cost"].isna().all():
        return None
    keys = _object_key(table, obj)
    out = {}
    for name, rate in ((a, rate_a), (b, rate_b)):
        rows = table[keys == name]
        per_trial = float(rows["cost"].sum() / rows["trials"].sum()) if rows["trials"].sum() else math.nan
        out[name] = {"usd_per_trial": per_trial,
                     "successes_per_usd": rate / per_trial if per_trial > 0 else math.inf}
    return out


# ---------------------------------------------------------------------------
# Words
# ---------------------------------------------------------------------------

def _disagreement(p_better: float, t: PairedTest, obj: str, table, a, b) -> str | None:
    bayes = p_better >= 0.975 or p_better <= 0.025
    freq = t.p_value < 0.05
    same_sign = (p_better > 0.5) == (t.difference > 0) or t.difference == 0
    if bayes == freq and same_sign:
        return None
    why = []
    if obj == "model":
        sa = set(table.loc[table["model"].astype(str) == a, "scaffold"].astype(str))
        sb = set(table.loc[table["model"].astype(str) == b, "scaffold"].astype(str))
        if sa != sb:
            why.append("scaffolds: the two ran with different scaffolds; the fit separates the model's effect "
                       "from its scaffolds', the raw paired difference does not")
    if bayes and not freq:
        why.append("clustering and partial pooling: the fit borrows strength from every other model and task, "
                   "the paired test uses only the two's shared tasks")
    if freq and not bayes:
        why.append("shrinkage: the fit pulls both towards the population of models, and counts task-by-model "
                   "luck that the paired test's standard error sees only through the shared tasks")
    if not same_sign:
        why.append("the two point the other way: the raw difference is within the noise of the shared tasks")
    return "the fit and the paired test disagree: " + "; ".join(why)


def _sentence(cmp: PairComparison) -> str:
    a, b, p = cmp.a, cmp.b, cmp.p_a_better
    lead, lo, hi = cmp.rate_difference.median, *cmp.rate_difference.hdi95
    if p >= DECISIVE or p <= 1 - DECISIVE:
        win, lose = (a, b) if p >= 0.5 else (b, a)
        size = "real but small" if abs(lead) < SMALL_LEAD else "real"
        text = (f"{win} ranks above {lose}: the rank is {size} (P = {max(p, 1 - p):.2f}; "
                f"{abs(lead) * 100:.1f} points of success rate, 95% interval {lo * 100:+.1f} to {hi * 100:+.1f})")
    else:
        text = (f"The data do not settle {a} against {b} (P({a} better) = {p:.2f}; {lead * 100:+.1f} points, "
                f"95% interval {lo * 100:+.1f} to {hi * 100:+.1f}): treat them as tied")
    if cmp.cost:
        ca, cb = cmp.cost[a]["usd_per_trial"], cmp.cost[b]["usd_per_trial"]
        cheap = a if ca < cb else b
        if not (p >= DECISIVE or p <= 1 - DECISIVE):
            text += f"; under any binding cost constraint prefer {cheap}"
        else:
            win = a if p >= 0.5 else b
            text += (f"; {win} is also the cheaper one" if win == cheap else
                     f"; per dollar {cheap} does more (prefer it under a binding cost constraint)")
    return text + _hardest_words(cmp) + "."


def _hardest_words(cmp: PairComparison) -> str:
    """What the hardest difficulty stratum adds: a reversal, an order not established there, or nothing."""
    if len(cmp.by_stratum) < 2:
        return ""
    hard = list(cmp.by_stratum.values())[-1]
    p, q = cmp.p_a_better, hard["p_a_ahead"]
    settled = p >= DECISIVE or p <= 1 - DECISIVE
    if settled and (q - 0.5) * (p - 0.5) < 0:
        return ("; the order reverses on the hardest quarter of tasks: before deploying, evaluate on tasks like "
                "your hardest quarter")
    if settled and 1 - DECISIVE < q < DECISIVE:
        return ("; on the hardest quarter of tasks the order is not established: before deploying, evaluate on "
                "tasks like your hardest quarter")
    if not settled and (q >= DECISIVE or q <= 1 - DECISIVE):
        lead = cmp.a if q >= 0.5 else cmp.b
        return f"; on the hardest quarter of tasks {lead} leads (P = {max(q, 1 - q):.2f}, observed cells)"
    return ""


def compare_pair(post, table: pd.DataFrame, components: VarianceComponents, a: str, b: str,
                 obj: str = "model") -> PairComparison:
    """Compare two objects of a fitted corpus (module docstring).

    Parameters
    ----------
    post
        The fit's posterior (random effects of the object's terms kept, as the cache keeps them).
    table
        The corpus's canonical table (the cells of the frequentist cross-check).
    components
        The fit's variance components with intercept draws.
    a, b
        Names as the corpus names them (a system as ``"model / scaffold"``).
    obj
        ``"model"``, ``"scaffold"`` or ``"system"``.
    """
    if obj not in ("model", "scaffold", "system"):
        raise PairError(f"compare models, scaffolds or systems, not {obj!r}")
    theta, names = _theta(post, obj)
    ia, ib = resolve(a, names, obj), resolve(b, names, obj)
    a, b = names[ia], names[ib]
    if ia == ib:
        raise PairError(f"{a!r} is compared with itself: name two different {obj}s")
    diff = theta[:, ia] - theta[:, ib]
    ra, rb = expected_rate(components, theta[:, ia], obj), expected_rate(components, theta[:, ib], obj)
    t = paired_test(table, obj, a, b)
    cmp = PairComparison(a, b, obj, summarize(diff), summarize(ra - rb), summarize(ra), summarize(rb),
                         float(np.mean(diff > 0)), t)
    cmp.by_benchmark = _by_benchmark(post, table, components, obj, ia, ib, names)
    cmp.by_stratum = _by_stratum(table, obj, a, b)
    cmp.cost = _cost(table, obj, a, b, t.rate_a, t.rate_b)
    cmp.disagreement = _disagreement(cmp.p_a_better, t, obj, table, a, b)
    cmp.sentence = _sentence(cmp)
    return cmp


@dataclass
class PairDecision:
    """The comparison of a pair and the sizing of its decision: what ``ddr compare``, the app's Compare tab and
    the DDR sheet's "Two agents" page show (one computation for the three)."""

    comparison: PairComparison
    sizing: object  # :class:`~.pair_sizing.PairSizing`

    def to_dict(self) -> dict:
        return {"comparison": self.comparison.to_dict(), "sizing": self.sizing.to_dict()}


def pair_decision(post, corpus, components: VarianceComponents, a: str, b: str, obj: str = "model",
                  sizes: dict | None = None) -> PairDecision:
    """Compare ``a`` and ``b`` and size the decision at the corpus's design and prices.

    ``sizes``: the design a new evaluation keeps (scaffolds per model, trials per cell); default the
    corpus's observed design (:func:`~.dstudy.observed_design`).
    """
    from .dstudy import corpus_prices, observed_design
    from .fitting import theta_from_posterior
    from .pair_sizing import size_pair_decision

    cmp = compare_pair(post, corpus.table, components, a, b, obj)
    theta, names = theta_from_posterior(post, obj)
    ia, ib = names.index(cmp.a), names.index(cmp.b)
    delta = expected_rate(components, theta[:, ia], obj) - expected_rate(components, theta[:, ib], obj)
    if sizes is None:
        sizes = observed_design(corpus, facets=components.facets).sizes()
    prices = corpus_prices(corpus)
    price = sum(prices.values()) / len(prices) if prices else 0.0
    sizing = size_pair_decision(components, theta[:, [ia, ib]], delta, sizes, obj, paired_se=cmp.paired.se,
                                price_per_trial=price)
    return PairDecision(cmp, sizing)
