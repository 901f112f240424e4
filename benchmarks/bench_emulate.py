"""The highest aggregate rate at which the emulator's links hold their configured rate (within 2%).

Runs ``bondsim emulate`` (in this process, as root) on two equal rate links under earliest-finish,
two clients each fetching a file sized to keep the links busy for about ``--seconds-busy`` seconds,
at a rising ladder of aggregate rates. A link holds its rate when what it delivered to the clients'
TUN devices, wire bits per second between its first and last delivery on the host's clock
(``links.delivered_wire_bps``), is within 2% of its configured rate. Prints a markdown table
(rate, each link's delivered share, lateness percentiles, TCP figures, the load average) and the
highest rate held. Never part of ``make test``.

    sudo .venv/bin/python benchmarks/bench_emulate.py
    sudo .venv/bin/python benchmarks/bench_emulate.py --rates 100,200,400 --seconds-busy 5
"""

from __future__ import annotations

import argparse
import os

from bondsim.emulate import emulate_doc
from bondsim.scenario import load

TOLERANCE = 0.02


def scenario(aggregate_mbps: float, busy_s: float) -> dict:
    per_client = int(aggregate_mbps * 1e6 * busy_s / 8 / 2)
    return load(
        {
            "name": f"bench_emulate_{aggregate_mbps:g}",
            "workload": {
                "clients": 2,
                "requests": 2,
                "clients_in_turn": True,
                "file_size": {"kind": "fixed", "bytes": per_client},
            },
            "sender": {"kind": "tcp"},
            "bond": {"mode": "earliest-finish"},
            "links": [{"count": 2, "rate_mbps": aggregate_mbps / 2, "delay_us": 100, "txqueuelen": 1000}],
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rates", default="20,50,100,200,300,500,700,1000", help="aggregate Mbit/s, rising")
    parser.add_argument("--seconds-busy", type=float, default=4.0, help="how long each transfer keeps the links busy")
    args = parser.parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    print(
        "| aggregate Mbit/s | delivered / configured, per link | goodput Mbit/s | lateness p50 / p99 / max µs "
        "| late > 1 ms | retransmits | load avg (1 min) | held |"
    )
    print("|---|---|---|---|---|---|---|---|")
    best = None
    for rate in rates:
        load_before = os.getloadavg()[0]
        result = emulate_doc(scenario(rate, args.seconds_busy), seconds=args.seconds_busy * 4 + 10)
        s, links = result.summary, result.links
        shares = (links["delivered_wire_bps"] / links["capacity_bps"]).tolist()
        held = all(abs(1 - x) <= TOLERANCE for x in shares) and s["flows_complete"] == s["requests"]
        print(
            f"| {rate:g} | {' / '.join(f'{x:.3f}' for x in shares)} | {s['goodput_bps'] / 1e6:.1f} "
            f"| {s['emu_lateness_p50_us']:.0f} / {s['emu_lateness_p99_us']:.0f} / {s['emu_lateness_max_us']:.0f} "
            f"| {s['emu_late_share']:.2%} | {s['tcp_retransmits']} | {max(load_before, os.getloadavg()[0]):.1f} "
            f"| {'yes' if held else 'no'} |",
            flush=True,
        )
        if held:
            best = rate
    print(f"\nhighest aggregate rate held within {TOLERANCE:.0%}: {best if best is None else f'{best:g} Mbit/s'}")


if __name__ == "__main__":
    main()
