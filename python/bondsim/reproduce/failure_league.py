"""Every Linux bonding mode under every kind of link failure bondsim models: how long the bond takes
to notice (detection), how long a flow's packets stop (seed 003's flow switch-over time), what is
lost, how long TCP stalls, and the goodput during the failure and after the link returns.

The setting: a server on two bonded 1 Gbit/s links (20 µs one way) sends to eight clients, one bulk
TCP transfer each (today's Linux defaults, `sender.kernel = "current"`). Link 0 fails at 1 s (the instant jittered over 100 ms
from the seed, so it falls at any phase of the monitor's period) and returns at 2 s; the run ends at
3 s. The bond watches its links as Linux's documentation recommends (miimon 100 ms; Linux forces
100 ms on 802.3ad, balance-tlb and balance-alb when nothing is set). A failure kind is one entry of
:data:`KINDS`: the scenario fields that make it.

Goodput *during* is what reached the clients' applications while link 0 was down; *after* is from
its return to the end of the run (``measure_from_s``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bondsim import atomic, plots
from bondsim.scenario import apply_overrides
from bondsim.stats import CI_NOTE, MIN_INTERVAL_RUNS, cell, ci_text, mean_ci
from bondsim.sweeps import run_many

#: The Linux modes, as operators configure them.
MODES = ("balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad", "balance-tlb", "balance-alb")
#: Failure kind -> the overrides of link 0's failure that make it; its instants are set by :func:`scenario`
#: (docs/failures.md, "Failures and monitors").
KINDS: dict[str, list[str]] = {
    # the cable is pulled: both ends lose carrier at once
    "carrier": [],
    # the carrier stays, the switch port drops every frame both ways (a port "suspended", an upstream
    # not ready): miimon sees nothing
    "silent": ['links.0.failures.0.kind="silent"'],
    # the port drops only what the bond sends (host to switch)
    "silent-out": ['links.0.failures.0.kind="silent"', 'links.0.failures.0.direction="out"'],
    # the port drops only what it sends to the bond (switch to host: the ACKs)
    "silent-in": ['links.0.failures.0.kind="silent"', 'links.0.failures.0.direction="in"'],
    # the same silent port, watched by the monitor Linux offers for it (:func:`traffic_monitor`)
    "silent-arpmon": ['links.0.failures.0.kind="silent"'],
    # the carrier bounces while link 0 is "down": losses of FLAP_DOWN_MS every FLAP_DOWN_MS + FLAP_UP_MS
    "flapping": [],
}
#: One flap of the flapping kind: the carrier goes for FLAP_DOWN_MS and stays FLAP_UP_MS (full size).
FLAP_DOWN_MS, FLAP_UP_MS = 150.0, 350.0
#: The ARP monitor of the silent-arpmon kind: bonding.rst's example interval and one target.
ARP_INTERVAL_MS = 100.0
ARP_TARGET = "10.0.0.254"
LINK_MBPS = 1000.0
MIIMON_MS = 100.0
DOWN_S, UP_S = 1.0, 2.0
#: The quick size (tests): every time scaled by this.
QUICK_SCALE = 0.4


def scenario(mode: str, kind: str, *, seed: int, quick: bool) -> dict:
    """One run: ``mode`` with link 0 failing as ``kind`` says."""
    scale = QUICK_SCALE if quick else 1.0
    down, up, stop = DOWN_S * scale, UP_S * scale, 3.0 * scale
    doc = {
        "name": "failure_league",
        "seed": seed,
        "stop_s": stop,
        "measure_from_s": up,
        "workload": {
            "clients": 8,
            "requests": 8,
            "clients_in_turn": True,
            # more than the run can send: it ends at stop_s
            "file_size": {"kind": "fixed", "bytes": 10**10},
        },
        "sender": {"kind": "tcp"},
        "bond": {"mode": mode, "miimon": MIIMON_MS},
        "links": [
            {
                "rate_mbps": LINK_MBPS,
                "delay_us": 20.0,
                "failures": [{"down_s": down, "up_s": up, "jitter_ms": 100.0 * scale}],
            },
            {"rate_mbps": LINK_MBPS, "delay_us": 20.0},
        ],
    }
    if kind == "flapping":
        cycle_s = (FLAP_DOWN_MS + FLAP_UP_MS) * scale / 1e3
        link = doc["links"][0]
        link["failures"] = []
        link["flapping"] = {
            "start_s": down,
            "down_ms": FLAP_DOWN_MS * scale,
            "up_ms": FLAP_UP_MS * scale,
            "count": round((up - down) / cycle_s),
            "jitter_ms": 100.0 * scale,
        }
    if kind == "silent-arpmon":
        doc["bond"].update(traffic_monitor(mode))
    return apply_overrides(doc, KINDS[kind])


def traffic_monitor(mode: str) -> dict:
    """The bond fields of the monitor that can see a silent port in ``mode``, as Linux offers it: the
    ARP monitor (instead of miimon, which Linux will not run beside it) where Linux runs it; 802.3ad's
    fast LACPDUs (a partner silent for 3 s is dropped, Linux's ``lacp_rate``); balance-tlb and
    balance-alb have none (Linux refuses the ARP monitor there, ``bond_mode_uses_arp``) and keep miimon."""
    if mode == "802.3ad":
        return {"lacp_rate": "fast"}
    if mode in ("balance-tlb", "balance-alb"):
        return {}
    return {"miimon": 0.0, "arp_interval": ARP_INTERVAL_MS, "arp_ip_target": [ARP_TARGET]}


def monitor(mode: str, kind: str) -> str:
    """What watched the links in a run of ``mode`` under ``kind``."""
    bond = traffic_monitor(mode) if kind == "silent-arpmon" else {}
    if "arp_interval" in bond:
        return f"ARP monitor {ARP_INTERVAL_MS:g} ms"
    if "lacp_rate" in bond:
        return f"miimon {MIIMON_MS:g} ms + fast LACPDUs"
    return f"miimon {MIIMON_MS:g} ms"


def run(*, quick: bool, progress: bool) -> pd.DataFrame:
    """One row per run: mode, kind, replication and the failure's figures."""
    replications = 1 if quick else MIN_INTERVAL_RUNS
    docs, labels = [], []
    for kind in KINDS:
        for mode in MODES:
            for rep in range(replications):
                docs.append(scenario(mode, kind, seed=1 + rep, quick=quick))
                labels.append({"kind": kind, "mode": mode, "monitor": monitor(mode, kind), "replication": rep})
    rows = []
    for label, result in zip(
        labels, run_many(docs, labels=labels, name="failure-league", progress=progress), strict=True
    ):
        s = result.summary
        # one row per loss of link 0 (a flapping link has several): the worst detection, switch-over and
        # stall, what was lost and timed out in all of them, the goodput over their windows together
        f = result.failovers
        lost = [c for c in f.columns if c.startswith("lost_")]
        rows.append(
            {
                **label,
                "failures": len(f),
                "detected": int(f["detection_ms"].notna().sum()),
                "detection_ms": f["detection_ms"].max(),
                "switchover_ms": f["switchover_ms_max"].max(),
                "lost_packets": int(f[lost].to_numpy().sum()),
                "tcp_stall_ms": f["tcp_stall_ms"].max(),
                "rtos": f["rtos"].sum(),
                "during_mbps": (f["throughput_bps"] * f["window_s"]).sum() / f["window_s"].sum() / 1e6,
                "after_mbps": s["goodput_bps"] / 1e6,
            }
        )
    return pd.DataFrame(rows)


@atomic.whole
def reproduce(out: str | Path, *, progress: bool = True, quick: bool = False) -> Path:
    """Writes ``league.csv`` (every run), ``league_mean.csv`` (means and 95% intervals over the
    replications), ``during.png`` and ``summary.md``."""
    out = Path(out)
    runs = run(quick=quick, progress=progress)
    atomic.write_csv(runs, out / "league.csv")
    mean = mean_ci(
        runs,
        ["kind", "mode", "monitor"],
        "during_mbps",
        means=(
            "failures",
            "detected",
            "detection_ms",
            "switchover_ms",
            "lost_packets",
            "tcp_stall_ms",
            "rtos",
            "after_mbps",
        ),
    )
    atomic.write_csv(mean, out / "league_mean.csv")
    plots.bars(
        mean,
        "mode",
        "during_mbps",
        "kind",
        out / "during.png",
        title="Goodput while link 0 is down (2 × 1 Gbit/s, 8 TCP transfers, miimon 100 ms)",
        xlabel="",
        ylabel="Mbit/s",
        rotate=True,
    )
    summary = out / "summary.md"
    atomic.write_text(summary, report(mean, quick))
    return summary


def report(mean: pd.DataFrame, quick: bool) -> str:
    parts = ["# failure-league: every mode under every kind of failure\n", __doc__.split("\n\n", 1)[1].strip()]
    if quick:
        parts.append(f"\n*Quick size: times scaled by {QUICK_SCALE:g}, one replication.*")
    for kind, rows in mean.groupby("kind", sort=False):
        parts += [
            f"\n## {kind}\n",
            "| mode | monitor | losses detected | detection ms | switch-over ms (max over flows) | packets lost |"
            " TCP stall ms | RTOs | goodput during Mbit/s (95% interval†) | goodput after Mbit/s |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for r in rows.sort_values("during_mbps", ascending=False).itertuples():
            parts.append(
                f"| {r.mode} | {r.monitor} | {r.detected:g} of {r.failures:g} | {cell(r.detection_ms, '.1f')} | {cell(r.switchover_ms, '.1f')} | "
                f"{r.lost_packets:.0f} | {cell(r.tcp_stall_ms, '.1f')} | {r.rtos:.1f} | "
                f"{ci_text(r, 'during_mbps', '.0f')} | {r.after_mbps:.0f} |"
            )
    parts += [
        "\n## Reading the table\n",
        "* One link is left while link 0 is down, so no mode can deliver more than one link's goodput "
        "during the failure; active-backup, balance-tlb and balance-alb (fresh: one transmitting link until "
        "their first rebalance) move everything to the survivor, the hashing modes (balance-xor, 802.3ad) "
        "rehash over the links that can still send, and balance-rr stripes over what is left.",
        "* Detection is the monitor's: up to one miimon period after the NIC reports the change (plus the "
        "NIC's own latency where the kind has one). Until then active-backup keeps sending into the dead link "
        "(`bond_xmit_activebackup` tests nothing); every other mode leaves a link without carrier as soon as "
        "the NIC reports (`bond_slave_can_tx` tests the carrier: balance-rr's walk skips it, the hash modes' "
        "usable array is rebuilt at the carrier event, tlb and alb move its buckets), and TCP repairs only "
        "what was on the link's queue and wire. balance-tlb takes frames in on its active slave alone, so "
        "its ACKs still wait for the verdict.",
        "* A silent port keeps its carrier: miimon never notices it, and the bond keeps sending into it (and the "
        "switch keeps sending the ACKs of the flows it hashes there) until the port works again. Only a monitor "
        "that watches traffic sees it (silent-arpmon): the ARP monitor at its first check more than `arp_missed_max` (2) "
        "intervals and a half after the last reply (`bond_time_in_interval`), in the modes Linux runs it in; 802.3ad's fast LACPDUs only after 3 s, longer "
        "than the failure; balance-tlb and balance-alb have no such monitor. After the bond fails the link over, "
        "TCP waits for its backed-off retransmission timer: the stall outlasts the detection.",
        "* silent-in drops only what the switch sends to the bond: the data arrives, the ACKs of the flows the "
        "switch sends over link 0 do not, and those senders stall on their timers while the others use both links.",
        "* A flapping link's losses are shorter than the miimon period: a check may fall between two of them and "
        "see nothing, while every loss still takes what was on the wire.",
        "* broadcast sends every segment on both links: it loses nothing a client needs while one link "
        "lives, but it only ever carries one link's worth.",
        "* Where the bond kept sending into the dead link until its monitor noticed (active-backup), TCP's tail "
        "loss probes went there too: the flows on that link wait for the retransmission timeout (Linux's "
        "minimum 200 ms plus the RTT), which is the stall, not the detection. balance-tlb and -alb leave the "
        "link at the NIC's report, but what was queued on it is lost, and in some runs one flow's recovery "
        "still ends in its timer.",
        "* After the link returns, 802.3ad does not use it until LACP has restarted the port: 22 runs of "
        "its 100 ms state machines, the aggregate wait (`AD_AGGREGATE_WAIT_TIME`, 2 s) among them, longer "
        "than the measured second here: one link's worth after.",
        "",
    ]
    parts.append(CI_NOTE)
    return "\n".join(parts)
