"""The DDR sheet, headless and end to end: corpus (or cached fit) -> fit -> inputs -> PDF.

:func:`write_ddr_sheet` is the one path that ``ddr report`` and the app's
"Export DDR sheet" call.  It loads the corpus, fits it through the cache
(:func:`~ddr_explorer.core.fitting.fit_corpus`: a cache hit takes well under a
second), runs any optional analyses it is asked for, fills a
:class:`~.inputs.ReportInputs` (:func:`~.inputs.report_inputs_from`) and writes
the PDF (:func:`~.sheet.build_sheet`).  Progress goes to a callback with the
sampler's signature ``progress(phase, done, total, eta_seconds)``; ``cancel()``
is polled between steps and between the sampler's chunks, and a cancelled
build raises :class:`SheetCancelled` without touching the output file.

Optional analyses (SPEC sec. 6; seed 003 (DDR paper 2026) secs. 5.3-5.4; seed 000 (Hardy et al. 2026) App. D.3)
need extra fits, so the sheet never runs them by itself.  ``analyses`` maps a
key of :data:`~.inputs.ANALYSIS_KEYS` to either a ready result
(:class:`~.inputs.DifficultyProfile`, :class:`~.inputs.HeldOutReliability`,
:class:`~.inputs.LooSummary`, :class:`~.inputs.FailureTaxonomy`) or a runner:
a callable taking an :class:`AnalysisContext` and returning such a result.
:func:`analysis_runner` finds the runners of the batch modules
(:mod:`ddr_explorer.core.analyses`) and says plainly which analyses have none.

Nothing here imports Qt; the sampler (JAX) is imported only when a fit has to
be run.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from .report.inputs import ANALYSIS_KEYS, ReportInputs, report_inputs_from
from .report.sections import LeftOutSection
from .report.sheet import write_sheet

__all__ = ["AnalysisContext", "SheetCancelled", "SheetResult", "analysis_runner", "ANALYSIS_ALIASES",
           "write_ddr_sheet"]

ProgressCallback = Callable[[str, int, int, "float | None"], None]
CancelCallback = Callable[[], bool]

#: Names accepted on the command line (``--analyses``) -> keys of :data:`~.inputs.ANALYSIS_KEYS`.
ANALYSIS_ALIASES: dict[str, str] = {"difficulty": "difficulty", "heldout": "held_out", "held_out": "held_out",
                                    "held-out": "held_out", "loo": "loo", "failure_taxonomy": "failure_taxonomy",
                                    "failures": "failure_taxonomy", "failure-modes": "failure_taxonomy",
                                    "frontier": "frontier", "methods": "methods", "estimators": "methods",
                                    "scores": "score_reliability", "score_reliability": "score_reliability",
                                    "capability": "capability", "transfer": "transfer"}

def _difficulty_runner():
    from .analyses.difficulty import run_difficulty_study

    return run_difficulty_study


def _heldout_runner():
    from .analyses.heldout import run_heldout

    return run_heldout


def _loo_runner():
    from .analyses.loo import run_loo

    return run_loo


def _failure_runner():
    from .analyses.failure_modes import run_failure_taxonomy

    return run_failure_taxonomy


def _frontier_runner(undated: str = "stop"):
    from .analyses.frontier_time import frontier_over_time

    return lambda ctx: frontier_over_time(ctx.corpus, cancel=ctx.cancel, undated=undated)


def _methods_runner():
    from .estimators.sheet import run_methods

    return run_methods


def _scores_runner():
    from .estimators.sheet import run_score_reliability

    return run_score_reliability


#: The runner of each analysis in core.analyses (imported when needed: they import the sampler's callers).
_RUNNER_MODULES: dict[str, Callable[[], Callable]] = {
    "difficulty": _difficulty_runner, "held_out": _heldout_runner, "loo": _loo_runner,
    "failure_taxonomy": _failure_runner, "frontier": _frontier_runner, "methods": _methods_runner,
    "score_reliability": _scores_runner}


def _extra_runner(name: str):
    def get():
        from .analyses.runner import run_extra_for_sheet

        return lambda ctx: run_extra_for_sheet(name, ctx)
    return get


_RUNNER_MODULES.update(capability=_extra_runner("capability"), transfer=_extra_runner("transfer"))


class SheetCancelled(RuntimeError):
    """The user cancelled the build of a DDR sheet (the output file was not written)."""


@dataclass
class AnalysisContext:
    """What an analysis runner gets: the corpus, the main fit and how to report progress.

    Attributes
    ----------
    corpus
        The validated corpus.
    posterior
        The main fit's posterior (the sheet's variance components come from it).
    spec, settings
        The model spec and sampler settings of the main fit (runners refit
        subsets with the same settings).
    cache_dir
        The fit cache folder (None: the default), so refits are cached too.
    progress, cancel
        Callbacks, as for :func:`write_ddr_sheet`; ``progress`` is already
        bound to the analysis's phase name.
    """

    corpus: Any
    posterior: Any
    spec: Any
    settings: Any
    cache_dir: Path | None
    progress: ProgressCallback | None
    cancel: CancelCallback | None
    object_of_measurement: str = "model"


@dataclass
class SheetResult:
    """What :func:`write_ddr_sheet` did.

    Attributes
    ----------
    path
        The PDF written.
    inputs
        The :class:`~.inputs.ReportInputs` the sheet was drawn from.
    fit_key, fit_path, from_cache
        The fit's cache key and file, and whether it was reopened from the cache.
    converged
        The fit's convergence verdict (None when unknown).
    messages
        Things the caller should show (a damaged cache file that was refitted, an unconverged fit, a
        section of the sheet left out).
    left_out
        The sections of the sheet that could not be laid out and were left out, each with a line on the
        sheet saying why (:mod:`.report.sections`); empty when the sheet is complete.
    """

    path: Path
    inputs: ReportInputs
    fit_key: str | None
    fit_path: Path | None
    from_cache: bool
    converged: bool | None
    messages: list[str] = field(default_factory=list)
    left_out: tuple[LeftOutSection, ...] = ()

    @property
    def complete(self) -> bool:
        """Whether the sheet has every section (``ddr report`` exits 4 when not)."""
        return not self.left_out


def analysis_runner(key: str, *, undated: str = "stop") -> Callable[[AnalysisContext], Any]:
    """The runner of an optional analysis, from the batch modules of core.

    Parameters
    ----------
    key
        A key of :data:`~.inputs.ANALYSIS_KEYS` or a name of :data:`ANALYSIS_ALIASES`.
    undated
        The frontier over time only (seed 002 (Krsteski et al. 2026) sec. 5.1): ``"stop"`` when a model has no release
        date (the analysis says which), or ``"drop"`` to leave those models out and name them
        (``frontier_time.frontier_over_time``).

    Raises
    ------
    ValueError
        An unknown name, or an analysis whose module is not part of this
        build (the message names the module and what to do instead).
    """
    name = ANALYSIS_ALIASES.get(key, key)
    if name not in ANALYSIS_KEYS:
        raise ValueError(f"unknown analysis {key!r}; use difficulty, heldout, loo, failures, frontier, methods, "
                         "scores, capability or transfer")
    if name not in _RUNNER_MODULES:
        raise ValueError(f"the {name.replace('_', ' ')} analysis has no runner in core; compute it and pass the "
                         "result in analyses= (see ddr_explorer.core.report.inputs)")
    if name == "frontier":
        return _adapt_runner(_frontier_runner(undated))
    return _adapt_runner(_RUNNER_MODULES[name]())


def _adapt_runner(fn) -> Callable[[AnalysisContext], Any]:
    """Call a batch function with the context fields its signature names (corpus, posterior, ...)."""
    params = inspect.signature(fn).parameters
    if len(params) == 1 and next(iter(params)) in ("context", "ctx"):
        return fn

    def run(ctx: AnalysisContext):
        kwargs = {k: getattr(ctx, k) for k in ("corpus", "posterior", "spec", "settings", "cache_dir", "progress",
                                              "cancel", "object_of_measurement") if k in params}
        return fn(**kwargs)

    return run


def _emit(progress, phase: str, done: int, total: int, eta=None) -> None:
    if progress is not None:
        progress(phase, done, total, eta)


def _check(cancel, what: str) -> None:
    if cancel is not None and cancel():
        raise SheetCancelled(f"DDR sheet cancelled {what}; nothing was written")


def _load_source(source, corpus, load_options):
    """``(corpus, posterior or None)`` from a corpus, a corpus file or a cached fit file (.h5)."""
    from .corpus.corpus import Corpus
    from .corpus.io import load_corpus

    def as_corpus(obj):
        return obj if isinstance(obj, Corpus) else load_corpus(Path(obj), **dict(load_options or {}))

    if isinstance(source, Corpus):
        return source, None
    path = Path(source)
    if path.suffix.lower() not in (".h5", ".hdf5"):
        if corpus is not None:
            raise ValueError(f"{path} is a corpus file; give --corpus only with a cached fit file (.h5)")
        return as_corpus(path), None
    from .cache import CacheFileError, read_fit_file
    from .fitting import posterior_from_entry

    try:
        entry = read_fit_file(path)
        posterior = posterior_from_entry(entry)
    except CacheFileError as exc:
        raise ValueError(f"{path}: not a usable cached fit ({exc}); refit the corpus with `ddr fit`") from None
    if corpus is None:
        name = entry.meta.get("corpus_name") or "the corpus"
        raise ValueError(f"{path} is a cached fit of {name}; the sheet also needs that corpus's trials "
                         "(accuracy, cost, task difficulty): add --corpus CORPUS_FILE")
    from .fitting import check_fit_of_corpus

    c = as_corpus(corpus)
    check_fit_of_corpus(entry.meta, c, path)  # the same identity check as every FIT.h5 --corpus command
    return c, posterior


def write_ddr_sheet(source, output, *, corpus=None, load_options: Mapping[str, Any] | None = None,
                    posterior=None, corpus_summary: Mapping[str, Any] | None = None,
                    preset: str | Any | None = None, settings=None, cache_dir: str | Path | None = None,
                    use_cache: bool = True, object_of_measurement: str | None = None, claim: str = "relative",
                    target: float | None = None, budget: float | None = None,
                    prices: Mapping[str, float] | None = None, analyses: Mapping[str, Any] | None = None,
                    date_invariant: bool = False, title: str | None = None,
                    progress: ProgressCallback | None = None, cancel: CancelCallback | None = None,
                    strict_terms: bool = False, default_analyses: Callable | None = None,
                    compare: tuple[str, str] | None = None,
                    examined_sizes: Mapping[str, float] | None = None) -> SheetResult:
    """Write the DDR sheet (SPEC sec. 7; seed 003 sec. 6) of a corpus or of a cached fit.

    Parameters
    ----------
    source
        A :class:`~ddr_explorer.core.corpus.corpus.Corpus`, a corpus file, or a
        cached fit file (``.h5``, as ``ddr fit`` writes; then ``corpus`` is required).
    output
        The PDF to write (its folder must exist); written atomically.
    corpus
        With a cached fit: the corpus it was fitted to (a Corpus or a file); its
        content hash must match the fit's.
    load_options
        Passed to :func:`~ddr_explorer.core.corpus.io.load_corpus` (``format``,
        ``encoding``, importer options).
    posterior
        A fit already in memory (the app's): used as it is, nothing is fitted.
        It must be a fit of ``source`` (a Corpus or corpus file).
    corpus_summary
        A ready :func:`~ddr_explorer.core.inspection.inspect_corpus` of the
        corpus (the app has one), so it is not recomputed.
    design
        A model spec, preset (``"per-benchmark"``, ``"pooled"``, ``"ddr"``) or
        formula; default ``"pooled"`` for several benchmarks, else
        ``"per-benchmark"``.  Ignored with a cached fit.
    settings
        :class:`~ddr_explorer.core.model.sampler.SamplerSettings` (defaults when None).
    cache_dir, use_cache
        The fit cache (see :func:`~ddr_explorer.core.fitting.fit_corpus`).
    object_of_measurement, claim, target, budget, prices, examined_sizes
        As for :func:`~.inputs.report_inputs_from` (``examined_sizes``: the what-if design's sizes, at which
        the sheet's cost answers and tasks for the target are computed, as the app's D-study tab does).
    analyses
        Optional analyses: key of :data:`~.inputs.ANALYSIS_KEYS` -> a ready
        result, or a runner ``f(AnalysisContext) -> result`` (see
        :func:`analysis_runner`).  A runner that fails leaves the analysis out
        (the sheet says "not run") and the reason in :attr:`SheetResult.messages`.
    default_analyses
        When ``analyses`` is None: ``default_analyses(corpus, posterior)`` is called after the fit and
        returns the analyses to run (``ddr report`` passes the refit engine's plan:
        :func:`~ddr_explorer.core.analyses.defaults.plan_sheet_analyses`, which needs the fit's wall time).
    date_invariant
        No build date in the footer, reportlab's fixed creation date and
        document ID: the same inputs give a byte-identical PDF.
    title
        Sheet title (default: the corpus name).
    progress
        ``progress(phase, done, total, eta_seconds)``: phases ``"load"``, the
        sampler's phases when a fit runs, ``"analysis <key>"``, ``"inputs"``, ``"sheet"``.
    cancel
        Polled between steps (and by the sampler between chunks); return True to stop.
    strict_terms
        Refuse a preset whose terms the design cannot separate (``ddr report --strict-terms``;
        :func:`~.fitting.fit_corpus`) instead of fitting it without them.
    compare
        Two names (models, or systems for a system sheet): a "Two agents" page after page 1
        (:func:`~.pair_comparison.pair_decision`, as ``ddr compare``); an unknown name is refused before
        any analysis runs.

    Returns
    -------
    SheetResult

    Raises
    ------
    SheetCancelled
        ``cancel()`` returned True; the output was not written.
    ddr_explorer.core.report.sections.SheetLayoutError
        The sheet could not be laid out even without its failing sections (nothing was written).
    ValueError
        Invalid input (the message names the file and the fix).
    ddr_explorer.core.corpus.issues.CorpusError
        The corpus file failed validation (its issues name file, row and column).
    """
    from .files import check_output

    # the output gate before any work: not the corpus or fit read here, not a device or folder, a folder that exists
    output = check_output(output, inputs=[x for x in (source, corpus) if isinstance(x, (str, Path))])
    _emit(progress, "load", 0, 1)
    given = posterior
    c, posterior = _load_source(source, corpus, load_options)
    if given is not None:
        if posterior is not None:
            raise ValueError("give either a cached fit file as the source or posterior=, not both")
        posterior = given
    _emit(progress, "load", 1, 1)
    _check(cancel, "after loading the corpus")

    messages: list[str] = []
    fit_key = fit_path = None
    from_cache = posterior is not None and given is None  # a fit file given as the source
    if posterior is None:
        from .fitting import fit_corpus
        from .model.formula import as_spec
        from .model.posterior import FitCancelled

        from .design.presets import default_preset

        spec = as_spec(preset or default_preset(c))
        spec.validate(c.table.columns)
        _emit(progress, "fit", 0, 1)
        try:
            result = fit_corpus(c, spec, settings, cache_dir=cache_dir, use_cache=use_cache, progress=progress,
                                cancel=cancel, strict_terms=strict_terms)
        except FitCancelled as exc:
            raise SheetCancelled(f"DDR sheet cancelled during the fit ({exc}); nothing was written") from None
        posterior, fit_key, fit_path, from_cache = result.posterior, result.key, result.cache_path, result.from_cache
        _emit(progress, "fit (cache hit)" if from_cache else "fit", 1, 1, 0.0)
        if result.cache_problem:
            messages.append(result.cache_problem)
        if result.terms is not None and result.terms.note:  # preset terms the design cannot separate
            messages.append(result.terms.note)
    elif given is None:
        fit_path = Path(source)
    _check(cancel, "after the fit")
    pair = None
    if compare is not None:  # before the analyses: a name the corpus lacks is said before any refit runs
        from .fitting import components_from_posterior, object_for_terms
        from .pair_comparison import pair_decision

        comp = components_from_posterior(posterior)
        obj = object_for_terms(comp.terms, object_of_measurement)
        pair = pair_decision(posterior, c, comp, compare[0], compare[1], "system" if obj == "system" else "model")

    diag = getattr(posterior, "diagnostics", None)
    converged = None if diag is None else bool(getattr(diag, "converged", False))
    if converged is False:
        problems = list(getattr(diag, "problems", None) or [])
        shown = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
        messages.append(f"the fit did not converge ({shown or 'see the diagnostics page'}); page 1 of the sheet "
                        "says so")

    # The object of measurement follows the fitted model (agents for seed 003's ddr preset), for the
    # analyses and the sheet alike.
    from .fitting import components_from_posterior
    from .reliability import object_for_terms

    object_of_measurement = object_for_terms(components_from_posterior(posterior).terms, object_of_measurement)
    if analyses is None and default_analyses is not None:  # chosen now: the estimate needs the fit
        analyses = default_analyses(c, posterior)
    results: dict[str, Any] = {}
    analyses = dict(analyses or {})
    if claim == "absolute" and not any(ANALYSIS_ALIASES.get(k, k) in ("score_reliability", "methods")
                                       for k in analyses):
        # a claim about scores: the observed-scale reliability of seed 000 G.5 is on page 1 (seconds, no cache)
        analyses["score_reliability"] = analysis_runner("score_reliability")
    for key, value in analyses.items():
        name = ANALYSIS_ALIASES.get(key, key)
        if name not in ANALYSIS_KEYS:
            raise ValueError(f"unknown analysis {key!r}; use {', '.join(ANALYSIS_KEYS)}")
        if not callable(value) or isinstance(value, type):
            results[name] = value
            continue
        phase = f"analysis {name}"
        _emit(progress, phase, 0, 1)
        ctx = AnalysisContext(corpus=c, posterior=posterior, spec=getattr(posterior, "spec", None),
                              settings=getattr(posterior, "settings", settings), cache_dir=cache_dir,
                              progress=None if progress is None else
                              (lambda ph, i, n, eta, _p=phase: progress(f"{_p}: {ph}", i, n, eta)),
                              cancel=cancel, object_of_measurement=object_of_measurement)
        try:
            results[name] = value(ctx)
        except SheetCancelled:
            raise
        except Exception as exc:  # noqa: BLE001 - one failed analysis must not sink the sheet; it is reported
            if type(exc).__name__ == "FitCancelled" or (cancel is not None and cancel()):
                raise SheetCancelled(f"DDR sheet cancelled during the {name} analysis; nothing was written") from None
            messages.append(f"the {name.replace('_', ' ')} analysis failed ({type(exc).__name__}: {exc}); "
                            "the sheet says it was not run")
            results[name] = None
        _emit(progress, phase, 1, 1)
        _check(cancel, f"after the {name} analysis")

    if results.get("score_reliability") is None and getattr(results.get("methods"), "score_reliability", None):
        # the estimator comparison ran the observed-scale LMM already: the sheet prints its score reliability
        results["score_reliability"] = results["methods"].score_reliability
    _emit(progress, "inputs", 0, 1)
    inputs = report_inputs_from(c, posterior=posterior, object_of_measurement=object_of_measurement, claim=claim,
                                target=target, budget=budget, prices=prices,
                                analyses={k: v for k, v in results.items() if v is not None},
                                corpus_summary=corpus_summary, title=title, examined_sizes=examined_sizes)
    inputs.pair = pair  # the buyer's pair: a page after page 1 (core.pair_comparison, as ddr compare)
    _emit(progress, "inputs", 1, 1)
    _check(cancel, "before writing the PDF")
    _emit(progress, "sheet", 0, 1)
    written = write_sheet(inputs, output, date_invariant=date_invariant)
    messages += [s.message() for s in written.left_out]  # the sheet says the same in the section's place
    _emit(progress, "sheet", 1, 1)
    return SheetResult(path=written.path, inputs=inputs, fit_key=fit_key, fit_path=fit_path, from_cache=from_cache,
                       converged=converged, messages=messages, left_out=written.left_out)
