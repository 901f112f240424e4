"""Seed 003, Figs. 6 and 7: how 802.3ad's layer3+4 hash spreads flows over two links.

Tran-Viet et al. ran 4 flows (and 16 flows) with random ports over a
two-link 802.3ad bond 100 times each and counted flows per link: "the number
of flows on a link follows a binomial distribution", and all 4 flows landed
on one link in 10 of 100 runs (never with 16 flows). We run the
shipped scenario ``lacp_flows`` with 100 seeds (fresh random ephemeral ports
each time), count the flows on each link from each flow's link, and set the
distribution beside Binomial(n, 1/2).

Fig. 6 (§4.4; the text gives no page numbers): four UDP flows of 40 Mbit/s with random ports (6a), then one of 100 Mbit/s and three of
40 (6b), from host 1 to host 2 over the same bond; the paper plots the rate each of host 2's two slaves
received. Its values are in the figure only; its text says 6a "clearly shows the load balancing" and that in
6b, with link 1 full of the 100 Mbit/s flow and the three others on link 0, "other traffic flows are not
switched to the other available link". We run both on the same seeds and give, for each way the hash placed
the flows, how often it happened and what each link carried (payload Mbit/s) and dropped.
"""

from __future__ import annotations

from math import comb
from pathlib import Path

import pandas as pd

from bondsim import atomic, plots
from bondsim.reproduce import verdicts
from bondsim.scenario import apply_overrides, load_toml, shipped
from bondsim.stats import share_ci
from bondsim.sweeps import run_many

RUNS = 100
FLOWS = (4, 16)
#: What the paper reports: runs (of 100) with every flow on one link.
PAPER_ALL_ON_ONE = {4: 10, 16: 0}
#: Fig. 6: each flow's payload rate, Mbit/s (iperf's UDP -b), by panel.
FIG6 = {"6a": (40.0, 40.0, 40.0, 40.0), "6b": (100.0, 40.0, 40.0, 40.0)}
#: How long each Fig. 6 run sends, seconds.
FIG6_S = 2.0
#: A count of runs matches the paper's within two standard deviations (95%) of the difference of two independent
#: counts over 100 runs each, the paper's and ours, both Binomial(100, p) with p the hash's chance.
DEVIATIONS = 2.0
#: The level below which a chi-square goodness-of-fit test rejects Binomial(n, 1/2) (the paper's words).
SIGNIFICANCE = 0.05
#: A chi-square test's expected count per bin at least (tail bins pooled up to it).
MIN_EXPECTED = 5.0


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


def placement(rates: tuple[float, ...], links: list[int]) -> str:
    """How the hash placed flows of ``rates``: the rates on link 0, then on link 1 (e.g. "40+40 / 40+40")."""
    side = [[f"{r:.0f}" for r, link in zip(rates, links, strict=True) if link == k] for k in (0, 1)]
    return " / ".join("+".join(s) or "none" for s in side)


def fig6(panel: str, seeds: int, progress: bool) -> pd.DataFrame:
    """One row per seed of a Fig. 6 panel: the flows' placement, each link's payload Mbit/s and its queue's drops."""
    rates = FIG6[panel]
    base = load_toml(shipped("lacp_flows"))
    over = [
        f"workload.requests={len(rates)}",
        f"sender.flow_rates_mbps=[{', '.join(map(str, rates))}]",
        "workload.file_size.bytes=1000000000",  # more than any flow sends in the time: the run ends at stop_s
        f"stop_s={FIG6_S}",
    ]
    docs = [apply_overrides(base, [*over, f"seed={s}"]) for s in range(1, seeds + 1)]
    labels = [{"panel": panel, "seed": s} for s in range(1, seeds + 1)]
    rows = []
    for label, r in zip(
        labels, run_many(docs, labels=labels, name=f"lacp-hashing/fig{panel}", progress=progress), strict=True
    ):
        mbps = (r.links["bytes_sent"] * 8 / FIG6_S / 1e6).tolist()
        drops = r.links["drops_queue_full"].tolist()
        where = placement(rates, r.requests.sort_values("request")["last_link"].tolist())
        rows.append({**label, "placement": where, "link0_mbps": mbps[0], "link1_mbps": mbps[1],
                     "link0_drops": drops[0], "link1_drops": drops[1],
                     "link_switches": int(r.requests["link_switches"].sum())})  # fmt: skip
    return pd.DataFrame(rows)


def fig6_report(panels: dict[str, pd.DataFrame]) -> str:
    """The summary's Fig. 6 section: each panel's placements, and what the paper says of them."""
    a, b = panels["6a"], panels["6b"]
    even = int((a["placement"] == "40+40 / 40+40").sum())
    paper_b = b[b["placement"] == "40+40+40 / 100"]
    parts = [
        f"\n## Fig. 6: the rate each slave received (UDP, payload Mbit/s over {FIG6_S:.0f} s)\n",
        "**6a**, four flows of 40 Mbit/s, one row per way the hash placed them over the seeds:\n",
        *fig6_lines(a),
        "",
        'The paper\'s figure (its values are not in its text) "clearly shows the load balancing", which only '
        f"an even split gives: 80 Mbit/s on each link, in {even} of {a['seed'].nunique()} seeds here "
        f"(6/16 = 37.5% for four fair coins); a 3 + 1 split offers one link 120 Mbit/s, of which it drops "
        f"{_dropped_share(a, '40+40+40 / 40', 120.0):.0%}. The hash never looks at the load, so which of these a run "
        "shows is its ports' luck.",
        "\n**6b**, one flow of 100 Mbit/s and three of 40:\n",
        *fig6_lines(b),
        "",
        "The paper's case, the 100 Mbit/s flow alone on link 1 and the three others on link 0 "
        f"(`40+40+40 / 100`, the placement the paper describes; {len(paper_b)} of {b['seed'].nunique()} seeds here): "
        + (
            f"both links carry all they can, link 0 dropping {paper_b['link0_drops'].mean():.0f} packets of the "
            "120 Mbit/s offered (link 1's queue grows: 100 Mbit/s of payload is more than its wire carries), "
            "and no flow moves to the other link: as the paper says, "
            "802.3ad's placement is a hash of each flow's addresses and ports, never of the links' load "
            "(`bond_xmit_hash`, drivers/net/bonding/bond_main.c)."
            if len(paper_b)
            else "which no seed here drew."
        ),
    ]
    return "\n".join(parts) + "\n"


def _dropped_share(runs: pd.DataFrame, where: str, offered_mbps: float) -> float:
    """The share of the payload offered to link 0 that it did not carry, over the runs placed ``where``."""
    return 1 - runs[runs["placement"] == where]["link0_mbps"].mean() / offered_mbps


def fig6_lines(runs: pd.DataFrame) -> list[str]:
    """The summary's table of a Fig. 6 panel: each placement, its runs, what each link carried and dropped."""
    seeds = runs["seed"].nunique()
    by = runs.groupby("placement").agg(
        runs=("seed", "size"), link0=("link0_mbps", "mean"), link1=("link1_mbps", "mean"),
        drops0=("link0_drops", "mean"), drops1=("link1_drops", "mean"),
    ).sort_values("runs", ascending=False)  # fmt: skip
    lines = ["| flows on link 0 / link 1 (Mbit/s) | runs | link 0 Mbit/s | link 1 Mbit/s | drops link 0 / 1 |"]
    lines.append("| --- | ---: | ---: | ---: | --- |")
    for where, r in by.iterrows():
        lines.append(
            f"| {where} | {r.runs:.0f} of {seeds} | {r.link0:.1f} | {r.link1:.1f} | {r.drops0:.0f} / {r.drops1:.0f} |"
        )
    return lines


def binomial_fit(counts: list[int], flows: int) -> float:
    """The p-value of a chi-square goodness-of-fit test of ``counts`` (flows on link 0, one per run) against
    Binomial(``flows``, 1/2), bins pooled from the tails until each expects :data:`MIN_EXPECTED` runs."""
    from scipy.stats import chisquare

    runs = len(counts)
    observed, expected, group = [], [], [0, 0.0]
    for k in range(flows + 1):
        group = [group[0] + counts.count(k), group[1] + runs * binomial(flows, k)]
        if group[1] >= MIN_EXPECTED:
            observed.append(group[0])
            expected.append(group[1])
            group = [0, 0.0]
    observed[-1] += group[0]  # the last tail, short of MIN_EXPECTED, joins its neighbour
    expected[-1] += group[1]
    return float(chisquare(observed, expected).pvalue)


def count_matches(paper: int, ours: int, p: float) -> tuple[str, str]:
    """A count of runs (of :data:`RUNS`) against the paper's: the verdict and what it was judged by."""
    sd = (2 * RUNS * p * (1 - p)) ** 0.5
    verdict = verdicts.MATCHES if abs(ours - paper) <= DEVIATIONS * sd else verdicts.NOT_REPRODUCED
    return (
        verdict,
        f"within {DEVIATIONS:g} standard deviations of two {RUNS}-run counts (±{DEVIATIONS * sd:.1f} runs): {ours - paper:+d}",
    )


def judged(counts: dict[int, list[int]], panels: dict[str, pd.DataFrame]) -> list[verdicts.Verdict]:
    """Fig. 7's runs with every flow on one link and its binomial distribution; Fig. 6a's balance and Fig. 6b's
    flows that stay beside a full link."""
    rows = []
    for n, words in ((4, "10% (10/100 runs)"), (16, "did not happen in 100 runs")):
        ours = sum(1 for c in counts[n] if c in (0, n))
        p = 2 * binomial(n, n)
        verdict, because = count_matches(PAPER_ALL_ON_ONE[n], ours, p)
        rows.append(
            verdicts.Verdict(
                f"Fig. 7 and §4.4's text (seed 003 prints no pages): {n} flows, runs with all on one link",
                words,
                f"{ours} of {RUNS} (Binomial expectation {p * RUNS:.3g})",
                verdict,
                because,
            )
        )
    fit = {n: binomial_fit(counts[n], n) for n in FLOWS}
    rows.append(
        verdicts.Verdict(
            "§4.4's text on Fig. 7: flows per link",
            '"the number of flows on a link follows a binominal distribution"',
            "chi-square p = " + ", ".join(f"{fit[n]:.2f} ({n} flows)" for n in FLOWS) + " against Binomial(n, 1/2)",
            verdicts.MATCHES if min(fit.values()) >= SIGNIFICANCE else verdicts.NOT_REPRODUCED,
            f"a chi-square goodness-of-fit test over {RUNS} runs each, not rejected at {SIGNIFICANCE:g}",
        )
    )
    a = panels["6a"]
    even = int((a["placement"] == "40+40 / 40+40").sum())
    p_even = binomial(4, 2)
    sd = (RUNS * p_even * (1 - p_even)) ** 0.5
    balanced = even > 0 and abs(even - p_even * RUNS) <= DEVIATIONS * sd
    rows.append(
        verdicts.Verdict(
            "Fig. 6a and §4.4's text: four UDP flows of 40 Mbps, the rate each slave received",
            '"The figure clearly shows the load balancing of the traffic" (one run; its values in the figure only)',
            f"an even split (80 Mbit/s on each link) in {even} of {len(a)} seeds (Binomial: {p_even * RUNS:.1f})",
            verdicts.MATCHES if balanced else verdicts.NOT_REPRODUCED,
            f"the paper's one run is an even split the hash gives as often as a fair coin per flow does: within "
            f"{DEVIATIONS:g} standard deviations (±{DEVIATIONS * sd:.1f} runs) of {p_even * RUNS:.1f}: "
            f"{even - p_even * RUNS:+.1f}",
        )
    )
    b = panels["6b"]
    paper_b = b[b["placement"] == "40+40+40 / 100"]
    moved = int(b["link_switches"].sum())
    rows.append(
        verdicts.Verdict(
            "Fig. 6b and §4.4's text: one 100 Mbps flow on link 1, three of 40 Mbps on link 0",
            '"Even though, the link 1 is full, other traffic flows are not switched to the other available link"',
            f"{moved} link changes over {len(b)} seeds; the paper's placement in {len(paper_b)}, "
            + (
                f"both links full (link 0 dropping {paper_b['link0_drops'].mean():.0f} packets)"
                if len(paper_b)
                else "never drawn"
            ),
            verdicts.MATCHES if moved == 0 and len(paper_b) else verdicts.NOT_REPRODUCED,
            "judged by the flows' link changes: none (layer3+4 hashes ports, never the load)"
            if moved == 0 and len(paper_b)
            else f"runs tried: {len(b)} seeds",
        )
    )
    return rows


@atomic.whole
def reproduce(out: str | Path, *, progress: bool = True, quick: bool = False) -> Path:
    """Writes the flows-per-link distributions (CSV + PNG) and ``summary.md``.

    ``quick`` runs the same: this reproduction already takes seconds.
    """
    out = Path(out)
    rows, lines, spread, counted = [], [], {}, {}
    for n in FLOWS:
        counts = counted[n] = flows_on_link0(n, progress=progress)
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
    panels = {panel: fig6(panel, RUNS, progress) for panel in FIG6}
    atomic.write_csv(pd.concat(panels.values(), ignore_index=True), out / "fig6_rates.csv")
    summary = out / "summary.md"
    atomic.write_text(
        summary,
        f"""# Seed 003, Figs. 6 and 7: 802.3ad layer3+4 over two links

Shipped scenario `lacp_flows`, {RUNS} seeds per flow count; each seed draws new
ephemeral ports, and a flow's link is `usable[hash % 2]` of the kernel's
layer3+4 hash.
{verdicts.write(out, judged(counted, panels))}
## Fig. 7: flows per link

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
"""
        + fig6_report(panels),
    )
    return summary
