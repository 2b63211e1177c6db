"""The canonical corpus layout (SPEC section 1).

One row of the canonical table is one *record*: a trial of one agent
(model x scaffold) on one task of one benchmark, or an aggregated binomial cell
of identical trials.  Results are always held as ``successes`` out of
``trials``; a binary trial result S is ``successes=S, trials=1``.

Column names, their meaning and their accepted synonyms are documented in
the user guide (docs/guide/files.md, "The corpus format").  Everything here is plain data so that the readers,
the validator, the CLI and the documentation share one source of truth.
"""

from __future__ import annotations

#: Facets that every record must carry.  ``task`` is nested in ``benchmark``.
REQUIRED_FACETS: tuple[str, ...] = ("benchmark", "task", "model", "scaffold")

#: The scaffold facet's name, and the one scaffold of a table that names none (a per-run export of one
#: leaderboard): a single level, so fits have no scaffold terms (core/corpus/validate.py says so).
SCAFFOLD = "scaffold"
SCAFFOLD_NOT_NAMED = "(scaffold not named)"

#: Optional trial / run / replicate identifier.
TRIAL_ID = "trial"

#: Columns that identify one record; duplicates of this key are an error.
RECORD_KEY: tuple[str, ...] = (*REQUIRED_FACETS, TRIAL_ID)

#: Result columns of the canonical table (always present after loading).
SUCCESSES = "successes"
TRIALS = "trials"

#: Input-only result column: a binary trial result S in {0, 1}.
RESULT = "result"

#: Soft score (mean of verifier results; not binary, for reporting only).
SOFT_SCORE = "soft_score"

#: Prefix of verifier-result columns, e.g. ``verifier.above_median``.
VERIFIER_PREFIX = "verifier."

#: Optional numeric columns: cost in USD for the whole row (all its trials),
#: token counts for the whole row, task metadata.
COST = "cost"
TOKEN_COLUMNS: tuple[str, ...] = (
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "total_tokens",
)
NUMERIC_METADATA: tuple[str, ...] = (COST, *TOKEN_COLUMNS, "num_turns", "human_minutes", "difficulty")

#: Optional text metadata (task group, tags, model release date).
TEXT_METADATA: tuple[str, ...] = ("task_group", "tags", "release_date", "difficulty_label")

#: Optional extra facets (seed 003 (DDR paper 2026)'s four-facet design and judges).
EXTRA_FACETS: tuple[str, ...] = ("step", "error_category", "judge")

#: Every canonical name (verifier columns excepted), in output order.
CANONICAL_ORDER: tuple[str, ...] = (
    *REQUIRED_FACETS,
    TRIAL_ID,
    SUCCESSES,
    TRIALS,
    SOFT_SCORE,
    *NUMERIC_METADATA,
    *TEXT_METADATA,
    *EXTRA_FACETS,
)

#: Common synonyms, matched case-insensitively after stripping spaces,
#: dashes and dots to underscores.  The canonical name maps to itself.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "benchmark": ("bench", "benchmark_name", "suite", "dataset", "eval", "evaluation"),
    "task": ("task_id", "task_name", "item", "item_id", "problem", "problem_id", "instance", "instance_id",
             "question_id"),
    "model": ("model_name", "model_id", "llm", "base_model"),
    "scaffold": ("scaffold_name", "harness", "framework", "agent_framework", "agent_scaffold"),
    "trial": ("trial_id", "run", "run_id", "replicate", "rep", "attempt", "seed", "epoch", "sample_id"),
    "result": ("success", "score", "passed", "pass", "correct", "resolved", "solved", "outcome", "y", "score_binarized"),
    "successes": ("n_success", "n_successes", "num_successes", "k", "n_correct", "correct_count"),
    "trials": ("n_trials", "num_trials", "n_attempts", "attempts", "n"),
    "cost": ("cost_usd", "usd", "price", "generation_cost", "dollars", "total_cost"),
    "input_tokens": ("prompt_tokens", "tokens_in"),
    "output_tokens": ("completion_tokens", "tokens_out"),
    "reasoning_tokens": (),
    "total_tokens": ("tokens",),
    "num_turns": ("turns", "n_turns", "steps_taken"),
    "human_minutes": ("human_time_minutes", "minutes"),
    "difficulty": ("task_difficulty",),
    "task_group": ("group", "category", "task_category", "family", "task_family"),
    "tags": ("task_tags",),
    "release_date": ("model_release_date",),
    "difficulty_label": (),
    "step": ("step_id",),
    "error_category": ("error", "error_type", "failure_category", "failure_mode"),
    "judge": ("grader", "judge_id", "rater"),
    "soft_score": ("score_cont", "partial_credit"),
}


def normalise_name(name: str) -> str:
    """Return the comparison form of a column name (lower case, ``_`` separators)."""
    out = str(name).strip().lower()
    for ch in " -./":
        out = out.replace(ch, "_")
    while "__" in out:
        out = out.replace("__", "_")
    return out.strip("_")


def synonym_table() -> dict[str, str]:
    """Map every normalised synonym (and canonical name) to its canonical name."""
    table: dict[str, str] = {}
    for canonical, alternatives in SYNONYMS.items():
        for alt in (canonical, *alternatives):
            table.setdefault(normalise_name(alt), canonical)
    for name in CANONICAL_ORDER:
        table.setdefault(normalise_name(name), name)
    return table
