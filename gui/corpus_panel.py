"""The corpus view: the ``ddr inspect`` summary, the model x scaffold coverage heatmap, connectivity.

Every number comes from core: :func:`~ddr_explorer.core.inspection.inspect_corpus`
(the summary dict, shown as :func:`~ddr_explorer.core.inspection.format_summary`
prints it) and :func:`~ddr_explorer.core.design.coverage_matrix` (trials and
tasks per agent, pooled or per benchmark).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.design import CoverageMatrix, coverage_matrix
from ..core.references import cite
from . import plots
from .plots import new_plot

_POOLED = "All benchmarks (pooled)"


def connectivity_lines(summary: dict) -> list[str]:
    """Plain-language lines about connectivity and separability, from the inspect summary (seed 000 (Hardy et al. 2026) App. E)."""
    lines = []
    comps = summary.get("components") or []
    if summary.get("connected"):
        lines.append("The benchmark-model-scaffold graph is connected: every model and scaffold contrast is identified.")
    else:
        lines.append(f"The graph has {len(comps)} components: contrasts across components are not identified "
                     "and are never reported.")
    av = summary.get("articulation_vertices") or []
    if summary.get("n_benchmarks") == 1 and not av:
        lines.append("The design has one benchmark (articulation vertices do not apply).")
    elif av:
        shown = ", ".join(av[:6]) + (" ..." if len(av) > 6 else "")
        lines.append(f"Articulation vertices (removing one splits the design): {shown}")
    deg = summary.get("benchmark_degree") or {}
    if deg:
        lines.append("Benchmark degree (models + scaffolds): "
                     + ", ".join(f"{plots.elide(b, 32)} {d}" for b, d in list(deg.items())[:8])
                     + (" ..." if len(deg) > 8 else ""))
    names = {"i": "(i) models on several benchmarks", "ii": "(ii) scaffolds on several benchmarks",
             "iii": "(iii) model-scaffold pairs recur across benchmarks",
             "iv": "(iv) tasks attempted by several models and scaffolds"}
    cond = summary.get("conditions") or {}
    marks = {True: "yes", False: "NO", None: "n/a"}
    if cond:
        lines.append("Prop. E.3: " + "; ".join(f"{names.get(k, k)}: {marks.get(v, v)}" for k, v in cond.items()))
    sep = summary.get("separable_components") or []
    lines.append(f"Separable components: {', '.join(sep) if sep else 'none'}")
    nsep = summary.get("not_separable") or []
    if nsep:
        lines.append(f"NOT separable: {', '.join(nsep)}; a formula the design supports: "
                     + " + ".join(f"(1|{t})" for t in summary.get("suggested_terms", [])))
    return lines


class CorpusPanel(QWidget):
    """Summary, issues, coverage heatmap and connectivity of one corpus.

    Parameters
    ----------
    corpus
        The loaded :class:`~ddr_explorer.core.corpus.corpus.Corpus`, or None (an empty panel).
    summary
        :func:`~ddr_explorer.core.inspection.inspect_corpus` of it.

    Attributes
    ----------
    summary_view, issues_table, benchmark_box, coverage_plot, coverage
        Widgets, and the :class:`~ddr_explorer.core.design.CoverageMatrix` drawn.
    """

    def __init__(self, corpus=None, summary: dict | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.corpus, self.summary = corpus, summary
        self.coverage: CoverageMatrix | None = None

        self.summary_view = QPlainTextEdit(readOnly=True)
        self.summary_view.setObjectName("summary_view")
        self.summary_view.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        # wrapped at the view's width: the long lines (separable components, warnings) were cut at 1280 px
        self.summary_view.setLineWrapMode(QPlainTextEdit.WidgetWidth)
        self.issues_table = QTableWidget(0, 4)
        self.issues_table.setObjectName("issues_table")
        self.issues_table.setHorizontalHeaderLabels(["severity", "where", "problem", "fix"])
        self.issues_table.verticalHeader().hide()
        self.issues_table.setWordWrap(True)

        self.benchmark_box = QComboBox()
        self.benchmark_box.setObjectName("benchmark_box")
        self.benchmark_box.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.benchmark_box.setMinimumContentsLength(24)
        self.measure_box = QComboBox()
        self.measure_box.addItem("trials per agent", "trials")
        self.measure_box.addItem("tasks per agent", "tasks")
        self.coverage_plot = new_plot("Coverage", "scaffold (numbered; see the list below)", "", min_height=260)
        self.coverage_plot.setObjectName("plot_coverage")
        self.coverage_image = None
        self.scaffold_list = QLabel("")
        self.scaffold_list.setWordWrap(True)
        self.scaffold_list.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.connectivity_view = QLabel("")
        self.connectivity_view.setObjectName("connectivity_view")
        self.connectivity_view.setWordWrap(True)
        self.connectivity_view.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.export_button = plots.ExportButton(self.plots, self.tables, self._extra_exports)

        connectivity = QWidget()
        cl = QVBoxLayout(connectivity)
        cl.setContentsMargins(4, 4, 4, 4)
        cl.addWidget(QLabel(f"<b>Connectivity and separability</b> ({cite('hardy2026', 'App. E')})"))
        cl.addWidget(self.connectivity_view)
        cl.addStretch(1)
        scroll = QScrollArea()  # the lines wrap; a short pane scrolls rather than cutting them off
        scroll.setWidget(connectivity)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        left = QSplitter(Qt.Vertical)
        left.addWidget(self.summary_view)
        left.addWidget(self.issues_table)
        left.addWidget(scroll)
        left.setSizes([420, 110, 150])
        self.left_split = left
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Benchmark"))
        row.addWidget(self.benchmark_box, 1)
        row.addWidget(self.measure_box)
        row.addWidget(self.export_button)
        rv.addLayout(row)
        rv.addWidget(self.coverage_plot, 1)
        rv.addWidget(self.scaffold_list)
        split = QSplitter(Qt.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([520, 560])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)

        if corpus is None or summary is None:
            plots.placeholder(self.coverage_plot, "Open a corpus to see its coverage")
            self.benchmark_box.setEnabled(False)
            self.measure_box.setEnabled(False)
            return
        self._fill_summary()
        self.benchmark_box.addItem(_POOLED, None)
        for b in summary.get("per_benchmark", {}):
            self.benchmark_box.addItem(plots.elide(b, 48), b)
        self.benchmark_box.currentIndexChanged.connect(self._on_benchmark_changed)
        self.measure_box.currentIndexChanged.connect(self._on_benchmark_changed)
        self.connectivity_view.setText("<br>".join(_html(x) for x in connectivity_lines(summary)))
        self._on_benchmark_changed()

    def _fill_summary(self) -> None:
        from ..core.inspection import format_summary

        self.summary_view.setPlainText(format_summary(self.summary))
        issues = self.summary.get("warnings", [])
        self.issues_table.setRowCount(len(issues))
        for r, issue in enumerate(issues):
            line = issue.get("line", issue.get("row"))  # "row" in summaries written before it was named "line"
            where = ", ".join(str(x) for x in (f"line {line}" if line is not None else None, issue.get("column"))
                              if x is not None)
            for c, text in enumerate([issue["severity"], where, issue["message"], issue.get("fix", "")]):
                it = QTableWidgetItem(str(text))
                it.setToolTip(str(text))
                self.issues_table.setItem(r, c, it)
        header = self.issues_table.horizontalHeader()
        for c, mode in enumerate((QHeaderView.ResizeToContents, QHeaderView.ResizeToContents,
                                  QHeaderView.Stretch, QHeaderView.Stretch)):
            header.setSectionResizeMode(c, mode)  # long problems and fixes wrap instead of running off
        self.issues_table.resizeRowsToContents()

    def fit_issue_rows(self) -> None:
        """Give the issues pane the height its wrapped rows need (at most a third of the column).

        The pane had a fixed 110 px: at 1280 x 800 the second warning's problem and fix were cut mid-line.
        Rows wrap at the table's width, so this runs whenever the panel is resized; it only ever grows the
        pane to what its rows need (a pane the user dragged taller stays so), taking the room from the
        summary text above, which scrolls.
        """
        t, split = self.issues_table, self.left_split
        if t.rowCount() == 0 or not self.isVisible():
            return
        t.resizeRowsToContents()
        need = (t.horizontalHeader().height() + sum(t.rowHeight(r) for r in range(t.rowCount()))
                + 2 * t.frameWidth() + 2)
        top, issues, rest = split.sizes()
        want = min(need, (top + issues + rest) // 3)
        if issues < want:
            split.setSizes([max(top - (want - issues), 0), want, rest])

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self.fit_issue_rows()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.fit_issue_rows()

    # -- handlers ------------------------------------------------------------------------
    def _on_benchmark_changed(self, *_args) -> None:
        bench = self.benchmark_box.currentData()
        self.coverage = coverage_matrix(self.corpus, bench)
        self._draw_coverage()

    def set_benchmark(self, benchmark: str | None) -> None:
        """Show the coverage of ``benchmark`` (None: pooled)."""
        k = self.benchmark_box.findData(benchmark)
        if k < 0:
            raise ValueError(f"benchmark {benchmark!r} is not in the corpus")
        self.benchmark_box.setCurrentIndex(k)

    def _draw_coverage(self) -> None:
        cov = self.coverage
        measure = self.measure_box.currentData()
        frame = cov.trials if measure == "trials" else cov.tasks
        matrix = frame.to_numpy(dtype=np.float64)
        models = [str(m) for m in frame.index]
        scaffolds = [str(a) for a in frame.columns]
        shown = np.where(matrix > 0, matrix, np.nan)  # never-run agents stay blank, not the lowest colour
        levels = (0.0, float(np.nanmax(shown))) if np.isfinite(shown).any() else (0.0, 1.0)
        self.coverage_image = plots.heatmap(self.coverage_plot, shown, models, scaffolds, colormap="viridis",
                                            levels=levels, bar_label=measure, image=self.coverage_image,
                                            number_cols=True)
        where = "pooled over benchmarks" if cov.benchmark is None else plots.elide(cov.benchmark, 48)
        # The title stays short: a pyqtgraph title wider than the plot pushes the colour bar out of view.
        plots.set_title(self.coverage_plot, f"{measure.capitalize()} per model \u00d7 scaffold")
        self.scaffold_list.setText(
            f"<b>{_html(where)}</b>: {cov.observed_agents} of {matrix.size} model-scaffold agents run "
            f"({cov.fill:.0%}); blank cells were never run.<br>Scaffolds: "
            + ", ".join(f"{k + 1} {_html(plots.elide(a, 28))}" for k, a in enumerate(scaffolds)))

    # -- exports ---------------------------------------------------------------------------
    def plots(self) -> dict:
        return {"Coverage": self.coverage_plot}

    def tables(self) -> dict:
        return {"Issues": self.issues_table}

    def _extra_exports(self) -> dict:
        return {"Coverage matrix": self.export_coverage_csv} if self.coverage is not None else {}

    def export_coverage_csv(self, path) -> Path:
        """Write the coverage matrix shown (models x scaffolds, trials or tasks) to CSV."""
        measure = self.measure_box.currentData()
        frame = self.coverage.trials if measure == "trials" else self.coverage.tasks
        rows = [[m, *[int(v) for v in frame.loc[m]]] for m in frame.index]
        return plots.write_csv(path, ["model", *[str(a) for a in frame.columns]], rows)

    def export_plot(self, name: str, path) -> Path:
        return plots.export_plot(self.plots()[name], path)

    def export_table(self, name: str, path) -> Path:
        return plots.export_table(self.tables()[name], path)


def _html(text: str) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
