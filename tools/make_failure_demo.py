"""Write resources/demo/failure-modes-SIMULATED.csv: SIMULATED failure-mode data with known parameters.

Run: ``python tools/make_failure_demo.py``.  The generator and its parameters are
``ddr_explorer.core.analyses.failure_sim`` (``DEMO``, seed 2026); the file is not a measurement of
any agent.  The script also prints the generating values the analysis should recover.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from ddr_explorer.core.analyses.failure_sim import (DEMO, simulate_failure_table, true_activation_rates,
                                                    true_interaction_variance)
from ddr_explorer.core.files import write_text_atomic

SEED = 2026
OUT = Path(__file__).resolve().parents[1] / "resources" / "demo" / "failure-modes-SIMULATED.csv"


def main() -> None:
    table = simulate_failure_table(DEMO, seed=SEED)
    write_text_atomic(OUT, table.to_csv(index=False, lineterminator="\n"))
    print(f"wrote {len(table):,} rows to {OUT}")
    prov = {"SIMULATED": True, "what": "simulated failure-mode checks; not measurements of any agent",
            "generator": "ddr_explorer.core.analyses.failure_sim.simulate_failure_table", "seed": SEED,
            "parameters": dataclasses.asdict(DEMO),
            "true_interaction_variance": dict(zip(DEMO.categories, map(float, true_interaction_variance(DEMO)))),
            "true_activation_rate": dict(zip(DEMO.categories, map(float, true_activation_rates(DEMO)))),
            "true_rank_correlation": -1.0, "made_by": "tools/make_failure_demo.py"}
    write_text_atomic(OUT.with_suffix(".provenance.json"), json.dumps(prov, indent=2) + "\n")
    for c, v, a in zip(DEMO.categories, true_interaction_variance(DEMO), true_activation_rates(DEMO)):
        print(f"  {c:<28} true sigma^2_a:t {v:.3f}   population activation rate {a:.3f}")


if __name__ == "__main__":
    main()
