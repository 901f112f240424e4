"""MPTCP (``sender.kind = "mptcp"``) as a user runs it: the shipped scenario, its files, its errors."""

from __future__ import annotations

import json

import pandas as pd

import bondsim


def test_the_shipped_mptcp_run_writes_its_subflow_table_and_reads_back(cli, tmp_path):
    out = tmp_path / "mp"
    proc = cli("run", "mptcp", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "mptcp default" in proc.stdout, "the MPTCP scheduler, not the bond's, placed the packets"
    assert "MPTCP reordering queue" in proc.stdout and "packets on the subflows' links" in proc.stdout
    assert "through the bond" not in proc.stdout
    subflows = pd.read_csv(out / "mptcp_subflows.csv")
    assert list(subflows["link"]) == [0, 1]
    assert (subflows["segments"] > 0).all(), "both subflows carried data"
    # Each subflow's packets, as the links counted them (the table's first transmissions and
    # retransmissions, and one SYN-ACK each).
    links = pd.read_csv(out / "links.csv")
    assert list(links["packets_sent"]) == list(subflows["segments"] + subflows["retransmits"] + 1)
    requests = pd.read_csv(out / "requests.csv")
    assert len(requests) == 1 and requests["last_link"].isna().all(), "a connection has no one path"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["flows_complete"] == 1 and summary["mptcp_ofo_max"] > 0
    again = bondsim.RunResult.read(out)
    assert again.mptcp_subflows.equals(subflows)


def test_tcp_runs_have_no_subflow_table_and_a_bad_mptcp_field_is_named(cli, tmp_path):
    out = tmp_path / "tcp"
    assert cli("run", "mptcp", "--set", "sender.kind=tcp", "--out", str(out)).returncode == 0
    assert not (out / "mptcp_subflows.csv").exists()
    proc = cli("run", "mptcp", "--set", "sender.mptcp_subflows=3")
    assert proc.returncode != 0
    assert "sender.mptcp_subflows" in proc.stderr and "1 to 2" in proc.stderr
    proc = cli("run", "mptcp", "--kernel", "linux-3.x")
    assert proc.returncode == 0, "the subflows take a kernel era's TCP: " + proc.stderr


def test_mptcp_runs_lead_with_their_reordering_wait_and_tcp_runs_do_not():
    from bondsim import columns

    mptcp = bondsim.run("mptcp").summary
    tcp = bondsim.run("mptcp", overrides=["sender.kind=tcp"]).summary
    names = lambda runs: [c.name for c in columns.default(pd.DataFrame(runs))]  # noqa: E731
    assert "mptcp_ofo_delay_mean_ms" in names([mptcp]) and "mptcp_ofo_delay_mean_ms" in names([mptcp, tcp])
    assert "mptcp_ofo_delay_mean_ms" not in names([tcp])
    assert names([tcp])[0] == "goodput_mbps"


def test_a_capture_of_an_mptcp_run_leaves_its_figures_as_they_were(tmp_path):
    """The capture files of an MPTCP run (their options: tests/test_pcap.py) are a view: the run's
    figures are those of the same run without them."""
    plain = bondsim.run("mptcp", overrides=["workload.file_size.bytes=500000"]).summary
    captured = bondsim.run("mptcp", overrides=["workload.file_size.bytes=500000"], pcap=str(tmp_path / "cap")).summary
    keep = lambda s: {k: v for k, v in s.items() if k != "wall_s"}  # noqa: E731
    assert keep(captured) == keep(plain)
    assert sorted(p.name for p in (tmp_path / "cap").iterdir()) == [
        "line10.fwd.pcapng", "line10.rev.pcapng", "line5.fwd.pcapng", "line5.rev.pcapng", "receivers.pcapng"
    ]  # fmt: skip
