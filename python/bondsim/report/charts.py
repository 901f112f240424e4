"""The report's charts as plain data (:class:`Chart` of :class:`Series`), built from results; the
renderers (:mod:`bondsim.report.html` with uPlot, :mod:`bondsim.report.png` with matplotlib) draw
the same charts, so the interactive report and the PNGs for papers show the same thing."""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, pairwise
from typing import TYPE_CHECKING, Any

from bondsim import columns
from bondsim.stats import MIN_INTERVAL_RUNS, enough_for_interval, mean_ci_rows

if TYPE_CHECKING:  # pandas loads on use (a league, a run's TCP trace or failures): not for a sweep's report
    import pandas as pd

    from bondsim.api import RunResult

#: Colours by series index, in both renderers (matplotlib's ``tab10``, which is D3's ``category10``).
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
IN_ORDER = "#1f77b4"
OUT_OF_ORDER = "#d62728"
#: Packets a schedule diagram shows at most (the thesis's Figures 6 and 8 show 24).
SCHEDULE_PACKETS = 48
#: Flows whose cwnd and RTT are drawn at most (the rest would be a tangle).
TCP_FLOWS = 8


@dataclass
class Series:
    """One line, step line, set of markers or set of bars."""

    name: str
    x: Sequence
    y: Sequence
    #: ``line``, ``step`` (held until the next point), ``markers`` or ``bar``.
    mode: str = "line"
    #: The 95% interval: a band around a line, error bars on bars.
    lo: Sequence | None = None
    hi: Sequence | None = None
    #: Labels written at the markers.
    text: Sequence | None = None
    colour: str | None = None
    dash: bool = False
    #: Marker shape: ``circle``, ``square``, ``x``.
    symbol: str = "circle"
    legend: bool = True


@dataclass
class Chart:
    """One chart: ``key`` names its element in the HTML and its PNG file."""

    key: str
    title: str
    xlabel: str
    ylabel: str
    series: list[Series] = field(default_factory=list)
    #: Category labels of the y positions 0, 1, … (links of a schedule or a timeline).
    ycats: list[str] | None = None
    #: Category labels of the x positions 0, 1, … (bars by scheduler).
    xcats: list[str] | None = None


@dataclass
class Section:
    """A heading, a few lines of text, its charts, and a table (header, rows of text) under them."""

    title: str
    charts: list[Chart]
    notes: list[str] = field(default_factory=list)
    table: tuple[list[str], list[list[str]]] | None = None


def _key(*parts: object) -> str:
    return re.sub(r"[^a-z0-9]+", "-", "-".join(str(p) for p in parts).lower()).strip("-")


def _colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


# -- sweeps: figures against the swept axis, mean and 95% interval over replications --------------


def sweep_axis(runs: Sequence[Mapping], axes: Sequence[str]) -> str | None:
    """The axis to draw figures against: the first swept one with several numeric values."""
    for axis in axes:
        values = [columns.number(r[axis]) for r in runs]
        if all(v == v for v in values) and len(set(values)) > 1:
            return axis
    return None


def _series(runs: Sequence[Mapping], axes: Sequence[str], x: str | None) -> list[str]:
    """Each run's series in the sweep's charts: its scheduler, and the swept values that tell more."""
    scheduler = [str(r["scheduler"]) for r in runs]

    def adds(axis: str) -> bool:  # an axis that tells more than the scheduler (not bond.mode itself)
        values = [str(r[axis]) for r in runs]
        return len(set(values)) > 1 and len(set(zip(values, scheduler, strict=True))) > len(set(scheduler))

    series = scheduler
    for other in [a for a in axes if a != x and a != "scheduler" and adds(a)]:
        series = [f"{s}, {other}={r[other]}" for s, r in zip(series, runs, strict=True)]
    return series


def sweep_charts(runs: Sequence[Mapping], axes: Sequence[str], name: str) -> list[Chart]:
    """Per scheduler (and other swept values), each figure the runs' transport leads with
    (:func:`bondsim.columns.default_of`: for TCP what reordering costs, else the delivery point's order)
    against the swept axis: the mean over the replications (seeds) and its 95% Student-t interval
    (:func:`bondsim.stats.mean_ci_rows`), the interval only where every point has the runs to publish one
    (:func:`_band`); bars with error bars, one per series, when nothing numeric was swept."""
    x = sweep_axis(runs, axes)
    keys = [{"series": s, **({x: r[x]} if x else {})} for s, r in zip(_series(runs, axes, x), runs, strict=True)]
    charts = []
    for column in columns.default_of(runs):
        values = [float(v) for v in column.of(runs)]
        if all(v != v for v in values):
            continue
        mean = mean_ci_rows([k | {"value": v} for k, v in zip(keys, values, strict=True)], list(keys[0]), "value")
        chart = Chart(
            _key("sweep", column.name), _sweep_title(name, column.label, mean), x or "scheduler", column.label
        )
        if x:
            for i, series in enumerate(dict.fromkeys(m["series"] for m in mean)):
                group = sorted((m for m in mean if m["series"] == series), key=lambda m: columns.number(m[x]))
                chart.series.append(
                    Series(str(series), [m[x] for m in group], [m["value"] for m in group], "line",
                           **_band(group), colour=_colour(i))
                )  # fmt: skip
        else:
            chart.xcats = [str(m["series"]) for m in mean]
            chart.series.append(
                Series(column.label, list(range(len(mean))), [m["value"] for m in mean], "bar", **_band(mean),
                       colour=_colour(0), legend=False)
            )  # fmt: skip
        charts.append(chart)
    return charts


def _band(points: Sequence[Mapping]) -> dict:
    """The interval of a series' points (``lo``, ``hi``) when every point's comes from enough runs to publish
    (:func:`bondsim.stats.enough_for_interval`), else none: the mean alone."""
    if not all(enough_for_interval(m["value_n"]) for m in points):
        return {}
    return {"lo": [m["value_lo"] for m in points], "hi": [m["value_hi"] for m in points]}


def _sweep_title(name: str, label: str, mean: Sequence[Mapping]) -> str:
    n = min(m["value_n"] for m in mean)
    if enough_for_interval(n):
        return f"{name}: {label}, mean and 95% interval over {n}+ replication(s)"
    return f"{name}: {label}, mean over {n}+ replication(s) (a 95% interval from {MIN_INTERVAL_RUNS} or more)"


def sweep_table(runs: Sequence[Mapping], axes: Sequence[str]) -> tuple[list[str], list[list[str]]]:
    """The figures of :func:`sweep_charts` as ``bondsim sweep`` prints them: their mean per grid point (per
    scheduler when nothing was swept), with the failover figures when links failed."""
    by = list(axes) or ["scheduler"]
    shown = [r | {a: json.dumps(r[a]) if isinstance(r[a], dict | list) else r[a] for a in by} for r in runs]
    header, rows = columns.per_point_of(shown, by, columns.default_of(runs))
    return [str(c) for c in header], [[columns.cell(v) for v in row] for row in rows]


# -- a league: the model beside the kernel, case by case -------------------------------------------------

#: (figure column stem in a league row, axis title) of the league's charts.
LEAGUE_FIGURES = (("goodput_mbps", "goodput (Mbit/s)"), ("retransmits", "TCP retransmissions"))


def league_section(rows: pd.DataFrame, name: str) -> Section:
    """A stored league (``bondsim validate --league``): per case the kernel's runs (median, bar from min to
    max) and the model (seed 1, the judged one; a marker), a chart per judged figure, and the table."""
    cases = rows["case"].astype(str).tolist()
    x = list(range(len(rows)))
    charts = []
    for stem, label in LEAGUE_FIGURES:
        chart = Chart(_key("league", name, stem), f"league {name}: {label}", "case", label, xcats=cases)
        chart.series.append(
            Series(
                "kernel: median, min-max", x, rows[f"kernel_{stem}_median"].tolist(), "bar",
                lo=rows[f"kernel_{stem}_min"].tolist(), hi=rows[f"kernel_{stem}_max"].tolist(), colour=_colour(0),
            )
        )  # fmt: skip
        chart.series.append(Series("model (seed 1)", x, rows[f"model_{stem}"].tolist(), "markers", colour=_colour(3)))
        charts.append(chart)
    agree = int(rows["agrees"].sum())
    notes = [
        f"{agree} of {len(rows)} cases agree ({agree / len(rows):.0%}): the model's goodput within the kernel's "
        "min-max widened by 10%, its retransmissions within the min-max widened by a factor 2 (or +-30 when both "
        "are below 30). Each side runs the host the emulator builds (the placement column).",
        f"The kernel: {int(rows['kernel_runs'].max())} run(s) per case; the model: seed 1 judged, seeds 1-5 "
        "give its own spread.",
    ]
    measured = rows["agrees_measured_path"].dropna() if "agrees_measured_path" in rows else []
    if len(measured):
        notes.append(
            f"On the path the kernel measured (each link's delay grown by half the difference of the least RTTs, "
            f"each frame late as the emulator's median lateness; bondsim.league.measured_host): "
            f"{int(measured.sum())} of {len(measured)} agree."
        )
    header = [
        "case", "host", "goodput Mbit/s: model [seeds]", "kernel min-median-max",
        "retransmissions: model [seeds]", "kernel min-median-max", "agrees", "load",
        "measured path: +us each way, model Mbit/s / retransmissions, agrees",
    ]  # fmt: skip

    def spread(side: str, stem: str, fmt: str) -> str:
        lo, mid, hi = (format(rows_i[f"{side}_{stem}_{k}"], fmt) for k in ("min", "median", "max"))
        return f"{lo}-{mid}-{hi}"

    body = []
    for _, rows_i in rows.iterrows():
        model = (
            f"{rows_i['model_goodput_mbps']:.2f} [{rows_i['model_goodput_mbps_min']:.2f}-"
            f"{rows_i['model_goodput_mbps_max']:.2f}]"
        )
        retx = (
            f"{rows_i['model_retransmits']:.0f} [{rows_i['model_retransmits_min']:.0f}-"
            f"{rows_i['model_retransmits_max']:.0f}]"
        )
        missed = [f for f in ("goodput", "retransmits") if not rows_i[f"agrees_{f}"]]
        judged = "no: " + ", ".join(missed) if missed else "yes"
        host = str(rows_i["placement"]).split(":")[0]
        body.append(
            [str(rows_i["case"]), host, model, spread("kernel", "goodput_mbps", ".2f"), retx,
             spread("kernel", "retransmits", ".0f"), judged, f"{rows_i['load_mean']:.1f}", _on_measured(rows_i)]
        )  # fmt: skip
    return Section(f"League {name}: the model beside the kernel", charts, notes, (header, body))


def _on_measured(row: pd.Series) -> str:
    """A league row's judgement on the kernel's measured path, in words ("-" where the path was not measured)."""
    import pandas as pd

    judged = row.get("agrees_measured_path")
    if judged is None or pd.isna(judged):
        return "-"
    return (
        f"{row['path_extra_us']:+.0f}: {row['measured_path_goodput_mbps']:.2f} / "
        f"{row['measured_path_retransmits']:.0f}, {'yes' if judged else 'no'}"
    )


# -- one run -----------------------------------------------------------------------------------------


def _link_names(result: RunResult) -> list[str]:
    links = result.columns("links") or {}
    return [str(n) for n in links["name"]] if "name" in links else []


def _missing(value: Any) -> bool:
    """Whether a table's cell holds nothing (null, or NaN as a DataFrame holds a null)."""
    return value is None or value != value


def _length(table: Mapping[str, list] | None) -> int:
    """The rows of a table of plain columns (none for None)."""
    return len(next(iter(table.values()))) if table else 0


def _where(table: Mapping[str, list], keep: Sequence[bool]) -> dict[str, list]:
    """The rows of ``table`` (plain columns) where ``keep`` holds (a flag per row)."""
    return {name: list(compress(values, keep)) for name, values in table.items()}


def _data_packets(result: RunResult) -> dict[str, list] | None:
    """:attr:`RunResult.data_packet_trace` as plain columns: the traced packets less the TCP handshake's."""
    packets = result.columns("packet_trace")
    if packets is None or "handshake" not in packets:
        return packets
    return _where(packets, [not h for h in packets["handshake"]])


def link_charts(result: RunResult, tag: str) -> list[Chart]:
    """Per link: utilisation and longest queue per time bucket (``trace.link_ms``)."""
    trace = result.columns("link_trace")
    if not _length(trace):
        return []
    names = _link_names(result)
    util = Chart(_key(tag, "utilisation"), f"{tag}: link utilisation over time", "time (s)", "utilisation")
    queue = Chart(_key(tag, "queue"), f"{tag}: transmit queue over time", "time (s)", "longest queue in bucket (pkts)")
    for link in sorted(set(trace["link"])):
        rows = _where(trace, [v == link for v in trace["link"]])
        name = names[int(link)] if int(link) < len(names) else f"link {link}"
        colour = _colour(int(link))
        util.series.append(Series(name, rows["t_s"], rows["utilisation"], "line", colour=colour))
        queue.series.append(Series(name, rows["t_s"], rows["queue_max_pkts"], "line", colour=colour))
    return [util, queue]


def reorder_charts(result: RunResult, tag: str) -> list[Chart]:
    """RFC 5236 reorder density (from the summary) and the flows' largest RFC 4737 extents."""
    charts = []
    density = result.summary.get("reorder_density") or []
    if density:
        chart = Chart(
            _key(tag, "reorder-density"),
            f"{tag}: RFC 5236 reorder density",
            "displacement (receive index − expected; ±17: beyond 16)",
            "share of packets",
        )
        chart.series.append(
            Series(
                "packets", [d["displacement"] for d in density], [d["fraction"] for d in density], "bar",
                colour=_colour(0), legend=False,
            )
        )  # fmt: skip
        charts.append(chart)
    requests = result.columns("requests") or {}
    if "max_extent" in requests and _length(requests):
        counts = Counter(v for v in requests["max_extent"] if not _missing(v))
        chart = Chart(
            _key(tag, "reorder-extent"),
            f"{tag}: largest RFC 4737 reordering extent per flow",
            "largest extent (packets)",
            "flows",
        )
        chart.series.append(
            Series("flows", sorted(counts), [counts[k] for k in sorted(counts)], "bar", colour=_colour(1), legend=False)
        )
        charts.append(chart)
    return charts


#: The summary's delay quantiles: (figure, label).
DELAY_QUANTILES = (
    ("delay_p50_us", "p50"),
    ("delay_p90_us", "p90"),
    ("delay_p99_us", "p99"),
    ("delay_p999_us", "p99.9"),
    ("delay_max_us", "max"),
)


def delay_chart(result: RunResult, tag: str) -> Chart:
    """Delivery delay: the traced packets' histogram (``trace.packets``), else the summary's quantiles."""
    packets = _data_packets(result)
    if packets is not None and not all(_missing(a) for a in packets["arrived_s"]):
        delay = [(a - s) * 1e6 for a, s in zip(packets["arrived_s"], packets["sent_s"], strict=True) if not _missing(a)]
        counts, edges = histogram(delay, min(40, max(5, len(delay) // 5)))
        chart = Chart(
            _key(tag, "delay"),
            f"{tag}: delivery delay of the first {_length(packets)} packets (bond to clients' wire)",
            "delay (µs)",
            "packets",
        )
        mids = [(a + b) / 2 for a, b in pairwise(edges)]
        chart.series.append(Series("packets", mids, counts, "bar", colour=_colour(2), legend=False))
        return chart
    chart = Chart(_key(tag, "delay"), f"{tag}: delivery delay quantiles", "quantile", "delay (µs)")
    chart.xcats = [label for _, label in DELAY_QUANTILES]
    values = [float(result.summary.get(k) or 0.0) for k, _ in DELAY_QUANTILES]
    chart.series.append(Series("delay", list(range(len(values))), values, "bar", colour=_colour(2), legend=False))
    return chart


def histogram(values: Sequence[float], bins: int) -> tuple[list[int], list[float]]:
    """The counts of ``values`` in ``bins`` bins of equal width from the least value to the greatest, and the bins'
    ``bins + 1`` edges: a bin holds the values from its lower edge up to below its upper one, the last bin its upper
    edge too (numpy's ``histogram`` rule); values all equal are binned over the value ± 0.5."""
    first, last = min(values), max(values)
    if first == last:
        first, last = first - 0.5, last + 0.5
    edges = [first + (last - first) * i / bins for i in range(bins)] + [last]
    counts = [0] * bins
    for value in values:
        counts[min(bisect_right(edges, value), bins) - 1] += 1
    return counts, edges


def tcp_charts(result: RunResult, tag: str) -> list[Chart]:
    """TCP over time (``sender.trace_ms``): goodput (acknowledged segments), cwnd and smoothed RTT of
    the first flows, retransmissions marked where a flow's count rose."""
    trace = result.tcp_trace
    if trace is None or trace.empty:
        return []
    import numpy as np

    mss = float((result.scenario.get("sender") or {}).get("mss") or 1448)
    trace = trace.sort_values(["flow", "t_s"])
    # goodput: segments newly acknowledged between samples, over all flows
    trace = trace.assign(
        new_acked=trace.groupby("flow")["acked"].diff().fillna(trace["acked"]),
        new_rtx=trace.groupby("flow")["retransmits"].diff().fillna(trace["retransmits"]),
    )
    # ... in the sampling period's bins ((k-1)·T, k·T], drawn at k·T: a flow's last sample, taken when
    # it ends between two, counts in its bin, not over the sliver of time to the next sample
    period = float((result.scenario.get("sender") or {}).get("trace_ms") or 0) / 1e3
    if period > 0:
        bins = np.maximum(np.ceil(trace["t_s"].to_numpy() / period - 1e-9), 0).astype(np.int64)
        per_bin = trace.groupby(bins, sort=True)["new_acked"].sum()
        times = per_bin.index.to_numpy() * period
        goodput = per_bin.to_numpy() * mss * 8 / period / 1e6
    else:
        per_t = trace.groupby("t_s", sort=True)["new_acked"].sum()
        times = per_t.index.to_numpy()
        step = np.diff(times, prepend=0.0)
        step[step <= 0] = np.nan
        goodput = per_t.to_numpy() * mss * 8 / step / 1e6
    good = Chart(_key(tag, "tcp-goodput"), f"{tag}: TCP goodput over time", "time (s)", "goodput (Mbit/s)")
    good.series.append(Series("all flows", times.tolist(), np.nan_to_num(goodput).tolist(), "line", colour=_colour(0)))
    cwnd = Chart(_key(tag, "tcp-cwnd"), f"{tag}: TCP congestion window", "time (s)", "cwnd (segments)")
    rtt = Chart(_key(tag, "tcp-rtt"), f"{tag}: TCP smoothed RTT", "time (s)", "srtt (µs)")
    flows = sorted(trace["flow"].unique())[:TCP_FLOWS]
    for i, flow in enumerate(flows):
        rows = trace[trace["flow"] == flow]
        colour = _colour(i)
        cwnd.series.append(Series(f"flow {flow}", rows["t_s"].tolist(), rows["cwnd"].tolist(), "step", colour=colour))
        srtt = rows.dropna(subset=["srtt_us"])
        rtt.series.append(Series(f"flow {flow}", srtt["t_s"].tolist(), srtt["srtt_us"].tolist(), "line", colour=colour))
    # one legend entry for the retransmissions of every flow drawn, each marked on its own flow's cwnd
    rtx = trace[trace["flow"].isin(flows) & (trace["new_rtx"] > 0)].sort_values("t_s")
    if len(rtx):
        cwnd.series.append(
            Series(
                "retransmitted (any flow, on its cwnd)", rtx["t_s"].tolist(), rtx["cwnd"].tolist(), "markers",
                colour=OUT_OF_ORDER, symbol="x",
            )
        )  # fmt: skip
    return [good, cwnd, rtt]


def failure_charts(result: RunResult, tag: str) -> list[Chart]:
    """When links failed: each link's carrier and the monitor's view of it over time (steps), and the
    traffic each link carried (``trace.link_ms``)."""
    events = result.link_events
    trace = None if events is None or events.empty else result.link_trace
    if trace is None:
        return []
    names = _link_names(result)
    end = float(trace["t_s"].max())
    timeline = Chart(
        _key(tag, "link-state"),
        f"{tag}: link state — carrier (solid) and the bond's monitor (dashed)",
        "time (s)",
        "link (raised: up)",
        ycats=names,
    )
    for link in range(len(names)):
        rows = events[events["link"] == link]
        times = [0.0, *rows["t_s"].tolist(), end]
        for what, lift, dash in (("carrier", 0.4, False), ("up", 0.3, True)):
            states = [True, *rows[what].astype(bool).tolist()]
            states.append(states[-1])
            ys = [link + (lift if s else 0.0) for s in states]
            label = f"{names[link]} {'carrier' if what == 'carrier' else 'monitor'}"
            timeline.series.append(Series(label, times, ys, "step", colour=_colour(link), dash=dash))
    traffic = Chart(_key(tag, "link-traffic"), f"{tag}: traffic per link", "time (s)", "throughput (Mbit/s)")
    for link, rows in trace.groupby("link", sort=True):
        mbps = (rows["wire_bytes"] * 8 / rows["width_s"] / 1e6).tolist()
        traffic.series.append(Series(names[int(link)], rows["t_s"].tolist(), mbps, "line", colour=_colour(int(link))))
    return [timeline, traffic]


def schedule_chart(result: RunResult, tag: str, limit: int = SCHEDULE_PACKETS) -> Chart | None:
    """The thesis's Figures 6 and 8 drawn from a run: the first packets in the bond's order, each on the
    link it took, from when the bond was handed it (grey line) to when it reached the clients' wire
    (its number), out-of-order arrivals in red."""
    packets = _data_packets(result)
    if not _length(packets):
        return None
    names = _link_names(result)
    rows = {name: values[:limit] for name, values in packets.items()}
    ooo = sum(bool(v) for v in rows["out_of_order"])
    arrived = sum(not _missing(v) for v in rows["arrived_s"])
    chart = Chart(
        _key(tag, "schedule"),
        f"{tag}: schedule of the first {_length(rows)} packets ({ooo} of {arrived} arrived out of order)",
        "time (ms)",
        "link",
        ycats=names,
    )
    on_link = _where(rows, [not _missing(v) for v in rows["link"]])
    xs: list[float | None] = []
    ys: list[float | None] = []
    times = zip(on_link["link"], on_link["sent_s"], on_link["left_s"], on_link["arrived_s"], strict=True)
    for link, sent, left, at in times:
        end = left if _missing(at) else at
        if not _missing(end):
            xs += [sent * 1e3, end * 1e3, None]
            ys += [link, link, None]
    chart.series.append(Series("waiting and on the wire", xs, ys, "line", colour="#bbbbbb"))
    for label, flag, colour, symbol in (
        ("in order", False, IN_ORDER, "square"),
        ("out of order", True, OUT_OF_ORDER, "x"),
    ):
        arrivals = zip(on_link["out_of_order"], on_link["arrived_s"], strict=True)
        keep = [bool(o) == flag and not _missing(a) for o, a in arrivals]
        _markers(chart, label, _where(on_link, keep), "arrived_s", colour, symbol)
    lost = _where(on_link, [_missing(a) for a in on_link["arrived_s"]])
    if _length(lost):
        _markers(chart, "lost", lost, "sent_s", "#000000", "x")
    return chart


def _markers(chart: Chart, label: str, packets: Mapping[str, list], at: str, colour: str, symbol: str) -> None:
    """``packets`` marked on their links at the time ``at`` (in ms), each labelled with its number from 1."""
    chart.series.append(
        Series(
            label, [t * 1e3 for t in packets[at]], [int(v) for v in packets["link"]], "markers",
            text=[str(p + 1) for p in packets["packet"]], colour=colour, symbol=symbol,
        )
    )  # fmt: skip


def completion_chart(result: RunResult, tag: str) -> Chart | None:
    """The complete flows' completion times (request to its last byte delivered) as a distribution, the
    summary's p50 and p99 marked."""
    requests = result.columns("requests") or {}
    if not {"arrival_s", "finish_s", "lost"} <= set(requests) or not _length(requests):
        return None
    durations = sorted(
        f - a for f, a, lost in zip(requests["finish_s"], requests["arrival_s"], requests["lost"], strict=True)
        if lost == 0 and not _missing(f)
    )  # fmt: skip
    if not durations:
        return None
    fct_ms = [d * 1e3 for d in durations]
    chart = Chart(
        _key(tag, "completion"),
        f"{tag}: completion times of the {len(fct_ms)} complete flows",
        "completion time (ms)",
        "share of flows done",
    )
    # from none done, rising at each flow's completion
    xs, ys = [fct_ms[0], *fct_ms], [0.0, *(i / len(fct_ms) for i in range(1, len(fct_ms) + 1))]
    chart.series.append(Series("flows", xs, ys, "step", colour=_colour(0)))
    marks = [
        (q, label) for q, label in ((0.5, "p50"), (0.99, "p99")) if result.summary.get(f"fct_{label}_s") is not None
    ]
    if marks:
        chart.series.append(
            Series(
                "p50, p99 (summary)", [result.summary[f"fct_{label}_s"] * 1e3 for _, label in marks],
                [q for q, _ in marks], "markers", text=[label for _, label in marks], colour=_colour(3),
            )
        )  # fmt: skip
    return chart


def cost_section(result: RunResult, tag: str) -> Section | None:
    """A TCP run's lead: what reordering cost it, the figures :func:`bondsim.columns.default` leads TCP with
    (a table of one row) and its flows' completion times; None for another transport."""
    runs = [{k: v for k, v in result.summary.items() if not isinstance(v, list | dict)}]
    if not columns.summary_is_tcp(result.summary):
        return None
    shown = [c for c in columns.default_of(runs) if c not in columns.FAILOVER]  # failures: their own section
    table = ([c.label for c in shown], [[columns.cell(c.of(runs)[0]) for c in shown]])
    chart = completion_chart(result, tag)
    return Section(f"{tag}: what reordering cost", [chart] if chart else [], [], table)


#: Failures the report lists (the rest are in ``failovers.csv``).
FAILOVER_ROWS = 20


def failure_section(result: RunResult, tag: str) -> Section | None:
    """When a link failed: the failovers table (a row per failure, as ``bondsim run`` shows them) and, with
    time series, :func:`failure_charts`."""
    charts = failure_charts(result, tag)
    failovers = result.failovers
    if failovers is None or not len(failovers):
        return Section(f"{tag}: failures", charts) if charts else None
    shown = failovers.head(FAILOVER_ROWS)
    header = ["failure", *columns.FAILOVER_CELLS]
    rows = [
        [f"{i + 1}: {r['name']} ({r['kind']})", *(cell(r) for cell in columns.FAILOVER_CELLS.values())]
        for i, r in shown.iterrows()
    ]
    total = int(result.summary.get("failovers") or len(failovers))
    notes = [f"{total:,} link failure(s)" + (f"; the first {len(shown)} listed" if total > len(shown) else "")]
    return Section(f"{tag}: failures", charts, notes, (header, rows))


def run_sections(result: RunResult, tag: str) -> list[Section]:
    """Every chart one run's data allows, in sections; a TCP run leads with what reordering cost it."""
    s = result.summary
    cost = cost_section(result, tag)
    tcp = cost is not None
    wire = f"{s.get('wire_ooo_fraction', 0):.2%}"
    notes = [
        f"scheduler {s.get('scheduler')}, seed {s.get('seed')}, {s.get('link_count')} links, "
        f"{s.get('requests')} requests, {s.get('packets')} packets; goodput "
        f"{(s.get('goodput_bps') or 0) / 1e6:.2f} Mbit/s, "
        + (
            f"out of order on the clients' wire {wire}"
            if tcp
            else f"out of order {s.get('ooo_fraction', 0):.2%} (wire {wire})"
        )
    ]
    if result.columns("link_trace") is None and result.columns("packet_trace") is None:
        notes.append("No time series: add a [trace] table to the scenario (link_ms, packets) to see them.")
    # the run in a line, under its first heading: what reordering cost a TCP run, else its links
    links = Section(f"{tag}: links", link_charts(result, tag), [] if cost else notes)
    if cost:
        cost.notes[:0] = notes
    schedule = schedule_chart(result, tag)
    ordering = Section(f"{tag}: reordering and delay", [delay_chart(result, tag)])
    if tcp:
        ordering.notes.append(
            "No RFC 5236 reorder density or RFC 4737 extents: they are measured where the application reads, and "
            "TCP hands it every byte in order (0 for every TCP run, which a chart would draw flat). On the clients' "
            f"wire {wire} of the packets arrived out of order; what that cost leads this run's report."
        )
    else:
        ordering.charts[:0] = reorder_charts(result, tag)
    traced = tcp_charts(result, tag)
    sections = [
        cost,
        Section(f"{tag}: TCP", traced) if traced else None,
        failure_section(result, tag) if tcp else None,
        links,
        Section(f"{tag}: schedule", [schedule]) if schedule is not None else None,
        ordering,
        None if tcp else failure_section(result, tag),
    ]
    return [x for x in sections if x is not None and (x.charts or x.notes or x.table)]
