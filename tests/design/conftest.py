"""Fixtures of the design-diagnostics tests: corpora whose answers are known (seed 000 App. E)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest


def _register_cases():
    """Make ``design_cases.py`` importable as ``ddr_design_cases`` (pytest runs with
    ``--import-mode=importlib``, so this folder is not on ``sys.path``)."""
    if "ddr_design_cases" not in sys.modules:
        spec = importlib.util.spec_from_file_location("ddr_design_cases", Path(__file__).with_name("design_cases.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)


_register_cases()

from ddr_design_cases import crossed, make_corpus  # noqa: E402


# ---------------------------------------------------------------------------
# A connected crossed design
# ---------------------------------------------------------------------------
@pytest.fixture
def crossed_corpus():
    # 2 benchmarks x 3 tasks x 2 models x 2 scaffolds = 24 records
    return make_corpus(crossed(["B1", "B2"], ["t1", "t2", "t3"], ["m1", "m2"], ["a1", "a2"]))
