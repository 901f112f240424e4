"""Many concurrent TCP flows: what a segment costs and what a flow weighs as their number grows (issue 40:
100,000 flows at most 1.3x the per-segment cost of 10, at most 1 KB a flow).

    .venv/bin/python benchmarks/bench_flows.py [--flows 10,1000,10000,100000] [--runs 3] [--stop-s 0.5]
                                               [--cachegrind] [--out benchmarks/results/flows.md]

Each run: N bulk TCP downloads (CUBIC, each to its own client, all starting at once) over a 10 Gbit/s bond
(4 x 2.5 Gbit/s, balance-rr, 20 us each way) for ``--stop-s`` simulated seconds, through ``bondsim.run`` in
a process of its own. The bond's rate bounds the segments, so every N sends about the same number of them;
what differs is how many flows share them (and, with many flows, their handshakes and the losses of a
shared queue: the work is the same kind, not the same events, and the table gives both counts). Per segment:
the core's own run time (``wall_s``) over the segments the bond sent, the median of ``--runs``; memory: the
process's peak resident size, and per flow the growth over the smallest N divided by the flows added (the
flows are all sending: an upper bound on what an idle one weighs), and the same from one run of each N stopped at
0.1 ms (the flows opened, each with its handshake's first segment out and nothing else: what a flow weighs at
rest, issue 40's "idle flow"). The load average beside them.

``--cachegrind``: instead of times, what a segment costs as valgrind's cachegrind counts it (the same on any
machine, at any load): instructions and first-level data cache misses (32 KiB, 8-way, 64-byte lines), each
the difference between a run of ``--stop-s`` and one of 0.1 ms (the process's start, the flows' set-up and
their first handshakes) over the difference in segments. Slow (about 50x): one run a count.

Never run by ``make test``: figures, not assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from compare_builds import prepend

HERE = Path(__file__).resolve().parent
#: The title of ``--out``.
TITLE = "# Many concurrent TCP flows: cost per segment, weight per flow"

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


def counted(flows: int, stop_s: float) -> dict:
    """One run under cachegrind: its instructions and first-level data cache misses, and its figures."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cachegrind.out"
        command = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--D1=32768,8,64", "--LL=268435456,16,64"]
        done = subprocess.run(
            [*command, f"--cachegrind-out-file={out}", sys.executable, "-c", ONE, str(flows), str(stop_s)],
            check=True,
            capture_output=True,
            text=True,
        )
    totals = {
        k: int(v.replace(",", "")) for k, v in re.findall(r"(I|D1|LLd)\s+(?:refs|misses):\s+([\d,]+)", done.stderr)
    }
    return {**json.loads(done.stdout), "instructions": totals["I"], "d1_misses": totals["D1"]}


def cachegrind_lines(counts: list[int], stop_s: float) -> list[str]:
    """The table of ``--cachegrind``: a segment's instructions and L1 data misses as the flows grow."""
    lines = [
        "| flows | segments | instructions a segment | x 10 flows' | L1 data misses a segment | x 10 flows' |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    base: tuple[float, float] | None = None
    for n in counts:
        run, start = counted(n, stop_s), counted(n, 1e-4)
        segments = run["segments"] - start["segments"]
        instr = (run["instructions"] - start["instructions"]) / segments
        misses = (run["d1_misses"] - start["d1_misses"]) / segments
        base = base or (instr, misses)
        lines.append(
            f"| {n:,} | {segments:,} | {instr:,.0f} | {instr / base[0]:.2f} | {misses:.1f} | {misses / base[1]:.1f} |"
        )
        print(lines[-1], file=sys.stderr)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flows", default="10,1000,10000,100000", help="comma-separated flow counts")
    parser.add_argument("--runs", type=int, default=3, help="runs per flow count, alternated (median)")
    parser.add_argument("--stop-s", type=float, default=0.5, help="simulated seconds a run")
    parser.add_argument("--cachegrind", action="store_true", help="count instructions and L1 misses instead")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "flows.md", help="markdown file to add to")
    args = parser.parse_args()
    counts = [int(n) for n in args.flows.split(",")]
    if args.cachegrind:
        head = (
            f"## {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, counted by cachegrind\n\n`.venv/bin/python benchmarks/"
            f"bench_flows.py --flows {args.flows} --stop-s {args.stop_s} --cachegrind` (method: the docstring)."
        )
        return prepend(args.out, TITLE, "\n".join([head, "", *cachegrind_lines(counts, args.stop_s)]) + "\n")
    loads = [os.getloadavg()[0]]
    found: dict[int, list[dict]] = {n: [] for n in counts}
    for _ in range(args.runs):
        for n in counts:  # alternated, so that drift on a shared machine falls on every count alike
            found[n].append(one(n, args.stop_s))
            print(f"{n} flows: {found[n][-1]}", file=sys.stderr)
    loads.append(os.getloadavg()[0])
    rest = {n: one(n, 1e-4)["peak_kib"] for n in counts}  # (memory only: one run each)
    ns = {n: statistics.median(r["core_s"] / r["segments"] * 1e9 for r in rows) for n, rows in found.items()}
    peak = {n: max(r["peak_kib"] for r in rows) for n, rows in found.items()}
    base = counts[0]
    lines = [
        f"## {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n\n`.venv/bin/python benchmarks/bench_flows.py --flows "
        f"{args.flows} --runs {args.runs} --stop-s {args.stop_s}`; {platform.platform()}, {os.cpu_count()} cores, "
        f"load average {loads[0]:.1f} before and {loads[1]:.1f} after. N bulk CUBIC downloads over 4 x 2.5 Gbit/s "
        f"balance-rr for {args.stop_s} simulated seconds, each run its own process (method: the script's docstring).",
        "",
        "| flows | segments | events | retransmissions | ns a segment (median, min-max) | "
        f"x {base} flows' | peak MiB | KiB a flow beyond {base} flows' | at rest (0.1 ms): KiB a flow |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for n, rows in found.items():
        each = sorted(r["core_s"] / r["segments"] * 1e9 for r in rows)
        per_flow = f"{(peak[n] - peak[base]) / (n - base):.2f}" if n != base else "-"
        at_rest = f"{(rest[n] - rest[base]) / (n - base):.2f}" if n != base else "-"
        r = rows[0]
        lines.append(
            f"| {n:,} | {r['segments']:,} | {r['events']:,} | {r['retransmits']:,} | {ns[n]:,.0f} ({each[0]:,.0f}-"
            f"{each[-1]:,.0f}) | {ns[n] / ns[base]:.2f} | {peak[n] / 1024:.1f} | {per_flow} | {at_rest} |"
        )
    return prepend(args.out, TITLE, "\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
