"""Opening a corpus, the flow the main window drives for File > Open, Open recent, the demo and a drop.

The file loads and is inspected on a worker (:func:`load_and_inspect`); the corpus the user had stays
loaded until the new one succeeds.  A table refused for missing columns opens the column dialog
(:class:`~.import_dialog.ColumnMappingDialog`) instead of failing; Analysis > Subject ids reopens a py-irt
corpus with a saved alias file; Analysis > Slice of tasks reopens it restricted to a slice.  A loaded
corpus gets its own analysis state (or the saved analysis that asked for it), the Corpus tab, a D-study
preview, and its cached fit when there is one (:mod:`.cached_fit`).

Why a mixin rather than a controller object: loading replaces the window's corpus, summary, state and
panels, and the window, :mod:`.cached_fit`, the session restore and tests call ``window.open_corpus(...)``,
``window.apply_slice(...)`` and read ``window.loading`` on the window itself.  The window declares the Qt
signals this flow emits (``corpus_loaded``, ``load_failed``).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from ..core.corpus.issues import CorpusError
from ..core.session import AnalysisState
from .cached_fit import reopen_cached_fit
from .corpus_panel import CorpusPanel
from .workers import BackgroundTask


#: The first words of the banner of a file that could not be opened.
OPEN_FAILED = "Could not open the file"


def load_and_inspect(path: Path, fmt: str | None, options: dict | None = None):
    """Worker-thread part of opening a corpus (pure core, no Qt); ``options`` go to ``load_corpus``."""
    from ..core.corpus.io import load_corpus
    from ..core.inspection import inspect_corpus

    corpus = load_corpus(path, fmt, **dict(options or {}))
    return corpus, inspect_corpus(corpus)


def _slice_note(corpus) -> str:
    """The header's word on an active slice of tasks: every number below is of the slice."""
    text = corpus.provenance.get("slice")
    if not text:
        return ""
    kept = corpus.provenance.get("slice_tasks")
    return (f" &mdash; <span style='color:#a05a00'><b>slice</b> {_html(text)}"
            + (f" ({kept[0]:,} of {kept[1]:,} tasks)" if kept else "") + "</span>")


def _html(text) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class CorpusOpening:
    """Opening a corpus, as a mixin of :class:`~.main_window.MainWindow` (see the module docstring)."""

    def open_corpus(self, path: Path, fmt: str | None = None, options: dict | None = None) -> None:
        """Start loading ``path`` in the background; the current corpus stays until it succeeds."""
        self.clear_open_error()  # the new attempt's outcome replaces the last one's
        self.loading = True
        self.statusBar().showMessage(f"Loading {path} ...")
        path = Path(path)

        def failed(exc: BaseException) -> None:
            if isinstance(exc, CorpusError):
                # a table with other column names: the dialog asks which is which; no failure is said meanwhile
                if self._offer_column_mapping(path, fmt, exc) is None:
                    self._on_failed(str(exc))
                else:
                    self._on_choosing_columns(path, str(exc))
            else:  # any failure must reach the user, not kill the app
                self._on_failed(f"{path}: {type(exc).__name__}: {exc}")

        self._jobs.append(BackgroundTask(lambda: load_and_inspect(path, fmt, options),
                                         on_done=lambda r: self._on_loaded(*r), on_error=failed, parent=self))

    def _on_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open corpus", "", "Corpora (*.csv *.tsv *.jsonl *.json *.parquet *.eval);;All files (*)")
        if path:
            self.open_corpus(Path(path))

    def _on_open_demo(self) -> None:
        from ..core.files import demo_corpus_path

        self.open_corpus(demo_corpus_path())

    def _on_open_hal_demo(self) -> None:
        from ..core.files import hal_demo_corpus_path

        self.open_corpus(hal_demo_corpus_path())

    def _on_loaded(self, corpus, summary: dict) -> None:
        from ..core.files import protect_inputs

        self.loading = False
        self.corpus, self.summary = corpus, summary
        protect_inputs([corpus.source])  # no export of the app may write over the corpus it shows
        self.error_view.hide()
        self.header.setText(f"<b>{_html(corpus.name)}</b> &mdash; {_html(corpus.source)} ({_html(corpus.format)}), "
                            f"{corpus.n_records:,} records, {corpus.n_trials:,} trials" + _slice_note(corpus))
        self.corpus_panel = CorpusPanel(corpus, summary)
        self._slots["Corpus"].replace(self.corpus_panel)
        pending, self._pending_state = self._pending_state, None
        if pending is not None and pending.corpus_path and Path(pending.corpus_path) == Path(str(corpus.source)):
            self.state = pending  # a saved analysis keeps its own design, prices and target
        else:
            # A new corpus: its observed design and prices; the user's choices of model and decision carry over.
            keep = {k: getattr(self.state, k) for k in ("sampler", "object_of_measurement", "claim", "target",
                                                         "budget")}
            keep["priors"] = self.state.priors
            if self.state.model not in ("per-benchmark", "pooled"):
                keep["model"] = self.state.model  # a formula or the ddr preset is the user's choice
            self.state = AnalysisState.from_corpus(corpus, **keep)
        self.model_panel.set_state(self.state)
        self.fit_result = self.fit_outputs = self.analyses = None  # a fit belongs to its corpus
        self.analyses_for_sheet = {}
        self._clear_corpus_results()
        self.fit_banner.hide()
        self.add_recent_file(str(corpus.source))
        self.statusBar().showMessage(f"Loaded {corpus.source}")
        self.previewer.follow(self.state)
        self.previewer.start()
        self.corpus_loaded.emit(corpus)
        self.reopen_cached_fit()

    def reopen_cached_fit(self) -> bool:
        """Show the open corpus's cached fit at once (:func:`~.cached_fit.reopen_cached_fit`)."""
        return reopen_cached_fit(self)

    # -- column mapping and subject ids (gui/import_dialog.py) ---------------------------------------
    def _offer_column_mapping(self, path: Path, fmt: str | None, exc: CorpusError):
        """A table refused for missing columns: open the column dialog; OK reopens it with the mapping."""
        from .import_dialog import ColumnMappingDialog

        if not any(i.code == "missing-column" for i in exc.issues) or Path(path).suffix.lower() not in (
                ".csv", ".tsv", ".tab", ".jsonl", ".ndjson", ".json", ".parquet", ".pq"):
            return None
        try:
            dialog = ColumnMappingDialog(path, self)
        except Exception:  # noqa: BLE001 - no preview possible: the error view already says why
            return None
        dialog.accepted.connect(lambda: self.open_corpus(Path(path), fmt, {"columns": dialog.mapping_text()}))
        self.column_dialog = dialog
        dialog.open()
        return dialog

    def _on_id_mapping(self):
        """The subject-id table of a py-irt corpus; a saved alias file reopens the corpus with it."""
        from .import_dialog import IdMappingDialog

        if self.corpus is None or not (self.corpus.provenance or {}).get("subjects"):
            self.statusBar().showMessage("The corpus has no subject ids to map (only py-irt files have them).")
            return None
        dialog = IdMappingDialog(self.corpus, self)
        source, fmt = Path(str(self.corpus.source)), self.corpus.format

        was = (self.corpus.provenance.get("load_options") or {}).get("unsplit_ids", "collapse")

        def reopen() -> None:
            options = dict(self.state.corpus_options)
            if dialog.saved_path is not None:
                options["aliases"] = str(dialog.saved_path)
            options.pop("unsplit_ids", None)
            if dialog.unsplit_choice != "collapse":  # ids that name no scaffold left out (a different corpus)
                options["unsplit_ids"] = dialog.unsplit_choice
            if dialog.saved_path is not None or dialog.unsplit_choice != was:
                self.open_corpus(source, fmt, options)

        dialog.finished.connect(lambda _code: reopen())
        self.id_dialog = dialog
        dialog.open()
        return dialog

    def _on_choosing_columns(self, path: Path, message: str) -> None:
        """The column dialog is open: the status bar says what to do, not that the file failed."""
        self.loading = False
        self._pending_state = None
        self.statusBar().showMessage(f"Choose which column of {Path(path).name} is which; "
                                     "the previous corpus stays loaded until then.")
        self.column_dialog.rejected.connect(lambda: self.statusBar().showMessage(
            f"{Path(path).name} was not opened: its columns were not chosen."))
        self.load_failed.emit(message)

    def clear_open_error(self) -> None:
        """Hide the red "Could not open the file" banner: it answers one attempt, not what the user does next.

        Called when another file is opened, a fit starts or the user turns to another tab; the banner of a
        sheet that could not be written is the export's own and stays.
        """
        if self.error_view.text().startswith(OPEN_FAILED):
            self.error_view.hide()
            self.error_view.setText("")

    def _on_failed(self, message: str) -> None:
        # The corpus the user had stays loaded: a bad file never costs them their work.
        self.loading = False
        self._pending_state = None
        self.error_view.setText(f"{OPEN_FAILED}:\n" + message)
        self.error_view.show()
        self.statusBar().showMessage("The file could not be opened; the previous corpus is still loaded."
                                     if self.corpus is not None else
                                     "The file could not be opened; no corpus is loaded (File > Open corpus...).")
        self.load_failed.emit(message)

    # -- a slice of tasks (gui/slice_dialog.py) ---------------------------------------------
    def apply_slice(self, text: str) -> None:
        """Reopen the corpus restricted to a slice of tasks (``""``: the whole corpus again)."""
        if self.corpus is None or self.corpus.source is None:
            return
        options = dict(self.corpus.provenance.get("load_options") or {})
        options.pop("slice", None)
        if text:
            options["slice"] = text
        fmt = None if self.corpus.format in ("csv", "tsv", "jsonl", "parquet", "canonical") else self.corpus.format
        self.open_corpus(Path(str(self.corpus.source)), fmt, options)

    def _on_slice(self) -> None:
        if self.corpus is None:
            return
        from .slice_dialog import SliceDialog

        current = self.corpus.provenance.get("slice") or ""
        dlg = SliceDialog(self.corpus.table, current, self)
        if dlg.exec():
            self.apply_slice(dlg.slice_text())


__all__ = ["OPEN_FAILED", "CorpusOpening", "load_and_inspect"]
