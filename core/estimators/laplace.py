"""Laplace approximation for the binomial-logit random-intercept GLMM (lme4's glmer, nAGQ = 1).

The model is SPEC section 2's: ``logit p_c = beta + sum_F u_F``, ``u_F ~ N(0, sigma_F^2)``, successes
``s_c ~ Binomial(n_c, p_c)`` (seed 000 (Hardy et al. 2026) App. C.4).  With ``b = Lambda_theta u``, ``u ~ N(0, I)`` and
``theta_k = sigma_k`` (no residual scale to profile on the logit scale), the Laplace approximation to
-2 log L (Bates et al. 2015; lme4's ``glmer`` vignette, sec. "PIRLS") is

    dev(theta, beta) = -2 sum_c log Binom(s_c | n_c, p_c(u*)) + |u*|^2 + log|L|^2,

where ``u*`` is the conditional mode, found by penalised iteratively reweighted least squares (Newton
on ``-2 log p(y | u) + |u|^2``), and ``L L' = Lambda Z'W Z Lambda + I`` with the binomial weights
``W = diag(n p (1 - p))`` at ``u*``.  The outer optimisation over (theta, beta) is derivative-free
(:func:`.reml.minimise_bounded`), as glmer's second stage is.  The log binomial coefficients are
included, so the criterion is glmer's deviance (-2 logLik).

Cost.  Each evaluation runs PIRLS to convergence (3-7 factorisations, warm-started from the last
conditional mode).  From :data:`ELIMINATION_MIN_EFFECTS` random effects the factorisations use REML's
elimination (the largest term in closed form, the rest blockwise, :mod:`.schur`) with G's values
renewed at every PIRLS step: on the HAL-scale pooled simulation 0.55-0.57 s of CPU per evaluation
against 0.79 s with the full sparse LU (same process, one BLAS thread; deviances equal to 1e-12).
The derivative-free search still needs 986 evaluations there (475 s CPU, converged; bench_estimators),
so the fit takes minutes;
the next lever is the number of evaluations (an exact gradient of the Laplace deviance needs the third
derivatives of the binomial log-likelihood through the conditional mode, not written yet).

Components are reported on the latent logit scale with the logistic residual pi^2/3 (seed 000 Sec.
3.2), the scale of the Bayesian GLMM.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.special import expit, gammaln

from ..model.formula import RESIDUAL_VARIANCE
from .design import MixedDesign
from .reml import MixedFit, _Monitor, _one_blas_thread, minimise_bounded
from .schur import coarse_labels
from .sparse import EliminatedSystem, PenalisedSystem


#: Random effects from which PIRLS factors with the largest term eliminated and the rest blockwise
#: (measured CPU per Laplace evaluation, one BLAS thread: HAL-scale pooled model, 32,014 effects, 0.55 s
#: against 0.79 s with the full sparse LU; Terminal-Bench 2.0, 4,400 effects, 0.13 s against 0.09 s).
ELIMINATION_MIN_EFFECTS = 10_000


class LaplaceProblem:
    """The Laplace deviance of a binomial-logit :class:`MixedDesign` as a function of (theta, beta)."""

    def __init__(self, design: MixedDesign, elimination: bool | None = None):
        if not design.binary:
            raise ValueError("the Laplace GLMM needs binary trials (successes out of trials), not a numeric score.")
        self.design = design
        self.z = design.z.tocsr()
        self.zt = self.z.T.tocsr()
        self.term_of = design.term_of_column
        self.k, self.n = design.s, design.n
        offsets = np.concatenate([[0], np.cumsum(design.n_levels)[:-1]])
        cols = design.codes + offsets[:, None]  # (K, C)
        if elimination is None:
            elimination = design.n_effects >= ELIMINATION_MIN_EFFECTS
        if elimination and design.n_terms > 1:
            # as REML: the term with most levels eliminated in closed form, the rest blockwise when it has
            # the nested structure (.schur), now with G's values renewed at every PIRLS step
            largest = int(np.argmax(design.n_levels))
            self.system = EliminatedSystem(self.zt @ self.z, np.flatnonzero(self.term_of == largest), weighted=True)
            self.system.use_blocks(self.term_of[self.system.i2],
                                   [lab[self.system.i2] for lab in coarse_labels(design, cols.T)])
            g_indices, g_indptr = self.system.g_indices, self.system.g_indptr
        else:
            self.system = PenalisedSystem(self.zt @ self.z)
            g_indices, g_indptr = self.system.g.indices, self.system.g.indptr
        # Z'WZ's values are linear in the cell weights: precompute where each (cell, term, term) pair
        # lands among the stored entries, so a new W costs one bincount instead of a sparse product
        q = g_indptr.size - 1
        col_of_entry = np.repeat(np.arange(q), np.diff(g_indptr))
        keys = col_of_entry.astype(np.int64) * q + g_indices  # CSC, sorted: keys increase
        kk = design.n_terms
        a = np.repeat(cols, kk, axis=0)  # (K*K, C): term i repeated
        b = np.tile(cols, (kk, 1))  # (K*K, C): term j
        pair_keys = (b.astype(np.int64) * q + a).ravel()  # column b, row a
        self._pos = np.searchsorted(keys, pair_keys)
        self._cell = np.tile(np.arange(design.n_cells), kk * kk)
        self._nnz = g_indices.size
        self.lchoose = float(np.sum(gammaln(self.n + 1) - gammaln(self.k + 1) - gammaln(self.n - self.k + 1)))
        self.u = np.zeros(design.n_effects)
        self.pirls_iterations = 0

    def _g_values(self, w: np.ndarray) -> np.ndarray:
        return np.bincount(self._pos, weights=w[self._cell], minlength=self._nnz)

    def _minus2_loglik(self, eta: np.ndarray) -> float:
        # -2 sum [k eta - n log(1 + e^eta)] - 2 lchoose, with log1p(exp) computed stably
        return float(-2.0 * (np.sum(self.k * eta - self.n * np.logaddexp(0.0, eta)) + self.lchoose))

    def evaluate(self, theta: np.ndarray, beta: float, *, tol: float = 1e-10, max_iter: int = 60) -> dict:
        """PIRLS to the conditional mode at (theta, beta); the Laplace deviance there."""
        lam = np.asarray(theta, dtype=np.float64)[self.term_of]
        u = self.u.copy()
        eta = beta + self.z @ (lam * u)
        obj = self._minus2_loglik(eta) + u @ u
        for it in range(max_iter):
            p = expit(eta)
            w = self.n * p * (1.0 - p)
            self.system.factor(lam, self._g_values(w))
            grad = lam * (self.zt @ (self.k - self.n * p)) - u  # -(1/2) d obj / du
            delta = self.system.solve(grad)
            decrement = float(grad @ delta)
            step = 1.0
            while True:
                u_new = u + step * delta
                eta_new = beta + self.z @ (lam * u_new)
                obj_new = self._minus2_loglik(eta_new) + u_new @ u_new
                if obj_new <= obj + 1e-12 * abs(obj) or step < 1e-8:
                    break
                step *= 0.5
            u, eta, obj = u_new, eta_new, obj_new
            self.pirls_iterations += 1
            if decrement < tol * max(1.0, abs(obj)):
                break
        p = expit(eta)
        logdet = self.system.factor(lam, self._g_values(self.n * p * (1.0 - p)))
        self.u = u
        dev = self._minus2_loglik(eta) + u @ u + logdet  # logdet = log|L|^2
        return {"deviance": dev, "u": u, "eta": eta, "logdet": logdet}

    def deviance(self, x: np.ndarray) -> float:
        return self.evaluate(x[:-1], x[-1])["deviance"]


def laplace(design: MixedDesign, *, x0: np.ndarray | None = None, max_evals: int = 4000, progress=None,
            cancel=None) -> MixedFit:
    """Laplace-approximation estimates of the variance components on the logit scale (glmer nAGQ = 1).

    Parameters
    ----------
    design
        Binomial cells and terms (:meth:`MixedDesign.from_spec`).
    x0
        Starting (sigma_1, ..., sigma_K, beta); default sigma = 1 and beta = logit of the mean.
    max_evals, progress, cancel
        As in :func:`.reml.reml`.

    Returns
    -------
    MixedFit
        ``components``: sigma_k^2 on the logit scale, then ``"residual"`` = pi^2/3.
    """
    t0, c0 = time.perf_counter(), time.process_time()
    prob = LaplaceProblem(design)
    if x0 is None:
        pbar = min(max(design.s.sum() / design.n.sum(), 1e-4), 1 - 1e-4)
        x0 = np.r_[np.ones(design.n_terms), math.log(pbar / (1 - pbar))]
    mon = _Monitor("Laplace", progress, cancel, max_evals)

    def fun(x):
        v = prob.deviance(x)
        mon.tick(v)
        return v

    lower = np.r_[np.zeros(design.n_terms), -np.inf]
    with _one_blas_thread():
        res, nfev = minimise_bounded(fun, np.asarray(x0, dtype=np.float64), lower, max_evals=max_evals)
        theta = np.maximum(res.x[:-1], 0.0)
        out = prob.evaluate(theta, res.x[-1])
    comps = {name: float(theta[k] ** 2) for k, name in enumerate(design.term_names)}
    comps["residual"] = RESIDUAL_VARIANCE
    if progress is not None:
        progress("Laplace", max_evals, max_evals, 0.0)
    return MixedFit(method="Laplace", scale="logit", components=comps, theta=theta, intercept=float(res.x[-1]),
                    criterion=float(out["deviance"]), n_obs=design.n_obs, n_cells=design.n_cells,
                    n_effects=design.n_effects, n_evaluations=nfev, seconds=time.perf_counter() - t0,
                    cpu_seconds=time.process_time() - c0,
                    converged=bool(res.success), message=str(res.message), notes=list(design.notes))
