"""An external ranking file (a leaderboard, a vendor's list) against the latent posterior ranking.

Seed 000 (Hardy et al. 2026) Table 3 compares the latent ranking with published leaderboards by
Kendall tau and Spearman rho; :func:`~.ranks.ranking_agreement` computes both
(at the posterior mean of theta, and per draw).  This module reads the
external ranking and says plainly what is wrong with a bad file.

Accepted files
--------------
CSV / TSV (``,`` ``;`` or tab), with a header row:

- a name column: ``model`` (or ``name``, ``agent``, ``system``), and
- one value column: ``rank`` (1 = best; also ``position``, ``place``) or a score,
  higher is better (``score``, ``value``, ``accuracy``, ``elo``, ``rating``, ``resolved``,
  ``success_rate``).  With exactly two columns the second is the value column,
  read as a rank when its name contains "rank", else as a score.

JSON:

- ``{"kind": "rank" | "score", "ranking": {name: value, ...}}``;
- ``{name: value, ...}``: ranks when the values are exactly 1..n, else scores;
- ``[name, name, ...]``: best first (ranks 1..n).

Names are matched to the posterior's model names exactly (after trimming
spaces); names on one side only are listed in the result, never dropped
silently.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ExternalRanking", "ExternalRankingError", "read_external_ranking", "compare_with_external",
           "external_ranking_summary", "format_external"]

NAME_COLUMNS = ("model", "name", "agent", "system", "model_name")
RANK_COLUMNS = ("rank", "position", "place", "ranking")
SCORE_COLUMNS = ("score", "value", "accuracy", "elo", "rating", "resolved", "success_rate", "mean_score", "pass_rate")


class ExternalRankingError(ValueError):
    """A ranking file that cannot be read, with the file, line, column and fix."""


@dataclass(frozen=True)
class ExternalRanking:
    """Name -> value, and whether a value is a rank (1 = best) or a score (higher is better)."""

    values: dict
    kind: str
    source: str

    def __post_init__(self):
        if self.kind not in ("rank", "score"):
            raise ValueError(f"kind should be 'rank' or 'score', got {self.kind!r}")


def _number(text, where: str) -> float:
    try:
        v = float(str(text).strip())
    except ValueError:
        raise ExternalRankingError(f"{where}: {str(text)!r} is not a number; give a rank (1 = best) or a "
                                   "score (higher is better)") from None
    if not math.isfinite(v):
        raise ExternalRankingError(f"{where}: {text!r} is not a finite number")
    return v


def _check_ranks(values: dict, path, where_of) -> None:
    for name, v in values.items():
        if v < 1:
            raise ExternalRankingError(f"{where_of(name)}: rank {v:g} is below 1; ranks start at 1 (the best)")


def _read_csv(path: Path, text: str, kind: str | None) -> ExternalRanking:
    try:
        dialect = csv.Sniffer().sniff(text.splitlines()[0] if text else "", delimiters=",;\t")
        delim = dialect.delimiter
    except csv.Error:
        delim = ","
    from ..side_files import csv_rows

    rows = csv_rows(text, path, "ranking file", error=ExternalRankingError, delimiter=delim)
    if not rows or not any(c.strip() for c in rows[0]):
        raise ExternalRankingError(f"{path}, line 1: the file is empty; give a header such as 'model,rank' and one "
                                   "row per model")
    header = [c.strip() for c in rows[0]]
    low = [c.lower() for c in header]
    name_col = next((low.index(c) for c in NAME_COLUMNS if c in low), None)
    if name_col is None and len(header) == 2:
        name_col = 0
    if name_col is None:
        raise ExternalRankingError(f"{path}, line 1: no name column (one of {', '.join(NAME_COLUMNS)}); columns "
                                   f"present: {', '.join(header)}. Rename the column with the model names to 'model'")
    value_col = next((low.index(c) for c in (*RANK_COLUMNS, *SCORE_COLUMNS) if c in low), None)
    if value_col is None and len(header) == 2:
        value_col = 1 - name_col
    if value_col is None:
        raise ExternalRankingError(f"{path}, line 1: no rank or score column; columns present: {', '.join(header)}. "
                                   "Name the column 'rank' (1 = best) or 'score' (higher is better)")
    if kind is None:
        kind = "rank" if "rank" in low[value_col] or low[value_col] in RANK_COLUMNS else "score"
    values, line_of = {}, {}
    for i, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) <= max(name_col, value_col):
            raise ExternalRankingError(f"{path}, line {i}: {len(row)} field(s) where the header has {len(header)}; "
                                       "give a name and a value on every row")
        name = row[name_col].strip()
        if not name:
            raise ExternalRankingError(f"{path}, line {i}, column {header[name_col]!r}: empty name")
        if name in values:
            raise ExternalRankingError(f"{path}, line {i}, column {header[name_col]!r}: {name!r} already appears "
                                       f"on line {line_of[name]}; give each model once")
        values[name] = _number(row[value_col], f"{path}, line {i}, column {header[value_col]!r}")
        line_of[name] = i
    if len(values) < 2:
        raise ExternalRankingError(f"{path}: {len(values)} model(s) ranked; a rank correlation needs at least 2")
    if kind == "rank":
        _check_ranks(values, path, lambda n: f"{path}, line {line_of[n]}, column {header[value_col]!r}")
    return ExternalRanking(values, kind, str(path))


def _read_json(path: Path, text: str, kind: str | None) -> ExternalRanking:
    from ..side_files import loads_json

    data = loads_json(text, path, "ranking file", error=ExternalRankingError)  # a model given twice is refused
    if isinstance(data, list):
        names = [str(x).strip() for x in data]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ExternalRankingError(f"{path}: {', '.join(map(repr, dup))} listed twice; list each model once, best "
                                       "first")
        values, kind = {n: float(i) for i, n in enumerate(names, start=1)}, "rank"
    elif isinstance(data, dict):
        if "ranking" in data:
            kind = kind or data.get("kind")
            if kind not in ("rank", "score"):
                raise ExternalRankingError(f"{path}: 'kind' should be \"rank\" (1 = best) or \"score\" (higher is "
                                           f"better), got {data.get('kind')!r}")
            data = data["ranking"]
            if not isinstance(data, dict):
                raise ExternalRankingError(f"{path}: 'ranking' should be an object {{model: value}}")
        values = {}
        for k, v in data.items():
            if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                raise ExternalRankingError(f"{path}, key {k!r}: expected a number, got {json.dumps(v)}")
            values[str(k).strip()] = _number(v, f"{path}, key {k!r}")
        if kind is None:
            ints = sorted(values.values())
            kind = "rank" if ints == [float(i) for i in range(1, len(ints) + 1)] else "score"
    else:
        raise ExternalRankingError(f"{path}: expected a JSON object {{model: rank or score}} or a list of models "
                                   f"best first, got {type(data).__name__}")
    if len(values) < 2:
        raise ExternalRankingError(f"{path}: {len(values)} model(s) ranked; a rank correlation needs at least 2")
    if kind == "rank":
        _check_ranks(values, path, lambda n: f"{path}, key {n!r}")
    return ExternalRanking(values, kind, str(path))


def read_external_ranking(path: str | Path, kind: str | None = None) -> ExternalRanking:
    """Read a ranking file (module note for the layouts).

    Parameters
    ----------
    path
        CSV/TSV or JSON file.
    kind
        ``"rank"`` or ``"score"`` to override what the file's layout implies.

    Raises
    ------
    ExternalRankingError
        An unreadable or ill-formed file; the message names the file, line
        (or key) and column, and the fix.
    """
    path = Path(path)
    if kind not in (None, "rank", "score"):
        raise ValueError(f"kind should be 'rank' or 'score', got {kind!r}")
    from ..side_files import read_side_text

    # the side-file gate: a FIFO or /dev/zero is refused before it is opened, a size cap, UTF-8 with the line
    text = read_side_text(path, "ranking file", error=ExternalRankingError)
    if path.suffix.lower() == ".json" or text.lstrip()[:1] in ("{", "["):
        return _read_json(path, text, kind)
    return _read_csv(path, text, kind)


def compare_with_external(theta, names, ranking: ExternalRanking):
    """Kendall tau and Spearman rho between the latent ranking and ``ranking`` (seed 000 Table 3).

    Parameters
    ----------
    theta, names
        ``(S, M)`` latent-capability draws and the M names (:func:`~.fitting.theta_from_posterior`).
    ranking
        From :func:`read_external_ranking`.

    Returns
    -------
    RankAgreement
        See :func:`~.ranks.ranking_agreement`.
    """
    from ..ranks import ranking_agreement

    names = [str(n).strip() for n in names]
    try:
        return ranking_agreement(theta, ranking.values, names, kind=ranking.kind)
    except ValueError as exc:
        raise ExternalRankingError(f"{ranking.source}: {exc}; models in the fit: {', '.join(names[:8])}"
                                   f"{' ...' if len(names) > 8 else ''}") from None


def _posterior_for_dstudy(args):
    """The posterior behind ``ddr dstudy PATH``: a cached fit file, or the corpus's fit.

    For a corpus this is the fit :func:`~.fitting.components_for_dstudy` has
    just made or reopened (same model, same settings, so a cache hit).
    """
    from ..cache import CacheFileError, read_fit_file
    from ..fitting import fit_corpus, posterior_from_entry, settings_from_args

    path = Path(args.path)
    if path.suffix == ".h5":
        try:
            return posterior_from_entry(read_fit_file(path))
        except CacheFileError as exc:
            raise ValueError(f"{path}: {exc}") from None
    from ..corpus.io import load_corpus

    corpus = load_corpus(path, getattr(args, "format", None))
    settings = settings_from_args(args)
    design = getattr(args, "design", None) or "per-benchmark"
    return fit_corpus(corpus, design, settings, cache_dir=getattr(args, "cache", None)).posterior


def external_ranking_summary(args) -> dict:
    """``ddr dstudy --external-ranking FILE``: the agreement as a JSON-ready dict.

    The latent ranking is ``theta = u_m`` (``--object model``) or
    ``u_m + u_a + u_ma`` per model-scaffold pair (``--object system``), SPEC sec. 5.
    """
    from ..fitting import theta_from_posterior

    if getattr(args, "components", None) is not None or getattr(args, "path", None) is None:
        raise ValueError("--external-ranking needs a corpus or a cached fit (.h5): a components table has no "
                         "latent ranking")
    ranking = read_external_ranking(args.external_ranking, getattr(args, "external_kind", None))
    post = _posterior_for_dstudy(args)
    theta, names = theta_from_posterior(post, "system" if getattr(args, "object", "model") == "system" else "model")
    parts = _rank_parts(args, post, names)
    if parts is None:
        out = compare_with_external(theta, names, ranking).to_dict()
        out["file"] = str(args.external_ranking)
        return out
    return _external_by_part(theta, [str(n).strip() for n in names], ranking, parts, str(args.external_ranking))


def _rank_parts(args, post, names):
    """The connected parts of the fit's design (None: connected); SPEC sec. 6, seed 000 App. E."""
    from ..rank_parts import model_parts, parts_from_posterior

    path = Path(args.path)
    if path.suffix == ".h5":  # no corpus at hand: the fit's interaction levels are the observed pairs
        return parts_from_posterior(post, names)
    from ..corpus.io import load_corpus
    from ..design import connectivity

    return model_parts(connectivity(load_corpus(path, getattr(args, "format", None))).components, names)


def _external_by_part(theta, names, ranking: ExternalRanking, parts, file: str) -> dict:
    """A disconnected design: one agreement per part with two or more ranked models, never one across parts."""
    from ..rank_parts import part_reasons

    reasons = part_reasons(parts)
    out_parts = []
    for k, p in enumerate(parts):
        row = {"part": k + 1, "models": p, "reason": reasons[k]}
        in_file = [m for m in p if m in ranking.values]
        if len(in_file) >= 2:
            idx = [names.index(m) for m in p]
            row["agreement"] = compare_with_external(theta[:, idx], p, ranking).to_dict()
        else:
            row["agreement"] = None
            row["skipped"] = f"{len(in_file)} of its models in the ranking file; a rank correlation needs 2"
        out_parts.append(row)
    if all(r["agreement"] is None for r in out_parts):
        raise ExternalRankingError(f"{ranking.source}: no part of the design has two models in the ranking file "
                                   f"(the design is disconnected; models in the fit: {', '.join(names[:8])})")
    return {"file": file, "kind": ranking.kind, "connected": False, "parts": out_parts}


def format_external(d: dict) -> str:
    """Plain-text lines of :func:`external_ranking_summary`."""
    if "parts" in d:  # a disconnected design: one block per part
        lines = [f"external ranking {d['file']} ({d['kind']}s), within {len(d['parts'])} parts of a disconnected "
                 "design (no comparison across parts):"]
        for p in d["parts"]:
            lines.append(f"part {p['part']}: {p['reason']}")
            if p["agreement"] is None:
                lines.append(f"  skipped: {p['skipped']}")
            else:
                lines.append("  " + format_external(dict(p["agreement"], file=d["file"])).replace("\n", "\n  "))
        return "\n".join(lines)
    kd, sd = d["kendall_draws"], d["spearman_draws"]
    lines = [f"external ranking {d['file']} ({d['kind']}s, {d['n_models']} models in common):",
             f"  Kendall tau  {d['kendall_tau']:+.3f}  (per draw: median {kd['median']:+.3f}, "
             f"95% HDI [{kd['hdi95'][0]:+.3f}, {kd['hdi95'][1]:+.3f}])",
             f"  Spearman rho {d['spearman_rho']:+.3f}  (per draw: median {sd['median']:+.3f}, "
             f"95% HDI [{sd['hdi95'][0]:+.3f}, {sd['hdi95'][1]:+.3f}])"]
    if d["missing_in_reference"]:
        lines.append(f"  not in the file: {', '.join(d['missing_in_reference'])}")
    if d["missing_in_posterior"]:
        lines.append(f"  not in the fit: {', '.join(d['missing_in_posterior'])}")
    return "\n".join(lines)
