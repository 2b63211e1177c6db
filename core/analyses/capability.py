"""A capability scale across benchmarks: Bayesian Rasch (1PL) and 2PL item response models (seed 002 (Krsteski et al. 2026) sec. 5.3).

Seed 002 sec. 5.3 fits a Rasch model to a pooled corpus: for each model-benchmark
pair it keeps the scaffold with the highest fraction of successful trials, and

    P(Y_mt = 1 | theta_m, beta_t) = 1 / (1 + exp(beta_t - theta_m))        (seed 002 Eq. 1)

with ``theta_m`` the model's ability and ``beta_t`` the task's difficulty, one scale
across all benchmarks.  The 2PL adds a discrimination ``a_t > 0`` per task,
``logit P = a_t (theta_m - beta_t)``; seed 002 reports that its abilities rank the
models almost as the 1PL does (Spearman 0.99).

What is computed here
---------------------
* :func:`irt_cells` - the binomial cells (successes / trials per subject x task), never one
  row per trial.  Subjects are models (the best scaffold per model-benchmark pair, as the
  seed does: ``subjects="best-scaffold"``) or every observed model-scaffold agent
  (``subjects="every-agent"``).  Tasks are ``benchmark / task`` (task nested in benchmark).
* :func:`fit_irt` - NUTS (numpyro, JAX), one chain per CPU device.  Priors: 1PL
  ``theta_m ~ N(0, sigma_theta)``, ``beta_t ~ N(mu_beta, sigma_beta)``, ``sigma ~ HalfNormal(2.5)``,
  ``mu_beta ~ N(0, 3)``; 2PL ``theta_m ~ N(0, 1)``, ``log a_t = sigma_a z_t``,
  ``sigma_a ~ HalfNormal(0.5)``.
* **Identification.** The likelihood depends on ``theta - beta`` only (and, for the 2PL, on
  ``a (theta - beta)``), so the scale is fixed per draw by an exact reparameterisation
  that leaves the likelihood unchanged: 1PL - the subjects' mean ability is 0 in every draw
  (``theta - mean(theta)``, ``beta - mean(theta)``), in logits with discrimination 1;
  2PL - the subjects' abilities have mean 0 and standard deviation 1 in every draw
  (``(theta - m) / s``, ``(beta - m) / s``, ``a s``).  Every reported number is of the
  identified quantities, and the convergence gate (:mod:`~ddr_explorer.core.gate`) is applied
  to them: R-hat <= 1.01, bulk ESS >= 400, no divergence.
* :func:`item_fit` - a posterior predictive check per task: observed against predicted success,
  the outfit mean square (mean squared standardised residual over its subjects) and its
  posterior predictive p-value ``P(outfit(y_rep) >= outfit(y))``.  A task with p < 0.025 is
  more erratic than the model says (under-fit: successes where the model expects failure),
  one with p > 0.975 more deterministic than a common slope allows (over-fit: discrimination
  above the others); both are listed.  Under a correct model about 5% of tasks land there
  by chance (fewer, since posterior predictive p-values are conservative).
* :func:`kendall_draws_between` - Kendall tau-b per posterior draw between the IRT ability
  ranking and the G-study's model effects ``u_m`` (:func:`~ddr_explorer.core.fitting.theta_from_posterior`),
  one independent draw of each posterior per value, over pairs of models both designs connect
  (:mod:`~ddr_explorer.core.rank_parts`); an external ranking is compared with
  :func:`~.external_ranking.compare_with_external`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from ..gate import MAX_R_HAT, MIN_ESS_BULK
from ..reliability import summarize, to_jsonable
from ..references import cite

__all__ = ["IrtCells", "IrtFit", "CapabilityStudy", "irt_cells", "fit_irt", "item_fit", "kendall_draws_between",
           "capability_study", "capability_lines", "format_capability", "IRT_MODELS", "SUBJECT_MODES"]

IRT_MODELS = ("1pl", "2pl")
SUBJECT_MODES = ("best-scaffold", "every-agent")
#: Two-sided posterior predictive p-value bounds outside which a task is listed as fitting badly.
PPP_LOW, PPP_HIGH = 0.025, 0.975

IDENTIFICATION = {
    "1pl": "1PL: mean ability over the subjects fixed at 0 in every draw (logits; discrimination 1)",
    "2pl": "2PL: abilities standardised to mean 0 and SD 1 over the subjects in every draw "
           "(difficulty on the same scale, discrimination per SD)",
}


# -- data ----------------------------------------------------------------------------------
@dataclass
class IrtCells:
    """Binomial cells of an IRT fit.

    Attributes
    ----------
    subjects
        Subject names: models (best scaffold) or ``"model / scaffold"`` agents.
    tasks
        ``"benchmark / task"`` names.
    task_benchmark
        The benchmark of each task.
    subject, task
        ``(N,)`` indices of each cell.
    successes, trials
        ``(N,)`` counts of each cell.
    mode
        ``"best-scaffold"`` or ``"every-agent"``.
    chosen
        Best-scaffold mode: one row per model-benchmark pair with the scaffold kept and its success fraction.
    """

    subjects: list[str]
    tasks: list[str]
    task_benchmark: list[str]
    subject: np.ndarray
    task: np.ndarray
    successes: np.ndarray
    trials: np.ndarray
    mode: str
    chosen: pd.DataFrame | None = None

    @property
    def n_cells(self) -> int:
        return int(self.subject.size)

    def parts(self) -> list[list[int]]:
        """Subject indices of each connected part of the subject-task graph (largest first).

        Abilities in different parts share no task, directly or through other subjects,
        so their order is set by the prior alone and is never compared.
        """
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        m, t = len(self.subjects), len(self.tasks)
        g = coo_matrix((np.ones(self.n_cells), (self.subject, m + self.task)), shape=(m + t, m + t))
        _, lab = connected_components(g, directed=False)
        groups: dict[int, list[int]] = {}
        for s in range(m):
            groups.setdefault(int(lab[s]), []).append(s)
        return sorted(groups.values(), key=lambda p: (-len(p), p[0]))


def irt_cells(corpus, subjects: str = "best-scaffold") -> IrtCells:
    """The binomial cells of a corpus for an IRT fit (seed 002 sec. 5.3).

    Parameters
    ----------
    corpus
        A validated corpus.
    subjects
        ``"best-scaffold"``: one subject per model; on each benchmark only the scaffold with the
        highest fraction of successful trials is kept (ties: the scaffold with more trials,
        then by name).  ``"every-agent"``: one subject per observed model-scaffold pair.

    Raises
    ------
    ValueError
        An unknown ``subjects``, or fewer than two subjects or two tasks.
    """
    if subjects not in SUBJECT_MODES:
        raise ValueError(f"subjects should be one of {', '.join(SUBJECT_MODES)}, got {subjects!r}")
    t = corpus.table[["benchmark", "task", "model", "scaffold", "successes", "trials"]].copy()
    for c in ("benchmark", "task", "model", "scaffold"):
        t[c] = t[c].astype(str)
    t = t[t["trials"] > 0]
    chosen = None
    if subjects == "best-scaffold":
        g = t.groupby(["model", "benchmark", "scaffold"], sort=True)[["successes", "trials"]].sum().reset_index()
        g["fraction"] = g["successes"] / g["trials"]
        g = g.sort_values(["model", "benchmark", "fraction", "trials", "scaffold"],
                          ascending=[True, True, False, False, True])
        chosen = g.drop_duplicates(["model", "benchmark"]).reset_index(drop=True)
        keep = chosen[["model", "benchmark", "scaffold"]]
        t = t.merge(keep, on=["model", "benchmark", "scaffold"], how="inner")
        t["subject"] = t["model"]
    else:
        t["subject"] = t["model"] + " / " + t["scaffold"]
    t["item"] = t["benchmark"] + " / " + t["task"]
    cells = t.groupby(["subject", "item"], sort=True).agg(successes=("successes", "sum"), trials=("trials", "sum"),
                                                          benchmark=("benchmark", "first")).reset_index()
    subj = sorted(cells["subject"].unique())
    items = sorted(cells["item"].unique())
    if len(subj) < 2 or len(items) < 2:
        raise ValueError(f"corpus {corpus.name!r}: {len(subj)} subject(s) and {len(items)} task(s); an IRT scale "
                         "needs at least two of each")
    s_idx = {s: i for i, s in enumerate(subj)}
    i_idx = {s: i for i, s in enumerate(items)}
    bench = cells.drop_duplicates("item").set_index("item")["benchmark"]
    return IrtCells(subjects=subj, tasks=items, task_benchmark=[str(bench[i]) for i in items],
                    subject=cells["subject"].map(s_idx).to_numpy(np.int32),
                    task=cells["item"].map(i_idx).to_numpy(np.int32),
                    successes=cells["successes"].to_numpy(np.float64),
                    trials=cells["trials"].to_numpy(np.float64), mode=subjects, chosen=chosen)


# -- model and fit ---------------------------------------------------------------------------
def _numpyro_model(kind: str, n_subjects: int, n_tasks: int):
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    def model(subject, task, trials, successes=None):
        mu_b = numpyro.sample("mu_beta", dist.Normal(0.0, 3.0))
        s_b = numpyro.sample("sigma_beta", dist.HalfNormal(2.5))
        beta = numpyro.sample("beta", dist.Normal(mu_b, s_b).expand([n_tasks]).to_event(1))
        if kind == "1pl":
            s_t = numpyro.sample("sigma_theta", dist.HalfNormal(2.5))
            theta = numpyro.sample("theta", dist.Normal(0.0, s_t).expand([n_subjects]).to_event(1))
            eta = theta[subject] - beta[task]
        else:
            theta = numpyro.sample("theta", dist.Normal(0.0, 1.0).expand([n_subjects]).to_event(1))
            s_a = numpyro.sample("sigma_a", dist.HalfNormal(0.5))
            # non-centred: a task's slope is weakly informed, a centred log a would form a funnel with sigma_a
            z = numpyro.sample("z_a", dist.Normal(0.0, 1.0).expand([n_tasks]).to_event(1))
            a = jnp.exp(s_a * z)
            numpyro.deterministic("a", a)
            eta = a[task] * (theta[subject] - beta[task])
        numpyro.sample("y", dist.Binomial(total_count=trials, logits=eta), obs=successes)

    return model


@dataclass
class IrtFit:
    """An IRT posterior on the identified scale (module note).

    Attributes
    ----------
    kind
        ``"1pl"`` or ``"2pl"``.
    cells
        The data fitted.
    theta
        ``(chains, draws, M)`` identified abilities.
    beta
        ``(chains, draws, T)`` difficulties on the same scale.
    a
        ``(chains, draws, T)`` discriminations (None for the 1PL: all 1).
    sigma
        Hyper-parameter draws, ``(chains, draws)`` each.
    convergence
        The gate's verdict over every identified quantity: ``converged``, ``max_rhat``,
        ``min_ess_bulk``, ``divergences``, ``problems``, ``n_draws``, ``worst`` (the parameter of the
        largest R-hat).
    seconds
        Wall time of the sampler.
    """

    kind: str
    cells: IrtCells
    theta: np.ndarray
    beta: np.ndarray
    a: np.ndarray | None
    sigma: dict
    convergence: dict
    seconds: float = 0.0
    settings: dict = field(default_factory=dict)

    @property
    def converged(self) -> bool:
        return bool(self.convergence["converged"])

    def flat(self, x: np.ndarray) -> np.ndarray:
        return x.reshape(-1, x.shape[-1])


def _gate(arrays: dict, divergences: int, n_draws: int) -> dict:
    """R-hat / bulk ESS of every identified quantity, and the gate's verdict (core.gate)."""
    import arviz as az

    ds = az.convert_to_dataset({k: np.asarray(v, np.float64) for k, v in arrays.items()})
    rhat = az.rhat(ds, method="rank")
    ess = az.ess(ds, method="bulk")
    worst_r, worst_e = (None, -np.inf), (None, np.inf)
    for k in arrays:
        r = np.atleast_1d(np.asarray(rhat[k]))
        e = np.atleast_1d(np.asarray(ess[k]))
        r = np.where(np.isfinite(r), r, np.inf)  # a constant draw (NaN R-hat) fails the gate
        j = int(np.argmax(r))
        if r[j] > worst_r[1]:
            worst_r = (f"{k}[{j}]" if r.size > 1 else k, float(r[j]))
        j = int(np.argmin(e))
        if e[j] < worst_e[1]:
            worst_e = (f"{k}[{j}]" if e.size > 1 else k, float(e[j]))
    problems = []
    if not worst_r[1] <= MAX_R_HAT:
        problems.append(f"R-hat of {worst_r[0]} is {worst_r[1]:.3f} (> {MAX_R_HAT})")
    if not worst_e[1] >= MIN_ESS_BULK:
        problems.append(f"bulk ESS of {worst_e[0]} is {worst_e[1]:.0f} (< {MIN_ESS_BULK:.0f})")
    if divergences:
        problems.append(f"{divergences} divergent transition(s) after warmup")
    return {"converged": not problems, "max_rhat": worst_r[1], "min_ess_bulk": worst_e[1],
            "worst_rhat": worst_r[0], "worst_ess": worst_e[0], "divergences": int(divergences),
            "problems": problems, "n_draws": int(n_draws)}


def fit_irt(cells: IrtCells, kind: str = "1pl", *, chains: int = 4, warmup: int = 500, draws: int = 1000,
            seed: int = 0, progress: Callable | None = None, cancel: Callable | None = None,
            blocks: int = 1) -> IrtFit:
    """Fit a Rasch (``"1pl"``) or 2PL (``"2pl"``) model by NUTS (seed 002 sec. 5.3, Eq. 1).

    Parameters
    ----------
    cells
        From :func:`irt_cells`.
    kind
        ``"1pl"`` or ``"2pl"``.
    chains, warmup, draws, seed
        Sampler settings (a chain per CPU device when there are enough, else vectorised on one).
    progress
        ``progress(phase, i, n, eta)`` after warmup and after each block of draws.
    cancel
        Polled between warmup and the sampling blocks; raises
        :class:`~ddr_explorer.core.model.posterior.FitCancelled`.
    blocks
        The draws are taken in this many blocks, so a cancel is heard during sampling.  Each block
        compiles numpyro's sampling loop again (a new ``pmap``), which costs more than it saves on a
        small corpus: the default is one block, with cancel heard before warmup and before sampling.
    """
    if kind not in IRT_MODELS:
        raise ValueError(f"IRT model should be one of {', '.join(IRT_MODELS)}, got {kind!r}")
    from .refits import check_cancel

    import jax
    import jax.numpy as jnp
    from numpyro.infer import MCMC, NUTS

    from ..model.devices import _enable_compilation_cache

    _enable_compilation_cache()  # as the main sampler does: a second IRT fit of a corpus reads its programs back
    check_cancel(cancel, f"{kind.upper()} fit")
    t0 = time.perf_counter()
    model = _numpyro_model(kind, len(cells.subjects), len(cells.tasks))
    args = (jnp.asarray(cells.subject), jnp.asarray(cells.task), jnp.asarray(cells.trials))
    kw = {"successes": jnp.asarray(cells.successes)}
    blocks = max(1, min(int(blocks), int(draws)))
    per = [draws // blocks + (1 if b < draws % blocks else 0) for b in range(blocks)]
    # one chain per CPU device when there are enough (core.model sets 4 or more): a chain never waits for
    # another's tree, which vectorised chains do (docs/sampler-measurements.md); else vectorised on one device
    method = "parallel" if jax.local_device_count() >= chains > 1 else "vectorized"
    mcmc = MCMC(NUTS(model, target_accept_prob=0.9), num_warmup=warmup, num_samples=per[0], num_chains=chains,
                chain_method=method, progress_bar=False)
    key = jax.random.PRNGKey(seed)
    if progress is not None:
        progress(f"{kind.upper()}: warmup", 0, blocks + 1, None)
    mcmc.warmup(key, *args, extra_fields=("diverging",), collect_warmup=False, **kw)
    samples, div = [], 0
    for b, n in enumerate(per):
        check_cancel(cancel, f"{kind.upper()} fit (block {b + 1} of {blocks})")
        if b:
            mcmc.num_samples = n
            mcmc.post_warmup_state = mcmc.last_state
        mcmc.run(mcmc.post_warmup_state.rng_key, *args, extra_fields=("diverging",), **kw)
        s = mcmc.get_samples(group_by_chain=True)
        samples.append({k: np.asarray(v) for k, v in s.items()})
        div += int(np.sum(np.asarray(mcmc.get_extra_fields(group_by_chain=True)["diverging"])))
        if progress is not None:
            el = time.perf_counter() - t0
            progress(f"{kind.upper()}: sampling", b + 1, blocks + 1, el / (b + 2) * (blocks - b - 1))
    post = {k: np.concatenate([s[k] for s in samples], axis=1) for k in samples[0]}
    theta, beta = post["theta"].astype(np.float64), post["beta"].astype(np.float64)
    m = theta.mean(axis=-1, keepdims=True)
    a = None
    if kind == "1pl":
        theta, beta = theta - m, beta - m
        sigma = {"sigma_theta": post["sigma_theta"], "sigma_beta": post["sigma_beta"]}
    else:
        sd = theta.std(axis=-1, ddof=0, keepdims=True)
        theta, beta = (theta - m) / sd, (beta - m) / sd
        a = post["a"].astype(np.float64) * sd
        sigma = {"sigma_a": post["sigma_a"], "sigma_beta": post["sigma_beta"]}
    arrays = {"theta": theta, "beta": beta, **sigma}
    if a is not None:
        arrays["log_a"] = np.log(a)
    conv = _gate(arrays, div, theta.shape[0] * theta.shape[1])
    return IrtFit(kind, cells, theta, beta, a, {k: np.asarray(v, np.float64) for k, v in sigma.items()}, conv,
                  time.perf_counter() - t0, {"chains": chains, "warmup": warmup, "draws": draws, "seed": seed})


# -- item fit ----------------------------------------------------------------------------------
def item_fit(fit: IrtFit, max_draws: int = 400, seed: int = 0, chunk: int = 50) -> pd.DataFrame:
    """Posterior predictive check per task (module note): one row per task.

    Columns: ``task``, ``benchmark``, ``n_subjects``, ``observed`` (success fraction),
    ``predicted`` (posterior mean of the expected fraction), ``outfit`` (posterior mean of the
    outfit mean square of the observed data), ``ppp`` (``P(outfit(y_rep) >= outfit(y))``), ``misfit``
    (``"under"`` for p < 0.025, ``"over"`` for p > 0.975, else empty).

    Parameters
    ----------
    fit
        From :func:`fit_irt`.
    max_draws
        Posterior draws used (evenly thinned); the check's cost is draws x cells.
    """
    c = fit.cells
    th, be = fit.flat(fit.theta), fit.flat(fit.beta)
    al = fit.flat(fit.a) if fit.a is not None else None
    s = th.shape[0]
    take = np.unique(np.linspace(0, s - 1, min(max_draws, s)).astype(int))
    rng = np.random.default_rng(seed)
    n_t = len(c.tasks)
    exceed, outfit_obs, pred = np.zeros(n_t), np.zeros(n_t), np.zeros(n_t)
    n_sub = np.bincount(c.task, minlength=n_t).astype(np.float64)
    tri = np.bincount(c.task, weights=c.trials, minlength=n_t)
    for a0 in range(0, len(take), chunk):
        d = take[a0:a0 + chunk]
        eta = th[d][:, c.subject] - be[d][:, c.task]
        if al is not None:
            eta = al[d][:, c.task] * eta
        p = 1.0 / (1.0 + np.exp(-eta))
        mean = c.trials * p
        var = np.maximum(c.trials * p * (1 - p), 1e-12)
        z_obs = (c.successes - mean) ** 2 / var
        y_rep = rng.binomial(c.trials.astype(np.int64), p)
        z_rep = (y_rep - mean) ** 2 / var
        o_obs = np.stack([np.bincount(c.task, weights=r, minlength=n_t) for r in z_obs]) / n_sub
        o_rep = np.stack([np.bincount(c.task, weights=r, minlength=n_t) for r in z_rep]) / n_sub
        exceed += (o_rep >= o_obs).sum(axis=0)
        outfit_obs += o_obs.sum(axis=0)
        pred += np.stack([np.bincount(c.task, weights=r, minlength=n_t) for r in mean]).sum(axis=0) / tri
    k = len(take)
    ppp = exceed / k
    obs = np.bincount(c.task, weights=c.successes, minlength=n_t) / tri
    mis = np.where(ppp < PPP_LOW, "under", np.where(ppp > PPP_HIGH, "over", ""))
    return pd.DataFrame({"task": c.tasks, "benchmark": c.task_benchmark, "n_subjects": n_sub.astype(int),
                         "observed": obs, "predicted": pred / k, "outfit": outfit_obs / k, "ppp": ppp,
                         "misfit": mis})


# -- rank agreement ------------------------------------------------------------------------------
def kendall_draws_between(a: np.ndarray, b: np.ndarray, pair_mask: np.ndarray | None = None, seed: int = 0,
                          chunk: int = 256) -> np.ndarray:
    """Kendall tau-b per draw between two posteriors of the same M units (columns aligned).

    Draw ``s`` pairs row ``s`` of a random permutation of ``a``'s draws with row ``s`` of one of
    ``b``'s (the posteriors are independent), ``min(S_a, S_b)`` values.  ``pair_mask`` (over
    ``np.triu_indices(M, 1)``) keeps only the pairs whose order both fits identify.
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    rng = np.random.default_rng(seed)
    n = min(a.shape[0], b.shape[0])
    a, b = a[rng.permutation(a.shape[0])[:n]], b[rng.permutation(b.shape[0])[:n]]
    i, j = np.triu_indices(a.shape[1], 1)
    if pair_mask is not None:
        i, j = i[pair_mask], j[pair_mask]
    out = np.empty(n)
    for s0 in range(0, n, chunk):
        sa = np.sign(a[s0:s0 + chunk, i] - a[s0:s0 + chunk, j])
        sb = np.sign(b[s0:s0 + chunk, i] - b[s0:s0 + chunk, j])
        den = np.sqrt(np.count_nonzero(sa, axis=1) * np.count_nonzero(sb, axis=1).astype(np.float64))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[s0:s0 + chunk] = (sa * sb).sum(axis=1) / den
    return out


# -- the study -------------------------------------------------------------------------------------
@dataclass
class CapabilityStudy:
    """Result of :func:`capability_study`.

    Attributes
    ----------
    subjects
        ``"best-scaffold"`` or ``"every-agent"``.
    fits
        ``"1pl"`` / ``"2pl"`` -> :class:`IrtFit`.
    abilities
        ``"1pl"`` / ``"2pl"`` -> one row per subject: ``subject``, ``median``, ``lower90``, ``upper90``,
        ``lower95``, ``upper95``, ``mean_rank``, ``rank_lower95``, ``rank_upper95``, ``part``,
        ``n_tasks``, ``n_trials``; ordered by median ability, best first.
    items
        ``"1pl"`` / ``"2pl"`` -> one row per task: difficulty (and discrimination) medians and 95%
        intervals, joined with :func:`item_fit`.
    parts
        Subject names per connected part of the subject-task graph (one part: connected).
    gstudy
        Agreement with the G-study's ranking: ``kendall`` (per-draw summary), ``kendall_point``
        (posterior means), ``n_models``, ``gstudy_converged``, ``irt_model``; or ``{"skipped": why}``.
    external
        ``"1pl"`` -> :class:`~ddr_explorer.core.ranks.RankAgreement` as a dict, or None.
    irt_agreement
        Spearman rho between the 1PL and 2PL posterior-mean abilities, and its per-draw summary.
    """

    subjects: str
    fits: dict
    abilities: dict
    items: dict
    parts: list
    gstudy: dict | None = None
    external: dict | None = None
    irt_agreement: dict | None = None
    chosen: pd.DataFrame | None = None

    @property
    def converged(self) -> bool:
        return all(f.converged for f in self.fits.values())

    @property
    def n_fits(self) -> int:
        return len(self.fits) + (1 if self.gstudy and "gstudy_converged" in self.gstudy else 0)

    @property
    def n_converged(self) -> int:
        return sum(f.converged for f in self.fits.values()) + int(bool((self.gstudy or {}).get("gstudy_converged")))

    def misfit(self, kind: str = "1pl") -> pd.DataFrame:
        """The tasks the model fits badly (posterior predictive p outside [0.025, 0.975])."""
        it = self.items[kind]
        return it[it["misfit"] != ""].sort_values("ppp")

    def to_dict(self) -> dict:
        out = {"subjects": self.subjects, "n_fits": self.n_fits, "n_converged": self.n_converged,
               "converged": self.converged, "parts": self.parts, "models": {}}
        for k, f in self.fits.items():
            it = self.items[k]
            out["models"][k] = {
                "identification": IDENTIFICATION[k], "convergence": f.convergence,
                "label": None if f.converged else "UNCONVERGED: these numbers are provisional",
                "settings": f.settings, "seconds": f.seconds, "n_subjects": len(f.cells.subjects),
                "n_tasks": len(f.cells.tasks), "n_cells": f.cells.n_cells,
                "hyper": {n: summarize(v.reshape(-1)).to_dict() for n, v in f.sigma.items()},
                "abilities": self.abilities[k].to_dict(orient="records"),
                "n_misfit": int((it["misfit"] != "").sum()),
                "misfit": self.misfit(k).to_dict(orient="records"),
                "items": it.to_dict(orient="records"),
            }
        out["gstudy"] = self.gstudy
        out["external"] = self.external
        out["irt_agreement"] = self.irt_agreement
        if self.chosen is not None:
            out["chosen_scaffolds"] = self.chosen.to_dict(orient="records")
        return to_jsonable(out)


def _ability_table(fit: IrtFit, parts: list[list[int]]) -> pd.DataFrame:
    from ..ranks import rank_analysis

    th = fit.flat(fit.theta)
    names = fit.cells.subjects
    q = np.quantile(th, [0.5, 0.05, 0.95, 0.025, 0.975], axis=0)
    part_names = [[names[i] for i in p] for p in parts]
    ra = rank_analysis(th, names, part_names if len(parts) > 1 else None)
    part_of = np.zeros(len(names), int)
    for k, p in enumerate(parts):
        part_of[p] = k + 1
    c = fit.cells
    df = pd.DataFrame({"subject": names, "median": q[0], "lower90": q[1], "upper90": q[2], "lower95": q[3],
                       "upper95": q[4], "mean_rank": ra.ranks.mean_rank, "rank_lower95": ra.ranks.interval95[:, 0],
                       "rank_upper95": ra.ranks.interval95[:, 1], "part": part_of,
                       "n_tasks": np.bincount(c.subject, minlength=len(names)),
                       "n_trials": np.bincount(c.subject, weights=c.trials, minlength=len(names)).astype(int)})
    return df.sort_values("median", ascending=False).reset_index(drop=True)


def _item_table(fit: IrtFit) -> pd.DataFrame:
    be = fit.flat(fit.beta)
    q = np.quantile(be, [0.5, 0.025, 0.975], axis=0)
    df = pd.DataFrame({"difficulty": q[0], "difficulty_lower95": q[1], "difficulty_upper95": q[2]})
    if fit.a is not None:
        qa = np.quantile(fit.flat(fit.a), [0.5, 0.025, 0.975], axis=0)
        df["discrimination"], df["discrimination_lower95"], df["discrimination_upper95"] = qa
    else:
        df["discrimination"] = 1.0
    pf = item_fit(fit)
    return pd.concat([pf[["task", "benchmark"]], df, pf.drop(columns=["task", "benchmark"])], axis=1)


def _gstudy_agreement(fit: IrtFit, corpus, posterior, parts: list[list[int]]) -> dict:
    """Kendall tau per draw between IRT abilities and the G-study's model (or system) effects."""
    from ..fitting import theta_from_posterior

    obj = "model" if fit.cells.mode == "best-scaffold" else "system"
    g, gnames = theta_from_posterior(posterior, obj)
    names = fit.cells.subjects
    common = [n for n in names if n in gnames]
    if len(common) < 2:
        return {"skipped": f"{len(common)} subject(s) in both the IRT fit and the G-study; a rank correlation "
                           "needs 2"}
    ia = np.array([names.index(n) for n in common])
    ib = np.array([gnames.index(n) for n in common])
    a, b = fit.flat(fit.theta)[:, ia], g[:, ib]
    part_irt = np.zeros(len(names), int)
    for k, p in enumerate(parts):
        part_irt[p] = k
    part_g = np.zeros(len(common), int)
    from ..design import connectivity
    from ..rank_parts import model_parts

    gp = model_parts(connectivity(corpus).components, [n.split(" / ")[0] for n in common]) if corpus is not None \
        else None
    if gp is not None:
        where = {m: k for k, p in enumerate(gp) for m in p}
        part_g = np.array([where.get(n.split(" / ")[0], -1) for n in common])
    pi = part_irt[ia]
    i, j = np.triu_indices(len(common), 1)
    mask = (pi[i] == pi[j]) & (part_g[i] == part_g[j])
    if not mask.any():
        return {"skipped": "no pair of subjects is connected in both designs"}
    draws = kendall_draws_between(a, b, mask)
    sa = np.sign(a.mean(0)[i] - a.mean(0)[j])[mask]
    sb = np.sign(b.mean(0)[i] - b.mean(0)[j])[mask]
    den = np.sqrt(np.count_nonzero(sa) * np.count_nonzero(sb))
    point = float(np.dot(sa, sb) / den) if den else float("nan")
    conv = getattr(getattr(posterior, "diagnostics", None), "converged", None)
    return {"irt_model": fit.kind, "object": obj, "n_models": len(common), "n_pairs": int(mask.sum()),
            "kendall": summarize(draws).to_dict(), "kendall_point": point,
            "gstudy_converged": None if conv is None else bool(conv),
            "gstudy_model": getattr(getattr(posterior, "spec", None), "name", None),
            "missing_in_gstudy": [n for n in names if n not in gnames]}


def capability_study(corpus, *, subjects: str = "best-scaffold", models=IRT_MODELS, posterior=None,
                     gstudy: Callable | None = None, external=None, chains: int = 4, warmup: int = 500,
                     draws: int = 1000, seed: int = 0, progress=None, cancel=None) -> CapabilityStudy:
    """Fit the capability scale(s) of a corpus and compare their ranking (module note; seed 002 sec. 5.3).

    Parameters
    ----------
    corpus
        A validated corpus (several benchmarks share one scale).
    subjects
        ``"best-scaffold"`` (seed 002) or ``"every-agent"``.
    models
        Which of ``"1pl"``, ``"2pl"`` to fit; the first is the main scale.
    posterior
        The G-study posterior to compare with; or ``gstudy``: a callable returning it (called only when
        needed, e.g. a cached :func:`~ddr_explorer.core.fitting.fit_corpus`).  Neither: no comparison.
    external
        An :class:`~.external_ranking.ExternalRanking` (``--external-ranking``) or None.
    chains, warmup, draws, seed
        NUTS settings of each IRT fit.
    progress, cancel
        ``progress(phase, i, n, eta)``; ``cancel()`` polled between phases.
    """
    from ..ranks import spearman_rho

    models = [m.lower() for m in models]
    cells = irt_cells(corpus, subjects)
    parts = cells.parts()
    fits, abil, items = {}, {}, {}
    for k in models:
        def prog(phase, i, n, eta, _k=k):
            if progress is not None:
                progress(phase, i, n, eta)
        fits[k] = fit_irt(cells, k, chains=chains, warmup=warmup, draws=draws, seed=seed, progress=prog,
                          cancel=cancel)
        abil[k] = _ability_table(fits[k], parts)
        items[k] = _item_table(fits[k])
    main = fits[models[0]]
    g_out = None
    if posterior is None and gstudy is not None:
        if progress is not None:
            progress("G-study fit (cached when run before)", 0, 1, None)
        try:
            posterior = gstudy()
        except ValueError as exc:
            g_out = {"skipped": f"the G-study fit failed: {exc}"}
    if posterior is not None:
        try:
            g_out = _gstudy_agreement(main, corpus, posterior, parts)
        except ValueError as exc:
            g_out = {"skipped": str(exc)}
    ext = None
    if external is not None:
        from .external_ranking import compare_with_external

        names = cells.subjects
        th = main.flat(main.theta)
        ext = compare_with_external(th, names, external).to_dict()
        ext["file"] = external.source
    agree = None
    if "1pl" in fits and "2pl" in fits:
        t1, t2 = fits["1pl"].flat(fits["1pl"].theta), fits["2pl"].flat(fits["2pl"].theta)
        n = min(len(t1), len(t2))
        per = np.array([spearman_rho(t1[s], t2[s]) for s in range(0, n, max(1, n // 400))])
        agree = {"spearman_point": spearman_rho(t1.mean(0), t2.mean(0)), "spearman": summarize(per).to_dict()}
    return CapabilityStudy(subjects, fits, abil, items, [[cells.subjects[i] for i in p] for p in parts], g_out,
                           ext, agree, cells.chosen)


def _iv(s: dict) -> str:
    return f"{s['median']:+.2f} [{s['hdi95'][0]:+.2f}, {s['hdi95'][1]:+.2f}]"


def format_capability(d: dict, top: int = 15) -> str:
    """Plain text of :meth:`CapabilityStudy.to_dict` (what ``ddr analyses --which capability`` prints)."""
    lines = [f"Capability scale ({cite('krsteski2026', 'sec. 5.3')}), subjects: {d['subjects']}"]
    if len(d["parts"]) > 1:
        lines.append(f"  the subject-task graph has {len(d['parts'])} parts; abilities are compared within a part only")
    for k, m in d["models"].items():
        c = m["convergence"]
        head = (f"{k.upper()}: {m['n_subjects']} subjects x {m['n_tasks']} tasks ({m['n_cells']} cells); "
                f"{'converged' if c['converged'] else 'NOT converged'} (max R-hat {c['max_rhat']:.3f}, "
                f"min bulk ESS {c['min_ess_bulk']:.0f}, {c['divergences']} divergences)")
        lines.append(head)
        if m["label"]:
            lines.append(f"  {m['label']}: " + "; ".join(c["problems"]))
        lines.append(f"  scale: {m['identification']}")
        lines.append(f"  {'subject':<36}{'ability':>8}  {'90% interval':<18}{'rank [95%]':>12}")
        for r in m["abilities"][:top]:
            lines.append(f"  {str(r['subject'])[:35]:<36}{r['median']:>+8.2f}  [{r['lower90']:+.2f}, {r['upper90']:+.2f}]"
                         f"{'':<2}{r['mean_rank']:>5.1f} [{r['rank_lower95']:.0f}-{r['rank_upper95']:.0f}]")
        if len(m["abilities"]) > top:
            lines.append(f"  ... {len(m['abilities']) - top} more (--json for all)")
        lines.append(f"  tasks fitting badly (posterior predictive p of outfit outside [{PPP_LOW}, {PPP_HIGH}]): "
                     f"{m['n_misfit']} of {m['n_tasks']}")
        for r in m["misfit"][:8]:
            lines.append(f"    {str(r['task'])[:50]:<51} {r['misfit']}-fit: observed {r['observed']:.2f}, "
                         f"predicted {r['predicted']:.2f}, outfit {r['outfit']:.2f}, p {r['ppp']:.3f}")
    g = d.get("gstudy")
    if g:
        if "skipped" in g:
            lines.append(f"G-study ranking: skipped ({g['skipped']})")
        else:
            lines.append(f"Kendall tau, {g['irt_model'].upper()} abilities vs G-study {g['object']} effects "
                         f"({g['n_models']} {g['object']}s): {g['kendall_point']:+.3f}; per draw {_iv(g['kendall'])}"
                         + ("" if g.get("gstudy_converged") in (True, None) else
                            " - the G-study fit did NOT converge: PROVISIONAL"))
    e = d.get("external")
    if e:
        lines.append(f"External ranking {e['file']} ({e['n_models']} in common): Kendall tau {e['kendall_tau']:+.3f}, "
                     f"per draw {_iv(e['kendall_draws'])}; Spearman rho {e['spearman_rho']:+.3f}")
    a = d.get("irt_agreement")
    if a:
        lines.append(f"1PL vs 2PL abilities: Spearman rho {a['spearman_point']:+.3f} (per draw {_iv(a['spearman'])})")
    return "\n".join(lines)


def capability_lines(d: dict) -> list[str]:
    """The headline sentences of a capability study (the app's summary and the DDR sheet print these).

    ``d`` is :meth:`CapabilityStudy.to_dict`.  Every fit's convergence verdict comes first; a number
    from an unconverged fit is marked PROVISIONAL in its own sentence.
    """
    from ..formatting import convergence_verdict, fmt_estimate, fmt_r

    out = []
    for k, m in d["models"].items():
        prov = "" if m["convergence"]["converged"] else " PROVISIONAL (unconverged fit)."
        out.append(f"{k.upper()} on {m['n_subjects']} {'models' if d['subjects'] == 'best-scaffold' else 'agents'} x "
                   f"{m['n_tasks']} tasks: {convergence_verdict(m['convergence'])}.{prov}")
        out.append(f"  Scale: {m['identification']}.")
        top = m["abilities"][0]
        out.append(f"  Highest ability: {top['subject']} {fmt_estimate(top['median'], top['lower90'], top['upper90'], fmt_r)}"
                   f" (90% interval); {m['n_misfit']} of {m['n_tasks']} tasks fit badly (posterior predictive "
                   f"p of outfit outside [{PPP_LOW}, {PPP_HIGH}]).")
    g = d.get("gstudy")
    if g and "skipped" not in g:
        k = g["kendall"]
        out.append(f"Ability ranking vs G-study ranking ({g['n_models']} {g['object']}s): Kendall tau "
                   f"{fmt_estimate(k['median'], k['hdi95'][0], k['hdi95'][1], fmt_r)} per draw (95% HDI)"
                   + ("" if g.get("gstudy_converged") in (True, None) else "; the G-study fit did NOT converge: "
                      "PROVISIONAL") + ".")
    elif g:
        out.append(f"G-study ranking: not compared ({g['skipped']}).")
    e = d.get("external")
    if e:
        k = e["kendall_draws"]
        out.append(f"Ability ranking vs external ranking ({e['n_models']} models in common): Kendall tau "
                   f"{fmt_estimate(k['median'], k['hdi95'][0], k['hdi95'][1], fmt_r)}.")
    a = d.get("irt_agreement")
    if a:
        s = a["spearman"]
        out.append(f"1PL vs 2PL abilities: Spearman rho {fmt_estimate(s['median'], s['hdi95'][0], s['hdi95'][1], fmt_r)}"
                   f" ({cite('krsteski2026')}: 0.99).")
    if len(d["parts"]) > 1:
        out.append(f"The subject-task graph has {len(d['parts'])} unconnected parts: abilities are compared within "
                   "a part only.")
    return out
