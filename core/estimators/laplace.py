"""Laplace approximation for the binomial-logit random-intercept GLMM (lme4's glmer, nAGQ = 1).

The model is SPEC section 2's: ``logit p_c = beta + sum_F u_F``, ``u_F ~ N(0, sigma_F^2)``, successes
``s_c ~ Binomial(n_c, p_c)`` (seed 000 (Hardy et al. 2026) App. C.4).  With ``b = Lambda_theta u``, ``u ~ N(0, I)`` and
``theta_k = sigma_k`` (no residual scale to profile on the logit scale), the Laplace approximation to
-2 log L (Bates et al. 2015; lme4's ``glmer`` vignette, sec. "PIRLS") is

    dev(theta, beta) = -2 sum_c log Binom(s_c | n_c, p_c(u*)) + |u*|^2 + log|L|^2,

where ``u*`` is the conditional mode, found by penalised iteratively reweighted least squares (Newton
on ``-2 log p(y | u) + |u|^2``), and ``L L' = Lambda Z'W Z Lambda + I`` with the binomial weights
``W = diag(n p (1 - p))`` at ``u*``.  The log binomial coefficients are included, so the criterion is
glmer's deviance (-2 logLik).

The outer optimisation over (theta, beta) uses the exact gradient of the deviance
(:meth:`LaplaceProblem.deviance_and_gradient`: the envelope theorem for the part stationary in ``u``,
the third derivatives of the binomial log-likelihood through the conditional mode for ``log|L|^2``,
one adjoint solve) in a quasi-Newton search (L-BFGS-B), wherever the design has the nested structure
whose block elimination (:mod:`.schur`) gives the inverse of the penalised system on G's pattern
cheaply; elsewhere, and on request, it is derivative-free (:func:`.reml.minimise_bounded`, COBYQA, as
glmer's BOBYQA).  Both reach the same optimum (tests/estimators/test_laplace.py).

Cost.  Each evaluation runs PIRLS to convergence, started at the mode predicted from the last
gradient evaluation (``u* + du*/dx dx``): 1-2 factorisations near the optimum, up to 8 at the start.
From :data:`ELIMINATION_MIN_EFFECTS` random effects the factorisations use REML's elimination (the
largest term in closed form, the rest blockwise, :mod:`.schur`) with G's values renewed at every PIRLS
step: on the HAL-scale pooled simulation 0.55-0.57 s of CPU per evaluation against 0.79 s with the
full sparse LU (same process, one BLAS thread; deviances equal to 1e-12); below it PIRLS uses the full
sparse LU and the gradient one block elimination at the mode.  Measured on Terminal-Bench 2.0 (4,400
random effects, shared 2-core box at load average 11-18, same process): the derivative-free search
took 495-509 evaluations and 25 s of CPU, the gradient search 23-32 evaluations and 2.5-4 s of CPU
(about 0.1 s per evaluation with its gradient), the components equal to 1e-5 relative
(bench/bench_preview.py --cli).

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
from .reml import MixedFit, _Monitor, _one_blas_thread, minimise_bounded, minimise_with_gradient
from .schur import coarse_labels
from .sparse import EliminatedSystem, PenalisedSystem


#: Random effects from which PIRLS factors with the largest term eliminated and the rest blockwise
#: (measured CPU per Laplace evaluation, one BLAS thread: HAL-scale pooled model, 32,014 effects, 0.55 s
#: against 0.79 s with the full sparse LU; Terminal-Bench 2.0, 4,400 effects, 0.13 s against 0.09 s).
ELIMINATION_MIN_EFFECTS = 10_000
#: Relative reduction of the deviance per quasi-Newton step below which the gradient search stops.  The
#: deviance is in the tens of thousands, so this is ~1e-8 of deviance; the components have then stopped
#: changing at ~1e-5 relative (Terminal-Bench 2.0), where 1e-15 spent a third more evaluations on nothing.
LAPLACE_FTOL = 1e-12


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
        self._pair_keys = pair_keys
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

    def evaluate(self, theta: np.ndarray, beta: float, *, tol: float = 1e-10, max_iter: int = 60,
                 final_factor: bool = True) -> dict:
        """PIRLS to the conditional mode at (theta, beta); the Laplace deviance there.

        With ``final_factor=False`` the system is not factored again at the mode and the result has no
        ``"deviance"`` or ``"logdet"``: the caller factors the penalised system there itself.
        """
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
        self.u = u
        if not final_factor:
            return {"u": u, "eta": eta, "penalised": obj}
        p = expit(eta)
        logdet = self.system.factor(lam, self._g_values(self.n * p * (1.0 - p)))
        dev = self._minus2_loglik(eta) + u @ u + logdet  # logdet = log|L|^2
        return {"deviance": dev, "u": u, "eta": eta, "logdet": logdet}

    def deviance(self, x: np.ndarray) -> float:
        return self.evaluate(x[:-1], x[-1])["deviance"]

    def _covariance_system(self) -> EliminatedSystem | None:
        """The system whose inverse on G's pattern the gradient reads: the PIRLS system when it is the
        block elimination, else one built for it (None where the design has no such structure)."""
        if not hasattr(self, "_cov_system"):
            d = self.design
            if isinstance(self.system, EliminatedSystem):
                system = self.system
            elif d.n_terms > 1:
                offsets = np.concatenate([[0], np.cumsum(d.n_levels)[:-1]])
                cols = d.codes + offsets[:, None]
                system = EliminatedSystem(self.zt @ self.z, np.flatnonzero(self.term_of == int(np.argmax(d.n_levels))),
                                          weighted=True)
                if not system.use_blocks(self.term_of[system.i2], [lab[system.i2] for lab in coarse_labels(d, cols.T)]):
                    system = None
            else:
                system = None
            self._cov_system = system
            if system is not None:  # G's entries as that system stores them, for each (cell, term, term) pair
                q = system.g_indptr.size - 1
                keys = np.repeat(np.arange(q), np.diff(system.g_indptr)).astype(np.int64) * q + system.g_indices
                self._cov_pos = self._pos if system is self.system else np.searchsorted(keys, self._pair_keys)
        return self._cov_system

    @property
    def has_gradient(self) -> bool:
        """Whether :meth:`deviance_and_gradient` is available: PIRLS runs on the eliminated system (large
        designs; its inverse on G's pattern comes from the block elimination of :mod:`.schur`, or from
        the selected inverse of the sparse LU where the design lacks that structure), or the design has
        the nested structure of :mod:`.schur`, which gives that inverse cheaply."""
        return self._covariance_system() is not None

    def deviance_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """The Laplace deviance at ``x = (theta, beta)`` and its exact gradient.

        With ``u*`` the conditional mode, ``M = Lambda Z'WZ Lambda + I`` and ``W`` the binomial weights
        at ``u*``, the part ``-2 log L + |u*|^2`` is stationary in ``u``, so only its explicit
        dependence on (theta, beta) counts (envelope theorem); ``log|M|`` depends on theta through
        ``Lambda`` and, through the weights, on where the mode lies:

            d/d theta_k = -2 r'Z E_k u* + 2 tr(M^{-1} Lambda G E_k) + sum_c h_c w_c' d eta_c / d theta_k,

        with ``r = s - n p``, ``E_k`` the indicator of term k's columns, ``h_c`` the conditional
        variance of cell c's linear predictor (``z_c Lambda M^{-1} Lambda z_c'``), ``w_c' = w_c (1 - 2 p_c)``
        (the third derivative of the binomial log-likelihood) and ``d u*/d theta_k = M^{-1}(E_k Z'r -
        Lambda G E_k u*)`` by the implicit function theorem, taken through one adjoint solve.  The same
        for beta, with ``d u*/d beta = -M^{-1} Lambda Z'w``.  ``h`` and the traces need ``M^{-1}`` only
        on the pairs of effects that share a cell (:meth:`.sparse.EliminatedSystem.inverse_on_g`).
        """
        theta, beta = np.asarray(x[:-1], dtype=np.float64), float(x[-1])
        system = self._covariance_system()
        if system is None:
            raise ValueError("this design has no exact Laplace gradient (no nested block structure).")
        self._predict_mode(theta, beta)
        out = self.evaluate(theta, beta, final_factor=False)  # the factorisation at the mode is the one below
        u, eta = out["u"], out["eta"]
        lam = theta[self.term_of]
        p = expit(eta)
        w = self.n * p * (1.0 - p)
        g_values = self._g_values(w)
        if system is not self.system:
            g_values = np.bincount(self._cov_pos, weights=w[self._cell], minlength=system.g_indices.size)
        logdet = system.factor(lam, g_values)
        deviance = self._minus2_loglik(eta) + u @ u + logdet
        kk, ncell = self.design.n_terms, self.design.n_cells
        v = system.inverse_on_g()[self._cov_pos].reshape(kk, kk, ncell)  # M^{-1} between the effects of a cell
        tv = np.einsum("abc,b->ac", v, theta)  # (M^{-1} Lambda)[col_a(c), cols(c)] summed with z_c
        h = tv.T @ theta  # z_c Lambda M^{-1} Lambda z_c'
        trace = tv @ w  # tr(M^{-1} Lambda G E_k)
        r = self.k - self.n * p
        ztr = self.zt @ r
        a = h * w * (1.0 - 2.0 * p)
        zta = self.zt @ a
        adj = system.solve(lam * zta)  # M^{-1} Lambda Z'a
        g_lam_adj = self.zt @ (w * (self.z @ (lam * adj)))
        per_col = -2.0 * u * ztr + zta * u + adj * ztr - g_lam_adj * u
        grad = np.empty(kk + 1)
        grad[:-1] = np.bincount(self.term_of, weights=per_col, minlength=kk) + 2.0 * trace
        ztw = self.zt @ w
        grad[-1] = -2.0 * r.sum() + a.sum() - adj @ (lam * ztw)
        # the mode's derivatives, for the next evaluation's starting point (one solve with K + 1 columns)
        rhs = np.empty((u.size, kk + 1))
        for k in range(kk):
            on = self.term_of == k
            rhs[:, k] = np.where(on, ztr, 0.0) - lam * (self.zt @ (w * (self.z @ np.where(on, u, 0.0))))
        rhs[:, -1] = -lam * ztw
        self._mode_slope = (np.r_[theta, beta], u.copy(), system.solve(rhs))
        return deviance, grad

    def _predict_mode(self, theta: np.ndarray, beta: float) -> None:
        """Start PIRLS at the first-order prediction of the new mode from the last gradient evaluation,
        ``u* + (du*/dx) dx``, where that is better than the last mode itself (on the penalised objective):
        near the optimum one PIRLS iteration then reaches the mode instead of three."""
        slope = getattr(self, "_mode_slope", None)
        if slope is None:
            return
        x_old, u_old, du = slope
        u_new = u_old + du @ (np.r_[theta, beta] - x_old)
        lam = theta[self.term_of]

        def objective(v):
            return self._minus2_loglik(beta + self.z @ (lam * v)) + v @ v

        if objective(u_new) < objective(self.u):
            self.u = u_new


def laplace(design: MixedDesign, *, x0: np.ndarray | None = None, max_evals: int = 4000, progress=None,
            cancel=None, gradient: bool | None = None) -> MixedFit:
    """Laplace-approximation estimates of the variance components on the logit scale (glmer nAGQ = 1).

    Parameters
    ----------
    design
        Binomial cells and terms (:meth:`MixedDesign.from_spec`).
    x0
        Starting (sigma_1, ..., sigma_K, beta); default sigma = 1 and beta = logit of the mean.
    max_evals, progress, cancel
        As in :func:`.reml.reml`.
    gradient
        Minimise with the exact gradient (:meth:`LaplaceProblem.deviance_and_gradient`, quasi-Newton)
        or derivative-free (COBYQA, as lme4's BOBYQA); None: the gradient wherever the design has it.

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
    x0 = np.asarray(x0, dtype=np.float64)

    def fun(x):
        v = prob.deviance(x)
        mon.tick(v)
        return v

    def fun_grad(x):
        v, g = prob.deviance_and_gradient(x)
        mon.tick(v)
        return v, g

    with _one_blas_thread():
        if gradient is None:
            gradient = prob.has_gradient
        if gradient:
            # theta unbounded: the deviance is even in each theta_k, so a component whose optimum is 0 is
            # reached from either side, where a bound at 0 would stop the search on a point whose gradient
            # is 0 by symmetry alone; a start at 0 exactly is moved off it for the same reason
            start = np.r_[np.where(np.abs(x0[:-1]) < 1e-3, 1e-3, x0[:-1]), x0[-1]]
            res, nfev = minimise_with_gradient(fun_grad, start, np.full(x0.size, -np.inf), max_evals=max_evals,
                                               ftol=LAPLACE_FTOL)
        else:
            lower = np.r_[np.zeros(design.n_terms), -np.inf]
            res, nfev = minimise_bounded(fun, x0, lower, max_evals=max_evals)
        theta = np.abs(res.x[:-1])
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
