"""Every side file goes through one gate (core/side_files.py): a FIFO, /dev/zero, a folder, a file nested
thousands deep, a 128 KiB CSV field, a JSON key given twice, a TOML value that is not a name: each is a
clean refusal that names the file (and the line where there is one), never a hang, a memory blow-up, a
RecursionError, a ``_csv.Error`` or a silently kept last value."""

from __future__ import annotations

import os
import signal

import pytest

from ddr_explorer.core.analyses.external_ranking import read_external_ranking
from ddr_explorer.core.analyses.transfer import read_family_map
from ddr_explorer.core.components_io import read_components
from ddr_explorer.core.corpus.metadata import read_release_dates, read_task_metadata
from ddr_explorer.core.corpus.subject_ids.aliases import load_aliases
from ddr_explorer.core.price_tables import read_token_prices, read_trial_prices
from ddr_explorer.core.side_files import MAX_DEPTH

#: reader, the extension of its JSON/TOML form, of its table form (None: it has none)
READERS = {
    "components": (read_components, ".json", ".csv"),
    "trial-prices": (read_trial_prices, ".json", ".csv"),
    "token-prices": (read_token_prices, ".json", ".csv"),
    "external-ranking": (read_external_ranking, ".json", ".csv"),
    "release-dates": (read_release_dates, ".json", ".csv"),
    "task-metadata": (read_task_metadata, ".json", ".csv"),
    "aliases": (load_aliases, ".toml", None),
    "families": (read_family_map, ".toml", ".csv"),
}


@pytest.fixture(autouse=True)
def _no_hang():
    """A reader that opens a FIFO blocks for good: fail the test after 10 s instead."""
    def hang(signum, frame):
        raise TimeoutError("the reader blocked")

    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _refused(reader, path) -> str:
    with pytest.raises(ValueError) as info:  # every reader's error is a ValueError (CorpusError included)
        reader(path)
    text = str(info.value)
    assert str(path) in text and "Traceback" not in text
    return text


@pytest.mark.parametrize("name", READERS)
def test_a_fifo_is_refused_without_opening_it(tmp_path, name):
    reader, ext, _ = READERS[name]
    fifo = tmp_path / f"side{ext}"
    os.mkfifo(fifo)
    assert "named pipe (FIFO), not a regular file" in _refused(reader, fifo)


@pytest.mark.parametrize("name", READERS)
def test_dev_zero_and_a_folder_are_refused(tmp_path, name):
    reader, ext, _ = READERS[name]
    assert "a device, not a regular file" in _refused(reader, "/dev/zero")
    folder = tmp_path / f"folder{ext}"
    folder.mkdir()
    assert "a folder, not a regular file" in _refused(reader, folder) or "is a folder" in _refused(reader, folder)


@pytest.mark.parametrize("name", READERS)
def test_deep_nesting_is_refused_before_the_parser_recurses(tmp_path, name):
    reader, ext, _ = READERS[name]
    p = tmp_path / f"deep{ext}"
    p.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}" if ext == ".json" else
                 "models = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert f"nests more than {MAX_DEPTH} levels deep" in _refused(reader, p)


@pytest.mark.parametrize("name", [n for n in READERS if READERS[n][2] == ".csv" and n != "task-metadata"])
def test_a_128_kib_field_is_refused_with_its_line(tmp_path, name):
    reader, _, _ = READERS[name]
    p = tmp_path / "big.csv"
    header = {"components": "term,sigma", "trial-prices": "benchmark,price", "token-prices": "model,input,output",
              "external-ranking": "model,rank", "release-dates": "model,release_date",
              "families": "model,family"}[name]
    p.write_text(f"{header}\n" + "x" * ((128 << 10) + 1) + ",1\n")
    text = _refused(reader, p)
    assert "x" * 1000 not in text  # a 200 KB id was printed whole
    # pandas reads the release-date table (no field limit): the bad date's name is shortened instead
    assert "(131,073 characters)" in text if name == "release-dates" else "line 2: unreadable CSV" in text


@pytest.mark.parametrize("name", [n for n in READERS if READERS[n][1] == ".json" and n != "task-metadata"])
def test_a_json_key_given_twice_is_refused_with_its_line(tmp_path, name):
    reader, _, _ = READERS[name]
    body = {"components": '{"scale": "sd", "components": {"model": 1,\n "model": 2}}',
            "trial-prices": '{"b": 1,\n "b": 2}', "token-prices": '{"m": [1, 2],\n "m": [3, 4]}',
            "external-ranking": '{"m1": 1, "m2": 2,\n "m1": 3}',
            "release-dates": '{"m": "2024-01-01",\n "m": "2025-01-01"}'}[name]
    p = tmp_path / "dup.json"
    p.write_text(body)
    text = _refused(reader, p)
    assert "line 2" in text and "is given twice in one object" in text


def test_a_file_over_the_size_cap_is_refused_unread(tmp_path, monkeypatch):
    import ddr_explorer.core.side_files as side_files

    p = tmp_path / "prices.csv"
    p.write_text("benchmark,price\n" + "b,1\n" * 1000)
    monkeypatch.setattr(side_files, "MAX_SIDE_FILE_BYTES", 1024)
    monkeypatch.setattr(side_files.read_side_text, "__kwdefaults__", {"error": ValueError, "max_bytes": 1024})
    assert "larger than 1,024 bytes, more than any price file holds" in _refused(read_trial_prices, p)


def test_an_alias_value_that_is_not_a_name_is_refused(tmp_path):
    p = tmp_path / "a.toml"
    p.write_text('[models]\nm0 = "fine"\nm1 = ["a"]\n')
    text = _refused(load_aliases, p)
    assert "[models] m1 = ['a'] (line 3): the value must be a string (a name), not a list" in text


@pytest.mark.parametrize("command", [["dstudy"], ["report", "-o", "x.pdf", "--corpus", "c.csv"],
                                     ["analyses", "--corpus", "c.csv"]])
def test_a_fifo_or_folder_named_as_a_fit_file_is_refused(tmp_path, capsys, monkeypatch, command):
    """h5py's open of a FIFO blocked for good; a folder gave HDF5's multi-line message."""
    from ddr_explorer.core.cli import main as ddr

    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.csv").write_text("benchmark,task,model,scaffold,result\nb,t1,m1,s,1\nb,t2,m1,s,0\n")
    os.mkfifo(tmp_path / "fifo.h5")
    (tmp_path / "folder.h5").mkdir()
    for name, kind in (("fifo.h5", "a named pipe (FIFO)"), ("folder.h5", "a folder")):
        assert ddr([command[0], name, *command[1:], "--cache", str(tmp_path / "cache")]) == 2
        assert f"{name}: " in (err := capsys.readouterr().err) and f"this is {kind}, not a regular file" in err


# -- Hypothesis: every side-file reader, valid files mutated at random -------------------------------------------
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FUZZ = settings(max_examples=15, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
_EDITS = st.lists(st.tuples(st.floats(0, 1), st.integers(0, 4),
                            st.text(alphabet='{}[]",:=\n0123456789.-eE\x00\u00a0\u200b\ufeffab', max_size=6)),
                  min_size=1, max_size=6)

#: a valid file of each reader, in each of its layouts
VALID = {
    "components-json": (read_components, ".json", '{"scale": "sd", "components": {"model": 0.8, "task:model": 0.3}}'),
    "components-csv": (read_components, ".csv", "term,sigma\nmodel,0.8\ntask,1.2\n"),
    "trial-prices-json": (read_trial_prices, ".json", '{"b1": 0.25, "b2": 1}'),
    "trial-prices-csv": (read_trial_prices, ".csv", "benchmark,price\nb1,0.25\nb2,1\n"),
    "token-prices-json": (read_token_prices, ".json", '{"m1": [1.25, 10], "m2": {"input": 3, "output": 15}}'),
    "token-prices-csv": (read_token_prices, ".csv", "model,input,output\nm1,1.25,10\nm2,3,15\n"),
    "external-ranking-json": (read_external_ranking, ".json", '{"m1": 1, "m2": 2, "m3": 3}'),
    "external-ranking-csv": (read_external_ranking, ".csv", "model,rank\nm1,1\nm2,2\nm3,3\n"),
    "release-dates-json": (read_release_dates, ".json", '{"m1": "2024-01-01", "m2": "2025-02-03"}'),
    "release-dates-csv": (read_release_dates, ".csv", "model,release_date\nm1,2024-01-01\nm2,2025-02-03\n"),
    "task-metadata-csv": (read_task_metadata, ".csv", "task,human_minutes\nt1,5\nt2,60\n"),
    "aliases-toml": (load_aliases, ".toml", '[models]\nm1 = "model-one"\n[scaffolds]\ns = "scaffold"\n'),
    "families-toml": (read_family_map, ".toml", '[models]\nm1 = "A"\nm2 = "B"\n'),
    "families-csv": (read_family_map, ".csv", "model,family\nm1,A\nm2,B\n"),
}


def _mutate(text: str, edits) -> str:
    for where, cut, insert in edits:
        i = int(where * len(text))
        text = text[:i] + insert + text[i + cut:]
    return text


@pytest.mark.parametrize("name", sorted(VALID))
def test_fuzzed_side_files_read_or_raise_the_readers_error(name, tmp_path):
    """Whatever the mutation, the reader returns or raises its own error (a ValueError naming the file): never
    another exception, never a hang (the autouse alarm)."""
    reader, ext, valid = VALID[name]
    reader(_write(tmp_path, ext, valid))  # the valid file reads

    @FUZZ
    @given(edits=_EDITS)
    def check(edits):
        p = _write(tmp_path, ext, _mutate(valid, edits))
        try:
            reader(p)
        except ValueError as exc:  # every reader's error class is one (CorpusError included)
            assert str(p) in str(exc), str(exc)

    check()


def _write(folder, ext, text):
    p = folder / f"side{ext}"
    p.write_bytes(text.encode("utf-8", "surrogatepass"))
    return p
