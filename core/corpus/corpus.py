"""The validated corpus: a canonical table plus where it came from."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from . import schema
from .issues import CorpusIssue


@dataclass
class Corpus:
    """A validated corpus of agent-evaluation results.

    Attributes
    ----------
    table
        The canonical table (see :mod:`ddr_explorer.core.corpus.schema`): facet
        columns as categoricals, ``successes`` and ``trials`` as int64, optional
        metadata and ``verifier.*`` columns.
    name
        A short display name (the file stem by default).
    source
        The file (or folder) it was read from, if any.
    format
        The reader or importer that produced it (``"canonical-csv"``, ``"py-irt"``, ...).
    warnings
        Problems that are worth knowing but not fatal.
    provenance
        What the importer did: mapping rules, unmapped ids, attribution, scoring rule.
    """

    table: pd.DataFrame
    name: str = "corpus"
    source: Path | None = None
    format: str = "canonical"
    warnings: list[CorpusIssue] = field(default_factory=list)
    provenance: dict = field(default_factory=dict)

    # -- sizes --------------------------------------------------------------
    @property
    def n_records(self) -> int:
        """Rows of the canonical table (trials or binomial cells)."""
        return int(len(self.table))

    @property
    def n_trials(self) -> int:
        """Total number of trials (sum of ``trials``)."""
        return int(self.table[schema.TRIALS].sum())

    @property
    def n_successes(self) -> int:
        return int(self.table[schema.SUCCESSES].sum())

    def n_levels(self, facet: str) -> int:
        """Number of observed levels of a facet (tasks count per benchmark)."""
        if facet == "task":
            return int(len(self.table.groupby(["benchmark", "task"], observed=True).size()))
        if facet == "agent":
            return int(len(self.table.groupby(["model", "scaffold"], observed=True).size()))
        col = self.table[facet]
        return int(col.nunique(dropna=True))

    @property
    def has_trial_ids(self) -> bool:
        return schema.TRIAL_ID in self.table and bool(self.table[schema.TRIAL_ID].notna().any())

    @property
    def verifier_columns(self) -> list[str]:
        return [c for c in self.table.columns if c.startswith(schema.VERIFIER_PREFIX)]

    @property
    def has_cost(self) -> bool:
        return schema.COST in self.table and bool(self.table[schema.COST].notna().any())

    # -- identity -----------------------------------------------------------
    @cached_property
    def content_hash(self) -> str:
        """SHA-256 (hex) of the canonical content, independent of row order.

        Two corpora with the same records in any order hash alike; the hash keys
        the fit cache.
        """
        t = self.table
        cols = sorted(t.columns)
        h = hashlib.sha256()
        h.update(("|".join(cols)).encode())
        # hash each row, then combine order-independently by sorting the row hashes
        plain = pd.DataFrame({c: (t[c].astype(object) if isinstance(t[c].dtype, pd.CategoricalDtype) else t[c]) for c in cols})
        row_hash = pd.util.hash_pandas_object(plain, index=False).to_numpy()
        h.update(np.sort(row_hash).tobytes())
        return h.hexdigest()

    def aggregated(self, by: tuple[str, ...] = schema.REQUIRED_FACETS) -> pd.DataFrame:
        """Sum identical trials into binomial cells (SPEC section 1).

        Binary rows and binomial cells give the same posterior, so fits run on
        this table.
        """
        g = self.table.groupby(list(by), observed=True, sort=True)
        out = g[[schema.SUCCESSES, schema.TRIALS]].sum().reset_index()
        return out
