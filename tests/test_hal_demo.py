"""The bundled HAL demo corpus (resources/demo/hal-taubench-airline.csv): it opens as the ``hal`` format with the
paper's design (seed 000 Table 2), and a tiny fit of it gives Table 17's coefficients of tau-bench Airline
within their intervals of the full-data values.

REFERENCE holds posterior means of the fit of ``taubench_airline`` sliced from the full HAL matrix
(``bench/reproduce_hardy2026.py --out bench/results/hardy2026.json``: per-benchmark model, Eq. 2, 4 chains,
target_accept 0.95, stopped by the convergence gate at 1,400 draws, max R-hat < 1.01; computed once,
2026-12-06).  The paper's Table 17 row, for comparison: 0.549, 0.539, 0.545, 0.533, 0.759, 0.938, 0.619.
The coefficients are at one scaffold per model and one model per scaffold, as the paper's tables are.
"""

from __future__ import annotations

import pytest

from ddr_explorer.core.corpus.io import load_corpus
from ddr_explorer.core.dstudy.objects import by_object
from ddr_explorer.core.files import hal_demo_corpus_path
from ddr_explorer.core.fitting import components_from_posterior, fit_corpus
from ddr_explorer.core.model.posterior import SamplerSettings
from ddr_explorer.core.posterior_summary import summarize
from ddr_explorer.core.reliability import inter_scaffold_reliability

#: Full-data posterior means (see the module note): M(i), A(i), rho_AA', M(b), A(b), MA(b), M(b)(inf).
REFERENCE = {"M_i": 0.511, "A_i": 0.536, "AA": 0.540, "M_b": 0.527, "A_b": 0.752, "MA_b": 0.937, "M_inf": 0.611}

#: Two short chains: three such fits (seeds 1-3) put every mean within 0.04 of REFERENCE (0.01 for MA_b);
#: at the observed 3 scaffolds per model instead of one, M(b) would be 0.72.
TINY = SamplerSettings(stop="fixed", draws=150, warmup=150, chains=2, seed=2)
N_TASKS = 50


@pytest.fixture(scope="module")
def demo():
    return load_corpus(hal_demo_corpus_path())


@pytest.fixture(scope="module")
def coefficients(demo, tmp_path_factory):
    post = fit_corpus(demo, "per-benchmark", TINY, cache_dir=tmp_path_factory.mktemp("cache")).posterior
    comp = components_from_posterior(post)
    objects = by_object(comp, {"task": N_TASKS, "scaffold": 1.0}, n_models=1)
    aa = inter_scaffold_reliability(comp, N_TASKS)
    return {"M_i": objects["model"]["task_reliability"], "A_i": objects["scaffold"]["task_reliability"],
            "AA": {"mean": float(aa.mean()), "lower95": summarize(aa).hdi95[0], "upper95": summarize(aa).hdi95[1]},
            "M_b": objects["model"]["Erho2"], "A_b": objects["scaffold"]["Erho2"], "MA_b": objects["system"]["Erho2"],
            "M_inf": objects["model"]["Erho2_task_ceiling"]}


def test_the_demo_has_the_papers_design(demo):
    assert demo.format == "hal"
    # seed 000 Table 2, tau-bench Airline: 23 models, 50 tasks, 3 scaffolds, 42 model-scaffold pairs
    assert (demo.n_records, demo.n_levels("model"), demo.n_levels("task"), demo.n_levels("scaffold"),
            demo.n_levels("agent")) == (2099, 23, 50, 3, 42)
    assert demo.n_successes == 877


@pytest.mark.parametrize("name", list(REFERENCE))
def test_a_tiny_fit_gives_the_full_data_coefficients(coefficients, name):
    ours, ref = coefficients[name], REFERENCE[name]
    assert ours["lower95"] <= ref <= ours["upper95"]
    assert ours["mean"] == pytest.approx(ref, abs=0.02 if name == "MA_b" else 0.08)
