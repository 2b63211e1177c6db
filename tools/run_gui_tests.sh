#!/usr/bin/env bash
# Run the offscreen GUI tests.  A known, intermittent deadlock of PySide6 while
# deleting widgets between tests (QCoreApplication.sendPostedEvents(DeferredDelete)
# in tests/gui/test_panels.py's fixture) can hang a run; a hung run (no progress
# for $GUI_TIMEOUT seconds) is retried once and reported, a failing run is not.
set -uo pipefail
PY=${PY:-.venv/bin/python}
GUI_TIMEOUT=${GUI_TIMEOUT:-600}
export QT_QPA_PLATFORM=offscreen
for attempt in 1 2; do
  timeout "$GUI_TIMEOUT" "$PY" -m pytest tests/gui -p no:cacheprovider "$@"
  rc=$?
  if [ "$rc" -ne 124 ]; then
    exit "$rc"
  fi
  echo "run_gui_tests: attempt $attempt hung for ${GUI_TIMEOUT}s (known PySide6 deferred-delete deadlock); retrying" >&2
done
exit 124
