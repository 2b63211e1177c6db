"""What the DDR sheet says: every number and sentence, computed before anything is drawn.

:func:`sheet_content` turns a :class:`~.inputs.ReportInputs` into a
:class:`SheetContent` with core's own functions (:func:`~ddr_explorer.core.dstudy.summary.dstudy_summary`,
:class:`~ddr_explorer.core.dstudy.DStudyModel`, :func:`~ddr_explorer.core.dstudy.cost_frontier`,
:func:`~ddr_explorer.core.ranks.rank_analysis`, ...), so the sheet, the CLI and
the app show the same numbers; :mod:`.sheet` and :mod:`.figures` only lay out
and draw (ArviZ's "compute first, then draw").

Numbers are printed with :mod:`ddr_explorer.core.formatting` (re-exported
here), the same functions the app and the CLI use; the tests use them to check
that the PDF carries core's numbers.

Text is reportlab paragraph markup (``<b>``, ``<i>``, ``<super>``); the
helpers :func:`escape` and the ``E_RHO2``-style constants keep it valid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence
from xml.sax.saxutils import escape as _xml_escape

import numpy as np

from ..analyses.gap_verdict import verdict_sentence
from ..design.overlap import sizes_not_answered
from ..dstudy import (BreadthCurve, BudgetSearch, CostFrontier, DStudyDesign, DStudyModel, DStudyView,
                      allocation_for_summary, fixed_budget_breadth)
from ..dstudy.summary import SCORE_METHOD, dstudy_summary
from ..dstudy.trial_counts import design_trials_text
from ..formatting import (E_RHO2, GEQ, LEQ, NDASH, PHI, SIGMA2, TIMES, FacetWords, facet_words, fmt_coef,  # noqa: F401
                          fmt_interval, fmt_n, fmt_pct, fmt_prob, fmt_r, fmt_rpd, fmt_sig3, fmt_usd, fmt_var)
from ..rank_parts import model_parts
from ..references import cite
from ..score_reliability import LATENT_LABEL
from ..ranks import RankAgreement, RankAnalysis, rank_analysis, ranking_agreement
from ..reliability import (DETECTION_ERHO2, RESIDUAL_LOGISTIC, Summary, canonical_term, capability_gap_ratio,
                           gap_ratio_not_estimable, split_term, summarize, variance_shares)
from .answer_design import AnswerDesign, answer_design
from .heldout_text import REML_R_CAVEAT, held_out_estimator_note, held_out_reading, held_out_verdict  # noqa: F401
from .inputs import DifficultyProfile, FailureTaxonomy, HeldOutReliability, LooSummary, ReportInputs
from .subject_id_notice import subject_ids_notice

__all__ = [
    "E_RHO2", "PHI", "SIGMA2",
    "escape", "fmt_coef", "fmt_interval", "fmt_var", "fmt_pct", "fmt_n", "fmt_usd", "fmt_sig3", "fmt_prob", "fmt_r",
    "term_label", "Notice", "Decision", "ComponentRow", "SheetContent", "sheet_content", "verdict",
]

#: Reliability below this median is called "near zero" on page 1.
NEAR_ZERO = 0.10
#: Fewer models than this: the model variance rests on few levels (a caution on page 1).
FEW_MODELS = 5
#: Rank moves of at least this many places count as "moving" in the cost-aware ranking.
BIG_MOVE = 5


# ---------------------------------------------------------------------------
# Formatting (the one way the sheet prints numbers)
# ---------------------------------------------------------------------------

def escape(text) -> str:
    """Text safe inside reportlab paragraph markup."""
    return _xml_escape(str(text))


def _finite(x) -> bool:
    return x is not None and isinstance(x, (int, float, np.integer, np.floating)) and math.isfinite(float(x))


# ---------------------------------------------------------------------------
# Plain names of the variance terms
# ---------------------------------------------------------------------------

_FACET_WORD = {"benchmark": "benchmark", "task": "task", "model": "model", "scaffold": "scaffold",
               "agent": "agent", "step": "step", "error_category": "error category", "judge": "judge"}


def term_label(term: str) -> str:
    """Display name of a term: ``task:model`` -> ``task \u00d7 model``."""
    return f" {TIMES} ".join(_FACET_WORD.get(f, f) for f in split_term(term))


def term_meaning(term: str, obj: frozenset[str], claim: str = "relative") -> str:
    """What a buyer should read into a term, relative to the object of measurement and the claim.

    Facet main effects shift every object alike: they cancel from rankings
    but are error for absolute scores (SPEC sec. 3).
    """
    fs = frozenset(split_term(term))
    if fs <= obj:
        return "signal: " + ("overall capability differences" if len(fs) == 1 else "system-specific capability")
    if fs & obj:
        others = " and ".join(_FACET_WORD.get(f, f) for f in sorted(fs - obj))
        return f"error: {'ranking' if claim == 'relative' else 'scores'} change{'s' if claim == 'relative' else ''} " \
               f"with the {others}"
    tail = "cancels from rankings" if claim == "relative" else "error for absolute scores"
    if fs == {"task"} or fs == {"benchmark", "task"}:
        return f"task difficulty ({tail})"
    if fs == {"benchmark"}:
        return f"benchmark difficulty ({tail})"
    return f"shifts every object alike ({tail})"


# ---------------------------------------------------------------------------
# Content records
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Notice:
    """One weakness of the evidence, shown at the top of page 1.

    Attributes
    ----------
    severity
        ``"serious"`` (numbers may be wrong) or ``"caution"`` (numbers hold
        for a narrower claim than a reader may assume).
    title, text
        Short title and a sentence of markup.
    """

    severity: str
    title: str
    text: str


@dataclass(frozen=True)
class Decision:
    """One of the five buyer decisions (seed 003 (DDR paper 2026) sec. 6).

    Attributes
    ----------
    number, question
        1..5 and the question in plain words.
    answer
        The answer with the numbers behind it (markup).
    status
        ``"answered"``, ``"partial"`` (answered from the corpus alone; the
        analysis that would settle it was not run) or ``"not run"``.
    """

    number: int
    question: str
    answer: str
    status: str


@dataclass(frozen=True)
class ComponentRow:
    """One row of the variance-component table (all numbers per draw, then summarised)."""

    term: str
    label: str
    meaning: str
    variance: Summary
    share: Summary
    is_residual: bool = False


@dataclass
class SheetContent:
    """Everything the sheet shows, computed (see :func:`sheet_content`)."""

    inputs: ReportInputs
    design: DStudyDesign
    summary: dict
    view: DStudyView
    headline: dict
    estimand: str
    object_label: str
    question: str
    claim_label: str
    verdict_key: str
    verdict_text: str
    meaning_text: str
    components: list[ComponentRow]
    gap: Summary | None  # None: not estimable from this fit (gap_text says why)
    gap_text: str
    frontier: CostFrontier | None
    search: BudgetSearch
    breadth: BreadthCurve | None
    ranks: RankAnalysis | None
    agreement: RankAgreement | None
    notices: list[Notice]
    decisions: list[Decision]
    required_90: float
    cost_bands: dict = field(default_factory=dict)
    design_text: str = ""
    #: Agents in order of accuracy (indices into ``inputs.accuracy``; the table shows the first ones).
    agent_order: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: True when at least two agents have their own cost (a cost-aware ranking means something).
    agent_cost_ranking: bool = False
    #: Mean success over every task (the difficulty table's "all tasks" row), None without difficulty.
    mean_success_all: float | None = None
    #: Median width of the 95% rank intervals (places) and the models whose rank is certain.
    rank_width_median: float | None = None
    n_certain_ranks: int | None = None
    #: A disconnected design: the rank agreement of each part with two or more models
    #: (``(part index, RankAgreement)``; ``agreement`` is then None: it would compare across parts).
    part_agreements: list = field(default_factory=list)
    #: The budget's tasks per benchmark (:func:`~.dstudy.allocate_budget` as a dict), None without one.
    allocation: dict | None = None
    #: The sentence under the allocation table, or why there is no allocation (empty without a budget).
    allocation_text: str = ""
    #: The words of the design's sizes and object (:func:`~..formatting.facet_words`), as the app's.
    words: FacetWords | None = None
    #: The what-if design the user examined (``inputs.examined_design``), None without one: ``text`` (its
    #: sizes in words), ``estimands`` (as ``summary["estimands"]``), ``headline`` (the claim's coefficient)
    #: and ``p_target``.  Printed beside the observed design under its own label, never in its place.
    examined: dict | None = None
    #: ``"observed"`` (the headline and the decisions are about success rates) or ``"latent"``.
    scale: str = "latent"
    #: Page 1's method line: the headline's scale and the split-half check of its claim.
    method_text: str = ""
    #: The design of the cost answers and the tasks for the target: the app's (:mod:`.answer_design`).
    answers: AnswerDesign | None = None

    @property
    def serious(self) -> list[Notice]:
        return [n for n in self.notices if n.severity == "serious"]


# ---------------------------------------------------------------------------
# Verdict and plain-language reading
# ---------------------------------------------------------------------------

def verdict(median: float, target: float, p_target: float, claim: str = "relative") -> tuple[str, str]:
    """Class of a coefficient and its one-line verdict.

    The classes follow the detection-limit reference band (SNR 2-3, i.e.
    Erho2 0.667-0.75; seed 000 (Hardy et al. 2026) Fig. 3) and the target.  These are descriptive
    reference lines, not calibrated thresholds (SPEC sec. 4).
    """
    lo, hi = DETECTION_ERHO2
    what = "ranking" if claim == "relative" else "scores"
    if median < NEAR_ZERO:
        return "near zero", f"Near zero: the {what} {'is' if claim == 'relative' else 'are'} essentially noise."
    if median < lo:
        return "below detection", "Below the detection limit: most differences between scores are noise."
    if median < hi:
        return "detection limit", ("At the detection limit: large differences are real, the order of close ones is not."
                                   if claim == "relative" else
                                   "At the detection limit: only scores far from the threshold can be trusted.")
    if median < target or p_target < 0.5:
        return "below target", (f"Detectable but short of the target {fmt_coef(target)}: "
                                + ("the order of close competitors is not settled." if claim == "relative" else
                                   "scores near the threshold could fall on either side in a replication."))
    return "reliable", (f"Meets the target {fmt_coef(target)}: the "
                        + ("ranking reproduces on fresh tasks." if claim == "relative" else
                           "scores reproduce on fresh tasks, in level as well as in order."))


def _object_words(obj: frozenset[str]) -> tuple[str, str, str]:
    """(label, plural noun, question noun) of an object of measurement."""
    if obj == {"model"}:
        return "model", "models", "models"
    if obj == {"model", "scaffold"}:
        return "model-scaffold system", "systems", "model-scaffold systems"
    if obj == {"agent"}:  # seed 003's single agent facet
        return "agent", "agents", "agents"
    name = " \u00d7 ".join(sorted(obj))
    return name, f"{name} levels", name


# ---------------------------------------------------------------------------
# The computation
# ---------------------------------------------------------------------------

def _design_words(d: DStudyDesign, inputs: ReportInputs, observed: bool = True) -> str:
    s = inputs.corpus_summary
    facets = inputs.components.facets
    w = facet_words(d.object_of_measurement, facets)
    # a fit without a benchmark facet (seed 000 Eq. 2 of one benchmark, seed 003's model) has one task facet
    parts = [w.count("n_tasks", d.effective_n_tasks)]
    if "scaffold" not in d.object_facets and "agent" not in d.object_facets:  # an agent includes its scaffold
        parts.append(w.count("n_scaffolds", d.n_scaffolds))
    if "benchmark" in facets or (s.get("n_benchmarks") or 1) <= 1:
        parts.append(w.count("n_benchmarks", d.effective_n_benchmarks))
    parts.append(w.count("n_replicates", d.n_replicates))
    parts += [w.count(f, n) for f, n in d.extra_facets.items()]
    if not observed:  # a what-if design has sizes only: the corpus's counts belong to the observed one
        return f" {TIMES} ".join(parts)
    return f" {TIMES} ".join(parts) + (f" (medians of the corpus; {fmt_n(s.get('n_models'))} models, "
                                        f"{fmt_n(s.get('n_agents'))} agents, {fmt_n(s.get('n_trials'))} trials)")


def _scale_words(scale: str, sym: str, latent_head: dict, summary: dict, words) -> str:
    """The sentence that says which scale the headline is on, with the latent figure of the papers beside it."""
    if scale != "observed":
        return (f" These figures are on the latent logit scale ({LATENT_LABEL}): they rank latent abilities; "
                "the correlation of success rates is lower where rates sit near 0 or 1.")
    lat_n = (summary.get("latent") or {}).get("min_n", {}).get("n_tasks")
    text = (f" The figures are for observed success rates; the {LATENT_LABEL} has {sym} "
            f"{fmt_coef(latent_head['median'])}")
    if lat_n is not None and lat_n.get("median") is not None:
        text += f" and reaches the target at {fmt_n(lat_n['median'])} {words.noun('n_tasks', lat_n['median'])}"
    return text + "."


def sheet_content(inputs: ReportInputs) -> SheetContent:
    """Compute every number and sentence of the DDR sheet from its inputs.

    Parameters
    ----------
    inputs
        A :class:`~.inputs.ReportInputs`.

    Returns
    -------
    SheetContent
    """
    c = inputs.components
    d = inputs.observed_design
    target = float(inputs.target)
    obj = d.object_facets
    obj_label, obj_plural, obj_question = _object_words(obj)

    # sizes the design cannot support (benchmarks that share no model: core/design/overlap.py) are refused
    not_answered = sizes_not_answered(inputs.corpus_summary.get("model_overlap") or {})
    summary = dstudy_summary(c, d, target=target, not_answered=not_answered)  # the budget search is `search` below
    # dstudy_summary is JSON-ready, so "never reachable" (inf) comes back as None: restore inf.
    for m in summary["min_n"].values():
        for k in ("median", "lower95", "upper95"):
            if m.get(k) is None:
                m[k] = math.inf
    scale = summary["scale"]
    model = DStudyModel(c, scale=scale)
    view = model.view(d, target=target)
    est = d.estimand
    # the headline is on the scale of the scores a buyer reads; the papers' latent figure stays beside it
    latent_head = summary["estimands"][est]
    head = summary["observed_scores"][est] if scale == "observed" else latent_head
    p_target = summary["p_target"]
    vkey, vtext = verdict(head["median"], target, p_target, d.claim)

    if d.claim == "relative":
        question = f"Does this leaderboard rank {obj_question} reliably?"
        claim_label = f"ranking (relative decisions; {E_RHO2})"
    else:
        question = f"Can this leaderboard's scores of {obj_question} be trusted against a fixed threshold?"
        claim_label = f"absolute scores (threshold decisions; {PHI})"

    sym = E_RHO2 if est == "Erho2" else PHI
    # Name only the facets the fit averages over: a facet without a variance term adds no luck.
    words = facet_words(d.object_of_measurement, c.facets)
    drawn = [f"{fmt_n(d.effective_n_tasks)} {words.noun('n_tasks', d.effective_n_tasks)}"]
    luck = ["tasks"]
    if "scaffold" in c.facets and "scaffold" not in obj:
        drawn.append(words.count("n_scaffolds", d.n_scaffolds))
        luck.append("scaffolds")
    if "benchmark" in c.facets and "benchmark" not in obj:
        drawn.append(words.count("n_benchmarks", d.effective_n_benchmarks))
        luck.append("benchmarks")
    for f, n in d.extra_facets.items():  # e.g. seed 003's steps and error categories
        if f in c.facets and f not in obj:
            drawn.append(words.count(f, n))
            luck.append(words.noun(f))
    luck.append(words.noun("n_replicates"))
    kind = "capability" if obj == {"model"} else "performance"
    luck_words = f"{', '.join(luck[:-1])} and {luck[-1]}"
    if d.claim == "relative":
        scores = "success rates" if scale == "observed" else "scores"
        meaning = (f"If the {obj_plural} were evaluated again on a fresh sample of {' and '.join(drawn)}, their "
                   f"{scores} would correlate about {fmt_coef(head['median'])} with today's "
                   f"(95% interval {fmt_interval(head['lower95'], head['upper95'])}). "
                   f"In other words, {fmt_pct(head['median'], 0)} of the spread in scores is real {kind} "
                   f"difference and {fmt_pct(1 - head['median'], 0)} is the luck of which {luck_words} were drawn.")
    else:
        meaning = (f"{PHI} counts every source of error in a score's level, including how hard the drawn tasks "
                   f"happened to be, not only in the order of the {obj_plural}. Of the variance of one "
                   f"{obj_label}'s score on a fresh sample of {' and '.join(drawn)}, {fmt_pct(head['median'], 0)} "
                   f"is real {kind} difference and {fmt_pct(1 - head['median'], 0)} the luck of which {luck_words} "
                   f"were drawn (95% interval of {PHI} {fmt_interval(head['lower95'], head['upper95'])}).")
    meaning += f" P({sym} {GEQ} {fmt_coef(target)}) = {fmt_prob(p_target)}."
    meaning += _scale_words(scale, sym, latent_head, summary, words)

    # -- variance components ------------------------------------------------
    shares = variance_shares(c)
    rows = [ComponentRow(t, term_label(t), term_meaning(t, obj, d.claim), summarize(c.draws[t]), summarize(shares[t]))
            for t in c.terms]
    rows.append(ComponentRow("residual", "trial noise (residual)",
                             f"logistic residual {fmt_var(RESIDUAL_LOGISTIC)} = \u03c0\u00b2/3, fixed",
                             summarize(c.residual), summarize(shares["residual"]), True))
    gap_why = gap_ratio_not_estimable(c, obj)
    gap = None if gap_why is not None else summarize(capability_gap_ratio(c, obj))
    if gap is None:  # a ratio of 1 by construction is not a finding (the fit has no agent-by-task term)
        gap_read = ""
    elif gap.median >= 0.5:
        gap_read = (f"most {obj_label}-related variance is a uniform capability gap: "
                    f"the better {obj_plural} tend to be better on most tasks")
    elif gap.median >= 0.2:
        gap_read = (f"{obj_plural} differ both overall and in which tasks they handle well; "
                    "rank claims hold on average, not task by task")
    else:
        gap_read = (f"{obj_plural} differ mainly in <i>which</i> tasks they solve (specialisation), "
                    "not overall: route tasks to specialists rather than pick one winner")
    # Running text spells variances in words: sub- and superscripts crowd tight lines.
    gap_def = (f"<b>Capability-gap ratio</b> = {escape(obj_label)} variance / ({escape(obj_label)} + "
               f"{escape(obj_label)} {TIMES} task variance)")
    gap_text = (f"{gap_def}: <b>not estimable</b>: {escape(gap_why)}." if gap is None
                else f"{gap_def} = <b>{fmt_coef(gap.median)}</b> {fmt_interval(*gap.hdi95)}: {gap_read}.")

    # -- cost ------------------------------------------------------------------
    # The app's D-study search and readouts at the design it shows: its sizes and trials per cell
    answers = answer_design(inputs, model, target, not_answered)
    search = answers.search
    frontier = search.frontier if (inputs.has_cost and search.by_cost) else None
    breadth = None
    if "benchmark" in c.facets and "benchmark" not in obj and "n_benchmarks" not in not_answered:
        breadth = fixed_budget_breadth(c, d.total_tasks, d)

    # -- ranks -----------------------------------------------------------------
    ranks = agreement = None
    part_agreements: list = []
    if inputs.theta is not None and inputs.theta.shape[1] >= 2:
        # a disconnected design is ranked within its parts only (SPEC sec. 6; seed 000 App. E)
        parts = model_parts((inputs.corpus_summary or {}).get("components"), inputs.model_names)
        ranks = rank_analysis(inputs.theta, inputs.model_names, parts)
        ref = {m: v for m, v in inputs.model_accuracy.items() if m in set(ranks.models)}
        if len(ref) >= 2 and parts is None:
            agreement = ranking_agreement(inputs.theta, ref, inputs.model_names)
        for k, p in enumerate(parts or []):
            idx = [ranks.models.index(m) for m in p]
            if sum(m in ref for m in p) >= 2:
                part_agreements.append((k, ranking_agreement(inputs.theta[:, idx], ref, p)))

    required_90 = view.readouts.required.n_for_assurance(0.9)  # the observed design's (its smallest-design table)
    content = SheetContent(
        inputs=inputs, design=d, summary=summary, view=view, headline=head, estimand=est,
        object_label=obj_label, question=question, claim_label=claim_label, verdict_key=vkey, verdict_text=vtext,
        meaning_text=meaning, components=rows, gap=gap, gap_text=gap_text, frontier=frontier, search=search,
        breadth=breadth,
        ranks=ranks, agreement=agreement, notices=[], decisions=[], required_90=required_90, words=words)
    content.part_agreements = part_agreements
    content.scale, content.answers = scale, answers
    content.cost_bands = _cost_bands(content) if frontier is not None else {}
    if frontier is not None and inputs.budget is not None and (inputs.corpus_summary.get("n_benchmarks") or 1) > 1:
        content.allocation, content.allocation_text = _allocation(c, answers.design, inputs.budget, words)
    acc = inputs.accuracy
    if acc is not None:
        content.agent_order = np.argsort(acc.rank_accuracy, kind="stable")
        content.agent_cost_ranking = bool(np.isfinite(acc.rank_per_dollar).sum() >= 2)
    if inputs.difficulty is not None:
        content.mean_success_all = float(np.mean(inputs.difficulty.mean_success))
    if ranks is not None:
        width = ranks.ranks.interval95[:, 1] - ranks.ranks.interval95[:, 0]
        content.rank_width_median = float(np.median(width))
        content.n_certain_ranks = int(np.sum(width == 0))
    content.notices = _notices(content)
    if content.serious:  # a verdict on doubtful numbers must say so where it is read
        content.verdict_text += " Provisional: see the warnings above."
    content.decisions = _decisions(content)
    content.design_text = _design_words(d, inputs)
    content.examined = _examined(inputs, est, target)
    content.method_text = _method_text(content)
    return content


def _method_text(ct: SheetContent) -> str:
    """Page 1's method line: which scale the headline is on and the corpus's own check of the claim."""
    if ct.scale != "observed":
        return (f"<b>Method:</b> {LATENT_LABEL}: Bayesian G-study on the logit scale (Hardy et al. 2026, Eq. 1); "
                "no observed-score coefficient for these components.")
    text = (f"<b>Method:</b> the headline, the tasks needed and P(target) are for observed success rates: "
            f"{escape(SCORE_METHOD)}. ")
    chk = ct.inputs.score_check
    if chk is None:
        return text + "The corpus is too small for a split-half check of this claim."
    words = escape(chk.sentence())
    if chk.verdict != "agrees":
        words = f"<b>{words}</b>"
    return text + words


def _examined(inputs: ReportInputs, est: str, target: float) -> dict | None:
    """The estimands of the what-if design the user examined, or None without one.

    Computed per posterior draw by the same :func:`~.dstudy.dstudy_summary` as the observed design's
    (seed 000 Table 1 at the examined sizes), so the app's D-study readout and the sheet agree.
    """
    e = inputs.examined_design
    if e is None:
        return None
    summary = dstudy_summary(inputs.components, e, target=target, observed=inputs.observed_design)
    head = summary["observed_scores"][est] if summary["scale"] == "observed" else summary["estimands"][est]
    return {"design": e, "text": _design_words(e, inputs, observed=False), "estimands": summary["estimands"],
            "headline": head, "p_target": summary["p_target"]}


# ---------------------------------------------------------------------------
# Weak evidence
# ---------------------------------------------------------------------------

def _notices(ct: SheetContent) -> list[Notice]:
    inp = ct.inputs
    info = inp.fit_info
    s = inp.corpus_summary
    out: list[Notice] = []
    conv = info.get("converged")
    if conv is False:
        bits = []
        if _finite(info.get("max_rhat")):
            bits.append(f"max R-hat {float(info['max_rhat']):.3f} (needs {LEQ} 1.01)")
        if _finite(info.get("min_ess_bulk")):
            bits.append(f"min bulk ESS {fmt_n(round(float(info['min_ess_bulk'])))} (needs {GEQ} 400)")
        if info.get("divergences") is not None:
            n_div = int(info["divergences"])
            bits.append(f"{fmt_n(n_div)} divergent transition{'' if n_div == 1 else 's'} (needs 0)")
        out.append(Notice("serious", "The fit did not converge.",
                          (("; ".join(bits) + ". ") if bits else "") +
                          "Every number on this sheet is provisional: refit with longer warmup and more draws "
                          "before relying on it."))
    if info.get("approximate"):
        out.append(Notice("serious", "Approximate method.",
                          f"The components come from an approximation ({escape(info.get('method', 'approximate'))}); "
                          "intervals may be too narrow. Confirm with a full MCMC fit."))
    n_comp = len(s.get("components") or []) if s.get("connected") is False else 1
    if s.get("connected") is False:
        out.append(Notice("serious", "Disconnected design.",
                          f"The benchmark-model-scaffold graph falls into {n_comp} components: models in different "
                          "components never met on common tasks, so their contrasts are not identified "
                          f"({cite('hardy2026', 'App. E')}). Ranks and dominance are computed and shown within each component only."))
    if ct.headline["median"] < NEAR_ZERO:
        out.append(Notice("serious", "Reliability near zero.",
                          f"{E_RHO2 if ct.estimand == 'Erho2' else PHI} median {fmt_coef(ct.headline['median'])}: "
                          "the observed order is mostly the luck of the draw. Do not use it to choose."))
    confounded = _confounded_terms(inp)
    if confounded:
        out.append(Notice("serious", "Components the design cannot separate.",
                          "; ".join(f"{escape(term_label(t))} with {', '.join(escape(_partner(p)) for p in ps)}"
                                    for t, ps in confounded)
                          + f": the corpus lacks the overlap that tells them apart ({cite('hardy2026', 'Prop. E.2-E.3')}), so "
                          "the split between them leans on the prior."))
    overlap = s.get("model_overlap") or {}
    if overlap.get("no_model_in_common"):  # core/design/overlap.py: the benchmark claims are refused
        out.append(Notice("serious", "No model in common across benchmarks.",
                          f"The {overlap['n_benchmarks']} benchmarks share no model: each model ran on one benchmark, "
                          "so benchmark-by-model variance cannot be told from model variance (it is carried by the "
                          f"model variance; {cite('hardy2026', 'Prop. E.3 (i)')}), models of different benchmarks are "
                          "compared only through the benchmarks' mean difficulty, and how many benchmarks a ranking "
                          "needs is not answered. Read each benchmark on its own (--slice benchmark=NAME)."))
    if (overlap.get("n_task_groups") or 1) > 1 and s.get("connected") is not False:  # else "Disconnected design"
        out.append(Notice("serious", "Models that never met on a task.",
                          f"The models fall into {overlap['n_task_groups']} groups that attempted no task in common "
                          "(files concatenated under one benchmark name?): a model is compared with another group's "
                          "only through the model's assumptions, not through data. Rank within a group."))
    ids_notice = subject_ids_notice(s.get("subject_ids"))  # "unknown" is never a scaffold: pooled or left out
    if ids_notice:
        out.append(Notice("caution", *ids_notice))
    if not (s.get("subject_ids") or {}).get("scaffolds_not_separated") and s.get("n_scaffolds") == 1:
        out.append(Notice("caution", "One scaffold.",
                          f"The scaffold, model {TIMES} scaffold and task {TIMES} scaffold variances "
                          "cannot be estimated: every model ran in one "
                          "harness, so 'model' here means model-in-this-scaffold, and the reliability ignores how "
                          "rankings change across scaffolds."))
    if s.get("n_benchmarks") == 1:
        out.append(Notice("caution", "One benchmark.",
                          f"Benchmark-level components (the benchmark {TIMES} model variance and its "
                          "interactions) cannot be estimated: the reliability is for this benchmark's task "
                          "population, not for other benchmarks or a leaderboard of them."))
    if not inp.has_cost:
        out.append(Notice("caution", "No cost data.",
                          "The corpus has no cost column and no prices were given: the cost frontier, "
                          "reliability per dollar and the cost-aware ranking are missing (decision 3)."))
    n_models, noun = s.get("n_models") or 0, "model"
    if inp.observed_design.object_facets == {"agent"}:  # seed 003's model: the object's variance is the agents'
        n_models, noun = s.get("n_agents") or n_models, "agent"
    if 0 < n_models < FEW_MODELS:
        out.append(Notice("caution", f"Few {noun}s.",
                          f"Only {n_models} {noun}s: the {noun} variance rests on {n_models} values, its interval is "
                          "wide, and training-cell reliability tends to overstate what a replication finds "
                          f"({cite('ddr2026', 'sec. 5.4')})."))
    if inp.observed_design.claim == "absolute":  # seed 000 G.5: scores are less reliable than rankings
        from .estimators import score_notice_text

        out.append(Notice("caution", "Scores on the observed scale.", score_notice_text(inp.analysis("score_reliability"))))
    if conv is None:
        out.append(Notice("caution", "Convergence not checked here.",
                          f"The components were supplied ({escape(info.get('method', 'components supplied'))}), "
                          "not fitted by this program; their convergence is the supplier's claim."))
    return out


def _partner(p: str) -> str:
    return {"(intercept)": "the intercept", "(terminal cell)": "the trial-level residual"}.get(p, term_label(p))


def _confounded_terms(inp: ReportInputs) -> list[tuple[str, list[str]]]:
    """Terms of the *fit* that the design cannot tell apart from another term of the fit.

    Core's separability check (:func:`ddr_explorer.core.design.separability`)
    examines a default formula; a term confounded only with a term the fit
    left out is not a problem of this fit (the fitted term absorbs the other,
    which the one-scaffold and one-benchmark notices already say).
    """
    fit = set(inp.components.terms)
    sep = ((inp.corpus_summary.get("diagnostics") or {}).get("separability") or {}).get("components")
    out = []
    if sep is None:  # a summary without the detail: fall back to the flat list
        return [(t, []) for t in (inp.corpus_summary.get("not_separable") or []) if t in fit]
    for comp in sep:
        term = comp.get("term")
        if comp.get("separable", True) or term is None:
            continue
        try:
            term = canonical_term(term)
        except ValueError:
            continue
        if term not in fit:
            continue
        partners = []
        for p in comp.get("confounded_with") or []:
            if p.startswith("("):
                partners.append(p)
                continue
            try:
                if canonical_term(p) in fit:
                    partners.append(canonical_term(p))
            except ValueError:
                continue
        if partners:
            out.append((term, partners))
    return out


# ---------------------------------------------------------------------------
# The five decisions
# ---------------------------------------------------------------------------

def _allocation(c, d: DStudyDesign, budget: float, words: FacetWords) -> tuple[dict | None, str]:
    """The budget's tasks per benchmark (the same call as ``ddr dstudy --budget``) and its sentence."""
    alloc, why = allocation_for_summary(c, d, budget)
    if alloc is None:
        return None, f"{words.allocation} within {fmt_usd(budget)}: not computed ({escape(why)})."
    sym = E_RHO2 if d.estimand == "Erho2" else PHI
    med = {k: v["median"] for k, v in alloc["summaries"].items()}
    text = (f"Reliability-aware allocation of {fmt_usd(budget)} ({cite('hardy2026', 'sec. 5.4')}): the tasks per benchmark that "
            f"maximise the median {sym} of the pooled score, {fmt_coef(med['optimal'])} for "
            f"{fmt_usd(alloc['costs']['optimal'])}")
    if "equal" in med:
        text += (f", against {fmt_coef(med['equal'])} for the same count in every benchmark "
                 f"({fmt_usd(alloc['costs']['equal'])})")
    text += (f". Task variance: the error one task adds ({escape(alloc['variance_source'])}). A task costs "
             f"{fmt_n(alloc['trials_per_task'])} trials (models {TIMES} {words.axis('n_scaffolds')} {TIMES} "
             f"{words.axis('n_replicates')}).")  # an allocation needs a pooled fit: models are compared
    return alloc, text


def _cost_bands(ct: SheetContent) -> dict:
    """Budgets where the Pareto front leaves the detection band and where it meets the target."""
    f = ct.frontier
    par = f.pareto
    lo, _ = DETECTION_ERHO2
    out = {}
    above = [k for k in par if f.median[k] >= lo]
    out["detect"] = int(above[0]) if above else None
    out["target"] = ct.search.cheapest
    out["observed_cost"] = ct.design.cost()
    if ct.inputs.budget is not None:
        out["budget"] = ct.search.best_in_budget
    return out


def _design_of(f: CostFrontier, k: int) -> str:
    return (f"{fmt_n(f.n_tasks[k])} tasks {TIMES} {fmt_n(f.n_scaffolds[k])} scaffold"
            f"{'s' if f.n_scaffolds[k] != 1 else ''} {TIMES} {fmt_n(f.n_benchmarks[k])} benchmark"
            f"{'s' if f.n_benchmarks[k] != 1 else ''}")


def _decisions(ct: SheetContent) -> list[Decision]:
    return [_with_transfer(_decision_tasks(ct), ct), _decision_difficulty(ct), _decision_cost(ct),
            _decision_holdout(ct), _decision_taxonomy(ct)]


def _with_transfer(dcs: Decision, ct: SheetContent) -> Decision:
    """Decision 1 with the transfer study's answer to "and from where?" (seed 003 sec. 5.5), when it ran."""
    from .capability_page import transfer_sentence

    extra = transfer_sentence(ct.inputs.analysis("transfer"))
    return dcs if extra is None else Decision(dcs.number, dcs.question, dcs.answer + extra, dcs.status)


def _decision_tasks(ct: SheetContent) -> Decision:
    d = ct.design
    sym = E_RHO2 if ct.estimand == "Erho2" else PHI
    t = ct.inputs.target
    if ct.summary["min_n"].get("n_tasks") is None:
        return Decision(1, "How many tasks should we sample?",
                        "The fit has no task term, so the number of tasks does not change this coefficient.",
                        "answered")
    a = ct.answers  # the screen's design: the tasks for the target at its scaffolds and trials per cell
    req, ceiling, n90 = a.tasks_needed(), a.readouts.ceiling, a.readouts.required.n_for_assurance(0.9)
    n_obs = d.effective_n_tasks
    p_obs = ct.summary["p_target"]
    w = ct.words or facet_words(d.object_of_measurement, ct.inputs.components.facets)
    med = req["median"]
    if math.isinf(med):
        alt = []
        for over in ("n_scaffolds", "n_benchmarks"):  # at the screen's design, as the tasks above
            m = a.widen.get(over)
            if m is not None and math.isfinite(m):
                alt.append(f"about {fmt_n(m)} {w.axis(over)}")
        text = (f"No number of tasks reaches {sym} {GEQ} {fmt_coef(t)}: even infinitely many tasks stop at the "
                f"task-only ceiling {fmt_coef(ceiling.median)} {fmt_interval(*ceiling.hdi95)}")
        if alt:
            text += (", because interactions with scaffolds or benchmarks do not average out over tasks. "
                     f"Widen the design instead: {' or '.join(alt)} would reach the target. ")
        elif ceiling.median < DETECTION_ERHO2[0]:
            share = next((r.share.median for r in ct.components if frozenset(split_term(r.term)) <= d.object_facets
                          and not r.is_residual), None)
            text += (f". The {ct.object_label}s hardly differ"
                     + (f" (their variance is {fmt_pct(share)} of the total)" if share is not None else "")
                     + ": no affordable design will rank them. ")
        else:
            text += ". No number of scaffolds or benchmarks reaches it either. "
        text += f"Today's {fmt_n(n_obs)} tasks give {sym} {fmt_coef(ct.headline['median'])}."
        return Decision(1, "How many tasks should we sample?", text, "answered")
    held = []
    if "scaffold" in ct.inputs.components.facets and "scaffold" not in a.design.object_facets:
        held.append(w.count("n_scaffolds", a.design.n_scaffolds))
    held.append(a.trials_words(w))  # every count of tasks says at how many trials per cell it holds
    text = (f"About <b>{fmt_n(med)} tasks</b>{w.units['n_tasks'][2]} reach {sym} {GEQ} {fmt_coef(t)} "
            f"(posterior median; 95% interval {fmt_n(req['lower95'])}{NDASH}{fmt_n(req['upper95'])}); "
            f"{fmt_n(n90)} tasks give 90% assurance, with {' and '.join(held)} "
            + ("as in the design examined. " if a.examined else "as observed. "))
    lat_med = a.latent_tasks_needed()
    if ct.scale == "observed" and lat_med is not None:  # the papers' figure, labelled, beside the one a buyer reads
        text += (f"These are tasks for the scores' correlation; the {LATENT_LABEL} would call "
                 f"{fmt_n(lat_med)} enough. ")
    if a.examined:  # the what-if's own chance beside the corpus's: neither stands in for the other
        text += (f"The design examined's {fmt_n(a.design.effective_n_tasks)} tasks meet the target with probability "
                 f"{fmt_prob(a.readouts.p_target_met)}; the observed {fmt_n(n_obs)} tasks, at "
                 f"{w.count('n_replicates', d.n_replicates)}, with probability {fmt_prob(p_obs)}. ")
    elif n_obs >= n90:
        text += (f"The observed {fmt_n(n_obs)} tasks are enough (P(target met) = {fmt_prob(p_obs)}); "
                 f"a replication could use as few as {fmt_n(n90)} and still meet it with 90% "
                 "assurance. ")
    else:
        text += f"The observed {fmt_n(n_obs)} tasks meet the target with probability {fmt_prob(p_obs)}. "
    if req["p_reachable"] < 0.995:
        text += (f"In {fmt_pct(1 - req['p_reachable'], 0)} of posterior draws no number of tasks suffices "
                 f"(ceiling {fmt_coef(ceiling.median)}).")
    elif ceiling.median < 0.9995:
        text += f"More tasks cannot pass the task-only ceiling {fmt_coef(ceiling.median)}."
    else:  # a "ceiling" of 1 is none: every error term of this fit averages out over tasks
        text += "Every error term of this fit averages out over tasks, so more tasks keep raising it towards 1."
    return Decision(1, "How many tasks should we sample?", text, "answered")


def _refits_note(result, parts: str | None = None) -> str:
    """Page 1's word on an analysis's refits: all converged, or PROVISIONAL naming those that did not.

    ``parts`` names what was fitted when the count includes more than refits (the difficulty study counts
    the whole corpus's fit beside its strata's refits: "the whole corpus and 4 strata"), so that the count
    agrees with the refits the plan announced.  What the gate was checked on is the method notes'
    (:func:`refit_convergence_notes`): a buyer reads whether to trust the number, an analyst reads the criterion.
    """
    n, k = getattr(result, "n_fits", None), getattr(result, "n_converged", None)
    if n is None or k is None:
        return ""
    what = f"fits ({parts})" if parts else "refits"
    if k == n:
        return f" (All {fmt_n(n)} {what} converged.)" if n > 1 else " (The refit converged.)"
    names = tuple(getattr(result, "unconverged", ()) or ())
    shown = ", ".join(escape(x) for x in names[:4]) + (f" and {fmt_n(len(names) - 4)} more" if len(names) > 4 else "")
    return (f" <b>PROVISIONAL: {fmt_n(n - k)} of {fmt_n(n)} {what} did not converge</b>"
            + (f" ({shown})" if shown else "") + "; rerun the analysis with more draws before relying on it "
            "(method notes).")


def refit_convergence_notes(ct: SheetContent) -> list[str]:
    """The method notes' sentences on the analyses' refits: how many converged and on what the gate was checked.

    One sentence per refit analysis on the sheet (difficulty strata, held-out splits), e.g. "Difficulty
    strata: 5 of 5 refits converged, each on the coefficient it reports: R-hat <= 1.01 ...".
    """
    out = []
    for key, what in (("difficulty", "Difficulty strata"), ("held_out", "Held-out splits")):
        res = ct.inputs.analysis(key)
        n, k = getattr(res, "n_fits", None), getattr(res, "n_converged", None)
        if n is None or k is None:
            continue
        on = getattr(res, "converged_on", None)
        on = escape(on).replace("&lt;=", LEQ).replace("&gt;=", GEQ) if on else (
            f"on every variance component (R-hat {LEQ} 1.01, bulk ESS {GEQ} 400, no divergence)")
        fits = "fits (the whole corpus and its strata)" if key == "difficulty" else "refits"
        text = f"{what}: {fmt_n(k)} of {fmt_n(n)} {fits} converged, {on}."
        names = tuple(getattr(res, "unconverged", ()) or ())
        if names:
            text += " Not converged: " + ", ".join(escape(x) for x in names) + "."
        out.append(text)
    return out


def _decision_difficulty(ct: SheetContent) -> Decision:
    inp = ct.inputs
    prof: DifficultyProfile | None = inp.analysis("difficulty")
    diff = inp.difficulty
    sym = E_RHO2 if ct.estimand == "Erho2" else PHI
    q = "Which difficulty bucket should we target?"
    if prof is not None:
        vals = ", ".join(f"{escape(lab.split(' ')[0])} {fmt_coef(s.median) if s else 'n/a'}"
                         for lab, s in zip(prof.labels, prof.erho2))
        best = max(((s.median, lab) for lab, s in zip(prof.labels, prof.erho2) if s), default=None)
        text = f"{sym} by difficulty stratum (Q1 easiest): {vals}; all tasks {fmt_coef(prof.aggregate.median)}. "
        if prof.verdict is not None:  # the rule on the gap and its interval, as every surface says it
            n_hard = fmt_n(diff.stratum_n[-1]) if diff is not None else None
            hard = f"{escape(prof.labels[-1].split(' ')[0])} at its {n_hard} tasks" if n_hard else "the hardest stratum"
            text += verdict_sentence(prof.verdict, "the all-tasks figure", hard) + " "
        if best:
            text += f"The leaderboard discriminates best in {escape(best[1].split(' ')[0])}. "
        text += ("If your production tasks resemble the hard stratum, read its number, not the headline, "
                 "and sample evaluation tasks from it.")
        n_strata = len(prof.labels)
        text += _refits_note(prof, f"the whole corpus and {n_strata} strat{'a' if n_strata != 1 else 'um'}"
                             if prof.n_fits == n_strata + 1 else None)
        return Decision(2, q, text + _frontier_note(inp), "answered")
    if diff is None:
        return Decision(2, q, "Not run: needs the corpus's task results to form difficulty strata.", "not run")
    strata = ", ".join(f"{lab.split(' ')[0]} {fmt_pct(m, 0)}" for lab, m in zip(diff.labels, diff.stratum_mean))
    text = (f"<b>Not run here:</b> difficulty-conditional reliability needs a separate G-study on each quartile "
            f"of tasks ({diff.n_strata} more fits). Mean success by quartile: {strata}. "
            f"Until it is run, do not assume the headline {fmt_coef(ct.headline['median'])} holds on hard tasks "
            f"({cite('ddr2026')}: 0.752 fell to 0.000 in the hardest quartile). ")
    if diff.n_never_solved or diff.n_always_solved:
        text += (f"{fmt_n(diff.n_never_solved)} task{'s' if diff.n_never_solved != 1 else ''} never solved and "
                 f"{fmt_n(diff.n_always_solved)} always solved cannot separate agents.")
    return Decision(2, q, text + _frontier_note(inp), "partial")


def _frontier_note(inp) -> str:
    """Decision 2's word on the frontier over time (seed 002 (Krsteski et al. 2026) sec. 5.1), when it was run: saturated groups."""
    front = inp.analysis("frontier")
    if front is None:
        return ""
    last = [(g, row[np.isfinite(row)][-1]) for g, row in zip(front.groups, front.group_frontier)
            if np.isfinite(row).any()]
    if not last:
        return ""
    top = max(last, key=lambda gv: gv[1])
    text = (f" Frontier in {escape(front.quarters[-1])} (best agent per task, models released by then): "
            + ", ".join(f"{escape(g)} {fmt_coef(v)}" for g, v in last) + ".")
    if top[1] >= 0.9:
        text += f" {escape(top[0])} is near saturation: its tasks no longer separate the best agents."
    return text


def _decision_cost(ct: SheetContent) -> Decision:
    inp = ct.inputs
    d = ct.design
    q = "Which cost band should we constrain on?"
    sym = E_RHO2 if ct.estimand == "Erho2" else PHI
    if ct.frontier is None:
        text = ("<b>No cost data:</b> supply per-trial costs (a cost column, token counts with a price table, or a "
                "price per benchmark) to get the cost frontier and reliability per dollar. ")
        a = ct.answers
        req = a.tasks_needed() if ct.summary["min_n"].get("n_tasks") else None
        # the design's count is of a full design at the observed sizes, not the file's trials: say both
        words = ct.words or facet_words(d.object_of_measurement, inp.components.facets)
        have = design_trials_text(d.to_dict(), words, inp.corpus_summary)
        if req and math.isfinite(req["median"]):
            need = a.design.with_size("n_tasks", max(1.0, req["median"])).trial_count()
            text += (f"In trials: {have}. The target needs a full design of about {fmt_n(need)} "
                     f"{words.noun('n_replicates', need)} (same models and scaffolds as {a.which()}, "
                     f"{a.trials_words(words)}).")
        else:
            text += f"In trials: {have}."
        return Decision(3, q, text, "not run")
    f = ct.frontier
    b = ct.cost_bands
    parts = []
    if b.get("detect") is not None:
        k = b["detect"]
        parts.append(f"below <b>{fmt_usd(f.cost[k])}</b> no design leaves the detection band (SNR &lt; 2: "
                     "differences are mostly noise)")
    else:
        parts.append("no design of the grid leaves the detection band")
    if b.get("target") is not None:
        k = b["target"]
        parts.append(f"from <b>{fmt_usd(f.cost[k])}</b> ({_design_of(f, k)}) the target {sym} {GEQ} "
                     f"{fmt_coef(f.target)} is met (median {fmt_coef(f.median[k])})")
    else:
        parts.append(f"no design of the grid meets {sym} {GEQ} {fmt_coef(f.target)}")
    words = ct.words or facet_words(d.object_of_measurement, inp.components.facets)
    # every cost says at how many trials per cell it holds: they multiply it (.answer_design)
    text = f"On the cost frontier at {ct.answers.cost_basis(words)}, " + "; ".join(parts) + ". "
    text += (f"The observed design ({words.count('n_replicates', d.n_replicates)}) costs {fmt_usd(d.cost())} "
             f"for {sym} {fmt_coef(ct.headline['median'])}")
    r = ct.view.readouts
    if r.rpd is not None:  # the screen's and ddr dstudy's words (formatting.fmt_rpd)
        text += f"; {fmt_rpd(r.rpd.median, r.coefficient.median, d.mean_price(), r.estimand)}"
    text += ". "
    if inp.budget is not None and b.get("budget") is not None:
        k = b["budget"]
        text += (f"Within your budget {fmt_usd(inp.budget)}: {_design_of(f, k)}, {sym} {fmt_coef(f.median[k])}. ")
    acc = inp.accuracy
    if acc is not None and np.isfinite(acc.rank_per_dollar).sum() >= 2:
        ok = np.isfinite(acc.rank_per_dollar)
        moves = int((np.abs(acc.rank_accuracy[ok] - acc.rank_per_dollar[ok]) >= BIG_MOVE).sum())
        text += (f"Ranking agents by accuracy per dollar instead of accuracy: Spearman {fmt_r(acc.spearman)}, "
                 f"{moves} of {int(ok.sum())} agents move {GEQ} {BIG_MOVE} places.")
    return Decision(3, q, text, "answered")


def _decision_holdout(ct: SheetContent) -> Decision:
    inp = ct.inputs
    held: HeldOutReliability | None = inp.analysis("held_out")
    loo: LooSummary | None = inp.analysis("loo")
    q = "Which hold-out protocol should we demand from the vendor?"
    sym = E_RHO2 if ct.estimand == "Erho2" else PHI
    n_models = inp.corpus_summary.get("n_models")
    noun = "models"
    if ct.inputs.observed_design.object_facets == {"agent"}:  # seed 003's model compares agents
        n_models, noun = inp.corpus_summary.get("n_agents") or n_models, "agents"
    loo_text = ""
    if loo is not None:
        loo_text = (f" PSIS-LOO Pareto k: {fmt_n(loo.good)} good, {fmt_n(loo.bad)} bad, "
                    f"{fmt_n(loo.very_bad)} very bad"
                    + (" (refit those observations exactly)." if loo.very_bad else "."))
    if held is not None:
        text = (f"Across {held.n_splits} random {round(100 * held.train_fraction)}/"
                f"{round(100 * (1 - held.train_fraction))} splits stratified by {escape(held.stratified_by)}, "
                f"projected and held-out {sym} ({escape(held.estimator_label)}) correlate at <b>r = {fmt_r(held.pearson_r)}</b>. ")
        text += held_out_reading(held) + " " + held_out_estimator_note(held)
        return Decision(4, q, text + _refits_note(held) + loo_text, "answered")
    text = (f"<b>Not run here</b> (it needs 50 splits: 100 refits). Demand from the vendor: {sym} re-estimated on "
            f"held-out cells over {GEQ} 50 random 70/30 splits stratified by (agent, task) cell, reported next to the "
            f"training-cell projection with the Pearson r across splits. "
            + (f"With {n_models} {noun}, expect the projection to be optimistic ({cite('ddr2026')}: r = \u22120.90 and a "
               "0.30 shortfall with 3 agents)." if n_models and n_models < 20 else
               f"{cite('ddr2026')} found the projection optimistic (r = \u22120.90) with few agents; more models help but do "
               "not remove the check."))
    return Decision(4, q, text + loo_text, "not run")


def _decision_taxonomy(ct: SheetContent) -> Decision:
    inp = ct.inputs
    tax: FailureTaxonomy | None = inp.analysis("failure_taxonomy")
    q = "How should we read a failure taxonomy?"
    if tax is not None:
        order_v = [tax.categories[k] for k in np.argsort(-tax.interaction_variance)]
        order_a = [tax.categories[k] for k in np.argsort(-tax.activation_rate)]
        text = (f"Where agents differ most (agent {TIMES} task variance): {escape(order_v[0])}; where "
                f"failures are most frequent: {escape(order_a[0])}. Rank correlation of the two over "
                f"{len(tax.categories)} categories: {fmt_r(tax.spearman)} (descriptive")
        si = getattr(tax, "spearman_interval", None)
        if si is not None:  # per posterior draw (core/analyses/failure_modes.py)
            text += f"; per draw {fmt_r(si[0])}, 95% interval {fmt_r(si[1])} to {fmt_r(si[2])}"
        text += "). "
        h = getattr(tax, "holdout", None)
        if h and h.get("trace_mae") is not None:
            text += (f"Over {h['n_splits']} random 70/30 splits of the traces, a cell's training rates predict a "
                     f"held-out trace's failure profile with MAE {fmt_coef(h['trace_mae'])}, but the held-out cell's "
                     f"rates with MAE {fmt_coef(h['cell_mae'])} (r = {fmt_r(h['cell_r'])}; {cite('ddr2026')}: 0.261, 0.056, "
                     "0.83). ")
        text += ("Variance is not frequency: spend evaluation effort where agents differ; use frequencies only for "
                 "system-level rates, never to predict a single trace.")
        if getattr(tax, "converged", None) is False:
            text += " <b>Provisional:</b> some fits behind these numbers did not converge."
        return Decision(5, q, text, "answered")
    has = [t for t in inp.components.terms if "error_category" in split_term(t)]
    if has:
        parts = ", ".join(f"{escape(term_label(t))} {fmt_var(summarize(inp.components.draws[t]).median)}" for t in has)
        text = (f"The fit has error-category terms ({parts}), but no per-category breakdown was supplied. "
                "Variance is not frequency: the categories with the most failures need not be where agents differ.")
        return Decision(5, q, text, "partial")
    # no number here comes from a computation the project does not have: say what is missing and how to get it
    text = ("<b>Not computed:</b> a failure taxonomy needs an error-category facet, and this corpus has none. "
            "To get one, add an error_category column (also read as error, error_type, failure_category or failure_mode) "
            f"naming each trial's failure category, and fit the ddr preset ({cite('ddr2026', 'Eq. 1')}: agent, task, step, "
            "error category); the sheet then shows the error-category variances. If a vendor shows one, the categories "
            f"with the most failures are not necessarily where agents differ ({cite('ddr2026')}: rank correlation \u22120.20); "
            f"ask for the per-category agent {TIMES} task variance and treat trace-level failure profiles "
            "as unpredictable (72% of their variance is trace-specific).")
    return Decision(5, q, text, "not run")


def quartile_short(labels: Sequence[str]) -> list[str]:
    """``"Q1 (easiest)"`` -> ``"Q1"``."""
    return [lab.split(" ")[0] for lab in labels]
