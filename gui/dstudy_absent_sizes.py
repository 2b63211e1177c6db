"""The D-study tab's word on the sizes it has no slider for: one line per size, with core's reason.

A fit without a benchmark term (one benchmark, or a per-benchmark fit) or a scaffold term has no slider
for that size (the size cannot change the coefficient); the line under the Design sliders says why, in
core's words (:func:`~ddr_explorer.core.analyses.availability.size_unavailable_reason`), so the missing
slider does not read as a fault.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

__all__ = ["absent_sizes_note"]


def absent_sizes_note(panel, corpus_summary) -> QLabel | None:
    """Add the reasons of the sizes ``panel`` (a D-study panel) has no slider for under its sliders.

    Parameters
    ----------
    panel
        The D-study panel: its ``fields`` (the sizes with a slider), ``components``, ``state`` and
        ``design_box`` (the group box of the sliders).
    corpus_summary
        :func:`~ddr_explorer.core.inspection.inspect_corpus` of the open corpus, or None.

    Returns
    -------
    QLabel or None
        The label added (also ``panel.absent_sizes_label``), None when every size has its slider.
    """
    from ..core.analyses.availability import SIZE_FACETS, size_unavailable_reason

    reasons = []
    for size in SIZE_FACETS:
        if size in panel.fields or (size == "n_scaffolds" and panel.state.object_of_measurement == "agent"):
            continue  # an agent holds its scaffold: there is no scaffold size to vary
        why = size_unavailable_reason(size, panel.components.facets, corpus_summary)
        if why is not None:
            reasons.append(why)
    panel.absent_sizes_label = None
    if not reasons:
        return None
    label = QLabel("\n".join(reasons))
    label.setObjectName("absent_sizes")
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextSelectableByMouse)
    label.setStyleSheet("color: #8a5a00;")
    panel.design_box.layout().addWidget(label)
    panel.absent_sizes_label = label
    return label
