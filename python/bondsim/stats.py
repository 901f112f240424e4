"""Statistics over results: the thesis's ``process.sh`` table and friends."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
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


def enough_for_interval(n: int) -> bool:
    """Whether ``n`` runs give a published 95% interval (:data:`MIN_INTERVAL_RUNS`)."""
    return n >= MIN_INTERVAL_RUNS


def published(table: pd.DataFrame, value: str) -> pd.DataFrame:
    """``table`` (a :func:`mean_ci` table) with ``{value}_lo`` / ``{value}_hi`` emptied where fewer than
    :data:`MIN_INTERVAL_RUNS` runs gave them (``{value}_n``), and on every row without that count: the
    intervals a chart may draw, as :func:`ci_text` writes them."""
    bounds = [f"{value}_lo", f"{value}_hi"]
    if not set(bounds) <= set(table.columns):
        return table
    if f"{value}_n" not in table:
        return table.drop(columns=bounds)
    enough = table[f"{value}_n"].map(enough_for_interval).astype(bool)
    return table.assign(**{b: table[b].where(enough) for b in bounds})


def cell(value: float, spec: str) -> str:
    """A table cell: ``value`` formatted by ``spec``, or a dash where a run has none (NaN)."""
    return "–" if value != value else format(value, spec)


def ci_text(row: Any, value: str, spec: str) -> str:
    """``row``'s mean of ``value`` (a row of :func:`mean_ci`'s table) with how far to trust it, each number
    formatted by ``spec``: its 95% interval from :data:`MIN_INTERVAL_RUNS` runs or more, else the runs' own
    range and their count, or the value alone from one run."""
    get = row.get if hasattr(row, "get") else lambda k: getattr(row, k)
    mean, n = get(value), int(get(f"{value}_n"))
    if enough_for_interval(n):
        return f"{mean:{spec}} ({get(f'{value}_lo'):{spec}}–{get(f'{value}_hi'):{spec}})"
    if n > 1:
        return f"{mean:{spec}} (runs {get(f'{value}_min'):{spec}}–{get(f'{value}_max'):{spec}}, n = {n})"
    return f"{mean:{spec}}"


#: Student's t 97.5% quantile (a 95% interval's) for 1 to 100 degrees of freedom: the figures of
#: ``scipy.special.stdtrit(df, 0.975)``, bit for bit (``tests/test_determinism_and_stats.py`` checks them).
# fmt: off
T_975 = (
    12.706204736174694, 4.302652729749462, 3.1824463052837078, 2.7764451051977934, 2.5705818356363146,
    2.4469118511449786, 2.364624251592784, 2.306004135204166, 2.262157162798205, 2.228138851986274,
    2.200985160091639, 2.1788128296672284, 2.1603686564627913, 2.144786687917804, 2.131449545559776,
    2.1199052992212546, 2.1098155778333156, 2.1009220402410382, 2.0930240544083087, 2.085963447265864,
    2.0796138447276795, 2.0738730679040254, 2.0686576104190486, 2.0638985616280245, 2.0595385527532972,
    2.0555294386428735, 2.0518305164802846, 2.0484071417952454, 2.045229642132703, 2.0422724563012378,
    2.039513446396408, 2.0369333434601016, 2.0345152974493383, 2.0322445093177186, 2.030107928250343,
    2.0280940009804502, 2.0261924630291093, 2.0243941639119694, 2.022690920036761, 2.021075390306273,
    2.019540970441376, 2.0180817028184443, 2.016692199227824, 2.0153675744437636, 2.014103388880846,
    2.012895598919429, 2.0117405137297655, 2.010634757624232, 2.0095752371292392, 2.008559112100761,
    2.007583770315836, 2.006646805061688, 2.0057459953178687, 2.0048792881880564, 2.0040447832891455,
    2.003240718847872, 2.002465459291007, 2.0017174841452356, 2.000995378088267, 2.0002978220142604,
    1.999623584994939, 1.9989715170333788, 1.998340542520741, 1.997729654317693, 1.9971379083920038,
    1.9965644189523117, 1.996008354025296, 1.9954689314298435, 1.9949454151072374, 1.994437111771186,
    1.9939433678456255, 1.9934635666618719, 1.992997125889855, 1.992543495180932, 1.9921021540022417,
    1.9916726096446642, 1.9912543953883846, 1.9908470688116906, 1.9904502102301285, 1.990063421254446,
    1.9896863234569029, 1.989318557136572, 1.9889597801751624, 1.9886096669757083, 1.9882679074772216,
    1.98793420623902, 1.9876082815890708, 1.9872898648311692, 1.986978699506281, 1.9866745407037683,
    1.9863771544186177, 1.98608631695113, 1.9858018143458227, 1.985523441866604, 1.9852510035054978,
    1.984984311522457, 1.9847231860139845, 1.9844674545084815, 1.9842169515864174, 1.9839715185235518,
)
# fmt: on


def t_value(df: int, p: float) -> float:
    """Student's t quantile ``p`` for ``df`` degrees of freedom (a whole number from 1):
    ``scipy.special.stdtrit``'s figure, which ``scipy.stats.t.ppf`` gives too. A 95% interval's up to
    100 degrees of freedom come from :data:`T_975` without importing scipy (0.16 s of a report's
    start, 0.9 s for ``scipy.stats``)."""
    if p == 0.975 and 1 <= df <= len(T_975):
        return T_975[df - 1]
    from scipy.special import stdtrit

    return float(stdtrit(df, p))


def interval(mean: float, std: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """THE interval rule: Student's t interval at ``level`` of the mean of ``n`` runs whose standard deviation
    is ``std``, as (lo, hi): the mean ± t · s / √n. One run (or none) has no spread: its interval is the value
    itself (nothing was replicated)."""
    if n <= 1:
        return mean, mean
    half = t_value(n - 1, 0.5 + level / 2) * std / math.sqrt(n)
    return mean - half, mean + half


def _groups(keys: Sequence[Hashable], values: Sequence[float]) -> dict[Hashable, list[float]]:
    """``values`` by key, in order of the keys' first appearance."""
    groups: dict[Hashable, list[float]] = {}
    for key, value in zip(keys, values, strict=True):
        groups.setdefault(key, []).append(value)
    return groups


def _sum(values: list[float]) -> float:
    """The sum of ``values`` exactly rounded (:func:`math.fsum`); where fsum gives none (infinities of both signs,
    a sum past the floats' range), the plain sum's NaN or infinity."""
    try:
        return math.fsum(values)
    except (ValueError, OverflowError):
        return sum(values)


def mean_of(values: Sequence[float]) -> float:
    """The mean of ``values``, NaN skipped (NaN for none): their exactly rounded sum over their number."""
    present = [v for v in values if v == v]
    return _sum(present) / len(present) if present else math.nan


def std_of(values: Sequence[float]) -> float:
    """The sample standard deviation of ``values``, NaN skipped (NaN for fewer than two): the square root of the
    squared deviations from :func:`mean_of` summed exactly rounded, over n - 1."""
    present = [v for v in values if v == v]
    if len(present) < 2:
        return math.nan
    mean = mean_of(present)
    return math.sqrt(_sum([(v - mean) * (v - mean) for v in present]) / (len(present) - 1))


def group_means(keys: Sequence[Hashable], values: Sequence[float]) -> dict[Hashable, float]:
    """The mean of ``values`` per key (:func:`mean_of`: NaN skipped, NaN for none), in order of the keys' first
    appearance."""
    return {key: mean_of(group) for key, group in _groups(keys, values).items()}


def mean_ci_rows(rows: Sequence[Mapping], by: Sequence[str], value: str, level: float = 0.95) -> list[dict]:
    """:func:`mean_ci` of plain rows (mappings; ``value`` a float, NaN where a run has none), without pandas: a
    row per group of ``by`` in order of first appearance, with the same columns: the mean and standard deviation
    of :func:`mean_of` and :func:`std_of` (pandas' to rounding, not to the bit) and :func:`interval`."""
    groups = _groups([tuple(row[k] for k in by) for row in rows], [row[value] for row in rows])
    out = []
    for key, group in groups.items():
        present = [v for v in group if v == v]
        mean = mean_of(present)
        lo, hi = interval(mean, std_of(present), len(present), level)
        out.append(
            dict(zip(by, key, strict=True))
            | {value: mean, f"{value}_lo": lo, f"{value}_hi": hi, f"{value}_n": len(present)}
            | {f"{value}_min": min(present, default=math.nan), f"{value}_max": max(present, default=math.nan)}
        )
    return out


def mean_ci(
    table: pd.DataFrame, by: list[str], value: str, level: float = 0.95, *, means: tuple[str, ...] = ()
) -> pd.DataFrame:
    """Mean of ``value`` over the rows of each ``by`` group (the replications), with Student's t
    interval at ``level`` (:func:`interval`): columns ``by``, ``value``, ``{value}_lo``, ``{value}_hi``,
    ``{value}_n``, and the plain mean of each column of ``means``.

    The runs' own range is kept too (``{value}_min``, ``{value}_max``): a published interval comes from at
    least :data:`MIN_INTERVAL_RUNS` runs, fewer are shown as their range (:func:`ci_text`).
    """
    import pandas as pd

    grouped = table.groupby(by, sort=False)[value]
    out = grouped.agg(["mean", "std", "count", "min", "max"]).reset_index()
    bounds = [interval(m, s, int(n), level) for m, s, n in zip(out["mean"], out["std"], out["count"], strict=True)]
    lo, hi = (pd.Series([b[i] for b in bounds], index=out.index, dtype=float) for i in (0, 1))
    out = out.assign(
        **{value: out["mean"], f"{value}_lo": lo, f"{value}_hi": hi},
        **{f"{value}_n": out["count"], f"{value}_min": out["min"], f"{value}_max": out["max"]},
    )[[*by, value, f"{value}_lo", f"{value}_hi", f"{value}_n", f"{value}_min", f"{value}_max"]]
    for column in means:
        out[column] = table.groupby(by, sort=False)[column].mean().to_numpy()
    return out


def share_ci(outcomes: list, values: list, name: str, value: str, level: float = 0.95) -> pd.DataFrame:
    """How often each of ``values`` came out among ``outcomes`` (one per replication): the share (the
    mean over the replications of an indicator) with its interval from :func:`mean_ci`; columns ``name``,
    ``value``, ``{value}_lo``, ``{value}_hi`` and ``{value}_n`` (the replications)."""
    import pandas as pd

    hits = pd.DataFrame([{name: v, value: float(o == v)} for v in values for o in outcomes])
    return mean_ci(hits, [name], value, level).drop(columns=[f"{value}_min", f"{value}_max"])
