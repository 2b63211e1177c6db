"""The analysis state: what the user chose, saved and reopened as one JSON file.

An :class:`AnalysisState` holds everything an analysis needs apart from the
data and the posterior: the corpus (path and format), the model (a preset name
or a formula), the sampler settings, the object of measurement and the claim,
the design the D-study is looking at (tasks, scaffolds, benchmarks,
replicates), the price per trial of each benchmark, the target and the budget.
The app's views read it and write it; nothing here imports Qt.

Views subscribe with ``state.events.connect(callback)``; :meth:`AnalysisState.update`
validates a change, applies it and calls every subscriber with the set of
field names that changed (the napari pattern: the model knows nothing of its
views).  Assigning an attribute directly changes the value silently; use
:meth:`~AnalysisState.update` whenever a view should follow.

The file
--------
``{"format": "ddr-explorer-analysis", "version": 1, ...fields...}``.  Unknown
fields and wrong types are errors that name the file and the field, so a
hand-edited file never half-loads.  Saving is atomic (a temporary file in the
same folder, then :func:`os.replace`): a crash mid-write leaves the previous
file intact.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from .dstudy import DEFAULT_TARGETS, DStudyDesign, ObservedDesignError, observed_design
from .errors import shown
from .files import write_text_atomic

__all__ = [
    "FILE_FORMAT",
    "FILE_VERSION",
    "SIZE_FIELDS",
    "SessionError",
    "StateEvents",
    "set_aside",
    "AnalysisState",
    "Session",
    "ALL_BENCHMARKS",
]

#: Value of the ``format`` key of a saved analysis.
FILE_FORMAT = "ddr-explorer-analysis"
#: Version of the file layout this code writes (and the newest it reads).  2: ``extra_facets``, the
#: ``"agent"`` object (the ddr preset, seed 003 (DDR paper 2026) Eq. 1) and the gate as the default run length; version 1
#: files read as before (no extra facets; ``sampler`` draws keep their fixed length).
FILE_VERSION = 2
#: Key of :attr:`AnalysisState.prices` for one price that every benchmark shares.
ALL_BENCHMARKS = "(all benchmarks)"
#: The design sizes a D-study varies, in slider order.
SIZE_FIELDS: tuple[str, ...] = ("n_tasks", "n_scaffolds", "n_benchmarks", "n_replicates")

_OBJECTS = ("model", "system", "agent")
#: Facets of each object -> its name (seed 003's agent is one model-scaffold pair, a facet of its own).
_OBJECT_OF_FACETS = {frozenset({"model"}): "model", frozenset({"model", "scaffold"}): "system",
                     frozenset({"agent"}): "agent"}
#: ``load_corpus`` options an analysis keeps (AnalysisState.corpus_options).
CORPUS_OPTIONS: tuple[str, ...] = ("columns", "benchmark", "scaffold", "aliases", "scoring", "gamma", "encoding",
                                   "slice", "task_metadata", "release_dates",  # the slice and joined files
                                   "unsplit_ids")  # ids that name no scaffold left out
_CLAIMS = tuple(DEFAULT_TARGETS)


class SessionError(ValueError):
    """An analysis state or file is invalid; the message names the file and field and says what fixes it."""


class StateEvents:
    """A minimal, Qt-free change signal: ``connect(callback)``, ``disconnect(callback)``, ``emit(names)``.

    Callbacks receive a ``frozenset`` of the field names that changed.
    """

    def __init__(self) -> None:
        self._callbacks: list[Callable[[frozenset[str]], Any]] = []

    def connect(self, callback: Callable[[frozenset[str]], Any]) -> None:
        if callback not in self._callbacks:
            self._callbacks.append(callback)

    def disconnect(self, callback: Callable[[frozenset[str]], Any]) -> None:
        if callback in self._callbacks:
            self._callbacks.remove(callback)

    def emit(self, names: frozenset[str]) -> None:
        for cb in list(self._callbacks):  # a callback may disconnect itself
            cb(names)

    def __len__(self) -> int:
        return len(self._callbacks)


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


@dataclass(eq=False)
class AnalysisState:
    """What the user chose for one analysis (SPEC secs. 2-4); saved as JSON.

    Attributes
    ----------
    corpus_path, corpus_format
        The corpus file and its reader (None: detect from the file).
    corpus_options
        How the corpus was read, for reopening it the same way: ``load_corpus``
        options among :data:`CORPUS_OPTIONS` (``{"columns": "task=metadata.instance_id,...",
        "benchmark": "swe-bench-verified"}``; see ``core/corpus/columns.py``).
    model
        A preset name (``"per-benchmark"``, ``"pooled"``, ``"ddr"``) or an
        lme4/brms random-intercept formula.
    sampler
        Settings of the sampler that differ from its defaults
        (``{"draws": 1000, "seed": 3}``; keys are ``SamplerSettings`` fields).
    object_of_measurement
        ``"model"``, ``"system"`` (model-scaffold pair) or ``"agent"`` (the ``ddr`` preset's object,
        seed 003 Eq. 1); a fit sets it to one it supports (:meth:`follow_fit`).
    claim
        ``"relative"`` (ranking; Erho2) or ``"absolute"`` (threshold decisions; Phi).
    n_tasks, n_scaffolds, n_benchmarks, n_replicates
        The design the D-study shows: tasks per benchmark, scaffolds per
        model, benchmarks, trials per (task, model, scaffold) cell (all >= 1).
    n_models
        Models compared (enters the cost only).
    prices
        USD per trial of each benchmark (``{}``: no prices; costs are 0).
    target
        Target coefficient in (0, 1); None uses the claim's default
        (Erho2 >= 0.85 for rankings, Phi >= 0.90 for thresholds; SPEC sec. 4).
    budget
        Budget in USD (> 0) or None.
    observed
        The corpus's own design (``{"n_tasks": ..., ...}``, see
        :func:`~.dstudy.observed_sizes`), marked on the D-study curves; None without a corpus.
    priors
        Priors that differ from the defaults (SPEC sec. 2; seed 000 (Hardy et al. 2026) App. C.1.3):
        ``{"sigma": {"df": 3, "scale": 2.5}, "intercept": {"df": 3, "loc": 0, "scale": 2.5}}``;
        either key may be missing (``{}``: Student-t(3, 0, 2.5) and half-Student-t(3, 0, 2.5)).
    extra_facets
        Levels of the fit's facets beyond benchmark, task, model and scaffold (seed 003 Eq. 1's
        ``step`` and ``error_category``): the corpus's own (no slider moves them); ``{}`` for the
        other presets.
    """

    corpus_path: str | None = None
    corpus_format: str | None = None
    corpus_options: dict[str, Any] = field(default_factory=dict)
    model: str = "per-benchmark"
    sampler: dict[str, Any] = field(default_factory=dict)
    object_of_measurement: str = "model"
    claim: str = "relative"
    n_tasks: float = 50.0
    n_scaffolds: float = 1.0
    n_benchmarks: float = 1.0
    n_replicates: float = 1.0
    n_models: int = 2
    prices: dict[str, float] = field(default_factory=dict)
    target: float | None = None
    budget: float | None = None
    observed: dict[str, float] | None = None
    priors: dict[str, dict[str, float]] = field(default_factory=dict)
    extra_facets: dict[str, float] = field(default_factory=dict)
    events: StateEvents = field(default_factory=StateEvents, repr=False, compare=False)

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            if f.name != "events":
                setattr(self, f.name, _normalise(f.name, getattr(self, f.name)))
        self.validate()

    # -- validation ------------------------------------------------------------
    def validate(self, where: str = "analysis") -> None:
        """Check every field; raise :class:`SessionError` naming ``where`` and the field."""
        for f in dataclasses.fields(self):
            if f.name != "events":
                _check_field(f.name, _normalise(f.name, getattr(self, f.name)), where)

    # -- changes -----------------------------------------------------------------
    def update(self, **changes) -> frozenset[str]:
        """Validate and apply ``changes``, then tell every subscriber which fields changed.

        Values equal to the current ones are not reported; nothing is applied
        when one change is invalid.

        Returns
        -------
        frozenset of str
            The names of the fields that changed.

        Raises
        ------
        SessionError
            An unknown field or an invalid value.
        """
        allowed = {f.name for f in dataclasses.fields(self)} - {"events"}
        unknown = sorted(set(changes) - allowed)
        if unknown:
            raise SessionError(f"analysis: unknown field(s) {', '.join(unknown)}; fields are {', '.join(sorted(allowed))}")
        clean = {}
        for name, value in changes.items():
            value = _normalise(name, value)
            _check_field(name, value, "analysis")
            if value != getattr(self, name):
                clean[name] = value
        if not clean:
            return frozenset()
        for name, value in clean.items():
            setattr(self, name, value)
        names = frozenset(clean)
        self.events.emit(names)
        return names

    # -- derived -------------------------------------------------------------------
    @property
    def effective_target(self) -> float:
        """The target, or the claim's default (0.85 relative, 0.90 absolute)."""
        return DEFAULT_TARGETS[self.claim] if self.target is None else float(self.target)

    @property
    def sizes(self) -> dict[str, float]:
        """``{"n_tasks": ..., "n_scaffolds": ..., "n_benchmarks": ..., "n_replicates": ...}``."""
        return {k: float(getattr(self, k)) for k in SIZE_FIELDS}

    def design(self, **overrides) -> DStudyDesign:
        """The :class:`~.dstudy.DStudyDesign` of the current sizes, prices, object and claim.

        ``overrides`` replace DStudyDesign fields (e.g. ``n_tasks=200``).
        """
        kw = dict(self.sizes, price_per_trial=dict(self.prices) if self.prices else 0.0,
                  n_models=int(self.n_models), object_of_measurement=self.object_of_measurement, claim=self.claim,
                  extra_facets=dict(self.extra_facets))
        kw.update(overrides)
        return DStudyDesign(**kw)

    def observed_design(self) -> DStudyDesign | None:
        """The corpus's own design with this state's prices, object and claim (None when unknown)."""
        return None if self.observed is None else self.design(**self.observed)

    def model_priors(self):
        """The :class:`~.model.formula.Priors` of this state (defaults where :attr:`priors` says nothing)."""
        from .model.formula import HalfStudentT, Priors, StudentT

        kw = {}
        if "sigma" in self.priors:
            kw["sigma"] = HalfStudentT(**self.priors["sigma"])
        if "intercept" in self.priors:
            kw["intercept"] = StudentT(**self.priors["intercept"])
        return Priors(**kw)

    def model_spec(self):
        """The :class:`~.model.formula.ModelSpec` to fit: :attr:`model` (preset or formula) with :attr:`priors`."""
        from .model.formula import PRESET_FORMULAS, parse_formula, preset

        pri = self.model_priors()
        return preset(self.model, pri) if self.model in PRESET_FORMULAS else parse_formula(self.model, pri)

    def sampler_settings(self):
        """``SamplerSettings`` with this state's overrides (imports the sampler module, not jax)."""
        from .model.posterior import SamplerSettings

        return SamplerSettings(**self.sampler)

    # -- corpus defaults -----------------------------------------------------------------
    @classmethod
    def from_corpus(cls, corpus, path: str | Path | None = None, fmt: str | None = None, **fields) -> "AnalysisState":
        """A state whose design and prices are the corpus's own (the observed design).

        Parameters
        ----------
        corpus
            A :class:`~.corpus.corpus.Corpus` (or its canonical table).
        path, fmt
            Where it was read from and with which reader (default: the corpus's own).
        fields
            Further fields (model, claim, ...) that override the defaults.

        Notes
        -----
        The sizes and prices are :func:`~.dstudy.observed_design`'s (prices from
        the cost column, USD per trial per benchmark, when there is one).  The model preset is ``"pooled"`` for a corpus
        with several benchmarks and ``"per-benchmark"`` otherwise.
        """
        try:
            design = observed_design(corpus)
        except ObservedDesignError as exc:
            raise SessionError(str(exc)) from None
        if path is None and getattr(corpus, "source", None) is not None:
            path = corpus.source
        if fmt is None:
            fmt = getattr(corpus, "format", None)
        loaded_with = (getattr(corpus, "provenance", None) or {}).get("load_options") or {}
        kw = dict(corpus_path=None if path is None else str(path), corpus_format=fmt,
                  corpus_options={k: v for k, v in loaded_with.items() if k in CORPUS_OPTIONS},
                  model="pooled" if design.n_benchmarks > 1 else "per-benchmark")
        kw.update(fields)
        return cls.from_design(design, **kw)

    @classmethod
    def from_design(cls, observed: DStudyDesign, **fields) -> "AnalysisState":
        """A state whose current and observed designs are ``observed`` (sizes, prices, models, object, claim).

        ``fields`` override the result (model, corpus path, ...).  One price for every benchmark is
        kept under :data:`ALL_BENCHMARKS`.
        """
        sizes = {"n_tasks": observed.effective_n_tasks, "n_scaffolds": float(observed.n_scaffolds),
                 "n_benchmarks": observed.effective_n_benchmarks, "n_replicates": float(observed.n_replicates)}
        p = observed.price_per_trial
        prices = ({str(k): float(v) for k, v in p.items()} if isinstance(p, Mapping)
                  else ({ALL_BENCHMARKS: float(p)} if float(p) > 0 else {}))
        o = observed.object_facets
        if o not in _OBJECT_OF_FACETS:
            raise SessionError(f"the analysis follows models, model-scaffold systems or agents; the design's object "
                               f"is {':'.join(sorted(o))!r}")
        kw = dict(sizes, n_models=int(observed.n_models), prices=prices,
                  object_of_measurement=_OBJECT_OF_FACETS[o], claim=observed.claim,
                  observed=dict(sizes), extra_facets={str(k): float(v) for k, v in observed.extra_facets.items()})
        kw.update(fields)
        return cls(**kw)

    def follow_fit(self, components, corpus=None) -> frozenset[str]:
        """Make the object and the observed design those of a fit (SPEC sec. 4; seed 003 sec. 3).

        The object follows the fitted model (:func:`~.reliability.object_for_terms`): agents for a fit
        with an agent facet (the ``ddr`` preset, seed 003 Eq. 1), else the state's object when the fit
        supports it (:func:`~.reliability.objects_for_terms`), else models.  With ``corpus``, the
        observed design is the one the fit's facets see (:func:`~.dstudy.observed_design` with
        ``facets=``: seed 003's steps and error categories, all tasks as one facet); when it differs
        from the state's, it becomes the observed and the current design (the sizes mean other things),
        and when the object turns to or from agents, ``n_models`` becomes the corpus's count of agents or
        models (what "compared" counts, :func:`~.dstudy.observed_design`).

        Parameters
        ----------
        components
            The fit's :class:`~.reliability.VarianceComponents` (its terms and facets are used).
        corpus
            The corpus that was fitted, or None (the object only).

        Returns
        -------
        frozenset of str
            The fields that changed (see :meth:`update`).
        """
        from .reliability import object_for_terms, objects_for_terms

        terms = tuple(components.terms)
        current = self.object_of_measurement
        obj = object_for_terms(terms, current if current in objects_for_terms(terms) else None)
        changes: dict[str, Any] = {"object_of_measurement": obj}
        if corpus is not None:
            try:
                d = observed_design(corpus, object_of_measurement=obj, claim=self.claim,
                                    facets=getattr(components, "facets", ()))
            except ObservedDesignError as exc:
                raise SessionError(str(exc)) from None
            sizes = {"n_tasks": d.effective_n_tasks, "n_scaffolds": float(d.n_scaffolds),
                     "n_benchmarks": d.effective_n_benchmarks, "n_replicates": float(d.n_replicates)}
            extra = {str(k): float(v) for k, v in d.extra_facets.items()}
            if sizes != self.observed or extra != self.extra_facets:
                changes.update(sizes, observed=dict(sizes), extra_facets=extra)
            if (obj == "agent") != (current == "agent"):
                # agents compared, or models compared (observed_design): the count means another thing
                changes["n_models"] = int(d.n_models)
        return self.update(**changes)

    # -- JSON ------------------------------------------------------------------------------
    def to_dict(self, include_header: bool = True) -> dict:
        """Plain JSON-ready dict (with the ``format``/``version`` header unless ``include_header`` is False)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "events"}
        out["sampler"] = dict(self.sampler)
        out["prices"] = {str(k): float(v) for k, v in self.prices.items()}
        out["observed"] = None if self.observed is None else {k: float(v) for k, v in self.observed.items()}
        for k in SIZE_FIELDS:
            out[k] = float(out[k])
        out["n_models"] = int(out["n_models"])
        out["priors"] = {k: {kk: float(vv) for kk, vv in v.items()} for k, v in self.priors.items()}
        out["extra_facets"] = {str(k): float(v) for k, v in self.extra_facets.items()}
        if include_header:
            out = {"format": FILE_FORMAT, "version": FILE_VERSION, **out}
        return out

    @classmethod
    def from_dict(cls, data: Mapping, where: str = "analysis") -> "AnalysisState":
        """Build a state from :meth:`to_dict` output; ``where`` names the source in errors.

        Missing fields take their defaults; unknown fields, a foreign
        ``format`` or a newer ``version`` are errors.
        """
        if not isinstance(data, Mapping):
            raise SessionError(f"{where}: expected a JSON object, got {type(data).__name__}")
        data = dict(data)
        fmt = data.pop("format", FILE_FORMAT)
        if fmt != FILE_FORMAT:
            raise SessionError(f"{where}: 'format' is {fmt!r}, not {FILE_FORMAT!r}; this is not a saved DDR "
                               "Explorer analysis")
        version = data.pop("version", FILE_VERSION)
        if not (isinstance(version, int) and not isinstance(version, bool)) or version < 1:
            raise SessionError(f"{where}: 'version' should be a whole number >= 1, got {shown(version)}")
        if version > FILE_VERSION:
            raise SessionError(f"{where}: saved by a newer DDR Explorer (file version {version}, this one reads "
                               f"up to {FILE_VERSION}); update the app to open it")
        allowed = {f.name for f in dataclasses.fields(cls)} - {"events"}
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise SessionError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}; remove them "
                               f"(fields are {', '.join(sorted(allowed))})")
        sampler = data.get("sampler")
        if version < 2 and isinstance(sampler, Mapping) and "draws" in sampler and "stop" not in sampler:
            # a version-1 file was saved when every run had a fixed length: its draws meant exactly that many
            data["sampler"] = {**sampler, "stop": "fixed"}
        kw = {}
        for name, value in data.items():
            try:
                value = _normalise(name, value)
            except (OverflowError, TypeError, ValueError):
                raise SessionError(f"{where}: field {name!r} holds a value out of range: {shown(value)[:80]}") from None
            _check_field(name, value, where)
            kw[name] = value
        return cls(**kw)

    def save(self, path: str | Path) -> Path:
        """Write the state as JSON, atomically (temporary file in the same folder, then ``os.replace``).

        Returns
        -------
        Path
            The path written.
        """
        path = Path(path)
        text = json.dumps(self.to_dict(), indent=2, sort_keys=False, allow_nan=False) + "\n"
        write_text_atomic(path, text)
        return path

    @classmethod
    def load(cls, path: str | Path) -> "AnalysisState":
        """Read a state written by :meth:`save`; errors name the file, line and field.

        Whatever the file holds (another encoding, a number of 400 digits, nesting 100,000 deep,
        ``Infinity``, a value far outside its range), the only exception is :class:`SessionError`.
        """
        path = Path(path)
        try:
            if path.exists() and not path.is_file():
                raise SessionError(f"{path}: not a regular file (a folder, pipe or device); name a saved analysis")
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                raise SessionError(f"{path}: {size:,} bytes, more than a saved analysis ever holds "
                                   f"({MAX_FILE_BYTES:,}); this is not a DDR Explorer analysis file")
            data = path.read_bytes()
        except FileNotFoundError:
            raise SessionError(f"{path}: the file does not exist") from None
        except OSError as exc:
            raise SessionError(f"{path}: cannot be read ({exc.strerror or exc})") from None
        text = _decode(data, path)
        from .side_files import KeyGivenTwice, unique_keys

        try:
            doc = json.loads(text, parse_constant=_reject_constant, parse_int=_bounded_int,
                             object_pairs_hook=unique_keys)
        except KeyGivenTwice as exc:  # json keeps the last value without a word
            from .side_files import line_of

            line = line_of(text, json.dumps(exc.key), 2)
            raise SessionError(f"{path}{f', line {line}' if line else ''}: the key {exc.key!r} is given twice in one "
                               "object; keep one of them (or delete the file to start afresh)") from None
        except json.JSONDecodeError as exc:
            raise SessionError(f"{path}, line {exc.lineno}, column {exc.colno}: invalid JSON ({exc.msg})") from None
        except _NotFinite as exc:
            raise SessionError(f"{path}: holds {exc.args[0]}, which is not a number a saved analysis can hold; "
                               "write a finite number (or delete the file to start afresh)") from None
        except RecursionError:
            raise SessionError(f"{path}: nested too deeply to be a saved analysis (it holds objects or lists "
                               "inside each other thousands of levels deep)") from None
        except ValueError as exc:  # an integer of more digits than Python converts (int_max_str_digits)
            raise SessionError(f"{path}: unreadable number ({exc})") from None
        try:
            return cls.from_dict(doc, where=str(path))
        except SessionError:
            raise
        except (TypeError, ValueError, OverflowError, RecursionError) as exc:
            # a value that passed the JSON reader but not the field checks' arithmetic
            raise SessionError(f"{path}: a field holds a value out of range ({type(exc).__name__}: {exc})") from None


#: Largest session file read: a saved analysis is a few kB (a megabyte leaves room for long price lists).
MAX_FILE_BYTES = 1 << 20
#: Largest integer a session file may hold (a seed of 2^32 - 1 and sizes far below it).
_MAX_INT_DIGITS = 15


class _NotFinite(ValueError):
    pass


def _reject_constant(name: str):
    """``json.loads``' hook for ``NaN``, ``Infinity`` and ``-Infinity``: never a value of an analysis."""
    raise _NotFinite(name)


def _bounded_int(text: str) -> int:
    """``json.loads``' hook for integers: one of more than 15 digits is refused before it is converted."""
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise _NotFinite(f"the integer {text[:20]}... ({len(text.lstrip('-'))} digits)")
    return int(text)


def _decode(data: bytes, path: Path) -> str:
    """The file's text; the app writes UTF-8, so anything else is named with where it stops being UTF-8."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise SessionError(f"{path}: saved as UTF-16; a saved analysis is UTF-8 text (re-save it as UTF-8, or "
                           "delete the file to start afresh)")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SessionError(f"{path}, line {line}: byte 0x{data[exc.start]:02x} is not UTF-8; a saved analysis is "
                           "UTF-8 text (re-save it as UTF-8, or delete the file to start afresh)") from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise SessionError(f"{path}, line {line}: holds a NUL character; this is not a saved analysis")
    return text


def set_aside(path: str | Path) -> Path | None:
    """Rename an unusable session file beside itself (``<name>.unusable-<UTC time>``); never delete it.

    The app calls this when the last session cannot be restored, so that the next start does not
    meet the same file again, while the user keeps it to inspect or mend.

    Returns
    -------
    Path or None
        Where the file now is; None when it could not be moved (a read-only folder: the app still starts).
    """
    import time

    path = Path(path)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = path.with_name(f"{path.name}.unusable-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.unusable-{stamp}-{n}")
    try:
        path.rename(target)
    except OSError:
        return None
    return target


#: The name of the common pattern, for readers who look for it.
Session = AnalysisState


# ---------------------------------------------------------------------------
# Field checks
# ---------------------------------------------------------------------------

def _normalise(name: str, value):
    """JSON gives ints where floats are meant and lists where dicts are meant: normalise before checking."""
    if name in SIZE_FIELDS and _is_number(value):
        return float(value)
    if name in ("target", "budget") and _is_number(value):
        return float(value)
    if name == "n_models" and _is_number(value) and float(value).is_integer():
        return int(value)
    if name == "prices" and isinstance(value, Mapping):
        return {str(k): (float(v) if _is_number(v) else v) for k, v in value.items()}
    if name in ("observed", "extra_facets") and isinstance(value, Mapping):
        return {str(k): (float(v) if _is_number(v) else v) for k, v in value.items()}
    if name in ("sampler", "corpus_options") and isinstance(value, Mapping):
        return dict(value)
    if name == "priors" and isinstance(value, Mapping):
        return {str(k): ({str(kk): (float(vv) if _is_number(vv) else vv) for kk, vv in v.items()}
                         if isinstance(v, Mapping) else v) for k, v in value.items()}
    return value


#: Largest design size (tasks, scaffolds, benchmarks, replicates, models) an analysis may hold.
MAX_SIZE = 1e7
#: Largest price or budget in USD an analysis may hold.
MAX_USD = 1e12

#: Sampler settings as a file may give them: whole numbers with their range, flags, names, seconds.
_SAMPLER_INTS = {"draws": (1, 10 ** 6), "warmup": (0, 10 ** 6), "chains": (1, 1024), "seed": (0, 2 ** 32 - 1),
                 "max_tree_depth": (1, 30), "chunk_size": (1, 10 ** 6), "collapsed_steps": (1, 10 ** 6),
                 "scale_steps": (0, 1000), "quadrature_nodes": (0, 1000), "max_draws": (1, 10 ** 7),
                 "check_every": (1, 10 ** 6)}
_SAMPLER_BOOLS = ("dense_globals", "keep_random_effects", "float64", "pool_adaptation", "nested_centring",
                  "adaptive_warmup")
_SAMPLER_NONE = ("draws", "collapsed_steps", "max_draws", "max_seconds")


def _sampler_value_problem(key: str, v) -> str | None:
    """Why one sampler setting from a file is out of its type or range (None: it is fine)."""
    if v is None and key in _SAMPLER_NONE:
        return None
    if key in _SAMPLER_INTS:
        lo, hi = _SAMPLER_INTS[key]
        if not (isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))):
            return f"it should be a whole number from {lo:,} to {hi:,}"
        if not lo <= v <= hi:
            return f"it should lie between {lo:,} and {hi:,}"
    elif key in _SAMPLER_BOOLS:
        if not isinstance(v, bool):
            return "it should be true or false"
    elif key == "max_seconds":
        if not (_is_number(v) and math.isfinite(v) and 0 < v <= 1e7):
            return "it should be a number of seconds above 0 (at most 10,000,000) or null"
    elif key == "target_accept":
        if not (_is_number(v) and 0 < v < 1):
            return "it should be a probability strictly between 0 and 1"
    elif not isinstance(v, str):
        return "it should be a name (text)"
    return None


def _check_field(name: str, value, where: str) -> None:
    def fail(msg: str):
        raise SessionError(f"{where}: field {name!r} {msg}")

    if name in ("corpus_path", "corpus_format"):
        if value is not None and not (isinstance(value, str) and value.strip()):
            fail(f"should be a non-empty string or null, got {shown(value)}")
        if isinstance(value, str) and (len(value) > 4096 or any(ord(ch) < 32 for ch in value)):
            fail("holds a control character or is longer than any path; give the corpus file's path")
    elif name == "corpus_options":
        if not isinstance(value, Mapping):
            fail(f"should be an object of corpus reading options, got {type(value).__name__}")
        unknown = sorted(set(value) - set(CORPUS_OPTIONS))
        if unknown:
            fail(f"has unknown option(s) {', '.join(map(repr, unknown))}; options are {', '.join(CORPUS_OPTIONS)}")
        for k, v in value.items():
            if k == "task_metadata" and isinstance(v, list) and v and all(isinstance(x, str) for x in v):
                continue  # several task-metadata files, merged by task id
            if not (isinstance(v, str) or _is_number(v)):
                fail(f"option {k!r} should be a string or a number, got {v!r}")
    elif name == "model":
        if not (isinstance(value, str) and value.strip()):
            fail(f"should be a preset name (per-benchmark, pooled, ddr) or a formula, got {shown(value)}")
        from .model.formula import ModelSpecError, as_spec

        try:
            as_spec(value)
        except ModelSpecError as exc:
            fail(f"is not a valid model: {exc}")
    elif name == "sampler":
        if not isinstance(value, Mapping):
            fail(f"should be an object of sampler settings, got {type(value).__name__}")
        from .model.posterior import SamplerSettings

        known = {f.name for f in dataclasses.fields(SamplerSettings)}
        unknown = sorted(set(value) - known)
        if unknown:
            fail(f"has unknown setting(s) {', '.join(map(repr, unknown))}; settings are {', '.join(sorted(known))}")
        for key, v in value.items():
            problem = _sampler_value_problem(key, v)
            if problem:
                fail(f"is invalid: {key} = {shown(v)[:40]}; {problem}")
        try:
            SamplerSettings(**value)
        except (TypeError, ValueError) as exc:
            fail(f"is invalid: {exc}")
    elif name == "object_of_measurement":
        if value not in _OBJECTS:
            fail(f"should be one of {', '.join(_OBJECTS)}, got {shown(value)}")
    elif name == "claim":
        if value not in _CLAIMS:
            fail(f"should be 'relative' (ranking) or 'absolute' (threshold decisions), got {shown(value)}")
    elif name in SIZE_FIELDS:
        if not (_is_number(value) and math.isfinite(value) and 1 <= value <= MAX_SIZE):
            fail(f"should be a number >= 1, got {shown(value)} (sizes are at most {MAX_SIZE:,.0f})")
    elif name == "n_models":
        if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 1 <= value <= MAX_SIZE):
            fail(f"should be a whole number >= 1, got {shown(value)} (at most {MAX_SIZE:,.0f})")
    elif name == "prices":
        if not isinstance(value, Mapping):
            fail(f"should be an object {{benchmark: USD per trial}}, got {type(value).__name__}")
        for b, p in value.items():
            if not (_is_number(p) and math.isfinite(p) and 0 <= p <= MAX_USD):
                fail(f"gives benchmark {b!r} the price {p!r}; prices are USD per trial, numbers >= 0")
    elif name == "target":
        if value is not None and not (_is_number(value) and 0 < value < 1):
            fail(f"should be a coefficient in the interval (0, 1) or null for the claim's default, got {shown(value)}")
    elif name == "budget":
        if value is not None and not (_is_number(value) and math.isfinite(value) and 0 < value <= MAX_USD):
            fail(f"should be a positive number of USD (at most {MAX_USD:,.0f}) or null, got {shown(value)}")
    elif name == "priors":
        if not isinstance(value, Mapping):
            fail('should be an object like {"sigma": {"df": 3, "scale": 2.5}}, got ' + type(value).__name__)
        from .model.formula import HalfStudentT, StudentT

        kinds = {"sigma": (HalfStudentT, ("df", "scale")), "intercept": (StudentT, ("df", "loc", "scale"))}
        for k, v in value.items():
            if k not in kinds:
                fail(f"has unknown prior {k!r}; priors are sigma (half-Student-t) and intercept (Student-t)")
            cls, params = kinds[k]
            if not isinstance(v, Mapping) or set(v) - set(params) or \
                    not all(_is_number(x) and math.isfinite(x) for x in v.values()):
                fail(f"gives {k} = {shown(v)}; expected numbers for {', '.join(params)}")
            try:
                cls(**v)
            except (TypeError, ValueError) as exc:
                fail(f"gives an invalid {k} prior: {exc}")
    elif name == "extra_facets":
        if not isinstance(value, Mapping):
            fail(f"should be an object {{facet: levels}}, got {type(value).__name__}")
        for k, v in value.items():
            if k in ("benchmark", "task", "model", "scaffold", "agent"):
                fail(f"names {k!r}, which is a design size of its own; extra facets are the fit's others "
                     "(e.g. step, error_category)")
            if not (_is_number(v) and math.isfinite(v) and 1 <= v <= MAX_SIZE):
                fail(f"gives {k} = {shown(v)}; levels are numbers >= 1 (at most {MAX_SIZE:,.0f})")
    elif name == "observed":
        if value is None:
            return
        if not isinstance(value, Mapping):
            fail(f"should be an object of design sizes or null, got {type(value).__name__}")
        unknown = sorted(set(value) - set(SIZE_FIELDS))
        if unknown:
            fail(f"has unknown size(s) {', '.join(map(repr, unknown))}; sizes are {', '.join(SIZE_FIELDS)}")
        for k, v in value.items():
            if not (_is_number(v) and math.isfinite(v) and 1 <= v <= MAX_SIZE):
                fail(f"gives {k} = {shown(v)}; sizes are numbers >= 1 (at most {MAX_SIZE:,.0f})")
