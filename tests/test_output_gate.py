"""The output gate (core/files.py check_output): no writer replaces an input, a device, a FIFO or a folder,
nor a side file the user did not ask to replace, nor writes a format its file name does not say."""

from __future__ import annotations

import os
import stat

import pytest

from ddr_explorer.core.cli import main as ddr
from ddr_explorer.core.files import OutputRefused, atomic_path, check_output, write_text_atomic

CSV = "benchmark,task,model,scaffold,result\nb,t1,m1,s,1\nb,t2,m1,s,0\nb,t1,m2,s,0\nb,t2,m2,s,1\n"


@pytest.fixture
def corpus(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text(CSV)
    return p


def _device(path):
    """A character device like /dev/null (major 1, minor 3), made in the test's folder; root only."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root")
    return path


def test_report_onto_its_own_corpus_is_refused_before_any_fit(corpus, capsys):
    before = corpus.read_bytes()
    assert ddr(["report", str(corpus), "-o", str(corpus), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert f"{corpus}: this is the input file {corpus}; writing the output would destroy it. Fix: name another" in err
    assert corpus.read_bytes() == before


def test_the_sheet_writer_itself_refuses_its_corpus(corpus):
    """The app and scripts call write_ddr_sheet without the CLI's check: the gate is in the writer too."""
    from ddr_explorer.core.ddr_sheet import write_ddr_sheet

    with pytest.raises(OutputRefused, match="this is the input file"):
        write_ddr_sheet(corpus, corpus, use_cache=False)
    assert corpus.read_text() == CSV


def test_report_to_a_pdf_name_only(corpus, tmp_path, capsys):
    assert ddr(["report", str(corpus), "-o", str(tmp_path / "sheet.png"), "--no-cache"]) == 2
    assert "cannot write a '.png' file here. Fix: name a file ending in one of .pdf." in capsys.readouterr().err


def test_report_onto_a_link_to_its_corpus_is_refused(corpus, tmp_path, capsys):
    link = tmp_path / "sheet.pdf"
    link.symlink_to(corpus)
    assert ddr(["report", str(corpus), "-o", str(link), "--no-cache"]) == 2
    assert "this is the input file" in capsys.readouterr().err
    assert corpus.read_text() == CSV and link.is_symlink()


def test_convert_onto_its_input_through_another_spelling_is_refused(corpus, tmp_path, capsys):
    other = tmp_path / "." / "sub" / ".." / "c.csv"
    (tmp_path / "sub").mkdir()
    assert ddr(["convert", str(corpus), "-o", str(other)]) == 2
    assert f"this is the input file {corpus}" in capsys.readouterr().err
    assert corpus.read_text() == CSV


@pytest.mark.parametrize("to", ["canonical", "py-irt"])
def test_convert_onto_a_device_leaves_the_node(corpus, tmp_path, capsys, to):
    node = _device(tmp_path / ("null.csv" if to == "canonical" else "null.jsonl"))
    assert ddr(["convert", str(corpus), "--to", to, "-o", str(node)]) == 2
    assert "this is a character device, not a regular file" in capsys.readouterr().err
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_atomic_path_refuses_a_fifo_a_folder_and_an_input(tmp_path):
    fifo = tmp_path / "p.csv"
    os.mkfifo(fifo)
    with pytest.raises(OutputRefused, match=r"named pipe \(FIFO\), not a regular file"):
        write_text_atomic(fifo, "x")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    with pytest.raises(OutputRefused, match="this is a folder"):
        write_text_atomic(tmp_path, "x")
    src = tmp_path / "in.txt"
    src.write_text("keep")
    with pytest.raises(OutputRefused, match="this is the input file"):
        with atomic_path(src, inputs=[tmp_path / "." / "in.txt"]):
            pass
    assert src.read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "p.csv"]  # no temporary left


def test_unknown_output_extension_is_refused_with_the_list(corpus, tmp_path, capsys):
    assert ddr(["convert", str(corpus), "-o", str(tmp_path / "x.xlsx")]) == 2
    assert "cannot write a '.xlsx' file here. Fix: name a file ending in one of .csv, .tsv, .jsonl, .parquet." in \
        capsys.readouterr().err
    assert not (tmp_path / "x.xlsx").exists()


@pytest.mark.parametrize("target, words", [("", "the output path is empty"),
                                           ("missing/x.csv", "does not exist. Fix: create it or choose another path."),
                                           ("afile/x.csv", "is not a folder")])
def test_convert_to_an_impossible_place_says_so(corpus, tmp_path, capsys, target, words):
    (tmp_path / "afile").write_text("x")
    out = str(tmp_path / target) if target else ""
    assert ddr(["convert", str(corpus), "-o", out]) == 2
    assert words in capsys.readouterr().err


def test_pyirt_export_keeps_the_users_alias_file_unless_forced(corpus, tmp_path, capsys):
    out = tmp_path / "o.jsonl"
    mine = tmp_path / "o.aliases.toml"
    mine.write_text("[models]\nmine = 'my own mapping'\n")
    assert ddr(["convert", str(corpus), "--to", "py-irt", "-o", str(out)]) == 2
    assert f"{mine}: a file of that name exists and was not written by ddr" in capsys.readouterr().err
    assert mine.read_text() == "[models]\nmine = 'my own mapping'\n" and not out.exists()
    assert ddr(["convert", str(corpus), "--to", "py-irt", "-o", str(out), "--force"]) == 0
    assert mine.read_text().startswith("# Written by ddr convert --to py-irt")
    # its own alias file is rewritten by the same command run again, without --force
    assert ddr(["convert", str(corpus), "--to", "py-irt", "-o", str(out)]) == 0


def test_a_link_to_a_regular_file_rewrites_the_file_not_the_link(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    write_text_atomic(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_check_output_passes_a_new_file(tmp_path):
    assert check_output(tmp_path / "new.csv", suffixes=(".csv",)) == tmp_path / "new.csv"


def test_the_apps_corpus_is_protected_from_every_writer(corpus, tmp_path):
    """The app's exports know no corpus path: the corpus it opened is protected for the whole process."""
    from ddr_explorer.core.files import protect_inputs

    protect_inputs([corpus])
    try:
        with pytest.raises(OutputRefused, match=f"this is the input file {corpus}"):
            write_text_atomic(corpus, "table,exported\n")
        write_text_atomic(tmp_path / "elsewhere.csv", "x")  # any other file is written
    finally:
        protect_inputs([])
    assert corpus.read_text() == CSV
    write_text_atomic(corpus, CSV)  # no longer protected once the app shows another corpus
