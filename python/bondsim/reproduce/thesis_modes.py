"""The thesis's measurements of every Linux bonding mode (seed 000, Table 2 and §4.4), the question
it asked of them (how much of round-robin's 4 Gbit/s is lost to reordering, and how much a
scheduler can win back), and its per-size statistics table (§5.3.6.1), on bondsim's TCP model.

* **Table 2, iperf**: the four clients each send to the server (one TCP connection each): the data
  comes *into* the bond, so the switch's hash places it (or balance-alb's receive load balancing,
  which answers each client's ARP with another slave's MAC; active-backup and balance-tlb receive
  on their active slave only), and the bond carries the server's ACKs
  (``workload.direction = "upload"``).
* **§4.4, the web test**: a server on four bonded 1 Gbit/s ports serves the SPECweb99 file set to four
  clients, each keeping 64 requests open (flexiclient ``-active 64``, one connection per request)
  for 30 s; the thesis reports each mode's total throughput.
* **The thesis's question**: the same test with bondsim's schedulers beside Linux's modes.
* **The clients' hosts** (issue 38's experiment): the web test again under the thesis's kernel with each
  client's CPU (``[host]``) at the cost per frame that makes one client on one link move what §4.4.1
  measured (723.2 Mbit/s): a value taken from the thesis's measurement of its own host, through the
  model's run of that setup (:func:`calibrate_host`); every other setup's figure is then predicted.
* **§5.3.6.1**: the ``process.sh`` table (P(outorder) per packets per file) of the thesis's own
  simulator, beside bondsim's ``process.txt`` for the same model.

What the thesis leaves unstated, and what we chose: the wire (1 Gbit/s, 20 µs one way through the
switch); Linux's TCP defaults of today (CUBIC, SACK, RACK-TLP), and both tests again under the thesis's
kernel, which it does not name (``THESIS_KERNEL``: ``linux-2.6``, assumed); 802.3ad on the static LAG §4.2
describes, and with an LACP partner beside it; the measurement window (each run
lasts 1.5 s and its goodput counts from 0.25 s, ``measure_from_s``); the clients'
switch ports are not a bottleneck (bondsim has no switch egress queue).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from bondsim import atomic, plots, stats
from bondsim.reproduce import fitting, verdicts
from bondsim.scenario import apply_overrides, load_toml, shipped
from bondsim.stats import CI_NOTE, MIN_INTERVAL_RUNS, ci_text, mean_ci
from bondsim.sweeps import run_many

#: The modes as the thesis ran them (§4.4.2–4.4.8): label -> bond.mode. Its XOR and 802.3ad
#: figures are after its workaround (xmit_hash_policy = layer3+4, §4.4.4 and §4.4.6).
LINUX_MODES = {
    "balance-rr": "balance-rr",
    "active-backup": "active-backup",
    "balance-xor (layer2)": "balance-xor",
    "balance-xor (layer3+4)": "balance-xor[xmit_hash_policy=layer3+4]",
    "broadcast": "broadcast",
    "802.3ad (layer3+4)": "802.3ad[xmit_hash_policy=layer3+4]",
    "balance-tlb": "balance-tlb",
    "balance-alb": "balance-alb",
    "802.3ad (layer3+4), static LAG": "802.3ad[xmit_hash_policy=layer3+4]",
}
#: How the thesis set its switch up (§4.2, p. 19): the four ports made a LAG "using the management interface
#: of the switch", LACP not mentioned: read as a static LAG. Under one a Linux 802.3ad bond hears no LACP
#: partner, keeps each port in an aggregator of its own and uses one (`ad_agg_selection_logic`,
#: drivers/net/bonding/bond_3ad.c), dropping what the switch sends it on the others. The setups so labelled
#: run it (`switch.lag = "static"`); the others keep the model's default, LACP for 802.3ad.
STATIC_LAG = "static LAG"


def switch_of(label: str) -> list[str]:
    """The switch overrides a setup's label asks for (:data:`STATIC_LAG`)."""
    return ["switch.lag=static"] if label.endswith(STATIC_LAG) else []


#: bondsim's schedulers that keep packets of one flow apart less than balance-rr does, or not at all.
SCHEDULERS = ("lb", "least-queue", "earliest-finish", "flowlet", "power-of-two", "drr-stripe")
#: §4.4.1–4.4.8 (pp. 22–25), total throughput in Mbit/s (the sums of the four clients' flexiclient figures),
#: each on the one setup it was measured on. balance-tlb's 1750.0 and balance-alb's 2140.5 (§4.4.7–4.4.8, p. 25:
#: "the load was distributed fairly evenly", "the outgoing traffic was distributed well"; four clients at
#: 424-468 and 488-579 Mbit/s each, more together than one link carries) are of a bond spreading its traffic,
#: which a fresh one does not (:data:`WARM`): they are the figures of the setups after a rebalance.
PAPER_WEB = {
    "no bonding (1 client, 1 link)": 723.2,
    "balance-rr": 2500.3,
    "active-backup": 954.0,
    "balance-xor (layer3+4)": 2400.0,
    "broadcast": 486.5,
    "802.3ad (layer3+4), static LAG": 982.0,
    "balance-tlb (after a rebalance)": 1750.0,
    "balance-alb (after a rebalance)": 2140.5,
}
#: The setup whose thesis figure calibrates the clients' CPU (§4.4.1, p. 22: one client, no bonding, one link);
#: the rank correlation leaves it out (:func:`ranked`), fitted as it is.
HOST_FROM = "no bonding (1 client, 1 link)"
#: balance-tlb / balance-alb place every new flow on the least-loaded link by each bucket's load
#: history, which is 0 until the first rebalance 10 s after the bond comes up (bond_alb.c:
#: tlb_choose_channel adds `load_history`, set by tlb_init_table_entry(save_load=1) only at a
#: rebalance). A fresh bond therefore sends everything on one link; the thesis's had been up for a
#: while. These labels are those modes measured after their first rebalance.
WARM = {"balance-tlb (after a rebalance)": "balance-tlb", "balance-alb (after a rebalance)": "balance-alb"}
REBALANCE_S = 10.0
#: Table 2 (§4.3, pp. 20–21), iperf from the four clients to the server, Mbit/s, by setup (the bond's mode, and the switch's LAG
#: where it is not the model's default: :data:`STATIC_LAG`). "802.3ad" (an LACP partner) is run beside it.
PAPER_IPERF = {
    "balance-rr": 3320.0,
    "active-backup": 1183.0,
    "balance-xor": 2115.0,
    "broadcast": 1741.0,
    "802.3ad, static LAG": 1201.0,
    "balance-tlb": 1196.0,
    "balance-alb": 3700.0,
}
#: Table 2's setups: the thesis's, and 802.3ad with an LACP partner beside its static LAG.
IPERF_SETUPS = (*PAPER_IPERF, "802.3ad")
#: One link's goodput in full frames (1448 payload bytes of 1538 on the wire), Mbit/s per Gbit/s.
LINK_GOODPUT = 1000 * 1448 / 1538
#: A throughput matches the thesis's within this (relative): 5%. The thesis prints one 30 s run per mode, the sum
#: of its four clients' flexiclient lines, whose windows need not coincide: where one link bounds the data its sums
#: exceed what the link carries by up to 4.3% (§4.4.6's 982 against :data:`LINK_GOODPUT`). bondsim's own 95%
#: interval, where the seeds do not place the data, is narrower (balance-rr under linux-2.6: ±2.4%).
TOLERANCE = 0.05
#: §5.3.6.1: the thesis's example `process.sh` output (packets, entries, average, P(outorder)).
PAPER_PER_SIZE = [
    (1, 15, 0.00, 0.00),
    (2, 1, 0.00, 0.00),
    (4, 2, 0.50, 0.12),
    (6, 4, 1.50, 0.25),
    (7, 1, 0.00, 0.00),
    (8, 1, 3.00, 0.38),
    (10, 1, 4.00, 0.40),
    (11, 2, 4.00, 0.36),
    (21, 1, 13.00, 0.62),
    (31, 1, 13.00, 0.42),
]


def web(seconds: float, seed: int, *, measure_from: float = 0.25, links: int = 4, clients: int = 4) -> dict:
    """The §4.4 web test: ``clients`` clients with 64 requests open each, for ``seconds``; goodput
    counted from ``measure_from``."""
    return {
        "name": "thesis_web",
        "seed": seed,
        "stop_s": seconds,
        "measure_from_s": measure_from,
        "workload": {
            "clients": clients,
            # more than a closed loop can finish in the time: the run ends at stop_s
            "requests": int(60_000 * seconds) + 64 * clients,
            "arrivals": {"kind": "closed", "active": 64},
            "file_size": {"kind": "zipfset"},
        },
        "sender": {"kind": "tcp"},
        "bond": {"mode": "balance-rr"},
        "links": [{"count": links, "rate_mbps": 1000, "delay_us": 20}],
    }


def iperf(seconds: float, seed: int, measure_from: float) -> dict:
    """Table 2: each of four clients sends to the server over one TCP connection (iperf's default)
    for ``seconds``; goodput counted from ``measure_from``. The seed draws the clients' addresses,
    which the switch's hash sees."""
    return {
        "name": "thesis_iperf",
        "seed": seed,
        "stop_s": seconds,
        "measure_from_s": measure_from,
        "workload": {
            "clients": 4,
            "requests": 4,
            "clients_in_turn": True,
            "direction": "upload",
            # more than a connection can send in the time: the run ends at stop_s
            "file_size": {"kind": "fixed", "bytes": 10**10},
        },
        "sender": {"kind": "tcp"},
        "bond": {"mode": "balance-rr"},
        "links": [{"count": 4, "rate_mbps": 1000, "delay_us": 20}],
    }


#: The thesis's kernel, which it does not name: it cites the bonding driver of Linux 2.6.29 (ref. [7],
#: lxr.linux.no/linux+v2.6.29) and Ubuntu Server (ref. [22]), whose releases of its time (9.04 to 10.04) ran 2.6.28 to
#: 2.6.32. Assumed: ``linux-2.6`` (2.6.32's TCP rules, ``sender.kernel``). Both tests run again under it.
THESIS_KERNEL = "linux-2.6"
#: Today's TCP (the defaults): the kernel of the main tables.
TODAY = "current"


def kernel_of(kernel: str) -> list[str]:
    """The overrides that run ``kernel``'s TCP (none for today's)."""
    return [] if kernel == TODAY else [f"sender.kernel={kernel}"]


def era_text(kernel: str) -> str:
    """The era a table's runs use, as its heading says it: today's TCP, or the thesis's kernel (assumed)."""
    what = "today's TCP" if kernel == TODAY else "the thesis's kernel, assumed"
    return f'{what}: `sender.kernel = "{kernel}"`'


#: The switch's hash the Table 2 runs use (the thesis does not say): the model's default, layer2+3.
SWITCH_HASH = "layer2+3"
#: The switch hashes Table 2 is also run under (balance-rr: every hashed mode places data alike).
SWITCH_HASHES = ("layer2", "layer2+3", "layer3+4")


def run_iperf(*, quick: bool, progress: bool, kernel: str = TODAY) -> pd.DataFrame:
    """One row per Table 2 run: mode, the switch's hash, replication, goodput, the ports the data came in
    on. Every mode under :data:`SWITCH_HASH`, and balance-rr under each of :data:`SWITCH_HASHES`; TCP as
    ``kernel`` ran it."""
    seconds, measure_from, replications = (0.3, 0.1, 2) if quick else (1.0, 0.25, 8)
    plan = [(setup, SWITCH_HASH) for setup in IPERF_SETUPS]
    plan += [("balance-rr", h) for h in SWITCH_HASHES if h != SWITCH_HASH]
    docs, labels = [], []
    for mode, switch_hash in plan:
        for rep in range(replications):
            bond = mode.removesuffix(f", {STATIC_LAG}")
            over = [f"bond.mode={bond}", f"switch.hash='{switch_hash}'", *switch_of(mode), *kernel_of(kernel)]
            docs.append(apply_overrides(iperf(seconds, 1 + rep, measure_from), over))
            labels.append({"mode": mode, "switch_hash": switch_hash, "kernel": kernel, "replication": rep})
    rows = []
    name = f"thesis-modes/iperf {kernel}"
    for label, result in zip(labels, run_many(docs, labels=labels, name=name, progress=progress), strict=True):
        s = result.summary
        rows.append(
            {
                **label,
                "goodput_mbps": s["goodput_bps"] / 1e6,
                # the clients' data arrives on the reverse direction of the links
                "ports_in": int(result.requests["last_link"].nunique()),
                "wire_ooo_fraction": s["wire_ooo_fraction"],
                "tcp_retransmits": s["tcp_retransmits"],
            }
        )
    return pd.DataFrame(rows)


def web_plan(quick: bool, kernel: str = TODAY, host_us: float = 0.0) -> tuple[list[dict], list[dict]]:
    """Every run of the web test; ``host_us``: each client's CPU time per frame (0: an ideal host)."""
    seconds, replications = web_size(quick)
    tcp = [*kernel_of(kernel), *([f"host.rx_packet_us={host_us}"] if host_us else [])]
    docs, labels = [], []
    rows = [("no bonding (1 client, 1 link)", "balance-rr", "linux", {"links": 1, "clients": 1})]
    rows += [(label, mode, "linux", {}) for label, mode in LINUX_MODES.items()]
    rows += [(mode, mode, "bondsim", {}) for mode in SCHEDULERS]
    for label, mode, family, shape in rows:
        for rep in range(replications):
            over = [f"bond.mode={mode}", *switch_of(label), *tcp]
            docs.append(apply_overrides(web(seconds, 1 + rep, **shape), over))
            labels.append({"setup": label, "family": family, "kernel": kernel, "replication": rep})
    if host_us:
        labels = [{**label, "host_rx_us": host_us} for label in labels]
    if not quick:
        # one long run each: the first rebalance, then a measured second
        end = REBALANCE_S + 1.0
        for label, mode in WARM.items():
            docs.append(apply_overrides(web(end, 1, measure_from=REBALANCE_S), [f"bond.mode={mode}", *tcp]))
            labels.append({**labels[0], "setup": label, "replication": 0})
    return docs, labels


def web_size(quick: bool) -> tuple[float, int]:
    """The web test's length (s) and replications."""
    return (0.4, 1) if quick else (1.5, MIN_INTERVAL_RUNS)


def calibrate_host(quick: bool, kernel: str) -> tuple[float, float]:
    """The clients' CPU time per frame (µs) with which one client on one link (:data:`HOST_FROM`, its
    first replication) moves the thesis's 723.2 Mbit/s, and the goodput it gave. Goodput is about
    inversely proportional to the cost once the CPU is the bottleneck, so each step scales the cost by
    the ratio of the goodput to the target, until within 0.2% (:func:`fitting.scale_to`)."""
    from bondsim import run as run_one

    target = PAPER_WEB[HOST_FROM]
    doc = apply_overrides(web(web_size(quick)[0], 1, links=1, clients=1), kernel_of(kernel))

    def goodput(cost: float) -> float:
        return run_one(apply_overrides(doc, [f"host.rx_packet_us={cost}"])).summary["goodput_bps"] / 1e6

    # Start from a CPU that handles full segments only, at the target rate.
    return fitting.scale_to(target, goodput, start=1448 * 8 / target)


def run_web(*, quick: bool, progress: bool, kernel: str = TODAY, host_us: float = 0.0) -> pd.DataFrame:
    """One row per run of the web test: labels, windowed goodput, TCP's and the wire's figures; TCP as
    ``kernel`` ran it, the clients' hosts as ``host_us`` says (:func:`web_plan`)."""
    docs, labels = web_plan(quick, kernel, host_us)
    rows = []
    name = f"thesis-modes/web {kernel}" + (f" host {host_us}" if host_us else "")
    for label, result in zip(labels, run_many(docs, labels=labels, name=name, progress=progress), strict=True):
        s = result.summary
        rows.append(
            {
                **label,
                "goodput_mbps": s["goodput_bps"] / 1e6,
                "links_used": int((result.links["packets_sent"] > 0).sum()),
                "wire_ooo_fraction": s["wire_ooo_fraction"],
                "tcp_retransmits": s["tcp_retransmits"],
                "tcp_spurious": s["tcp_spurious_retransmits"],
                "fct_p99_ms": (s["fct_p99_s"] or 0.0) * 1e3,
                "host_cpu_busy_max": s["host_cpu_busy_max"] or 0.0,
            }
        )
    return pd.DataFrame(rows)


def per_size(*, quick: bool, progress: bool) -> pd.DataFrame:
    """§5.3.6.1 on the thesis's model: P(outorder) per packets per file, the SPECweb99 file set,
    30 requests at once (the size of the thesis's example), rr and lb, over many seeds."""
    replications = 3 if quick else 40
    base = load_toml(shipped("thesis"))
    docs, labels = [], []
    for mode in ("rr", "lb"):
        for rep in range(replications):
            change = [
                'workload.file_size={kind = "zipfset"}',
                "workload.requests=30",
                f"bond.mode={mode}",
                f"seed={rep + 1}",
            ]
            docs.append(apply_overrides(base, change))
            labels.append({"mode": mode, "replication": rep})
    frames = []
    for label, result in zip(
        labels, run_many(docs, labels=labels, name="thesis-modes/per-size", progress=progress), strict=True
    ):
        frames.append(stats.process_table(result.requests).assign(**label))
    table = pd.concat(frames, ignore_index=True)
    # pooled over the replications: every file of a size counts once
    pooled = table.assign(ooo=table["average"] * table["entries"]).groupby(["mode", "packets"], as_index=False)
    pooled = pooled[["entries", "ooo"]].sum()
    pooled["average"] = pooled["ooo"] / pooled["entries"]
    pooled["p_outorder"] = pooled["average"] / pooled["packets"]
    return pooled.drop(columns="ooo")


@atomic.whole
def reproduce(out: str | Path, *, progress: bool = True, quick: bool = False) -> Path:
    """Writes ``iperf.csv`` / ``iperf_mean.csv`` / ``iperf.png`` (Table 2), ``web.csv`` (every run),
    ``web_mean.csv`` (mean and 95% interval over replications), ``web.png``, ``per_size.csv``,
    ``per_size.png``, ``thesis_kernel_mean.csv`` (both tests under :data:`THESIS_KERNEL`), ``host_mean.csv``
    (the web test with the clients' CPUs), ``verdicts.csv`` (:func:`judged`) and ``summary.md``, which
    opens with them."""
    out = Path(out)
    iperf_runs = run_iperf(quick=quick, progress=progress)
    atomic.write_csv(iperf_runs, out / "iperf.csv")
    by_hash, iperf_mean = iperf_means(iperf_runs)
    atomic.write_csv(by_hash, out / "iperf_switch_hash.csv")
    atomic.write_csv(iperf_mean, out / "iperf_mean.csv")
    plots.bars(
        iperf_mean.assign(source="bondsim"),
        "mode",
        "goodput_mbps",
        "source",
        out / "iperf.png",
        title="Table 2: iperf from four clients into the bond (4 × 1 Gbit/s)",
        xlabel="",
        ylabel="Mbit/s",
        reference={"thesis": [PAPER_IPERF.get(m, 0.0) for m in iperf_mean["mode"]]},
        rotate=True,
    )
    runs = run_web(quick=quick, progress=progress)
    atomic.write_csv(runs, out / "web.csv")
    mean = web_mean(runs)
    atomic.write_csv(mean, out / "web_mean.csv")
    plots.bars(
        mean.assign(source="bondsim"),
        "setup",
        "goodput_mbps",
        "source",
        out / "web.png",
        title="§4.4 web test: total throughput per mode (4 × 1 Gbit/s, 4 clients × 64 requests)",
        xlabel="",
        ylabel="Mbit/s",
        reference={"thesis": [PAPER_WEB.get(s, 0.0) for s in mean["setup"]]},
        rotate=True,
    )
    sizes = per_size(quick=quick, progress=progress)
    atomic.write_csv(sizes, out / "per_size.csv")
    paper = pd.DataFrame(PAPER_PER_SIZE, columns=["packets", "entries", "average", "p_outorder"])
    plots.compare(
        pd.concat([sizes, paper.assign(mode="thesis §5.3.6.1 example")]),
        "packets",
        "p_outorder",
        "mode",
        out / "per_size.png",
        title="P(outorder) per packets per file (§5.3.6.1), thesis model, 30 requests",
        xlabel="packets per file",
        ylabel="P(outorder)",
        logx=True,
    )
    era = {
        "web": web_mean(run_web(quick=quick, progress=progress, kernel=THESIS_KERNEL)),
        "iperf": iperf_means(run_iperf(quick=quick, progress=progress, kernel=THESIS_KERNEL))[1],
    }
    atomic.write_csv(pd.concat([t.assign(test=k) for k, t in era.items()]), out / "thesis_kernel_mean.csv")
    host_us, solo = calibrate_host(quick, THESIS_KERNEL)
    hosted = web_mean(run_web(quick=quick, progress=progress, kernel=THESIS_KERNEL, host_us=host_us))
    atomic.write_csv(hosted.assign(host_rx_us=host_us), out / "host_mean.csv")
    summary = out / "summary.md"
    rows = judged(mean, iperf_mean, by_hash, era, hosted, host_us, sizes)
    text = report(mean, sizes, paper, quick, iperf_mean, by_hash, verdicts.write(out, rows))
    text += era_report(mean, iperf_mean, era)
    text += host_report(era["web"], hosted, host_us, solo)
    atomic.write_text(summary, text)
    return summary


def web_mean(runs: pd.DataFrame) -> pd.DataFrame:
    """The web test's mean and 95% interval per setup, with the thesis's figure."""
    mean = mean_ci(
        runs,
        ["setup", "family"],
        "goodput_mbps",
        means=("links_used", "wire_ooo_fraction", "tcp_retransmits", "tcp_spurious", "fct_p99_ms", "host_cpu_busy_max"),
    )
    mean["paper_mbps"] = mean["setup"].map(PAPER_WEB)
    return mean


def iperf_means(runs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 2's means per mode and switch hash, and those under :data:`SWITCH_HASH` alone, with the thesis's."""
    by_hash = mean_ci(runs, ["mode", "switch_hash"], "goodput_mbps", means=("ports_in", "wire_ooo_fraction"))
    by_hash["paper_mbps"] = by_hash["mode"].map(PAPER_IPERF)
    one = by_hash[by_hash["switch_hash"] == SWITCH_HASH].drop(columns="switch_hash").reset_index(drop=True)
    return by_hash, one


def era_report(web: pd.DataFrame, iperf: pd.DataFrame, era: dict[str, pd.DataFrame]) -> str:
    """The thesis's figures beside bondsim's under today's TCP and under the thesis's kernel (assumed)."""
    parts = [
        f"\n## Under the thesis's kernel (`{THESIS_KERNEL}`, assumed)\n",
        "The thesis names no kernel (its references cite Linux 2.6.29's bonding driver and Ubuntu Server, whose "
        "releases of 2009-2010 ran 2.6.28-2.6.32); both tests run again with `sender.kernel = "
        f'"{THESIS_KERNEL}"` (2.6.32\'s TCP: no RACK, TLP, PRR or TCP small queues; FACK; an initial window of '
        "3; timestamps in jiffies). Mbit/s, mean over the runs (95% interval†):\n",
        "| test | setup | thesis | today's TCP | the thesis's kernel | out of order on the wire: today / then |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for test, now, key in (("§4.4 web", web, "setup"), ("Table 2 iperf", iperf, "mode")):
        then = era["web" if key == "setup" else "iperf"].set_index(key)
        for r in now.itertuples():
            old = then.loc[getattr(r, key)]
            thesis = f"{r.paper_mbps:.0f}" if pd.notna(r.paper_mbps) else "–"
            parts.append(
                f"| {test} | {getattr(r, key)} | {thesis} | {ci_text(r, 'goodput_mbps', '.0f')} | "
                f"{ci_text(old, 'goodput_mbps', '.0f')} | {r.wire_ooo_fraction:.1%} / {old['wire_ooo_fraction']:.1%} |"
            )
    rho_now, rho_then = rank_agreement(web), rank_agreement(era["web"])
    iperf_now, iperf_then = rank_agreement(iperf), rank_agreement(era["iperf"])
    rr_now, rr_then = (t.set_index("setup").loc["balance-rr", "goodput_mbps"] for t in (web, era["web"]))
    parts += [
        "",
        f"The web test's order against the thesis's, Spearman's rank correlation over {len(ranked(web))} of its "
        f"figures ({RANKED_NOTE}): {rho_now:.2f} with today's TCP, {rho_then:.2f} with the thesis's kernel; "
        f"Table 2's over its {len(ranked(iperf))}: {iperf_now:.2f} with today's TCP, {iperf_then:.2f} with the "
        "thesis's kernel. balance-rr moves from "
        f"{rr_now:.0f} to {rr_then:.0f} Mbit/s against the thesis's {PAPER_WEB['balance-rr']:.0f}: the kernel's era "
        "does not close the gap. The thesis's host, which moved 723 Mbit/s over one link that carries "
        f"{LINK_GOODPUT:.0f}, is the candidate: the next section runs it.",
    ]
    return "\n".join(parts) + "\n"


def iperf_report(mean: pd.DataFrame, by_hash: pd.DataFrame) -> list[str]:
    """The Table 2 section of the summary (``by_hash``: balance-rr under each switch hash)."""
    by = mean.set_index("mode")
    hashed = [m for m in ("balance-rr", "balance-xor", "broadcast", "802.3ad") if m in by.index]
    parts = [
        f"\n## Table 2: iperf from the four clients into the bond ({era_text(TODAY)})\n",
        "| mode | bondsim Mbit/s (95% interval†) | thesis Mbit/s | ports the data came in on (mean) |"
        " out of order on the wire |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for r in mean.itertuples():
        thesis = f"{r.paper_mbps:.0f}" if pd.notna(r.paper_mbps) else "–"
        parts.append(
            f"| {r.mode} | {ci_text(r, 'goodput_mbps', '.0f')} | "
            f"{thesis} | {r.ports_in:.2f} | {r.wire_ooo_fraction:.1%} |"
        )
    parts += [
        "",
        "What places the data is not the bond's transmit policy but the switch's hash over its LAG "
        "(layer2+3 of each client's addresses: with four clients on four ports some seeds put two on one "
        "port, hence the interval) — the same for "
        + ", ".join(f"`{m}`" for m in hashed)
        + ", which differ only in where the server's ACKs go, on a switch whose LAG takes every port. The "
        "thesis's rr (3320), xor (2115) and broadcast (1741) differ by more than ACK placement can explain, so "
        "its switch did not place the four clients alike in each run (its hash is not stated).",
        '* **802.3ad** on the switch §4.2 describes (a LAG set up by hand, no LACP: `switch.lag = "static"`): '
        f"{by.loc['802.3ad, static LAG', 'goodput_mbps']:.0f} Mbit/s on "
        f"{by.loc['802.3ad, static LAG', 'ports_in']:.2f} ports, the thesis's 1201. The bond hears no LACP "
        "partner, keeps each port in an aggregator of its own and takes frames on the active one only; the "
        "switch still hashes the clients over all four ports, and a connection it puts on another is dropped "
        "there. With an LACP partner (`802.3ad`) it takes all four: "
        f"{by.loc['802.3ad', 'goodput_mbps']:.0f} Mbit/s.",
        "* **active-backup** and **balance-tlb** receive on their active slave only (the switch has "
        "learned the bond's MAC there), so one link carries all four clients: "
        f"{by.loc['active-backup', 'goodput_mbps']:.0f} Mbit/s here. The thesis's 1183 Mbit/s for "
        "active-backup is more than one 1 Gbit/s link carries "
        f"({LINK_GOODPUT:.0f} Mbit/s of goodput in full frames): a measurement artefact the thesis does "
        "not explain; a link's rate bounds the model, which does not try to reach it.",
        "* **balance-alb** answers each client's ARP with a different slave's MAC (`rlb_choose_channel`), "
        "so the four clients come in on four ports: "
        f"{by.loc['balance-alb', 'goodput_mbps']:.0f} Mbit/s here, 3700 in the thesis.",
        "* The switch hashes each connection to one port, so incoming data is never reordered, whatever "
        "the bond's mode.",
        "",
        f"The modes' order against Table 2's, Spearman's rank correlation over its {len(ranked(mean))} figures: "
        f"{rank_agreement(mean):.2f} (1: the same order, 0: none in common).",
        "",
        "The thesis does not say how its switch hashed; the hashed modes move with it "
        "(`switch.hash`, balance-rr shown: the other hashed modes place the data alike):",
        "",
        "| switch.hash | bondsim Mbit/s (95% interval†) | ports the data came in on (mean) |",
        "| --- | ---: | ---: |",
    ]
    rr = by_hash[by_hash["mode"] == "balance-rr"].set_index("switch_hash")
    for h in SWITCH_HASHES:
        r = rr.loc[h]
        parts.append(f"| {h} | {ci_text(r, 'goodput_mbps', '.0f')} | {r.ports_in:.2f} |")
    # Four connections hashed onto four ports uniformly at random use 4·(1 − (3/4)^4) ports on average.
    ports_random = 4 * (1 - (3 / 4) ** 4)
    parts += [
        "",
        "layer2 and layer2+3 see only each client's addresses, layer3+4 the connection's ports too (drawn "
        "from the seed). Hashing four connections onto four ports at random uses "
        f"4·(1 − (3/4)⁴) = {ports_random:.2f} ports on average ({ports_random * LINK_GOODPUT:.0f} Mbit/s); "
        "what each hash gave over these seeds is in the table. None reaches balance-alb's four ports every "
        "time: only ARP-based receive balancing puts each client on its own port.",
    ]
    return parts


def host_report(ideal: pd.DataFrame, hosted: pd.DataFrame, host_us: float, solo: float) -> str:
    """The web test under the thesis's kernel, ideal hosts beside the clients' CPUs calibrated on §4.4.1."""
    parts = [
        f"\n## The clients' hosts: a CPU each, calibrated on §4.4.1 ({era_text(THESIS_KERNEL)})\n",
        f"Each client's CPU costs `host.rx_packet_us = {host_us:.2f}` µs a frame: the value with which one client "
        f"on one link moves {solo:.1f} Mbit/s in the model, the thesis's {PAPER_WEB[HOST_FROM]} (§4.4.1, one client "
        "and no bonding), taken from that measurement of its host. Every other figure below is a prediction. "
        f"{era_text(THESIS_KERNEL)}; Mbit/s, mean over the runs (95% interval†):\n",
        "| setup | thesis | ideal hosts | the clients' CPUs | clients' CPUs busy (the busiest) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    before = ideal.set_index("setup")
    for r in hosted[hosted["family"] == "linux"].itertuples():
        thesis = f"{r.paper_mbps:.0f}" if pd.notna(r.paper_mbps) else "–"
        old = before.loc[r.setup]
        parts.append(
            f"| {r.setup} | {thesis} | {ci_text(old, 'goodput_mbps', '.0f')} | {ci_text(r, 'goodput_mbps', '.0f')} | "
            f"{r.host_cpu_busy_max:.0%} |"
        )
    by = hosted.set_index("setup")
    rr, xor = by.loc["balance-rr", "goodput_mbps"], by.loc["balance-xor (layer3+4)", "goodput_mbps"]
    parts += [
        "",
        f"Spearman's rank correlation with the thesis's figures, over {len(ranked(hosted))} of them ({RANKED_NOTE}): "
        f"{rank_agreement(ideal):.2f} with ideal hosts, {rank_agreement(hosted):.2f} with the clients' CPUs.",
        f"* **The striped and hashed modes** come down to four clients' CPUs: balance-rr {rr:.0f} and balance-xor "
        f"(layer3+4) {xor:.0f} Mbit/s against the thesis's {PAPER_WEB['balance-rr']:.0f} and "
        f"{PAPER_WEB['balance-xor (layer3+4)']:.0f}; four times one client's {solo:.0f} is "
        f"{4 * solo:.0f}. The thesis's four clients each moved 621-631 Mbit/s under balance-rr (§4.4.2's "
        "flexiclient lines), less than its one client alone: what a CPU per client predicts explains part of the "
        "gap, not all of it. The rest is not in this run: the server's own CPU serving four clients (the model has "
        "one, `[server_host]`, but the thesis reports nothing of its server's CPU to set it from), and what "
        "reordering costs a receiver beyond its frames. GRO, which "
        "reordering defeats, is in the model (`host.gro`), but the thesis gives no split of its clients' cost "
        "between frames and skbs, nor their NICs' interrupt moderation, so it is not run here.",
        "* **One link's setups** (active-backup, 802.3ad on the static LAG, the fresh tlb and alb) share one link "
        "among four clients, none of whose CPUs is busy enough to matter: unchanged.",
        f"* **broadcast** puts every frame on all four links, so each client's CPU handles each of its frames four "
        f"times (TCP drops the copies): {by.loc['broadcast', 'goodput_mbps']:.0f} Mbit/s against the ideal hosts' "
        f"{before.loc['broadcast', 'goodput_mbps']:.0f} and the thesis's {PAPER_WEB['broadcast']:.0f}, which its "
        "text puts down to collisions a switched full-duplex link does not have.",
    ]
    return "\n".join(parts) + "\n"


def ranked(mean: pd.DataFrame) -> pd.DataFrame:
    """The rows whose order is compared with the thesis's: a web test's (``setup``) or Table 2's (``mode``)
    with a thesis figure (each figure on one row: :data:`PAPER_WEB`, :data:`PAPER_IPERF`), less
    :data:`HOST_FROM`, the figure the clients' CPU is fitted to."""
    key = mean["setup"] if "setup" in mean else mean["mode"]
    return mean[mean["paper_mbps"].notna() & (key != HOST_FROM)]


def rank_agreement(mean: pd.DataFrame) -> float:
    """Spearman's rank correlation between bondsim's goodput and the thesis's over :func:`ranked`'s rows
    (ties ranked by their mean rank)."""
    from scipy import stats

    both = ranked(mean)
    return float(stats.spearmanr(both["goodput_mbps"], both["paper_mbps"]).statistic)


#: What :func:`ranked` compares, said in the summary.
RANKED_NOTE = (
    "each thesis figure once, tlb's and alb's on the setups after a rebalance; §4.4.1's one-client figure, "
    "to which the clients' CPU is fitted, left out"
)


# --- the verdicts -----------------------------------------------------------------------------------

#: Where the thesis prints each figure: §4.4's by setup (:data:`PAPER_WEB`), Table 2's by mode (:data:`PAPER_IPERF`).
WEB_WHERE = {
    "no bonding (1 client, 1 link)": "§4.4.1 (p. 22)",
    "balance-rr": "§4.4.2 (p. 23)",
    "active-backup": "§4.4.3 (p. 23)",
    "balance-xor (layer3+4)": "§4.4.4 (p. 24)",
    "broadcast": "§4.4.5 (p. 24)",
    "802.3ad (layer3+4), static LAG": "§4.4.6 (p. 24)",
    "balance-tlb (after a rebalance)": "§4.4.7 (p. 25)",
    "balance-alb (after a rebalance)": "§4.4.8 (p. 25)",
}
TABLE2 = "Table 2 (§4.3, p. 21)"
#: What the runs leave out, by §4.4 setup, where its row is not reproduced (the thesis's flexiclient lines).
WEB_NOTES = {
    "balance-rr": "The thesis's four clients each moved 621-631 Mbit/s (§4.4.2), less than its one client alone: "
    "the server's CPU, which the thesis gives nothing to set, is not run",
    "balance-xor (layer3+4)": "The thesis's four clients moved 466-697 Mbit/s each (§4.4.4), every one below its one "
    "client alone: the server's CPU, which the thesis gives nothing to set, is not run",
    "broadcast": "Not run: the server's cost of sending each frame four times (`[server_host]`, the thesis gives "
    "nothing to set it) and the clients' switch ports receiving each four times; the thesis blames collisions, "
    "which a switched full-duplex link does not have",
}


def one_swap(n: int) -> float:
    """Spearman's rank correlation of ``n`` figures in the thesis's order but for one neighbouring pair: the
    least that matches the thesis's order of its modes."""
    return 1 - 12 / (n * (n * n - 1))


def _judge(paper: float, ours: float, tried: Sequence[tuple[str, float]], note: str = "") -> tuple[str, str]:
    """A throughput's verdict and its explanation: :data:`verdicts.MATCHES` within :data:`TOLERANCE` on the
    summary's setup; else :data:`verdicts.EXPLAINED` by the first of ``tried`` (label, Mbit/s) within it; else
    :data:`verdicts.NOT_REPRODUCED`, every run of ``tried`` named. ``note``: what else explains the difference."""
    tried = list(tried)
    criterion = f"within ±{TOLERANCE:.0%}: {verdicts.difference(paper, ours, TOLERANCE)}"
    each = [f"{label} {value:.0f} ({verdicts.difference(paper, value, TOLERANCE)})" for label, value in tried]
    runs = "; ".join(each)
    verdict, hit = verdicts.first_holding(
        lambda run: verdicts.within(paper, run[1], TOLERANCE) == verdicts.MATCHES, ("", ours), tried
    )
    if verdict == verdicts.MATCHES:
        return verdict, criterion + (f"; also {runs}" if runs else "")
    if hit is not None:
        i = tried.index(hit)
        others = "; ".join(run for k, run in enumerate(each) if k != i)
        because = (
            f"E: {each[i]}, within ±{TOLERANCE:.0%} (the setup above: {verdicts.difference(paper, ours, TOLERANCE)})"
        )
        return verdict, because + (f"; also tried: {others}" if others else "")
    text = f"{criterion}; tried: {runs}" if runs else f"{criterion}; no other run"
    return verdict, text + (f". {note}" if note else "")


def _pairs(table: pd.DataFrame) -> tuple[int, int, int]:
    """Of :func:`ranked`'s pairs of figures: how many bondsim orders opposite to the thesis, how many it puts
    level (within :data:`TOLERANCE` of each other) where the thesis's are not, and how many pairs there are."""

    def level(a: float, b: float) -> bool:
        return verdicts.within(max(a, b), min(a, b), TOLERANCE) == verdicts.MATCHES

    both = ranked(table)
    ours, theirs = both["goodput_mbps"].tolist(), both["paper_mbps"].tolist()
    pairs = [(i, j) for i in range(len(ours)) for j in range(i + 1, len(ours))]
    opposite = sum((ours[i] - ours[j]) * (theirs[i] - theirs[j]) < 0 and not level(ours[i], ours[j]) for i, j in pairs)
    flat = sum(level(ours[i], ours[j]) and not level(theirs[i], theirs[j]) for i, j in pairs)
    return opposite, flat, len(pairs)


def _judge_order(
    result: str, headline: tuple[str, pd.DataFrame], tried: Sequence[tuple[str, pd.DataFrame]]
) -> verdicts.Verdict:
    """A row for the order of the thesis's modes: Spearman's rank correlation of bondsim's figures with the
    thesis's (:func:`ranked`'s) on the summary's setup (``headline``: its label and mean table), then on each of
    ``tried``; matched from :func:`one_swap` up."""
    both = ranked(headline[1])
    n = len(both)
    least = one_swap(n)

    def text(label: str, table: pd.DataFrame) -> str:
        opposite, flat, pairs = _pairs(table)
        return (
            f"{rank_agreement(table):.2f} ({label}; of {pairs} pairs, {opposite} in the opposite order and {flat} "
            f"level within ±{TOLERANCE:.0%} that the thesis's are not)"
        )

    key = "setup" if "setup" in both else "mode"
    order = " > ".join(
        f"{r[key]} {r['paper_mbps']:g}" for _, r in both.sort_values("paper_mbps", ascending=False).iterrows()
    )
    criterion = f"ρ at least {least:.2f}, the thesis's order but for one neighbouring pair"
    verdict, hit = verdicts.first_holding(
        lambda i: rank_agreement(headline[1] if i < 0 else tried[i][1]) >= least, -1, range(len(tried))
    )
    if verdict == verdicts.MATCHES:
        because = criterion
    elif hit is not None:
        others = "; ".join(text(*run) for i, run in enumerate(tried) if i != hit)
        because = f"E: {text(*tried[hit])}; {criterion}" + (f"; also tried: {others}" if others else "")
    else:
        runs = "; ".join(text(*run) for run in tried)
        verdict, because = verdicts.NOT_REPRODUCED, f"{criterion}; tried: {runs}"
    return verdicts.Verdict(
        result,
        f"{order} (Mbit/s; ρ = 1 against itself)",
        f"Spearman's ρ {text(*headline)} over {n} figures",
        verdict,
        because,
    )


def judged(
    mean: pd.DataFrame,
    iperf_mean: pd.DataFrame,
    by_hash: pd.DataFrame,
    era: dict[str, pd.DataFrame],
    hosted: pd.DataFrame,
    host_us: float,
    sizes: pd.DataFrame,
) -> list[verdicts.Verdict]:
    """Table 2's seven figures, §4.4's eight, the order of the modes in each, and §5.3.6.1's example table, each
    judged on the summary's setup (today's TCP, ideal hosts) and then on the runs that may explain a difference:
    the thesis's kernel (:data:`THESIS_KERNEL`), the clients' CPUs calibrated on §4.4.1, the switch's hash."""
    rows = []
    then = era["iperf"].set_index("mode")
    iperf = iperf_mean.set_index("mode")
    rr_hashes = by_hash[by_hash["mode"] == "balance-rr"].set_index("switch_hash")
    for mode, paper in PAPER_IPERF.items():
        r = iperf.loc[mode]
        tried = [(f"under {THESIS_KERNEL}", then.loc[mode, "goodput_mbps"])]
        if mode == "balance-rr":
            tried += [(f"switch.hash {h}", rr_hashes.loc[h, "goodput_mbps"]) for h in SWITCH_HASHES if h != SWITCH_HASH]
        if r.ports_in == 1 and paper > LINK_GOODPUT:
            note = f"The thesis's figure exceeds what one link carries ({LINK_GOODPUT:.0f} Mbit/s in full frames)"
        elif r.ports_in < 4:
            note = (
                f"The switch's hash places the clients' data ({SWITCH_HASH}): {r.goodput_mbps_min:.0f} to "
                f"{r.goodput_mbps_max:.0f} Mbit/s over the address draws; the thesis does not state its hash"
            )
        else:
            note = ""
        verdict, because = _judge(paper, r.goodput_mbps, tried, note)
        rows.append(
            verdicts.Verdict(
                f"{TABLE2}: iperf from four clients into the bond, {mode}",
                f"{paper:g} Mbit/s",
                f"{ci_text(r, 'goodput_mbps', '.0f')} Mbit/s (today's TCP; data in on {r.ports_in:.2f} ports)",
                verdict,
                because,
            )
        )
    rows.append(
        _judge_order(
            f"{TABLE2}: the order of the modes",
            ("today's TCP", iperf_mean),
            [(f"under {THESIS_KERNEL}", era["iperf"])],
        )
    )

    web_then, cpu = era["web"].set_index("setup"), hosted.set_index("setup")
    web = mean.set_index("setup")
    cpus = f"the clients' CPUs ({host_us:.2f} µs a frame, {THESIS_KERNEL})"
    for setup, paper in PAPER_WEB.items():
        result = f"{WEB_WHERE[setup]}: the web test, {setup}"
        if setup not in web.index:  # after a rebalance: full size only
            fresh = web.loc[WARM[setup], "goodput_mbps"]
            rows.append(
                verdicts.Verdict(
                    result,
                    f"{paper:g} Mbit/s",
                    f"not run at the quick size; the fresh bond {fresh:.0f} Mbit/s (one link until its first rebalance)",
                    verdicts.NOT_REPRODUCED,
                    f"quick size: the run past the first rebalance at {REBALANCE_S:g} s is full size only",
                )
            )
            continue
        r = web.loc[setup]
        tried = [(f"under {THESIS_KERNEL}", web_then.loc[setup, "goodput_mbps"])]
        note = ""
        if setup == HOST_FROM:
            note = f"The clients' CPU is fitted to this figure ({cpu.loc[setup, 'goodput_mbps']:.0f} with it): no test"
        else:
            tried.append((cpus, cpu.loc[setup, "goodput_mbps"]))
            if r.links_used == 1 and paper > LINK_GOODPUT:
                note = f"The thesis's figure exceeds what one link carries ({LINK_GOODPUT:.0f} Mbit/s in full frames)"
            else:
                note = WEB_NOTES.get(setup, "")
        verdict, because = _judge(paper, r.goodput_mbps, tried, note)
        one_run = "; one run, the second after the first rebalance" if setup in WARM else ""
        rows.append(
            verdicts.Verdict(
                result,
                f"{paper:g} Mbit/s",
                f"{ci_text(r, 'goodput_mbps', '.0f')} Mbit/s (today's TCP, ideal hosts; {r.links_used:.0f} "
                f"link{'s' if r.links_used != 1 else ''}{one_run})",
                verdict,
                because,
            )
        )
    rows.append(
        _judge_order(
            "§4.4 (pp. 22-25), Fig. 3 (p. 26): the order of the modes in the web test",
            ("today's TCP, ideal hosts", mean),
            [(f"under {THESIS_KERNEL}", era["web"]), (cpus, hosted)],
        )
    )
    rows.append(_judge_per_size(sizes))
    return rows


def _judge_per_size(sizes: pd.DataFrame) -> verdicts.Verdict:
    """§5.3.6.1's example: the out-of-order packets of its files against what bondsim's P(outorder) per size
    expects of the same files, under rr and lb."""
    paper = pd.DataFrame(PAPER_PER_SIZE, columns=["packets", "entries", "average", "p_outorder"])
    files, packets = int(paper["entries"].sum()), int((paper["entries"] * paper["packets"]).sum())
    late = float((paper["entries"] * paper["average"]).sum())
    share = late / packets
    table = sizes.set_index(["mode", "packets"])["p_outorder"]
    expected, missing = {}, set()
    for mode in ("rr", "lb"):
        have = paper[[(mode, p) in table.index for p in paper["packets"]]]
        missing |= set(paper["packets"]) - set(have["packets"])
        expected[mode] = float((have["entries"] * have["packets"] * [table[(mode, p)] for p in have["packets"]]).sum())
    # a count of late packets over `packets` packets: within two binomial standard deviations at bondsim's share
    near = {
        m: abs(share - e / packets) <= 2 * (e / packets * (1 - e / packets) / packets) ** 0.5
        for m, e in expected.items()
    }
    close = [m for m, ok in near.items() if ok]
    pooled = f"{sizes[sizes['mode'] == 'rr']['entries'].sum():.0f} files pooled"
    return verdicts.Verdict(
        "§5.3.6.1 (p. 40): the example `process.sh` table, P(outorder) per packets per file",
        f"{late:.0f} of its {packets} packets out of order ({share:.1%}), {files} files of 1-31 packets",
        "the same files at bondsim's P(outorder) per size: "
        + ", ".join(f"{m} {e:.1f} ({e / packets:.1%})" for m, e in expected.items())
        + f" (the thesis scenario, 30 requests at once, {pooled} a mode)"
        + (f"; sizes with no file in bondsim's runs: {sorted(missing)}" if missing else ""),
        verdicts.MATCHES if close else verdicts.NOT_REPRODUCED,
        "within two binomial standard deviations of the files' packets at bondsim's share"
        + (
            f": {', '.join(close)}"
            if close
            else "; tried: rr and lb. The thesis states neither the algorithm, "
            "the load nor the slow interfaces of its example run"
        ),
    )


def report(
    mean: pd.DataFrame,
    sizes: pd.DataFrame,
    paper: pd.DataFrame,
    quick: bool,
    iperf_mean: pd.DataFrame,
    by_hash: pd.DataFrame,
    judged_text: str,
) -> str:
    by = mean.set_index("setup")
    ideal = 4 * LINK_GOODPUT
    rr = by.loc["balance-rr", "goodput_mbps"]
    ab = by.loc["active-backup", "goodput_mbps"]
    solo_paper = PAPER_WEB["no bonding (1 client, 1 link)"]
    compared = int(mean["paper_mbps"].notna().sum())
    below = int((mean["paper_mbps"] < mean["goodput_mbps"]).sum())
    rho, ranks = rank_agreement(mean), len(ranked(mean))
    parts = ["# thesis-modes: seed 000, §4.4 and §5.3.6.1 on the TCP model\n", __doc__.split("\n\n", 1)[1].strip()]
    if quick:
        parts.append("\n*Quick size: 0.4 s runs, one replication, no run past the first TLB/ALB rebalance.*")
    parts.append(
        f"\nA throughput matches the thesis's within ±{TOLERANCE:.0%}: the thesis prints one 30 s run per mode, the "
        "sum of four clients whose windows need not coincide, and where one link bounds the data its sums exceed "
        f"what the link carries by up to {PAPER_WEB['802.3ad (layer3+4), static LAG'] / LINK_GOODPUT - 1:.1%} "
        f"(§4.4.6's {PAPER_WEB['802.3ad (layer3+4), static LAG']:g} against {LINK_GOODPUT:.0f} Mbit/s). Each "
        "figure is judged on the setup of the tables below (today's TCP, ideal hosts), then on the runs that may "
        f"explain a difference: the thesis's kernel (`{THESIS_KERNEL}`, assumed), the clients' CPUs calibrated on "
        "§4.4.1, the switch's hash."
    )
    parts.append(judged_text)
    parts += iperf_report(iperf_mean, by_hash)
    parts += [
        f"\n## §4.4: every mode, the web test ({era_text(TODAY)})\n",
        "| setup | bondsim Mbit/s (95% interval†) | thesis Mbit/s | links used | out of order on the wire |"
        " retransmissions (spurious) | p99 completion ms |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in mean.itertuples():
        thesis = f"{r.paper_mbps:.0f}" if pd.notna(r.paper_mbps) else "–"
        parts.append(
            f"| {r.setup} | {ci_text(r, 'goodput_mbps', '.0f')} | {thesis} | "
            f"{r.links_used:.0f} | {r.wire_ooo_fraction:.1%} | {r.tcp_retransmits:.0f} ({r.tcp_spurious:.0f}) | "
            f"{r.fct_p99_ms:.1f} |"
        )
    best = mean[mean["family"] == "bondsim"].sort_values("goodput_mbps", ascending=False)
    parts += [
        "\n## The thesis's question: what balance-rr loses to reordering, and what a scheduler wins back\n",
        f"Four links carry at most {ideal:.0f} Mbit/s of goodput (full frames). balance-rr delivers "
        f"{rr:.0f} Mbit/s: {ideal - rr:.0f} Mbit/s ({1 - rr / ideal:.1%}) short, with "
        f"{by.loc['balance-rr', 'wire_ooo_fraction']:.1%} of segments out of order on the wire and "
        f"{by.loc['balance-rr', 'tcp_spurious']:.0f} spurious retransmissions. Against balance-rr:\n",
    ]
    for r in best.itertuples():
        parts.append(
            f"* `{r.setup}`: {r.goodput_mbps:.0f} Mbit/s ({r.goodput_mbps - rr:+.0f}), "
            f"{r.wire_ooo_fraction:.1%} out of order"
        )
    parts += [
        "\n## Why bondsim and the thesis differ\n",
        f"* **The host.** With one client and no bonding the thesis's nginx server moved {solo_paper:.0f} Mbit/s over a "
        f"link that carries {LINK_GOODPUT:.0f} in full frames: its host, not the wire, was the limit, and "
        f"these runs have an ideal host (the last section gives the clients a CPU). {below} of the thesis's {compared} "
        f"figures are below bondsim's, and the modes' order agrees with the thesis's by Spearman's rank correlation "
        f"{rho:.2f} over {ranks} of them ({RANKED_NOTE}; 1: the same order, 0: none in common).",
        "* **balance-rr** loses in bondsim only what reordering costs TCP today (RACK-TLP, D-SACK undo); "
        "the thesis's 2.5 Gbit/s also carries its host's per-packet costs, larger for reordered data (its "
        "kernel of 2010 had no RACK and no GRO on out-of-order segments).",
        f"* **active-backup** uses one link in both: {ab:.0f} Mbit/s here ({ab / LINK_GOODPUT:.1%} of what one "
        f"link carries in full frames), {PAPER_WEB['active-backup']:.0f} in the thesis: above the {solo_paper:.0f} of its "
        "single-client test, so its "
        "host was not the limit there, the link was.",
        "* **balance-xor**: with layer2 the four clients' MAC addresses decide which links carry traffic "
        "(the thesis found two clients on one link; `bondsim reproduce thesis-xor` computes how likely that "
        "is); layer3+4 spreads 256 connections over all four in both.",
        "* **broadcast** sends every frame on every link, so four links carry one link's worth of data; "
        f"the thesis's {PAPER_WEB['broadcast']:.0f} Mbit/s is about half of that, and its text blames collisions. A "
        "full-duplex switched "
        "link has none; what these runs leave out is the clients' switch ports, which receive every frame "
        "four times (the LAG delivers each copy; the model's switch forwards at once), and the server's cost "
        "of sending each frame four times (`[server_host] tx_packet_us`, not set: the thesis gives no figure "
        "of its server's CPU).",
        "* **802.3ad**: with an LACP partner (bondsim's default switch for it) all four ports make one "
        f"aggregator and layer3+4 matches balance-xor ({by.loc['802.3ad (layer3+4)', 'goodput_mbps']:.0f} Mbit/s). On "
        "the static LAG §4.2 describes the bond keeps each port in an aggregator of its own and sends on one "
        f"(`ad_agg_selection_logic`): {by.loc['802.3ad (layer3+4), static LAG', 'goodput_mbps']:.0f} Mbit/s, the "
        f"thesis's {PAPER_WEB['802.3ad (layer3+4), static LAG']:.0f}.",
        "* **balance-tlb / balance-alb** send everything on one link until their first rebalance, 10 s "
        "after the bond comes up (every bucket's load history is 0 until then, so the least-loaded link "
        "is always the first); the rows marked *after a rebalance* measure the second that follows it. "
        "The thesis's tlb and alb spread their traffic (§4.4.7–4.4.8, p. 25: "
        + " and ".join(f"{PAPER_WEB[w]:g}" for w in WARM)
        + " Mbit/s, more than one link carries), so its figures are those rows' (they run at full size only), not "
        "the fresh bonds'.",
    ]
    parts += [
        "\n## §5.3.6.1: P(outorder) per packets per file\n",
        "The thesis prints one `process.sh` table as an example (a run of 29 files; its algorithm and load "
        "are not stated). bondsim's `process.txt` for its model, 30 requests at once from the SPECweb99 set, "
        "pooled over many seeds:\n",
        "| packets | thesis entries | thesis P(outorder) | bondsim rr entries | bondsim rr P(outorder) |"
        " bondsim lb P(outorder) |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    table = sizes.set_index(["mode", "packets"])
    for p in paper.itertuples():
        rr_row = table.loc[("rr", p.packets)] if ("rr", p.packets) in table.index else None
        lb_row = table.loc[("lb", p.packets)] if ("lb", p.packets) in table.index else None
        parts.append(
            f"| {p.packets} | {p.entries} | {p.p_outorder:.2f} | "
            f"{int(rr_row.entries) if rr_row is not None else 0} | "
            f"{f'{rr_row.p_outorder:.2f}' if rr_row is not None else '–'} | "
            f"{f'{lb_row.p_outorder:.2f}' if lb_row is not None else '–'} |"
        )
    parts += [
        "",
        "One-packet files can never be out of order in either. The thesis's example has one to four files "
        "per size, so each of its probabilities is one or two files' worth (an entry of 1 at P = 0.62 is a "
        "single 21-packet file with 13 late packets); bondsim's pooled figures are the expectation those "
        "samples scatter around.",
        "",
    ]
    parts.append(CI_NOTE)
    return "\n".join(parts)
