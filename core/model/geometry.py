"""A quick look at the posterior before sampling: rough variance components, a mode, and the
per-level parameterisation that NUTS samples.

Nothing here changes the model: it only chooses *coordinates* (how far each random
intercept is centred), the starting point and the initial mass matrix, all of which
affect speed, not the posterior.

Rough fit
    Penalised IRLS by backfitting (one exact 1-D Newton step per level of each term in
    turn, the others held fixed) for the conditional mode of (mu, u) given sigma, then an
    EM-like update ``sigma_k^2 = (|u_k|^2 + sum_j 1/h_kj) / J_k`` with h the conditional
    precision, repeated.  This is penalised quasi-likelihood (PQL) in spirit; PQL is biased
    low for binary data, which is harmless for a starting point.

Per-level partial centring (after Papaspiliopoulos, Roberts and Skold 2003; Gorinova et al. 2020)
    ``u_kj = a_kj(sigma_k) x_kj`` with ``a = sigma / sqrt(1 + sigma^2 I_kj)`` and ``I_kj`` the
    Fisher information of level j at the rough mode (sum over its cells of n p (1 - p)):
    the conditional posterior sd of u_kj given sigma_k in the Gaussian approximation, so x_kj
    has unit scale whatever sigma is.  It is the centred parameterisation where
    sigma^2 I >> 1 (levels the data pin down), the non-centred one where sigma^2 I << 1
    (levels the prior dominates), and it moves between them as sigma moves, which is what
    removes the funnel at both ends.  (A fixed power ``sigma^(1 - lambda)`` with
    lambda = kappa/(1+kappa) at the rough sigma, the VIP form, was tried first: it matches at
    the rough sigma only, and TB2 diverged where sigma_scaffold went below 0.05.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .design_matrix import DesignMatrix


@dataclass
class RoughFit:
    """Rough (PQL-like) estimates at the conditional mode.

    Attributes
    ----------
    sigma
        (n_terms,) rough standard deviations.
    mu
        Intercept at the mode.
    u
        One array per term: the conditional mode of the random intercepts.
    info
        One array per term: Fisher information of each level at the mode (sum n p (1-p)).
    precision
        One array per term: conditional posterior precision of each level, info + 1/sigma^2.
    total_info
        Sum of n p (1 - p) over all cells.
    iterations
        Backfitting sweeps used.
    """

    sigma: np.ndarray
    mu: float
    u: list[np.ndarray]
    info: list[np.ndarray]
    precision: list[np.ndarray]
    total_info: float
    iterations: int


def _expit(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def rough_fit(design: DesignMatrix, sigma0: float = 1.0, outer: int = 12, sweeps: int = 6,
              sigma_floor: float = 0.05) -> RoughFit:
    """Rough variance components and the conditional mode (see the module docstring).

    Parameters
    ----------
    design
        The coded cells.
    sigma0
        Starting standard deviation of every term.
    outer, sweeps
        EM-like sigma updates and backfitting sweeps between them.
    sigma_floor
        Smallest rough sigma (keeps the penalty of a vanishing term finite).
    """
    y = design.successes.astype(float)
    n = design.trials.astype(float)
    K = design.n_terms
    J = design.n_levels
    codes = design.codes
    sigma = np.full(K, float(sigma0))
    u = [np.zeros(int(j)) for j in J]
    pbar = (y.sum() + 0.5) / (n.sum() + 1.0)
    mu = float(np.log(pbar / (1 - pbar)))
    eta = np.full(len(y), mu)
    h = [np.ones(int(j)) for j in J]
    it = 0
    for o in range(outer):
        for _ in range(sweeps):
            it += 1
            for k in range(K):
                p = _expit(eta)
                r = y - n * p
                W = n * p * (1 - p)
                g = np.bincount(codes[k], weights=r, minlength=J[k]) - u[k] / sigma[k] ** 2
                hk = np.bincount(codes[k], weights=W, minlength=J[k]) + 1.0 / sigma[k] ** 2
                step = np.clip(g / hk, -2.0, 2.0)
                u[k] += step
                eta += step[codes[k]]
                h[k] = hk
            p = _expit(eta)
            step = float(np.clip((y - n * p).sum() / max((n * p * (1 - p)).sum(), 1e-9), -2, 2))
            mu += step
            eta += step
        # EM-like update of the variance components (Laplace variances, diagonal approximation)
        new = np.sqrt([(np.sum(u[k] ** 2) + np.sum(1.0 / h[k])) / J[k] for k in range(K)])
        new = np.maximum(new, sigma_floor)
        done = np.max(np.abs(np.log(new / sigma))) < 0.01
        sigma = new
        if done and o >= 2:
            break
    p = _expit(eta)
    W = n * p * (1 - p)
    info = [np.bincount(codes[k], weights=W, minlength=J[k]) for k in range(K)]
    precision = [info[k] + 1.0 / sigma[k] ** 2 for k in range(K)]
    return RoughFit(sigma=sigma, mu=mu, u=u, info=info, precision=precision, total_info=float(W.sum()),
                    iterations=it)


def level_scales(rough: RoughFit, mode: str = "auto") -> list[tuple[np.ndarray, np.ndarray]]:
    """Per-level constants (c0, c1) of the scale ``a_j(sigma) = sigma / sqrt(c0_j + c1_j sigma^2)``.

    NUTS samples x_j with u_j = a_j(sigma) x_j (then mean-centred, see the sampler).

    ``"auto"``
        c0 = 1, c1 = I_j (the Fisher information of level j at the rough mode):
        a_j = sigma / sqrt(1 + sigma^2 I_j) is the conditional posterior sd of u_j given sigma
        in the Gaussian approximation, so x_j has unit posterior scale *for every sigma*:
        centred where sigma^2 I_j >> 1, non-centred where << 1, and in between.
    ``"term"``
        One choice per term: centred (c0=0, c1=1, a=1) when the median sigma^2 I_j exceeds 1,
        else non-centred (c0=1, c1=0, a=sigma).
    ``"centered"``, ``"noncentered"``
        Every level alike.
    """
    out = []
    for k, info in enumerate(rough.info):
        one, zero = np.ones_like(info), np.zeros_like(info)
        if mode == "auto":
            out.append((one, info.astype(float)))
        elif mode == "term":
            centred = float(np.median(rough.sigma[k] ** 2 * info)) > 1.0
            out.append((zero, one) if centred else (one, zero))
        elif mode == "centered":
            out.append((zero, one))
        elif mode == "noncentered":
            out.append((one, zero))
        else:
            raise ValueError(f"unknown parameterisation '{mode}'; use auto, term, centered or noncentered.")
    return out


def log_scale(log_sigma, c0, c1, xp=np):
    """log a(sigma) = log sigma - log(c0 + c1 sigma^2) / 2 (numpy or jax.numpy via ``xp``)."""
    return log_sigma - 0.5 * xp.log(c0 + c1 * xp.exp(2.0 * log_sigma))


@dataclass
class CollapsedGroup:
    """Terms that are constant within the levels of one "top" term, for the collapsed move.

    Every term k of the group has facets inside the top term's facets, so the top term's
    levels ("runs", e.g. the benchmark:model:scaffold runs of seed 000 Eq. 6) carry the sum
    ``r = sum_{k in G} Z_k u_k``, whose prior is N(0, C(sigma)) with
    ``C = sum_k sigma_k^2 Z_k Z_k'`` (n_runs x n_runs, positive definite because the top
    term contributes sigma_top^2 I).

    Attributes
    ----------
    terms
        Indices (in the design) of the group's terms; ``terms[0]`` is the top term.
    run_levels
        (len(terms), n_runs) level of each term on each run.
    overlap
        (len(terms), n_runs, n_runs) float32: Z_k Z_k' (1 where two runs share the level).
    """

    terms: tuple[int, ...]
    run_levels: np.ndarray
    overlap: np.ndarray

    @property
    def n_runs(self) -> int:
        return int(self.run_levels.shape[1])


def collapsed_group(design: DesignMatrix, term_columns: list[tuple[str, ...]],
                    max_runs: int = 1200) -> CollapsedGroup | None:
    """The largest group of terms nested in one term with at most ``max_runs`` levels.

    Returns None when no term with at most ``max_runs`` levels contains another term.
    """
    best = None
    for t, cols in enumerate(term_columns):
        J = int(design.n_levels[t])
        if J > max_runs:
            continue
        members = [k for k, c in enumerate(term_columns) if k != t and set(c) <= set(cols)]
        if not members:
            continue
        key = (len(members), -J)
        if best is None or key > best[0]:
            best = (key, t, members)
    if best is None:
        return None
    _, t, members = best
    terms = (t, *members)
    J = int(design.n_levels[t])
    run_levels = np.zeros((len(terms), J), np.int32)
    for i, k in enumerate(terms):
        run_levels[i, design.codes[t]] = design.codes[k]
    overlap = np.stack([(rl[:, None] == rl[None, :]).astype(np.float32) for rl in run_levels])
    return CollapsedGroup(terms=terms, run_levels=run_levels, overlap=overlap)
