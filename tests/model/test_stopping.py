"""Run length by the convergence gate (``SamplerSettings.stop = "gate"``, core/model/stopping.py).

The statistics of the stopping rule against ArviZ's; the rule on arrays with known answers; the
settings (defaults, clear errors, the cache key, the sheet's footer); and two small fits: an easy
data set on which the gate stops the run before its ceiling, and a tiny one that cannot reach
ESS 440 within its ceiling and runs on to it.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import ddr_explorer.core.model as M  # before jax: parallel CPU chains
from ddr_explorer.core.model import SamplerSettings, fit
from ddr_explorer.core.model import stopping as S

ROOT = Path(__file__).resolve().parents[2]


def _ar1(rng, chains, n, rho):
    e = rng.normal(size=(chains, n))
    x = np.zeros_like(e)
    for t in range(n):
        x[:, t] = (rho * x[:, t - 1] if t else 0.0) + e[:, t]
    return x


# -- the statistics ------------------------------------------------------------------------
@pytest.mark.parametrize("case", range(12))
def test_the_rule_computes_arviz_rhat_and_ess(case):
    """The vectorised R-hat, bulk and tail ESS equal ArviZ's (the final verdict uses ArviZ)."""
    import arviz as az

    rng = np.random.default_rng(100 + case)
    chains = [1, 2, 4][case % 3]
    n = [7, 50, 333, 1000][case % 4]
    x = _ar1(rng, chains, n, [-0.3, 0.0, 0.6, 0.97][case % 4]) + rng.normal(size=(chains, 1))
    if case % 5 == 0:
        x = np.round(x)  # ties: average ranks
    np.testing.assert_allclose(S.ess_bulk(x), float(az.ess(x, method="bulk")), rtol=1e-9)
    np.testing.assert_allclose(S.ess_tail(x), float(az.ess(x, method="tail")), rtol=1e-9)
    if chains > 1:
        np.testing.assert_allclose(S.rhat_rank(x), float(az.rhat(x, method="rank")), rtol=1e-9)


def test_the_gate_passes_independent_draws_and_names_what_fails():
    rng = np.random.default_rng(0)
    good = rng.normal(size=(4, 500, 2))  # 2,000 independent draws: ESS about 2,000
    chk = S.check_gate(good, 0, ["task", "model"])
    assert chk.passed and chk.reasons == [] and chk.min_ess_bulk > 1500 and chk.max_r_hat < 1.01
    # one chain stuck elsewhere: R-hat fails for that component only
    bad = good.copy()
    bad[0, :, 1] += 3.0
    chk = S.check_gate(bad, 0, ["task", "model"])
    assert not chk.passed and any(r.startswith("R-hat of sigma[model]") for r in chk.reasons)
    assert not any("sigma[task]" in r for r in chk.reasons)
    # strongly autocorrelated draws: ESS far below 440
    slow = np.stack([_ar1(rng, 4, 500, 0.99)], axis=-1)
    chk = S.check_gate(slow, 0, ["task"])
    assert not chk.passed and chk.min_ess_bulk < 440 and any("bulk ESS of sigma[task]" in r for r in chk.reasons)
    # a divergence fails the gate however good the draws
    chk = S.check_gate(good, 2)
    assert not chk.passed and chk.reasons == ["2 divergent transition(s)"]


def test_the_margin_asks_for_440_bulk_and_tail_ess():
    import inspect

    assert S.STOP_ESS_MARGIN * 400 == pytest.approx(440)
    assert inspect.signature(S.check_gate).parameters["min_ess"].default == pytest.approx(440)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 200, 1))
    chk = S.check_gate(x, 0)
    lo = min(chk.min_ess_bulk, chk.min_ess_tail)
    # both the bulk and the tail ESS must reach the threshold
    assert S.check_gate(x, 0, min_ess=lo - 1).passed
    assert not S.check_gate(x, 0, min_ess=lo + 1).passed
    which = "bulk" if chk.min_ess_bulk < chk.min_ess_tail else "tail"
    assert S.check_gate(x, 0, min_ess=lo + 1).reasons[0].startswith(f"{which} ESS")


def test_projected_draws_scale_with_the_ess_shortfall():
    chk = S.GateCheck(passed=False, draws=200, max_r_hat=1.0, min_ess_bulk=220.0, min_ess_tail=300.0, divergences=0)
    # 200 draws gave ESS 220: 440 needs 400 draws
    assert S.projected_draws(chk, check_every=50, max_draws=4000) == 400
    assert S.projected_draws(chk, check_every=50, max_draws=300) == 300  # never past the ceiling
    ok = S.GateCheck(passed=False, draws=200, max_r_hat=1.02, min_ess_bulk=900.0, min_ess_tail=900.0, divergences=0)
    assert S.projected_draws(ok, check_every=50, max_draws=4000) == 250  # at least the next look


# -- the settings --------------------------------------------------------------------------
def test_settings_defaults_depend_on_the_rule():
    fixed = SamplerSettings(stop="fixed")
    assert (fixed.stop, fixed.draws, fixed.max_draws, fixed.max_seconds) == ("fixed", 700, None, None)
    gate = SamplerSettings()  # the gate is the default rule
    assert (gate.stop, gate.draws, gate.max_draws, gate.max_seconds, gate.check_every) == ("gate", 200, 4000, None, 50)
    assert gate == SamplerSettings(stop="gate")
    assert SamplerSettings(stop="gate", draws=5000).max_draws == 5000


@pytest.mark.parametrize("kw, match", [
    (dict(stop="until"), "stop must be 'fixed'"),
    (dict(stop="gate", draws=300, max_draws=200), r"max_draws \(200\) is below the minimum draws \(300\)"),
    (dict(stop="fixed", max_draws=1000), "ceilings of stop='gate'"),
    (dict(stop="fixed", max_seconds=60.0), "ceilings of stop='gate'"),
    (dict(stop="gate", max_seconds=0.0), "max_seconds must be positive"),
    (dict(stop="gate", check_every=0), "check_every must be at least 1"),
])
def test_bad_settings_give_clear_errors(kw, match):
    with pytest.raises(ValueError, match=match):
        SamplerSettings(**kw)


def test_the_rule_and_its_ceilings_are_in_the_cache_key(tmp_path):
    import pandas as pd

    from ddr_explorer.core.corpus.corpus import Corpus
    from ddr_explorer.core.fitting import _settings_dict, fit_key, posterior_from_entry  # noqa: F401
    from ddr_explorer.core.model.formula import as_spec

    corpus = SimpleNamespace(content_hash="0" * 64)
    spec = as_spec("per-benchmark")
    keys = {fit_key(corpus, spec, s) for s in (
        SamplerSettings(stop="fixed"), SamplerSettings(stop="gate"), SamplerSettings(stop="gate", max_draws=2000),
        SamplerSettings(stop="gate", max_seconds=120.0), SamplerSettings(stop="gate", check_every=100),
        SamplerSettings(stop="gate", draws=300), SamplerSettings(adaptive_warmup=False))}
    assert len(keys) == 7
    # Stan's full schedule keeps the key it had before the adaptive warmup; the default (adaptive) is in the key
    assert "adaptive_warmup" not in _settings_dict(SamplerSettings(adaptive_warmup=False))
    assert _settings_dict(SamplerSettings())["adaptive_warmup"] is True
    # a fixed-length fit keeps the key it had before the rule existed; a gate fit's settings round-trip
    assert "stop" not in _settings_dict(SamplerSettings(stop="fixed"))
    assert _settings_dict(SamplerSettings())["stop"] == "gate"
    d = _settings_dict(SamplerSettings(stop="gate", max_seconds=90.0))
    assert d["stop"] == "gate" and d["max_draws"] == 4000 and d["max_seconds"] == 90.0
    assert SamplerSettings(**d) == SamplerSettings(stop="gate", max_seconds=90.0)
    del Corpus, pd


def test_the_cli_passes_the_rule_and_refuses_bad_ceilings():
    from ddr_explorer.core.cli import build_parser
    from ddr_explorer.core.fitting import settings_from_args

    args = build_parser().parse_args(["fit", "x.csv", "--preset", "per-benchmark", "--stop", "gate",
                                      "--max-draws", "1500", "--max-seconds", "60"])
    s = settings_from_args(args)
    assert (s.stop, s.draws, s.max_draws, s.max_seconds) == ("gate", 200, 1500, 60.0)
    args = build_parser().parse_args(["fit", "x.csv", "--preset", "per-benchmark"])
    assert settings_from_args(args) == SamplerSettings()  # the app's defaults: the same cache key
    assert s == settings_from_args(build_parser().parse_args(["fit", "x.csv", "--preset", "per-benchmark",
                                                              "--max-draws", "1500", "--max-seconds", "60"]))
    args = build_parser().parse_args(["fit", "x.csv", "--preset", "per-benchmark", "--stop", "fixed"])
    assert (settings_from_args(args).stop, settings_from_args(args).draws) == ("fixed", 700)
    for cmd in (["report", "x.csv", "-o", "x.pdf"], ["analyses", "x.csv"], ["dstudy", "x.csv"]):
        args = build_parser().parse_args(cmd + ["--stop", "fixed", "--draws", "300"])
        assert settings_from_args(args) == SamplerSettings(stop="fixed", draws=300), cmd
    args = build_parser().parse_args(["fit", "x.csv", "--preset", "per-benchmark", "--stop", "fixed",
                                      "--max-draws", "900"])
    with pytest.raises(ValueError, match="ceilings of stop='gate'"):
        settings_from_args(args)


def test_the_footer_states_the_rule_and_its_ceilings():
    from ddr_explorer.core.formatting import run_length_text
    from ddr_explorer.core.report.sheet import footer_lines

    gate = {"stop": "gate", "draws": 200, "max_draws": 4000, "max_seconds": 600.0, "chains": 4}
    assert run_length_text(gate) == "run length by the gate (at least 200, at most 4,000 draws/chain, 600 s)"
    assert run_length_text({"stop": "fixed", "draws": 700}) is None
    assert run_length_text({"draws": 700}) is None  # a fit stored before the rule existed
    inputs = SimpleNamespace(fit_info={"settings": gate, "method": "NUTS", "converged": True},
                             corpus_summary={}, corpus_name="c", corpus_hash="ab" * 32, versions={})
    line = footer_lines(inputs, date=None)[1]
    assert "run length by the gate (at least 200, at most 4,000 draws/chain, 600 s)" in line
    assert "draws/chain 200" not in line
    inputs.fit_info["settings"] = {"stop": "fixed", "draws": 700, "chains": 4}
    assert "draws/chain 700" in footer_lines(inputs, date=None)[1]


# -- the rule in the sampler ---------------------------------------------------------------
def _simulate_module():
    spec = importlib.util.spec_from_file_location("ddr_bench_simulate", ROOT / "bench" / "simulate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_gate_stops_an_easy_fit_before_its_ceiling():
    """Two well-informed terms (40 tasks, 12 models, 8 trials per cell): the draws pass the gate
    long before the ceiling of 2,000 per chain, the run stops at a look, and the verdict agrees."""
    sim = _simulate_module().simulate_per_benchmark(n_tasks=40, n_models=12, n_scaffolds=2, n_pairs=12,
                                                    trials_per_cell=8, sigmas={"task": 1.2, "model": 0.8}, mu=0.0,
                                                    seed=2)
    seen = []
    # the corpus, formula, chains, warmup and chunk of tests/model/test_warmup.py's fit: one compiled sampler
    # serves both files (the rule that stops the run is the host's, not the program's)
    s = SamplerSettings(stop="gate", draws=100, max_draws=2000, check_every=50, warmup=200, chains=4, seed=1,
                        chunk_size=50)
    post = fit(sim.table, "successes ~ (1|task) + (1|model)", s, progress=lambda *a: seen.append(a))
    n = post.mu.shape[1]
    assert 100 <= n < 2000 and n % 50 == 0
    assert any(str(x).endswith("when every component passed") for x in post.notes)
    dg = post.diagnostics
    assert dg.converged and dg.min_ess_bulk >= 440 and dg.min_ess_tail >= 440 and dg.max_r_hat <= 1.01
    gate = [e for e in seen if e[0] == S.GATE_PHASE]
    its = [e[1] for e in gate]
    assert its == sorted(its) and its[-1] == n and gate[-1][2] == n
    assert all(e[2] >= e[1] and e[3] is not None and e[3] >= 0 for e in gate)
    assert not any(e[0] == "sampling" for e in seen)


@pytest.fixture(scope="module")
def tiny_csv(tmp_path_factory):
    """6 tasks, 3 models, 2 scaffolds, one trial per cell: the hard fit's corpus, as ``ddr fit`` reads it."""
    table = _simulate_module().simulate_per_benchmark(n_tasks=6, n_models=3, n_scaffolds=2, n_pairs=3,
                                                      trials_per_cell=1, seed=4).table
    path = tmp_path_factory.mktemp("stopping") / "tiny.csv"
    table.to_csv(path, index=False)
    return path


def test_a_hard_fit_runs_on_to_the_ceiling_and_says_so(tiny_csv, tmp_path):
    """Two chains of at most 60 draws can never reach ESS 440 (ArviZ's ESS is at most N log10 N = 250):
    the run ends at the ceiling, not converged, with the ceiling to raise."""
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.fitting import fit_corpus

    # the corpus, spec and settings of `ddr fit tiny.csv --draws 20 --max-draws 60 --warmup 30 --chains 2` in
    # the next test (default seed, chunk and looks), so that one compiled sampler serves both tests' fits (a
    # direct fit of the table compiled another one, about 20 s of CPU); the rule under test is the sampler's,
    # whoever calls it, and the time ceiling's fit has its own cache key (max_seconds is in it)
    corpus = load_corpus(tiny_csv)
    s = SamplerSettings(stop="gate", draws=20, max_draws=60, warmup=30, chains=2)
    post = fit_corpus(corpus, "per-benchmark", s, cache_dir=tmp_path).posterior
    assert post.mu.shape == (2, 60)
    assert any("reached the draws ceiling at 60 draws per chain without passing" in str(x) for x in post.notes)
    assert not post.converged
    if post.diagnostics.divergences == 0:
        assert any("--max-draws" in w for w in post.diagnostics.warnings)
    # a time ceiling ends it at the first chunk past the limit
    post = fit_corpus(corpus, "per-benchmark", dataclasses.replace(s, max_seconds=1e-6),
                      cache_dir=tmp_path).posterior
    assert post.mu.shape == (2, 20)
    assert any("reached the time ceiling at 20 draws per chain" in str(x) for x in post.notes)


def test_ddr_fit_by_default_stops_by_the_gate_and_says_so(tiny_csv, tmp_path, capsys):
    """``ddr fit`` without --stop runs by the gate (the default run length): its JSON carries the rule
    and the ceiling in ``settings`` and the stop note, the text names where it stopped, the cache key
    differs from the fixed rule's, and a cache hit reads the rule back."""
    import json

    from ddr_explorer.core.cli import main

    path = tiny_csv
    base = ["fit", str(path), "--preset", "per-benchmark", "--cache", str(tmp_path / "c"), "--quiet",
            "--draws", "20", "--max-draws", "60", "--warmup", "30", "--chains", "2", "--allow-unconverged"]
    assert main(base + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["settings"]["stop"], out["settings"]["draws"], out["settings"]["max_draws"]) == ("gate", 20, 60)
    assert any(n.startswith("run length by the gate (at least 20, at most 60 draws per chain") for n in out["notes"])
    assert main(base) == 0  # the same fit again, from the cache: the text says how its length was set
    text = capsys.readouterr().out
    assert "run length by the gate (at least 20, at most 60 draws per chain" in text
    fixed = ["fit", str(path), "--preset", "per-benchmark", "--cache", str(tmp_path / "c"), "--quiet", "--stop",
             "fixed", "--draws", "20", "--warmup", "30", "--chains", "2", "--allow-unconverged", "--json"]
    assert main(fixed) == 0
    out_fixed = json.loads(capsys.readouterr().out)
    assert out_fixed["cache"]["key"] != out["cache"]["key"] and not out_fixed["cache"]["hit"]
    assert out_fixed["settings"]["stop"] == "fixed" and out_fixed["settings"]["max_draws"] is None
    assert main(fixed[:-1]) == 0
    assert "run length fixed: 20 draws per chain" in capsys.readouterr().out
