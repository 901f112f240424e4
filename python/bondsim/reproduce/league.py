"""A league table: every bonding mode and scheduler on the same scenarios,
ranked by goodput and by out-of-order share.

Scenarios (all from ``scenarios/league.toml``: 16 bulk transfers of 5 MB):

* ``homogeneous``: 4 × 1 Gbit/s;
* ``one-slowed``: the same with link 1 slowed 2.5× (400 Mbit/s);
* ``heterogeneous``: 2 × 1 Gbit/s + 1 × 100 Mbit/s;
* ``jittery``: 4 × 1 Gbit/s with exponential delay jitter of mean 100 µs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from bondsim import _core, plots
from bondsim.scenario import apply_overrides, find, load_toml
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


def schedulers() -> list[str]:
    """Every registered scheduler, by canonical name."""
    return [entry["name"] for entry in json.loads(_core.schedulers())]


def run_league(*, progress: bool = True) -> pd.DataFrame:
    """One row per (scenario, scheduler) with its figures and ranks."""
    base = load_toml(find("league"))
    docs, labels = [], []
    for scenario, overrides in VARIANTS.items():
        for mode in schedulers():
            docs.append(apply_overrides(base, [*overrides, f"bond.mode={mode}"]))
            labels.append({"scenario": scenario, "mode": mode})
    rows = []
    for label, result in zip(labels, run_many(docs, labels=labels, name="league", progress=progress), strict=True):
        s = result.summary
        rows.append(
            {
                **label,
                "goodput_mbps": s["goodput_bps"] / 1e6,
                "utilisation": s["utilisation"],
                "ooo_fraction": s["ooo_fraction"],
                "delay_p99_us": s["delay_p99_us"],
                "jain_index": s["jain_index"],
                "dropped": s["dropped"],
            }
        )
    table = pd.DataFrame(rows)
    by = table.groupby("scenario", sort=False)
    table["rank_goodput"] = by["goodput_mbps"].rank(ascending=False, method="min").astype(int)
    table["rank_ooo"] = by["ooo_fraction"].rank(ascending=True, method="min").astype(int)
    return table


def reproduce(out: str | Path, *, progress: bool = True) -> Path:
    """Writes ``league.csv``, ``league.png`` and ``summary.md`` (one ranked table per scenario)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    table = run_league(progress=progress)
    table.to_csv(out / "league.csv", index=False)
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
            "out of order | p99 delay µs | Jain |",
            "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for r in rows.itertuples():
            parts.append(
                f"| {r.rank_goodput} | {r.rank_ooo} | {r.mode} | {r.goodput_mbps:.0f} | {r.utilisation:.3f} | "
                f"{r.ooo_fraction:.2%} | {r.delay_p99_us:.0f} | {r.jain_index:.3f} |"
            )
    both = table.assign(score=table["rank_goodput"] + table["rank_ooo"]).groupby("mode")["score"].mean().sort_values()
    parts += [
        "\n## Overall\n",
        "Mean of (goodput rank + order rank) over the four scenarios, best first:\n",
        ", ".join(f"{mode} ({score:.1f})" for mode, score in both.items()),
        "",
    ]
    summary = out / "summary.md"
    summary.write_text("\n".join(parts))
    return summary
