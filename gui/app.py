"""Start-up of the DDR Explorer desktop app (``ddr-explorer``).

This first window opens a corpus (menu, command line or drag and drop; the
bundled demo corpus on first start), loads it off the GUI thread and shows the
summary that ``ddr inspect`` prints, from the same core function.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..core.files import demo_corpus_path  # noqa: F401 - the demo corpus, re-exported for scripts


def main(argv: list[str] | None = None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    if "--self-test" in raw:  # before anything loads Qt: the self-test sets QT_QPA_PLATFORM=offscreen
        from .self_test import main as self_test

        return self_test([a for a in raw if a != "--self-test"])
    parser = argparse.ArgumentParser(prog="ddr-explorer", description="DDR Explorer desktop app")
    parser.add_argument("--self-test", action="store_true",
                        help="check the installation offscreen (tiny fit, cache, sheet) and exit; "
                             "--self-test --help lists its options")
    parser.add_argument("path", nargs="?", type=Path, help="corpus to open (default: the demo corpus)")
    parser.add_argument("--format", help="force the input format")
    parser.add_argument("--screenshot", type=Path, help="save a screenshot of the window once loaded, then quit")
    parser.add_argument("--check-system", action="store_true",
                        help="Linux: check that the system libraries Qt's platform plugin needs are installed "
                             "(exit 0), or say which and how to install them (exit 3)")
    args = parser.parse_args(argv)
    if args.screenshot and "QT_QPA_PLATFORM" not in os.environ:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"

    # Linux: before any Qt module loads, check that Qt's platform plugin can load here;
    # a missing system library or display is a message and exit code 3/4, not Qt's abort
    from .preflight import check_system, ensure_startable

    if args.check_system:
        return check_system()
    code = ensure_startable()
    if code:
        return code

    from PySide6.QtWidgets import QApplication

    from .main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("DDR Explorer")
    window = MainWindow()
    if args.screenshot:
        window.resize(1280, 800)  # the size every view is tested to fit (gui/window_size.py)
    window.show()
    if args.path is not None:
        window.open_corpus(args.path, args.format)
    elif args.screenshot or not window.restore_last_session():
        window.open_corpus(demo_corpus_path())  # first start: the bundled demo corpus
    if args.screenshot:
        def shoot() -> None:
            if window.loading:
                from PySide6.QtCore import QTimer

                QTimer.singleShot(100, shoot)
                return
            window.grab().save(str(args.screenshot))
            app.quit()

        from PySide6.QtCore import QTimer

        QTimer.singleShot(200, shoot)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
