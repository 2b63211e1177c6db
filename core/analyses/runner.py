"""``ddr analyses``: the refit-heavy analyses of one corpus, headless, as one JSON object or text.

Names (``--which``): ``difficulty`` (:mod:`.difficulty_study`), ``heldout``
(:mod:`.heldout`), ``loo`` (:mod:`.loo`), ``lobo`` and ``lomo``
(:mod:`.stability`), ``failure-modes`` (:mod:`.failure_modes`) and ``frontier``
(:mod:`.frontier_time`).  Every fit goes through the HDF5 fit cache, so a rerun
with the same inputs samples nothing.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..reliability import to_jsonable
from ..references import cite
from .gap_verdict import verdict_sentence

__all__ = ["ANALYSIS_NAMES", "parse_which", "run_analysis_studies", "studies_to_dict", "sheet_analyses",
           "run_analyses", "format_analyses", "convergence_lines"]

ANALYSIS_NAMES: tuple[str, ...] = ("difficulty", "heldout", "loo", "lobo", "lomo", "failure-modes", "frontier")
#: Analyses run only when named (``--which capability,transfer``): IRT scale (:mod:`.capability`), transfer
#: across benchmarks (:mod:`.transfer`).
EXTRA_NAMES: tuple[str, ...] = ("capability", "transfer")
_ALIASES = {"held_out": "heldout", "held-out": "heldout", "leave-one-benchmark-out": "lobo",
            "leave-one-model-out": "lomo", "failure_modes": "failure-modes", "failures": "failure-modes",
            "failure-taxonomy": "failure-modes", "frontier-over-time": "frontier"}


def parse_which(text: str | None) -> list[str]:
    """``"difficulty,loo"`` -> ``["difficulty", "loo"]``; all of them when empty."""
    if not text:
        return list(ANALYSIS_NAMES)
    names = []
    for raw in text.split(","):
        n = _ALIASES.get(raw.strip().lower(), raw.strip().lower())
        if not n:
            continue
        if n not in ANALYSIS_NAMES + EXTRA_NAMES:
            raise ValueError(f"--which: unknown analysis {raw.strip()!r}; choose from "
                             f"{', '.join(ANALYSIS_NAMES + EXTRA_NAMES)}")
        if n not in names:
            names.append(n)
    if not names:
        raise ValueError(f"--which: no analysis named; choose from {', '.join(ANALYSIS_NAMES)}")
    return names


def run_analysis_studies(corpus, which, spec, settings, *, cache_dir: str | Path | None = None, n_splits: int = 50,
                         n_strata: int = 4, posterior=None, progress=None, cancel=None,
                         scheduler: str | None = None, undated: str = "stop", options: dict | None = None,
                         refit_rule: str | None = None, timings: dict | None = None, heldout_choice=None,
                         plan=None) -> dict:
    """Run the named analyses in order; the study objects, keyed by name.

    Parameters
    ----------
    corpus
        A validated corpus.
    which
        Names from :data:`ANALYSIS_NAMES`.
    spec, settings
        The model and sampler settings of the fits (held-out splits use
        :func:`~.heldout.split_settings` of them).
    cache_dir
        The fit cache folder.
    n_splits, n_strata
        Held-out splits (50 in seed 003 (DDR paper 2026)), difficulty strata (4: quartiles).
    posterior
        The main fit, when at hand (PSIS-LOO uses it if it kept every effect).
    progress, cancel
        ``progress(phase, i, n, eta)`` with the analysis name prefixed; ``cancel()`` polled between fits.
    scheduler
        A Dask scheduler address for the refits (:class:`~.engine.RefitEngine`; ``$DDR_SCHEDULER`` when None).
    undated
        Frontier: models without a release date stop it (``"stop"``) or are left out and named (``"drop"``).
    refit_rule
        How long the refits of difficulty and hold-out run: ``"precision"`` (None: the default) or ``"gate"``
        (:mod:`.precision`).
    timings
        Filled with each analysis's wall seconds, by name, when given.
    heldout_choice
        The hold-out's estimator (:class:`~.heldout_choice.HeldOutChoice`; None: Bayesian refits).
    plan
        Core's estimate of exactly these analyses (:class:`~.defaults.AnalysesPlan`), when made: the progress's
        time left starts from it and follows the pace of the refits against it (:mod:`.pace`).
    options
        Per-analysis keyword arguments: ``options["capability"]`` for
        :func:`~.capability.capability_study` (``subjects``, ``models``, ``external``),
        ``options["transfer"]`` for :func:`~.transfer.transfer_study` (``families``, ``family_score``, ``obj``).

    Returns
    -------
    dict
        ``difficulty`` -> :class:`~.difficulty_study.DifficultyStudy`, ``heldout`` ->
        :class:`~.heldout.HeldOutStudy`, ``loo`` -> :class:`~.loo.LooResult`, ``lobo`` / ``lomo``
        -> a stability DataFrame, ``capability`` -> :class:`~.capability.CapabilityStudy`, ``transfer`` ->
        :class:`~.transfer.TransferStudy`, or a ``{"skipped": why}`` dict when there is nothing to leave out.
        :func:`studies_to_dict` makes them JSON-ready, :func:`sheet_analyses` hands them to the DDR sheet.
    """
    from .difficulty import difficulty_study
    from .loo import loo_study
    from .stability import stability_table

    from .defaults import AnalysesPlan, BatchProgress

    # one progress count over every analysis's fits (done of the whole batch, with its ETA)
    counts = {}
    for name in which:
        if name == "difficulty":
            counts[name] = n_strata + 1
        elif name == "heldout":
            counts[name] = 2 * n_splits
        elif name == "loo":
            counts[name] = 1
        elif name in ("lobo", "lomo"):
            k = corpus.n_levels("benchmark" if name == "lobo" else "model")
            counts[name] = k + 1 if k > 1 else 0
        else:  # failure modes, frontier, capability, transfer: their own fits, counted as one step each
            counts[name] = 1
    if plan is None or set(plan.which) != set(which):  # no estimate: the pace of the refits alone
        plan = AnalysesPlan(tuple(which), counts, {}, n_splits)
    batch = BatchProgress(progress, plan)
    out: dict = {}
    for name in which:
        prog = batch.for_analysis(name)
        t0 = time.perf_counter()

        engine_kw = {"parent": posterior, "scheduler": scheduler}  # refits of the main fit, where it is at hand
        if name == "difficulty":
            out[name] = difficulty_study(corpus, spec, settings, cache_dir, prog, cancel, n_strata=n_strata,
                                         refit_rule=refit_rule, **engine_kw)
        elif name == "heldout":
            out[name] = _heldout(corpus, spec, settings, cache_dir, prog, cancel, n_splits, refit_rule, engine_kw,
                                 heldout_choice)
        elif name == "loo":
            out[name] = loo_study(corpus, posterior, spec, settings, cache_dir, prog, cancel, scheduler=scheduler)
        elif name in ("failure-modes", "frontier"):  # their own fits / none (not the given spec)
            out[name] = _failure_or_frontier_study(name, corpus, settings, cache_dir, prog, cancel, n_splits, undated)
        elif name in EXTRA_NAMES:
            out[name] = _run_extra(name, corpus, spec, settings, cache_dir, posterior, prog, cancel,
                                   dict((options or {}).get(name) or {}))
        else:
            facet = "benchmark" if name == "lobo" else "model"
            if corpus.n_levels(facet) < 2:
                out[name] = {"skipped": f"the corpus has one {facet}; nothing to leave out"}
                continue
            out[name] = stability_table(corpus, facet, spec, settings, cache_dir, prog, cancel, **engine_kw)
        if timings is not None:
            timings[name] = time.perf_counter() - t0
    return out


def _heldout(corpus, spec, settings, cache_dir, prog, cancel, n_splits, refit_rule, engine_kw, choice):
    """The hold-out study by the chosen estimator, its choice line on the result."""
    import dataclasses

    from .heldout import held_out_study

    if choice is not None and choice.estimator == "reml":
        from .heldout_reml import held_out_study_reml

        return held_out_study_reml(corpus, spec, prog, cancel, n_splits=n_splits, choice=choice.line)
    study = held_out_study(corpus, spec, settings, cache_dir, prog, cancel, n_splits=n_splits,
                           refit_rule=refit_rule, **engine_kw)
    if choice is not None and study.result is not None:
        study.result = dataclasses.replace(study.result, choice=choice.line)
    return study


def _failure_or_frontier_study(name, corpus, settings, cache_dir, progress, cancel, n_splits, undated="stop"):
    """Failure modes (:mod:`.failure_modes`) or the frontier over time (:mod:`.frontier_time`); a corpus
    without an error-category facet is skipped, one without release dates stops with the models named."""
    if name == "failure-modes":
        from .failure_modes import NoErrorCategory, failure_mode_study

        try:
            return failure_mode_study(corpus, settings, cache_dir, progress, cancel, n_splits=n_splits)
        except NoErrorCategory as exc:
            return {"skipped": str(exc)}
    from .frontier_time import MissingReleaseDates, frontier_over_time

    try:
        return frontier_over_time(corpus, cancel=cancel, undated=undated)
    except MissingReleaseDates as exc:
        return {"stopped": str(exc), "models_without_release_date": exc.models}


def _irt_length(settings) -> dict:
    """The IRT fits' warmup and draws: the user's fixed length, else the capability study's own defaults.

    Under the gate (the sampler's default run length) ``settings.draws`` is only the G-study's first look
    (200 per chain); the IRT models sample one fixed block, so they keep their own 500 + 1,000.
    """
    if getattr(settings, "stop", "fixed") == "fixed":
        return {"warmup": settings.warmup, "draws": settings.draws}
    return {}


def _run_extra(name, corpus, spec, settings, cache_dir, posterior, prog, cancel, opts):
    """The capability scale (IRT) or the transfer study, with the G-study fits through the cache."""
    from ..model.posterior import SamplerSettings

    settings = settings or SamplerSettings()
    if name == "capability":
        from ..fitting import fit_corpus
        from .capability import capability_study

        def gstudy():  # the G-study ranking to compare with: the main fit, or the same model through the cache
            return fit_corpus(corpus, spec, settings, cache_dir=cache_dir, progress=prog, cancel=cancel).posterior

        return capability_study(corpus, posterior=posterior, gstudy=None if opts.pop("no_gstudy", False) else gstudy,
                                chains=settings.chains, seed=settings.seed, progress=prog, cancel=cancel,
                                **_irt_length(settings), **opts)
    from ..model.formula import as_spec
    from .transfer import transfer_study

    # each benchmark alone: a spec with benchmark terms (pooled) becomes the per-benchmark model
    spec = as_spec(spec)
    per = "per-benchmark" if any("benchmark" in t.split(":") for t in spec.term_names) else spec
    return transfer_study(corpus, per, settings, cache_dir, prog, cancel, **opts)


def run_extra_for_sheet(name: str, ctx):
    """``ddr report --analyses capability,transfer``: the study for the sheet, from its analysis context
    (the sheet's fit is the G-study compared with; families from the shipped family map)."""
    opts: dict = {}
    if name == "transfer":
        from ..corpus.importers._common import resources_dir
        from .transfer import read_family_map

        opts["families"] = read_family_map(resources_dir() / "aliases" / "families.toml")
    return _run_extra(name, ctx.corpus, ctx.spec, ctx.settings, ctx.cache_dir, ctx.posterior, ctx.progress,
                      ctx.cancel, opts)


def studies_to_dict(studies: dict) -> dict:
    """JSON-ready numbers of :func:`run_analysis_studies` (what ``ddr analyses --json`` prints)."""
    out: dict = {}
    for name, st in studies.items():
        if isinstance(st, dict):
            out[name] = st
        elif name in ("lobo", "lomo"):
            out[name] = {"facet": "benchmark" if name == "lobo" else "model", "design": st.attrs["design"],
                         "n_fitted": st.attrs["n_fitted"], "n_cached": st.attrs["n_cached"],
                         "n_fits": st.attrs.get("n_fits"), "n_converged": st.attrs.get("n_converged"),
                         "n_rerun": st.attrs.get("n_rerun", 0), "cold": st.attrs.get("cold", {}),
                         "rows": st.to_dict(orient="records")}
            if "rank_parts" in st.attrs:  # rank correlations within the parts of a disconnected corpus
                out[name].update(rank_parts=st.attrs["rank_parts"], rank_part_reasons=st.attrs["rank_part_reasons"])
        else:
            out[name] = st.to_dict()
    return to_jsonable(out)


def sheet_analyses(studies: dict) -> dict:
    """The studies the DDR sheet draws, under :data:`~.report.inputs.ANALYSIS_KEYS`.

    ``difficulty`` -> its :class:`~.report.inputs.DifficultyProfile`, ``heldout`` -> ``held_out``
    (:class:`~.report.inputs.HeldOutReliability`, absent when no split succeeded), ``loo`` -> its
    :class:`~.report.inputs.LooSummary`.  The stability tables are not on the sheet.
    """
    out: dict = {}
    if "difficulty" in studies:
        out["difficulty"] = studies["difficulty"].profile
    if "heldout" in studies and studies["heldout"].result is not None:
        out["held_out"] = studies["heldout"].result
    if "loo" in studies:
        out["loo"] = studies["loo"].summary
    if "failure-modes" in studies and not isinstance(studies["failure-modes"], dict):
        out["failure_taxonomy"] = studies["failure-modes"].taxonomy()
    if "frontier" in studies and not isinstance(studies["frontier"], dict):
        out["frontier"] = studies["frontier"]
    for name in EXTRA_NAMES:  # the study objects (report.content reads them)
        if name in studies and not isinstance(studies[name], dict):
            out[name] = studies[name]
    return out


def run_analyses(corpus, which, spec, settings, *, cache_dir: str | Path | None = None, n_splits: int = 50,
                 n_strata: int = 4, posterior=None, progress=None, cancel=None, scheduler: str | None = None,
                 undated: str = "stop", options: dict | None = None, refit_rule: str | None = None,
                 heldout_estimator: str | None = "bayes") -> dict:
    """:func:`run_analysis_studies`, as one JSON-ready dict per analysis (:func:`studies_to_dict`).

    ``heldout_estimator``: ``"bayes"``, ``"reml"`` or ``"auto"`` (:mod:`.heldout_choice`: decided on the
    engine's estimate of the Bayesian refits against the sheet's 15-minute budget; Bayesian when no
    estimate can be made)."""
    from .heldout_choice import choose_heldout_estimator

    plan = _plan_of(corpus, which, spec, settings, cache_dir, posterior, n_splits, n_strata, refit_rule,
                    heldout_estimator)
    choice = None
    if "heldout" in which:
        choice = (plan.heldout_choice if plan is not None and plan.heldout_choice is not None
                  else choose_heldout_estimator(heldout_estimator, None))
    took: dict = {}
    out = studies_to_dict(run_analysis_studies(corpus, which, spec, settings, cache_dir=cache_dir,
                                               n_splits=n_splits, n_strata=n_strata, posterior=posterior,
                                               progress=progress, cancel=cancel, scheduler=scheduler,
                                               undated=undated, options=options, refit_rule=refit_rule,
                                               timings=took, heldout_choice=choice))
    conv = convergence_of(out)
    timing = {"seconds": took}
    if plan is not None:  # the engine's estimate beside what each analysis took
        timing.update(estimated_seconds=dict(plan.seconds), text=plan.estimate_and_actual(took))
    # the verdict first: "converged" is false when any fit behind any analysis was not
    return {"converged": conv["converged"], "convergence": conv, **out, "timing": timing}


def _plan_of(corpus, which, spec, settings, cache_dir, posterior, n_splits, n_strata, refit_rule,
             heldout_estimator="bayes"):
    """The engine's estimate of the refit analyses among ``which`` (:func:`~.defaults.plan_sheet_analyses`),
    from the main fit given or stored in the cache; None when neither is at hand or it cannot be made."""
    from .defaults import SHEET_DEFAULT, plan_sheet_analyses

    names = [n for n in which if n in SHEET_DEFAULT]
    if not names:
        return None
    try:
        if posterior is None:
            from .engine import RefitEngine

            posterior = RefitEngine(corpus, spec, settings, cache_dir=cache_dir).parent_posterior()
        if posterior is None:
            return None
        return plan_sheet_analyses(corpus, posterior, which=names, n_splits=n_splits, n_strata=n_strata,
                                   cache_dir=cache_dir, refit_rule=refit_rule, heldout_estimator=heldout_estimator)
    except (ValueError, KeyError, AttributeError):
        return None


def _f(x, fmt="{:.3f}"):
    return "n/a" if x is None else fmt.format(x)


def convergence_of(result: dict) -> dict:
    """How many of the fits behind each analysis passed the convergence gate, and whether all did.

    Returns
    -------
    dict
        ``{"converged": bool or None, "fits": {analysis: {"n_fits": n, "n_converged": k, "n_rerun": r,
        "n_cold": c}}}`` (``r`` refits rerun with more draws by the gate, ``c`` parts fitted cold);
        ``converged`` is None when no analysis counted its fits (PSIS-LOO reuses the main fit).
    """
    fits = {name: {"n_fits": r["n_fits"], "n_converged": r["n_converged"], "n_rerun": r.get("n_rerun", 0),
                   "n_cold": len(r.get("cold") or {}),
                   **({"converged_on": r["converged_on"]} if r.get("converged_on") else {})}
            for name, r in result.items() if isinstance(r, dict) and r.get("n_fits") is not None}
    converged = None if not fits else all(f["n_converged"] == f["n_fits"] for f in fits.values())
    return {"converged": converged, "fits": fits}


def convergence_lines(result: dict) -> list[str]:
    """Per analysis: how many of its fits passed the convergence gate, how many the gate reran with more
    draws, PROVISIONAL when not all converged, and the parts fitted cold rather than refitted (with why).
    What ``ddr analyses`` prints first and the app's Analyses tab shows on top."""
    lines = []
    conv = result.get("convergence") or convergence_of(result)
    for name, f in conv["fits"].items():
        ok = f["n_converged"] == f["n_fits"]
        lines.append(f"{name}: {f['n_converged']} of {f['n_fits']} fits converged"
                     + (f" ({f['converged_on']})" if f.get("converged_on") else "")
                     + (f" ({f['n_rerun']} rerun with more draws)" if f.get("n_rerun") else "")
                     + ("" if ok else " - its numbers rest on unconverged fits and are PROVISIONAL"))
        for why in (result.get(name) or {}).get("cold", {}).values():
            lines.append(f"  {why}")
    return lines


def format_analyses(result: dict) -> str:
    """Plain text of :func:`run_analyses` (the fits' convergence first)."""
    lines = convergence_lines(result)
    d = result.get("difficulty")
    if d:
        lines.append(f"Difficulty-conditional Erho2 ({cite('ddr2026', 'sec. 5.3')}; each stratum at its own tasks, "
                     "the aggregate at the corpus's design"
                     + (f"; refits to the {d['refit_rule']} rule" if d.get("refit_rule") else "") + "):")
        for s in d["strata"]:
            e, m = s["erho2"], s.get("erho2_mcse") or {}
            mc = [v for v in m.values() if v is not None]
            lines.append(f"  {s['label']:<14} {s['n_tasks']:>4} tasks, mean success {s['mean_success']:.2f}: "
                         + ("failed: " + str(s["error"]) if e is None else
                            f"{e['median']:.3f} [{e['lower95']:.3f}, {e['upper95']:.3f}]"
                            + (f" (Monte Carlo SE median {_f(m.get('median'), '{:.4f}')}, ends <= "
                               f"{max(mc):.4f})" if mc else "")))
        a = d["aggregate"]
        lines.append(f"  {'aggregate':<14} {a['median']:.3f} [{a['lower95']:.3f}, {a['upper95']:.3f}]; "
                     f"gap aggregate - hardest {_f(d['gap_aggregate_minus_hardest'], '{:+.3f}')}")
        if d.get("verdict"):
            lines.append("  " + verdict_sentence(d["verdict"], "the all-tasks figure", "the hardest stratum"))
    h = result.get("heldout")
    if h:
        est = {"reml": "REML refits, observed 0/1 scale", "bayes": "Bayesian refits, latent logit scale"}
        lines.append(f"Held-out reliability ({cite('ddr2026', 'sec. 5.4')}; {est.get(h.get('estimator'), 'Bayesian refits')}), "
                     f"{h['n_splits']} splits of {h['train_fraction']}: "
                     f"Pearson r {_f(h['pearson_r'], '{:+.2f}')}"
                     + (f" (MCSE {h['pearson_r_mcse']:.3f})" if h.get("pearson_r_mcse") is not None else "")
                     + f", mean gap held-out - projected {_f(h['mean_gap'], '{:+.4f}')}"
                     + (f" (MCSE {h['mean_gap_mcse']:.4f})" if h.get("mean_gap_mcse") is not None else "")
                     + (f"; refits to the {h['refit_rule']} rule" if h.get("refit_rule") else "")
                     + (f"; split SE r {h['pearson_r_split_se']:.3f}, gap {h['mean_gap_split_se']:.4f}"
                        if h.get("pearson_r_split_se") is not None else ""))
        if h.get("verdict"):
            lines.append("  " + verdict_sentence(h["verdict"], "the training-cell projection", "the held-out figure"))
        if h.get("choice"):
            lines.append(f"  {h['choice']}")
    lo = result.get("loo")
    if lo:
        lines.append(f"PSIS-LOO over {lo['n_cells']} cells: Pareto k <= 0.7: {lo['good']}, 0.7-1: {lo['bad']}, "
                     f"> 1: {lo['very_bad']}; elpd_loo {lo['elpd_loo']:.1f} (se {lo['elpd_se']:.1f}), "
                     f"p_loo {lo['p_loo']:.1f}"
                     + (f"; relative efficiency (ESS/S of each cell's likelihood) median {lo['r_eff_median']:.2f}, "
                        f"min {lo['r_eff_min']:.2f}" if lo.get("r_eff_median") is not None else ""))
    if result.get("capability"):
        from .capability import format_capability

        lines.append(format_capability(result["capability"]))
    if result.get("transfer"):
        from .transfer import format_transfer

        lines.append(format_transfer(result["transfer"]))
    for key, what in (("lobo", "Leave-one-benchmark-out"), ("lomo", "Leave-one-model-out")):
        t = result.get(key)
        if not t:
            continue
        if "skipped" in t:
            lines.append(f"{what}: skipped ({t['skipped']})")
            continue
        lines.append(f"{what} (Erho2 at the full corpus's design; rank correlation with the full fit):")
        if t.get("rank_parts"):
            lines.append(f"  rank correlations over pairs within one of {len(t['rank_parts'])} parts only:")
            lines.extend(f"  {r}" for r in t["rank_part_reasons"])
        lines.append(f"  {'left out':<24}{'Erho2':>8}{'change':>9}{'Spearman':>10}{'Kendall':>9}")
        for r in t["rows"]:
            if r.get("error"):
                lines.append(f"  {str(r['left_out'])[:23]:<24} failed: {r['error']}")
                continue
            lines.append(f"  {str(r['left_out'])[:23]:<24}{_f(r.get('erho2')):>8}{_f(r.get('delta_erho2'), '{:+.3f}'):>9}"
                         f"{_f(r.get('spearman'), '{:+.2f}'):>10}{_f(r.get('kendall'), '{:+.2f}'):>9}")
    if result.get("failure-modes"):
        from .failure_modes import format_failure_modes

        lines.append(format_failure_modes(result["failure-modes"]))
    if result.get("frontier"):
        from .frontier_time import format_frontier

        lines.append(format_frontier(result["frontier"]))
    if (result.get("timing") or {}).get("text"):
        lines.append(result["timing"]["text"])
    return "\n".join(lines)
