"""Benchmark the point estimators of core/estimators against lme4 in the same run.

For each corpus it prints the wall time and the variance components of

- ours: :func:`ddr_explorer.core.estimators.reml` (observed-scale LMM) and
  :func:`ddr_explorer.core.estimators.laplace` (binomial-logit GLMM, Laplace), and
- lme4 (``lmer`` REML on one 0/1 row per trial; ``glmer`` nAGQ = 1 on the binomial cells), run
  by ``Rscript`` in a child process when Rscript and lme4 are installed (Debian: r-base-core,
  r-cran-lme4), with the largest relative difference of the components.

Corpora: ``pooled`` is the HAL-scale simulation of bench/simulate.py under the pooled model (seed 000
Eq. 6, ~41,000 cells and ~32,000 random effects); ``tb2`` is the Terminal-Bench 2.0 demo corpus
(resources/demo/terminal-bench-2.csv) under the per-benchmark model; ``fixture`` is the small
test fixture (tests/estimators/fixtures/binary_cells.csv), which takes seconds.

Cost (CPU time of this process; the 2-core development machine was shared at load average ~20, so
wall times were ~5x CPU times).  ``pooled`` REML, ``--reference 10533b9`` in the same run: 13.8 s wall,
2.8 s CPU, 11 criterion evaluations (projected Newton with the average-information matrix, block
elimination of the Schur complement), against 397 s wall, 61.3 s CPU and 453 evaluations for the
derivative-free search of commit 10533b9: 28.7x wall, 22x CPU, criterion equal to 1e-6, components
within 6.4e-5 relative.  lme4's lmer gave no answer within the 300 s cap of that run (nor within 900 s,
5.8 min CPU, in an earlier one).  ``pooled`` Laplace: 986 derivative-free evaluations, 475 s CPU and
2,305 s wall (load ~28), converged; 0.55 s CPU per evaluation against 0.79 s before the elimination was
used in PIRLS (same process); the start commit's code, run beside it, had not finished after 2,700 s
wall: run it deliberately.  ``tb2`` REML about 1 s CPU (3 s before), Laplace about 30 s.
``--estimators reml-cobyqa`` and ``reml-grad`` run the derivative-free search and L-BFGS-B beside the
default in the same run.

Usage::

    python bench/bench_estimators.py --corpus fixture
    python bench/bench_estimators.py --corpus tb2
    python bench/bench_estimators.py --corpus pooled --estimators reml,laplace --no-lme4
    python bench/bench_estimators.py --corpus pooled --estimators reml,reml-grad
    python bench/bench_estimators.py --corpus pooled --estimators reml --reference 10533b9 --lme4-timeout 300
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ddr_explorer.core.estimators import MixedDesign, laplace, reml  # noqa: E402
from ddr_explorer.core.model.formula import as_spec  # noqa: E402

R_SCRIPT = r"""
suppressPackageStartupMessages(library(lme4))
args <- commandArgs(TRUE)
cells <- read.csv(args[1], stringsAsFactors = TRUE)
form <- as.formula(args[2])
which <- strsplit(args[3], ",")[[1]]
out <- list()
keep <- function(method, fit, secs) {
  vc <- as.data.frame(VarCorr(fit))
  out[[length(out) + 1]] <<- data.frame(method = method, term = c(ifelse(vc$grp == "Residual", "residual", vc$grp),
                                        "seconds"), value = c(vc$vcov, secs))
}
if ("reml" %in% which) {
  idx <- rep(seq_len(nrow(cells)), cells$trials)
  rows <- cells[idx, ]
  rows$y <- unlist(mapply(function(k, n) c(rep(1, k), rep(0, n - k)), cells$successes, cells$trials))
  t <- system.time(f <- lmer(update(form, y ~ .), data = rows, REML = TRUE))[["elapsed"]]  # wall
  keep("REML", f, t)
}
if ("laplace" %in% which) {
  t <- system.time(g <- glmer(update(form, cbind(successes, trials - successes) ~ .), data = cells,
                              family = binomial, nAGQ = 1))[["elapsed"]]
  keep("Laplace", g, t)
}
write.csv(do.call(rbind, out), args[4], row.names = FALSE)
"""


def load(name: str) -> tuple[pd.DataFrame, str]:
    if name == "pooled":
        from simulate import simulate_pooled

        return simulate_pooled(seed=0).table, "pooled"
    if name == "tb2":
        from ddr_explorer.core.corpus.io import load_corpus

        return load_corpus(HERE.parent / "resources" / "demo" / "terminal-bench-2.csv").table, "per-benchmark"
    if name == "fixture":
        return pd.read_csv(HERE.parent / "tests" / "estimators" / "fixtures" / "binary_cells.csv"), "per-benchmark"
    raise SystemExit(f"unknown corpus {name!r}")


def r_formula(spec) -> str:
    """lme4 spelling: tasks are nested in benchmarks, so a pooled task level is benchmark:task."""
    return "y ~ 1 + " + " + ".join(f"(1 | {':'.join(t.columns)})" for t in spec.terms)


def run_lme4(cells: pd.DataFrame, spec, which: list[str], timeout: float) -> dict | None:
    if shutil.which("Rscript") is None:
        print("lme4: Rscript not found; skipped")
        return None
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "fit.R").write_text(R_SCRIPT)
        cols = sorted({c for t in spec.terms for c in t.columns})
        cells[cols + ["successes", "trials"]].to_csv(tmp / "cells.csv", index=False)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(["Rscript", str(tmp / "fit.R"), str(tmp / "cells.csv"), r_formula(spec),
                                   ",".join(which), str(tmp / "out.csv")], capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            print(f"lme4: no answer within {timeout:.0f} s")
            return None
        if proc.returncode != 0:
            print("lme4 failed:", proc.stderr[-2000:])
            return None
        res = pd.read_csv(tmp / "out.csv")
        print(f"lme4: Rscript wall {time.perf_counter() - t0:.1f} s (R start and data expansion included)")
    out = {}
    for method, g in res.groupby("method"):
        # lme4 names a term by its columns (benchmark:task); ours by its canonical name (task)
        by_cols = {":".join(t.columns): t.name for t in spec.terms}
        out[method] = {by_cols.get(k, k): float(v) for k, v in zip(g.term, g.value)}
    return out


def largest_relative_difference(fit, reference) -> float:
    """The largest |fit - reference| / |reference| over the variance components the reference puts above 1e-6."""
    return max(abs(fit.components[n] - reference.components[n]) / max(abs(reference.components[n]), 1e-12)
               for n in fit.components if reference.components[n] > 1e-6)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="pooled", choices=["pooled", "tb2", "fixture"])
    ap.add_argument("--estimators", default=None,
                    help="comma-separated: reml,laplace,reml-grad,reml-cobyqa (default: reml,laplace; reml only "
                    "for the pooled corpus, whose Laplace fit takes minutes; reml-grad / reml-cobyqa: REML by "
                    "L-BFGS-B / the derivative-free search beside the default Newton iteration, same run)")
    ap.add_argument("--reference", metavar="COMMIT", default=None,
                    help="also run REML (and Laplace, when chosen) of core/estimators as it was at COMMIT (read with "
                    "git show) on the same design in the same run, and print the ratios")
    ap.add_argument("--no-lme4", action="store_true", help="do not run lme4 even if Rscript is present")
    ap.add_argument("--lme4-timeout", type=float, default=900.0, help="seconds to wait for lme4")
    a = ap.parse_args(argv)
    chosen = a.estimators or ("reml" if a.corpus == "pooled" else "reml,laplace")
    which = [w.strip() for w in chosen.split(",") if w.strip()]
    table, preset = load(a.corpus)
    spec = as_spec(preset)
    t0 = time.perf_counter()
    design = MixedDesign.from_spec(table, spec)
    print(f"corpus {a.corpus}: {design.n_cells:,} cells, {design.n_obs:,.0f} trials, {design.n_effects:,} random "
          f"effects, {design.n_terms} terms ({time.perf_counter() - t0:.2f} s to build)")
    ours = {}
    for w in which:
        if w == "reml-grad":  # REML by L-BFGS-B with the analytic gradient in theta
            fit = reml(design, method="lbfgs")
            fit.method = "REML-grad"
        elif w == "reml-cobyqa":  # the derivative-free search (the default before the Newton iteration)
            fit = reml(design, method="cobyqa")
            fit.method = "REML-cobyqa"
        else:
            fit = {"reml": reml, "laplace": laplace}[w](design)
        ours[fit.method] = fit
        print(f"ours {fit.method:8s}: {fit.seconds:7.1f} s wall, {fit.cpu_seconds:7.1f} s CPU, {fit.n_evaluations} criterion evaluations, "
              f"criterion {fit.criterion:.4f}, converged {fit.converged}")
    if a.reference:
        ref_mod = load_reference(a.reference)
        for w in [w for w in which if w in ("reml", "laplace")]:
            fit = getattr(ref_mod, w)(design)
            fit.method = f"{fit.method}@{a.reference[:7]}"
            now = ours[{"reml": "REML", "laplace": "Laplace"}[w]]
            worst = largest_relative_difference(now, fit)
            print(f"reference {fit.method:18s}: {fit.seconds:7.1f} s wall, {fit.cpu_seconds:7.1f} s CPU, "
                  f"{fit.n_evaluations} evaluations, criterion {fit.criterion:.6f}; now {now.seconds:.1f} s wall "
                  f"({fit.seconds / now.seconds:.1f}x faster), {now.cpu_seconds:.1f} s CPU "
                  f"({fit.cpu_seconds / now.cpu_seconds:.1f}x), criterion {now.criterion:.6f}; largest relative "
                  f"difference of the components {worst:.1e}")
    for other, label in (("REML-grad", "L-BFGS-B with the gradient"), ("REML-cobyqa", "derivative-free")):
        if "REML" not in ours or other not in ours:
            continue
        g, f = ours["REML"], ours[other]
        worst = largest_relative_difference(g, f)
        print(f"REML Newton (default) vs {label}, same run: {g.seconds:.1f} s vs {f.seconds:.1f} s "
              f"wall ({f.seconds / g.seconds:.1f}x), {g.cpu_seconds:.1f} s vs {f.cpu_seconds:.1f} s CPU "
              f"({f.cpu_seconds / g.cpu_seconds:.1f}x), {g.n_evaluations} vs {f.n_evaluations} evaluations; "
              f"criterion {g.criterion:.6f} vs {f.criterion:.6f}; largest relative difference of the components "
              f"{worst:.1e}")
    lme4_which = [w for w in which if w in ("reml", "laplace")]
    ref = None if a.no_lme4 or not lme4_which else run_lme4(design_cells(table, spec), spec, lme4_which,
                                                             a.lme4_timeout)
    names = [*spec.term_names, "residual"]
    for method, fit in ours.items():
        print(f"\n{method} ({fit.scale} scale) sigma^2")
        r = (ref or {}).get(method)
        print(f"{'term':28s}{'ours':>12s}" + (f"{'lme4':>12s}{'rel diff':>10s}" if r else ""))
        worst = 0.0
        for n in names:
            line = f"{n:28s}{fit.components[n]:12.6f}"
            if r and n in r:
                diff = abs(fit.components[n] - r[n]) / max(abs(r[n]), 1e-12)
                worst = max(worst, diff) if r[n] > 1e-6 else worst
                line += f"{r[n]:12.6f}{diff:10.1e}"
            print(line)
        if r:
            print(f"lme4 {method}: {r['seconds']:.1f} s inside R; ours {fit.seconds:.1f} s "
                  f"({fit.cpu_seconds:.1f} s CPU); ratio ours / lme4 {fit.seconds / r['seconds']:.2f} (same run); "
                  f"largest relative difference (components > 1e-6) {worst:.1e}")


def load_reference(commit: str):
    """core/estimators as it was at ``commit`` (its reml, sparse, laplace and design modules, read with
    ``git show``), importable beside the current one: the same-run reference of the speed figures."""
    import importlib.util
    import types

    root = HERE.parent
    tmp = Path(tempfile.mkdtemp(prefix="ddr_ref_"))
    for name in ("__init__", "design", "sparse", "reml", "laplace"):
        src = subprocess.run(["git", "show", f"{commit}:core/estimators/{name}.py"], cwd=root, capture_output=True,
                             text=True, check=True).stdout
        if name == "__init__":  # only what REML and Laplace need
            src = ("from .design import EstimationCancelled, MixedDesign\n"
                   "from .laplace import laplace\nfrom .reml import reml\n")
        (tmp / f"{name}.py").write_text(src)
    pkg_name = "ddr_explorer.core._estimators_reference"
    spec = importlib.util.spec_from_file_location(pkg_name, tmp / "__init__.py", submodule_search_locations=[str(tmp)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[pkg_name] = mod
    spec.loader.exec_module(mod)
    assert isinstance(mod, types.ModuleType)
    return mod


def design_cells(table: pd.DataFrame, spec) -> pd.DataFrame:
    from ddr_explorer.core.model.design_matrix import cell_table

    return cell_table(table, spec)


if __name__ == "__main__":
    main()
