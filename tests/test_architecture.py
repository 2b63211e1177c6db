"""The architecture contracts of pyproject.toml hold (import-linter), and the house has no import loop.

import-linter analyses a package on disk; the repository keeps core/ and gui/ at the top level and maps
them under ``ddr_explorer`` when installed, so the check runs on a copy laid out as installed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BASE = {"gate", "files", "errors", "model", "__init__"}


def _installed_layout(tmp: Path) -> Path:
    pkg = tmp / "ddr_explorer"
    pkg.mkdir()
    shutil.copy(ROOT / "ddr_explorer" / "__init__.py", pkg / "__init__.py")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "core", pkg / "core", ignore=ignore)
    shutil.copytree(ROOT / "gui", pkg / "gui", ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    return tmp


def test_import_contracts_are_kept(tmp_path):
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    root = _installed_layout(tmp_path)
    out = subprocess.run([str(lint), "--no-cache"], cwd=root, capture_output=True, text=True,
                         env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "4 kept, 0 broken" in out.stdout


def test_model_contract_names_every_module_of_core():
    """A new top-level part of core must be added to the model contract (or to the base it may import)."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    forbidden = {m.rsplit(".", 1)[1] for c in conf if c["id"] == "model-self-contained"
                 for m in c["forbidden_modules"] if m.startswith("ddr_explorer.core.")}
    parts = {p.stem if p.is_file() else p.name for p in (ROOT / "core").iterdir()
             if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()))}
    assert parts - BASE == forbidden


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    """The import graph of the installed layout (grimp), module-level and lazy imports alike."""
    grimp = pytest.importorskip("grimp")
    root = _installed_layout(tmp_path_factory.mktemp("layout"))
    sys.path.insert(0, str(root))
    saved = {k: v for k, v in sys.modules.items() if k == "ddr_explorer" or k.startswith("ddr_explorer.")}
    for k in saved:
        del sys.modules[k]
    try:
        return grimp.build_graph("ddr_explorer", cache_dir=None)
    finally:
        sys.path.remove(str(root))
        for k in [k for k in sys.modules if k == "ddr_explorer" or k.startswith("ddr_explorer.")]:
            del sys.modules[k]
        sys.modules.update(saved)


def _circles(graph, package: str) -> list[tuple[str, str]]:
    """Pairs of children of ``package`` (modules or subpackages) that import each other, directly or
    through other modules."""
    parts = sorted(graph.find_children(package))
    return [(a, b) for i, a in enumerate(parts) for b in parts[i + 1:]
            if graph.chain_exists(a, b, as_packages=True) and graph.chain_exists(b, a, as_packages=True)]


@pytest.mark.parametrize("package", ["ddr_explorer.core", "ddr_explorer.gui"])
def test_no_import_cycle(graph, package):
    """No two top-level parts of core (or modules of gui) import each other, directly or through others
    (module-level or lazy imports alike)."""
    loops = _circles(graph, package)
    assert not loops, f"import loops between parts of {package}: {loops}"


def test_no_import_circle_inside_any_package_of_core(graph):
    """Inside every package of core (a room such as core/model or core/corpus/importers), no two modules
    import each other, directly or through others (module-level or lazy imports alike)."""
    packages = ["ddr_explorer.core", *sorted(m for m in graph.find_descendants("ddr_explorer.core")
                                             if graph.find_children(m))]
    assert {"ddr_explorer.core.corpus.importers", "ddr_explorer.core.model",
            "ddr_explorer.core.analyses"} <= set(packages)
    loops = {p: c for p in packages if (c := _circles(graph, p))}
    assert not loops, f"import circles inside packages of core: {loops}"
