"""The works DDR Explorer cites, written once: each key's short author-year form and its full entry.

Everything a user reads (the DDR sheet, the app's text and tooltips, ``ddr``'s output and ``--help``)
cites through :func:`cite`, so a reference is spelled in one place; the sheet's last page and the
app's Help > About / References list the full entries (:func:`reference_entries`) of the keys a text
cites (:func:`cited_keys`).

Maintainers' comments elsewhere point at the papers in ``shared/seeds``: seed 000 is Hardy et al.
2026 (``hardy2026``), seed 002 Krsteski et al. 2026 (``krsteski2026``), seed 003 the Deployment
Decision Reliability paper (``ddr2026``).

The DDR paper's text (seed 003) names no authors, and its code repository could not be read from
here, so it is cited by title, year and repository; secondary listings attribute it to Vasundra
Srinivasan (arXiv 2608.11323), which could not be checked against the paper itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

__all__ = ["Reference", "REFERENCES", "cite", "cited_keys", "reference_entries", "references_text"]


@dataclass(frozen=True)
class Reference:
    """One cited work.

    Attributes
    ----------
    key
        The table's key, e.g. ``"hardy2026"``.
    short
        The author-year form printed where the work is cited, e.g. ``"Hardy et al. 2026"``; no short
        form is a substring of another, so a text's citations can be read back from it.
    full
        The full entry, plain text (no markup), as the References lists print it.
    """

    key: str
    short: str
    full: str


_TABLE = (
    Reference("hardy2026", "Hardy et al. 2026",
              "Hardy, M., Azam, R., Reuel, A., Kochenderfer, M. and Koyejo, S. (2026). Agent Evaluation "
              "Reliability: More Tasks Won't (Always) Fix An Agent Leaderboard. arXiv:2610.00651."),
    Reference("krsteski2026", "Krsteski et al. 2026",
              "Krsteski, S., Meyer, C., Allegre, G., O'Halloran, T. and Sallinen, A. (2026). Messier: A "
              "High-Resolution Corpus for Cross-Benchmark Agent Evaluation. arXiv:2607.25891."),
    Reference("ddr2026", "DDR paper 2026",
              "Deployment Decision Reliability: A Generalizability-Theory Framework for Sizing Long-Horizon "
              "Agent Evaluations (2026). Code and data: github.com/vasundras/agent-reliability-engineering-lab."),
    Reference("brennan2001", "Brennan 2001",
              "Brennan, R. L. (2001). Generalizability Theory. New York: Springer."),
    Reference("henderson1953", "Henderson 1953",
              "Henderson, C. R. (1953). Estimation of variance and covariance components. Biometrics 9(2), "
              "226-252."),
    Reference("bates2015", "Bates et al. 2015",
              "Bates, D., Maechler, M., Bolker, B. and Walker, S. (2015). Fitting linear mixed-effects models "
              "using lme4. Journal of Statistical Software 67(1), 1-48."),
    Reference("burkner2017", "Buerkner 2017",
              "Buerkner, P.-C. (2017). brms: An R package for Bayesian multilevel models using Stan. Journal "
              "of Statistical Software 80(1), 1-28."),
    Reference("rizzo2010", "Rizzo and Szekely 2010",
              "Rizzo, M. L. and Szekely, G. J. (2010). DISCO analysis: A nonparametric extension of analysis "
              "of variance. The Annals of Applied Statistics 4(2), 1034-1055."),
    Reference("vehtari2017", "Vehtari, Gelman and Gabry 2017",
              "Vehtari, A., Gelman, A. and Gabry, J. (2017). Practical Bayesian model evaluation using "
              "leave-one-out cross-validation and WAIC. Statistics and Computing 27(5), 1413-1432."),
    Reference("vehtari2021", "Vehtari et al. 2021",
              "Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. and Buerkner, P.-C. (2021). "
              "Rank-normalization, folding, and localization: An improved R-hat for assessing convergence of "
              "MCMC. Bayesian Analysis 16(2), 667-718."),
    Reference("vats2021", "Vats and Knudson 2021",
              "Vats, D. and Knudson, C. (2021). Revisiting the Gelman-Rubin diagnostic. Statistical Science "
              "36(4), 518-529."),
)
REFERENCES: dict[str, Reference] = {r.key: r for r in _TABLE}
"""Every cited work by key, in the order the References lists print them."""


def cite(key: str, where: str | None = None) -> str:
    """The short citation of ``key``, with the place in the work when given.

    Parameters
    ----------
    key
        A key of :data:`REFERENCES`.
    where
        A section, equation, table or figure of the work, e.g. ``"App. G.5"``.

    Returns
    -------
    str
        E.g. ``cite("hardy2026", "App. G.5") == "Hardy et al. 2026, App. G.5"``.

    Raises
    ------
    KeyError
        ``key`` is not in the table (a typo must fail loudly, not print a wrong source).
    """
    ref = REFERENCES[key]
    return f"{ref.short}, {where}" if where else ref.short


def _flat(text: str) -> str:
    # A citation broken over two lines of a PDF's text, or over two markup lines, still counts.
    return re.sub(r"\s+", " ", text)


def cited_keys(text: str | Iterable[str]) -> list[str]:
    """The keys whose short form occurs in ``text``, in the table's order.

    Parameters
    ----------
    text
        A string, or several (e.g. every paragraph of a sheet).

    Returns
    -------
    list of str
    """
    flat = _flat(text if isinstance(text, str) else " ".join(text))
    return [r.key for r in _TABLE if r.short in flat]


def reference_entries(keys: Iterable[str]) -> list[str]:
    """The full entries of ``keys``, once each, in the table's order (unknown keys raise ``KeyError``)."""
    wanted = set(keys)
    for k in wanted:
        REFERENCES[k]  # noqa: B018 - the lookup raises for a key not in the table
    return [r.full for r in _TABLE if r.key in wanted]


def references_text(keys: Iterable[str] | None = None) -> str:
    """A plain-text "References" list of ``keys`` (default: every work), one entry a line."""
    entries = reference_entries(REFERENCES if keys is None else keys)
    return "\n".join(["References", *(f"  {e}" for e in entries)])
