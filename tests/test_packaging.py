"""What the package declares (pyproject.toml, Cargo.toml, Makefile) agrees with what its code needs."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib

import pytest
from conftest import ROOT

PACKAGE = ROOT / "python" / "bondsim"

#: Standard-library modules that arrived after 3.10, and the first Python that has them.
NEWER_STDLIB = {"tomllib": (3, 11)}


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def minimum_python() -> tuple[int, int]:
    spec = pyproject()["project"]["requires-python"]
    match = re.fullmatch(r">=\s*3\.(\d+)", spec.strip())
    assert match, f"requires-python should be a plain lower bound, got {spec!r}"
    return 3, int(match.group(1))


def imported_modules(path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_requires_python_covers_every_stdlib_module_the_code_imports():
    needs = {
        (module, path.name): NEWER_STDLIB[module]
        for path in PACKAGE.rglob("*.py")
        for module in imported_modules(path) & set(NEWER_STDLIB)
    }
    assert needs, "tomllib is imported (scenario files are TOML): this test should see it"
    too_new = {where: version for where, version in needs.items() if version > minimum_python()}
    assert not too_new, f"requires-python {minimum_python()} is below what these imports need: {too_new}"


def test_lint_target_and_stable_abi_match_requires_python():
    major, minor = minimum_python()
    assert pyproject()["tool"]["ruff"]["target-version"] == f"py{major}{minor}"
    pyo3 = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["dependencies"]["pyo3"]
    assert [f for f in pyo3["features"] if f.startswith("abi3")] == [f"abi3-py{major}{minor}"]


def test_dask_is_an_optional_extra_that_make_build_installs():
    project = pyproject()["project"]
    assert not [d for d in project["dependencies"] if re.match(r"(dask|distributed)\b", d)]
    assert [d for d in project["optional-dependencies"]["dask"] if d.startswith("dask[distributed]")]
    build = re.search(r"^build:.*?(?=^\S)", (ROOT / "Makefile").read_text(), re.M | re.S)
    assert build, "the Makefile has a build target"
    extras = re.search(r"maturin develop .*--extras[ =](\S+)", build.group(0))
    assert extras and {"dev", "dask"} <= set(extras.group(1).split(","))


def test_ci_runs_the_wheel_test_after_the_suite():
    """The wheel, installed into a fresh virtualenv, is tried in CI (tests/wheel_check.sh): it is the
    only test that sees the package as pip lays it out, so it must not drop out of .ci/run."""
    target = re.search(r"^wheel-test:.*\n\t(.*)$", (ROOT / "Makefile").read_text(), re.M)
    assert target and target.group(1).startswith("tests/wheel_check.sh"), "make wheel-test runs tests/wheel_check.sh"
    script = ROOT / "tests" / "wheel_check.sh"
    assert script.stat().st_mode & 0o111, "tests/wheel_check.sh is executable"
    steps = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("make")]
    assert steps == ["make test", "make wheel-test"]
    text = script.read_text()
    for command in ("scenario list", "run tcp_rr", "sweep thesis_load", "reproduce thesis --quick --out thesis"):
        assert f'"$bondsim" {command}' in text, command
    # Issue 37: the README's quick start, followed word by word from the wheel.
    assert '"$ROOT/tools/quickstart.py" --bin "$WORK/venv/bin"' in text


HEAVY = ("pandas", "numpy", "duckdb", "matplotlib", "rich", "dask", "distributed")


@pytest.mark.parametrize(
    ("args", "loads"),
    [
        (["--help"], []),
        (["run", "--help"], []),
        (["scenario", "check", "thesis", "--quiet"], []),
        (["run", "thesis", "--quiet", "--set", "workload.requests=3"], []),
        (["run", "thesis", "--set", "workload.requests=3"], ["rich"]),  # its table
        (["run", "thesis", "--quiet", "--set", "workload.requests=3", "--out", "{tmp}"], []),  # its files
    ],
)
def test_a_command_loads_only_what_it_needs(args, loads, tmp_path):
    """``bondsim --help`` and a small run answer at once: no pandas, DuckDB or matplotlib behind them."""
    args = [arg.format(tmp=tmp_path / "run") for arg in args]
    code = f"""
import sys
from bondsim.cli import main
try:
    main({args!r})
except SystemExit:
    pass
print(sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r})), file=sys.stderr)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == repr(loads)


def test_import_bondsim_loads_the_core_only_and_the_rest_on_use():
    code = """
import sys
import bondsim
before = {m.split(".")[0] for m in sys.modules}
assert bondsim.Store.__name__ == "Store" and callable(bondsim.run) and "sweep" in dir(bondsim)
from bondsim.cli.common import DEFAULT_DB
from bondsim.store import DEFAULT_DB as STORE_DEFAULT
assert DEFAULT_DB == STORE_DEFAULT
print(sorted(before & {"pandas", "duckdb", "matplotlib"}))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def _imports() -> dict[str, set[str]]:
    """Each module of the package -> the package's modules it imports (at its top or inside a function),
    read from the source; ``bondsim`` itself (always loaded first) and ``_core`` (compiled) left out."""
    import ast

    root = ROOT / "python"
    files = {}
    for path in (root / "bondsim").rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def module(name: str) -> str | None:  # `bondsim.cli.common.write_error` -> `bondsim.cli.common`
        while name not in files and "." in name:
            name = name.rsplit(".", 1)[0]
        return name if name in files and name != "bondsim" else None

    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        named = []
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bondsim"):
                named += [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                named += [alias.name for alias in node.names if alias.name.startswith("bondsim")]
        graph[name] = {found for found in map(module, named) if found not in (None, name)}
    return graph


def test_the_package_imports_flow_one_way_and_only_the_command_line_imports_it():
    import graphlib

    graph = _imports()
    assert {"bondsim.cli", "bondsim.cli.common", "bondsim.api", "bondsim.emulate"} <= graph.keys()
    order = list(graphlib.TopologicalSorter(graph).static_order())  # CycleError names a circle
    assert order.index("bondsim.cli.common") < order.index("bondsim.cli.run")
    outside = {name: sorted(i for i in imports if i.startswith("bondsim.cli")) for name, imports in graph.items()}
    assert {name: i for name, i in outside.items() if i and not name.startswith("bondsim.cli")} == {}
