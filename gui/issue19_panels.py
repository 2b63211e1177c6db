"""A re-export of the analysis panels under their old module name, kept while ``gui/main_window.py``
(edited elsewhere) still imports it from here; import from the modules named after each analysis instead.
"""

from __future__ import annotations

from .failure_modes_panel import FailureModesPanel
from .frontier_panel import FrontierPanel
from .slice_dialog import SliceDialog

__all__ = ["FailureModesPanel", "FrontierPanel", "SliceDialog"]
