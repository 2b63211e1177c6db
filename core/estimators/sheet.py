"""The DDR sheet's runners of the estimator analyses (:func:`ddr_explorer.core.ddr_sheet.analysis_runner`).

- ``methods`` (opt-in: ``ddr report --analyses methods``): the five-estimator table of
  :func:`.methods.methods_table` on the sheet's corpus and formula, for the method-notes page.  Opt-in
  because the Laplace fit alone takes about 25 s on the TB2 demo.
- ``score_reliability`` (run by itself when the claim is about scores, ``--claim absolute``): the
  observed-scale Bayesian LMM (:mod:`.bayes_lmm`, seed 000 (Hardy et al. 2026) C.2) and its per-draw Phi and Erho2 of
  scores at the corpus's observed design (seed 000 G.5), for page 1 and the method notes.
"""

from __future__ import annotations

from ..model.formula import as_spec


def _spec_of(corpus, spec):
    if spec is not None:
        return as_spec(spec)
    from ..design.presets import default_preset

    return as_spec(default_preset(corpus))


def run_methods(corpus, posterior=None, spec=None, progress=None, cancel=None,
                object_of_measurement: str | None = None):
    """:func:`.methods.methods_table` of the sheet's corpus and fit (its posterior fills the Bayes GLMM column)."""
    from .methods import methods_table

    return methods_table(corpus, _spec_of(corpus, spec), posterior=posterior,
                         object_of_measurement=object_of_measurement, progress=progress, cancel=cancel)


def run_score_reliability(corpus, spec=None, progress=None, cancel=None, object_of_measurement: str = "model"):
    """The observed-scale Bayesian LMM of the sheet's corpus and formula, and its score reliability."""
    from ..dstudy import observed_design
    from .bayes_lmm import bayes_lmm, score_reliability
    from .design import MixedDesign

    from ..design.presets import supported_spec

    spec = supported_spec(corpus, _spec_of(corpus, spec)).spec  # the formula the fit and every estimator fit
    fit = bayes_lmm(MixedDesign.from_spec(corpus, spec), spec.priors, progress=progress, cancel=cancel)
    from ..reliability import split_term

    facets = {f for t in spec.term_names for f in split_term(t)}  # seed 003 (DDR paper 2026)'s steps and categories are sized too
    sizes = observed_design(corpus, object_of_measurement=object_of_measurement, facets=facets).sizes()
    return score_reliability(fit, object_of_measurement, sizes)
