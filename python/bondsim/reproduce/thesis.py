"""Reproduces the thesis's simulator results (Gupta 2010, chapter 6).

* Figure 9: out-of-order packets against the number of simultaneous
  requests, 100 KB files, interface 1 slowed to 82 ms.
* Figure 10: the same with file sizes from 1 KB to 900 KB.
* Figure 11: P(outorder) against file size with two slow interfaces.
* §6.2.4: how much longer round-robin takes to drain.

Each figure is written as CSV + PNG, and ``summary.md`` sets our figures
beside what the thesis reported, with the model's own expectation. The thesis
plots one run per point; Figures 10 and 11 draw random file sizes, so they are
run with several seeds and drawn as the mean with its 95% interval. Figure 9
is deterministic (every request asks for 100 KB at the start; the seed only
picks clients, which neither scheduler reads): one run per point.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bondsim import atomic, plots, stats
from bondsim.scenario import apply_overrides, load_toml, parse_value, shipped
from bondsim.sweeps import run_many, sweep

SCHEDULERS = ("rr", "lb")
LOADS = tuple(range(5, 101, 5))
#: SPECweb99 classes 1-3: 27 files of 1 KB to 900 KB, equally likely.
VARIED_SIZES = '{kind = "zipfset", classes = [1, 2, 3], popularity = "uniform"}'
FIG11_REQUESTS = 500
#: Seeds per point of the random figures (10 and 11): full size, and ``--quick``.
REPLICATIONS = 5
QUICK_REPLICATIONS = 2


def _base() -> dict:
    return load_toml(shipped("thesis"))


def load_sweep(name: str, changes: dict, *, loads=LOADS, replications: int = 1, progress: bool = True) -> pd.DataFrame:
    """Sweeps rr and lb over every load of ``loads`` on the thesis scenario with ``changes``, each point
    with seeds 1 … ``replications``; one row per run."""
    axes = [
        {"path": "workload.requests", "name": "requests", "values": list(loads)},
        {"path": "bond.mode", "name": "mode", "values": list(SCHEDULERS)},
    ]
    # the shipped scenario itself, inline: a name would be looked up in the working folder first
    spec = {"name": f"thesis/{name}", "base": _base(), "set": changes, "axes": axes, "replications": replications}
    table = sweep(spec, progress=progress)
    table["ooo_per_request"] = table["out_of_order"] / table["requests"]
    return table


def size_curve(*, replications: int = 1, progress: bool = True) -> pd.DataFrame:
    """P(outorder) per file size with interfaces 1 and 3 slow (Figure 11), one table per run (seeds
    1 … ``replications`` of each scheduler)."""
    extra = [f"workload.file_size={VARIED_SIZES}", f"workload.requests={FIG11_REQUESTS}", "links.3.period_ms=82"]
    labels = [{"mode": mode, "seed": seed} for mode in SCHEDULERS for seed in range(1, replications + 1)]
    docs = [apply_overrides(_base(), [*extra, f"bond.mode={x['mode']}", f"seed={x['seed']}"]) for x in labels]
    frames = []
    results = run_many(docs, labels=labels, name="thesis/fig11", progress=progress)
    for label, result in zip(labels, results, strict=True):
        table = stats.process_table(result.requests)
        table["file_kb"] = table["packets"] - 1  # S // 1024 + 1 packets of 1 KB
        table["mode"] = label["mode"]
        table["seed"] = label["seed"]
        table["run_ooo_fraction"] = result.summary["ooo_fraction"]
        frames.append(table)
    return pd.concat(frames, ignore_index=True)


def size_curve_mean(fig11: pd.DataFrame) -> pd.DataFrame:
    """Figure 11 over the seeds: per file size and scheduler, the mean P(outorder) and its 95% interval
    (a size no request of some seed asked for counts only in the seeds that have it)."""
    return stats.mean_ci(fig11, ["file_kb", "mode"], "p_outorder")


def lb_slow_share(periods_ms: list[float], packets_per_tick: int = 4, tick_ms: float = 20.0) -> float:
    """Fluid model of ``lb`` when the sender outpaces the bond: queues stay equal
    in length, so each link receives its own rate plus an equal share of the
    growth; returns the share of packets that go to links slower than the fastest.
    """
    offered = packets_per_tick / tick_ms
    rates = [1.0 / p for p in periods_ms]
    growth = offered - sum(rates)
    if growth <= 0:
        raise ValueError("the fluid model needs an overloaded bond")
    fastest = min(periods_ms)
    slow = [r + growth / len(rates) for r, p in zip(rates, periods_ms, strict=True) if p > fastest]
    return sum(slow) / offered


def _pick(table: pd.DataFrame, mode: str, requests: int, column: str) -> float:
    row = table[(table["mode"] == mode) & (table["requests"] == requests)]
    return float(row[column].iloc[0])


def _mean(table: pd.DataFrame, mode: str, column: str, loads) -> float:
    rows = table[(table["mode"] == mode) & (table["requests"].isin(list(loads)))]
    return float(rows[column].mean())


@atomic.whole
def reproduce(out: str | Path, *, progress: bool = True, quick: bool = False) -> Path:
    """Writes every figure (CSV + PNG) and ``summary.md`` into ``out``; returns the summary's path.
    The random figures (10, 11) are also written as their mean and 95% interval over the seeds
    (``*_mean.csv``). ``quick`` runs them with fewer seeds.
    """
    out = Path(out)
    replications = QUICK_REPLICATIONS if quick else REPLICATIONS

    fig9 = load_sweep("fig9", {}, progress=progress)
    varied = {"workload.file_size": parse_value(VARIED_SIZES)}
    fig10 = load_sweep("fig10", varied, replications=replications, progress=progress)
    fig11 = size_curve(replications=replications, progress=progress)
    fig10_mean = stats.mean_ci(fig10, ["requests", "mode"], "out_of_order")
    fig11_mean = size_curve_mean(fig11)
    atomic.write_csv(fig9, out / "fig9_fixed_100kb.csv")
    atomic.write_csv(fig10, out / "fig10_varied_sizes.csv")
    atomic.write_csv(fig10_mean, out / "fig10_varied_sizes_mean.csv")
    atomic.write_csv(fig11, out / "fig11_p_outorder.csv")
    atomic.write_csv(fig11_mean, out / "fig11_p_outorder_mean.csv")

    plots.compare(
        fig9,
        "requests",
        "out_of_order",
        "mode",
        out / "fig9_fixed_100kb.png",
        title="Fig. 9: fixed 100 KB files, interface 1 at 82 ms",
        xlabel="simultaneous requests",
        ylabel="out-of-order packets",
        reference={"thesis rr: 25 per request": ([5, 100], [125, 2500])},
    )
    plots.compare(
        fig10_mean,
        "requests",
        "out_of_order",
        "mode",
        out / "fig10_varied_sizes.png",
        title=f"Fig. 10: files of 1-900 KB, interface 1 at 82 ms (mean ± 95% CI, {replications} seeds)",
        xlabel="simultaneous requests",
        ylabel="out-of-order packets",
    )
    plots.compare(
        fig11_mean,
        "file_kb",
        "p_outorder",
        "mode",
        out / "fig11_p_outorder.png",
        title=f"Fig. 11: P(outorder), interfaces 1, 3 at 82 ms (mean ± 95% CI, {replications} seeds)",
        xlabel="file size (KB)",
        ylabel="P(outorder)",
        reference={"thesis rr ~0.5": ([0, 900], [0.5, 0.5]), "thesis lb ~0.25": ([0, 900], [0.25, 0.25])},
    )
    plots.compare(
        fig9,
        "requests",
        "makespan_s",
        "mode",
        out / "drain_time.png",
        title="§6.2.4: time to drain, fixed 100 KB files",
        xlabel="simultaneous requests",
        ylabel="makespan (s)",
    )

    summary = out / "summary.md"
    atomic.write_text(summary, _summary(fig9, fig10, fig11, replications))
    return summary


def _summary(fig9: pd.DataFrame, fig10: pd.DataFrame, fig11: pd.DataFrame, replications: int) -> str:
    spread = [n for n in LOADS if n % 4 != 0]
    aligned = [n for n in LOADS if n % 4 == 0]
    rr9, lb9 = (_mean(fig9, m, "ooo_fraction", spread) for m in SCHEDULERS)
    rr9_aligned = _mean(fig9, "rr", "ooo_fraction", aligned)
    rr9_per_req = _pick(fig9, "rr", 50, "ooo_per_request")
    rr10, lb10 = (_mean(fig10, m, "ooo_fraction", LOADS) for m in SCHEDULERS)
    runs11 = fig11.groupby(["mode", "seed"])["run_ooo_fraction"].first()
    rr11, lb11 = (float(runs11[m].mean()) for m in SCHEDULERS)
    drain = fig9.pivot(index="requests", columns="mode", values="makespan_s")
    drain_ratio = (drain["rr"] / drain["lb"]).mean()
    one_slow = lb_slow_share([20, 82, 20, 20])
    two_slow = lb_slow_share([20, 82, 20, 82])

    return f"""# The thesis's simulator, reproduced

Model: the appendix's bondingSimulator exactly (shipped scenario `thesis`): 4
interfaces, one packet per 20 ms each (the slow ones every 82 ms), a scheduler
that takes 4 packets every 20 ms, one per queued request in turn, 1 KB chunks,
`S // 1024 + 1` packets per file, a packet in order iff its chunk number is the
highest seen so far for its request. All requests are queued at the start.
Loads: {LOADS[0]} to {LOADS[-1]} simultaneous requests. Figure 9 is deterministic (one
run per point, seed 1); Figures 10 and 11 draw file sizes at random and are run with
seeds 1 to {replications}: their figures are means, drawn with their 95% interval.

## Figure 9: fixed 100 KB files, interface 1 at 82 ms (`fig9_fixed_100kb.*`)

| | thesis | bondsim |
| --- | --- | --- |
| rr, out-of-order share | "about 25%", ~25 of ~100 packets per request | {rr9:.1%} (mean over loads not divisible by 4); {rr9_per_req:.1f} per request at 50 requests |
| lb, out-of-order share | "about 10%", "about 50%" fewer than rr | {lb9:.1%}, i.e. {lb9 / rr9:.0%} of rr's |

Why: round-robin puts every fourth packet on the slow interface, and those
arrive after later chunks sent on the fast ones, so one packet in four is out
of order. Load-based sends to the shortest queue; with the sender offering 4
packets per 20 ms, more than the interfaces drain, the queues stay equally
long, so the slow interface receives its own rate plus an equal share of the
growth: a fluid model of that gives {one_slow:.1%} of packets on it, and those
are the out-of-order ones.

A difference the appendix code explains: when the number of requests is a
multiple of 4, rr's next-interface pointer and the scheduler's next-request
pointer advance in lockstep, so each request stays on one interface and
arrives in order until the queue starts to shrink; rr then reorders only
{rr9_aligned:.1%} of packets (the dips at 20, 40, … in the figure). The thesis
plots 2500 out-of-order packets at 100 requests; the appendix's code cannot
give that at exactly 100 queued requests, so the thesis's runs must have
queued them differently from the listed code (requests arriving over time, say,
as §5.3.2's generator with random intervals would).

## Figure 10: files of 1 KB to 900 KB (`fig10_varied_sizes.*`)

| | thesis | bondsim |
| --- | --- | --- |
| rr | "quite similar" to Figure 9 | {rr10:.1%} |
| lb | "about 50% less" than rr | {lb10:.1%} ({lb10 / rr10:.0%} of rr's) |

Files ending at different times break the lockstep, so rr stays near one in
four at every load.

## Figure 11: P(outorder) against file size, interfaces 1 and 3 at 82 ms (`fig11_p_outorder.*`)

| | thesis | bondsim ({FIG11_REQUESTS} requests, 1-900 KB) |
| --- | --- | --- |
| rr | about 50%, flat in file size | {rr11:.1%} |
| lb | about 25%, flat in file size | {lb11:.1%} |

rr: two interfaces in four are slow, so half the packets arrive late. lb: the
fluid model above predicts {two_slow:.1%} of packets on the two slow
interfaces; the thesis's 25% is lower than what its own algorithm gives in
this model. Small files (a few packets) sit below the curve because few of
their packets can be overtaken.

## §6.2.4: round-robin takes longer to drain (`drain_time.png`)

The thesis: "round-robin simulations were taking much longer to complete".
bondsim: rr's makespan is {drain_ratio:.2f}× lb's on average over the loads of
Figure 9, because rr waits for the slow interface to send its full quarter of
the packets while the fast ones sit idle.
"""
