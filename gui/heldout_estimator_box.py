"""The hold-out's estimator in the app: one small combo box, the choice ``--heldout-estimator`` makes on the CLI.

``auto`` (the default) runs the hold-out splits as Bayesian refits when core's estimate of them fits the
sheet's 15-minute budget and by REML otherwise (:mod:`ddr_explorer.core.analyses.heldout_choice`); the
Analyses tab's start page and File > Export DDR sheet's question both show it, and both read and set the
window's ``heldout_estimator`` so that the tab and the sheet run the same estimator.
"""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox

#: (value, words) of each choice, in the box's order.
ESTIMATOR_ITEMS: tuple[tuple[str, str], ...] = (
    ("auto", "Hold-out: auto (Bayesian if within 15 min, else REML)"),
    ("bayes", "Hold-out: Bayesian refits (latent logit scale)"),
    ("reml", "Hold-out: REML refits (observed 0/1 scale, about 2 min)"),
)


def window_estimator(window) -> str:
    """The window's hold-out estimator (``"auto"`` until the user picks one)."""
    return getattr(window, "heldout_estimator", "auto")


def heldout_estimator_box(current: str = "auto", on_change=None) -> QComboBox:
    """A combo box of :data:`ESTIMATOR_ITEMS` showing ``current``; ``on_change(value)`` when the user picks one."""
    box = QComboBox()
    box.setObjectName("heldout_estimator")
    for value, words in ESTIMATOR_ITEMS:
        box.addItem(words, value)
    box.setCurrentIndex(max(0, box.findData(current)))
    box.setToolTip("How the hold-out splits are fitted: Bayesian refits of the model (latent scale) or the REML "
                   "linear mixed model (observed scale, seconds per split); auto picks by the time estimate.")
    if on_change is not None:
        box.currentIndexChanged.connect(lambda _i: on_change(box.currentData()))
    return box


__all__ = ["ESTIMATOR_ITEMS", "heldout_estimator_box", "window_estimator"]
