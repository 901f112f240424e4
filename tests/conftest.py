"""Shared helpers: the project's scenarios, the CLI run as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "python" / "bondsim" / "scenarios"  # the shipped scenarios: package data of bondsim
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tools"))  # the docs' generator and the quick start's check (tests/test_docs.py)


def bondsim_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Runs ``bondsim ARGS`` in a subprocess, exactly as from a shell."""
    return subprocess.run(
        [sys.executable, "-m", "bondsim.cli", *args], capture_output=True, text=True, cwd=cwd or ROOT, timeout=600
    )


@pytest.fixture
def cli():
    return bondsim_cli


@pytest.fixture
def main(capsys):
    """Runs ``bondsim ARGS`` in this process (no interpreter start-up); returns what ``cli`` returns."""
    from bondsim.cli import main as bondsim_main

    def run(*args: str) -> subprocess.CompletedProcess:
        try:
            code = bondsim_main(list(args))
        except SystemExit as exc:  # argparse's --help and usage errors
            code = exc.code
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, out, err)

    return run


@pytest.fixture
def thesis_toml() -> Path:
    return SCENARIOS / "thesis.toml"
