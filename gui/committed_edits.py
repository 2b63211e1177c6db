"""Spin boxes and line edits that hand the state a value only when the user has finished typing it.

The panels follow one loop: a widget writes the analysis state, the state tells every view what
changed, and the views write the state's values back into their widgets.  With Qt's default
keyboard tracking a spin box reports every keystroke, so typing ``0.875`` into a three-decimal box
reported ``0.8``, the state wrote ``0.800`` back into the box while the user was still typing, and
the next digits no longer fitted ("0.8007").  Here the typed value is committed on Enter or when the
box loses focus (arrows and the mouse wheel still commit at once), and a write-back never replaces
text the user is editing or a value the widget already shows.
"""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractSpinBox, QDoubleSpinBox, QLineEdit


def commit_on_finish(*spins: QAbstractSpinBox) -> None:
    """Make each spin box report a typed value once, when the typing ends (Enter or focus out)."""
    for spin in spins:
        spin.setKeyboardTracking(False)


def being_edited(widget: QAbstractSpinBox | QLineEdit) -> bool:
    """True while the widget has the focus and holds typed text not yet committed."""
    if not widget.hasFocus():
        return False
    if isinstance(widget, QLineEdit):
        return widget.isModified()
    # a spin box: its text differs from what its committed value prints as
    return widget.text() != widget.textFromValue(widget.value())


def write_back(spin: QAbstractSpinBox, value: float) -> bool:
    """Show ``value`` in ``spin`` unless the user is typing in it or it shows that value already.

    Returns True when the widget was written.
    """
    if being_edited(spin):
        return False
    if isinstance(spin, QDoubleSpinBox):
        same = round(float(spin.value()), spin.decimals()) == round(float(value), spin.decimals())
    else:
        same = int(spin.value()) == int(value)
    if same:
        return False  # setValue would re-format the text and move the cursor for nothing
    spin.setValue(value)
    return True


def write_text_back(edit: QLineEdit, text: str) -> bool:
    """Show ``text`` in ``edit`` unless the user is typing in it or it shows that text already."""
    if being_edited(edit) or edit.text() == text:
        return False
    edit.setText(text)
    edit.setCursorPosition(0)  # a long formula shows its start, not its end
    edit.setToolTip(text)
    return True


__all__ = ["being_edited", "commit_on_finish", "write_back", "write_text_back"]
