"""How many trials a design runs, said apart from how many the corpus ran.

A D-study design's trial count is ``n_models x n_scaffolds x sum_b n_tasks_b x n_replicates``
(SPEC sec. 4): the trials of a *full* design of those sizes, every model on every task, each
cell run the design's (median) number of times.  It is not the number of trials in the file: a
binary leaderboard with a median of one trial per cell and some cells run five times has 5,162
design trials (58 models x 89 tasks x 1) and 9,968 trials in the file.  Every surface that prints
the design's count says which count it is, and prints the corpus's own beside it when known.
"""

from __future__ import annotations

from typing import Mapping

from ..formatting import TIMES, FacetWords, fmt_n, plural

__all__ = ["corpus_counts", "design_trials_text"]


def corpus_counts(corpus) -> dict[str, int]:
    """The trials and the (benchmark, task, model, scaffold) cells of a corpus's table."""
    table = getattr(corpus, "table", corpus)
    cells = table.groupby(["benchmark", "task", "model", "scaffold"], observed=True).ngroups
    return {"trials": int(table["trials"].sum()), "cells": int(cells)}


def design_trials_text(design: Mapping, words: FacetWords, counts: Mapping | None = None,
                       times: str = TIMES) -> str:
    """``5,162 trials in a full design of these sizes (58 models × 89 tasks × 1 trial per cell); the
    corpus ran 9,968 trials in 5,101 cells``.

    Parameters
    ----------
    design
        :meth:`~.sizes.DStudyDesign.to_dict` (``trials``, ``n_models``, ``n_scaffolds``, sizes).
    words
        The fit's words (:func:`~ddr_explorer.core.formatting.facet_words`).
    counts
        The corpus's ``trials`` and ``cells`` (:func:`corpus_counts`, or the inspection summary's
        ``n_trials`` / ``n_cells``); None when the design has no corpus behind it.
    times
        The product sign (``x`` in a terminal).
    """
    n = design["trials"]
    parts = [f"{fmt_n(design['n_models'])} {words.objects if words.object == 'agent' else plural('model', design['n_models'])}"]
    if words.object != "agent":  # an agent is one model-scaffold pair
        parts.append(words.count("n_scaffolds", design["n_scaffolds"]))
    per = design.get("tasks_per_benchmark")
    tasks = sum(per.values()) if per else design["n_tasks"] * design["n_benchmarks"]
    parts += [f"{fmt_n(tasks)} {plural('task', tasks)}", words.count("n_replicates", design["n_replicates"])]
    text = (f"{fmt_n(n)} {words.noun('n_replicates', n)} in a full design of these sizes "
            f"({f' {times} '.join(parts)})")
    trials = counts.get("trials", counts.get("n_trials")) if counts else None
    cells = counts.get("cells", counts.get("n_cells")) if counts else None
    if trials is not None:
        text += f"; the corpus ran {fmt_n(trials)} {words.noun('n_replicates', trials)}"
        if cells is not None:
            text += f" in {fmt_n(cells)} {plural('cell', cells)}"
    return text
