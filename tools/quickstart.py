"""Follows the README's quick start word by word: runs its commands and checks that they print what
it shows.

The quick start is the part of README.md between `<!-- quickstart` and `<!-- /quickstart -->`. Its
`sh` blocks are run in order as one bash script (`set -euo pipefail`), from a folder of their own,
with the `bondsim` of `--bin` first on the PATH; its `text` blocks are what they print: every line
of them but `…` (what the README leaves out) must be a line of the commands' output, in the same
order. `tests/wheel_check.sh` runs it with the wheel installed in a fresh virtualenv (`make
wheel-test`, in CI); `tests/test_docs.py` runs it with this tree's build.

    python tools/quickstart.py --bin .venv/bin --dir /tmp/empty-folder

Uses the standard library only: the wheel test runs it with the fresh virtualenv's Python.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
START = re.compile(r"^<!-- quickstart\b.*$", re.M)
END = "<!-- /quickstart -->"
#: A line of a `text` block that stands for lines left out.
ELIDED = "…"


@dataclass
class QuickStart:
    #: The commands, in order: the `sh` blocks joined.
    script: str
    #: The lines the commands print, in order (those left out, `…`, not among them).
    shown: list[str]


def extract(readme: str) -> QuickStart:
    """The quick start of the README's text."""
    start = START.search(readme)
    if start is None or END not in readme[start.end() :]:
        raise ValueError("README.md has no quick start between <!-- quickstart --> and <!-- /quickstart -->")
    part = readme[start.end() : readme.index(END, start.end())]
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", part, re.M | re.S)
    script = "\n".join(body for kind, body in blocks if kind == "sh")
    shown = [line.rstrip() for kind, body in blocks if kind == "text" for line in body.splitlines()]
    if not script.strip() or not shown:
        raise ValueError("the README's quick start has no sh block, or no text block of what it prints")
    return QuickStart(script, [line for line in shown if line and line != ELIDED])


def missing(shown: list[str], output: str) -> str | None:
    """The first line of `shown` that the output does not print where it should (after the line
    before it), or None when it prints them all in order."""
    lines = iter(line.rstrip() for line in output.splitlines())
    for line in shown:
        if not any(out == line for out in lines):
            return line
    return None


def run(quick: QuickStart, bin_dir: Path, folder: Path) -> subprocess.CompletedProcess:
    """The quick start's commands run in `folder` with `bin_dir` first on the PATH."""
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    script = "set -euo pipefail\n" + quick.script
    return subprocess.run(
        ["bash", "-c", script], cwd=folder, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def follow(bin_dir: Path, folder: Path, readme: Path = README) -> str | None:
    """Runs the README's quick start; None if it ran and printed what the README shows, else why not."""
    quick = extract(readme.read_text())
    done = run(quick, bin_dir, folder)
    if done.returncode != 0:
        return f"the quick start's commands exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    line = missing(quick.shown, done.stdout)
    if line is not None:
        return f"the quick start's commands did not print, in the README's order:\n{line}\nthey printed:\n{done.stdout}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Follow the README's quick start word by word.")
    parser.add_argument("--bin", type=Path, required=True, help="the folder whose bondsim the commands run")
    parser.add_argument("--dir", type=Path, help="an empty folder to run them in (default: a temporary one)")
    parser.add_argument("--readme", type=Path, default=README)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bondsim-quickstart.") as temp:
        folder = args.dir or Path(temp)
        folder.mkdir(parents=True, exist_ok=True)
        if any(folder.iterdir()):
            print(f"quick start: {folder} is not empty", file=sys.stderr)
            return 2
        why = follow(args.bin.resolve(), folder, args.readme)
    if why is not None:
        print(f"quick start FAILED: {why}", file=sys.stderr)
        return 1
    print(f"quick start followed: its commands ran and printed what {args.readme.name} shows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
