"""Run length by the convergence gate (``SamplerSettings.stop = "gate"``): when to stop sampling.

After warmup the chain runner (:mod:`.chains`) samples ``draws`` per chain, then checks the
draws so far every ``check_every`` draws per chain and stops at the first check where every
variance component passes the gate with a margin, or at the ceiling (``max_draws`` per chain
or ``max_seconds`` of sampling), or as soon as a post-warmup transition diverged (more draws
cannot remove a divergence).  The rule (SPEC section 6; Vehtari et al. 2021):

- split rank-normalised R-hat <= 1.01 (:data:`~ddr_explorer.core.gate.MAX_R_HAT`),
- bulk AND tail ESS >= ``STOP_ESS_MARGIN`` x 400 (the gate asks for bulk ESS >= 400; the
  margin keeps a run that stopped just past 400 from falling below it on a recount, and the
  tail ESS makes the 5% and 95% quantiles, i.e. the interval ends, as well estimated),
- no divergent transition after warmup.

A stopping time that depends on the draws can bias what is computed from them (a run that
stops at a lucky fluctuation).  Three safeguards keep that small: a minimum run length
(``draws``, 200 per chain by default, so split R-hat compares 8 half-chains of at least 100
draws), few looks (one every ``check_every`` draws), and a rule on the mixing of the chains
(R-hat, ESS), not on the estimates themselves.  bench/bench_recovery.py ``--stop gate``
measures the coverage of the 90% intervals under this rule (docs/sampler-measurements.md).

A refit that reports a few quantities computed from its components (a hold-out split's Erho2 at
its held-out design, seed 003 (DDR paper 2026) sec. 5.4; a difficulty stratum's coefficient, sec. 5.3) is stopped
by :func:`check_reported` instead: R-hat <= 1.01 on every component and every reported quantity,
bulk and tail ESS >= the margin x 400 on the reported quantities only, no divergence (the parent
fit, whose components are what it reports, keeps :func:`check_gate`).

The check computes the same statistics as :mod:`.diagnostics` (ArviZ's rank-normalised split
R-hat, bulk and tail ESS), vectorised in numpy: ArviZ took 50-60 ms per component on
4 x 1,000 draws (its Geyer sequence is a Python loop), which made a check cost as much as a
TB2 chunk; this takes about 1 ms.  tests/model/test_stopping.py checks it against ArviZ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..gate import MAX_R_HAT, MIN_ESS_BULK

#: Bulk and tail ESS the stopping rule asks for, as a multiple of the gate's 400.
STOP_ESS_MARGIN = 1.1
#: Phase name the runner reports while the run length is set by the gate.
GATE_PHASE = "sampling (until converged)"


# -- ArviZ's statistics, vectorised ------------------------------------------------------
def _split(x: np.ndarray) -> np.ndarray:
    """(chains, draws) -> (2 chains, draws // 2): first and last halves (ArviZ's ``_split_chains``)."""
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, x.shape[1] - half:]], axis=0)


def _z_scale(x: np.ndarray) -> np.ndarray:
    """Rank-normalisation (Blom's offset 3/8) over the whole array (ArviZ's ``_z_scale``)."""
    from scipy import special, stats

    r = stats.rankdata(x, method="average").reshape(x.shape)
    return special.ndtri((r - 0.375) / (x.size + 0.25))  # the normal quantile (norm.ppf without its overhead)


def _rhat(x: np.ndarray) -> float:
    n = x.shape[1]
    b = n * np.var(x.mean(axis=1), ddof=1)
    w = np.mean(np.var(x, axis=1, ddof=1))
    return float(np.sqrt((b / w + n - 1) / n))


def rhat_rank(x: np.ndarray) -> float:
    """Rank-normalised split R-hat of a (chains, draws) array: max of the bulk and folded (tail) R-hat."""
    s = _split(np.asarray(x, np.float64))
    folded = np.abs(s - np.median(s))
    return max(_rhat(_z_scale(s)), _rhat(_z_scale(folded)))


def _autocov(x: np.ndarray) -> np.ndarray:
    n = x.shape[1]
    m = 1 << (2 * n - 1).bit_length()  # a power of two >= 2n: no wrap-around
    x = x - x.mean(axis=1, keepdims=True)
    f = np.fft.rfft(x, n=m, axis=1)
    return np.fft.irfft(f * np.conjugate(f), n=m, axis=1)[:, :n] / n


def ess(x: np.ndarray) -> float:
    """Effective sample size of a (chains, draws) array by Geyer's initial monotone sequence,
    as ArviZ's ``_ess`` computes it (the sequential loops written as a cumulative minimum)."""
    x = np.asarray(x, np.float64)
    if not np.all(np.isfinite(x)):
        return float("nan")
    if np.max(x) - np.min(x) < np.finfo(float).resolution:
        return float(x.size)
    m, n = x.shape
    acov = _autocov(x)
    mean_var = np.mean(acov[:, 0]) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if m > 1:
        var_plus += np.var(x.mean(axis=1), ddof=1)
    rho = 1.0 - (mean_var - acov.mean(axis=0)) / var_plus
    rho[0] = 1.0
    # pairs k = 0, 1, ... of lags (2k, 2k + 1); ArviZ processes pair k >= 1 while the previous
    # pair's sum is positive and 2k - 1 < n - 3, and stops after the first pair whose sum is <= 0
    kmax = max((n - 3) // 2, 0)  # the last pair ArviZ's loop can reach (2k - 1 < n - 3)
    P = rho[0:2 * (kmax + 1):2] + rho[1:2 * (kmax + 1):2]  # P[0..kmax]
    nonpos = np.flatnonzero(P[1:] <= 0.0)
    if P[0] <= 0.0:
        K = 0
    else:
        K = int(nonpos[0]) + 1 if nonpos.size else kmax
    tail = 0.0
    if K >= 1:
        r_even = rho[2 * K]
        if r_even > 0.0 or P[K] >= 0.0:
            tail = float(r_even)
    else:
        tail = 1.0  # rho_hat[0]
    body = np.minimum.accumulate(P[:K]) if K >= 1 else np.zeros(0)
    tau = -1.0 + 2.0 * float(np.sum(body)) + tail
    total = m * n
    tau = max(tau, 1.0 / math.log10(total))
    if np.isnan(rho[:2 * K + 2]).any():
        return float("nan")
    return float(total / tau)


def ess_bulk(x: np.ndarray) -> float:
    """Bulk ESS: ESS of the rank-normalised split chains."""
    return ess(_z_scale(_split(np.asarray(x, np.float64))))


def ess_tail(x: np.ndarray) -> float:
    """Tail ESS: the smaller ESS of the indicators of the 5% and 95% quantiles, on split chains."""
    x = np.asarray(x, np.float64)
    out = []
    for p in (0.05, 0.95):
        q = np.quantile(x, p)
        out.append(ess(_split((x <= q).astype(np.float64))))
    return min(out)


# -- the rule ----------------------------------------------------------------------------
@dataclass
class GateCheck:
    """One look at the draws so far.

    Attributes
    ----------
    passed
        Every component passes (R-hat, bulk and tail ESS with the margin) and nothing diverged.
    draws
        Draws per chain looked at.
    max_r_hat, min_ess_bulk, min_ess_tail
        Over the variance components (with reported quantities, :func:`check_reported`: the R-hat
        over the components and the quantities, the ESS over the quantities).
    divergences
        Post-warmup divergent transitions so far.
    reasons
        What still fails, in words (empty when passed).
    """

    passed: bool
    draws: int
    max_r_hat: float
    min_ess_bulk: float
    min_ess_tail: float
    divergences: int
    reasons: list[str] = field(default_factory=list)
    #: The reported quantities whose ESS was checked (:func:`check_reported`); empty: every component's.
    on: tuple = ()
    #: Under the precision rule (:func:`check_precision`): the largest MCSE of a reported quantile, the
    #: tolerance it was held to, and each reported quantity's median at this look.  NaN / () otherwise.
    max_mcse: float = float("nan")
    tolerance: float = float("nan")
    #: Under the precision rule: its test of agreeing chains in words (:meth:`PrecisionRule.r_hat_words`).
    agree: str = ""
    values: tuple = ()

    @property
    def min_ess(self) -> float:
        return min(self.min_ess_bulk, self.min_ess_tail)


def check_gate(sigma: np.ndarray, divergences: int, names=None, max_r_hat: float = MAX_R_HAT,
               min_ess: float = STOP_ESS_MARGIN * MIN_ESS_BULK) -> GateCheck:
    """The stopping rule on ``sigma`` of shape (chains, draws, components).

    Parameters
    ----------
    sigma
        Draws of every variance component's sigma (or of any monotone function of it: the
        statistics are rank based).
    divergences
        Post-warmup divergent transitions so far.
    names
        Component names, for the reasons (default ``sigma[0]``, ...).
    max_r_hat, min_ess
        The thresholds (default: the gate's R-hat and ``STOP_ESS_MARGIN`` x its ESS).
    """
    sigma = np.asarray(sigma, np.float64)
    _, n, K = sigma.shape
    names = list(names) if names is not None else [f"{k}" for k in range(K)]
    rh, eb, et, reasons = [], [], [], []
    for k in range(K):
        r, b, t = _series_check(sigma[:, :, k], f"sigma[{names[k]}]", max_r_hat, min_ess, reasons)
        rh.append(r)
        eb.append(b)
        et.append(t)
    return _gate_check(n, rh, eb, et, divergences, reasons)


def _series_check(x: np.ndarray, label: str, max_r_hat: float, min_ess: float | None, reasons: list) -> tuple:
    """Split R-hat and (unless ``min_ess`` is None) bulk and tail ESS of one (chains, draws) series; what
    fails is appended to ``reasons`` in that order.  Returns (R-hat, bulk ESS, tail ESS); ESS is NaN when
    not asked."""
    C, n = x.shape
    r = rhat_rank(x) if C > 1 or n >= 4 else float("nan")
    if not r <= max_r_hat:
        reasons.append(f"R-hat of {label} {r:.3f}")
    if min_ess is None:
        return r, float("nan"), float("nan")
    eb, et = ess_bulk(x), ess_tail(x)
    if not eb >= min_ess:
        reasons.append(f"bulk ESS of {label} {eb:.0f}")
    if not et >= min_ess:
        reasons.append(f"tail ESS of {label} {et:.0f}")
    return r, eb, et


def _gate_check(n: int, rh: list, eb: list, et: list, divergences: int, reasons: list, on: tuple = ()) -> GateCheck:
    """The :class:`GateCheck` of series checked by :func:`_series_check` (divergences added to ``reasons``)."""
    if divergences:
        reasons.append(f"{divergences} divergent transition(s)")
    nan = float("nan")
    return GateCheck(passed=not reasons, draws=n, max_r_hat=max(rh) if rh else nan,
                     min_ess_bulk=min(eb) if eb else nan, min_ess_tail=min(et) if et else nan,
                     divergences=int(divergences), reasons=reasons, on=on)


def reported_sigma(sigma: np.ndarray, names, log_cols=()) -> dict:
    """The checked sigma columns as ``{term: (chains, draws) sigma}`` (columns in ``log_cols`` hold log sigma)."""
    sigma = np.asarray(sigma, np.float64)
    out = {}
    for k, nm in enumerate(names):
        x = sigma[:, :, k]
        out[nm] = np.exp(x) if k in log_cols else x
    return out


def check_reported(sigma: np.ndarray, divergences: int, names, quantities, spec, log_cols=(),
                   max_r_hat: float = MAX_R_HAT, min_ess: float = STOP_ESS_MARGIN * MIN_ESS_BULK) -> GateCheck:
    """The stopping rule of a refit that reports ``quantities`` (the gate on "every reported quantity").

    A refit of an analysis reports a few numbers computed per draw from its variance components (a
    hold-out split: the posterior median of Erho2 at the held-out design, seed 003 sec. 5.4), not each
    component on its own.  The rule therefore asks:

    - split R-hat <= ``max_r_hat`` on EVERY variance component (the chains agree on the whole
      posterior, so a quantity cannot pass while the chains sit in different places) and on every
      reported quantity;
    - bulk AND tail ESS >= ``min_ess`` on every reported quantity (its median and its interval ends);
    - no divergent transition.

    The components' ESS is not asked: it is what the refit's analysis does not report.  A rule on the
    mixing, not on the values, as :func:`check_gate`.

    Parameters
    ----------
    sigma
        (chains, draws, components) draws of the checked columns (``names``).
    divergences
        Post-warmup divergent transitions so far.
    names
        The term of each column.
    quantities
        Objects with ``label`` and ``draws(sigma_by_term, spec) -> (chains, draws)`` (for example
        :class:`ddr_explorer.core.analyses.reported.ReportedQuantity`, which computes them with the
        same D-study functions the analysis reports with).
    spec
        The refit's model (the residual variance of the coefficient).
    log_cols
        Columns of ``sigma`` that hold log sigma (the collapsed Gibbs block's).
    """
    sigma = np.asarray(sigma, np.float64)
    C, n, K = sigma.shape
    names = list(names)
    reasons, rh_all, eb_all, et_all = [], [], [], []
    for k in range(K):  # the components: R-hat only
        rh_all.append(_series_check(sigma[:, :, k], f"sigma[{names[k]}]", max_r_hat, None, reasons)[0])
    by_term = reported_sigma(sigma, names, log_cols)
    for q in quantities:
        x = np.asarray(q.draws(by_term, spec), np.float64).reshape(C, n)
        r, eb, et = _series_check(x, q.label, max_r_hat, min_ess, reasons)
        rh_all.append(r)
        eb_all.append(eb)
        et_all.append(et)
    return _gate_check(n, rh_all, eb_all, et_all, divergences, reasons, on=tuple(q.label for q in quantities))


def matched_r_hat(chains: int, draws: int, ess_target: float) -> float:
    """The split R-hat threshold that asks as much as ``ess_target`` effective draws (Vats and Knudson 2021).

    Split R-hat compares ``M = 2 x chains`` half-chains of ``h = draws // 2`` draws: R-hat^2 = (h - 1) / h +
    var(half-chain means) / W, and for chains that agree var(means) / W = M / ESS, so R-hat <= this
    threshold says the half-chains' means agree as closely as ``ess_target`` effective draws let them:
    ``sqrt((h - 1) / h + M / ess_target)`` (after Vats and Knudson 2021, who relate R-hat to ESS as
    sqrt(1 + m / ESS); here on split chains).  The fixed 1.01 is this threshold at 200 (h = 50) to 400 (h large) effective draws, which
    is why a rule asking 100 effective draws of a refit but R-hat <= 1.01 of it ran as long as the gate
    (docs/sampler-measurements.md).  Chains stuck apart still fail it: their means differ by far more than
    the within-chain spread allows at any ESS.
    """
    h = max(int(draws) // 2, 2)
    return float(np.sqrt((h - 1) / h + 2 * int(chains) / float(ess_target)))


# -- the precision rule of refit analyses -------------------------------------------------
#: Bulk ESS the precision rule asks of every component and reported quantity: enough for R-hat itself to
#: be trustworthy (Vehtari et al. 2021, sec. 4: rank-normalised R-hat and ESS, at least 100 before
#: trusting either), far less than the gate's 400, which is a G-study's own standard.
PRECISION_MIN_ESS = 100
#: The largest Monte Carlo standard error the precision rule accepts of a number an analysis takes from a
#: refit (an Erho2 median or interval end), whatever the spread between its refits.
PRECISION_MAX_MCSE = 0.005
#: The tolerance as a share of the spread (the SD across the analysis's refits of the number it takes):
#: a tenth keeps the Monte Carlo error under 1% of the variance across splits or strata (0.1^2).
PRECISION_SPREAD_SHARE = 0.1
#: Refits of a group whose numbers give the spread: fewer and the tolerance is the ceiling.  Five, not three: the SD
#: of three numbers is often a third of the true spread (a chi distribution with 2 degrees of freedom), which
#: asked the next refits for ten times the effective draws (tests/test_heldout_precision.py).
PRECISION_MIN_SPREAD = 5
#: How the precision rule judges that a refit's chains agree: ``"matched"``, split R-hat within what
#: :data:`PRECISION_MIN_ESS` effective draws allow (:func:`matched_r_hat`, 1.030-1.039 at 100), or ``"fixed"``,
#: R-hat <= 1.01 whatever the rule asks (which asks 200-400 effective draws of every component: the rule ran
#: as long as the gate with it; docs/sampler-measurements.md).
PRECISION_R_HAT = "matched"
#: The quantile of the standard normal an MCSE interval spans (ArviZ's 0.1587 and 0.8413: +-1 SD).
_MCSE_PROBS = (0.1586553, 0.8413447)


def mcse_quantile(x: np.ndarray, prob: float) -> float:
    """Monte Carlo standard error of the ``prob`` quantile of a (chains, draws) array (Vehtari et al. 2021,
    sec. 4.3), as ArviZ's ``mcse(method="quantile")`` computes it: the ESS of the indicator ``x <= q`` on
    split chains, the +-1 SD interval of a Beta(ESS p + 1, ESS (1 - p) + 1) on the probability scale
    mapped back through the draws' order statistics, halved.  NaN on fewer than 4 draws or non-finite draws."""
    from scipy import stats

    x = np.asarray(x, np.float64)
    if x.ndim == 1:
        x = x[None, :]
    if x.shape[1] < 4 or not np.all(np.isfinite(x)):
        return float("nan")
    q = np.quantile(x, prob)
    e = ess(_split((x <= q).astype(np.float64)))
    with np.errstate(invalid="ignore"):
        ppf = stats.beta.ppf(_MCSE_PROBS, e * prob + 1, e * (1 - prob) + 1)
    srt = np.sort(x.ravel())
    size = srt.size
    at = ppf * size - 1
    lo = srt[int(np.floor(np.nanmax((at[0], 0))))]
    hi = srt[int(np.ceil(np.nanmin((at[1], size - 1))))]
    return float((hi - lo) / 2)


@dataclass(frozen=True)
class PrecisionRule:
    """The run-length rule of a refit analysis: its chains agree, and what it takes is precise enough.

    A refit runs until (a) its chains agree (split rank-normalised R-hat within what :attr:`min_ess`
    effective draws allow, :func:`matched_r_hat`, on every variance component and every reported quantity,
    bulk ESS >= :attr:`min_ess` on each of them, no divergence) and (b) the Monte Carlo standard error
    (:func:`mcse_quantile`) of every
    quantile the analysis takes from each reported quantity (:attr:`probs`: the Erho2 median, and the
    interval ends where they are reported) is at most the tolerance: :attr:`share` x the spread of that
    number across the analysis's refits so far (:class:`SpreadTracker`, by :attr:`group`), never above
    :attr:`max_mcse` (and :attr:`max_mcse` until :data:`PRECISION_MIN_SPREAD` refits of the group are in).
    A frozen value: part of the refit's cache key (:meth:`to_dict`).

    Attributes
    ----------
    group
        What the refits of one spread are (``"projected"``: the training fits of hold-out splits;
        ``"held-out"``; ``"stratum"``).
    probs
        The quantiles the analysis takes (0.5: the median; 0.025 and 0.975: a 95% interval's ends).
    max_mcse, share, min_ess
        :data:`PRECISION_MAX_MCSE`, :data:`PRECISION_SPREAD_SHARE`, :data:`PRECISION_MIN_ESS`.
    r_hat
        :data:`PRECISION_R_HAT`: ``"matched"`` (the R-hat threshold :func:`matched_r_hat` of ``min_ess`` at
        each look) or ``"fixed"`` (1.01).
    """

    group: str = "refits"
    probs: tuple = (0.5,)
    max_mcse: float = PRECISION_MAX_MCSE
    share: float = PRECISION_SPREAD_SHARE
    min_ess: float = PRECISION_MIN_ESS
    r_hat: str = PRECISION_R_HAT

    def __post_init__(self):
        if not (np.isfinite(self.max_mcse) and self.max_mcse > 0):
            raise ValueError(f"precision rule: max_mcse should be a positive number, got {self.max_mcse!r}")
        if not all(0 < p < 1 for p in self.probs) or not self.probs:
            raise ValueError(f"precision rule: probs should be quantiles in (0, 1), got {self.probs!r}")
        if self.r_hat not in ("matched", "fixed"):
            raise ValueError(f"precision rule: r_hat should be 'matched' or 'fixed', got {self.r_hat!r}")

    def max_r_hat(self, chains: int, draws: int) -> float:
        """The R-hat a look at ``draws`` per chain of ``chains`` chains accepts (module constants' note)."""
        return matched_r_hat(chains, draws, self.min_ess) if self.r_hat == "matched" else float(MAX_R_HAT)

    def r_hat_words(self) -> str:
        """``"R-hat within what 100 effective draws allow"`` or ``"R-hat <= 1.01"``."""
        if self.r_hat == "matched":
            return f"R-hat within what {self.min_ess:g} effective draws allow (Vats and Knudson 2021)"
        return f"R-hat <= {MAX_R_HAT}"

    def tolerance(self, spread: float | None) -> float:
        """``min(max_mcse, share x spread)``; ``max_mcse`` when the spread is not known yet (None, NaN)."""
        if spread is None or not np.isfinite(spread) or spread <= 0:
            return float(self.max_mcse)
        return float(min(self.max_mcse, self.share * spread))

    def to_dict(self) -> dict:
        return {"rule": "precision", "group": self.group, "probs": [float(p) for p in self.probs],
                "max_mcse": float(self.max_mcse), "share": float(self.share), "min_ess": float(self.min_ess),
                "r_hat": self.r_hat}

    def describe(self) -> str:
        """The rule in words (notes, --json, the sheet)."""
        what = " and ".join(_quantile_words(p) for p in self.probs)
        return (f"the precision rule: chains agree ({self.r_hat_words()} on every component, bulk ESS >= "
                f"{self.min_ess:g}, no divergence) and the Monte Carlo SE of the {what} of Erho2 <= "
                f"{self.share:g} x its spread across refits, at most {self.max_mcse:g} (Vehtari et al. 2021)")


def _quantile_words(p: float) -> str:
    return "median" if p == 0.5 else f"{100 * p:g}% quantile"


class SpreadTracker:
    """The numbers the refits of an analysis have reported so far, by :attr:`PrecisionRule.group`, and the
    tolerance they give (:meth:`PrecisionRule.tolerance` of their SD): the precision rule's tolerance as
    the splits (or strata) accumulate.  Seeded with refits reopened from the cache, fed by each refit as
    it stops (:func:`check_precision`'s ``values``)."""

    def __init__(self):
        self.values: dict[str, list[float]] = {}

    def add(self, group: str, value: float) -> None:
        if np.isfinite(value):
            self.values.setdefault(group, []).append(float(value))

    def spread(self, group: str) -> float | None:
        """SD (ddof 1) of the group's numbers; None with fewer than :data:`PRECISION_MIN_SPREAD`."""
        v = self.values.get(group, [])
        return float(np.std(v, ddof=1)) if len(v) >= PRECISION_MIN_SPREAD else None

    def tolerance(self, rule: PrecisionRule) -> float:
        return rule.tolerance(self.spread(rule.group))


def check_precision(sigma: np.ndarray, divergences: int, names, quantities, spec, rule: PrecisionRule,
                    tolerance: float | None = None, log_cols=()) -> GateCheck:
    """The precision rule (:class:`PrecisionRule`) on the draws so far of a refit that reports ``quantities``.

    Passes when every variance component and every reported quantity has split R-hat within the rule's
    threshold (:meth:`PrecisionRule.max_r_hat`: what ``rule.min_ess`` effective draws allow) and
    bulk ESS >= ``rule.min_ess``, nothing diverged, and the MCSE of each quantile ``rule.probs`` of each
    quantity is <= ``tolerance`` (``rule.max_mcse`` when None).  The check's :attr:`GateCheck.max_mcse`
    is the largest of those MCSEs, :attr:`GateCheck.tolerance` the tolerance and
    :attr:`GateCheck.values` each quantity's median (what a :class:`SpreadTracker` accumulates).

    Unlike :func:`check_gate` this is a rule on the precision of an estimate, not only on the mixing; the
    safeguards against a lucky stop are the same (a minimum run length, few looks), and the
    tolerance is a tenth of what the analysis compares, so a stop at a lucky fluctuation moves a
    result by a small share of its own spread (tests/model/test_precision_rule.py).
    """
    sigma = np.asarray(sigma, np.float64)
    C, n, K = sigma.shape
    names = list(names)
    tol = float(rule.max_mcse if tolerance is None else tolerance)
    max_r_hat = rule.max_r_hat(C, n)
    reasons, rh_all, eb_all, et_all, mc, vals = [], [], [], [], [], []
    for k in range(K):  # the components: R-hat and the bulk ESS that makes it trustworthy
        r, eb, _ = _series_check(sigma[:, :, k], f"sigma[{names[k]}]", max_r_hat, None, reasons)
        eb = ess_bulk(sigma[:, :, k])
        if not eb >= rule.min_ess:
            reasons.append(f"bulk ESS of sigma[{names[k]}] {eb:.0f}")
        rh_all.append(r)
        eb_all.append(eb)
    by_term = reported_sigma(sigma, names, log_cols)
    for q in quantities:
        x = np.asarray(q.draws(by_term, spec), np.float64).reshape(C, n)
        r, _, _ = _series_check(x, q.label, max_r_hat, None, reasons)
        eb = ess_bulk(x)
        if not eb >= rule.min_ess:
            reasons.append(f"bulk ESS of {q.label} {eb:.0f}")
        rh_all.append(r)
        eb_all.append(eb)
        for p in rule.probs:
            m = mcse_quantile(x, p)
            mc.append(m)
            if not m <= tol:
                reasons.append(f"MCSE of the {_quantile_words(p)} of {q.label} {m:.4f} > {tol:.4f}")
        vals.append(float(np.median(x)))
    chk = _gate_check(n, rh_all, eb_all, et_all, divergences, reasons, on=tuple(q.label for q in quantities))
    chk.max_mcse = max(mc) if mc else float("nan")
    chk.tolerance = tol
    chk.agree = rule.r_hat_words()
    chk.values = tuple(vals)
    return chk


def next_check(done: int, check_every: int, max_draws: int) -> int:
    """Draws per chain at the next look: ``check_every`` more, at most the ceiling."""
    return min(done + check_every, max_draws)


def projected_draws(check: GateCheck, min_ess: float = STOP_ESS_MARGIN * MIN_ESS_BULK,
                    check_every: int = 50, max_draws: int | None = None) -> int:
    """Draws per chain the run will probably need: ESS grows about linearly with the draws of
    chains that have forgotten their start, so ``draws x min_ess / (smallest ESS)``, rounded up
    to a look; at least the next look, at most the ceiling.  For the progress bar's total and ETA."""
    n = check.draws
    e = check.min_ess
    need = n + check_every
    if np.isfinite(e) and e > 0:
        need = max(need, int(math.ceil(n * min_ess / e / check_every - 1e-9)) * check_every)
    return int(min(need, max_draws)) if max_draws else int(need)


def stop_note(check: GateCheck | None, why: str, draws: int, settings) -> str:
    """The line a posterior's notes carry about how its run length was set."""
    floor = f"at least {settings.draws}, at most {settings.max_draws} draws per chain"
    if settings.max_seconds is not None:
        floor += f" or {settings.max_seconds:g} s of sampling"
    head = f"run length by the gate ({floor}, checked every {settings.check_every})"
    if why == "passed" and check is not None and np.isfinite(check.max_mcse):
        return (f"{head}: stopped at {draws} draws per chain under the precision rule: the chains agree ("
                f"{check.agree or f'R-hat <= {MAX_R_HAT}'}, bulk ESS >= {PRECISION_MIN_ESS} on every component and "
                f"on {'; '.join(check.on)}; no "
                f"divergence) and the largest MCSE of what the analysis takes is {check.max_mcse:.4f} <= "
                f"{check.tolerance:.4f}")
    if why == "passed" and check is not None and check.on:
        return (f"{head}: stopped at {draws} draws per chain, when the reported {'; '.join(check.on)} passed "
                f"(R-hat <= {MAX_R_HAT}, bulk and tail ESS >= {STOP_ESS_MARGIN:g} x {MIN_ESS_BULK}) and every "
                f"component's R-hat <= {MAX_R_HAT}, no divergence")
    if why == "passed":
        return f"{head}: stopped at {draws} draws per chain, when every component passed"
    if why == "diverged":
        return f"{head}: stopped at {draws} draws per chain after a divergent transition (more draws do not remove it)"
    what = "the draws ceiling" if why == "max_draws" else "the time ceiling"
    left = "" if check is None else f" ({'; '.join(check.reasons[:3])}{'; ...' if len(check.reasons) > 3 else ''})"
    return f"{head}: reached {what} at {draws} draws per chain without passing{left}"
