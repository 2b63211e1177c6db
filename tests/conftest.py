"""Shared test fixtures.

The real corpora (Terminal-Bench 2.0, BRIDGE) live outside the repository, in
``../shared/corpora`` next to it; set ``DDR_SHARED_CORPORA`` to use another
folder.  Tests that need them are skipped, with the reason, when the folder is
missing (e.g. in a bare checkout).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def shared_corpora_path() -> Path:
    """Where the real corpora are expected (``$DDR_SHARED_CORPORA`` or ``<repo>/../shared/corpora``)."""
    env = os.environ.get("DDR_SHARED_CORPORA")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "corpora"


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
