"""Bond or MPTCP? Every Linux bonding mode (one TCP connection per request, striped or hashed by the
bond below TCP) against every MPTCP packet scheduler (one MPTCP connection per request, a TCP subflow
per link) on the same two links, for a bulk transfer and for short web-like requests.

The links (:data:`LINKS`): equal (10 + 10 Mbit/s), 2:1 (10 + 5), 10:1 (10 + 1), a WAN pair (10 + 10
Mbit/s, 10 ms against 40 ms one way), one lossy link (10 + 10, the second losing 1% of its frames),
and a link that fails and returns (10 + 10, the first down from 1 s to 2 s, the instant jittered over
100 ms by the seed); 2 ms one way unless said. The bond watches its links with miimon 100 ms. TCP is
today's Linux (`sender.kernel = "current"`: CUBIC, SACK, RACK-TLP); each MPTCP subflow is the same TCP, uncoupled, as Linux runs
it. MPTCP's `default` is Linux 6.18's own scheduler; the others (`minrtt`, `roundrobin`,
`redundant`, `blest`, `ecf`) are the out-of-tree multipath-tcp.org kernel's (`bondsim schedulers`).

The workloads: *bulk*, one download of 8 MB; *web*, 200 downloads of SPECweb99-sized files (0.1 KB
to 900 KB, Zipf popularity) by 8 clients, arriving as a Poisson process of 40 a second (about 4.7
Mbit/s). Figures: goodput (bulk: the file over its completion time, what the application sees;
web: all that was delivered over the run), completion time (mean and 99th percentile), TCP
retransmissions (all subflows'), the share of segments TCP received out of order (what it absorbs),
MPTCP's mean wait in its connection-level reordering queue, and with the failing link the
application's longest stall (the `failovers` table, for both; a dash where no flow stalled).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bondsim import atomic, plots
from bondsim.stats import CI_NOTE, MIN_INTERVAL_RUNS, cell, ci_text, mean_ci
from bondsim.sweeps import run_many

#: Linux's bonding modes (their default hash, layer2, for balance-xor and 802.3ad).
BOND_MODES = ("balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad", "balance-tlb", "balance-alb")
#: MPTCP's packet schedulers: Linux's, then the out-of-tree kernel's.
MPTCP_SCHEDULERS = ("default", "minrtt", "roundrobin", "redundant", "blest", "ecf")


def _link(rate: float, delay_ms: float = 2.0, **extra) -> dict:
    return {"rate_mbps": rate, "delay_us": delay_ms * 1000.0, **extra}


#: Link set -> its two links (a failure's instants are scaled by :func:`scenario`).
LINKS: dict[str, list[dict]] = {
    "equal": [_link(10), _link(10)],
    "2:1": [_link(10), _link(5)],
    "10:1": [_link(10), _link(1)],
    "wan 10/40 ms": [_link(10, 10.0), _link(10, 40.0)],
    "lossy 1%": [_link(10), _link(10, loss=0.01)],
    "fails 1-2 s": [_link(10, failures=[{"down_s": 1.0, "up_s": 2.0, "jitter_ms": 100.0}]), _link(10)],
}
#: Workload -> its table.
WORKLOADS: dict[str, dict] = {
    "bulk": {"clients": 1, "requests": 1, "file_size": {"kind": "fixed", "bytes": 8_000_000}},
    "web": {
        "clients": 8,
        "requests": 200,
        "arrivals": {"kind": "poisson", "rate_per_s": 40.0},
        "file_size": {"kind": "zipfset"},
    },
}
#: The quick size (tests): one seed, a 3 MB bulk transfer, 40 web requests, the failure at 0.4-0.8 s.
QUICK_BULK_BYTES, QUICK_REQUESTS, QUICK_SCALE = 3_000_000, 40, 0.4


def contenders() -> list[tuple[str, str]]:
    """(family, name) of every contender: the bond modes, then the MPTCP schedulers."""
    return [("bond", m) for m in BOND_MODES] + [("mptcp", s) for s in MPTCP_SCHEDULERS]


def scenario(family: str, name: str, links: str, workload: str, *, seed: int, quick: bool) -> dict:
    """One run: ``name`` (a bond mode or an MPTCP scheduler) over link set ``links`` under ``workload``."""
    scale = QUICK_SCALE if quick else 1.0
    link_docs = [dict(link) for link in LINKS[links]]
    for link in link_docs:
        if "failures" in link:
            link["failures"] = [
                {**f, "down_s": f["down_s"] * scale, "up_s": f["up_s"] * scale, "jitter_ms": f["jitter_ms"] * scale}
                for f in link["failures"]
            ]
    work = dict(WORKLOADS[workload])
    if quick and workload == "bulk":
        work["file_size"] = {"kind": "fixed", "bytes": QUICK_BULK_BYTES}
    if quick and workload == "web":
        work["requests"] = QUICK_REQUESTS
    sender = {"kind": "tcp"} if family == "bond" else {"kind": "mptcp", "mptcp_scheduler": name}
    return {
        "name": "bond_vs_mptcp",
        "seed": seed,
        "workload": work,
        "sender": sender,
        "bond": {"mode": name if family == "bond" else "balance-rr", "miimon": 100.0},
        "links": link_docs,
    }


def row(label: dict, result, doc: dict) -> dict:
    """The figures of one run of ``doc``."""
    s = result.summary
    f = result.failovers
    stall = f["tcp_stall_ms"].max() if f is not None and len(f) else float("nan")
    mptcp = label["family"] == "mptcp"
    return {
        **label,
        "goodput_mbps": (
            doc["workload"]["file_size"]["bytes"] * 8 / s["fct_mean_s"] / 1e6
            if label["workload"] == "bulk"
            else s["goodput_bps"] / 1e6
        ),
        "fct_mean_ms": s["fct_mean_s"] * 1e3,
        "fct_p99_ms": s["fct_p99_s"] * 1e3,
        "retransmits": s["tcp_retransmits"],
        "tcp_ooo_share": s["wire_ooo_fraction"],
        "mptcp_wait_ms": s["mptcp_ofo_delay_mean_ms"] if mptcp else float("nan"),
        "stall_ms": stall,
        "complete": s["flows_complete"] == s["requests"],
    }


def run(*, quick: bool, progress: bool) -> pd.DataFrame:
    """One row per run: link set, workload, contender, seed and its figures."""
    seeds = 1 if quick else MIN_INTERVAL_RUNS
    docs, labels = [], []
    for links in LINKS:
        for workload in WORKLOADS:
            for family, name in contenders():
                for seed in range(1, seeds + 1):
                    docs.append(scenario(family, name, links, workload, seed=seed, quick=quick))
                    labels.append({"links": links, "workload": workload, "family": family, "name": name, "seed": seed})
    results = run_many(docs, labels=labels, name="bond-vs-mptcp", progress=progress)
    return pd.DataFrame([row(label, result, doc) for label, result, doc in zip(labels, results, docs, strict=True)])


#: Per workload: the figure a contender is ranked by, and whether more is better.
RANK_BY = {"bulk": ("goodput_mbps", False), "web": ("fct_p99_ms", True)}


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """Means over the seeds (with the ranking figure's 95% interval), ranked within each link set and
    workload."""
    parts = []
    for workload, (value, ascending) in RANK_BY.items():
        mean = mean_ci(
            runs[runs["workload"] == workload],
            ["links", "workload", "family", "name"],
            value,
            means=tuple(
                c
                for c in (
                    "goodput_mbps",
                    "fct_mean_ms",
                    "fct_p99_ms",
                    "retransmits",
                    "tcp_ooo_share",
                    "mptcp_wait_ms",
                    "stall_ms",
                )
                if c != value
            ),
        )
        mean["rank"] = mean.groupby("links")[value].rank(ascending=ascending, method="min").astype(int)
        parts.append(mean)
    return pd.concat(parts, ignore_index=True)


@atomic.whole
def reproduce(out: str | Path, *, progress: bool = True, quick: bool = False) -> Path:
    """Writes ``runs.csv`` (every run), ``mean.csv`` (means, intervals, ranks), ``bulk.png`` and
    ``summary.md``."""
    out = Path(out)
    runs = run(quick=quick, progress=progress)
    atomic.write_csv(runs, out / "runs.csv")
    mean = summarise(runs)
    atomic.write_csv(mean, out / "mean.csv")
    bulk = mean[mean["workload"] == "bulk"].assign(contender=lambda d: d["family"] + ": " + d["name"])
    plots.bars(
        bulk,
        "contender",
        "goodput_mbps",
        "links",
        out / "bulk.png",
        title="One 8 MB download: every bond mode (TCP) against every MPTCP scheduler",
        xlabel="",
        ylabel="Mbit/s",
        rotate=True,
    )
    summary = out / "summary.md"
    atomic.write_text(summary, report(mean, quick))
    return summary


def winners(mean: pd.DataFrame) -> list[str]:
    """Per link set and workload: the best bond mode against the best MPTCP scheduler, by the ranking
    figure, and which wins (a tie when their intervals overlap)."""
    lines = []
    for (links, workload), rows in mean.groupby(["links", "workload"], sort=False):
        value, ascending = RANK_BY[workload]
        best = {
            family: group.sort_values(value, ascending=ascending).iloc[0] for family, group in rows.groupby("family")
        }
        b, m = best["bond"], best["mptcp"]
        overlap = max(b[f"{value}_lo"], m[f"{value}_lo"]) <= min(b[f"{value}_hi"], m[f"{value}_hi"])
        if b[value] == m[value]:
            verdict = "tie"
        elif overlap:
            verdict = "tie (intervals overlap)"
        else:
            verdict = "bond" if (b[value] < m[value]) == ascending else "MPTCP"
        unit = "Mbit/s" if value == "goodput_mbps" else "ms (99th percentile completion)"
        lines.append(
            f"| {links} | {workload} | {b['name']} {b[value]:.2f} | {m['name']} {m[value]:.2f} | {unit} | {verdict} |"
        )
    return lines


def report(mean: pd.DataFrame, quick: bool) -> str:
    parts = ["# bond-vs-mptcp: every bonding mode against every MPTCP scheduler\n", __doc__.strip()]
    if quick:
        parts.append(f"\n*Quick size: one seed, a {QUICK_BULK_BYTES / 1e6:g} MB transfer, {QUICK_REQUESTS} requests.*")
    parts += [
        "\n## Who wins where\n",
        "The best bond mode against the best MPTCP scheduler: bulk by goodput, web by the 99th percentile of "
        "completion times.\n",
        "| links | workload | best bond mode | best MPTCP scheduler | unit | winner |",
        "| --- | --- | --- | --- | --- | --- |",
        *winners(mean),
    ]
    for links in LINKS:
        parts.append(f"\n## {links}\n")
        for workload, (value, _) in RANK_BY.items():
            rows = mean[(mean["links"] == links) & (mean["workload"] == workload)].sort_values("rank")
            parts += [
                f"**{workload}**\n",
                "| rank | family | contender | goodput Mbit/s | completion ms (mean / p99) | retransmissions | "
                "TCP out of order | MPTCP wait ms | longest stall ms |",
                "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
            ]
            for r in rows.itertuples():
                goodput = ci_text(r, "goodput_mbps", ".2f") if value == "goodput_mbps" else f"{r.goodput_mbps:.2f}"
                p99 = ci_text(r, "fct_p99_ms", ".0f") if value == "fct_p99_ms" else f"{r.fct_p99_ms:.0f}"
                parts.append(
                    f"| {r.rank} | {r.family} | {r.name} | {goodput} | {r.fct_mean_ms:.0f} / {p99} | "
                    f"{r.retransmits:.0f} | {r.tcp_ooo_share:.1%} | {cell(r.mptcp_wait_ms, '.1f')} | {cell(r.stall_ms, '.0f')} |"
                )
            parts.append("")
    parts += [reading(mean), CI_NOTE]
    return "\n".join(parts)


def reading(mean: pd.DataFrame) -> str:
    """Why the tables come out as they do: each point read off the full-size tables (docs/mptcp.md, "Bond
    or MPTCP"), the default scheduler's cost at 10:1 from these runs."""
    at = mean[(mean["links"] == "10:1") & (mean["workload"] == "bulk")].set_index("name")
    default, minrtt = at.loc["default"], at.loc["minrtt"]
    return READING.format(
        wait_default=default["mptcp_wait_ms"],
        wait_minrtt=minrtt["mptcp_wait_ms"],
        goodput_default=default["goodput_mbps"],
        goodput_minrtt=minrtt["goodput_mbps"],
    )


#: :func:`reading`'s text.
READING = """
## Reading the tables

* One TCP connection over balance-rr uses two equal links at no cost (the best bulk goodput there),
  but a slower second link reorders its segments: at 2:1 it gets one link's goodput, at 10:1 far less
  than one link (TCP takes the late segments for losses: retransmissions, half its segments out of
  order). MPTCP sends each subflow's segments over one link, in order; the connection level absorbs
  the links' difference in its reordering queue (the MPTCP wait), so it keeps most of both links.
* The hashing modes (balance-xor, 802.3ad: layer2, one MAC pair), active-backup, balance-tlb and
  balance-alb put one connection on one link: no reordering, one link's goodput (balance-xor on the
  slow link for some seeds). broadcast sends every segment on both links: one link's worth at best.
* With Linux's default MPTCP scheduler the connection waits longer for the slower link's data than
  with minRTT, and gets less: at 10:1 its MPTCP wait is {wait_default:.0f} ms against {wait_minrtt:.0f},
  its goodput {goodput_default:.2f} Mbit/s against {goodput_minrtt:.2f}. `redundant` sends everything on
  both subflows and carries one link's worth.
* For short web requests most differences lie within the seeds' spread, except with a failing link.
* When link 0 fails, the bond's monitor (miimon) takes it out within 100 ms and balance-rr's
  connections recover at once by retransmission; a bulk MPTCP transfer waits for its subflow's
  retransmission timeout before the connection level sends that data again on the other subflow. A
  new MPTCP connection starts with its first subflow on link 0 (the client's first address): while that
  link is down its SYN is lost and sent again only after TCP's initial timeout (1 s), so every web
  request arriving during the failure waits over a second.
"""
