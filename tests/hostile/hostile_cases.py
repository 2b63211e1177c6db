"""Broken and hostile input files, generated: every format the product reads, each case a refusal.

Each :class:`Case` writes its files into a folder and says how the product is asked to read them:

- ``"cli"``: ``ddr <argv>`` in process (:func:`ddr_explorer.core.cli.main`); a clean refusal is exit 2 with
  a message on stderr naming the file, the line where the format has lines, and a fix;
- ``"session"``: :meth:`ddr_explorer.core.session.AnalysisState.load`; a clean refusal is a
  ``SessionError`` naming the file;
- ``"cache"``: :func:`ddr_explorer.core.cache.read_fit_file` (and the labels' check against the corpus);
  a clean refusal is a ``CacheFileError``;
- ``"family"``: a family map's patterns matched against model names
  (:func:`ddr_explorer.core.analyses.transfer.read_family_map`); a clean refusal is a ``FamilyMapError``.

:func:`run_case` runs one case under a time limit and classifies what happened: ``clean`` (the
refusal the product promises), ``unclear`` (refused, but the message lacks the file, line or fix),
``traceback`` (an exception escaped), ``silent`` (accepted: a wrong number or label would follow) or
``hang`` (ran past the time limit).  The cases and the runner are shared by ``tests/hostile`` and
``bench/hostile_inputs.py``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import time
import traceback
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

#: A small valid corpus: one benchmark, 4 tasks x 3 models, one scaffold; data lines 2..13 of the CSV.
HEADER = ["benchmark", "task", "model", "scaffold", "trial", "successes", "trials"]
ROWS = [["bench", f"t{t}", f"m{m}", "s", "r1", str((t + m) % 5), "5"] for t in range(1, 5) for m in range(1, 4)]

#: Seconds one case may run before it counts as a hang.
TIME_LIMIT = 15.0


@dataclass
class Case:
    """One hostile input: ``build(folder)`` writes it and returns ``(argv or path, file, line)``."""

    name: str
    kind: str
    build: Callable[[Path], tuple]
    isolate: bool = False  # run in a child process (memory or a blocking open)
    tags: tuple = field(default_factory=tuple)
    #: "refuse" (exit 2 / the loader's error) or "accept": a valid file that used to hang (a pattern that
    #: backtracks exponentially on Python's re) must now give its result in time
    expect: str = "refuse"


@dataclass
class Outcome:
    status: str
    seconds: float
    message: str
    cpu_seconds: float = 0.0


# -- text corpora --------------------------------------------------------------------------------------
def _table(rows=None, header=None, sep=",") -> str:
    rows = ROWS if rows is None else rows
    header = HEADER if header is None else header
    return "\n".join(sep.join(r) for r in [header, *rows]) + "\n"


def _with(col: str, value: str, row: int = 4, header=None) -> list[list[str]]:
    """The rows with one value replaced (``row`` counts data rows from 0; its line is row + 2)."""
    header = HEADER if header is None else header
    rows = [list(r) for r in ROWS]
    rows[row][header.index(col)] = value
    return rows


def _text_case(name: str, text_or_bytes, line, ext=".csv", argv=(), tags=()) -> Case:
    def build(folder: Path):
        p = folder / f"{name}{ext}"
        data = text_or_bytes if isinstance(text_or_bytes, bytes) else text_or_bytes.encode("utf-8")
        p.write_bytes(data)
        return ["inspect", str(p), *argv], p, line
    return Case(name, "cli", build, tags=tags)


def _value_cases() -> list[tuple[str, str, str, int | None]]:
    """(name, column, value, line) of bad values at data row 4 (line 6)."""
    out = []
    for v, tag in (("inf", "inf"), ("-inf", "neginf"), ("nan", "nan"), ("1e30", "1e30"),
                   ("99999999999999999999", "20digits"), ("-1", "negative"), ("2.5", "fraction"), ("abc", "text"),
                   ("9223372036854775808", "int64max+1"), ("0x10", "hex"), ("1_000", "underscore"),
                   ("2024-01-01T00:00:00", "timestamp")):
        out.append((f"trials-{tag}", "trials", v, 6))
    for v, tag in (("-1", "negative"), ("6", "above-trials"), ("inf", "inf"), ("1e30", "1e30"), ("abc", "text"),
                   ("2.5", "fraction")):
        out.append((f"successes-{tag}", "successes", v, 6))
    for v, tag in (("", "empty"), ("NA", "NA"), ("null", "null"), ("t\x00x", "nul"), ("t\x07x", "bell"),
                   ("t\x1bx", "escape")):
        out.append((f"task-{tag}", "task", v, 6))
    for v, tag in (("", "empty"), ("m\x00", "nul"), ("NaN", "NaN")):
        out.append((f"model-{tag}", "model", v, 6))
    return out


def csv_cases() -> list[Case]:
    cases = []
    big = str(2 ** 63 - 1)
    for sep, ext in ((",", ".csv"), ("\t", ".tsv")):
        fmt = ext[1:]
        for name, col, value, line in _value_cases():
            cases.append(_text_case(f"{fmt}-{name}", _table(_with(col, value), sep=sep), line, ext))
        both = [list(r) for r in ROWS]
        both[4][5] = both[4][6] = big
        cases.append(_text_case(f"{fmt}-successes-trials-int64max", _table(both, sep=sep), 6, ext))
        cases.append(_text_case(f"{fmt}-empty", b"", None, ext))
        cases.append(_text_case(f"{fmt}-blank", b"  \n\n \n", None, ext))
        cases.append(_text_case(f"{fmt}-header-only", sep.join(HEADER) + "\n", None, ext))
        cases.append(_text_case(f"{fmt}-cr-only", _table(sep=sep).replace("\n", "\r"), None, ext))
        cases.append(_text_case(f"{fmt}-latin1", _table(_with("model", "m\xe9", 4), sep=sep).encode("latin-1"), 6,
                                ext))
        cases.append(_text_case(f"{fmt}-utf16-nobom", _table(sep=sep).encode("utf-16-le"), None, ext))
        cases.append(_text_case(f"{fmt}-garbage", bytes(range(256)) * 8, None, ext))
        cases.append(_text_case(f"{fmt}-duplicate-column", _table(header=[*HEADER[:-1], "successes"], sep=sep), 1,
                                ext))
        cases.append(_text_case(f"{fmt}-no-trials-column",
                                _table([r[:-1] for r in ROWS], header=HEADER[:-1], sep=sep), None, ext))
        rows = [list(r) for r in ROWS]
        rows[6] = rows[6] + ["x"]
        cases.append(_text_case(f"{fmt}-extra-field", _table(rows, sep=sep), 8, ext))
        rows = [list(r) for r in ROWS]
        rows[6] = rows[6][:-2]
        cases.append(_text_case(f"{fmt}-missing-field", _table(rows, sep=sep), 8, ext))
        hdr = [*HEADER, "result"]
        rows = [[*r, "1"] for r in ROWS]
        rows[4][5], rows[4][6] = "0", "1"  # 0 of 1 trials succeeded, and the result says success
        cases.append(_text_case(f"{fmt}-result-contradicts", _table(rows, header=hdr, sep=sep), 6, ext))
        hdr = [*HEADER, "cost"]
        for v, tag in (("inf", "inf"), ("-1", "negative"), ("abc", "text"), ("1e400", "overflow")):
            rows = [[*r, "0.5"] for r in ROWS]
            rows[4][7] = v
            cases.append(_text_case(f"{fmt}-cost-{tag}", _table(rows, header=hdr, sep=sep), 6, ext))
        rows = [list(r) for r in ROWS]
        rows[4][5] = rows[4][6] = "true"
        rows = [[*r[:5], "true" if int(r[5]) else "false", "true"] for r in ROWS]
        cases.append(_text_case(f"{fmt}-boolean-counts", _table(rows, sep=sep), 2, ext))
    # quoting: CSV only
    rows = [list(r) for r in ROWS]
    rows[4][1] = '"t5'  # line 6: an unterminated quote swallows the rest of the file
    cases.append(_text_case("csv-unterminated-quote", _table(rows), 6, ".csv"))
    rows = [[*r, "ok"] for r in _with("trials", "abc", 9)]
    rows[1][7] = '"first\nsecond"'  # a quoted newline on line 3 shifts the later lines by one
    text = _table(rows, header=[*HEADER, "note"])
    cases.append(_text_case("csv-quoted-newline-then-bad-value", text, 12, ".csv"))
    cases.append(_text_case("csv-nul-header", _table(header=["bench\x00mark", *HEADER[1:]]), 1, ".csv"))
    return cases


# -- JSON lines ------------------------------------------------------------------------------------------
def _records() -> list[dict]:
    return [{k: (int(v) if k in ("successes", "trials") else v) for k, v in zip(HEADER, r)} for r in ROWS]


def _jsonl(records, raw_lines: dict[int, str] | None = None) -> str:
    lines = [json.dumps(r) for r in records]
    for i, text in (raw_lines or {}).items():
        lines[i] = text
    return "\n".join(lines) + "\n"


def jsonl_cases() -> list[Case]:
    cases = []

    def rec(i, **kw):
        rs = _records()
        rs[i].update(kw)
        return rs

    raw = {  # line 5 (data index 4) written as raw JSON text
        "trials-Infinity": '{"benchmark": "bench", "task": "t2", "model": "m2", "scaffold": "s", "trial": "r1", '
                           '"successes": 3, "trials": Infinity}',
        "trials-NaN": '{"benchmark": "bench", "task": "t2", "model": "m2", "scaffold": "s", "trial": "r1", '
                      '"successes": 3, "trials": NaN}',
        "trials-1e400": '{"benchmark": "bench", "task": "t2", "model": "m2", "scaffold": "s", "trial": "r1", '
                        '"successes": 3, "trials": 1e400}',
        "truncated-line": '{"benchmark": "bench", "task": "t2", "model": "m2", "scaff',
        "array-line": '["bench", "t2", "m2", "s", "r1", 3, 5]',
        "trailing-comma": '{"benchmark": "bench", "task": "t2", "model": "m2", "scaffold": "s", "trial": "r1", '
                          '"successes": 3, "trials": 5,}',
        "deep-nesting": "[" * 100000 + "]" * 100000,
    }
    for name, text in raw.items():
        cases.append(_text_case(f"jsonl-{name}", _jsonl(_records(), {4: text}), 5, ".jsonl"))
    for name, kw in {
        "trials-1e30": {"trials": 1e30}, "trials-20digits": {"trials": 99999999999999999999},
        "trials-text": {"trials": "five"}, "trials-negative": {"trials": -3}, "trials-fraction": {"trials": 2.5},
        "trials-bool": {"trials": True}, "successes-bool": {"successes": False},
        "successes-above-trials": {"successes": 9}, "model-object": {"model": {"name": "m2"}},
        "model-list": {"model": ["m2"]}, "model-null": {"model": None}, "task-nul": {"task": "t\x00"},
        "task-empty": {"task": ""}, "task-number": {"task": 7}, "task-bell": {"task": "t\x07"},
        "int64max": {"successes": 2 ** 63 - 1, "trials": 2 ** 63 - 1},
        "trials-timestamp": {"trials": "2024-01-01T00:00:00"}, "cost-inf-text": {"cost": "inf"},
        "result-contradicts": {"result": 1, "successes": 0, "trials": 1},
    }.items():
        cases.append(_text_case(f"jsonl-{name}", _jsonl(rec(4, **kw)), 5, ".jsonl"))
    cases.append(_text_case("jsonl-empty", b"", None, ".jsonl"))
    cases.append(_text_case("jsonl-latin1", _jsonl(_records(), {4: json.dumps(rec(4, model="m\xe9")[4], ensure_ascii=False)})
                            .encode("latin-1"), 5, ".jsonl"))
    cases.append(_text_case("jsonl-not-json", b"hello world\nthis is text\n", None, ".jsonl"))
    return cases


# -- Parquet -------------------------------------------------------------------------------------------------
def _parquet_case(name: str, make, line=5) -> Case:
    def build(folder: Path):
        import pyarrow as pa
        import pyarrow.parquet as pq

        p = folder / f"{name}.parquet"
        cols = {k: [r[i] for r in ROWS] for i, k in enumerate(HEADER)}
        cols["successes"] = [int(v) for v in cols["successes"]]
        cols["trials"] = [int(v) for v in cols["trials"]]
        out = make(cols, pa)
        if isinstance(out, bytes):
            p.write_bytes(out)
        else:
            pq.write_table(out if isinstance(out, pa.Table) else pa.table(cols), p)
        return ["inspect", str(p)], p, line
    return Case(f"parquet-{name}", "cli", build)


def parquet_cases() -> list[Case]:
    import datetime as dt

    def setv(col, value):
        def make(cols, pa):
            cols[col] = list(cols[col])
            cols[col][4] = value
            return None
        return make

    def whole(col, values, typ=None):
        def make(cols, pa):
            cols[col] = values if typ is None else pa.array(values, type=typ(pa))
            return None
        return make

    def valid_bytes():
        import pyarrow as pa
        import pyarrow.parquet as pq

        cols = {k: [r[i] for r in ROWS] for i, k in enumerate(HEADER)}
        cols["successes"] = [int(v) for v in cols["successes"]]
        cols["trials"] = [int(v) for v in cols["trials"]]
        buf = io.BytesIO()
        pq.write_table(pa.table(cols), buf)
        return buf.getvalue()

    n = len(ROWS)
    ts = [dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)] * n
    cases = [
        _parquet_case("trials-timestamp", whole("trials", ts), None),
        _parquet_case("trials-boolean", whole("trials", [True] * n), None),
        _parquet_case("successes-boolean", whole("successes", [bool(i % 2) for i in range(n)]), None),
        _parquet_case("model-list", whole("model", [["m1"]] * n), None),
        _parquet_case("model-struct", whole("model", [{"a": 1}] * n), None),
        _parquet_case("trials-float-fraction", setv("trials", 2.5)),
        _parquet_case("trials-float-inf", setv("trials", float("inf"))),
        _parquet_case("trials-float-nan", setv("trials", float("nan"))),
        _parquet_case("trials-negative", setv("trials", -5)),
        _parquet_case("trials-int64max", lambda c, pa: (c.__setitem__("successes", [2 ** 63 - 1] * n),
                                                        c.__setitem__("trials", [2 ** 63 - 1] * n), None)[-1], None),
        _parquet_case("successes-above-trials", setv("successes", 9)),
        _parquet_case("task-nul", setv("task", "t\x00")),
        _parquet_case("task-null", setv("task", None)),
        _parquet_case("model-binary", whole("model", [b"m\xff"] * n), None),
        _parquet_case("trials-text", whole("trials", ["5"] * (n - 1) + ["five"]), n),
        _parquet_case("cost-inf", lambda c, pa: (c.__setitem__("cost", [0.5] * 4 + [float("inf")] + [0.5] * (n - 5)),
                                                 None)[-1]),
        _parquet_case("result-contradicts", lambda c, pa: (c.__setitem__("result", [1] * n),
                                                           c["successes"].__setitem__(4, 0),
                                                           c["trials"].__setitem__(4, 1), None)[-1]),
        _parquet_case("zero-rows", lambda c, pa: pa.table({k: pa.array([], type=pa.string()) for k in HEADER}), None),
        _parquet_case("truncated", lambda c, pa: valid_bytes()[: len(valid_bytes()) // 2], None),
        _parquet_case("footer-length-huge", lambda c, pa: valid_bytes()[:-8] + b"\xff\xff\xff\x7fPAR1", None),
        _parquet_case("text-as-parquet", lambda c, pa: _table().encode(), None),
    ]
    return cases


# -- foreign formats -----------------------------------------------------------------------------------------
def _meta(task_results: dict, **fields) -> dict:
    run = {"rank": "", "agent": "1", "model": "Droid", "agent_org": "2025-12-24", "model_org": "Factory",
           "date": "GPT-5.2", "accuracy": "OpenAI",
           "detail_url": "https://www.tbench.ai/leaderboard/terminal-bench/2.0/Factory%20Droid/unknown/gpt-5.2%40openai",
           "task_results": task_results}
    run.update(fields)
    return {"agents": 1, "tasks": len(task_results), "task_list": list(task_results), "results": [run]}


def foreign_cases() -> list[Case]:
    cases = []
    tb = {
        "cell-words": _meta({"a": "1/5", "b": "3 of 5"}),
        "cell-above": _meta({"a": "1/5", "b": "6/5"}),
        "cell-inf": _meta({"a": "1/5", "b": "1/inf"}),
        "cell-20digits": _meta({"a": "1/5", "b": "1/99999999999999999999"}),
        "results-not-list": {"results": "none"},
        "undecided-mapping": _meta({"a": "1/5"}, agent_org="Factory", detail_url=""),
    }
    for name, doc in tb.items():
        def build(folder, name=name, doc=doc):
            p = folder / f"tb-{name}" / "meta.json"
            p.parent.mkdir()
            p.write_text(json.dumps(doc, indent=2))
            return ["inspect", str(p), "--format", "terminal-bench"], p, None
        cases.append(Case(f"terminal-bench-{name}", "cli", build))
    for name, text in {"not-json": "{results: [", "deep": "[" * 100000 + "]" * 100000,
                       "huge-number": '{"results": [], "tasks": ' + "9" * 5000 + "}"}.items():
        def build(folder, name=name, text=text):
            p = folder / f"tb-{name}.json"
            p.write_text(text)
            return ["inspect", str(p), "--format", "terminal-bench"], p, None
        cases.append(Case(f"terminal-bench-{name}", "cli", build))
    # py-irt JSON lines
    good = [{"subject_id": f"s_m{m}", "responses": {f"t{t}": (t + m) % 2 for t in range(4)}} for m in range(3)]
    for name, kw in {"response-2": {"t1": 2}, "response-text": {"t1": "yes?"}, "response-inf": {"t1": 1e400},
                     "response-null": {"t1": None}, "response-list": {"t1": [1]}}.items():
        rows = [dict(r, responses=dict(r["responses"])) for r in good]
        rows[1]["responses"].update(kw)
        text = "\n".join(json.dumps(r) for r in rows) + "\n"
        cases.append(_text_case(f"pyirt-{name}", text, 2, ".jsonl", ("--format", "py-irt")))
    rows = [json.dumps(r) for r in good]
    rows[2] = '{"subject_id": "s_m3", "responses": '
    cases.append(_text_case("pyirt-truncated", "\n".join(rows) + "\n", 3, ".jsonl", ("--format", "py-irt")))
    rows = [json.dumps(r) for r in good]
    rows[1] = json.dumps({"responses": {"t1": 1}})
    cases.append(_text_case("pyirt-no-subject", "\n".join(rows) + "\n", 2, ".jsonl", ("--format", "py-irt")))
    # alias files (TOML) next to a good py-irt file
    pyirt_text = "\n".join(json.dumps(r) for r in good) + "\n"
    for name, toml, hang in (
            ("bad-toml", "[subjects\n", False),
            ("bad-regex", "[[subject_patterns]]\nregex = '(unclosed'\n", False),
            ("regex-not-string", "[[subject_patterns]]\nregex = 5\n", False),
            ("catastrophic-regex", "[[subject_patterns]]\nregex = '^(?P<model>(a+)+)$'\n", True),
            ("catastrophic-benchmark-regex", "[[benchmarks]]\nname = 'x'\nregex = '^(t|t1|\\w)+$'\n", True),
            ("latin1", None, False)):
        def build(folder, name=name, toml=toml, hang=hang):
            data = pyirt_text
            if hang:  # ids that make a backtracking engine take exponential time
                data = "\n".join(json.dumps({"subject_id": "a" * 40 + "b", "responses": {"t" * 40 + "!": 1}})
                                 for _ in range(1)) + "\n"
            p = folder / f"pyirt-{name}.jsonl"
            p.write_text(data)
            a = folder / f"aliases-{name}.toml"
            a.write_bytes(toml.encode() if toml is not None else "benchmark = 'b\xe9'\n".encode("latin-1"))
            return ["inspect", str(p), "--format", "py-irt", "--aliases", str(a)], a, None
        cases.append(Case(f"aliases-{name}", "cli", build, expect="accept" if hang else "refuse"))
    # normalized results
    nrm = [{"model": f"m{m}", "benchmark": "b", "task_id": f"t{t}", "score": (t + m) % 2}
           for t in range(4) for m in range(3)]
    for name, kw in {"score-text": {"score": "high"}, "score-inf": {"score": 1e400}, "score-2": {"score": 2},
                     "no-task": {"task_id": None}, "model-list": {"model": ["m"]}}.items():
        rows = [dict(r) for r in nrm]
        rows[4].update(kw)
        text = "\n".join(json.dumps(r) for r in rows) + "\n"
        cases.append(_text_case(f"normalized-{name}", text, 5, ".jsonl", ("--format", "normalized")))
    return cases


# -- Inspect logs -------------------------------------------------------------------------------------------
def _zip(members: dict[str, bytes], lie: bool = False) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _bomb(path: Path, member: str, size: int) -> None:
    """A zip whose one member inflates to ``size`` bytes of spaces (a few hundred kB on disk)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open(member, "w", force_zip64=True) as fh:
            chunk = b" " * (1 << 22)
            for _ in range(size // len(chunk)):
                fh.write(chunk)


def inspect_cases(bomb_bytes: int = 256 << 20) -> list[Case]:
    cases = []
    for name, data in {"not-zip": b"PK\x03\x04" + os.urandom(2000),
                       "empty-zip": _zip({}), "header-not-json": _zip({"header.json": b"{not json"}),
                       "header-wrong-shape": _zip({"header.json": b'{"version": 2, "status": 7}',
                                                   "summaries.json": b"[]"}),
                       "truncated": _zip({"header.json": b'{"version": 2}' * 1000})[:300]}.items():
        def build(folder, name=name, data=data):
            p = folder / f"log-{name}.eval"
            p.write_bytes(data if data.startswith(b"PK\x03\x04") else b"PK\x03\x04" + data)
            return ["inspect", str(p), "--format", "inspect"], p, None
        cases.append(Case(f"inspect-{name}", "cli", build))
    for member in ("header.json", "summaries.json"):
        def build(folder, member=member):
            p = folder / f"bomb-{member.split('.')[0]}.eval"
            _bomb(p, member, bomb_bytes)
            return ["inspect", str(p), "--format", "inspect"], p, None
        cases.append(Case(f"inspect-bomb-{member.split('.')[0]}", "cli", build, isolate=True, tags=("memory",)))

    def build_json(folder):
        p = folder / "log-bad.json"
        p.write_text('{"version": 2, "status": "success", "eval": {"task": 5}}')
        return ["inspect", str(p), "--format", "inspect"], p, None
    cases.append(Case("inspect-json-wrong-shape", "cli", build_json))
    return cases


# -- other files the corpus commands read -----------------------------------------------------------------------
def side_file_cases() -> list[Case]:
    cases = []
    for name, data, opt in (("metadata-garbage", bytes(range(256)) * 4, "--task-metadata"),
                            ("metadata-ragged", b"task,human_minutes\nt1,5\nt2,6,7\n", "--task-metadata"),
                            ("metadata-inf", b"task,human_minutes\nt1,inf\nt2,1e400\n", "--task-metadata"),
                            ("release-dates-bad", b"model,release_date\nm1,yesterday\n", "--release-dates"),
                            ("release-dates-garbage", b"\xff\xfe\x00garbage", "--release-dates")):
        def build(folder, name=name, data=data, opt=opt):
            c = folder / f"{name}-corpus.csv"
            c.write_text(_table())
            p = folder / f"{name}.csv"
            p.write_bytes(data)
            return ["inspect", str(c), opt, str(p)], p, None
        cases.append(Case(f"side-{name}", "cli", build))
    for name, argv in (("columns-unknown-role", ["--columns", "wizard=task"]),
                       ("columns-missing-column", ["--columns", "task=nope"]),
                       ("slice-bad", ["--slice", "=="]),
                       ("gamma-inf", ["--scoring", "threshold", "--gamma", "inf"])):
        def build(folder, name=name, argv=argv):
            c = folder / f"{name}.csv"
            c.write_text(_table())
            return ["inspect", str(c), *argv], c, None
        cases.append(Case(f"option-{name}", "cli", build))
    return cases


def special_file_cases() -> list[Case]:
    def fifo(folder):
        p = folder / "corpus-fifo.csv"
        os.mkfifo(p)
        return ["inspect", str(p)], p, None

    def fifo_format(folder):
        p = folder / "corpus-fifo2.csv"
        os.mkfifo(p)
        return ["inspect", str(p), "--format", "csv"], p, None

    def fifo_aliases(folder):
        c = folder / "pyirt-ok.jsonl"
        c.write_text(json.dumps({"subject_id": "s_m1", "responses": {"t1": 1}}) + "\n")
        a = folder / "aliases-fifo.toml"
        os.mkfifo(a)
        return ["inspect", str(c), "--format", "py-irt", "--aliases", str(a)], a, None

    def devzero(folder):
        p = folder / "zero.csv"
        p.symlink_to("/dev/zero")
        return ["inspect", str(p), "--format", "csv"], p, None

    def loop(folder):
        p = folder / "loop.csv"
        p.symlink_to(p)
        return ["inspect", str(p)], p, None

    return [Case("fifo", "cli", fifo, isolate=True), Case("fifo-with-format", "cli", fifo_format, isolate=True),
            Case("fifo-aliases", "cli", fifo_aliases, isolate=True),
            Case("dev-zero", "cli", devzero, isolate=True, tags=("memory",)), Case("symlink-loop", "cli", loop)]


# -- family files ------------------------------------------------------------------------------------------------------
def family_cases() -> list[Case]:
    out = []
    for name, text in (("catastrophic", "[[patterns]]\nregex = '^(a+)+$'\nfamily = 'x'\n"),
                       ("catastrophic-alternation", "[[patterns]]\nregex = '^(a|aa)+$'\nfamily = 'x'\n"),
                       ("bad-regex", "[[patterns]]\nregex = '(('\nfamily = 'x'\n"),
                       ("not-toml", "[[patterns]\n")):
        def build(folder, name=name, text=text):
            p = folder / f"families-{name}.toml"
            p.write_text(text)
            return None, p, None
        out.append(Case(f"families-{name}", "family", build,
                        expect="accept" if name.startswith("catastrophic") else "refuse"))
    return out


# -- session files ---------------------------------------------------------------------------------------------
def _session(**fields) -> str:
    doc = {"format": "ddr-explorer-analysis", "version": 2, "corpus_path": "/tmp/x.csv", "model": "pooled"}
    doc.update(fields)
    return json.dumps(doc)


def session_texts() -> dict[str, bytes]:
    """Broken ``last-session.ddr.json`` contents by name."""
    base = _session()
    s = {
        "utf16": base.encode("utf-16"), "latin1": _session().replace("x.csv", "caf\xe9.csv").encode("latin-1"),
        "400-digits": _session().replace('"model"', '"n_models": ' + "9" * 400 + ', "model"').encode(),
        "400-digit-size": _session().replace('"model"', '"n_tasks": ' + "9" * 400 + ', "model"').encode(),
        "deep": ("[" * 200000 + "]" * 200000).encode(), "deep-object": ('{"a":' * 100000 + "1" + "}" * 100000).encode(),
        "draws-infinity": _session().replace('"model"', '"sampler": {"draws": Infinity}, "model"').encode(),
        "draws-nan": _session().replace('"model"', '"sampler": {"draws": NaN}, "model"').encode(),
        "n-tasks-infinity": _session().replace('"model"', '"n_tasks": Infinity, "model"').encode(),
        "target-nan": _session().replace('"model"', '"target": NaN, "model"').encode(),
        "budget-neg-infinity": _session().replace('"model"', '"budget": -Infinity, "model"').encode(),
        "chains-1e30": _session(sampler={"chains": 10 ** 30}).encode(),
        "chains-float": _session(sampler={"chains": 4.0}).encode(),
        "seed-fraction": _session(sampler={"seed": 1.5}).encode(),
        "seed-negative": _session(sampler={"seed": -1}).encode(),
        "seed-huge": _session(sampler={"seed": 2 ** 70}).encode(),
        "draws-text": _session(sampler={"draws": "100"}).encode(),
        "draws-huge": _session(sampler={"draws": 10 ** 12}).encode(),
        "warmup-negative": _session(sampler={"warmup": -5}).encode(),
        "max-seconds-text": _session(sampler={"max_seconds": "1h"}).encode(),
        "target-accept-2": _session(sampler={"target_accept": 2}).encode(),
        "device-tpu": _session(sampler={"device": "tpu"}).encode(),
        "dense-globals-text": _session(sampler={"dense_globals": "yes"}).encode(),
        "n-tasks-zero": _session(n_tasks=0).encode(), "n-tasks-huge": _session(n_tasks=1e300).encode(),
        "n-models-huge": _session(n_models=10 ** 30).encode(),
        "target-1.5": _session(target=1.5).encode(), "budget-negative": _session(budget=-1).encode(),
        "prices-text": _session(prices={"b": "cheap"}).encode(), "prices-list": _session(prices=[1, 2]).encode(),
        "model-garbage": _session(model="y ~ ((").encode(), "corpus-path-number": _session(corpus_path=5).encode(),
        "corpus-path-nul": _session(corpus_path="/tmp/a\x00b.csv").encode(),
        "unknown-field": _session(colour="red").encode(), "version-99": _session(version=99).encode(),
        "version-text": _session(version="2").encode(), "format-other": _session(format="xyz").encode(),
        "list": b"[1, 2, 3]", "string": b'"hello"', "empty": b"", "truncated": base[:40].encode(),
        "binary": bytes(range(256)), "nul-bytes": b"\x00" * 100,
        "corpus-options-unknown": _session(corpus_options={"wizard": 1}).encode(),
        "priors-bad": _session(priors={"sigma": {"df": -1, "scale": 2.5}}).encode(),
        "extra-facets-bad": _session(extra_facets={"step": 0}).encode(),
        "observed-bad": _session(observed={"n_tasks": "many"}).encode(),
        "object-bad": _session(object_of_measurement="planet").encode(),
        "claim-bad": _session(claim=3).encode(),
    }
    return s


def session_cases() -> list[Case]:
    out = []
    for name, data in session_texts().items():
        def build(folder, name=name, data=data):
            p = folder / f"session-{name}.ddr.json"
            p.write_bytes(data)
            return None, p, None
        out.append(Case(f"session-{name}", "session", build))
    return out


# -- cache files ---------------------------------------------------------------------------------------------------
CACHE_KEY = "0" * 64


def _cache_entry():
    import numpy as np

    from ddr_explorer.core.cache import CacheEntry

    rng = np.random.default_rng(0)
    return CacheEntry(arrays={"posterior/sigma_task": rng.gamma(2, 1, (2, 50)),
                              "posterior/u_model": rng.normal(0, 1, (2, 50, 3)).astype(np.float32)},
                      meta={"spec": {"terms": ["task", "model"]}, "levels": {"model": ["m1", "m2", "m3"]}},
                      dims={"posterior/u_model": ["chain", "draw", "model"]},
                      coords={"model": ["m1", "m2", "m3"]})


def _good_cache(folder: Path) -> Path:
    from ddr_explorer.core.cache import FitCache

    return FitCache(folder / "cache").store(CACHE_KEY, _cache_entry())


def cache_cases() -> list[Case]:
    out = []

    def mutate(name, fn):
        def build(folder):
            p = _good_cache(folder)
            data = bytearray(p.read_bytes())
            new = fn(data, p)
            if new is not None:
                p.write_bytes(bytes(new))
            return None, p, None
        out.append(Case(f"cache-{name}", "cache", build))

    for frac in (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99):
        mutate(f"truncate-{int(frac * 100)}", lambda d, p, f=frac: d[: int(len(d) * f)])

    def replace_label(old: bytes, new: bytes):
        def fn(d, p):
            i = bytes(d).find(old)
            if i < 0:
                return None
            d[i: i + len(old)] = new
            return d
        return fn
    mutate("meta-label-flip", replace_label(b'"m2"', b'"m7"'))  # a model name in the meta JSON
    mutate("coord-label-flip", lambda d, p: _h5_edit(p, "coord"))
    mutate("meta-attr-edit", lambda d, p: _h5_edit(p, "meta"))
    mutate("dims-attr-edit", lambda d, p: _h5_edit(p, "dims"))
    mutate("name-attr-edit", lambda d, p: _h5_edit(p, "name"))
    for off in (0, 8, 64, 512, 1024, 2048, 4096):
        def flip(d, p, off=off):
            if off < len(d):
                d[off] ^= 0xFF
            return d
        mutate(f"flip-{off}", flip)
    mutate("csv-as-cache", lambda d, p: _table().encode())
    mutate("empty", lambda d, p: b"")
    mutate("zip-as-cache", lambda d, p: _zip({"a": b"x"}))
    mutate("json-as-cache", lambda d, p: b'{"format": "ddr-explorer-fit"}')
    return out


def _h5_edit(path: Path, what: str):
    """Change one label in place with h5py (a valid HDF5 file with one changed label)."""
    import h5py
    import numpy as np

    with h5py.File(path, "r+") as f:
        if what == "coord":
            ds = f["posterior/model"]
            ds[1] = "m7"
        elif what == "meta":
            f.attrs["meta"] = f.attrs["meta"].replace('"m2"', '"m7"') if isinstance(f.attrs["meta"], str) else \
                f.attrs["meta"].decode().replace('"m2"', '"m7"')
        elif what == "dims":
            f["posterior/u_model"].attrs["ddr_dims"] = json.dumps(["chain", "draw", "task"])
        elif what == "name":
            f["posterior/u_model"].attrs["ddr_name"] = "posterior/u_task"
        np.asarray(0)
    return None


def all_cases(bomb_bytes: int = 256 << 20) -> list[Case]:
    """Every hostile case, in a stable order."""
    from door_cases import door_cases  # side files read through the CLI, and outputs

    return [*csv_cases(), *jsonl_cases(), *parquet_cases(), *foreign_cases(), *inspect_cases(bomb_bytes),
            *side_file_cases(), *special_file_cases(), *family_cases(), *session_cases(), *cache_cases(),
            *door_cases(Case, _table)]


# -- running ---------------------------------------------------------------------------------------------------------
class _Hang(BaseException):
    pass


def _alarm(signum, frame):
    raise _Hang()


def _check_cli(argv, file: Path, line) -> Outcome:
    from ddr_explorer.core import cli

    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = cli.main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
    text = err.getvalue()
    if code == 0:
        return Outcome("silent", 0, out.getvalue()[-300:])
    if code != 2:
        return Outcome("traceback" if code == 1 else "unclear", 0, f"exit {code}: {text[-500:]}")
    return _judge(text, file, line, need_fix=True)


def _judge(text: str, file: Path, line, need_fix: bool) -> Outcome:
    missing = []
    if file.name not in text:
        missing.append("file")
    if line is not None and not re.search(rf"\bline {line}\b", text):
        missing.append(f"line {line}")
    if need_fix and "fix" not in text.lower():
        missing.append("fix")
    if "Traceback" in text:
        missing.append("no traceback")
    return Outcome("unclear" if missing else "clean", 0, (f"lacks {', '.join(missing)}: " if missing else "") +
                   text.strip()[:400])


def _check_session(file: Path) -> Outcome:
    from ddr_explorer.core.session import AnalysisState, SessionError

    try:
        AnalysisState.load(file)
    except SessionError as exc:
        return _judge(str(exc), file, None, need_fix=False)
    return Outcome("silent", 0, "loaded")


def _check_cache(file: Path) -> Outcome:
    from ddr_explorer.core.cache import CacheFileError, read_fit_file

    try:
        entry = read_fit_file(file, expect_key=CACHE_KEY)
    except CacheFileError as exc:
        return Outcome("clean", 0, str(exc)[:300])
    ref = _cache_entry()
    same = (entry.meta == ref.meta and entry.coords == ref.coords and entry.dims == {
        k: list(ref.dims.get(k, [])) for k in ref.arrays} and set(entry.arrays) == set(ref.arrays))
    # a flipped byte the data never reads (padding, free space) changes nothing: no wrong number follows
    return Outcome("silent" if not same else "clean", 0, "read without notice" if not same else "content unchanged")


def _check_family(file: Path) -> Outcome:
    from ddr_explorer.core.analyses.transfer import FamilyMapError, read_family_map

    try:
        fm = read_family_map(file)
        for name in ("a" * 40 + "b", "m1"):
            fm.family(name)
    except FamilyMapError as exc:
        return _judge(str(exc), file, None, need_fix=False)
    return Outcome("silent", 0, "matched")


def run_case(case: Case, folder: Path, time_limit: float = TIME_LIMIT) -> Outcome:
    """Build and run one case in this process under a time limit; classify the result."""
    folder.mkdir(parents=True, exist_ok=True)
    argv, file, line = case.build(folder)
    t0, c0 = time.perf_counter(), time.process_time()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, time_limit)
    try:
        if case.kind == "cli":
            res = _check_cli(argv, file, line)
            if case.expect == "accept":
                res = Outcome("clean" if res.status == "silent" else res.status, 0, res.message)
        elif case.kind == "session":
            res = _check_session(file)
        elif case.kind == "cache":
            res = _check_cache(file)
        else:
            res = _check_family(file)
            if case.expect == "accept":
                res = Outcome("clean" if res.status == "silent" else res.status, 0, res.message)
    except _Hang:
        res = Outcome("hang", 0, f"ran past {time_limit:.0f} s")
    except Exception as exc:  # noqa: BLE001 - what the product let escape
        res = Outcome("traceback", 0, "".join(traceback.format_exception_only(type(exc), exc)).strip()[-400:])
    except RecursionError as exc:  # pragma: no cover - a subclass of Exception; kept for clarity
        res = Outcome("traceback", 0, repr(exc))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    res.seconds = time.perf_counter() - t0
    res.cpu_seconds = time.process_time() - c0
    return res
