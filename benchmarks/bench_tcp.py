"""Speed and memory of the TCP model.

    .venv/bin/python benchmarks/bench_tcp.py [--runs 3] [--out benchmarks/results/tcp.md]

* Segments per second on one core: 16 bulk TCP transfers over 4 × 1 Gbit/s
  (``cargo bench --bench engine -- N tcp MODE``: every segment the bond sent,
  retransmissions included), balance-rr and balance-xor, and ``tcp_rr.toml``'s
  8 transfers over 3 + 1 slower-wired 1 Gbit/s links, balance-rr (reordering:
  ``-- N tcp_rr balance-rr``), at 10^6 and 4·10^6 segments: the median of
  ``--runs`` runs, each its own process, with its peak resident memory (flat
  memory: the larger run should not need more), and the load average.
* The issue's sizing run: a 10 Gbit/s bond (4 × 2.5 Gbit/s, balance-rr), 64
  bulk flows, 10 simulated seconds: wall time and peak memory, through the
  Python API as a user runs it.

Never run by ``make test``: figures, not assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_engine import bench_binary  # noqa: E402

SIZING = """
import json, resource, sys, time, bondsim
doc = {
    "name": "tcp-10g-64", "stop_s": 10.0,
    "workload": {"requests": 64, "clients": 64, "file_size": {"kind": "fixed", "bytes": 1 << 40}},
    "sender": {"kind": "tcp"},
    "bond": {"mode": "balance-rr"},
    "links": [{"count": 4, "rate_mbps": 2500, "delay_us": 20}],
}
started = time.perf_counter()
r = bondsim.run(doc)
wall = time.perf_counter() - started
s = r.summary
print(json.dumps({"wall_s": wall, "core_wall_s": s["wall_s"], "segments": s["packets"], "events": s["events"],
                  "goodput_bps": s["goodput_bps"], "retransmits": s["tcp_retransmits"],
                  "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


#: (engine bench shape, bond mode, what it is) of the segments-per-second table.
SHAPES = [
    ("tcp", "balance-rr", "16 bulk, 4 × 1G"),
    ("tcp", "balance-xor", "16 bulk, 4 × 1G"),
    ("tcp_rr", "balance-rr", "tcp_rr.toml: 8 bulk, 3 + 1 slower-wired 1G (reordering)"),
]


def engine(binary: Path, segments: int, shape: str, mode: str, runs: int) -> dict:
    results = []
    for _ in range(runs):
        out = subprocess.run([str(binary), str(segments), shape, mode], check=True, capture_output=True, text=True)
        results.append(json.loads(out.stdout))
    median = statistics.median(r["packets_per_s"] for r in results)
    return {
        "shape": shape,
        "mode": mode,
        "segments": results[0]["packets"],
        "events": results[0]["events"],
        "segments_per_s": median,
        "peak_rss_kib": max(r["peak_rss_kib"] for r in results),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "tcp.md", help="markdown table to write")
    args = parser.parse_args()
    binary = bench_binary()
    loads = [os.getloadavg()[0]]
    rows = []
    for shape, mode, what in SHAPES:
        for segments in (1_000_000, 4_000_000):
            row = engine(binary, segments, shape, mode, args.runs) | {"what": what}
            rows.append(row)
            print(
                f"{shape} {mode} {row['segments']:,} segments: {row['segments_per_s'] / 1e6:.2f} M segments/s, "
                f"peak {row['peak_rss_kib'] / 1024:.1f} MiB",
                file=sys.stderr,
            )
    sizing = []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, "-c", SIZING], check=True, capture_output=True, text=True)
        sizing.append(json.loads(out.stdout))
    wall = statistics.median(r["wall_s"] for r in sizing)
    loads.append(os.getloadavg()[0])
    s = sizing[0]
    lines = [
        "# TCP model: speed and memory",
        "",
        f"`.venv/bin/python benchmarks/bench_tcp.py --runs {args.runs}` on {platform.machine()}, "
        f"{platform.python_implementation()} {platform.python_version()}; medians of {args.runs} runs, "
        f"one core each (the machine has {os.cpu_count()}; other work shares it: load average (1 min) "
        f"{loads[0]:.1f} at the start, {loads[1]:.1f} at the end).",
        "",
        "Bulk TCP transfers (CUBIC, SACK, RACK-TLP, delayed ACKs, TCP small queues), `cargo bench -p bondsim-core "
        "--bench engine -- SEGMENTS SHAPE MODE`:",
        "",
        "| shape | transfers | mode | segments | events | M segments/s | peak RSS MiB |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['shape']} | {r['what']} | {r['mode']} | {r['segments']:,} | {r['events']:,} | "
            f"{r['segments_per_s'] / 1e6:.2f} | "
            f"{r['peak_rss_kib'] / 1024:.1f} |"
        )
    lines += [
        "",
        "A 10 Gbit/s bond (4 × 2.5 Gbit/s, balance-rr), 64 bulk flows, 10 simulated seconds, run through",
        "`bondsim.run` as a user would (interpreter start-up excluded):",
        "",
        "| wall s (median) | core wall s | segments | events | goodput Gbit/s | retransmissions | peak RSS MiB |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {wall:.2f} | {s['core_wall_s']:.2f} | {s['segments']:,} | {s['events']:,} | {s['goodput_bps'] / 1e9:.2f} | "
        f"{s['retransmits']:,} | {s['peak_rss_kib'] / 1024:.0f} |",
        "",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
