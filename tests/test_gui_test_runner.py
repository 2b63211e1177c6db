"""``tools/run_gui_tests.sh``: a slow run is not a hang; a run where no test finishes is stopped.

A fake interpreter stands in for pytest: it touches the runner's heartbeat file as finished tests do
(tests/gui/conftest.py), or stops touching it as a hung run would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "tools" / "run_gui_tests.sh"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the runner is a bash script")

FAKE = """#!/usr/bin/env bash
# "python -c 'import xdist'": no xdist, so the runner starts one process
if [ "$1" = "-c" ]; then exit 1; fi
echo $$ > "{pidfile}"
for i in $(seq 1 {beats}); do sleep 1; touch "$DDR_TEST_HEARTBEAT"; done
sleep {hang}
exit 0
"""


def _run(tmp_path, *, beats: int, hang: int, stall: int, old_limit: int):
    fake = tmp_path / "python"
    pidfile = tmp_path / "pid"
    fake.write_text(FAKE.format(pidfile=pidfile, beats=beats, hang=hang))
    fake.chmod(0o755)
    # GUI_TIMEOUT was the old whole-run limit: a healthy run longer than it must pass now
    env = dict(os.environ, PY=str(fake), GUI_STALL=str(stall), GUI_TIMEOUT=str(old_limit))
    t0 = time.monotonic()
    done = subprocess.run(["bash", str(RUNNER)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    return done, time.monotonic() - t0, int(pidfile.read_text())


def test_a_slow_run_that_keeps_finishing_tests_passes(tmp_path):
    # 8 s of tests, one finishing every second: twice the old limit, never GUI_STALL without a finish
    done, took, _ = _run(tmp_path, beats=8, hang=0, stall=4, old_limit=4)
    assert done.returncode == 0, done.stderr
    assert took >= 8
    assert "hang" not in done.stderr


def test_a_run_where_no_test_finishes_is_stopped_as_a_hang(tmp_path):
    done, took, pid = _run(tmp_path, beats=1, hang=300, stall=3, old_limit=600)
    assert done.returncode == 124
    assert "no GUI test finished for 3s" in done.stderr
    assert took < 60
    with pytest.raises(ProcessLookupError):  # the fake pytest was stopped, not left running
        os.kill(pid, 0)
