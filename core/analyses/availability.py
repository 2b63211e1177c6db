"""Which analyses a corpus can support, and why not when it cannot (the app's run buttons say it).

Each check is the one the analysis itself makes before its first fit, so a button is never offered for
an analysis that would stop at once, and the reason shown is the analysis's own words.
"""

from __future__ import annotations

from ..references import cite

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
        benchmarks = sorted(table["benchmark"].astype(str).unique())
        if len(benchmarks) < 2:  # one scale across benchmarks and the transfer between them need two
            return (f"The capability scale and the transfer study compare benchmarks: one IRT scale across "
                    f"benchmarks and how a ranking on one carries to another ({cite('krsteski2026', 'sec. 5.3')}). "
                    f"The corpus has one benchmark ({benchmarks[0] if benchmarks else 'none'}); open a corpus "
                    "with two or more.")
        subjects = table["model"].astype(str).nunique()
        tasks = (table["benchmark"].astype(str) + "/" + table["task"].astype(str)).nunique()
        if subjects < 2 or tasks < 2:
            return (f"An IRT scale needs at least two models and two tasks; the corpus has {subjects} model(s) "
                    f"and {tasks} task(s).")
        return None
    return None  # difficulty, hold-out, LOO and the estimators run on any corpus the model fits


#: The D-study sizes a fit may lack, with the facet each needs and the slider's name.
SIZE_FACETS = {"n_scaffolds": ("scaffold", "Scaffolds"), "n_benchmarks": ("benchmark", "Benchmarks")}


def size_unavailable_reason(size: str, facets, corpus_summary) -> str | None:
    """Why the D-study cannot vary ``size`` (``"n_scaffolds"`` or ``"n_benchmarks"``) with this fit, or None.

    A size without its facet among the fit's terms cannot change the coefficient, so the D-study tab has no
    slider for it; the reason says whether the corpus lacks the facet (one benchmark, one scaffold per model)
    or the fit left it out (a per-benchmark fit of several benchmarks).

    Parameters
    ----------
    size
        ``"n_scaffolds"`` or ``"n_benchmarks"``.
    facets
        The fit's facets (``VarianceComponents.facets``).
    corpus_summary
        :func:`~ddr_explorer.core.inspection.inspect_corpus` of the corpus (``n_benchmarks``,
        ``n_scaffolds``, ``per_benchmark``), or None when unknown.
    """
    facet, label = SIZE_FACETS[size]
    if facet in set(facets):
        return None
    s = corpus_summary or {}
    if size == "n_benchmarks":
        if (s.get("n_benchmarks") or 1) <= 1:
            names = [str(b) for b in (s.get("per_benchmark") or {})][:1]
            return (f"No {label} slider: the corpus has one benchmark{' (' + names[0] + ')' if names else ''}, so the "
                    "fit has no benchmark term and cannot say how reliability changes with more benchmarks.")
        return (f"No {label} slider: the fit has no benchmark term (each benchmark's tasks are one task facet); "
                "fit the pooled preset to vary the number of benchmarks.")
    if (s.get("n_scaffolds") or 1) <= 1:
        return (f"No {label} slider: every model ran with one scaffold, so the fit has no scaffold term and cannot "
                "say how reliability changes with more scaffolds.")
    return f"No {label} slider: the fit has no scaffold term."


__all__ = ["OFFERED", "SIZE_FACETS", "size_unavailable_reason", "unavailable_reason"]
