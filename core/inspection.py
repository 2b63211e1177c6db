"""What ``ddr inspect`` prints and the app's corpus panel shows: one summary dict.

The same :func:`inspect_corpus` feeds the CLI (text and JSON) and the GUI, so
both show the same numbers.
"""

from __future__ import annotations

from .corpus.corpus import Corpus
from .corpus.subject_ids.unsplit import format_subject_ids, subject_id_summary
from .design.overlap import ModelOverlap, model_overlap
from .design import diagnose
from .references import cite


def _reported_articulation_vertices(vertices: list[str], n_benchmarks: int) -> list[str]:
    """The articulation vertices worth reporting (seed 000 (Hardy et al. 2026) App. E.1).

    With one benchmark, every model and scaffold vertex is joined to that benchmark, so it
    is a cut vertex whenever the model-scaffold graph alone is not connected, and no other
    vertex ever is: true of any one-benchmark design and no diagnostic of this one.  The
    summary then says the design has one benchmark instead (``format_summary``, the
    Corpus tab); ``diagnostics["connectivity"]`` keeps the graph's own list.
    """
    if n_benchmarks == 1:
        return [v for v in vertices if not v.startswith("benchmark:")]
    return list(vertices)


def inspect_corpus(corpus: Corpus) -> dict:
    """Summarise a validated corpus and its design diagnostics.

    Returns
    -------
    dict
        JSON-ready.  Top-level keys: ``file``, ``name``, ``format``,
        ``content_hash``, ``n_records``, ``n_trials``, ``n_successes``,
        ``n_benchmarks``, ``n_tasks``, ``n_models``, ``n_scaffolds``,
        ``n_agents``, ``n_cells``, ``per_benchmark``, ``connected``,
        ``components``, ``articulation_vertices`` (without the lone benchmark of a
        one-benchmark corpus), ``benchmark_degree``,
        ``conditions`` (Prop. E.3 (i)-(iv): true/false/null when not
        applicable), ``separable_components``, ``not_separable``,
        ``suggested_terms``, ``warnings``, ``errors`` (empty: a corpus with
        errors never loads), ``provenance`` and ``diagnostics`` (everything
        :func:`ddr_explorer.core.design.diagnose` found).
    """
    diag = diagnose(corpus).to_dict()
    counts, conn, sep = diag["counts"], diag["connectivity"], diag["separability"]
    out = {
        "file": None if corpus.source is None else str(corpus.source),
        "name": corpus.name,
        "format": corpus.format,
        "content_hash": corpus.content_hash,
        "n_records": counts["records"],
        "n_trials": counts["trials"],
        "n_successes": counts["successes"],
        "n_benchmarks": counts["benchmarks"],
        "n_tasks": counts["tasks"],
        "n_models": counts["models"],
        "n_scaffolds": counts["scaffolds"],
        "n_agents": counts["agents"],
        "n_cells": counts["cells"],
        "has_trial_ids": corpus.has_trial_ids,
        "has_cost": corpus.has_cost,
        "verifiers": [c.split(".", 1)[1] for c in corpus.verifier_columns],
        "per_benchmark": counts["per_benchmark"],
        "connected": conn["connected"],
        "components": conn["components"],
        "articulation_vertices": _reported_articulation_vertices(conn["articulation_vertices"],
                                                                 counts["benchmarks"]),
        "benchmark_degree": conn["benchmark_degree"],
        "conditions": {k: v["holds"] for k, v in sep["conditions"].items()},
        "separability_scope": sep["scope"],
        "separable_components": sep["separable_components"],
        "not_separable": sep["not_separable"],
        "suggested_terms": sep["suggested_terms"],
        "subject_ids": subject_id_summary(corpus.provenance),
        "model_overlap": model_overlap(corpus).to_dict(),
        "folded": sep.get("folded", {}),
        "warnings": [w.to_dict() for w in corpus.warnings],
        "errors": [],
        "provenance": corpus.provenance,
        "diagnostics": diag,
    }
    if corpus.verifier_columns:
        from .corpus.scoring import scoring_rule_comparison

        try:
            out["scoring_rules"] = scoring_rule_comparison(corpus).to_dict()
        except ValueError as exc:  # e.g. aggregated cells carry no per-trial verifier results
            out["scoring_rules"] = {"error": str(exc)}
    return out


def _yes(v) -> str:
    return {True: "yes", False: "NO", None: "n/a"}[v]


def format_summary(s: dict, max_warnings: int = 12) -> str:
    """The readable text of ``ddr inspect`` (and the app's summary panel)."""
    lines = [
        f"Corpus      {s['name']}  ({s['format']})",
        f"File        {s['file']}",
        f"Hash        {s['content_hash'][:16]}",
        "",
        f"Records     {s['n_records']:>10,}   trials {s['n_trials']:,}, successes {s['n_successes']:,} "
        f"({s['n_successes'] / max(s['n_trials'], 1):.1%})",
        f"Benchmarks  {s['n_benchmarks']:>10,}",
        f"Tasks       {s['n_tasks']:>10,}",
        f"Models      {s['n_models']:>10,}",
        f"Scaffolds   {s['n_scaffolds']:>10,}",
        f"Agents      {s['n_agents']:>10,}   (distinct model-scaffold pairs)",
        f"Cells       {s['n_cells']:>10,}   (binomial cells after aggregating identical trials)",
    ]
    filtering = (s.get("provenance") or {}).get("filtering")
    if filtering:  # an importer that drops rows the way the data's authors did says how many (e.g. HAL)
        lines.append(f"Filtered    {filtering['rows_read']:>10,}   rows read; {filtering['duplicate_rows_dropped']:,} exact "
                     f"duplicates and {filtering['missing_scores_dropped']:,} missing scores dropped")
    if len(s["per_benchmark"]) > 1:
        lines += ["", f"{'benchmark':<28}{'records':>9}{'tasks':>7}{'models':>8}{'scaffolds':>10}{'agents':>8}"]
        for b, c in s["per_benchmark"].items():
            lines.append(f"{b[:27]:<28}{c['records']:>9,}{c['tasks']:>7,}{c['models']:>8,}{c['scaffolds']:>10,}"
                         f"{c['agents']:>8,}")
    lines += ["", f"Connectivity ({cite('hardy2026', 'App. E')})"]
    n_comp = len(s["components"])
    lines.append(f"  incidence graph: {'connected' if s['connected'] else f'{n_comp} components — contrasts across components are not identified'}")
    if n_comp > 1:
        for i, comp in enumerate(s["components"][:6], start=1):
            lines.append(f"    component {i}: {len(comp)} vertices, e.g. {', '.join(comp[:4])}")
    overlap = s.get("model_overlap") or {}
    ov = ModelOverlap(overlap.get("n_benchmarks", 0), overlap.get("n_models", 0), tuple(overlap.get("shared_models", ())),
                      {}, overlap.get("n_task_groups", 1))
    for text in (ov.cannot_tell(), ov.groups_text()):  # core/design/overlap.py: said, not left to the conditions
        if text:
            lines.append(f"  WARNING: {text}")
    av = s["articulation_vertices"]
    if s["n_benchmarks"] == 1 and not av:
        lines.append("  articulation vertices: n/a (the design has one benchmark)")
    else:
        lines.append(f"  articulation vertices: {', '.join(av[:8]) if av else 'none'}{' ...' if len(av) > 8 else ''}")
    lines += ["", f"Separability ({s['separability_scope']} model; Prop. E.3 conditions)"]
    names = {"i": "(i)   models on several benchmarks, connected",
             "ii": "(ii)  scaffolds on several benchmarks, connected",
             "iii": "(iii) model-scaffold pairs recur across benchmarks",
             "iv": "(iv)  items attempted by several models and scaffolds"}
    for k, label in names.items():
        lines.append(f"  {label:<56}{_yes(s['conditions'].get(k))}")
    if not s["not_separable"]:
        lines.append(f"  separable components: {', '.join(s['separable_components']) or 'none'}")
    else:
        # separability is of all terms fitted together: a term confounded with another becomes separable once
        # that other is left out, so the reduced formula may keep terms listed here (Hardy et al. 2026, Prop. E.2)
        lines.append(f"  separable when all are fitted together:     {', '.join(s['separable_components']) or 'none'}")
        lines.append(f"  NOT separable when all are fitted together: {', '.join(s['not_separable'])}")
        kept = s["suggested_terms"]
        lines.append(f"  a formula the design supports: {' + '.join(f'(1|{t})' for t in kept)}"
                     + (" (each of its terms is separable once the others are left out)" if kept else ""))
        folded = s.get("folded") or {}
        left = [f"{t} -> {', '.join(folded.get(t) or ['(intercept)'])}" for t in s["not_separable"] if t not in kept]
        if left:
            lines.append(f"  left out, their variance absorbed by: {'; '.join(left)}")
    if "scoring_rules" in s and "error" not in s["scoring_rules"]:
        lines += ["", f"Verifiers: {', '.join(s['verifiers'])} (see --json for the scoring-rule comparison)"]
    if s.get("subject_ids"):
        lines += ["", *format_subject_ids(s["subject_ids"])]
    warnings = s["warnings"]
    lines += ["", f"Warnings ({len(warnings)})" if warnings else "No warnings"]
    for w in warnings[:max_warnings]:
        line = w.get("line", w.get("row"))  # "row" in summaries written before it was named for what it is
        where = ", ".join(str(x) for x in (f"line {line}" if line else None, w.get("column")) if x)
        lines.append(f"  - {w['message']}" + (f" [{where}]" if where else ""))
    if len(warnings) > max_warnings:
        lines.append(f"  ... and {len(warnings) - max_warnings} more (see --json)")
    return "\n".join(lines)
