"""The one atomic-write helper: a failed write leaves the old file, a good one replaces it."""

import os

import pytest

from ddr_explorer.core.files import atomic_path, default_cache_dir, write_text_atomic


def test_atomic_path_replaces_on_success_and_keeps_old_file_on_failure(tmp_path):
    target = tmp_path / "state.json"
    write_text_atomic(target, "old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("crash mid-write")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["state.json"]  # no temporary file left behind
    write_text_atomic(target, "new")
    assert target.read_text() == "new"
    assert os.listdir(tmp_path) == ["state.json"]


def test_missing_folder_is_named_or_made(tmp_path):
    with pytest.raises(OSError, match="does not exist. Fix: create it"):
        write_text_atomic(tmp_path / "nope" / "f.txt", "x")
    p = write_text_atomic(tmp_path / "made" / "f.txt", "x", make_parents=True)
    assert p.read_text() == "x"


def test_default_cache_dir_follows_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("DDR_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("DDR_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert default_cache_dir() == tmp_path / "x" / "ddr-explorer"


def test_keep_suffix_lets_writers_pick_the_format(tmp_path):
    target = tmp_path / "plot.png"
    with atomic_path(target, keep_suffix=True) as tmp:
        assert tmp.suffix == ".png" and tmp.parent == tmp_path and tmp.name.startswith(".plot.png.")
        tmp.write_bytes(b"\x89PNG")
    assert target.read_bytes() == b"\x89PNG" and os.listdir(tmp_path) == ["plot.png"]


def test_written_files_get_the_mode_a_plain_write_gives(tmp_path):
    umask = os.umask(0o022)
    try:
        new = write_text_atomic(tmp_path / "new.txt", "x")
        assert os.stat(new).st_mode & 0o777 == 0o644  # not mkstemp's 0600
        os.chmod(new, 0o640)
        write_text_atomic(new, "y")
        assert os.stat(new).st_mode & 0o777 == 0o640  # a rewritten file keeps its mode
    finally:
        os.umask(umask)
