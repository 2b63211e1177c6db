"""The Methods tab: variance shares per facet from each estimator side by side (seed 000 (Hardy et al. 2026) Tables 20-21).

Draws the result of :func:`ddr_explorer.core.estimators.methods.methods_table` (the table
``ddr methods --json`` prints) as it is: one row per facet (then the residual) with each
estimator's share of the total variance, then Erho2 and Phi of the object of measurement where the
estimator defines them.  Nothing is computed here; numbers print through
:mod:`ddr_explorer.core.formatting`, and each cell keeps core's unrounded value for CSV export.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from ..core.estimators.methods import score_gap_sentence
from ..core.formatting import E_RHO2, PHI, estimand_symbol, fmt_coef, fmt_n, fmt_sig3
from . import plots

#: What each scale's share is a share of (the same wording as ``ddr methods``).
SHARE_NOTE = ("Shares: \u03c3\u00b2_k over the total incl. the residual (observed scale: \u03c3\u00b2_e; logit: "
              "\u03c0\u00b2/3); Bayes: posterior mean of per-draw shares; DISCO: normalised over facets, no residual.")


def _value(x) -> float:
    return float("nan") if x is None else float(x)


def _cell(value: float) -> QTableWidgetItem:
    """A right-aligned read-only cell printed by :func:`fmt_coef`; core's full value kept for CSV export."""
    it = QTableWidgetItem(fmt_coef(value))
    it.setData(Qt.UserRole, float(value))
    it.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
    it.setFlags(it.flags() & ~Qt.ItemIsEditable)
    return it


def _label(text: str) -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    it.setFlags(it.flags() & ~Qt.ItemIsEditable)
    return it


class MethodsPanel(QWidget):
    """The method comparison of one corpus and one model formula (read-only).

    Parameters
    ----------
    table
        A :class:`~ddr_explorer.core.estimators.methods.MethodsTable` or its ``to_dict()``.

    Attributes
    ----------
    table
        The QTableWidget: rows are the terms, then ``Erho2 (object)`` and ``Phi (object)``;
        columns are ``facet`` and the estimators in core's order, each header naming its scale.
    estimators, terms
        Column and row names (core's).
    summary
        The formula, the design Erho2 / Phi are computed at, the share definitions, wall times and
        core's notes (a missing Bayes column says why).
    score_gap
        Seed 000 G.5's sentence: the Bayesian LMM's score reliability Phi against its ranking
        reliability Erho2, with 95% HDIs (None without that column); the summary's second line.
    """

    def __init__(self, table, parent: QWidget | None = None):
        super().__init__(parent)
        data = table.to_dict() if hasattr(table, "to_dict") else dict(table)
        self.result = data
        self.estimators: list[str] = list(data["estimators"])
        self.terms: list[str] = list(data["terms"])
        obj = data.get("object_of_measurement", "model")
        coefs = ("Erho2", "Phi")
        self.table = QTableWidget(len(self.terms) + len(coefs), 1 + len(self.estimators))
        conv = data.get("convergence") or {}
        for c, name in enumerate(["facet", *self.estimators]):
            scale = data["scales"].get(name) if c else None
            if scale is not None and (conv.get(name) or {}).get("converged") is False:
                scale += ", NOT converged"  # a number from an unconverged fit is labelled, never silently shown
            head = QTableWidgetItem(name if scale is None else f"{name}\n({scale})")
            head.setData(Qt.UserRole, name if scale is None else f"{name} ({scale})")  # one line in the CSV
            self.table.setHorizontalHeaderItem(c, head)
        for r, term in enumerate(self.terms):
            self.table.setItem(r, 0, _label(term))
            for c, est in enumerate(self.estimators, start=1):
                self.table.setItem(r, c, _cell(_value(data["shares"][est].get(term))))
        for k, coef in enumerate(coefs):
            r = len(self.terms) + k
            lab = _label(f"{estimand_symbol(coef)} ({obj})")
            lab.setData(Qt.UserRole, f"{coef} ({obj})")
            self.table.setItem(r, 0, lab)
            for c, est in enumerate(self.estimators, start=1):
                self.table.setItem(r, c, _cell(_value(data["coefficients"][est].get(coef))))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.resizeColumnsToContents()

        lines = [f"Variance shares by estimator; formula: {data.get('formula', '')}"]
        sizes = data.get("sizes") or {}
        if sizes:
            lines.append(f"{E_RHO2} and {PHI} of the {obj} at the observed design: "
                         + ", ".join(f"{k} {fmt_n(v)}" for k, v in sizes.items())
                         + f"; DISCO has no {E_RHO2} or {PHI}: its analogue is the {obj} grouping's \u03b7 "
                         + f"({fmt_sig3(data['disco_eta']) if data.get('disco_eta') is not None else 'NA'}).")
        gap = data.get("coefficients", {}).get("Bayes LMM")
        if gap is not None:  # seed 000 G.5: score reliability (Phi) below ranking reliability (Erho2)
            iv = (data.get("intervals") or {}).get("Bayes LMM", {})
            self.score_gap = score_gap_sentence(
                {"Phi": _value(gap.get("Phi")), "Erho2": _value(gap.get("Erho2")), "Phi_hdi95": iv.get("Phi"),
                 "Erho2_hdi95": iv.get("Erho2"), "converged": (conv.get("Bayes LMM") or {}).get("converged")},
                obj, symbols=(PHI, E_RHO2))
            lines.insert(1, self.score_gap)  # right under the formula: the finding a reader must not miss
        else:
            self.score_gap = None
        lines.append(SHARE_NOTE)
        secs = data.get("seconds") or {}
        if secs:
            lines.append("Wall time: " + ", ".join(f"{e} {fmt_sig3(secs[e])} s" for e in self.estimators if e in secs))
        lines.extend(f"Note: {n}" for n in data.get("notes") or [])
        self.summary, head = plots.panel_head(lines, self.plots, self.tables)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(self.table, 1)

    def cell(self, term: str, estimator: str) -> float:
        """Core's value shown at row ``term`` (a term, ``"Erho2"`` or ``"Phi"``) and column ``estimator``."""
        rows = [*self.terms, "Erho2", "Phi"]
        it = self.table.item(rows.index(term), 1 + self.estimators.index(estimator))
        return float(it.data(Qt.UserRole))

    def plots(self) -> dict:
        return {}

    def tables(self) -> dict:
        return {"Variance shares by estimator": self.table}

    def export_table(self, name: str, path) -> Path:
        return plots.export_table(self.tables()[name], path)


__all__ = ["MethodsPanel"]
