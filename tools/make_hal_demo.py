"""Write resources/demo/hal-taubench-airline.csv: the tau-bench Airline rows of the HAL response matrix, as they are.

The second bundled demo corpus: one benchmark of Hardy et al. (2026)'s own data (seed 000), small enough that
the per-benchmark fit (Eq. 2) takes seconds.  The rows are copied byte for byte in the file's order (header
included), so the file opens through the ``hal`` importer like the full matrix; attribution and licence in
resources/demo/README-hal-taubench-airline.md and LICENSE-hal.

Usage: ``python tools/make_hal_demo.py [--data ../shared/corpora/hal/hal_response_matrix.csv]``
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "resources" / "demo" / "hal-taubench-airline.csv"
BENCHMARK = "taubench_airline"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "corpora" / "hal" / "hal_response_matrix.csv")
    args = ap.parse_args()
    raw = args.data.read_bytes()
    lines = raw.decode("utf-8").splitlines(keepends=True)
    header = lines[0].rstrip("\r\n").split(",")
    col = header.index("benchmark")
    kept = [line for line in lines[1:] if line.split(",")[col] == BENCHMARK]
    OUT.write_text(lines[0] + "".join(kept), encoding="utf-8", newline="")
    print(f"wrote {OUT}: {len(kept)} rows of {len(lines) - 1}; source sha256 {hashlib.sha256(raw).hexdigest()}")


if __name__ == "__main__":
    main()
