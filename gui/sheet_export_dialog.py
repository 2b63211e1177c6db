"""The question File > Export DDR sheet asks when the sheet's analyses are over the 15-minute default.

Each button says what it does and how long it takes ("Run all (about 49 min)", "Run only difficulty and
LOO (about 2 min)", "Cancel"), instead of a Yes / No / Cancel whose meaning was in the text above it.
The estimate is core's (:class:`~ddr_explorer.core.analyses.defaults.AnalysesPlan`): only the refits not
already in the fit cache are priced.
"""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget

from ..core.formatting import fmt_duration

#: The analyses' names in the app's words (the plan's keys are ``--analyses`` names).
ANALYSIS_WORDS = {"difficulty": "difficulty", "heldout": "hold-out", "loo": "LOO", "failure-modes": "failure modes",
                  "frontier": "frontier", "capability": "capability", "transfer": "transfer"}


def analysis_words(names) -> str:
    """``("difficulty", "loo")`` -> ``"difficulty and LOO"``."""
    words = [ANALYSIS_WORDS.get(n, n) for n in names]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def about(seconds: float) -> str:
    """``"about 49 min"``: an estimate, said as one."""
    return f"about {fmt_duration(seconds)}"


def sheet_analyses_question(parent: QWidget | None, plan) -> tuple[QMessageBox, dict]:
    """The message box and what each of its buttons means: ``{button: "run" | "auto" | "skip" | None}``.

    With a hold-out in the plan, the box says which estimator it runs with and why, and carries a combo box
    (``box.heldout_box``, gui/heldout_estimator_box.py) to pick another: the export re-plans with it.

    ``"run"`` runs every analysis of the plan, ``"auto"`` only those within the budget, ``"skip"`` writes the
    sheet without them ("not run"), None writes no sheet.
    """
    run = plan.within_budget()
    rest = plan.beyond_budget()
    box = QMessageBox(QMessageBox.Question, "Run the sheet's analyses?",
                      f"The DDR sheet's {plan.describe()}, over the 15-minute default.", QMessageBox.NoButton,
                      parent)
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
    everything = box.addButton(f"Run all ({about(plan.total_seconds)})", QMessageBox.AcceptRole)
    everything.setToolTip(f"Run {analysis_words(plan.which)}, then write the sheet.")
    meaning[everything] = "run"
    if run:
        some = box.addButton(f"Run only {analysis_words(run)} ({about(plan.part(run).total_seconds)})",
                             QMessageBox.AcceptRole)
        some.setToolTip(f"Run {analysis_words(run)}, then write the sheet; it says \"not run\" for "
                        f"{analysis_words(rest)}.")
        meaning[some] = "auto"
        box.setDefaultButton(some)
    else:
        without = box.addButton("Write the sheet without them", QMessageBox.AcceptRole)
        without.setToolTip(f"The sheet says \"not run\" for {analysis_words(plan.which)}.")
        meaning[without] = "skip"
        box.setDefaultButton(without)
    cancel = box.addButton("Cancel", QMessageBox.RejectRole)
    cancel.setToolTip("Write no sheet now.")
    meaning[cancel] = None
    box.setEscapeButton(cancel)
    return box, meaning


__all__ = ["about", "analysis_words", "sheet_analyses_question"]
