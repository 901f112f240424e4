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
