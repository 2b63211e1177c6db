"""A full disk while a fit is stored: the fit's results are printed, one line says the cache failed, nothing
is left behind, and the process does not die (HDF5 meeting a full disk ended it with signal 11)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ddr_explorer.core.cache as cache_module
from ddr_explorer.core.cache import CacheWriteError, FitCache
from ddr_explorer.core.cli import main as ddr
from ddr_explorer.core.files import atomic_path

sys.path.insert(0, str(Path(__file__).resolve().parent / "hostile"))
import hostile_cases as hc  # noqa: E402

HALF = 4096


def _disk_fills_up(path, data, **kwargs):
    """write_bytes_atomic on a disk that has room for HALF bytes: ENOSPC mid-write."""
    with atomic_path(path, **kwargs) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(bytes(data[:HALF]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp))


def test_store_on_a_full_disk_is_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_module, "write_bytes_atomic", _disk_fills_up)
    with pytest.raises(CacheWriteError) as info:
        FitCache(tmp_path).store(hc.CACHE_KEY, hc._cache_entry())
    assert str(info.value) == (f"the fit could not be stored in the cache folder {tmp_path} (No space left on "
                               "device); the results stand, but the next run fits again")
    assert os.listdir(tmp_path) == []  # no .fit-*.tmp


def test_ddr_fit_prints_its_results_when_the_cache_is_full(tmp_path, monkeypatch, capsys, fake_sampler):
    corpus = tmp_path / "c.csv"
    corpus.write_text("benchmark,task,model,scaffold,result\n" + "".join(
        f"b,t{t},m{m},s,{(t * m + t) % 2}\n" for t in range(6) for m in range(3)))
    monkeypatch.setattr(cache_module, "write_bytes_atomic", _disk_fills_up)
    cache = tmp_path / "cache"
    code = ddr(["fit", str(corpus), "--cache", str(cache), "--draws", "20", "--warmup", "10", "--chains", "2",
                "--formula", "y ~ (1|task) + (1|model)", "--json", "--quiet"])
    out = capsys.readouterr()
    assert code in (0, 3)  # the fit's own verdict decides; the cache does not change it
    result = json.loads(out.out)
    assert set(result["components"]) == {"task", "model"} and result["cache"]["path"] is None
    lines = [x for x in out.err.splitlines() if "could not be stored" in x]
    assert len(lines) == 1 and "No space left on device" in lines[0]
    assert [p.name for p in cache.iterdir()] == []


def test_hdf5_meeting_a_size_limit_does_not_kill_the_process(tmp_path):
    """The real write path, no monkeypatch: a 64 KiB file-size limit (RLIMIT_FSIZE, EFBIG) stands in for a
    64 KiB tmpfs.  Before the file was built in memory this died with a segmentation fault in h5netcdf's
    close (it flushes attributes into the file HDF5's failed write had broken)."""
    script = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parent / "hostile")!r})
        import numpy as np
        import hostile_cases as hc
        from ddr_explorer.core.cache import CacheWriteError, FitCache
        entry = hc._cache_entry()
        entry.arrays["posterior/big"] = np.random.default_rng(0).normal(size=(2, 50, 2000))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))
        try:
            FitCache({str(tmp_path)!r}).store(hc.CACHE_KEY, entry)
        except CacheWriteError as exc:
            print("refused:", exc)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "refused: the fit could not be stored in the cache folder" in proc.stdout
    assert "File too large" in proc.stdout
    assert os.listdir(tmp_path) == []


def test_a_sheet_that_cannot_be_written_exits_1_and_leaves_nothing(tmp_path, monkeypatch, capsys, fake_sampler):
    """The guide: exit 1 when no sheet could be written (a full disk after the fit), never 2 (bad input)."""
    import ddr_explorer.core.report.sheet as sheet

    corpus = tmp_path / "c.csv"
    corpus.write_text("benchmark,task,model,scaffold,result\n" + "".join(
        f"b,t{t},m{m},s,{(t * m + t) % 2}\n" for t in range(6) for m in range(3)))
    monkeypatch.setattr(sheet, "write_bytes_atomic", _disk_fills_up)
    out = tmp_path / "out"
    out.mkdir()
    code = ddr(["report", str(corpus), "-o", str(out / "sheet.pdf"), "--cache", str(tmp_path / "cache"),
                "--analyses", "none", "--draws", "20", "--warmup", "10", "--chains", "2", "--quiet",
                "--formula", "y ~ (1|task) + (1|model)"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert f"the DDR sheet could not be written to {out / 'sheet.pdf'} (No space left on device)" in err
    assert list(out.iterdir()) == [] and len(list((tmp_path / "cache").glob("fit-*.h5"))) == 1  # the fit is kept
