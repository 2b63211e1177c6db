"""`ddr analyses` and `ddr dstudy` on a corpus path and on a cached fit file, `--external-ranking`
(Kendall tau / Spearman rho against a ranking file) and the ranking file's error messages.
The sampler is the moment stand-in of ``batch_fakes`` (u_m = centred observed model logits)."""

from __future__ import annotations

import json

import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.cli import main
from ddr_explorer.core.analyses.external_ranking import ExternalRankingError, read_external_ranking


import ddr_batch_fakes as bf  # noqa: E402 - registered by tests/conftest.py
FAST = ["--stop", "fixed", "--draws", "40", "--warmup", "10", "--chains", "2"]



@pytest.fixture(scope="module")
def table():
    return bf.simulate_module().simulate_per_benchmark(n_tasks=10, n_models=5, n_scaffolds=2, n_pairs=10,
                                                       trials_per_cell=2, seed=9).table


@pytest.fixture
def corpus_csv(table, tmp_path):
    p = tmp_path / "corpus.csv"
    table.to_csv(p, index=False)
    return p


def run(capsys, *argv) -> dict:
    code = main([*map(str, argv), "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_dstudy_on_a_corpus_path_and_on_its_cache_file(fake_sampler, capsys, corpus_csv, table, tmp_path):
    cache = tmp_path / "cache"
    design = ["--n-tasks", 10, "--n-scaffolds", 2, "--replicates", 2]
    a = run(capsys, "dstudy", corpus_csv, "--cache", cache, *FAST, *design)
    assert len(fake_sampler) == 1
    (h5,) = cache.glob("*.h5")
    b = run(capsys, "dstudy", h5, *design)
    assert len(fake_sampler) == 1  # the cache file is read, nothing is fitted
    expected = bf.erho2_model(bf.moment_sigma_model(table), 10, 2, 2)
    assert a["estimands"]["Erho2"]["median"] == pytest.approx(expected, abs=2e-3)
    assert b["estimands"]["Erho2"]["median"] == a["estimands"]["Erho2"]["median"]


def test_external_ranking_agrees_with_the_observed_order(fake_sampler, capsys, corpus_csv, table, tmp_path):
    order = bf.model_logits(table).sort_values(ascending=False).index.tolist()  # best first
    same = tmp_path / "same.csv"
    same.write_text("model,rank\n" + "".join(f"{m},{i}\n" for i, m in enumerate(order, 1)))
    out = run(capsys, "dstudy", corpus_csv, "--cache", tmp_path / "c", *FAST, "--external-ranking", same)
    ext = out["external_ranking"]
    assert ext["kendall_tau"] == pytest.approx(1.0) and ext["spearman_rho"] == pytest.approx(1.0)
    assert ext["kind"] == "rank" and ext["n_models"] == 5
    rev = tmp_path / "rev.json"  # scores, best last, one model unknown to the fit
    rev.write_text(json.dumps({**{m: float(i) for i, m in enumerate(order)}, "ghost": 9.5}))
    ext = run(capsys, "dstudy", corpus_csv, "--cache", tmp_path / "c", *FAST, "--external-ranking", rev,
              )["external_ranking"]
    assert ext["kind"] == "score" and ext["kendall_tau"] == pytest.approx(-1.0)
    assert ext["spearman_rho"] == pytest.approx(-1.0) and ext["missing_in_posterior"] == ["ghost"]
    # three models swapped pairwise by hand: order 2,1,3,5,4 against 1..5 -> tau = (10 - 2*2)/10 = 0.6,
    # rho = 1 - 6 * (1+1+0+1+1) / (5 * 24) = 0.8
    swapped = [order[1], order[0], order[2], order[4], order[3]]
    lst = tmp_path / "list.json"
    lst.write_text(json.dumps(swapped))
    ext = run(capsys, "dstudy", corpus_csv, "--cache", tmp_path / "c", *FAST, "--external-ranking", lst,
              )["external_ranking"]
    assert ext["kendall_tau"] == pytest.approx(0.6) and ext["spearman_rho"] == pytest.approx(0.8)
    assert main(["dstudy", str(corpus_csv), "--cache", str(tmp_path / "c"), *FAST, "--external-ranking",
                 str(same)]) == 0
    assert "Kendall tau  +1.000" in capsys.readouterr().out


@pytest.mark.parametrize("text, match", [
    ("model,rank\na,1\nb,x\n", r"line 3, column 'rank': 'x' is not a number"),
    ("model,rank\na,1\na,2\n", r"line 3, column 'model': 'a' already appears on line 2"),
    ("who,what,why\na,1,2\n", r"line 1: no name column"),
    ("model,notes,extra\na,x,y\n", r"line 1: no rank or score column"),
    ("model,rank\na,0\nb,1\n", r"line 2, column 'rank': rank 0 is below 1"),
    ("model,rank\na,1\n", r"1 model\(s\) ranked"),
    ('{"a": 1,\n "b": }', r"line 2, column 7: invalid JSON"),
    ('{"a": 1, "b": [2]}', r"key 'b': expected a number"),
    ('{"kind": "best", "ranking": {"a": 1, "b": 2}}', r"'kind' should be"),
    ('["a", "b", "a"]', r"'a' listed twice"),
])
def test_bad_ranking_files_name_the_place_and_the_fix(tmp_path, text, match):
    p = tmp_path / ("r.json" if text.lstrip()[0] in "{[" else "r.csv")
    p.write_text(text)
    with pytest.raises(ExternalRankingError, match=match):
        read_external_ranking(p)


def test_ranking_file_layouts(tmp_path):
    p = tmp_path / "r.tsv"
    p.write_text("name\taccuracy\nA\t0.5\nB\t0.7\n")
    r = read_external_ranking(p)
    assert r.kind == "score" and r.values == {"A": 0.5, "B": 0.7}
    p.write_text('{"A": 2, "B": 1}')
    assert read_external_ranking(p).kind == "rank"
    assert read_external_ranking(p, kind="score").kind == "score"


def test_bad_ranking_file_exits_2_naming_it(fake_sampler, capsys, corpus_csv, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("model,rank\nm00,first\n")
    assert main(["dstudy", str(corpus_csv), "--cache", str(tmp_path / "c"), *FAST, "--external-ranking",
                 str(bad)]) == 2
    assert "bad.csv, line 2, column 'rank'" in capsys.readouterr().err


def test_analyses_on_a_corpus_then_on_its_cache_file(fake_sampler, capsys, corpus_csv, tmp_path):
    cache = tmp_path / "cache"
    out = run(capsys, "analyses", corpus_csv, "--which", "difficulty,lomo,loo,lobo", "--cache", cache,
              "--refit-rule", "precision", *FAST)
    assert set(out) == {"converged", "convergence", "difficulty", "lomo", "loo", "lobo", "timing"}
    assert out["difficulty"]["n_fitted"] == 9 and len(out["difficulty"]["strata"]) == 4  # 4 gate reruns
    # each analysis's wall seconds; no estimate beside them: the main fit was not at hand before the run
    assert set(out["timing"]["seconds"]) == {"difficulty", "lomo", "loo"} and "estimated_seconds" not in out["timing"]
    # the strata ran under the precision rule (asked for; the gate is the default) and state their Monte Carlo SE
    assert out["difficulty"]["refit_rule"] == "precision"
    assert all(s["erho2_mcse"]["median"] > 0 for s in out["difficulty"]["strata"])
    diff = dict(out["convergence"]["fits"]["difficulty"])
    # the 4 strata are judged on the coefficient they report, the aggregate (the parent) on its components
    assert diff.pop("converged_on").startswith("4 refit(s) each under the precision rule")
    assert diff == {"n_fits": 5, "n_converged": 0, "n_rerun": 4, "n_cold": 0}
    # every fit behind an analysis is checked against the convergence gate and counted
    fits = out["convergence"]["fits"]
    assert fits["difficulty"]["n_fits"] == 5 and fits["lomo"]["n_fits"] == 6 and "loo" not in fits
    assert out["converged"] == all(f["n_converged"] == f["n_fits"] for f in fits.values())
    assert 0 <= fits["difficulty"]["n_converged"] <= 5
    assert [r["left_out"] for r in out["lomo"]["rows"]] == ["(none)", "m00", "m01", "m02", "m03", "m04"]
    assert out["lobo"] == {"skipped": "the corpus has one benchmark; nothing to leave out"}
    assert out["loo"]["n_cells"] == 100 and out["loo"]["good"] + out["loo"]["bad"] + out["loo"]["very_bad"] == 100
    # relative efficiency estimated per cell from the chains, not fixed at 1
    assert 0 < out["loo"]["r_eff_min"] <= out["loo"]["r_eff_median"] and out["loo"]["r_eff_median"] != 1.0
    n = len(fake_sampler)
    again = run(capsys, "analyses", corpus_csv, "--which", "difficulty,lomo,loo", "--cache", cache,
                "--refit-rule", "precision", *FAST)
    assert len(fake_sampler) == n  # every fit and the LOO result come from the cache
    assert again["lomo"]["n_cached"] == 11 and again["loo"]["from_cache"]  # 6 fits and 5 gate reruns
    assert again["difficulty"]["aggregate"] == out["difficulty"]["aggregate"]
    # now the main fit is stored: the engine's estimate (nothing left to sample) beside what each took
    t = again["timing"]
    assert t["estimated_seconds"] == {"difficulty": 0.0, "loo": 0.0}
    assert t["text"].startswith("analyses estimated / took: difficulty 0 s / ")
    h5 = sorted(cache.glob("*.h5"))[0]
    assert main(["analyses", str(h5), "--which", "heldout"]) == 2
    assert "--corpus" in capsys.readouterr().err
    code = main(["analyses", str(h5), "--corpus", str(corpus_csv), "--which", "heldout", "--splits", "2",
                 "--cache", str(cache)])
    text = capsys.readouterr()
    assert code == 0 and "Held-out reliability" in text.out and "2 splits" in text.out
    assert "held" in text.err  # progress on stderr
    assert "refits to the gate rule" in text.out and "mean gap held-out - projected" in text.out  # the default
    assert "(MCSE 0." in text.out  # the mean gap's Monte Carlo SE (delta method over the splits' medians)
    out = run(capsys, "analyses", corpus_csv, "--which", "heldout", "--splits", "3", "--refit-rule", "precision",
              "--cache", cache, *FAST)
    assert out["heldout"]["refit_rule"] == "precision" and out["heldout"]["mean_gap_mcse"] > 0
    assert "under the precision rule" in out["convergence"]["fits"]["heldout"]["converged_on"]
    with pytest.raises(SystemExit) as bad:  # argparse names the choices
        main(["analyses", str(corpus_csv), "--which", "heldout", "--refit-rule", "fast"])
    assert bad.value.code == 2 and "choose from 'precision', 'gate'" in capsys.readouterr().err


def test_unknown_analysis_is_exit_2(capsys, corpus_csv):
    assert main(["analyses", str(corpus_csv), "--which", "difficulty,nonsense"]) == 2
    assert "unknown analysis 'nonsense'" in capsys.readouterr().err


def test_studies_feed_the_sheet_with_the_same_numbers_as_the_json(fake_sampler, table, tmp_path):
    """The app's DDR-sheet export gets the study objects; ``ddr analyses --json`` their numbers: the same ones."""
    from ddr_explorer.core.analyses import run_analysis_studies, sheet_analyses, studies_to_dict
    from ddr_explorer.core.model.sampler import SamplerSettings
    from ddr_explorer.core.report.inputs import ANALYSIS_KEYS, DifficultyProfile, HeldOutReliability, LooSummary

    corpus = bf.corpus_of(table)
    studies = run_analysis_studies(corpus, ["difficulty", "heldout", "loo", "lobo"], "per-benchmark",
                                   SamplerSettings(stop="fixed", draws=40, warmup=10, chains=2), cache_dir=tmp_path, n_splits=2)
    sheet = sheet_analyses(studies)
    assert set(sheet) == {"difficulty", "held_out", "loo"} and set(sheet) <= set(ANALYSIS_KEYS)
    assert isinstance(sheet["difficulty"], DifficultyProfile) and isinstance(sheet["loo"], LooSummary)
    assert isinstance(sheet["held_out"], HeldOutReliability) and sheet["held_out"].n_splits == 2
    js = studies_to_dict(studies)
    assert js["lobo"] == {"skipped": "the corpus has one benchmark; nothing to leave out"}
    assert js["difficulty"]["aggregate"]["median"] == pytest.approx(sheet["difficulty"].aggregate.median)
    assert js["heldout"]["mean_gap"] == pytest.approx(sheet["held_out"].mean_gap)
    assert js["loo"]["good"] + js["loo"]["bad"] + js["loo"]["very_bad"] == sheet["loo"].total == 100
