"""Monte Carlo of active-backup failover: many runs, each with its failure at a random instant.

    .venv/bin/python benchmarks/bench_failover.py [--runs 1000] [--out benchmarks/results/failover.md]

Each run is seed 003's bond (``failover-switchover``: two 100 Mbit/s links, miimon 1 ms on Ubuntu
13.10's HZ = 250, so a check every 4 ms, the NIC's 4 ms carrier latency) carrying one bulk TCP
transfer (today's defaults) or a UDP stream; the active
link fails once at 0.3 s plus a uniform offset in [0, 10 ms) drawn from the run's seed
(``failures.K.jitter_ms``), so the failure falls at any phase of the monitor and of the packet train.
The runs go through one sweep (``bondsim.sweeps.run_many``, every local core), half of them TCP,
half UDP; the wall time of the whole sweep is measured. Writes ``--out`` (the distribution's
quantiles and the timing), a PNG of the detection and switch-over distributions beside it, and the
runs as CSV. Never run by ``make test`` (a test runs it with ``--runs 10``).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def plan(runs: int) -> tuple[list[dict], list[dict]]:
    """``runs`` scenarios, half TCP and half UDP, seeds 1, 2, …: (scenarios, labels)."""
    from bondsim.reproduce import failover_switchover as fs

    docs, labels = [], []
    for i in range(runs):
        transport = "tcp, modern" if i % 2 == 0 else "udp"
        docs.append(fs.scenario(transport, 1 + i // 2, fail_at_s=0.3))
        labels.append({"transport": transport.split(",")[0], "seed": 1 + i // 2})
    return docs, labels


def measure(runs: int) -> tuple[object, float]:
    """The runs' failover figures (one row per run) and the sweep's wall time, seconds."""
    import pandas as pd

    from bondsim.sweeps import run_many

    docs, labels = plan(runs)
    started = time.perf_counter()
    results = run_many(docs, labels=labels, progress=False)
    wall = time.perf_counter() - started
    rows = []
    for label, result in zip(labels, results, strict=True):
        f = result.failovers.iloc[0]
        rows.append(
            {
                **label,
                "down_at_s": f["down_at_s"],
                "detection_ms": f["detection_ms"],
                "switchover_ms": f["switchover_ms"],
                "tcp_stall_ms": f["tcp_stall_ms"],
                "rtos": f["rtos"],
            }
        )
    return pd.DataFrame(rows), wall


def plot(frame, path: Path) -> Path:
    """Histograms of the detection and switch-over times, per transport (log scale for the latter)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), dpi=120)
    for transport, rows in frame.groupby("transport"):
        left.hist(rows["detection_ms"], bins=40, alpha=0.6, label=transport)
        fst = rows["switchover_ms"].dropna()
        right.hist(
            fst,
            bins=np.logspace(np.log10(max(fst.min(), 0.1)), np.log10(fst.max() * 1.1), 50),
            alpha=0.6,
            label=transport,
        )
    left.set(xlabel="detection time (ms)", ylabel="failures", title="the bond's verdict after the failure")
    right.set(xlabel="flow switch-over time (ms)", ylabel="failures", title="seed 003's FST", xscale="log")
    for ax in (left, right):
        ax.legend()
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def report(frame, wall: float, runs: int, png: Path) -> str:
    """The results file: timing, then the distribution's quantiles per transport."""
    from bondsim.reproduce import failover_switchover as fs

    lines = [
        "# Failover Monte Carlo (benchmarks/bench_failover.py)\n",
        f"{runs:,} runs of active-backup failover (seed 003's bond, miimon {fs.MIIMON_MS:g} ms at HZ = {fs.HZ}: a "
        f"check every {fs.CHECK_MS:g} ms; carrier latency {fs.CARRIER_LATENCY_MS:g} ms), the "
        "failure at 0.3 s + U[0, 10 ms) per seed, half TCP and half UDP, as one sweep on every local core "
        f"({os.cpu_count()} here, {platform.python_implementation()} {platform.python_version()}).\n",
        f"**Wall time of the sweep: {wall:.1f} s** ({wall / runs * 1e3:.1f} ms per run).\n",
        f"![distributions]({png.name})\n",
        "| transport | runs | detection ms: min | median | max | FST ms: min | p10 | median | p90 | max "
        "| FST ≥ 200 ms (RTO) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for transport, rows in frame.groupby("transport"):
        d, f = rows["detection_ms"], rows["switchover_ms"]
        lines.append(
            f"| {transport} | {len(rows)} | {d.min():.2f} | {d.median():.2f} | {d.max():.2f} | {f.min():.2f} | "
            f"{f.quantile(0.1):.2f} | {f.median():.2f} | {f.quantile(0.9):.2f} | {f.max():.2f} | "
            f"{(f >= 200).mean():.1%} |"
        )
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000, help="runs in the sweep (default 1000)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "failover.md", help="results file")
    args = parser.parse_args(argv)
    frame, wall = measure(args.runs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out.with_suffix(".csv"), index=False)
    png = plot(frame, args.out.with_suffix(".png"))
    args.out.write_text(report(frame, wall, args.runs, png))
    print(f"{args.runs} runs in {wall:.1f} s; wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
