"""Shared set-up of the offscreen GUI tests.

Settings go to a temporary folder (never the user's), and every test starts at a *safe point*: no
background job running, the previous test's widgets deleted and their garbage collected on the GUI
thread (see ``ddr_explorer.gui.plots.GuiThreadGarbageCollector`` for why this matters).
"""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _private_settings(tmp_path_factory):
    """QSettings (recent files, geometry, last session) in a temporary folder for the whole run."""
    try:
        from PySide6.QtCore import QSettings
    except ImportError:  # the GUI tests skip themselves without PySide6
        yield
        return
    folder = tmp_path_factory.mktemp("settings")
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(folder))
    yield folder


@pytest.fixture(scope="session", autouse=True)
def _gc_on_the_gui_thread(request):
    """The app's garbage-collection policy from the first GUI test on, as the app has it from its first plot."""
    try:
        import PySide6  # noqa: F401
    except ImportError:
        yield
        return
    request.getfixturevalue("qapp")
    from ddr_explorer.gui.plots import GuiThreadGarbageCollector

    GuiThreadGarbageCollector.acquire()
    yield


def wait_for_all_jobs(timeout_s: float = 120.0) -> bool:
    """Every background job of the app finished: corpus loads, fits, sheets and cost frontiers."""
    from ddr_explorer.gui.dstudy_panel import wait_for_background_jobs
    from ddr_explorer.gui.workers import wait_for_tasks

    return wait_for_tasks(timeout_s) and wait_for_background_jobs(timeout_s)


def safe_point() -> None:
    """No job running, deferred deletes done, garbage collected: all on the GUI thread."""
    from PySide6.QtCore import QCoreApplication, QEvent

    from ddr_explorer.gui.plots import GuiThreadGarbageCollector

    assert wait_for_all_jobs(), "a background job was still running after 120 s"
    QCoreApplication.processEvents()  # the jobs' last polls deliver their results
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    GuiThreadGarbageCollector.collect_now()


@pytest.fixture(autouse=True)
def _safe_points():
    """Each test starts and ends at a safe point (its widgets, closed by pytest-qt, are deleted here)."""
    try:
        import PySide6  # noqa: F401
    except ImportError:
        yield
        return
    safe_point()
    yield
    safe_point()
