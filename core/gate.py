"""The convergence gate (SPEC sec. 2): a fit's numbers are reported as converged only when every
sampled quantity has split R-hat <= 1.01, bulk ESS >= 400, and the fit had no divergent transition.

It sits below every other part of ``core`` (it imports nothing), so the model's diagnostics, the
formatting of verdicts and the analyses all read the same numbers.
"""

#: Largest split R-hat of a converged fit.
MAX_R_HAT = 1.01
#: Smallest bulk effective sample size of a converged fit.
MIN_ESS_BULK = 400
