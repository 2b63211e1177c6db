"""Run one measurement in a fresh Python process and read back its ``RESULT {json}`` line.

The compile benches time a fit from an empty (or a given) compilation cache, which only a new process
sees; each child prints one ``RESULT`` line with its figures.
"""

from __future__ import annotations

import json
import subprocess
import sys


def run_child(code: str, args, env: dict, cwd: str | None = None) -> dict:
    """``python -c code *args`` under ``env``; the dict of its ``RESULT`` line, or the child's error."""
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env, capture_output=True, text=True,
                         check=False, cwd=cwd)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"the fit process failed:\n{out.stderr[-3000:]}")
