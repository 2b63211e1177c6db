"""Model specifications: random-intercept formulas, presets and priors.

A :class:`ModelSpec` is the statistical model of SPEC section 2 written as an
lme4/brms formula of random intercepts on the latent logit scale::

    y ~ 1 + (1|task) + (1|model) + (1|scaffold) + (1|task:model) + ...

Only random intercepts are supported (they are all the G-theory decompositions
of the seeds need): ``(1|a)``, interactions ``(1|a:b)`` and nesting
``(1|a/b)``, which lme4 expands to ``(1|a) + (1|a:b)``.  The response on the
left of ``~`` is informational: the fit always reads ``successes`` out of
``trials`` (a binary result is one trial).

Term names list their facets joined by ``":"`` in the canonical facet order
:data:`FACET_ORDER` (``"model:benchmark"`` is written ``"benchmark:model"``), so
that the same component is always called the same way, whatever the formula's
spelling.

Two facets are derived rather than read from a column:

- ``task`` is nested in ``benchmark`` (SPEC section 1): a task's level is the
  (benchmark, task) pair, so ``(1|task)`` in a pooled corpus is the same term as
  ``(1|benchmark:task)``; writing both is an aliasing error.
- ``agent`` is the (model, scaffold) pair of seed 000 (Hardy et al. 2026) / seed 003 (DDR paper 2026); it needs the
  ``model`` and ``scaffold`` columns.

The highest-order interaction, whose levels are the binomial cells, is not
identifiable from single trials (seed 000, Eq. 2 and Appendix E: sigma_{IMA,e}^2
= pi^2/3).  A formula that names it keeps it in :attr:`ModelSpec.folded`: it is
reported and folded into the logistic residual, never sampled.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping

#: Canonical order of facets inside a term name.  Facets not listed here (agent, step,
#: error_category and other extra columns) follow in alphabetical order; the same rule as
#: :func:`ddr_explorer.core.reliability.canonical_term`, so a term has one spelling everywhere.
FACET_ORDER: tuple[str, ...] = ("benchmark", "task", "model", "scaffold")

#: Derived facets: the data columns that identify one level of the facet.
DERIVED_FACETS: dict[str, tuple[str, ...]] = {
    "task": ("benchmark", "task"),  # tasks are nested in benchmarks (SPEC section 1)
    "agent": ("model", "scaffold"),  # agent = (model, scaffold) pair
}

#: Columns of one record of the canonical corpus (SPEC section 1); a binomial cell is one
#: combination of them (and of any extra facet a model uses).
CELL_FACETS: tuple[str, ...] = ("benchmark", "task", "model", "scaffold")

#: Latent logistic residual variance pi^2/3 (seed 000, Sec. 3.2).
RESIDUAL_VARIANCE: float = math.pi ** 2 / 3


class ModelSpecError(ValueError):
    """A formula or model specification that cannot be fitted, with what would fix it."""


# -- priors --------------------------------------------------------------------------
@dataclass(frozen=True)
class HalfStudentT:
    """Half-Student-t(df, 0, scale) prior of a random-intercept standard deviation."""

    df: float = 3.0
    scale: float = 2.5

    def __post_init__(self):
        if not (self.df > 0 and self.scale > 0):
            raise ModelSpecError(f"a half-Student-t prior needs df > 0 and scale > 0, got df={self.df}, "
                                 f"scale={self.scale}.")


@dataclass(frozen=True)
class StudentT:
    """Student-t(df, loc, scale) prior of the intercept mu."""

    df: float = 3.0
    loc: float = 0.0
    scale: float = 2.5

    def __post_init__(self):
        if not (self.df > 0 and self.scale > 0):
            raise ModelSpecError(f"a Student-t prior needs df > 0 and scale > 0, got df={self.df}, "
                                 f"scale={self.scale}.")


@dataclass(frozen=True)
class Priors:
    """Priors of the latent model (SPEC section 2; brms defaults used by seed 000, App. C.1.3).

    Attributes
    ----------
    intercept
        Prior of mu: Student-t(3, 0, 2.5).
    sigma
        Default prior of every sigma_F: half-Student-t(3, 0, 2.5).
    sigma_by_term
        Per-term overrides, keyed by canonical term name (``"benchmark:model"``).
    """

    intercept: StudentT = field(default_factory=StudentT)
    sigma: HalfStudentT = field(default_factory=HalfStudentT)
    sigma_by_term: Mapping[str, HalfStudentT] = field(default_factory=dict)

    def for_term(self, name: str) -> HalfStudentT:
        """The prior of sigma for the term called ``name``."""
        return self.sigma_by_term.get(name, self.sigma)

    def to_dict(self) -> dict:
        return {
            "intercept": {"family": "student_t", "df": self.intercept.df, "loc": self.intercept.loc,
                          "scale": self.intercept.scale},
            "sigma": {"family": "half_student_t", "df": self.sigma.df, "scale": self.sigma.scale},
            "sigma_by_term": {k: {"family": "half_student_t", "df": v.df, "scale": v.scale}
                              for k, v in sorted(self.sigma_by_term.items())},
        }


# -- terms ---------------------------------------------------------------------------
def _facet_key(facet: str) -> tuple[int, str]:
    try:
        return (FACET_ORDER.index(facet), facet)
    except ValueError:
        return (len(FACET_ORDER), facet)


def canonical_facets(facets: Iterable[str]) -> tuple[str, ...]:
    """Facets sorted in the canonical order :data:`FACET_ORDER`, duplicates removed."""
    return tuple(sorted(set(facets), key=_facet_key))


@dataclass(frozen=True)
class Term:
    """One random-intercept term u_F ~ N(0, sigma_F^2), F a facet or an interaction of facets."""

    facets: tuple[str, ...]

    def __post_init__(self):
        object.__setattr__(self, "facets", canonical_facets(self.facets))

    @property
    def name(self) -> str:
        """Canonical name: facets joined by ``":"`` in :data:`FACET_ORDER` (``"benchmark:task"``)."""
        return ":".join(self.facets)

    @property
    def columns(self) -> tuple[str, ...]:
        """Data columns whose values identify one level (derived facets expanded)."""
        cols: list[str] = []
        for f in self.facets:
            cols.extend(DERIVED_FACETS.get(f, (f,)))
        return canonical_facets(cols)

    @property
    def order(self) -> int:
        """Number of facets (1 for a main effect, 2 for a two-way interaction, ...)."""
        return len(self.facets)

    def __str__(self) -> str:
        return f"(1|{self.name})"


@dataclass(frozen=True)
class ModelSpec:
    """A Bernoulli/binomial-logit crossed random-intercept model (SPEC section 2).

    ``logit p_c = mu + sum_F u_F[level_F(c)]`` for every binomial cell c, with
    ``u_F ~ N(0, sigma_F^2)`` independent, ``mu`` and ``sigma_F`` under :attr:`priors`.

    Attributes
    ----------
    terms
        The sampled random-intercept terms, in formula order.
    formula
        The formula as written (or the preset's formula).
    priors
        Editable priors (:class:`Priors`).
    folded
        Terms named in the formula whose levels are the binomial cells: not
        identifiable from single trials, folded into the residual pi^2/3.
    name
        The preset's name, if the spec came from one.
    """

    terms: tuple[Term, ...]
    formula: str
    priors: Priors = field(default_factory=Priors)
    folded: tuple[Term, ...] = ()
    name: str | None = None

    @property
    def term_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.terms)

    @property
    def facets(self) -> tuple[str, ...]:
        """Facets used by any term (derived facets as written)."""
        return canonical_facets(f for t in (*self.terms, *self.folded) for f in t.facets)

    @property
    def columns(self) -> tuple[str, ...]:
        """Data columns the model needs: the binomial cells are their distinct combinations."""
        return canonical_facets(c for t in (*self.terms, *self.folded) for c in t.columns)

    @property
    def residual_variance(self) -> float:
        """Latent residual variance pi^2/3 (absorbs :attr:`folded` terms)."""
        return RESIDUAL_VARIANCE

    def term(self, name: str) -> Term:
        """The term called ``name`` (any facet order accepted)."""
        want = Term(tuple(name.split(":"))).name
        for t in self.terms:
            if t.name == want:
                return t
        raise KeyError(f"no term '{name}' in the model; its terms are {', '.join(self.term_names)}.")

    def with_priors(self, priors: Priors) -> "ModelSpec":
        """The same model under other priors."""
        unknown = set(priors.sigma_by_term) - set(self.term_names)
        if unknown:
            raise ModelSpecError(f"priors name unknown term(s) {sorted(unknown)}; the model's terms are "
                                 f"{', '.join(self.term_names)}.")
        return replace(self, priors=priors)

    def validate(self, columns: Iterable[str]) -> None:
        """Check that the data have every column the model needs.

        Raises
        ------
        ModelSpecError
            Naming the missing column(s) and the facet columns available.
        """
        have = set(columns)
        missing = [c for c in self.columns if c not in have]
        if missing:
            facets = [c for c in canonical_facets(have) if c not in ("successes", "trials")]
            needers = {c: [t.name for t in (*self.terms, *self.folded) if c in t.columns] for c in missing}
            detail = "; ".join(f"'{c}' (needed by {', '.join(needers[c])})" for c in missing)
            raise ModelSpecError(
                f"the model needs column(s) the corpus does not have: {detail}. Available columns: "
                f"{', '.join(facets)}. Remove those terms from the formula or load a corpus with the column.")

    def to_dict(self) -> dict:
        return {"formula": self.formula, "name": self.name, "terms": list(self.term_names),
                "folded": [t.name for t in self.folded], "priors": self.priors.to_dict(),
                "family": "binomial-logit", "residual_variance": RESIDUAL_VARIANCE}

    def __str__(self) -> str:
        return self.formula


# -- parsing -------------------------------------------------------------------------
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
_RANDOM = re.compile(r"\(\s*([^()|]*?)\s*(\|\|?)\s*([^()]*?)\s*\)")

#: Spellings of the canonical facets accepted in formulas (the brms formulas of seed 000 say
#: ``task_id``, ``model_name`` and ``agent_name``; agent_name is the scaffold there).
FACET_SYNONYMS: dict[str, str] = {
    "task_id": "task", "model_name": "model", "agent_name": "scaffold", "harness": "scaffold",
    "error": "error_category", "errorcategory": "error_category",
}


def _split_top_level_plus(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise ModelSpecError(f"unbalanced ')' in formula right-hand side '{text}'.")
        if ch == "+" and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise ModelSpecError(f"unbalanced '(' in formula right-hand side '{text}'.")
    parts.append("".join(cur).strip())
    return parts


def _facet(name: str, formula: str) -> str:
    name = name.strip()
    if not _NAME.match(name):
        raise ModelSpecError(f"'{name}' in formula '{formula}' is not a facet name; write facets as "
                             f"column names joined by ':' or '/', e.g. (1|benchmark/task).")
    return FACET_SYNONYMS.get(name.lower(), name)


def _expand_group(group: str, formula: str) -> list[Term]:
    """``a/b/c`` -> a, a:b, a:b:c; ``a:b`` -> a:b (lme4 semantics)."""
    if "/" in group:
        levels = [g.strip() for g in group.split("/")]
        if any(not g for g in levels):
            raise ModelSpecError(f"empty facet in nesting '{group}' of formula '{formula}'.")
        out, prefix = [], []
        for g in levels:
            prefix = prefix + [_facet(f, formula) for f in g.split(":")]
            out.append(Term(tuple(prefix)))
        return out
    facets = [_facet(f, formula) for f in group.split(":")]
    if len(set(facets)) != len(facets):
        raise ModelSpecError(f"facet repeated in '(1|{group})' of formula '{formula}'.")
    return [Term(tuple(facets))]


def parse_formula(formula: str, priors: Priors | None = None, *, name: str | None = None,
                  cell_columns: Iterable[str] | None = None) -> ModelSpec:
    """Parse an lme4/brms random-intercept formula into a :class:`ModelSpec`.

    Parameters
    ----------
    formula
        ``"y ~ 1 + (1|task) + (1|model) + (1|task:model)"``; the left-hand side and
        ``1 +`` are optional.  ``(1|a/b)`` expands to ``(1|a) + (1|a:b)``.
    priors
        Priors; SPEC section 2 defaults when omitted.
    name
        Preset name to record.
    cell_columns
        The columns that define one binomial cell (default: benchmark, task,
        model, scaffold and any other column a term uses).  A term whose columns are all of them is the
        cell-level interaction: folded into the residual (seed 000, Eq. 2).

    Raises
    ------
    ModelSpecError
        For fixed effects other than the intercept, random slopes, duplicated or
        aliased terms, an empty model, or malformed syntax.
    """
    if not isinstance(formula, str) or not formula.strip():
        raise ModelSpecError("the formula is empty; write e.g. 'y ~ 1 + (1|task) + (1|model)'.")
    rhs = formula.split("~", 1)[1] if "~" in formula else formula
    if "~" in rhs:
        raise ModelSpecError(f"formula '{formula}' has more than one '~'.")
    terms: list[Term] = []
    for part in _split_top_level_plus(rhs):
        if part in ("", "1"):
            if part == "":
                raise ModelSpecError(f"empty term (a stray '+') in formula '{formula}'.")
            continue
        if part == "0" or part == "-1":
            raise ModelSpecError(f"formula '{formula}' removes the intercept; the model always has an "
                                 f"overall mean mu: drop the '0' or '-1' term.")
        m = _RANDOM.fullmatch(part)
        if not m:
            raise ModelSpecError(
                f"term '{part}' of formula '{formula}' is not a random intercept; only the intercept '1' and "
                f"terms like (1|facet), (1|a:b) or (1|a/b) are supported.")
        lhs, bars, group = m.groups()
        if lhs.replace(" ", "") != "1":
            raise ModelSpecError(f"'{part}' in formula '{formula}' is a random slope; only random intercepts "
                                 f"(1|...) are supported.")
        if bars == "||":
            raise ModelSpecError(f"'{part}': '||' is not supported; write (1|{group}).")
        if not group:
            raise ModelSpecError(f"'{part}' in formula '{formula}' has no grouping facet.")
        terms.extend(_expand_group(group, formula))

    # aliasing: two terms over the same level-defining columns are the same term
    seen: dict[tuple[str, ...], Term] = {}
    unique: list[Term] = []
    for t in terms:
        prev = seen.get(t.columns)
        if prev is not None:
            if prev.name == t.name:
                raise ModelSpecError(f"term (1|{t.name}) appears twice in formula '{formula}' (nesting "
                                     f"'a/b' already adds (1|a)).")
            raise ModelSpecError(
                f"terms (1|{prev.name}) and (1|{t.name}) of formula '{formula}' have the same levels "
                f"(tasks are nested in benchmarks; agent is model:scaffold); keep one of them.")
        seen[t.columns] = t
        unique.append(t)
    if not unique:
        raise ModelSpecError(f"formula '{formula}' has no random-intercept term; add e.g. (1|task) + (1|model).")

    # the binomial cells are the (benchmark, task, model, scaffold) records, refined by any extra
    # facet the model uses (step, error_category, ...): SPEC section 1
    if cell_columns is None:
        cell_columns = (*CELL_FACETS, *(c for t in unique for c in t.columns))
    key = canonical_facets(cell_columns)
    key_set = set(key)
    folded = tuple(t for t in unique if set(t.columns) >= key_set)
    sampled = tuple(t for t in unique if t not in folded)
    if not sampled:
        raise ModelSpecError(f"formula '{formula}': every term is the cell-level interaction, which is "
                             f"folded into the residual pi^2/3; add lower-order terms.")
    spec = ModelSpec(terms=sampled, formula=formula.strip(), priors=priors or Priors(), folded=folded, name=name)
    if priors is not None:
        spec = spec.with_priors(priors)
    return spec


# -- presets -------------------------------------------------------------------------
#: Named models: seed 000 Eq. 2 (per benchmark), Eq. 6 (pooled), seed 003 Eq. 1 (DDR four-facet).
PRESET_FORMULAS: dict[str, str] = {
    "per-benchmark": ("y ~ 1 + (1|task) + (1|model) + (1|scaffold) + (1|task:model) + (1|task:scaffold) "
                      "+ (1|model:scaffold)"),
    "pooled": ("y ~ 1 + (1|benchmark) + (1|benchmark:task) + (1|model) + (1|scaffold) + (1|benchmark:model) "
               "+ (1|benchmark:scaffold) + (1|model:scaffold) + (1|benchmark:task:model) "
               "+ (1|benchmark:task:scaffold) + (1|benchmark:model:scaffold)"),
    "ddr": ("y ~ 1 + (1|agent) + (1|task) + (1|step) + (1|error_category) + (1|task:agent) + (1|agent:step) "
            "+ (1|agent:error_category) + (1|task:step) + (1|task:error_category) + (1|error_category:step)"),
}

def preset(name: str, priors: Priors | None = None) -> ModelSpec:
    """A named model.

    ``"per-benchmark"``
        Seed 000 Eq. 2: task, model, scaffold, task:model, task:scaffold, model:scaffold.
    ``"pooled"``
        Seed 000 Eq. 6: benchmark, benchmark:task, model, scaffold, benchmark:model,
        benchmark:scaffold, model:scaffold, benchmark:task:model, benchmark:task:scaffold,
        benchmark:model:scaffold.
    ``"ddr"``
        Seed 003 Eq. 1: agent (= model:scaffold), task, step, error_category and their six
        two-way interactions.
    """
    try:
        formula = PRESET_FORMULAS[name]
    except KeyError:
        raise ModelSpecError(f"unknown preset '{name}'; presets are {', '.join(PRESET_FORMULAS)}.") from None
    return parse_formula(formula, priors, name=name)


def as_spec(model: "ModelSpec | str") -> ModelSpec:
    """A :class:`ModelSpec` from a spec, a preset name or a formula."""
    if isinstance(model, ModelSpec):
        return model
    if isinstance(model, str):
        return preset(model) if model in PRESET_FORMULAS else parse_formula(model)
    raise ModelSpecError(f"expected a ModelSpec, a preset name ({', '.join(PRESET_FORMULAS)}) or a formula, "
                         f"got {type(model).__name__}.")
