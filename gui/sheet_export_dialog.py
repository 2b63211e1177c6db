"""The question File > Export DDR sheet asks before every export: which of the sheet's analyses to run.

Each button says what it does and how long it takes ("Write the sheet now (decisions 2, 4 not run)",
"Difficulty only (about 6 min)", "Everything (about 49 min)", "Cancel"), instead of a Yes / No / Cancel
whose meaning was in the text above it.
The estimate is core's (:class:`~ddr_explorer.core.analyses.defaults.AnalysesPlan`): only the refits not
already in the fit cache are priced.
"""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget

from ..core.analyses.pace import ANALYSIS_WORDS
from ..core.formatting import fmt_duration

def analysis_words(names) -> str:
    """``("difficulty", "loo")`` -> ``"difficulty and LOO"`` (core's words, as the progress line's)."""
    words = [ANALYSIS_WORDS.get(n, n) for n in names]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def about(seconds: float) -> str:
    """``"about 49 min"``: an estimate, said as one."""
    return f"about {fmt_duration(seconds)}"


def cost(plan) -> str:
    """``"about 49 min"``, or ``"all in the cache"`` when every refit of ``plan`` is stored (nothing to run)."""
    if plan.total_refits and plan.total_seconds <= 0 and sum(plan.n_cached.values()) >= plan.total_refits:
        return "all in the cache"
    return about(plan.total_seconds)


def sheet_analyses_question(parent: QWidget | None, plan) -> tuple[QMessageBox, dict]:
    """The message box and what each of its buttons means: ``{button: "run" | ("difficulty",) | "skip" | None}``.

    Asked at every export, whatever the estimate (an export estimated under the 15-minute default once went
    straight into 105 refits that took 55 minutes on a loaded box, with no way to choose less).  Three
    choices, each with its estimate: write the sheet now (decisions 2 and 4 marked "not run"), difficulty
    only (decision 2), everything (difficulty, hold-out and PSIS-LOO); and Cancel.  The default button is the
    most the 15-minute default covers.

    With a hold-out in the plan, the box says which estimator it runs with and why, and carries a combo box
    (``box.heldout_box``, gui/heldout_estimator_box.py) to pick another: the export re-plans with it.

    ``"run"`` runs every analysis of the plan, ``("difficulty",)`` that one only, ``"skip"`` writes the sheet
    without them ("not run"), None writes no sheet.
    """
    from ..core.analyses.defaults import AUTO_BUDGET_SECONDS

    over = "" if plan.runs_by_default else ", over the 15-minute default"
    box = QMessageBox(QMessageBox.Question, "Export the DDR sheet",
                      f"The DDR sheet's {plan.describe()}{over}. Refits already run (here, on the Analyses tab or "
                      "in an export cancelled before) are read from the cache; a cancelled run keeps the ones "
                      "it finished.", QMessageBox.NoButton, parent)
    box.setObjectName("sheet_analyses_question")
    box.heldout_box = None
    choice = getattr(plan, "heldout_choice", None)
    if choice is not None:  # which estimator the hold-out runs with, why, and a box to pick another
        from .heldout_estimator_box import heldout_estimator_box

        box.setInformativeText(choice.line[0].upper() + choice.line[1:] + ". A different pick below is re-estimated "
                               "before it runs.")
        box.heldout_box = heldout_estimator_box(choice.requested)
        box.layout().addWidget(box.heldout_box, box.layout().rowCount(), 0, 1, box.layout().columnCount())
    meaning = {}
    now = box.addButton(f"Write the sheet now ({_not_run_words(plan.which)})", QMessageBox.AcceptRole)
    now.setToolTip(f"No refits: the sheet says \"not run\" for {analysis_words(plan.which)}.")
    meaning[now] = "skip"
    default = now
    if "difficulty" in plan.which and len(plan.which) > 1:
        alone = plan.part(["difficulty"])
        only = box.addButton(f"Difficulty only ({cost(alone)})", QMessageBox.AcceptRole)
        rest = [n for n in plan.which if n != "difficulty"]
        only.setToolTip(f"Run difficulty ({alone.total_refits} refits), then write the sheet; it says \"not run\" "
                        f"for {analysis_words(rest)}.")
        meaning[only] = ("difficulty",)
        if alone.total_seconds < AUTO_BUDGET_SECONDS:
            default = only
    everything = box.addButton(f"Everything ({cost(plan)})", QMessageBox.AcceptRole)
    everything.setToolTip(f"Run {analysis_words(plan.which)} ({plan.total_refits} refits), then write the sheet.")
    meaning[everything] = "run"
    if plan.runs_by_default:
        default = everything
    box.setDefaultButton(default)
    cancel = box.addButton("Cancel", QMessageBox.RejectRole)
    cancel.setToolTip("Write no sheet now.")
    meaning[cancel] = None
    box.setEscapeButton(cancel)
    return box, meaning


#: The sheet's decisions each analysis answers (difficulty: decision 2; hold-out and PSIS-LOO: decision 4).
DECISIONS = {"difficulty": 2, "heldout": 4, "loo": 4}


def _not_run_words(which) -> str:
    """``"decisions 2, 4 not run"`` for the analyses ``which`` left out (short: four buttons share a row)."""
    numbers = sorted({DECISIONS[n] for n in which if n in DECISIONS})
    if not numbers:
        return f"{analysis_words(which)} not run"
    if len(numbers) == 1:
        return f"decision {numbers[0]} not run"
    return "decisions " + ", ".join(map(str, numbers)) + " not run"


__all__ = ["about", "analysis_words", "cost", "sheet_analyses_question"]
