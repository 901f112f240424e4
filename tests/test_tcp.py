"""TCP as a user meets it: the shipped scenario from the command line, errors that
name the field, the league's TCP columns, and what the store records."""

from __future__ import annotations

import json

import pytest
from conftest import SCENARIOS

import bondsim

#: A full segment's share of its frame: 1448 payload bytes in a 1500-byte IP packet
#: (IPv4, TCP and timestamp headers) plus 38 bytes of Ethernet framing.
TCP_PAYLOAD_SHARE = 1448 / (1500 + 38)


def test_tcp_rr_scenario_reports_goodput_and_retransmissions(main, tmp_path):
    out = tmp_path / "tcp"
    proc = main("run", str(SCENARIOS / "tcp_rr.toml"), "--out", str(out), "--set", "workload.file_size.bytes=3000000")
    assert proc.returncode == 0, proc.stderr
    rows = (
        "goodput",
        "TCP retransmissions",
        "spurious (D-SACKed)",
        "D-SACKed segments",
        "completion time",
        "on the wire",
    )
    for row in rows:
        assert row in proc.stdout, row
    s = json.loads((out / "summary.json").read_text())
    assert s["flows_complete"] == s["requests"] == 8
    assert s["undelivered"] == 0 and s["out_of_order"] == 0, "TCP hands the application every byte in order"
    assert s["wire_ooo_fraction"] > 0, "round-robin over a longer wire reorders on the wire"
    assert s["tcp_segments_sent"] == s["delivered"] == 8 * -(-3_000_000 // 1448)
    assert 0 < s["goodput_bps"] <= 4e9 * TCP_PAYLOAD_SHARE
    # A spurious retransmission is a retransmission the receiver D-SACKed.
    assert s["tcp_spurious_retransmits"] <= min(s["tcp_dsacks_received"], s["tcp_retransmits"])


def test_a_tcp_knob_error_names_the_field(main, tmp_path):
    proc = main(
        "run",
        str(SCENARIOS / "tcp_rr.toml"),
        "--out",
        str(tmp_path / "x"),
        "--set",
        "sender.tcp_congestion_control=vegas",
    )
    assert proc.returncode == 2
    assert "sender.tcp_congestion_control" in proc.stderr and "cubic" in proc.stderr
    proc = main("run", str(SCENARIOS / "thesis.toml"), "--out", str(tmp_path / "y"), "--set", "sender.tcp_sack=false")
    assert proc.returncode == 2 and "tcp_sack" in proc.stderr and '"tcp"' in proc.stderr


def test_rack_wins_back_what_a_fixed_dupthresh_loses_to_reordering():
    base = ["workload.file_size.bytes=3000000"]
    rack = bondsim.run("tcp_rr", base).summary
    fixed = bondsim.run("tcp_rr", [*base, "sender.tcp_recovery=0", "sender.tcp_max_reordering=3"]).summary
    # D-SACKs of retransmitted segments only (tcp_check_dsack): several times fewer with RACK
    assert fixed["tcp_spurious_retransmits"] > 5 * max(rack["tcp_spurious_retransmits"], 1)
    # Each transfer finishes sooner on average. (Not goodput: over 8 transfers it is set by the last
    # one to finish, which since Karn's rule and Linux's D-SACK checks can be RACK's.)
    assert rack["fct_mean_s"] < fixed["fct_mean_s"]


def test_a_trace_samples_every_open_connection_when_asked(main, tmp_path):
    out = tmp_path / "traced"
    every_ms = 0.5
    proc = main(
        "run",
        str(SCENARIOS / "tcp_rr.toml"),
        "--out",
        str(out),
        "--set",
        "workload.file_size.bytes=2000000",
        "--set",
        f"sender.trace_ms={every_ms}",
    )
    assert proc.returncode == 0, proc.stderr
    import pandas as pd

    trace = pd.read_csv(out / "tcp_trace.csv")
    s = json.loads((out / "summary.json").read_text())
    assert set(trace["flow"]) == set(range(8))
    # One row per open flow at each sample instant, every trace_ms until the last flow is acknowledged.
    times = sorted(trace["t_s"].unique())
    assert times[1] - times[0] == pytest.approx(every_ms / 1e3)
    assert times[-1] <= s["duration_s"]
    assert (trace.groupby("flow")["acked"].diff().dropna() >= 0).all(), "acknowledged data only grows"
    assert (trace["cwnd"] >= 1).all() and set(trace["state"]) <= {"open", "disorder", "cwr", "recovery", "loss"}
    assert s["tcp_trace_truncated"] is False
    untraced = bondsim.run("tcp_rr", ["workload.file_size.bytes=2000000"])
    assert untraced.tcp_trace is None
    # A loss-based control has no state of its own; BBR's mode is traced as `ss -i` names it.
    assert trace["cc_mode"].isna().all()
    bbr = bondsim.run(
        "tcp_rr", ["sender.tcp_congestion_control='bbr'", "sender.trace_ms=5", "workload.file_size.bytes=2000000"]
    ).tcp_trace
    assert {"startup", "probe_bw"} <= set(bbr["cc_mode"]) <= {"startup", "drain", "probe_bw", "probe_rtt"}
    for _, flow in bbr.groupby("flow"):
        left = (flow["cc_mode"] != "startup").cummax()
        assert not (left & (flow["cc_mode"] == "startup")).any(), "BBR never goes back to startup"
    assert untraced.summary["goodput_bps"] == s["goodput_bps"], "tracing moves no figure"
