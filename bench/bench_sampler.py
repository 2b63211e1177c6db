"""Benchmark the NUTS sampler of ddr_explorer.core.model against plain numpyro NUTS.

For each corpus it prints the wall time, the minimum bulk ESS over the variance components,
min bulk ESS per second, max R-hat, divergences and the posterior means of sigma, for

- ours: :func:`ddr_explorer.core.model.fit` with its default settings, and
- the reference: plain numpyro NUTS, every term non-centred, diagonal mass matrix,
  4 chains x (500 warmup + 500 draws), default init and tree depth (PERF-NOTES),

and the ratio of the two ESS/s measured in the same run.

Corpora: ``tb2`` is Terminal-Bench 2.0 (../shared/corpora/terminal-bench-2/meta.json; model
name in the field "date", scaffold in "model", the fields being shifted upstream) under the
per-benchmark model (seed 000 Eq. 2); ``pooled`` is the simulated HAL-scale leaderboard of
bench/simulate.py under the pooled model (Eq. 6).  The pooled reference takes well over an
hour (PERF-NOTES: unfinished after 50 minutes), so it runs in a child process under
``--reference-timeout``; when it times out, the ratio printed is a lower bound computed as if
the reference had reached ESS = its number of draws exactly at the timeout.

``small-pooled`` is the small pooled simulation of bench/bench_recovery.py (4 benchmarks, 16 models,
about 1,900 single-trial cells, HAL truth), seed 1000.

``--modes fixed,gate`` fits ours once per run-length rule, each in a fresh child process with an
empty compilation cache (``--warm-cache``: a cache the first fit of that mode filled), so the
wall includes the first compile as a user meets it; ``fixed`` is 4 x (300 + 700), the default
before the gate rule; ``gate`` stops by the gate (``SamplerSettings(stop="gate")``, the default since
the gate).  The reference runs in the same invocation, so on a shared box
the ratios (wall and ESS/s against the reference) are the figures to compare.

Usage::

    python bench/bench_sampler.py                      # both corpora, with references
    python bench/bench_sampler.py --corpus tb2 --no-reference
    python bench/bench_sampler.py --corpus tb2 --modes fixed,gate
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ddr_explorer.core.model as M  # noqa: E402  (sets XLA_FLAGS before jax loads)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

TB2_META = HERE.parent.parent / "shared" / "corpora" / "terminal-bench-2" / "meta.json"
TB2_EXPECTED = {"task": 3.0, "model": 1.74, "scaffold": 0.37, "task:model": 1.39, "task:scaffold": 1.11,
                "model:scaffold": 0.46}


def load_tb2(path: Path = TB2_META) -> pd.DataFrame:
    """Terminal-Bench 2.0 runs as (benchmark, task, model, scaffold, successes, trials) records.

    Upstream quirk: every value sits one field to the right of its name, so the model is in
    "date" and the scaffold in "model" (shared/corpora/README.md).
    """
    env = os.environ.get("DDR_SHARED_CORPORA")
    if env:
        path = Path(env) / "terminal-bench-2" / "meta.json"
    d = json.loads(Path(path).read_text())
    rows = []
    for r in d["results"]:
        model, scaffold = r["date"], r["model"]
        for task, kn in r["task_results"].items():
            k, n = (int(v) for v in str(kn).split("/"))
            if n > 0:
                rows.append(("terminal-bench-2.0", task, model, scaffold, k, n))
    return pd.DataFrame(rows, columns=["benchmark", "task", "model", "scaffold", "successes", "trials"])


def load_corpus(name: str, seed: int = 0):
    if name == "tb2":
        return load_tb2(), "per-benchmark", dict(TB2_EXPECTED)
    if name == "small-pooled":
        from bench_recovery import simulate

        sim = simulate("pooled", 1000 + seed)
        return sim.table, "pooled", dict(sim.sigmas)
    from simulate import simulate_pooled

    sim = simulate_pooled(seed=seed)
    return sim.table, "pooled", dict(sim.sigmas)


# -- the reference ---------------------------------------------------------------------------
def reference_fit(table: pd.DataFrame, spec_name: str, chains: int = 4, warmup: int = 500, draws: int = 500,
                  seed: int = 0) -> dict:
    """Plain numpyro NUTS: all terms non-centred, diagonal mass, default init and tree depth."""
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    from ddr_explorer.core.model.diagnostics import chain_diagnostics

    spec = M.as_spec(spec_name)
    design = M.build_design(table, spec)
    codes = jnp.asarray(design.codes)
    y = jnp.asarray(design.successes, jnp.float32)
    n = jnp.asarray(design.trials, jnp.float32)
    names = design.term_names
    J = [int(j) for j in design.n_levels]

    def model():
        mu = numpyro.sample("mu", dist.StudentT(3.0, 0.0, 2.5))
        eta = mu
        for k, name in enumerate(names):
            # half-Student-t(3, 0, 2.5), SPEC section 2
            s = numpyro.sample(f"sigma_{k}", dist.TruncatedDistribution(dist.StudentT(3.0, 0.0, 2.5), low=0.0))
            z = numpyro.sample(f"z_{k}", dist.Normal(0.0, 1.0).expand([J[k]]).to_event(1))
            eta = eta + s * z[codes[k]]
        numpyro.sample("y", dist.Binomial(n, logits=eta), obs=y)

    t0 = time.perf_counter()
    cpu0 = time.process_time()  # all threads: on a loaded box the CPU seconds compare better than walls
    mcmc = MCMC(NUTS(model), num_warmup=warmup, num_samples=draws, num_chains=chains,
                chain_method="parallel" if len(jax.devices()) >= chains else "sequential", progress_bar=False)
    mcmc.run(jax.random.PRNGKey(seed), extra_fields=("diverging", "num_steps"))
    # MCMC.run returns once the chains are dispatched: JAX computes asynchronously, so the clock
    # stops only when the draws exist (without this the reference looked 7x faster than it is)
    smp = jax.block_until_ready(mcmc.get_samples(group_by_chain=True))
    extra = jax.block_until_ready(mcmc.get_extra_fields())
    wall = time.perf_counter() - t0
    out = {"wall": wall, "cpu": time.process_time() - cpu0, "sigma": {}, "r_hat": {}, "ess": {}}
    for k, name in enumerate(names):
        d = np.asarray(smp[f"sigma_{k}"], np.float64)
        r, eb, _ = chain_diagnostics(d)
        out["sigma"][name] = float(d.mean())
        out["r_hat"][name] = r
        out["ess"][name] = eb
    out["divergences"] = int(np.sum(np.asarray(extra["diverging"])))
    out["steps_per_draw"] = float(np.mean(np.asarray(extra["num_steps"])))
    out["draws"] = chains * draws
    return out


def _reference_child(q, table, spec_name, seed):
    try:
        q.put(reference_fit(table, spec_name, seed=seed))
    except Exception as e:  # pragma: no cover - reported to the parent
        q.put({"error": repr(e)})


def run_reference(table, spec_name, seed, timeout):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_reference_child, args=(q, table, spec_name, seed))
    t0 = time.perf_counter()
    p.start()
    p.join(timeout)
    if p.is_alive():
        p.terminate()
        p.join()
        return {"timeout": timeout, "wall": time.perf_counter() - t0, "draws": 2000}
    return q.get() if not q.empty() else {"error": "no result"}


def _ours_child(q, table, spec_name, settings, cache_dir):
    try:
        if cache_dir is not None:
            os.environ["DDR_JAX_CACHE_DIR"] = cache_dir
        levers = os.environ.get("DDR_BENCH_LEVERS")
        if levers is not None:  # investigations/bench_gradient.py --fits: with or without the opt-in gradient levers
            from ddr_explorer.core.model import parameterisation as P

            tokens = set(filter(None, levers.split("+")))
            # "incremental": the scale moves' closed-form potential (P.SCALE_LEVERS); the rest: the gradient's
            P.SCALE_LEVERS = tokens & {"incremental"}
            P.LEVERS = tokens - {"incremental"}
        t0 = time.perf_counter()
        cpu0 = time.process_time()
        post = M.fit(table, spec_name, settings)
        out = summarize_ours(post)
        out["cpu"] = time.process_time() - cpu0
        out["process_wall"] = time.perf_counter() - t0
        out["draws_per_chain"] = int(post.mu.shape[1])
        out["warmup"] = int(post.settings.warmup)
        out["notes"] = [str(n) for n in post.notes if "run length" in str(n) or "warmup" in str(n)]
        out["min_ess_tail"] = float(post.diagnostics.components["ess_tail"].min())
        # each sigma's Monte Carlo standard error (sd / sqrt(bulk ESS)), so that two builds' fits can be
        # compared within Monte Carlo error (investigations/bench_gradient.py --fits)
        comp = post.diagnostics.components
        out["sigma_mcse"] = {k: float(np.std(v) / np.sqrt(comp.loc[k, "ess_bulk"]))
                             for k, v in post.sigma.items() if k in comp.index}
        # leapfrog steps of every chain, so that CPU can be compared per step (investigations/bench_gradient.py --fits)
        out["steps"] = {k: int(np.sum(post.sample_stats[k])) for k in ("warmup_num_steps", "num_steps")
                        if k in post.sample_stats}
        q.put(out)
    except Exception as e:  # pragma: no cover - reported to the parent
        import traceback

        q.put({"error": repr(e), "trace": traceback.format_exc()})


def run_ours_cold(table, spec_name, settings, cache_dir):
    """Our fit in a fresh process (JAX and its caches cold) with the compilation cache at ``cache_dir``."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_ours_child, args=(q, table, spec_name, settings, cache_dir))
    p.start()
    res = q.get()
    p.join()
    return res


#: The run-length rules compared (``fixed``: the defaults before the gate, 4 x (300 + 700); ``gate``: the default since).
MODES = {"fixed": {"stop": "fixed"}, "gate": {"stop": "gate"}}


# -- reporting ---------------------------------------------------------------------------------
def summarize_ours(post) -> dict:
    dg = post.diagnostics
    comp = dg.components
    return {"wall": post.wall_seconds, "min_ess": float(comp["ess_bulk"].min()),
            "min_ess_term": str(comp["ess_bulk"].idxmin()), "max_r_hat": float(comp["r_hat"].max()),
            "divergences": dg.divergences, "converged": dg.converged,
            "sigma": {k: float(v.mean()) for k, v in post.sigma.items()},
            "timings": {k: round(v, 1) for k, v in post.timings.items()},
            "steps_per_draw": float(np.mean(post.sample_stats["num_steps"])), "device": post.device}


def print_row(label, wall, min_ess, max_rhat, div, ratio=None):
    eps = min_ess / wall if wall and min_ess == min_ess else float("nan")
    rs = "" if ratio is None else f"{ratio:8.1f}x"
    print(f"  {label:34s} {wall:8.1f} s  min ESS {min_ess:7.0f}  ESS/s {eps:7.2f}  max R-hat {max_rhat:6.3f}  "
          f"div {div:4d} {rs}")


def bench(corpus: str, reference: bool, settings: M.SamplerSettings, seed: int, ref_timeout: float) -> dict:
    table, spec_name, expected = load_corpus(corpus, seed)
    design = M.build_design(table, spec_name)
    print(f"== {corpus}: {spec_name} model, {design.n_cells} binomial cells, {design.n_trials} trials, "
          f"{int(design.n_levels.sum())} random effects")
    cpu0 = time.process_time()
    post = M.fit(table, spec_name, settings)
    ours = summarize_ours(post)
    # CPU seconds of all threads: on a shared (loaded) box wall time overstates the cost, this does not
    ours["cpu"] = time.process_time() - cpu0
    print(f"  ours: {ours['device']}, timings {ours['timings']}, {ours['steps_per_draw']:.0f} leapfrog steps/draw, "
          f"CPU {ours['cpu']:.0f} s (all threads)")
    print(f"  converged: {ours['converged']}" + ("" if ours["converged"] else " (" +
                                                 "; ".join(post.diagnostics.problems) + ")"))
    print(post.diagnostics.table.to_string(float_format=lambda v: f"{v:.3f}"))
    res = {"corpus": corpus, "ours": ours, "expected_sigma": expected}
    ref = None
    if reference:
        print("  running the reference (plain numpyro NUTS, non-centred, diagonal mass, 4 x (500 + 500)) ...",
              flush=True)
        ref = run_reference(table, spec_name, seed, ref_timeout)
        res["reference"] = ref
    print(f"  {'sampler':34s} {'wall':>10s}")
    ratio = None
    if ref and "ess" in ref:
        ref_min = min(ref["ess"].values())
        ratio = (ours["min_ess"] / ours["wall"]) / (ref_min / ref["wall"])
        print_row("reference (plain numpyro NUTS)", ref["wall"], ref_min, max(ref["r_hat"].values()),
                  ref["divergences"])
    elif ref and "timeout" in ref:
        bound = ref["draws"] / ref["timeout"]
        ratio = (ours["min_ess"] / ours["wall"]) / bound
        print(f"  reference did not finish in {ref['timeout']:.0f} s (ESS/s <= {bound:.2f}); ratio below is a "
              f"lower bound")
    elif ref:
        print(f"  reference failed: {ref.get('error')}")
    print_row("ours (ddr_explorer.core.model.fit)", ours["wall"], ours["min_ess"], ours["max_r_hat"],
              ours["divergences"], ratio)
    res["ratio"] = ratio
    print("  posterior mean of sigma (ours | reference | expected):")
    for name, v in ours["sigma"].items():
        r = ref["sigma"].get(name, float("nan")) if ref and "sigma" in ref else float("nan")
        print(f"    {name:26s} {v:6.3f} | {r:6.3f} | {expected.get(name, float('nan')):6.2f}")
    return res


def bench_modes(corpus: str, modes: list[str], reference: bool, base: dict, seed: int, ref_timeout: float,
                warm_cache: bool) -> dict:
    """Ours under each run-length rule (fresh processes, cold or warm compilation cache) and the
    reference, in one run: walls, ESS and the ratios against the reference."""
    import tempfile

    table, spec_name, expected = load_corpus(corpus, seed)
    design = M.build_design(table, spec_name)
    print(f"== {corpus}: {spec_name} model, {design.n_cells} binomial cells, {design.n_trials} trials, "
          f"{int(design.n_levels.sum())} random effects; load average {os.getloadavg()[0]:.1f}", flush=True)
    res = {"corpus": corpus, "modes": {}, "expected_sigma": expected}
    for mode in modes:
        kw = {**base, **MODES[mode.split(":")[0]]}
        for extra in mode.split(":")[1:]:  # e.g. gate:warmup=150
            k, v = extra.split("=")
            kw[k] = float(v) if "." in v else int(v)
        settings = M.SamplerSettings(seed=seed, **kw)
        with tempfile.TemporaryDirectory(prefix="ddr-bench-jax-") as cache:
            if warm_cache:
                run_ours_cold(table, spec_name, settings, cache)  # fills the disk cache
            r = run_ours_cold(table, spec_name, settings, cache)
        if "error" in r:
            print(f"  {mode}: failed: {r['error']}\n{r.get('trace', '')}")
            continue
        r["load_after"] = os.getloadavg()[0]
        res["modes"][mode] = r
        print(f"  {mode:14s} wall {r['wall']:6.1f} s (process {r['process_wall']:.1f} s), CPU {r['cpu']:.0f} s, "
              f"{r['draws_per_chain']} draws/chain, min bulk ESS {r['min_ess']:.0f} ({r['min_ess_term']}), "
              f"min tail ESS {r['min_ess_tail']:.0f}, max R-hat {r['max_r_hat']:.3f}, div {r['divergences']}, "
              f"converged {r['converged']}; timings {r['timings']}; load {r['load_after']:.1f}", flush=True)
        for n in r["notes"]:
            print(f"      {n}")
    ref = None
    if reference:
        print("  reference (plain numpyro NUTS, non-centred, diagonal mass, 4 x (500 + 500)) ...", flush=True)
        ref = run_reference(table, spec_name, seed, ref_timeout)
        res["reference"] = ref
    print(f"  {'sampler':34s} {'wall':>10s}")
    ref_eps = None
    if ref and "ess" in ref:
        ref_min = min(ref["ess"].values())
        ref_eps = ref_min / ref["wall"]
        print_row("reference (plain numpyro NUTS)", ref["wall"], ref_min, max(ref["r_hat"].values()),
                  ref["divergences"])
        print(f"    reference CPU {ref.get('cpu', float('nan')):.0f} s")
    for mode, r in res["modes"].items():
        ratio = (r["min_ess"] / r["wall"]) / ref_eps if ref_eps else None
        print_row(f"ours, {mode}", r["wall"], r["min_ess"], r["max_r_hat"], r["divergences"], ratio)
        if ref and "wall" in ref:
            r["wall_ratio_vs_reference"] = ref["wall"] / r["wall"]
            r["ess_per_s_ratio_vs_reference"] = ratio
            print(f"    reference wall / ours: {ref['wall'] / r['wall']:.2f}x; CPU {r['cpu']:.0f} s, reference CPU / "
                  f"ours: {ref.get('cpu', float('nan')) / r['cpu']:.2f}x")
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Benchmark the NUTS sampler against plain numpyro NUTS.")
    ap.add_argument("--corpus", choices=["tb2", "pooled", "small-pooled", "all"], default="all")
    ap.add_argument("--modes", help="comma-separated run-length rules to compare in fresh processes: fixed, gate "
                    "(e.g. fixed,gate; a mode may add settings: gate:warmup=150)")
    ap.add_argument("--warm-cache", action="store_true", help="with --modes: time the second fit of each mode, "
                    "from the compilation cache the first one filled")
    ap.add_argument("--no-reference", action="store_true", help="skip the slow plain-NUTS reference")
    ap.add_argument("--reference-timeout", type=float, default=3600.0,
                    help="seconds before the reference run is abandoned (default 3600)")
    ap.add_argument("--draws", type=int)
    ap.add_argument("--warmup", type=int)
    ap.add_argument("--chains", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args(argv)
    corpora = ["tb2", "pooled"] if a.corpus == "all" else [a.corpus]
    out = []
    if a.modes:
        base = {k: v for k, v in (("draws", a.draws), ("warmup", a.warmup), ("chains", a.chains)) if v}
        for c in corpora:
            out.append(bench_modes(c, a.modes.split(","), not a.no_reference, base, a.seed, a.reference_timeout,
                                   a.warm_cache))
        if a.json:
            Path(a.json).write_text(json.dumps(out, indent=1, default=float))
        return 0
    for c in corpora:
        kw = {k: v for k, v in (("draws", a.draws), ("warmup", a.warmup), ("chains", a.chains)) if v}
        settings = M.SamplerSettings(seed=a.seed, **kw)
        out.append(bench(c, not a.no_reference, settings, a.seed, a.reference_timeout))
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
