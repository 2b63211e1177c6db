"""Price files: USD per trial per benchmark, and USD per million tokens per model.

Cost enters the D-study in one of three ways (SPEC section 4; seed 003 (DDR paper 2026) sec. 3): the corpus's
``cost`` column (:func:`~.dstudy.prices_from_cost_column`), token counts x a model price table
(:func:`~.dstudy.prices_from_tokens`, read here by :func:`read_token_prices`), or a price per trial
per benchmark typed in or read by :func:`read_trial_prices`.  Both readers name the file, line and
column of a bad value and say what would fix it.
"""

from __future__ import annotations

import math
from pathlib import Path

__all__ = ["PriceFileError", "read_trial_prices", "read_token_prices"]


class PriceFileError(ValueError):
    """A price file that cannot be read; the message names the place and the fix."""


def _number(path: Path, where: str, column: str, value, fix: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise PriceFileError(f"{path}, {where}, column {column!r}: {value!r} is not a number; {fix}") from None
    if not math.isfinite(x) or x < 0:
        raise PriceFileError(f"{path}, {where}, column {column!r}: {value!r} must be a finite number >= 0; {fix}")
    return x


def _text(path: Path, what: str = "price file") -> str:
    """The file's text through the side-file gate (:mod:`.side_files`: a regular file, size cap, UTF-8)."""
    from .side_files import read_side_text

    return read_side_text(path, what, error=PriceFileError)


def _json_object(path: Path, text: str, expected: str) -> dict:
    """The file's JSON object, strictly parsed (:func:`.side_files.loads_json`: a key given twice refused)."""
    from .side_files import loads_json

    obj = loads_json(text, path, "price file", error=PriceFileError)
    if not isinstance(obj, dict):
        raise PriceFileError(f"{path}: expected a JSON object {expected}")
    return obj


def _csv_rows(path: Path, text: str) -> list[list[str]]:
    from .side_files import csv_rows

    return csv_rows(text, path, "price file", error=PriceFileError)


def read_trial_prices(path: str | Path) -> dict[str, float]:
    """USD per trial per benchmark: JSON ``{benchmark: usd}`` or CSV with the header ``benchmark,price``.

    Raises
    ------
    PriceFileError
        Bad JSON, a missing header, or a value that is not a number >= 0.
    """
    path = Path(path)
    text = _text(path)
    fix = "give USD per trial, e.g. 0.25"
    if text.lstrip().startswith("{"):
        obj = _json_object(path, text, "{benchmark: USD per trial}")
        return {str(k): _number(path, f"key {k!r}", "price", v, fix) for k, v in obj.items()}
    rows = _csv_rows(path, text)
    if not rows or [h.strip().lower() for h in rows[0][:2]] != ["benchmark", "price"]:
        raise PriceFileError(f"{path}, line 1: expected the header 'benchmark,price' (USD per trial)")
    out = {}
    for i, row in enumerate(rows[1:], start=2):
        if not row or not "".join(row).strip():
            continue
        out[row[0].strip()] = _number(path, f"line {i}", "price", row[1] if len(row) > 1 else None, fix)
    return out


def read_token_prices(path: str | Path) -> dict[str, tuple[float, float]]:
    """USD per million input and output tokens per model.

    Accepted layouts: CSV with the header ``model,input,output`` (USD per 1M tokens), or JSON
    ``{model: [input, output]}`` or ``{model: {"input": x, "output": y}}``.

    Returns
    -------
    dict
        ``{model: (USD per 1M input tokens, USD per 1M output tokens)}``, the price table of
        :func:`~.dstudy.prices_from_tokens`.

    Raises
    ------
    PriceFileError
        Bad JSON, a missing header, a model listed twice, or a price that is not a number >= 0.
    """
    path = Path(path)
    text = _text(path, "token-price file")
    fix = "give USD per million tokens, e.g. 1.25"
    out: dict[str, tuple[float, float]] = {}
    if text.lstrip().startswith("{"):
        obj = _json_object(path, text, "{model: [USD per 1M input, USD per 1M output tokens]}")
        for model, v in obj.items():
            where = f"key {model!r}"
            if isinstance(v, dict):
                if "input" not in v or "output" not in v:
                    raise PriceFileError(f"{path}, {where}: expected {{\"input\": ..., \"output\": ...}}")
                pin, pout = v["input"], v["output"]
            elif isinstance(v, (list, tuple)) and len(v) == 2:
                pin, pout = v
            else:
                raise PriceFileError(f"{path}, {where}: expected [input, output] USD per 1M tokens")
            out[str(model)] = (_number(path, where, "input", pin, fix), _number(path, where, "output", pout, fix))
        return out
    rows = _csv_rows(path, text)
    header = [h.strip().lower() for h in rows[0]] if rows else []
    if header[:3] != ["model", "input", "output"]:
        raise PriceFileError(f"{path}, line 1: expected the header 'model,input,output' "
                             "(USD per million input and output tokens)")
    for i, row in enumerate(rows[1:], start=2):
        if not row or not "".join(row).strip():
            continue
        model = row[0].strip()
        if model in out:
            raise PriceFileError(f"{path}, line {i}, column 'model': {model!r} is listed twice; keep one line")
        cells = row + [None] * (3 - len(row))
        out[model] = (_number(path, f"line {i}", "input", cells[1], fix),
                      _number(path, f"line {i}", "output", cells[2], fix))
    return out
