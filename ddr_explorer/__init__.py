"""DDR Explorer: Deployment Decision Reliability for AI agent evaluations.

The statistics, data and report logic live in :mod:`ddr_explorer.core` (the
repository's ``core/`` folder) and never import Qt; the desktop app lives in
:mod:`ddr_explorer.gui` (``gui/``) and only draws what core computes.
"""

from importlib.metadata import PackageNotFoundError, version as _version

try:
    __version__ = _version("ddr-explorer")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

APP_NAME = "DDR Explorer"
