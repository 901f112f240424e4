"""Engine speed and memory: the paced (thesis) model beside the same model in
SimPy, and the rate-based link model.

    .venv/bin/python benchmarks/bench_engine.py [--sizes 1e5,1e6,1e7] [--simpy-packets 1e5]

Each bondsim run is its own process (``cargo bench --bench engine``), so peak
resident memory is per run. The SimPy model (``simpy_model.py``) runs the same
system in this process; the two are compared as a ratio in the same sitting,
because absolute times drift on a shared machine. Writes
``benchmarks/results/engine.json`` and ``engine.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import simpy_model  # noqa: E402


def bench_binary() -> Path:
    """Builds the Rust bench binary (release) and returns its path."""
    out = subprocess.run(
        ["cargo", "bench", "--no-run", "-p", "bondsim-core", "--bench", "engine", "--message-format=json"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        artifact = msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "engine"
        if artifact and msg.get("executable"):
            return Path(msg["executable"])
    raise RuntimeError("cargo did not report the engine bench executable")


def run_rust(binary: Path, packets: int, shape: str, mode: str, repeat: int) -> dict:
    """Best of ``repeat`` runs (least disturbed by other load on the machine)."""
    runs = [
        json.loads(
            subprocess.run([str(binary), str(packets), shape, mode], check=True, capture_output=True, text=True).stdout
        )
        for _ in range(repeat)
    ]
    return max(runs, key=lambda r: r["packets_per_s"])


def run_simpy(packets: int, shape: str, mode: str) -> dict:
    requests = 100
    file_bytes = (packets // requests - 1) * 1024
    periods = [20, 82 if shape == "thesis" else 20, 20, 20]
    started = time.perf_counter()
    result = simpy_model.run(requests, file_bytes, periods, mode)
    wall = time.perf_counter() - started
    return {"packets": result["packets"], "wall_s": wall, "packets_per_s": result["packets"] / wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1e5,1e6,1e7", help="packet counts for bondsim runs")
    parser.add_argument("--simpy-packets", default="1e5", help="packet count of the SimPy comparison")
    parser.add_argument("--repeat", type=int, default=3, help="bondsim runs per size (best is kept)")
    args = parser.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    simpy_packets = int(float(args.simpy_packets))

    binary = bench_binary()
    rows = []
    for shape, mode in (
        ("balanced", "rr"),
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
    for shape, mode in (("balanced", "rr"), ("thesis", "lb")):
        ours = run_rust(binary, simpy_packets, shape, mode, args.repeat)
        theirs = run_simpy(simpy_packets, shape, mode)
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

    results = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d"),
        "runs": rows,
        "simpy": comparisons,
    }
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "engine.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = [
        "# Engine benchmark",
        "",
        f"{results['date']}, {results['machine']}, one core. Command: `.venv/bin/python benchmarks/bench_engine.py`.",
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
    (out / "engine.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out / 'engine.md'}")


if __name__ == "__main__":
    main()
