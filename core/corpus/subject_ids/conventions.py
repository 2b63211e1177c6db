"""Subject-id conventions: how leaderboards write "which system ran", as data.

A py-irt subject id (or any id that names an evaluated system) usually mixes a
scaffold and a model, in a way each leaderboard spells its own:

==============================  ============================================  ==========================
convention                      example                                       file
==============================  ============================================  ==========================
Terminal-Bench run id           ``terminus-2_gpt-5_at_openai``                ``10-terminal-bench.toml``
SWE-bench experiment name       ``20240620_sweagent_claude3.5sonnet``,        ``20-swe-bench.toml``
                                ``20240820_honeycomb`` (date + product)
Inspect ``<provider>/<model>``  ``openai/gpt-4o``                             ``30-inspect.toml``
HAL ``<scaffold>/<model>``      ``hal_generalist/o4-mini``                    ``40-hal.toml``
bare model name                 ``gpt-5-mini``                                ``50-model-names.toml``
==============================  ============================================  ==========================

Each convention is an alias file (the format of :mod:`.pyirt`) in
``resources/aliases/conventions/``, tried in file-name order.  Dataset alias
files (``resources/aliases/*.toml``: ``bridge.toml``, ``terminal-bench-2.toml``)
are different: they hold facts about one data set (BRIDGE's model-named
subjects ran SWE-bench in a given scaffold) that would be wrong elsewhere, so
they apply only to a file they fit (their own rules map at least half of its
ids), as before.

The layers
----------
Subject ids are split by a stack of alias files, top first:

1. the file given with ``aliases=`` (``--aliases``), else a sidecar
   ``<file stem>.aliases.toml`` next to the data file, else the shipped dataset
   file that fits (see :func:`.pyirt.resolve_aliases`);
2. every shipped convention.

Each id is split by the first layer whose explicit, prefix or pattern rules
map it (rules 1-3 of :mod:`.pyirt`); the ``[models]`` and ``[scaffolds]``
tables of the layers above it then rename what it found, so a user's file
adds rules and overrides names.  Ids no layer maps take the fallback rules of
the top layer and are warned about, one by one, as before.  The share of ids
each layer mapped is reported (warning ``subject-ids-mapped``, provenance
``id_mapping``).  ``aliases=None`` switches every layer off (fallbacks only).

Item ids (benchmark and task) use the ``[[benchmarks]]`` rules of the top
layer, then of the conventions that mapped at least one subject id of the
file: a SWE-bench leaderboard file gets its ``owner__repo-NNNN`` items put in
benchmark ``swebench`` because its subject ids are SWE-bench experiment names.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from .aliases import UNKNOWN, AliasRules, Subject, load_aliases, resources_dir, split_subject

__all__ = ["Layer", "AliasStack", "shipped_conventions", "conventions_dir", "build_stack"]


def conventions_dir() -> Path:
    """The folder of the shipped subject-id conventions."""
    return resources_dir() / "aliases" / "conventions"


@lru_cache(maxsize=1)
def _load_shipped() -> tuple[AliasRules, ...]:
    return tuple(load_aliases(p) for p in sorted(conventions_dir().glob("*.toml")))


def shipped_conventions() -> list[AliasRules]:
    """The shipped conventions, in the order they are tried (file name order)."""
    return list(_load_shipped())


def label_of(rules: AliasRules) -> str:
    """A short name of an alias file for reports: its ``[meta] name``, else the file name."""
    name = rules.meta.get("name") if isinstance(rules.meta, dict) else None
    if name:
        return str(name)
    return Path(rules.source).name if rules.source else "alias rules"


@dataclass
class Layer:
    """One alias file in the stack: its rules, a label for reports and how it was chosen."""

    rules: AliasRules
    label: str
    how: str  # "given", "sidecar", "shipped", "auto ...", "convention"

    @property
    def is_convention(self) -> bool:
        return self.how == "convention"


@dataclass
class AliasStack:
    """Alias files applied top first (see the module docstring)."""

    layers: list[Layer] = field(default_factory=list)

    @property
    def top(self) -> AliasRules:
        """The rules whose fallbacks, ``benchmark`` and ``default_scaffold`` apply (empty rules if none)."""
        return self.layers[0].rules if self.layers else AliasRules()

    @property
    def unknown_scaffolds(self) -> set[str]:
        """Scaffold names that mean "the id names no scaffold" (every layer's ``default_scaffold``)."""
        return {UNKNOWN, *(lay.rules.default_scaffold for lay in self.layers)}

    def split(self, sid: str) -> tuple[Subject, Layer | None]:
        """Split one id; returns the subject and the layer that mapped it (None: a fallback)."""
        found, k = None, 0
        for k, layer in enumerate(self.layers):
            sub = split_subject(sid, layer.rules)
            if not sub.fallback:
                found = layer
                break
        else:
            k = 0
            sub = split_subject(sid, self.top)
        rename = self.layers[:k] if found is not None else []
        sbb = {b: self._alias_scaffold(sc, found or (self.layers[0] if self.layers else None), rename)
               for b, sc in sub.scaffold_by_benchmark.items()}
        model, scaffold = sub.model, sub.scaffold
        for upper in reversed(rename):  # the top layer has the last word
            model = upper.rules.models.get(model, model)
            scaffold = upper.rules.scaffolds.get(scaffold, scaffold)
        if found is not None and found.is_convention:
            sub = replace(sub, rule=f"{found.label}: {sub.rule}")
        return replace(sub, model=model, scaffold=scaffold, scaffold_by_benchmark=sbb), found

    @staticmethod
    def _alias_scaffold(name: str, own: Layer | None, rename: list[Layer]) -> str:
        if own is not None:
            name = own.rules.scaffolds.get(name, name)
        for upper in reversed(rename):
            name = upper.rules.scaffolds.get(name, name)
        return name

    def item_rules(self, used: set[int]) -> AliasRules:
        """Rules for item ids: the non-convention layers', then those of the conventions in ``used``.

        ``used`` holds indices into :attr:`layers` of layers that mapped at least one subject.
        """
        benchmarks, default = [], None
        for i, layer in enumerate(self.layers):
            if layer.is_convention and i not in used:
                continue
            benchmarks.extend(layer.rules.benchmarks)
            if default is None and layer.rules.benchmark:
                default = layer.rules.benchmark
        return AliasRules(benchmark=default, benchmarks=benchmarks)


def build_stack(top: AliasRules | None, how: str, *, conventions: bool = True) -> AliasStack:
    """The stack of ``top`` (None: no alias file) over the shipped conventions."""
    layers = []
    if top is not None and how not in ("none",) and not how.startswith("none"):
        layers.append(Layer(top, Path(top.source).name if top.source else "given rules", how))
    if conventions:
        layers.extend(Layer(r, label_of(r), "convention") for r in shipped_conventions())
    return AliasStack(layers)


def mapping_summary(subjects: list[tuple[str, Subject, Layer | None]], unknown: set[str]) -> dict:
    """How the ids were mapped: counts by layer and by kind, for the report and provenance.

    Kinds: ``split`` (model and scaffold named), ``model only`` (a rule
    recognised the id but it names no scaffold: date+product, bare model
    names), ``no rule`` (a fallback).
    """
    by_layer: dict[str, int] = {}
    kinds = {"split": 0, "model only": 0, "no rule": 0}
    for _sid, sub, layer in subjects:
        if layer is None:
            kinds["no rule"] += 1
            continue
        by_layer[layer.label] = by_layer.get(layer.label, 0) + 1
        named = sub.scaffold not in unknown or any(s not in unknown for s in sub.scaffold_by_benchmark.values())
        kinds["split" if named else "model only"] += 1
    n = len(subjects)
    mapped = n - kinds["no rule"]
    return {"ids": n, "mapped": mapped, "share_mapped": (mapped / n) if n else 0.0, "by_rules": by_layer,
            **{k.replace(" ", "_"): v for k, v in kinds.items()}}


def format_mapping(summary: dict) -> str:
    """One sentence of :func:`mapping_summary` (the ``subject-ids-mapped`` warning)."""
    by = ", ".join(f"{k} {v}" for k, v in sorted(summary["by_rules"].items(), key=lambda kv: -kv[1]))
    return (f"{summary['mapped']} of {summary['ids']} subject ids ({summary['share_mapped']:.0%}) were mapped by "
            f"rules ({by or 'none'}): {summary['split']} into a model and a scaffold, {summary['model_only']} "
            f"to a model without a scaffold; {summary['no_rule']} matched no rule.")


def subjects_toml(rows: dict[str, tuple[str, str]], *, source: str | None = None) -> str:
    """An alias file with one explicit ``[subjects]`` entry per id: ``{id: (model, scaffold)}``.

    What the app's subject-id table saves; read back with ``aliases=`` (``--aliases``), or as the
    sidecar ``<data file stem>.aliases.toml``, its entries win over every convention.
    """
    import json

    q = lambda s: json.dumps(str(s), ensure_ascii=False)  # noqa: E731 - a JSON string is a TOML basic string
    lines = ["# Alias file written by DDR Explorer's subject-id table (format: core/corpus/importers/pyirt.py).",
             "# Each entry fixes the model and scaffold of one subject id; it wins over every convention.", "",
             "[meta]", 'description = "subject ids mapped by hand"']
    if source:
        lines.append(f"source = {q(source)}")
    lines += ["", "[subjects]"]
    # a row without a real scaffold gets no scaffold key: it stays "names no scaffold" (unsplit.py), because
    # an entry that names a scaffold is taken as written
    lines += [f"{q(sid)} = {{ model = {q(m)}" + ("" if str(s).strip() in ("", UNKNOWN) else f", scaffold = {q(s)}")
              + " }" for sid, (m, s) in rows.items()]
    return "\n".join(lines) + "\n"
