"""Citations by author and year: the table in core.references, the DDR sheet's References block, and ``ddr``'s text.

A reader has no "seed 000": the sheet and the CLI name the papers (Hardy et al. 2026, Krsteski et al. 2026, the
DDR paper 2026) and list the full entries of exactly the works they cite.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from ddr_explorer.core.cli import build_parser, main
from ddr_explorer.core.references import REFERENCES, cite, cited_keys, reference_entries, references_text

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "resources" / "demo" / "terminal-bench-2.csv"
FAILURE_DEMO = ROOT / "resources" / "demo" / "failure-modes-SIMULATED.csv"
SEED = re.compile(r"seed ?0{2}\d", re.I)
#: Hardy et al. 2026, Table 8 (pooled HAL fit, posterior means of sigma).
TABLE8_SD = {"model": 0.78, "benchmark:model": 0.52, "model:scaffold": 0.36, "benchmark:model:scaffold": 0.55,
             "benchmark:task:model": 0.88, "scaffold": 0.79, "benchmark": 2.45, "benchmark:task": 2.41,
             "benchmark:scaffold": 0.69, "benchmark:task:scaffold": 1.03}


def _report_helpers():
    """tests/test_report.py's stand-in fits and PDF reader (pytest imports test modules by path)."""
    name = "ddr_test_report_helpers"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("test_report.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def test_cite_forms_and_table():
    assert cite("hardy2026", "App. G.5") == "Hardy et al. 2026, App. G.5"
    assert cite("krsteski2026") == "Krsteski et al. 2026"
    assert cite("ddr2026", "sec. 5.4") == "DDR paper 2026, sec. 5.4"
    with pytest.raises(KeyError):
        cite("seed000")
    shorts = [r.short for r in REFERENCES.values()]
    # no short form inside another, so a text's citations read back unambiguously
    assert not [(a, b) for a in shorts for b in shorts if a != b and a in b]
    for r in REFERENCES.values():
        assert r.short[-4:] in r.full and not SEED.search(r.full)
    assert cited_keys("as Vehtari et al. 2021 and Hardy et al.\n2026, Eq. 7 say") == ["hardy2026", "vehtari2021"]
    assert reference_entries(["vehtari2021", "hardy2026"]) == [REFERENCES["hardy2026"].full,
                                                              REFERENCES["vehtari2021"].full]


@pytest.fixture(scope="module")
def pooled_sheet_text(tmp_path_factory) -> list[str]:
    """The text of each page of a pooled sheet with every supplied analysis and a budget (stand-in fit)."""
    h = _report_helpers()
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.report import build_sheet, report_inputs_from

    sim = h._simulate_module()
    s = sim.simulate_pooled(seed=3, n_models=12, n_everywhere=4, model_scale=0.6, pair_scale=0.5,
                            benchmarks=sim.HAL_BENCHMARKS[:3])
    path = tmp_path_factory.mktemp("refs") / "pooled.csv"
    s.table.to_csv(path, index=False)
    corpus = load_corpus(path)
    comps = h.synthetic_components(sim.HAL_SIGMAS, 0.15, n_draws=500, source="stand-in pooled fit")
    theta, names = h.synthetic_theta(corpus.table, n_draws=500, sd=0.3)
    inputs = report_inputs_from(corpus, comps, theta, model_names=names, fit_info=h.CONVERGED, budget=2000.0,
                                analyses=h._pooled_analyses())
    return h.pdf_pages(build_sheet(inputs, path.with_suffix(".pdf"), date_invariant=True))


def test_sheet_cites_by_author_year_and_lists_exactly_the_works_cited(pooled_sheet_text):
    pages = pooled_sheet_text
    text = " ".join(pages)
    assert not SEED.search(text), SEED.search(text)
    # the pages name the papers
    assert "Hardy et al. 2026, Eq. 7" in text and "DDR paper 2026, sec. 5.4" in text
    assert "Vehtari, Gelman and Gabry 2017" in text and "Vehtari et al. 2021" in text
    # the References block closes the last page: the entries of the keys the pages cite, and no other
    assert text.count(" References ") == 1 and " References " in pages[-1]
    body, refs = text.split(" References ")
    cited = cited_keys(body)
    assert {"hardy2026", "ddr2026", "brennan2001", "vehtari2017", "vehtari2021"} <= set(cited)
    for key, ref in REFERENCES.items():
        assert (ref.full in refs) == (key in cited), key
    assert REFERENCES[cited[-1]].full in pages[-1]


def _run(capsys, *argv) -> str:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out + out.err


def test_cli_text_and_help_cite_by_author_year(capsys, tmp_path):
    table8 = tmp_path / "table8.json"
    table8.write_text(json.dumps({"scale": "sd", "components": TABLE8_SD}))
    texts = {"inspect": _run(capsys, "inspect", DEMO),
             "dstudy": _run(capsys, "dstudy", "--components", table8),
             "dstudy --json": _run(capsys, "dstudy", "--components", table8, "--json"),
             "frontier": _run(capsys, "analyses", FAILURE_DEMO, "--which", "frontier", "--quiet")}
    parser = build_parser()
    texts["--help"] = parser.format_help()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    texts.update({f"{name} --help": p.format_help() for name, p in sub.choices.items()})
    for what, text in texts.items():
        assert not SEED.search(text), (what, SEED.search(text))
    assert "Connectivity (Hardy et al. 2026, App. E)" in texts["inspect"]
    assert '"equation": "Hardy et al. 2026, Eq. 7"' in texts["dstudy --json"]
    assert "(Krsteski et al. 2026, sec. 5.1" in texts["frontier"]
    assert "(default 50, DDR paper 2026)" in re.sub(r"\s+", " ", texts["analyses --help"])
    # `ddr --help` lists every work once
    assert references_text() in texts["--help"]
    assert all(texts["--help"].count(r.full) == 1 for r in REFERENCES.values())


def test_readme_lists_every_reference_once():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "## References" in readme and not SEED.search(readme)
    assert all(readme.count(r.full) == 1 for r in REFERENCES.values())


def test_user_guide_lists_every_reference_once_and_cites_no_seed():
    """The user guide (docs/guide/, built by `make docs`) is user-facing text: papers by author and year."""
    pages = sorted((ROOT / "docs" / "guide").glob("*.md")) + [ROOT / "docs" / "index.md"]
    assert len(pages) > 10
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not SEED.search(text), (page.name, SEED.search(text))
    refs = (ROOT / "docs" / "guide" / "references.md").read_text(encoding="utf-8")
    assert all(refs.count(r.full) == 1 for r in REFERENCES.values())


def test_modules_pointing_at_a_seed_paper_name_it_in_words():
    """Maintainers' "seed 000 sec. X" pointers may stay, but each module says once which paper it means."""
    names = {"0": ("Hardy",), "2": ("Krsteski",), "3": ("DDR paper", "Deployment Decision Reliability")}
    unnamed = []
    for path in sorted([*(ROOT / "core").rglob("*.py"), *(ROOT / "gui").rglob("*.py")]):
        src = path.read_text(encoding="utf-8")
        for n in sorted(set(re.findall(r"[Ss]eed ?00([023])", src))):
            if not any(w in src for w in names[n]):
                unnamed.append(f"{path.relative_to(ROOT)}: seed 00{n}")
    assert not unnamed, unnamed
