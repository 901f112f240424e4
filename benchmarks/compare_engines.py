"""Engine bench binaries of two or more builds side by side: alternated runs, medians.

    python benchmarks/compare_engines.py BASELINE_BIN OTHER_BIN... [--rounds 9] [--packets 10000000]
                                        [--shapes "balanced rr,rate balance-rr"]

Each BIN is a `cargo bench -p bondsim-core --bench engine --no-run` executable of some
commit (copy it out of `target/release/deps/` before building the next one). Every round
runs each shape once on each binary in turn, so drift on a shared machine falls on all
of them alike; the figure is the median of the rounds' packets per second (the binary's
own timing of `bondsim_core::run`), and each binary's median over the first one's.
Instructions, which do not drift, come from `valgrind --tool=cachegrind --cache-sim=no
BIN 200000 SHAPE MODE` (see `results/engine.md`). Never run by `make test`.
"""

from __future__ import annotations

import argparse
import statistics
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
    args = parser.parse_args()
    for b in args.bins:
        if not b.is_file():
            parser.error(f"bins: {b} is not a file")
    shapes = [tuple(s.split()) for s in args.shapes.split(",")]
    for shape in shapes:
        if len(shape) != 2:
            parser.error(f"--shapes: {' '.join(shape)!r} is not 'SHAPE MODE'")
    names = [b.name for b in args.bins]
    heads = [f"{n} M pkt/s" for n in names] + [f"{n} / {names[0]}" for n in names[1:]]
    print(f"| shape | mode | {' | '.join(heads)} |")
    print("| --- | --- |" + " ---: |" * (2 * len(names) - 1))
    for shape, mode in shapes:
        rates: dict[Path, list[float]] = {b: [] for b in args.bins}
        for i in range(args.rounds):
            print(f"{shape} {mode}: round {i + 1}/{args.rounds}", file=sys.stderr, end="\r")
            for b in args.bins:
                rates[b].append(run_rust(b, args.packets, shape, mode, 1)["packets_per_s"] / 1e6)
        med = [statistics.median(rates[b]) for b in args.bins]
        cells = [f"{m:.2f}" for m in med] + [f"{m / med[0]:.3f}" for m in med[1:]]
        print(f"| {shape} | {mode} | {' | '.join(cells)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
