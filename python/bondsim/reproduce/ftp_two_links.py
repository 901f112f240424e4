"""Seed 003 (Table 2): a 361 MB file over FTP (binary mode) from host 1 to host 2, host 1 on one
100 Mbit/s link or on two bonded in balance-rr, average of 10 runs: 32.12 s vs 16.20 s.

The paper's hosts ran Ubuntu 13.10 (Linux 3.11.0-14); host 1's bond goes to a Pica8 P3295 switch
(topology 2) and host 2 hangs off the same switch. FTP's data connection is one TCP transfer, so
bondsim runs one TCP transfer of the file. What the paper leaves unstated, and what we chose:

* the file's size: 361 MiB (378,535,936 bytes). 32.12 s for it is 94.3 Mbit/s of goodput, what one
  100 Mbit/s link carries in full frames (94.1 Mbit/s); 361 × 10^6 bytes would be 89.9 Mbit/s;
* host 2's port: at least 200 Mbit/s (else no bond could halve the time); the switch forwards both
  links' frames onto it in arrival order, so bondsim sends them straight to host 2;
* the kernel (``sender.kernel``): Linux 3.11 (no RACK: ``linux-3.x``) beside today's (``modern``, ``current``);
* the links' timing: per-packet exponential jitter of mean 0, 20 or 100 µs (the paper's 10 runs
  differ by something; lock-step links would give one figure), one-way delay 10 µs (cable and
  switch).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bondsim import atomic, kernels, plots
from bondsim.reproduce import bulk_tcp, verdicts
from bondsim.stats import CI_NOTE, ci_text, mean_ci

LINK_MBPS = 100.0
#: 361 MiB: see the module's text for why MiB.
FILE_BYTES = 361 * 2**20
#: Seed 003, Table 2: file transfer time, seconds (average of 10 runs).
PAPER_S = {"one link": 32.12, "balance-rr, 2 links": 16.20}
#: A transfer time matches the paper's within this (relative): 2%, well beyond the spread of jittered runs
#: (0.1%) and below the 5% a lost round of slow start or one retransmission timeout would cost.
TOLERANCE = 0.02
#: The kernel the paper's hosts ran (Ubuntu 13.10's 3.11), the verdicts' headline.
PAPER_KERNEL = "linux-3.x"
#: What a verdict that differs names: every run this reproduction makes.
TRIED = "the runs tried: both kernels, lock-step and jittered links (the table below); nothing else explains it"
SETUPS = {"one link": 1, "balance-rr, 2 links": 2}


def plan(quick: bool) -> tuple[list[dict], list[dict]]:
    """Every point: (scenarios, labels). Quick: a tenth of the file, 2 replications."""
    from bondsim.scenario import apply_overrides

    nbytes, replications = (FILE_BYTES // 10, 2) if quick else (FILE_BYTES, 10)
    docs, labels = [], []
    for setup, links in SETUPS.items():
        for kernel, kernel_set in kernels.REPRODUCED.items():
            for jitter in bulk_tcp.JITTER_US:
                for rep in range(replications if jitter else 1):
                    doc = bulk_tcp.transfer(links, LINK_MBPS, nbytes, seed=1 + rep, delay_us=10, mode="balance-rr")
                    docs.append(apply_overrides(doc, [*kernel_set, *bulk_tcp.jitter(jitter)]))
                    labels.append(
                        {"setup": setup, "links": links, "kernel": kernel, "jitter_us": jitter, "replication": rep}
                    )
    return docs, labels


@atomic.whole
def reproduce(out: str | Path, *, progress: bool = True, quick: bool = False) -> Path:
    """Writes ``ftp.csv`` (every run), ``ftp_mean.csv`` (mean and 95% interval over the replications),
    ``table2.png`` and ``summary.md``."""
    out = Path(out)
    docs, labels = plan(quick)
    runs = bulk_tcp.run(docs, labels, name="ftp-two-links", progress=progress)
    # the quick size moves a tenth of the file: scale its times to the whole file for the comparison
    runs["transfer_s"] = runs["transfer_s"] * FILE_BYTES / docs[0]["workload"]["file_size"]["bytes"]
    atomic.write_csv(runs, out / "ftp.csv")
    keys = ["setup", "kernel", "jitter_us"]
    mean = mean_ci(
        runs, keys, "transfer_s", means=("goodput_mbps", "wire_ooo_fraction", "tcp_retransmits", "tcp_spurious")
    )
    atomic.write_csv(mean, out / "ftp_mean.csv")
    chart = mean.assign(series=mean["kernel"] + ", jitter " + mean["jitter_us"].astype(str) + " µs")
    plots.bars(
        chart,
        "setup",
        "transfer_s",
        "series",
        out / "table2.png",
        title="361 MiB over FTP: one link vs two in balance-rr (seed 003, Table 2)",
        xlabel="host 1's connection",
        ylabel="transfer time (s)",
        reference={"paper (10-run mean)": [PAPER_S[s] for s in dict.fromkeys(chart["setup"])]},
    )
    summary = out / "summary.md"
    atomic.write_text(summary, report(mean, quick, verdicts.write(out, judged(mean))))
    return summary


def judged(mean: pd.DataFrame) -> list[verdicts.Verdict]:
    """Table 2's two times and its claim that reordering costs little, each judged on the paper's kernel with the
    most jitter (the runs that differ most), the range over every kernel and jitter beside it."""
    rows = []
    times = {}
    for setup, paper in PAPER_S.items():
        ours = mean[mean["setup"] == setup]
        head = ours[(ours["kernel"] == PAPER_KERNEL) & (ours["jitter_us"] == ours["jitter_us"].max())].iloc[0]
        times[setup] = head.transfer_s
        rows.append(
            verdicts.judge(
                f"Table 2 (seed 003 prints no pages): {setup}, 361 MB over FTP, mean of 10 runs",
                f"{paper:.2f} s",
                f"{ci_text(head, 'transfer_s', '.2f')} s ({PAPER_KERNEL}, {head.jitter_us} µs jitter; "
                f"{ours['transfer_s'].min():.2f}–{ours['transfer_s'].max():.2f} over both kernels and every jitter)",
                (paper, head.transfer_s),
                TOLERANCE,
                TRIED,
            )
        )
    one, two = times["one link"], times["balance-rr, 2 links"]
    paper_speedup = PAPER_S["one link"] / PAPER_S["balance-rr, 2 links"]
    rows.append(
        verdicts.judge(
            'Table 2\'s text: "out-of-order issue only imposes a minor overhead" (two links against half of one)',
            f"{paper_speedup:.2f}× faster than one link (half: 2×)",
            f"{one / two:.2f}× ({PAPER_KERNEL}, the most jitter)",
            (paper_speedup, one / two),
            TOLERANCE,
            TRIED,
        )
    )
    return rows


def report(mean: pd.DataFrame, quick: bool, judged_text: str) -> str:
    """summary.md: the verdicts, Table 2 beside our transfer times, and why they differ."""
    one_link_s = FILE_BYTES * 8 / (LINK_MBPS * 1e6 * bulk_tcp.TCP_PAYLOAD_SHARE)
    parts = ["# ftp-two-links: seed 003, Table 2\n", __doc__.split("\n\n", 1)[1].strip()]
    if quick:
        parts.append("\n*Quick size: a tenth of the file (times scaled ×10), 2 replications: slow start weighs more.*")
    parts.append(judged_text)
    parts += [
        "\n## Paper vs bondsim\n",
        "| setup | kernel | jitter µs | bondsim s (95% interval†) | paper s | bondsim / paper | speed-up over one link |"
        " out of order on the wire | retransmissions (spurious) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    single = mean[mean["setup"] == "one link"].set_index(["kernel", "jitter_us"])["transfer_s"]
    for r in mean.itertuples():
        paper = PAPER_S[r.setup]
        speedup = single[(r.kernel, r.jitter_us)] / r.transfer_s
        parts.append(
            f"| {r.setup} | {r.kernel} | {r.jitter_us} | {ci_text(r, 'transfer_s', '.2f')}"
            f" | {paper:.2f} | {r.transfer_s / paper:.3f} | {speedup:.2f}× | {r.wire_ooo_fraction:.1%} |"
            f" {r.tcp_retransmits:.0f} ({r.tcp_spurious:.0f}) |"
        )
    rr = mean[mean["setup"] != "one link"]
    paper_rr = PAPER_S["balance-rr, 2 links"]
    parts += [
        "\n## Why the figures differ\n",
        f"* **One link** is the wire's rate in full frames: {one_link_s:.2f} s for 361 MiB at 1448 payload bytes "
        f"per 1538 on the wire; the paper's {PAPER_S['one link']:.2f} s is within "
        f"{abs(PAPER_S['one link'] / one_link_s - 1):.1%} of it, so its FTP ran at line rate too.",
        f"* **Two links in balance-rr** take {rr['transfer_s'].min():.2f}–{rr['transfer_s'].max():.2f} s in bondsim "
        f"against the paper's {paper_rr:.2f} s ({PAPER_S['one link'] / paper_rr:.2f}× faster than one link; half "
        f"would be {PAPER_S['one link'] / 2:.2f} s). Lock-step links "
        "deliver in order and halve the time exactly, less slow start's longer share; jitter makes balance-rr "
        "reorder, and TCP's spurious retransmissions and their window cuts (undone on D-SACK or timestamps) "
        "cost a little. The paper's '*out-of-order issue only imposes a minor overhead*' is what the model "
        "finds: reordering is frequent on the wire, costly in neither kernel.",
        "* **What bondsim leaves out:** FTP's control exchange and the data connection's handshake (about one "
        "round trip, microseconds here), disk and CPU on the hosts, the switch's store-and-forward delay "
        "(12 µs per frame at 1 Gbit/s, the same for every frame).",
        "",
    ]
    parts.append(CI_NOTE)
    return "\n".join(parts)
