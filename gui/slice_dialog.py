"""The slice chooser (Analysis > Slice of tasks...): a task-level column, then values or a range.

It offers core's :func:`~ddr_explorer.core.corpus.slicing.slice_choices` and returns a ``--slice`` text;
the main window reopens the corpus with it (``load_corpus(..., slice=...)``).  Nothing is computed here.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel,
                               QLineEdit, QListWidget, QPushButton, QVBoxLayout, QWidget)

from ..core.corpus.slicing import slice_choices

__all__ = ["SliceDialog"]


class SliceDialog(QDialog):
    """Choose a slice of tasks: a task-level column, then values (text) or a range (numeric).

    :meth:`slice_text` is the ``--slice`` text of the choice ("" when nothing is chosen or "Whole corpus" was
    pressed).  The choices are those of the table given (the main window passes the open corpus: to widen an
    active slice, go back to the whole corpus first).
    """

    def __init__(self, table, current: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Slice of tasks")
        self.choices = slice_choices(table)
        self.column = QComboBox()
        self.column.addItems(list(self.choices))
        self.values = QListWidget()
        self.values.setSelectionMode(QAbstractItemView.MultiSelection)
        self.lo, self.hi = QLineEdit(), QLineEdit()
        self.info = QLabel("")
        self.info.setWordWrap(True)
        form = QFormLayout()
        form.addRow("column", self.column)
        form.addRow("values", self.values)
        form.addRow("from", self.lo)
        form.addRow("to", self.hi)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.whole = False  # "Whole corpus": accept with no slice
        self.whole_button = QPushButton("Whole corpus (no slice)")
        buttons.addButton(self.whole_button, QDialogButtonBox.ResetRole)
        self.whole_button.clicked.connect(self._whole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Every fit, D-study and frontier then runs on the chosen tasks only"
                                + (f" (now: {current})." if current else ".")))
        layout.addLayout(form)
        layout.addWidget(self.info)
        layout.addWidget(buttons)
        self.column.currentTextChanged.connect(self._show_column)
        preferred = next((c for c in ("task_group", "human_minutes", "difficulty_label") if c in self.choices), None)
        if preferred:
            self.column.setCurrentText(preferred)
        self._show_column(self.column.currentText())

    def _show_column(self, col: str) -> None:
        c = self.choices.get(col)
        self.values.clear()
        numeric = c is not None and c["kind"] == "numeric"
        for w in (self.lo, self.hi):
            w.setEnabled(numeric)
        self.values.setEnabled(not numeric)
        if c is None:
            return
        if numeric:
            self.lo.setText(f"{c['min']:g}")
            self.hi.setText(f"{c['max']:g}")
            self.info.setText(f"{col}: {c['min']:g} to {c['max']:g} over {c['n_tasks']} tasks (ends included)")
        else:
            for v, n in c["values"].items():
                self.values.addItem(f"{v}  ({n} tasks)")
                self.values.item(self.values.count() - 1).setData(Qt.UserRole, v)
            more = c.get("n_values", 0) - len(c["values"])
            self.info.setText(f"{col}: {c.get('n_values', len(c['values']))} values" +
                              (f" ({more} more not listed: type them as {col}=A|B on the command line)" if more > 0
                               else ""))

    def _whole(self) -> None:
        self.whole = True
        self.accept()

    def slice_text(self) -> str:
        if self.whole:
            return ""
        col = self.column.currentText()
        c = self.choices.get(col)
        if c is None:
            return ""
        if c["kind"] == "numeric":
            lo, hi = self.lo.text().strip(), self.hi.text().strip()
            return f"{col}={lo}..{hi}" if (lo or hi) else ""
        vals = [it.data(Qt.UserRole) for it in self.values.selectedItems()]
        return f"{col}={'|'.join(vals)}" if vals else ""
