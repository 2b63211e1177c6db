"""Model setup and the fit's run controls: what to fit, with which priors and sampler, and how it goes.

The panel edits the window's :class:`~ddr_explorer.core.session.AnalysisState`
(object of measurement, model preset or formula, priors, sampler settings,
device) and shows a running fit: a progress bar per phase (compile, warmup,
sampling, diagnostics), the ETA the sampler reports, a Cancel button and a
log.  It starts nothing itself: the window connects :attr:`ModelPanel.fit_requested`
and :attr:`ModelPanel.cancel_requested` to the fit worker.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ..core.model import quadrature
from ..core.model.formula import PRESET_FORMULAS, HalfStudentT, StudentT
from ..core.model.posterior import SamplerSettings
from ..core.model.stopping import GATE_PHASE
from ..core.session import AnalysisState, SessionError
from ..core.references import cite
from .committed_edits import commit_on_finish, write_back, write_text_back

#: Model choices: the presets of core.model.formula, then a free formula.
FORMULA = "formula"
PRESET_LABELS = {
    "per-benchmark": f"Per benchmark ({cite('hardy2026', 'Eq. 2')})",
    "pooled": f"Pooled over benchmarks ({cite('hardy2026', 'Eq. 6')})",
    "ddr": f"DDR four-facet design ({cite('ddr2026', 'Eq. 1')})",
}
#: Phases the sampler reports, with the words the progress bar shows.
PHASES = {"compile": "Compiling the model", "warmup": "Warmup", "sampling": "Sampling",
          GATE_PHASE: "Sampling until converged", "diagnostics": "Diagnostics"}


#: Estimators that report evaluations of an optimiser against its budget (core.estimators: reml, laplace).
OPTIMISERS = ("REML", "Laplace")


def fmt_eta(seconds) -> str:
    """``"ETA 1 min 05 s"``; empty when the sampler gives no estimate yet."""
    if seconds is None or seconds != seconds or seconds < 0:
        return ""
    s = int(round(seconds))
    return f"ETA {s // 60} min {s % 60:02d} s" if s >= 60 else f"ETA {s} s"


def detect_device(short: bool = False) -> str:
    """Where a fit with ``device="auto"`` would run, from JAX (worker thread: importing JAX takes seconds).

    ``short``: the status bar's words (``"CPU, 4 chains on 2 cores"``, :func:`~ddr_explorer.core.formatting.fmt_device`).
    """
    import jax

    # Import the sampler's modules here too, off the GUI thread: loading them holds the interpreter
    # lock for long stretches, which a first fit would otherwise spend while the window waits.
    from ..core import fitting  # noqa: F401
    from ..core.model import diagnostics, sampler  # noqa: F401

    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if gpus:
        return f"GPU: {gpus[0].device_kind} ({len(gpus)} device{'s' if len(gpus) > 1 else ''})"
    import os

    from ..core.formatting import fmt_device

    cpus = jax.devices("cpu")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    # one JAX device per chain: "4 JAX devices" on 2 cores is 4 chains sharing them, said so
    if short:
        return fmt_device(f"cpu x{len(cpus)}", cores, short=True)
    return fmt_device(f"cpu x{len(cpus)}", cores) + " (no GPU visible to JAX)"


class ModelPanel(QWidget):
    """Model setup (object, model, priors, sampler, device) and the fit's progress, ETA, cancel and log.

    Parameters
    ----------
    state
        The analysis state the panel edits.

    Attributes
    ----------
    object_box, model_box, formula_edit
        Object of measurement; preset (or "formula") and the formula typed.
    sigma_df, sigma_scale, intercept_scale
        Priors: half-Student-t(df, 0, scale) of every sigma, Student-t(3, 0, scale) of mu.
    stop_box, draws_spin, warmup_spin, chains_spin, seed_spin, accept_spin, device_box, marginal_box
        Sampler settings (:class:`~ddr_explorer.core.model.sampler.SamplerSettings`); ``stop_box``
        is the run length rule (``stop``: "gate", until converged, with ``draws`` the minimum, or
        "fixed", exactly ``draws``);
        ``marginal_box`` is its ``marginalise`` ("auto": a weak, many-level cell term is
        integrated out by checked quadrature, :mod:`~ddr_explorer.core.model.quadrature`;
        "off": every level is sampled); ``nodes_box`` its ``quadrature_nodes`` (0: the fewest nodes
        that pass the checks; a floor, for a fit whose quadrature was off at its posterior).
    device_label
        The device JAX offers (filled by :meth:`set_device`).
    fit_button, cancel_button, progress, eta_label, log
        Run controls and what the running fit reports.
    message
        Why the last edit was refused (empty when it was not).
    """

    fit_requested = Signal()
    cancel_requested = Signal()

    def __init__(self, state: AnalysisState, parent: QWidget | None = None):
        super().__init__(parent)
        self.state = state
        self._syncing = False
        self._phase = None
        self._t0 = None
        self.fit_eta = None  # the whole fit's ETA while a fit runs (gui/fit_eta.py)
        self._eta_store = None

        self.object_box = QComboBox()
        self.object_box.addItem("Model (ranked across scaffolds)", "model")
        self.object_box.addItem("System (model-scaffold pair)", "system")
        self.object_box.addItem("Agent (ddr preset: one model-scaffold pair)", "agent")
        self.model_box = QComboBox()
        for name in PRESET_FORMULAS:
            self.model_box.addItem(PRESET_LABELS.get(name, name), name)
        self.model_box.addItem("Formula (lme4/brms random intercepts)", FORMULA)
        self.formula_edit = QLineEdit()
        self.formula_edit.setPlaceholderText("successes | trials(trials) ~ 1 + (1|task) + (1|model) + (1|task:model)")
        self.formula_view = QLabel()
        self.formula_view.setWordWrap(True)
        self.formula_view.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.formula_view.setStyleSheet("color: #555555;")

        def dspin(lo, hi, step, decimals=2):
            w = QDoubleSpinBox()
            w.setRange(lo, hi)
            w.setSingleStep(step)
            w.setDecimals(decimals)
            return w

        def ispin(lo, hi, step=1):
            w = QSpinBox()
            w.setRange(lo, hi)
            w.setSingleStep(step)
            return w

        self.sigma_df, self.sigma_scale = dspin(0.5, 100, 0.5), dspin(0.01, 100, 0.5)
        self.intercept_scale = dspin(0.01, 100, 0.5)
        self.draws_spin, self.warmup_spin = ispin(1, 100_000, 100), ispin(0, 100_000, 100)
        self.chains_spin, self.seed_spin = ispin(1, 64), ispin(0, 2**31 - 1)
        self.accept_spin = dspin(0.5, 0.99, 0.01)
        # a typed number reaches the state once, on Enter or focus out (gui/committed_edits.py)
        commit_on_finish(self.sigma_df, self.sigma_scale, self.intercept_scale, self.draws_spin, self.warmup_spin,
                         self.chains_spin, self.seed_spin, self.accept_spin)
        self.stop_box = QComboBox()
        for label, value in (("Until converged (convergence gate)", "gate"), ("Fixed number of draws", "fixed")):
            self.stop_box.addItem(label, value)
        self.stop_box.setToolTip(
            "Until converged: after warmup, sample until every variance component passes the convergence gate\n"
            "(R-hat <= 1.01, bulk and tail ESS >= 440, no divergence), looked at every 50 draws per chain,\n"
            "at least 'Draws per chain' and at most 4,000. Fixed: exactly 'Draws per chain'.")
        self.draws_label = QLabel("Draws per chain")
        self.device_box = QComboBox()
        for label, value in (("Automatic (GPU when JAX sees one)", "auto"), ("CPU", "cpu"), ("GPU", "gpu")):
            self.device_box.addItem(label, value)
        # why a user turns it off: the integrated term's effects are not drawn (LOO refits anyway),
        # or a fit reported a quadrature error above its tolerance
        self.marginal_box = QComboBox()
        for label, value in (("Integrate out when accurate (auto)", "auto"), ("Sample every level (off)", "off")):
            self.marginal_box.addItem(label, value)
        self.marginal_box.setToolTip(
            f"A cell-level term with at least {quadrature.MIN_LEVELS:,} weakly informed levels (e.g. "
            f"benchmark:task:model) can be\nintegrated out by Gauss-Hermite quadrature, checked against a "
            f"{quadrature.REFERENCE_NODES}-node reference ({quadrature.LOGLIK_TOLERANCE:g} nats).\n"
            "NUTS then samples its sigma alone. 'off' samples every level (slower on large pooled corpora).")
        # the mend a fit's verdict names when its quadrature was off at the posterior (--quadrature-nodes)
        self.nodes_box = QComboBox()
        self.nodes_box.addItem("Fewest that pass the checks (auto)", 0)
        for q in quadrature.NODE_COUNTS[1:]:
            self.nodes_box.addItem(f"At least {q}", q)
        self.nodes_box.setToolTip("Gauss-Hermite nodes of the integrated term's quadrature. Raise it when a fit "
                                  "says the quadrature\nwas off at the posterior; each step costs more per "
                                  "gradient.")
        self.device_label = QLabel("detecting\u2026")
        self.device_label.setWordWrap(True)

        what = QGroupBox("What to fit")
        f1 = QFormLayout(what)
        f1.addRow("Object of measurement", self.object_box)
        f1.addRow("Model", self.model_box)
        f1.addRow("Formula", self.formula_edit)
        f1.addRow("", self.formula_view)
        # A preset the design cannot fully separate (core/design/presets.py): the last fit's note and
        # the formula the design supports, one click away.  Hidden until such a fit.
        self.terms_notice = QLabel("")
        self.terms_notice.setWordWrap(True)
        self.terms_notice.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.terms_notice.setStyleSheet("color: #8a5a00;")
        self.use_supported_button = QPushButton("Use the supported formula")
        self._notice_for: tuple[str, str] | None = None  # (model the fit was asked for, supported formula)
        self.terms_notice.hide()
        self.use_supported_button.hide()
        self.use_supported_button.clicked.connect(self.use_supported_formula)
        f1.addRow("", self.terms_notice)
        f1.addRow("", self.use_supported_button)
        pri = QGroupBox(f"Priors ({cite('hardy2026', 'App. C.1.3')}; brms defaults, {cite('burkner2017')})")
        f2 = QFormLayout(pri)
        row = QHBoxLayout()
        row.addWidget(QLabel("df"))
        row.addWidget(self.sigma_df)
        row.addWidget(QLabel("scale"))
        row.addWidget(self.sigma_scale)
        f2.addRow("\u03c3 of every term: half-Student-t", row)
        f2.addRow("intercept \u03bc: Student-t(3, 0, scale)", self.intercept_scale)
        smp = QGroupBox("Sampler (NUTS)")
        f3 = QFormLayout(smp)
        f3.addRow("Run length", self.stop_box)
        f3.addRow(self.draws_label, self.draws_spin)
        f3.addRow("Warmup per chain", self.warmup_spin)
        f3.addRow("Chains", self.chains_spin)
        f3.addRow("Seed", self.seed_spin)
        f3.addRow("Target acceptance", self.accept_spin)
        f3.addRow("Weak cell-level term", self.marginal_box)
        f3.addRow("Quadrature nodes", self.nodes_box)
        f3.addRow("Device", self.device_box)
        f3.addRow("JAX offers", self.device_label)

        self.fit_button = QPushButton("Fit")
        self.fit_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("idle")
        self.progress.setTextVisible(True)
        self.eta_label = QLabel("")
        self.eta_label.setMinimumWidth(130)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #a40000;")
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.log.setMaximumBlockCount(2000)

        run = QHBoxLayout()
        run.addWidget(self.fit_button)
        run.addWidget(self.cancel_button)
        run.addWidget(self.progress, 1)
        run.addWidget(self.eta_label)
        left = QVBoxLayout()
        left.addWidget(what)
        left.addWidget(pri)
        left.addWidget(smp)
        left.addStretch(1)
        right = QVBoxLayout()
        right.addLayout(run)
        right.addWidget(self.message)
        right.addWidget(QLabel("Log"))
        right.addWidget(self.log, 1)
        top = QHBoxLayout(self)
        top.addLayout(left, 2)
        top.addLayout(right, 3)

        self._sync_widgets()
        self.object_box.currentIndexChanged.connect(self._on_edited)
        self.model_box.currentIndexChanged.connect(self._on_edited)
        self.formula_edit.editingFinished.connect(self._on_edited)
        for w in (self.sigma_df, self.sigma_scale, self.intercept_scale, self.accept_spin, self.draws_spin,
                  self.warmup_spin, self.chains_spin, self.seed_spin):
            w.valueChanged.connect(self._on_edited)
        self.device_box.currentIndexChanged.connect(self._on_edited)
        self.stop_box.currentIndexChanged.connect(self._on_edited)
        self.marginal_box.currentIndexChanged.connect(self._on_edited)
        self.nodes_box.currentIndexChanged.connect(self._on_edited)
        self.fit_button.clicked.connect(self.fit_requested)
        self.cancel_button.clicked.connect(self.cancel_requested)
        cb = self._on_state_changed
        state.events.connect(cb)
        self._listened = [state]
        listened = self._listened
        # The state may outlive the panel: stop listening when the widget goes
        # (no parameters: PySide then does not wrap the half-destroyed panel for the handler).
        self.destroyed.connect(lambda: listened[0].events.disconnect(cb))

    # -- state -> widgets ------------------------------------------------------------------
    def set_state(self, state: AnalysisState) -> None:
        """Follow another state (a new corpus or a reopened analysis)."""
        self.state.events.disconnect(self._on_state_changed)
        self.state = self._listened[0] = state
        state.events.connect(self._on_state_changed)
        self._sync_widgets()

    def _on_state_changed(self, names: frozenset[str]) -> None:
        if names & {"model", "sampler", "priors", "object_of_measurement"}:
            self._sync_widgets()
        if "model" in names and self._notice_for is not None and self.state.model != self._notice_for[0]:
            self.show_term_check(None)  # another model chosen: the notice spoke of the old one

    # -- a preset the design cannot separate -----------------------------------------------
    def show_term_check(self, check) -> None:
        """Show a fit's :class:`~ddr_explorer.core.design.presets.TermCheck`: when terms were left
        out, its note and a button that makes the supported formula the model; else hide both."""
        if check is None or not getattr(check, "changed", False):
            self._notice_for = None
            self.terms_notice.hide()
            self.use_supported_button.hide()
            return
        self._notice_for = (self.state.model, check.supported_formula)
        self.terms_notice.setText(check.note)
        self.use_supported_button.setToolTip(check.supported_formula)
        self.terms_notice.show()
        self.use_supported_button.show()

    def use_supported_formula(self) -> None:
        """Make the formula the design supports the model (a free formula, fitted as written)."""
        if self._notice_for is None:
            return
        formula = self._notice_for[1]
        try:
            self.state.update(model=formula)
            self.message.setText("")
        except SessionError as exc:
            self.message.setText(str(exc).replace("analysis: ", "", 1))
        self.show_term_check(None)
        self._sync_widgets()

    def _sync_widgets(self) -> None:
        st = self.state
        self._syncing = True
        try:
            self.object_box.setCurrentIndex(max(0, self.object_box.findData(st.object_of_measurement)))
            if st.model in PRESET_FORMULAS:
                self.model_box.setCurrentIndex(self.model_box.findData(st.model))
                write_text_back(self.formula_edit, PRESET_FORMULAS[st.model])
                self.formula_edit.setEnabled(False)
            else:
                self.model_box.setCurrentIndex(self.model_box.findData(FORMULA))
                write_text_back(self.formula_edit, st.model)
                self.formula_edit.setEnabled(True)
            try:
                spec = st.model_spec()
                self.formula_view.setText("terms: " + ", ".join(spec.term_names))
            except (ValueError, SessionError) as exc:
                self.formula_view.setText(str(exc))
            pri = st.model_priors()
            write_back(self.sigma_df, pri.sigma.df)
            write_back(self.sigma_scale, pri.sigma.scale)
            write_back(self.intercept_scale, pri.intercept.scale)
            s = st.sampler_settings()
            self.stop_box.setCurrentIndex(max(0, self.stop_box.findData(s.stop)))
            self.draws_label.setText("Draws per chain (at least)" if s.stop == "gate" else "Draws per chain")
            write_back(self.draws_spin, s.draws)
            write_back(self.warmup_spin, s.warmup)
            write_back(self.chains_spin, s.chains)
            write_back(self.seed_spin, s.seed)
            write_back(self.accept_spin, s.target_accept)
            self.device_box.setCurrentIndex(max(0, self.device_box.findData(s.device)))
            self.marginal_box.setCurrentIndex(max(0, self.marginal_box.findData(s.marginalise)))
            self.nodes_box.setCurrentIndex(max(0, self.nodes_box.findData(s.quadrature_nodes)))
        finally:
            self._syncing = False

    # -- widgets -> state ------------------------------------------------------------------
    def _on_edited(self, *_args) -> None:
        if self._syncing:
            return
        choice = self.model_box.currentData()
        if choice == FORMULA:
            self.formula_edit.setEnabled(True)
            model = self.formula_edit.text().strip() or self.state.model
            if model in PRESET_FORMULAS:  # switching to "formula" starts from the preset's formula
                model = PRESET_FORMULAS[model]
        else:
            model = choice
        stop = self.stop_box.currentData()
        defaults = SamplerSettings(stop=stop)  # the default draws depend on the rule (minimum 200, fixed 700)
        sampler = dict(self.state.sampler)
        if stop != self.state.sampler_settings().stop:
            # another rule: its own default draws, not the other rule's number; a fixed run has no ceilings
            for key in ("draws",) + (("max_draws", "max_seconds") if stop == "fixed" else ()):
                sampler.pop(key, None)
            draws = defaults.draws
        else:
            draws = self.draws_spin.value()
        if stop == SamplerSettings().stop:
            sampler.pop("stop", None)
        else:
            sampler["stop"] = stop
        for key, value in (("draws", draws), ("warmup", self.warmup_spin.value()),
                           ("chains", self.chains_spin.value()), ("seed", self.seed_spin.value()),
                           ("target_accept", round(self.accept_spin.value(), 4)),
                           ("device", self.device_box.currentData()),
                           ("marginalise", self.marginal_box.currentData()),
                           ("quadrature_nodes", self.nodes_box.currentData())):
            if value == getattr(defaults, key):
                sampler.pop(key, None)  # the state keeps only what differs from the defaults
            else:
                sampler[key] = value
        priors = {}
        sigma = (round(self.sigma_df.value(), 4), round(self.sigma_scale.value(), 4))
        if sigma != (HalfStudentT().df, HalfStudentT().scale):
            priors["sigma"] = {"df": sigma[0], "scale": sigma[1]}
        if round(self.intercept_scale.value(), 4) != StudentT().scale:
            priors["intercept"] = {"df": StudentT().df, "loc": StudentT().loc,
                                   "scale": round(self.intercept_scale.value(), 4)}
        try:
            self.state.update(model=model, sampler=sampler, priors=priors,
                              object_of_measurement=self.object_box.currentData())
            self.message.setText("")
        except SessionError as exc:
            self.message.setText(str(exc).replace("analysis: ", "", 1))
        self._sync_widgets()

    # -- the running fit -------------------------------------------------------------------
    def set_device(self, text: str) -> None:
        self.device_label.setText(text)

    def set_running(self, running: bool) -> None:
        """Enable Cancel and freeze the setup while a fit runs."""
        self.fit_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        for w in (self.object_box, self.model_box, self.formula_edit, self.sigma_df, self.sigma_scale,
                  self.intercept_scale, self.stop_box, self.draws_spin, self.warmup_spin, self.chains_spin, self.seed_spin,
                  self.accept_spin, self.device_box, self.marginal_box, self.nodes_box):
            w.setEnabled(not running and (w is not self.formula_edit or self.model_box.currentData() == FORMULA))
        if running:
            self._phase, self._t0 = None, time.perf_counter()
            self.progress.setRange(0, 0)  # busy until the first report
            self.progress.setFormat("starting\u2026")
            self.eta_label.setText("")

    def start_whole_eta(self, settings, store) -> None:
        """A fit starts: its ETA covers compile, warmup and sampling together, calibrated by the last fit's
        measurements in ``store`` (a ``QSettings``); ``settings`` are the fit's sampler settings."""
        from .fit_eta import WholeFitEta, calibration

        compile_s, pace = calibration(store)
        self.fit_eta = WholeFitEta(settings.warmup, settings.draws, compile_s, pace)
        self._eta_store = store

    def start_planned_eta(self, total_seconds: float) -> None:
        """A job core priced starts (the sheet's analyses): its ETA starts at the plan (gui/fit_eta.py)."""
        from .fit_eta import PlannedJobEta

        self.fit_eta, self._eta_store = PlannedJobEta(total_seconds), None

    def start_comparison_eta(self, estimators, n_cells: int, store):
        """An estimator comparison starts: one ETA for all its estimators, from the paces the last comparison
        stored in ``store`` (a ``QSettings``; gui/methods_eta.py).  Returns the estimate, to be given the
        measured seconds when the comparison ends."""
        from .methods_eta import ComparisonEta

        self.fit_eta = ComparisonEta(estimators, n_cells, store)
        self._eta_store = store
        return self.fit_eta

    def show_progress(self, phase: str, i: int, total: int, eta=None) -> None:
        """Draw one progress report of the sampler (``progress(phase, iteration, total, eta_seconds)``);
        during a fit the ETA is the whole fit's (:meth:`start_whole_eta`)."""
        if self.fit_eta is not None:
            eta = self.fit_eta.report(phase, i, total, eta)
        words = PHASES.get(phase, phase)
        if phase != self._phase:
            self._phase = phase
            self.append_log(f"{words}\u2026")
        if phase == "compile" and i < total:
            self.progress.setRange(0, 0)  # compilation reports no fraction: a busy bar
            self.progress.setFormat(words + "\u2026")
        elif phase in OPTIMISERS and i >= total:
            # an optimiser's last report: the next estimator starts (a Bayesian LMM compiles first, ~30 s
            # without a report), so a busy bar rather than "4000 / 4000, ETA 0 s" standing still
            self.progress.setRange(0, 0)
            self.progress.setFormat(f"{words} done; the next estimator starts\u2026")
            eta = None if self.fit_eta is None else eta
        elif phase in OPTIMISERS:  # the total is the optimiser's budget of evaluations, not its length
            self.progress.setRange(0, 0)
            self.progress.setFormat(f"{words}: {int(i)} evaluations (at most {int(total)})")
            eta = None if self.fit_eta is None else eta
        else:
            self.progress.setRange(0, max(1, int(total)))
            self.progress.setValue(int(i))
            if phase == GATE_PHASE:  # the total is the gate's projection of the run length, not a fixed number
                self.progress.setFormat(f"{words}: {int(i)} draws" if i >= total else
                                        f"{words}: {int(i)} / ~{int(total)}")
            else:
                self.progress.setFormat(f"{words}: {int(i)} / {int(total)}")
        self.eta_label.setText(fmt_eta(eta))

    def finish(self, text: str) -> None:
        """The fit ended (done, cached, cancelled or failed): stop the bar and say how."""
        est, self.fit_eta = self.fit_eta, None
        if est is not None and text == "done":  # a sampled fit: how good the estimate was, and the new pace
            line = est.check_line()
            if line:
                self.append_log(line)
            if self._eta_store is not None:
                est.remember(self._eta_store)
        self.set_running(False)
        self.progress.setRange(0, 1)
        self.progress.setValue(1 if text.startswith(("done", "reopened")) else 0)
        self.progress.setFormat(text)
        self.eta_label.setText("")

    def append_log(self, text: str) -> None:
        stamp = "" if self._t0 is None else f"[{time.perf_counter() - self._t0:7.1f} s] "
        self.log.appendPlainText(stamp + text)

    def log_text(self) -> str:
        return self.log.toPlainText()


__all__ = ["ModelPanel", "detect_device", "fmt_eta", "PHASES"]
