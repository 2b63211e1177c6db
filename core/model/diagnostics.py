"""Convergence diagnostics of a posterior (SPEC section 6), computed with ArviZ.

For every variance component sigma_F (and, for information, mu): rank-normalised split
R-hat, bulk and tail effective sample size (Vehtari et al. 2021, as ``arviz.rhat`` and
``arviz.ess`` compute them), plus divergent transitions and E-BFMI per chain.

A fit is **converged** when, for every variance component, R-hat <= 1.01 and bulk ESS >= 400,
and no post-warmup transition diverged.  E-BFMI below 0.3 is reported as a warning (Stan's
threshold) but does not by itself fail the fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

# Thresholds of a converged fit (SPEC section 6; Vehtari et al. 2021): one definition, core.gate.
from ..gate import MAX_R_HAT, MIN_ESS_BULK  # noqa: F401 - re-exported

# The quadrature's accuracy bound is the quadrature's own; a fit is judged against the same number.
from .quadrature import QUADRATURE_TOLERANCE, next_node_count  # noqa: F401 - re-exported

MIN_EBFMI = 0.3


@dataclass
class Diagnostics:
    """Convergence summary of a :class:`~.sampler.Posterior`.

    Attributes
    ----------
    table
        One row per variance component (and ``mu``): mean, sd, r_hat, ess_bulk, ess_tail.
    divergences
        Divergent post-warmup transitions, all chains together.
    ebfmi
        E-BFMI per chain.
    converged
        R-hat <= 1.01 and bulk ESS >= 400 for every variance component, and no divergence.
    problems
        Plain-language reasons why the fit is not converged (empty when it is).
    warnings
        Things worth knowing that do not fail the fit (low E-BFMI, trees at max depth).
    n_draws
        Total post-warmup draws (chains x draws).
    """

    table: pd.DataFrame
    divergences: int
    ebfmi: np.ndarray
    converged: bool
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    n_draws: int = 0

    @property
    def components(self) -> pd.DataFrame:
        """Rows of the variance components only (without mu)."""
        return self.table.drop(index="mu", errors="ignore")

    @property
    def max_r_hat(self) -> float:
        return float(self.components["r_hat"].max())

    @property
    def min_ess_bulk(self) -> float:
        return float(self.components["ess_bulk"].min())

    @property
    def min_ess_tail(self) -> float:
        return float(self.components["ess_tail"].min())

    def verdict(self) -> dict:
        """The convergence verdict as plain JSON: what every number built from this fit carries.

        ``converged``, ``max_rhat``, ``min_ess_bulk``, ``min_ess_tail``, ``divergences``,
        ``min_ebfmi``, ``problems``, ``warnings`` (the draws to ask for are among them) and ``n_draws``.
        It is stored in the fit's cache file and put at the top of every ``--json`` built from the fit.
        """
        return {"converged": bool(self.converged), "max_rhat": self.max_r_hat, "min_ess_bulk": self.min_ess_bulk,
                "min_ess_tail": self.min_ess_tail, "divergences": int(self.divergences),
                "min_ebfmi": float(np.min(self.ebfmi)) if np.size(self.ebfmi) else None,
                "problems": list(self.problems), "warnings": list(self.warnings), "n_draws": int(self.n_draws)}

    def __str__(self) -> str:
        head = "converged" if self.converged else "NOT converged: " + "; ".join(self.problems)
        return f"{head}\n{self.table.to_string(float_format=lambda v: f'{v:.3f}')}"


def _az():
    import arviz as az

    return az


def chain_diagnostics(draws: np.ndarray) -> tuple[float, float, float]:
    """Split R-hat (rank-normalised), bulk ESS and tail ESS of a (chains, draws) array."""
    az = _az()
    x = np.asarray(draws, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"expected (chains, draws), got shape {x.shape}.")
    r = float(np.asarray(az.rhat(x, method="rank")))
    eb = float(np.asarray(az.ess(x, method="bulk")))
    et = float(np.asarray(az.ess(x, method="tail")))
    return r, eb, et


def ebfmi(energy: np.ndarray) -> np.ndarray:
    """E-BFMI per chain from the (chains, draws) Hamiltonian energies."""
    e = np.asarray(energy, dtype=np.float64)
    num = np.mean(np.diff(e, axis=1) ** 2, axis=1)
    den = np.var(e, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return num / den


def draws_advice(min_ess: float, draws: int, target: float = MIN_ESS_BULK, setting: str = "draws") -> str | None:
    """What to rerun with when the bulk ESS falls short: ESS grows about linearly with the draws
    of a chain that has forgotten its start, so ``draws * target / min_ess`` with a 20% margin,
    rounded up to a hundred.  None when the ESS is enough or unknown.  ``setting`` names what to
    raise: ``"draws"``, or ``"max_draws"`` for a run whose length the gate set (it hit its ceiling)."""
    if not np.isfinite(min_ess) or min_ess <= 0 or min_ess >= target:
        return None
    need = int(np.ceil(draws * target / min_ess * 1.2 / 100.0) * 100)
    return (f"about {need} draws per chain (now {draws}) should bring the smallest bulk ESS "
            f"({min_ess:.0f}) above {target:.0f}: refit with {setting} = {need} (--{setting.replace('_', '-')} {need})")


def quadrature_off(posterior) -> bool:
    """Whether an integrated term's quadrature was not accurate enough at ``posterior``: its error at the
    posterior (:func:`.quadrature.error_at_posterior`) above :data:`QUADRATURE_TOLERANCE`."""
    err = getattr(posterior, "quadrature_error", None)
    return err is not None and float(err) > QUADRATURE_TOLERANCE


def diagnose(posterior, max_r_hat: float = MAX_R_HAT, min_ess_bulk: float = MIN_ESS_BULK) -> Diagnostics:
    """Diagnostics of a :class:`~.sampler.Posterior` (SPEC section 6)."""
    rows = {}
    for name, d in [*posterior.sigma.items(), ("mu", posterior.mu)]:
        r, eb, et = chain_diagnostics(d)
        rows[name] = {"mean": float(np.mean(d)), "sd": float(np.std(d, ddof=1)), "r_hat": r, "ess_bulk": eb,
                      "ess_tail": et}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "term"
    stats = posterior.sample_stats
    div = int(np.sum(stats["diverging"]))
    bf = ebfmi(stats["energy"])
    comp = table.drop(index="mu")
    problems, warnings = [], []
    bad_r = comp[~(comp["r_hat"] <= max_r_hat)]
    for name, row in bad_r.iterrows():
        problems.append(f"R-hat of sigma[{name}] is {row.r_hat:.3f} (> {max_r_hat})")
    bad_e = comp[~(comp["ess_bulk"] >= min_ess_bulk)]
    for name, row in bad_e.iterrows():
        problems.append(f"bulk ESS of sigma[{name}] is {row.ess_bulk:.0f} (< {min_ess_bulk:.0f})")
    if div:
        problems.append(f"{div} divergent transition(s) after warmup")
    if quadrature_off(posterior):
        used = getattr(posterior, "quadrature_nodes", None)
        more = None if used is None else next_node_count(used)
        fix = (f"refit with more nodes (--quadrature-nodes {more}) or marginalise = off (--marginalise off)"
               if more else "refit with marginalise = off (--marginalise off)")
        problems.append(f"the quadrature that integrates {', '.join(posterior.integrated)} out is off by "
                        f"{posterior.quadrature_error:.2g} nats at the posterior (> {QUADRATURE_TOLERANCE}): {fix}")
    # more draws help a short run, not a sampler that diverges (None when the ESS is enough)
    gate_run = getattr(posterior.settings, "stop", "fixed") == "gate"  # the ceiling, not draws, bounded it
    advice = None if div else draws_advice(comp["ess_bulk"].min(), posterior.mu.shape[-1], min_ess_bulk,
                                           "max_draws" if gate_run else "draws")
    if advice:
        warnings.append(advice)
    if np.any(bf < MIN_EBFMI):
        warnings.append(f"E-BFMI below {MIN_EBFMI} in chain(s) {np.flatnonzero(bf < MIN_EBFMI).tolist()}: "
                        f"{np.round(bf, 2).tolist()}")
    depth = stats.get("tree_depth")
    if depth is not None:
        at_max = float(np.mean(depth >= posterior.settings.max_tree_depth))
        if at_max > 0.05:
            warnings.append(f"{at_max:.0%} of transitions hit the maximum tree depth "
                            f"{posterior.settings.max_tree_depth}")
    return Diagnostics(table=table, divergences=div, ebfmi=bf, converged=not problems, problems=problems,
                       warnings=warnings, n_draws=int(posterior.mu.size))


#: Sampler statistic -> ArviZ's name for it (the fit cache and :func:`to_inference_data` share it).
ARVIZ_STATS = {"num_steps": "n_steps", "accept_prob": "acceptance_rate", "potential_energy": "lp"}


def var_name(term: str) -> str:
    """A term as an ArviZ / netCDF variable-name part (``":"`` written ``"__"``)."""
    return term.replace(":", "__")


def to_inference_data(posterior, random_effects: bool = True):
    """Convert a :class:`~.sampler.Posterior` to ``arviz.InferenceData``.

    Variables: ``sigma`` (chain, draw, term), ``mu`` (chain, draw) and, when kept,
    ``u_<term>`` (chain, draw, <term>_level) with ``":"`` in term names written ``"__"``.
    """
    az = _az()
    terms = list(posterior.sigma)
    post = {"sigma": np.stack([posterior.sigma[t] for t in terms], axis=-1), "mu": posterior.mu}
    coords = {"term": terms}
    dims = {"sigma": ["term"]}
    if random_effects:
        for t, u in posterior.random_effects.items():
            v = "u_" + var_name(t)
            post[v] = u
            lab = posterior.levels[t]
            coords[f"{var_name(t)}_level"] = ["|".join(map(str, r)) for r in lab.itertuples(index=False)]
            dims[v] = [f"{var_name(t)}_level"]
    ss = {}
    for k, v in posterior.sample_stats.items():
        if k.startswith("warmup_"):
            continue
        ss[ARVIZ_STATS.get(k, k)] = v
    if "lp" in ss:
        ss["lp"] = -ss["lp"]  # ArviZ's lp is the log density, numpyro's potential its negative
    return az.from_dict(posterior=post, sample_stats=ss, coords=coords, dims=dims)
