"""Long work off the GUI thread, one mechanism for the whole app: :class:`BackgroundTask`.

Loading a corpus, fitting (which waits on a child process), the analyses, the DDR sheet, the
device probe and the D-study tab's cost frontier all run through it.  Like superqt's
``thread_worker`` it reports ``started``, ``progress``, ``finished`` and ``errored`` signals
(and the same as plain callbacks), always on the GUI thread, and it can be cancelled.

Plain Python threads polled from a QTimer do the work.

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

from PySide6.QtCore import QObject, QTimer, Signal

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
        Optional callbacks, called on the GUI thread with the result, the exception, or
        ``(phase, i, total, eta)`` (every event, in order), right before the matching signal.
    parent
        Qt parent that owns the polling timer.

    Signals
    -------
    started()
        The job was handed to a worker thread (emitted on the first poll).
    progress(str, int, int, object)
        ``(phase, i, total, eta_seconds or None)``.
    finished(object)
        The result.
    errored(object)
        The exception (cancellation included: :class:`~ddr_explorer.core.model.sampler.FitCancelled`).

    Attributes
    ----------
    started_at, finished_at
        ``time.perf_counter()`` at submission and when the GUI thread saw the end.
    """

    started = Signal()
    progress = Signal(str, int, int, object)
    finished = Signal(object)
    errored = Signal(object)

    def __init__(self, fn: Callable[..., Any], *, on_done: Callable[[Any], None] | None = None,
                 on_error: Callable[[BaseException], None] | None = None,
                 on_progress: Callable[..., None] | None = None,
                 with_callbacks: bool = False, parent: QObject | None = None, interval_ms: int = 30):
        super().__init__(parent)
        self._announced = False
        self._discarded = False
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

    def discard(self) -> None:
        """Forget the job: a queued job never starts, a running one is asked to stop and its end is ignored."""
        self._discarded = True
        self._cancel.set()
        self._future.cancel()
        self._timer.stop()
        self.finished_at = time.perf_counter()

    @property
    def cancel_requested(self) -> bool:
        return self._cancel.is_set()

    @property
    def running(self) -> bool:
        """True until the GUI thread has handled the end of the job."""
        return self.finished_at is None

    def _on_poll(self) -> None:
        if self._discarded:
            return
        if not self._announced and (self._future.running() or self._future.done()):
            self._announced = True
            self.started.emit()
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                break
            if self.on_progress is not None:
                self.on_progress(*event)
            self.progress.emit(*event)
        if not self._future.done():
            return
        self._timer.stop()
        self.finished_at = time.perf_counter()
        exc = self._future.exception()
        if exc is not None:
            if self.on_error is not None:
                self.on_error(exc)
            self.errored.emit(exc)
        else:
            result = self._future.result()
            if self.on_done is not None:
                self.on_done(result)
            self.finished.emit(result)


__all__ = ["BackgroundTask", "wait_for_tasks"]
