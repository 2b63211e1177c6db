"""Open a table whose columns are not the canonical ones: say which column is which.

:class:`ColumnMappingDialog` shows the first rows of the file, a role chooser above
each column pre-filled with the best guess (:func:`~ddr_explorer.core.corpus.column_guess.guess_roles`:
names and synonyms, then value types), fields for a benchmark and a scaffold that
hold for every row, and what the mapping still lacks, checked as the user
chooses.  OK gives a ``--columns`` mapping (:meth:`mapping_text`) that the
window passes to ``load_corpus``; the mapping is remembered per file shape
(the set of column names) in the app's settings, and saved with the analysis.

:class:`IdMappingDialog` shows how each subject id of a py-irt corpus was split
(id -> model, scaffold, and the rule or convention that matched); the user fixes
rows and saves them as an alias file (``[subjects]`` entries, the format of
``core/corpus/importers/pyirt.py``) to open the file with.  When some ids name no
scaffold it also offers the choice ``ddr ... --unsplit-ids`` makes
(:mod:`~ddr_explorer.core.corpus.subject_ids.unsplit`): every id under one scaffold,
or those ids left out (shaded grey) and the other ids' scaffolds fitted.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.corpus.column_guess import ROLE_CHOICES, guess_roles, mapping_problems, preview, shape_key, to_mapping
from ..core.corpus.columns import parse_columns

_SETTINGS_GROUP = "import/mappings"


def remembered_mapping(columns) -> str | None:
    """The mapping chosen before for a file with these columns, if any."""
    value = QSettings().value(f"{_SETTINGS_GROUP}/{shape_key(columns)}")
    return str(value) if value else None


def remember_mapping(columns, text: str) -> None:
    QSettings().setValue(f"{_SETTINGS_GROUP}/{shape_key(columns)}", text)


class ColumnMappingDialog(QDialog):
    """Preview, one role chooser per column, constants, live validation."""

    def __init__(self, path: str | Path, parent: QWidget | None = None, rows: int = 20, message: str | None = None):
        super().__init__(parent)
        self.path = Path(path)
        self.setWindowTitle(f"Which column is which? \u2014 {self.path.name}")
        self.resize(1100, 560)
        self.df = preview(self.path, rows)
        self.columns = [str(c) for c in self.df.columns]

        intro = QLabel(message or "The file's columns are not the ones DDR Explorer expects. Choose the role of each "
                       "column (the guesses are filled in), or type a benchmark or scaffold that holds for every row.")
        intro.setWordWrap(True)
        self.table = QTableWidget(len(self.df) + 1, len(self.columns))
        self.table.setObjectName("import_preview")
        self.table.setHorizontalHeaderLabels(self.columns)
        self.table.setVerticalHeaderLabels(["role"] + [str(i + 1) for i in range(len(self.df))])
        self.choosers: dict[str, QComboBox] = {}
        for j, col in enumerate(self.columns):
            box = QComboBox()
            box.addItems([r or "\u2014 not used" for r in ROLE_CHOICES])
            box.currentIndexChanged.connect(self._check)
            self.choosers[col] = box
            self.table.setCellWidget(0, j, box)
            for i, v in enumerate(self.df[col].tolist()):
                item = QTableWidgetItem("" if _missing(v) else str(v))
                item.setFlags(item.flags() & ~Qt.ItemIsEditable)
                self.table.setItem(i + 1, j, item)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.Interactive)
        self.table.resizeColumnsToContents()
        for j in range(len(self.columns)):
            self.table.setColumnWidth(j, max(150, min(self.table.columnWidth(j), 320)))

        self.benchmark_edit = QLineEdit()
        self.benchmark_edit.setPlaceholderText("e.g. swe-bench-verified (when no column names it)")
        self.scaffold_edit = QLineEdit()
        self.scaffold_edit.setPlaceholderText("e.g. the leaderboard's harness (when no column names it)")
        for edit in (self.benchmark_edit, self.scaffold_edit):
            edit.textChanged.connect(self._check)
        form = QFormLayout()
        form.addRow("Benchmark of every row", self.benchmark_edit)
        form.addRow("Scaffold of every row", self.scaffold_edit)
        self.problems = QLabel()
        self.problems.setObjectName("import_problems")
        self.problems.setWordWrap(True)
        self.mapping_label = QLabel()
        self.mapping_label.setObjectName("import_mapping")
        self.mapping_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.mapping_label.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        # The list of what is still needed grows and shrinks as the user chooses: it sits beside the fields,
        # in a box of fixed height (the longest list fits), so the fields never move under the cursor.
        self.problems.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        problems_box = QScrollArea()
        problems_box.setObjectName("import_problems_box")
        problems_box.setWidget(self.problems)
        problems_box.setWidgetResizable(True)
        problems_box.setFrameShape(QFrame.NoFrame)
        problems_box.setFixedHeight(7 * self.fontMetrics().lineSpacing() + 8)
        fields = QWidget()
        fields.setLayout(form)
        row = QHBoxLayout()
        row.addWidget(fields, 1, Qt.AlignTop)
        row.addWidget(problems_box, 1)

        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addWidget(self.table, 1)
        lay.addLayout(row)
        lay.addWidget(self.mapping_label)
        lay.addWidget(self.buttons)

        remembered = remembered_mapping(self.columns)
        if remembered:
            self.set_mapping(remembered)
        else:
            self.set_roles(guess_roles(self.df))
        self._check()

    # -- state ---------------------------------------------------------------------------------
    def roles(self) -> dict[str, str]:
        return {c: ROLE_CHOICES[b.currentIndex()] for c, b in self.choosers.items()}

    def constants(self) -> dict[str, str]:
        return {"benchmark": self.benchmark_edit.text().strip(), "scaffold": self.scaffold_edit.text().strip()}

    def set_roles(self, roles: dict[str, str]) -> None:
        for col, role in roles.items():
            if col in self.choosers:
                self.choosers[col].setCurrentIndex(ROLE_CHOICES.index(role) if role in ROLE_CHOICES else 0)

    def set_mapping(self, text: str) -> None:
        """Fill the choosers and fields from ``--columns`` text."""
        m = parse_columns(text)
        roles = {c: "" for c in self.columns}
        for role, col in m.columns.items():
            if col in roles:
                roles[col] = "verifier" if role.startswith("verifier.") else role
        self.set_roles(roles)
        self.benchmark_edit.setText(m.constants.get("benchmark", ""))
        self.scaffold_edit.setText(m.constants.get("scaffold", ""))

    def mapping_text(self) -> str:
        """The ``--columns`` text of the current choices (constants as ``role==value``)."""
        return to_mapping(self.roles(), self.constants()).to_text()

    def problem_list(self) -> list[str]:
        return mapping_problems(self.roles(), self.constants(), self.df)

    def _check(self) -> None:
        problems = self.problem_list()
        ok = not problems
        self.buttons.button(QDialogButtonBox.Ok).setEnabled(ok)
        self.problems.setText("Ready: every required role is given." if ok else
                              "Still needed:<ul>" + "".join(f"<li>{p}</li>" for p in problems) + "</ul>")
        self.problems.setStyleSheet("color: #1a7f37;" if ok else "color: #b35900;")
        self.mapping_label.setText(f"<small>As a command-line option: <code>--columns \"{self.mapping_text()}\""
                                   "</code></small>")
        used = self.roles()
        for j, col in enumerate(self.columns):
            shade = QColor("#eef6ee") if used[col] else QColor("#ffffff")
            for i in range(1, self.table.rowCount()):
                item = self.table.item(i, j)
                if item is not None:
                    item.setBackground(shade)

    def accept(self) -> None:
        if self.problem_list():
            return
        remember_mapping(self.columns, self.mapping_text())
        super().accept()


def _missing(v) -> bool:
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


class IdMappingDialog(QDialog):
    """Subject id -> model, scaffold and the rule that matched; edit rows, save as an alias file."""

    COLUMNS = ("subject id", "model", "scaffold", "mapped by", "rule")

    def __init__(self, corpus, parent: QWidget | None = None):
        super().__init__(parent)
        self.corpus = corpus
        subjects = (corpus.provenance or {}).get("subjects") or {}
        if not subjects:
            raise ValueError("this corpus has no subject ids to map (only py-irt files have them)")
        self.setWindowTitle(f"Subject ids \u2014 {corpus.name}")
        self.resize(1000, 560)
        m = corpus.provenance.get("id_mapping") or {}
        summary = (f"{m.get('mapped', 0)} of {m.get('ids', len(subjects))} ids mapped by rules "
                   f"({m.get('share_mapped', 0):.0%}): {m.get('split', 0)} into a model and a scaffold, "
                   f"{m.get('model_only', 0)} to a model only, {m.get('no_rule', 0)} by no rule (shaded)."
                   if m else f"{len(subjects)} subject ids.")
        pooled = corpus.provenance.get("scaffolds_not_separated")
        left_out = corpus.provenance.get("unsplit_ids_left_out") or {}
        if pooled:  # core/corpus/subject_ids/unsplit.py: "unknown" is never a scaffold level
            summary += (f" {pooled['not_split']} ids name no scaffold, so scaffolds are not separated and fits "
                        "have no scaffold terms: give those rows their scaffold, or leave them out (below).")
        elif left_out:
            summary += (f" {len(left_out['unsplit'])} ids name no scaffold and are left out (grey rows): "
                        "give those rows their scaffold to keep them.")
        merges = corpus.provenance.get("model_merges") or []
        if merges:
            summary += (f" {sum(len(x['spellings']) for x in merges)} model spellings were merged into "
                        f"{len(merges)} models (ddr inspect lists them).")
        intro = QLabel(summary + " Edit a model or scaffold to fix a row, then save the rows as an alias file "
                       "and open the corpus with it.")
        intro.setWordWrap(True)
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("filter ids")
        self.filter_edit.textChanged.connect(self._filter)
        self.table = QTableWidget(len(subjects), len(self.COLUMNS))
        self.table.setObjectName("id_mapping")
        self.table.setHorizontalHeaderLabels(self.COLUMNS)
        self.original: dict[str, tuple[str, str]] = {}
        for i, (sid, s) in enumerate(sorted(subjects.items())):
            self.original[sid] = (str(s["model"]), str(s["scaffold"]))
            rule = str(s.get("rule", ""))
            short = rule.split(" '", 1)[0].split(": ", 1)[-1]  # "pattern 3" (the regex goes to the tooltip)
            values = (sid, s["model"], s["scaffold"], s.get("mapped_by") or "no rule (fallback)", short)
            for j, v in enumerate(values):
                item = QTableWidgetItem(str(v))
                if j == 4:
                    item.setToolTip(rule)
                if j not in (1, 2):
                    item.setFlags(item.flags() & ~Qt.ItemIsEditable)
                if not s.get("mapped_by") and "mapped_by" in s:
                    item.setBackground(QColor("#fff4e0"))
                if sid in set(left_out.get("unsplit", ())):
                    item.setBackground(QColor("#e4e4e4"))
                    item.setToolTip("left out: the id names no scaffold (--unsplit-ids drop)")
                self.table.setItem(i, j, item)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.Interactive)
        self.table.resizeColumnsToContents()
        for j, most in ((0, 340), (1, 260), (2, 200), (3, 220)):
            self.table.setColumnWidth(j, min(self.table.columnWidth(j), most))
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.itemChanged.connect(self._edited)
        self.status = QLabel()
        buttons = QDialogButtonBox(QDialogButtonBox.Save | QDialogButtonBox.Close)
        buttons.button(QDialogButtonBox.Save).setText("Save as alias file...")
        buttons.accepted.connect(self._on_save)
        buttons.rejected.connect(self.reject)
        top = QHBoxLayout()
        top.addWidget(intro, 1)
        top.addWidget(self.filter_edit)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.table, 1)
        self.unsplit_choice = "drop" if left_out else "collapse"
        if pooled or left_out:
            lay.addLayout(self._unsplit_row())
        lay.addWidget(self.status)
        lay.addWidget(buttons)
        self.saved_path: Path | None = None

    #: The choices for ids that name no scaffold, as the combo box words them (``--unsplit-ids``).
    UNSPLIT_WORDS = {"collapse": "pool every id under one scaffold (no scaffold terms)",
                     "drop": "leave them out and fit the scaffolds the other ids name"}

    def _unsplit_row(self) -> QHBoxLayout:
        """The choice for ids that name no scaffold; the corpus is reopened with it when the dialog closes."""
        self.unsplit_box = QComboBox()
        self.unsplit_box.setObjectName("unsplit_ids")
        for key, words in self.UNSPLIT_WORDS.items():
            self.unsplit_box.addItem(f"{words} (--unsplit-ids {key})", key)
        self.unsplit_box.setCurrentIndex(list(self.UNSPLIT_WORDS).index(self.unsplit_choice))
        self.unsplit_box.currentIndexChanged.connect(self._unsplit_chosen)
        row = QHBoxLayout()
        row.addWidget(QLabel("Ids that name no scaffold:"))
        row.addWidget(self.unsplit_box, 1)
        return row

    def _unsplit_chosen(self) -> None:
        self.unsplit_choice = self.unsplit_box.currentData()
        self.status.setText(f"Ids that name no scaffold: {self.UNSPLIT_WORDS[self.unsplit_choice]}. The corpus is "
                            "reopened with this choice when you close this table.")

    def rows(self) -> dict[str, tuple[str, str]]:
        """id -> (model, scaffold) as the table shows them now."""
        out = {}
        for i in range(self.table.rowCount()):
            out[self.table.item(i, 0).text()] = (self.table.item(i, 1).text().strip(),
                                                  self.table.item(i, 2).text().strip())
        return out

    def edited(self) -> dict[str, tuple[str, str]]:
        return {sid: v for sid, v in self.rows().items() if v != self.original[sid]}

    def _edited(self, item) -> None:
        if item.column() in (1, 2):
            item.setBackground(QColor("#e0efff"))
            self.status.setText(f"{len(self.edited())} rows edited.")

    def _filter(self, text: str) -> None:
        for i in range(self.table.rowCount()):
            self.table.setRowHidden(i, text.lower() not in self.table.item(i, 0).text().lower())

    def alias_text(self, only_edited: bool = False) -> str:
        """An alias file with one explicit ``[subjects]`` entry per row (or per edited row)."""
        from ..core.corpus.subject_ids.conventions import subjects_toml

        rows = self.edited() if only_edited else self.rows()
        return subjects_toml(rows, source=str(self.corpus.source))

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(self.alias_text(), encoding="utf-8")
        self.saved_path = path
        self.status.setText(f"Saved {path}; open the corpus with it (ddr ... --aliases {path.name}), or name it "
                            f"{Path(str(self.corpus.source)).stem}.aliases.toml beside the data file.")
        return path

    def _on_save(self) -> None:
        src = Path(str(self.corpus.source))
        default = src.with_name(f"{src.stem}.aliases.toml")
        path, _ = QFileDialog.getSaveFileName(self, "Save alias file", str(default), "Alias files (*.toml)")
        if path:
            self.save(path)
