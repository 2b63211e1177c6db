"""Importers of foreign result formats into the canonical corpus.

Each importer module has ``sniff(path, head) -> bool`` (cheap detection on the
first 64 KiB) and ``read(path, **options) -> Corpus``:

- :mod:`.terminal_bench`: the Terminal-Bench leaderboard ``meta.json``;
- :mod:`.pyirt`: py-irt response JSON lines, with an alias file that splits
  subject ids into scaffold and model and item ids into benchmark and task;
- :mod:`.normalized`: BRIDGE normalized results and METR-style run rows;
- :mod:`.inspect_logs`: Inspect AI evaluation logs, through inspect_ai's log API;
- :mod:`.hal`: the HAL response matrix of Hardy et al. (2026) (``agent_name`` is the scaffold).

:func:`.detect.detect_format` names the format of a file and
:data:`IMPORTERS` maps the ``--format`` names to the modules.
"""

from .detect import DESCRIPTIONS, IMPORTERS, detect_format

__all__ = ["DESCRIPTIONS", "IMPORTERS", "detect_format"]
