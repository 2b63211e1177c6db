"""The convergence verdict travels with every number built from a fit.

A fit of the demo corpus with 2 x 20 draws cannot converge (bulk ESS < 400 whatever the chains do):
``ddr fit`` exits 3 and says why, ``--allow-unconverged`` exits 0, the verdict is stored in the fit's
cache file, and ``ddr dstudy`` on that file prints the verdict first, and ``"converged": false`` at the
top of its JSON.  The draws come from the suite's stand-in sampler (``batch_fakes.moment_fit``, no
compile): what is tested is how the gate's verdict travels, which is computed from the draws by the
same diagnostics as for a real fit; the real sampler's gate has its own tests (tests/model/).
"""

from __future__ import annotations

import json

import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.cache import read_fit_file
from ddr_explorer.core.cli import EXIT_UNCONVERGED, main
from ddr_explorer.core.files import demo_corpus_path

TINY = ["--stop", "fixed", "--draws", "20", "--warmup", "20", "--chains", "2", "--seed", "5"]


@pytest.fixture(scope="module")
def stand_in_sampler():
    """The ``fake_sampler`` fixture (tests/conftest.py) for the whole module: the stand-in's draws, no compile."""
    import ddr_batch_fakes as bf

    import ddr_explorer.core.model.refit as refit
    import ddr_explorer.core.model.sampler as sampler

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sampler, "fit", bf.moment_fit)
        mp.setattr(refit, "fit_refits", bf.cold_fit_refits)
        bf.CALLS.clear()
        yield bf.CALLS


@pytest.fixture(scope="module")
def unconverged(tmp_path_factory, stand_in_sampler):
    cache = tmp_path_factory.mktemp("verdict-cache")
    code = main(["fit", str(demo_corpus_path()), "--preset", "per-benchmark", "--cache", str(cache), "--quiet",
                 "--json", *TINY])
    assert stand_in_sampler == ["terminal-bench-2"], stand_in_sampler  # one fit, by the stand-in
    return code, cache


def test_ddr_fit_exits_3_on_a_fit_that_did_not_converge(unconverged, stand_in_sampler, capsys):
    code, cache = unconverged
    assert code == EXIT_UNCONVERGED == 3
    # the same fit again (a cache hit): same verdict, same exit; --allow-unconverged exits 0
    capsys.readouterr()
    assert main(["fit", str(demo_corpus_path()), "--preset", "per-benchmark", "--cache", str(cache), "--quiet",
                 "--json", *TINY]) == 3
    out = capsys.readouterr()
    d = json.loads(out.out)
    assert d["converged"] is False and d["verdict"]["converged"] is False
    assert d["verdict"]["min_ess_bulk"] < 400 and d["verdict"]["problems"]
    assert "NOT converged" in out.err and "--allow-unconverged" in out.err
    assert main(["fit", str(demo_corpus_path()), "--preset", "per-benchmark", "--cache", str(cache), "--quiet",
                 "--allow-unconverged", *TINY]) == 0
    text = capsys.readouterr().out
    assert "NOT converged (max R-hat" in text and "needs \u2265 400" in text
    assert len(stand_in_sampler) == 1  # the reruns read the fit from the cache


def test_the_verdict_is_in_the_cache_file_and_printed_first_by_dstudy(unconverged, capsys):
    _, cache = unconverged
    [fit_file] = sorted(cache.glob("fit-*.h5"))
    verdict = read_fit_file(fit_file).meta["verdict"]
    assert verdict["converged"] is False and verdict["n_draws"] == 40
    assert verdict["min_ess_bulk"] < 400 and verdict["divergences"] >= 0
    capsys.readouterr()
    assert main(["dstudy", str(fit_file), "--n-tasks", "40", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert list(d)[:2] == ["converged", "verdict"] and d["converged"] is False
    assert d["verdict"] == verdict
    assert main(["dstudy", str(fit_file), "--n-tasks", "40"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("fit: NOT converged") and "PROVISIONAL" in first


def test_components_typed_in_carry_no_verdict(tmp_path, capsys):
    comps = tmp_path / "c.json"
    comps.write_text(json.dumps({"scale": "sd", "components": {"model": 0.8, "task:model": 1.1}}))
    assert main(["dstudy", "--components", str(comps), "--n-tasks", "20", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["converged"] is None and d["verdict"] is None
    assert main(["dstudy", "--components", str(comps), "--n-tasks", "20"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("fit: none here")
