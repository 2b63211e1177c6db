"""Refits that stop on what they report (core.model.stopping.check_reported, core.analyses.reported).

The rule: R-hat <= 1.01 on every variance component AND every reported quantity, bulk and tail ESS
>= 1.1 x 400 on the reported quantities only, no divergence.  Checked on synthetic chains with known
mixing (a component that mixes slowly but agrees across chains; one chain stuck elsewhere), and with
the real sampler on a small simulated per-benchmark corpus (seed 000 Eq. 2): a hold-out-like refit
that reports Erho2 at a design stops at the first look where Erho2 passes, no later than the same
request under the component rule (same seed, so the same draws up to the earlier stop).
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

import ddr_explorer.core.model as M  # noqa: F401  (before jax: parallel CPU chains)
from ddr_explorer.core.analyses.refits import BatchResult, coefficient_draws
from ddr_explorer.core.analyses.reported import ReportedQuantity, reported_verdict
from ddr_explorer.core.dstudy import DStudyDesign
from ddr_explorer.core.model import SamplerSettings, fit
from ddr_explorer.core.model import stopping as S
from ddr_explorer.core.model.diagnostics import diagnose
from ddr_explorer.core.model.refit import RefitRequest, fit_refits

# the design fixture is tests/model/test_refit.py's corpus, whose gate-stopped refits pass on every component
from .test_refit import design  # noqa: E402,F401 - the fixture
from .test_stopping import _ar1  # noqa: E402

PARENT = SamplerSettings(stop="fixed", draws=200, warmup=150, chains=2, seed=3, chunk_size=50)
# The ceiling leaves room to reach the first passing look whatever the CPU's floating-point code paths: on an
# AMD EPYC box the same seed's refit had R-hat 1.023 on sigma[task:model] at 600 draws and passed later.
GATE = SamplerSettings(draws=100, warmup=150, chains=2, seed=3, chunk_size=50, stop="gate", check_every=50,
                       max_draws=1500)
DESIGN = DStudyDesign(n_tasks=30, n_scaffolds=3, n_replicates=3)


class _Iid:
    """A stand-in reported quantity: independent draws whatever the sigma (ESS about chains x draws)."""

    label = "q"

    def __init__(self, seed=1):
        self.seed = seed

    def draws(self, sigma, spec):
        shape = np.shape(next(iter(sigma.values())))
        return np.random.default_rng(self.seed).normal(size=shape)


# -- the rule on synthetic chains ----------------------------------------------------------
def test_a_slow_component_does_not_hold_back_a_converged_reported_quantity():
    rng = np.random.default_rng(7)
    slow = _ar1(rng, 4, 2000, 0.9)  # chains agree, but about 420 effective draws: under 440
    fast = rng.normal(size=(4, 2000))
    sig = np.exp(np.stack([fast, slow], axis=-1) * 0.1)
    assert S.rhat_rank(sig[:, :, 1]) <= 1.01 and S.ess_bulk(sig[:, :, 1]) < 440  # the premise
    by_comp = S.check_gate(sig, 0, ["a", "b"])
    assert not by_comp.passed and all("ESS of sigma[b]" in r for r in by_comp.reasons)
    chk = S.check_reported(sig, 0, ["a", "b"], [_Iid()], spec=None)
    assert chk.passed and chk.on == ("q",) and chk.min_ess_bulk > 4000
    # a divergence still stops it from passing
    assert not S.check_reported(sig, 1, ["a", "b"], [_Iid()], spec=None).passed


def test_a_component_whose_r_hat_fails_does_not_let_the_refit_stop():
    rng = np.random.default_rng(8)
    sig = np.exp(0.1 * rng.normal(size=(4, 500, 2)))
    sig[0, :, 1] *= 3.0  # one chain's sigma[b] stuck elsewhere
    chk = S.check_reported(sig, 0, ["a", "b"], [_Iid()], spec=None)
    assert not chk.passed
    assert chk.reasons == [f"R-hat of sigma[b] {S.rhat_rank(sig[:, :, 1]):.3f}"]


def test_a_reported_quantity_that_mixes_badly_fails_on_its_own_ess():
    class Slow(_Iid):
        label = "slow q"

        def draws(self, sigma, spec):
            return _ar1(np.random.default_rng(2), 4, 500, 0.95)

    sig = np.exp(0.1 * np.random.default_rng(9).normal(size=(4, 500, 2)))
    chk = S.check_reported(sig, 0, ["a", "b"], [Slow()], spec=None)
    assert not chk.passed and any(r.startswith("bulk ESS of slow q") for r in chk.reasons)


def test_the_convergence_count_reads_the_reported_verdict():
    def res(conv):
        return SimpleNamespace(posterior=SimpleNamespace(diagnostics=SimpleNamespace(converged=conv)))

    b = BatchResult(results=[res(True), res(False), res(False), None])
    assert b.n_converged == 1 and "every variance component" in b.converged_on
    b.verdicts = [None, SimpleNamespace(converged=True), SimpleNamespace(converged=False), None]
    assert b.n_converged == 2 and b.converged_on.startswith("2 refit(s) each on the coefficient it reports")
    b.verdicts = [SimpleNamespace(converged=True)] * 3 + [None]
    assert b.n_converged == 3 and b.converged_on.startswith("each on the coefficient it reports")


def test_the_reported_quantity_is_in_the_refit_key():
    from ddr_explorer.core.analyses.engine import refit_key

    r = RefitRequest("x", np.array([1, 2]), np.array([3, 4]))
    q = ReportedQuantity.coefficient(DESIGN, "the held-out design")
    r2 = dataclasses.replace(r, reported=(q,))
    r3 = dataclasses.replace(r, reported=(ReportedQuantity.coefficient(dataclasses.replace(DESIGN, n_tasks=21)),))
    keys = {refit_key("p", x, GATE) for x in (r, r2, r3)}
    assert len(keys) == 3
    assert refit_key("p", r2, GATE) == refit_key("p", dataclasses.replace(r2, label="y"), GATE)
    assert "Erho2 at the held-out design (30 tasks per benchmark" in q.label
    # a request travels to a Dask worker pickled (core.analyses.cluster): the quantity with it, no function
    import pickle

    back = pickle.loads(pickle.dumps(r2))
    assert back.reported == r2.reported and refit_key("p", back, GATE) == refit_key("p", r2, GATE)
    with pytest.raises(ValueError, match="needs its design"):
        ReportedQuantity("coefficient")


# -- the real sampler ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def parent(design):
    return fit(design, "per-benchmark", PARENT)


def _in_batches_of_two(monkeypatch):
    """Run every call's refits two to a batch (one alone is padded with a copy of itself): the program of
    tests/model/test_refit.py's refits of this parent (its warmup, chunk and batch), which the compile cache
    holds when that file ran first; a batch of one is another program, compiled anew (about 16 s).  A refit's
    draws do not depend on its batch (test_refit.py::test_a_refit_gives_the_same_draws_alone_and_in_a_batch)."""
    import ddr_explorer.core.model.refit as refit_module

    layout = refit_module.batch_layout
    monkeypatch.setattr(refit_module, "batch_layout", lambda n, chains, kind, n_dev: layout(2, chains, kind, n_dev))


@pytest.fixture(scope="module")
def refits(design, parent):
    """One request (about 70% of every cell's trials), run on Erho2 at DESIGN and on every component: one call,
    one batch (the same counts, so the same seed: the same draws up to the earlier stop)."""
    rng = np.random.default_rng(1)
    n = rng.binomial(design.trials, 0.7)
    s = rng.hypergeometric(design.successes, design.trials - design.successes, np.maximum(n, 0))
    req = RefitRequest("train", s, n)
    q = ReportedQuantity.coefficient(DESIGN, "a test design")
    with pytest.MonkeyPatch.context() as mp:
        _in_batches_of_two(mp)
        on_q, on_all = fit_refits(design, "per-benchmark", [dataclasses.replace(req, reported=(q,)), req], GATE,
                                  parent=parent, warmup=50)
    return q, on_q, on_all


def test_reported_draws_are_the_numbers_the_analysis_reports(parent):
    q = ReportedQuantity.coefficient(DESIGN)
    np.testing.assert_array_equal(q.draws(parent.sigma, parent.spec).reshape(-1), coefficient_draws(parent, DESIGN))
    comp = ReportedQuantity("component", term="model")
    np.testing.assert_array_equal(comp.draws(parent.sigma, parent.spec), parent.sigma["model"] ** 2)


def test_a_refit_with_a_reported_quantity_stops_on_it(refits):
    q, p, ref = refits
    n = p.mu.shape[1]
    note = next(x for x in p.notes if x.startswith("run length by the gate"))
    assert f"at {n} draws per chain, when the reported {q.label} passed" in note, note
    names = list(p.sigma)
    sig = np.stack([p.sigma[t] for t in names], axis=-1)
    div = int(np.sum(p.sample_stats["diverging"]))
    assert S.check_reported(sig, div, names, [q], p.spec).passed  # the draws kept are those that passed
    if n > GATE.draws:  # and the look before did not: it stopped at the first passing look
        assert not S.check_reported(sig[:, :n - GATE.check_every], div, names, [q], p.spec).passed
    # the same seed: the component rule cannot stop earlier (it asks more of the same draws)
    assert ref.mu.shape[1] >= n
    np.testing.assert_array_equal(ref.sigma["task"][:, :n], p.sigma["task"])


def test_the_verdict_says_what_it_checked_and_leaves_the_component_verdict_alone(refits):
    q, p, _ = refits
    v = reported_verdict(p, [q])
    assert v.converged and v.text.startswith(f"converged on {q.label}") and "every component's R-hat" in v.text
    assert p.diagnostics.converged == diagnose(p).converged  # the G-study verdict is not upgraded
    assert v.sampled and v.problems == ()
    # an integrated term's quadrature off at the posterior fails the verdict too, the sampling still passed
    import copy

    off = copy.copy(p)
    off.integrated, off.quadrature_error = ["task:model"], 0.054
    v2 = reported_verdict(off, [q])
    assert not v2.converged and v2.sampled and v2.text.startswith(f"NOT converged on {q.label}")
    assert v2.problems == ("the quadrature that integrates task:model out is off by 0.054 nats at the posterior",)


def test_the_sheet_and_the_cli_say_what_the_refits_were_checked_on():
    from ddr_explorer.core.analyses.runner import convergence_lines
    from ddr_explorer.core.report.content import _refits_note, refit_convergence_notes

    def res(conv):
        return SimpleNamespace(posterior=SimpleNamespace(diagnostics=SimpleNamespace(converged=False)))

    b = BatchResult(results=[res(False)] * 3, verdicts=[SimpleNamespace(converged=True)] * 2 + [None])
    on = b.converged_on
    assert b.n_converged == 2 and on.startswith("2 refit(s) each on the coefficient it reports")
    # page 1 says whether to trust the number; the method notes say what the gate was checked on
    assert _refits_note(SimpleNamespace(n_fits=3, n_converged=3, converged_on=on)) == " (All 3 refits converged.)"
    bad = _refits_note(SimpleNamespace(n_fits=3, n_converged=2, converged_on=on, unconverged=("split 2 train",)))
    assert "PROVISIONAL: 1 of 3 refits did not converge</b> (split 2 train); rerun" in bad
    assert "R-hat" not in bad and "ESS" not in bad
    ct = SimpleNamespace(inputs=SimpleNamespace(analysis=lambda key: SimpleNamespace(
        n_fits=3, n_converged=2, converged_on=on, unconverged=("split 2 train",)) if key == "held_out" else None))
    notes = refit_convergence_notes(ct)
    assert notes == ["Held-out splits: 2 of 3 refits converged, 2 refit(s) each on the coefficient it reports: "
                     "R-hat \u2264 1.01 and bulk and tail ESS \u2265 400 on it, R-hat \u2264 1.01 on every variance "
                     "component, no divergence; the other 1 fit(s) on every variance component. Not converged: "
                     "split 2 train."]
    line = convergence_lines({"heldout": {"n_fits": 3, "n_converged": 2, "converged_on": on}})[0]
    assert line.startswith("heldout: 2 of 3 fits converged (2 refit(s) each on the coefficient it reports")


# -- the precision rule (core.model.stopping.check_precision) with the real sampler ------------------
@pytest.fixture(scope="module")
def precision_refit(design, parent, refits):
    """The same request as ``refits``' refit on Erho2, under the precision rule (its ceiling 0.005), at most 300
    draws per chain."""
    q, on_q, _ = refits
    rng = np.random.default_rng(1)
    n = rng.binomial(design.trials, 0.7)
    s = rng.hypergeometric(design.successes, design.trials - design.successes, np.maximum(n, 0))
    rule = S.PrecisionRule(group="projected")
    req = RefitRequest("train", s, n, reported=(q,), precision=rule)
    with pytest.MonkeyPatch.context() as mp:
        _in_batches_of_two(mp)  # the program of ``refits``, read from the compile cache
        prec = fit_refits(design, "per-benchmark", [req], dataclasses.replace(GATE, max_draws=300), parent=parent,
                          warmup=50)[0]
    return q, on_q, prec, rule


def test_the_refit_runner_stops_a_refit_by_its_precision_rule(precision_refit):
    """The runner looks at a refit with a precision rule through check_precision: its stop note and its verdict
    say so, and agree with each other; the seed is the request's, so its draws are the gate-on-Erho2 refit's up to
    its stop (bulk ESS 100, not 440, is asked: it never stops later)."""
    q, on_q, prec, rule = precision_refit
    n = prec.mu.shape[1]
    assert n <= on_q.mu.shape[1]
    np.testing.assert_array_equal(prec.mu, on_q.mu[:, :n])
    note = next(x for x in prec.notes if x.startswith("run length by the gate"))
    v = reported_verdict(prec, (q,), precision=rule)
    assert v.rule == "precision" and np.isfinite(v.max_mcse)
    if v.converged:
        assert f"stopped at {n} draws per chain under the precision rule" in note, note
        assert S.mcse_quantile(q.draws(prec.sigma, prec.spec), 0.5) <= 0.005  # no spread yet: the ceiling
        assert "under the precision rule" in v.text
    else:  # this small corpus: task:model mixes slowly, and Erho2's posterior is wide (its median's MCSE ~0.02)
        assert n == 300 and "reached the draws ceiling at 300 draws per chain" in note, note
        assert v.problems and all(p.startswith(("R-hat", "bulk ESS", "MCSE of the median of Erho2"))
                                  for p in v.problems), v.problems
        mc = [p for p in v.problems if p.startswith("MCSE")]
        assert all(p.endswith("> 0.0050") for p in mc) and (not mc or v.max_mcse > 0.005)
        assert v.text.startswith("NOT converged on Erho2")
