"""Variance components reported elsewhere (a paper's table), read for a D-study.

Two layouts are accepted, both naming the scale explicitly because a paper may
report standard deviations (seed 000 (Hardy et al. 2026) Table 8) or variances (seed 003 (DDR paper 2026) Table 1):

JSON::

    {"scale": "sd", "components": {"model": 0.78, "benchmark:model": 0.52, ...},
     "residual": 3.29}                      # optional; pi^2/3 by default

or ``{"sigma": {...}}`` / ``{"sigma2": {...}}``.  A value may be a list of
posterior draws instead of one number.

CSV (or TSV)::

    term,sigma                 # or: term,sigma2 (also: sd / variance)
    model,0.78
    benchmark:model,0.52

Terms are written with facets joined by ``":"`` (``benchmark:task:model``);
``residual`` (or ``e``) overrides pi^2/3.  A facet must be one of
:data:`KNOWN_FACETS`, spelled as there (lower case; spaces around a name are
layout): ``"Task"`` or ``"tasks"`` is refused with the line and the known
facets, never read as a new facet that no design size (``--n-tasks``) reaches.
The file is read through the side-file gate (:mod:`.side_files`).
"""

from __future__ import annotations

import json
from pathlib import Path

from .reliability import _RESIDUAL_KEYS, VarianceComponents
from .side_files import csv_rows, line_of, loads_json, read_side_text

#: The facets a variance term may name: the corpus's facets, seed 003's agent and its extra facets.
KNOWN_FACETS = ("benchmark", "task", "model", "scaffold", "agent", "step", "error_category", "judge")

_SD = ("sigma", "sd", "std", "standard_deviation")
_VAR = ("sigma2", "sigma^2", "variance", "var", "s2")


class ComponentsFileError(ValueError):
    """The components file cannot be read; the message names file, line and fix."""


def read_components(path: str | Path) -> VarianceComponents:
    """Read variance components from a JSON or CSV/TSV file (see the module docstring)."""
    path = Path(path)
    text = read_side_text(path, "components file", error=ComponentsFileError)
    if path.suffix.lower() == ".json" or text.lstrip().startswith("{"):
        return _from_json(path, text)
    return _from_delimited(path, text)


def check_terms(path: Path, terms, line) -> None:
    """Refuse a term that names a facet outside :data:`KNOWN_FACETS` (``line(term)``: its line, or None)."""
    for term in terms:
        if str(term).strip() in _RESIDUAL_KEYS:
            continue
        for facet in str(term).split(":"):
            name = facet.strip()
            if name in KNOWN_FACETS:
                continue
            near = next((k for k in KNOWN_FACETS if k == name.lower() or k == name.lower().rstrip("s")), None)
            where = f", line {line(term)}" if line(term) else ""
            hint = f"did you mean '{near}'? " if near else ""
            raise ComponentsFileError(f"{path}{where}: the term {term!r} names an unknown facet {name!r}; {hint}a "
                                      f"term joins facets from {', '.join(KNOWN_FACETS)} with ':' (or is "
                                      "'residual')")


def _from_json(path: Path, text: str) -> VarianceComponents:
    obj = loads_json(text, path, "components file", error=ComponentsFileError)
    if not isinstance(obj, dict):
        raise ComponentsFileError(f"{path}: expected a JSON object with 'scale' and 'components'.")
    residual = obj.get("residual")
    if "components" in obj:
        scale = str(obj.get("scale", "")).lower()
        if scale in _SD:
            scale = "sd"
        elif scale in _VAR:
            scale = "variance"
        else:
            raise ComponentsFileError(f"{path}: say whether the values are standard deviations or variances: "
                                      "add \"scale\": \"sd\" or \"scale\": \"variance\".")
        values = obj["components"]
    elif "sigma" in obj or "sigma2" in obj:
        scale = "sd" if "sigma" in obj else "variance"
        values = obj["sigma" if "sigma" in obj else "sigma2"]
    else:
        raise ComponentsFileError(f"{path}: no 'components' (with 'scale'), 'sigma' or 'sigma2' object found.")
    if not isinstance(values, dict) or not values:
        raise ComponentsFileError(f"{path}: the components must be a non-empty object of term -> value.")
    check_terms(path, values, lambda t: line_of(text, json.dumps(t, ensure_ascii=False)))
    try:
        return VarianceComponents.from_mapping(values, residual=residual, scale=scale, source=str(path))
    except ValueError as exc:
        raise ComponentsFileError(f"{path}: {exc}") from None


def _from_delimited(path: Path, text: str) -> VarianceComponents:
    if not text.strip():
        raise ComponentsFileError(f"{path}: the file is empty.")
    delim = "\t" if "\t" in text.splitlines()[0] else ","
    rows = csv_rows(text, path, "components file", error=ComponentsFileError, delimiter=delim)
    header = [h.strip().lower() for h in rows[0]]
    if "term" not in header:
        raise ComponentsFileError(f"{path}, line 1: no 'term' column; write a header such as 'term,sigma'.")
    value_col = next((h for h in header if h in _SD + _VAR), None)
    if value_col is None:
        raise ComponentsFileError(f"{path}, line 1: no value column; name it 'sigma' (standard deviations) "
                                  "or 'sigma2' (variances).")
    ti, vi = header.index("term"), header.index(value_col)
    values: dict[str, float] = {}
    lines: dict[str, int] = {}
    for line_no, row in enumerate(rows[1:], start=2):
        if not row or not any(x.strip() for x in row):
            continue
        if len(row) != len(header):
            raise ComponentsFileError(f"{path}, line {line_no}: {len(row)} fields where the header has {len(header)}.")
        term = row[ti].strip()
        check_terms(path, [term], lambda t: line_no)
        if term in values:
            raise ComponentsFileError(f"{path}, line {line_no}: the term {term!r} is given twice (first on line "
                                      f"{lines[term]}); keep one")
        lines[term] = line_no
        try:
            values[term] = float(row[vi])
        except ValueError:
            raise ComponentsFileError(f"{path}, line {line_no}, column '{rows[0][vi]}': {row[vi]!r} is not a "
                                      "number.") from None
    if not values:
        raise ComponentsFileError(f"{path}: no components below the header.")
    try:
        return VarianceComponents.from_mapping(values, scale="sd" if value_col in _SD else "variance",
                                               source=str(path))
    except ValueError as exc:
        raise ComponentsFileError(f"{path}: {exc}") from None
