"""Statistics over results: the thesis's ``process.sh`` table and friends."""

from __future__ import annotations

import pandas as pd


def process_table(requests: pd.DataFrame) -> pd.DataFrame:
    """The thesis's ``process.sh`` table: per packets-per-file, the number of
    requests (entries), their average out-of-order count, and P(outorder) =
    average / packets.
    """
    grouped = requests.groupby("packets", sort=True)["out_of_order"]
    table = pd.DataFrame({"entries": grouped.size(), "average": grouped.mean()})
    table["p_outorder"] = table["average"] / table.index.to_series()
    return table.reset_index()


def format_process_table(table: pd.DataFrame) -> str:
    """The table in ``process.sh``'s layout (tab-separated, two decimals)."""
    lines = ["Packets\tEntries\tAverage\tP(outorder)"]
    for row in table.itertuples(index=False):
        lines.append(f"{row.packets}\t{row.entries}\t{row.average:.2f}\t{row.p_outorder:.2f}")
    return "\n".join(lines)


def mean_ci(
    table: pd.DataFrame, by: list[str], value: str, level: float = 0.95, *, means: tuple[str, ...] = ()
) -> pd.DataFrame:
    """Mean of ``value`` over the rows of each ``by`` group (the replications), with Student's t
    interval at ``level``: columns ``by``, ``value``, ``{value}_lo``, ``{value}_hi``, ``{value}_n``,
    and the plain mean of each column of ``means``.

    A group of one row has no spread: its interval is the value itself (nothing was replicated).
    """
    from scipy import stats

    grouped = table.groupby(by, sort=False)[value]
    out = grouped.agg(["mean", "std", "count"]).reset_index()
    half = stats.t.ppf(0.5 + level / 2, (out["count"] - 1).clip(lower=1)) * out["std"] / out["count"] ** 0.5
    half = half.where(out["count"] > 1, 0.0)
    out = out.assign(
        **{value: out["mean"], f"{value}_lo": out["mean"] - half, f"{value}_hi": out["mean"] + half},
        **{f"{value}_n": out["count"]},
    )[[*by, value, f"{value}_lo", f"{value}_hi", f"{value}_n"]]
    for column in means:
        out[column] = table.groupby(by, sort=False)[column].mean().to_numpy()
    return out


def share_ci(outcomes: list, values: list, name: str, value: str, level: float = 0.95) -> pd.DataFrame:
    """How often each of ``values`` came out among ``outcomes`` (one per replication): the share (the
    mean over the replications of an indicator) with its interval from :func:`mean_ci`; columns ``name``,
    ``value``, ``{value}_lo``, ``{value}_hi``."""
    hits = pd.DataFrame([{name: v, value: float(o == v)} for v in values for o in outcomes])
    return mean_ci(hits, [name], value, level).drop(columns=f"{value}_n")
