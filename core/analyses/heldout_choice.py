"""Which estimator fits the hold-out splits: Bayesian refits when they fit the sheet's budget, REML otherwise.

``--heldout-estimator bayes|reml|auto`` (``auto``, the default).  Seed 003 (DDR paper 2026)
sec. 7 asks that every training-cell projection be paired with a held-out estimate (sec. 5.4: 50 random
70/30 splits, 100 fits).  As Bayesian refits those take about 16 minutes on a 2-core machine, over the
sheet's 15-minute budget (:data:`~.defaults.AUTO_BUDGET_SECONDS`), so a default sheet used to print
decision 4 as "not run here".  The DDR paper fits its G-studies by Henderson, REML and a Bayesian GLMM and
finds them agreeing; REML fits the 100 parts in about two minutes (:mod:`.heldout_reml`).  ``auto``
keeps the Bayesian refits wherever their estimate (with the analyses run beside them) is under the budget
(a GPU, a Dask cluster, a quiet fast box, a warm cache) and runs REML otherwise; the sheet says which ran
and why in one line (:attr:`HeldOutChoice.line`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HELDOUT_ESTIMATORS", "DEFAULT_HELDOUT_ESTIMATOR", "HeldOutChoice", "check_heldout_estimator",
           "choose_heldout_estimator"]

#: The sheet's budget, as :data:`~.defaults.AUTO_BUDGET_SECONDS` (which the plan passes as ``budget_seconds``).
SHEET_BUDGET_SECONDS = 15 * 60
#: ``--heldout-estimator`` choices.
HELDOUT_ESTIMATORS: tuple[str, ...] = ("auto", "bayes", "reml")
DEFAULT_HELDOUT_ESTIMATOR = "auto"


def check_heldout_estimator(name: str | None) -> str:
    """``name`` lower-cased and checked (None: :data:`DEFAULT_HELDOUT_ESTIMATOR`)."""
    n = (name or DEFAULT_HELDOUT_ESTIMATOR).strip().lower()
    if n not in HELDOUT_ESTIMATORS:
        raise ValueError(f"--heldout-estimator {name!r}: choose from {', '.join(HELDOUT_ESTIMATORS)}")
    return n


@dataclass(frozen=True)
class HeldOutChoice:
    """The estimator the hold-out runs with, and why.

    Attributes
    ----------
    estimator
        ``"bayes"`` or ``"reml"``: what runs.
    requested
        ``"auto"``, ``"bayes"`` or ``"reml"``: what was asked.
    bayes_seconds
        The refit engine's estimate of the Bayesian refits here (None: not estimated).
    budget_seconds
        The budget ``auto`` held them to.
    other_seconds
        The estimate of the analyses run beside them, which share the budget.
    """

    estimator: str
    requested: str
    bayes_seconds: float | None = None
    budget_seconds: float | None = None
    other_seconds: float = 0.0

    @property
    def line(self) -> str:
        """One line for the sheet and the terminal: which estimator ran and why."""
        from ..formatting import fmt_duration

        if self.estimator == "reml":
            head = "hold-out by REML refits (observed 0/1 scale)"
            if self.requested == "reml":
                return f"{head}: asked for with --heldout-estimator reml"
            with_others = (f" ({fmt_duration(self.bayes_seconds + self.other_seconds)} with the sheet's other "
                           "analyses)" if self.other_seconds > 0 else "")
            return (f"{head}: Bayesian refits were estimated at {fmt_duration(self.bayes_seconds)} on this machine"
                    f"{with_others}, over the {fmt_duration(self.budget_seconds)} budget; "
                    "run with --heldout-estimator bayes for them")
        head = "hold-out by Bayesian refits (latent logit scale)"
        if self.requested == "bayes":
            return f"{head}: asked for with --heldout-estimator bayes"
        if self.bayes_seconds is None:
            return f"{head}: their time could not be estimated (no main fit at hand), so the default estimator ran"
        return (f"{head}: estimated at {fmt_duration(self.bayes_seconds)} on this machine, within the "
                f"{fmt_duration(self.budget_seconds)} budget")


def choose_heldout_estimator(requested: str | None, bayes_seconds: float | None, *, other_seconds: float = 0.0,
                             budget_seconds: float | None = None) -> HeldOutChoice:
    """The hold-out's estimator (module note).

    Parameters
    ----------
    requested
        ``"auto"`` (None too), ``"bayes"`` or ``"reml"``.
    bayes_seconds
        The estimated wall seconds of the Bayesian refits still to run (refits in the cache cost nothing);
        None when no estimate can be made (``auto`` then keeps the Bayesian refits, as before this choice).
    other_seconds
        The estimate of the analyses the sheet runs beside the hold-out: they share the budget.
    budget_seconds
        The budget (:data:`SHEET_BUDGET_SECONDS`, 15 minutes, when None).

    Returns
    -------
    HeldOutChoice
        ``auto``: Bayesian when ``other_seconds + bayes_seconds`` is under the budget, else REML.
    """
    req = check_heldout_estimator(requested)
    budget = SHEET_BUDGET_SECONDS if budget_seconds is None else float(budget_seconds)
    if req != "auto":
        return HeldOutChoice(req, req, bayes_seconds, budget, other_seconds)
    if bayes_seconds is None or other_seconds + bayes_seconds < budget:
        return HeldOutChoice("bayes", "auto", bayes_seconds, budget, other_seconds)
    return HeldOutChoice("reml", "auto", bayes_seconds, budget, other_seconds)
