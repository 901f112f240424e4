"""Engine speed of two builds side by side: the same workloads, alternated, medians.

    python benchmarks/compare_builds.py BEFORE_PYTHONPATH AFTER_PYTHONPATH [--runs 7] [--packets 1000000]

Each path is a `python/` folder holding a built `bondsim` (e.g. a worktree of
the earlier commit with its `_core*.so`). Every run is its own process; the
figure is the core's own `wall_s` (build, run and result, no Python), so the
ratio compares the simulators alone. Writes `benchmarks/results/compare_builds.md`
when `--out` is given.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

#: name -> (scenario file, overrides). Sizes are set from --packets.
WORKLOADS = {
    "thesis paced, balanced, rr": ("thesis", ["links.1.period_ms=20", "bond.mode=rr"]),
    "thesis paced, slow link, lb": ("thesis", ["bond.mode=lb"]),
    "rate 4x1G window, rr": ("league", ["bond.mode=balance-rr"]),
    "rate 4x1G window, earliest-finish": ("league", ["bond.mode=earliest-finish"]),
    # TCP (Linux's model): 8 bulk transfers over 3 + 1 slower-wired 1 Gbit/s links.
    "tcp 4x1G, balance-rr (reordering)": ("tcp_rr", []),
    "tcp 4x1G, balance-xor": ("tcp_rr", ["bond.mode=balance-xor"]),
    "tcp 4x1G, balance-rr, linux-3.x": ("tcp_rr", ["kernel:linux-3.x"]),
}

CHILD = """
import json, sys, bondsim
name, overrides = sys.argv[1], json.loads(sys.argv[2])
if overrides and overrides[0].startswith("kernel:"):  # a kernel era's TCP preset, as each build spells it
    from bondsim.kernels import TCP
    overrides = TCP[overrides[0].removeprefix("kernel:")] + overrides[1:]
r = bondsim.run(name, overrides)
print(json.dumps({"packets": r.summary["packets"], "events": r.summary["events"], "wall_s": r.summary["wall_s"]}))
"""


def sized(name: str, overrides: list[str], packets: int) -> list[str]:
    if name == "thesis":  # 101 packets per 100 KB request
        return [*overrides, f"workload.requests={packets // 101}"]
    if name == "tcp_rr":  # 8 flows of 1448-byte segments
        return [*overrides, f"workload.file_size={{kind='fixed', bytes={packets // 8 * 1448}}}"]
    per_flow = packets // 16  # league: 16 flows of 1448-byte packets
    return [*overrides, f"workload.file_size={{kind='fixed', bytes={per_flow * 1448}}}"]


def child(pythonpath: str, code: str, *args: str) -> dict:
    """Runs ``code`` in a process of its own with ``pythonpath``'s bondsim; the JSON object it prints."""
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        env={"PYTHONPATH": pythonpath, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def publish(lines: list[str], out: Path | None) -> int:
    """Prints the markdown ``lines`` and writes them to ``out`` when given."""
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        out.write_text(text)
    return 0


def prepend(out: Path, title: str, section: str) -> int:
    """Prints the markdown ``section`` and writes it at the top of ``out``, under its ``title`` line: what the
    file held below the title (earlier measurements) stays after it."""
    earlier = out.read_text().removeprefix(title).lstrip("\n") if out.exists() else ""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(f"{title}\n\n{section.rstrip()}\n" + (f"\n{earlier}" if earlier else ""))
    print(section)
    return 0


def one(pythonpath: str, name: str, overrides: list[str]) -> dict:
    return child(pythonpath, CHILD, name, json.dumps(overrides))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--runs", type=int, default=7, help="runs per build and workload (alternated)")
    parser.add_argument("--packets", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, help="write a markdown table here")
    args = parser.parse_args()
    rows = []
    for label, (name, overrides) in WORKLOADS.items():
        overrides = sized(name, overrides, args.packets)
        times: dict[str, list[float]] = {"before": [], "after": []}
        counts = {}
        for _ in range(args.runs):
            for side in ("before", "after"):
                r = one(getattr(args, side), name, overrides)
                times[side].append(r["wall_s"])
                counts[side] = (r["packets"], r["events"])
        b, a = statistics.median(times["before"]), statistics.median(times["after"])
        packets = counts["after"][0]
        rows.append(
            (label, packets, counts["before"][1], counts["after"][1], packets / b / 1e6, packets / a / 1e6, b / a)
        )
        print(
            f"{label}: before {packets / b / 1e6:.2f} M pkt/s, after {packets / a / 1e6:.2f} M pkt/s, "
            f"ratio {b / a:.3f}",
            file=sys.stderr,
        )
    lines = [
        f"Median of {args.runs} alternated runs per build, each its own process; the core's own wall time.",
        "",
        "| workload | packets | events before | events after | M pkt/s before | M pkt/s after | after/before speed |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]:.2f} | {r[5]:.2f} | {r[6]:.3f} |" for r in rows]
    return publish(lines, args.out)


if __name__ == "__main__":
    sys.exit(main())
