"""The subject-id conventions under their old module name, a re-export while ``gui/import_dialog.py``
(edited elsewhere) imports ``subjects_toml`` from here: the module is :mod:`..subject_ids.conventions`.
"""

from __future__ import annotations

from ..subject_ids.conventions import *  # noqa: F401,F403 - re-exported
from ..subject_ids.conventions import subjects_toml  # noqa: F401 - what gui/import_dialog.py imports
