"""Transfer across benchmarks: do family rankings and the capability-gap ratio carry over (seed 003 (DDR paper 2026) sec. 5.5)?

Seed 003 sec. 5.5 asks whether DDR diagnostics computed on one benchmark generalise to
another.  Two answers, which may differ:

* **Rankings.**  Model families (GPT-4o, Llama 3, ...) are ranked on each benchmark and the
  rankings compared by Spearman rho over the families both benchmarks share (seed 003:
  rho = -0.50 over three families between TheAgentCompany and AppWorld: rankings do not
  transfer).
* **Capability-gap ratio** ``sigma2_a / (sigma2_a + sigma2_a:t)`` per benchmark (seed 003
  sec. 5.1 and Table 1; 0.38, 0.40, 0.35 on three enterprise benchmarks: the population-level
  diagnostic transfers).

How it is computed here
-----------------------
Each benchmark gets its own G-study fit (the per-benchmark model, seed 000 (Hardy et al. 2026) Eq. 2, through the
fit cache; :func:`~.refits.cold_fits`).  Per posterior draw:

* a family's score on a benchmark is the best (``family_score="best"``, the default, as seed
  002 keeps the best scaffold) or the mean (``"mean"``) of the model effects ``u_m`` of its
  models run there;
* Spearman rho between two benchmarks over their shared families (at least
  :data:`MIN_SHARED` of them), draw ``s`` of one fit with draw ``s`` of the other (independent
  posteriors, so any pairing is a draw of the joint);
* the gap ratio with ``a`` = the model (``sigma2[model] / (sigma2[model] + sigma2[task:model])``,
  object of measurement model; seed 003's agent is one configuration, the corpus's model facet
  here) or the system (model, scaffold and model:scaffold against task:model and task:scaffold);
* its **stability**: the spread of the ratio across benchmarks (max - min per draw).  A spread
  whose 95% interval stays narrow says the ratio transfers; the per-benchmark intervals say how
  well each ratio is known.

Families come from a family map (:func:`read_family_map`); without one every model is its own
family.  Numbers from unconverged fits are marked (``converged`` per benchmark).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..corpus.patterns import PatternError, compile_user_pattern
from ..reliability import summarize, to_jsonable
from ..references import cite

__all__ = ["FamilyMap", "FamilyMapError", "read_family_map", "TransferStudy", "transfer_study",
           "transfer_from_posteriors", "format_transfer", "transfer_lines", "gap_ratio_draws", "MIN_SHARED"]

#: Fewest shared families for a rank correlation between two benchmarks (with two, rho is +-1 only).
MIN_SHARED = 3


class FamilyMapError(ValueError):
    """A family map that cannot be read, with the file, line, column and fix."""


@dataclass(frozen=True)
class FamilyMap:
    """Model -> family: exact names first, then regular expressions in file order.

    Attributes
    ----------
    models
        Exact model name -> family.
    patterns
        ``(compiled regex, family)`` pairs; the first that matches (``re.search``) wins.
    source
        The file read (for messages).
    """

    models: dict = field(default_factory=dict)
    patterns: tuple = ()
    source: str = "(none)"

    def family(self, model: str) -> str | None:
        """The family of ``model``, or None when the map does not know it."""
        m = str(model)
        if m in self.models:
            return self.models[m]
        for rx, fam in self.patterns:
            if rx.search(m):
                return fam
        return None


def _toml_map(path: Path, text: str) -> FamilyMap:
    from ..side_files import loads_toml

    data = loads_toml(text, path, "family map", error=FamilyMapError)  # nesting capped before the parser recurses
    unknown = set(data) - {"models", "families", "patterns", "meta"}
    if unknown:
        raise FamilyMapError(f"{path}: unknown table(s) {', '.join(sorted(unknown))}; a family map has [models] "
                             "(model = \"family\"), [families] (family = [\"model\", ...]) and [[patterns]] "
                             "(regex = '...', family = '...')")
    models: dict = {}
    for m, fam in (data.get("models") or {}).items():
        if not isinstance(fam, str) or not fam.strip():
            raise FamilyMapError(f"{path}, [models], key {m!r}: the family should be a non-empty string, got "
                                 f"{fam!r}")
        models[str(m)] = fam.strip()
    for fam, ms in (data.get("families") or {}).items():
        if not isinstance(ms, list) or not all(isinstance(x, str) for x in ms):
            raise FamilyMapError(f"{path}, [families], key {fam!r}: give a list of model names, e.g. "
                                 f"{fam} = [\"model-a\", \"model-b\"]")
        for m in ms:
            if m in models and models[m] != fam:
                raise FamilyMapError(f"{path}, [families], key {fam!r}: model {m!r} is already in family "
                                     f"{models[m]!r}; give each model one family")
            models[m] = fam
    pats = []
    for k, p in enumerate(data.get("patterns") or [], start=1):
        if not isinstance(p, dict) or not isinstance(p.get("regex"), str) or not isinstance(p.get("family"), str):
            raise FamilyMapError(f"{path}, [[patterns]] entry {k}: give regex = '...' and family = '...'")
        try:  # a user's pattern runs on the linear-time engine: none can hang the analysis
            pats.append((compile_user_pattern(p["regex"]), p["family"].strip()))
        except PatternError as exc:
            raise FamilyMapError(f"{path}, [[patterns]] entry {k}, regex {p['regex']!r}: {exc}") from None
    if not models and not pats:
        raise FamilyMapError(f"{path}: no family given; add [models], [families] or [[patterns]]")
    return FamilyMap(models, tuple(pats), str(path))


def _csv_map(path: Path, text: str) -> FamilyMap:
    from ..side_files import csv_rows

    rows = csv_rows(text, path, "family map", error=FamilyMapError)
    if not rows or not any(c.strip() for c in rows[0]):
        raise FamilyMapError(f"{path}, line 1: the file is empty; give a header 'model,family' and one row per model")
    head = [c.strip().lower() for c in rows[0]]
    if "model" not in head or "family" not in head:
        raise FamilyMapError(f"{path}, line 1: the header should name the columns 'model' and 'family'; found "
                             f"{', '.join(rows[0])}")
    im, jf = head.index("model"), head.index("family")
    models, line_of = {}, {}
    for i, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row) or row[0].lstrip().startswith("#"):
            continue
        if len(row) <= max(im, jf):
            raise FamilyMapError(f"{path}, line {i}: {len(row)} field(s) where the header has {len(head)}; give a "
                                 "model and a family on every row")
        m, fam = row[im].strip(), row[jf].strip()
        if not m:
            raise FamilyMapError(f"{path}, line {i}, column 'model': empty model name")
        if not fam:
            raise FamilyMapError(f"{path}, line {i}, column 'family': empty family for model {m!r}")
        if m in models and models[m] != fam:
            raise FamilyMapError(f"{path}, line {i}, column 'model': {m!r} already has family {models[m]!r} "
                                 f"(line {line_of[m]}); give each model one family")
        models[m], line_of[m] = fam, i
    if not models:
        raise FamilyMapError(f"{path}: no rows; give one 'model,family' row per model")
    return FamilyMap(models, (), str(path))


def read_family_map(path: str | Path) -> FamilyMap:
    """Read a family map: CSV with columns ``model,family``, or TOML (``[models]``, ``[families]``,
    ``[[patterns]]``; see ``resources/aliases/families.toml``).

    Raises
    ------
    FamilyMapError
        The message names the file, line (or TOML key) and column, and the fix.
    """
    path = Path(path)
    from ..side_files import read_side_text

    # the side-file gate: a regular file (a FIFO blocked), a size cap, UTF-8 with the line
    text = read_side_text(path, "family map", error=FamilyMapError)
    if path.suffix.lower() == ".toml":
        return _toml_map(path, text)
    return _csv_map(path, text)


# -- per-draw quantities ------------------------------------------------------------------
def gap_ratio_draws(posterior, obj: str = "model") -> np.ndarray:
    """Per-draw capability-gap ratio ``sigma2_a / (sigma2_a + sigma2_a:t)`` (seed 003 sec. 5.1, Table 1).

    ``obj="model"``: ``a`` = model; ``obj="system"``: the numerator sums model, scaffold and
    model:scaffold, the denominator adds task:model and task:scaffold.  Terms the fit lacks count 0.

    Raises
    ------
    ValueError
        The fit has neither the agent term nor its task interaction.
    """
    sig = posterior.sigma
    num_terms = ["model"] if obj == "model" else ["model", "scaffold", "model:scaffold"]
    int_terms = ["task:model"] if obj == "model" else ["task:model", "task:scaffold"]
    missing = [t for t in (num_terms[0], int_terms[0]) if t not in sig]
    if missing:  # e.g. one trial per model-task cell: task:model is not separable from the trial residual
        raise ValueError(f"the fit has no {' or '.join(missing)} term (terms fitted: {', '.join(sig) or 'none'}); "
                         "the gap ratio needs both" + (" - with one trial per model-task cell the interaction "
                                                       "cannot be told from the trial residual"
                                                       if "task:model" in missing else ""))

    def s2(terms):
        out = 0.0
        for t in terms:
            if t in sig:
                out = out + np.asarray(sig[t], np.float64).reshape(-1) ** 2
        return out

    a, at = s2(num_terms), s2(int_terms)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(a / (a + at), np.float64)


def _family_draws(theta: np.ndarray, names: list[str], fam_of: dict, how: str) -> tuple[np.ndarray, list[str]]:
    fams = sorted({fam_of[n] for n in names})
    cols = []
    for f in fams:
        idx = [k for k, n in enumerate(names) if fam_of[n] == f]
        sub = theta[:, idx]
        cols.append(sub.max(axis=1) if how == "best" else sub.mean(axis=1))
    return np.stack(cols, axis=1), fams


def _spearman_draws_paired(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    n = min(a.shape[0], b.shape[0])
    ra, rb = rankdata(a[:n], axis=1), rankdata(b[:n], axis=1)
    ra -= ra.mean(axis=1, keepdims=True)
    rb -= rb.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (ra * rb).sum(axis=1) / np.sqrt((ra * ra).sum(axis=1) * (rb * rb).sum(axis=1))


@dataclass
class TransferStudy:
    """Result of :func:`transfer_study`.

    Attributes
    ----------
    benchmarks
        The benchmarks compared, in order.
    rankings
        Benchmark -> one row per family: ``family``, ``models`` (its models there), ``score``
        (posterior mean of the family score), ``mean_rank``, ``rank_lower95``, ``rank_upper95``;
        best first.
    pairs
        One row per benchmark pair: ``benchmark_a``, ``benchmark_b``, ``n_shared``, ``families``,
        ``rho`` (at posterior means), ``rho_median``, ``rho_lower95``, ``rho_upper95``,
        ``prob_negative`` (``P(rho < 0)``), ``skipped`` (why no rho).
    gap
        One row per benchmark: ``benchmark``, ``gap_median``, ``gap_lower95``, ``gap_upper95``,
        ``converged``, ``n_models``, ``n_tasks``.
    gap_spread
        Summary of ``max_b - min_b`` of the gap ratio per draw (None with one benchmark).
    family_score, obj
        How families were scored; the object of the gap ratio.
    unmapped
        Models the family map did not know (each its own family).
    errors
        Benchmark -> why its fit failed.
    n_fits, n_converged
        Fits behind the study and how many passed the convergence gate.
    """

    benchmarks: list
    rankings: dict
    pairs: pd.DataFrame
    gap: pd.DataFrame
    gap_spread: dict | None
    family_score: str
    obj: str
    unmapped: list
    family_source: str
    errors: dict
    n_fits: int
    n_converged: int

    @property
    def converged(self) -> bool:
        return self.n_fits > 0 and self.n_fits == self.n_converged

    def to_dict(self) -> dict:
        return to_jsonable({
            "benchmarks": self.benchmarks, "family_score": self.family_score, "object": self.obj,
            "family_map": self.family_source, "unmapped": self.unmapped, "n_fits": self.n_fits,
            "n_converged": self.n_converged, "converged": self.converged,
            "label": None if self.converged else "PROVISIONAL: some fits behind these numbers did not converge",
            "rankings": {b: r.to_dict(orient="records") for b, r in self.rankings.items()},
            "pairs": self.pairs.to_dict(orient="records"), "gap_ratio": self.gap.to_dict(orient="records"),
            "gap_spread": self.gap_spread, "errors": self.errors})


def transfer_from_posteriors(posteriors: dict, families: FamilyMap | None = None, *, family_score: str = "best",
                             obj: str = "model", sizes: dict | None = None, seed: int = 0) -> TransferStudy:
    """The transfer study from one G-study posterior per benchmark (module note).

    Parameters
    ----------
    posteriors
        Benchmark -> posterior (model effects and variance components kept).
    families
        A :class:`FamilyMap`, or None (every model its own family).
    family_score
        ``"best"`` or ``"mean"`` of a family's model effects, per draw.
    obj
        ``"model"`` or ``"system"`` for the gap ratio.
    sizes
        Benchmark -> ``(n_models, n_tasks)`` for the table.
    """
    from ..fitting import theta_from_posterior
    from ..ranks import rank_analysis, spearman_rho

    if family_score not in ("best", "mean"):
        raise ValueError(f"family_score should be 'best' or 'mean', got {family_score!r}")
    rng = np.random.default_rng(seed)
    fam_draws, rankings, gap_rows, gaps, unmapped = {}, {}, [], {}, set()
    for b, post in posteriors.items():
        theta, names = theta_from_posterior(post, "model")
        theta = theta[rng.permutation(theta.shape[0])]  # independent fits: a random pairing of their draws
        fam_of = {}
        for n in names:
            f = families.family(n) if families is not None else None
            if f is None:
                if families is not None:
                    unmapped.add(n)
                f = n
            fam_of[n] = f
        fd, fams = _family_draws(theta, names, fam_of, family_score)
        fam_draws[b] = (fd, fams)
        ra = rank_analysis(fd, fams) if len(fams) > 1 else None
        rows = [{"family": f, "models": [n for n in names if fam_of[n] == f], "score": float(fd[:, k].mean()),
                 "mean_rank": float(ra.ranks.mean_rank[k]) if ra else 1.0,
                 "rank_lower95": float(ra.ranks.interval95[k, 0]) if ra else 1.0,
                 "rank_upper95": float(ra.ranks.interval95[k, 1]) if ra else 1.0} for k, f in enumerate(fams)]
        rankings[b] = pd.DataFrame(rows).sort_values("score", ascending=False).reset_index(drop=True)
        conv = bool(getattr(getattr(post, "diagnostics", None), "converged", False))
        try:
            g = gap_ratio_draws(post, obj)
            gaps[b] = g
            s = summarize(g)
            row = {"gap_median": s.median, "gap_lower95": s.hdi95[0], "gap_upper95": s.hdi95[1], "error": None}
        except ValueError as exc:
            row = {"gap_median": np.nan, "gap_lower95": np.nan, "gap_upper95": np.nan, "error": str(exc)}
        nm, nt = (sizes or {}).get(b, (len(names), None))
        gap_rows.append({"benchmark": b, **row, "converged": conv, "n_models": nm, "n_tasks": nt})
    benches = list(posteriors)
    pairs = []
    for i in range(len(benches)):
        for j in range(i + 1, len(benches)):
            a, b = benches[i], benches[j]
            (da, fa), (db, fb) = fam_draws[a], fam_draws[b]
            shared = [f for f in fa if f in fb]
            row = {"benchmark_a": a, "benchmark_b": b, "n_shared": len(shared), "families": shared}
            if len(shared) < MIN_SHARED:
                row.update(rho=np.nan, rho_median=np.nan, rho_lower95=np.nan, rho_upper95=np.nan,
                           prob_negative=np.nan, skipped=f"{len(shared)} shared famil{'y' if len(shared) == 1 else 'ies'}"
                           f"; a rank correlation needs {MIN_SHARED}")
            else:
                xa, xb = da[:, [fa.index(f) for f in shared]], db[:, [fb.index(f) for f in shared]]
                per = _spearman_draws_paired(xa, xb)
                per = per[np.isfinite(per)]
                s = summarize(per)
                row.update(rho=spearman_rho(xa.mean(0), xb.mean(0)), rho_median=s.median, rho_lower95=s.hdi95[0],
                           rho_upper95=s.hdi95[1], prob_negative=float(np.mean(per < 0)), skipped=None)
            pairs.append(row)
    pairs_df = pd.DataFrame(pairs, columns=["benchmark_a", "benchmark_b", "n_shared", "families", "rho", "rho_median",
                                            "rho_lower95", "rho_upper95", "prob_negative", "skipped"])
    spread = None
    if len(gaps) >= 2:
        n = min(len(g) for g in gaps.values())
        stack = np.stack([g[:n] for g in gaps.values()])
        spread = summarize(np.nanmax(stack, 0) - np.nanmin(stack, 0)).to_dict()
    n_conv = sum(r["converged"] for r in gap_rows)
    return TransferStudy(benches, rankings, pairs_df, pd.DataFrame(gap_rows), spread, family_score, obj,
                         sorted(unmapped), getattr(families, "source", "(none: every model its own family)"), {},
                         len(posteriors), n_conv)


def transfer_study(corpus, spec="per-benchmark", settings=None, cache_dir: str | Path | None = None, progress=None,
                   cancel=None, *, families: FamilyMap | None = None, family_score: str = "best",
                   obj: str = "model") -> TransferStudy:
    """Fit each benchmark on its own (through the cache) and compare them (module note; seed 003 sec. 5.5).

    Parameters
    ----------
    corpus
        A validated corpus; with one benchmark only its gap ratio is reported.
    spec, settings, cache_dir, progress, cancel
        As :func:`~.refits.cold_fits`; ``spec`` is the per-benchmark model.
    families, family_score, obj
        See :func:`transfer_from_posteriors`.
    """
    from .refits import FitJob, cold_fits, sub_corpus

    col = corpus.table["benchmark"].astype(str)
    benches = sorted(col.unique())
    jobs = []
    for b in benches:
        part = corpus if len(benches) == 1 else sub_corpus(corpus, (col == b).to_numpy(), f"{corpus.name} [{b}]")
        jobs.append(FitJob(b, part, spec))
    batch = cold_fits(jobs, settings, cache_dir=cache_dir, progress=progress, cancel=cancel, what="transfer",
                     skip_failed=True)
    posts = {j.label: r.posterior for j, r in zip(jobs, batch.results) if r is not None}
    sizes = {j.label: (j.corpus.n_levels("model"), j.corpus.n_levels("task")) for j in jobs}
    if not posts:
        raise ValueError("every per-benchmark fit failed: " + "; ".join(f"{k}: {v}" for k, v in batch.errors.items()))
    st = transfer_from_posteriors(posts, families, family_score=family_score, obj=obj, sizes=sizes)
    st.errors = dict(batch.errors)
    return st


def format_transfer(d: dict) -> str:
    """Plain text of :meth:`TransferStudy.to_dict` (what ``ddr analyses --which transfer`` prints)."""
    lines = [f"Transfer across benchmarks ({cite('ddr2026', 'sec. 5.5')}): {len(d['benchmarks'])} benchmark(s), family score "
             f"'{d['family_score']}', family map {d['family_map']}; {d['n_converged']} of {d['n_fits']} fits converged"]
    if d["label"]:
        lines.append("  " + d["label"])
    if d["unmapped"]:
        lines.append(f"  models the map does not know (each its own family): {', '.join(d['unmapped'][:10])}"
                     + (" ..." if len(d["unmapped"]) > 10 else ""))
    lines.append(f"  Spearman rho of family rankings over shared families (at least {MIN_SHARED}):")
    if not d["pairs"]:
        lines.append("    (one benchmark: nothing to compare)")
    for p in d["pairs"]:
        if p["skipped"]:
            lines.append(f"    {p['benchmark_a']} vs {p['benchmark_b']}: skipped ({p['skipped']})")
        else:
            lines.append(f"    {p['benchmark_a']} vs {p['benchmark_b']} ({p['n_shared']} families): rho {p['rho']:+.2f}; "
                         f"per draw {p['rho_median']:+.2f} [{p['rho_lower95']:+.2f}, {p['rho_upper95']:+.2f}], "
                         f"P(rho < 0) {p['prob_negative']:.2f}")
    lines.append(f"  Capability-gap ratio sigma2_a / (sigma2_a + sigma2_a:t), a = {d['object']}:")
    for g in d["gap_ratio"]:
        if g.get("error"):
            lines.append(f"    {g['benchmark']:<20} n/a ({g['error']})")
            continue
        lines.append(f"    {str(g['benchmark'])[:19]:<20} {g['gap_median']:.3f} [{g['gap_lower95']:.3f}, "
                     f"{g['gap_upper95']:.3f}]" + ("" if g["converged"] else "  (fit NOT converged)"))
    s = d.get("gap_spread")
    if s:
        lines.append(f"    stability: spread across benchmarks (max - min per draw) {s['median']:.3f} "
                     f"[{s['hdi95'][0]:.3f}, {s['hdi95'][1]:.3f}]")
    for b, e in d["errors"].items():
        lines.append(f"  {b}: fit failed ({e})")
    return "\n".join(lines)


def transfer_lines(d: dict) -> list[str]:
    """The headline sentences of a transfer study (the app's summary and the DDR sheet print these).

    ``d`` is :meth:`TransferStudy.to_dict`.  Says whether family rankings transfer (Spearman rho per
    benchmark pair) and whether the capability-gap ratio does (its spread across benchmarks).
    """
    from ..formatting import fmt_coef, fmt_estimate, fmt_prob, fmt_r

    out = [f"{d['n_converged']} of {d['n_fits']} per-benchmark fits converged"
           + ("." if d["converged"] else ": numbers from the others are PROVISIONAL.")]
    done = [p for p in d["pairs"] if not p["skipped"]]
    if not d["pairs"]:
        out.append("One benchmark: no ranking to transfer; its capability-gap ratio is below.")
    elif not done:
        out.append(f"No benchmark pair shares {MIN_SHARED} model families: no rank correlation.")
    for p in done:
        out.append(f"{p['benchmark_a']} vs {p['benchmark_b']}: Spearman rho of family rankings "
                   f"{fmt_estimate(p['rho_median'], p['rho_lower95'], p['rho_upper95'], fmt_r)} over {p['n_shared']} "
                   f"shared families, P(rho < 0) {fmt_prob(p['prob_negative'])}.")
    skipped = len(d["pairs"]) - len(done)
    if done and skipped:
        out.append(f"{skipped} benchmark pair(s) share fewer than {MIN_SHARED} families: no rho.")
    gaps = [g for g in d["gap_ratio"] if not g.get("error")]
    if gaps:
        out.append("Capability-gap ratio: " + "; ".join(
            f"{g['benchmark']} {fmt_estimate(g['gap_median'], g['gap_lower95'], g['gap_upper95'], fmt_coef)}"
            + ("" if g["converged"] else " (unconverged)") for g in gaps) + ".")
    s = d.get("gap_spread")
    if s:
        out.append(f"Its spread across benchmarks (max - min per draw): "
                   f"{fmt_estimate(s['median'], s['hdi95'][0], s['hdi95'][1], fmt_coef)}.")
    return out
