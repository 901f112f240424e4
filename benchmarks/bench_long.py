"""A long run of many short TCP requests: what each finished request leaves behind (issue 40: a long run's
memory constant, its time linear in its segments), this build beside a peer build's.

    .venv/bin/python benchmarks/bench_long.py [--requests 10000,100000,300000] [--runs 3]
                                              [--peer PYTHONPATH] [--out benchmarks/results/long.md]

Each run: N requests of 20 KB, 16 at a time (closed arrivals: the next starts when one ends) from 64 clients,
over 4 x 1 Gbit/s balance-rr (20 us each way), TCP with Linux's defaults, through ``bondsim.run`` in a process
of its own, until the last request ends. The work grows with N and nothing else does: at most 16 flows are open
at any instant, so what a run holds beyond its first N's, over the requests added, is what a finished request
leaves behind (its row in the results' per-request table, and whatever per-flow state the model keeps after
the flow closes). Per segment: the core's own run time (``wall_s``) over the segments sent, the median of
``--runs``; memory: the process's peak resident size (its largest over the runs). ``--peer`` names another
build's Python package (a directory holding ``bondsim/`` with its compiled core); the two builds' runs are
alternated, run by run, so that drift on a shared machine falls on both. The load average beside them.

Never run by ``make test``: figures, not assertions.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
from datetime import UTC, datetime
from pathlib import Path

from compare_builds import child, prepend

HERE = Path(__file__).resolve().parent
#: This build's Python package (its compiled core built in place by ``make build``).
THIS = str(HERE.parent / "python")
TITLE = "# A long run of short requests: what a finished request leaves behind"

ONE = """
import json, resource, sys, bondsim
n = int(sys.argv[1])
doc = {
    "name": f"long-{n}", "seed": 1,
    "workload": {"requests": n, "clients": 64, "file_size": {"kind": "fixed", "bytes": 20000},
                 "arrivals": {"kind": "closed", "active": 16}},
    "sender": {"kind": "tcp"},
    "bond": {"mode": "balance-rr"},
    "links": [{"count": 4, "rate_mbps": 1000, "delay_us": 20}],
}
s = bondsim.run(doc).summary
print(json.dumps({"core_s": s["wall_s"], "segments": s["packets"], "requests": s["requests"],
                  "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def rows_of(found: dict[int, list[dict]]) -> dict[int, tuple[int, float, float, float]]:
    """Per N: segments, ns a segment (median), peak MiB, KiB a request beyond the smallest N's."""
    base = min(found)
    peak = {n: max(r["peak_kib"] for r in runs) for n, runs in found.items()}
    return {
        n: (
            runs[0]["segments"],
            statistics.median(r["core_s"] / r["segments"] * 1e9 for r in runs),
            peak[n] / 1024,
            (peak[n] - peak[base]) / (n - base) if n > base else float("nan"),
        )
        for n, runs in found.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", default="10000,100000,300000", help="comma-separated request counts")
    parser.add_argument("--runs", type=int, default=3, help="runs per count and build, alternated (median)")
    parser.add_argument("--peer", help="PYTHONPATH of a peer build's package, run beside this one")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "long.md", help="markdown file to add to")
    args = parser.parse_args()
    counts = [int(n) for n in args.requests.split(",")]
    builds = {"this": THIS, **({"peer": args.peer} if args.peer else {})}
    loads = [os.getloadavg()[0]]
    found: dict[str, dict[int, list[dict]]] = {b: {n: [] for n in counts} for b in builds}
    for _ in range(args.runs):
        for n in counts:
            for build, path in builds.items():
                found[build][n].append(child(path, ONE, str(n)))
                print(f"{build}, {n} requests: {found[build][n][-1]}", file=sys.stderr)
    loads.append(os.getloadavg()[0])
    table = {b: rows_of(f) for b, f in found.items()}
    peer = f" beside the peer `{args.peer}`" if args.peer else ""
    lines = [
        f"## {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n\n`.venv/bin/python benchmarks/bench_long.py --requests "
        f"{args.requests} --runs {args.runs}" + (f" --peer {args.peer}" if args.peer else "") + f"`{peer}; "
        f"{platform.platform()}, {os.cpu_count()} cores, load average {loads[0]:.1f} before and {loads[1]:.1f} "
        "after (method: the script's docstring).",
        "",
        "| build | requests | segments | ns a segment (median) | peak MiB | KiB a request beyond the first count's |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for n in counts:
        for build in builds:
            segments, ns, mib, per = table[build][n]
            per_text = "-" if per != per else f"{per:.2f}"
            lines.append(f"| {build} | {n:,} | {segments:,} | {ns:,.0f} | {mib:.1f} | {per_text} |")
    return prepend(args.out, TITLE, "\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
