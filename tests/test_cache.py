"""The fit cache (an ArviZ netCDF-4 file): round trip, corruption, old files, concurrency."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

from ddr_explorer.core.cache import CacheEntry, FitCache, cache_key


def entry(seed=0) -> CacheEntry:
    rng = np.random.default_rng(seed)
    return CacheEntry(arrays={"posterior/sigma_task": rng.gamma(2, 1, (4, 250)),
                              "posterior/u_model": rng.normal(0, 1, (4, 250, 29)).astype(np.float32),
                              "sample_stats/diverging": rng.random((4, 250)) < 0.1,
                              "sample_stats/n_steps": rng.integers(1, 64, (4, 250))},
                      meta={"spec": {"terms": ["task", "model"]}, "settings": {"draws": 250}, "note": "é"},
                      dims={"posterior/u_model": ["chain", "draw", "model"]},
                      coords={"model": [f"m{i}" for i in range(29)]})


KEY = cache_key(corpus_hash="abc", spec={"terms": ["task"]}, priors={"sigma": [3, 0, 2.5]}, settings={"draws": 250})


def test_key_changes_with_every_input():
    base = dict(corpus_hash="abc", spec={"terms": ["task"]}, priors={"sigma": [3, 0, 2.5]}, settings={"draws": 250})
    keys = {cache_key(**base)}
    for k, v in [("corpus_hash", "abd"), ("spec", {"terms": ["model"]}), ("priors", {"sigma": [3, 0, 1]}),
                 ("settings", {"draws": 251})]:
        keys.add(cache_key(**{**base, k: v}))
    keys.add(cache_key(**base, version="9.9"))
    keys.add(cache_key(**base, format_version=1))  # an old format's file is never read as this one's
    assert len(keys) == 7
    assert cache_key(**base) == cache_key(**dict(reversed(list(base.items()))))


def test_round_trip(tmp_path):
    cache = FitCache(tmp_path)
    e = entry()
    path = cache.store(KEY, e)
    got, problem = cache.load(KEY)
    assert problem is None and path.exists()
    assert got.meta == e.meta
    for name, arr in e.arrays.items():
        np.testing.assert_array_equal(got.arrays[name], arr)
        assert got.arrays[name].dtype == arr.dtype
    assert got.dims["posterior/u_model"] == ["chain", "draw", "model"]
    assert got.coords == {"model": [f"m{i}" for i in range(29)]}
    assert not list(tmp_path.glob("*.tmp"))  # no temporary left behind
    with h5py.File(path) as f:  # readable with plain h5py, nothing pickled
        assert f["posterior/sigma_task"].shape == (4, 250)


def test_absent_key(tmp_path):
    assert FitCache(tmp_path).load(KEY) == (None, None)


def test_truncated_file_is_reported(tmp_path):
    cache = FitCache(tmp_path)
    path = cache.store(KEY, entry())
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    got, problem = cache.load(KEY)
    assert got is None and problem is not None and "refitting" in str(problem)


def test_flipped_bytes_fail_the_checksum(tmp_path):
    cache = FitCache(tmp_path)
    e = CacheEntry(arrays={"x": np.arange(100_000, dtype=np.float64)}, meta={})
    path = cache.store(KEY, e)
    with h5py.File(path, "r+") as f:  # corrupt the data but not the stored checksum
        f["ddr_arrays/x"][10] = -1.0
    got, problem = cache.load(KEY)
    assert got is None and "checksum" in problem.reason


@pytest.mark.parametrize("make", ["text", "foreign_h5", "other_key", "incomplete"])
def test_foreign_files_are_rejected(tmp_path, make):
    cache = FitCache(tmp_path)
    path = cache.path_for(KEY)
    tmp_path.mkdir(exist_ok=True)
    if make == "text":
        path.write_text("not hdf5")
    elif make == "foreign_h5":
        with h5py.File(path, "w") as f:
            f["data"] = np.arange(3)
    else:
        cache.store(KEY, entry())
        with h5py.File(path, "r+") as f:
            if make == "other_key":
                f.attrs["key"] = "0" * 64
            else:
                del f.attrs["n_arrays"]
    got, problem = cache.load(KEY)
    assert got is None and problem is not None


def write_old_format(path: Path, key: str) -> None:
    """A fit file as format version 1 wrote it (plain HDF5: one dataset per array, a "complete" group)."""
    import hashlib
    import json

    with h5py.File(path, "w") as f:
        f.attrs["format"] = "ddr-explorer-fit"
        f.attrs["format_version"] = 1
        f.attrs["key"] = key
        f.attrs["package_version"] = "0.1.0"
        f.attrs["meta"] = json.dumps({"spec": {"terms": ["task"]}})
        arr = np.ones((2, 5))
        ds = f.create_dataset("posterior/sigma/task", data=arr)
        ds.attrs["sha256"] = hashlib.sha256(arr.tobytes()).hexdigest()
        ds.attrs["dims"] = json.dumps(["chain", "draw"])
        f.create_group("complete").attrs["n_arrays"] = 1


def test_an_old_format_file_is_reported_as_old(tmp_path):
    from ddr_explorer.core.cache import CacheFileError, read_fit_file

    cache = FitCache(tmp_path)
    old_key = cache_key(corpus_hash="abc", spec={"terms": ["task"]}, priors={"sigma": [3, 0, 2.5]},
                        settings={"draws": 250}, format_version=1)
    assert old_key != KEY
    path = cache.path_for(old_key)
    write_old_format(path, old_key)
    with pytest.raises(CacheFileError, match="old-format file"):
        read_fit_file(path)
    assert cache.load(KEY) == (None, None)  # the new key never reads the old file ...
    got, problem = cache.load(KEY, old_keys=(old_key,))  # ... but says that it is there and old
    assert got is None and problem.path == path and "old-format file" in str(problem)
    assert "refitting" in str(problem)
    # the same file at the new key's place (renamed by hand) is refused too, never read as version 2
    path.rename(cache.path_for(KEY))
    got, problem = cache.load(KEY)
    assert got is None and "old-format" in problem.reason


def test_dimension_lengths_must_agree(tmp_path):
    e = CacheEntry(arrays={"posterior/a": np.zeros((4, 10)), "posterior/b": np.zeros((3, 10))},
                   dims={"posterior/a": ["chain", "draw"], "posterior/b": ["chain", "draw"]})
    with pytest.raises(ValueError, match="chain"):
        FitCache(tmp_path).store(KEY, e)
    assert not list(tmp_path.glob("*"))  # nothing left behind


def test_non_numeric_arrays_are_refused(tmp_path):
    with pytest.raises(TypeError):
        FitCache(tmp_path).store(KEY, CacheEntry(arrays={"x": np.array(["a"], dtype=object)}))


WORKER = """
import sys, numpy as np
from ddr_explorer.core.cache import CacheEntry, FitCache
root, key, role, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
cache = FitCache(root)
rng = np.random.default_rng(0)
e = CacheEntry(arrays={"posterior/sigma_task": np.arange(200_000, dtype=np.float64)}, meta={"n": 1})
seen = 0
for _ in range(n):
    if role == "write":
        cache.store(key, e)
    else:
        got, problem = cache.load(key)
        if problem is not None:
            print("PROBLEM", problem); sys.exit(1)
        seen += got is not None and got.arrays["posterior/sigma_task"][-1] == 199_999
print(seen)
"""


def test_two_processes_writing_and_one_reading_one_key(tmp_path):
    import subprocess
    import sys

    FitCache(tmp_path).store(KEY, CacheEntry(arrays={"posterior/sigma_task": np.arange(200_000, dtype=np.float64)},
                                             meta={"n": 1}))
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(tmp_path), KEY, role, n],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for role, n in (("write", "20"), ("write", "20"), ("read", "60"))]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    assert outs[2][0].strip() == "60"  # every read saw a complete, verified file
    got, problem = FitCache(tmp_path).load(KEY)
    assert problem is None and not list(Path(tmp_path).glob("*.tmp"))


def test_ddr_dstudy_on_an_old_format_file_says_it_is_old(tmp_path, capsys):
    from ddr_explorer.core.cli import main

    path = tmp_path / "old-fit.h5"
    write_old_format(path, KEY)
    assert main(["dstudy", str(path), "--n-tasks", "40"]) != 0
    err = capsys.readouterr().err
    assert str(path) in err and "old-format file" in err and "format version 1" in err
