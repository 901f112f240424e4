"""Seed 001 (ELT, Fig. 5): 1–6 client/server pairs bounce a token of 4 B … 8 KB back and forth over
TCP, through one Fast Ethernet channel or two channels striped round-robin.

The paper's server (FreeBSD, Intel pro100+ NICs, its own round-robin "ELT" driver) runs one producer
process per pair; each writes a token with ``send()``, the client reads it whole and returns it at
once; aggregate throughput from ``netstat``. It reports throughput that depends on the token size
but hardly on the number of pairs, peaks of 8.9 "Mbps" (one channel, "about 71.2% of the 12.5 Mbps
peak for Ethernet") and 16.4 "Mbps" (two channels, "65.6% of the theoretical 25 Mbps"), and two
channels gaining only above about 512-byte tokens (Fig. 5 and the text under it; the paper is pp.
1001–1007 of J. Zhejiang Univ. SCI A 7(6), and the seed's text has no page breaks to place it).

bondsim runs the same exchange on its TCP model (Linux's, of the era below) with an ideal host: the
``pingpong`` workload (each end writes its token when it has read the whole one from the other),
the server's bond in balance-rr over one or two 100 Mbit/s links, the clients' answers on the link
the switch's hash picks for each client. What the paper leaves unstated, and what we chose:

* the unit: the paper prints "Mbps", but its 12.5 "Mbps" peak of a 100 Mbit/s Ethernet is that rate
  in megabytes per second, so its values are MB/s by its own arithmetic. We report **MB/s** (10^6
  bytes a second): a change of the printed unit, not of the values, said wherever they are compared.
  They are bounded by one direction of a link (8.9 is 71.2% of 12.5), so we report the tokens' bytes
  per second **one way** (the server's tokens; the answers carry as many);
* the link delay (switch and NIC latency, one way): 50 µs; the tables show 200 µs beside it;
* Nagle: on (the socket default on both FreeBSD and Linux); the tables show ``TCP_NODELAY`` beside it;
* how the switch spreads the clients' answers over the server's two ports (ELT gives every port the
  same MAC and IP): by its hash of the client's addresses, drawn from the seed — the replications
  differ only there, so one-channel runs do not vary at all;
* the exchanges per pair: 200 per point (a steady state; the paper ran for minutes).

And an experiment on the machines (issue 38): the clients' processes on one machine
(``host.shared``) and the server's (``[server_host]``), each one CPU at one cost per frame received
and per frame sent, **fitted** so that one channel's peak (over token sizes, at 6 pairs) is the
paper's 8.9 MB/s, then checked on what it was not fitted to: the two channels' peak, the response
to the number of pairs, and Table 1's Netperf run (its throughput, and the server's CPU load of 38%
the paper measured with it; that the 38% is the server's is our reading).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bondsim import atomic, plots
from bondsim.reproduce import elt_aft, fitting, verdicts
from bondsim.scenario import apply_overrides
from bondsim.stats import MIN_INTERVAL_RUNS, mean_ci
from bondsim.sweeps import run_many

LINK_MBPS = 100.0
#: Token sizes 2^2 … 2^13 bytes and 1 … 6 pairs (Fig. 5).
TOKENS = tuple(2**n for n in range(2, 14))
PAIRS = tuple(range(1, 7))
#: Seed 001, the text under Fig. 5, in the unit it prints (:data:`PAPER_UNIT`).
PAPER_PEAK = {1: 8.9, 2: 16.4}
#: The unit the paper prints its Fig. 5 figures in. They are MB/s (12.5 "Mbps" is its peak of 100 Mbit/s
#: Ethernet), which is what bondsim reports: :func:`as_printed` says so beside each.
PAPER_UNIT = "Mbps"
PAPER_GAIN_ABOVE = 512
#: Table 1's Netperf figures through one NIC and two (seed 001; :data:`elt_aft.PAPER_MBPS`), Mbit/s.
NETPERF_ONE, NETPERF_TWO = elt_aft.PAPER_MBPS["one NIC"], elt_aft.PAPER_MBPS["two NICs"]
#: A Fig. 5 figure matches the paper's within this (relative). The paper prints each peak once, the peak of
#: a curve over token sizes a power of two apart from one run per point; 10% is what this reproduction has
#: judged its fitted machines by since they were built (2026-11), not chosen for any row here.
TOLERANCE = 0.10
#: "Insensitive to the number of pairs": the pairs' curves within 5% of the most pairs' (:func:`flat_from`).
FLAT = 0.05
#: What varies beside the chosen values: name -> overrides.
VARIANTS: dict[str, list[str]] = {
    "base": [],
    "nodelay": ["sender.nodelay=true"],
    "delay 200 µs": ["links.0.delay_us=200"],
}
#: The machines' variant (its cost fitted at run time, :func:`fit_cost`).
HOSTS = "hosts (fitted)"
#: Where the fit is made: one channel, this many pairs, the peak over the token sizes.
FIT_PAIRS = 6
#: A cost at which the CPUs bound the fitted figure (the fit scales it from there), µs per frame.
FIT_START_US = 100.0
#: Seed 001, Table 1: the server's CPU load under Netperf, the same with one NIC and with two.
PAPER_CPU_LOAD = 0.38
#: One direction of one link carries at most this many payload MB/s: a 1448-byte segment takes
#: 1448 + 52 (IPv4, TCP, timestamps) + 38 (Ethernet header, FCS, preamble, gap) bytes of wire time.
PAYLOAD_MBYTES = LINK_MBPS / 8 * 1448 / (1448 + 52 + 38)


def as_printed(value: float) -> str:
    """A Fig. 5 figure of the paper's in the unit it prints, and what that unit is (MB/s: :data:`PAPER_UNIT`)."""
    return f'{value} "{PAPER_UNIT}" as printed (MB/s)'


def scenario(token: int, pairs: int, channels: int, rounds: int, seed: int) -> dict:
    """``pairs`` pairs bouncing ``token`` bytes ``rounds`` times over ``channels`` links in balance-rr."""
    return {
        "name": "elt_tokens",
        "seed": seed,
        "workload": {"kind": "pingpong", "pairs": pairs, "token_bytes": token, "rounds": rounds},
        "sender": {"kind": "tcp", "kernel": elt_aft.KERNEL},
        "bond": {"mode": "balance-rr"},
        "links": [{"count": channels, "rate_mbps": LINK_MBPS, "delay_us": 50.0}],
    }


def machines(cost_us: float) -> list[str]:
    """The machines' overrides: the clients' shared machine and the server's, ``cost_us`` a frame
    received and a frame sent."""
    both = [f"rx_packet_us={cost_us}", f"tx_packet_us={cost_us}"]
    return [*(f"host.{x}" for x in both), "host.shared=true", *(f"server_host.{x}" for x in both)]


def sizes(quick: bool) -> tuple[tuple[int, ...], tuple[int, ...], int, int]:
    """Token sizes, pair counts, exchanges per pair and replications at this size."""
    if quick:
        return (4, 64, 512, 2048, 8192), (1, 6), 30, 2
    return TOKENS, PAIRS, 200, MIN_INTERVAL_RUNS


def fit_cost(quick: bool) -> tuple[float, float]:
    """The machines' cost per frame (µs) at which :data:`FIT_PAIRS` pairs over one channel peak, over
    the token sizes, at the paper's 8.9 MB/s, and that peak. One channel's runs do not vary with the
    seed (only the answers' placement over two channels does): seed 1."""
    from bondsim import run as run_one

    tokens, _, rounds, _ = sizes(quick)

    def peak(cost: float) -> float:
        return max(
            run_one(apply_overrides(scenario(t, FIT_PAIRS, 1, rounds, 1), machines(cost))).summary["token_mbytes_per_s"]
            / 2
            for t in tokens
        )

    return fitting.scale_to(PAPER_PEAK[1], peak, start=FIT_START_US)


def plan(quick: bool, cost_us: float) -> tuple[list[dict], list[dict]]:
    """Every point: (scenarios, labels). The machines' variant (``cost_us``) runs as the base does; the
    others at 1 and 6 pairs (quick: 1 pair, once)."""
    tokens, pairs_all, rounds, replications = sizes(quick)
    docs, labels = [], []
    for variant, overrides in {**VARIANTS, HOSTS: machines(cost_us)}.items():
        varied = variant not in ("base", HOSTS)
        for pairs in ((1,) if quick else (1, 6)) if varied else pairs_all:
            for token in tokens:
                for channels in (1, 2):
                    for rep in range(1 if quick and varied else replications):
                        doc = scenario(token, pairs, channels, rounds, seed=1 + rep)
                        docs.append(apply_overrides(doc, overrides))
                        labels.append(
                            {
                                "variant": variant,
                                "pairs": pairs,
                                "token_bytes": token,
                                "channels": channels,
                                "replication": rep,
                            }
                        )
    return docs, labels


def run(*, quick: bool = False, progress: bool = True, cost_us: float = 0.0) -> pd.DataFrame:
    """One row per run: labels, token throughput one way, exchange round trips, ACKs sent alone, the
    busiest CPU's share (the machines' variant, ``cost_us`` a frame)."""
    docs, labels = plan(quick, cost_us)
    rows = []
    for label, result in zip(labels, run_many(docs, labels=labels, name="elt-tokens", progress=progress), strict=True):
        s = result.summary
        data = s["tcp_segments_sent"] + s["tcp_retransmits"]
        rows.append(
            {
                **label,
                "mbytes_one_way": s["token_mbytes_per_s"] / 2,
                "exchange_rtt_mean_ms": s["exchange_rtt_mean_ms"],
                "exchange_rtt_p99_ms": s["exchange_rtt_p99_ms"],
                "exchanges": s["exchanges"],
                "pure_acks": s["packets"] + s["reverse_packets"] - data,
                "tcp_retransmits": s["tcp_retransmits"],
                "cpu_busy_max": max(s["host_cpu_busy_max"] or 0.0, s["server_host_cpu_busy_max"] or 0.0),
            }
        )
    return pd.DataFrame(rows)


def netperf_check(cost_us: float, quick: bool) -> pd.DataFrame:
    """Table 1's Netperf runs (:mod:`elt_aft`) from a server with an ideal machine, and with one that
    costs ``cost_us`` a frame received and sent: goodput and the server's CPU load (the share of the
    run its CPU was busy), beside the paper's."""
    seconds = 2.0 if quick else 10.0
    server = {"ideal": [], "fitted": [f"server_host.rx_packet_us={cost_us}", f"server_host.tx_packet_us={cost_us}"]}
    labels = [{"setup": setup, "machine": m} for setup in ("one NIC", "two NICs") for m in server]
    docs = [apply_overrides(elt_aft.scenario(x["setup"], seconds), server[x["machine"]]) for x in labels]
    results = run_many(docs, labels=labels, name="elt-tokens/netperf", progress=False)
    return pd.DataFrame(
        {**x, "goodput_mbps": r.summary["goodput_bps"] / 1e6, "paper_mbps": elt_aft.PAPER_MBPS[x["setup"]],
         "server_cpu": r.summary["server_host_cpu_busy_max"] or 0.0, "paper_cpu": PAPER_CPU_LOAD}
        for x, r in zip(labels, results, strict=True)
    )  # fmt: skip


@atomic.whole
def reproduce(out: str | Path, *, progress: bool = True, quick: bool = False) -> Path:
    """Writes ``elt_tokens.csv`` (every run), ``elt_tokens_mean.csv`` (mean and 95% interval over
    the replications, with their range), ``netperf_hosts.csv`` (the fit's check on Table 1),
    ``fig5_tokens.png`` and ``summary.md``."""
    cost, fitted = fit_cost(quick)
    runs = run(quick=quick, progress=progress, cost_us=cost)
    atomic.write_csv(runs, Path(out) / "elt_tokens.csv")
    netperf = netperf_check(cost, quick)
    atomic.write_csv(netperf, Path(out) / "netperf_hosts.csv")
    keys = ["variant", "pairs", "token_bytes", "channels"]
    others = ("exchange_rtt_mean_ms", "exchange_rtt_p99_ms", "pure_acks", "tcp_retransmits", "cpu_busy_max")
    mean = mean_ci(runs, keys, "mbytes_one_way", means=others)
    # The placement of the answers is discrete (which port each client hashes to): show the range too.
    spread = runs.groupby(keys, sort=False)["mbytes_one_way"].agg(["min", "max"]).to_numpy()
    mean["mbytes_one_way_min"], mean["mbytes_one_way_max"] = spread[:, 0], spread[:, 1]
    atomic.write_csv(mean, Path(out) / "elt_tokens_mean.csv")
    base = mean[mean["variant"] == "base"]
    channel = base["channels"].map({1: "1 channel", 2: "2 channels rr"})
    tokens = sorted(base["token_bytes"].unique())
    plots.compare(
        base.assign(series=channel + ", " + base["pairs"].astype(str) + " pairs"),
        "token_bytes",
        "mbytes_one_way",
        "series",
        Path(out) / "fig5_tokens.png",
        title="Token exchange over TCP, 1–6 pairs: one vs two channels (seed 001 Fig. 5)",
        xlabel="token size (bytes)",
        ylabel="tokens, MB/s one way",
        logx=True,
        reference={
            f"paper: peak, {n} channel{'s' if n > 1 else ''} ({as_printed(v)})": ([tokens[0], tokens[-1]], [v, v])
            for n, v in PAPER_PEAK.items()
        },
    )
    summary = Path(out) / "summary.md"
    rows = verdicts.write(out, judged(mean, netperf, cost))
    atomic.write_text(summary, report(mean, quick, rows) + hosts_report(mean, netperf, cost, fitted))
    return summary


def gain_starts(mean: pd.DataFrame, pairs: int) -> int | None:
    """The smallest token at which two channels carry at least 10% more than one (base variant)."""
    rows = mean[(mean["variant"] == "base") & (mean["pairs"] == pairs)]
    pivot = rows.pivot(index="token_bytes", columns="channels", values="mbytes_one_way")
    gaining = pivot.index[pivot[2] >= 1.1 * pivot[1]]
    return int(gaining.min()) if len(gaining) else None


def judged(mean: pd.DataFrame, netperf: pd.DataFrame, cost: float) -> list[verdicts.Verdict]:
    """Fig. 5's figures and words with ideal machines, and experiment E (:data:`HOSTS`) where they differ."""
    base = mean[mean["variant"] == "base"]
    peak = {n: base[base["channels"] == n]["mbytes_one_way"].max() for n in (1, 2)}
    most, small = int(base["pairs"].max()), int(base["token_bytes"].min())
    table = mean.set_index(["variant", "pairs", "token_bytes", "channels"])["mbytes_one_way"]
    ratio = {v: table[(v, most, small, 1)] / table[(v, 1, small, 1)] for v in ("base", HOSTS)}
    e = f"E (both machines' CPUs at {cost:.2f} µs a frame, fitted to the one-channel peak)"
    fit = netperf[netperf["machine"] == "fitted"].set_index("setup")
    hosts = mean[mean["variant"] == HOSTS]
    peak_e = {n: hosts[hosts["channels"] == n]["mbytes_one_way"].max() for n in (1, 2)}
    why = {
        1: f"{e} is fitted to this figure, so it cannot explain it; its checks below rule a per-frame cost out "
        "as the bound",
        2: f"{e} gives {peak_e[2]:.1f} MB/s: it bounds two channels as it bounds one",
    }
    rows = []
    for n, paper in PAPER_PEAK.items():
        rows.append(
            verdicts.judge(
                f"Fig. 5 and its text: the peak, {n} channel{'s' if n > 1 else ''}",
                as_printed(paper),
                f"{peak[n]:.1f} MB/s (ideal machines)",
                (paper, peak[n]),
                TOLERANCE,
                why[n],
            )
        )
    paper_ratio = PAPER_PEAK[2] / PAPER_PEAK[1]
    rows.append(
        verdicts.judge(
            "Fig. 5's text: two channels' peak against one's",
            f"{paper_ratio:.2f}× ({PAPER_PEAK[2]} against {PAPER_PEAK[1]})",
            f"{peak[2] / peak[1]:.2f}× (ideal machines)",
            (paper_ratio, peak[2] / peak[1]),
            TOLERANCE,
            "not explained: each client's answers return on the one port the switch's hash gives it (the per-run "
            "ranges of the tokens' table show the draws)",
        )
    )
    gain = gain_starts(mean, most)
    about = gain is not None and PAPER_GAIN_ABOVE / 2 <= gain <= 2 * PAPER_GAIN_ABOVE
    rows.append(
        verdicts.Verdict(
            f"Fig. 5's text: two channels gain (≥ 10%) above about {PAPER_GAIN_ABOVE} B",
            f"about {PAPER_GAIN_ABOVE} B",
            f"{gain} B with {most} pairs, {gain_starts(mean, 1)} B with 1 pair (ideal machines)",
            verdicts.MATCHES if about else verdicts.NOT_REPRODUCED,
            f"within one token size (a factor 2) of {PAPER_GAIN_ABOVE} B with {most} pairs, the paper's most",
        )
    )
    flat = flat_from(mean, HOSTS, small)
    ran = ", ".join(str(p) for p in sorted(hosts["pairs"].unique()))
    rows.append(
        verdicts.Verdict(
            f"Fig. 5's text: throughput insensitive to the number of pairs (1 to {most}), {small} B tokens",
            '"insensitive"',
            f"ideal machines: {most} pairs carry {ratio['base']:.1f}× one pair; E: {ratio[HOSTS]:.1f}× (pairs run: {ran})",
            verdicts.first_holding(lambda variant: flat_from(mean, variant, small) <= 2, "base", [HOSTS])[0],
            f"{e}: within {FLAT:.0%} of {most} pairs' from {flat} pairs on; one pair leaves each CPU idle while the "
            "other works, so it carries less (the paper's figure shows no such step)",
        )
    )
    loads = ", ".join(f"{s} {fit.loc[s, 'server_cpu']:.0%}" for s in fit.index)
    rows.append(
        verdicts.Verdict(
            "Table 1: the server's CPU load under Netperf, the same with one NIC and two (the check of E on "
            "what it was not fitted to)",
            f"{PAPER_CPU_LOAD:.0%} (one NIC), {PAPER_CPU_LOAD:.0%} (two NICs)",
            f"{e}: {loads}",
            verdicts.MATCHES
            if all(verdicts.within(PAPER_CPU_LOAD, c, TOLERANCE) == verdicts.MATCHES for c in fit["server_cpu"])
            else verdicts.NOT_REPRODUCED,
            f"tolerance ±{TOLERANCE:.0%} on each; E rules a per-frame cost out: a cost that grows with the frames "
            f"cannot give one load at {NETPERF_ONE:.0f} and at {NETPERF_TWO:.0f} Mbit/s; a per-token (per-write) cost is not run: one CPU's cost per token would bound two "
            "channels as one, as E's per-frame cost does",
        )
    )
    return rows


def report(mean: pd.DataFrame, quick: bool, judged_text: str) -> str:
    """summary.md: the verdicts, the paper's figures beside ours, and why they differ."""
    table = mean.set_index(["variant", "pairs", "token_bytes", "channels"])

    def at(variant: str, pairs: int, token: int, channels: int) -> pd.Series:
        return table.loc[(variant, pairs, token, channels)]

    base = mean[mean["variant"] == "base"]
    tokens = sorted(base["token_bytes"].unique())
    most = int(base["pairs"].max())
    parts = ["# elt-tokens: seed 001, Fig. 5 — token exchange over one or two channels\n", __doc__.split("\n\n", 1)[1]]
    parts.append(f"{elt_aft.ERA}\n")
    if quick:
        parts.append("*Quick size: 5 token sizes, 1 and 6 pairs, 30 exchanges, 2 replications.*\n")
    parts.append(judged_text)
    parts += [
        "## Tokens, MB/s one way (mean over replications; their range where the placement varies)\n",
        f"| token bytes | 1 pair, 1 ch | 1 pair, 2 ch | {most} pairs, 1 ch | {most} pairs, 2 ch "
        "| exchange RTT 1 pair, 1 ch (ms) | nodelay, 1 pair, 2 ch | delay 200 µs, 1 pair, 2 ch |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]

    def cell(r: pd.Series) -> str:
        spread = r.mbytes_one_way_max - r.mbytes_one_way_min
        return f"{r.mbytes_one_way:.2f}" + (
            f" ({r.mbytes_one_way_min:.2f}–{r.mbytes_one_way_max:.2f})" if spread else ""
        )

    for token in tokens:
        parts.append(
            f"| {token} | {cell(at('base', 1, token, 1))} | {cell(at('base', 1, token, 2))} | "
            f"{cell(at('base', most, token, 1))} | {cell(at('base', most, token, 2))} | "
            f"{at('base', 1, token, 1).exchange_rtt_mean_ms:.3f} | {cell(at('nodelay', 1, token, 2))} | "
            f"{cell(at('delay 200 µs', 1, token, 2))} |"
        )
    peak = {n: base[base["channels"] == n]["mbytes_one_way"].max() for n in (1, 2)}
    gain_one, gain_most = gain_starts(mean, 1), gain_starts(mean, most)
    nodelay = mean[mean["variant"] == "nodelay"].set_index(["pairs", "token_bytes", "channels"])["mbytes_one_way"]
    same = base[base["pairs"].isin(nodelay.index.get_level_values(0))].set_index(["pairs", "token_bytes", "channels"])
    nagle_effect = ((nodelay - same["mbytes_one_way"]).abs() / same["mbytes_one_way"]).max()
    small, large = tokens[0], tokens[-1]
    slow = at("delay 200 µs", 1, small, 1).mbytes_one_way / at("base", 1, small, 1).mbytes_one_way
    pure = at("base", 1, small, 1).pure_acks
    parts += [
        "\n## Paper vs bondsim\n",
        f'The paper\'s figures as printed, in "{PAPER_UNIT}": by its own arithmetic (8.9 is 71.2% of 12.5, and 12.5 '
        "is 100 Mbit/s in megabytes a second) they are MB/s, the unit bondsim's column reports: the printed unit "
        "changed, the values compared as they are.\n",
        "| figure | paper | bondsim |",
        "| --- | --- | --- |",
        f"| peak, one channel | {as_printed(PAPER_PEAK[1])}, 71.2% of 12.5 | {peak[1]:.1f} MB/s "
        f"({peak[1] / (LINK_MBPS / 8):.1%} of 12.5; the payload ceiling is {PAYLOAD_MBYTES:.2f}) |",
        f"| peak, two channels | {as_printed(PAPER_PEAK[2])}, 65.6% of 25 | {peak[2]:.1f} MB/s "
        f"({peak[2] / (LINK_MBPS / 4):.1%} of 25) |",
        f"| two channels gain (≥ 10%) from | about {PAPER_GAIN_ABOVE} B | {gain_one} B with 1 pair, {gain_most} B "
        f"with {most} pairs |",
        f'| number of pairs | "insensitive" | at {small} B, {most} pairs carry '
        f"{at('base', most, small, 1).mbytes_one_way / at('base', 1, small, 1).mbytes_one_way:.1f}× one pair |",
        f"| TCP_NODELAY | not stated | changes no figure by more than {nagle_effect:.1%} |",
        "\n## Why the figures differ\n",
        "* **Something beyond the wire bounds the paper's single channel.** Its own netperf test (Table 1) "
        f"moved {NETPERF_ONE:.1f} Mbit/s ({NETPERF_ONE / 8:.1f} MB/s) through one NIC, so the wire allowed more "
        f"than the {PAPER_PEAK[1]} MB/s of the "
        f"token test; with ideal machines {most} pairs of 8 KB tokens fill the link to {peak[1]:.1f} of the "
        f"{PAYLOAD_MBYTES:.2f} MB/s the headers leave. The experiment below gives both machines a CPU cost "
        f"per frame fitted to the {PAPER_PEAK[1]} MB/s, and rules it out as that bound.",
        "* **The number of pairs.** With ideal machines a small token is latency-bound: a pair waits one "
        f"round trip per exchange ({at('base', 1, small, 1).exchange_rtt_mean_ms * 1e3:.0f} µs at {small} B), "
        "so pairs add up until the link is full. With the fitted machines (below) the curves flatten once "
        "both CPUs are busy.",
        "* **Where two channels start to pay.** With one pair a token of one segment (≤ 1448 B) travels one "
        "link whatever the bond, so only tokens of several segments gain (their segments are striped over "
        "both links, the answer returns striped the other way only as far as the switch spreads clients). "
        f"With {most} pairs one link is already full at small tokens with ideal machines, so the gain starts "
        f"lower than the paper's ~{PAPER_GAIN_ABOVE} B.",
        f"* **Two channels reach {peak[2]:.1f} MB/s (the paper: {PAPER_PEAK[2]}), {peak[2] / peak[1]:.2f}× one "
        "channel, "
        "not 2×:** the server's tokens are striped, but each client's answers come back on the one port "
        "the switch's hash gives that client (ELT duplicates the MAC on both ports; we model the switch "
        "as a LAG-aware one that hashes per client). Pairs hashed onto the same port share it, which is "
        "what the replications (other client addresses) vary: the ranges in the table. The paper's "
        f"{PAPER_PEAK[2]} MB/s is {PAPER_PEAK[2] / PAPER_PEAK[1]:.2f}× its one channel.",
        "* **Nagle and delayed ACKs cost nothing here, in either stack.** Linux holds a sub-MSS segment "
        "only while an earlier sub-MSS segment is unacknowledged (`tcp_nagle_check` / "
        "`tcp_minshall_check`), and FreeBSD sends a write's last short segment when the connection was "
        "idle at the write (`tcp_output`: `idle`, `TF_NODELAY`). In a ping-pong the answer acknowledges "
        "the whole previous token before the next is written, so neither rule ever holds a token's tail: "
        f"TCP_NODELAY moves no figure by more than {nagle_effect:.1%}. The receiver's delayed ACK rides on "
        "the answer (Linux's ping-pong mode: `tcp_event_data_sent`, `inet_csk_enter_pingpong_mode`): at "
        f"{small} B tokens, one pair sends {pure:.0f} ACKs alone in a whole run (the first quick ACK and the "
        "FINs), and no exchange waits for the 40 ms timer. A 40 ms stall needs two writes per "
        "message (write-write-read), which this benchmark does not do.",
        f"* **The link delay (unstated) moves small tokens only:** at 200 µs instead of 50 µs one pair's "
        f"{small} B tokens run at {slow:.0%} of the rate (the round trip is longer); {large} B tokens, "
        "bound by serialisation, move much less.",
        "",
    ]
    return "\n".join(parts)


def flat_from(mean: pd.DataFrame, variant: str, token: int) -> int:
    """The fewest pairs that carry at least 95% of what the most pairs carry (one channel)."""
    rows = mean[(mean["variant"] == variant) & (mean["token_bytes"] == token) & (mean["channels"] == 1)]
    by = rows.set_index("pairs")["mbytes_one_way"].sort_index()
    return int(by.index[by >= (1 - FLAT) * by.iloc[-1]].min())


def hosts_report(mean: pd.DataFrame, netperf: pd.DataFrame, cost: float, fitted: float) -> str:
    """summary.md's experiment on the machines: the fit, and its checks on what it was not fitted to."""
    table = mean.set_index(["variant", "pairs", "token_bytes", "channels"])["mbytes_one_way"]
    hosts = mean[mean["variant"] == HOSTS]
    tokens, pairs = sorted(hosts["token_bytes"].unique()), sorted(hosts["pairs"].unique())
    small, most = tokens[0], pairs[-1]

    def peak(variant: str, channels: int) -> pd.Series:
        rows = mean[(mean["variant"] == variant) & (mean["channels"] == channels)]
        return rows.loc[rows["mbytes_one_way"].idxmax()]

    def ratio(variant: str) -> float:
        return table[(variant, most, small, 1)] / table[(variant, 1, small, 1)]

    net = netperf.set_index(["setup", "machine"])
    lines = [
        f"\n## The machines, fitted: {cost:.2f} µs a frame\n",
        f"Both ends' CPUs (`host.shared = true`, `[server_host]`), {cost:.2f} µs a frame received and a "
        f"frame sent: the cost at which {FIT_PAIRS} pairs over one channel peak, over the token sizes, "
        f"at the paper's {as_printed(PAPER_PEAK[1])} (**fitted**: {fitted:.2f}). Tokens, MB/s one way:\n",
        "| token bytes | "
        + " | ".join(f"{p} pair{'s' if p > 1 else ''}, {c} ch" for c in (1, 2) for p in pairs)
        + " |",
        "| ---: |" + " ---: |" * (2 * len(pairs)),
    ]
    for token in tokens:
        lines.append(
            f"| {token} | " + " | ".join(f"{table[(HOSTS, p, token, c)]:.3f}" for c in (1, 2) for p in pairs) + " |"
        )
    two, one = peak(HOSTS, 2), peak(HOSTS, 1)
    lines += [
        "\nChecked on what it was not fitted to:\n",
        "| figure | paper | ideal machines | fitted machines | verdict |",
        "| --- | --- | --- | --- | --- |",
        f"| peak, two channels | {as_printed(PAPER_PEAK[2])} (Fig. 5) | {peak('base', 2).mbytes_one_way:.1f} MB/s | "
        f"{two.mbytes_one_way:.1f} MB/s ({two.token_bytes} B tokens; one channel {one.mbytes_one_way:.1f} at "
        f"{one.token_bytes} B) | {verdicts.within(PAPER_PEAK[2], two.mbytes_one_way, TOLERANCE)} |",
        f'| {most} pairs against 1, {small} B tokens | "insensitive" (Fig. 5) | {ratio("base"):.1f}× | '
        f"{ratio(HOSTS):.1f}× (flat from {flat_from(mean, HOSTS, small)} pairs) | "
        + ("explained from that count on" if ratio(HOSTS) < 0.5 * ratio("base") else "not reproduced")
        + " |",
    ]
    for setup in ("one NIC", "two NICs"):
        ideal, fit = net.loc[(setup, "ideal")], net.loc[(setup, "fitted")]
        lines.append(
            f"| Netperf, {setup} (Table 1) | {fit.paper_mbps} Mbit/s, CPU {PAPER_CPU_LOAD:.0%} | "
            f"{ideal.goodput_mbps:.2f} Mbit/s | {fit.goodput_mbps:.2f} Mbit/s, server CPU {fit.server_cpu:.0%} | "
            f"throughput {verdicts.within(fit.paper_mbps, fit.goodput_mbps, TOLERANCE)}, "
            f"CPU load {verdicts.within(PAPER_CPU_LOAD, fit.server_cpu, TOLERANCE)} |"
        )
    fit_one = net.loc[("one NIC", "fitted")]
    lines += [
        "",
        "**What the experiment shows.** A CPU cost per frame on both machines, fitted to one channel's "
        f"{PAPER_PEAK[1]} MB/s, makes the pairs' curves flat from {flat_from(mean, HOSTS, small)} pairs on "
        "(one pair leaves each CPU idle while the other works; more keep both busy), but it bounds two "
        f"channels as it bounds one ({two.mbytes_one_way:.1f} MB/s against the paper's {PAPER_PEAK[2]}), and "
        f"it puts the server's CPU at {fit_one.server_cpu:.0%} under Netperf through one NIC where the paper "
        f"measured {PAPER_CPU_LOAD:.0%}, the same {PAPER_CPU_LOAD:.0%} it measured with twice the traffic. A "
        f"cost that grows with the frames cannot give one load at {NETPERF_ONE:.0f} and at {NETPERF_TWO:.0f} "
        "Mbit/s, so a per-frame CPU "
        "cost is ruled out as the bound of the token test. Per-token work (system calls, process "
        "wake-ups: a cost per write and read, not per frame) is not run here, and a CPU's time per token "
        "would meet the same check: a token costs the same work over one channel or two, so a CPU that bounds "
        f"one channel at {PAPER_PEAK[1]} MB/s bounds two there too, as this fit does, against the paper's "
        f"{PAPER_PEAK[2]}. What bounds the paper's channels scales with the channels "
        f"({PAPER_PEAK[2] / PAPER_PEAK[1]:.2f}×) and spares Netperf's stream ({NETPERF_ONE:.1f} "
        "Mbit/s through one NIC): no cost of one CPU does both. The model's cost per application write (`[server_host] write_us`, docs/hosts.md) costs the "
        "writes of a stream of messages (TCP's `sender.message_bytes`, the requests workload), and the model "
        "refuses `message_bytes` with a ping-pong, whose writes are its tokens, so `write_us` cannot be set "
        "for this exchange; a read's time is left out (only its copy, `rx_byte_ns`).",
    ]
    return "\n".join(lines) + "\n"
