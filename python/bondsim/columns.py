"""What a table or chart of runs leads with, chosen by the runs' transport: THE place from which
``bondsim sweep`` (its table per grid point), ``bondsim runs list`` and ``bondsim report`` (its charts and
tables) take their default columns, where the derived columns are computed (goodput in Mbit/s, the
spurious share of retransmissions), and how a cell and a failover row are written.

A TCP run delivers in order: at the application's delivery point its out-of-order share
(``ooo_fraction``) and its RFC 4737 / RFC 5236 figures are 0 whatever the bond does. Its reordering
shows on the clients' wire (``wire_ooo_fraction``) and in what it costs: goodput, retransmissions and
the share of them that were spurious (D-SACKed: the segment had arrived), completion times. So TCP runs
lead with those (:data:`TCP`) and the other transports (the thesis's paced sender, window, cbr) with the
delivery point's order (:data:`OTHER`); runs whose links failed add the failover figures
(:data:`FAILOVER`). A run is TCP when its summary has TCP's figures: ``tcp_retransmits`` is reported by
the simulator's TCP and by the emulator's kernel TCP, by no other transport (null otherwise).

Goodput and throughput are in Mbit/s wherever a default shows them (``goodput_mbps``: the summary's
``goodput_bps`` × 1e-6). Derived columns are computed per run, so a grid point's value is the mean over
its seeds of each run's (the spurious share: over the seeds that retransmitted at all).

Nothing heavy is imported here: the command line builds its help from these names without pandas.
"""

from __future__ import annotations

import datetime
import json
import math
import numbers
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Column:
    """A column of a table of runs (one row per run, the summary's figures as columns)."""

    #: Its name in tables, ``--metrics`` and ``--columns``.
    name: str
    #: What it is, with its unit: the charts' axis title.
    label: str
    #: The summary figures it is computed from (empty: it is the figure ``name`` itself).
    needs: tuple[str, ...] = ()
    #: The computation over those figures (as numbers; a figure a run lacks is NaN): a table's columns, or one
    #: run's figures as floats (:meth:`of`).
    compute: Callable[[Any], Any] | None = None
    #: ``True``: TCP's figure (empty for other runs); ``False``: empty for TCP runs (the delivery point's
    #: order, 0 for every TCP run); ``None``: every run's.
    tcp: bool | None = None

    def values(self, runs: pd.DataFrame) -> pd.Series:
        """This column for each run of ``runs`` (NaN where a run lacks what it is computed from); a figure
        taken as it is keeps its type (counts stay whole)."""
        import pandas as pd

        def figure(name: str) -> pd.Series:
            if name not in runs:
                return pd.Series(math.nan, index=runs.index, dtype=float)
            values = runs[name]
            numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
            return values if numeric else pd.to_numeric(values, errors="coerce").astype(float)

        if self.compute is None:
            values = figure(self.name)
        else:
            values = self.compute(pd.DataFrame({n: figure(n).astype(float) for n in self.needs}, index=runs.index))
        if self.tcp is not None:
            values = values.where(is_tcp(runs) == self.tcp)
        return values.rename(self.name)

    def of(self, rows: Sequence[Mapping[str, Any]]) -> list[float | int]:
        """:meth:`values` of plain rows (a mapping per run, as :meth:`bondsim.store.Store.run_rows` gives them),
        without pandas: a number per run, NaN where it lacks what the column is computed from."""
        out = []
        for row in rows:
            if self.tcp is not None and summary_is_tcp(row) != self.tcp:
                out.append(math.nan)
            elif self.compute is None:  # a figure as it is keeps its type (counts stay whole)
                value = row.get(self.name)
                out.append(value if isinstance(value, int | float) and not isinstance(value, bool) else number(value))
            else:
                out.append(float(self.compute({n: number(row.get(n)) for n in self.needs})))
        return out


def number(value: Any) -> float:
    """A run's figure as a float, as ``pd.to_numeric(errors="coerce")`` reads it: NaN for none or for words."""
    try:
        return math.nan if value is None else float(value)
    except (TypeError, ValueError):
        return math.nan


def _ratio(part: str, whole: str) -> Callable[[Any], Any]:
    """``part`` over ``whole`` where ``whole`` is above 0 (else NaN): of a table's columns or of one run's figures."""

    def ratio(f: Any) -> Any:
        if isinstance(f[whole], float):
            return f[part] / f[whole] if f[whole] > 0 else math.nan
        return f[part] / f[whole].where(f[whole] > 0)

    return ratio


GOODPUT = Column("goodput_mbps", "goodput (Mbit/s)", ("goodput_bps",), lambda f: f["goodput_bps"] * 1e-6)
THROUGHPUT = Column(
    "throughput_mbps", "throughput on the wire (Mbit/s)", ("throughput_bps",), lambda f: f["throughput_bps"] * 1e-6
)
RETRANSMITS = Column("tcp_retransmits", "TCP retransmissions", tcp=True)
SPURIOUS_SHARE = Column(
    "tcp_spurious_share",
    "spurious share of retransmissions (D-SACKed)",
    ("tcp_spurious_retransmits", "tcp_retransmits"),
    _ratio("tcp_spurious_retransmits", "tcp_retransmits"),
    tcp=True,
)
WIRE_OOO = Column("wire_ooo_fraction", "out-of-order share (clients' wire)")
FCT_P50 = Column("fct_p50_s", "completion time p50 (s)")
FCT_P99 = Column("fct_p99_s", "completion time p99 (s)")
OOO = Column("ooo_fraction", "out-of-order share (delivery point)", tcp=False)
MAKESPAN = Column("makespan_s", "makespan (s)")
FAILOVERS = Column("failovers", "link failures")
DETECTION = Column("detection_ms_max", "failure detection, longest (ms)")
SWITCHOVER = Column("switchover_ms_max", "flows' switch-over, longest (ms)")
STALL = Column("tcp_stall_ms_max", "TCP stall after a failure, longest (ms)", tcp=True)
MPTCP_WAIT = Column("mptcp_ofo_delay_mean_ms", "MPTCP reordering wait, mean (ms)")

#: What TCP runs lead with: what reordering costs.
TCP = (GOODPUT, RETRANSMITS, SPURIOUS_SHARE, WIRE_OOO, FCT_P50, FCT_P99)
#: What the other transports' runs lead with: the thesis's order at the delivery point, its time, goodput.
OTHER = (OOO, MAKESPAN, GOODPUT)
#: Added when a run is MPTCP's: the reordering its connection level absorbs (the wait is the cost).
MPTCP = (MPTCP_WAIT,)
#: Added when a run's links failed.
FAILOVER = (FAILOVERS, DETECTION, SWITCHOVER, STALL)
#: The summary figures the default columns are chosen by (:func:`default`) and computed from: all of a run's that
#: a report of runs reads.
FIGURES = tuple(
    dict.fromkeys(
        ["scheduler", "tcp_retransmits", "mptcp_ofo_max", "failovers"]
        + [n for c in (*TCP, *MPTCP, *OTHER, *FAILOVER) for n in c.needs or (c.name,)]
    )
)
#: Columns computed from the summary's figures (any table of runs can show them by name).
DERIVED = {c.name: c for c in (GOODPUT, THROUGHPUT, SPURIOUS_SHARE)}


def describe() -> str:
    """The default columns in words (the help texts')."""

    def names(columns: Sequence[Column]) -> str:
        return ",".join(c.name for c in columns)

    return (
        f"by the runs' transport: TCP {names(TCP)} (MPTCP adds {names(MPTCP)}); others {names(OTHER)}; "
        f"and {names(FAILOVER)} when links failed"
    )


def summary_is_tcp(summary: dict) -> bool:
    """Whether one run's summary is a TCP run's (it has ``tcp_retransmits``: :func:`is_tcp`'s rule)."""
    return summary.get("tcp_retransmits") is not None


def summary_is_mptcp(summary: dict) -> bool:
    """Whether one run's summary is an MPTCP run's (it has ``mptcp_ofo_max``: :func:`is_mptcp`'s rule)."""
    return summary.get("mptcp_ofo_max") is not None


def is_mptcp(runs: pd.DataFrame) -> pd.Series:
    """Which runs are MPTCP's (their summary has ``mptcp_ofo_max``)."""
    import pandas as pd

    if "mptcp_ofo_max" not in runs:
        return pd.Series(False, index=runs.index)
    return runs["mptcp_ofo_max"].notna()


def is_tcp(runs: pd.DataFrame) -> pd.Series:
    """Which runs are TCP's (their summary has ``tcp_retransmits``)."""
    import pandas as pd

    if "tcp_retransmits" not in runs:
        return pd.Series(False, index=runs.index)
    return runs["tcp_retransmits"].notna()


def failed(runs: pd.DataFrame) -> bool:
    """Whether a link of any of ``runs`` failed."""
    import pandas as pd

    return "failovers" in runs and bool((pd.to_numeric(runs["failovers"], errors="coerce").fillna(0) > 0).any())


def default(runs: pd.DataFrame) -> list[Column]:
    """The columns ``runs`` lead with (:func:`_lead`)."""
    tcp = is_tcp(runs)
    return _lead(bool(tcp.any()), bool(tcp.all()) and not runs.empty, bool(is_mptcp(runs).any()), failed(runs))


def default_of(rows: Sequence[Mapping[str, Any]]) -> list[Column]:
    """:func:`default` of plain rows (a mapping per run), without pandas."""
    tcp = [summary_is_tcp(r) for r in rows]
    failures = any(number(r.get("failovers")) > 0 for r in rows)
    return _lead(any(tcp), all(tcp) and bool(rows), any(summary_is_mptcp(r) for r in rows), failures)


def _lead(any_tcp: bool, all_tcp: bool, any_mptcp: bool, failed: bool) -> list[Column]:
    """The columns runs lead with: :data:`TCP`'s if any is TCP's (and :data:`MPTCP`'s if any is MPTCP's),
    :data:`OTHER`'s if any is not (both for a sweep of both), then :data:`FAILOVER`'s if a link failed (TCP's
    stall only if any is TCP)."""
    chosen = list(TCP) if any_tcp else []
    if any_mptcp:
        chosen += MPTCP
    if not all_tcp:
        chosen += [c for c in OTHER if c not in chosen]
    if failed:
        chosen += [c for c in FAILOVER if c.tcp is None or any_tcp]
    return chosen


def named(name: str) -> Column:
    """A column a user names: a derived one (:data:`DERIVED`) or a summary figure as it is."""
    return DERIVED.get(name) or Column(name, name)


def with_rules(name: str) -> Column:
    """A column a user names for a figure (``plot --y``): one of the default columns with its rule (the
    delivery point's order is empty for TCP runs, whose application sees order), else :func:`named`'s.
    (Tables keep :func:`named`: a figure asked for by name shows what the summary stored.)"""
    return next((c for c in (*TCP, *MPTCP, *OTHER, *FAILOVER) if c.name == name), None) or named(name)


def table(runs: pd.DataFrame, columns: Sequence[Column]) -> pd.DataFrame:
    """``runs`` with each of ``columns`` computed (added, or in place of the figure of its name)."""
    runs = runs.copy()
    for column in columns:
        runs[column.name] = column.values(runs)
    return runs


def per_point(runs: pd.DataFrame, by: Sequence[str], columns: Sequence[Column]) -> pd.DataFrame:
    """The mean of each of ``columns`` per group of ``by`` (a sweep's grid points: its axes), after ``by``
    the number of runs averaged (``runs``); one row of everything when ``by`` is empty."""
    import pandas as pd

    names = [c.name for c in columns]
    runs = table(runs, columns)
    if not by:
        return pd.DataFrame([{"runs": len(runs), **runs[names].mean().to_dict()}])
    grouped = runs.groupby(list(by), sort=False, dropna=False)
    means = grouped[names].mean().reset_index()
    means.insert(len(by), "runs", grouped.size().to_numpy())
    return means


def per_point_of(
    rows: Sequence[Mapping[str, Any]], by: Sequence[str], columns: Sequence[Column]
) -> tuple[list[str], list[list[Any]]]:
    """:func:`per_point` of plain rows (a mapping per run, ``by`` not empty), without pandas: its header and rows,
    the means by :func:`bondsim.stats.group_means`."""
    from bondsim.stats import group_means

    keys = [tuple(row[k] for k in by) for row in rows]
    sizes = Counter(keys)  # (in order of first appearance, as the means)
    means = [group_means(keys, [float(v) for v in column.of(rows)]) for column in columns]
    body = [[*key, size, *(m[key] for m in means)] for key, size in sizes.items()]
    return [*by, "runs", *(c.name for c in columns)], body


def cell(value: Any) -> str:
    """A value as a table shows it: integers with separators, 4 significant digits, ``-`` for none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        return f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:.4g}"
    if isinstance(value, dict | list):
        return json.dumps(value)
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return str(value)


# -- the failovers table (a run whose links can fail): one row per failure ---------------------------------


def ms(value) -> str:
    """A duration in ms, or "-" for none (null, NaN)."""
    return "-" if value is None or value != value else f"{value:,.3f} ms"


def _never(value, text: str) -> str:
    return "never" if value != value else text


#: The failovers table's figures as ``bondsim run`` prints them and the report shows them: label -> the
#: cell of a row (a ``failovers`` row as a mapping).
FAILOVER_CELLS: dict[str, Callable[[Any], str]] = {
    "down at": lambda r: f"{r['down_at_s']:.6f} s",
    "up at": lambda r: _never(r["up_at_s"], f"{r['up_at_s']:.6f} s"),
    "detection": lambda r: _never(r["detection_ms"], ms(r["detection_ms"])),
    "switch-over (median)": lambda r: ms(r["switchover_ms"]),
    "switch-over (max)": lambda r: ms(r["switchover_ms_max"]),
    "flows switched": lambda r: f"{r['switchover_flows']:,}",
    "TCP stall": lambda r: ms(r["tcp_stall_ms"]),
    "RTOs (spurious)": lambda r: "-" if r["rtos"] != r["rtos"] else f"{int(r['rtos']):,} ({int(r['spurious_rtos']):,})",
    "lost: link down": lambda r: f"{r['lost_link_down']:,}",
    "lost: no link": lambda r: f"{r['lost_no_link']:,}",
    "lost: queue full": lambda r: f"{r['lost_queue_full']:,}",
    "lost: random": lambda r: f"{r['lost_random']:,}",
    "lost: silent port": lambda r: f"{r['lost_silent']:,}",
    "lost: switch port": lambda r: f"{r['lost_switch_port']:,}",
    "throughput during": lambda r: f"{r['throughput_bps'] / 1e6:,.3f} Mbit/s",
}
