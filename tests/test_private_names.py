"""No module of the package reaches into another's private names."""

from __future__ import annotations

import ast

import pytest
from conftest import ROOT

PACKAGE = ROOT / "python" / "bondsim"
#: The compiled Rust core: private to the package, and what its Python modules exist to wrap.
EXTENSION = "_core"


def private(name: str) -> bool:
    return name.startswith("_") and name != EXTENSION and not (name.startswith("__") and name.endswith("__"))


def private_imports(path) -> list[str]:
    """Imports in ``path`` of a bondsim module's private name (or of a private bondsim module)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom):
            ours = node.level > 0 or (node.module or "").split(".")[0] == "bondsim"
            names = [*(node.module or "").split("."), *(alias.name for alias in node.names)]
        elif isinstance(node, ast.Import):
            ours = any(alias.name.split(".")[0] == "bondsim" for alias in node.names)
            names = [part for alias in node.names for part in alias.name.split(".")]
        else:
            continue
        if ours and any(private(name) for name in names):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_private_cross_module_imports(path):
    assert private_imports(path) == []


def test_the_check_sees_a_private_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from bondsim.scenario import _error, check\n"
        "from .cli import _Formatter\n"
        "import bondsim._secret\n"
        "from bondsim import _core\n"
        "from bondsim._core import __version__\n"
        "from os import _exit\n"
    )
    assert private_imports(bad) == [
        "line 1: from bondsim.scenario import _error, check",
        "line 2: from .cli import _Formatter",
        "line 3: import bondsim._secret",
    ]
