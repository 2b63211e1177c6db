"""Which analyses a corpus can support, and why not when it cannot (the app's run buttons say it).

Each check is the one the analysis itself makes before its first fit, so a button is never offered for
an analysis that would stop at once, and the reason shown is the analysis's own words.
"""

from __future__ import annotations

#: The analyses the app offers on their own tabs, by the name the app's starters use.
OFFERED = ("analyses", "methods", "failure-modes", "frontier", "capability")


def unavailable_reason(corpus, name: str) -> str | None:
    """Why ``corpus`` cannot support analysis ``name`` (one of :data:`OFFERED`), or None when it can.

    Parameters
    ----------
    corpus
        A validated :class:`~ddr_explorer.core.corpus.Corpus`.
    name
        ``"analyses"`` (difficulty, hold-out and PSIS-LOO), ``"methods"`` (the estimators compared),
        ``"failure-modes"``, ``"frontier"`` or ``"capability"`` (IRT scale and transfer).
    """
    if name not in OFFERED:
        raise ValueError(f"unknown analysis {name!r}; choose from {', '.join(OFFERED)}")
    table = corpus.table
    if name == "failure-modes":
        from .failure_modes import NoErrorCategory, _require_facet

        try:
            _require_facet(corpus)
        except NoErrorCategory as exc:
            return str(exc)
        return None
    if name == "frontier":
        import pandas as pd

        if "release_date" not in table.columns:
            return ("The corpus has no release_date column: the frontier over time places each model at its "
                    "release (Krsteski et al. 2026, sec. 5.1). Add a release_date column, or join task metadata "
                    "that names the models' release dates.")
        dates = pd.to_datetime(table["release_date"], errors="coerce")
        if not dates.notna().any():
            return "No model of the corpus has a readable release date (release_date column, e.g. 2025-06-30)."
        return None
    if name == "capability":
        subjects = table["model"].astype(str).nunique()
        tasks = (table["benchmark"].astype(str) + "/" + table["task"].astype(str)).nunique()
        if subjects < 2 or tasks < 2:
            return (f"An IRT scale needs at least two models and two tasks; the corpus has {subjects} model(s) "
                    f"and {tasks} task(s).")
        return None
    return None  # difficulty, hold-out, LOO and the estimators run on any corpus the model fits


__all__ = ["OFFERED", "unavailable_reason"]
