"""Feed the product every hostile input of ``tests/hostile/hostile_cases.py`` and print the table.

    python bench/hostile_inputs.py [--only SUBSTRING] [--list-failures]

Cases run in this process (``ddr``'s ``main()``, the session loader, the cache reader) under a
10 s limit each; cases marked ``isolate`` (FIFOs, /dev/zero, decompression bombs) run in a child
process whose peak memory is measured (``os.wait4``) and whose data segment is capped at 3 GiB,
so that a memory blow-up on this shared machine ends as a failed case, not a swapping box.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

def _use_source(folder: str) -> None:
    """Import ``ddr_explorer`` from ``folder`` (a package folder of another checkout) instead of this one.

    For the numbers before a change: ``git archive <commit> core gui resources ddr_explorer`` unpacked,
    with ``ddr_explorer/{core,gui,resources}`` linked to the unpacked folders.
    """
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, folder)


SOURCE = os.environ.get("DDR_HOSTILE_SOURCE")
if SOURCE:
    _use_source(SOURCE)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "hostile"))
import hostile_cases as hc  # noqa: E402

MEMORY_CAP = 3 << 30
#: Bytes a decompression-bomb case inflates to (DDR_HOSTILE_BOMB_MB; 1,536 MiB by default, above the
#: 1,024 MiB cap of one Inspect log member, and a few MB on disk).
BOMB = int(os.environ.get("DDR_HOSTILE_BOMB_MB", "1536")) << 20


def _child(name: str, folder: str) -> None:
    resource.setrlimit(resource.RLIMIT_DATA, (MEMORY_CAP, MEMORY_CAP))
    case = next(c for c in hc.all_cases(BOMB) if c.name == name)
    try:
        res = hc.run_case(case, Path(folder))
    except MemoryError:
        res = hc.Outcome("memory", 0, "MemoryError past the 3 GiB cap")
    print(json.dumps({"status": res.status, "seconds": res.seconds, "message": res.message}))


def _isolated(case: hc.Case, folder: Path) -> tuple[hc.Outcome, float]:
    cmd = [sys.executable, __file__, "--child", case.name, "--folder", str(folder)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = t0 + hc.TIME_LIMIT + 30  # import time of the child on a busy box
    rusage = None
    while True:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            _, status, rusage = os.wait4(proc.pid, 0)
            return hc.Outcome("hang", time.perf_counter() - t0, "killed past the limit"), rusage.ru_maxrss / 1024
        time.sleep(0.05)
    out = proc.stdout.read().decode(errors="replace").strip().splitlines()
    err = proc.stderr.read().decode(errors="replace")
    peak = rusage.ru_maxrss / 1024
    try:
        d = json.loads(out[-1])
        res = hc.Outcome(d["status"], d["seconds"], d["message"])
    except (IndexError, ValueError):
        res = hc.Outcome("traceback", time.perf_counter() - t0, f"child died: {err[-300:]}")
    return res, peak


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--list-failures", action="store_true")
    ap.add_argument("--child")
    ap.add_argument("--folder")
    args = ap.parse_args()
    if args.child:
        _child(args.child, args.folder)
        return 0
    cases = [c for c in hc.all_cases(BOMB) if not args.only or args.only in c.name]
    counts: Counter = Counter()
    by_kind: dict[str, Counter] = {}
    worst = (0.0, "")
    failures = []
    slowest = (0.0, "")
    peaks = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(cases):
            folder = Path(tmp) / f"c{i}"
            if case.isolate:
                res, peak = _isolated(case, folder)
                peaks.append(f"{case.name} {peak:,.0f} MB ({res.status})")
                if peak > worst[0]:
                    worst = (peak, case.name)
            else:
                res = hc.run_case(case, folder)
            counts[res.status] += 1
            by_kind.setdefault(case.kind, Counter())[res.status] += 1
            if res.seconds > slowest[0]:
                slowest = (res.seconds, case.name)
            if res.status != "clean":
                failures.append((case.name, res.status, res.message.replace("\n", " ")[:220]))
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{'cases tried':<34}{len(cases):>6}")
    print(f"{'clean refusals (exit 2, file, line, fix)':<34}{counts['clean']:>6}")
    print(f"{'refused without file/line/fix':<34}{counts['unclear']:>6}")
    print(f"{'tracebacks':<34}{counts['traceback'] + counts['memory']:>6}")
    print(f"{'silent wrong results (accepted)':<34}{counts['silent']:>6}")
    print(f"{'hangs':<34}{counts['hang']:>6}")
    print(f"{'peak memory, worst isolated case':<34}{worst[0]:>6.0f} MB ({worst[1]})")
    print(f"{'peak memory, this process':<34}{own:>6.0f} MB")
    print(f"{'slowest case':<34}{slowest[0]:>6.1f} s ({slowest[1]})")
    print("by kind: " + "; ".join(f"{k}: {dict(v)}" for k, v in by_kind.items()))
    print(f"code: {SOURCE or 'this checkout'}; decompression bombs of {BOMB >> 20:,} MiB")
    print("isolated cases, peak resident memory: " + "; ".join(peaks))
    if args.list_failures:
        for f in failures:
            print("  ", *f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
