"""Transfer across benchmarks (seed 003 sec. 5.5): a known rank inversion of model families between two
benchmarks gives Spearman rho -1 (per draw too), the capability-gap ratio per benchmark equals its hand
value under the moment stand-in sampler (sigma_model = SD of the model logits, sigma[task:model] = 1), the
family map's errors name file, line and column, and ``ddr analyses --which capability,transfer --json`` runs."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.analyses.transfer import FamilyMapError, read_family_map, transfer_study
from ddr_explorer.core.cli import main
from ddr_explorer.core.corpus.validate import build_corpus
from ddr_explorer.core.model.posterior import SamplerSettings

import ddr_batch_fakes as bf  # noqa: E402 - registered by tests/conftest.py

FAMILIES = "model,family\nm0,A\nm1,A\nm2,B\nm3,B\nm4,C\nm5,C\n"


def inverted_table(n_tasks=8, trials=10):
    """Six models: success rises with the model's index on b1 and falls on b2 (families A < B < C on b1,
    C < B < A on b2)."""
    rows = []
    for b, sign in (("b1", 1), ("b2", -1)):
        for m in range(6):
            for t in range(n_tasks):
                p = 1 / (1 + np.exp(-(sign * (m - 2.5) * 0.6 + 0.3 * np.sin(t))))
                rows.append(dict(benchmark=b, task=f"{b}-t{t}", model=f"m{m}", scaffold="s",
                                 successes=int(round(p * trials)), trials=trials))
    return pd.DataFrame(rows)


@pytest.fixture
def fam_csv(tmp_path):
    p = tmp_path / "families.csv"
    p.write_text(FAMILIES)
    return p


def test_known_rank_inversion_gives_negative_rho(fake_sampler, tmp_path, fam_csv):
    table = inverted_table()
    corpus = build_corpus(table, file=None, format="simulated", name="inverted")
    # the stand-in draws 700 iid draws per chain at the fixed length; 200 (the gate's first look) can miss R-hat
    # 1.01 by chance, and the stand-in does not lengthen its run as the sampler does
    st = transfer_study(corpus, "per-benchmark", SamplerSettings(stop="fixed"), tmp_path / "cache",
                        families=read_family_map(fam_csv))
    assert st.benchmarks == ["b1", "b2"] and len(fake_sampler) == 2
    assert st.rankings["b1"]["family"].tolist() == ["C", "B", "A"]
    assert st.rankings["b2"]["family"].tolist() == ["A", "B", "C"]
    (pair,) = st.pairs.to_dict(orient="records")
    assert pair["n_shared"] == 3 and pair["rho"] == pytest.approx(-1.0)
    assert pair["rho_upper95"] == pytest.approx(-1.0) and pair["prob_negative"] == 1.0
    # gap ratio = s2_model / (s2_model + 1) per benchmark, s_model = SD of the model logits (moment stand-in)
    for g in st.gap.to_dict(orient="records"):
        s2 = bf.moment_sigma_model(table[table["benchmark"] == g["benchmark"]]) ** 2
        assert g["gap_median"] == pytest.approx(s2 / (s2 + 1.0), abs=2e-3)
    assert st.gap_spread is not None and st.gap_spread["median"] < 0.01  # mirrored benchmarks: equal ratios
    assert st.to_dict()["converged"] is True


def test_family_map_errors_name_the_place(tmp_path):
    bad = tmp_path / "f.csv"
    bad.write_text("model,family\nm0,A\nm1,\n")
    with pytest.raises(FamilyMapError, match=r"f\.csv, line 3, column 'family': empty family"):
        read_family_map(bad)
    bad.write_text("model,family\nm0,A\nm0,B\n")
    with pytest.raises(FamilyMapError, match=r"line 3, column 'model': 'm0' already has family 'A' \(line 2\)"):
        read_family_map(bad)
    bad.write_text("name,group\nm0,A\n")
    with pytest.raises(FamilyMapError, match=r"line 1: the header should name the columns 'model' and 'family'"):
        read_family_map(bad)
    toml = tmp_path / "f.toml"
    toml.write_text("[[patterns]]\nregex = '^gpt('\nfamily = 'GPT'\n")
    with pytest.raises(FamilyMapError, match=r"f\.toml, \[\[patterns\]\] entry 1, regex"):
        read_family_map(toml)
    toml.write_text("[families]\nGPT = ['gpt-4o']\n[[patterns]]\nregex = '^claude'\nfamily = 'Claude'\n")
    fm = read_family_map(toml)
    assert fm.family("gpt-4o") == "GPT" and fm.family("claude-3-opus") == "Claude" and fm.family("o3") is None


def test_cli_json_runs_capability_and_transfer(fake_sampler, capsys, tmp_path, fam_csv):
    path = tmp_path / "corpus.csv"
    inverted_table().to_csv(path, index=False)
    ext = tmp_path / "index.csv"  # an external capability index: higher is better, one model unknown to the corpus
    ext.write_text("model,score\n" + "".join(f"m{k},{k}\n" for k in range(6)) + "ghost,9\n")
    code = main(["analyses", str(path), "--which", "capability,transfer", "--irt", "1pl", "--families", str(fam_csv),
                 "--external-ranking", str(ext),
                 "--stop", "fixed", "--draws", "30", "--warmup", "20", "--chains", "2", "--cache", str(tmp_path / "c"), "--json",
                 "--quiet"])
    out = capsys.readouterr()
    assert code == 0, out.err
    d = json.loads(out.out)
    cap, tr = d["capability"], d["transfer"]
    m = cap["models"]["1pl"]
    assert m["n_subjects"] == 6 and m["n_tasks"] == 16 and len(m["abilities"]) == 6
    assert m["label"].startswith("UNCONVERGED") and d["converged"] is False  # 30 draws: labelled, not hidden
    assert cap["gstudy"]["n_models"] == 6 and -1 <= cap["gstudy"]["kendall"]["median"] <= 1
    assert tr["pairs"][0]["rho"] == pytest.approx(-1.0)
    assert cap["external"]["n_models"] == 6 and cap["external"]["missing_in_posterior"] == ["ghost"]
    assert {"capability", "transfer"} <= set(d["convergence"]["fits"])
    # a bad family map fails before any fit, naming the file
    bad = tmp_path / "bad.csv"
    bad.write_text("model\nm0\n")
    assert main(["analyses", str(path), "--which", "transfer", "--families", str(bad), "--quiet"]) == 2
    assert "bad.csv, line 1" in capsys.readouterr().err
