"""Which stopping rule should hold-out refits run under?  Replayed on long fixed runs, not rerun per rule.

Every rule looks at a refit's draws every 50 draws per chain from 100 on and stops at the first look that
passes, so what a rule costs and what it reports can be read off one long run of the same chains: its
first ``n`` draws per chain are what the rule would have had at the look ``n``.  This script samples
``--splits`` hold-out splits of the TB2 demo (DDR paper 2026, sec. 5.4) once at ``--draws`` fixed draws
per chain (warm refits, 4 chains, the split settings otherwise), then, per rule, replays the looks: the
draws per chain it stops at, the leapfrog steps that cost (the warmup's plus the sampling steps of the
draws kept, from each chain's own tree sizes), each split's two Erho2 medians at the stop, and the hold-out
r and mean gap from them against the same from all ``--draws`` (the reference: a refit is a long run's
prefix, so the difference is the stop's Monte Carlo error and any bias a data-dependent stop adds).

Rules replayed (``core/model/stopping.py``):

- ``gate``: :func:`check_reported` (R-hat <= 1.01 on every component and on Erho2, bulk and tail ESS >= 440
  on Erho2);
- ``precision s=...`` (``r_hat="fixed"``): :func:`check_precision` at the share ``s`` of the spread, R-hat
  <= 1.01, the spread tracked over the splits in order as the engine does;
- ``matched s=...`` (``r_hat="matched"``): the same with the R-hat threshold the rule's ESS target implies
  (``stopping.matched_r_hat``, after Vats and Knudson 2021), in place of 1.01.

Usage: ``nice python bench/investigations/bench_refit_rule_replay.py --splits 12 --draws 600
--parent-cache /tmp/tb2parent --cache /tmp/replay-cache`` (the sampled refits stay in ``--cache``: a second
run replays without sampling).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains

ROOT = Path(__file__).resolve().parents[2]


def _sample(n_splits, draws, parent_cache, cache):
    from ddr_explorer.core.analyses.engine import RefitEngine
    from ddr_explorer.core.analyses.heldout import held_out_jobs, split_settings
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.fitting import fit_corpus
    from ddr_explorer.core.model import SamplerSettings

    corpus = load_corpus(ROOT / "resources" / "demo" / "terminal-bench-2.csv")
    spec = "per-benchmark"
    settings = SamplerSettings()
    parent = fit_corpus(corpus, spec, settings, cache_dir=parent_cache)
    fixed = dataclasses.replace(split_settings(settings), stop="fixed", draws=draws, max_draws=None)
    jobs, designs, _ = held_out_jobs(corpus, spec, n_splits=n_splits, refit_rule="gate")
    t = time.perf_counter()
    b = RefitEngine(corpus, spec, settings, cache_dir=cache, parent=parent).run(jobs, fixed, skip_failed=True)
    print(f"sampled {b.n_fitted} refits ({b.n_cached} from the cache) in {time.perf_counter() - t:.0f} s; "
          f"{fixed.chains} chains x {draws} draws")
    return jobs, designs, b.results


def _series(post, job):
    """(chains, draws, K) sigma, names, the job's quantities, divergences per draw, leapfrog steps."""
    names = list(post.sigma)
    sig = np.stack([np.asarray(post.sigma[t], np.float64) for t in names], axis=-1)
    st = post.sample_stats or {}
    steps = np.asarray(st.get("num_steps"), np.float64)
    warm = float(np.sum(st.get("warmup_num_steps", 0)))
    div = np.asarray(st.get("diverging", np.zeros(sig.shape[:2])), bool)
    return sig, names, job.reported, div, steps, warm


def _replay(rule, jobs, results, designs, looks):
    """Per refit: (stop draws, leapfrog steps, median at the stop, its MCSE, passed)."""
    from ddr_explorer.core.analyses.refits import coefficient_draws
    from ddr_explorer.core.model.stopping import (PrecisionRule, SpreadTracker, check_precision, check_reported,
                                                  mcse_quantile)

    spread = SpreadTracker()
    out = []
    for i, (job, res) in enumerate(zip(jobs, results)):
        post = res.posterior
        sig, names, q, div, steps, warm = _series(post, job)
        kind, share, matched = rule
        chk, stop = None, looks[-1]
        for n in looks:
            s, d = sig[:, :n], int(div[:, :n].sum())
            if kind == "gate":
                chk = check_reported(s, d, names, q, post.spec)
            else:
                pr = PrecisionRule(group=job.precision.group if job.precision else "g", share=share,
                                   r_hat="matched" if matched else "fixed")
                chk = check_precision(s, d, names, q, post.spec, pr, tolerance=spread.tolerance(pr))
            if chk.passed:
                stop = n
                break
        x = np.asarray(coefficient_draws(post, designs[i // 2]), np.float64).reshape(sig.shape[:2])[:, :stop]
        if kind != "gate" and chk.passed:
            spread.add(job.precision.group if job.precision else "g", float(np.median(x)))
        lf = warm + float(steps[:, :stop].sum())
        out.append((stop, lf, float(np.median(x)), mcse_quantile(x, 0.5), bool(chk.passed)))
    return out


def _answers(rows):
    from ddr_explorer.core.analyses.precision import heldout_mcse

    x = np.array([r[2] for r in rows[0::2]])
    y = np.array([r[2] for r in rows[1::2]])
    a = np.array([r[3] for r in rows[0::2]])
    b = np.array([r[3] for r in rows[1::2]])
    r = float(np.corrcoef(x, y)[0, 1])
    rm, gm = heldout_mcse(x, y, a, b)
    # r with each split's Monte Carlo variance taken out of the across-split variances (the covariance
    # has none: the two medians of a split come from separate refits)
    vx, vy = np.var(x, ddof=1) - np.mean(a ** 2), np.var(y, ddof=1) - np.mean(b ** 2)
    rc = float(np.cov(x, y)[0, 1] / np.sqrt(vx * vy)) if vx > 0 and vy > 0 else float("nan")
    return r, rm, float(np.mean(y - x)), gm, float(np.std(x, ddof=1)), float(np.std(y, ddof=1)), rc


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=12)
    ap.add_argument("--draws", type=int, default=600)
    ap.add_argument("--parent-cache", type=Path, default=Path("/tmp/tb2parent"))
    ap.add_argument("--cache", type=Path, default=Path("/tmp/replay-cache"))
    ap.add_argument("--shares", default="0.1,0.25,0.35")
    a = ap.parse_args(argv)
    jobs, designs, results = _sample(a.splits, a.draws, a.parent_cache, a.cache)
    keep = [i for i in range(a.splits) if results[2 * i] is not None and results[2 * i + 1] is not None]
    jobs = [j for i in keep for j in jobs[2 * i: 2 * i + 2]]
    results = [r for i in keep for r in results[2 * i: 2 * i + 2]]
    designs = [designs[i] for i in keep]
    looks = list(range(100, a.draws + 1, 50))
    ref = _replay(("gate", None, False), jobs, results, designs, [a.draws])
    ref = [(a.draws, *r[1:]) for r in ref]
    rules = [("gate", None, False)]
    for s in (float(v) for v in a.shares.split(",")):
        rules += [("precision", s, False), ("matched", s, True)]
    print(f"{len(keep)} splits, looks {looks[0]}..{looks[-1]} every 50; reference = all {a.draws} draws per chain")
    print(f"{'rule':<18}{'draws/chain':>20}{'leapfrog/refit':>16}{'passed':>8}  r (MCSE)          gap (MCSE)"
          f"        sd proj / held   |dmedian|/MCSE   r less MC noise")
    for rule in [None] + rules:
        rows = ref if rule is None else _replay(rule, jobs, results, designs, looks)
        d = np.array([r[0] for r in rows])
        lf = np.array([r[1] for r in rows])
        ok = sum(r[4] for r in rows)
        r, rm, g, gm, sx, sy, rc = _answers(rows)
        z = np.array([abs(rows[k][2] - ref[k][2]) / max(rows[k][3], 1e-12) for k in range(len(rows))])
        name = "reference" if rule is None else (rule[0] if rule[1] is None else f"{rule[0]} s={rule[1]:g}")
        print(f"{name:<18}{d.mean():8.0f} ({d.min()}-{d.max()}){lf.mean():16.0f}{ok:>5}/{len(rows):<3}"
              f"{r:+.3f} ({rm:.3f})   {g:+.4f} ({gm:.4f})   {sx:.4f} / {sy:.4f}   {np.mean(z):.2f}   {rc:+.3f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
