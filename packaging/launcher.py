"""Entry point of the frozen build: one program, two names.

PyInstaller makes two executables from this script in one folder: ``ddr-explorer``
(the desktop app; ``ddr-explorer --self-test`` checks the build) and ``ddr`` (the headless
command line).  Both share every collected library, so the second costs a few megabytes,
not a second copy of JAX and Qt.  The executable's own name picks which ``main`` runs.
"""

import multiprocessing
import os
import sys


def _program() -> str:
    name = os.path.basename(sys.executable if getattr(sys, "frozen", False) else sys.argv[0]).lower()
    return "ddr" if name in ("ddr", "ddr.exe") else "ddr-explorer"


if __name__ == "__main__":
    multiprocessing.freeze_support()  # no-op except in frozen Windows children (bench uses spawn)
    if _program() == "ddr":
        from ddr_explorer.core.cli import main
    else:
        from ddr_explorer.gui.app import main
    sys.exit(main())
