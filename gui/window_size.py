"""The main window's first size, from the screen it opens on (later starts restore the size the user left).

The old fixed 1100 x 720 cut the variance table's share column, overprinted a 29-model heatmap's names
and hid the D-study's price table below the fold.  The window now takes most of the screen, at least
1280 x 800 where the screen has room (every view is tested to fit there: tests/gui/test_layout_fits.py)
and at most 1680 x 1050, beyond which lines of text only get longer.
"""

from __future__ import annotations

from PySide6.QtCore import QSize

#: The size every view is laid out to fit; smaller only on a smaller screen.
MIN_SIZE = QSize(1280, 800)
#: Beyond this the views gain nothing.
MAX_SIZE = QSize(1680, 1050)
#: Share of the screen's available area taken between the two.
SCREEN_SHARE = 0.9


def default_window_size(available: QSize) -> QSize:
    """The first size of the main window on a screen whose available area is ``available``."""
    def one(avail: int, low: int, high: int) -> int:
        return max(1, min(max(int(avail * SCREEN_SHARE), low), high, avail))

    return QSize(one(available.width(), MIN_SIZE.width(), MAX_SIZE.width()),
                 one(available.height(), MIN_SIZE.height(), MAX_SIZE.height()))


def apply_default_size(window) -> QSize:
    """Resize ``window`` to :func:`default_window_size` of its screen (the primary screen before it is shown)."""
    from PySide6.QtGui import QGuiApplication

    screen = window.screen() or QGuiApplication.primaryScreen()
    size = default_window_size(screen.availableGeometry().size()) if screen is not None else MIN_SIZE
    window.resize(size)
    return size


__all__ = ["MAX_SIZE", "MIN_SIZE", "apply_default_size", "default_window_size"]
