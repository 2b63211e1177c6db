"""A fit run from the window: progress, ETA, log, cancel, cached reopen, diagnostics, and a responsive GUI.

The demo corpus is fitted once (module fixture) with very few draws, so the fit is
unconverged on purpose: the window must say so and show its diagnostics.  Every
number the views show is compared with core's functions on the same posterior.
The longest stall of the GUI event loop during the fit is measured and printed.
"""

from __future__ import annotations

import gc
import time

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QTimer  # noqa: E402

from ddr_explorer.core.dstudy import DStudyModel  # noqa: E402
from ddr_explorer.core.dstudy.curves import score_scale  # noqa: E402
from ddr_explorer.core.fitting import components_from_posterior, theta_from_posterior  # noqa: E402
from ddr_explorer.core.model.sampler import SamplerSettings  # noqa: E402
from ddr_explorer.core.ranks import rank_analysis  # noqa: E402
from ddr_explorer.core.session import AnalysisState  # noqa: E402
from ddr_explorer.core.files import demo_corpus_path  # noqa: E402
from ddr_explorer.gui.main_window import TABS, MainWindow  # noqa: E402
from ddr_explorer.gui.model_panel import fmt_eta  # noqa: E402
from ddr_explorer.gui.workers import BackgroundTask, wait_for_tasks  # noqa: E402

#: Few draws of a fixed length: the fit is quick and, on purpose, not converged.  The warmup, chains and
#: chunk (the default 25) are those of tests/gui/test_one_pipeline.py's ``ddr fit`` of the same corpus: they
#: shape the compiled sampler (the draws and the seed do not), so whichever file runs second reads it from
#: the run's compile cache instead of compiling it again (about 15 s of CPU).
TINY = {"stop": "fixed", "draws": 20, "warmup": 40, "chains": 2, "chunk_size": 25}
#: Bound on the longest event-loop stall during a fit (target < 100 ms; measured 18-49 ms with the fit in a
#: child process, 150-210 ms when it ran on a thread: JAX compiles partly under the interpreter lock;
#: the shared CI machine runs other jobs at the same time).
MAX_STALL_S = 0.5


class StallMeter:
    """Longest gap between ticks of a 5 ms timer on the GUI thread: how long the event loop was blocked."""

    def __init__(self):
        self.gaps: list[float] = []
        self.times: list[float] = []
        self._last = None
        self._timer = QTimer()
        self._timer.setInterval(5)
        self._timer.timeout.connect(self._tick)

    def start(self):
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self):
        self._timer.stop()

    def _tick(self):
        now = time.perf_counter()
        self.gaps.append(now - self._last)
        self.times.append(now)
        self._last = now

    @property
    def longest(self) -> float:
        return max(self.gaps, default=float("nan"))


def _set_tiny_sampler(panel, seed: int) -> None:
    """Through the widgets, as a user would."""
    panel.stop_box.setCurrentIndex(panel.stop_box.findData(TINY["stop"]))
    panel.draws_spin.setValue(TINY["draws"])
    panel.warmup_spin.setValue(TINY["warmup"])
    panel.chains_spin.setValue(TINY["chains"])
    panel.seed_spin.setValue(seed)


def _open_demo(qtbot, window):
    with qtbot.waitSignal(window.corpus_loaded, timeout=60_000):
        window.open_corpus(demo_corpus_path())


@pytest.fixture(scope="module")
def fitted(qapp, tmp_path_factory, request):
    """One window with the demo corpus fitted through the GUI (module scope: compiling costs ~30 s)."""
    from pytestqt.qtbot import QtBot

    cache = tmp_path_factory.mktemp("fit-cache")
    w = MainWindow()
    w.resize(1300, 850)
    w.show()
    w.cache_dir = cache
    bot = QtBot(request)
    _open_demo(bot, w)
    _set_tiny_sampler(w.model_panel, seed=11)
    w.state.update(sampler={**w.state.sampler, "chunk_size": TINY["chunk_size"]})
    events = []
    meter = StallMeter()
    original = w.model_panel.show_progress

    def record(*args):
        events.append(args)
        original(*args)

    w.model_panel.show_progress = record
    # the user presses Fit on the Model tab, so it is on screen already (its first paint is not the fit's)
    w.tabs.setCurrentIndex(TABS.index("Model"))
    bot.wait(200)
    meter.start()
    t0 = time.perf_counter()
    assert w.start_fit()
    assert w.fitting and w.model_panel.cancel_button.isEnabled() and not w.model_panel.fit_button.isEnabled()
    task = w.fit_task
    bot.waitUntil(lambda: not w.fitting, timeout=600_000)
    seconds = time.perf_counter() - t0
    meter.stop()
    # While the worker ran: the ticks before the GUI thread saw the end (then it draws the result's views).
    meter.gaps = [g for g, t in zip(meter.gaps, meter.times) if t <= task.finished_at]
    w.model_panel.show_progress = original
    print(f"\nGUI fit of the demo corpus: {seconds:.1f} s; longest event-loop stall while the worker ran: "
          f"{meter.longest * 1e3:.0f} ms (target < 100 ms); 99th percentile tick gap "
          f"{np.percentile(meter.gaps, 99) * 1e3:.0f} ms over {len(meter.gaps)} ticks; then drawing the views "
          f"of the result took {w.show_seconds * 1e3:.0f} ms on the GUI thread")
    yield {"window": w, "events": events, "meter": meter, "cache": cache, "seconds": seconds, "bot": bot}
    wait_for_tasks(120)
    w.close()
    w.deleteLater()


def test_fit_reports_progress_eta_and_log(fitted):
    w, events = fitted["window"], fitted["events"]
    assert w.fit_result is not None and not w.fit_result.from_cache
    phases = [e[0] for e in events]
    assert phases[0] == "compile" and {"warmup", "sampling", "diagnostics"} <= set(phases)
    warm = [e for e in events if e[0] == "warmup"]
    assert warm[-1][1:3] == (TINY["warmup"], TINY["warmup"])  # the bar reached the end of warmup
    assert any(e[3] is not None for e in warm)  # the sampler gave an ETA
    log = w.model_panel.log_text()
    for words in ("Fitting ", "Compiling the model", "Warmup", "Sampling", "Sampled on", "Stored in the cache"):
        assert words in log
    assert w.model_panel.progress.format() == "done"
    assert w.model_panel.fit_button.isEnabled() and not w.model_panel.cancel_button.isEnabled()
    assert fmt_eta(65.2) == "ETA 1 min 05 s" and fmt_eta(None) == ""


def test_event_loop_stays_responsive_during_the_fit(fitted):
    meter = fitted["meter"]
    assert len(meter.gaps) > 100  # the timer kept ticking through the whole fit
    assert meter.longest < MAX_STALL_S, f"the GUI froze for {meter.longest * 1e3:.0f} ms during the fit"


def test_views_show_core_numbers_of_the_fit(fitted):
    w = fitted["window"]
    post = w.fit_result.posterior
    assert post.settings == SamplerSettings(**{**TINY, "seed": 11})
    want = components_from_posterior(post)
    got = w.components_panel.components
    assert got.terms == want.terms
    for t in want.terms:
        np.testing.assert_array_equal(got.draws[t], want.draws[t])
        np.testing.assert_array_equal(w.dstudy_panel.components.draws[t], want.draws[t])
    theta, names = theta_from_posterior(post, "model")
    want_ranks = rank_analysis(theta, names)
    assert w.ranks_panel.ranks.models == names
    np.testing.assert_array_equal(w.ranks_panel.ranks.dominance, want_ranks.dominance)
    np.testing.assert_array_equal(w.ranks_panel.ranks.ranks.mean_rank, want_ranks.ranks.mean_rank)
    # diagnostics: core's table, cell by cell
    d = post.diagnostics
    table = w.diagnostics_panel.table
    assert table.rowCount() == len(d.table)
    for r, term in enumerate(d.table.index):
        for c, key in enumerate(("mean", "sd", "r_hat", "ess_bulk", "ess_tail"), start=1):
            assert table.item(r, c).data(0x0100) == pytest.approx(float(d.table.loc[term, key]), rel=1e-12)
    np.testing.assert_allclose(w.diagnostics_panel.rhat_bars.opts["width"], d.components["r_hat"] - 1.0)
    # the device the fit ran on, and the device JAX offers
    from ddr_explorer.core.formatting import fmt_device

    assert post.device.startswith(("cpu", "gpu")) and fmt_device(post.device) in w.diagnostics_panel.verdict.text()
    assert w.device is not None and w.device.split()[0] in ("CPU,", "GPU:")
    assert w.device.startswith("GPU:") or " chains in parallel on " in w.device  # chains on cores, said so


def test_unconverged_fit_is_marked_with_its_diagnostics(fitted):
    w = fitted["window"]
    d = w.fit_result.posterior.diagnostics
    assert not d.converged  # 20 draws of 2 chains cannot reach bulk ESS 400
    assert w.fit_banner.isVisibleTo(w) and "did NOT converge" in w.fit_banner.text()
    assert d.problems[0] in w.fit_banner.text()
    text = w.diagnostics_panel.verdict.text()
    assert "NOT converged" in text and all(p.replace(">", "&gt;").replace("<", "&lt;") in text
                                           for p in d.problems)


def test_each_slider_redraws_core_numbers_of_the_fit(fitted):
    w, bot = fitted["window"], fitted["bot"]
    panel = w.dstudy_panel
    c = components_from_posterior(w.fit_result.posterior)
    model = DStudyModel(c, scale=score_scale(c))  # the tab reads success rates where the fit allows
    assert set(panel.sliders) >= {"n_tasks", "n_scaffolds", "n_replicates"}
    for field, slider in panel.sliders.items():
        values = panel.slider_values[field]
        for pos in (0, len(values) // 2, len(values) - 1):
            slider.setValue(pos)
            want_value = float(values[pos])
            assert getattr(w.state, field) == want_value
            bot.waitUntil(lambda: getattr(panel.view.design, field) == want_value, timeout=5000)
            st = panel.state
            want = model.view(st.design(), panel.grids, st.effective_target, overs=panel.curve_fields)
            assert panel.view.readouts.coefficient.median == pytest.approx(want.readouts.coefficient.median,
                                                                            rel=1e-12)
            for f, items in panel.curve_items.items():
                x, y = items.median.getOriginalDataset()
                np.testing.assert_allclose(x, want.curves[f].grid, rtol=0)
                np.testing.assert_allclose(y, want.curves[f].median, rtol=1e-12)
                lo = items.band95.lower.getOriginalDataset()[1]
                np.testing.assert_allclose(lo, want.curves[f].hdi95[:, 0], rtol=1e-12)


def test_cached_fit_reopens_at_once(fitted):
    w, bot = fitted["window"], fitted["bot"]
    first = w.fit_result
    t0 = time.perf_counter()
    with bot.waitSignal(w.fit_finished, timeout=60_000) as blocker:
        assert w.start_fit()
    seconds = time.perf_counter() - t0
    print(f"\ncached fit reopened in {seconds:.2f} s (the fit itself took {fitted['seconds']:.1f} s)")
    result = blocker.args[0]
    # reopened, not sampled: the cached file and its exact draws (how fast is a bench figure, not a test:
    # a timed limit here failed on a loaded machine)
    assert result.from_cache and result.cache_path == first.cache_path
    np.testing.assert_array_equal(result.posterior.sigma["task"], first.posterior.sigma["task"])
    assert "Reopened the cached fit" in w.model_panel.log_text()
    assert w.model_panel.progress.format() == "reopened from the cache"


def test_ddr_sheet_is_written_from_the_current_state(fitted, tmp_path):
    w, bot = fitted["window"], fitted["bot"]
    w.state.update(target=0.8, budget=2000.0)
    out = tmp_path / "sheet.pdf"
    with bot.waitSignal(w.sheet_written, timeout=300_000) as blocker:
        assert w.export_ddr_sheet(out, date_invariant=True, analyses="skip")  # the sheet alone, no refits
    assert blocker.args[0] == out and out.read_bytes()[:5] == b"%PDF-"
    # a folder that does not exist: a clear error, not a crash
    with bot.waitSignal(w.sheet_failed, timeout=300_000) as blocker:
        w.export_ddr_sheet(tmp_path / "no" / "such" / "folder" / "sheet.pdf", analyses="skip")
    assert "no/such/folder" in blocker.args[0] and w.error_view.isVisibleTo(w)


def test_every_plot_and_table_is_exported(fitted, tmp_path):
    from PySide6.QtGui import QImage

    w = fitted["window"]
    panels = w.panels()
    assert set(panels) >= {"Corpus", "Variance components", "D-study", "Ranks", "Diagnostics"}
    files = w.export_all(tmp_path)
    n_plots = sum(len(p.plots()) for p in panels.values())
    n_tables = sum(len(p.tables()) for p in panels.values())
    assert len(files) == len(set(files)) == 2 * n_plots + n_tables
    for f in files:
        if f.suffix == ".png":
            assert not QImage(str(f)).isNull()
        elif f.suffix == ".svg":
            assert "<svg" in f.read_text(encoding="utf-8")[:2000]
    rows = (tmp_path / "diagnostics-diagnostics.csv").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 1 + len(w.fit_result.posterior.diagnostics.table)


def test_cancel_a_running_fit(qtbot, tmp_path):
    w = MainWindow()
    qtbot.addWidget(w)
    w.cache_dir = tmp_path
    _open_demo(qtbot, w)
    _set_tiny_sampler(w.model_panel, seed=12)  # not in any cache
    with qtbot.waitSignal(w.fit_cancelled, timeout=600_000) as blocker:
        assert w.start_fit()
        assert w.fitting
        w.model_panel.cancel_button.click()
    assert "cancelled by the user" in blocker.args[0]
    assert not w.fitting and w.fit_result is None
    assert w.model_panel.progress.format() == "cancelled" and "Cancelled" in w.model_panel.log_text()
    assert w.model_panel.fit_button.isEnabled() and not w.model_panel.cancel_button.isEnabled()
    assert not list(tmp_path.glob("*.h5"))  # nothing half-written in the cache
    # the app stays usable: the setup can be edited and a broken file is reported without losing the corpus
    w.model_panel.draws_spin.setValue(30)
    assert w.state.sampler["draws"] == 30
    bad = tmp_path / "broken.csv"
    bad.write_text("benchmark,task,model\nb,t,m\n")
    with qtbot.waitSignal(w.load_failed, timeout=30_000):
        w.open_corpus(bad)
    assert w.corpus.n_records == 7387  # the corpus already open stays open
    # a table without result columns goes to the column dialog (no error line while the user chooses);
    # closing it says the file was not opened
    assert w.column_dialog.isVisible() and "broken.csv" in w.statusBar().currentMessage()
    w.column_dialog.reject()
    assert w.statusBar().currentMessage() == "broken.csv was not opened: its columns were not chosen."
    assert w.corpus.n_records == 7387


def test_model_setup_edits_the_state(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    mp = w.model_panel
    assert [w.tabs.tabText(k) for k in range(w.tabs.count())] == list(TABS)
    mp.sigma_scale.setValue(1.0)
    mp.intercept_scale.setValue(5.0)
    assert w.state.priors == {"sigma": {"df": 3.0, "scale": 1.0}, "intercept": {"df": 3.0, "loc": 0.0, "scale": 5.0}}
    spec = w.state.model_spec()
    assert spec.priors.sigma.scale == 1.0 and spec.priors.intercept.scale == 5.0
    mp.accept_spin.setValue(0.95)
    mp.device_box.setCurrentIndex(mp.device_box.findData("cpu"))
    assert w.state.sampler_settings().target_accept == 0.95 and w.state.sampler_settings().device == "cpu"
    assert w.state.sampler_settings().marginalise == "auto" and "marginalise" not in w.state.sampler
    mp.marginal_box.setCurrentIndex(mp.marginal_box.findData("off"))
    assert w.state.sampler["marginalise"] == "off" and w.state.sampler_settings().marginalise == "off"
    assert "quadrature_nodes" not in w.state.sampler and mp.nodes_box.currentData() == 0
    mp.nodes_box.setCurrentIndex(mp.nodes_box.findData(12))
    assert w.state.sampler["quadrature_nodes"] == 12 and w.state.sampler_settings().quadrature_nodes == 12
    mp.object_box.setCurrentIndex(mp.object_box.findData("system"))
    assert w.state.object_of_measurement == "system"
    mp.model_box.setCurrentIndex(mp.model_box.findData("formula"))
    mp.formula_edit.setText("y ~ 1 + (1|task) + (1|model) + (1|task:model)")
    mp.formula_edit.editingFinished.emit()
    assert w.state.model == "y ~ 1 + (1|task) + (1|model) + (1|task:model)"
    assert list(w.state.model_spec().term_names) == ["task", "model", "task:model"]
    mp.formula_edit.setText("y ~ 1 + (1|nonsense")
    mp.formula_edit.editingFinished.emit()
    assert mp.message.text() and w.state.model == "y ~ 1 + (1|task) + (1|model) + (1|task:model)"
    # a state change moves the widgets
    w.state.update(model="pooled", sampler={"draws": 77})
    assert mp.model_box.currentData() == "pooled" and mp.draws_spin.value() == 77
    assert mp.marginal_box.currentData() == "auto"  # the new state's default
    assert mp.nodes_box.currentData() == 0
    # no corpus: the fit says why instead of starting
    assert not w.start_fit() and "Open a corpus" in mp.message.text()


def test_recent_files_and_last_session(qtbot, tmp_path):
    w = MainWindow()
    qtbot.addWidget(w)
    _open_demo(qtbot, w)
    assert w.recent_files()[0] == str(demo_corpus_path())
    w.model_panel.seed_spin.setValue(5)
    w.state.update(target=0.8, prices={"terminal-bench-2.0": 1.25})
    w.close()  # saves the session
    saved = AnalysisState.load(w.last_session_path())
    assert saved.to_dict() == w.state.to_dict()
    other = MainWindow()
    qtbot.addWidget(other)
    with qtbot.waitSignal(other.corpus_loaded, timeout=60_000):
        assert other.restore_last_session()
    assert other.state.to_dict() == saved.to_dict()
    assert other.model_panel.seed_spin.value() == 5  # the setup panel follows the restored state
    assert other.recent_files()[0] == str(demo_corpus_path())


def test_workers_hold_no_qt_object_and_gc_stays_on_the_gui_thread(qtbot):
    """The cause of the old teardown deadlock: Qt wrappers released off the GUI thread (see plots.py)."""
    seen = {}

    def work(progress, cancel):
        seen["progress_owner"] = getattr(progress, "__self__", None)
        seen["cancel_owner"] = getattr(cancel, "__self__", None)
        seen["gc_enabled_in_worker"] = gc.isenabled()
        progress("phase", 1, 2, None)
        return 42

    results = []
    task = BackgroundTask(work, on_done=results.append, on_error=results.append, with_callbacks=True,
                          on_progress=lambda *a: results.append(a))
    qtbot.waitUntil(lambda: not task.running, timeout=10_000)
    assert results == [("phase", 1, 2, None), 42]
    assert seen["progress_owner"] is None  # a closure, not a bound method of the QObject
    assert not hasattr(seen["cancel_owner"], "metaObject")
    assert seen["gc_enabled_in_worker"] is False  # automatic collection never runs on a worker
    w = MainWindow()
    w.close()
    w.deleteLater()
    from PySide6.QtCore import QCoreApplication, QEvent

    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    assert not gc.isenabled()  # destroying the last window does not switch it back on mid-deletion


def test_background_task_signals_in_order_and_discard(qtbot):
    """The one background mechanism: started, progress, finished / errored on the GUI thread; discard ignores."""
    import threading

    seen = []

    def work(progress, cancel):
        progress("phase", 1, 2, 3.5)
        progress("phase", 2, 2, None)
        return "done"

    task = BackgroundTask(work, with_callbacks=True)
    task.started.connect(lambda: seen.append("started"))
    task.progress.connect(lambda *a: seen.append(a))
    task.finished.connect(lambda r: seen.append(("finished", r)))
    task.errored.connect(lambda e: seen.append(("errored", e)))
    qtbot.waitUntil(lambda: not task.running, timeout=10_000)
    assert seen == ["started", ("phase", 1, 2, 3.5), ("phase", 2, 2, None), ("finished", "done")]

    errors = []
    bad = BackgroundTask(lambda: 1 / 0)
    bad.errored.connect(errors.append)
    qtbot.waitUntil(lambda: not bad.running, timeout=10_000)
    assert len(errors) == 1 and isinstance(errors[0], ZeroDivisionError)

    gate = threading.Event()
    ignored = []
    slow = BackgroundTask(lambda progress, cancel: gate.wait(5) and not cancel(), with_callbacks=True)
    slow.finished.connect(ignored.append)
    slow.discard()
    gate.set()
    assert wait_for_tasks(10)
    qtbot.wait(50)
    assert ignored == [] and not slow.running


def test_diagnostics_name_the_fits_priors_not_the_model_tabs(fitted):
    """The app prints the priors the fit used; editing the Model tab afterwards changes
    the next fit, not what is shown for this one."""
    w = fitted["window"]
    before = dict(w.state.priors)
    assert w.fit_result.posterior.spec.priors.sigma.scale == 2.5  # the module fit used the defaults
    w.state.update(priors={"sigma": {"df": 3.0, "scale": 1.0}})
    try:
        w._show_diagnostics()
        text = w.diagnostics_panel.verdict.text()
        assert "priors: \u03c3_F ~ half-Student-t(3, 0, 2.5), \u03bc ~ Student-t(3, 0, 2.5)" in text
        assert "half-Student-t(3, 0, 1)" not in text
    finally:
        w.state.update(priors=before)
        w._show_diagnostics()
