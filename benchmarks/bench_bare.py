"""bondsim's thesis model beside a bare event loop of the same model (issue 40's peer).

    .venv/bin/python benchmarks/bench_bare.py [--runs 7] [--packets 1e6,1e7] [--out benchmarks/results/bare-thesis.md]

The peer is ``crates/bondsim-core/benches/bare_thesis.rs``: the thesis's paced model (the engine bench's
``balanced`` and ``thesis`` shapes) as a ``BinaryHeap`` loop with nothing of bondsim in it, processing the same
events (idle interfaces poll outside the queue, as bondsim's do) and giving the same out-of-order count, which
this script checks run by run. bondsim is ``cargo bench --bench engine -- PACKETS SHAPE MODE``: its whole
engine, with every delivery metric it keeps (RFC 4737 extents, RFC 5236 density, delay histogram, per-request
and per-link tables), which the peer does not. Each side is its own process, the two alternated ``--runs``
times; medians of each side's own loop time (``wall_s``), the ratio of the medians, each run paired with the
peer's next to it, peak resident memory, and the load average.

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

SHAPES = (("balanced", "rr"), ("thesis", "rr"), ("thesis", "lb"))


def run(binary: Path, packets: int, shape: str, mode: str) -> dict:
    """One run: its loop time, events, out-of-order share (as the engine bench prints it: 6 decimals) and
    count (the peer's), and peak memory."""
    cmd = [str(binary), str(packets), shape, mode]
    r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    share = r["ooo_fraction"] if "ooo_fraction" in r else round(r["out_of_order"] / r["packets"], 6)
    return {
        "wall_s": r["wall_s"],
        "events": r["events"],
        "share": share,
        "ooo": r.get("out_of_order"),
        "rss_kib": r["peak_rss_kib"],
    }


def measure(engine: Path, peer: Path, packets: int, shape: str, mode: str, runs: int) -> dict:
    """Alternated runs of both; checks that both give the same out-of-order count every time."""
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(run(engine, packets, shape, mode))
        theirs.append(run(peer, packets, shape, mode))
        if ours[-1]["share"] != theirs[-1]["share"]:
            raise SystemExit(
                f"{shape} {mode}: out of order {ours[-1]['share']} against the peer's {theirs[-1]['share']}"
            )
    pairs = sorted(t["wall_s"] / o["wall_s"] for o, t in zip(ours, theirs, strict=True))
    med = {side: statistics.median(r["wall_s"] for r in rs) for side, rs in (("ours", ours), ("theirs", theirs))}
    return {
        "shape": shape,
        "mode": mode,
        "packets": packets,
        "events": (ours[0]["events"], theirs[0]["events"]),
        "ooo": theirs[0]["ooo"],
        "wall_s": (med["ours"], med["theirs"]),
        "speed": med["theirs"] / med["ours"],
        "pairs": (statistics.median(pairs), pairs[0], pairs[-1]),
        "rss_kib": (max(r["rss_kib"] for r in ours), max(r["rss_kib"] for r in theirs)),
    }


def table(rows: list[dict]) -> list[str]:
    lines = [
        "| shape | mode | packets | events bondsim / peer | out of order (the peer's; bondsim's share the same to 6 "
        "decimals) | bondsim s | peer s "
        "| bondsim's speed as a share of the peer's | per run (median, min-max) | peak memory bondsim / peer MiB |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        (eo, et), (wo, wt), (po, pt), (mid, lo, hi) = r["events"], r["wall_s"], r["rss_kib"], r["pairs"]
        lines.append(
            f"| {r['shape']} | {r['mode']} | {r['packets']:,} | {eo:,} / {et:,} | {r['ooo']:,} | {wo:.3f} | {wt:.3f} "
            f"| {r['speed']:.0%} | {mid:.0%} ({lo:.0%}-{hi:.0%}) | {po / 1024:.1f} / {pt / 1024:.1f} ({po / pt:.1f}x) |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="alternated runs of each side per row (medians)")
    parser.add_argument("--packets", default="1e6,1e7", help="comma-separated packet counts (multiples of 100)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "bare-thesis.md", help="markdown results file")
    args = parser.parse_args()
    engine, peer = bench_binary(), bench_binary("bare_thesis")
    load_before = os.getloadavg()[0]
    rows = [
        measure(engine, peer, int(float(n)), shape, mode, args.runs)
        for n in args.packets.split(",")
        for shape, mode in SHAPES
    ]
    load_after = os.getloadavg()[0]
    command = f".venv/bin/python benchmarks/bench_bare.py --runs {args.runs} --packets {args.packets}"
    text = [
        "# bondsim's thesis model beside a bare event loop",
        "",
        f"Command: `{command}`; {platform.platform()}, {os.cpu_count()} cores, load average {load_before:.1f} "
        f"before and {load_after:.1f} after. Method: see the script's docstring (same events, same out-of-order "
        "count checked run by run; each side times its own loop).",
        "",
        *table(rows),
        "",
    ]
    args.out.write_text("\n".join(text))
    print("\n".join(text))


if __name__ == "__main__":
    main()
