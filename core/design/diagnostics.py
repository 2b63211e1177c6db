"""All design diagnostics of a corpus in one pass: :func:`diagnose`.

The corpus is coded once (:class:`~.cells.CellIndex`) and the facet counts,
the pooled coverage, the connectivity and the separability reuse the codes;
this is what ``ddr inspect`` and the app's corpus panel show.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..corpus.corpus import Corpus
from .cells import cell_index
from .counts import CoverageMatrix, FacetCounts, _coverage, _facet_counts
from .identifiability import Separability, _separability
from .incidence import Connectivity, _connectivity

__all__ = ["DesignDiagnostics", "diagnose"]


@dataclass
class DesignDiagnostics:
    """Everything :func:`diagnose` computes; ``to_dict()`` is JSON-serialisable."""

    counts: FacetCounts
    coverage: CoverageMatrix
    connectivity: Connectivity
    separability: Separability

    def to_dict(self) -> dict:
        return {
            "counts": self.counts.to_dict(),
            "coverage": self.coverage.to_dict(),
            "connectivity": self.connectivity.to_dict(),
            "separability": self.separability.to_dict(),
        }


def diagnose(corpus: Corpus | pd.DataFrame) -> DesignDiagnostics:
    """Facet counts, pooled coverage, connectivity and separability in one pass.

    The corpus is coded once and every diagnostic reuses the codes.

    Parameters
    ----------
    corpus
        A corpus or its canonical table.

    Returns
    -------
    DesignDiagnostics
        ``to_dict()`` has keys ``counts``, ``coverage``, ``connectivity`` and
        ``separability`` (see each dataclass).
    """
    d = cell_index(corpus)
    conn = _connectivity(d)
    return DesignDiagnostics(
        counts=_facet_counts(d),
        coverage=_coverage(d, None),
        connectivity=conn,
        separability=_separability(d, conn),
    )
