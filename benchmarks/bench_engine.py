"""Engine speed and memory: the paced (thesis) model beside the same model in
SimPy, and the rate-based link model.

    .venv/bin/python benchmarks/bench_engine.py [--sizes 1e5,1e6,1e7] [--simpy-packets 1e5]

Each bondsim run is its own single-threaded process (``cargo bench --bench engine``),
so peak resident memory is per run; every figure is the median of ``--repeat`` runs.
The SimPy model (``simpy_model.py``) runs the same system (same packets, same requests
in progress) in this process, the median of ``--simpy-repeat`` runs, in both of the
thesis model's modes; the two are compared as a ratio in the same sitting, because
absolute times drift on a shared machine (``bench_peers.py`` adds ns-3 beside them).
Writes ``benchmarks/results/engine.json`` and the generated part of ``engine.md``
(between its markers: what is written by hand around it stays).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import simpy_model  # noqa: E402


def bench_binary(name: str = "engine") -> Path:
    """Builds the core's Rust bench binary ``name`` (release; ``engine`` or the bare loop ``bare_thesis``) and
    returns its path."""
    out = subprocess.run(
        ["cargo", "bench", "--no-run", "-p", "bondsim-core", "--bench", name, "--message-format=json"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        artifact = msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == name
        if artifact and msg.get("executable"):
            return Path(msg["executable"])
    raise RuntimeError(f"cargo did not report the {name} bench executable")


#: The generated part of ``engine.md``.
BEGIN, END = "<!-- bench_engine.py: begin -->", "<!-- bench_engine.py: end -->"


def median_run(runs: list[dict]) -> dict:
    """The run of median speed (the middle one; of an even count, the slower middle one)."""
    return sorted(runs, key=lambda r: r["packets_per_s"])[(len(runs) - 1) // 2]


def run_rust(binary: Path, packets: int, shape: str, mode: str, repeat: int) -> dict:
    """The median of ``repeat`` runs."""
    return median_run(
        [
            json.loads(
                subprocess.run(
                    [str(binary), str(packets), shape, mode], check=True, capture_output=True, text=True
                ).stdout
            )
            for _ in range(repeat)
        ]
    )


def run_simpy(packets: int, shape: str, mode: str, repeat: int) -> dict:
    """The median of ``repeat`` runs of the SimPy model of the engine bench's workload."""
    requests = 100
    file_bytes = (packets // requests - 1) * 1024
    periods = [20, 82 if shape == "thesis" else 20, 20, 20]
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = simpy_model.run(requests, file_bytes, periods, mode)
        wall = time.perf_counter() - started
        runs.append({"packets": result["packets"], "wall_s": wall, "packets_per_s": result["packets"] / wall})
    return median_run(runs)


def write_markdown(path: Path, generated: list[str]) -> None:
    """Puts ``generated`` between the markers of ``path``, keeping what is around them (a new
    file holds the block alone)."""
    block = "\n".join([BEGIN, *generated, END])
    text = path.read_text() if path.exists() else ""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        path.write_text(head + block + rest.split(END, 1)[1])
    else:
        path.write_text("# Engine benchmark\n\n" + block + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1e5,1e6,1e7", help="packet counts for bondsim runs")
    parser.add_argument("--simpy-packets", default="1e5", help="packet count of the SimPy comparison")
    parser.add_argument("--repeat", type=int, default=5, help="bondsim runs per size (the median is reported)")
    parser.add_argument("--simpy-repeat", type=int, default=3, help="SimPy runs per comparison (the median)")
    args = parser.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    simpy_packets = int(float(args.simpy_packets))

    binary = bench_binary()
    rows = []
    for shape, mode in (
        ("balanced", "rr"),
        ("thesis", "rr"),  # the issue-10 figure (7.2 M packets/s, 3.58 M events per 10^6 packets) was this mode's
        ("thesis", "lb"),
        ("rate", "balance-rr"),
        ("rate", "earliest-finish"),
        ("tcp", "balance-rr"),
        ("tcp", "balance-xor"),
    ):
        for packets in sizes:
            r = run_rust(binary, packets, shape, mode, args.repeat)
            rows.append(r)
            print(
                f"bondsim {shape:8} {mode} {packets:>10,} packets: {r['packets_per_s'] / 1e6:6.2f} M packets/s, "
                f"{r['events_per_s'] / 1e6:6.2f} M events/s, peak RSS {r['peak_rss_kib'] / 1024:7.1f} MiB",
                flush=True,
            )

    comparisons = []
    for shape, mode in (("balanced", "rr"), ("thesis", "rr"), ("thesis", "lb")):
        ours = run_rust(binary, simpy_packets, shape, mode, args.repeat)
        theirs = run_simpy(simpy_packets, shape, mode, args.simpy_repeat)
        ratio = ours["packets_per_s"] / theirs["packets_per_s"]
        comparisons.append(
            {
                "shape": shape,
                "mode": mode,
                "packets": simpy_packets,
                "bondsim_packets_per_s": ours["packets_per_s"],
                "simpy_packets_per_s": theirs["packets_per_s"],
                "ratio": ratio,
            }
        )
        print(
            f"{shape:8} {mode} {simpy_packets:,} packets: bondsim {ours['packets_per_s'] / 1e6:.2f} M/s, "
            f"SimPy {theirs['packets_per_s'] / 1e6:.3f} M/s, ratio {ratio:,.0f}x",
            flush=True,
        )

    now = time.gmtime()
    results = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d", now),
        "runs": rows,
        "simpy": comparisons,
    }
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "engine.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = [
        f"{results['date']} {time.strftime('%H:%M', now)} UTC, {results['machine']}, load average "
        f"{os.getloadavg()[0]:.1f} at the end ({os.cpu_count()} cores, shared). "
        "Command: `.venv/bin/python benchmarks/bench_engine.py` (medians of "
        f"{args.repeat} runs, each a single-threaded process; SimPy: medians of {args.simpy_repeat}).",
        "",
        "| shape | mode | packets | wall s | M packets/s | M events/s | peak RSS MiB |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r['shape']} | {r['mode']} | {r['packets']:,} | {r['wall_s']:.3f} | {r['packets_per_s'] / 1e6:.2f} | "
        f"{r['events_per_s'] / 1e6:.2f} | {r['peak_rss_kib'] / 1024:.1f} |"
        for r in rows
    ]
    lines += [
        "",
        "| shape | mode | packets | bondsim M packets/s | SimPy M packets/s | ratio |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {c['shape']} | {c['mode']} | {c['packets']:,} | {c['bondsim_packets_per_s'] / 1e6:.2f} | "
        f"{c['simpy_packets_per_s'] / 1e6:.3f} | {c['ratio']:,.0f}x |"
        for c in comparisons
    ]
    write_markdown(out / "engine.md", lines)
    print(f"wrote {out / 'engine.md'}")


if __name__ == "__main__":
    main()
