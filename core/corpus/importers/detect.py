"""Which reader a file needs: :func:`detect_format` and the :data:`IMPORTERS` registry.

Detection looks at the first 64 KiB only.  The foreign formats are tried
first, each by its ``sniff`` function, because their files also end in
``.json`` / ``.jsonl``; then the canonical layouts by extension, and for an
unhelpful extension by content.  A file none of them claims is an error that
lists what was tried and how to force a format.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from .. import schema
from ..issues import CorpusError, error
from . import hal, inspect_logs, normalized, pyirt, terminal_bench
from ._common import HEAD_BYTES, first_line, head_object

#: Importer modules by the ``format=`` / ``--format`` name that forces them.
IMPORTERS: dict[str, ModuleType] = {
    inspect_logs.FORMAT: inspect_logs,
    terminal_bench.FORMAT: terminal_bench,
    pyirt.FORMAT: pyirt,
    normalized.FORMAT: normalized,
    hal.FORMAT: hal,
}

#: What each format is, for messages and the GUI's format chooser.
DESCRIPTIONS: dict[str, str] = {
    inspect_logs.FORMAT: "Inspect AI evaluation logs (.eval or .json, one file or a folder; needs inspect-ai)",
    terminal_bench.FORMAT: "Terminal-Bench leaderboard meta.json ({\"results\": [{..., \"task_results\": {task: \"k/n\"}}]})",
    pyirt.FORMAT: "py-irt JSON lines ({\"subject_id\", \"responses\": {item: 0|1}} per line)",
    normalized.FORMAT: "BRIDGE normalized results or METR-style run rows (JSON lines with model, task_id, score)",
    hal.FORMAT: "HAL response matrix of Hardy et al. 2026 (CSV: run_id, benchmark, task_id, agent_name = scaffold, "
                "model_name, reasoning_effort, score)",
    "csv": "canonical comma-separated table",
    "tsv": "canonical tab-separated table",
    "jsonl": "canonical JSON lines (one flat record per line with benchmark, task, model, scaffold, ...)",
    "parquet": "canonical Parquet table",
}

_CANONICAL_BY_SUFFIX = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".parquet": "parquet", ".pq": "parquet"}
_JSON_SUFFIXES = (".jsonl", ".ndjson", ".json")


def _dotted(obj: dict, prefix: str = "") -> dict:
    """A nested JSON object's leaves by dotted name (``{"metadata": {"instance_id": ...}}`` ->
    ``metadata.instance_id``), as the JSON-lines reader flattens them."""
    out = {}
    for k, v in obj.items():
        if isinstance(v, dict):
            out.update(_dotted(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def is_canonical_record(obj: dict) -> bool:
    """True for a JSON object whose keys name at least three canonical facets, or, for a per-run
    export that nests its fields (``{"metadata": {"instance_id", "model_name", "resolved"}}``), two
    facets and a result under their dotted names.

    py-irt and normalized rows (sniffed before this) nest objects (``responses``, ``metadata``,
    verifier ``score``) and never name a scaffold.
    """
    if any(isinstance(v, list) for v in obj.values()):
        return False
    table = schema.synonym_table()
    nested = any(isinstance(v, dict) for v in obj.values())
    keys = _dotted(obj) if nested else obj
    named = {table.get(schema.normalise_name(str(k).rsplit(".", 1)[-1])) for k in keys}
    facets = len(named & set(schema.REQUIRED_FACETS))
    if not nested:
        return facets >= 3
    return facets >= 2 and bool(named & {schema.RESULT, schema.SUCCESSES})


def detect_format(path: str | Path) -> str:
    """Name the format of a corpus file.

    Returns
    -------
    str
        A key of :data:`IMPORTERS` (``"terminal-bench"``, ``"py-irt"``,
        ``"normalized"``) or a canonical layout (``"csv"``, ``"tsv"``,
        ``"jsonl"``, ``"parquet"``).

    Raises
    ------
    CorpusError
        When the file cannot be read, or no format claims it; the message lists
        the formats tried and the ``--format`` values that force one.
    """
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError as exc:
        raise CorpusError([error("unreadable", f"the file cannot be read ({exc.strerror or exc}).",
                                 "check the path and the file's permissions.", file=path)]) from None
    suffix = path.suffix.lower()
    if head.startswith(b"PAR1") or _CANONICAL_BY_SUFFIX.get(suffix) == "parquet":
        return "parquet"
    if not head.strip():
        raise CorpusError([error("empty", "the file is empty.", "check that it is the right file.", file=path)])
    for name, module in IMPORTERS.items():
        if module.sniff(path, head):
            return name
    if suffix in _CANONICAL_BY_SUFFIX:
        return _CANONICAL_BY_SUFFIX[suffix]
    obj = head_object(head)
    if obj is not None and is_canonical_record(obj):
        return "jsonl"
    if suffix not in _JSON_SUFFIXES and obj is None and b"\x00" not in head:
        header = first_line(head)
        if not header.startswith((b"{", b"[")) and (b"\t" in header or b"," in header):
            return "tsv" if header.count(b"\t") > header.count(b",") else "csv"
    start = first_line(head)
    if obj is not None:
        what = "a JSON object that is none of the known layouts"
    elif start.startswith((b"{", b"[")):
        what = "JSON that is not one object per line"
    elif b"\x00" in head:
        what = "binary data"
    else:
        what = "text without a delimiter"
    tried = "; ".join(f"{k}: {v}" for k, v in DESCRIPTIONS.items())
    raise CorpusError([error("unknown-format", f"cannot tell the format of this file (its first line is {what}). "
                             f"Tried: {tried}.",
                             f"force a format with --format (format=...), one of: {', '.join(DESCRIPTIONS)}.",
                             file=path, row=1)])
