"""The status bar's message and device label side by side, neither hiding the other.

``QStatusBar.showMessage`` paints its text itself, clipped where the first permanent widget starts, so a
long message ran into the device label and lost its end ("... from /home/user/corpora/terminal-be").  Here
the message is an :class:`ElidedLabel` that takes the room left of the device label (its end elided, the
whole message in its tooltip), and the device label is bounded to :data:`DEVICE_MAX_WIDTH` pixels (elided,
the whole text in its tooltip).  Every ``showMessage`` (the app's, and Qt's own status tips) still goes
through the bar: the label follows its ``messageChanged`` signal.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QStatusBar

#: The device label never takes more than this many pixels of the status bar.
DEVICE_MAX_WIDTH = 360


class ElidedLabel(QLabel):
    """A one-line label that shows as much of its text as fits, ending in "\u2026", with the whole text as tooltip.

    :meth:`full_text` is the text set; ``text()`` is what is shown (so its ``sizeHint`` never asks for more
    than the label has).
    """

    def __init__(self, text: str = "", parent=None, mode=Qt.ElideRight) -> None:
        super().__init__(parent)
        self._full, self._mode = "", mode
        self.setTextFormat(Qt.PlainText)
        # the layout gives it the room there is; it never asks for the room its whole text would take
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.set_full_text(text)

    def full_text(self) -> str:
        return self._full

    def set_full_text(self, text: str) -> None:
        self._full = text or ""
        self._elide()

    def _room(self) -> int:
        m = self.contentsMargins()
        return max(self.width() - m.left() - m.right(), 0)

    def _elide(self) -> None:
        fm = self.fontMetrics()
        room = self._room()
        shown = self._full if fm.horizontalAdvance(self._full) <= room else fm.elidedText(self._full, self._mode, room)
        super().setText(shown)
        self.setToolTip(self._full if shown != self._full else "")

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._elide()


class DeviceLabel(ElidedLabel):
    """The device label of the status bar: short words (:meth:`set_device`), the whole text in its tooltip.

    At most :data:`DEVICE_MAX_WIDTH` pixels; beyond, its end is elided, never its middle ("4 chains in
    para...cores" read as nothing).  The short words (``"device: CPU, 4 chains on 2 cores"``) fit in it.
    """

    def __init__(self, text: str = "", parent=None) -> None:
        super().__init__("", parent, mode=Qt.ElideRight)
        self._whole = text or ""
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Preferred)
        self.setMaximumWidth(DEVICE_MAX_WIDTH)
        self.set_full_text(text)

    def _room(self) -> int:
        m = self.contentsMargins()  # its own bound, not its width: its size hint follows the text shown
        return DEVICE_MAX_WIDTH - m.left() - m.right()

    def _elide(self) -> None:
        super()._elide()
        self.setToolTip(getattr(self, "_whole", ""))  # the whole words on hover, elided or not

    def set_device(self, short: str, whole: str | None = None) -> None:
        """Show ``short`` (elided at its end if it must be) and keep ``whole`` (default ``short``) as the tooltip."""
        self._whole = whole if whole is not None else short
        self.set_full_text(short)

    def setText(self, text: str) -> None:  # noqa: N802 (the QLabel call the window makes)
        self.set_device(text)


def install_status_line(bar: QStatusBar, device_text: str) -> tuple[ElidedLabel, DeviceLabel]:
    """Put the message label (stretching) and the bounded device label on ``bar``; returns both.

    Both are permanent widgets, so a temporary message never hides them; the bar's own painting of the
    message is left no room (it stops at the first permanent widget, the message label itself).
    """
    message = ElidedLabel()
    message.setObjectName("status_message")
    message.setMinimumWidth(0)
    device = DeviceLabel(device_text)
    device.setObjectName("status_device")
    bar.addPermanentWidget(message, 1)
    bar.addPermanentWidget(device, 0)
    bar.messageChanged.connect(message.set_full_text)
    return message, device


__all__ = ["DEVICE_MAX_WIDTH", "DeviceLabel", "ElidedLabel", "install_status_line"]
