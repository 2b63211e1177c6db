"""The analyses beyond one G-study: each refits or re-reads the corpus and returns its own result type.

* :mod:`.refits` - a sequence of G-study fits of sub-corpora with one progress callback and
  cancellation (every fit through the HDF5 cache); what every analysis below runs on.
* :mod:`.difficulty` - task difficulty strata and difficulty-conditional reliability
  (:class:`~.difficulty.DifficultyProfile`; seed 003 (DDR paper 2026) sec. 5.3).
* :mod:`.heldout` - held-out against projected reliability over random splits
  (:class:`~.heldout.HeldOutReliability`; seed 003 sec. 5.4).
* :mod:`.loo` - PSIS-LOO of the main fit (:class:`~.loo.LooSummary`).
* :mod:`.stability` - leave-one-benchmark-out and leave-one-model-out tables (seed 000 (Hardy et al. 2026) App. D).
* :mod:`.external_ranking` - a published ranking against the posterior one (seed 000 Table 3).
* :mod:`.failure_modes` - failure modes from an error-category facet: four-facet G-study, per-category
  agent x task variance against activation rates, mode-profile hold-out (seed 003 secs. 5.6-5.7);
  :mod:`.failure_sim` simulates such a corpus with known parameters.
* :mod:`.frontier_time` - the frontier per release quarter (seed 002 (Krsteski et al. 2026) sec. 5.1).
* :mod:`.capability` - a capability scale across benchmarks: Bayesian 1PL and 2PL IRT (seed 002 sec. 5.3).
* :mod:`.transfer` - family rankings and the capability-gap ratio across benchmarks (seed 003 sec. 5.5).
* :mod:`.runner` - ``ddr analyses``: run several, as JSON or text.

The analyses never import the report package: the DDR sheet takes their results as they are.
"""

from .runner import (ANALYSIS_NAMES, format_analyses, parse_which, run_analyses, run_analysis_studies,
                     sheet_analyses, studies_to_dict)

__all__ = ["ANALYSIS_NAMES", "parse_which", "run_analysis_studies", "studies_to_dict", "sheet_analyses",
           "run_analyses", "format_analyses"]
