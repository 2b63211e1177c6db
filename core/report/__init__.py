"""The Deployment Decision Reliability (DDR) sheet: a PDF a buyer of AI agents can read (SPEC sec. 7).

End to end (corpus or cached fit -> fit through the cache -> PDF), as ``ddr report`` and the
app's "Export DDR sheet" do::

    from ddr_explorer.core.report import write_ddr_sheet
    write_ddr_sheet("corpus.csv", "ddr-sheet.pdf", progress=print)

Or from ready numbers, in two calls::

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
from .pipeline import AnalysisContext, SheetCancelled, SheetResult, analysis_runner, write_ddr_sheet
from .sheet import build_sheet, render_sheet

__all__ = [
    "ANALYSIS_KEYS", "AnalysisContext", "DifficultyProfile", "FailureTaxonomy", "HeldOutReliability", "LooSummary",
    "ReportInputs", "SheetCancelled", "SheetContent", "SheetResult", "TaskDifficulty", "analysis_runner",
    "build_sheet", "components_from_posterior", "fit_info_from_posterior", "render_sheet", "report_inputs_from",
    "sheet_content", "software_versions", "task_difficulty", "theta_from_posterior", "write_ddr_sheet",
]
