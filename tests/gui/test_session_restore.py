"""The app starts whatever the last session file holds: the file is set aside and the status bar says why.

One window per case costs seconds; the loader itself meets ~50 broken files in tests/hostile.
"""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from ddr_explorer.gui.main_window import MainWindow  # noqa: E402

BROKEN = {
    "utf16": '{"format": "ddr-explorer-analysis", "version": 2}'.encode("utf-16"),
    "400-digits": ('{"n_models": ' + "9" * 400 + "}").encode(),
    "deep": ("[" * 100_000 + "]" * 100_000).encode(),
    "draws-infinity": b'{"sampler": {"draws": Infinity}}',
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_unusable_last_session_is_set_aside_and_the_app_starts(qtbot, name):
    w = MainWindow()
    qtbot.addWidget(w)
    path = w.last_session_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(BROKEN[name])
    assert w.restore_last_session() is False
    assert not path.exists()  # moved, so the next start does not meet it again
    aside = list(path.parent.glob(path.name + ".unusable-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == BROKEN[name]  # kept, never deleted
    message = w.statusBar().currentMessage()
    assert message.startswith("The last session could not be restored:") and str(aside[0]) in message
    assert not w.loading
    aside[0].unlink()
