"""A corpus whose fit is in the cache opens with its posterior: no Fit press, nothing sampled."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from ddr_explorer.gui.main_window import TABS, MainWindow  # noqa: E402


def _small_corpus(tmp_path):
    import ddr_batch_fakes as bf

    sim = bf.simulate_module().simulate_per_benchmark(n_tasks=8, n_models=4, n_scaffolds=2, n_pairs=8,
                                                      trials_per_cell=2, seed=9)
    path = tmp_path / "small.csv"
    sim.table.to_csv(path, index=False)
    return path


def test_open_recent_reopens_the_cached_fit_at_once(qtbot, tmp_path, fake_sampler):
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.fitting import fit_corpus
    from ddr_explorer.core.session import AnalysisState

    path, cache = _small_corpus(tmp_path), tmp_path / "cache"
    corpus = load_corpus(path)
    state = AnalysisState.from_corpus(corpus)
    first = fit_corpus(corpus, state.model_spec(), state.sampler_settings(), cache_dir=cache)  # an earlier session
    assert not first.from_cache
    n_fits = len(fake_sampler)

    w = MainWindow()
    qtbot.addWidget(w)
    w.cache_dir = cache
    w.add_recent_file(str(path))
    w._fill_recent_menu()
    action = next(a for a in w.recent_menu.actions() if a.text() == str(path))
    with qtbot.waitSignal(w.fit_finished, timeout=20_000) as shown:
        action.trigger()
    result = shown.args[0]
    assert result.from_cache and result.cache_path == first.cache_path
    assert len(fake_sampler) == n_fits  # reopened, not sampled
    assert w.components_panel is not None and w.dstudy_panel is not None and w.ranks_panel is not None
    # the D-study, or the Diagnostics of an unconverged fit (the stand-in's short run is one)
    want = "D-study" if result.posterior.diagnostics.converged else "Diagnostics"
    assert w.tabs.currentIndex() == TABS.index(want)
    assert w.model_panel.progress.format() == "reopened from the cache"
    assert "Reopened the cached fit" in w.model_panel.log_text()


def test_a_corpus_without_a_cached_fit_waits_for_fit(qtbot, tmp_path, fake_sampler):
    path = _small_corpus(tmp_path)
    w = MainWindow()
    qtbot.addWidget(w)
    w.cache_dir = tmp_path / "empty-cache"
    with qtbot.waitSignal(w.corpus_loaded, timeout=20_000):
        w.open_corpus(path)
    from ddr_explorer.gui.workers import wait_for_tasks

    assert wait_for_tasks(30)  # the look-up in the cache ended (and found nothing)
    qtbot.wait(100)
    assert w.fit_result is None and w.components_panel is None and len(fake_sampler) == 0
