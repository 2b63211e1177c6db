"""Type variance components from a paper's table and open the D-study (the app's ``ddr dstudy --components``).

SPEC: "The GUI lets the user type such values too".  The dialog
builds a :class:`~ddr_explorer.core.reliability.VarianceComponents` with
:meth:`~ddr_explorer.core.reliability.VarianceComponents.from_mapping` (one
value per term, standard deviations or variances), exactly as
:func:`~ddr_explorer.core.components_io.read_components` does for a file, and
a :class:`~ddr_explorer.core.dstudy.DStudyDesign` as ``ddr dstudy``'s options do.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.dstudy import DStudyDesign
from ..core.formatting import facet_words
from ..core.reliability import VarianceComponents, objects_for_terms, split_term
from ..core.references import cite
from .what_if_fields import CheckedDoubleSpinBox, CheckedSpinBox, count_problem, size_problem

#: Object of measurement -> its entry in the Object box (the D-study panel's words).
OBJECT_LABELS = {"model": "Model", "system": "Model-scaffold system", "agent": "Agent (model-scaffold pair)"}

#: The D-study sizes every design has, in the order of the "Design to study" box, with their defaults.
_BASE_SIZES = (("n_tasks", 50.0), ("n_scaffolds", 1.0), ("n_benchmarks", 1.0), ("n_replicates", 1.0))
#: How a refusal names each size.
_SIZE_NOUNS = {"n_tasks": "tasks", "n_scaffolds": "scaffolds", "n_benchmarks": "benchmarks",
               "n_replicates": "trials per cell"}
#: Facets sized by a base field; any other facet of the typed terms gets a size of its own (seed 003's
#: step and error_category: ``DStudyDesign.extra_facets``).  The object facets (model, agent) are not sized.
_SIZED_ELSEWHERE = {"task", "scaffold", "benchmark", "model", "agent", "replicate"}

#: Example tables: name -> (scale, {term: value}, design sizes).
PRESETS: dict[str, tuple[str, dict[str, float | None], dict[str, float]]] = {
    f"Per-benchmark model terms ({cite('hardy2026', 'Eq. 2')})": (
        "sd", dict.fromkeys(["task", "model", "scaffold", "task:model", "task:scaffold", "model:scaffold"]), {}),
    f"Pooled model terms ({cite('hardy2026', 'Eq. 6')})": (
        "sd", dict.fromkeys(["benchmark", "benchmark:task", "model", "scaffold", "benchmark:model",
                             "benchmark:scaffold", "model:scaffold", "benchmark:task:model", "benchmark:task:scaffold",
                             "benchmark:model:scaffold"]), {}),
    # Posterior means of seed 000 (Hardy et al. 2026) Table 8 (HAL pooled fit; standard deviations on the latent scale).
    f"{cite('hardy2026', 'Table 8')} (pooled, posterior means)": (
        "sd", {"benchmark": 2.45, "benchmark:task": 2.41, "model": .78, "scaffold": .79, "benchmark:model": .52,
               "benchmark:scaffold": .69, "model:scaffold": .36, "benchmark:task:model": .88,
               "benchmark:task:scaffold": 1.03, "benchmark:model:scaffold": .55},
        {"n_tasks": 50, "n_scaffolds": 1, "n_benchmarks": 9}),
    # Seed 003 (DDR paper 2026) Eq. 1 (the ddr preset): agent, task, step, error category and their two-way interactions.  The
    # seed reports only sigma2_a and sigma2_a:t (Table 1, as % of total variance), not the whole set: blank.
    f"Agent terms ({cite('ddr2026', 'Eq. 1')})": (
        "variance", dict.fromkeys(["agent", "task", "step", "error_category", "task:agent", "agent:step",
                                   "agent:error_category", "task:step", "task:error_category",
                                   "error_category:step"]), {}),
}


class ComponentsEntryDialog(QDialog):
    """A table of terms and values, a scale toggle and the design to study.

    After ``exec()`` returns ``QDialog.Accepted``, :meth:`components` and
    :meth:`design` give what the user typed; both raise ``ValueError`` (with
    the row and column) on invalid input, and :meth:`accept` refuses to close
    until the input is valid.
    """

    def __init__(self, parent: QWidget | None = None, rows: dict[str, float] | None = None, scale: str = "sd"):
        super().__init__(parent)
        self.setWindowTitle("D-study from typed variance components")
        self.resize(560, 640)

        intro = QLabel("Type variance components as a paper reports them: one row per term, facets joined by "
                       "':' (e.g. <i>benchmark:task:model</i>). Leave the residual blank for the logistic "
                       "\u03c0\u00b2/3 \u2248 3.29.")
        intro.setWordWrap(True)
        self.preset_box = QComboBox()
        self.preset_box.addItem("Fill with...", None)
        for name in PRESETS:
            self.preset_box.addItem(name, name)
        self.preset_box.currentIndexChanged.connect(self._on_preset_chosen)

        self.table = QTableWidget(0, 2)
        self.table.setObjectName("components_entry_table")
        self.table.setHorizontalHeaderLabels(["term", "value"])
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeToContents)
        add = QPushButton("Add row")
        add.clicked.connect(lambda: self.add_row("", None))
        remove = QPushButton("Remove row")
        remove.clicked.connect(self._on_remove_row)
        load = QPushButton("Load file...")
        load.setToolTip("Read a JSON or CSV components file (the format of ddr dstudy --components)")
        load.clicked.connect(self._on_load_file)
        buttons_row = QHBoxLayout()
        for b in (add, remove, load):
            buttons_row.addWidget(b)
        buttons_row.addStretch(1)

        self.sd_button = QRadioButton("standard deviations \u03c3")
        self.var_button = QRadioButton("variances \u03c3\u00b2")
        self.scale_group = QButtonGroup(self)
        self.scale_group.addButton(self.sd_button)
        self.scale_group.addButton(self.var_button)
        (self.sd_button if scale == "sd" else self.var_button).setChecked(True)
        scale_row = QHBoxLayout()
        scale_row.addWidget(QLabel("Values are"))
        scale_row.addWidget(self.sd_button)
        scale_row.addWidget(self.var_button)
        scale_row.addStretch(1)
        self.residual_edit = QLineEdit()
        self.residual_edit.setPlaceholderText("\u03c0\u00b2/3 (logistic)")
        res_row = QHBoxLayout()
        res_row.addWidget(QLabel("Residual (same scale as the table)"))
        res_row.addWidget(self.residual_edit, 1)

        box = QGroupBox("Design to study")
        form = QFormLayout(box)
        self.design_form = form
        # the rows follow the typed terms (_update_design_rows): their facets, object and words
        self.size_spins: dict[str, QDoubleSpinBox] = {}
        for field, value in _BASE_SIZES:
            form.addRow(field, self._size_spin(field, value))
        #: Sizes of further facets of the typed terms (seed 003's steps and error categories).
        self.facet_spins: dict[str, QDoubleSpinBox] = {}
        self.models_spin = CheckedSpinBox(lambda v: count_problem(v, "models compared"))
        self.models_spin.refused.connect(self._refused)
        self.models_spin.setRange(1, 100000)
        self.models_spin.setValue(2)
        form.addRow("Models compared", self.models_spin)
        self.price_spin = QDoubleSpinBox()
        self.price_spin.setRange(0, 1e6)
        self.price_spin.setDecimals(4)
        self.price_spin.setPrefix("$")
        form.addRow("Price per trial", self.price_spin)
        self.object_box = QComboBox()
        self.object_box.setObjectName("object_box")
        self.object_box.currentIndexChanged.connect(lambda _i: self._update_words())
        form.addRow("Object", self.object_box)
        self.claim_box = QComboBox()
        self.claim_box.addItem("Ranking (E\u03c1\u00b2)", "relative")
        self.claim_box.addItem("Thresholds (\u03a6)", "absolute")
        form.addRow("Claim", self.claim_box)

        self.message = QLabel("")
        self.message.setObjectName("message")
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #a40000;")
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.buttons.button(QDialogButtonBox.Ok).setText("Open D-study")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.preset_box)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons_row)
        layout.addLayout(scale_row)
        layout.addLayout(res_row)
        layout.addWidget(box)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)

        for term, value in (rows or {}).items():
            self.add_row(term, value)
        if not rows:
            self.add_row("", None)
        self.table.itemChanged.connect(lambda item: self._update_design_rows() if item.column() == 0 else None)
        self.table.model().rowsRemoved.connect(lambda *_: self._update_design_rows())
        self._update_design_rows()

    # -- rows ------------------------------------------------------------------------------
    def add_row(self, term: str, value: float | None) -> int:
        """Append a row; returns its index."""
        r = self.table.rowCount()
        self.table.insertRow(r)
        self.table.setItem(r, 0, QTableWidgetItem(term))
        v = QTableWidgetItem("" if value is None else repr(float(value)))
        v.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
        self.table.setItem(r, 1, v)
        return r

    def set_rows(self, rows: dict[str, float | None], scale: str | None = None) -> None:
        """Replace the table with ``rows`` (term -> value or None) and optionally set the scale."""
        self.table.setRowCount(0)
        self.table.blockSignals(True)
        try:
            for term, value in rows.items():
                self.add_row(term, value)
        finally:
            self.table.blockSignals(False)
        self._update_design_rows()
        if scale is not None:
            (self.sd_button if scale == "sd" else self.var_button).setChecked(True)

    def _on_remove_row(self) -> None:
        r = self.table.currentRow()
        self.table.removeRow(r if r >= 0 else self.table.rowCount() - 1)

    def _on_preset_chosen(self, _index: int) -> None:
        name = self.preset_box.currentData()
        if name is None:
            return
        scale, rows, sizes = PRESETS[name]
        self.set_rows(rows, scale)
        for field, value in sizes.items():
            self.size_spins[field].setValue(value)
        self.preset_box.setCurrentIndex(0)
        if any(v is None for v in rows.values()):
            self.message.setStyleSheet("color: #333333;")
            self.message.setText(f"{name}: the terms only; type each value"
                                 + (f" ({cite('ddr2026')} reports only σ² of agent and task:agent, as % of the "
                                    "total, in its Table 1)." if "agent" in rows else "."))

    def _on_load_file(self) -> None:
        from ..core.components_io import ComponentsFileError, read_components

        path, _ = QFileDialog.getOpenFileName(self, "Components file", "", "Components (*.json *.csv *.tsv);;All (*)")
        if not path:
            return
        try:
            c = read_components(Path(path))
        except ComponentsFileError as exc:
            self.message.setText(str(exc))
            return
        # A file of posterior draws is shown by its medians: the table holds one value per term.
        self.set_rows({t: float(np.median(v)) for t, v in c.draws.items()}, "variance")
        res = float(np.median(c.residual))
        self.residual_edit.setText("" if math.isclose(res, math.pi**2 / 3) else repr(res))
        note = f"Read {Path(path).name}" + (f" ({c.n_draws:,} draws shown by their medians)." if c.n_draws > 1 else ".")
        self.message.setStyleSheet("color: #333333;")
        self.message.setText(note)

    # -- the design box follows the typed terms ---------------------------------------------
    def _checked_size(self, noun: str) -> CheckedDoubleSpinBox:
        """A size box: any number may be typed, one out of range is refused on the message line."""
        s = CheckedDoubleSpinBox(lambda v: size_problem(v, noun))
        s.refused.connect(self._refused)
        return s

    def _refused(self, text: str) -> None:
        self.message.setStyleSheet("color: #a40000;")
        self.message.setText(text)

    def _size_spin(self, field: str, value: float) -> QDoubleSpinBox:
        s = self._checked_size(_SIZE_NOUNS.get(field, field))
        s.setObjectName(f"size_{field}")
        s.setRange(1, 1e6)
        s.setDecimals(1)
        s.setValue(value)
        self.size_spins[field] = s
        return s

    def typed_terms(self) -> list[str]:
        """The terms typed so far (blank rows skipped; values not checked)."""
        out = []
        for r in range(self.table.rowCount()):
            item = self.table.item(r, 0)
            term = item.text().strip() if item else ""
            if term:
                out.append(term)
        return out

    def _typed_facets(self) -> set[str]:
        out: set[str] = set()
        for t in self.typed_terms():
            try:
                out.update(split_term(t))
            except ValueError:  # a half-typed term: components() names it on OK
                continue
        return out

    def _update_design_rows(self) -> None:
        """Offer the objects the typed terms support (core.reliability.objects_for_terms) and the sizes their
        facets have, in the app's words (core.formatting.facet_words); a blank table offers the model ones."""
        facets = self._typed_facets()
        objects = objects_for_terms(facets) if facets else ("model", "system")
        box = self.object_box
        if [box.itemData(i) for i in range(box.count())] != list(objects):
            current = box.currentData()
            box.blockSignals(True)
            box.clear()
            for obj in objects:
                box.addItem(OBJECT_LABELS[obj], obj)
            box.setCurrentIndex(max(0, box.findData(current)))
            box.blockSignals(False)
        typed_order = [f for t in self.typed_terms() for f in t.split(":")]
        for f in sorted(facets - _SIZED_ELSEWHERE - set(self.facet_spins), key=typed_order.index):
            spin = self._checked_size(f"{f} size")
            spin.setObjectName(f"size_{f}")
            spin.setRange(1, 1e6)
            spin.setDecimals(1)
            spin.setValue(1.0)
            self.design_form.insertRow(self.design_form.rowCount() - 4, f, spin)  # above models, price, object, claim
            self.facet_spins[f] = spin
        self._update_words()

    def _update_words(self) -> None:
        facets = self._typed_facets()
        obj = self.object_box.currentData() or "model"
        self.words = facet_words(obj, facets)
        form = self.design_form
        shown = {"n_tasks": True, "n_replicates": True,
                 # an agent is a model-scaffold pair: no scaffold size; a blank table shows every size
                 "n_scaffolds": not facets or ("scaffold" in facets and obj != "agent"),
                 "n_benchmarks": not facets or "benchmark" in facets}
        for field, spin in self.size_spins.items():
            form.setRowVisible(spin, shown[field])
            form.labelForField(spin).setText(self.words.label(field) if field != "n_replicates" else
                                             f"Replicates ({self.words.axis(field)})")
        for f, spin in self.facet_spins.items():
            form.setRowVisible(spin, f in facets)
            form.labelForField(spin).setText(self.words.label(f))
        form.labelForField(self.models_spin).setText(self.words.compared)

    # -- results ---------------------------------------------------------------------------
    @property
    def scale(self) -> str:
        return "sd" if self.sd_button.isChecked() else "variance"

    def values(self) -> dict[str, float]:
        """Term -> value as typed (blank rows skipped); ValueError names the row."""
        out: dict[str, float] = {}
        for r in range(self.table.rowCount()):
            term_item, value_item = self.table.item(r, 0), self.table.item(r, 1)
            term = term_item.text().strip() if term_item else ""
            text = value_item.text().strip() if value_item else ""
            if not term and not text:
                continue
            if not term:
                raise ValueError(f"row {r + 1}: the value {text!r} has no term; type a term such as 'model'")
            if not text:
                raise ValueError(f"row {r + 1} ({term}): no value; type a number or remove the row")
            try:
                out[term] = float(text)
            except ValueError:
                raise ValueError(f"row {r + 1} ({term}), column value: {text!r} is not a number") from None
        if not out:
            raise ValueError("no components: type at least one term and value (e.g. model, 0.78)")
        return out

    def residual(self) -> float | None:
        text = self.residual_edit.text().strip()
        if not text:
            return None
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"residual: {text!r} is not a number; leave it blank for \u03c0\u00b2/3") from None

    def components(self) -> VarianceComponents:
        """The typed components (one draw per term), as ``read_components`` builds them from a file.

        The residual is on the same scale as the table (a standard deviation
        when the values are standard deviations), as in a components JSON file.
        """
        return VarianceComponents.from_mapping(self.values(), residual=self.residual(), scale=self.scale,
                                               source="typed-in components")

    def design(self) -> DStudyDesign:
        """The design typed in the "Design to study" box."""
        facets = self._typed_facets()
        sizes = {f: float(s.value()) for f, s in self.size_spins.items()}
        if facets and "scaffold" not in facets:  # no scaffold term (an agent fit): each agent or model runs once
            sizes["n_scaffolds"] = 1.0
        if facets and "benchmark" not in facets:
            sizes["n_benchmarks"] = 1.0
        extra = {f: float(s.value()) for f, s in self.facet_spins.items() if f in facets}
        return DStudyDesign(**sizes, n_models=int(self.models_spin.value()), price_per_trial=float(self.price_spin.value()),
                            object_of_measurement=self.object_box.currentData(), claim=self.claim_box.currentData(),
                            extra_facets=extra)

    def accept(self) -> None:
        try:
            c = self.components()
            self.design()
            if self.object_box.currentData() == "system" and "scaffold" not in c.facets:
                raise ValueError("a model-scaffold system needs scaffold terms; add them or choose Model")
        except ValueError as exc:
            self.message.setStyleSheet("color: #a40000;")
            self.message.setText(str(exc))
            return
        super().accept()
