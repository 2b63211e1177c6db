"""The statistical model: formula -> spec, design matrix, NUTS sampler, diagnostics.

Importing this package before jax lets the sampler run chains in parallel on CPU:
``XLA_FLAGS=--xla_force_host_platform_device_count=<max(cores, 4)>`` must be in the environment
before jax initialises its CPU backend, so we add it here when jax has not been imported
yet and the user has not set it.  (When jax was imported first, chains still run, vectorised
on one device.)  Nothing here imports jax itself; the sampler imports it lazily.
"""

from __future__ import annotations

import os
import sys


def _enable_parallel_cpu_chains() -> None:
    if "jax" in sys.modules:
        return
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" in flags:
        return
    # one CPU device per chain (4 by default) even on 2 cores: chains on separate devices never
    # wait for each other's NUTS trees, which vectorised chains do (measured: docs/sampler-measurements.md)
    n = min(max(os.cpu_count() or 1, 4), 16)
    os.environ["XLA_FLAGS"] = (flags + f" --xla_force_host_platform_device_count={n}").strip()


_enable_parallel_cpu_chains()

from .design_matrix import DesignMatrix, build_design  # noqa: E402
from .diagnostics import Diagnostics, diagnose  # noqa: E402
from .formula import (  # noqa: E402
    PRESET_FORMULAS, HalfStudentT, ModelSpec, ModelSpecError, Priors, StudentT, Term, as_spec, parse_formula,
    preset,
)
from .posterior import FitCancelled, Posterior, SamplerSettings  # noqa: E402
from .sampler import fit  # noqa: E402

__all__ = [
    "DesignMatrix", "Diagnostics", "FitCancelled", "HalfStudentT", "ModelSpec", "ModelSpecError",
    "PRESET_FORMULAS", "Posterior", "Priors", "SamplerSettings", "StudentT", "Term", "as_spec",
    "build_design", "diagnose", "fit", "parse_formula", "preset",
]
