"""balance-rr's out-of-order share, simulator against the kernel: the two runs' packet traces side by side.

Runs one scenario in the simulator and in the emulator (root) with ``trace.packets`` and prints, for
each, what the bond was handed and what arrived out of order:

* ``ooo``: the share of traced data packets that reached the clients' wire below their flow's highest
  (the rule both count by);
* ``run``: the mean number of consecutive packets of one flow in the bond's order (1: flows
  interleave packet by packet; more: a sender hands the bond bursts of one flow);
* ``gap_us``: the median time between a flow's consecutive packets at the bond;
* ``qdiff_us``: the median difference, between a flow's consecutive packets, of the time each spent
  on its link before leaving it (queueing + sending): a packet overtakes its predecessor on another
  link when this exceeds the gap;
* ``flows_at_once``: the mean number of distinct flows among 16 consecutive packets at the bond.

    sudo .venv/bin/python benchmarks/emulate_trace.py league --set 'sender={kind="tcp"}' \\
        --set links.0.rate_mbps=50 --set workload.clients=4 --set workload.requests=4
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from bondsim.api import run_checked
from bondsim.emulate import emulate_doc
from bondsim.scenario import load


def figures(trace: pd.DataFrame) -> dict[str, float]:
    """The trace's figures (module docstring)."""
    t = trace.dropna(subset=["flow"]).reset_index(drop=True)
    flow = t["flow"].to_numpy()
    runs = np.diff(np.flatnonzero(np.r_[True, flow[1:] != flow[:-1], True]))
    gaps, qdiffs = [], []
    for _, f in t.groupby("flow", sort=False):
        f = f.dropna(subset=["left_s"])
        gaps.append(np.diff(f["sent_s"].to_numpy()))
        on_link = (f["left_s"] - f["sent_s"]).to_numpy()
        qdiffs.append(np.abs(np.diff(on_link)))
    window = 16
    at_once = [len(set(flow[i : i + window])) for i in range(0, max(len(flow) - window, 1), window)]
    arrived = t["arrived_s"].notna()
    return {
        "packets": len(t),
        "ooo": float(t.loc[arrived, "out_of_order"].astype(bool).mean()),
        "run": float(runs.mean()),
        "gap_us": float(np.median(np.concatenate(gaps)) * 1e6),
        "qdiff_us": float(np.median(np.concatenate(qdiffs)) * 1e6),
        "flows_at_once": float(np.mean(at_once)),
        "retransmits": int(t["retransmit"].astype(bool).sum()),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario")
    p.add_argument("--set", action="append", default=[], metavar="PATH=VALUE")
    p.add_argument("--packets", type=int, default=20_000, help="packets to trace (default 20000)")
    p.add_argument("--seconds", type=float, default=60.0)
    args = p.parse_args(argv)
    doc = load(args.scenario, [*args.set, f"trace.packets={args.packets}"])
    rows = {
        "simulator": figures(run_checked(doc).data_packet_trace),
        "kernel": figures(emulate_doc(doc, args.seconds).data_packet_trace),
    }
    print(pd.DataFrame(rows).T.to_string(float_format=lambda v: f"{v:,.3f}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
