"""The D-study's typed fields (target, budget, models compared) refuse what is out of range, saying why at the field.

A Qt spin box validates each keystroke against its range: a keystroke that cannot lead to a number in
range is dropped.  Typing ``1.2`` into a target box bounded by 0.999 dropped the ``1`` and kept ``.2``
(the target became 0.200 with no word), and typing ``85`` dropped both digits (nothing happened).  Here
any number can be typed; when it is committed (Enter or focus out), a number out of range is refused:
the box goes back to the value it held, and a red line under the box says what was refused and what the
field takes.  Nothing is guessed: ``85`` in the target box is refused with the hint that 85% is 0.85, not
read as 0.85.  The next value the field accepts clears the line.

The rules (the range and its words) are plain functions of the typed number, :func:`target_problem`,
:func:`budget_problem`, :func:`count_problem` and :func:`size_problem`, so the words are tested without a
widget.  The D-study tab shows a refusal on a line under its box (:func:`field_note`); the typed-components
dialog on its message line.
"""

from __future__ import annotations

import math
import re
from typing import Callable

from PySide6.QtCore import Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QDoubleSpinBox, QFormLayout, QLabel, QSpinBox

from ..core.formatting import fmt_n

#: A number as someone types it: sign, digits with thousands commas, a decimal part, an exponent.
_NUMBER = re.compile(r"^[+-]?(\d[\d,]*)?(\.\d*)?([eE][+-]?\d+)?$")

#: Words of a refusal: the field's value -> None (accepted) or why it is refused.
Rule = Callable[[float], "str | None"]


def parse_typed(text: str, prefix: str = "", suffix: str = "") -> float | None:
    """The number in ``text`` (the box's prefix and suffix, spaces, ``$`` and thousands commas allowed), or None."""
    t = text.strip()
    if prefix and t.startswith(prefix.strip()):
        t = t[len(prefix.strip()):]
    if suffix and t.endswith(suffix.strip()):
        t = t[: len(t) - len(suffix.strip())]
    t = t.strip().lstrip("$").replace(" ", "")
    if not t or not _NUMBER.match(t) or not any(c.isdigit() for c in t):
        return None
    try:
        value = float(t.replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _typed(value: float) -> str:
    return f"{value:g}"


def target_problem(value: float, low: float = 0.001, high: float = 0.999) -> str | None:
    """Why a typed reliability target is refused (None: it is a coefficient strictly between 0 and 1)."""
    if low <= value <= high:
        return None
    hint = ""
    if 10.0 <= value < 100.0:  # likely a percentage: say how to type it, never read it as one (1.2 is a typo)
        hint = f" (for {_typed(value)}% type {_typed(value / 100.0)})"
    return (f"Target {_typed(value)} refused: a reliability target lies between 0 and 1, "
            f"from {low:g} to {high:g}{hint}; the target stays as it was.")


def budget_problem(value: float, high: float = 1e9) -> str | None:
    """Why a typed budget is refused (None: a positive number of USD, or 0 for no budget)."""
    if value < 0:
        return (f"Budget {_typed(value)} refused: a budget is a positive number of USD (0 for no budget); "
                "the budget stays as it was.")
    if value > high:
        return (f"Budget {_typed(value)} refused: at most ${fmt_n(high)}; the budget stays as it was.")
    return None


def count_problem(value: float, noun: str, low: int = 1, high: int = 100_000) -> str | None:
    """Why a typed count (models compared, a facet's size) is refused (None: a whole number in range)."""
    if value != int(value):
        return (f"{noun.capitalize()} {_typed(value)} refused: a whole number from {fmt_n(low)} to {fmt_n(high)}; "
                "the value stays as it was.")
    if not low <= value <= high:
        return (f"{noun.capitalize()} {_typed(value)} refused: {noun} runs from {fmt_n(low)} to {fmt_n(high)}; "
                "the value stays as it was.")
    return None


def size_problem(value: float, noun: str, low: float = 1.0, high: float = 1e6) -> str | None:
    """Why a typed size of a facet (tasks, scaffolds, ...) is refused (None: from ``low`` to ``high``)."""
    if low <= value <= high:
        return None
    return (f"{noun.capitalize()} {_typed(value)} refused: a size runs from {low:g} to {fmt_n(high)}; "
            "the size stays as it was.")


class _Checked:
    """What both checked boxes share: any number may be typed; the rule judges it when it is committed.

    The subclasses declare ``refused = Signal(str)`` (the words of a refusal): a signal needs a QObject class.
    """

    def _setup_check(self, rule: Rule) -> None:
        self._rule = rule

    def validate(self, text: str, pos: int):  # noqa: D102 - Qt's
        state, text, pos = super().validate(text, pos)
        if state == QValidator.Invalid and (parse_typed(text, self.prefix(), self.suffix()) is not None
                                            or text.strip() in ("-", "+", "$", "$-")):
            # out of range, or spelled with "$" or thousands commas: let it be typed; fixup judges it on commit
            state = QValidator.Intermediate
        return state, text, pos

    def fixup(self, text: str) -> str:  # noqa: D102 - Qt's
        value = parse_typed(text, self.prefix(), self.suffix())
        if value is None:
            return text
        why = self._rule(value)
        if why is not None or not self.minimum() <= value <= self.maximum():
            # the box goes back to its value (Qt's CorrectToPreviousValue); the line under it says why
            self.refused.emit(why or f"{_typed(value)} refused: out of range.")
            return text
        return self.textFromValue(value)  # "$5,000" -> "5000.00": the box reads it


class CheckedDoubleSpinBox(_Checked, QDoubleSpinBox):
    """A ``QDoubleSpinBox`` that lets any number be typed and refuses, with words, what ``rule`` refuses."""

    refused = Signal(str)

    def __init__(self, rule: Rule, parent=None) -> None:
        super().__init__(parent)
        self._setup_check(rule)


class CheckedSpinBox(_Checked, QSpinBox):
    """A ``QSpinBox`` that lets any number be typed and refuses, with words, what ``rule`` refuses."""

    refused = Signal(str)

    def __init__(self, rule: Rule, parent=None) -> None:
        super().__init__(parent)
        self._setup_check(rule)

    def validate(self, text: str, pos: int):  # noqa: D102 - Qt's
        state, text, pos = super().validate(text, pos)
        if state == QValidator.Invalid and "." in text and parse_typed(text) is not None:
            state = QValidator.Intermediate  # "2.5" typed: refused on commit as not whole, not dropped key by key
        return state, text, pos


def field_note(form: QFormLayout, spin: _Checked, name: str) -> QLabel:
    """Insert a hidden red line under ``spin``'s row of ``form`` that shows its refusals; returns the label.

    The line shows the last refusal and hides again when the field commits a value in range.
    """
    note = QLabel("")
    note.setObjectName(f"note_{name}")
    note.setWordWrap(True)
    note.setStyleSheet("color: #a40000;")
    note.hide()
    row, _role = form.getWidgetPosition(spin)
    form.insertRow(row + 1, note)  # right under the box's row

    def refused(text: str) -> None:
        note.setText(text)
        note.show()

    spin.refused.connect(refused)
    spin.valueChanged.connect(lambda _v: note.hide())  # a value in range went in
    return note


__all__ = ["CheckedDoubleSpinBox", "CheckedSpinBox", "budget_problem", "count_problem", "field_note",
           "parse_typed", "size_problem", "target_problem"]
