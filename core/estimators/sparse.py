"""Log-determinant and solves of the penalised system ``A = Lambda Z'WZ Lambda + I`` (sparse, SPD).

Which library, and why
----------------------
lme4 factors this matrix with a sparse Cholesky whose symbolic analysis is done once
(Bates et al. 2015, sec. 3.5).  Three candidates were weighed:

- scikit-sparse (CHOLMOD): a supernodal Cholesky with a reusable symbolic analysis, but on PyPI it
  is a source distribution only (0.5.0): installing it compiles against SuiteSparse headers
  (``libsuitesparse-dev``), which the app's users, CI and the PyInstaller build cannot assume.
  cvxopt ships CHOLMOD in wheels; tried on the HAL-scale system it was not faster than the option
  below (0.6 s per numeric factorisation on the loaded 2-core machine, plus a slow conversion).
- JAX: has no sparse Cholesky (``jax.experimental.sparse`` solves iteratively), and dense
  factorisation of ~30,000 random effects (7 GB, O(q^3)) is what the issue rules out.
- scipy.sparse (SuperLU): already a dependency, with wheels everywhere.  With diagonal pivoting
  switched off and a symmetric fill-reducing ordering (minimum degree on A + A'), SuperLU's
  ``A = L U`` of a symmetric positive definite matrix is the Cholesky factorisation up to the
  diagonal scaling ``U = D L'``, so ``log|A| = sum log U_jj`` exactly, and its solves are exact.

scipy.sparse is used.  The ordering is computed once and the matrix pre-permuted (SuperLU's own
ordering step cost four times its numeric factorisation).  Measured on the HAL-scale pooled
simulation (32,014 random effects, 879,000 entries in the factor): 0.26 s of CPU per factorisation.
That makes the REML fit of that corpus take minutes of CPU (bench/bench_estimators.py), not seconds;
what would close the gap is a supernodal Cholesky (several times faster on this pattern) and fewer
criterion evaluations through analytic gradients, which need selected elements of A^{-1}
(Takahashi's recurrence).  Everything that touches the factorisation is in this module, so swapping
the backend is a local change.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla


class PenalisedSystem:
    """``A(lambda) = diag(lambda) G diag(lambda) + I`` for a fixed sparse SPD pattern ``G``.

    ``G`` is ``Z'WZ`` (q x q).  :meth:`factor` rescales the stored values without rebuilding the
    pattern, then factors.
    """

    def __init__(self, g: sp.spmatrix):
        g = sp.csc_matrix(g)
        g.sum_duplicates()
        g.sort_indices()
        q = g.shape[0]
        # every random effect has a positive diagonal (each level is observed), but keep an explicit
        # diagonal entry so that "+ I" is a vector add on the stored values
        g = (g + sp.identity(q, format="csc") * 0.0).tocsc()
        g.sort_indices()
        self.g = g
        self.q = q
        self._row = g.indices
        self._col = np.repeat(np.arange(q), np.diff(g.indptr))
        self._diag = self._row == self._col
        self._lu = None
        self._perm = None  # fill-reducing ordering, found once (the pattern does not depend on lambda)
        self._perm_data = None
        self._perm_pattern = None

    def matrix(self, lam: np.ndarray, weights_g: np.ndarray | None = None) -> sp.csc_matrix:
        """The matrix ``diag(lam) G diag(lam) + I`` (G's values optionally replaced)."""
        vals = self.g.data if weights_g is None else weights_g
        data = vals * lam[self._row] * lam[self._col]
        data = data + self._diag
        return sp.csc_matrix((data, self.g.indices, self.g.indptr), shape=(self.q, self.q))

    def factor(self, lam: np.ndarray, weights_g: np.ndarray | None = None) -> float:
        """Factor ``A(lam)`` and return ``log|A|``."""
        a = self.matrix(lam, weights_g)
        if self._perm is None:
            # minimum degree on A + A' once; later factorisations reuse it (SuperLU's own ordering
            # step costs more than the numeric factorisation of these matrices)
            lu = spla.splu(a, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                           options={"SymmetricMode": True})
            self._perm = np.argsort(lu.perm_c)
            marker = sp.csc_matrix((np.arange(1, a.nnz + 1, dtype=np.float64), a.indices, a.indptr), shape=a.shape)
            pm = marker[self._perm][:, self._perm].tocsc()
            pm.sort_indices()
            self._perm_data = pm.data.astype(np.int64) - 1
            self._perm_pattern = (pm.indices, pm.indptr)
        ap = sp.csc_matrix((a.data[self._perm_data], *self._perm_pattern), shape=a.shape)
        self._lu = spla.splu(ap, permc_spec="NATURAL", diag_pivot_thresh=0.0,
                             options={"SymmetricMode": True, "Equil": False})
        # |det P_r A P_c| = |det A|; the pivots of an SPD matrix under symmetric ordering are positive,
        # abs() only guards against a row permutation that SuperLU may still apply
        d = np.abs(self._lu.U.diagonal())
        if np.any(d == 0):
            raise FloatingPointError("the penalised system is singular (a zero pivot).")
        return float(np.sum(np.log(d)))

    def solve(self, b: np.ndarray) -> np.ndarray:
        """``A^{-1} b`` with the last factorisation."""
        b = np.asarray(b, dtype=np.float64)
        x = np.empty_like(b)
        x[self._perm] = self._lu.solve(b[self._perm])
        return x
