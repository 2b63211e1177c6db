"""Long work off the GUI thread: plain Python threads polled from a QTimer.

A worker never touches Qt.  It runs a core function (which knows nothing of Qt
either) with a progress callback that puts ``(phase, i, total, eta)`` on a
queue and a cancel callback that reads a :class:`threading.Event`; the GUI
thread polls the queue and the future every ``interval_ms`` and calls the
handlers.  Emitting Qt signals from worker threads hung the offscreen test
suite now and then (see gui/dstudy_panel.py); polling cannot.
"""

from __future__ import annotations

import concurrent.futures as cf
import queue
import threading
from typing import Any, Callable

from PySide6.QtCore import QObject, QTimer

_POOL: cf.ThreadPoolExecutor | None = None


def _pool() -> cf.ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = cf.ThreadPoolExecutor(max_workers=2, thread_name_prefix="ddr-worker")
    return _POOL


class BackgroundTask(QObject):
    """Run ``fn(progress=..., cancel=...)`` (or ``fn()``) on a worker thread.

    Parameters
    ----------
    fn
        The work; it receives ``progress`` and ``cancel`` keyword arguments when
        ``with_callbacks`` is true.
    on_done, on_error, on_progress
        Called on the GUI thread with the result, the exception, or
        ``(phase, i, total, eta)``.
    parent
        Qt parent that owns the polling timer.
    """

    def __init__(self, fn: Callable[..., Any], *, on_done: Callable[[Any], None],
                 on_error: Callable[[BaseException], None], on_progress: Callable[..., None] | None = None,
                 with_callbacks: bool = False, parent: QObject | None = None, interval_ms: int = 30):
        super().__init__(parent)
        self._events: queue.Queue = queue.Queue()
        self._cancel = threading.Event()
        self.on_done, self.on_error, self.on_progress = on_done, on_error, on_progress
        if with_callbacks:
            self._future = _pool().submit(fn, progress=self._progress, cancel=self._cancel.is_set)
        else:
            self._future = _pool().submit(fn)
        # keep Python's cyclic collector off worker threads while this job runs (see plots.py)
        from .plots import GuiThreadGarbageCollector

        GuiThreadGarbageCollector.track(self._future)
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_poll)
        self._timer.start()

    # called on the worker thread: no Qt here
    def _progress(self, phase: str, i: int, total: int, eta=None) -> None:
        self._events.put((phase, i, total, eta))

    def cancel(self) -> None:
        """Ask the work to stop at its next check (cooperative)."""
        self._cancel.set()

    @property
    def running(self) -> bool:
        return not self._future.done()

    def _on_poll(self) -> None:
        last = None
        while True:
            try:
                last = self._events.get_nowait()
            except queue.Empty:
                break
        if last is not None and self.on_progress is not None:
            self.on_progress(*last)
        if not self._future.done():
            return
        self._timer.stop()
        exc = self._future.exception()
        if exc is not None:
            self.on_error(exc)
        else:
            self.on_done(self._future.result())
