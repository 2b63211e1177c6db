"""Price files (USD per trial per benchmark; USD per 1M tokens per model) and ``--token-prices``:
prices per trial from token counts x a model price table, computed by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.cli import main
from ddr_explorer.core.price_tables import PriceFileError, read_token_prices, read_trial_prices


import ddr_batch_fakes as bf  # noqa: E402 - registered by tests/conftest.py


def test_token_price_layouts(tmp_path):
    csv = tmp_path / "p.csv"
    csv.write_text("model,input,output\nm00,1.25,10\nm01,0.5,2\n")
    assert read_token_prices(csv) == {"m00": (1.25, 10.0), "m01": (0.5, 2.0)}
    js = tmp_path / "p.json"
    js.write_text(json.dumps({"m00": [1.25, 10], "m01": {"input": 0.5, "output": 2}}))
    assert read_token_prices(js) == {"m00": (1.25, 10.0), "m01": (0.5, 2.0)}
    trial = tmp_path / "t.csv"
    trial.write_text("benchmark,price\nb1,0.25\n\nb2,1\n")
    assert read_trial_prices(trial) == {"b1": 0.25, "b2": 1.0}


@pytest.mark.parametrize("text, match", [
    ("model,in,out\nm,1,2\n", r"p\.txt, line 1: expected the header 'model,input,output'"),
    ("model,input,output\nm,1,x\n", r"line 2, column 'output': 'x' is not a number"),
    ("model,input,output\nm,-1,2\n", r"line 2, column 'input': '-1' must be a finite number >= 0"),
    ("model,input,output\nm,1,2\nm,1,3\n", r"line 3, column 'model': 'm' is listed twice"),
    ('{"m": [1]}', r"key 'm': expected \[input, output\]"),
    ('{"m": [1, 2]', r"invalid JSON"),
])
def test_bad_token_price_files_name_the_place(tmp_path, text, match):
    p = tmp_path / "p.txt"
    p.write_text(text)
    with pytest.raises(PriceFileError, match=match):
        read_token_prices(p)


@pytest.fixture
def token_corpus(tmp_path):
    t = bf.simulate_module().simulate_per_benchmark(n_tasks=8, n_models=3, n_scaffolds=2, n_pairs=6,
                                                    trials_per_cell=2, seed=4).table.copy()
    rng = np.random.default_rng(0)
    t["input_tokens"] = rng.integers(1_000, 50_000, len(t))
    t["output_tokens"] = rng.integers(100, 5_000, len(t))
    path = tmp_path / "tokens.csv"
    t.to_csv(path, index=False)
    prices = {m: (1.0 + i, 8.0 * (i + 1)) for i, m in enumerate(sorted(t["model"].unique()))}
    pfile = tmp_path / "token-prices.json"
    pfile.write_text(json.dumps({m: list(v) for m, v in prices.items()}))
    names = t["model"].astype(str)
    cost = sum((t["input_tokens"] * names.map(lambda m: prices[m][0])
                + t["output_tokens"] * names.map(lambda m: prices[m][1])) / 1e6)
    return path, pfile, float(cost / t["trials"].sum()), t


def test_dstudy_prices_from_tokens(monkeypatch, capsys, token_corpus, tmp_path):
    import ddr_explorer.core.model.sampler as sampler

    monkeypatch.setattr(sampler, "fit", bf.moment_fit)
    path, pfile, want, t = token_corpus
    bench = str(t["benchmark"].iloc[0])
    code = main(["dstudy", str(path), "--token-prices", str(pfile), "--cache", str(tmp_path / "c"), "--json",
                 "--stop", "fixed", "--draws", "20", "--warmup", "10", "--chains", "2", "--budget", "100"])
    out = capsys.readouterr()
    assert code == 0, out.err
    d = json.loads(out.out)
    assert d["design"]["price_per_trial"][bench] == pytest.approx(want, rel=1e-12)
    assert "error" not in d["budget"]
    bad = tmp_path / "bad.csv"
    bad.write_text("model,input,output\nsomeone-else,1,2\n")
    assert main(["dstudy", str(path), "--token-prices", str(bad), "--cache", str(tmp_path / "c")]) == 2
    assert "no price for model(s) 'm00'" in capsys.readouterr().err


def test_report_prices_from_tokens(monkeypatch, capsys, token_corpus, tmp_path):
    import ddr_explorer.core.model.sampler as sampler
    from pypdf import PdfReader

    monkeypatch.setattr(sampler, "fit", bf.moment_fit)
    path, pfile, want, _ = token_corpus
    pdf = tmp_path / "sheet.pdf"
    code = main(["report", str(path), "-o", str(pdf), "--token-prices", str(pfile), "--cache", str(tmp_path / "c"),
                 "--stop", "fixed", "--draws", "20", "--warmup", "10", "--chains", "2", "--quiet", "--analyses", "none"])
    assert code == 0, capsys.readouterr().err
    text = "\n".join(p.extract_text() for p in PdfReader(pdf).pages)
    assert "No cost data" not in text
    assert f"${want:.3g}" in text or f"{want:.3g}" in text  # the price per trial, 3 significant digits
    trial = tmp_path / "trial.csv"
    trial.write_text("benchmark,price\nb,0.5\n")
    assert main(["report", str(path), "-o", str(pdf), "--token-prices", str(pfile), "--prices", str(trial)]) == 2
    assert "at most one of --prices or --token-prices" in capsys.readouterr().err
