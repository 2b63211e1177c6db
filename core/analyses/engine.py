"""The refit engine: every refit an analysis needs, as new counts on the parent fit's cells.

The refit-heavy analyses (difficulty quartiles, hold-out splits, leave-one-benchmark/model-out,
PSIS-LOO) ask for G-study fits of parts of one corpus.  Each part is the parent's model on a
subset or a split of the parent's binomial cells (SPEC sec. 1-2; seed 003 (DDR paper 2026) secs. 5.3-5.4; seed 000 (Hardy et al. 2026)
App. D.3-D.6), so :class:`RefitEngine` maps each job to a
:class:`~ddr_explorer.core.model.refit.RefitRequest` (successes and trials per parent cell, 0
trials where a cell is left out; cells matched by their facet keys) and fits them together with
:func:`~ddr_explorer.core.model.refit.fit_refits`, the model package's contract (warm-started and
batched where its implementation is).  A job is not a refit, and is fitted cold with
:func:`~ddr_explorer.core.fitting.fit_corpus` (and said so in :attr:`BatchResult.cold`), when the
part would be fitted with other terms than the parent: a preset whose terms the part cannot
separate (:func:`~ddr_explorer.core.design.presets.supported_spec`), or another model (a pooled
LOBO part left with one benchmark is fitted per benchmark).  A job whose counts are the parent's
own, under the parent's settings, *is* the parent fit (reopened from the cache).

Cache.  Every refit is stored through :class:`~ddr_explorer.core.cache.FitCache` (atomic, keyed,
verified on read) under :func:`refit_key`: the parent's key, a SHA-256 of the request's counts and
the refit's sampler settings.  A rerun with the same inputs samples nothing.

Convergence gate (:mod:`ddr_explorer.core.gate`).  A refit whose diagnostics fail the gate (split
R-hat <= 1.01, bulk ESS >= 400, no divergence) is refitted once with
:data:`~.rerun.RERUN_DRAWS_FACTOR` times the draws (its own cache key), one whose integrated term's
quadrature was off at its posterior with more quadrature nodes (:func:`~.rerun.rerun_settings`); the
batch counts the refits that converged in the end (:attr:`BatchResult.n_converged`) and those rerun
(:attr:`BatchResult.n_rerun`).

Where refits run.  Locally by default, in this process; with a Dask scheduler address
(``scheduler=``, ``DDR_SCHEDULER``) the pending refits go to the cluster in batches
(:mod:`.cluster`).  Either way the results are the same for the same seeds.

Seeds.  Each refit's random numbers come from (the settings' seed, the request's counts)
(:func:`~ddr_explorer.core.model.refit.request_seed`), not from its place in a batch: a refit gives
the same draws alone, in any batch, in process or on any Dask worker.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..cache import CacheWriteError
from .refits import BatchResult, CancelCallback, FitJob, ProgressCallback, check_cancel
from .rerun import RERUN_DRAWS_FACTOR, rerun_settings

__all__ = ["RefitEngine", "refit_key", "RERUN_DRAWS_FACTOR", "rerun_settings", "SCHEDULER_ENV", "scheduler_address",
           "REFIT_SPEEDUP", "REFIT_ESS_RATIO", "REPORTED_ESS_RATIO", "refit_seconds", "expected_draws",
           "reported_ess_per_draw", "compile_seconds", "precision_draws", "reported_sd"]

#: The environment variable that names a Dask scheduler (``tcp://host:8786``) for the refits.
SCHEDULER_ENV = "DDR_SCHEDULER"
#: Whether engines rerun unconverged refits by default (:attr:`RefitEngine.rerun_unconverged` None).
GATE_RERUN = True
#: A refit's cost per chain-iteration relative to its parent's (same cells, masked; a short warmup; no
#: diagnostics of the warmup).  Measured with bench/bench_refit_cost.py on TB2 hold-out refits (4 chains,
#: run length by the gate) against their parent in the same process: 16.9 ms against 23 ms of CPU per
#: chain-iteration, 0.73.
REFIT_SPEEDUP = 0.73
#: The share of the cores a fit keeps busy on an idle machine: a TB2 fit's 4 chains on 2 CPU cores used 1.76
#: of them (docs/sampler-measurements.md, "Why a TB2 refit needs more draws than its parent").  A parent's CPU
#: seconds over this share of its cores give the pace an idle machine would have had (:func:`refit_seconds`).
IDLE_CORE_SHARE = 0.88
#: A refit's bulk ESS per draw relative to its parent's (smallest over the variance components), as the
#: gate meets it.  TB2 hold-out refits (bench/bench_refit_levers.py, 10 refits in two runs, session 17):
#: mean ESS per draw 0.335 against the parent's 0.621 (0.54), but the gate stops at its first passing
#: look, later on average than the mean ESS per draw implies: 392 and 375 draws per chain measured, which
#: 0.48 predicts (400; 0.54 predicted 350).  Not worse mixing per unit of work: a refit's NUTS trees
#: are half its parent's (31 leapfrog steps per iteration against 63) at the same smallest ESS per
#: leapfrog step (about 0.010), and :data:`REFIT_SPEEDUP` prices the cheaper iterations.  It sets how
#: long :func:`expected_draws` expects the gate to run.
REFIT_ESS_RATIO = 0.48
#: The same for a refit that stops on what it reports (:mod:`.reported`): its run length against the
#: parent's smallest bulk or tail ESS per draw of the reported quantity.  Measured with
#: bench/bench_refit_reported.py on 16 TB2 hold-out refits (Erho2 at the held-out design, session 18):
#: 250 draws per chain on average (150-350) where the parent's ESS per draw of Erho2 is 0.87; 0.55
#: predicts the look at 250 (440 / (0.87 x 0.55 x 4 chains) = 230).  docs/sampler-measurements.md,
#: "Refits stopped on what they report".
REPORTED_ESS_RATIO = 0.55


def scheduler_address(given: str | None = None) -> str | None:
    """The Dask scheduler to use: ``given``, else ``$DDR_SCHEDULER``, else None (run locally)."""
    address = given or os.environ.get(SCHEDULER_ENV) or None
    return None if address in (None, "", "local", "none") else address


def _counts_digest(request) -> str:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(np.asarray(request.successes, np.int64)).tobytes())
    h.update(np.ascontiguousarray(np.asarray(request.trials, np.int64)).tobytes())
    return h.hexdigest()


def refit_key(parent_key: str, request, settings) -> str:
    """Cache key of a refit: the parent's key, the request's counts (SHA-256), the refit's settings and,
    when it stops on them, its reported quantities (:mod:`.reported`)."""
    from ..cache import canonical_json

    sd = dataclasses.asdict(settings)
    if not sd.get("quadrature_nodes"):  # the default node rule: the keys from before the setting existed
        sd.pop("quadrature_nodes", None)
    body = {"kind": "refit", "parent": parent_key, "counts": _counts_digest(request), "settings": sd}
    reported = getattr(request, "reported", ())
    if reported:  # the stopping rule on these quantities (:mod:`.reported`) is part of what was fitted
        body["reported"] = [q.to_dict() for q in reported]
        precision = getattr(request, "precision", None)
        if precision is not None:  # so is the precision rule (its tolerance), when the refit stops by it
            # (the rule, not the tolerance it met: that follows the refits before it, so a refit stored from
            # another batch order may have stopped at another look; either met the rule's ceiling)
            body["precision"] = precision.to_dict()
    payload = canonical_json(body)
    return hashlib.sha256(payload.encode()).hexdigest()


def reported_ess_per_draw(parent_posterior, reported) -> float | None:
    """The parent's smallest bulk or tail ESS per draw over the ``reported`` quantities (:mod:`.reported`),
    computed from its sigma draws with the stopping rule's statistics; None when it cannot be computed."""
    from ..model.stopping import ess_bulk, ess_tail

    sigma = getattr(parent_posterior, "sigma", None)
    if not reported or not sigma:
        return None
    mu = np.asarray(parent_posterior.mu)
    effs = []
    for q in reported:
        try:
            x = np.asarray(q.draws(sigma, getattr(parent_posterior, "spec", None)), np.float64).reshape(mu.shape)
        except (KeyError, ValueError):
            return None
        effs.append(min(ess_bulk(x), ess_tail(x)) / max(x.size, 1))
    e = float(min(effs))
    return e if np.isfinite(e) and e > 0 else None


def reported_sd(parent_posterior, reported) -> float | None:
    """The parent's posterior SD of the first ``reported`` quantity (None when it cannot be computed)."""
    sigma = getattr(parent_posterior, "sigma", None)
    if not reported or not sigma:
        return None
    try:
        x = np.asarray(reported[0].draws(sigma, getattr(parent_posterior, "spec", None)), np.float64)
    except (KeyError, ValueError):
        return None
    sd = float(np.std(x, ddof=1)) if x.size > 1 else float("nan")
    return sd if np.isfinite(sd) and sd > 0 else None


def precision_draws(parent_posterior, settings, reported, rule, share: float | None = None,
                    spread_share: float | None = None) -> int:
    """Draws per chain a refit runs under the precision rule ``rule`` (:class:`~..model.stopping.PrecisionRule`).

    The effective draws it needs (:func:`.precision.needed_ess`: bulk ESS ``rule.min_ess`` on every
    component and on the reported quantity; each quantile's MCSE within the tolerance) at the refit's
    posterior SD (the parent's SD of the quantity over ``sqrt(share)``: a part with a share ``f`` of the
    trials is that much less certain) and the tolerance from the expected spread across refits
    (:func:`.precision.expected_spread` of a split part whose share of the trials is ``spread_share``; the
    ceiling when None), over the parent's ESS per draw scaled as :func:`expected_draws` scales it
    (:data:`REPORTED_ESS_RATIO` for the quantity, :data:`REFIT_ESS_RATIO` for the components), rounded up to
    a look, between ``settings.draws`` and ``settings.max_draws``.
    """
    import math

    from .precision import expected_spread, needed_ess

    sd_whole = reported_sd(parent_posterior, reported)
    f = share if share and 0 < share <= 1 else 1.0
    sd = None if sd_whole is None else sd_whole / math.sqrt(f)
    spread = None if sd_whole is None or spread_share is None else expected_spread(sd_whole, spread_share)
    need_q = needed_ess(rule, sd if sd is not None else float("nan"), spread)
    eff_q = reported_ess_per_draw(parent_posterior, reported) or 0.25
    per_chain = [need_q / (eff_q * REPORTED_ESS_RATIO * settings.chains)]
    diag = getattr(parent_posterior, "diagnostics", None)
    if diag is not None and getattr(diag, "table", None) is not None and len(diag.table) > 1:
        n_draws = max(int(np.asarray(parent_posterior.mu).size), 1)
        ess = float(diag.table.drop(index="mu", errors="ignore")["ess_bulk"].min())
        if np.isfinite(ess) and ess > 0:
            per_chain.append(rule.min_ess / (ess / n_draws * REFIT_ESS_RATIO * settings.chains))
    need = max(per_chain)
    looks = max(0, math.ceil((need - settings.draws) / settings.check_every))
    ceiling = settings.max_draws or parent_posterior.settings.draws
    return int(min(settings.draws + looks * settings.check_every, ceiling))


def expected_draws(parent_posterior, settings, ess_ratio: float | None = None, reported=None) -> int:
    """Draws per chain a refit at ``settings`` will run: ``settings.draws`` with a fixed length; under
    ``stop="gate"`` the first look where the parent's ESS per draw, scaled, gives the stopping rule's bulk
    ESS (:data:`~ddr_explorer.core.model.stopping.STOP_ESS_MARGIN` x 400) over
    ``settings.chains`` chains, between ``settings.draws`` and ``settings.max_draws``.

    Without ``reported``: every variance component's ESS per draw (the smallest) scaled by ``ess_ratio``
    (:data:`REFIT_ESS_RATIO` when None).  With ``reported`` (the quantities the refit stops on,
    :mod:`.reported`): the parent's smallest bulk or tail ESS per draw of those quantities
    (:func:`reported_ess_per_draw`), scaled by ``ess_ratio`` (:data:`REPORTED_ESS_RATIO` when None)."""
    import math

    from ..gate import MIN_ESS_BULK
    from ..model.stopping import STOP_ESS_MARGIN

    if getattr(settings, "stop", "fixed") != "gate":
        return int(settings.draws)
    ps = parent_posterior.settings
    eff = 0.25  # ESS per draw when the parent's diagnostics are not at hand
    ratio = REFIT_ESS_RATIO
    rep = reported_ess_per_draw(parent_posterior, reported) if reported else None
    diag = getattr(parent_posterior, "diagnostics", None)
    if rep is not None:
        eff, ratio = rep, REPORTED_ESS_RATIO
    elif diag is not None and getattr(diag, "table", None) is not None and len(diag.table) > 1:
        n_draws = max(int(np.asarray(parent_posterior.mu).size), 1)
        ess = float(diag.table.drop(index="mu", errors="ignore")["ess_bulk"].min())
        if np.isfinite(ess) and ess > 0:
            eff = ess / n_draws
    eff *= ratio if ess_ratio is None else ess_ratio
    need = STOP_ESS_MARGIN * MIN_ESS_BULK / (eff * settings.chains)
    looks = max(0, math.ceil((need - settings.draws) / settings.check_every))
    return int(min(settings.draws + looks * settings.check_every, settings.max_draws or ps.draws))


def refit_seconds(parent_posterior, settings, *, warm: bool = True, speedup: float | None = None,
                  reported=None, draws_factor: float = 1.0, precision=None, share: float | None = None,
                  spread_share: float | None = None) -> float:
    """Wall seconds of one refit of ``parent_posterior``'s cells at ``settings`` on this machine (no compile).

    From the parent fit's own pace here: its warmup and sampling seconds per chain-iteration (a refit
    keeps every cell, masked, so an iteration costs about what the parent's did, on the same devices),
    times the refit's chain-iterations (``chains`` x (warmup + :func:`expected_draws`); a warm refit's
    warmup is :data:`~ddr_explorer.core.model.refit.WARM_WARMUP`), plus what a refit repeats of the
    parent's set-up and assembly (design, rough fit, diagnostics), times the measured :data:`REFIT_SPEEDUP`.
    The parent's pace is its wall time, or its CPU seconds (``timings["cpu_run"]``) over
    :data:`IDLE_CORE_SHARE` of the cores it ran on when that is less: a parent fitted on a loaded machine
    (session 18: at nice 19 beside the test suite, an estimate of 5.8 h against about 22 min idle) does not
    inflate the estimate.
    ``reported``: the quantities the refit stops on (:func:`expected_draws`); ``draws_factor``: a measured
    correction of those draws for refits the parent's mixing does not predict (difficulty strata,
    :data:`~.defaults.STRATUM_DRAWS_FACTOR`).  ``precision`` (a :class:`~..model.stopping.PrecisionRule`,
    with the refit's ``share`` of the trials and the ``spread_share`` of a split part): the draws the
    precision rule will run (:func:`precision_draws`) instead of the gate's.
    """
    from ..model.refit import WARM_WARMUP

    ps = parent_posterior.settings
    t = getattr(parent_posterior, "timings", None) or {}
    rounds = max(ps.warmup + int(np.asarray(parent_posterior.mu).shape[-1]), 1)
    run = float(t.get("warmup", 0.0)) + float(t.get("sampling", 0.0))
    if not run > 0:  # an old cache entry without its phases: the wall time less a compile's share
        run = 0.8 * float(getattr(parent_posterior, "wall_seconds", 0.0) or 0.0)
    cpu = float(t.get("cpu_run", 0.0))
    if cpu > 0:  # a parent fitted beside other work ran slower than this machine idles: price the idle pace
        run = min(run, cpu / (IDLE_CORE_SHARE * _cores_used(parent_posterior)))
    per_chain_iteration = run / rounds / max(ps.chains, 1)
    W = min(settings.warmup, WARM_WARMUP) if warm else settings.warmup
    if precision is not None and reported and getattr(settings, "stop", "fixed") == "gate":
        draws = precision_draws(parent_posterior, settings, reported, precision, share, spread_share)
    else:
        draws = expected_draws(parent_posterior, settings, reported=reported)
    if getattr(settings, "stop", "fixed") == "gate":  # a fixed length runs its draws whatever the mixing
        draws = min(draws * draws_factor, settings.max_draws or draws * draws_factor)
    iters = settings.chains * (W + draws)
    overhead = sum(float(t.get(k, 0.0)) for k in ("design", "rough_fit", "diagnostics"))
    return (iters * per_chain_iteration + overhead) * (REFIT_SPEEDUP if speedup is None else speedup)


def _cores_used(parent_posterior) -> int:
    """Cores the parent's chains could run on here: its CPU devices ("cpu x4"), at most this machine's cores."""
    dev = str(getattr(parent_posterior, "device", "") or "")
    n = int(dev[len("cpu x"):]) if dev.startswith("cpu x") and dev[len("cpu x"):].isdigit() else 1
    return max(1, min(n, os.cpu_count() or 1))


def compile_seconds(parent_posterior) -> float:
    """The one compile of a batch of refits: the parent's own compile time here."""
    t = getattr(parent_posterior, "timings", None) or {}
    return float(t.get("compile", 0.0))


@dataclass
class _Planned:
    """One job of a batch, planned: what it is and, once fitted, its result."""

    job: FitJob
    kind: str  # "parent", "refit", "cold" or "failed"
    request: Any = None
    key: str | None = None
    reason: str | None = None
    result: Any = None
    error: str | None = None
    share: float = 1.0
    rerun: Any = None
    verdict: Any = None


@dataclass
class RefitEngine:
    """Refits of one parent fit (module note).

    Parameters
    ----------
    corpus
        The parent's corpus.
    spec
        The model asked for (a preset is reduced to the terms the corpus separates, as
        :func:`~ddr_explorer.core.fitting.fit_corpus` does).
    settings
        The parent fit's sampler settings (defaults when None).
    cache_dir
        The fit cache folder (the default one when None).
    parent
        The parent's :class:`~ddr_explorer.core.fitting.FitResult` when at hand (its posterior warm-starts the
        refits and is the result of a job whose counts are the parent's); otherwise it is looked up in the
        cache, never fitted just for the refits.
    scheduler
        A Dask scheduler address (:func:`scheduler_address`); None runs locally.
    batch_size
        Refits per Dask future (None: the pending refits spread evenly over the cluster's workers).
    rerun_unconverged
        Rerun a refit that fails the convergence gate once with more draws (None: :data:`GATE_RERUN`,
        True; False only to measure or test the refits themselves).
    """

    corpus: Any
    spec: Any = "per-benchmark"
    settings: Any = None
    cache_dir: str | Path | None = None
    parent: Any = None
    scheduler: str | None = None
    batch_size: int | None = None
    rerun_unconverged: bool | None = None
    _design: Any = field(default=None, init=False, repr=False)
    _parent_posterior: Any = field(default=None, init=False, repr=False)
    _parent_looked_up: bool = field(default=False, init=False, repr=False)

    def __post_init__(self):
        from ..model.formula import as_spec
        from ..model.posterior import SamplerSettings

        if self.parent is not None and not hasattr(self.parent, "posterior"):  # a bare posterior: wrap it
            from ..fitting import FitResult

            self.parent = FitResult(self.parent, None, None, True)
        if self.parent is not None:
            post = self.parent.posterior
            self.settings = post.settings
            self.spec = post.spec
            self._parent_posterior = post
            self._parent_looked_up = True
        self.requested_spec = as_spec(self.spec)
        self.settings = self.settings or SamplerSettings()
        self.scheduler = scheduler_address(self.scheduler)
        self._fitted_spec = None

    # -- the parent ------------------------------------------------------------------
    @property
    def fitted_spec(self):
        """The spec the parent is fitted with (the preset reduced to what the corpus separates)."""
        if self._fitted_spec is None:
            from ..design.presets import supported_spec

            self._fitted_spec = (self.requested_spec if self.parent is not None
                                 else supported_spec(self.corpus, self.requested_spec).spec)
        return self._fitted_spec

    @property
    def design(self):
        """The parent's :class:`~ddr_explorer.core.model.design_matrix.DesignMatrix` (its cells align requests)."""
        if self._design is None:
            from ..model.design_matrix import build_design

            self._design = build_design(self.corpus, self.fitted_spec)
            cols = [c for c in self._design.cells.columns if c not in ("successes", "trials")]
            self._cols = cols
            # each parent cell as one integer: its columns' codes among the parent's own values, mixed-radix
            # (what :meth:`request` looks a part's rows up in; a hundred parts are a hundred lookups)
            cells = self._design.cells[cols].astype(str)
            self._levels = [pd.Index(pd.unique(cells[c].to_numpy())) for c in cols]
            codes = [lv.get_indexer(cells[c].to_numpy()) for lv, c in zip(self._levels, cols)]
            self._radix = tuple(len(lv) for lv in self._levels)
            cell_id = np.ravel_multi_index(codes, self._radix) if cols else np.zeros(len(cells), np.int64)
            self._order = np.argsort(cell_id, kind="stable")
            self._sorted_ids = cell_id[self._order]
        return self._design

    @property
    def parent_key(self) -> str:
        """The parent fit's cache key (:func:`~ddr_explorer.core.fitting.fit_key`)."""
        if self.parent is not None and getattr(self.parent, "key", None):
            return self.parent.key
        from ..fitting import fit_key

        return fit_key(self.corpus, self.fitted_spec, self.settings)

    def _cache(self):
        from ..cache import FitCache
        from ..files import default_cache_dir

        return FitCache(self.cache_dir or default_cache_dir())

    def parent_posterior(self):
        """The parent's posterior: given, or reopened from the cache; None when neither (not fitted here)."""
        if not self._parent_looked_up:
            self._parent_looked_up = True
            from ..fitting import posterior_from_entry

            entry, _ = self._cache().load(self.parent_key)
            if entry is not None:
                try:
                    self._parent_posterior = posterior_from_entry(entry)
                except (KeyError, TypeError, ValueError):
                    self._parent_posterior = None
        return self._parent_posterior

    # -- jobs -> requests ------------------------------------------------------------
    def request(self, label: str, data):
        """The :class:`~ddr_explorer.core.model.refit.RefitRequest` of a part of the corpus.

        Parameters
        ----------
        label
            The job's name (errors name it).
        data
            A sub-corpus or a cell table with the parent's cell columns, ``successes`` and ``trials``
            (e.g. a hold-out split's training part): its records are summed per parent cell.

        Raises
        ------
        ValueError
            A cell of ``data`` is not one of the parent's cells (it names the cell and the fix).
        """
        from ..model.refit import RefitRequest

        design = self.design
        table = getattr(data, "table", data)
        missing = [c for c in self._cols if c not in table.columns]
        if missing:
            raise ValueError(f"refit {label!r}: the part lacks the parent's cell column(s) {', '.join(missing)}")
        keys = {c: table[c].astype(str).to_numpy() for c in self._cols}
        codes = [lv.get_indexer(keys[c]) for lv, c in zip(self._levels, self._cols)]
        pos = np.full(len(table), -1, np.int64)
        known = np.logical_and.reduce([k >= 0 for k in codes]) if codes else np.ones(len(table), bool)
        if known.any():
            ids = np.ravel_multi_index([k[known] for k in codes], self._radix)
            at = np.minimum(np.searchsorted(self._sorted_ids, ids), max(len(self._sorted_ids) - 1, 0))
            hit = self._sorted_ids[at] == ids
            pos[np.flatnonzero(known)[hit]] = self._order[at[hit]]
        if (pos < 0).any():
            row = int(np.flatnonzero(pos < 0)[0])  # the first row (in the part's order) whose cell is not the parent's
            named = ", ".join(f"{c}={keys[c][row]}" for c in self._cols)
            raise ValueError(f"refit {label!r}: its cell ({named}) is not a cell of the parent corpus "
                             f"{getattr(self.corpus, 'name', '')!r}; a refit can only keep, split or drop the "
                             "parent's cells - fit that part on its own (fit_corpus)")
        s = np.zeros(design.n_cells, np.int64)
        n = np.zeros(design.n_cells, np.int64)
        np.add.at(s, pos, table["successes"].to_numpy(np.int64))
        np.add.at(n, pos, table["trials"].to_numpy(np.int64))
        return RefitRequest(label, s, n)

    def _model_of(self, spec) -> tuple:
        """What makes two specs one model (as the cache key sees it): terms, folded terms, family, priors."""
        from ..cache import canonical_json

        d = spec.to_dict()
        return (tuple(spec.term_names), canonical_json({k: d[k] for k in ("folded", "family", "priors")}))

    def _plan(self, job: FitJob, settings) -> _Planned:
        from ..design.presets import supported_spec
        from ..model.formula import as_spec

        job_spec = as_spec(job.spec) if job.spec is not None else self.requested_spec
        same_as_asked = job_spec.formula == self.requested_spec.formula and job_spec.name == self.requested_spec.name
        if job.corpus is self.corpus and same_as_asked:
            sub_spec = self.fitted_spec
        else:
            sub_spec = supported_spec(job.corpus, job_spec).spec
        if self._model_of(sub_spec) != self._model_of(self.fitted_spec):
            left = [t for t in self.fitted_spec.term_names if t not in sub_spec.term_names]
            why = (f"its part cannot separate {', '.join(left)}" if left and same_as_asked
                   else f"it is fitted with {sub_spec.formula}")
            return _Planned(job, "cold", reason=f"{job.label}: fitted cold, not as a refit of the parent's model "
                                                f"({self.fitted_spec.formula}): {why}")
        request = self.request(job.label, job.corpus)
        if job.reported:
            request = dataclasses.replace(request, reported=tuple(job.reported),
                                          precision=getattr(job, "precision", None))
        d = self.design
        if (np.array_equal(request.trials, d.trials) and np.array_equal(request.successes, d.successes)
                and settings == self.settings):
            return _Planned(job, "parent")
        request.check(d)
        share = float(request.trials.sum()) / max(float(d.trials.sum()), 1.0)
        return _Planned(job, "refit", request=request, key=refit_key(self.parent_key, request, settings), share=share)

    def refit_whole(self, settings=None, *, progress: ProgressCallback | None = None,
                    cancel: CancelCallback | None = None):
        """The parent's own cells refitted, every random effect kept, in memory (not cached: the cache
        keeps no task-level effects); what PSIS-LOO needs when only a cached parent is at hand.  With a
        scheduler it runs on the cluster (:func:`.cluster.posterior_on_cluster`) and comes back in memory."""
        from ..model.refit import RefitRequest, fit_refits

        d = self.design
        req = RefitRequest("whole corpus (all effects)", d.successes.copy(), d.trials.copy())
        if self.scheduler is not None:  # on the cluster like the other refits (same seed: the same draws)
            from .cluster import posterior_on_cluster

            return posterior_on_cluster(self.scheduler, d, self.fitted_spec, req, settings or self.settings,
                                        parent=self.parent_posterior(), progress=progress, cancel=cancel)
        return fit_refits(d, self.fitted_spec, [req], settings or self.settings, parent=self.parent_posterior(),
                          progress=progress, cancel=cancel)[0]

    def to_sample(self, jobs: Sequence[FitJob], settings=None) -> list[str]:
        """Labels of the ``jobs`` that :meth:`run` would sample: neither the parent itself nor a refit whose
        cache entry exists (a job that cannot be planned costs nothing and is not named).

        What :func:`~.defaults.plan_sheet_analyses` prices: a sheet whose refits are all stored costs the
        reading of them, not their sampling.  An entry is counted by its file (not opened); one the gate
        will rerun counts as stored too, since the estimate never assumes a rerun.
        """
        settings = settings or self.settings
        cache = self._cache()
        out = []
        for job in jobs:
            try:
                p = self._plan(job, settings)
            except ValueError:
                continue
            if p.kind == "parent" or (p.kind == "refit" and cache.path_for(p.key).exists()):
                continue
            out.append(job.label)
        return out

    # -- running ---------------------------------------------------------------------
    def run(self, jobs: Sequence[FitJob], settings=None, *, progress: ProgressCallback | None = None,
            cancel: CancelCallback | None = None, what: str = "batch", skip_failed: bool = False) -> BatchResult:
        """Fit every job: reopened from the cache, refitted on the parent's cells, or cold (module note).

        Parameters
        ----------
        jobs
            The parts to fit (:class:`~.refits.FitJob`: label, sub-corpus, model; a ``spec`` of None is the
            parent's model).
        settings
            Sampler settings of the refits (the parent's when None).
        progress
            ``progress(phase, done, total, eta_seconds)`` over the whole batch.
        cancel
            Polled between jobs and inside the sampler; every pending Dask future is cancelled with it.
        what
            The batch's name (progress, the cancellation message).
        skip_failed
            A job that cannot be fitted (a ``ValueError``) gets None and its message in
            :attr:`BatchResult.errors` instead of stopping the batch.

        Returns
        -------
        BatchResult
            In job order; :attr:`~.refits.BatchResult.cold` names the jobs fitted cold and why.

        Raises
        ------
        FitCancelled
            ``cancel()`` returned True; the refits stored so far stay in the cache.
        """
        settings = settings or self.settings
        n = len(jobs)
        out = BatchResult()
        t0 = time.perf_counter()
        clock = _Clock(n, progress, what)
        planned: list[_Planned] = []
        for job in jobs:
            check_cancel(cancel, f"{what} ({job.label})")
            try:
                planned.append(self._plan(job, settings))
            except ValueError as exc:
                if not skip_failed:
                    raise
                planned.append(_Planned(job, "failed", error=str(exc)))
        clock.emit("planned", 0)

        # 1. the cache: every refit already stored is reopened, nothing sampled
        cache = self._cache()
        for p in planned:
            if p.kind == "refit":
                p.result = self._load(cache, p.key)
                if p.result is not None:
                    out.n_cached += 1
                    clock.done += 1
        clock.emit("cache", clock.done)
        # the precision rule's tolerance follows the spread of the refits so far: the stored ones first
        from ..model.stopping import SpreadTracker

        self._spread = SpreadTracker()
        for p in planned:
            if p.kind == "refit" and p.result is not None:
                self._add_spread(p)

        # 2. the parent and the cold jobs, one fit_corpus each (cached under the usual key)
        for p in planned:
            if p.kind not in ("parent", "cold"):
                continue
            check_cancel(cancel, f"{what} ({p.job.label})")
            self._fit_one(p, settings, out, clock, cancel, skip_failed)
            if p.kind == "cold" and p.reason:
                out.cold[p.job.label] = p.reason

        # 3. the pending refits, together
        pending = [p for p in planned if p.kind == "refit" and p.result is None]
        self._refit(pending, settings, out, clock, cancel, skip_failed)

        # 4. the gate: an unconverged refit (or cold part) is rerun once with more draws
        gate = GATE_RERUN if self.rerun_unconverged is None else self.rerun_unconverged
        again = [p for p in planned if gate and p.result is not None
                 and p.kind in ("refit", "cold") and not self._converged(p)]
        if again:
            clock.total += len(again)
            for p in again:
                out.rerun.append(p.job.label)
            refits: dict = {}  # rerun settings -> the refits rerun with them (one fit_refits call each)
            for p in again:
                s2 = self._rerun_settings(p, settings)
                if p.kind == "refit":
                    key2 = refit_key(self.parent_key, p.request, s2)
                    q = _Planned(p.job, "refit", request=p.request, key=key2, share=p.share)
                    q.result = self._load(cache, key2)
                    if q.result is not None:
                        out.n_cached += 1
                        clock.done += 1
                    else:
                        refits.setdefault(s2, []).append(q)
                    p.rerun = q
                else:
                    q = _Planned(p.job, "cold")
                    self._fit_one(q, s2, out, clock, cancel, skip_failed)
                    p.rerun = q
            for s2, group in refits.items():
                self._refit(group, s2, out, clock, cancel, skip_failed)
            for p in again:
                if p.rerun.result is not None:
                    p.result = p.rerun.result
                    p.verdict = p.rerun.verdict

        for p in planned:
            out.results.append(p.result)
            if p.error is not None:
                out.errors[p.job.label] = p.error
                if p.result is None and not skip_failed:
                    raise ValueError(p.error)
            out.kinds.append(p.kind)
            if p.result is not None and p.kind == "refit" and p.request is not None and p.request.reported:
                self._converged(p)
                out.verdicts.append(p.verdict)
            else:
                out.verdicts.append(None)
        out.wall_seconds = time.perf_counter() - t0
        if progress is not None:
            progress(f"{what} done", clock.total, clock.total, 0.0)
        return out

    def _add_spread(self, p: _Planned) -> None:
        """Add a refit's reported median to the tolerance's spread (:class:`~..model.stopping.SpreadTracker`)."""
        rule = getattr(p.request, "precision", None) if p.request is not None else None
        if rule is None or not p.request.reported:
            return
        post = p.result.posterior
        try:
            x = p.request.reported[0].draws(post.sigma, post.spec)
        except (KeyError, ValueError):
            return
        self._spread.add(rule.group, float(np.median(x)))

    def _rerun_settings(self, p: _Planned, settings):
        """:func:`rerun_settings` for an unconverged job: a refit with reported quantities failed its sampling
        when its verdict's sampling checks did (:attr:`.reported.ReportedVerdict.sampled`)."""
        post = p.result.posterior
        sampling = None
        if p.kind == "refit" and p.request is not None and p.request.reported:
            sampling = not p.verdict.sampled
        return rerun_settings(settings, post, sampling=sampling)

    @staticmethod
    def _converged(p: _Planned) -> bool:
        """The gate on a planned job's result: on what it reports for a refit with reported quantities
        (:func:`.reported.reported_verdict`, kept in ``p.verdict``), on every component otherwise."""
        post = p.result.posterior
        if p.kind == "refit" and p.request is not None and p.request.reported:
            if p.verdict is None:
                from .reported import reported_verdict

                p.verdict = reported_verdict(post, p.request.reported, precision=p.request.precision)
            return p.verdict.converged
        return bool(post.diagnostics.converged)

    def _load(self, cache, key):
        from ..fitting import FitResult, posterior_from_entry

        entry, problem = cache.load(key)
        if entry is None:
            if problem is not None:
                cache.discard(key)
            return None
        try:
            return FitResult(posterior_from_entry(entry), key, cache.path_for(key), True)
        except (KeyError, TypeError, ValueError):
            cache.discard(key)
            return None

    def _fit_one(self, p: _Planned, settings, out: BatchResult, clock, cancel, skip_failed) -> None:
        from ..fitting import fit_corpus

        label = p.job.label
        if p.kind == "parent" and self.parent is not None:
            p.result = self.parent
            out.n_cached += 1
            clock.done += 1
            return
        spec = p.job.spec if p.job.spec is not None else self.requested_spec
        t = time.perf_counter()
        try:
            res = fit_corpus(p.job.corpus, spec, settings, cache_dir=self.cache_dir,
                             progress=clock.inner(label), cancel=cancel)
        except ValueError as exc:  # FitCancelled is a RuntimeError and passes
            if not skip_failed:
                raise
            p.error = str(exc)
            clock.done += 1
            return
        p.result = res
        if res.from_cache:
            out.n_cached += 1
        else:
            out.n_fitted += 1
            clock.sampled(time.perf_counter() - t, 1)
        clock.done += 1

    def _refit(self, pending: list[_Planned], settings, out: BatchResult, clock, cancel, skip_failed) -> None:
        if not pending:
            return
        clock.base_done = clock.done
        from ..fitting import FitResult, posterior_to_entry

        cache = self._cache()
        t = time.perf_counter()
        if self.scheduler is not None:
            from .cluster import refit_on_cluster

            entries = refit_on_cluster(self.scheduler, self.design, self.fitted_spec, [p.request for p in pending],
                                       settings, parent=self.parent_posterior(), keys=[p.key for p in pending],
                                       cache_dir=str(cache.root), batch_size=self.batch_size,
                                       progress=clock.outer(len(pending)), cancel=cancel)
            from ..fitting import posterior_from_entry

            for p, entry in zip(pending, entries):
                if isinstance(entry, str):  # the worker's ValueError message
                    if not skip_failed:
                        raise ValueError(entry)
                    p.error = entry
                    continue
                path = cache.path_for(p.key)
                if not path.exists():  # the workers may not share this folder
                    try:
                        cache.store(p.key, entry)
                    except CacheWriteError:  # the refit stands; only its file is missing
                        path = None
                p.result = FitResult(posterior_from_entry(entry), p.key, path, False)
                out.n_fitted += 1
        else:
            def keep(p: _Planned, post) -> None:
                # cached the moment its batch ends: an interrupted run keeps every refit finished before it
                path = problem = None
                try:
                    path = cache.store(p.key, posterior_to_entry(post, None))
                except CacheWriteError as exc:  # the refit stands; only its file is missing
                    problem = str(exc)
                p.result = FitResult(post, p.key, path, False, problem)

            posts = self._local(pending, settings, clock, cancel, skip_failed, keep)
            for p, post in zip(pending, posts):
                if post is None:
                    continue
                if p.result is None:
                    keep(p, post)
                out.n_fitted += 1
        clock.sampled(time.perf_counter() - t, len(pending))
        clock.done = clock.base_done + len(pending)

    def _local(self, pending, settings, clock, cancel, skip_failed, keep=None) -> list:
        """fit_refits on all pending requests at once; on a ValueError, one by one to find the failing part.

        ``keep(planned, posterior)`` stores each refit as its batch finishes (see :meth:`_refit`)."""
        def on_result(i, post, _group=pending):
            if keep is not None:
                keep(_group[i], post)

        from ..model.refit import fit_refits

        clock.base_done = clock.done
        # the precision rule's tolerance across the batch (asked only where a refit runs by it)
        extra = ({"spread": self._spread} if any(getattr(p.request, "precision", None) is not None for p in pending)
                 and getattr(self, "_spread", None) is not None else {})
        try:
            return fit_refits(self.design, self.fitted_spec, [p.request for p in pending], settings,
                              parent=self.parent_posterior(), progress=clock.outer(len(pending)), cancel=cancel,
                              on_result=on_result, **extra)
        except ValueError:
            if not skip_failed:
                raise
        posts = []
        for i, p in enumerate(pending):
            try:
                posts.append(fit_refits(self.design, self.fitted_spec, [p.request], settings,
                                        parent=self.parent_posterior(), cancel=cancel,
                                        on_result=lambda _i, post, _p=p: keep and keep(_p, post), **extra)[0])
            except ValueError as exc:
                p.error = f"{p.job.label}: {exc}"
                posts.append(None)
        return posts


class _Clock:
    """Progress over a whole batch: jobs done of the total, ETA from the mean sampled time per job."""

    def __init__(self, total: int, progress, what: str):
        self.total, self.progress, self.what = total, progress, what
        self.done = 0
        self.base_done = 0
        self.seconds = 0.0
        self.count = 0

    def sampled(self, seconds: float, count: int) -> None:
        self.seconds += seconds
        self.count += count

    def eta(self, done: int) -> float | None:
        if not self.count:
            return None
        return self.seconds / self.count * max(self.total - done, 0)

    def emit(self, phase: str, done: int, eta=None) -> None:
        if self.progress is not None:
            self.progress(phase, done, self.total, self.eta(done) if eta is None else eta)

    def inner(self, label: str):
        def cb(phase, it, total, eta):
            if self.progress is not None:
                rest = self.eta(self.done + 1)
                self.progress(f"{label}: {phase}", self.done, self.total,
                              None if eta is None and rest is None else (eta or 0.0) + (rest or 0.0))
        return cb

    def outer(self, n: int):
        start = time.perf_counter()
        base = self.done
        self.base_done = base

        def cb(phase, i, total, eta):
            if self.progress is None:
                return
            done = base + int(i)
            if i > 0:  # refits of this call finished so far give the pace of the rest
                per = (time.perf_counter() - start) / i
                left = per * (n - i) + (self.eta(base + n) or 0.0)
            else:
                left = None if eta is None else eta * n
            self.progress(phase, done, self.total, left)
        return cb
