"""The doors beside the corpus: side files read through the CLI and outputs written by it.

Each case is a :class:`hostile_cases.Case` of kind ``"cli"``: ``ddr`` must refuse it with exit 2 and a
message naming the file and a fix, before anything is read past the gate or written.  A side file that
blocks (a FIFO) or never ends (``/dev/zero``), nests thousands deep, holds a 128 KiB field or gives a
JSON key twice; an output that is the input corpus, a FIFO, an unknown extension, a missing folder or
a side file the user did not ask to replace.  Kept apart from ``hostile_cases.py`` only for its size.
"""

from __future__ import annotations

import json
import os
from pathlib import Path


def door_cases(Case, table) -> list:
    """The cases; ``Case`` and ``table`` (the valid corpus text) come from ``hostile_cases``."""
    cases = []

    def corpus(folder: Path) -> Path:
        c = folder / "door-corpus.csv"
        c.write_text(table())
        return c

    # -- side files -------------------------------------------------------------------------------------
    deep_json = '{"a": ' + "[" * 50_000 + "]" * 50_000 + "}"
    deep_toml = "models = " + "[" * 50_000 + "]" * 50_000 + "\n"
    side = {  # option, the command that reads it before any fit, file name
        "components": (lambda c, p: ["dstudy", "--components", p], "components"),
        "prices": (lambda c, p: ["report", c, "-o", c.with_suffix(".pdf"), "--prices", p], "prices"),
        "token-prices": (lambda c, p: ["report", c, "-o", c.with_suffix(".pdf"), "--token-prices", p], "tokens"),
        "external-ranking": (lambda c, p: ["analyses", c, "--which", "capability", "--external-ranking", p],
                             "ranking"),
        "families": (lambda c, p: ["analyses", c, "--which", "transfer", "--families", p], "families"),
    }
    for opt, (argv, stem) in side.items():
        ext = ".toml" if opt == "families" else ".json"
        for kind in ("fifo", "dev-zero", "folder", "deep", "dup-key", "big-field"):
            if (kind == "dup-key" and opt == "families") or (kind == "big-field" and opt == "families"):
                continue

            def build(folder, argv=argv, stem=stem, ext=ext, kind=kind):
                c = corpus(folder)
                line = None
                if kind == "fifo":
                    p = folder / f"{stem}-fifo{ext}"
                    os.mkfifo(p)
                elif kind == "dev-zero":
                    p = folder / f"{stem}-zero{ext}"
                    p.symlink_to("/dev/zero")
                elif kind == "folder":
                    p = folder / f"{stem}-folder{ext}"
                    p.mkdir()
                elif kind == "deep":
                    p = folder / f"{stem}-deep{ext}"
                    p.write_text(deep_toml if ext == ".toml" else deep_json)
                elif kind == "dup-key":
                    p = folder / f"{stem}-dup.json"
                    body = {"components": '{"scale": "sd", "components": {"model": 1,\n "model": 2}}',
                            "prices": '{"bench": 1,\n "bench": 2}', "tokens": '{"m1": [1, 2],\n "m1": [3, 4]}',
                            "ranking": '{"m1": 1, "m2": 2,\n "m1": 3}'}[stem]
                    p.write_text(body)
                    line = 2
                else:
                    p = folder / f"{stem}-big.csv"
                    head = {"components": "term,sigma", "prices": "benchmark,price", "tokens": "model,input,output",
                            "ranking": "model,rank"}[stem]
                    p.write_text(f"{head}\n" + "x" * ((128 << 10) + 1) + ",1\n")
                    line = 2
                return [str(a) for a in argv(c, p)], p, line
            cases.append(Case(f"door-side-{opt}-{kind}", "cli", build, isolate=kind in ("fifo", "dev-zero")))

    # -- outputs ------------------------------------------------------------------------------------------
    def report_onto_corpus(folder):
        c = corpus(folder)
        return ["report", str(c), "-o", str(c), "--no-cache"], c, None

    def convert_onto_fifo(folder):
        c = corpus(folder)
        p = folder / "out-fifo.csv"
        os.mkfifo(p)
        return ["convert", str(c), "-o", str(p)], p, None

    def convert_xlsx(folder):
        c = corpus(folder)
        return ["convert", str(c), "-o", str(folder / "out.xlsx")], folder / "out.xlsx", None

    def convert_missing_folder(folder):
        c = corpus(folder)
        return ["convert", str(c), "-o", str(folder / "nope" / "out.csv")], folder / "nope", None

    def pyirt_users_alias_file(folder):
        c = corpus(folder)
        (folder / "out.aliases.toml").write_text(json.dumps({"mine": 1}))
        return ["convert", str(c), "--to", "py-irt", "-o", str(folder / "out.jsonl")], folder / "out.aliases.toml", \
            None

    for name, build in (("report-onto-corpus", report_onto_corpus), ("convert-onto-fifo", convert_onto_fifo),
                        ("convert-xlsx", convert_xlsx), ("convert-missing-folder", convert_missing_folder),
                        ("pyirt-users-alias-file", pyirt_users_alias_file)):
        cases.append(Case(f"door-output-{name}", "cli", build))
    return cases
