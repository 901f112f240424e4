"""Seed 004 (Figs. 2–3, Table 2): balance-rr over 1…8 links of 100 Mbit/s, one iperf TCP flow, the
throughput lost against the sum of the link rates, before and after the paper's kernel tuning.

The paper (CORE containers on one host, two bonds in balance-rr joined by a bridge, each veth
limited to 100 Mbit/s with ``tc``, iperf over TCP for 240 s, MTU 1500) reports a loss that grows
sharply from the fifth link (about 400 Mbit/s) and blames socket buffers and ``txqueuelen``; after
its Table 2 tuning (``tcp_rmem``/``tcp_wmem`` max 8 → 16 MiB, ``txqueuelen`` 2000 on both bonds)
6–8 links win back about 25%.

bondsim runs the same bond with an ideal host (no CPU limit): one TCP transfer per point, its
goodput over the sum of the link rates. What the paper leaves unstated, and what we chose:

* the kernel: CORE on Linux of 2014 (3.x) had no RACK (it came in 4.10): ``linux-3.x`` rows run
  ``tcp_recovery = 0`` (dupthresh-based loss detection, reordering degree adapting up to
  ``tcp_max_reordering``); ``modern`` rows run today's defaults (RACK-TLP);
* the links' timing: veths shaped by ``tc`` on a shared host do not deliver in lock-step. We add
  per-packet exponential jitter of mean 0, 20 or 100 µs (seeded; replications differ only there),
  which is what lets balance-rr reorder at all between equal links;
* a one-way delay of 50 µs per link (a software bridge).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bondsim import atomic, kernels, plots
from bondsim.reproduce import bulk_tcp
from bondsim.stats import CI_NOTE, MIN_INTERVAL_RUNS, ci_text, mean_ci

#: 100 Mbit/s per link.
LINK_MBPS = 100.0
#: Seed 004, Table 2 (values as the paper prints them).
CONFIGS: dict[str, list[str]] = {
    # the paper's "original" values
    "default": ["sender.tcp_rmem=[4096, 87380, 8388608]", "sender.tcp_wmem=[4096, 87380, 8388608]"],
    # the paper's "tuned" values; `ifconfig bond0 txqueuelen 2000` sets a length no qdisc uses: a
    # bond is a noqueue device (bond_setup: IFF_NO_QUEUE; tx_queue_len = 0 before Linux 4.3), so the
    # slaves keep txqueuelen 1000. `tuned+slaves` applies 2000 to the slaves too, as a reader might.
    "tuned": ["sender.tcp_rmem=[4096, 87380, 16777216]", "sender.tcp_wmem=[4096, 65535, 16777216]"],
    "tuned+slaves": [
        "sender.tcp_rmem=[4096, 87380, 16777216]",
        "sender.tcp_wmem=[4096, 65535, 16777216]",
        "links.0.txqueuelen=2000",
    ],
}
#: The paper's reading of its Fig. 2 (text: the loss "grows sharply from the fifth link") and Fig. 3
#: (text: tuning gains "about 25%" at 6, 7 and 8 links). The figures' bars are not in the text.
PAPER = "loss grows sharply from 5 links (about 400 Mbit/s); tuning wins back about 25% at 6–8 links"


def plan(quick: bool) -> tuple[list[dict], list[dict]]:
    """Every point of the sweep: (scenarios, labels). Each transfer lasts about ``seconds`` at the
    bond's full rate."""
    from bondsim.scenario import apply_overrides

    links = (1, 2, 5, 8) if quick else tuple(range(1, 9))
    seconds, replications = (1.0, 2) if quick else (5.0, MIN_INTERVAL_RUNS)
    docs, labels = [], []
    for n in links:
        for config, config_set in CONFIGS.items():
            for kernel, kernel_set in kernels.REPRODUCED.items():
                for jitter in bulk_tcp.JITTER_US:
                    for rep in range(replications if jitter else 1):
                        nbytes = seconds * n * LINK_MBPS * 1e6 / 8
                        doc = bulk_tcp.transfer(n, LINK_MBPS, nbytes, seed=1 + rep, delay_us=50, mode="balance-rr")
                        docs.append(apply_overrides(doc, [*config_set, *kernel_set, *bulk_tcp.jitter(jitter)]))
                        labels.append(
                            {"links": n, "config": config, "kernel": kernel, "jitter_us": jitter, "replication": rep}
                        )
    return docs, labels


def run(*, quick: bool = False, progress: bool = True) -> pd.DataFrame:
    """One row per run: labels, goodput, share of the sum of link rates, TCP's counters."""
    docs, labels = plan(quick)
    runs = bulk_tcp.run(docs, labels, name="rr-links", progress=progress)
    runs["share_of_sum"] = runs["goodput_mbps"] / (runs["links"] * LINK_MBPS)
    runs["loss_pct"] = 100 * (1 - runs["share_of_sum"])
    return runs


@atomic.whole
def reproduce(out: str | Path, *, progress: bool = True, quick: bool = False) -> Path:
    """Writes ``rr_links.csv`` (every run), ``rr_links_mean.csv`` (mean and 95% interval over the
    replications), ``fig2_loss.png``, ``fig3_tuning.png`` and ``summary.md``."""
    out = Path(out)
    runs = run(quick=quick, progress=progress)
    atomic.write_csv(runs, out / "rr_links.csv")
    keys = ["links", "config", "kernel", "jitter_us"]
    mean = mean_ci(runs, keys, "loss_pct", means=("wire_ooo_fraction", "tcp_retransmits", "tcp_spurious"))
    atomic.write_csv(mean, out / "rr_links_mean.csv")

    default = mean[mean["config"] == "default"]
    plots.compare(
        default.assign(series=default["kernel"] + ", jitter " + default["jitter_us"].astype(str) + " µs"),
        "links",
        "loss_pct",
        "series",
        out / "fig2_loss.png",
        title="balance-rr, one TCP flow: throughput lost against the sum of link rates (Fig. 2)",
        xlabel="links of 100 Mbit/s",
        ylabel="loss (% of the sum of link rates)",
    )
    era = mean[(mean["kernel"] == "linux-3.x") & (mean["jitter_us"] == max(bulk_tcp.JITTER_US))]
    plots.compare(
        era,
        "links",
        "loss_pct",
        "config",
        out / "fig3_tuning.png",
        title=f"Before and after Table 2's tuning (linux-3.x, jitter {max(bulk_tcp.JITTER_US)} µs) (Fig. 3)",
        xlabel="links of 100 Mbit/s",
        ylabel="loss (% of the sum of link rates)",
    )
    summary = out / "summary.md"
    atomic.write_text(summary, report(mean, quick))
    return summary


def report(mean: pd.DataFrame, quick: bool) -> str:
    """summary.md: the paper's claims beside our figures, and why they differ."""
    overhead = 100 * (1 - bulk_tcp.TCP_PAYLOAD_SHARE)
    parts = ["# rr-links: seed 004, balance-rr over 1…8 links of 100 Mbit/s\n", __doc__.split("\n\n", 1)[1].strip()]
    if quick:
        parts.append("\n*Quick size: 1 s transfers, 2 replications, 1/2/5/8 links — noisier than the full run.*")
    parts += [
        "\n## Paper vs bondsim\n",
        f"Paper: {PAPER}.\n",
        "| links | kernel | jitter µs | loss % default (95% interval†) | loss % tuned | loss % tuned+slaves |"
        " out of order on the wire | retransmissions (spurious) |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    table = mean.set_index(["links", "kernel", "jitter_us", "config"])
    for (links, kernel, jitter), _ in mean.groupby(["links", "kernel", "jitter_us"], sort=False):
        row = {c: table.loc[(links, kernel, jitter, c)] for c in CONFIGS}
        d = row["default"]
        parts.append(
            f"| {links} | {kernel} | {jitter} | {ci_text(d, 'loss_pct', '.2f')} | "
            f"{row['tuned'].loss_pct:.2f} | {row['tuned+slaves'].loss_pct:.2f} | {d.wire_ooo_fraction:.1%} | "
            f"{d.tcp_retransmits:.0f} ({d.tcp_spurious:.0f}) |"
        )
    worst = mean[mean["config"] == "default"]["loss_pct"].max()
    gain = mean.pivot_table(index=["links", "kernel", "jitter_us"], columns="config", values="loss_pct")
    best_gain = (gain["default"] - gain["tuned"]).abs().max()
    parts += [
        "\n## Why the figures differ\n",
        f"* **Headers, not bonding, set the floor.** Every row loses at least {overhead:.1f}%: a 1448-byte "
        "segment travels in a 1538-byte frame on the wire (TCP/IP headers with timestamps, Ethernet header, "
        "FCS, preamble and gap). iperf reports goodput, so the paper's bars include this too.",
        "* **Reordering costs little, and grows with the links.** Lock-step links (jitter 0) deliver in order. "
        "With jitter, balance-rr reorders a large share of segments on the wire; Linux 3.x's dupthresh raises "
        "its reordering degree after each spurious retransmission (D-SACK, timestamps undo the window cut), "
        "and RACK waits a quarter of the minimum RTT before calling a hole a loss. The loss grows with the "
        f"number of links, but stays small: at most {worst:.1f}% here, against the paper's sharp fall from the "
        "fifth link.",
        "* **The paper's fall from the fifth link is the host, which bondsim does not model.** All links, "
        "bridge, shapers and both TCP stacks shared one machine's 2–4 virtual cores (seed 004 §3.3: the more "
        "throughput, the more CPU and socket-buffer memory); about 400 Mbit/s is where its software path "
        "saturated. An ideal host has no such limit, so the model shows no knee.",
        f"* **The tuning changes (almost) nothing in the model:** at most {best_gain:.2f} points between default "
        "and tuned. The receive window (autotuned up to `tcp_rmem`'s 8 MiB maximum) already exceeds the "
        "bandwidth-delay product of 800 Mbit/s at a LAN round trip by far, so raising it to 16 MiB cannot help; "
        "and `txqueuelen` on the bond sets a queue the bond does not have (it is a noqueue device). The 25% "
        "the paper won back at 6–8 links belongs to its host (buffer memory under CPU pressure), not to the "
        "protocol or the bond.",
        "",
    ]
    parts.append(CI_NOTE)
    return "\n".join(parts)
