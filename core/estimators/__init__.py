"""Point estimators of the variance components beside the Bayesian GLMM (seed 000 (Hardy et al. 2026) App. C and G).

- :mod:`.reml`: REML for the Gaussian random-intercept model on the observed scale (lme4's lmer).
- :mod:`.laplace`: the Laplace approximation for the binomial-logit GLMM by PIRLS (glmer, nAGQ = 1).
- :mod:`.bayes_lmm`: the Bayesian LMM on the observed scale (seed 000 C.2) by an exact blocked Gibbs
  sampler in JAX, and the per-draw score reliabilities Phi and Erho2 (seed 000 G.5).
- :mod:`.sheet`: the DDR sheet's runners of the ``methods`` and ``score_reliability`` analyses.
- :mod:`.disco`: distance components (DISCO) facet by facet, normalised (seed 000 App. G.2).
- :mod:`.methods`: the estimator comparison table behind `ddr methods` (seed 000 Tables 20-21).
- :mod:`.design`: the cells' sufficient statistics and the sparse indicator matrix they share.
- :mod:`.sparse`: the penalised sparse system and why scipy.sparse factors it.
- :mod:`.schur`: REML's Schur complement eliminated blockwise (nested per-task blocks, a dense rest).
"""

from .design import EstimationCancelled, MixedDesign
from .disco import DiscoResult, disco, disco_scores
from .laplace import laplace
from .reml import MixedFit, reml

__all__ = ["DiscoResult", "EstimationCancelled", "disco", "disco_scores", "MixedDesign", "MixedFit", "laplace", "reml"]
