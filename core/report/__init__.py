"""The Deployment Decision Reliability (DDR) sheet: a PDF a buyer of AI agents can read (SPEC sec. 7).

The report lays out what it is given.  End to end (corpus or cached fit -> fit through the cache
-> analyses -> PDF), as ``ddr report`` and the app's "Export DDR sheet" do, is
:func:`ddr_explorer.core.ddr_sheet.write_ddr_sheet`::

    from ddr_explorer.core.ddr_sheet import write_ddr_sheet
    write_ddr_sheet("corpus.csv", "ddr-sheet.pdf", progress=print)

From ready numbers, in two calls::

    from ddr_explorer.core.report import report_inputs_from, build_sheet
    inputs = report_inputs_from(corpus, components, theta, model_names=names)
    build_sheet(inputs, "ddr-sheet.pdf")

:mod:`.inputs` defines what the sheet is drawn from, :mod:`.content` computes
every number and sentence with core's functions, :mod:`.figures` draws
vector figures, :mod:`.styles` holds the look and :mod:`.sheet` lays out and
writes the PDF.  Nothing here imports Qt or the sampler.
"""

from .content import SheetContent, sheet_content
from .inputs import (ANALYSIS_KEYS, DifficultyProfile, FailureTaxonomy, HeldOutReliability, LooSummary,
                     ReportInputs, TaskDifficulty, components_from_posterior, fit_info_from_posterior,
                     report_inputs_from, software_versions, task_difficulty, theta_from_posterior)
from .sheet import build_sheet, render_sheet

__all__ = [
    "ANALYSIS_KEYS", "DifficultyProfile", "FailureTaxonomy", "HeldOutReliability", "LooSummary",
    "ReportInputs", "SheetContent", "TaskDifficulty",
    "build_sheet", "components_from_posterior", "fit_info_from_posterior", "render_sheet", "report_inputs_from",
    "sheet_content", "software_versions", "task_difficulty", "theta_from_posterior",
]
