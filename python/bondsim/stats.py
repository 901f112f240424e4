"""Statistics over results: the thesis's ``process.sh`` table and friends."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas loads on use: `bondsim run --out` writes process.txt without it
    import pandas as pd

#: The columns of :func:`process_table`, in the order of :func:`process_rows`' tuples.
PROCESS_COLUMNS = ("packets", "entries", "average", "p_outorder")


#: Why :func:`process_rows` gives no P(outorder) for requests of 0 packets (said under the table).
NO_PACKETS_NOTE = (
    "P(outorder) n/a: requests that got 0 packets (none delivered, e.g. a link too slow for the run's time) "
    "have no share of packets out of order"
)


def process_rows(packets: Sequence[int], out_of_order: Sequence[int]) -> list[tuple[int, int, float, float | None]]:
    """The thesis's ``process.sh`` table from the requests' columns: per packets-per-file (ascending),
    the number of requests (entries), their average out-of-order count, and P(outorder) = average /
    packets; None for requests of 0 packets (a share of nothing: :data:`NO_PACKETS_NOTE`)."""
    groups: dict[int, list[int]] = {}
    for size, late in zip(packets, out_of_order, strict=True):
        groups.setdefault(int(size), []).append(int(late))
    rows = []
    for size in sorted(groups):
        average = sum(groups[size]) / len(groups[size])
        rows.append((size, len(groups[size]), average, average / size if size > 0 else None))
    return rows


def process_table(requests: pd.DataFrame) -> pd.DataFrame:
    """:func:`process_rows` of a requests table, as a table (columns :data:`PROCESS_COLUMNS`)."""
    import pandas as pd

    rows = process_rows(requests["packets"].tolist(), requests["out_of_order"].tolist())
    return pd.DataFrame(rows, columns=list(PROCESS_COLUMNS))


def format_process_table(rows: Iterable[tuple]) -> str:
    """:func:`process_rows` (or a :func:`process_table`'s ``itertuples(index=False)``) in ``process.sh``'s
    layout (tab-separated, two decimals)."""
    lines = ["Packets\tEntries\tAverage\tP(outorder)"]
    undefined = False
    for packets, entries, average, p_outorder in rows:
        if p_outorder is None or p_outorder != p_outorder:  # None, or NaN from a table
            undefined = True
            lines.append(f"{packets}\t{entries}\t{average:.2f}\tn/a")
        else:
            lines.append(f"{packets}\t{entries}\t{average:.2f}\t{p_outorder:.2f}")
    if undefined:
        lines.append(f"# {NO_PACKETS_NOTE}")
    return "\n".join(lines)


#: The fewest runs a published 95% interval comes from (issue 38: Student's t over two runs spans
#: +-12.7 standard errors, wider than any figure it qualifies).
MIN_INTERVAL_RUNS = 5


#: The note under a table whose figures :func:`ci_text` wrote.
CI_NOTE = (
    f"\n† Mean with its 95% interval (Student's t) from {MIN_INTERVAL_RUNS} runs or more; from fewer, the runs' own "
    "range (min–max) and their number."
)


def cell(value: float, spec: str) -> str:
    """A table cell: ``value`` formatted by ``spec``, or a dash where a run has none (NaN)."""
    return "–" if value != value else format(value, spec)


def ci_text(row: Any, value: str, spec: str) -> str:
    """``row``'s mean of ``value`` (a row of :func:`mean_ci`'s table) with how far to trust it, each number
    formatted by ``spec``: its 95% interval from :data:`MIN_INTERVAL_RUNS` runs or more, else the runs' own
    range and their count, or the value alone from one run."""
    get = row.get if hasattr(row, "get") else lambda k: getattr(row, k)
    mean, n = get(value), int(get(f"{value}_n"))
    if n >= MIN_INTERVAL_RUNS:
        return f"{mean:{spec}} ({get(f'{value}_lo'):{spec}}–{get(f'{value}_hi'):{spec}})"
    if n > 1:
        return f"{mean:{spec}} (runs {get(f'{value}_min'):{spec}}–{get(f'{value}_max'):{spec}}, n = {n})"
    return f"{mean:{spec}}"


def mean_ci(
    table: pd.DataFrame, by: list[str], value: str, level: float = 0.95, *, means: tuple[str, ...] = ()
) -> pd.DataFrame:
    """Mean of ``value`` over the rows of each ``by`` group (the replications), with Student's t
    interval at ``level``: columns ``by``, ``value``, ``{value}_lo``, ``{value}_hi``, ``{value}_n``,
    and the plain mean of each column of ``means``.

    A group of one row has no spread: its interval is the value itself (nothing was replicated). The
    runs' own range is kept too (``{value}_min``, ``{value}_max``): a published interval comes from at
    least :data:`MIN_INTERVAL_RUNS` runs, fewer are shown as their range (:func:`ci_text`).
    """
    # Student's t quantile: `scipy.special.stdtrit`, which `scipy.stats.t.ppf` calls (the same figures),
    # without importing scipy.stats (0.7 s of every report's and reproduction's start).
    from scipy.special import stdtrit

    grouped = table.groupby(by, sort=False)[value]
    out = grouped.agg(["mean", "std", "count", "min", "max"]).reset_index()
    half = stdtrit((out["count"] - 1).clip(lower=1), 0.5 + level / 2) * out["std"] / out["count"] ** 0.5
    half = half.where(out["count"] > 1, 0.0)
    out = out.assign(
        **{value: out["mean"], f"{value}_lo": out["mean"] - half, f"{value}_hi": out["mean"] + half},
        **{f"{value}_n": out["count"], f"{value}_min": out["min"], f"{value}_max": out["max"]},
    )[[*by, value, f"{value}_lo", f"{value}_hi", f"{value}_n", f"{value}_min", f"{value}_max"]]
    for column in means:
        out[column] = table.groupby(by, sort=False)[column].mean().to_numpy()
    return out


def share_ci(outcomes: list, values: list, name: str, value: str, level: float = 0.95) -> pd.DataFrame:
    """How often each of ``values`` came out among ``outcomes`` (one per replication): the share (the
    mean over the replications of an indicator) with its interval from :func:`mean_ci`; columns ``name``,
    ``value``, ``{value}_lo``, ``{value}_hi``."""
    import pandas as pd

    hits = pd.DataFrame([{name: v, value: float(o == v)} for v in values for o in outcomes])
    return mean_ci(hits, [name], value, level).drop(columns=[f"{value}_n", f"{value}_min", f"{value}_max"])
