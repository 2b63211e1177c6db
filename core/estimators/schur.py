"""Block elimination of REML's Schur complement: small nested blocks in closed form, the rest dense.

After :class:`.sparse.EliminatedSystem` has eliminated the term with most levels, the penalised system
left is ``S`` (q2 x q2).  In a pooled random-intercept model most of S's columns belong to terms nested
in a task (``benchmark:task``, ``benchmark:task:scaffold``): two such columns are coupled only when they
belong to the same task, so S restricted to them is block diagonal with blocks of a few columns (one per
task).  The other columns (benchmark, model, scaffold and their run-level interactions) are few.  Ordering
S as ``[[S_TT, S_TR], [S_RT, S_RR]]`` with T the nested columns:

    log|S| = log|S_TT| + log|Q|,   Q = S_RR - S_RT S_TT^{-1} S_TR          (dense, |R| x |R|)

    S^{-1} = [[S_TT^{-1} + W Q^{-1} W',  -W Q^{-1}],  [-Q^{-1} W',  Q^{-1}]],   W = S_TT^{-1} S_TR,

so one batched Cholesky of the small blocks, a dense Cholesky of Q (LAPACK) and BLAS products give the
determinant, solves and S^{-1} on S's sparsity pattern, which REML's exact gradient needs (the block
traces of A^{-1}, :meth:`.sparse.EliminatedSystem.inverse_traces`).  The products with S_TR are taken
per *group* of blocks that share a level of a coarse term (the benchmark in the pooled model): a
group's blocks touch only that benchmark's run-level columns, so each group's ``S_TR`` is a small dense
matrix, and the cost is sum_g |T_g| |R_g|^2 rather than |T| |R|^2.

Why not a general sparse factorisation: SuperLU (the fallback, :class:`.sparse._FixedPatternLU`)
factors this S (4,587 columns on the HAL-scale pooled simulation) in ~0.08 s, but has no selected
inverse; the Python supernodal Takahashi recurrence over its factors took ~0.55 s per gradient.  With
the structure made explicit, the selected inverse is a dense inverse of Q (1,076 columns there) plus
BLAS products (measured figures in :mod:`.reml`'s docstring).  No new dependency: numpy/scipy LAPACK.

:func:`plan_blocks` decides whether a model has this structure (small blocks, a small dense rest);
when it has not, the caller keeps the sparse LU.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

#: Largest block of nested columns eliminated in closed form (the blocks are padded to the largest).
MAX_BLOCK = 16
#: Cost of one group in multiply-adds: the Python and numpy call overhead of its products (~0.1 ms).
GROUP_OVERHEAD = 2e5
#: Largest dense remainder Q (its Cholesky and inverse are O(|R|^3)).
MAX_DENSE = 2500


@dataclass
class BlockPlan:
    """Which columns of S are eliminated blockwise (T), which stay dense (R), and the groups of blocks.

    Attributes
    ----------
    block_of
        int (q2,): block index of each T column, -1 for R columns.
    group_of_block
        int (n_blocks,): group index of each block.
    cost
        Estimated multiply-adds of one factorisation with the inverse (for the choice of backend).
    """

    block_of: np.ndarray
    group_of_block: np.ndarray
    cost: float

    @property
    def n_dense(self) -> int:
        return int(np.sum(self.block_of < 0))


def coarse_labels(design, cell_cols: np.ndarray, max_levels: int = 100) -> list[np.ndarray]:
    """Per term of ``design`` (a :class:`.design.MixedDesign`) with 2..max_levels levels: that term's level
    shared by all cells of each column of Z (-1 where the column's cells span several), the candidate
    groupings of :func:`plan_blocks`.  ``cell_cols`` (cells, K) is the column of Z of each term per cell."""
    d = design
    cand = [c for c in range(d.n_terms) if 2 <= d.n_levels[c] <= max_levels]
    lo = np.empty((len(cand), d.n_effects), dtype=np.int64)
    hi = np.empty_like(lo)
    for k in range(d.n_terms):
        # every level of every term has at least one cell: reduce the cells sorted by that term's level
        order = np.argsort(d.codes[k], kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(d.codes[k][order]) != 0])
        cols = cell_cols[order[starts], k]
        for i, c in enumerate(cand):
            v = d.codes[c][order]
            lo[i, cols] = np.minimum.reduceat(v, starts)
            hi[i, cols] = np.maximum.reduceat(v, starts)
    return [np.where(lo[i] == hi[i], lo[i], -1) for i in range(len(cand))]


def plan_blocks(indices: np.ndarray, indptr: np.ndarray, term_of: np.ndarray, coarse_labels: list[np.ndarray]
                ) -> BlockPlan | None:
    """Choose the nested columns T of S (CSC pattern ``indices``, ``indptr``) and their groups.

    Terms are added to T from the most levels down while S restricted to T stays block diagonal with
    blocks of at most :data:`MAX_BLOCK` columns.  ``coarse_labels`` gives, per candidate grouping term,
    the level of that term shared by every cell of each column of S (-1 where a column spans several);
    the grouping with the least cost is kept (one group of everything when none applies).  Returns None
    when the dense rest would exceed :data:`MAX_DENSE` or nothing can be eliminated.
    """
    q2 = indptr.size - 1
    pat = sp.csc_matrix((np.ones(indices.size), indices, indptr), shape=(q2, q2))
    terms = np.unique(term_of)
    sizes = np.array([np.sum(term_of == t) for t in terms])
    chosen = np.zeros(q2, dtype=bool)
    labels = None
    for t in terms[np.argsort(-sizes, kind="stable")]:
        trial = chosen | (term_of == t)
        idx = np.flatnonzero(trial)
        n, lab = connected_components(pat[idx][:, idx], directed=False)
        if np.bincount(lab).max() <= MAX_BLOCK:
            chosen, labels = trial, (idx, lab, n)
    if labels is None or q2 - chosen.sum() > MAX_DENSE or q2 - chosen.sum() == 0:
        return None
    idx, lab, n_blocks = labels
    block_of = np.full(q2, -1, dtype=np.int64)
    block_of[idx] = lab
    rest = np.flatnonzero(~chosen)
    tr_pat = pat[rest][:, idx].tocsc()  # R x T: the R neighbours of each T column
    bsize = np.bincount(lab, minlength=n_blocks)
    bmax = int(bsize.max())
    best = None
    for cand in [None, *coarse_labels]:
        if cand is None:
            group = np.zeros(n_blocks, dtype=np.int64)
        else:
            lo = np.full(n_blocks, np.iinfo(np.int64).max)
            hi = np.full(n_blocks, -1)
            np.minimum.at(lo, lab, cand[idx])
            np.maximum.at(hi, lab, cand[idx])
            if np.any(lo != hi) or np.any(lo < 0):
                continue
            group = np.unique(lo, return_inverse=True)[1]
        n_groups = int(group.max()) + 1
        cost = GROUP_OVERHEAD * n_groups
        for g in range(n_groups):
            cols = np.flatnonzero(group[lab] == g)
            r_g = np.unique(tr_pat[:, cols].indices).size
            cost += np.sum(group == g) * bmax * r_g * r_g * 3.0
        if best is None or cost < best[0]:
            best = (cost, group)
    cost = best[0] + rest.size ** 3
    return BlockPlan(block_of=block_of, group_of_block=best[1], cost=cost)


class BlockSchur:
    """Factorisations of S on a fixed pattern by the block elimination of :func:`plan_blocks`.

    The interface is that of :class:`.sparse._FixedPatternLU` for the caller (:meth:`factor` of the CSC
    matrix on the fixed pattern, :meth:`solve`) plus :meth:`inverse_on_pattern`.
    """

    def __init__(self, indices: np.ndarray, indptr: np.ndarray, plan: BlockPlan):
        q2 = indptr.size - 1
        self.q2 = q2
        row = indices
        col = np.repeat(np.arange(q2), np.diff(indptr))
        block_of = plan.block_of
        n_blocks = int(plan.group_of_block.size)
        t_cols = np.flatnonzero(block_of >= 0)
        self.r_cols = np.flatnonzero(block_of < 0)
        nr = self.r_cols.size
        # position of each T column inside its (padded) block, blocks ordered by group
        order = np.argsort(plan.group_of_block, kind="stable")
        slot_of_block = np.empty(n_blocks, dtype=np.int64)
        slot_of_block[order] = np.arange(n_blocks)
        bsize = np.bincount(block_of[t_cols], minlength=n_blocks)
        self.bmax = bmax = int(bsize.max())
        slot = slot_of_block[block_of[t_cols]]
        srt = np.lexsort((t_cols, slot))
        t_sorted = t_cols[srt]
        pos_in_block = np.arange(t_sorted.size) - np.repeat(np.cumsum(np.bincount(slot[srt], minlength=n_blocks))
                                                             - np.bincount(slot[srt], minlength=n_blocks),
                                                             np.bincount(slot[srt], minlength=n_blocks))
        self.n_blocks = n_blocks
        # padded row index of each T column: slot * bmax + position
        prow = np.full(q2, -1, dtype=np.int64)
        prow[t_sorted] = slot[srt] * bmax + pos_in_block
        self.prow_t = prow[t_cols]
        self.t_cols = t_cols
        rpos = np.full(q2, -1, dtype=np.int64)
        rpos[self.r_cols] = np.arange(nr)
        self.rpos_r = rpos
        # groups: consecutive slots
        group_sorted = plan.group_of_block[order]
        n_groups = int(group_sorted.max()) + 1
        gstart = np.searchsorted(group_sorted, np.arange(n_groups))
        gend = np.searchsorted(group_sorted, np.arange(n_groups), side="right")
        is_t_row, is_t_col = block_of[row] >= 0, block_of[col] >= 0
        # T-T entries: inside one block
        tt = is_t_row & is_t_col
        self.tt_entries = np.flatnonzero(tt)
        self.tt_flat = (prow[row[tt]] // bmax) * bmax * bmax + (prow[row[tt]] % bmax) * bmax + prow[col[tt]] % bmax
        # R-R entries
        rr = ~is_t_row & ~is_t_col
        self.rr_entries = np.flatnonzero(rr)
        self.rr_flat = rpos[row[rr]] * nr + rpos[col[rr]]
        # T-R entries (either orientation: the pattern is symmetric and stores both)
        self.groups = []
        tr_any = is_t_row ^ is_t_col
        t_of = np.where(is_t_row, row, col)
        r_of = np.where(is_t_row, col, row)
        slot_entry = np.where(tr_any, prow[t_of] // bmax, -1)
        for g in range(n_groups):
            s0, s1 = int(gstart[g]), int(gend[g])
            ent = np.flatnonzero(tr_any & (slot_entry >= s0) & (slot_entry < s1))
            r_g = np.unique(rpos[r_of[ent]])
            local_r = np.searchsorted(r_g, rpos[r_of[ent]])
            local_t = prow[t_of[ent]] - s0 * bmax
            # stored once per unordered pair: keep the entries with the T column as the row for S_TR
            keep = is_t_row[ent]
            self.groups.append({"slots": (s0, s1), "r": r_g, "entries": ent, "flat": local_t * r_g.size + local_r,
                                "keep": keep, "rr": np.ix_(r_g, r_g)})  # the index built once, not per call
        self._eye = np.eye(bmax)

    def factor(self, s: sp.csc_matrix) -> float:
        """Factor S (values on the fixed pattern) and return log|S|."""
        vals = s.data
        nb, bmax = self.n_blocks, self.bmax
        blocks = np.zeros(nb * bmax * bmax)
        blocks[self.tt_flat] = vals[self.tt_entries]
        blocks = blocks.reshape(nb, bmax, bmax)
        pad = np.einsum("bii->bi", blocks) == 0  # padding rows of smaller blocks: identity
        blocks[pad.nonzero()[0], pad.nonzero()[1], pad.nonzero()[1]] = 1.0
        lt = np.linalg.cholesky(blocks)
        self._linv = np.linalg.inv(lt)  # (nb, bmax, bmax) lower triangular inverses
        logdet = 2.0 * float(np.sum(np.log(np.einsum("bii->bi", lt))))
        nr = self.r_cols.size
        q = np.zeros(nr * nr)
        q[self.rr_flat] = vals[self.rr_entries]
        q = q.reshape(nr, nr)
        self._c = []
        for g in self.groups:
            s0, s1 = g["slots"]
            r_g = g["r"]
            str_g = np.zeros((s1 - s0) * bmax * r_g.size)
            str_g[g["flat"][g["keep"]]] = vals[g["entries"][g["keep"]]]
            str_g = str_g.reshape(s1 - s0, bmax, r_g.size)
            c = np.matmul(self._linv[s0:s1], str_g).reshape(-1, r_g.size)  # L^{-1} S_TR
            q[g["rr"]] -= c.T @ c
            self._c.append(c)
        self._q = sla.cho_factor(q, lower=True, check_finite=False)
        logdet += 2.0 * float(np.sum(np.log(np.diag(self._q[0]))))
        return logdet

    def _tt_solve(self, b_pad: np.ndarray, transpose: bool) -> np.ndarray:
        """L^{-1} b (transpose=False) or L^{-T} b on padded T rows, b of shape (nb*bmax, m)."""
        nb, bmax = self.n_blocks, self.bmax
        b3 = b_pad.reshape(nb, bmax, -1)
        lin = self._linv.transpose(0, 2, 1) if transpose else self._linv
        return np.matmul(lin, b3).reshape(nb * bmax, -1)

    def solve(self, b: np.ndarray) -> np.ndarray:
        """S^{-1} b with the last factorisation."""
        b = np.asarray(b, dtype=np.float64)
        one_d = b.ndim == 1
        if one_d:
            b = b[:, None]
        m = b.shape[1]
        nb, bmax = self.n_blocks, self.bmax
        bt = np.zeros((nb * bmax, m))
        bt[self.prow_t] = b[self.t_cols]
        yt = self._tt_solve(bt, False)  # L^{-1} b_T
        br = b[self.r_cols] - self._ct_times(yt)  # b_R - S_RT S_TT^{-1} b_T = b_R - C' L^{-1} b_T
        xr = sla.cho_solve(self._q, br, check_finite=False)
        xt = self._tt_solve(yt - self._c_times(xr), True)  # L^{-T} (L^{-1} b_T - C x_R)
        x = np.empty_like(b)
        x[self.t_cols] = xt[self.prow_t]
        x[self.r_cols] = xr
        return x[:, 0] if one_d else x

    def _ct_times(self, y_pad: np.ndarray) -> np.ndarray:
        out = np.zeros((self.r_cols.size, y_pad.shape[1]))
        for g, c in zip(self.groups, self._c):
            s0, s1 = g["slots"]
            out[g["r"]] += c.T @ y_pad[s0 * self.bmax:s1 * self.bmax]
        return out

    def _c_times(self, x_r: np.ndarray) -> np.ndarray:
        out = np.zeros((self.n_blocks * self.bmax, x_r.shape[1]))
        for g, c in zip(self.groups, self._c):
            s0, s1 = g["slots"]
            out[s0 * self.bmax:s1 * self.bmax] = c @ x_r[g["r"]]
        return out

    def inverse_on_pattern(self, n_entries: int) -> np.ndarray:
        """S^{-1} at every stored entry of S's pattern (in the pattern's order), last factorisation."""
        bmax = self.bmax
        nr = self.r_cols.size
        lq = self._q[0]
        linv_q = sla.solve_triangular(lq, np.eye(nr), lower=True, check_finite=False)
        qinv = linv_q.T @ linv_q
        out = np.empty(n_entries)
        out[self.rr_entries] = qinv.reshape(-1)[self.rr_flat]
        # S_TT^{-1} = L^{-T} L^{-1} per block, plus W Q^{-1} W' on the blocks, W = L^{-T} C
        tt = np.matmul(self._linv.transpose(0, 2, 1), self._linv)
        for g, c in zip(self.groups, self._c):
            s0, s1 = g["slots"]
            r_g = g["r"]
            w = np.matmul(self._linv[s0:s1].transpose(0, 2, 1), c.reshape(s1 - s0, bmax, r_g.size))  # (nbg, b, r)
            x = (w.reshape(-1, r_g.size) @ qinv[g["rr"]]).reshape(s1 - s0, bmax, r_g.size)
            tt[s0:s1] += np.matmul(x, w.transpose(0, 2, 1))
            out[g["entries"]] = -x.reshape(-1)[g["flat"]]
        out[self.tt_entries] = tt.reshape(-1)[self.tt_flat]
        return out
