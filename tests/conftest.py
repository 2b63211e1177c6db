"""Shared test fixtures.

The real corpora (Terminal-Bench 2.0, BRIDGE) live outside the repository, in
``../shared/corpora`` next to it; set ``DDR_SHARED_CORPORA`` to use another
folder.  Tests that need them are skipped, with the reason, when the folder is
missing (e.g. in a bare checkout).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def _register(name: str, file: str):
    """Make a helper module of ``tests/`` importable as ``name`` (pytest runs with ``--import-mode=importlib``,
    so the tests folder is not on ``sys.path``): ``batch_fakes.py`` as ``ddr_batch_fakes``,
    ``closed_forms.py`` as ``ddr_closed_forms``."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(file))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)


_register("ddr_batch_fakes", "batch_fakes.py")
_register("ddr_closed_forms", "closed_forms.py")


def shared_corpora_path() -> Path:
    """Where the real corpora are expected (``$DDR_SHARED_CORPORA`` or ``<repo>/../shared/corpora``)."""
    env = os.environ.get("DDR_SHARED_CORPORA")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "corpora"


@pytest.fixture(scope="session", autouse=True)
def hermetic_cache(tmp_path_factory, request):
    """Give the run its own fit and compile cache (``DDR_CACHE_DIR``), empty at the start.

    Without it the tests read and wrote the user's ``~/.cache/ddr-explorer``: a second run found
    fits and compiled samplers from the first, so a run on a developer's machine was faster than
    the same run on CI's clean one, and a stale cache could hide a failure.  Under pytest-xdist
    the workers share one folder (the parent of their own temporary folders), so a sampler one
    worker compiled is read from disk by the other.  A folder the user set is replaced only for
    the run."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if hasattr(request.config, "workerinput") else base
    path = root / "ddr-cache"
    path.mkdir(exist_ok=True)
    saved = {k: os.environ.get(k) for k in ("DDR_CACHE_DIR", "DDR_JAX_CACHE_DIR")}
    os.environ["DDR_CACHE_DIR"] = str(path)
    os.environ.pop("DDR_JAX_CACHE_DIR", None)
    yield path
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def corpora_dir() -> Path:
    """The folder of real corpora; skips the test when it is missing."""
    path = shared_corpora_path()
    if not path.is_dir():
        pytest.skip(f"real corpora folder not found at {path} (set DDR_SHARED_CORPORA to its location)")
    return path


@pytest.fixture
def fake_sampler(monkeypatch):
    """Replace the NUTS sampler by ``batch_fakes.moment_fit`` (draws known by hand), and the refit contract's
    ``fit_refits`` by its cold loop over it (``batch_fakes.cold_fit_refits``: a warm, batched implementation has
    its own chains and never calls ``fit``); returns the call log."""
    import ddr_batch_fakes as bf

    import ddr_explorer.core.model.refit as refit
    import ddr_explorer.core.model.sampler as sampler

    monkeypatch.setattr(sampler, "fit", bf.moment_fit)
    monkeypatch.setattr(refit, "fit_refits", bf.cold_fit_refits)
    bf.CALLS.clear()
    return bf.CALLS
