"""Engine bench binaries of two or more builds side by side: alternated runs, medians.

    python benchmarks/compare_engines.py BASELINE_BIN OTHER_BIN... [--rounds 9] [--packets 10000000]
                                        [--shapes "balanced rr,rate balance-rr"] [--instructions]

Each BIN is a `cargo bench -p bondsim-core --bench engine --no-run` executable of some
commit (copy it out of `target/release/deps/` before building the next one). Every round
runs each shape once on each binary in turn, so drift on a shared machine falls on all
of them alike; the figure is the median of the rounds' packets per second (the binary's
own timing of `bondsim_core::run`), and each binary's median over the first one's.
Instructions, which do not drift, come from `valgrind --tool=cachegrind --cache-sim=no
BIN 200000 SHAPE MODE`: `--instructions` prints that table instead (the whole process, each
binary once per shape; see `results/engine.md`). Never run by `make test`.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from bench_engine import run_rust

SHAPES = "balanced rr,thesis rr,thesis lb,rate balance-rr,rate earliest-finish"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bins", nargs="+", type=Path, help="engine bench executables; the first is the baseline")
    parser.add_argument("--rounds", type=int, default=9, help="alternated runs per binary and shape (median kept)")
    parser.add_argument("--packets", type=int, default=10_000_000, help="packets per run")
    parser.add_argument("--shapes", default=SHAPES, help=f"comma-separated 'SHAPE MODE' pairs (default: {SHAPES})")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions under valgrind (cachegrind, 2*10^5 packets) instead of timing runs",
    )
    args = parser.parse_args()
    for b in args.bins:
        if not b.is_file():
            parser.error(f"bins: {b} is not a file")
    shapes = [tuple(s.split()) for s in args.shapes.split(",")]
    for shape in shapes:
        if len(shape) != 2:
            parser.error(f"--shapes: {' '.join(shape)!r} is not 'SHAPE MODE'")
    if args.instructions:
        if shutil.which("valgrind") is None:
            parser.error("--instructions: valgrind is not installed (apt-get install valgrind)")
        return instructions(args.bins, shapes)
    names = [b.name for b in args.bins]
    heads = [f"{n} M pkt/s" for n in names] + [f"{n} / {names[0]}" for n in names[1:]]
    print(f"| shape | mode | {' | '.join(heads)} |")
    print("| --- | --- |" + " ---: |" * (2 * len(names) - 1))
    for shape, mode in shapes:
        rates: dict[Path, list[float]] = {b: [] for b in args.bins}
        # Progress on stderr: rewritten in place on a terminal, one line per round in a pipe or file.
        end = "\r" if sys.stderr.isatty() else "\n"
        for i in range(args.rounds):
            print(f"{shape} {mode}: round {i + 1}/{args.rounds}", file=sys.stderr, end=end, flush=True)
            for b in args.bins:
                rates[b].append(run_rust(b, args.packets, shape, mode, 1)["packets_per_s"] / 1e6)
        med = [statistics.median(rates[b]) for b in args.bins]
        cells = [f"{m:.2f}" for m in med] + [f"{m / med[0]:.3f}" for m in med[1:]]
        print(f"| {shape} | {mode} | {' | '.join(cells)} |", flush=True)
    return 0


INSTRUCTION_PACKETS = 200_000


def count_instructions(binary: Path, shape: str, mode: str) -> int:
    """Instructions the whole process runs for `INSTRUCTION_PACKETS` packets (cachegrind's `I refs`)."""
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", str(binary)]
    run = subprocess.run(
        [*command, str(INSTRUCTION_PACKETS), shape, mode],
        check=True,
        capture_output=True,
        text=True,
    )
    found = re.search(r"I\s+refs:\s+([\d,]+)", run.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output for {binary}: {run.stderr[-500:]}")
    return int(found.group(1).replace(",", ""))


def instructions(bins: list[Path], shapes: list[tuple[str, ...]]) -> int:
    """Prints M instructions per binary and shape, and the first binary's count over each other's
    (above 1: the other runs fewer)."""
    names = [b.name for b in bins]
    heads = [f"{n} M instructions" for n in names] + [f"{names[0]} / {n}" for n in names[1:]]
    print(f"| shape | mode | {' | '.join(heads)} |")
    print("| --- | --- |" + " ---: |" * (2 * len(names) - 1))
    for shape, mode in shapes:
        counts = [count_instructions(b, shape, mode) for b in bins]
        cells = [f"{c / 1e6:.1f}" for c in counts] + [f"{counts[0] / c:.3f}" for c in counts[1:]]
        print(f"| {shape} | {mode} | {' | '.join(cells)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
