"""Small statements the CLI and the sheet made that the numbers beside them contradicted.

- `ddr inspect` listed task and model as "NOT separable" and then suggested (1|task) + (1|model);
- `ddr fit` had no default preset while `ddr dstudy`, `ddr methods` and `ddr report` had one;
- `ddr fit --json` refusals wrote no JSON; the text printed the fit's verdict last (the README: first);
- "More tasks cannot pass the task-only ceiling 1.000"; "difficulty (4 refits)" beside "3 of 5 refits";
- delta_rho2 intervals below 0 without a word on what that means; DISCO's eta in the Erho2 row.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

import ddr_explorer.core.model  # noqa: F401 - before jax: parallel CPU chains
from ddr_explorer.core.cli import main

import ddr_batch_fakes as bf  # noqa: E402 - registered by tests/conftest.py

FAST = ["--stop", "fixed", "--draws", "40", "--warmup", "10", "--chains", "2"]


@pytest.fixture(scope="module")
def one_scaffold_csv(tmp_path_factory):
    """One benchmark, one scaffold, one 0/1 trial per model-task cell."""
    rng = np.random.default_rng(2)
    rows = ["benchmark,task,model,scaffold,successes,trials"]
    for m in range(8):
        for t in range(15):
            rows.append(f"b,t{t},m{m},s,{int(rng.random() < 0.5)},1")
    p = tmp_path_factory.mktemp("one") / "one.csv"
    p.write_text("\n".join(rows) + "\n")
    return p


def test_inspect_says_separability_is_of_all_terms_together(one_scaffold_csv, capsys):
    assert main(["inspect", str(one_scaffold_csv)]) == 0
    out = capsys.readouterr().out
    assert "NOT separable when all are fitted together: task, model" in out
    assert "a formula the design supports: (1|task) + (1|model) (each of its terms is separable once the others " \
           "are left out)" in out
    assert "left out, their variance absorbed by: scaffold -> (intercept); task:model -> residual" in out


def test_fit_has_the_default_preset_and_prints_its_verdict_first(fake_sampler, one_scaffold_csv, capsys, tmp_path):
    code = main(["fit", str(one_scaffold_csv), "--cache", str(tmp_path), *FAST, "--quiet", "--allow-unconverged"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out[0].startswith(("converged", "NOT converged")), out[0]
    head = next(ln for ln in out[1:] if not ln.startswith("  problem:"))  # the verdict's problems follow it
    assert head == f"{one_scaffold_csv}: y ~ 1 + (1|task) + (1|model)"  # per-benchmark, reduced


def test_fit_json_refusals_write_an_error_object(one_scaffold_csv, capsys, tmp_path):
    code = main(["fit", str(one_scaffold_csv), "--preset", "per-benchmark", "--formula", "y ~ (1|task)", "--json"])
    err = json.loads(capsys.readouterr().out)
    assert code == 2 and err == {"error": "give at most one of --formula or --preset", "exit_code": 2,
                                 "file": str(one_scaffold_csv)}
    code = main(["fit", str(one_scaffold_csv), "--strict-terms", "--json", "--cache", str(tmp_path), *FAST])
    err = json.loads(capsys.readouterr().out)
    assert code == 2 and "cannot separate" in err["error"]
    assert err["supported_formula"] == "y ~ 1 + (1|task) + (1|model)"
    bad = tmp_path / "bad.csv"
    bad.write_text("benchmark,task,model,scaffold,successes,trials\nb,t,m,s,3,1\n")
    code = main(["fit", str(bad), "--json"])
    err = json.loads(capsys.readouterr().out)
    assert code == 2 and err["issues"] and "invalid input" in err["error"]


def test_a_task_only_ceiling_of_one_is_not_called_a_ceiling():
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.files import demo_corpus_path
    from ddr_explorer.core.report import report_inputs_from, sheet_content
    from ddr_explorer.core.reliability import VarianceComponents

    rng = np.random.default_rng(0)
    c = VarianceComponents.from_mapping({"task": rng.uniform(1, 2, 400), "model": rng.uniform(0.5, 1, 400)})
    ct = sheet_content(report_inputs_from(load_corpus(demo_corpus_path()), c))
    text = " ".join(d.answer for d in ct.decisions)
    assert "task-only ceiling 1.000" not in text
    assert "Every error term of this fit averages out over tasks" in text


def test_the_difficulty_count_names_the_whole_corpus_fit():
    from ddr_explorer.core.report.content import _refits_note

    note = _refits_note(SimpleNamespace(n_fits=5, n_converged=3), "the whole corpus and 4 strata")
    assert "PROVISIONAL: 2 of 5 fits (the whole corpus and 4 strata) did not converge" in note
    assert "refits" not in note
    assert _refits_note(SimpleNamespace(n_fits=5, n_converged=5), "the whole corpus and 4 strata") == \
        " (All 5 fits (the whole corpus and 4 strata) converged.)"


def test_a_delta_rho2_below_zero_is_explained():
    from ddr_explorer.core.dstudy import DStudyDesign
    from ddr_explorer.core.dstudy.summary import dstudy_summary, format_dstudy
    from ddr_explorer.core.reliability import VarianceComponents

    rng = np.random.default_rng(1)
    c = VarianceComponents.from_mapping({t: rng.uniform(0.2, 1.0, 300) for t in
                                         ("task", "model", "scaffold", "task:model", "model:scaffold")})
    s = dstudy_summary(c, DStudyDesign(n_tasks=30, n_scaffolds=3, n_models=6))
    assert s["estimands"]["delta_rho2_universe"]["lower95"] < 0
    assert "below 0 where the scaffold matters more than the model" in format_dstudy(s)


def test_disco_eta_is_not_printed_as_erho2():
    from ddr_explorer.core.estimators.methods import format_methods_table, methods_table

    table = bf.simulate_module().simulate_per_benchmark(n_tasks=10, n_models=5, n_scaffolds=2, n_pairs=10,
                                                        trials_per_cell=2, seed=9).table
    t = methods_table(table, "per-benchmark", estimators=("DISCO",))
    assert np.isnan(t.coefficients["DISCO"]["Erho2"]) and 0 < t.disco_eta < 1
    text = format_methods_table(t)
    erho_row = next(ln for ln in text.splitlines() if ln.startswith("Erho2 (model)"))
    assert erho_row.split()[-1] == "NA"
    assert f"DISCO eta of the model grouping (its analogue of Erho2, Hardy et al. 2026, App. C.5): " \
           f"{t.disco_eta:.3f}" in text
