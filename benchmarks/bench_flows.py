"""Many concurrent TCP flows: what a segment costs and what a flow weighs as their number grows (issue 40:
100,000 flows at most 1.3x the per-segment cost of 10, at most 1 KB a flow).

    .venv/bin/python benchmarks/bench_flows.py [--flows 10,1000,10000,100000] [--runs 3] [--stop-s 0.5]
                                               [--out benchmarks/results/flows.md]

Each run: N bulk TCP downloads (CUBIC, each to its own client, all starting at once) over a 10 Gbit/s bond
(4 x 2.5 Gbit/s, balance-rr, 20 us each way) for ``--stop-s`` simulated seconds, through ``bondsim.run`` in
a process of its own. The bond's rate bounds the segments, so every N sends about the same number of them;
what differs is how many flows share them (and, with many flows, their handshakes and the losses of a
shared queue: the work is the same kind, not the same events, and the table gives both counts). Per segment:
the core's own run time (``wall_s``) over the segments the bond sent, the median of ``--runs``; memory: the
process's peak resident size, and per flow the growth over the smallest N divided by the flows added (the
flows are all sending: an upper bound on what an idle one weighs). The load average beside them.

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
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent

ONE = """
import json, resource, sys, bondsim
flows, stop_s = int(sys.argv[1]), float(sys.argv[2])
doc = {
    "name": f"flows-{flows}", "stop_s": stop_s,
    "workload": {"requests": flows, "clients": flows, "file_size": {"kind": "fixed", "bytes": 1 << 40}},
    "sender": {"kind": "tcp", "tcp_congestion_control": "cubic"},
    "bond": {"mode": "balance-rr"},
    "links": [{"count": 4, "rate_mbps": 2500, "delay_us": 20}],
}
s = bondsim.run(doc).summary
print(json.dumps({"core_s": s["wall_s"], "segments": s["packets"], "events": s["events"],
                  "retransmits": s["tcp_retransmits"], "goodput_bps": s["goodput_bps"],
                  "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def one(flows: int, stop_s: float) -> dict:
    """One run in a fresh process."""
    command = [sys.executable, "-c", ONE, str(flows), str(stop_s)]
    out = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flows", default="10,1000,10000,100000", help="comma-separated flow counts")
    parser.add_argument("--runs", type=int, default=3, help="runs per flow count, alternated (median)")
    parser.add_argument("--stop-s", type=float, default=0.5, help="simulated seconds a run")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "flows.md", help="markdown table to write")
    args = parser.parse_args()
    counts = [int(n) for n in args.flows.split(",")]
    loads = [os.getloadavg()[0]]
    found: dict[int, list[dict]] = {n: [] for n in counts}
    for _ in range(args.runs):
        for n in counts:  # alternated, so that drift on a shared machine falls on every count alike
            found[n].append(one(n, args.stop_s))
            print(f"{n} flows: {found[n][-1]}", file=sys.stderr)
    loads.append(os.getloadavg()[0])
    ns = {n: statistics.median(r["core_s"] / r["segments"] * 1e9 for r in rows) for n, rows in found.items()}
    peak = {n: max(r["peak_kib"] for r in rows) for n, rows in found.items()}
    base = counts[0]
    lines = [
        "# Many concurrent TCP flows: cost per segment, weight per flow",
        "",
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, `.venv/bin/python benchmarks/bench_flows.py --flows "
        f"{args.flows} --runs {args.runs} --stop-s {args.stop_s}`; {platform.platform()}, {os.cpu_count()} cores, "
        f"load average {loads[0]:.1f} before and {loads[1]:.1f} after. N bulk CUBIC downloads over 4 x 2.5 Gbit/s "
        f"balance-rr for {args.stop_s} simulated seconds, each run its own process (method: the script's docstring).",
        "",
        "| flows | segments | events | retransmissions | ns a segment (median, min-max) | "
        f"x {base} flows' | peak MiB | KiB a flow beyond {base} flows' |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for n, rows in found.items():
        each = sorted(r["core_s"] / r["segments"] * 1e9 for r in rows)
        per_flow = f"{(peak[n] - peak[base]) / (n - base):.2f}" if n != base else "-"
        r = rows[0]
        lines.append(
            f"| {n:,} | {r['segments']:,} | {r['events']:,} | {r['retransmits']:,} | {ns[n]:,.0f} ({each[0]:,.0f}-"
            f"{each[-1]:,.0f}) | {ns[n] / ns[base]:.2f} | {peak[n] / 1024:.1f} | {per_flow} |"
        )
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
