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


@pytest.fixture
def small_fit_window(qtbot, tmp_path, fake_sampler):
    """A main window with a small simulated corpus open and fitted (the moment stand-in of ``fake_sampler``,
    fixed short run)."""
    import ddr_batch_fakes as bf

    from ddr_explorer.core.fitting import fit_corpus
    from ddr_explorer.core.model import SamplerSettings

    sim = bf.simulate_module().simulate_per_benchmark(n_tasks=8, n_models=4, n_scaffolds=2, n_pairs=8,
                                                      trials_per_cell=2, seed=9)
    path = tmp_path / "small.csv"
    sim.table.to_csv(path, index=False)
    from ddr_explorer.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.cache_dir = tmp_path / "cache"
    with qtbot.waitSignal(w.corpus_loaded, timeout=60_000):
        w.open_corpus(path)
    w.state.update(sampler={"stop": "fixed", "draws": 40, "warmup": 10, "chains": 2})
    w.fit_result = fit_corpus(w.corpus, "per-benchmark", SamplerSettings(stop="fixed", draws=40, warmup=10, chains=2),
                              cache_dir=w.cache_dir)
    return w


class _Clock:
    """Seconds that only move when a test sets ``t``."""

    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


@pytest.fixture
def clock():
    """A clock the test moves by hand (the ETA tests' time)."""
    return _Clock()


def pytest_runtest_logfinish(nodeid, location):
    """Touch the heartbeat file of ``tools/run_gui_tests.sh``: a test finished, so the run is not hung.

    The runner's watchdog stops a run only when no test has finished for ``GUI_STALL`` seconds, so a
    slow box reads as slow, never as a hang.
    """
    beat = os.environ.get("DDR_TEST_HEARTBEAT")
    if beat:
        try:
            os.utime(beat)
        except OSError:  # the runner removed it on its way out
            pass


@pytest.fixture
def dstudy(qtbot):
    """A D-study tab on the demo's shape (89 tasks, 3 scaffolds, 5 trials, 29 models), shown and focused, and its
    state: the tests that type into its fields."""
    import numpy as np

    from ddr_explorer.core.dstudy import DStudyDesign, DStudyModel
    from ddr_explorer.core.reliability import VarianceComponents
    from ddr_explorer.core.session import AnalysisState
    from ddr_explorer.gui.dstudy_panel import DStudyPanel

    rng = np.random.default_rng(3)
    comps = VarianceComponents.from_mapping({t: (sd * np.exp(rng.normal(0, .2, 200))) ** 2 for t, sd in
                                             {"task": 3.0, "model": 1.7, "scaffold": .4, "task:model": 1.4,
                                              "task:scaffold": 1.1, "model:scaffold": .5}.items()}, source="test")
    state = AnalysisState()
    panel = DStudyPanel(DStudyModel(comps), DStudyDesign(n_tasks=89, n_scaffolds=3, n_replicates=5, n_models=29),
                        state=state)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    panel.activateWindow()
    return panel, state
