"""Export a canonical corpus to py-irt JSON lines, with the alias file that reads it back.

py-irt knows *subjects* and *items*, not models, scaffolds and benchmarks.  The
export encodes them by these rules, so that the file reads back into the same
corpus (:mod:`.importers.pyirt`) and stays readable by people and other tools:

* **subject** = one agent, ``"<scaffold>/<model>"`` (the HAL-style
  convention, :mod:`.subject_ids.conventions`); its line holds every item the
  agent attempted;
* **item** = ``"<benchmark>/<task>"`` when the corpus has several benchmarks,
  else the task id;
* the separator is ``/`` unless a benchmark (for items) or a scaffold (for
  subjects) has a ``/`` in its name: then it is the first of
  :data:`SEPARATORS` that no such name contains.  A name's prefix up to the
  separator is then always the whole benchmark or scaffold, so no two cells get
  one id (``x/y`` + ``t1`` and ``x`` + ``y/t1`` were both ``x/y/t1``, and one
  cell's counts replaced the other's);
* **response** = ``0``/``1`` for a single trial, else
  ``{"successes": k, "trials": n}`` summed over the agent's trials of the task.

Beside the data file, ``<stem>.aliases.toml`` maps every subject id back to its
model and scaffold explicitly (``[subjects]``) and every item prefix to its
benchmark (``[[benchmarks]]``), because names may themselves contain ``/``.
The py-irt importer uses that sidecar file automatically, so
``ddr convert corpus.csv --to py-irt -o out.jsonl`` followed by
``ddr inspect out.jsonl`` gives the same agents, tasks and counts.

What py-irt cannot hold is not written: trial ids (the counts are kept),
verifier columns (the binary result under the corpus's scoring rule is
kept), cost, tokens and task metadata.  The alias file's ``[meta]`` says so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path


from ..files import atomic_path, check_output
from .corpus import Corpus

__all__ = ["subject_id", "item_id", "write_pyirt"]


#: Separators tried in turn, the first that no benchmark (or scaffold) name contains is used.
SEPARATORS = ("/", "::", " | ", " ~ ", "\t")


def separator(prefixes) -> str:
    """The first of :data:`SEPARATORS` that none of ``prefixes`` (the benchmark or scaffold names) contains.

    Raises
    ------
    ValueError
        Every separator occurs in some name (the export would not be one-to-one).
    """
    names = [str(x) for x in prefixes]
    for sep in SEPARATORS:
        if not any(sep in n for n in names):
            return sep
    raise ValueError(f"cannot export to py-irt: the names contain every separator ({', '.join(map(repr, SEPARATORS))}),"
                     " so two cells could get one id; rename the benchmark or scaffold with the most of them")


def subject_id(model: str, scaffold: str, sep: str = "/") -> str:
    """The exported subject id of an agent: ``"<scaffold>/<model>"``."""
    return f"{scaffold}{sep}{model}"


def item_id(benchmark: str, task: str, several: bool, sep: str = "/") -> str:
    """The exported item id: ``"<benchmark>/<task>"`` with several benchmarks, else the task."""
    return f"{benchmark}{sep}{task}" if several else str(task)


def _toml_string(s: str) -> str:
    return json.dumps(str(s), ensure_ascii=False)  # a JSON string is a valid TOML basic string


#: The first line of every alias file the export writes: a file beside the output that starts with it is
#: ours and is rewritten; any other is the user's and is refused unless ``force``.
ALIAS_HEADER = "# Written by ddr convert --to py-irt"
#: The extensions of the data file (py-irt reads JSON lines).
SUFFIXES = (".jsonl", ".json", ".ndjson")


def write_pyirt(corpus: Corpus, path: str | Path, *, inputs=(), force: bool = False) -> tuple[Path, Path]:
    """Write ``corpus`` as py-irt JSON lines and its alias file beside it.

    Parameters
    ----------
    corpus
        A validated corpus.
    path
        The ``.jsonl`` file to write; the alias file is ``<stem>.aliases.toml``
        in the same folder.
    inputs
        The files the corpus was read from: neither output may replace one (:func:`~..files.check_output`).
    force
        Replace an existing alias file that this export did not write (else it is refused).

    Raises
    ------
    ddr_explorer.core.files.OutputRefused
        Before anything is written: an output that is an input, a device or folder, a missing folder, an
        extension other than :data:`SUFFIXES`, or an alias file of the user's without ``force``.

    Returns
    -------
    (data file, alias file)
    """
    path = check_output(path, inputs=inputs, suffixes=SUFFIXES)
    alias = check_output(path.with_name(f"{path.stem}.aliases.toml"), inputs=inputs, side_file_of=ALIAS_HEADER,
                         replace_side_file=force)
    t = corpus.table
    cells = (t.astype({c: str for c in ("benchmark", "task", "model", "scaffold")})
             .groupby(["model", "scaffold", "benchmark", "task"], sort=True, observed=True)[["successes", "trials"]]
             .sum().reset_index())
    benchmarks = sorted(cells["benchmark"].unique())
    several = len(benchmarks) > 1
    item_sep, subject_sep = separator(benchmarks), separator(cells["scaffold"].unique())
    lines = []
    subjects: dict[str, tuple[str, str]] = {}
    for (model, scaffold), part in cells.groupby(["model", "scaffold"], sort=True):
        sid = subject_id(model, scaffold, subject_sep)
        subjects[sid] = (model, scaffold)
        responses = {}
        for b, task, k, n in zip(part["benchmark"], part["task"], part["successes"], part["trials"]):
            responses[item_id(b, task, several, item_sep)] = (int(k) if int(n) == 1 else
                                                             {"successes": int(k), "trials": int(n)})
        if len(responses) != len(part):  # cannot happen with the separator chosen; never write a lost cell
            raise ValueError(f"cannot export to py-irt: two tasks of {sid!r} get one item id")
        lines.append(json.dumps({"subject_id": sid, "responses": responses}, ensure_ascii=False))
    toml = [f"{ALIAS_HEADER} with {path.name} (core/corpus/export_pyirt.py).",
            f"# Subject ids are \"<scaffold>{subject_sep}<model>\"; items \"<benchmark>{item_sep}<task>\" (several "
            "benchmarks) or the task.",
            "# This file maps them back exactly; the py-irt importer reads it automatically.",
            'default_scaffold = "unknown"']
    if not several:
        toml.append(f"benchmark = {_toml_string(benchmarks[0])}")
    toml += ["", "[meta]", f"description = {_toml_string('py-irt export of ' + str(corpus.name))}",
             f"source = {_toml_string(str(corpus.source))}",
             'not_kept = "trial ids (counts kept), verifier columns, cost, tokens, task metadata"', "", "[subjects]"]
    toml += [f"{_toml_string(sid)} = {{ model = {_toml_string(m)}, scaffold = {_toml_string(s)} }}"
             for sid, (m, s) in subjects.items()]
    if several:
        # longest benchmark name first, so that "swe-bench-verified" is not read as "swe-bench" + "-verified/..."
        for b in sorted(benchmarks, key=lambda x: (-len(x), x)):
            toml += ["", "[[benchmarks]]", f"name = {_toml_string(b)}",
                     f"regex = {_toml_string('^' + re.escape(b) + re.escape(item_sep) + '(?P<task>.+)$')}"]
    with atomic_path(path, inputs=inputs) as tmp:
        tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with atomic_path(alias, inputs=inputs) as tmp:
        tmp.write_text("\n".join(toml) + "\n", encoding="utf-8")
    return path, alias
