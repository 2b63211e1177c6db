"""Point estimators of the variance components beside the Bayesian GLMM (seed 000 App. C and G).

- :mod:`.reml`: REML for the Gaussian random-intercept model on the observed scale (lme4's lmer).
- :mod:`.laplace`: the Laplace approximation for the binomial-logit GLMM by PIRLS (glmer, nAGQ = 1).
- :mod:`.design`: the cells' sufficient statistics and the sparse indicator matrix they share.
- :mod:`.sparse`: the penalised sparse system and why scipy.sparse factors it.
"""

from .design import EstimationCancelled, MixedDesign
from .laplace import laplace
from .reml import MixedFit, reml

__all__ = ["EstimationCancelled", "MixedDesign", "MixedFit", "laplace", "reml"]
