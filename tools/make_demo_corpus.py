"""Build the bundled demo corpus from the Terminal-Bench 2.0 leaderboard meta.json.

Writes, into ``resources/demo/``:

- ``terminal-bench-2.csv``: the canonical layout
  ``benchmark,task,model,scaffold,trial,successes,trials``, one binomial cell
  per (leaderboard run, task), read through the Terminal-Bench importer (which
  undoes the upstream shifted-fields quirk);
- ``README.md``: attribution, license and what the columns hold;
- ``LICENSE-terminal-bench-2``: a copy of the upstream MIT license.

Usage::

    python tools/make_demo_corpus.py [--source FOLDER] [--out FOLDER]

``--source`` is the folder with ``meta.json`` and ``LICENSE`` (default:
``$DDR_SHARED_CORPORA/terminal-bench-2`` or ``../shared/corpora/terminal-bench-2``
next to the repository).
"""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

COLUMNS = ["benchmark", "task", "model", "scaffold", "trial", "successes", "trials"]

README = """# Demo corpus: Terminal-Bench 2.0 leaderboard

`terminal-bench-2.csv` is the per-task results of the Terminal-Bench 2.0 leaderboard in the
canonical corpus layout: one row per (leaderboard run, task), `successes` out of `trials`
(k-of-n repeated attempts, mostly 5).

| | |
|---|---|
| records (run x task cells) | {records:,} |
| trials | {trials:,} |
| successes | {successes:,} |
| tasks | {tasks} |
| models | {models} |
| scaffolds | {scaffolds} |
| agents (model x scaffold) | {agents} |
| leaderboard runs (`trial`) | {runs} |

Columns: `benchmark` (always `terminal-bench-2.0`), `task`, `model`, `scaffold`,
`trial` (the leaderboard run, `run-NN` from its rank: the same agent can appear in several
runs, e.g. Warp with model "Multiple"), `successes`, `trials`.

## Source and attribution

- Data: Terminal-Bench 2.0 leaderboard results (https://www.tbench.ai/leaderboard/terminal-bench/2.0),
  as collected in the public repository
  [dariakryvosheieva/agent-psychometrics](https://github.com/dariakryvosheieva/agent-psychometrics),
  commit `62851ff8` (2026-04-04), file `data/terminalbench/meta.json`.
- License: MIT, see `LICENSE-terminal-bench-2` (a copy of the upstream license file).
  Keep the license and this attribution with any copy of the data.

## How it was made

`python tools/make_demo_corpus.py` reads `meta.json` through the Terminal-Bench importer
(`ddr_explorer.core.corpus.importers.terminal_bench`). In the upstream file every value sits one
field to the right of its name (the scaffold in `"model"`, the model in `"date"`, ...); the importer
detects this (mapping used: `{mapping}`) and reads the names from the right fields. In runs
{swapped} the model's name and organisation are also swapped; `detail_url` names the model, and
the importer reads it from there. Model and scaffold names are the leaderboard's display names, as
written (for instance the MAYA run's model is "Claude 4.5 Sonnet", kept apart from
"Claude Sonnet 4.5"). No row was dropped or changed otherwise.
"""


def default_source() -> Path:
    env = os.environ.get("DDR_SHARED_CORPORA")
    base = Path(env) if env else REPO.parent / "shared" / "corpora"
    return base / "terminal-bench-2"


def build(source: Path, out: Path) -> dict:
    """Write the demo files into ``out``; return the counts written to the README."""
    from ddr_explorer.core.corpus.importers import terminal_bench

    corpus = terminal_bench.read(source / "meta.json")
    table = corpus.table[COLUMNS].astype({c: "string" for c in COLUMNS[:5]})
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "terminal-bench-2.csv", index=False, lineterminator="\n")
    shutil.copyfile(source / "LICENSE", out / "LICENSE-terminal-bench-2")
    counts = {
        "records": corpus.n_records, "trials": corpus.n_trials, "successes": corpus.n_successes,
        "tasks": corpus.n_levels("task"), "models": corpus.n_levels("model"),
        "scaffolds": corpus.n_levels("scaffold"), "agents": corpus.n_levels("agent"),
        "runs": corpus.n_levels("trial"), "mapping": corpus.provenance["mapping"],
        "swapped": " and ".join(corpus.provenance["model_fields_swapped_in_runs"]) or "(none)",
    }
    (out / "README.md").write_text(README.format(**counts), encoding="utf-8")
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=default_source(), help="folder with meta.json and LICENSE")
    ap.add_argument("--out", type=Path, default=REPO / "resources" / "demo", help="output folder")
    args = ap.parse_args(argv)
    counts = build(args.source, args.out)
    print(f"wrote {args.out / 'terminal-bench-2.csv'}: {counts['records']} records, {counts['trials']} trials")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
