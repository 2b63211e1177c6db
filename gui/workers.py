"""Long work off the GUI thread: plain Python threads polled from a QTimer.

A worker never touches Qt.  It runs a core function (which knows nothing of Qt
either) with a progress callback that puts ``(phase, i, total, eta)`` on a
queue and a cancel callback that reads a :class:`threading.Event`; the GUI
thread polls the queue and the future every ``interval_ms`` and calls the
handlers.  Emitting Qt signals from worker threads hung the offscreen test
suite now and then; polling cannot.

The worker thread must never hold the last reference to a Qt object either:
when a work item finishes, the executor drops its callable and arguments *on
the worker thread*, and a Qt wrapper released there is deleted on the wrong
thread.  So the callbacks handed to the work are closures over a queue and an
event (plain Python), never bound methods of the :class:`BackgroundTask`.
"""

from __future__ import annotations

import concurrent.futures as cf
import queue
import threading
import time
from typing import Any, Callable

from PySide6.QtCore import QObject, QTimer

_POOL: cf.ThreadPoolExecutor | None = None
_FUTURES: list[cf.Future] = []


def _pool() -> cf.ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = cf.ThreadPoolExecutor(max_workers=2, thread_name_prefix="ddr-worker")
    return _POOL


def wait_for_tasks(timeout_s: float | None = 120.0) -> bool:
    """Block until every :class:`BackgroundTask` job submitted so far has finished (tests, shutdown).

    Returns False if some job still runs after ``timeout_s`` seconds.
    """
    pending = [f for f in _FUTURES if not f.done()]
    _, not_done = cf.wait(pending, timeout_s)
    _FUTURES[:] = [f for f in _FUTURES if not f.done()]
    return not not_done


def _callbacks(events: queue.Queue, cancel: threading.Event):
    """Progress and cancel callbacks for a worker: plain closures, no reference to any Qt object."""
    def progress(phase: str, i: int, total: int, eta=None) -> None:
        events.put((phase, i, total, eta))

    return progress, cancel.is_set


class BackgroundTask(QObject):
    """Run ``fn(progress=..., cancel=...)`` (or ``fn()``) on a worker thread.

    Parameters
    ----------
    fn
        The work; it receives ``progress`` and ``cancel`` keyword arguments when
        ``with_callbacks`` is true.  It must not capture Qt objects.
    on_done, on_error, on_progress
        Called on the GUI thread with the result, the exception, or
        ``(phase, i, total, eta)`` (every event, in order).
    parent
        Qt parent that owns the polling timer.

    Attributes
    ----------
    started_at, finished_at
        ``time.perf_counter()`` at submission and when the GUI thread saw the end.
    """

    def __init__(self, fn: Callable[..., Any], *, on_done: Callable[[Any], None],
                 on_error: Callable[[BaseException], None], on_progress: Callable[..., None] | None = None,
                 with_callbacks: bool = False, parent: QObject | None = None, interval_ms: int = 30):
        super().__init__(parent)
        from .plots import GuiThreadGarbageCollector

        # Collection off worker threads *before* the job allocates anything (see plots.py).
        GuiThreadGarbageCollector.track()
        self._events: queue.Queue = queue.Queue()
        self._cancel = threading.Event()
        self.on_done, self.on_error, self.on_progress = on_done, on_error, on_progress
        self.started_at = time.perf_counter()
        self.finished_at: float | None = None
        if with_callbacks:
            progress, cancel = _callbacks(self._events, self._cancel)
            self._future = _pool().submit(fn, progress=progress, cancel=cancel)
        else:
            self._future = _pool().submit(fn)
        _FUTURES.append(self._future)
        GuiThreadGarbageCollector.track(self._future)
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_poll)
        self._timer.start()

    def cancel(self) -> None:
        """Ask the work to stop at its next check (cooperative)."""
        self._cancel.set()

    @property
    def cancel_requested(self) -> bool:
        return self._cancel.is_set()

    @property
    def running(self) -> bool:
        """True until the GUI thread has handled the end of the job."""
        return self.finished_at is None

    def _on_poll(self) -> None:
        if self.on_progress is not None:
            while True:
                try:
                    event = self._events.get_nowait()
                except queue.Empty:
                    break
                self.on_progress(*event)
        if not self._future.done():
            return
        self._timer.stop()
        self.finished_at = time.perf_counter()
        exc = self._future.exception()
        if exc is not None:
            self.on_error(exc)
        else:
            self.on_done(self._future.result())


__all__ = ["BackgroundTask", "wait_for_tasks"]
