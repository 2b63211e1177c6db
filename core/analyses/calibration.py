"""How the refit analyses' estimates compare with what they took on this machine, kept for the next estimate.

The plan (:func:`~.defaults.plan_sheet_analyses`) prices each refit from the parent fit's own pace here
(:func:`~.engine.refit_seconds`).  Measured on the full Terminal-Bench 2.0 sheet it read about 1.2x low
(13 min estimated, 16 taken): a refit pays for work the parent's pace does not show (its cache file, the
gate's looks, the precision rule's spread).  So each estimate is multiplied by a calibration factor:

* :data:`DEFAULT_CALIBRATION` (16 / 13, that measured run) on a machine that has not run the analyses yet;
* once it has, the median of the last :data:`KEEP` ratios of time taken to the uncalibrated estimate of that
  analysis here, between :data:`LOWEST` and :data:`HIGHEST`, stored beside the fit cache
  (:data:`CALIBRATION_FILE`).  Runs estimated under :data:`MIN_SECONDS` are not kept: their time is the
  cache's and the compile's, not the refits'.

Every run still prints its estimate beside what it took (:meth:`~.defaults.AnalysesPlan.estimate_and_actual`),
and :func:`remember` keeps that pair.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

__all__ = ["CALIBRATION_FILE", "DEFAULT_CALIBRATION", "KEEP", "MIN_SECONDS", "calibration", "remember"]

#: The file beside the fit cache that keeps the measured ratios, per analysis.
CALIBRATION_FILE = "refit-calibration.json"
#: Time taken over estimate of the full TB2 sheet's analyses (16 min against 13 estimated), before any run here.
DEFAULT_CALIBRATION = 16 / 13
#: Ratios kept per analysis (the most recent).
KEEP = 5
#: Runs estimated under this many seconds are not kept.
MIN_SECONDS = 30.0
#: The factor's bounds: one odd run (a box loaded for an hour) does not set the next estimates alone.
LOWEST, HIGHEST = 0.5, 4.0


def _path(cache_dir) -> Path:
    if cache_dir is None:
        from ..files import default_cache_dir

        cache_dir = default_cache_dir()
    return Path(cache_dir) / CALIBRATION_FILE


def _read(cache_dir) -> dict:
    path = _path(cache_dir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def calibration(cache_dir, name: str) -> float:
    """The factor on analysis ``name``'s estimate here (module note)."""
    ratios = [float(r) for r in _read(cache_dir).get(name, []) if isinstance(r, (int, float)) and r > 0]
    if not ratios:
        return DEFAULT_CALIBRATION
    return min(max(statistics.median(ratios), LOWEST), HIGHEST)


def remember(cache_dir, plan, actual: dict) -> dict:
    """Keep each analysis's time taken (``actual``: name -> seconds) over its uncalibrated estimate in ``plan``;
    returns the ratios kept.  Nothing is kept for a run estimated under :data:`MIN_SECONDS`; a cache folder that
    cannot be written keeps nothing (the estimate only stays uncalibrated)."""
    from ..files import write_text_atomic

    data = _read(cache_dir)
    kept = {}
    for name in plan.which:
        est, used = plan.seconds.get(name, 0.0), plan.calibration.get(name, 1.0)
        if name not in actual or est < MIN_SECONDS or not used > 0:
            continue
        kept[name] = float(actual[name]) / (est / used)
        data[name] = ([r for r in data.get(name, []) if isinstance(r, (int, float))] + [kept[name]])[-KEEP:]
    if kept:
        try:
            path = _path(cache_dir)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(path, json.dumps(data, indent=1))  # a reader never sees half a file
        except (OSError, ValueError):
            return {}
    return kept
