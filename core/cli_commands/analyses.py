"""``ddr analyses``: the refit-heavy analyses (difficulty strata, held-out splits, PSIS-LOO, leave one
benchmark or model out) and the others run on their own (failure modes, frontier, capability, transfer)."""

from __future__ import annotations

import argparse
import json

from ..corpus.issues import CorpusError
from ..terminal_progress import TerminalProgress, run_with_progress
from .common import EXIT_INVALID, EXIT_OK, cache_folder_refused, corpus_of, refusal


def cmd_analyses(args: argparse.Namespace) -> int:
    """``ddr analyses``: difficulty strata, held-out splits, PSIS-LOO, leave-one-out stability; progress on stderr."""
    from ..analyses import format_analyses, parse_which, run_analyses
    from ..fitting import settings_from_args
    from ..model.formula import ModelSpecError, as_spec
    from ..model.posterior import FitCancelled

    if cache_folder_refused(args):
        return EXIT_INVALID
    try:
        which = parse_which(args.which)
        posterior = None
        if args.path.suffix.lower() in (".h5", ".hdf5"):
            from ..cache import CacheFileError, read_fit_file
            from ..fitting import posterior_from_entry

            if args.corpus is None:
                raise ValueError(f"{args.path} is a cached fit; give the corpus it was fitted to with --corpus FILE")
            try:
                entry = read_fit_file(args.path)
                posterior = posterior_from_entry(entry)
            except CacheFileError as exc:
                raise ValueError(f"{args.path}: not a usable cached fit ({exc}); refit with `ddr fit`") from None
            fit_path, args.path = args.path, args.corpus
            spec, settings = posterior.spec, posterior.settings
        corpus = corpus_of(args)
        if posterior is not None:
            from ..fitting import check_fit_of_corpus

            check_fit_of_corpus(entry.meta, corpus, fit_path)  # as `ddr report` does: not another corpus's trials
        if posterior is None:
            if args.formula and args.preset:
                raise ValueError("give at most one of --formula or --preset")
            from ..design.presets import default_preset

            spec = as_spec(args.formula or args.preset or default_preset(corpus))
            settings = settings_from_args(args)
        spec.validate(corpus.table.columns)
        extra = _extra_analysis_options(args, which)  # its side files first: a bad file is named before all else
        asked = [w for w in which if w in ("capability", "transfer")]
        if asked:  # the app disables them on such a corpus; the command line says the same reason, before a fit
            from ..analyses.availability import unavailable_reason

            reason = unavailable_reason(corpus, "capability")
            if reason:
                raise ValueError(f"--which {','.join(asked)} cannot run on this corpus. {reason}")
        if args.strict_terms:  # refuse before any refit (each refit would fit the reduced preset)
            from ..design.presets import UnsupportedTermsError, supported_spec

            check = supported_spec(corpus, spec)
            if check.changed:
                raise UnsupportedTermsError(check)
    except (CorpusError, ModelSpecError, ValueError, OSError) as exc:
        return refusal(exc)
    progress = TerminalProgress(not args.quiet)
    result, code = run_with_progress(
        progress, FitCancelled, (ModelSpecError, ValueError),
        lambda: run_analyses(corpus, which, spec, settings, cache_dir=args.cache, n_splits=args.splits,
                             n_strata=args.strata, posterior=posterior, progress=progress,
                             scheduler=args.scheduler, undated=args.undated,
                             options=extra,
                             refit_rule=getattr(args, "refit_rule", None),
                             heldout_estimator=getattr(args, "heldout_estimator", "auto")))
    if code is not None:
        return code
    print(json.dumps(result, indent=2) if args.json else format_analyses(result))
    return EXIT_OK


def _extra_analysis_options(args: argparse.Namespace, which: list[str]) -> dict:
    """Options of ``--which capability,transfer`` (files read before any fit, so a bad file fails at once)."""
    out: dict = {}
    if "capability" in which:
        cap = {"subjects": args.subjects, "models": ["1pl", "2pl"] if args.irt == "both" else [args.irt]}
        if args.external_ranking is not None:
            from ..analyses.external_ranking import read_external_ranking

            cap["external"] = read_external_ranking(args.external_ranking, args.external_kind)
        out["capability"] = cap
    if "transfer" in which:
        tr = {"family_score": args.family_score}
        if args.families is not None:
            from ..analyses.transfer import read_family_map

            tr["families"] = read_family_map(args.families)
        out["transfer"] = tr
    return out

