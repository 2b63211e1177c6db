"""The ``ddr`` command line: the app's jobs, headless, for batch use.

This module is the parser and the dispatch; each command's work is in :mod:`.cli_commands` (one module
per command or group).

Every number it prints comes from the same core functions the app and the DDR
sheet use.  Exit status: 0 on success, 2 on invalid input (the message goes to
stderr), 3 when ``ddr fit`` made or reopened a fit that did not converge (unless
``--allow-unconverged``), 4 when ``ddr report`` wrote the sheet without a section it
could not lay out, 1 on an unexpected failure, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import __version__
from .cli_commands.analyses import cmd_analyses
from .cli_commands.common import (EXIT_FAILURE, EXIT_INVALID, EXIT_OK, EXIT_SHEET_INCOMPLETE, EXIT_UNCONVERGED,
                                  print_errors)
from .cli_commands.compare import cmd_compare
from .cli_commands.corpus import cmd_convert, cmd_formats, cmd_inspect
from .cli_commands.dstudy import cmd_dstudy
from .cli_commands.estimators import cmd_henderson, cmd_methods
from .cli_commands.fit import cmd_fit, fit_summary
from .cli_commands.report import cmd_report
from .corpus.issues import CorpusError
from .references import cite, references_text

# the exit statuses and ``fit_summary`` (the JSON object of ``ddr fit``) are read from here by scripts and tests
__all__ = ["main", "build_parser", "fit_summary", "EXIT_OK", "EXIT_FAILURE", "EXIT_INVALID", "EXIT_UNCONVERGED",
           "EXIT_SHEET_INCOMPLETE"]


def _add_corpus_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", type=Path, help="corpus file (canonical CSV/TSV/JSONL/Parquet or a supported format)")
    p.add_argument("--format", help="force the input format (see `ddr formats`)")
    p.add_argument("--encoding", help="text encoding when the file is not UTF-8, e.g. cp1252")
    p.add_argument("--benchmark", help="benchmark name for formats that do not carry one")
    p.add_argument("--aliases", type=Path, help="alias/mapping file (TOML) for subject ids and model names")
    p.add_argument("--scoring", choices=["direct", "all-pass", "threshold"],
                   help="scoring rule for verifier results (default: the importer's)")
    p.add_argument("--gamma", type=float, help="threshold of the 'threshold' scoring rule (default 0.5)")
    p.add_argument("--max-log-mb", type=float, metavar="MIB",
                   help="Inspect .eval logs: the most one archive member may inflate to before it is read "
                        "(default 1024)")
    p.add_argument("--field-mapping", choices=["auto", "shifted", "straight"],
                   help="Terminal-Bench meta.json: whether its result fields are shifted one place (default: auto)")
    _add_mapping_arguments(p)


def _add_mapping_arguments(p: argparse.ArgumentParser, benchmark: bool = False) -> None:
    """--columns and --scaffold (core/corpus/columns.py); --benchmark where the parser lacks it."""
    p.add_argument("--columns", metavar="ROLE=COLUMN,...",
                   help="which column is which: e.g. task=metadata.instance_id,model=metadata.model_name,"
                   "result=metadata.resolved; ROLE==VALUE gives every row one value; dotted names reach into "
                   "nested JSON")
    p.add_argument("--scaffold", help="one scaffold name for every row, for files that name none")
    p.add_argument("--unsplit-ids", choices=["collapse", "drop"],
                   help="subject ids that name no scaffold (a bare model name, a product): collapse (default: every "
                   "record gets one scaffold, fits have no scaffold terms) or drop (leave those ids out, named and "
                   "counted, and fit the scaffolds the other ids name)")
    p.add_argument("--keep-lookalike-names", action="store_true", default=None,
                   help="keep names that differ only by look-alike letters (a Cyrillic o, a full-width A) apart; "
                   "by default they are read as one name, with a warning")
    # a slice of tasks, and task metadata / release dates from files beside the corpus
    p.add_argument("--slice", action="append", metavar="COLUMN=VALUE",
                   help="keep only the tasks whose COLUMN is VALUE (A|B: any of them; LO..HI: a numeric range, "
                   "ends included), e.g. task_group=enterprise or human_minutes=60..480; repeat to combine")
    p.add_argument("--task-metadata", type=Path, metavar="FILE", action="append",
                   help="per-task columns to join (CSV/JSONL with task or task_id, or METR run rows such as BRIDGE's "
                   "cybench_normalized_results.jsonl), e.g. human minutes; repeat to merge several files by task id")
    p.add_argument("--release-dates", type=Path, metavar="FILE",
                   help="model release dates to join (CSV model,release_date; JSON {model: date}; or BRIDGE's "
                   "model_run_mapping.json)")
    if benchmark:
        p.add_argument("--benchmark", help="one benchmark name for every row, for files that name none")


PRESETS = ("per-benchmark", "pooled", "ddr")


class _DeprecatedDesignFlag(argparse.Action):
    """``--design`` was the old name of ``--preset``; it still works, with a note on stderr."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"ddr: {option_string} is deprecated (it names a model preset, not a design): use --preset {values}",
              file=sys.stderr)
        namespace.preset = values


def _add_preset_argument(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--preset", choices=PRESETS, help=f"{help}: {', '.join(PRESETS)}")
    p.add_argument("--design", choices=PRESETS, action=_DeprecatedDesignFlag, dest="preset", help=argparse.SUPPRESS)
    _add_strict_terms_argument(p)


def _add_strict_terms_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--strict-terms", action="store_true",
                   help="refuse (exit 2) a preset whose terms the corpus's design cannot separate, and print the "
                   "formula it supports (default: fit the preset without those terms, with a note)")


def _add_fit_when_needed_arguments(p: argparse.ArgumentParser, dflt) -> None:
    """The sampler's options of a command that fits a corpus only when the cache has no fit of it."""
    p.add_argument("--draws", type=int, help=_draws_help("when fitting"))
    _add_stopping_arguments(p)
    p.add_argument("--warmup", type=int, help=f"warmup iterations per chain when fitting (default {dflt.warmup})")
    p.add_argument("--chains", type=int, help=f"chains when fitting (default {dflt.chains})")
    p.add_argument("--seed", type=int, default=0, help="seed when fitting")
    p.add_argument("--cache", type=Path, help="cache folder")


def _add_stopping_arguments(p: argparse.ArgumentParser) -> None:
    """``--stop``, ``--max-draws``, ``--max-seconds``: the run length rule (core.model.stopping)."""
    p.add_argument("--stop", choices=["gate", "fixed"],
                   help="run length after warmup: gate (default: sample until every component passes the "
                        "convergence gate: R-hat <= 1.01, bulk and tail ESS >= 440, no divergence; looked at every "
                        "50 draws, at least --draws) or fixed (exactly --draws per chain)")
    p.add_argument("--max-draws", type=int, help="with --stop gate: ceiling of draws per chain (default 4000)")
    p.add_argument("--max-seconds", type=float, help="with --stop gate: ceiling of the sampling time in seconds "
                        "(default none)")


def _draws_help(what: str = "") -> str:
    """``--draws``'s help: what it means depends on the run-length rule (``--stop``)."""
    from .model.posterior import DEFAULT_DRAWS, DEFAULT_MIN_DRAWS_GATE

    return (f"post-warmup draws per chain{' ' + what if what else ''}: with --stop gate (default) the minimum "
            f"(default {DEFAULT_MIN_DRAWS_GATE}), with --stop fixed exactly that many (default {DEFAULT_DRAWS})")


def build_parser() -> argparse.ArgumentParser:
    from .model.posterior import SamplerSettings  # no jax here: the sampler imports it lazily

    # one set of sampler defaults for the app and every command, so that a fit made in one is
    # reused from the cache by the others
    dflt = SamplerSettings()

    parser = argparse.ArgumentParser(prog="ddr", description="DDR Explorer, headless: inspect corpora, fit "
                                     "G-studies, run D-studies and write DDR sheets.",
                                     epilog=references_text(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"ddr {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("inspect", help="validate a corpus and summarise its design")
    _add_corpus_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser("convert", help="write a corpus in the canonical layout, or as py-irt JSON lines")
    _add_corpus_arguments(p)
    p.add_argument("-o", "--output", type=Path, required=True, help="output file (.csv, .tsv, .jsonl, .parquet)")
    p.add_argument("--force", action="store_true",
                   help="with --to py-irt: replace an existing <stem>.aliases.toml that ddr did not write")
    p.add_argument("--to", choices=["canonical", "py-irt"], default="canonical",
                   help="canonical layout (by the output's extension, default) or py-irt JSON lines with an "
                   "alias file <stem>.aliases.toml beside it that maps subjects back to model and scaffold")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("henderson", help=f"variance components by Henderson's Method I (closed form; {cite('henderson1953')})")
    _add_corpus_arguments(p)
    p.add_argument("--formula", required=True,
                   help="random-intercept formula or preset, e.g. \"score ~ (1|person) + (1|task/rater)\"")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_henderson)

    p = sub.add_parser("dstudy", help="decision study: reliability of a design, sizes needed for a target")
    p.add_argument("path", nargs="?", type=Path, help="corpus or cached fit (.h5); or use --components")
    p.add_argument("--components", type=Path, help="variance components from elsewhere (JSON or CSV; see README)")
    p.add_argument("--success-rate", type=float, metavar="P",
                   help="with --components: the population's mean success rate (0-1), which gives a components "
                   "file the reliability of observed success rates beside its latent figures")
    p.add_argument("--n-tasks", type=float, help="tasks per benchmark; all tasks for a fit without a benchmark facet "
                   "(per-benchmark, ddr) (default: the corpus's, or 50)")
    p.add_argument("--n-scaffolds", type=float, help="scaffolds per model")
    p.add_argument("--n-benchmarks", type=float, help="benchmarks")
    p.add_argument("--replicates", type=float, help="trials per task-model-scaffold cell (ddr: traces per agent-task pair)")
    p.add_argument("--n-models", type=int, help="models compared; agents for --object agent (enters the cost)")
    p.add_argument("--object", choices=["model", "system", "agent"],
                   help="object of measurement: model, model-scaffold system, or agent (default: the model's own: "
                        "agent for the ddr preset, else model)")
    p.add_argument("--claim", default="relative", choices=["relative", "absolute"],
                   help="relative (ranking, Erho2) or absolute (threshold decisions, Phi)")
    p.add_argument("--target", type=float, help="target coefficient (default 0.85 relative, 0.90 absolute)")
    p.add_argument("--budget", type=float, help="budget in USD: the best design on the cost frontier")
    p.add_argument("--price-per-trial", type=float, help="USD per trial (default: from the corpus's cost column)")
    p.add_argument("--token-prices", type=Path, metavar="FILE",
                   help="USD per million input/output tokens per model (CSV model,input,output or JSON); "
                   "prices per trial from the corpus's token counts")
    _add_preset_argument(p, "model preset to fit a corpus with (default: pooled for several benchmarks, else "
                         "per-benchmark)")
    p.add_argument("--format", help="force the corpus format")
    _add_mapping_arguments(p, benchmark=True)
    _add_fit_when_needed_arguments(p, dflt)
    p.add_argument("--external-ranking", type=Path, metavar="FILE",
                   help="CSV/JSON of model -> rank (1 = best) or score: Kendall tau and Spearman rho against the "
                   "latent ranking")
    p.add_argument("--external-kind", choices=["rank", "score"],
                   help="read the external ranking's values as ranks or scores (default: from the file)")
    p.add_argument("--quiet", action="store_true", help="no progress or notes on stderr")
    p.add_argument("--preview", action="store_true",
                   help="no sampling: the D-study of point estimates of the corpus's components (Laplace GLMM, or a "
                   "rough fit on large designs), labelled as a preview; never on the DDR sheet")
    p.add_argument("--preview-method", choices=["auto", "laplace", "rough"], default="auto",
                   help="point estimates for --preview (default auto: Laplace up to 10,000 random effects)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_dstudy)

    p = sub.add_parser("compare", help="two agents, one decision: A against B from the fitted posterior, the "
                       "paired test beside it, and the tasks a new evaluation needs to settle it")
    _add_corpus_arguments(p)
    p.add_argument("a", nargs="?", help="the first model (or scaffold, or 'model / scaffold' system), as the corpus "
                   "names it")
    p.add_argument("b", nargs="?", help="the second one")
    p.add_argument("--all", action="store_true", help="every pair: those that can be told apart, and the tiers")
    p.add_argument("--threshold", type=float, default=0.95,
                   help="P(better) at which a pair counts as told apart (default 0.95)")
    p.add_argument("--object", default="model", choices=["model", "scaffold", "system"],
                   help="what A and B are (default: models)")
    _add_preset_argument(p, "model preset to fit the corpus with (default: pooled for several benchmarks, else "
                         "per-benchmark)")
    _add_fit_when_needed_arguments(p, dflt)
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("fit", help="fit the Bayesian G-study (variance components) with NUTS")
    _add_corpus_arguments(p)
    p.add_argument("--formula", help="random-intercept formula, e.g. \"y ~ (1|task) + (1|model) + (1|task:model)\"")
    _add_preset_argument(p, "a model preset")
    p.add_argument("--draws", type=int, help=_draws_help())
    _add_stopping_arguments(p)
    p.add_argument("--warmup", type=int, default=dflt.warmup, help=f"warmup iterations per chain (default {dflt.warmup})")
    p.add_argument("--chains", type=int, default=dflt.chains, help=f"chains (default {dflt.chains})")
    p.add_argument("--seed", type=int, default=0, help="random seed (same seed, same draws)")
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "gpu"], help="where to sample")
    p.add_argument("--marginalise", default="auto", choices=["auto", "off"],
                   help="auto (default): integrate a term of many weakly informed levels (pooled: "
                        "benchmark:task:model) out by checked Gauss-Hermite quadrature; off: sample every level")
    p.add_argument("--quadrature-nodes", type=int, choices=[8, 12, 16, 24],
                   help="fewest Gauss-Hermite nodes of that quadrature (default: the fewest that pass its accuracy "
                        "checks); raise it when the fit says the quadrature was off at the posterior")
    p.add_argument("--cache", type=Path, help="cache folder (default $DDR_CACHE_DIR or ~/.cache/ddr-explorer)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    p.add_argument("--allow-unconverged", action="store_true",
                   help="exit 0 even when the fit did not converge (default: exit 3)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("report", help="fit (or reuse the cache) and write the DDR sheet PDF",
                       epilog="exit status: 0 the sheet was written whole; 4 the sheet was written without one or "
                              "more sections that could not be laid out (each named on stderr and, in its place, "
                              "on the sheet; the fit is kept); 2 invalid input; 1 the sheet could not be written; "
                              "130 cancelled")
    _add_corpus_arguments(p)
    p.add_argument("-o", "--output", type=Path, required=True, help="the PDF to write")
    _add_preset_argument(p, "a model preset (default: pooled for several benchmarks, else per-benchmark)")
    p.add_argument("--formula", help="a random-intercept formula instead of --preset")
    p.add_argument("--object", choices=["model", "system", "agent"],
                   help="object of measurement (default: the model's own: agent for the ddr preset, else model)")
    p.add_argument("--claim", default="relative", choices=["relative", "absolute"], help="ranking or thresholds")
    p.add_argument("--target", type=float, help="target coefficient (default 0.85 relative, 0.90 absolute)")
    p.add_argument("--budget", type=float, help="budget in USD")
    p.add_argument("--prices", type=Path, help="USD per trial per benchmark (JSON or CSV benchmark,price)")
    p.add_argument("--price-per-trial", type=float, help="USD per trial of every benchmark (as ddr dstudy)")
    for flag, what in (("--n-tasks", "tasks per benchmark (all tasks for a fit without a benchmark facet)"),
                       ("--n-scaffolds", "scaffolds per model"), ("--n-benchmarks", "benchmarks"),
                       ("--replicates", "trials per task-model-scaffold cell")):
        p.add_argument(flag, type=float, help=f"what-if design: {what}; the sheet's cost answers and tasks for "
                       "the target are computed at it, as ddr dstudy and the app's D-study tab (default: observed)")
    p.add_argument("--n-models", type=int, help="what-if design: models compared (enters the cost)")
    p.add_argument("--token-prices", type=Path, metavar="FILE",
                   help="USD per million input/output tokens per model (CSV model,input,output or JSON); "
                   "prices per trial come from the corpus's token counts")
    p.add_argument("--draws", type=int, help=_draws_help())
    _add_stopping_arguments(p)
    p.add_argument("--warmup", type=int, default=dflt.warmup, help=f"warmup iterations per chain (default {dflt.warmup})")
    p.add_argument("--chains", type=int, default=dflt.chains, help=f"chains (default {dflt.chains})")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "gpu"])
    p.add_argument("--cache", type=Path, help="cache folder")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the fit cache")
    p.add_argument("--corpus", type=Path, help="with a cached fit file (.h5) as PATH: the corpus it was fitted to")
    p.add_argument("--compare", metavar="A,B", help="a pair of models (systems for --object system) to read "
                   "through every layer: a 'Two agents' page after page 1 (as ddr compare)")
    p.add_argument("--analyses", help="analyses to run first, comma-separated: difficulty,heldout,loo, or none "
                   "(refits through the refit engine, all cached: difficulty 4 strata, heldout --splits x 2, loo 1; "
                   "default: all three when their estimate is under 15 minutes, printed first); also "
                   "methods (the estimator table on the method-notes page; Laplace takes ~25 s on TB2), "
                   "scores (observed-scale score reliability; always run with --claim absolute), failures, "
                   "frontier")
    p.add_argument("--splits", type=int, default=50, help=f"held-out 70/30 splits (default 50, {cite('ddr2026')})")
    p.add_argument("--refit-rule", choices=["precision", "gate"], default="gate",
                   help="how long each refit of difficulty and hold-out runs: 'gate' (default) until what it reports "
                   "has 440 effective draws; 'precision' until its chains agree and the Monte Carlo SE of what the "
                   "analysis takes from it is within a tenth of its spread across refits (at most 0.005)")
    p.add_argument("--undated", choices=["stop", "drop"], default="stop",
                   help="frontier: models without a release date stop it (default), or are left out and named")
    p.add_argument("--heldout-estimator", choices=["auto", "bayes", "reml"], default="auto",
                   help="how the hold-out splits' parts are fitted: 'bayes' (Bayesian GLMM refits, latent logit "
                   "scale), 'reml' (the REML LMM, observed 0/1 scale: about 2 min for 50 splits on TB2), or 'auto' "
                   "(default): Bayesian when their estimate fits the 15 min budget, else REML")
    p.add_argument("--scheduler", help="a Dask scheduler (tcp://host:8786) to run the refits on "
                   "(default: $DDR_SCHEDULER, else this machine)")
    p.add_argument("--date-invariant", action="store_true", help="reproducible output: no build date")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("analyses", help="refit-heavy analyses: difficulty strata, held-out splits, PSIS-LOO, "
                       "leave-one-benchmark/model-out")
    _add_corpus_arguments(p)
    p.add_argument("--which", default="difficulty,heldout,loo,lobo,lomo",
                   help="comma-separated: difficulty,heldout,loo,lobo,lomo (default), and "
                   "failure-modes,frontier,capability,transfer")
    p.add_argument("--corpus", type=Path, help="with a cached fit file (.h5) as PATH: the corpus it was fitted to")
    _add_preset_argument(p, "a model preset (default: pooled for several benchmarks, else per-benchmark)")
    p.add_argument("--formula", help="a random-intercept formula instead of --preset")
    p.add_argument("--splits", type=int, default=50, help=f"held-out 70/30 splits (default 50, {cite('ddr2026')})")
    p.add_argument("--strata", type=int, default=4, help="difficulty strata (default 4: quartiles)")
    p.add_argument("--refit-rule", choices=["precision", "gate"], default="gate",
                   help="how long each refit of difficulty and hold-out runs: 'gate' (default) until what it reports "
                   "has 440 effective draws; 'precision' until its chains agree and the Monte Carlo SE of what the "
                   "analysis takes from it is within a tenth of its spread across refits (at most 0.005)")
    p.add_argument("--undated", choices=["stop", "drop"], default="stop",
                   help="frontier: models without a release date stop it (default), or are left out and named")
    p.add_argument("--heldout-estimator", choices=["auto", "bayes", "reml"], default="auto",
                   help="how the hold-out splits' parts are fitted: 'bayes' (Bayesian GLMM refits, latent logit "
                   "scale), 'reml' (the REML LMM, observed 0/1 scale: about 2 min for 50 splits on TB2), or 'auto' "
                   "(default): Bayesian when their estimate fits the 15 min budget, else REML")
    p.add_argument("--subjects", default="best-scaffold", choices=["best-scaffold", "every-agent"],
                   help=f"capability: IRT subjects, the best scaffold per model-benchmark pair ({cite('krsteski2026')}) or every agent")
    p.add_argument("--irt", default="both", choices=["1pl", "2pl", "both"], help="capability: which IRT model(s)")
    p.add_argument("--external-ranking", type=Path, metavar="FILE",
                   help="capability: CSV/JSON of model -> rank (1 = best) or score, compared with the IRT abilities")
    p.add_argument("--external-kind", choices=["rank", "score"], help="read the external ranking as ranks or scores")
    p.add_argument("--families", type=Path, metavar="FILE",
                   help="transfer: model -> family map (CSV model,family or TOML; default: each model its own family)")
    p.add_argument("--family-score", default="best", choices=["best", "mean"],
                   help="transfer: a family's score on a benchmark, its best model or the mean of its models")
    p.add_argument("--draws", type=int, help=_draws_help("of the parent fit") + "; held-out splits: at most 250")
    _add_stopping_arguments(p)
    p.add_argument("--warmup", type=int, default=dflt.warmup,
                   help=f"warmup iterations per chain (default {dflt.warmup}; splits: at most 250)")
    p.add_argument("--chains", type=int, default=dflt.chains,
                   help=f"chains (default {dflt.chains}; held-out splits: at most 4)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "gpu"])
    p.add_argument("--cache", type=Path, help="cache folder")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--scheduler", help="a Dask scheduler (tcp://host:8786) to run the refits on "
                   "(default: $DDR_SCHEDULER, else this machine)")
    p.set_defaults(func=cmd_analyses)

    p = sub.add_parser("methods", help="variance shares from Henderson, REML, Laplace, DISCO and the cached "
                       "Bayesian fit, side by side")
    _add_corpus_arguments(p)
    p.add_argument("--formula", help="a random-intercept formula")
    p.add_argument("--preset", choices=["per-benchmark", "pooled", "ddr"],
                   help="a named model (default: pooled for several benchmarks, else per-benchmark)")
    p.add_argument("--object",
                   help="object of measurement for Erho2/Phi: model, system or agent (default: the model's own: agent "
                        "for the ddr preset, else model); on a plain score table a facet of the formula (default: "
                        "its first one-facet term)")
    _add_strict_terms_argument(p)
    p.add_argument("--no-bayes", action="store_true", help="leave out both Bayesian columns (the cached GLMM fit "
                   "and the observed-scale LMM, which samples)")
    p.add_argument("--cache", type=Path, help="cache folder where `ddr fit` stored the Bayesian fit")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_methods)

    p = sub.add_parser("formats", help="list the input formats")
    p.set_defaults(func=cmd_formats)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``ddr`` on ``argv`` (default: the process's arguments) and return its exit status (module docstring)."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except CorpusError as exc:  # raised outside loading, e.g. by rescoring
        print_errors(exc)
        return EXIT_INVALID
    except KeyboardInterrupt:
        print("ddr: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
