"""Which analyses a DDR sheet runs by default, and how long they will take.

``ddr report`` and the app's export run difficulty strata, seed 003 (DDR paper 2026)'s 50 hold-out splits and
PSIS-LOO by default when the refit engine's estimate for this corpus on this machine is under
:data:`AUTO_BUDGET_SECONDS` (15 minutes). When all three are over it, the ones that fit in it
together still run (:meth:`AnalysesPlan.within_budget`, cheapest first): on a 2-core machine the
Terminal-Bench 2.0 demo's difficulty strata and PSIS-LOO take minutes while its 100 hold-out refits
take about 20, so a default sheet answers decision 2 and offers decision 4 instead of leaving both
blank. The estimate (:func:`plan_sheet_analyses`) is built from the parent fit's own wall time (what
this corpus costs here), the refits each analysis needs (4 strata; 2 parts per split at the split
settings; one refit of the whole corpus for PSIS-LOO unless its result or a posterior with every
effect is at hand) and each refit's cost predicted from the parent's own pace
(:func:`~.engine.refit_seconds`: its seconds per chain-iteration, the refit's chain-iterations with
the run length the gate will need given the parent's ESS per draw, its set-up; one compile per
analysis, or none where an analysis before it compiled the same refit program), times the measured
:data:`~.engine.REFIT_SPEEDUP`; the gate's reruns are not assumed (a
run length set by the gate rarely needs one).  Under the precision rule (``refit_rule``, the default;
:mod:`.precision`) a stratum's or split part's run length is the one that rule needs
(:func:`~.engine.precision_draws`: bulk ESS 100, and its medians' MCSE within a tenth of the spread
expected across splits, at most 0.005); after a run :meth:`AnalysesPlan.estimate_and_actual` prints each
estimate beside what it took. Above the budget the CLI names the flag that runs them
all (``--analyses difficulty,heldout,loo``) and the app offers the run with its estimate.

:class:`BatchProgress` makes one progress line of several analyses: refits done of the whole
plan's total, and the time left from the plan re-estimated by the pace of the refits finished so far
(:mod:`.pace`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .heldout import split_settings
from .precision import DEFAULT_REFIT_RULE

__all__ = ["AUTO_BUDGET_SECONDS", "SHEET_DEFAULT", "SHEET_SPLITS", "STRATUM_DRAWS_FACTOR", "AnalysesPlan", "plan_sheet_analyses", "BatchProgress",
           "sheet_runners"]

#: The default analyses run without asking when their estimate is under this (seconds).
AUTO_BUDGET_SECONDS = 15 * 60
#: Difficulty strata run this many times the draws per chain :func:`~.engine.expected_draws` predicts from
#: the parent.  A stratum keeps a quarter of the tasks, often of similar difficulty, so a component the
#: parent estimates well (sigma[task], sigma[scaffold]) can sit near 0 in it and mix slowly, and its
#: R-hat <= 1.01 (asked of every component) sets the run length, which the parent's ESS per draw cannot
#: predict.  Measured on the TB2 demo (bench/bench_refit_reported.py --difficulty, session 18): 300, 2,300,
#: 250 and 750 draws per chain against 300 predicted, a mean of 900 (3.0x); under the component rule in
#: session 17 two strata needed 2,800 and 1,650 against about 400 predicted.
STRATUM_DRAWS_FACTOR = 3.0
#: The hold-out splits of a DDR sheet (seed 003 (DDR paper 2026)), and of the app's Analyses tab: a run there
#: samples the refits the sheet's export then finds in the cache.
SHEET_SPLITS = 50
#: The analyses a full DDR sheet draws (``--analyses`` names).
SHEET_DEFAULT: tuple[str, ...] = ("difficulty", "heldout", "loo")


@dataclass
class AnalysesPlan:
    """The default analyses of one sheet and their estimate.

    Attributes
    ----------
    which
        The analyses planned (``--analyses`` names).
    n_refits
        Refits per analysis.
    seconds
        Estimated wall seconds per analysis: the refits not in the cache only.
    n_splits
        Hold-out splits.
    n_cached
        Refits per analysis already stored in the fit cache (reopened, not sampled).
    """

    which: tuple[str, ...]
    n_refits: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)
    n_splits: int = SHEET_SPLITS
    n_cached: dict = field(default_factory=dict)
    #: The run-length rule the refits are priced at (:data:`.precision.REFIT_RULES`).
    refit_rule: str = DEFAULT_REFIT_RULE
    #: The hold-out's estimator and why (:class:`~.heldout_choice.HeldOutChoice`; None: Bayesian, not chosen).
    heldout_choice: object = None
    #: The factor each analysis's estimate was multiplied by (:func:`.calibration.calibration`; absent: 1).
    calibration: dict = field(default_factory=dict)
    #: The part of each analysis's estimate that is its compile, paid by its first refit (:mod:`.pace`).
    compile: dict = field(default_factory=dict)

    @property
    def total_seconds(self) -> float:
        return float(sum(self.seconds.values()))

    @property
    def total_refits(self) -> int:
        return int(sum(self.n_refits.values()))

    @property
    def runs_by_default(self) -> bool:
        """True when the estimate is under :data:`AUTO_BUDGET_SECONDS`."""
        return self.total_seconds < AUTO_BUDGET_SECONDS

    def within_budget(self, budget: float | None = None) -> tuple[str, ...]:
        """The analyses a default sheet runs: every one when :attr:`runs_by_default`, else those that fit in
        ``budget`` seconds (:data:`AUTO_BUDGET_SECONDS`) together, taken cheapest first (ties in plan order).

        Cheapest first keeps the most decisions answered for the time: a sheet's analyses answer one
        decision each, so an analysis that costs minutes is never left out for one that costs the budget.
        """
        budget = AUTO_BUDGET_SECONDS if budget is None else budget
        if self.total_seconds < budget:
            return tuple(self.which)
        chosen, spent = set(), 0.0
        for name in sorted(self.which, key=lambda n: (self.seconds.get(n, 0.0), self.which.index(n))):
            if spent + self.seconds.get(name, 0.0) < budget:
                chosen.add(name)
                spent += self.seconds.get(name, 0.0)
        return tuple(n for n in self.which if n in chosen)

    def beyond_budget(self, budget: float | None = None) -> tuple[str, ...]:
        """The analyses :meth:`within_budget` leaves out (in plan order): the ones a default sheet says "not run"."""
        run = self.within_budget(budget)
        return tuple(n for n in self.which if n not in run)

    def part(self, names) -> "AnalysesPlan":
        """This plan restricted to ``names`` (in this plan's order): what a partial run describes and counts."""
        keep = tuple(n for n in self.which if n in set(names))
        return AnalysesPlan(keep, {n: self.n_refits[n] for n in keep if n in self.n_refits},
                            {n: self.seconds[n] for n in keep if n in self.seconds}, self.n_splits,
                            {n: self.n_cached[n] for n in keep if n in self.n_cached}, self.refit_rule,
                            self.heldout_choice, {n: self.calibration[n] for n in keep if n in self.calibration},
                            {n: self.compile[n] for n in keep if n in self.compile})

    @property
    def heldout_estimator(self) -> str:
        """``"bayes"`` or ``"reml"``: the estimator the hold-out splits are planned (and run) with."""
        return "bayes" if self.heldout_choice is None else self.heldout_choice.estimator

    @property
    def flag(self) -> str:
        """The ``ddr report`` option that runs them."""
        return ("--analyses " + ",".join(self.which) + (f" --splits {self.n_splits}" if "heldout" in self.which else "")
                + (f" --refit-rule {self.refit_rule}" if self.refit_rule != DEFAULT_REFIT_RULE else ""))

    def describe(self) -> str:
        """One line: what runs, how many refits, the estimate (:func:`~ddr_explorer.core.formatting.fmt_duration`)."""
        from ..formatting import fmt_duration

        def part(name):
            n, c = self.n_refits[name], self.n_cached.get(name, 0)
            stored = "" if not c else (", all in the cache" if c >= n else f", {c} in the cache")
            return f"{name} ({n} refit{'s' if n != 1 else ''}{stored})"

        cached = sum(self.n_cached.values())
        left = self.total_refits - cached
        what = (f"{self.total_refits} refits" if not cached
                else f"{self.total_refits} refits, {left} to run" if left else f"{self.total_refits} refits, all cached")
        rule = "" if self.refit_rule == DEFAULT_REFIT_RULE else f" (--refit-rule {self.refit_rule})"
        if self.heldout_estimator == "reml" and "heldout" in self.which:
            what += " (the hold-out's by REML)"
        return (f"analyses {', '.join(part(n) for n in self.which)}: {what}, estimated "
                f"{fmt_duration(self.total_seconds)} on this machine{rule}")

    def estimate_and_actual(self, actual: dict) -> str:
        """One line after a run: each analysis's estimate and the wall seconds it took (``actual``: name ->
        seconds), side by side, and the totals; what calibrates the next estimate (:func:`plan_sheet_analyses`)."""
        from ..formatting import fmt_duration

        ran = [n for n in self.which if n in actual]
        parts = [f"{n} {fmt_duration(self.seconds.get(n, 0.0))} / {fmt_duration(actual[n])}" for n in ran]
        est = sum(self.seconds.get(n, 0.0) for n in ran)
        took = sum(actual[n] for n in ran)
        return (f"analyses estimated / took: {'; '.join(parts)}; total {fmt_duration(est)} estimated, "
                f"{fmt_duration(took)} taken")

    def remember(self, actual: dict, cache_dir=None) -> dict:
        """Keep what each analysis took against its estimate here, for the next plan's (:mod:`.calibration`)."""
        from .calibration import remember

        return remember(cache_dir, self, actual)


def plan_sheet_analyses(corpus, posterior, *, which=SHEET_DEFAULT, n_splits: int = SHEET_SPLITS, n_strata: int = 4,
                        cache_dir=None, refit_rule: str | None = None, heldout_estimator: str | None = "bayes",
                        budget: float | None = None) -> AnalysesPlan:
    """Refits and estimated seconds of the sheet's analyses of ``corpus`` (module note).

    Parameters
    ----------
    corpus
        The corpus.
    posterior
        The main fit's posterior: its timings, diagnostics and ``settings`` scale every refit.
    which, n_splits, n_strata
        The analyses, hold-out splits and difficulty strata.
    cache_dir
        The fit cache: refits already stored there (the same jobs the analyses build: difficulty strata
        and hold-out splits, :meth:`~.engine.RefitEngine.to_sample`) and a stored PSIS-LOO result cost
        nothing.
    refit_rule
        ``"precision"`` (None: the default) or ``"gate"`` (:mod:`.precision`): the run length each refit of
        difficulty and hold-out is priced at (:func:`~.engine.precision_draws` or
        :func:`~.engine.expected_draws`).
    heldout_estimator
        ``"bayes"`` (the default here: the Bayesian refits, as before the choice), ``"reml"`` or ``"auto"``
        (:func:`~.heldout_choice.choose_heldout_estimator`: Bayesian when the estimate fits ``budget``
        (:data:`AUTO_BUDGET_SECONDS`) with the analyses run beside it, else REML); the choice is
        :attr:`AnalysesPlan.heldout_choice`, and a REML hold-out is priced at ``2 n_splits`` REML fits of
        the whole corpus, one of them timed here (:func:`~.heldout_reml.reml_part_seconds`).
    """
    from .calibration import calibration
    from .engine import compile_seconds, refit_seconds
    from .precision import check_refit_rule, precision_rule

    refit_rule = check_refit_rule(refit_rule)
    ps = posterior.settings
    plan = AnalysesPlan(tuple(which), n_splits=n_splits, refit_rule=refit_rule)
    # strata and splits stop on the coefficient they report (:mod:`.reported`): its ESS per draw on the
    # parent, at the corpus's observed design (a split's held-out design differs in its trials only)
    rep = None
    if "difficulty" in which or "heldout" in which:
        from ..dstudy import observed_design
        from .reported import ReportedQuantity

        try:
            rep = (ReportedQuantity.coefficient(observed_design(corpus)),)
        except (ValueError, KeyError):
            rep = None
    compiled: set = set()  # the refit programs compiled by an analysis before (the compile cache shares them)
    for name in which:
        reported, factor, cached = None, 1.0, 0
        # (rule, share of the trials, share of a split part whose spread sets the tolerance) per kind of refit
        kinds: list = [dict()]
        if name == "difficulty":
            from .difficulty import STRATUM_PROBS

            refits = [ps] * n_strata
            reported, factor = rep, STRATUM_DRAWS_FACTOR
            kinds = [dict(precision=precision_rule(refit_rule, "stratum", STRATUM_PROBS), share=1.0 / n_strata)]
            cached = _n_cached(name, corpus, posterior, cache_dir, n_strata=n_strata, refit_rule=refit_rule)
        elif name == "heldout":
            refits = [split_settings(ps)] * (2 * n_splits)
            reported = rep
            kinds = [dict(precision=precision_rule(refit_rule, "projected"), share=0.7, spread_share=0.7),
                     dict(precision=precision_rule(refit_rule, "held-out"), share=0.3, spread_share=0.3)]
            cached = _n_cached(name, corpus, posterior, cache_dir, n_splits=n_splits, refit_rule=refit_rule)
        elif name == "loo":
            refits = [] if _loo_ready(corpus, posterior, cache_dir) else [ps]
        elif name in ("lobo", "lomo"):
            facet = "benchmark" if name == "lobo" else "model"
            k = corpus.n_levels(facet)
            refits = [ps] * (k if k > 1 else 0)
        else:
            raise ValueError(f"unknown analysis {name!r}; choose from difficulty, heldout, loo, lobo, lomo")
        plan.n_refits[name] = len(refits)
        plan.n_cached[name] = min(cached, len(refits))
        left = len(refits) - plan.n_cached[name]
        # one compile per analysis, then each refit to run at the parent's own pace here (engine.refit_seconds)
        # every refit of one analysis has the same settings; under the precision rule a hold-out split's two
        # parts differ in their share of the trials and so in their run length: the mean of the kinds
        per = (sum(refit_seconds(posterior, refits[0], reported=reported, draws_factor=factor, **k) for k in kinds)
               / len(kinds)) if left else 0.0
        # what such runs took here against their estimate (calibration.py: 16 / 13 before any run here)
        plan.calibration[name] = calibration(cache_dir, name) if left else 1.0
        # one compile per refit program: PSIS-LOO's refit runs at the parent's settings, as the difficulty strata
        # before it, and reads their program from the compile cache (measured on the demo: 42 s against 173 s
        # estimated with a compile of its own)
        program = repr(refits[0]) if refits else None
        first = bool(left) and program not in compiled
        if left:
            compiled.add(program)
        plan.compile[name] = plan.calibration[name] * (compile_seconds(posterior) if first else 0.0)
        plan.seconds[name] = plan.compile[name] + plan.calibration[name] * left * per
    if "heldout" in which:
        _choose_heldout(plan, corpus, posterior, heldout_estimator, budget)
    return plan


def _choose_heldout(plan: AnalysesPlan, corpus, posterior, requested, budget) -> None:
    """Set the plan's hold-out estimator (:mod:`.heldout_choice`) and, for REML, its price."""
    from .heldout_choice import choose_heldout_estimator

    others = plan.part([n for n in plan.which if n != "heldout"])
    # the analyses a default sheet runs beside the hold-out share its budget (cheapest first, as within_budget)
    other_seconds = sum(others.seconds[n] for n in others.within_budget(budget))
    choice = choose_heldout_estimator(requested, plan.seconds["heldout"], other_seconds=other_seconds,
                                      budget_seconds=AUTO_BUDGET_SECONDS if budget is None else budget)
    plan.heldout_choice = choice
    if choice.estimator == "reml":
        from .heldout_reml import reml_part_seconds

        try:
            plan.seconds["heldout"] = 2 * plan.n_splits * reml_part_seconds(corpus, posterior.spec)
        except (ValueError, KeyError):  # the run will say why; price it as nothing rather than fail the plan
            plan.seconds["heldout"] = 0.0
        plan.n_cached["heldout"] = 0  # REML parts are not cached; the Bayesian refits in the cache are not used
        plan.calibration["heldout"] = 1.0  # timed here, not priced from the parent's pace


def _n_cached(name: str, corpus, posterior, cache_dir, *, n_splits: int = 50, n_strata: int = 4,
              refit_rule: str | None = None) -> int:
    """Refits of analysis ``name`` already in the fit cache: its jobs built as the sheet's runner builds them
    (:func:`sheet_runners`: the parent ``posterior``, its settings, the default split seed and design), each
    looked up under its refit key without being opened (:meth:`~.engine.RefitEngine.to_sample`).  0 when
    the jobs cannot be built (the run would say why)."""
    from .engine import RefitEngine

    try:
        engine = RefitEngine(corpus, posterior.spec, posterior.settings, cache_dir=cache_dir, parent=posterior)
        if name == "heldout":
            from .heldout import held_out_jobs

            jobs, _, _ = held_out_jobs(corpus, posterior.spec, n_splits=n_splits, refit_rule=refit_rule)
            return len(jobs) - len(engine.to_sample(jobs, split_settings(posterior.settings)))
        from .difficulty import difficulty_jobs

        _, _, jobs = difficulty_jobs(corpus, posterior.spec, n_strata=n_strata, refit_rule=refit_rule)
        refits = jobs[1:]  # the first is the parent itself
        return len(refits) - len(engine.to_sample(refits, posterior.settings))
    except (ValueError, KeyError):
        return 0


def _loo_ready(corpus, posterior, cache_dir) -> bool:
    """PSIS-LOO needs no refit: the posterior kept every term's effects, or its result is stored."""
    spec = posterior.spec
    if all(t in posterior.random_effects for t in spec.term_names):
        return True
    from ..fitting import fit_key
    from .loo import _read_stored, _store_path

    return _read_stored(_store_path(cache_dir, fit_key(corpus, spec, posterior.settings))) is not None


class BatchProgress:
    """One progress line over several analyses: refits done of the plan's total, and the time left re-estimated
    from the pace of the refits finished so far against the plan's estimate (:class:`~.pace.RefitPace`).

    ``for_analysis(name)`` gives the callback an analysis reports to (its own ``i`` of ``n``); the
    outer ``progress(phase, done, total, eta)`` sees the whole batch, ``phase`` starting with the analysis's
    name (:func:`~.pace.analysis_of_phase`, :func:`~.pace.progress_line`).
    """

    def __init__(self, progress, plan: AnalysesPlan, clock=time.perf_counter):
        from .pace import estimate_from_plan

        self.progress, self.plan = progress, plan
        self.total = max(plan.total_refits, 1)
        self.offset = 0
        self.pace = estimate_from_plan(plan, clock=clock)

    def for_analysis(self, name: str):
        n_planned = self.plan.n_refits.get(name, 0)
        start = self.offset
        self.offset += n_planned

        extra = {}

        def cb(phase, i, n, eta):
            if self.progress is None:
                return
            # the analysis's own count of refits: its first total holds jobs that are not refits (difficulty's
            # parent, reopened at once), counted off; a gate rerun adds to its total later, and is not a refit
            # of the plan (the count stays at the plan's while reruns run); a count in other units is scaled
            first = extra.setdefault("n", int(n))
            if first >= n_planned:
                own = min(max(int(i) - (first - n_planned), 0), n_planned)
            else:  # counted in other units (a REML hold-out's splits): scaled to the planned refits
                own = min(int(round(n_planned * i / n)) if n else 0, n_planned)
            self.pace.report(name, own)
            left = self.pace.eta()
            if left is None and eta is not None:  # nothing measured and no plan: the analysis's own estimate
                left = eta
            self.progress(f"{name} - {phase}", min(start + own, self.total), self.total, left)
        return cb


def sheet_runners(which, *, n_splits: int = SHEET_SPLITS, n_strata: int = 4, scheduler: str | None = None, progress=None,
                  plan: AnalysesPlan | None = None, refit_rule: str | None = None, timings: dict | None = None,
                  heldout_choice=None) -> dict:
    """Runners for :func:`~ddr_explorer.core.ddr_sheet.write_ddr_sheet`'s ``analyses=`` (name -> ``runner(ctx)``).

    Each runs its study through the refit engine with the main fit as the parent; with ``plan`` and
    ``progress`` every runner reports to one :class:`BatchProgress` over the whole batch.  ``refit_rule``:
    the refits' run-length rule (:mod:`.precision`; None: the plan's, else ``"precision"``).  ``timings``:
    each runner writes its wall seconds there under its name (:meth:`AnalysesPlan.estimate_and_actual`).
    ``heldout_choice``: the hold-out's estimator (:class:`~.heldout_choice.HeldOutChoice`; None: the plan's,
    else Bayesian refits); its line travels with the result to the sheet.
    """
    import functools

    from .precision import check_refit_rule

    refit_rule = check_refit_rule(refit_rule if refit_rule is not None else getattr(plan, "refit_rule", None))
    from .difficulty import difficulty_study
    from .heldout import held_out_study
    from .loo import run_loo

    batch = None if plan is None or progress is None else BatchProgress(progress, plan)

    def prog(ctx, name):
        return ctx.progress if batch is None else batch.for_analysis(name)

    def difficulty(ctx):
        return difficulty_study(ctx.corpus, ctx.spec, ctx.settings, ctx.cache_dir, prog(ctx, "difficulty"),
                                ctx.cancel, n_strata=n_strata, parent=ctx.posterior, scheduler=scheduler,
                                refit_rule=refit_rule).profile

    choice = heldout_choice if heldout_choice is not None else getattr(plan, "heldout_choice", None)

    def heldout(ctx):
        if choice is not None and choice.estimator == "reml":
            from .heldout_reml import held_out_study_reml

            study = held_out_study_reml(ctx.corpus, ctx.spec, prog(ctx, "heldout"), ctx.cancel, n_splits=n_splits,
                                        choice=choice.line)
            if study.result is None:
                raise ValueError(f"held-out reliability (REML): fewer than 2 of {n_splits} splits could be fitted; "
                                 f"first problem: {next(iter(study.errors.values()), 'none')}")
            return study.result
        study = held_out_study(ctx.corpus, ctx.spec, ctx.settings, ctx.cache_dir, prog(ctx, "heldout"), ctx.cancel,
                               n_splits=n_splits, parent=ctx.posterior, scheduler=scheduler, refit_rule=refit_rule)
        if study.result is None:
            raise ValueError(f"held-out reliability: fewer than 2 of {n_splits} splits could be fitted; first "
                             f"problem: {next(iter(study.errors.values()), 'none')}")
        if choice is not None:
            import dataclasses

            return dataclasses.replace(study.result, choice=choice.line)
        return study.result

    def loo(ctx):
        return run_loo(ctx.corpus, ctx.posterior, ctx.spec, ctx.settings, ctx.cache_dir, prog(ctx, "loo"), ctx.cancel,
                       scheduler=scheduler)

    def timed(name, runner, ctx):
        t0 = time.perf_counter()
        try:
            return runner(ctx)
        finally:
            timings[name] = time.perf_counter() - t0

    table = {"difficulty": difficulty, "heldout": heldout, "loo": loo}
    out = {}
    for name in which:
        if name not in table:
            raise ValueError(f"the DDR sheet draws difficulty, heldout and loo; {name!r} is not one of them")
        out[name] = table[name] if timings is None else functools.partial(timed, name, table[name])
    return out
