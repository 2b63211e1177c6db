"""Fit a corpus, through the cache: what ``ddr fit``, the app and the report call.

:func:`fit_corpus` keys the fit by the corpus content, the model, the priors, the
sampler settings and the package version (:func:`ddr_explorer.core.cache.cache_key`),
returns the cached fit when an intact one exists, and otherwise samples with
:func:`ddr_explorer.core.model.sampler.fit` and stores the result atomically.  A
damaged cache file is reported (``FitResult.cache_problem``) and the fit is run
again; it never crashes the caller.

What is stored (see :mod:`.cache` for the file layout, an ArviZ InferenceData netCDF
file): the sigma and mu draws,
the sampler statistics, and the random effects of every term without a task
facet (models, scaffolds, benchmarks and their interactions: what ranks need).
Task-level random effects are not kept: there can be tens of thousands of them
and no view uses their draws.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .cache import FORMAT_VERSION, OLD_FORMAT_VERSIONS, CacheEntry, FitCache, cache_key
from .files import default_cache_dir
from .corpus.corpus import Corpus
from .reliability import VarianceComponents, object_for_terms


@dataclass
class FitResult:
    """A posterior and where it came from."""

    posterior: object
    key: str
    cache_path: Path | None
    from_cache: bool
    cache_problem: str | None = None
    #: The preset checked against the design (:class:`~.design.presets.TermCheck`): which terms were left out.
    terms: object | None = None


#: Settings of the gate-stopping rule (:mod:`.model.stopping`): in the key and the file of a gate-stopped fit
#: only, so that a fixed-length fit keeps the key it had before the rule existed.
_GATE_ONLY = ("stop", "max_draws", "max_seconds", "check_every")


def _settings_dict(settings) -> dict:
    d = dataclasses.asdict(settings)
    if d.get("stop", "fixed") == "fixed":
        for k in _GATE_ONLY:
            d.pop(k, None)
    if not d.get("adaptive_warmup", False):  # likewise a fit with Stan's full warmup schedule
        d.pop("adaptive_warmup", None)
    if not d.get("quadrature_nodes"):  # the default rule (the fewest nodes that pass): keys from before it
        d.pop("quadrature_nodes", None)
    return d


def fit_key(corpus: Corpus, spec, settings, format_version: int = FORMAT_VERSION) -> str:
    """The cache key of a fit (corpus hash, formula, priors, sampler settings, version; an older
    ``format_version`` gives the key that format stored the fit under)."""
    d = spec.to_dict()
    return cache_key(corpus_hash=corpus.content_hash, spec={"terms": d["terms"], "folded": d["folded"],
                                                            "family": d["family"]},
                     priors=d["priors"], settings=_settings_dict(settings), format_version=format_version,
                     slice=(getattr(corpus, "provenance", None) or {}).get("slice"))


def _kept_terms(post) -> list[str]:
    return [t for t in post.random_effects if "task" not in t.split(":")]


#: The sampler's statistics under ArviZ's names in the cache file (``sample_stats`` group); the project's
#: own key of each is recorded in the file's metadata (``sample_stats_keys``) and given back on read.
def _stat_entry_name(key: str) -> str:
    from .model.diagnostics import ARVIZ_STATS  # lazily: the report reads fits without the model package

    group = "sample_stats"
    if key.startswith("warmup_"):  # warmup draws are as many as the warmup: ArviZ's own group
        group, key = "warmup_sample_stats", key[len("warmup_"):]
    return f"{group}/{ARVIZ_STATS.get(key, key)}"


def posterior_to_entry(post, corpus: Corpus | None = None) -> CacheEntry:
    """The arrays and metadata of a posterior, for the cache (laid out as ArviZ's InferenceData)."""
    from .model.diagnostics import var_name

    terms = list(post.sigma)
    arrays: dict[str, np.ndarray] = {"posterior/mu": np.asarray(post.mu)}
    dims: dict[str, list[str]] = {"posterior/mu": ["chain", "draw"]}
    coords: dict[str, list[str]] = {"term": terms}
    if terms:
        arrays["posterior/sigma"] = np.stack([np.asarray(post.sigma[t]) for t in terms], axis=-1)
        dims["posterior/sigma"] = ["chain", "draw", "term"]
    levels = {}
    for term in _kept_terms(post):
        u = np.asarray(post.random_effects[term], dtype=np.float32)
        name, dim = f"posterior/u_{var_name(term)}", f"{var_name(term)}_level"
        arrays[name] = u
        dims[name] = ["chain", "draw", dim]
        lv = post.levels[term]
        levels[term] = {"columns": list(lv.columns), "values": lv.astype(str).to_numpy().tolist()}
        coords[dim] = ["|".join(row) for row in levels[term]["values"]]
    stat_keys = {}
    for k, v in post.sample_stats.items():
        name = _stat_entry_name(k)
        v = np.asarray(v)
        arrays[name] = -v if k.endswith("potential_energy") else v  # ArviZ's lp is the log density
        var = name.split("/")[1]  # extra axes (e.g. one acceptance rate per scale move) get ArviZ's default names
        dims[name] = ["chain", "draw"] + [f"{var}_dim_{i}" for i in range(v.ndim - 2)]
        stat_keys[name] = k
    spec = post.spec.to_dict()
    meta = {
        "spec": spec, "settings": _settings_dict(post.settings), "device": post.device,
        "wall_seconds": post.wall_seconds, "timings": {k: float(v) for k, v in post.timings.items()
                                                      if isinstance(v, (int, float))},
        "n_cells": post.n_cells, "n_trials": post.n_trials, "notes": list(post.notes), "levels": levels,
        "integrated_terms": list(getattr(post, "integrated", [])),
        "quadrature_error": getattr(post, "quadrature_error", None),
        "quadrature_nodes": getattr(post, "quadrature_nodes", None),
        "corpus_hash": None if corpus is None else corpus.content_hash,
        "corpus_name": None if corpus is None else corpus.name,
        "slice": None if corpus is None else corpus.provenance.get("slice"),
        "sample_stats_keys": stat_keys,
    }
    diag = getattr(post, "diagnostics", None)
    if diag is not None:  # the verdict travels with the file: a reader need not recompute it
        meta["verdict"] = diag.verdict()
    if corpus is not None:  # `ddr dstudy FIT.h5` asks about the design the corpus ran, without the corpus
        meta["observed_design"] = _observed_design_record(post, corpus)
    return CacheEntry(arrays=arrays, meta=meta, dims=dims, coords=coords)


#: The fields of :class:`~.dstudy.DStudyDesign` a fit file records of its corpus's observed design.
_DESIGN_FIELDS = ("n_tasks", "n_scaffolds", "n_benchmarks", "n_replicates", "price_per_trial", "n_models",
                  "object_of_measurement", "claim", "tasks_per_benchmark", "extra_facets")


def _observed_design_record(post, corpus: Corpus) -> dict | None:
    """The corpus's observed design (:func:`~.dstudy.observed_design`) for the fit's own object, as the
    cache file stores it (None when the corpus has no such design, e.g. a table without the facets)."""
    from .dstudy import observed_design

    comp = components_from_posterior(post)
    try:
        d = observed_design(corpus, object_of_measurement=object_for_terms(comp.terms), facets=comp.facets)
    except (KeyError, ValueError):
        return None
    out = d.to_dict()
    return {k: out[k] for k in _DESIGN_FIELDS} | {"corpus_name": corpus.name, "corpus_hash": corpus.content_hash}


def observed_design_of_fit(meta: dict, object_of_measurement: str | None = None):
    """The observed design a fit file records (:func:`_observed_design_record`) as a
    :class:`~.dstudy.DStudyDesign`, or None for a file written before fits recorded it."""
    from .dstudy import DStudyDesign

    rec = meta.get("observed_design")
    if not rec:
        return None
    kw = {k: rec[k] for k in _DESIGN_FIELDS if k in rec and rec[k] is not None}
    if object_of_measurement is not None:
        kw["object_of_measurement"] = object_of_measurement
    return DStudyDesign(**kw)


def verdict_of(post) -> dict:
    """The convergence verdict of a posterior (:meth:`~.model.diagnostics.Diagnostics.verdict`)."""
    return post.diagnostics.verdict()


def posterior_from_entry(entry: CacheEntry):
    """Rebuild a :class:`~.model.sampler.Posterior` from a cache entry (diagnostics recomputed)."""
    from .model.diagnostics import diagnose, var_name
    from .model.formula import HalfStudentT, Priors, StudentT, parse_formula
    from .model.posterior import Posterior, SamplerSettings

    meta = entry.meta
    spec_d = meta["spec"]
    p = spec_d["priors"]
    priors = Priors(intercept=StudentT(p["intercept"]["df"], p["intercept"]["loc"], p["intercept"]["scale"]),
                    sigma=HalfStudentT(p["sigma"]["df"], p["sigma"]["scale"]),
                    sigma_by_term={k: HalfStudentT(v["df"], v["scale"]) for k, v in p["sigma_by_term"].items()})
    spec = parse_formula(spec_d["formula"], priors, name=spec_d.get("name"))
    # a fixed-length fit is stored without the gate's fields (_settings_dict), so a file without "stop"
    # is a fixed run: read it as one, not as the (now default) gate rule
    settings = SamplerSettings(**{"stop": "fixed", **meta["settings"]})
    a = entry.arrays
    names = list(entry.coords.get("term", []))
    stacked = a.get("posterior/sigma")
    sigma = {} if stacked is None else {t: np.ascontiguousarray(stacked[..., i]) for i, t in enumerate(names)}
    sigma = {t: sigma[t] for t in spec.term_names if t in sigma}
    u = {t: a[f"posterior/u_{var_name(t)}"] for t in meta["levels"]}
    levels = {t: pd.DataFrame(d["values"], columns=d["columns"]) for t, d in meta["levels"].items()}
    stats = {}
    for name, key in meta["sample_stats_keys"].items():
        stats[key] = -a[name] if key.endswith("potential_energy") else a[name]
    post = Posterior(sigma=sigma, mu=a["posterior/mu"], random_effects=u, levels=levels, spec=spec,
                     settings=settings, device=meta["device"], wall_seconds=meta["wall_seconds"],
                     timings=meta["timings"], sample_stats=stats, n_cells=meta["n_cells"],
                     n_trials=meta["n_trials"], notes=meta["notes"],
                     integrated=list(meta.get("integrated_terms", [])),
                     quadrature_error=meta.get("quadrature_error"), quadrature_nodes=meta.get("quadrature_nodes"))
    post.diagnostics = diagnose(post)
    return post


def fit_corpus(corpus: Corpus, spec="per-benchmark", settings=None, *, cache_dir: str | Path | None = None,
               use_cache: bool = True, progress=None, cancel=None, strict_terms: bool = False) -> FitResult:
    """Fit ``corpus`` (or reopen its cached fit).

    Parameters
    ----------
    corpus
        A validated corpus.
    spec
        A :class:`~.model.formula.ModelSpec`, a preset name or a formula.
    settings
        :class:`~.model.sampler.SamplerSettings` (defaults when None).
    cache_dir
        The cache folder (:func:`default_cache_dir` when None).
    use_cache
        False to neither read nor write the cache.
    progress, cancel
        Passed to the sampler (phase, iteration, total, ETA) and polled between chunks.
    strict_terms
        A preset whose terms the design cannot separate is fitted without them, with a note
        (:func:`~.design.presets.supported_spec`); with ``strict_terms`` it is refused instead
        (:class:`~.design.presets.UnsupportedTermsError`, naming the supported formula).
    """
    from .design.presets import UnsupportedTermsError, supported_spec
    from .model.formula import as_spec
    from .model.sampler import SamplerSettings, fit

    check = supported_spec(corpus, as_spec(spec))  # before the key: the key is the spec actually fitted
    if check.changed and strict_terms:
        raise UnsupportedTermsError(check)
    spec = check.spec
    settings = settings or SamplerSettings()
    key = fit_key(corpus, spec, settings)
    cache = FitCache(cache_dir or default_cache_dir()) if use_cache else None
    problem = None
    if cache is not None:
        # a file of an older format is found under its old key, said to be old and refitted once
        entry, problem_obj = cache.load(key, old_keys=tuple(fit_key(corpus, spec, settings, v)
                                                            for v in OLD_FORMAT_VERSIONS))
        if entry is not None:
            try:
                return _reopened(entry, corpus, key, cache, check)
            except (KeyError, TypeError, ValueError) as exc:  # readable but not what this version expects
                problem = f"cached fit {cache.path_for(key)} is unusable ({exc}); refitting"
        elif problem_obj is not None:
            problem = str(problem_obj)
        if problem is not None:
            cache.discard(key)
            if problem_obj is not None and problem_obj.path != cache.path_for(key):
                problem_obj.path.unlink(missing_ok=True)  # the old-format file: refitted now, so once
    if cache is not None:
        cache.check_writable()  # a cache folder that cannot take the fit is said now, not after the sampling
    post = fit(corpus, spec, settings, progress=progress, cancel=cancel)
    if check.note:  # stored with the fit: a cache hit, the sheet and the app read it from the posterior
        post.notes.insert(0, check.note)
    path = None
    if cache is not None:
        from .cache import CacheWriteError

        try:
            path = cache.store(key, posterior_to_entry(post, corpus))
        except CacheWriteError as exc:  # a full disk must not lose the fit just made: its results stand
            problem = str(exc) if problem is None else f"{problem}; {exc}"
    return FitResult(post, key, path, False, problem, terms=check)


def _reopened(entry, corpus, key: str, cache: FitCache, check) -> FitResult:
    """The cached fit of ``entry`` as a :class:`FitResult`; KeyError, TypeError or ValueError (naming the
    level) when this version cannot read it or its levels are not the corpus's."""
    post = posterior_from_entry(entry)
    mismatch = levels_mismatch(post, corpus)
    if mismatch:
        raise ValueError(mismatch)
    return FitResult(post, key, cache.path_for(key), True, terms=check)


def check_fit_of_corpus(meta: dict, corpus: Corpus, fit_path) -> None:
    """Refuse a fit file used with a corpus it was not fitted to (every command that takes ``FIT.h5 --corpus``).

    The fit file records its corpus's content hash; a corpus with another hash would give analyses of one
    corpus's trials against another's posterior (``ddr analyses`` gave LOO elpd -55.10 against -60.64 for
    the right corpus).

    Raises
    ------
    ValueError
        Naming both hashes and what to do.
    """
    want = meta.get("corpus_hash")
    if want and want != corpus.content_hash:
        raise ValueError(f"{fit_path} was fitted to a corpus with content hash {want[:12]}, but "
                         f"{corpus.source or corpus.name} has {corpus.content_hash[:12]}; give the corpus the fit "
                         "was made from, or fit this one")


def levels_mismatch(post, corpus) -> str | None:
    """Why a cached fit's levels are not the corpus's (None when every level is one of the corpus's).

    The key already ties a cache file to the corpus's content; this check makes sure that the names the
    file gives its levels (models, tasks, ...) are names of the corpus, so that a label never moves to
    another model unnoticed.
    """
    table = corpus.table
    for term, lv in (getattr(post, "levels", None) or {}).items():
        cols = [c for c in lv.columns if c in table.columns]
        if not cols or len(lv) == 0:
            continue
        have = set(map(tuple, table[cols].astype(str).drop_duplicates().to_numpy().tolist()))
        for row in lv[cols].astype(str).to_numpy().tolist():
            if tuple(row) not in have:
                return f"level {'|'.join(row)!r} of term {term!r} is not in the corpus"
    return None


def cached_fit(corpus: Corpus, spec="per-benchmark", settings=None, *,
               cache_dir: str | Path | None = None) -> FitResult | None:
    """The fit :func:`fit_corpus` would reopen from the cache, or None when it would sample.

    Read only: a missing, old or unreadable file gives None and is left for :func:`fit_corpus` to
    report and replace.  The app calls it when a corpus opens, so a fit already made is shown at
    once, without the user pressing Fit.
    """
    from .design.presets import supported_spec
    from .model.formula import as_spec
    from .model.sampler import SamplerSettings

    check = supported_spec(corpus, as_spec(spec))  # the key is of the spec fit_corpus fits
    settings = settings or SamplerSettings()
    key = fit_key(corpus, check.spec, settings)
    cache = FitCache(cache_dir or default_cache_dir())
    if not cache.path_for(key).exists():
        return None
    entry, _problem = cache.load(key)
    if entry is None:
        return None
    try:
        return _reopened(entry, corpus, key, cache, check)
    except (KeyError, TypeError, ValueError):  # fit_corpus refits it, and says why
        return None


# -- what the D-study, ranks and report take from a posterior -----------------------------
# The one implementation: core/report/inputs.py imports these.  They read a posterior by
# attribute (duck typing) and never import the sampler, so the report stays light and any
# posterior-like object (a cached fit, a test double) can feed them.
def components_from_posterior(post) -> VarianceComponents:
    """Per-draw variance components of a posterior (chains flattened), residual pi^2/3.

    ``sigma^2_k`` for every random-intercept term ``k`` of the fitted model
    (seed 000 (Hardy et al. 2026) Eq. 1; SPEC sec. 2): each draw of the posterior gives one draw of
    every component, so every estimand downstream is computed per draw.  A
    posterior that carries ``variance_components`` (term -> sigma^2 draws) is
    used as it is; otherwise its ``sigma`` draws are squared.  The residual is
    the logistic variance ``pi^2/3`` of the latent scale, or the spec's
    ``residual_variance`` when the posterior has one.

    Parameters
    ----------
    post
        A :class:`~.model.sampler.Posterior` or any object with ``sigma`` (term
        -> ``(chains, draws)`` standard deviations) or ``variance_components``.

    Returns
    -------
    VarianceComponents
    """
    vc = getattr(post, "variance_components", None)
    if vc is None:
        vc = {t: np.asarray(s, dtype=np.float64) ** 2 for t, s in getattr(post, "sigma").items()}
    spec = getattr(post, "spec", None)
    residual = getattr(spec, "residual_variance", None)
    formula = getattr(spec, "formula", None)
    draws = {t: np.asarray(v, dtype=np.float64).reshape(-1) for t, v in vc.items()}
    mu = getattr(post, "mu", None)
    mu = None if mu is None else np.asarray(mu, dtype=np.float64).reshape(-1)
    if mu is not None and any(len(v) != len(mu) for v in draws.values()):
        mu = None  # a posterior-like object whose intercept is not one per draw (a test double)
    return VarianceComponents.from_mapping(
        draws,
        residual=None if residual is None else float(residual),
        source=f"posterior of {formula}" if formula else "posterior", intercept=mu)


def _effect_draws(post, term):
    """``(S, L)`` draws of one term's random effects and its levels table, or ``(None, None)``."""
    effects = getattr(post, "random_effects", None) or {}
    u = effects.get(term)
    if u is None:
        return None, None
    u = np.asarray(u, dtype=np.float64)
    levels = (getattr(post, "levels", None) or {}).get(term)
    if levels is not None and not isinstance(levels, pd.DataFrame):
        levels = pd.DataFrame(levels)
    return u.reshape(-1, u.shape[-1]), levels


def _level_names(levels, term: str, n: int) -> list[str]:
    if levels is None or len(levels) != n:
        return [f"{term} {k + 1}" for k in range(n)]
    return [" / ".join(map(str, row)) for row in levels.astype(str).itertuples(index=False)]


def theta_from_posterior(post, obj: str = "model") -> tuple[np.ndarray, list[str]]:
    """Latent capability draws for ranks (SPEC sec. 5; seed 000 sec. 5).

    ``obj="model"``: theta_m = u_m (the persistent model effect; benchmark-specific
    deviations u_bm have mean zero over benchmarks and average out of a leaderboard
    ranking).  ``obj="system"``: theta_ma = u_m + u_a + u_ma for each observed
    model-scaffold pair.  Any other ``obj`` names a term (e.g. ``"agent"`` in seed
    003's four-facet design) whose random effects are the capabilities.

    Returns
    -------
    theta
        ``(S, n)`` draws, chains flattened.
    names
        The level names (``"model / scaffold"`` for systems).

    Raises
    ------
    ValueError
        When the posterior kept no random effects for the term(s) needed.
    """
    if obj != "system":
        u, levels = _effect_draws(post, obj)
        if u is None:
            raise ValueError(f"the fit has no {obj} term (or kept no random effects); ranks need (1|{obj})")
        if obj == "model" and levels is not None and "model" in levels.columns and len(levels) == u.shape[1]:
            return u, levels["model"].astype(str).tolist()
        return u, _level_names(levels, obj, u.shape[1])
    um, lm = _effect_draws(post, "model")
    if um is None:
        raise ValueError("the fit has no model term (or kept no random effects); ranks need (1|model)")
    ua, la = _effect_draws(post, "scaffold")
    uma, lma = _effect_draws(post, "model:scaffold")
    if uma is None:
        raise ValueError("system ranks need a model:scaffold term")
    m_idx = {m: i for i, m in enumerate(lm["model"].astype(str))}
    a_idx = {a: i for i, a in enumerate(la["scaffold"].astype(str))} if la is not None else {}
    cols, names = [], []
    for j, (m, a) in enumerate(zip(lma["model"].astype(str), lma["scaffold"].astype(str))):
        th = um[:, m_idx[m]] + uma[:, j]
        if ua is not None:
            th = th + ua[:, a_idx[a]]
        cols.append(th)
        names.append(f"{m} / {a}")
    return np.stack(cols, axis=1), names


def settings_from_args(args):
    """``SamplerSettings`` from a command's ``--draws/--warmup/--chains/--seed/--device/--marginalise``
    (and ``--quadrature-nodes``, ``--stop/--max-draws/--max-seconds``)
    (those the command lacks, or None: the app's defaults, so that the command reuses a fit the app
    cached, and the reverse)."""
    from .model.posterior import SamplerSettings

    given = {k: getattr(args, k, None) for k in ("draws", "warmup", "chains", "seed", "device", "marginalise",
                                                  "quadrature_nodes", "stop", "max_draws", "max_seconds")}
    return SamplerSettings(**{k: v for k, v in given.items() if v is not None})


#: Measured first-fit wall times on an idle 2-core machine, the scale ``ddr dstudy`` quotes before a fit
#: (README; docs/sampler-measurements.md): (what, cells, seconds).
FIT_TIME_REFERENCES = (("Terminal-Bench 2.0, per-benchmark", 7_209, 42.3),
                       ("a HAL-scale pooled corpus", 41_354, 12.8 * 60))


def fit_announcement(corpus, spec, path, command: str = "dstudy") -> str:
    """What ``ddr dstudy CORPUS`` (or ``ddr fit``: ``command``) says before it samples a fit that is not in the
    cache: that it does, how big the fit is against measured fits, that progress follows, and for the D-study
    the ``--preview`` alternative (the guide's promise of an estimate before long work)."""
    from .formatting import fmt_duration
    from .model.design_matrix import build_design

    dm = build_design(corpus, spec)
    refs = "; ".join(f"{what} ({cells:,} cells) took {fmt_duration(s)}" for what, cells, s in FIT_TIME_REFERENCES)
    text = (f"ddr {command}: no cached fit of {spec.formula} for {Path(path).name} with these sampler settings: "
            f"sampling it now ({dm.n_cells:,} cells, {int(sum(dm.n_levels)):,}"
            f" random effects). For scale, on an idle 2-core machine {refs}. Progress and the sampler's ETA follow; "
            f"the fit is cached for the next run.")
    if command == "dstudy":
        text += f" For point estimates in seconds instead: ddr dstudy {path} --preview"
    return text


def announce_if_not_cached(corpus, spec, settings, cache_dir, path, say, command: str) -> None:
    """``say(fit_announcement(...))`` when the fit of ``spec`` (as it will be fitted) is not in the cache."""
    from .design.presets import supported_spec
    from .model.formula import as_spec

    fitted = supported_spec(corpus, as_spec(spec)).spec
    if not FitCache(cache_dir or default_cache_dir()).path_for(fit_key(corpus, fitted, settings)).exists():
        say(fit_announcement(corpus, fitted, path, command))


def components_for_dstudy(args, *, progress=None, announce=None, keep: dict | None = None):
    """For ``ddr dstudy PATH``: the components of a cached fit file or of a corpus's fit, the corpus's
    observed design (:func:`~.dstudy.observed_design`, or the one a fit file records) and the fit's
    convergence verdict (:func:`verdict_of`).

    ``announce(text)`` is called before a fit that is not in the cache is sampled
    (:func:`fit_announcement`), and ``progress`` is passed to that fit."""
    from .cache import CacheFileError, read_fit_file
    from .dstudy import observed_design

    path = Path(args.path)
    if path.suffix == ".h5":
        if getattr(args, "slice", None):
            raise ValueError(f"--slice cuts a corpus, and {path} is a fit: give the corpus with --slice, or the fit "
                             "of the slice (its file records the slice it was fitted to)")
        try:
            entry = read_fit_file(path)
            post = posterior_from_entry(entry)
        except CacheFileError as exc:
            raise ValueError(f"{path}: {exc}") from None
        if getattr(args, "token_prices", None) is not None:
            raise ValueError(f"--token-prices needs the corpus's token counts: give the corpus, not the fit {path}")
        comp = components_from_posterior(post)
        args.object = object_for_terms(comp.terms, getattr(args, "object", None))
        observed = observed_design_of_fit(entry.meta, args.object)
        rec = entry.meta.get("observed_design") or {}
        args.design_source = (
            f"the observed design of corpus {rec.get('corpus_name') or '?'}, recorded in the fit file {path.name}"
            if observed is not None else
            f"the defaults (50 tasks, 2 models): the fit file {path.name} records no observed design (written before "
            "fit files recorded it); "
            "give the corpus instead, or the sizes (--n-tasks, --n-models, ...)")
        return comp, observed, verdict_of(post)
    from .corpus.columns import options_from_args
    from .corpus.io import load_corpus

    corpus = load_corpus(path, getattr(args, "format", None), **options_from_args(args))
    if keep is not None:  # the caller's split-half check reads the corpus's cells
        keep["corpus"] = corpus
    settings = settings_from_args(args)
    from .design.presets import default_preset

    preset = getattr(args, "preset", None) or default_preset(corpus)
    prices = None
    token_prices = getattr(args, "token_prices", None)
    if token_prices is not None:  # before the fit: a bad price file costs nothing
        from .dstudy import prices_from_tokens
        from .price_tables import read_token_prices

        prices = prices_from_tokens(corpus.table, read_token_prices(token_prices))
    observed_design(corpus, object_of_measurement=getattr(args, "object", None) or "model",
                    claim=getattr(args, "claim", "relative"), prices=prices)  # before the fit: bad input costs nothing
    if announce is not None:
        announce_if_not_cached(corpus, preset, settings, getattr(args, "cache", None), path, announce, "dstudy")
    result = fit_corpus(corpus, preset, settings, cache_dir=getattr(args, "cache", None), progress=progress,
                        strict_terms=bool(getattr(args, "strict_terms", False)))
    comp = components_from_posterior(result.posterior)
    # the object follows the fitted model (agents for seed 003 (DDR paper 2026)'s ddr preset), and so do the design's facets
    args.object = object_for_terms(comp.terms, getattr(args, "object", None))
    observed = observed_design(corpus, object_of_measurement=args.object, claim=getattr(args, "claim", "relative"),
                               prices=prices, facets=comp.facets)
    args.design_source = f"the observed design of corpus {corpus.name} ({path.name})"
    from .dstudy.trial_counts import corpus_counts

    args.corpus_counts = corpus_counts(corpus)  # printed beside the design's own count of trials
    from .design.overlap import model_overlap, sizes_not_answered

    args.not_answered = sizes_not_answered(model_overlap(corpus))  # benchmarks that share no model
    return comp, observed, verdict_of(result.posterior)
