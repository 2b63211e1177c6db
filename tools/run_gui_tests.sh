#!/usr/bin/env bash
# Run the offscreen GUI tests in processes of their own, under a timeout.
#
# They used to hang now and then in QCoreApplication.sendPostedEvents(DeferredDelete) between tests, and
# this script retried a hung run.  The cause was Python's cyclic garbage collector deleting pyqtgraph's Qt
# objects at the wrong moment: re-enabled from a window's destroyed() handler in the middle of a batch of
# deferred deletes, or run on a worker thread.  Collection now happens only on the GUI thread, for good
# (gui/plots.py GuiThreadGarbageCollector), workers never hold Qt objects (gui/workers.py), and every test
# starts and ends at a safe point (tests/gui/conftest.py).  A hang is now a bug: it is reported, not retried
# (pytest's faulthandler_timeout dumps every thread's stack before the timeout kills the run).
#
# The files run in parallel, one per pytest-xdist worker (a worker per core, at most 4, as the non-GUI
# suite): each worker is a process of its own with its own QApplication, running its tests on its main
# thread, so the safe points above hold in each.  On a shared 2-core box (load 2-4) the 159 tests took
# 6 min 11 s in one process and 3 min 27 s on two workers, for the same CPU time (4.5 min).
# GUI_WORKERS=0 runs them in this process, one after the other (to read a hang's stacks more easily).
set -uo pipefail
PY=${PY:-.venv/bin/python}
GUI_TIMEOUT=${GUI_TIMEOUT:-600}
GUI_WORKERS=${GUI_WORKERS:-auto}
export QT_QPA_PLATFORM=offscreen
parallel=()
if [ "$GUI_WORKERS" != "0" ] && "$PY" -c "import xdist" 2>/dev/null; then
  parallel=(-n "$GUI_WORKERS" --maxprocesses 4 --dist loadfile)
fi
timeout "$GUI_TIMEOUT" "$PY" -m pytest tests/gui -p no:cacheprovider ${parallel[@]+"${parallel[@]}"} "$@"
rc=$?
if [ "$rc" -eq 124 ]; then
  echo "run_gui_tests: the GUI tests hung for ${GUI_TIMEOUT}s; see the faulthandler stacks above" >&2
fi
exit "$rc"
