"""The main window: open a corpus and show its summary and design diagnostics."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Qt
from PySide6.QtGui import QAction, QFontDatabase, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QPlainTextEdit,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.corpus.issues import CorpusError


class _LoadSignals(QObject):
    loaded = Signal(object, object)  # corpus, summary dict
    failed = Signal(str)


class _LoadJob(QRunnable):
    """Load and inspect a corpus on a pool thread; the GUI thread never waits."""

    def __init__(self, path: Path, fmt: str | None):
        super().__init__()
        self.path, self.fmt, self.signals = path, fmt, _LoadSignals()

    def run(self) -> None:
        from ..core.corpus.io import load_corpus
        from ..core.inspection import inspect_corpus

        try:
            corpus = load_corpus(self.path, self.fmt)
            self.signals.loaded.emit(corpus, inspect_corpus(corpus))
        except CorpusError as exc:
            self.signals.failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - any failure must reach the user, not kill the app
            self.signals.failed.emit(f"{self.path}: {type(exc).__name__}: {exc}")


class MainWindow(QMainWindow):
    """Top-level window.  Holds the current corpus; panels draw what core computed."""

    corpus_loaded = Signal(object)
    load_failed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("DDR Explorer")
        self.setAcceptDrops(True)
        self.corpus = None
        self.summary: dict | None = None
        self.loading = False
        self._jobs: list[_LoadJob] = []

        self.header = QLabel("No corpus loaded")
        self.header.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.summary_view = QPlainTextEdit(readOnly=True)
        self.summary_view.setObjectName("summary_view")
        self.summary_view.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.issues_table = QTableWidget(0, 4)
        self.issues_table.setHorizontalHeaderLabels(["severity", "where", "problem", "fix"])
        self.issues_table.horizontalHeader().setStretchLastSection(True)
        self.error_view = QLabel("")
        self.error_view.setWordWrap(True)
        self.error_view.setStyleSheet("color: #a40000;")
        self.error_view.hide()

        split = QSplitter(Qt.Vertical)
        split.addWidget(self.summary_view)
        split.addWidget(self.issues_table)
        split.setSizes([480, 200])
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addWidget(self.header)
        layout.addWidget(self.error_view)
        layout.addWidget(split)
        self.setCentralWidget(body)

        menu = self.menuBar().addMenu("&File")
        act = QAction("&Open corpus...", self, shortcut=QKeySequence.Open, triggered=self._on_open)
        menu.addAction(act)
        menu.addAction(QAction("&Quit", self, shortcut=QKeySequence.Quit, triggered=self.close))
        self.statusBar().showMessage("Ready")

    # -- loading ---------------------------------------------------------------------
    def open_corpus(self, path: Path, fmt: str | None = None) -> None:
        """Start loading ``path`` in the background; the current corpus stays until it succeeds."""
        self.loading = True
        self.statusBar().showMessage(f"Loading {path} ...")
        job = _LoadJob(Path(path), fmt)
        job.signals.loaded.connect(self._on_loaded)
        job.signals.failed.connect(self._on_failed)
        self._jobs.append(job)
        QThreadPool.globalInstance().start(job)

    def _on_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open corpus", "", "Corpora (*.csv *.tsv *.jsonl *.json *.parquet);;All files (*)")
        if path:
            self.open_corpus(Path(path))

    def _on_loaded(self, corpus, summary: dict) -> None:
        from ..core.inspection import format_summary

        self.loading = False
        self.corpus, self.summary = corpus, summary
        self.error_view.hide()
        self.header.setText(f"<b>{corpus.name}</b> &mdash; {corpus.source} ({corpus.format}), "
                            f"{corpus.n_records:,} records, {corpus.n_trials:,} trials")
        self.summary_view.setPlainText(format_summary(summary))
        issues = summary.get("warnings", [])
        self.issues_table.setRowCount(len(issues))
        for r, issue in enumerate(issues):
            where = ", ".join(str(x) for x in (issue.get("row"), issue.get("column")) if x is not None)
            for c, text in enumerate([issue["severity"], where, issue["message"], issue.get("fix", "")]):
                self.issues_table.setItem(r, c, QTableWidgetItem(str(text)))
        self.issues_table.resizeColumnsToContents()
        self.statusBar().showMessage(f"Loaded {corpus.source}")
        self.corpus_loaded.emit(corpus)

    def _on_failed(self, message: str) -> None:
        # The corpus the user had stays loaded: a bad file never costs them their work.
        self.loading = False
        self.error_view.setText("Could not open the file:\n" + message)
        self.error_view.show()
        self.statusBar().showMessage("The file could not be opened; the previous corpus is still loaded.")
        self.load_failed.emit(message)

    # -- drag and drop ------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt override
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt override
        urls = event.mimeData().urls()
        if urls:
            self.open_corpus(Path(urls[0].toLocalFile()))
