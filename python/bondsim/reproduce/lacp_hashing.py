"""Seed 003, Fig. 7: how 802.3ad's layer3+4 hash spreads flows over two links.

Tran-Viet et al. ran 4 flows (and 16 flows) with random ports over a
two-link 802.3ad bond 100 times each and counted flows per link: "the number
of flows on a link follows a binomial distribution", and all 4 flows landed
on one link in 10 of 100 runs (never with 16 flows). We run the
shipped scenario ``lacp_flows`` with 100 seeds (fresh random ephemeral ports
each time), count the flows on each link from each flow's link, and set the
distribution beside Binomial(n, 1/2).
"""

from __future__ import annotations

from math import comb
from pathlib import Path

import pandas as pd

from bondsim import atomic, plots
from bondsim.scenario import apply_overrides, load_toml, shipped
from bondsim.stats import share_ci
from bondsim.sweeps import run_many

RUNS = 100
FLOWS = (4, 16)
#: What the paper reports: runs (of 100) with every flow on one link.
PAPER_ALL_ON_ONE = {4: 10, 16: 0}


def binomial(n: int, k: int) -> float:
    """P(k of n flows on link 0) when each flow picks a link with probability 1/2."""
    return comb(n, k) / 2**n


def flows_on_link0(flows: int, *, progress: bool = True) -> list[int]:
    """Flows that took link 0, one count per seed."""
    base = load_toml(shipped("lacp_flows"))
    docs = [apply_overrides(base, [f"workload.requests={flows}", f"seed={s}"]) for s in range(1, RUNS + 1)]
    labels = [{"flows": flows, "seed": s} for s in range(1, RUNS + 1)]
    results = run_many(docs, labels=labels, name=f"lacp-hashing/{flows}-flows", progress=progress)
    return [int((r.requests["last_link"] == 0).sum()) for r in results]


@atomic.whole
def reproduce(out: str | Path, *, progress: bool = True, quick: bool = False) -> Path:
    """Writes the flows-per-link distributions (CSV + PNG) and ``summary.md``.

    ``quick`` runs the same: this reproduction already takes seconds.
    """
    out = Path(out)
    rows, lines, spread = [], [], {}
    for n in FLOWS:
        counts = flows_on_link0(n, progress=progress)
        shares = share_ci(counts, list(range(n + 1)), "on_link0", "share_of_runs")
        rows += shares.assign(flows=n, binomial=[binomial(n, k) for k in range(n + 1)]).to_dict("records")
        one_link = sum(1 for c in counts if c in (0, n))
        p = 2 * binomial(n, n)
        expected = p * RUNS
        sd = (RUNS * p * (1 - p)) ** 0.5
        spread[n] = ((one_link - expected) / sd, (PAPER_ALL_ON_ONE[n] - expected) / sd, sd)
        lines.append(f"| {n} | {PAPER_ALL_ON_ONE[n]} of 100 | {one_link} of {RUNS} | {expected:.3g} of {RUNS} |")
    table = pd.DataFrame(rows)
    atomic.write_csv(table, out / "lacp_flows_per_link.csv")
    for n in FLOWS:
        plots.against(
            table[table["flows"] == n],
            "on_link0",
            "share_of_runs",
            "binomial",
            (f"bondsim, {RUNS} seeds (95% interval)", "Binomial(n, 1/2)"),
            out / f"lacp_{n}_flows.png",
            title=f"802.3ad layer3+4, {n} flows on 2 links",
            xlabel="flows on link 0",
            ylabel="share of runs",
        )
    z_ours, z_paper, sd = spread[4]
    summary = out / "summary.md"
    atomic.write_text(
        summary,
        f"""# Seed 003, Fig. 7: 802.3ad layer3+4 over two links

Shipped scenario `lacp_flows`, {RUNS} seeds per flow count; each seed draws new
ephemeral ports, and a flow's link is `usable[hash % 2]` of the kernel's
layer3+4 hash.

| flows | runs with all flows on one link: paper | bondsim | Binomial expectation |
| --- | --- | --- | --- |
"""
        + "\n".join(lines)
        + f"""

Flows per link follow Binomial(n, 1/2) (`lacp_*_flows.png`), as the paper
says: the hash of random ports is a fair coin per flow. With 4 flows all land
on one link with probability 2/16 = 12.5%; one standard deviation over 100
runs is {sd:.1f} runs, so the paper's count is {z_paper:+.1f} and bondsim's
{z_ours:+.1f} standard deviations from the expectation. With 16 flows the
chance is 2/65536 per run.
""",
    )
    return summary
