"""Every estimator on a plain G-study table, in the app (Analysis > Compare estimators on a G-study table).

Generalizability-theory users start from long tables (Brennan's p x (r:t) scores, a Rajaratnam p x (i:s)
table) and a formula, as R's gtheory and EduG take them.  :class:`ScoreTableDialog` asks for the file, the
formula (its left side is the response column) and the object of measurement; :func:`start_score_table_methods`
runs :func:`~ddr_explorer.core.estimators.score_table.score_table_methods` on the window's worker, with the
Model tab's progress and cancel, and shows the result in the Methods tab (:class:`.methods_panel.MethodsPanel`)
as the agent corpora's comparison is shown.  Core computes; this module only asks and draws.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (QCheckBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QLineEdit,
                               QPushButton, QWidget)

__all__ = ["ScoreTableDialog", "start_score_table_methods"]


class ScoreTableDialog(QDialog):
    """File, formula and object of a G-study table.

    Attributes
    ----------
    path, formula, object_edit
        The line edits; :meth:`values` reads them.
    bayes
        Whether to sample the observed-scale Bayesian LMM (about a minute with its compile).
    """

    def __init__(self, parent: QWidget | None = None, path: str = "", formula: str = ""):
        super().__init__(parent)
        self.setWindowTitle("Compare estimators on a G-study table")
        self.path = QLineEdit(path)
        self.path.setPlaceholderText("a long table: one row per observation (CSV, TSV or Parquet)")
        browse = QPushButton("Browse...")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        self.formula = QLineEdit(formula)
        self.formula.setPlaceholderText("score ~ (1|p) + (1|t) + (1|r:t) + (1|p:t)")
        self.formula.setToolTip("The left side is the response column; each (1|...) term names facet columns. "
                                "The residual is every interaction the formula leaves out.")
        self.object_edit = QLineEdit()
        self.object_edit.setPlaceholderText("default: the formula's first one-facet term")
        self.bayes = QCheckBox("Bayesian LMM too (samples: about a minute)")
        self.bayes.setChecked(True)
        form = QFormLayout(self)
        form.addRow("Table", row)
        form.addRow("Formula", self.formula)
        form.addRow("Object of measurement", self.object_edit)
        form.addRow("", self.bayes)
        buttons = QDialogButtonBox(QDialogButtonBox.Cancel)
        buttons.addButton("Compare the estimators", QDialogButtonBox.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "G-study table", "", "Tables (*.csv *.tsv *.txt *.parquet)")
        if path:
            self.path.setText(path)

    def values(self) -> tuple[str, str, str | None, bool]:
        """``(path, formula, object or None, with the Bayesian LMM)``."""
        obj = self.object_edit.text().strip() or None
        return self.path.text().strip(), self.formula.text().strip(), obj, self.bayes.isChecked()


def start_score_table_methods(window, path: str | Path, formula: str, object_of_measurement: str | None = None,
                              *, bayes: bool = True, lmm_settings=None) -> bool:
    """Run every estimator on the table at ``path`` with ``formula`` and show them in ``window``'s Methods tab.

    Returns False, with the reason in the Model tab, when the table cannot be read as a G-study table of that
    formula (no such file, no response column) or a job is running.
    """
    from ..core.estimators.design import EstimationCancelled
    from ..core.estimators.score_table import read_score_table, response_of, score_table_methods
    from ..core.model.formula import ModelSpecError
    from .workers import BackgroundTask

    mp = window.model_panel
    if window._busy():
        return False
    path = Path(path)
    response = response_of(formula)
    if not response:
        mp.message.setText("Give the formula with its response column on the left, e.g. score ~ (1|p) + (1|t).")
        return False
    table = read_score_table(path, response) if path.is_file() else None
    if table is None:
        mp.message.setText(f"Cannot compare the estimators: {path} is not a table with a column {response!r} "
                           "(CSV, TSV or Parquet, one row per observation).")
        return False
    est = ("Henderson", "REML", *(("Bayes LMM",) if bayes else ()), "Laplace", "DISCO")

    def job(progress, cancel):
        try:
            return score_table_methods(table, formula, response, object_of_measurement=object_of_measurement,
                                       estimators=est, progress=progress, cancel=cancel, lmm_settings=lmm_settings)
        except ValueError as exc:  # the table or formula: say which file
            raise ValueError(f"{path}: {exc}") from None

    def ended(text: str) -> None:
        window.fit_action.setEnabled(True)
        window.cancel_action.setEnabled(False)
        mp.finish(text)

    def done(result) -> None:
        from .methods_panel import MethodsPanel

        ended("done")
        mp.append_log(f"Estimators compared on {path.name}: " + ", ".join(result.estimators))
        window.methods_panel = MethodsPanel(result)
        window._slots["Methods"].replace(window.methods_panel)
        window.tabs.setCurrentWidget(window._slots["Methods"])
        window.methods_finished.emit(result)

    def failed(exc: BaseException) -> None:
        cancelled = isinstance(exc, EstimationCancelled)
        text = f"{type(exc).__name__}: {exc}" if not isinstance(exc, (ValueError, ModelSpecError)) else str(exc)
        ended("cancelled" if cancelled else "failed")
        mp.append_log(("Cancelled: " if cancelled else "Estimator comparison FAILED: ") + text)
        mp.message.setText(text)
        window.methods_failed.emit(text)

    mp.set_running(True)
    window.fit_action.setEnabled(False)
    window.cancel_action.setEnabled(True)
    mp.append_log(f"Comparing the estimators on {path.name} ({len(table):,} rows), formula {formula}")
    window.methods_task = BackgroundTask(job, on_done=done, on_error=failed, on_progress=mp.show_progress,
                                         with_callbacks=True, parent=window)
    window.tabs.setCurrentWidget(window._slots["Model"])  # its progress and log, as for the agent corpora
    return True
