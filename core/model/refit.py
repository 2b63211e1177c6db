"""Refits of one parent design: the contract the refit engine calls (:func:`fit_refits`).

A refit is the parent's model fitted to other data on the *same cells*: each
:class:`RefitRequest` gives new successes and trials for every cell of the parent
:class:`~.design_matrix.DesignMatrix` (trials 0 drops a cell).  That covers every refit the
analyses need:

- a subset of cells (difficulty quartiles, LOBO, LOMO, PSIS-LOO refits): the parent's
  counts where kept, 0 elsewhere;
- a split of each cell's trials (hold-out training and held-out parts, seed 003 sec. 5.4):
  the part's own counts per cell;
- a reweighting (a bootstrap): counts times integer weights.

Whatever the implementation, a returned :class:`~.posterior.Posterior` reads like a cold fit
of the kept cells: levels with no trials left are not in ``levels`` / ``random_effects``,
``n_cells`` and ``n_trials`` count the kept cells, and its diagnostics are its own.

This first implementation fits each request cold, one after another, from the kept cells'
table; the warm-started, shape-sharing version replaces the body of :func:`fit_refits` and
keeps this signature.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .design_matrix import DesignMatrix
from .formula import as_spec
from .posterior import CancelCallback, FitCancelled, Posterior, ProgressCallback, SamplerSettings

__all__ = ["RefitRequest", "fit_refits", "request_cells"]


@dataclass(frozen=True)
class RefitRequest:
    """One refit: new counts on the parent's cells.

    Attributes
    ----------
    label
        What the refit is (``"split 7 train"``), for progress and errors.
    successes, trials
        int arrays ``(n_cells,)`` aligned with the parent design's cells; ``trials == 0`` drops
        a cell, ``0 <= successes <= trials``.
    """

    label: str
    successes: np.ndarray
    trials: np.ndarray

    def check(self, design: DesignMatrix) -> None:
        """Raise ValueError unless the counts fit ``design``'s cells."""
        s, n = np.asarray(self.successes), np.asarray(self.trials)
        if s.shape != (design.n_cells,) or n.shape != (design.n_cells,):
            raise ValueError(f"refit {self.label!r}: need successes and trials for each of the parent's "
                             f"{design.n_cells} cells, got shapes {s.shape} and {n.shape}.")
        if (n < 0).any() or (s < 0).any() or (s > n).any():
            raise ValueError(f"refit {self.label!r}: successes must lie in 0..trials and trials must be >= 0.")
        if not (n > 0).any():
            raise ValueError(f"refit {self.label!r} keeps no cell of the parent; nothing to fit.")


def request_cells(design: DesignMatrix, request: RefitRequest):
    """The kept cells of ``request`` as a cell table (identifying columns, successes, trials)."""
    request.check(design)
    keep = np.asarray(request.trials) > 0
    cells = design.cells.loc[keep].copy()
    cells["successes"] = np.asarray(request.successes, np.int64)[keep]
    cells["trials"] = np.asarray(request.trials, np.int64)[keep]
    return cells.reset_index(drop=True)


def fit_refits(design: DesignMatrix, spec, requests: Sequence[RefitRequest], settings: SamplerSettings | None = None,
               *, parent: Posterior | None = None, progress: ProgressCallback | None = None,
               cancel: CancelCallback | None = None) -> list[Posterior]:
    """Fit every request under the parent's model (SPEC section 2), in request order.

    Parameters
    ----------
    design
        The parent's design (its cells fix the requests' alignment).
    spec
        The parent's model (a :class:`~.formula.ModelSpec`, preset name or formula).
    requests
        The refits.
    settings
        Sampler settings for every refit (defaults when None).
    parent
        The parent's posterior: a warm-starting implementation starts from it; this one ignores it.
    progress
        ``progress(phase, i, n, eta)`` with ``i`` the refits finished of ``n``.
    cancel
        Polled between refits and inside each.

    Returns
    -------
    list of Posterior
    """
    from .sampler import fit

    spec = as_spec(spec)
    for r in requests:
        r.check(design)
    out = []
    n = len(requests)
    for i, r in enumerate(requests):
        if cancel is not None and cancel():
            raise FitCancelled(f"refits cancelled by the user ({i} of {n} done)")

        def inner(phase, it, total, eta, _i=i, _label=r.label):
            if progress is not None:
                progress(f"{_label}: {phase}", _i, n, eta)

        out.append(fit(request_cells(design, r), spec, settings, progress=inner, cancel=cancel))
    if progress is not None:
        progress("refits done", n, n, 0.0)
    return out
