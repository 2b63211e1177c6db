"""The main window's menu bar: File, Analysis and Help, and the actions the window keeps.

One function, :func:`add_menus`, builds the menus of a :class:`~.main_window.MainWindow` and wires each
action to the window's flow that runs it: opening a corpus (:mod:`.corpus_opening`), saving and reopening
an analysis, the fit (:mod:`.fit_flow`), the analysis jobs (:mod:`.analysis_jobs`), the DDR-sheet export
(:mod:`.ddr_sheet_export`).  The actions the window enables, disables or hands to the start pages stay
attributes of the window (``fit_action``, ``cancel_action``, ``export_sheet_action``, ``failure_action``,
``frontier_action``...), as before; a function rather than a mixin, since it runs once, at construction.
"""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence

from .about_dialog import add_help_menu


def add_menus(window) -> None:
    """Build the File, Analysis and Help menus of ``window`` and keep their actions on it.

    Parameters
    ----------
    window
        The :class:`~.main_window.MainWindow` under construction; its flows' methods are the actions'
        slots, so the menus are built after its panels and tabs.
    """
    menu = window.menuBar().addMenu("&File")
    act = QAction("&Open corpus...", window, shortcut=QKeySequence.Open, triggered=window._on_open)
    menu.addAction(act)
    window.recent_menu = menu.addMenu("Open &recent")
    window.recent_menu.aboutToShow.connect(window._fill_recent_menu)
    menu.addAction(QAction("Open &demo corpus", window, triggered=window._on_open_demo))
    menu.addAction(QAction("Open &HAL demo corpus (tau-bench Airline, Hardy et al. 2026)", window,
                           triggered=window._on_open_hal_demo))
    menu.addSeparator()
    menu.addAction(QAction("Open &analysis...", window, triggered=window._on_open_analysis))
    menu.addAction(QAction("&Save analysis as...", window, shortcut=QKeySequence.Save,
                           triggered=window._on_save_analysis))
    menu.addSeparator()
    window.export_sheet_action = QAction("Export DDR &sheet (PDF)...", window, triggered=window._on_export_sheet)
    menu.addAction(window.export_sheet_action)
    menu.addAction(QAction("Export every plot and &table...", window, triggered=window._on_export_all))
    menu.addSeparator()
    menu.addAction(QAction("&Quit", window, shortcut=QKeySequence.Quit, triggered=window.close))
    analysis = window.menuBar().addMenu("&Analysis")
    window.fit_action = QAction("&Fit the model", window, shortcut="Ctrl+R", triggered=window.start_fit)
    analysis.addAction(window.fit_action)
    window.cancel_action = QAction("&Cancel the fit", window, triggered=window.cancel_fit, enabled=False)
    analysis.addAction(window.cancel_action)
    window.analyses_action = QAction("Run &difficulty, held-out and LOO analyses", window,
                                     triggered=lambda: window.start_analyses())
    analysis.addAction(window.analyses_action)
    window.methods_action = QAction("Compare &estimators (REML, Laplace, DISCO, Henderson, Bayes)", window,
                                    triggered=lambda: window.start_methods())
    analysis.addAction(window.methods_action)
    window.score_table_action = QAction("Compare estimators on a &G-study table (any long table and formula)...",
                                        window, triggered=window._on_score_table_methods)
    analysis.addAction(window.score_table_action)
    window.failure_action = QAction("Failure &modes (error categories)", window,
                                    triggered=lambda: window.start_failure_or_frontier("failure-modes"))
    analysis.addAction(window.failure_action)
    window.frontier_action = QAction("Frontier over &time", window,
                                     triggered=lambda: window.start_failure_or_frontier("frontier"))
    analysis.addAction(window.frontier_action)
    analysis.addAction(QAction("Frontier over time, leaving out models without a release date", window,
                               triggered=lambda: window.start_failure_or_frontier("frontier", undated="drop")))
    window.slice_action = QAction("&Slice of tasks...", window, triggered=window._on_slice)
    analysis.addAction(window.slice_action)
    window.capability_action = QAction("Capability scale (IRT) and &transfer across benchmarks", window,
                                       triggered=lambda: window.start_capability())
    analysis.addAction(window.capability_action)
    analysis.addSeparator()
    window.id_mapping_action = QAction("Subject &ids and their model and scaffold...", window,
                                       triggered=window._on_id_mapping)
    analysis.addAction(window.id_mapping_action)
    window.typed_components_action = QAction("D-study from &typed components...", window,
                                             triggered=window._on_typed_components)
    analysis.addAction(window.typed_components_action)
    window.about_action = add_help_menu(window)


__all__ = ["add_menus"]
