"""The priors printed (DDR sheet method notes and footer, ``ddr fit --json``) are the fit's own.

The priors are edited as the Model tab edits them (``AnalysisState.priors``), the corpus is
fitted through :func:`~ddr_explorer.core.fitting.fit_corpus` and its cache file, and the sheet
is built from that cache file; the edited numbers are read back from the PDF's text and the
defaults must not appear.  The NUTS sampler is replaced by the moment stand-in of
``tests/batch_fakes.py`` (the spec, priors included, still goes through the real fit and cache
path); one test samples for real with few draws.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("reportlab", reason="the DDR sheet needs reportlab")
pypdf = pytest.importorskip("pypdf", reason="reading the sheet's text needs pypdf")

import ddr_batch_fakes as bf  # noqa: E402

from ddr_explorer.core.ddr_sheet import write_ddr_sheet  # noqa: E402
from ddr_explorer.core.fitting import fit_corpus  # noqa: E402
from ddr_explorer.core.model.posterior import SamplerSettings  # noqa: E402
from ddr_explorer.core.report.priors import priors_are_default, priors_text  # noqa: E402
from ddr_explorer.core.session import AnalysisState  # noqa: E402

EDITED = {"sigma": {"df": 3.0, "scale": 1.0}, "intercept": {"df": 3.0, "loc": 0.0, "scale": 5.0}}
DEFAULT_SIGMA, DEFAULT_MU = "half-Student-t(3, 0, 2.5)", "Student-t(3, 0, 2.5)"
EDITED_SIGMA, EDITED_MU = "half-Student-t(3, 0, 1)", "Student-t(3, 0, 5)"
SETTINGS = SamplerSettings(stop="fixed", chains=2, warmup=30, draws=40, seed=3)


def tiny_table(seed: int = 0) -> pd.DataFrame:
    """One benchmark, 10 tasks, 4 models, 2 scaffolds, 2 trials each (160 rows)."""
    rng = np.random.default_rng(seed)
    rows = []
    skill = {"m0": -1.0, "m1": -0.3, "m2": 0.4, "m3": 1.1}
    for t in range(10):
        d = rng.normal(0, 1.2)
        for m, s in skill.items():
            for a in ("sa", "sb"):
                for r in range(2):
                    p = 1 / (1 + np.exp(-(s - d + (0.3 if a == "sa" else -0.3))))
                    rows.append({"benchmark": "bench", "task": f"t{t}", "model": m, "scaffold": a,
                                 "trial": str(r), "result": int(rng.random() < p)})
    return pd.DataFrame(rows)


def pdf_text(path) -> list[str]:
    return [re.sub(r"\s+", " ", p.extract_text() or "") for p in pypdf.PdfReader(str(path)).pages]


def edited_spec():
    """The spec the app fits after the user typed the priors into the Model tab."""
    state = AnalysisState(model="per-benchmark", priors=EDITED)
    return state.model_spec()


def test_edited_priors_are_read_from_the_fit_into_the_sheet(fake_sampler, tmp_path):
    corpus = bf.corpus_of(tiny_table(), name="tiny")
    spec = edited_spec()
    assert spec.priors.sigma.scale == 1.0 and spec.priors.intercept.scale == 5.0
    fit = fit_corpus(corpus, spec, SETTINGS, cache_dir=tmp_path / "cache")
    assert not fit.from_cache and fit.cache_path is not None and fit.cache_path.exists()
    # the sheet of the cache file: the posterior is rebuilt from the file, priors included
    res = write_ddr_sheet(fit.cache_path, tmp_path / "sheet.pdf", corpus=corpus, cache_dir=tmp_path / "cache",
                          date_invariant=True)
    pages = pdf_text(res.path)
    text = " ".join(pages)
    methods = next(p for p in pages if "Method notes" in p)
    assert "edited from the brms defaults" in methods
    assert EDITED_SIGMA in methods and EDITED_MU in methods
    for i, page in enumerate(pages, start=1):  # the footer of every page names the fit's priors
        assert EDITED_SIGMA in page and EDITED_MU in page, f"page {i} lacks the fit's priors"
    assert DEFAULT_SIGMA not in text and DEFAULT_MU not in text
    assert "2.5)" not in text  # no default scale printed anywhere


def test_edited_priors_survive_the_cache_into_fit_json(fake_sampler, tmp_path):
    from ddr_explorer.core.cli import fit_summary

    corpus = bf.corpus_of(tiny_table(), name="tiny")
    first = fit_corpus(corpus, edited_spec(), SETTINGS, cache_dir=tmp_path / "cache")
    again = fit_corpus(corpus, edited_spec(), SETTINGS, cache_dir=tmp_path / "cache")
    assert again.from_cache and again.key == first.key
    out = json.loads(json.dumps(fit_summary(again), default=float))
    assert out["priors"]["sigma"] == {"family": "half_student_t", "df": 3.0, "scale": 1.0}
    assert out["priors"]["intercept"] == {"family": "student_t", "df": 3.0, "loc": 0.0, "scale": 5.0}
    # the default-prior fit is a different cache entry and says so
    default = fit_corpus(corpus, "per-benchmark", SETTINGS, cache_dir=tmp_path / "cache")
    assert default.key != first.key
    assert fit_summary(default)["priors"]["sigma"]["scale"] == 2.5


def test_default_priors_are_named_as_the_defaults(fake_sampler, tmp_path):
    corpus = bf.corpus_of(tiny_table(), name="tiny")
    res = write_ddr_sheet(corpus, tmp_path / "sheet.pdf", preset="per-benchmark", settings=SETTINGS,
                          cache_dir=tmp_path / "cache", date_invariant=True)
    methods = next(p for p in pdf_text(res.path) if "Method notes" in p)
    assert "Priors of this fit (brms defaults, Hardy et al. 2026, App. C.1.3)" in methods
    assert DEFAULT_SIGMA in methods and DEFAULT_MU in methods


def test_priors_text_and_defaults():
    from ddr_explorer.core.model.formula import HalfStudentT, Priors, StudentT

    pri = Priors(intercept=StudentT(3, 0.5, 5), sigma=HalfStudentT(4, 1.0),
                 sigma_by_term={"task:model": HalfStudentT(3, 0.25)}).to_dict()
    assert priors_text(pri) == ("\u03c3_F ~ half-Student-t(4, 0, 1), \u03c3_task:model ~ half-Student-t(3, 0, 0.25), "
                                "\u03bc ~ Student-t(3, 0.5, 5)")
    assert "\u03c3<sub>task:model</sub>" in priors_text(pri, markup=True)
    assert not priors_are_default(pri)
    assert priors_are_default(Priors().to_dict())
    assert not priors_are_default(Priors(sigma_by_term={"task": HalfStudentT()}).to_dict())


@pytest.mark.slow
def test_a_real_fit_with_edited_priors_prints_them(tmp_path):
    """NUTS for real (few draws, so it need not converge): the sheet prints the priors the sampler used."""
    corpus = bf.corpus_of(tiny_table(), name="tiny")
    fit = fit_corpus(corpus, edited_spec(), SamplerSettings(stop="fixed", chains=1, warmup=20, draws=20, seed=1),
                     cache_dir=tmp_path / "cache")
    assert fit.posterior.spec.priors.to_dict()["sigma"]["scale"] == 1.0
    res = write_ddr_sheet(fit.cache_path, tmp_path / "sheet.pdf", corpus=corpus, cache_dir=tmp_path / "cache",
                          date_invariant=True)
    text = " ".join(pdf_text(res.path))
    assert EDITED_SIGMA in text and EDITED_MU in text
    assert DEFAULT_SIGMA not in text and DEFAULT_MU not in text
