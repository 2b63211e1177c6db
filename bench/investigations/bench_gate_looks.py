"""Benchmark: where the gate's looks fall on Terminal-Bench 2.0, and what a look costs.

One fit of the TB2 demo (per-benchmark preset, seed 0) at a fixed length (``--draws`` per chain after
the default warmup); with the same seed a gate-stopped run's draws are the first draws of this run
(chunking does not change the draws), so the gate's verdict at any look n is :func:`check_gate` on
the first n draws per chain.  Printed for n = ``--from`` to ``--draws`` every ``--every``: max R-hat,
min bulk and tail ESS, and whether the look passes (the rule is unchanged: R-hat <= 1.01, bulk and
tail ESS >= 1.1 x 400, no divergence, at least the minimum draws).  Then the cost of one look (CPU
ms of ``check_gate`` on the draws so far, median of repeats) against the CPU cost of a 25-draw chunk
of this fit, on the same box in the same run.

Run:  python bench/investigations/bench_gate_looks.py [--draws 300] [--from 200] [--every 10] [--adaptive-warmup on|off]
"""

from __future__ import annotations

import sys as _sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

#: bench/ (simulate, _child, _reference, bench_sampler, bench_recovery) and this folder, importable by name.
_BENCH = _Path(__file__).resolve().parents[1]
_sys.path[:0] = [p for p in (str(_BENCH), str(_BENCH / "investigations")) if p not in _sys.path]

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ddr_explorer.core.model as M  # noqa: E402  (XLA_FLAGS before jax)
import numpy as np  # noqa: E402
from ddr_explorer.core.model.stopping import check_gate  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=300)
    ap.add_argument("--from", dest="start", type=int, default=200)
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--adaptive-warmup", choices=["on", "off"], default="on" if M.SamplerSettings().adaptive_warmup
                    else "off", help="SamplerSettings.adaptive_warmup (default the app's)")
    a = ap.parse_args(argv)
    from bench_sampler import load_tb2

    stamps = {}

    def progress(name, done, total, eta):
        stamps.setdefault(name, time.process_time())

    post = M.fit(load_tb2(), "per-benchmark", M.SamplerSettings(stop="fixed", draws=a.draws, seed=0,
                                                                          adaptive_warmup=a.adaptive_warmup == "on"),
                 progress=progress)
    names = list(post.sigma)
    sig = np.stack([post.sigma[n] for n in names], axis=-1)  # (chains, draws, terms)
    div = post.sample_stats["diverging"]
    cpu_sampling = stamps["diagnostics"] - stamps["sampling"]
    warm = int(post.sample_stats["warmup_num_steps"].shape[1])
    print(f"TB2, 4 chains x ({warm} warmup + {a.draws}), seed 0, adaptive warmup {a.adaptive_warmup}; terms {names}; sampling {cpu_sampling:.1f} CPU s, "
          f"{1e3 * cpu_sampling / a.draws * 25:.0f} CPU ms per 25-draw chunk (4 chains)")
    for n in range(a.start, a.draws + 1, a.every):
        chk = check_gate(sig[:, :n], int(np.sum(div[:, :n])), names)
        print(f"  look at {n:4d}: {'passes' if chk.passed else 'fails '}  max R-hat {chk.max_r_hat:.4f}, min bulk ESS "
              f"{chk.min_ess_bulk:4.0f}, min tail ESS {chk.min_ess_tail:4.0f}; {'; '.join(chk.reasons) or '-'}")
    for n in (200, 250, a.draws):
        x = sig[:, :n]
        check_gate(x, 0, names)
        c0 = time.process_time()
        for _ in range(20):
            check_gate(x, 0, names)
        print(f"  one look at {n} draws per chain: {1e3 * (time.process_time() - c0) / 20:.1f} CPU ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
