"""Every hostile input of ``hostile_cases.py`` is refused cleanly, in time, within memory.

A clean refusal is what the README promises for bad files: ``ddr`` exits 2 and names the file, the
line (where the format has lines) and a fix; the session loader and the cache reader raise their own
error.  Never a traceback, a hang, a memory blow-up or a silently wrong number.  The Hypothesis
tests mutate valid files at random (a fixed, small budget of examples) and check the same promise.
``bench/hostile_inputs.py`` runs the same cases and prints the table of outcomes.
"""

from __future__ import annotations

import json
import string
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ddr_explorer.core.cli import main as ddr

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hostile_cases as hc  # noqa: E402

#: Seconds one case may take (its file built, read and refused); the whole module runs in well under a minute.
CASE_SECONDS = 8.0
#: Decompression bombs here inflate to 64 MiB (cheap to build); the caps are lowered to meet them.
SMALL_BOMB = 64 << 20

CASES = hc.all_cases(SMALL_BOMB)
IN_PROCESS = [c for c in CASES if "memory" not in c.tags]


@pytest.fixture(scope="module", autouse=True)
def _imports_done():
    """The first case of a kind would otherwise pay the imports (inspect_ai alone takes seconds)."""
    import ddr_explorer.core.analyses.transfer  # noqa: F401
    import ddr_explorer.core.cache  # noqa: F401
    import ddr_explorer.core.inspection  # noqa: F401
    import ddr_explorer.core.session  # noqa: F401

    try:
        import inspect_ai.log  # noqa: F401
    except ImportError:
        pass


def test_the_suite_covers_every_format_with_at_least_150_cases():
    kinds = {c.kind for c in CASES}
    assert len(CASES) >= 150 and kinds == {"cli", "session", "cache", "family"}
    names = " ".join(c.name for c in CASES)
    for fmt in ("csv-", "tsv-", "jsonl-", "parquet-", "terminal-bench-", "pyirt-", "normalized-", "inspect-",
                "aliases-", "side-", "families-", "session-", "cache-", "fifo", "door-side-", "door-output-"):
        assert fmt in names, fmt


@pytest.mark.parametrize("case", IN_PROCESS, ids=[c.name for c in IN_PROCESS])
def test_hostile_input_is_refused_cleanly(case, tmp_path):
    out = hc.run_case(case, tmp_path, time_limit=4 * CASE_SECONDS)  # past it: a hang
    assert out.status == "clean", f"{case.name}: {out.status}: {out.message}"
    # CPU seconds: on a shared box the wall clock also counts other people's work
    assert out.cpu_seconds < CASE_SECONDS, f"{case.name} took {out.cpu_seconds:.1f} s of CPU"


def test_wrong_numbers_of_before_are_refused_with_the_value_as_written(tmp_path, capsys):
    """Trials of 1e30 and of 20 digits were reported as -9223372036854775808; a timestamp became 1.7e15 trials."""
    rows = [list(r) for r in hc.ROWS]
    rows[4][6] = "99999999999999999999"
    rows[7][6] = "0x10"  # pyarrow read this as 16
    p = tmp_path / "c.csv"
    p.write_text(hc._table(rows))
    assert ddr(["inspect", str(p)]) == 2
    err = capsys.readouterr().err
    assert "line 6, column 'trials': '99999999999999999999' is more than 1,000,000,000 trials" in err
    assert "line 9, column 'trials': '0x10' is not a whole number" in err
    assert "-9223372036854775808" not in err


def test_a_result_column_that_contradicts_the_counts_is_refused(tmp_path, capsys):
    rows = [[*r, "1"] for r in hc.ROWS]
    rows[4][5], rows[4][6] = "0", "1"
    p = tmp_path / "c.csv"
    p.write_text(hc._table(rows, header=[*hc.HEADER, "result"]))
    assert ddr(["inspect", str(p)]) == 2
    assert "line 6, column 'result': the result 1 contradicts successes/trials 0/1" in capsys.readouterr().err


def test_lines_are_right_after_a_quoted_newline_and_an_unclosed_quote(tmp_path, capsys):
    case = next(c for c in CASES if c.name == "csv-quoted-newline-then-bad-value")
    argv, _, _ = case.build(tmp_path)
    assert ddr(argv) == 2
    assert "line 12, column 'trials': 'abc'" in capsys.readouterr().err
    case = next(c for c in CASES if c.name == "csv-unterminated-quote")
    argv, _, _ = case.build(tmp_path)
    assert ddr(argv) == 2
    assert "line 6: a quoted value opened on line 6 runs to line 13" in capsys.readouterr().err


def test_jsonl_type_change_names_its_line(tmp_path, capsys):
    case = next(c for c in CASES if c.name == "jsonl-trials-text")
    argv, _, _ = case.build(tmp_path)
    assert ddr(argv) == 2
    assert "line 5, column 'trials': 'trials' is text (\"five\") here but a whole number on line 1" in \
        capsys.readouterr().err


@pytest.mark.parametrize("member", ["header.json", "summaries.json"])
def test_inspect_log_bomb_is_refused_before_inspect_reads_it(tmp_path, monkeypatch, capsys, member):
    from ddr_explorer.core.corpus.importers import inspect_logs

    p = tmp_path / "bomb.eval"
    hc._bomb(p, member, SMALL_BOMB)
    read = []

    def reader(path, **kw):  # inspect_ai's readers, as the importer calls them
        read.append(path)
        raise ValueError("stand-in reader")

    monkeypatch.setattr(inspect_logs, "_inspect_api", lambda path: (reader, reader))
    t0 = time.perf_counter()
    assert ddr(["inspect", str(p), "--format", "inspect", "--max-log-mb", "16"]) == 2
    err = capsys.readouterr().err
    assert f"column '{member}': member '{member}' inflates to 64 MiB" in err and "cap of 16 MiB per member" in err
    assert "--max-log-mb" in err and time.perf_counter() - t0 < CASE_SECONDS
    assert read == []  # refused from the archive's directory: nothing was inflated
    assert ddr(["inspect", str(p), "--format", "inspect", "--max-log-mb", "128"]) == 2  # the cap raised
    assert read == [str(p)] and "cap of" not in capsys.readouterr().err


def test_special_files_are_refused_without_reading_them_in_a_bounded_child(tmp_path):
    """A FIFO blocked ``ddr inspect`` for good and /dev/zero grew without end: a child with 1 GiB and 60 s."""
    fifo = tmp_path / "in.csv"
    import os

    os.mkfifo(fifo)
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_DATA, (1 << 30, 1 << 30)); "
            "from ddr_explorer.core.cli import main; "
            "sys.exit(main(['inspect', sys.argv[1], '--format', 'csv']) + 10 * main(['inspect', '/dev/zero', "
            "'--format', 'csv']))")
    proc = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 + 10 * 2, proc.stderr
    assert f"{fifo}: this is a named pipe (FIFO)" in proc.stderr and "/dev/zero: this is a device" in proc.stderr


def test_cache_folder_that_is_a_file_is_refused_before_the_corpus_is_read(tmp_path, capsys):
    blocker = tmp_path / "cache"
    blocker.write_text("not a folder")
    assert ddr(["fit", str(tmp_path / "missing.csv"), "--preset", "pooled", "--cache", str(blocker)]) == 2
    assert f"{blocker}: the cache folder is a file" in capsys.readouterr().err


def test_stale_temporary_files_are_removed_when_the_cache_opens(tmp_path):
    import os

    from ddr_explorer.core.cache import FitCache

    old, fresh = tmp_path / ".fit-abc.h5.x1.tmp", tmp_path / ".fit-abc.h5.x2.tmp"
    old.write_bytes(b"half a file")
    fresh.write_bytes(b"being written")
    day_ago = time.time() - 2 * 24 * 3600
    os.utime(old, (day_ago, day_ago))
    cache = FitCache(tmp_path)
    assert cache.removed_temporaries == [old] and not old.exists() and fresh.exists()


def test_a_cache_file_whose_model_name_changed_is_not_used(tmp_path):
    """One byte of a model name in the metadata JSON: a cache hit on the wrong models before."""
    from ddr_explorer.core.cache import CacheFileError, read_fit_file

    p = hc._good_cache(tmp_path)
    data = bytearray(p.read_bytes())
    i = bytes(data).find(b'"m2"')
    data[i + 2] = ord("7")
    p.write_bytes(bytes(data))
    with pytest.raises(CacheFileError, match="labels or metadata fail their checksum"):
        read_fit_file(p, expect_key=hc.CACHE_KEY)


# -- property-based fuzzing (fixed budget) ------------------------------------------------------------------------
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FUZZ = settings(max_examples=20, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

_EDIT_TEXT = st.text(alphabet=string.printable + "\x00\x1b\u00e9\u2028\ufeff", max_size=6)
_EDITS = st.lists(st.tuples(st.floats(0, 1), st.integers(0, 4), _EDIT_TEXT), min_size=1, max_size=6)


def _mutate(text: str, edits) -> str:
    for where, cut, insert in edits:
        i = int(where * len(text))
        text = text[:i] + insert + text[i + cut:]
    return text


def _valid_texts() -> dict[str, tuple[str, str]]:
    return {
        "csv": (".csv", hc._table()), "tsv": (".tsv", hc._table(sep="\t")),
        "jsonl": (".jsonl", hc._jsonl(hc._records())),
        "py-irt": (".jsonl", "\n".join(json.dumps({"subject_id": f"s_m{m}", "responses": {f"t{t}": (t + m) % 2
                                                   for t in range(4)}}) for m in range(3)) + "\n"),
        "normalized": (".jsonl", "\n".join(json.dumps({"model": f"m{m}", "benchmark": "b", "task_id": f"t{t}",
                                                       "score": (t + m) % 2}) for t in range(4) for m in range(3))),
        "terminal-bench": (".json", json.dumps(hc._meta({"a": "1/5", "b": "3/5"}), indent=1)),
        "hal": (".csv", "run_id,benchmark,task_id,agent_name,model_name,reasoning_effort,score\n"
                + "".join(f"r{m},b,t{t},a{m % 2},m{m},default,{(t + m) % 2}\n" for t in range(4) for m in range(3))),
    }


@pytest.mark.parametrize("fmt", sorted(_valid_texts()))
def test_fuzzed_corpus_files_load_or_raise_corpus_error(fmt, tmp_path):
    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.corpus.issues import CorpusError

    ext, valid = _valid_texts()[fmt]

    @FUZZ
    @given(edits=_EDITS, as_format=st.booleans())
    def check(edits, as_format):
        p = tmp_path / f"fuzz{ext}"
        p.write_bytes(_mutate(valid, edits).encode("utf-8", "surrogatepass"))
        try:
            corpus = load_corpus(p, fmt if as_format else None)
        except CorpusError as exc:
            assert all(i.file for i in exc.issues) and all(i.fix for i in exc.issues), str(exc)
            return
        t = corpus.table  # accepted: then the counts are counts
        assert (t["trials"] >= 1).all() and (t["successes"] >= 0).all() and (t["successes"] <= t["trials"]).all()
        assert int(t["trials"].max()) <= 10 ** 9

    check()


def test_fuzzed_parquet_bytes_load_or_raise_corpus_error(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.corpus.issues import CorpusError

    cols = {k: [r[i] for r in hc.ROWS] for i, k in enumerate(hc.HEADER)}
    cols["successes"] = [int(v) for v in cols["successes"]]
    cols["trials"] = [int(v) for v in cols["trials"]]
    good = tmp_path / "good.parquet"
    pq.write_table(pa.table(cols), good)
    valid = good.read_bytes()

    @FUZZ
    @given(flips=st.lists(st.tuples(st.integers(0, len(valid) - 1), st.integers(1, 255)), min_size=1, max_size=4))
    def check(flips):
        data = bytearray(valid)
        for i, x in flips:
            data[i] ^= x
        p = tmp_path / "fuzz.parquet"
        p.write_bytes(bytes(data))
        try:
            load_corpus(p)
        except CorpusError:
            pass

    check()


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) |
                     st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                   max_size=3), max_leaves=8)
_FIELDS = st.sampled_from(["n_tasks", "n_models", "sampler", "prices", "target", "budget", "corpus_path", "model",
                           "observed", "priors", "extra_facets", "claim", "version", "corpus_options"])


def test_fuzzed_session_files_load_valid_or_raise_session_error(tmp_path):
    from ddr_explorer.core.session import AnalysisState, SessionError

    @FUZZ
    @given(doc=st.dictionaries(_FIELDS, _JSON, max_size=4), sampler=st.dictionaries(
        st.sampled_from(["draws", "chains", "seed", "warmup", "max_seconds", "device", "dense_globals"]), _JSON,
        max_size=3), raw=st.binary(max_size=20))
    def check(doc, sampler, raw):
        p = tmp_path / "s.ddr.json"
        if sampler:
            doc["sampler"] = sampler
        p.write_bytes(json.dumps(doc).encode() + raw)
        try:
            state = AnalysisState.load(p)
        except SessionError as exc:
            assert str(p) in str(exc)
            return
        state.validate()
        state.sampler_settings()  # what the app does next with it

    check()



@pytest.mark.parametrize("argv", [["--format", "csv"], ["--columns", "task=task"], []])
def test_a_file_that_cannot_be_read_is_named_not_a_traceback(tmp_path, monkeypatch, capsys, argv):
    """PermissionError escaped with --format and --columns (tests run as any user: the refusal is simulated)."""
    p = tmp_path / "c.csv"
    p.write_text(hc._table())
    real = Path.read_bytes

    def denied(self):
        if self == p:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    real_open = open

    def denied_open(file, *a, **k):
        if str(file) == str(p):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr(Path, "read_bytes", denied)
    monkeypatch.setattr("builtins.open", denied_open)
    assert ddr(["inspect", str(p), *argv]) == 2
    err = capsys.readouterr().err
    assert f"{p}: the file cannot be read (Permission denied). Fix: check the" in err and "permissions" in err


def test_undecided_meta_json_names_the_flag_that_decides_it(tmp_path, capsys):
    """The fix said mapping='shifted', which no ddr flag took; --field-mapping does."""
    case = next(c for c in CASES if c.name == "terminal-bench-undecided-mapping")
    argv, p, _ = case.build(tmp_path)
    assert ddr(argv) == 2
    assert "pass --field-mapping shifted or --field-mapping straight" in capsys.readouterr().err
    assert ddr([*argv, "--field-mapping", "shifted"]) == 0


def test_cached_levels_that_are_not_the_corpus_are_found(tmp_path):
    """A fit whose level names are not the corpus's is not used, whatever the file's checksums say."""
    import types

    import pandas as pd

    from ddr_explorer.core.corpus.io import load_corpus
    from ddr_explorer.core.fitting import levels_mismatch

    p = tmp_path / "c.csv"
    p.write_text(hc._table())
    corpus = load_corpus(p)
    same = types.SimpleNamespace(levels={"model": pd.DataFrame({"model": ["m1", "m2", "m3"]})})
    other = types.SimpleNamespace(levels={"model": pd.DataFrame({"model": ["m1", "m7", "m3"]})})
    assert levels_mismatch(same, corpus) is None
    assert levels_mismatch(other, corpus) == "level 'm7' of term 'model' is not in the corpus"
