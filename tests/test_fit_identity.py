"""A fit file used with a corpus is checked against it in every command that takes ``FIT.h5 --corpus``:
``ddr analyses`` skipped the check ``ddr report`` made (LOO elpd -55.10 against -60.64 for the right corpus)."""

from __future__ import annotations

import pytest

from ddr_explorer.core.cache import read_fit_file
from ddr_explorer.core.cli import main as ddr
from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.fitting import check_fit_of_corpus, fit_corpus
from ddr_explorer.core.model import SamplerSettings

ROWS = [f"b,t{t},m{m},s,{(t + m) % 2}" for t in range(6) for m in range(3)]


def _corpus(tmp_path, name, rows):
    p = tmp_path / name
    p.write_text("benchmark,task,model,scaffold,result\n" + "\n".join(rows) + "\n")
    return p


@pytest.fixture
def fitted(tmp_path, fake_sampler):
    right = _corpus(tmp_path, "right.csv", ROWS)
    res = fit_corpus(load_corpus(right), "y ~ (1|task) + (1|model)",
                     SamplerSettings(stop="fixed", draws=20, warmup=10, chains=2), cache_dir=tmp_path / "cache")
    return right, res.cache_path


def test_analyses_refuses_a_fit_with_another_corpus(tmp_path, fitted, capsys):
    right, fit = fitted
    other = _corpus(tmp_path, "other.csv", [*ROWS[:-1], "b,t5,m2,s,0"])  # one trial differs
    assert ddr(["analyses", str(fit), "--corpus", str(other), "--which", "loo", "--cache", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert f"{fit} was fitted to a corpus with content hash" in err
    assert f"but {other} has" in err and "give the corpus the fit was made from, or fit this one" in err


def test_the_right_corpus_passes_the_same_check(fitted):
    right, fit = fitted
    check_fit_of_corpus(read_fit_file(fit).meta, load_corpus(right), fit)  # no error
