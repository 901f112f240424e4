"""Two workers against one on a sweep of TCP runs (issue 40: at least 1.8x on a quiet machine).

    .venv/bin/python benchmarks/bench_sweep_workers.py [--runs 40] [--repeat 5] [--bytes 18000000]

The sweep: the shipped ``tcp_rr`` scenario (8 TCP transfers over 3 + 1 slower-wired 1 Gbit/s links,
balance-rr), each transfer ``--bytes`` long (18 MB: about 70 ms of the core a run here), over ``--runs`` seeds,
stored in a fresh results database each time, as ``bondsim sweep --db`` does. The two configurations take
turns ``--repeat`` times, each sweep its own ``bondsim.sweep`` call; the medians of their wall times, the
speed-up, each run's own core time (``wall_s``), and the load average before and after (a speed-up on 2 cores
needs the second core free: the load says whether it was).

Never run by ``make test``: figures, not assertions.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import bondsim

HERE = Path(__file__).resolve().parent


def one(spec: dict, workers: int) -> tuple[float, float]:
    """A sweep's wall time and the median of its runs' own core time (s)."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        table = bondsim.sweep(spec, db=Path(tmp) / "bench.duckdb", progress=False, workers=workers)
        return time.perf_counter() - started, float(table["wall_s"].median())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40, help="runs per sweep (seeds)")
    parser.add_argument("--repeat", type=int, default=5, help="sweeps per configuration, alternated (medians)")
    parser.add_argument("--bytes", type=int, default=18_000_000, help="bytes per transfer (8 transfers a run)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "sweep-workers.md", help="markdown results")
    args = parser.parse_args()
    spec = {
        "name": "bench-workers",
        "base": "tcp_rr",
        "set": {"workload.file_size.bytes": args.bytes},
        "replications": args.runs,
    }
    load_before = os.getloadavg()[0]
    walls: dict[int, list[float]] = {1: [], 2: []}
    cores: list[float] = []
    for _ in range(args.repeat):
        for workers in (1, 2):
            wall, core = one(spec, workers)
            walls[workers].append(wall)
            cores.append(core)
    load_after = os.getloadavg()[0]
    one_w, two_w = (statistics.median(walls[w]) for w in (1, 2))
    pairs = sorted(a / b for a, b in zip(walls[1], walls[2], strict=True))
    command = (
        f".venv/bin/python benchmarks/bench_sweep_workers.py --runs {args.runs} --repeat {args.repeat} "
        f"--bytes {args.bytes}"
    )
    text = [
        "# Two workers against one: a sweep of TCP runs",
        "",
        f"Command: `{command}`; {platform.platform()}, {os.cpu_count()} cores; load average {load_before:.2f} "
        f"before, {load_after:.2f} after. {args.runs} runs of `tcp_rr` (8 transfers of {args.bytes:,} bytes), "
        f"each run's own core time {statistics.median(cores) * 1000:.0f} ms (median).",
        "",
        "| workers | sweep wall time, median (min-max) | per run |",
        "| ---: | ---: | ---: |",
        *(
            f"| {w} | {statistics.median(walls[w]):.2f} s ({min(walls[w]):.2f}-{max(walls[w]):.2f}) "
            f"| {statistics.median(walls[w]) / args.runs * 1000:.1f} ms |"
            for w in (1, 2)
        ),
        "",
        f"**2 workers: {one_w / two_w:.2f}x** the speed of 1 (the ratio of the medians; sweep by sweep "
        f"{pairs[len(pairs) // 2]:.2f}x, {pairs[0]:.2f}-{pairs[-1]:.2f}x).",
        "",
    ]
    args.out.write_text("\n".join(text))
    print("\n".join(text))


if __name__ == "__main__":
    main()
