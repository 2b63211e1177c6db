"""What a fit returns and the settings that produce it (no jax here: the CLI and the app import
these without loading the sampler).

:class:`SamplerSettings` holds every knob of :func:`.sampler.fit`, :class:`Posterior` its draws
and how they were obtained, :class:`FitCancelled` is raised when the user stops a fit between
chunks, and ``ProgressCallback`` / ``CancelCallback`` are the shapes of the two callbacks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from .formula import ModelSpec

ProgressCallback = Callable[[str, int, int, "float | None"], None]
CancelCallback = Callable[[], bool]


#: Post-warmup draws per chain by default: 4 x 700 draws bring the slowest component of the HAL-scale
#: pooled fit to bulk ESS of about 530 (it had 381 with 500: 0.19 effective draws per draw, measured),
#: and cost TB2 about 5 s more than 500.
DEFAULT_DRAWS = 700
#: Minimum post-warmup draws per chain when the gate sets the run length (``stop="gate"``): 4 chains x 200
#: give split R-hat 8 half-chains of 100 draws, the safeguard against stopping at a lucky fluctuation.
DEFAULT_MIN_DRAWS_GATE = 200
#: Ceiling of post-warmup draws per chain under ``stop="gate"`` (about 4 x what the HAL-scale pooled corpus needs).
DEFAULT_MAX_DRAWS = 4000


class FitCancelled(RuntimeError):
    """The user cancelled the fit (raised between sampler chunks)."""


@dataclass(frozen=True)
class SamplerSettings:
    """Settings of :func:`.sampler.fit`.

    Attributes
    ----------
    draws, warmup, chains
        Post-warmup draws per chain, warmup iterations per chain, number of chains.  With
        ``stop="gate"`` (the default) at least ``draws`` (default 200), the first look of the
        stopping rule; with ``stop="fixed"`` exactly ``draws`` (default 700).
    stop
        How long the chains run after warmup.  ``"gate"`` (default): until every variance
        component passes the convergence gate with a margin
        (split R-hat <= 1.01, bulk and tail ESS >= 440, no divergence; :mod:`.stopping`), looked at
        every ``check_every`` draws per chain from ``draws`` on, or until a ceiling: ``max_draws``
        per chain or ``max_seconds`` of sampling; a run that reaches a ceiling is reported not
        converged, as a short fixed run is.  A divergence ends the run at the next look.
        ``"fixed"``: exactly ``draws`` per chain (the rule before the gate became the default; a fit cached under
        it keeps its key, :func:`~ddr_explorer.core.fitting.fit_key`).  The gate is the default
        because a fixed length is either too long (TB2: 4 x 700 draws reach bulk ESS ~1,460
        where the gate asks for 400) or too short (a small pooled corpus ends below 400).
    max_draws
        Ceiling of draws per chain under ``stop="gate"`` (default 4,000; None with ``"fixed"``).
    max_seconds
        Ceiling of the sampling phase's wall seconds under ``stop="gate"`` (None: no time ceiling).
        A time ceiling makes the number of draws depend on the machine's speed: same seed, same
        draws up to where it stopped.
    adaptive_warmup
        End the slow adaptation windows early once the mass matrix has settled between two
        windows, i.e. changes by no more than the noise of its estimates (:mod:`.warmup`): up to
        150 of 300 warmup iterations saved where the start near the mode is good.  True by default
        (its coverage was checked, docs/sampler-measurements.md); False: Stan's full schedule.
    check_every
        Draws per chain between two looks of the stopping rule (default 50: two chunks; a look costs
        a few milliseconds).
    seed
        Same seed and settings -> identical draws.
    target_accept
        NUTS target acceptance probability (Stan's adapt_delta).
    max_tree_depth
        NUTS maximum tree depth (at most 2^depth - 1 leapfrog steps per draw).
    device
        ``"auto"`` (GPU when JAX sees one, else CPU), ``"cpu"`` or ``"gpu"``.
    parameterisation
        ``"auto"`` (per-level partial centring), ``"term"`` (centred or non-centred per
        term), ``"centered"`` or ``"noncentered"``.
    dense_globals
        Dense mass matrix over (alpha, log sigma, w); diagonal otherwise.
    chunk_size
        NUTS transitions per jitted chunk (progress and cancellation granularity).
    keep_random_effects
        Keep the draws of every random effect (needed for ranks).
    float64
        Sample in double precision (slower; float32 is accurate enough for these sums).
    collapsed, collapsed_steps
        ``"joint"`` (default): after every NUTS transition, a partially collapsed Gibbs step
        updates mu and the variance components of the terms nested in one small "run" term
        (model:scaffold per benchmark; benchmark:model:scaffold pooled) with
        ``collapsed_steps`` Metropolis steps on their marginal given the run sums, then
        redraws those terms' random effects exactly.  ``"gibbs"``: the same, with the nested
        terms (other than the run term) taken out of NUTS.  ``"off"``: NUTS alone.
        ``collapsed_steps=None`` (default): :func:`.parameterisation.collapsed_steps_for` chooses 30 to 200
        steps, about 5% of a NUTS transition's time.
    scale_steps
        Repeats of the scale moves (:mod:`.parameterisation`, item 7) after every NUTS transition, one
        Metropolis step per eigen-direction of the log-sigma covariance each; odd repeats use
        the u-scaling group.  6 by default: on the HAL-scale pooled corpus 6 repeats instead of
        2 raised the bulk ESS of benchmark:task:model from 158 to 264 and of benchmark:task
        from 548 to 1,046 for 2.4% more wall time; 16 gave no more (245).
    pool_adaptation
        Pool the warmup (co)variance estimates of all chains at each adaptation window and
        give every chain the median adapted step size (cross-chain adaptation).
    marginalise
        ``"auto"`` (default): integrate one term with many weakly informed levels (the pooled
        model's benchmark:task:model) out of the likelihood by Gauss-Hermite quadrature per level
        when :func:`.quadrature.choose_marginal_term` finds the quadrature accurate on the data
        (:mod:`.parameterisation`, item 10); its sigma is sampled, its random effects are not kept.
        ``"off"``: sample every term's levels.
    quadrature_nodes
        Fewest Gauss-Hermite nodes of an integrated term's quadrature: the smallest count of
        :data:`.quadrature.NODE_COUNTS` at least this large that passes the accuracy checks is used.
        0 (default): the smallest that passes.  The refit engine raises it for the one rerun of a
        refit whose quadrature was not accurate enough at its posterior (more draws cannot mend
        that; :func:`ddr_explorer.core.analyses.rerun.rerun_settings`).  Part of the cache key only
        when not 0.
    nested_centring
        Centre on the data (:mod:`.parameterisation`, item 11): each term's deviations centred with its
        levels' information shares, so that alpha is the number the data pin down, and a term
        centred on its host where the host is absorbed by it (benchmark:task on benchmark in
        the pooled model), so that a coarse level its nested levels explain leaves the
        likelihood.  False: plain means and each term on its own (items 1-2 only).
    """

    draws: int | None = None
    warmup: int = 300
    chains: int = 4
    seed: int = 0
    target_accept: float = 0.85
    max_tree_depth: int = 8
    device: str = "auto"
    parameterisation: str = "auto"
    dense_globals: bool = True
    chunk_size: int = 25
    keep_random_effects: bool = True
    float64: bool = False
    collapsed: str = "joint"
    collapsed_steps: int | None = None
    scale_steps: int = 6
    pool_adaptation: bool = True
    marginalise: str = "auto"
    quadrature_nodes: int = 0
    nested_centring: bool = True
    stop: str = "gate"
    max_draws: int | None = None
    max_seconds: float | None = None
    check_every: int = 50
    adaptive_warmup: bool = True

    def __post_init__(self):
        if self.stop not in ("fixed", "gate"):
            raise ValueError(f"stop must be 'fixed' (draws per chain) or 'gate' (until converged, at most "
                             f"max_draws), got '{self.stop}'.")
        if self.draws is None:  # the default depends on the rule: exact 700, or at least 200
            object.__setattr__(self, "draws", DEFAULT_DRAWS if self.stop == "fixed" else DEFAULT_MIN_DRAWS_GATE)
        if self.stop == "fixed":
            if self.max_draws is not None or self.max_seconds is not None:
                raise ValueError("max_draws and max_seconds are ceilings of stop='gate'; with stop='fixed' the run "
                                 f"is exactly draws={self.draws} per chain: drop them or set stop='gate'.")
        else:
            if self.max_draws is None:
                object.__setattr__(self, "max_draws", max(DEFAULT_MAX_DRAWS, self.draws))
            if self.max_draws < self.draws:
                raise ValueError(f"max_draws ({self.max_draws}) is below the minimum draws ({self.draws}) per "
                                 "chain: raise max_draws or lower draws.")
            if self.max_seconds is not None and not self.max_seconds > 0:
                raise ValueError(f"max_seconds must be positive (or None: no time ceiling), got {self.max_seconds}.")
        if self.check_every < 1:
            raise ValueError(f"check_every must be at least 1 draw per chain, got {self.check_every}.")
        if self.draws < 1 or self.warmup < 0 or self.chains < 1:
            raise ValueError(f"need draws >= 1, warmup >= 0 and chains >= 1; got draws={self.draws}, "
                             f"warmup={self.warmup}, chains={self.chains}.")
        if not 0 < self.target_accept < 1:
            raise ValueError(f"target_accept must lie in (0, 1), got {self.target_accept}.")
        if self.device not in ("auto", "cpu", "gpu"):
            raise ValueError(f"device must be 'auto', 'cpu' or 'gpu', got '{self.device}'.")
        if self.chunk_size < 1:
            raise ValueError("chunk_size must be at least 1.")
        if self.collapsed_steps is not None and self.collapsed_steps < 1:
            raise ValueError(f"collapsed_steps must be at least 1 (or None: automatic), got {self.collapsed_steps}.")
        if self.collapsed not in ("joint", "gibbs", "off"):
            raise ValueError(f"collapsed must be 'joint', 'gibbs' or 'off', got '{self.collapsed}'.")
        if self.parameterisation not in ("auto", "term", "centered", "noncentered"):
            raise ValueError(f"parameterisation must be auto, term, centered or noncentered, got "
                             f"'{self.parameterisation}'.")
        if self.marginalise not in ("auto", "off"):
            raise ValueError(f"marginalise must be 'auto' or 'off', got '{self.marginalise}'.")
        if self.quadrature_nodes < 0:
            raise ValueError(f"quadrature_nodes must be >= 0 (0: the fewest that pass the checks), got "
                             f"{self.quadrature_nodes}.")



@dataclass
class Posterior:
    """Draws of the model of a :class:`~.formula.ModelSpec` and how they were obtained.

    Attributes
    ----------
    sigma
        Term name -> (chains, draws) standard deviations sigma_F on the logit scale.
    mu
        (chains, draws) intercept.
    random_effects
        Term name -> (chains, draws, n_levels) random intercepts u_F (empty when not kept).
    levels
        Term name -> DataFrame of the identifying columns of each level (row j = index j).
    spec, settings
        The model and the sampler settings.
    device
        Where it ran (``"cpu"`` with the number of devices, or the GPU's name).
    wall_seconds
        Wall time of :func:`.sampler.fit`, design to diagnostics.
    timings
        Seconds per phase (design, rough_fit, compile, warmup, sampling, diagnostics).
    sample_stats
        (chains, draws) arrays: diverging, energy, num_steps, tree_depth, accept_prob, step_size.
    diagnostics
        :class:`~.diagnostics.Diagnostics` of the variance components.
    n_cells, n_trials
        Size of the data.
    notes
        Design remarks (folded terms, ...).
    integrated
        Terms integrated out of the likelihood by quadrature (``SamplerSettings.marginalise``):
        their sigma is sampled, their random effects have no draws.
    quadrature_error
        For an integrated term: the quadrature's summed log-likelihood error (nats) at the last
        draw and the 97.5% quantile of its sigma (:func:`.quadrature.rule_error`); None otherwise.
    quadrature_nodes
        For an integrated term: the Gauss-Hermite nodes of its quadrature; None otherwise.
    """

    sigma: dict[str, np.ndarray]
    mu: np.ndarray
    random_effects: dict[str, np.ndarray]
    levels: dict[str, pd.DataFrame]
    spec: ModelSpec
    settings: SamplerSettings
    device: str
    wall_seconds: float
    timings: dict[str, float]
    sample_stats: dict[str, np.ndarray]
    diagnostics: "object | None" = None
    n_cells: int = 0
    n_trials: int = 0
    notes: list[str] = field(default_factory=list)
    integrated: list[str] = field(default_factory=list)
    quadrature_error: "float | None" = None
    quadrature_nodes: "int | None" = None

    @property
    def term_names(self) -> tuple[str, ...]:
        return tuple(self.sigma)

    @property
    def variance_components(self) -> dict[str, np.ndarray]:
        """Term name -> (chains, draws) sigma_F^2, plus ``"residual"`` = pi^2/3."""
        out = {k: v.astype(np.float64) ** 2 for k, v in self.sigma.items()}
        out["residual"] = np.full_like(self.mu, self.spec.residual_variance, dtype=np.float64)
        return out

    def variance_draws(self) -> dict[str, np.ndarray]:
        """Term name -> (chains x draws,) sigma_F^2 draws, chains concatenated (for
        :class:`ddr_explorer.core.reliability.VarianceComponents`)."""
        return {k: (v.astype(np.float64) ** 2).ravel() for k, v in self.sigma.items()}

    @property
    def converged(self) -> bool:
        return bool(self.diagnostics is not None and self.diagnostics.converged)

    def summary(self) -> pd.DataFrame:
        """Posterior mean, sd and 95% equal-tailed interval of each sigma (and mu)."""
        rows = []
        for name, d in [*self.sigma.items(), ("mu", self.mu)]:
            f = np.asarray(d, np.float64).ravel()
            rows.append({"term": name, "mean": f.mean(), "sd": f.std(ddof=1),
                         "q2.5": np.quantile(f, 0.025), "q97.5": np.quantile(f, 0.975)})
        df = pd.DataFrame(rows).set_index("term")
        if self.diagnostics is not None:
            df = df.join(self.diagnostics.table[["r_hat", "ess_bulk", "ess_tail"]], how="left")
        return df

    def to_inference_data(self, random_effects: bool = True):
        """An ``arviz.InferenceData`` with posterior (sigma_<term>, mu, u_<term>) and sample_stats."""
        from .diagnostics import to_inference_data

        return to_inference_data(self, random_effects=random_effects)
