"""Posterior ranks, dominance and rank agreement of latent model capabilities (SPEC sec. 5).

The input is a matrix of latent-capability draws ``theta`` of shape ``(S,
n_models)``; the caller forms it (``theta_mb = u_m + u_bm`` for benchmark ``b``
of a pooled fit, ``u_m`` for a per-benchmark fit or the leaderboard universe
score; seed 000 (Hardy et al. 2026) sec. 3.5).  Higher ``theta`` is better; rank 1 is the best.

Conventions
-----------
* Ranks within a draw are ordinal; exact ties (probability zero for
  continuous draws) are broken by column order, so every draw is a
  permutation and each row of the rank distribution sums to 1.
* ``P(theta_m > theta_m')`` counts an exact tie as one half, so the
  dominance matrix satisfies ``P + P^T = 1`` exactly off the diagonal; the
  diagonal is 0.5 and never enters global dominance.
* Rank correlations use average ranks for ties; Kendall's tau is tau-b.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from .reliability import Summary, summarize, to_jsonable

__all__ = [
    "RankDistribution",
    "RankAnalysis",
    "RankAgreement",
    "draw_ranks",
    "rank_distribution",
    "dominance_matrix",
    "global_dominance",
    "rank_analysis",
    "rank_values",
    "kendall_tau",
    "spearman_rho",
    "ranking_agreement",
]


def _check_theta(theta, models: Sequence[str] | None) -> tuple[np.ndarray, list[str]]:
    t = np.asarray(theta, dtype=np.float64)
    if t.ndim == 1:
        t = t[None, :]
    if t.ndim != 2 or t.shape[1] < 1:
        raise ValueError(f"theta should be an array of shape (draws, models), got shape {np.shape(theta)}")
    if not np.isfinite(t).all():
        s, m = map(int, np.argwhere(~np.isfinite(t))[0])
        raise ValueError(f"theta has a non-finite value at draw {s}, model column {m}; drop or fix that draw")
    if models is None:
        models = [f"model {k + 1}" for k in range(t.shape[1])]
    models = [str(m) for m in models]
    if len(models) != t.shape[1]:
        raise ValueError(f"{len(models)} model names for {t.shape[1]} columns of theta; give one name per column")
    if len(set(models)) != len(models):
        dup = sorted({m for m in models if models.count(m) > 1})
        raise ValueError(f"model names repeat ({', '.join(dup)}); each column needs its own name")
    return t, models


def draw_ranks(theta) -> np.ndarray:
    """Ordinal ranks per draw, ``(S, M)`` integers, 1 = largest ``theta``."""
    t, _ = _check_theta(theta, None)
    order = np.argsort(-t, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, t.shape[1] + 1)[None, :].repeat(t.shape[0], 0), axis=1)
    return ranks


@dataclass
class RankDistribution:
    """Posterior distribution of each model's rank.

    Attributes
    ----------
    models
        Model names (column order of theta).
    probabilities
        ``(M, M)``: ``probabilities[m, r - 1] = P(rank of m = r | y)``; rows sum to 1.
    mean_rank, median_rank
        ``(M,)`` posterior mean and median rank.
    interval95
        ``(M, 2)`` equal-tailed 95% rank interval (2.5% and 97.5% order statistics).
    """

    models: list[str]
    probabilities: np.ndarray
    mean_rank: np.ndarray
    median_rank: np.ndarray
    interval95: np.ndarray

    def to_dict(self) -> dict:
        return to_jsonable({"models": self.models, "probabilities": self.probabilities,
                            "mean_rank": self.mean_rank, "median_rank": self.median_rank,
                            "interval95": self.interval95})


def _order_stat(sorted_x: np.ndarray, q: float) -> np.ndarray:
    """The q-quantile as an order statistic (no interpolation): smallest x with ECDF >= q."""
    n = sorted_x.shape[-1]
    k = min(max(int(np.ceil(q * n)) - 1, 0), n - 1)
    return sorted_x[..., k]


def rank_distribution(theta, models: Sequence[str] | None = None) -> RankDistribution:
    """Posterior rank distribution and rank intervals (seed 000 Figs. 11-13).

    Parameters
    ----------
    theta
        ``(S, M)`` latent-capability draws.
    models
        Names of the M columns.
    """
    t, models = _check_theta(theta, models)
    s, m = t.shape
    ranks = draw_ranks(t)
    probs = np.zeros((m, m))
    for j in range(m):  # one bincount per model: M passes over S, no (S, M, M) array
        probs[j] = np.bincount(ranks[:, j] - 1, minlength=m) / s
    sr = np.sort(ranks, axis=0).T.astype(np.float64)
    med = np.where(s % 2, sr[:, s // 2], 0.5 * (sr[:, (s - 1) // 2] + sr[:, s // 2]))
    interval = np.column_stack([_order_stat(sr, 0.025), _order_stat(sr, 0.975)])
    return RankDistribution(models, probs, ranks.mean(axis=0), med, interval)


def dominance_matrix(theta) -> np.ndarray:
    """Pairwise dominance ``P[m, m'] = P(theta_m > theta_m' | y)`` (seed 000 Fig. 13).

    Exact ties count one half, so ``P + P.T == 1`` off the diagonal; the
    diagonal is 0.5.
    """
    t, _ = _check_theta(theta, None)
    s, m = t.shape
    p = np.empty((m, m))
    for j in range(m):  # (S, M) per row keeps memory at S*M
        col = t[:, j:j + 1]
        p[j] = (np.count_nonzero(col > t, axis=0) + 0.5 * np.count_nonzero(col == t, axis=0)) / s
    return p


def global_dominance(dominance: np.ndarray) -> np.ndarray:
    """Global dominance: mean over ``m' != m`` of ``P(theta_m > theta_m')`` (seed 000 Fig. 14)."""
    p = np.asarray(dominance, dtype=np.float64)
    m = p.shape[0]
    if p.shape != (m, m):
        raise ValueError(f"dominance matrix should be square, got shape {p.shape}")
    if m < 2:
        return np.full(m, 0.5)
    return (p.sum(axis=1) - np.diag(p)) / (m - 1)


@dataclass
class RankAnalysis:
    """Ranks and dominance of one set of models, ordered for the rank-dominance heatmap.

    Attributes
    ----------
    models
        Model names in the input column order.
    ranks
        :class:`RankDistribution`.
    dominance
        ``(M, M)`` pairwise dominance in input order.
    global_dominance
        ``(M,)`` in input order.
    order
        Column indices sorted by global dominance, most dominant first (ties: by mean rank, then name).
    parts
        None for a connected design.  Otherwise the model names of each
        connected part (:func:`~.rank_parts.model_parts`): ranks, dominance and
        global dominance are then computed within each part only, a dominance
        between two parts is NaN (not identified, never reported), and
        ``order`` runs through the parts one after another.
    part_reasons
        One sentence per part saying why it is ranked on its own (empty when connected).
    """

    models: list[str]
    ranks: RankDistribution
    dominance: np.ndarray
    global_dominance: np.ndarray
    order: np.ndarray
    parts: list[list[str]] | None = None
    part_reasons: list[str] = field(default_factory=list)

    @property
    def part_of(self) -> np.ndarray:
        """``(M,)`` index of each model's part (all 0 when connected)."""
        out = np.zeros(len(self.models), dtype=np.int64)
        for k, p in enumerate(self.parts or []):
            for m in p:
                out[self.models.index(m)] = k
        return out

    @property
    def ordered_models(self) -> list[str]:
        return [self.models[k] for k in self.order]

    @property
    def ordered_dominance(self) -> np.ndarray:
        """The dominance matrix with rows and columns in heatmap order."""
        return self.dominance[np.ix_(self.order, self.order)]

    @property
    def ordered_rank_probabilities(self) -> np.ndarray:
        """Rank-probability rows in heatmap order (columns are ranks 1..M)."""
        return self.ranks.probabilities[self.order]

    def to_dict(self) -> dict:
        out = {"models": self.models, "ranks": self.ranks.to_dict(), "dominance": self.dominance,
               "global_dominance": self.global_dominance, "order": self.order,
               "ordered_models": self.ordered_models}
        if self.parts is not None:  # cross-part dominance is NaN -> null in JSON
            out.update(parts=self.parts, part_reasons=self.part_reasons)
        return to_jsonable(out)


def _rank_analysis_by_part(t: np.ndarray, models: list[str], parts: Sequence[Sequence[str]]) -> RankAnalysis:
    """Each part ranked on its own and put side by side (cross-part dominance NaN); see :func:`rank_analysis`."""
    from .rank_parts import part_reasons

    parts = [[str(m) for m in p] for p in parts]
    flat = [m for p in parts for m in p]
    if sorted(flat) != sorted(models):
        raise ValueError(f"the parts should hold each of the {len(models)} models once; they hold {len(flat)} "
                         f"names ({', '.join(sorted(set(flat) ^ set(models))[:6]) or 'repeats'} differ)")
    m = len(models)
    probs, mean_rank, med, interval = np.zeros((m, m)), np.empty(m), np.empty(m), np.empty((m, 2))
    dom, glob, order = np.full((m, m), np.nan), np.empty(m), []
    for p in parts:
        idx = np.array([models.index(x) for x in p], dtype=np.int64)
        sub = rank_analysis(t[:, idx], p)
        n = len(idx)
        probs[np.ix_(idx, np.arange(n))] = sub.ranks.probabilities
        mean_rank[idx], med[idx], interval[idx] = sub.ranks.mean_rank, sub.ranks.median_rank, sub.ranks.interval95
        dom[np.ix_(idx, idx)] = sub.dominance
        glob[idx] = sub.global_dominance
        order.extend(idx[sub.order].tolist())
    rd = RankDistribution(models, probs, mean_rank, med, interval)
    return RankAnalysis(models, rd, dom, glob, np.array(order, dtype=np.int64), parts, part_reasons(parts))


def rank_analysis(theta, models: Sequence[str] | None = None,
                  parts: Sequence[Sequence[str]] | None = None) -> RankAnalysis:
    """Rank distribution, dominance matrix, global dominance and heatmap order (seed 000 Figs. 13-14).

    Parameters
    ----------
    theta, models
        ``(S, M)`` latent-capability draws and the names of the M columns.
    parts
        The connected parts of a disconnected design (:func:`~.rank_parts.model_parts`).
        Contrasts between parts are not identified (seed 000 App. E), so each
        part is ranked on its own: the result for a part equals
        ``rank_analysis`` of that part's columns alone, and every dominance
        between parts is NaN.  None or a single part: all models together.
    """
    t, models = _check_theta(theta, models)
    if parts is not None and len(parts) > 1:
        return _rank_analysis_by_part(t, models, parts)
    rd = rank_distribution(t, models)
    p = dominance_matrix(t)
    g = global_dominance(p)
    order = np.array(sorted(range(len(models)), key=lambda k: (-g[k], rd.mean_rank[k], models[k])), dtype=np.int64)
    return RankAnalysis(models, rd, p, g, order)


# ---------------------------------------------------------------------------
# Rank agreement
# ---------------------------------------------------------------------------

def rankdata(a, **kwargs) -> np.ndarray:
    """:func:`scipy.stats.rankdata`, imported when first called: importing scipy.stats costs about a second
    of CPU, and every command that reaches the D-study imports this module (``ddr dstudy --preview``
    ranks nothing)."""
    from scipy.stats import rankdata as scipy_rankdata

    return scipy_rankdata(a, **kwargs)


def rank_values(x, higher_is_better: bool = True) -> np.ndarray:
    """Ranks 1 = best with average ranks for ties."""
    x = np.asarray(x, dtype=np.float64)
    return rankdata(-x if higher_is_better else x, method="average")


def kendall_tau(x, y) -> float:
    """Kendall's tau-b between two score vectors (ties allowed); NaN if either is constant."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"kendall_tau needs two 1-D arrays of one length, got {x.shape} and {y.shape}")
    i, j = np.triu_indices(len(x), 1)
    sx, sy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    den = np.sqrt(np.count_nonzero(sx) * np.count_nonzero(sy))
    return float(np.dot(sx, sy) / den) if den > 0 else float("nan")


def spearman_rho(x, y) -> float:
    """Spearman's rho (Pearson correlation of average ranks); NaN if either is constant."""
    rx, ry = rankdata(np.asarray(x, dtype=np.float64)), rankdata(np.asarray(y, dtype=np.float64))
    rx, ry = rx - rx.mean(), ry - ry.mean()
    den = np.sqrt(np.dot(rx, rx) * np.dot(ry, ry))
    return float(np.dot(rx, ry) / den) if den > 0 else float("nan")


def _kendall_draws(t: np.ndarray, y: np.ndarray, chunk: int = 512) -> np.ndarray:
    i, j = np.triu_indices(len(y), 1)
    sy = np.sign(y[i] - y[j])
    ny = np.count_nonzero(sy)
    out = np.empty(t.shape[0])
    for a in range(0, t.shape[0], chunk):
        sx = np.sign(t[a:a + chunk, i] - t[a:a + chunk, j])
        den = np.sqrt(np.count_nonzero(sx, axis=1) * ny)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[a:a + chunk] = (sx @ sy) / den
    return out


def _spearman_draws(t: np.ndarray, y: np.ndarray) -> np.ndarray:
    rx = rankdata(t, axis=1)
    ry = rankdata(y)
    rx -= rx.mean(axis=1, keepdims=True)
    ry = ry - ry.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx @ ry) / np.sqrt((rx * rx).sum(axis=1) * np.dot(ry, ry))


@dataclass
class RankAgreement:
    """Agreement between the latent ranking and a reference ranking (seed 000 Tables 3 and 10).

    Attributes
    ----------
    models
        Models compared (present in both), in posterior column order.
    kendall_tau, spearman_rho
        Between the posterior-mean ``theta`` and the reference scores.
    kendall_draws, spearman_draws
        Posterior summaries of the same correlations computed per draw of ``theta``.
    missing_in_reference
        Posterior models the reference lacks (left out of the comparison).
    missing_in_posterior
        Reference models the posterior lacks (left out of the comparison).
    kind
        ``"score"`` (higher is better) or ``"rank"`` (1 is best) for the reference.
    """

    models: list[str]
    kendall_tau: float
    spearman_rho: float
    kendall_draws: Summary
    spearman_draws: Summary
    missing_in_reference: list[str] = field(default_factory=list)
    missing_in_posterior: list[str] = field(default_factory=list)
    kind: str = "score"

    @property
    def n_models(self) -> int:
        return len(self.models)

    def to_dict(self) -> dict:
        return to_jsonable({"models": self.models, "n_models": self.n_models, "kendall_tau": self.kendall_tau,
                            "spearman_rho": self.spearman_rho, "kendall_draws": self.kendall_draws.to_dict(),
                            "spearman_draws": self.spearman_draws.to_dict(),
                            "missing_in_reference": self.missing_in_reference,
                            "missing_in_posterior": self.missing_in_posterior, "kind": self.kind})


def ranking_agreement(theta, reference: Mapping[str, float] | Sequence[float], models: Sequence[str] | None = None,
                      kind: str = "score") -> RankAgreement:
    """Kendall tau-b and Spearman rho between the latent ranking and a reference ranking.

    Parameters
    ----------
    theta
        ``(S, M)`` latent-capability draws.
    reference
        An observed mean-score ranking aligned with the columns (a sequence of
        M numbers), or an external ranking ``{model: rank or score}`` (seed 000
        Table 3).  Models on one side only are listed in the result, not
        dropped silently.
    models
        Names of the columns of ``theta`` (needed for a mapping reference).
    kind
        ``"score"``: higher is better; ``"rank"``: 1 is best (turned into scores
        by negation before correlating).

    Returns
    -------
    RankAgreement
        The point values use the posterior mean of ``theta`` (the latent
        ranking); the per-draw summaries carry the posterior uncertainty of
        the latent ranking (the reference is taken as fixed).

    Raises
    ------
    ValueError
        Fewer than two models in common, an unknown ``kind``, or a reference
        of the wrong length.
    """
    if kind not in ("score", "rank"):
        raise ValueError(f"kind should be 'score' (higher is better) or 'rank' (1 is best), got {kind!r}")
    t, models = _check_theta(theta, models)
    if isinstance(reference, Mapping):
        ref = {str(k): float(v) for k, v in reference.items()}
        keep = [k for k, m in enumerate(models) if m in ref]
        missing_ref = [m for m in models if m not in ref]
        missing_post = sorted(set(ref) - set(models))
        y = np.array([ref[models[k]] for k in keep], dtype=np.float64)
    else:
        y = np.asarray(reference, dtype=np.float64)
        if y.shape != (t.shape[1],):
            raise ValueError(f"reference has {y.size} values for {t.shape[1]} models; give one per column of theta "
                             "or a mapping {model: value}")
        keep = [k for k in range(len(models)) if np.isfinite(y[k])]
        missing_ref = [models[k] for k in range(len(models)) if not np.isfinite(y[k])]
        missing_post = []
        y = y[keep]
    if len(keep) < 2:
        raise ValueError(f"only {len(keep)} model(s) in common between the posterior and the reference; "
                         "need at least 2 (check that model names match)")
    if not np.isfinite(y).all():
        raise ValueError("reference has a non-finite value; drop that model or fix its value")
    if kind == "rank":
        y = -y
    tk = t[:, keep]
    point = tk.mean(axis=0)
    return RankAgreement([models[k] for k in keep], kendall_tau(point, y), spearman_rho(point, y),
                         summarize(_kendall_draws(tk, y)), summarize(_spearman_draws(tk, y)),
                         missing_ref, missing_post, kind)
