"""A 1 M-row packet trace from the core to a DataFrame: JSON text (before) against Arrow (after).

    python benchmarks/bench_arrow.py BEFORE_PYTHONPATH AFTER_PYTHONPATH [--runs 5] [--rows 1000000] [--out FILE]

Each path is a `python/` folder holding a built `bondsim` (as for compare_builds.py): BEFORE one whose
`_core.run` returns the result as JSON text (a build of the commit before the tables crossed as Arrow),
AFTER one whose `_core.run` returns the tables as Arrow (`_core.Table`, read with `pyarrow.table`). Both
run the same scenario (the thesis's, bond.mode=rr, `trace.packets` = ROWS and enough requests to fill it).
Every run is its own process; the two builds alternate; the figures are medians. Three times per run:

* hand-over: `_core.run`'s call less the core's own `wall_s` (the simulation): the result made into JSON text
  or record batches, and across the boundary (after: the packet trace read into a pyarrow table included);
* to DataFrame: the JSON parsed and the packet trace made a DataFrame (`json.loads`, then bondsim's
  `_table`), or the pyarrow table's `to_pandas` (as `RunResult.packet_trace` does);
* both: what a caller waits for beyond the simulation.

pandas and pyarrow are imported before the clock starts (their import is a process's once, not a run's).
The 1-minute load average is recorded before and after (the machine is shared). No figure here is a
test: tests check that tables arrive as Arrow, never how fast.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from compare_builds import child, publish

CHILD = """
import json, sys, time
import pandas, pyarrow  # loaded before the clock starts, as in any process that has read a table before
import bondsim
from bondsim import _core
rows = int(sys.argv[1])
doc = bondsim.load("thesis", ["bond.mode=rr", f"workload.requests={rows // 101 + 1}", f"trace.packets={rows}"])
text = json.dumps(doc)
start = time.perf_counter()
out = _core.run(text, None)
if not isinstance(out, str):  # after: the packet trace read into pyarrow (no copy) is part of the hand-over
    table = pyarrow.table(out[1]["packet_trace"])
handed = time.perf_counter()
if isinstance(out, str):  # JSON text (before)
    from bondsim.api import _table
    size = len(out)
    decoded = json.loads(out)
    frame = _table(decoded["packet_trace"])
    wall_s = decoded["summary"]["wall_s"]
else:  # (summary JSON, the core's tables) (after)
    summary = out[0]
    size = table.nbytes
    frame = table.to_pandas(split_blocks=True)
    wall_s = json.loads(summary)["wall_s"]
done = time.perf_counter()
print(json.dumps({"rows": len(frame), "bytes": size, "handover_s": handed - start - wall_s,
                  "frame_s": done - handed, "wall_s": wall_s}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--runs", type=int, default=5, help="runs per build (alternated)")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the packet trace")
    parser.add_argument("--out", type=Path, help="write a markdown table here")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    got: dict[str, list[dict]] = {"before": [], "after": []}
    for _ in range(args.runs):
        for side in ("before", "after"):
            got[side].append(child(getattr(args, side), CHILD, str(args.rows)))
            print(side, got[side][-1], file=sys.stderr)
    load_after = os.getloadavg()[0]

    def median(side: str, key: str) -> float:
        return statistics.median(r[key] for r in got[side])

    figures = {
        side: {
            "hand-over": median(side, "handover_s"),
            "to DataFrame": median(side, "frame_s"),
            "both": statistics.median(r["handover_s"] + r["frame_s"] for r in got[side]),
        }
        for side in got
    }
    rows = got["after"][0]["rows"]
    lines = [
        f"A packet trace of {rows:,} rows from the core to a pandas DataFrame: median of {args.runs} alternated "
        "runs per build, each its own process (`python benchmarks/bench_arrow.py BEFORE AFTER "
        f"--runs {args.runs} --rows {args.rows}`). 1-minute load average {load_before:.2f} before, "
        f"{load_after:.2f} after, on {os.cpu_count()} cores.",
        "",
        f"Before: the result as JSON text, {got['before'][0]['bytes'] / 1e6:.1f} MB. After: the packet trace as "
        f"a pyarrow table, {got['after'][0]['bytes'] / 1e6:.1f} MB of Arrow buffers.",
        "",
        "| step | JSON (before), s | Arrow (after), s | before/after |",
        "| --- | ---: | ---: | ---: |",
    ]
    for step in ("hand-over", "to DataFrame", "both"):
        b, a = figures["before"][step], figures["after"][step]
        lines.append(f"| {step} | {b:.3f} | {a:.3f} | {b / a:.1f}× |")
    return publish(lines, args.out)


if __name__ == "__main__":
    sys.exit(main())
