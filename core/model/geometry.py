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


#: A term is centred on its host only where that takes the host out of the likelihood: where the
#: host's levels lose most of their information to it (information-weighted mean of the ratio
#: of conditional precisions before and after, :func:`nested_information`, at least this).  A
#: variance ratio of 10 is an sd ratio of about 3, from where a diagonal mass matrix starts to
#: cost leapfrog steps.  Measured ratios: benchmark:task -> benchmark 103 on BRIDGE and 17.5 on
#: the HAL-scale simulation (hosted); every other pair 1.1-5.4 on BRIDGE, HAL and Terminal-Bench 2.0,
#: where hosting task:model and task:scaffold on task cost a third of TB2's bulk ESS (not hosted).
MIN_ABSORBED_RATIO = 10.0


def absorbed_ratio(design: DesignMatrix, rough: RoughFit, terms: list[int], child: int, host: int,
                   level_map: np.ndarray) -> float:
    """How much of its information the host term's levels lose when ``child`` is centred on them.

    The information-weighted mean over the host's levels of
    ``(I_raw + 1/sigma^2) / (I_eff + 1/sigma^2)``, with I_eff from :func:`nested_information` for
    that one pair.  Positions index ``terms``.
    """
    chains = [[] for _ in terms]
    chains[child] = [(host, level_map)]
    eff = nested_information(design, rough, terms, chains)[host]
    k = terms[host]
    raw = rough.info[k]
    s2 = rough.sigma[k] ** 2
    ratio = (raw + 1.0 / s2) / (eff + 1.0 / s2)
    return float(np.sum(raw * ratio) / max(np.sum(raw), 1e-300))


def host_chains(design: DesignMatrix, term_columns, terms: list[int], rough: RoughFit | None = None,
                min_ratio: float = MIN_ABSORBED_RATIO) -> list[list[tuple[int, np.ndarray]]]:
    """Each NUTS term's chain of hosts for nested centring (:mod:`.parameterisation`, item 11).

    The candidate host of a term is the term with the most levels among those whose facets are
    a strict subset of its own (benchmark:task -> benchmark, benchmark:task:scaffold ->
    benchmark:task).  With ``rough`` given, a candidate is kept only where
    :func:`absorbed_ratio` reaches ``min_ratio``; the chain follows kept hosts to a root.  One
    host per term, never all ancestors: a term nested in two crossed terms
    (benchmark:task:scaffold in benchmark:task and in benchmark:scaffold) subtracting both would
    count their common ancestor twice.

    Returns, per position in ``terms``, a list of (ancestor position, level map) with
    ``map[level of the term] = level of the ancestor``.
    """
    cols = [set(term_columns[k]) for k in terms]
    J = design.n_levels

    def level_map(p, q):
        m = np.zeros(int(J[terms[p]]), np.int32)
        m[design.codes[terms[p]]] = design.codes[terms[q]]
        return m

    host = {}
    for p, k in enumerate(terms):
        anc = [q for q in range(len(terms)) if cols[q] < cols[p]]
        if not anc:
            continue
        q = max(anc, key=lambda q: (int(J[terms[q]]), -len(cols[q]), -q))
        if rough is None or absorbed_ratio(design, rough, terms, p, q, level_map(p, q)) >= min_ratio:
            host[p] = q
    out = []
    for p in range(len(terms)):
        chain, q = [], host.get(p)
        while q is not None:
            chain.append((q, level_map(p, q)))
            q = host.get(q)
        out.append(chain)
    return out


def nested_information(design: DesignMatrix, rough: RoughFit, terms: list[int], chains) -> list[np.ndarray]:
    """Fisher information of each level under nested centring, at the rough fit.

    With nested centring (:mod:`.parameterisation`, item 11) a level P that hosts other terms reaches the cells
    through them: holding every x fixed, ``d eta_c / d u_P = kappa_c`` with kappa the sum over P
    and the terms it hosts of ``d u_Q / d u_P = -omega_Q sum_{R in chain(Q)} d u_R / d u_P``,
    and the hosted terms' priors depend on u_P too.  The information of level j of P is
    therefore::

        I_eff,j = sum_{c in j} W_c kappa_c^2 + sum_{Q hosted} sum_{q in Q under j} (d u_q / d u_P)^2 / sigma_Q^2

    with W = n p (1 - p) at the rough mode and omega_Q = sigma_Q^2 I_Q / (1 + sigma_Q^2 I_Q)
    from the hosted terms' own effective information (computed deepest first).  For one
    host and its children this is ``sum_c I_c / (1 + sigma_C^2 I_c)``, the information left
    for u_P once its children are integrated out: a benchmark under its tasks has hardly
    any (BRIDGE's swebench: the raw information of 79,000 trials, but its tasks absorb it).
    A level that hosts nothing keeps its raw information.

    Returns one array per position of ``terms``.
    """
    n = design.trials.astype(float)
    eta = rough.mu + sum(rough.u[k][design.codes[k]] for k in range(design.n_terms))
    p = _expit(eta)
    W = n * p * (1 - p)
    K = len(terms)
    sig = rough.sigma[terms]
    eff = [rough.info[k].astype(float).copy() for k in terms]
    depth = [len(ch) for ch in chains]
    desc = {P: [Q for Q in range(K) if any(q == P for q, _ in chains[Q])] for P in range(K)}
    for P in sorted(range(K), key=lambda q: -depth[q]):
        if not desc[P]:
            continue
        JP = int(design.n_levels[terms[P]])
        d = {P: np.ones(JP)}
        for Q in sorted(desc[P], key=lambda q: depth[q]):
            om = sig[Q] ** 2 * eff[Q] / (1.0 + sig[Q] ** 2 * eff[Q])
            d[Q] = -om * sum(d[R][m] for R, m in chains[Q] if R in d)
        kappa = sum(d[Q][design.codes[terms[Q]]] for Q in d)
        lik = np.bincount(design.codes[terms[P]], weights=W * kappa ** 2, minlength=JP)
        pri = np.zeros(JP)
        for Q in desc[P]:
            m = next(m for R, m in chains[Q] if R == P)
            pri += np.bincount(m, weights=d[Q] ** 2 / sig[Q] ** 2, minlength=JP)
        eff[P] = lik + pri
    return eff


def level_scales(rough: RoughFit, mode: str = "auto", info: list[np.ndarray] | None = None
                 ) -> list[tuple[np.ndarray, np.ndarray]]:
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

    ``info`` replaces the rough fit's information per level (one array per term): the
    sampler passes :func:`nested_information` under nested centring.
    """
    out = []
    for k, info_k in enumerate(rough.info if info is None else info):
        one, zero = np.ones_like(info_k), np.zeros_like(info_k)
        if mode == "auto":
            out.append((one, info_k.astype(float)))
        elif mode == "term":
            centred = float(np.median(rough.sigma[k] ** 2 * info_k)) > 1.0
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
    levels ("runs", e.g. the benchmark:model:scaffold runs of seed 000 (Hardy et al. 2026) Eq. 6) carry the sum
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
