"""A league table: every bonding mode and scheduler on the same scenarios,
ranked by goodput and by out-of-order share.

Scenarios (all from the shipped scenario ``league``: 16 bulk transfers of 5 MB):

* ``homogeneous``: 4 × 1 Gbit/s;
* ``one-slowed``: the same with link 1 slowed 2.5× (400 Mbit/s);
* ``heterogeneous``: 2 × 1 Gbit/s + 1 × 100 Mbit/s;
* ``jittery``: 4 × 1 Gbit/s with exponential delay jitter of mean 100 µs.

Each scheduler runs twice per scenario: with the window sender (the
out-of-order figures) and with TCP (today's Linux, `sender.kernel = "current"`: CUBIC, SACK,
RACK-TLP, delayed ACKs), which prices the reordering in goodput and completion time.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from bondsim import _core, atomic, plots
from bondsim.scenario import apply_overrides, load_toml, shipped
from bondsim.sweeps import run_many

VARIANTS: dict[str, list[str]] = {
    "homogeneous": [],
    "one-slowed": [
        "links=[{rate_mbps = 1000, delay_us = 10}, {rate_mbps = 1000, delay_us = 10, slowdown = 2.5},"
        " {count = 2, rate_mbps = 1000, delay_us = 10}]"
    ],
    "heterogeneous": ["links=[{count = 2, rate_mbps = 1000, delay_us = 10}, {rate_mbps = 100, delay_us = 10}]"],
    "jittery": ['links.0.jitter={kind = "exponential", mean_us = 100.0}'],
}


#: The override that turns the league's transfers into TCP connections.
TCP = 'sender={kind = "tcp"}'


def schedulers() -> list[str]:
    """Every registered scheduler, by canonical name."""
    return [entry["name"] for entry in json.loads(_core.schedulers())]


def run_league(*, progress: bool = True) -> pd.DataFrame:
    """One row per (scenario, scheduler) with its figures and ranks."""
    base = load_toml(shipped("league"))
    docs, labels = [], []
    for scenario, overrides in VARIANTS.items():
        for mode in schedulers():
            for transport, extra in (("window", []), ("tcp", [TCP])):
                docs.append(apply_overrides(base, [*overrides, *extra, f"bond.mode={mode}"]))
                labels.append({"scenario": scenario, "mode": mode, "transport": transport})
    results = {}
    for label, result in zip(labels, run_many(docs, labels=labels, name="league", progress=progress), strict=True):
        results[(label["scenario"], label["mode"], label["transport"])] = result.summary
    rows = []
    for scenario in VARIANTS:
        for mode in schedulers():
            s, t = results[(scenario, mode, "window")], results[(scenario, mode, "tcp")]
            rows.append(
                {
                    "scenario": scenario,
                    "mode": mode,
                    "goodput_mbps": s["goodput_bps"] / 1e6,
                    "utilisation": s["utilisation"],
                    "ooo_fraction": s["ooo_fraction"],
                    "delay_p99_us": s["delay_p99_us"],
                    "jain_index": s["jain_index"],
                    "dropped": s["dropped"],
                    "tcp_goodput_mbps": t["goodput_bps"] / 1e6,
                    "tcp_fct_mean_ms": t["fct_mean_s"] * 1e3,
                    "tcp_fct_p99_ms": t["fct_p99_s"] * 1e3,
                    "tcp_retransmits": t["tcp_retransmits"],
                    "tcp_spurious": t["tcp_spurious_retransmits"],
                }
            )
    table = pd.DataFrame(rows)
    by = table.groupby("scenario", sort=False)
    table["rank_goodput"] = by["goodput_mbps"].rank(ascending=False, method="min").astype(int)
    table["rank_ooo"] = by["ooo_fraction"].rank(ascending=True, method="min").astype(int)
    return table


@atomic.whole
def reproduce(out: str | Path, *, progress: bool = True, quick: bool = False) -> Path:
    """Writes ``league.csv``, ``league.png`` and ``summary.md`` (one ranked table per scenario).

    ``quick`` runs the same: this reproduction already takes seconds.
    """
    out = Path(out)
    table = run_league(progress=progress)
    atomic.write_csv(table, out / "league.csv")
    plots.scatter(
        table,
        "goodput_mbps",
        "ooo_fraction",
        "mode",
        "scenario",
        out / "league.png",
        title="Every scheduler: goodput against out-of-order share",
        xlabel="goodput (Mbit/s)",
        ylabel="out-of-order share",
        logy=True,
    )
    parts = ["# League table\n", __doc__.split("\n\n", 1)[1].strip(), ""]
    for scenario in VARIANTS:
        rows = table[table["scenario"] == scenario].sort_values(["rank_goodput", "rank_ooo"])
        parts += [
            f"\n## {scenario}\n",
            "| rank (goodput) | rank (order) | mode | goodput Mbit/s | utilisation | "
            "out of order | p99 delay µs | Jain | TCP goodput Mbit/s | TCP completion ms (mean / p99) | "
            "TCP retransmissions (spurious) |",
            "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for r in rows.itertuples():
            parts.append(
                f"| {r.rank_goodput} | {r.rank_ooo} | {r.mode} | {r.goodput_mbps:.0f} | {r.utilisation:.3f} | "
                f"{r.ooo_fraction:.2%} | {r.delay_p99_us:.0f} | {r.jain_index:.3f} | {r.tcp_goodput_mbps:.0f} | "
                f"{r.tcp_fct_mean_ms:.1f} / {r.tcp_fct_p99_ms:.1f} | {r.tcp_retransmits} ({r.tcp_spurious}) |"
            )
    both = table.assign(score=table["rank_goodput"] + table["rank_ooo"]).groupby("mode")["score"].mean().sort_values()
    parts += [
        "\n## Overall\n",
        "Mean of (goodput rank + order rank) over the four scenarios, best first:\n",
        ", ".join(f"{mode} ({score:.1f})" for mode, score in both.items()),
        "",
    ]
    summary = out / "summary.md"
    atomic.write_text(summary, "\n".join(parts))
    return summary
