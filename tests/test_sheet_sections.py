"""A section of the DDR sheet that cannot be built or laid out is left out, named, and the rest is written.

Each failure is provoked where a real one would come from: a figure function of a section returns
something that is not a flowable (a nested list, a bare string), raises, or returns a flowable that
cannot be laid out.  The sheet then leaves that section out with a line saying why, ``ddr report``
prints the same line on stderr and exits 4, and nothing ends in a traceback.  The fit is the suite's
moment stand-in (``batch_fakes.moment_fit``): the layout is under test, not the posterior.
"""

from __future__ import annotations

import importlib.util
import io
import re
import sys
import warnings
from pathlib import Path

import pytest

pytest.importorskip("reportlab", reason="the DDR sheet needs reportlab (pip install reportlab)")
pypdf = pytest.importorskip("pypdf", reason="reading PDF text needs pypdf (pip install pypdf)")

from reportlab.platypus import KeepTogether, Paragraph, SimpleDocTemplate, Spacer, Table  # noqa: E402
from reportlab.platypus.doctemplate import LayoutError  # noqa: E402
from reportlab.platypus.flowables import Flowable  # noqa: E402

from ddr_explorer.core.cli import main  # noqa: E402
from ddr_explorer.core.errors import DDRWarning  # noqa: E402
from ddr_explorer.core.report import figures, report_inputs_from, sheet_content  # noqa: E402
from ddr_explorer.core.report import sheet as sheet_module  # noqa: E402
from ddr_explorer.core.report import styles  # noqa: E402
from ddr_explorer.core.report.sections import LeftOutSection, SheetLayoutError, check_flowables  # noqa: E402
from ddr_explorer.core.report.sheet import lay_out_sheet, render_sheet, write_sheet  # noqa: E402

SECTIONS = ["2 \u00b7 The design study in detail", "3 \u00b7 What reliability costs",
            "4 \u00b7 Hard tasks and replications", "6 \u00b7 Diagnostics and data coverage", "7 \u00b7 Method notes"]


def pages_of(data_or_path) -> list[str]:
    src = io.BytesIO(data_or_path) if isinstance(data_or_path, bytes) else str(data_or_path)
    return [re.sub(r"\s+", " ", p.extract_text() or "") for p in pypdf.PdfReader(src).pages]


@pytest.fixture(scope="module")
def small():
    """A small simulated corpus (4 models, 2 scaffolds, 8 tasks) and its moment stand-in fit."""
    import ddr_batch_fakes as bf

    sim = bf.simulate_module().simulate_per_benchmark(n_tasks=8, n_models=4, n_scaffolds=2, n_pairs=8,
                                                      trials_per_cell=2, seed=9)
    corpus = bf.corpus_of(sim.table, name="small")
    return corpus, bf.moment_fit(corpus)


@pytest.fixture(scope="module")
def content(small):
    corpus, post = small
    return sheet_content(report_inputs_from(corpus, posterior=post))


class _Unplaceable(Flowable):
    """A flowable reportlab cannot lay out, as a figure that draws wrongly for some corpus would be."""

    def wrap(self, aw, ah):
        raise LayoutError("Flowable <_Unplaceable> too large on page 5")

    def draw(self):  # pragma: no cover - never reached
        pass


# ---------------------------------------------------------------------------
# The type check
# ---------------------------------------------------------------------------

def test_check_flowables_names_the_section_and_the_element():
    ss = styles.stylesheet()
    ok = [Paragraph("a", ss["body"]), Table([["text", [Paragraph("b", ss["body"])], None]]),
          KeepTogether([Spacer(1, 2)])]
    check_flowables("ranks and dominance", ok)  # strings, None and lists of flowables are fine inside a cell
    for part, words in (([Paragraph("a", ss["body"]), [Spacer(1, 2)]], ("item 2", "list")),
                        (["a bare string"], ("item 1", "str")),
                        ([None], ("item 1", "NoneType")),
                        ([KeepTogether([Spacer(1, 2), "loose"])], ("item 1 > item 2", "str")),
                        ([Table([[["nested", Spacer(1, 2)]]])], ("item 1 > cell (1, 1) > item 1", "str"))):
        with pytest.raises(TypeError) as info:
            check_flowables("ranks and dominance", part)
        text = str(info.value)
        assert "section 'ranks and dominance'" in text and all(w in text for w in words), text
    with pytest.raises(TypeError, match="section 'cost' returned NoneType, not a list"):
        check_flowables("cost", None)


# ---------------------------------------------------------------------------
# Left out, named, the rest laid out
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("figure, returns, section, reason", [
    ("rank_dominance_figure", lambda *a, **k: [Spacer(1, 2)], "ranks and dominance", "TypeError: the builder of "
     "section 'ranks and dominance' returned a list"),
    ("rank_dominance_figure", lambda *a, **k: "a drawing", "ranks and dominance", "returned a str"),
    ("coverage_figure", lambda *a, **k: _Unplaceable(), "diagnostics and data coverage",
     "LayoutError: Flowable <_Unplaceable> too large on page 5"),
], ids=["nested-list", "bare-string", "unplaceable-flowable"])
def test_a_failing_section_is_left_out_with_a_line_saying_why(content, monkeypatch, figure, returns, section, reason):
    monkeypatch.setattr(figures, figure, returns)
    layout = lay_out_sheet(content, date_invariant=True)
    assert [s.section for s in layout.left_out] == [section] and not layout.complete
    assert reason in layout.left_out[0].reason
    pages = pages_of(layout.data)
    text = " ".join(pages)
    assert f"Section left out: {section}." in text and "The rest of the sheet is complete" in text
    assert "Five decisions for a buyer" in pages[0]
    assert all(s in text for s in SECTIONS if not s.lower().endswith(section))  # every other section is there


def test_a_builder_that_raises_is_left_out_and_a_warning_names_it(content, monkeypatch):
    def boom(*a, **k):
        raise ZeroDivisionError("no tasks in the hardest stratum")

    monkeypatch.setattr(figures, "difficulty_figure", boom)
    with pytest.warns(DDRWarning, match="section 'hard tasks and replications' could not be laid out and was "
                                        r"left out \(ZeroDivisionError: no tasks in the hardest stratum\)"):
        data = render_sheet(content, date_invariant=True)
    text = " ".join(pages_of(data))
    assert "Section left out: hard tasks and replications." in text and "5 \u00b7 Ranks and dominance" in text


def test_a_complete_sheet_has_nothing_left_out(content):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        layout = lay_out_sheet(content, date_invariant=True)
    assert layout.complete and layout.left_out == ()
    assert render_sheet(content, date_invariant=True) == layout.data  # the same bytes as before the check


def test_a_failure_outside_every_section_is_one_clear_error(content, monkeypatch):
    monkeypatch.setattr(sheet_module, "footer_lines", lambda inputs, date: ["<b>unclosed markup"])
    with pytest.raises(SheetLayoutError, match="the DDR sheet could not be laid out"):
        lay_out_sheet(content, date_invariant=True)


def test_write_sheet_returns_what_was_left_out(small, tmp_path, monkeypatch):
    corpus, post = small
    monkeypatch.setattr(figures, "rank_dominance_figure", lambda *a, **k: [Spacer(1, 2)])
    written = write_sheet(report_inputs_from(corpus, posterior=post), tmp_path / "s.pdf", date_invariant=True)
    assert written.path.read_bytes()[:5] == b"%PDF-" and not written.complete
    left = written.left_out[0]
    assert isinstance(left, LeftOutSection) and written.message() == left.message()
    assert left.message().startswith("the DDR sheet's section 'ranks and dominance' could not be laid out and was "
                                     "left out (TypeError: ")


# ---------------------------------------------------------------------------
# The shrink-to-fit block (the cause of the py-irt leaderboard's traceback)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("tall", [300.0, 3 * styles.FRAME_HEIGHT])
def test_a_block_that_does_not_fit_moves_to_the_next_page_and_shrinks_there(tall):
    """Under a nearly full page the block moves whole to the next page (reportlab asked it to split and got its
    own Frame back before); taller than a page, it is shrunk to fit the next one."""
    buf = io.BytesIO()
    doc = SimpleDocTemplate(buf, pagesize=styles.PAGE_SIZE)
    block = sheet_module._ShrinkToFit([Paragraph("coverage", styles.stylesheet()["body"]), Spacer(1, tall)])
    doc.build([Spacer(1, doc.height - 60), block])
    assert len(pages_of(buf.getvalue())) == 2 and "coverage" in pages_of(buf.getvalue())[1]


# ---------------------------------------------------------------------------
# ddr report: exit 4 and the same line on stderr; 1 and a reason, never a traceback
# ---------------------------------------------------------------------------

@pytest.fixture
def small_file(tmp_path):
    """A small leaderboard file (``tests/report_shapes.py``: 4 models, 6 tasks, single binary responses)."""
    spec = importlib.util.spec_from_file_location("ddr_report_shapes_sections",
                                                  Path(__file__).with_name("report_shapes.py"))
    shapes = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = shapes  # dataclasses look their module up while the class is built
    spec.loader.exec_module(shapes)
    return shapes.write_corpus(shapes.Shape("small", models=4, tasks=6), tmp_path)


def test_ddr_report_exits_4_and_names_the_section_left_out(small_file, tmp_path, fake_sampler, monkeypatch, capsys):
    monkeypatch.setattr(figures, "rank_dominance_figure", lambda *a, **k: [Spacer(1, 2)])
    out = tmp_path / "sheet.pdf"
    rc = main(["report", str(small_file), "-o", str(out), "--no-cache", "--analyses", "none", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 4, err
    assert ("ddr: the DDR sheet's section 'ranks and dominance' could not be laid out and was left out (TypeError: "
            "the builder of section 'ranks and dominance' returned a list") in err
    assert "the rest of the sheet was written, and the fit is kept" in err
    assert f"ddr: wrote {out} (new fit), without 1 of its sections (exit status 4)" in err
    assert "Traceback" not in err
    pages = pages_of(out)
    assert "Five decisions for a buyer" in pages[0] and "Section left out: ranks and dominance." in " ".join(pages)


def test_ddr_report_never_ends_in_a_traceback(small_file, tmp_path, fake_sampler, monkeypatch, capsys):
    def broken(inputs):
        raise KeyError("capability_gap_ratio")

    monkeypatch.setattr(sheet_module, "sheet_content", broken)
    out = tmp_path / "sheet.pdf"
    rc = main(["report", str(small_file), "-o", str(out), "--no-cache", "--analyses", "none", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 1 and not out.exists()
    assert "ddr: the DDR sheet could not be written (KeyError: 'capability_gap_ratio'); any fit made is kept" in err
