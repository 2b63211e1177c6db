"""No module of the app is a room too big to find one's way in: each stays under 1,000 lines.

A flow that outgrows the main window goes into a module of its own beside it (gui/corpus_opening.py,
gui/fit_flow.py, gui/analysis_jobs.py, gui/ddr_sheet_export.py); a command of ``ddr`` into core/cli_commands/;
a part of a big core module into a module named after what it holds (core/posterior_summary.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The most lines a product module may have.
MAX_LINES = 1000


@pytest.mark.parametrize("package", ["gui", "core"])
def test_every_module_fits_in_a_thousand_lines(package):
    sizes = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines())
             for p in sorted((ROOT / package).rglob("*.py"))}
    assert sizes, f"no modules found under {package}/"
    too_big = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert not too_big, f"modules over {MAX_LINES} lines (split them by what they hold): {too_big}"
