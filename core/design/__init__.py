"""Design diagnostics: what can this corpus tell apart, before anything is fitted?

SPEC section 6; seed 000 (Hardy et al. 2026) Appendix E.  Everything here is a pure function of the
corpus's canonical table and returns a plain dataclass with a ``to_dict()``
whose values are JSON-serialisable (dicts, lists, str, int, float, bool, None).

Three notions are kept apart, as in seed 000 App. E:

* **connectivity**: whether benchmarks, models and scaffolds form one
  comparison network (the incidence graph of App. E.2, Lemma E.1);
* **structural identifiability (separability)**: whether two variance
  components imply different covariance structures on the observed cells
  (Prop. E.2; the replication patterns of Table 15; Prop. E.3's conditions);
* **practical estimability**: how precisely the data pin a component down.  That
  is the posterior's job; here it appears only as counts (how many models recur
  across benchmarks, what share of items more than one model attempted, ...).

One idea per module:

* :mod:`.cells`: the corpus's cells, integer-coded (:class:`CellIndex`), and the
  conventions every diagnostic shares (tasks nested in benchmarks, trials as
  observations, records with a missing facet left out);
* :mod:`.counts`: facet counts and the model x scaffold coverage matrix;
* :mod:`.incidence`: the incidence graph and its connectivity;
* :mod:`.identifiability`: the separability of variance components (Prop. E.2-E.3);
* :mod:`.diagnostics`: all of them in one pass (:func:`diagnose`).

The modules avoid the names of the functions they define (``connectivity``,
``separability``), so that ``ddr_explorer.core.design.connectivity`` is always
the function.
"""

from __future__ import annotations

from .cells import FACETS, CellIndex, cell_index
from .counts import CoverageMatrix, FacetCounts, coverage_matrix, facet_counts
from .diagnostics import DesignDiagnostics, diagnose
from .identifiability import (
    PER_BENCHMARK_TERMS,
    POOLED_TERMS,
    ComponentSeparability,
    Condition,
    Separability,
    Separation,
    separability,
    separable_terms,
)
from .incidence import Connectivity, connectivity, incidence_graph

__all__ = [
    "FACETS",
    "POOLED_TERMS",
    "PER_BENCHMARK_TERMS",
    "FacetCounts",
    "CoverageMatrix",
    "Connectivity",
    "Separability",
    "Separation",
    "Condition",
    "ComponentSeparability",
    "DesignDiagnostics",
    "CellIndex",
    "cell_index",
    "facet_counts",
    "coverage_matrix",
    "incidence_graph",
    "connectivity",
    "separability",
    "separable_terms",
    "diagnose",
]
