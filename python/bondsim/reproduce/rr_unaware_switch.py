"""Seed 003 (§4.2, Fig. 3): balance-rr, one TCP flow from host 1 to host 2 through a switch (topology 2:
Pica8 P3295, the hosts' NICs at 100 Mbit/s); link 1 (eth1) fails at t = 5 s and is back at t = 10 s. With
the switch unaware of the bond, "from t = 10 s to t = 19 s the transfer rate is dropped nearly to zero on
both slaves"; with static link aggregation it is not. The paper says the switch drops "the packets [that]
go through [the] newly recovered link" but not why.

bondsim runs the same bond against four switches, each a model rule with the standard's default values
(nothing tuned to the paper's 9 s):

* **static LAG** (802.3ad without LACP): the two ports are one bridge port; eth1 rejoins it the instant its
  carrier is back (IEEE 802.1AX-2014 §6);
* **unaware**: each port a bridge port, MAC learning per port (802.1Q-2018 §8.7): the bond's MAC flaps
  between the ports with every frame, entries go with a port's link; no spanning tree;
* **unaware + STP**: as unaware, and the switch runs 802.1D spanning tree on its ports: a port whose link
  comes up listens, then learns, for Forward Delay (15 s) each before it forwards (802.1D-2004 §17,
  Table 17-1); a host sends no BPDUs, so nothing shortens it (RSTP without edge detection waits the same);
* **unaware + RSTP auto-edge**: RSTP with `AutoEdge` (802.1D-2004 §17.25): a port that hears no BPDU for
  the edge delay (MigrateTime, 3 s, on a point-to-point link, §17.20.4) becomes an edge port and forwards.

What the paper leaves unstated, and what we chose: the kernel (Linux 3.11: ``sender.kernel``'s ``linux-3.x`` preset, no RACK),
miimon 1 ms (§4.1), a one-way delay of 10 µs per link, and per-packet exponential jitter of mean 20 µs on
both links (seeded: the replications differ only there).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bondsim import atomic, kernels, plots
from bondsim.reproduce import bulk_tcp, verdicts
from bondsim.stats import CI_NOTE, ci_text, mean_ci

LINK_MBPS = 100.0
DOWN_S, UP_S = 5.0, 10.0
#: Long enough for STP's two forward delays after the recovery (10 + 2 × 15 s) and a few seconds more.
STOP_S = 45.0
#: The switches compared, as `[switch]` overrides.
SWITCHES: dict[str, list[str]] = {
    "static LAG": [],
    "unaware": ["switch.lag='none'"],
    "unaware + STP": ["switch.lag='none'", "switch.stp='stp'"],
    "unaware + RSTP auto-edge": ["switch.lag='none'", "switch.stp='rstp'", "switch.auto_edge=true"],
}
#: Phases of the run, seconds: before the failure, during it, the paper's outage (10–19 s), the rest of
#: STP's two forward delays, after them.
PHASES: dict[str, tuple[float, float]] = {
    "before (1-5 s)": (1.0, DOWN_S),
    "eth1 down (5-10 s)": (DOWN_S, UP_S),
    "after recovery (10-19 s)": (UP_S, 19.0),
    "19-40 s": (19.0, 40.0),
    "40-45 s": (40.0, STOP_S),
}
#: Seed 003's reading of its Fig. 3 (text, §4.2): rate near zero on both slaves from 10 to 19 s when the
#: switch is unaware; static aggregation "correctly receive[s] packets from [the] recovered link".
PAPER = {"unaware": "near zero on both slaves 10-19 s (recovers at about 19 s)", "static LAG": "recovers at 10 s"}
TRACE_S = 0.25
MSS = 1448
#: Seed 003 §4.2 on Fig. 3: when the rate is back, seconds (unaware: "from t = 10s to t = 19s"; static: at the
#: recovery, 10 s).
PAPER_BACK_S = {"unaware": 19.0, "static LAG": 10.0}
#: The paper reads its instants off Fig. 3 in whole seconds (t = 5, 10, 19 s) and the model's trace buckets are
#: 0.25 s: an instant within 1 s of the paper's reads as the same.
INSTANT_S = 1.0
#: "dropped nearly to zero": goodput under a twentieth of the rate before the failure.
NEAR_ZERO = 0.05
#: The switch the paper names (unaware of the bond, MAC learning only), and the experiments beside it: a spanning
#: tree on its ports, the standard's defaults.
PLAIN, EXPERIMENTS = "unaware", ("unaware + STP", "unaware + RSTP auto-edge")


def plan(quick: bool) -> tuple[list[dict], list[dict]]:
    """Every point: (scenarios, labels). Quick: one replication per switch."""
    from bondsim.scenario import apply_overrides

    replications = 1 if quick else 5
    nbytes = STOP_S * 2 * LINK_MBPS * 1e6 / 8  # more than the run can move
    docs, labels = [], []
    for switch, overrides in SWITCHES.items():
        for rep in range(replications):
            doc = bulk_tcp.transfer(1, LINK_MBPS, nbytes, seed=1 + rep, delay_us=10, mode="balance-rr")
            doc = apply_overrides(
                doc,
                [
                    *kernels.TCP["linux-3.x"],
                    *bulk_tcp.jitter(20),
                    *overrides,
                    "bond.miimon=1",
                    f"stop_s={STOP_S}",
                    f"trace.link_ms={TRACE_S * 1e3}",
                    f"sender.trace_ms={TRACE_S * 1e3}",
                ],
            )
            eth0 = doc["links"][0]
            doc["links"] = [
                {**eth0, "name": "eth0"},
                {**eth0, "name": "eth1", "failures": [{"down_s": DOWN_S, "up_s": UP_S}]},
            ]
            docs.append(doc)
            labels.append({"switch": switch, "replication": rep})
    return docs, labels


def _goodput(tcp: pd.DataFrame, start: float, end: float) -> float:
    """Mbit/s of payload acknowledged between the TCP trace's samples nearest ``start`` and ``end``."""
    acked = tcp.groupby("t_s")["acked"].sum()
    times = acked.index.to_series()
    first, last = times.iloc[(times - start).abs().argmin()], times.iloc[(times - end).abs().argmin()]
    return (acked[last] - acked[first]) * MSS * 8 / (last - first) / 1e6


def _recovered_s(rates: pd.DataFrame, before_mbps: float) -> float:
    """First bucket end after the recovery where both links together carry half the rate before the
    failure again (the end of the outage as Fig. 3 shows it); the run's end if never."""
    total = rates[rates["t_s"] > UP_S].groupby("t_s")["mbps"].sum()
    back = total[total >= before_mbps / 2]
    return float(back.index[0]) if len(back) else STOP_S


def run(*, quick: bool = False, progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(phases, rates): one row per run and phase (goodput and the switch's counters); one row per run,
    link and trace bucket (Mbit/s on the wire)."""
    from bondsim.sweeps import run_many

    docs, labels = plan(quick)
    phases, rates = [], []
    for label, result in zip(
        labels, run_many(docs, labels=labels, name="rr-unaware-switch", progress=progress), strict=True
    ):
        s = result.summary
        trace = result.link_trace
        link_rates = trace.assign(mbps=trace["wire_bytes"] * 8 / trace["width_s"] / 1e6)[["t_s", "link", "mbps"]]
        rates.append(link_rates.assign(**label))
        before = _goodput(result.tcp_trace, *PHASES["before (1-5 s)"])
        wire_before = link_rates[(link_rates["t_s"] > 1.0) & (link_rates["t_s"] <= DOWN_S)]
        for phase, (start, end) in PHASES.items():
            phases.append(
                {
                    **label,
                    "phase": phase,
                    "goodput_mbps": _goodput(result.tcp_trace, start, end),
                    "goodput_share_of_before": _goodput(result.tcp_trace, start, end) / before,
                    "recovered_s": _recovered_s(link_rates, wire_before.groupby("t_s")["mbps"].sum().mean()),
                    "drops_switch_port": s["drops_switch_port"],
                    "switch_mac_moves": s["switch_mac_moves"],
                    "switch_drops_to_bond": s["switch_drops_to_bond"],
                    "tcp_rtos": s["tcp_rtos"],
                    "tcp_retransmits": s["tcp_retransmits"],
                }
            )
    return pd.DataFrame(phases), pd.concat(rates, ignore_index=True)


def _slug(switch: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in switch.lower()).strip("_").replace("__", "_")


@atomic.whole
def reproduce(out: str | Path, *, progress: bool = True, quick: bool = False) -> Path:
    """Writes ``rr_unaware_switch.csv`` (every run and phase), ``rr_unaware_switch_mean.csv`` (mean and 95%
    interval over the replications), ``rr_unaware_switch_links.csv`` (per-link Mbit/s over time, mean and
    interval), ``fig3_<switch>.png`` (one per switch) and ``summary.md``."""
    out = Path(out)
    phases, rates = run(quick=quick, progress=progress)
    atomic.write_csv(phases, out / "rr_unaware_switch.csv")
    mean = mean_ci(
        phases,
        ["switch", "phase"],
        "goodput_mbps",
        means=("goodput_share_of_before", "recovered_s", "drops_switch_port", "switch_mac_moves", "tcp_rtos"),
    )
    atomic.write_csv(mean, out / "rr_unaware_switch_mean.csv")
    links = mean_ci(rates, ["switch", "link", "t_s"], "mbps")
    atomic.write_csv(links, out / "rr_unaware_switch_links.csv")
    for switch, rows in links.groupby("switch", sort=False):
        named = rows.assign(link=rows["link"].map({0: "eth0", 1: "eth1"}))
        title = f"balance-rr, eth1 down 5-10 s: {switch} (seed 003 Fig. 3)"
        path = out / f"fig3_{_slug(switch)}.png"
        plots.compare(named, "t_s", "mbps", "link", path, title=title, xlabel="time (s)", ylabel="Mbit/s on the wire")
    summary = out / "summary.md"
    atomic.write_text(summary, report(mean, quick, verdicts.write(out, judged(mean))))
    return summary


def judged(mean: pd.DataFrame) -> list[verdicts.Verdict]:
    """Fig. 3a's outage (near zero on both slaves, back at 19 s) and the paper's cause for it, judged on the
    unaware switch and, where it differs, on the spanning trees run beside it; Fig. 3b's static LAG."""
    after = mean.set_index(["switch", "phase"]).xs("after recovery (10-19 s)", level="phase")

    def judge(ok, said, match_because: str, gap: str = "", note: str = "") -> tuple[str, str, str]:
        """(bondsim's value, verdict, because): the plain switch's, or an experiment's that explains a difference."""
        ours = said(PLAIN)
        verdict, explains = verdicts.first_holding(ok, PLAIN, EXPERIMENTS)
        if verdict == verdicts.MATCHES:
            return ours, verdict, match_because
        tried = "; ".join(said(e) for e in EXPERIMENTS)
        if explains:
            others = "; ".join(said(e) for e in EXPERIMENTS if e != explains)
            return (
                f"{ours}; {said(explains)}",
                verdicts.EXPLAINED,
                f"E: {explains}, {match_because} ({PLAIN} alone does not; also run: {others}){note}",
            )
        return f"{ours}; {tried}", verdicts.NOT_REPRODUCED, f"runs tried: {tried}{gap}"

    def rate(switch: str) -> str:
        r = after.loc[switch]
        return f"{switch}: {ci_text(r, 'goodput_mbps', '.1f')} Mbit/s over 10–19 s, {r.goodput_share_of_before:.1%} of before"

    def back(switch: str) -> str:
        r = after.loc[switch]
        return f"{switch}: back at {r.recovered_s:.2f} s (n = {r.goodput_mbps_n:.0f})"

    def counted(switch: str) -> str:
        r = after.loc[switch]
        return f"{switch}: {r.drops_switch_port:.0f} packets dropped at the switch's ports, {r.tcp_rtos:.0f} RTOs"

    def on_time(switch: str, paper: float) -> bool:
        return verdicts.within_abs(paper, after.loc[switch, "recovered_s"], INSTANT_S) == verdicts.MATCHES

    where = "Fig. 3a and §4.2's text{}: switch unaware of the bond, eth1 back at 10 s"
    rows = [
        verdicts.Verdict(
            where.format(" (seed 003 prints no pages)") + ", the rate over 10–19 s",
            '"from t = 10s to t = 19s, the transfer rate is dropped nearly to zero on both slaves"',
            *judge(
                lambda switch: bool(after.loc[switch, "goodput_share_of_before"] < NEAR_ZERO),
                rate,
                f"under {NEAR_ZERO:.0%} of the rate before the failure",
                note="; the outage's end is the next row's",
            ),
        ),
        verdicts.Verdict(
            where.format("") + ", when the rate is back",
            f"t = {PAPER_BACK_S[PLAIN]:.0f}s",
            *judge(
                lambda switch: on_time(switch, PAPER_BACK_S[PLAIN]),
                back,
                f"within ±{INSTANT_S:g} s",
                " (802.1D's two forward delays of 15 s; RSTP's 3 s edge delay and TCP's backoff): no default gives 9 s",
            ),
        ),
        verdicts.Verdict(
            "§4.2's text on Fig. 3a: the cause",
            '"the packets go through newly recovered link are dropped at the switch"; "the packet loss on link 1 '
            'triggers TCP congestion control to reduce congestion window to 1"',
            *judge(
                lambda switch: bool(after.loc[switch, "drops_switch_port"] > 0 and after.loc[switch, "tcp_rtos"] > 0),
                counted,
                "drops at the switch's ports and retransmission timeouts (the window to 1) counted over the run",
            ),
        ),
    ]
    static = PAPER_BACK_S["static LAG"]
    ok = on_time("static LAG", static)
    rows.append(
        verdicts.Verdict(
            "Fig. 3b and §4.2's text: static link aggregation (SLA) on the switch",
            f'"correctly receive packets from recovered link": back at t = {static:.0f} s, the recovery',
            f"{back('static LAG')}; {rate('static LAG')}",
            verdicts.MATCHES if ok else verdicts.NOT_REPRODUCED,
            f"within ±{INSTANT_S:g} s" if ok else "runs tried: the static LAG alone",
        )
    )
    return rows


def report(mean: pd.DataFrame, quick: bool, judged_text: str) -> str:
    """summary.md: the verdicts, Fig. 3 beside our phases, and the model rule behind each difference."""
    parts = ["# rr-unaware-switch: seed 003, Fig. 3\n", __doc__.split("\n\n", 1)[1].strip()]
    if quick:
        parts.append("\n*Quick size: one replication per switch (intervals are the value itself).*")
    parts.append(judged_text)
    table = mean.set_index(["switch", "phase"])
    parts += [
        "\n## Paper vs bondsim\n",
        f"Paper: unaware switch: {PAPER['unaware']}; static aggregation: {PAPER['static LAG']}.\n",
        "| switch | " + " | ".join(f"goodput {p}, Mbit/s†" for p in PHASES) + " | back at (s) | dropped at the switch"
        " | MAC moves | RTOs |",
        "| --- | " + " | ".join("---:" for _ in PHASES) + " | ---: | ---: | ---: | ---: |",
    ]
    for switch in SWITCHES:
        cells = []
        for phase in PHASES:
            r = table.loc[(switch, phase)]
            cells.append(ci_text(r, "goodput_mbps", ".1f"))
        r = table.loc[(switch, next(iter(PHASES)))]
        parts.append(
            f"| {switch} | {' | '.join(cells)} | {r.recovered_s:.2f} | {r.drops_switch_port:.0f} |"
            f" {r.switch_mac_moves:.0f} | {r.tcp_rtos:.0f} |"
        )
    two_links = 2 * LINK_MBPS * bulk_tcp.TCP_PAYLOAD_SHARE
    stp = table.loc[("unaware + STP", "after recovery (10-19 s)")]
    auto = table.loc[("unaware + RSTP auto-edge", next(iter(PHASES)))]
    parts += [
        "\n## What produces each difference\n",
        f"* **Static LAG** recovers at once: eth1 rejoins the aggregate the instant its carrier is back, and"
        f" the bond (miimon 1 ms) uses it a millisecond later; two links carry {two_links:.1f} Mbit/s of"
        " payload in full frames, as before the failure.",
        "* **Unaware, MAC learning only** recovers at once too: the bond's MAC moves between the ports with"
        " (almost) every frame (`switch_mac_moves`), but each frame from the bond is forwarded on whichever"
        " port it arrives, and ACKs go to the port learned last, which is always alive. Learning flaps alone"
        " do not produce Fig. 3 in the model.",
        f"* **Unaware + STP** produces the observation's shape: eth1's switch port listens and learns for"
        f" 2 × 15 s after 10 s; balance-rr puts every other segment on it and the switch drops them"
        f" (`drops_switch_port`); each loss costs TCP a retransmission timeout, the window falls to 1 and the"
        f" rate on both slaves to near zero ({stp.goodput_mbps:.2f} Mbit/s of goodput over 10–19 s). But with"
        " the standard's Forward Delay it lasts until 40 s, not 19 s: the model's outage is three times the"
        " paper's. We did not shorten the delay to match.",
        f"* **Unaware + RSTP auto-edge** ends it after the edge delay (3 s): the port forwards from 13 s and"
        f" the rate is back at {auto.recovered_s:.2f} s (the first trace bucket, {TRACE_S} s wide, with half"
        " the rate before the failure), once TCP's backed-off retransmission timer has fired. Shorter than"
        " the paper's 9 s.",
        "* **Neither default reproduces 9 s.** The paper's outage lies between RSTP's edge detection (3 s, plus"
        " TCP's backoff) and 802.1D's two forward delays (30 s). A switch whose port waits about 9 s would fit"
        " (802.1D allows Forward Delay from 4 to 30 s), but the paper gives no configuration, so the model"
        " names the mechanism and keeps the standard's default.",
    ]
    parts.append(CI_NOTE)
    return "\n".join(parts) + "\n"
