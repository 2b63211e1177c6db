"""REML for the Gaussian random-intercept model on the observed scale (seed 000 (Hardy et al. 2026) App. C.3).

The model is the linear mixed model of SPEC section 2 with an identity link, fitted to the 0/1 trial
results (or to a numeric score):

    y = X beta + Z b + e,   b = Lambda_theta u,   u ~ N(0, sigma^2 I),   e ~ N(0, sigma^2 I),

with ``X`` the intercept column and ``Lambda_theta`` diagonal, ``theta_k = sigma_k / sigma`` repeated
over the levels of term k.  As in lme4 (Bates, Maechler, Bolker & Walker 2015, *J. Stat. Softw.* 67(1),
sec. 3), sigma^2 and beta are profiled out and the REML criterion is minimised over theta alone:

    d_R(theta) = log|L_theta|^2 + log|R_X|^2 + (n - p) [1 + log(2 pi r^2(theta) / (n - p))],   (eq. 41)

where ``L L' = Lambda' Z'Z Lambda + I`` (the sparse penalised system, :mod:`.sparse`),
``R_X' R_X = X'X - X'Z Lambda A^{-1} Lambda' Z'X`` and ``r^2(theta)`` is the minimised penalised
residual sum of squares.  Only cross products enter, and those of a trial-level model come from the
cell totals (:mod:`.design`): ``Z'Z = Z_c' diag(n) Z_c``, ``Z'y = Z_c' s``, ``y'y = sum q``.
Then ``sigma^2 = r^2 / (n - p)`` and ``sigma_k^2 = theta_k^2 sigma^2``.

The default optimiser is a projected Newton iteration on phi = theta^2 >= 0 (:func:`minimise_newton`):
the exact gradient of eq. 41 and the average-information Hessian of AI-REML (Gilmour, Thompson & Cullis
1995) with one BFGS correction.  The gradient needs the traces of the diagonal blocks of ``A^{-1}``;
they come from S^{-1} on its pattern, where S is the Schur complement left after the term with most
levels is eliminated in closed form (:mod:`.sparse`), itself eliminated blockwise with a dense rest
(:mod:`.schur`) when the model has that structure, or from a selected inverse of SuperLU's factors
otherwise.  The search starts from Henderson's Method I (moment estimates, floored at a small positive
value), which on balanced data is already the REML optimum when no component is negative (the ANOVA
solution is then the REML solution, Searle, Casella & McCulloch 1992, sec. 6.7).  lme4's derivative-free
route (BOBYQA there; COBYQA here, ``method="cobyqa"``) and L-BFGS-B with the gradient in theta
(``method="lbfgs"``) are kept.

Measured (bench/bench_estimators.py ``--reference 10533b9``: the start commit's code on the same design
in the same process; one BLAS thread; a shared 2-core machine at load average ~20, so wall times are
several times CPU times; read the CPU seconds and the ratios):

- HAL-scale pooled simulation (41,354 cells, 32,014 random effects, 10 terms): Newton 11 evaluations
  (10 with derivatives), 2.8 s CPU and 13.8 s wall (setup included: 1.0 s CPU for the elimination's
  maps, 0.25 s for Henderson's start), against 453 evaluations, 61.3 s CPU and 397 s wall for the
  derivative-free search of commit 10533b9 in the same run (22x CPU, 29x wall).  Same criterion to
  1e-6; components within 6.4e-5 relative of the derivative-free search's (whose stopping radius on
  theta is looser).
  Per evaluation (CPU): deviance 0.054 s with the block elimination against 0.12 s with SuperLU;
  deviance with derivatives 0.17 s against 0.67 s (SuperLU plus the Python selected inverse).
  lme4's lmer gave no answer within 900 s in an earlier run.
- Terminal-Bench 2.0 per-benchmark model: Newton 21 evaluations, 1.05-1.24 s CPU against 3.1-3.5 s
  for the derivative-free search (2.5-3.3x), same criterion; with SuperLU instead of the block
  elimination the Newton iteration would take 3.7-4.0 s (the selected inverse), so the block
  elimination carries that gain.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.optimize as so

from .design import EstimationCancelled, MixedDesign
from .schur import coarse_labels
from .sparse import EliminatedSystem


@dataclass
class MixedFit:
    """Point estimates of the variance components of a random-intercept model.

    Attributes
    ----------
    method
        ``"REML"`` or ``"Laplace"``.
    scale
        ``"observed"`` (identity link, the residual is estimated) or ``"logit"`` (the residual is
        the logistic pi^2/3).
    components
        Term -> sigma^2, in formula order, then ``"residual"``.
    theta
        Relative standard deviations (sigma_k / sigma for REML; sigma_k for Laplace).
    intercept
        beta_0: the grand mean on the fitted scale.
    criterion
        The minimised criterion: the REML deviance, or the Laplace approximation to -2 log L.
    n_evaluations, seconds, cpu_seconds, converged, message
        Optimiser bookkeeping (wall and CPU time of this process).
    """

    method: str
    scale: str
    components: dict[str, float]
    theta: np.ndarray
    intercept: float
    criterion: float
    n_obs: float
    n_cells: int
    n_effects: int
    n_evaluations: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    converged: bool = True
    message: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def shares(self) -> dict[str, float]:
        """Variance shares sigma_k^2 / (sum_j sigma_j^2 + residual) (SPEC section 3)."""
        total = sum(self.components.values())
        return {k: v / total for k, v in self.components.items()}

    def to_dict(self) -> dict:
        return {"method": self.method, "scale": self.scale, "components": dict(self.components),
                "shares": self.shares, "theta": [float(t) for t in self.theta], "intercept": self.intercept,
                "criterion": self.criterion, "n_obs": self.n_obs, "n_cells": self.n_cells,
                "n_effects": self.n_effects, "n_evaluations": self.n_evaluations, "seconds": self.seconds,
                "cpu_seconds": self.cpu_seconds,
                "converged": self.converged, "message": self.message, "notes": list(self.notes)}


class _Monitor:
    """Counts evaluations, reports progress and polls cancellation between evaluations."""

    def __init__(self, phase: str, progress, cancel, budget: int):
        self.phase, self.progress, self.cancel, self.budget = phase, progress, cancel, budget
        self.count = 0
        self.best = math.inf
        self.t0 = time.perf_counter()

    def tick(self, value: float) -> None:
        self.count += 1
        self.best = min(self.best, value)
        if self.cancel is not None and self.cancel():
            raise EstimationCancelled(f"{self.phase} cancelled by the user after {self.count} evaluations.")
        if self.progress is not None and self.count % 5 == 0:
            self.progress(self.phase, min(self.count, self.budget - 1), self.budget, None)


def minimise_bounded(fun, x0: np.ndarray, lower: np.ndarray, *, max_evals: int):
    """Derivative-free minimisation under lower bounds.

    lme4 minimises its profiled criteria with BOBYQA (Powell's bound-constrained quadratic-model
    trust-region method).  scipy's COBYQA is the same family (Ragonneau & Zhang's successor of
    Powell's methods) and needs no further dependency.  The final trust-region radius (1e-7 on theta)
    is set below the default (1e-6): the REML criterion is flat near its optimum and the default stops
    at about 1e-5 relative on the components; 1e-10 changed nothing measurable but cost 10% more
    evaluations on the HAL-scale model.
    """
    res = so.minimize(fun, x0, method="cobyqa", bounds=so.Bounds(lower, np.full_like(x0, np.inf)),
                      options={"maxfev": max_evals, "final_tr_radius": 1e-7,
                               "initial_tr_radius": max(0.05, 0.25 * float(np.max(np.abs(x0))))})
    return res, int(res.nfev)


def minimise_with_gradient(fun_grad, x0: np.ndarray, lower: np.ndarray, *, max_evals: int, ftol: float = 1e-15):
    """Bounded quasi-Newton minimisation (L-BFGS-B) with an exact gradient.

    The tolerances are set so that the components stop changing at 1e-6 relative: a projected
    gradient below 1e-7 or a relative decrease below ``ftol`` (default 1e-15) per step.  The criterion is smooth in
    theta (even in each theta_k, so a component at the bound 0 has gradient 0 there).
    """
    res = so.minimize(fun_grad, x0, jac=True, method="L-BFGS-B",
                      bounds=so.Bounds(lower, np.full_like(x0, np.inf)),
                      options={"maxfun": max_evals, "ftol": ftol, "gtol": 1e-7, "maxcor": 20})
    if not res.success and "ABNORMAL" in str(res.message).upper():
        # the line search could not improve on the noise floor of the criterion: at the optimum when the
        # projected gradient is small relative to the criterion's scale
        pg = np.where((res.x <= lower) & (res.jac > 0), 0.0, res.jac)
        if np.max(np.abs(pg)) <= 1e-4 * max(1.0, abs(float(res.fun))) ** 0.5:
            res.success = True
    return res, int(res.nfev)


@dataclass
class NewtonResult:
    """What :func:`minimise_newton` returns (the fields of scipy's OptimizeResult that are read)."""

    x: np.ndarray
    fun: float
    nfev: int
    nit: int
    success: bool
    message: str


#: Lower bound of phi = theta^2 during the Newton iteration (sigma_k^2 = 1e-8 sigma^2): the trace term
#: of the gradient divides by theta_k^2, so a term is not evaluated at exactly 0 until the end.
PHI_FLOOR = 1e-8


def minimise_newton(problem: "RemlProblem", theta0: np.ndarray, *, max_iter: int = 100, tick=None,
                    trace=None) -> NewtonResult:
    """Projected Newton iteration on phi = theta^2 with the average-information Hessian (AI-REML).

    Each iteration takes one factorisation with the traces of A^{-1} (:meth:`RemlProblem.newton_terms`)
    and solves ``H p = -g`` on the free terms (Levenberg damping when ``H`` is near-singular).  ``H`` is the
    average-information matrix with one BFGS update from the last step: the AI matrix misses part of the
    observed curvature, and alone converged linearly (~0.3 per iteration on the HAL-scale model).  The
    step is projected onto phi >= PHI_FLOOR and halved until the deviance decreases (Armijo).  As in
    Bertsekas' (1982) projected Newton method a term at the floor whose gradient is positive (the
    deviance rises when it enters) is held there for the iteration; otherwise it is free.  At
    convergence (Newton decrement below 1e-9 with no free phi moving by more than 1e-7 relative, or the
    decrement below the deviance's rounding level) terms at the floor are set to exactly 0 and the
    others are refined with them at 0 (a term whose best value lies at the bound is 0, not 1e-8).

    This is the classical AI-REML scheme (Gilmour, Thompson & Cullis 1995; Johnson & Thompson 1995,
    *J. Dairy Sci.* 78, 449) on lme4's profiled criterion: about 10 iterations where the
    derivative-free search (:func:`minimise_bounded`) needs hundreds of evaluations.
    """
    k = theta0.size
    phi = np.maximum(np.asarray(theta0, dtype=np.float64) ** 2, PHI_FLOOR)
    nfev = 0
    nit = 0

    def evaluate(ph):
        nonlocal nfev
        out = problem.evaluate(np.sqrt(ph))
        nfev += 1
        if tick is not None:
            tick(out["deviance"])
        if not np.isfinite(out["deviance"]):
            raise FloatingPointError("the REML deviance is not finite.")
        return out

    def derivatives(ph, out):  # at the last factorisation, i.e. right after evaluate(ph)
        return problem.newton_terms(np.sqrt(ph), out)

    def run(phi, zero):
        """Newton iterations with the terms ``zero`` fixed at 0; returns (phi, f, success, message)."""
        nonlocal nit
        floor = np.where(zero, 0.0, PHI_FLOOR)
        out = evaluate(phi)
        f = out["deviance"]
        g, h = derivatives(phi, out)
        last = None  # (step, gradient change, free set) of the last accepted step
        noise = 1e-13 * max(1.0, abs(f))  # the deviance's rounding level (measured ~3e-15 relative)
        while nit < max_iter:
            nit += 1
            free = ~zero & ~((phi <= floor * (1 + 1e-9)) & (g > 0))
            p = np.zeros(k)
            decrement = 0.0
            if free.any():
                gf, hf = g[free], h[np.ix_(free, free)]
                if last is not None and np.array_equal(last[2], free):
                    sv, yv = last[0][free], last[1][free]
                    bs = hf @ sv
                    if yv @ sv > 1e-12 * np.linalg.norm(yv) * np.linalg.norm(sv) and sv @ bs > 0:
                        hf = hf - np.outer(bs, bs) / (sv @ bs) + np.outer(yv, yv) / (yv @ sv)
                scale = np.sqrt(np.maximum(np.diag(hf), 1e-300))
                hs = hf / np.outer(scale, scale)
                mu = 0.0
                while True:
                    try:
                        step = np.linalg.solve(hs + mu * np.eye(hs.shape[0]), -gf / scale) / scale
                    except np.linalg.LinAlgError:
                        step = None
                    if step is not None and np.all(np.isfinite(step)) and gf @ step < 0:
                        break
                    if not np.any(gf):
                        step = np.zeros_like(gf)
                        break
                    mu = max(1e-8, 10 * mu)
                    if mu > 1e8:
                        raise FloatingPointError("no descent direction from the average-information matrix.")
                p[free] = step
                decrement = float(-gf @ step)
            small = np.all(np.abs(p) <= 1e-7 * np.maximum(phi, 1e-6 * max(float(phi.max()), 1e-12)))
            if trace is not None:
                trace(nit, f, decrement, float(np.max(np.abs(p) / np.maximum(phi, 1e-12))), zero | ~free, nfev)
            if (decrement < 1e-9 and small) or decrement < noise:
                return phi, f, True, "converged (Newton decrement and step below tolerance)"
            alpha = 1.0
            while True:
                trial = np.maximum(phi + alpha * p, floor)
                out = evaluate(trial)
                ft = out["deviance"]
                if ft <= f + 1e-4 * float(g[free] @ (trial - phi)[free]) or alpha * decrement < noise:
                    break
                alpha *= 0.5
            if ft > f:  # no decrease along the projected Newton direction: at the criterion's noise floor
                ok = decrement < 1e-6 * max(1.0, abs(f))
                return phi, f, ok, "stopped: no further decrease of the deviance" + ("" if ok else " (not converged)")
            g_old = g
            phi_old, phi, f = phi, trial, ft
            g, h = derivatives(phi, out)
            last = (phi - phi_old, g - g_old, free)
        return phi, f, False, "maximum number of iterations reached"

    phi, f, success, message = run(phi, np.zeros(k, dtype=bool))
    at_floor = phi <= PHI_FLOOR * (1 + 1e-9)
    if success and at_floor.any():
        phi = np.where(at_floor, 0.0, phi)
        phi, f, success, message = run(phi, at_floor)
        message += f"; {int(at_floor.sum())} term(s) at the bound 0"
    return NewtonResult(x=np.sqrt(phi), fun=f, nfev=nfev, nit=nit, success=success, message=message)


class RemlProblem:
    """The profiled REML criterion of a :class:`MixedDesign` as a function of theta."""

    def __init__(self, design: MixedDesign, blocks: bool = True):
        self.design = design
        z = design.z
        w = design.n
        self.zt_w = (z.T.multiply(w)).tocsr()  # Z_c' diag(n)
        # the term with most levels has a diagonal block in Z'Z: eliminated in closed form, so only the
        # Schur complement of the other terms is factored (half the time on the HAL-scale pooled model)
        largest = int(np.argmax(design.n_levels))
        self.g = (self.zt_w @ z).tocsr()  # Z'WZ, also for the gradient's Z'Py and Z'V^{-1}X
        self.system = EliminatedSystem(self.g, np.flatnonzero(design.term_of_column == largest))
        self.largest = largest
        self.zty = np.asarray(z.T @ design.s).ravel()
        self.ztx = np.asarray(z.T @ w).ravel()  # X = intercept column
        self.xtx = float(w.sum())
        self.xty = float(design.s.sum())
        self.yty = float(design.q.sum())
        self.n = float(w.sum())
        self.p = 1
        self.term_of = design.term_of_column
        offsets = np.concatenate([[0], np.cumsum(design.n_levels)[:-1]])
        self.cell_cols = (design.codes + offsets[:, None]).T  # (cells, K): column of each term per cell
        if blocks:
            self.blocks = self.system.use_blocks(self.term_of[self.system.i2],
                                                 [lab[self.system.i2] for lab in self._coarse_labels()])
        else:
            self.blocks = False

    def _coarse_labels(self) -> list[np.ndarray]:
        return coarse_labels(self.design, self.cell_cols)

    def evaluate(self, theta: np.ndarray, gradient: bool = False) -> dict:
        """REML deviance and the profiled estimates at ``theta`` (Bates et al. 2015, eqs. 32-41)."""
        lam = np.asarray(theta, dtype=np.float64)[self.term_of]
        logdet_l = self.system.factor(lam)
        a = lam * self.zty
        bx = lam * self.ztx
        sol = self.system.solve(np.column_stack([a, bx]))
        ainv_a, ainv_bx = sol[:, 0], sol[:, 1]
        rx2 = self.xtx - bx @ ainv_bx  # R_X' R_X (1 x 1)
        if rx2 <= 0:
            raise FloatingPointError("the fixed-effects block lost positive definiteness.")
        rhs = self.xty - bx @ ainv_a
        beta = rhs / rx2
        r2 = self.yty - a @ ainv_a - rhs * beta
        df = self.n - self.p
        if r2 <= 0:
            # a perfect fit (no residual variation): the criterion is unbounded below
            r2 = np.finfo(float).tiny
        dev = logdet_l + math.log(rx2) + df * (1.0 + math.log(2.0 * math.pi * r2 / df))
        out = {"deviance": dev, "beta": beta, "sigma2": r2 / df, "r2": r2, "logdet": logdet_l}
        if gradient:
            out["gradient"] = self._gradient(np.asarray(theta, dtype=np.float64), ainv_a - beta * ainv_bx, ainv_bx,
                                             rx2, r2, df)
        out["_state"] = (lam, ainv_a - beta * ainv_bx, ainv_bx, rx2, r2, df)
        return out

    def newton_terms(self, theta: np.ndarray, out: dict) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and average-information matrix of the REML deviance in phi = theta^2 at ``theta``
        (the point of the last :meth:`evaluate`, whose result is ``out``).

        With ``V = I + sum_k phi_k Z_k Z_k'`` (linear in phi, over sigma^2), ``V_k = Z_k Z_k'`` and the
        REML projector ``P = V^{-1} - V^{-1} X (X'V^{-1}X)^{-1} X'V^{-1}``, the profiled deviance (eq. 41,
        ``log|V| + log|X'V^{-1}X| + df log y'Py``) has

            d d_R / d phi_k = tr(P V_k) - df y'P V_k P y / r^2,   tr(P V_k) = (L_k - tr(A^{-1})_kk) / theta_k^2
                                                                      - |Z_k'V^{-1}X|^2 / R_X^2,

        and its Hessian is approximated by the average information of Gilmour, Thompson & Cullis (1995,
        *Biometrics* 51, 1440) for the unprofiled REML likelihood in (phi, sigma^2), with sigma^2 then
        profiled out (the Schur complement of its row):

            H_jk = (df / r^2) [a_j' P a_k - (a_j'Py)(a_k'Py) / r^2],   a_k = V_k P y = Z_k (Z_k' P y).

        The ``a_k`` are constant within a cell, so ``a'Pa`` needs only cell cross products and one solve
        with K + 1 right-hand sides; ``Z'Py = Z'(y - X beta - Z Lambda u)`` is exact at theta_k = 0 too.
        The trace term divides by theta_k^2: it is evaluated for theta_k > 0 only (NaN otherwise; the
        caller probes a term held at 0 at a small positive theta).  H is a Gram matrix (positive
        semi-definite).
        """
        lam, u_hat, ainv_bx, rx2, r2, df = out["_state"]
        theta = np.asarray(theta, dtype=np.float64)
        d = self.design
        k = d.n_terms
        beta = out["beta"]
        gl = self.g @ np.column_stack([lam * u_hat, lam * ainv_bx])
        zpy = self.zty - self.ztx * beta - gl[:, 0]  # Z'Py
        zvx = self.ztx - gl[:, 1]  # Z'V^{-1}X
        c = np.bincount(self.term_of, weights=zpy * zpy, minlength=k)  # y'P V_k P y
        xvz2 = np.bincount(self.term_of, weights=zvx * zvx, minlength=k)
        tr1, tr2 = self.system.inverse_traces(self.term_of[self.system.i2], k)
        tr = tr2.copy()
        tr[self.largest] = tr1
        levels = d.n_levels.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            trpv = np.where(theta > 0, (levels - tr) / (theta * theta), np.nan) - xvz2 / rx2
        grad = trpv - df * c / r2
        # a_k per cell: Z_k'Py at the cell's level of term k
        m = zpy[self.cell_cols]  # (cells, K)
        wm = m * d.n[:, None]
        ztwm = self.zt_w @ m  # Z'W M  (q, K)
        lz = lam[:, None] * ztwm
        sol = self.system.solve(lz)
        fmm = m.T @ wm - lz.T @ sol
        fmx = wm.sum(axis=0) - lz.T @ ainv_bx
        apa = fmm - np.outer(fmx, fmx) / rx2
        hess = (df / r2) * (apa - np.outer(c, c) / r2)
        return grad, 0.5 * (hess + hess.T)

    def _gradient(self, theta, u_hat, ainv_bx, rx2, r2, df) -> np.ndarray:
        """Analytic gradient of the REML deviance (eq. 41) at the last factorisation.

        With ``V = I + Z Lambda Lambda' Z'`` (the marginal covariance over sigma^2) the criterion is
        ``log|V| + log(X'V^{-1}X) + df log r^2 + const`` and ``dV/dtheta_k = 2 theta_k Z_k Z_k'``; using
        ``Z'Z Lambda = Lambda^{-1}(A - I)`` and the penalised normal equations
        (``Z_k' P y = u_k / theta_k``, ``Z_k' V^{-1} X = (A^{-1} Lambda Z'X)_k / theta_k``), each term is

            d d_R / d theta_k = (2 / theta_k) [L_k - tr(A^{-1})_kk - |(A^{-1} Lambda Z'X)_k|^2 / R_X^2
                                               - df |u_k|^2 / r^2],

        with ``L_k`` the term's levels and ``u`` the conditional modes (Bates et al. 2015, sec. 3; the
        same quantities lme4 computes, differentiated).  The block traces of ``A^{-1}`` come from the
        selected inverse of the factor (:meth:`.sparse.EliminatedSystem.inverse_traces`).  The bracket
        vanishes like theta_k^2, so a term at (or within 1e-7 of) zero has gradient 0: the criterion is
        even in theta_k.
        """
        k = self.design.n_terms
        tr1, tr2 = self.system.inverse_traces(self.term_of[self.system.i2], k)
        tr = tr2.copy()
        tr[self.largest] = tr1
        levels = self.design.n_levels.astype(np.float64)
        uu = np.bincount(self.term_of, weights=u_hat * u_hat, minlength=k)
        bb = np.bincount(self.term_of, weights=ainv_bx * ainv_bx, minlength=k)
        bracket = levels - tr - bb / rx2 - df * uu / r2
        safe = theta > 1e-7
        return np.where(safe, 2.0 * bracket / np.where(safe, theta, 1.0), 0.0)

    def deviance(self, theta: np.ndarray) -> float:
        return self.evaluate(theta)["deviance"]


def _start_theta(design: MixedDesign) -> np.ndarray:
    """Starting point: Henderson Method I moment estimates relative to the residual (theta = 1, where
    lme4 starts, when they cannot be computed).

    Method I's equations take one sort of every pair of terms' joint levels: 0.25 s of CPU on the
    HAL-scale pooled model (they used to allocate q_k x q_j counts, and that model started at 1).
    """
    from ..henderson import henderson_method1

    cols = {name: [f"_t{k}"] for k, name in enumerate(design.term_names)}
    table = pd.DataFrame({f"_t{k}": design.codes[k] for k in range(design.n_terms)})
    try:
        if design.binary:
            table["successes"], table["trials"] = design.s, design.n
            hm = henderson_method1(table, cols)
        else:
            # one row per cell with the cell mean: exact when every cell holds one observation (the
            # usual G-study table), a fair starting point otherwise
            table["y"] = design.s / design.n
            hm = henderson_method1(table, cols, response="y")
        s2e = max(hm.raw["residual"], 1e-12)
        th = np.array([math.sqrt(max(hm.raw[name], 0.0) / s2e) for name in design.term_names])
    except (ValueError, np.linalg.LinAlgError):
        th = np.ones(design.n_terms)
    return np.maximum(th, 0.05)


def _one_blas_thread():
    """One BLAS thread for the optimisation: the dense products are small or medium, and on a busy
    2-core machine BLAS threads spinning against other processes cost up to 25x (measured)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a declared dependency; without it only slower
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _optimise(prob, design, x0, method, mon, max_evals):
    """Run the chosen optimiser; returns (result with .x, .success, .message; evaluations)."""
    res = None
    nfev = 0
    if method == "newton":
        try:
            res = minimise_newton(prob, x0, tick=mon.tick)
            nfev = res.nfev
        except (FloatingPointError, np.linalg.LinAlgError) as exc:
            res = NewtonResult(x=x0, fun=math.inf, nfev=mon.count, nit=0, success=False, message=str(exc))
            nfev = mon.count
        if not res.success:  # a safety net that the tests never needed: finish derivative-free
            start = res.x if np.all(np.isfinite(res.x)) else x0
            res, more = minimise_bounded(lambda th: (lambda v: (mon.tick(v), v)[1])(prob.deviance(th)),
                                         np.maximum(start, 1e-3), np.zeros(design.n_terms), max_evals=max_evals)
            nfev += more
    elif method == "lbfgs":
        def fun_grad(th):
            out = prob.evaluate(th, gradient=True)
            mon.tick(out["deviance"])
            return out["deviance"], out["gradient"]

        res, nfev = minimise_with_gradient(fun_grad, x0, np.zeros(design.n_terms), max_evals=max_evals)
    else:  # cobyqa
        def fun(th):
            v = prob.deviance(th)
            mon.tick(v)
            return v

        res, nfev = minimise_bounded(fun, x0, np.zeros(design.n_terms), max_evals=max_evals)
    return res, nfev


def reml(design: MixedDesign, *, theta0: np.ndarray | None = None, max_evals: int = 4000,
         progress=None, cancel=None, gradient: bool = False, method: str = "newton") -> MixedFit:
    """REML estimates of the variance components on the observed scale.

    Parameters
    ----------
    design
        Cells and terms (:meth:`MixedDesign.from_spec` for a corpus and formula).
    theta0
        Starting relative standard deviations (default: from Henderson's Method I).
    max_evals
        Budget of criterion evaluations per optimiser pass.
    progress, cancel
        ``progress(phase, i, n, eta)`` every few evaluations; ``cancel()`` polled at every
        evaluation (raises :class:`EstimationCancelled`).
    method
        ``"newton"`` (default): projected Newton on phi = theta^2 with the exact gradient and the
        average-information Hessian (:func:`minimise_newton`), falling back to the derivative-free
        search from its last point if it stops unconverged; ``"cobyqa"``: derivative-free (COBYQA, as
        lme4's BOBYQA); ``"lbfgs"``: L-BFGS-B with the analytic gradient in theta.  Measured costs in the
        module docstring.
    gradient
        Kept for older callers: ``True`` means ``method="lbfgs"``.

    Returns
    -------
    MixedFit
        ``components`` on the observed (probability, for binary trials) scale, residual included.
    """
    t0, c0 = time.perf_counter(), time.process_time()
    if design.n_obs <= 2:
        raise ValueError("REML needs more than one observation.")
    prob = RemlProblem(design)
    mon = _Monitor("REML", progress, cancel, max_evals)
    x0 = _start_theta(design) if theta0 is None else np.asarray(theta0, dtype=np.float64)
    if gradient:
        method = "lbfgs"
    if method not in ("newton", "cobyqa", "lbfgs"):
        raise ValueError(f"unknown REML optimiser {method!r}; use 'newton', 'cobyqa' or 'lbfgs'.")
    with _one_blas_thread():
        res, nfev = _optimise(prob, design, x0, method, mon, max_evals)
        theta = np.maximum(res.x, 0.0)
        out = prob.evaluate(theta)
    s2 = out["sigma2"]
    comps = {name: float(theta[k] ** 2 * s2) for k, name in enumerate(design.term_names)}
    comps["residual"] = float(s2)
    if progress is not None:
        progress("REML", max_evals, max_evals, 0.0)
    return MixedFit(method="REML", scale="observed", components=comps, theta=theta, intercept=float(out["beta"]),
                    criterion=float(out["deviance"]), n_obs=design.n_obs, n_cells=design.n_cells,
                    n_effects=design.n_effects, n_evaluations=nfev, seconds=time.perf_counter() - t0,
                    cpu_seconds=time.process_time() - c0,
                    converged=bool(res.success), message=str(res.message),
                    notes=list(design.notes))
