#!/usr/bin/env bash
# Run the offscreen GUI tests in their own process, under a timeout.
#
# They used to hang now and then in QCoreApplication.sendPostedEvents(DeferredDelete) between tests, and
# this script retried a hung run.  The cause was Python's cyclic garbage collector deleting pyqtgraph's Qt
# objects at the wrong moment: re-enabled from a window's destroyed() handler in the middle of a batch of
# deferred deletes, or run on a worker thread.  Collection now happens only on the GUI thread, for good
# (gui/plots.py GuiThreadGarbageCollector), workers never hold Qt objects (gui/workers.py), and every test
# starts and ends at a safe point (tests/gui/conftest.py).  A hang is now a bug: it is reported, not retried
# (pytest's faulthandler_timeout dumps every thread's stack before the timeout kills the run).
set -uo pipefail
PY=${PY:-.venv/bin/python}
GUI_TIMEOUT=${GUI_TIMEOUT:-600}
export QT_QPA_PLATFORM=offscreen
timeout "$GUI_TIMEOUT" "$PY" -m pytest tests/gui -p no:cacheprovider "$@"
rc=$?
if [ "$rc" -eq 124 ]; then
  echo "run_gui_tests: the GUI tests hung for ${GUI_TIMEOUT}s; see the faulthandler stacks above" >&2
fi
exit "$rc"
