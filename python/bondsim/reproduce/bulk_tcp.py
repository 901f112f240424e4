"""What the seeds' TCP throughput reproductions share: one bulk TCP transfer over a bond of equal
links, the links' timing noise, and one row of figures per run (the kernels they ran are
``bondsim.kernels.REPRODUCED``)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from bondsim.sweeps import run_many

#: A full segment's share of its frame's time on the wire: 1448 payload bytes in 1448 + 52 (IPv4 and
#: TCP with the timestamp option, RFC 7323 §3) + 38 (Ethernet header, FCS, preamble, inter-frame gap).
TCP_PAYLOAD_SHARE = 1448 / (1448 + 52 + 38)

#: Mean of a per-packet exponential delay jitter on every link, µs. Unstated by the seeds; 0 keeps
#: equal links in lock-step, so balance-rr delivers in order; jitter is what lets it reorder.
JITTER_US = (0, 20, 100)


def transfer(links: int, rate_mbps: float, nbytes: int, *, seed: int, delay_us: float, mode: str) -> dict:
    """One client fetching ``nbytes`` over TCP through ``links`` equal links bonded by ``mode``."""
    return {
        "name": "bulk_tcp",
        "seed": seed,
        "workload": {"clients": 1, "requests": 1, "file_size": {"kind": "fixed", "bytes": int(nbytes)}},
        "sender": {"kind": "tcp"},
        "bond": {"mode": mode},
        "links": [{"count": links, "rate_mbps": rate_mbps, "delay_us": delay_us}],
    }


def jitter(mean_us: float) -> list[str]:
    """The override that adds exponential jitter of ``mean_us`` to every link (none for 0)."""
    return [f'links.0.jitter={{kind = "exponential", mean_us = {mean_us}}}'] if mean_us else []


def run(
    docs: Sequence[dict], labels: Sequence[dict], *, name: str, progress: bool, figures: Sequence[str] = ()
) -> pd.DataFrame:
    """Runs the points as a sweep named ``name`` (stored and resumable when a database is in use);
    one row per run: its labels, goodput, transfer time and TCP's counters, and the summary's
    ``figures`` as they are named there."""
    rows = []
    for label, result in zip(labels, run_many(docs, labels=labels, name=name, progress=progress), strict=True):
        s = result.summary
        rows.append(
            {
                **label,
                "goodput_mbps": s["goodput_bps"] / 1e6,
                "transfer_s": s["fct_mean_s"],
                "wire_ooo_fraction": s["wire_ooo_fraction"],
                "tcp_retransmits": s["tcp_retransmits"],
                "tcp_spurious": s["tcp_spurious_retransmits"],
                "tcp_fast_recoveries": s["tcp_fast_recoveries"],
                "tcp_rtos": s["tcp_rtos"],
                "drops": s["dropped"],
                **{f: s[f] for f in figures},
            }
        )
    return pd.DataFrame(rows)
