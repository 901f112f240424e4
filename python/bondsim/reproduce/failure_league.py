"""Every Linux bonding mode under every kind of link failure bondsim models: how long the bond takes
to notice (detection), how long a flow's packets stop (seed 003's flow switch-over time), what is
lost, how long TCP stalls, and the goodput during the failure and after the link returns.

The setting: a server on two bonded 1 Gbit/s links (20 µs one way) sends to eight clients, one bulk
TCP transfer each (today's Linux defaults). Link 0 fails at 1 s (the instant jittered over 100 ms
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

from bondsim import plots
from bondsim.scenario import apply_overrides
from bondsim.stats import mean_ci
from bondsim.sweeps import run_many

#: The Linux modes, as operators configure them.
MODES = ("balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad", "balance-tlb", "balance-alb")
#: Failure kind -> the overrides of link 0 (and the bond) that make it; the failure's instants are
#: set by :func:`scenario`.
KINDS: dict[str, list[str]] = {
    # the cable is pulled: both ends lose carrier at once
    "carrier": [],
}
LINK_MBPS = 1000.0
MIIMON_MS = 100.0
DOWN_S, UP_S = 1.0, 2.0


def scenario(mode: str, kind: str, *, seed: int, quick: bool) -> dict:
    """One run: ``mode`` with link 0 failing as ``kind`` says."""
    scale = 0.4 if quick else 1.0
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
    return apply_overrides(doc, KINDS[kind])


def run(*, quick: bool, progress: bool) -> pd.DataFrame:
    """One row per run: mode, kind, replication and the failure's figures."""
    replications = 1 if quick else 3
    docs, labels = [], []
    for kind in KINDS:
        for mode in MODES:
            for rep in range(replications):
                docs.append(scenario(mode, kind, seed=1 + rep, quick=quick))
                labels.append({"kind": kind, "mode": mode, "replication": rep})
    rows = []
    for label, result in zip(
        labels, run_many(docs, labels=labels, name="failure-league", progress=progress), strict=True
    ):
        s = result.summary
        f = result.failovers.iloc[0]
        lost = [c for c in result.failovers.columns if c.startswith("lost_")]
        rows.append(
            {
                **label,
                "detection_ms": f["detection_ms"],
                "switchover_ms": f["switchover_ms_max"],
                "lost_packets": int(f[lost].sum()),
                "tcp_stall_ms": f["tcp_stall_ms"],
                "rtos": f["rtos"],
                "during_mbps": f["throughput_bps"] / 1e6,
                "after_mbps": s["goodput_bps"] / 1e6,
            }
        )
    return pd.DataFrame(rows)


def reproduce(out: str | Path, *, progress: bool = True, quick: bool = False) -> Path:
    """Writes ``league.csv`` (every run), ``league_mean.csv`` (means and 95% intervals over the
    replications), ``during.png`` and ``summary.md``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = run(quick=quick, progress=progress)
    runs.to_csv(out / "league.csv", index=False)
    mean = mean_ci(
        runs,
        ["kind", "mode"],
        "during_mbps",
        means=("detection_ms", "switchover_ms", "lost_packets", "tcp_stall_ms", "rtos", "after_mbps"),
    )
    mean.to_csv(out / "league_mean.csv", index=False)
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
    summary.write_text(report(mean, quick))
    return summary


def cell(value: float, fmt: str) -> str:
    """A figure, or a dash where the run had none (never detected, no flow switched)."""
    return "–" if pd.isna(value) else format(value, fmt)


def report(mean: pd.DataFrame, quick: bool) -> str:
    parts = ["# failure-league: every mode under every kind of failure\n", __doc__.split("\n\n", 1)[1].strip()]
    if quick:
        parts.append("\n*Quick size: times scaled by 0.4, one replication.*")
    for kind, rows in mean.groupby("kind", sort=False):
        parts += [
            f"\n## {kind}\n",
            "| mode | detection ms | switch-over ms (max over flows) | packets lost | TCP stall ms | RTOs |"
            " goodput during Mbit/s (95% interval) | goodput after Mbit/s |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for r in rows.sort_values("during_mbps", ascending=False).itertuples():
            parts.append(
                f"| {r.mode} | {cell(r.detection_ms, '.1f')} | {cell(r.switchover_ms, '.1f')} | "
                f"{r.lost_packets:.0f} | {cell(r.tcp_stall_ms, '.1f')} | {r.rtos:.1f} | "
                f"{r.during_mbps:.0f} ({r.during_mbps_lo:.0f}–{r.during_mbps_hi:.0f}) | {r.after_mbps:.0f} |"
            )
    parts += [
        "\n## Reading the table\n",
        "* One link is left while link 0 is down, so no mode can deliver more than one link's goodput "
        "during the failure; active-backup, balance-tlb and balance-alb (fresh: one transmitting link until "
        "their first rebalance) move everything to the survivor, the hashing modes (balance-xor, 802.3ad) "
        "rehash over the links the monitor still sees, and balance-rr stripes over what is left.",
        "* Detection is the monitor's: up to one miimon period after the NIC reports the change (plus the "
        "NIC's own latency where the kind has one). Until then the bond keeps sending into the dead link and "
        "TCP repairs what it loses there.",
        "* broadcast sends every segment on both links: it loses nothing a client needs while one link "
        "lives, but it only ever carries one link's worth.",
        "* Where the bond kept sending into the dead link until its monitor noticed, TCP's tail loss probes "
        "went there too: the flows on that link wait for the retransmission timeout (Linux's minimum 200 ms "
        "plus the RTT), which is the stall, not the detection.",
        "* After the link returns, 802.3ad does not use it for LACP's aggregate wait "
        "(`AD_AGGREGATE_WAIT_TIME`, 2 s), longer than the measured second here: one link's worth after.",
        "",
    ]
    return "\n".join(parts)
