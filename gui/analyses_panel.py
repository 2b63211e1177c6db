"""The refit-heavy analyses: difficulty-conditional and held-out reliability, PSIS-LOO.

Draws the JSON-ready result of :func:`ddr_explorer.core.analyses.run_analyses`
(the dict ``ddr analyses --json`` prints), so the screen and the CLI show the
same numbers: Erho2 per task-difficulty stratum with its 95% HDI against the
aggregate (seed 003 (DDR paper 2026) sec. 5.2, :mod:`ddr_explorer.core.analyses.difficulty`),
projected against held-out Erho2 over random trial splits
(:mod:`ddr_explorer.core.analyses.heldout`), and the PSIS-LOO summary with Pareto k
counts (:mod:`ddr_explorer.core.analyses.loo`).  Nothing is computed here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QSplitter, QTableWidget, QVBoxLayout, QWidget

from ..core.analyses.gap_verdict import verdict_sentence
from ..core.analyses.runner import convergence_lines
from . import plots
from .components_panel import numeric_item, text_item


_num = plots.float_or_nan


def _stratum_mcse_line(diff: dict) -> str | None:
    """The strata's Monte Carlo SE (median; the larger of the interval ends) and the rule their refits ran under."""
    parts = []
    for s in diff.get("strata") or []:
        m = s.get("erho2_mcse") or {}
        if m.get("median") is None:
            continue
        ends = [v for v in (m.get("q025"), m.get("q975")) if v is not None]
        parts.append(f"{str(s['label']).split()[0]} \u00b1{m['median']:.4f}"
                     + (f" (ends \u00b1{max(ends):.4f})" if ends else ""))
    if not parts:
        return None
    rule = diff.get("refit_rule")
    return ("Difficulty Monte Carlo SE of each stratum's E\u03c1\u00b2 median: " + "; ".join(parts)
            + (f"; refits ran under the {rule} rule" if rule else ""))


class AnalysesPanel(QWidget):
    """Difficulty strata, held-out splits and LOO of one corpus and model.

    Parameters
    ----------
    results
        ``run_analyses`` output: ``{"difficulty": {...}, "heldout": {...}, "loo": {...}}``
        (any subset).

    Attributes
    ----------
    difficulty_table, difficulty_plot, difficulty_points, difficulty_errors, aggregate_line
        The strata: table and Erho2 per stratum (median, 95% HDI) with the aggregate's median.
    heldout_table, heldout_plot, heldout_points
        One row / point per split: projected (x) against held-out (y) Erho2.
    summary
        The text lines (held-out correlation and gap, LOO).
    """

    def __init__(self, results: dict, parent: QWidget | None = None):
        super().__init__(parent)
        self.results = results
        lines = []
        diff, held, loo = results.get("difficulty"), results.get("heldout"), results.get("loo")

        self.difficulty_plot = plots.new_plot("E\u03c1\u00b2 by task difficulty (median, 95% HDI)",
                                              "task-difficulty stratum", "E\u03c1\u00b2")
        self.difficulty_table = QTableWidget(0, 6)
        self.difficulty_table.setHorizontalHeaderLabels(["stratum", "tasks", "mean success", "median E\u03c1\u00b2",
                                                         "95% lower", "95% upper"])
        self.difficulty_points = self.difficulty_errors = self.aggregate_line = None
        if diff:
            strata = diff["strata"]
            self.difficulty_table.setRowCount(len(strata))
            x, med, lo, hi = [], [], [], []
            for r, s in enumerate(strata):
                e = s.get("erho2") or {}
                vals = (_num(e.get("median")), _num(e.get("lower95")), _num(e.get("upper95")))
                self.difficulty_table.setItem(r, 0, text_item(s["label"] + (f" (failed: {s['error']})"
                                                                              if s.get("error") else "")))
                self.difficulty_table.setItem(r, 1, numeric_item(s["n_tasks"], 0))
                self.difficulty_table.setItem(r, 2, numeric_item(s["mean_success"], 3))
                for c, v in enumerate(vals, start=3):
                    self.difficulty_table.setItem(r, c, numeric_item(v, 3))
                x.append(r + 1)
                med.append(vals[0])
                lo.append(vals[1])
                hi.append(vals[2])
            x, med, lo, hi = (np.asarray(v, dtype=float) for v in (x, med, lo, hi))
            self.difficulty_errors = pg.ErrorBarItem(x=x, y=med, top=hi - med, bottom=med - lo, beam=0.15,
                                                     pen=plots.line(plots.COLORS["median"], 1.5))
            self.difficulty_points = pg.ScatterPlotItem(x=x, y=med, size=9, brush=plots.COLORS["median"])
            self.difficulty_plot.addItem(self.difficulty_errors)
            self.difficulty_plot.addItem(self.difficulty_points)
            agg = diff.get("aggregate")
            if agg:
                self.aggregate_line = pg.InfiniteLine(agg["median"], angle=0,
                                                      pen=plots.line(plots.COLORS["asymptote"], 1.5, Qt.DashLine),
                                                      label=f"aggregate {agg['median']:.3f}",
                                                      labelOpts={"position": 0.9, "color": "#555555"})
                self.difficulty_plot.addItem(self.aggregate_line)
                lines.append(f"Difficulty: aggregate E\u03c1\u00b2 {plots.fmt_interval(agg['median'], agg['lower95'], agg['upper95'])}; "
                             f"aggregate minus hardest stratum {_num(diff.get('gap_aggregate_minus_hardest')):.3f}")
                if diff.get("verdict"):  # the words of the sheet and ddr analyses (core.analyses.gap_verdict)
                    lines.append(verdict_sentence(diff["verdict"], "the all-tasks figure", "the hardest stratum"))
            mc = _stratum_mcse_line(diff)
            if mc:
                lines.append(mc)
            plots.set_category_ticks(self.difficulty_plot.getPlotItem().getAxis("bottom"),
                                     [s["label"] for s in strata], offset=1)
            low = np.nanmin(np.concatenate([lo, [agg["lower95"]] if agg else []]))
            self.difficulty_plot.setYRange(max(0.0, low - 0.05) if np.isfinite(low) else 0.0, 1.0, padding=0.02)
            self.difficulty_plot.setXRange(0.5, len(strata) + 0.5, padding=0)
        else:
            plots.placeholder(self.difficulty_plot, "not run")

        self.heldout_plot = plots.new_plot("Held-out reliability: one point per split",
                                           "projected E\u03c1\u00b2 (training fit)", "held-out E\u03c1\u00b2")
        self.heldout_table = QTableWidget(0, 5)
        self.heldout_table.setHorizontalHeaderLabels(["split", "projected", "held out", "gap", "error"])
        self.heldout_points = None
        if held:
            rows = held.get("splits") or []
            self.heldout_table.setRowCount(len(rows))
            for r, row in enumerate(rows):
                self.heldout_table.setItem(r, 0, numeric_item(row["split"], 0))
                for c, key in enumerate(("projected", "held_out", "gap"), start=1):
                    self.heldout_table.setItem(r, c, numeric_item(_num(row.get(key)), 3))
                self.heldout_table.setItem(r, 4, text_item(row.get("error") or ""))
            ok = [row for row in rows if row.get("projected") is not None and row.get("held_out") is not None]
            px = np.array([row["projected"] for row in ok], dtype=float)
            py = np.array([row["held_out"] for row in ok], dtype=float)
            self.heldout_points = pg.ScatterPlotItem(x=px, y=py, size=8, brush=plots.COLORS["median"])
            self.heldout_plot.addItem(self.heldout_points)
            self.heldout_plot.addItem(pg.InfiniteLine(pos=(0, 0), angle=45,
                                                      pen=plots.line(plots.COLORS["asymptote"], 1, Qt.DashLine)))
            both = np.concatenate([px, py])
            lo_, hi_ = (float(np.min(both)), float(np.max(both))) if both.size else (0.0, 1.0)
            pad = max(0.01, 0.1 * (hi_ - lo_))
            self.heldout_plot.setXRange(max(0.0, lo_ - pad), min(1.0, hi_ + pad), padding=0)
            self.heldout_plot.setYRange(max(0.0, lo_ - pad), min(1.0, hi_ + pad), padding=0)
            lines.append(f"Held-out: {held.get('n_splits', 0)} splits (train fraction "
                         f"{_num(held.get('train_fraction')):.2f}); Pearson r {_num(held.get('pearson_r')):.3f}, "
                         f"Spearman {_num(held.get('spearman')):.3f}, mean gap (held out - projected) "
                         f"{_num(held.get('mean_gap')):+.4f}"
                         + (f" ({'REML' if held.get('estimator') == 'reml' else 'Bayesian'} refits, "
                            f"{held['scale']} scale)" if held.get("scale") else ""))
            if held.get("verdict"):
                lines.append(verdict_sentence(held["verdict"], "the training-cell projection", "the held-out figure"))
            if held.get("choice"):  # which estimator ran and why (core.analyses.heldout_choice)
                lines.append(str(held["choice"])[0].upper() + str(held["choice"])[1:])
            if held.get("pearson_r_mcse") is not None or held.get("refit_rule"):
                lines.append(f"Held-out Monte Carlo SE (delta method over the splits' medians): r "
                             f"\u00b1{_num(held.get('pearson_r_mcse')):.3f}, mean gap \u00b1{_num(held.get('mean_gap_mcse')):.4f}"
                             + (f"; refits ran under the {held['refit_rule']} rule" if held.get("refit_rule") else ""))
        else:
            plots.placeholder(self.heldout_plot, "not run")
        if loo:
            lines.append(f"PSIS-LOO over {loo['n_cells']:,} cells: elpd {_num(loo['elpd_loo']):.1f} "
                         f"(SE {_num(loo['elpd_se']):.1f}), p_loo {_num(loo['p_loo']):.1f}; Pareto k: "
                         f"{loo['good']} good (\u2264 0.7), {loo['bad']} bad, {loo['very_bad']} very bad (> 1); "
                         f"max {_num(loo['max_pareto_k']):.2f}")
            from ..core.analyses.loo import pareto_k_advice

            advice = pareto_k_advice(loo["bad"], loo["very_bad"], loo["n_cells"])
            if advice:
                lines.append(f"Warning: {advice}")
        for name in ("lobo", "lomo"):
            if name in results and results[name].get("skipped"):
                lines.append(f"{name}: {results[name]['skipped']}")
        for t in (self.difficulty_table, self.heldout_table):
            t.verticalHeader().hide()
            t.setEditTriggers(QAbstractItemView.NoEditTriggers)
            t.resizeColumnsToContents()
        # the fits' convergence first: numbers resting on unconverged refits are labelled (core's count)
        conv = convergence_lines(results)
        self.summary, head = plots.panel_head([*conv, *lines], self.plots, self.tables, "No analysis has run.")
        top = QSplitter(Qt.Horizontal)
        top.addWidget(self.difficulty_plot)
        top.addWidget(self.heldout_plot)
        bottom = QSplitter(Qt.Horizontal)
        bottom.addWidget(self.difficulty_table)
        bottom.addWidget(self.heldout_table)
        body = QSplitter(Qt.Vertical)
        body.addWidget(top)
        body.addWidget(bottom)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(body, 1)

    def plots(self) -> dict:
        return {"Difficulty": self.difficulty_plot, "Held-out": self.heldout_plot}

    def tables(self) -> dict:
        return {"Difficulty strata": self.difficulty_table, "Held-out splits": self.heldout_table}

    def export_plot(self, name: str, path) -> Path:
        return plots.export_plot(self.plots()[name], path)

    def export_table(self, name: str, path) -> Path:
        return plots.export_table(self.tables()[name], path)


__all__ = ["AnalysesPanel"]
