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
ordering step made each factorisation about three times slower), and for REML the term with most levels is
eliminated in closed form (:class:`EliminatedSystem`).  Measured on the HAL-scale pooled simulation
(32,014 random effects, 879,000 entries in the full factor): 0.22-0.28 s of CPU per full
factorisation, 0.13-0.15 s with the largest term (27,427 levels) eliminated.
REML's gradient needs the traces of the diagonal blocks of A^{-1}; neither SuperLU nor the CHOLMOD
wrappers expose selected inverse elements.  Where the Schur complement S has the nested structure of a
pooled or per-benchmark model (small per-task blocks and a few hundred or thousand run-level columns),
:mod:`.schur` eliminates it blockwise with a dense LAPACK Cholesky of the rest and reads S^{-1} on its
pattern from that (:meth:`EliminatedSystem.use_blocks`, chosen by REML): on the HAL-scale model 0.054 s
of CPU per deviance and 0.17 s with the traces, against 0.12 s and 0.67 s here.  Otherwise
:meth:`_FixedPatternLU.selected_inverse` computes them from SuperLU's own L and U (Takahashi's
recurrence, by supernodes, ~0.55 s on the HAL-scale S).  Everything that touches the factorisation is
in this module and :mod:`.schur`, so swapping the backend is a local change.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla


class _FixedPatternLU:
    """Factorisations of SPD matrices that share one sparsity pattern: ordering found once."""

    def __init__(self):
        self._lu = None
        self._perm = None
        self._perm_data = None
        self._perm_pattern = None

    def factor(self, a: sp.csc_matrix) -> float:
        """Factor ``a`` (CSC, the pattern of the first call) and return ``log|a|``."""
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
        b = np.asarray(b, dtype=np.float64)
        x = np.empty_like(b)
        x[self._perm] = self._lu.solve(b[self._perm])
        return x

    def selected_inverse(self, out: np.ndarray | None = None) -> np.ndarray:
        """Entries of the inverse of the last factored matrix on the filled pattern of its factor
        (Takahashi, Fagan & Chen 1973; Erisman & Tinney 1975), in the factor's (permuted) order.

        With no pivoting, SuperLU's ``A = L U`` of a symmetric matrix is ``L D L'`` (``U = D L'``), and
        ``Z = A^{-1}`` satisfies ``Z L = L^{-T} D^{-1}`` (upper triangular).  For a supernode C (consecutive
        columns whose rows below the diagonal are the rest of C and one set J), read on rows J and C::

            Z[J, C] = -Z[J, J] L[J, C] L[C, C]^{-1},
            Z[C, C] = (L[C, C]^{-T} D_C^{-1} - Z[J, C]' L[J, C]) L[C, C]^{-1},

        processed from the last supernode to the first.  Every ``Z[J, J]`` needed lies in the filled
        pattern and is already computed, so only those entries are written or read.  Per supernode one
        gather of ``Z[J, J]`` and dense BLAS products: on the HAL-scale Schur complement (4,587 columns,
        529,000 entries in L) 0.5 s of CPU with one BLAS thread (17 s with the default threads on the
        loaded 2-core machine: spinning), against 0.65 s for the column-by-column recurrence
        (``sum |J|^2`` = 7e7 scattered reads).  Returns a dense (n, n) buffer (``out``
        reused when given) whose entries outside the pattern are garbage: read it through
        :meth:`inverse_at`.
        """
        try:  # one BLAS thread: the products are small, and threads spinning on a busy machine cost 25x
            from threadpoolctl import threadpool_limits
        except ImportError:  # pragma: no cover - a declared dependency; without it only slower
            return self._selected_inverse(out)
        with threadpool_limits(limits=1, user_api="blas"):
            return self._selected_inverse(out)

    def _selected_inverse(self, out):
        from scipy.linalg import solve_triangular

        lu = self._lu
        if not np.array_equal(lu.perm_r, np.arange(lu.shape[0])):
            raise FloatingPointError("the factorisation pivoted rows; its inverse is not available.")
        low = lu.L.tocsc()
        low.sort_indices()
        d = lu.U.diagonal()
        n = low.shape[0]
        z = np.empty((n, n)) if out is None or out.shape != (n, n) else out
        indptr, indices, data = low.indptr, low.indices, low.data
        # rows strictly below the diagonal of each column (the unit diagonal is stored first after sorting)
        first = indptr[:-1] + (indices[indptr[:-1]] == np.arange(n))
        count = indptr[1:] - first
        # supernodes: column i joins i + 1 when its rows below are {i + 1} and then exactly those of i + 1
        joins = np.zeros(n, dtype=bool)
        for i in range(n - 1):
            if count[i] == count[i + 1] + 1 and count[i] > 0 and indices[first[i]] == i + 1:
                a, b = first[i] + 1, first[i + 1]
                joins[i] = np.array_equal(indices[a:a + count[i + 1]], indices[b:b + count[i + 1]])
        ends = np.flatnonzero(~joins)  # last column of each supernode
        starts = np.concatenate([[0], ends[:-1] + 1])
        for c0, c1 in zip(starts[::-1], ends[::-1]):
            size = c1 - c0 + 1
            rows_j = indices[first[c1]:first[c1] + count[c1]]
            lcc = np.eye(size)
            ljc = np.empty((rows_j.size, size))
            for k in range(size):
                v = data[first[c0 + k]:first[c0 + k] + count[c0 + k]]
                inside = size - 1 - k
                lcc[k + 1:, k] = v[:inside]
                ljc[:, k] = v[inside:]
            dinv = np.diag(1.0 / d[c0:c1 + 1])
            m = solve_triangular(lcc, dinv, lower=True, trans="T", unit_diagonal=True)  # L_CC^{-T} D^{-1}
            if rows_j.size:
                t = -(z[np.ix_(rows_j, rows_j)] @ ljc)
                zjc = solve_triangular(lcc, t.T, lower=True, trans="T", unit_diagonal=True).T  # t L_CC^{-1}
                z[np.ix_(rows_j, np.arange(c0, c1 + 1))] = zjc
                z[np.ix_(np.arange(c0, c1 + 1), rows_j)] = zjc.T
                m = m - zjc.T @ ljc
            zcc = solve_triangular(lcc, m.T, lower=True, trans="T", unit_diagonal=True).T  # m L_CC^{-1}
            z[c0:c1 + 1, c0:c1 + 1] = 0.5 * (zcc + zcc.T)
        return z

    def inverse_at(self, z: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """``A^{-1}[rows, cols]`` in the caller's order from :meth:`selected_inverse`'s buffer (the
        pairs must lie in A's pattern, which the factor's pattern contains)."""
        inv = np.empty_like(self._perm)
        inv[self._perm] = np.arange(self._perm.size)
        return z[inv[rows], inv[cols]]


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
        self._lu = _FixedPatternLU()

    def matrix(self, lam: np.ndarray, weights_g: np.ndarray | None = None) -> sp.csc_matrix:
        """The matrix ``diag(lam) G diag(lam) + I`` (G's values optionally replaced)."""
        vals = self.g.data if weights_g is None else weights_g
        data = vals * lam[self._row] * lam[self._col]
        data = data + self._diag
        return sp.csc_matrix((data, self.g.indices, self.g.indptr), shape=(self.q, self.q))

    def factor(self, lam: np.ndarray, weights_g: np.ndarray | None = None) -> float:
        """Factor ``A(lam)`` and return ``log|A|``."""
        return self._lu.factor(self.matrix(lam, weights_g))

    def solve(self, b: np.ndarray) -> np.ndarray:
        """``A^{-1} b`` with the last factorisation."""
        return self._lu.solve(b)


def _position_lookup(keys: np.ndarray, q: int):
    """A function from keys ``col * q + row`` of stored entries to their positions in the sorted ``keys``.

    A dense table of q^2 int32 when that is at most 200 MB (direct indexing: the HAL-scale model looks up
    3.9 million pairs, 0.58 s of CPU by binary search), binary search otherwise."""
    if q * q <= 5e7:
        table = np.full(q * q, -1, dtype=np.int32)
        table[keys] = np.arange(keys.size, dtype=np.int32)
        return lambda k: table[k]
    return lambda k: np.searchsorted(keys, k)


class EliminatedSystem:
    """The same ``A(lambda)`` for a fixed ``G``, with one diagonal block eliminated in closed form.

    Each cell has exactly one level of every term, so the block of ``G = Z'WZ`` that belongs to a
    single term is diagonal.  Ordering ``A = [[D, B'], [B, C]]`` with that term first (the one with
    most levels, e.g. benchmark:task:model in the pooled model), ``D`` is diagonal and

        log|A| = sum log D + log|S|,   S = C - B D^{-1} B' = Lambda_2 (G_22 - G_21 diag(w) G_12) Lambda_2 + I,

    with ``w = lambda_1^2 / (lambda_1^2 g_11 + 1)``.  ``G_21 diag(w) G_12`` is linear in ``w``, so its
    values on S's fixed pattern are one precomputed sparse matrix times ``w``; only the much smaller
    ``S`` is factored.  ``lambda`` must be constant over the block (one term).
    """

    def __init__(self, g: sp.spmatrix, block: np.ndarray, weighted: bool = False):
        g = sp.csc_matrix(g)
        g.sum_duplicates()
        g.sort_indices()
        q = g.shape[0]
        #: G's CSC pattern: :meth:`factor`'s ``g_data`` (new values of G, e.g. PIRLS weights) follow it
        self.g_indices, self.g_indptr = g.indices, g.indptr
        first = np.zeros(q, dtype=bool)
        first[np.asarray(block)] = True
        self.i1, self.i2 = np.flatnonzero(first), np.flatnonzero(~first)
        g11 = g[self.i1][:, self.i1].tocoo()
        if np.any(g11.row != g11.col):
            raise ValueError("the eliminated block of G is not diagonal.")
        self.d1 = np.asarray(g[self.i1][:, self.i1].diagonal(), dtype=np.float64)
        g21 = g[self.i2][:, self.i1].tocsc()
        g21.sort_indices()
        self.g21 = g21
        q2 = len(self.i2)
        g22 = g[self.i2][:, self.i2].tocsc()
        ones = g21.copy()
        ones.data[:] = 1.0
        pat = (abs(g22) + ones @ ones.T + sp.identity(q2, format="csc")).tocsc()
        pat.sum_duplicates()
        pat.sort_indices()
        self.indices, self.indptr = pat.indices, pat.indptr
        row = pat.indices
        col = np.repeat(np.arange(q2), np.diff(pat.indptr))
        keys = col.astype(np.int64) * q2 + row
        self._row, self._col, self._diag = row, col, row == col
        g22 = g22.tocoo()
        self._g22 = np.zeros(pat.nnz)
        lookup = _position_lookup(keys, q2)
        np.add.at(self._g22, lookup(g22.col.astype(np.int64) * q2 + g22.row), g22.data)
        # the map w -> values of G_21 diag(w) G_12 on the pattern: every pair of entries of one column
        lens = np.diff(g21.indptr)
        counts = lens[np.repeat(np.arange(len(lens)), lens)]
        e = np.repeat(np.arange(g21.nnz), counts)
        level = np.repeat(np.repeat(np.arange(len(lens)), lens), counts)
        offset = np.arange(e.size) - np.repeat(np.cumsum(counts) - counts, counts)
        e2 = g21.indptr[level] + offset
        pos = lookup(g21.indices[e2].astype(np.int64) * q2 + g21.indices[e])
        self._map = sp.csr_matrix((g21.data[e] * g21.data[e2], (pos, level)), shape=(pat.nnz, len(self.i1)))
        self.q2 = q2
        self._lu = _FixedPatternLU()
        self._lam = None
        self._g21_now = g21
        if weighted:
            # where each stored value of G goes, for factorisations with new values of G (Laplace's PIRLS
            # weights): the same slicing of a matrix whose values are their own positions
            marker = sp.csc_matrix((np.arange(1, g.nnz + 1, dtype=np.float64), g.indices, g.indptr), shape=g.shape)
            self._w_d1 = np.asarray(marker[self.i1][:, self.i1].diagonal()).astype(np.int64) - 1
            m21 = marker[self.i2][:, self.i1].tocsc()
            m21.sort_indices()
            self._w_g21 = m21.data.astype(np.int64) - 1
            m12 = marker[self.i1][:, self.i2].T.tocsc()  # G_12' has G_21's pattern: the same entry order
            m12.sort_indices()
            self._w_g12 = m12.data.astype(np.int64) - 1
            m22 = marker[self.i2][:, self.i2].tocoo()
            self._w_g22 = m22.data.astype(np.int64) - 1
            self._w_g22_pos = lookup(m22.col.astype(np.int64) * q2 + m22.row)
            self._pairs = (e, e2, level, pos)

    def use_blocks(self, term_of2: np.ndarray, coarse_labels2: list[np.ndarray]) -> bool:
        """Factor S by the block elimination of :mod:`.schur` when S has its structure (small blocks of
        nested columns and a small dense rest; ``term_of2`` and ``coarse_labels2`` describe S's columns,
        see :func:`.schur.plan_blocks`).  Returns whether it switched from the sparse LU."""
        from .schur import BlockSchur, plan_blocks

        plan = plan_blocks(self.indices, self.indptr, term_of2, coarse_labels2)
        if plan is None:
            return False
        self._lu = BlockSchur(self.indices, self.indptr, plan)
        self.plan = plan
        return True

    def factor(self, lam: np.ndarray, g_data: np.ndarray | None = None) -> float:
        """Factor ``A(lam)`` and return ``log|A|``; ``g_data`` replaces G's values (on ``g_indices``,
        ``g_indptr``; only for a system built with ``weighted=True``)."""
        lam = np.asarray(lam, dtype=np.float64)
        l1, l2 = lam[self.i1], lam[self.i2]
        if g_data is None:
            d1, g22, g21 = self.d1, self._g22, self.g21
        else:
            d1 = g_data[self._w_d1]
            g22 = np.bincount(self._w_g22_pos, weights=g_data[self._w_g22], minlength=self._row.size)
            g21 = sp.csc_matrix((g_data[self._w_g21], self.g21.indices, self.g21.indptr), shape=self.g21.shape)
        self._d = l1 * l1 * d1 + 1.0
        w = l1 * l1 / self._d
        if g_data is None:
            cross = self._map @ w
        else:  # G_21 diag(w) G_12 on S's pattern from the pairs of entries of each column of G_21
            e, e2, level, pos = self._pairs
            cross = np.bincount(pos, weights=g21.data[e] * g21.data[e2] * w[level], minlength=self._row.size)
        self._g21_now = g21
        vals = (g22 - cross) * l2[self._row] * l2[self._col] + self._diag
        s = sp.csc_matrix((vals, self.indices, self.indptr), shape=(self.q2, self.q2))
        self._lam = (l1, l2)
        return float(np.sum(np.log(self._d))) + self._lu.factor(s)

    def inverse_traces(self, groups2: np.ndarray, n_groups: int) -> tuple[float, np.ndarray]:
        """Traces of the diagonal blocks of ``A^{-1}`` at the last factorisation, for REML's gradient.

        Returns ``tr(A^{-1}_11)`` of the eliminated block and, for the rest, the sums of
        ``diag(A^{-1}_22) = diag(S^{-1})`` over ``groups2`` (one group label in 0..n_groups-1 per
        column of block 2).  With ``A^{-1}_11 = D^{-1} + D^{-1} B' S^{-1} B D^{-1}``,
        ``tr(A^{-1}_11) = sum 1/d + sum(S^{-1} o M)`` over S's pattern, ``M = B D^{-2} B'``
        (linear in ``lambda_1^2 / d^2`` through the same map as S), so only the selected inverse of
        S is needed (:meth:`_FixedPatternLU.selected_inverse`).
        """
        l1, l2 = self._lam
        tr1 = float(np.sum(1.0 / self._d))
        if self.q2 == 0:
            return tr1, np.zeros(n_groups)
        sinv = self._s_inverse()
        m = (self._map @ (l1 * l1 / (self._d * self._d))) * l2[self._row] * l2[self._col]
        tr1 += float(sinv @ m)
        diag = sinv[self._diag]  # the pattern holds every diagonal entry once, in column order
        return tr1, np.bincount(groups2, weights=diag, minlength=n_groups)

    def _s_inverse(self) -> np.ndarray:
        """S^{-1} on S's pattern (in the pattern's order) at the last factorisation."""
        if hasattr(self._lu, "inverse_on_pattern"):  # the block elimination of .schur
            return self._lu.inverse_on_pattern(self._row.size)
        self._z = self._lu.selected_inverse(getattr(self, "_z", None))
        return self._lu.inverse_at(self._z, self._row, self._col)

    def inverse_on_g(self) -> np.ndarray:
        """``A^{-1}`` at every stored entry of G (on ``g_indices``, ``g_indptr``), last factorisation.

        For the Laplace deviance's gradient, which needs the conditional covariance of each cell's
        effects.  Only for a system built with ``weighted=True``.  With ``B = A_21`` and
        ``X = S^{-1} B D^{-1}``: ``A^{-1}_22 = S^{-1}``, ``A^{-1}_21 = -X`` and
        ``A^{-1}_11 = D^{-1} + D^{-1} B' X``.  Column j of B is nonzero only on the rows of column j of
        G_21, and every pair of those rows lies in S's pattern, so X on G_21's pattern and the diagonal
        of ``A^{-1}_11`` come from S^{-1} on its pattern through the pairs that build S.
        """
        l1, l2 = self._lam
        g21 = self._g21_now
        e, e2, level, pos = self._pairs
        col_of = np.repeat(np.arange(g21.shape[1]), np.diff(g21.indptr))
        b = l2[g21.indices] * g21.data * l1[col_of]  # B on G_21's entries
        if self.q2:
            sinv = self._s_inverse()
            x = np.bincount(e2, weights=sinv[pos] * b[e] / self._d[level], minlength=g21.nnz)
        else:
            sinv, x = np.zeros(0), np.zeros(g21.nnz)
        out = np.zeros(self.g_indices.size)
        out[self._w_d1] = 1.0 / self._d + np.bincount(col_of, weights=b * x, minlength=self._d.size) / self._d
        out[self._w_g21] = -x
        out[self._w_g12] = -x
        out[self._w_g22] = sinv[self._w_g22_pos]
        return out

    def solve(self, b: np.ndarray) -> np.ndarray:
        b = np.asarray(b, dtype=np.float64)
        l1, l2 = self._lam
        one_d = b.ndim == 1
        if one_d:
            b = b[:, None]
        b1, b2 = b[self.i1], b[self.i2]
        d = self._d[:, None]
        # B = Lambda_2 G_21 lambda_1
        g21 = self._g21_now
        rhs2 = b2 - l2[:, None] * (g21 @ (l1[:, None] * b1 / d))
        x2 = self._lu.solve(rhs2)
        x1 = (b1 - l1[:, None] * (g21.T @ (l2[:, None] * x2))) / d
        x = np.empty_like(b)
        x[self.i1], x[self.i2] = x1, x2
        return x[:, 0] if one_d else x
