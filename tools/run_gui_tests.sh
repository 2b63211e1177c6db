#!/usr/bin/env bash
# Run the offscreen GUI tests in processes of their own, under a hang watchdog.
#
# They used to hang now and then in QCoreApplication.sendPostedEvents(DeferredDelete) between tests, and
# this script retried a hung run.  The cause was Python's cyclic garbage collector deleting pyqtgraph's Qt
# objects at the wrong moment: re-enabled from a window's destroyed() handler in the middle of a batch of
# deferred deletes, or run on a worker thread.  Collection now happens only on the GUI thread, for good
# (gui/plots.py GuiThreadGarbageCollector), workers never hold Qt objects (gui/workers.py), and every test
# starts and ends at a safe point (tests/gui/conftest.py).  A hang is now a bug: it is reported, not retried
# (pytest's faulthandler_timeout dumps every thread's stack before the watchdog stops the run).
#
# The files run in parallel, one per pytest-xdist worker (a worker per core, at most 4, as the non-GUI
# suite): each worker is a process of its own with its own QApplication, running its tests on its main
# thread, so the safe points above hold in each.  On a shared 2-core box (load 2-4) the 159 tests took
# 6 min 11 s in one process and 3 min 27 s on two workers, for the same CPU time (4.5 min).
# GUI_WORKERS=0 runs them in this process, one after the other (to read a hang's stacks more easily).
set -uo pipefail
PY=${PY:-.venv/bin/python}
# A hang is a run in which no test has finished for GUI_STALL seconds, not a run that is slow: on a box at
# load 12-17 a healthy run took well over the old 600-second whole-run limit and was killed at test 98 of
# 160.  Every finished test touches the heartbeat file (tests/gui/conftest.py); the watchdog below kills
# the run only when the heartbeat stops.  The longest GUI test takes about 40 s at load 5 and pytest's
# faulthandler_timeout (300 s, pyproject.toml) has dumped every thread's stack long before GUI_STALL.
GUI_STALL=${GUI_STALL:-600}
GUI_WORKERS=${GUI_WORKERS:-auto}
export QT_QPA_PLATFORM=offscreen
parallel=()
if [ "$GUI_WORKERS" != "0" ] && "$PY" -c "import xdist" 2>/dev/null; then
  parallel=(-n "$GUI_WORKERS" --maxprocesses 4 --dist loadfile)
fi
heartbeat=$(mktemp "${TMPDIR:-/tmp}/ddr-gui-heartbeat.XXXXXX")
trap 'rm -f "$heartbeat"' EXIT
export DDR_TEST_HEARTBEAT="$heartbeat"
# job control: pytest runs in a process group of its own (its id is $!), so that the watchdog, or a
# Ctrl-C here, stops pytest and its xdist workers together
set -m
"$PY" -m pytest tests/gui -p no:cacheprovider ${parallel[@]+"${parallel[@]}"} "$@" &
pid=$!
set +m
trap 'kill -TERM -- "-$pid" 2>/dev/null; exit 130' INT TERM
stalled=0
while kill -0 "$pid" 2>/dev/null; do
  sleep 2
  age=$(( $(date +%s) - $(stat -c %Y "$heartbeat" 2>/dev/null || date +%s) ))
  if [ "$age" -gt "$GUI_STALL" ]; then
    stalled=1
    kill -TERM -- "-$pid" 2>/dev/null
    sleep 5
    kill -KILL -- "-$pid" 2>/dev/null
    break
  fi
done
wait "$pid"
rc=$?
if [ "$stalled" -eq 1 ]; then
  echo "run_gui_tests: no GUI test finished for ${GUI_STALL}s: a hang; see the faulthandler stacks above" >&2
  rc=124
fi
exit "$rc"
