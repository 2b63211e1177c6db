"""Problems found in an input file, phrased so that a user can act on them.

Every problem names the file, the row (a 1-based line number of the file where
one applies), the column, what is wrong and what would fix it.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class CorpusIssue:
    """One problem in a corpus file.

    Parameters
    ----------
    severity
        ``"error"`` (the corpus cannot be used) or ``"warning"`` (listed, not fatal).
    code
        A short stable identifier, e.g. ``"missing-column"``.
    message
        What is wrong, in words.
    fix
        What would fix it.
    file
        The file the problem is in.
    row
        1-based line number in the file (the header of a CSV is line 1), or None.
    column
        The column (as written in the file) or JSON field, or None.
    """

    severity: Severity
    code: str
    message: str
    fix: str = ""
    file: str | None = None
    row: int | None = None
    column: str | None = None
    count: int = 1

    def location(self) -> str:
        parts = []
        if self.file:
            parts.append(str(self.file))
        if self.row is not None:
            parts.append(f"line {self.row}")
        if self.column:
            parts.append(f"column '{self.column}'")
        return ", ".join(parts)

    def __str__(self) -> str:
        loc = self.location()
        text = f"{loc}: {self.message}" if loc else self.message
        if self.count > 1:
            text += f" ({self.count} rows in all)"
        if self.fix:
            text += f" Fix: {self.fix}"
        return text

    def to_dict(self) -> dict:
        """The issue as JSON: the line number under ``"line"`` (what it is: the file's line, the header
        of a CSV being line 1), not ``"row"``, which read as a data row's index."""
        d = asdict(self)
        d["line"] = d.pop("row")
        return d


class CorpusError(ValueError):
    """The corpus cannot be used; ``issues`` lists every error found."""

    def __init__(self, issues: Iterable[CorpusIssue]):
        self.issues = [i for i in issues]
        if not self.issues:
            raise ValueError("CorpusError needs at least one issue")
        lines = [str(i) for i in self.issues[:20]]
        if len(self.issues) > 20:
            lines.append(f"... and {len(self.issues) - 20} more problems")
        super().__init__("\n".join(lines))


#: The longest run of characters without a space an issue shows whole; a longer one (a 200 KB id) is cut.
MAX_SHOWN = 120
_LONG = re.compile(r"\S{%d,}" % (MAX_SHOWN + 1))


def shortened(text: str | None) -> str | None:
    """``text`` with every run of more than :data:`MAX_SHOWN` non-space characters cut to its start and its
    length (an error message printed a 200 KB id whole)."""
    if text is None or len(text) <= MAX_SHOWN:
        return text
    return _LONG.sub(lambda m: f"{m.group()[:60]}...({len(m.group()):,} characters)", text)


def error(code: str, message: str, fix: str = "", *, file: str | Path | None = None,
          row: int | None = None, column: str | None = None, count: int = 1) -> CorpusIssue:
    """Shorthand for an error-severity :class:`CorpusIssue` (long names in it shortened: :func:`shortened`)."""
    return CorpusIssue("error", code, shortened(message), shortened(fix), None if file is None else str(file), row,
                       shortened(column), count)


def warning(code: str, message: str, fix: str = "", *, file: str | Path | None = None,
            row: int | None = None, column: str | None = None, count: int = 1) -> CorpusIssue:
    """Shorthand for a warning-severity :class:`CorpusIssue` (long names in it shortened)."""
    return CorpusIssue("warning", code, shortened(message), shortened(fix), None if file is None else str(file), row,
                       shortened(column), count)
