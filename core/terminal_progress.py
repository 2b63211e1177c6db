"""Progress of long work on the terminal (stderr) for the ``ddr`` commands: phase, iteration, ETA.

Kept apart from :mod:`.cli` so that the commands' module stays a thin layer of argument handling.
"""

from __future__ import annotations

import math
import sys
import time

__all__ = ["TerminalProgress", "run_with_progress"]

#: The exit code of invalid input (as :mod:`.cli`'s).
EXIT_INVALID = 2


class TerminalProgress:
    """Progress of a fit on stderr: phase, iteration, ETA.

    On a terminal one updating line; in a log (stderr not a terminal) a line when a phase
    starts or ends and at most every ``every`` seconds in between, so that a batch log of a
    long fit shows it is alive without a line per chunk.
    """

    def __init__(self, enabled: bool, every: float = 30.0, clock=time.monotonic):
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self.last = None
        self.every = every
        self.clock = clock
        self.printed_at = -math.inf

    def __call__(self, phase: str, i: int, total: int, eta) -> None:
        if not self.enabled:
            return
        eta_txt = "" if eta is None else f", about {eta:.0f} s left"
        line = f"{phase}: {i}/{total}{eta_txt}"
        if self.tty:
            print("\r" + line.ljust(60), end="", file=sys.stderr, flush=True)
        elif phase != self.last or i == total or self.clock() - self.printed_at >= self.every:
            print(line, file=sys.stderr, flush=True)
            self.printed_at = self.clock()
        self.last = phase

    def done(self) -> None:
        if self.enabled and self.tty:
            print(file=sys.stderr)


def run_with_progress(progress: "TerminalProgress", cancelled: type, invalid: tuple, job):
    """Run ``job()`` under a progress line: ``(result, None)``, or ``(None, exit code)`` with the reason on
    stderr (130 when the user cancelled, 2 for invalid input)."""
    try:
        result = job()
    except cancelled as exc:
        progress.done()
        print(f"ddr: {exc}", file=sys.stderr)
        return None, 130
    except invalid as exc:
        progress.done()
        print(f"ddr: {exc}", file=sys.stderr)
        return None, EXIT_INVALID
    progress.done()
    return result, None
