"""``bondsim.columns``: the one choice of what tables and charts of runs lead with, by the runs' transport."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from bondsim import columns


def runs(*rows: dict) -> pd.DataFrame:
    """Runs as the store lists them: a figure a run's transport does not report is null."""
    base = {"goodput_bps": 2e9, "ooo_fraction": 0.0, "wire_ooo_fraction": 0.3, "makespan_s": 1.0}
    base |= {"fct_p50_s": 0.1, "fct_p99_s": 0.2, "tcp_retransmits": None, "tcp_spurious_retransmits": None}
    return pd.DataFrame([base | row for row in rows])


TCP = {"tcp_retransmits": 40, "tcp_spurious_retransmits": 30}
PACED = {"ooo_fraction": 0.25, "wire_ooo_fraction": 0.25}


def names(chosen) -> list[str]:
    return [c.name for c in chosen]


def test_tcp_runs_lead_with_what_reordering_costs_the_others_with_the_delivery_points_order():
    assert names(columns.default(runs(TCP, TCP))) == [
        "goodput_mbps", "tcp_retransmits", "tcp_spurious_share", "wire_ooo_fraction", "fct_p50_s", "fct_p99_s",
    ]  # fmt: skip
    assert names(columns.default(runs(PACED))) == ["ooo_fraction", "makespan_s", "goodput_mbps"]
    # both kinds in one sweep: both sets, each figure once; the delivery point's order empty for TCP's runs
    both = runs(TCP, PACED)
    assert names(columns.default(both)) == [*names(columns.TCP), "ooo_fraction", "makespan_s"]
    ooo = columns.OOO.values(both).tolist()
    assert math.isnan(ooo[0]) and ooo[1] == 0.25
    assert math.isnan(columns.RETRANSMITS.values(both)[1])
    assert names(columns.default(runs())) == names(columns.OTHER)  # no runs: nothing says TCP


def test_failover_figures_follow_when_a_link_failed():
    failed = {"failovers": 2, "detection_ms_max": 1.0, "switchover_ms_max": 2.0, "tcp_stall_ms_max": 3.0}
    assert names(columns.default(runs(TCP | failed)))[-4:] == [
        "failovers",
        "detection_ms_max",
        "switchover_ms_max",
        "tcp_stall_ms_max",
    ]
    assert names(columns.default(runs(PACED | failed | {"tcp_stall_ms_max": None})))[-3:] == [
        "failovers", "detection_ms_max", "switchover_ms_max",
    ]  # fmt: skip
    assert "failovers" not in names(columns.default(runs(TCP | {"failovers": 0})))  # links could fail, none did


def test_derived_columns_goodput_in_mbit_s_and_the_spurious_share_empty_without_retransmissions():
    frame = runs(TCP, TCP | {"tcp_retransmits": 0, "tcp_spurious_retransmits": 0}, PACED)
    assert columns.GOODPUT.values(frame).tolist() == [2000.0] * 3
    share = columns.SPURIOUS_SHARE.values(frame).tolist()
    assert share[0] == pytest.approx(0.75) and math.isnan(share[1]) and math.isnan(share[2])
    assert columns.named("goodput_mbps") is columns.GOODPUT and columns.named("dropped").name == "dropped"
    # a count taken as it is stays whole
    assert columns.RETRANSMITS.values(runs(TCP)).tolist() == [40]
    # per grid point: the mean over its seeds of each run's value
    means = columns.per_point(runs(TCP, TCP | {"goodput_bps": 1e9}), [], columns.default(runs(TCP)))
    assert means["runs"].tolist() == [2] and means["goodput_mbps"].tolist() == [1500.0]


def test_cells_as_tables_print_them():
    assert [columns.cell(v) for v in (None, math.nan, True, 12345, 1234.5678, 0.000123, 123456.7)] == [
        "-", "-", "true", "12,345", "1235", "0.000123", "123,457",
    ]  # fmt: skip
