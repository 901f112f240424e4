"""Seed 001 (Table 1): Netperf's TCP throughput from a server whose Fast Ethernet NICs are trunked
(ELT, round-robin over the links) to a gigabit host through a switch, for 10 minutes: one NIC
93.91 Mbit/s, two NICs with one off-line (the "AFT state", adapter fault tolerance) 89.40 Mbit/s,
two NICs 176.35 Mbit/s.

bondsim runs one TCP transfer (Linux's TCP, of the era said below) over 100 Mbit/s links bonded
in balance-rr (the paper's "Round-Roll"), the gigabit host's port fast enough to take both. What the
paper leaves unstated, and what we chose:

* the AFT state: the second NIC's carrier is gone from the start (`failures = [{down_s = 0}]`); the
  bond's monitor (miimon 100 ms, the value Linux's bonding documentation suggests; the paper's Link
  Inspector polls MII at an unstated period) removes it at its first check, and balance-rr sends
  nothing to it meanwhile (Linux's `bond_slave_can_tx` tests the NIC's carrier on every packet);
* the duration: 10 s transfers (quick: 2 s) instead of 10 min: the steady state is reached in well
  under a second at this round trip;
* a one-way delay of 10 µs per link (cable and switch).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bondsim import atomic, plots
from bondsim.reproduce import bulk_tcp, verdicts

LINK_MBPS = 100.0
MIIMON_MS = 100.0
#: The TCP both seed 001 reproductions run (``sender.kernel``): Linux's of today. An assumption, said in
#: their summaries (:data:`ERA`): the paper's server ran FreeBSD ("Design and implementation"; its version
#: unstated, the paper of 2005), whose TCP bondsim does not model.
KERNEL = "current"
ERA = (
    f"TCP is Linux's of today (`sender.kernel = \"{KERNEL}\"`: CUBIC, SACK, RACK-TLP), an assumption: the paper's "
    "server ran FreeBSD (its version unstated; the paper is of 2005), whose TCP bondsim does not model."
)
#: Seed 001, Table 1, Mbit/s.
PAPER_MBPS = {"one NIC": 93.91, "AFT state (one of two off-line)": 89.40, "two NICs": 176.35}
#: A throughput matches the paper's within this (relative). The paper gives one 10-minute figure each,
#: without a spread; 2% is below the 4.8% by which its AFT state and its one NIC differ, which its text
#: calls "approximately the same", and above the 0.8% the TCP timestamp option alone moves a wire-rate figure.
TOLERANCE = 0.02
#: Table 1's text on the AFT state: "approximately the same with one NIC working status", said of 89.40
#: against 93.91; so "approximately" spans at least their 4.8% (rounded up to 5%).
APPROXIMATELY = 0.05


def scenario(setup: str, seconds: float) -> dict:
    """One Netperf run of ``setup`` (a key of :data:`PAPER_MBPS`) lasting about ``seconds``."""
    link = {"rate_mbps": LINK_MBPS, "delay_us": 10.0}
    links = {
        "one NIC": [link],
        "AFT state (one of two off-line)": [{**link, "failures": [{"down_s": 0.0}]}, link],
        "two NICs": [link, link],
    }[setup]
    alive = 2 if setup == "two NICs" else 1
    nbytes = int(seconds * alive * LINK_MBPS * 1e6 / 8)
    doc = bulk_tcp.transfer(1, LINK_MBPS, nbytes, seed=1, delay_us=10.0, mode="balance-rr")
    sender = {**doc["sender"], "kernel": KERNEL}
    return doc | {
        "name": "elt_aft",
        "sender": sender,
        "bond": {"mode": "balance-rr", "miimon": MIIMON_MS},
        "links": links,
    }


@atomic.whole
def reproduce(out: str | Path, *, progress: bool = True, quick: bool = False) -> Path:
    """Writes ``elt_aft.csv``, ``table1.png`` and ``summary.md``."""
    out = Path(out)
    seconds = 2.0 if quick else 10.0
    setups = list(PAPER_MBPS)
    labels = [{"setup": s} for s in setups]
    runs = bulk_tcp.run([scenario(s, seconds) for s in setups], labels, name="elt-aft", progress=progress)
    runs["paper_mbps"] = runs["setup"].map(PAPER_MBPS)
    atomic.write_csv(runs, out / "elt_aft.csv")
    plots.bars(
        runs.assign(series="bondsim"),
        "setup",
        "goodput_mbps",
        "series",
        out / "table1.png",
        title="Netperf over trunked Fast Ethernet: one NIC, AFT state, two NICs (seed 001, Table 1)",
        xlabel="server's links",
        ylabel="TCP throughput (Mbit/s)",
        reference={"paper": [PAPER_MBPS[s] for s in setups]},
    )
    summary = out / "summary.md"
    atomic.write_text(summary, report(runs, quick, verdicts.write(out, judged(runs))))
    return summary


#: For each of Table 1's setups that the ideal hosts do not reproduce: the runs tried and what is left.
UNEXPLAINED = {
    "one NIC": "ideal hosts at the wire's rate in full frames; no other run tried",
    "AFT state (one of two off-line)": "the failover path (FreeBSD's user-level Link Inspector and middleware "
    "driver) is not modelled; a server CPU cost per frame is ruled out by `elt-tokens`' experiment E (its "
    "verdicts: the paper's CPU load is 38-39% at every rate)",
    "two NICs": "ideal hosts double one NIC; `elt-tokens`' experiment E (a server CPU cost per frame fitted to "
    "Fig. 5) rules that cost out (it puts the server's CPU far above the paper's 38%); the bus and the "
    "switch's forwarding, not modelled, are left",
}


def judged(runs: pd.DataFrame) -> list[verdicts.Verdict]:
    """Table 1's three throughputs and its text's "approximately the same" of the AFT state, with ideal hosts."""
    by = runs.set_index("setup")["goodput_mbps"]
    rows = []
    for setup, paper in PAPER_MBPS.items():
        rows.append(
            verdicts.judge(
                f"Table 1 (seed 001 prints no pages): Netperf, {setup}",
                f"{paper:.2f} Mbit/s",
                f'{by[setup]:.2f} Mbit/s (ideal hosts, `sender.kernel = "{KERNEL}"`)',
                (paper, by[setup]),
                TOLERANCE,
                UNEXPLAINED[setup],
            )
        )
    aft_paper, one_paper = PAPER_MBPS["AFT state (one of two off-line)"], PAPER_MBPS["one NIC"]
    share = by["AFT state (one of two off-line)"] / by["one NIC"]
    rows.append(
        verdicts.judge(
            'Table 1\'s text: the AFT state "approximately the same with one NIC working status"',
            f"{aft_paper / one_paper:.1%} of one NIC ({aft_paper:.2f} of {one_paper:.2f})",
            f"{share:.1%} of one NIC",
            (1.0, share),
            APPROXIMATELY,
            "nothing else tried: the model's AFT state is one NIC's rate",
        )
    )
    return rows


def report(runs: pd.DataFrame, quick: bool, judged_text: str) -> str:
    """summary.md: the verdicts, Table 1 beside our throughputs, and why they differ."""
    wire = LINK_MBPS * bulk_tcp.TCP_PAYLOAD_SHARE
    parts = ["# elt-aft: seed 001, Table 1\n", __doc__.split("\n\n", 1)[1].strip(), f"\n{ERA}"]
    if quick:
        parts.append("\n*Quick size: 2 s transfers.*")
    parts.append(judged_text)
    parts += [
        "\n## Paper vs bondsim\n",
        "| setup | bondsim Mbit/s | paper Mbit/s | bondsim / paper | TCP retransmissions |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for r in runs.itertuples():
        parts.append(
            f"| {r.setup} | {r.goodput_mbps:.2f} | {r.paper_mbps:.2f} | {r.goodput_mbps / r.paper_mbps:.3f} | "
            f"{r.tcp_retransmits:.0f} |"
        )
    parts += [
        "\n## Why the figures differ\n",
        f"* **One NIC** runs at the wire's rate in full frames, {wire:.2f} Mbit/s (1448 payload bytes per "
        "1538 on the wire): the paper's 93.91 is the same figure.",
        "* **The AFT state** is one NIC's rate in the model: balance-rr skips the NIC without carrier from the "
        "first packet (`bond_slave_can_tx`), before its first monitor check. The paper's 89.40 is 5% below "
        "its single NIC: its fault-tolerance path (a user-level Link Inspector and a middleware driver in "
        "FreeBSD) cost something the model does not have.",
        "* **Two NICs**: the model doubles the single link (equal links in lock-step keep round-robin in "
        "order); the paper's 176.35 (1.88×) is below double, which it attributes to nothing. These runs' hosts "
        "are ideal. The server's CPU is in the model (`[server_host]`, docs/hosts.md), and `bondsim reproduce "
        "elt-tokens` runs this table with it (its `netperf_hosts.csv`: a cost per frame fitted to Fig. 5): that "
        "puts two NICs below the paper at a CPU load far above the 38% the paper measured at either rate, and "
        "no cost per frame gives one load at 94 and at 176 Mbit/s, so it is ruled out. The bus and the "
        "switch's forwarding (the model's switch forwards at once) are not modelled: the candidates left.",
        "",
    ]
    return "\n".join(parts)
