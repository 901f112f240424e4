"""Failover as a user meets it: `bondsim run` prints the detection time, the flow switch-over time and
TCP's stall, and they are the figures of the run's `failovers` table."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from conftest import SCENARIOS

import bondsim
from bondsim.api import RunResult


def _printed(out: str, figure: str) -> list[str]:
    """The cells printed on the row named ``figure`` (rich's box drawing taken away)."""
    for line in out.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line) if c.strip()]
        if cells and cells[0] == figure:
            return cells[1:]
    raise AssertionError(f"no row {figure!r} in:\n{out}")


def _ms(cell: str) -> float:
    return float(cell.removesuffix(" ms").replace(",", ""))


@pytest.mark.parametrize("name", ["failover", "failover_udp"])
def test_run_prints_detection_switch_over_and_stall_of_the_failovers_table(main, tmp_path, name):
    done = main("run", str(SCENARIOS / f"{name}.toml"), "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(tmp_path / "failovers.csv")
    assert len(table) == 1 and table["name"][0] == "eth0"
    row = table.iloc[0]
    assert _ms(_printed(done.stdout, "detection")[0]) == pytest.approx(row["detection_ms"], abs=5e-4)
    assert _ms(_printed(done.stdout, "switch-over (median)")[0]) == pytest.approx(row["switchover_ms"], abs=5e-4)
    # The scenarios' own settings bound the detection: the NIC's latency, one miimon check, downdelay.
    doc = RunResult.read(tmp_path).scenario
    bond, link = doc["bond"], doc["links"][0]
    low = link["carrier_latency_ms"] + bond["downdelay"]
    assert low <= row["detection_ms"] <= low + bond["miimon"]
    # The flow's last packet over eth0 came before the failure, its first over eth1 after the verdict.
    assert row["switchover_ms"] >= row["detection_ms"] - 1.0
    stall = _printed(done.stdout, "TCP stall")[0]
    if doc["sender"]["kind"] == "tcp":
        assert _ms(stall) == pytest.approx(row["tcp_stall_ms"], abs=5e-4)
        assert row["tcp_stall_ms"] >= row["detection_ms"], "TCP cannot deliver before the bond switched"
        summary = _printed(done.stdout, "TCP stall (max)")[0]
        assert _ms(summary) == pytest.approx(row["tcp_stall_ms"], abs=5e-4)
    else:
        assert stall == "-"
    # Read back as written: the table is the run's.
    assert RunResult.read(tmp_path).failovers["detection_ms"].tolist() == table["detection_ms"].tolist()


def test_monte_carlo_bench_runs_as_a_sweep_and_writes_its_distribution(tmp_path):
    import bench_failover

    from bondsim.reproduce import failover_switchover as fs

    out = tmp_path / "failover.md"
    assert bench_failover.main(["--runs", "10", "--out", str(out)]) == 0
    runs = pd.read_csv(out.with_suffix(".csv"))
    assert len(runs) == 10 and set(runs["transport"]) == {"tcp", "udp"}
    # Random instants: the verdict is the NIC's latency plus up to one miimon check period, at varied phases.
    assert runs["detection_ms"].between(fs.CARRIER_LATENCY_MS, fs.CARRIER_LATENCY_MS + fs.CHECK_MS).all()
    assert runs["down_at_s"].nunique() == 5, "each seed draws its own failure instant (TCP and UDP share seeds)"
    assert out.with_suffix(".png").read_bytes().startswith(b"\x89PNG")
    assert "Wall time of the sweep" in out.read_text()


def test_run_prints_the_switch_counters_only_when_the_switch_did_something(main, tmp_path):
    from bondsim.cli.run import SWITCH_ROWS

    # An unaware switch with 802.1D STP: when eth0 returns (3 s) and the bond goes back to it (primary),
    # the port listens and learns for 2 x forward_delay, dropping what the bond sends there.
    over = ["switch.lag='none'", "switch.stp='stp'", "bond.primary='eth0'"]
    done = main("run", "failover_udp", *[x for o in over for x in ("--set", o)], "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    summary = RunResult.read(tmp_path).summary
    assert summary["drops_switch_port"] > 0 and summary["grat_arps_sent"] >= 1
    for key, label in SWITCH_ROWS.items():
        if summary[key]:
            assert _printed(done.stdout, label.strip()) == [f"{summary[key]:,}"], key
    # The default switch (a static LAG) drops, floods and moves nothing: only the bond's own gratuitous
    # ARP after its failover (num_grat_arp = 1) is printed.
    plain = main("run", "failover_udp", "--json")
    assert plain.returncode == 0, plain.stderr
    counts = {key: json.loads(plain.stdout)[key] for key in SWITCH_ROWS}
    assert counts == {key: 0 for key in SWITCH_ROWS} | {"grat_arps_sent": 1}
    printed = main("run", "failover_udp").stdout
    assert [label for label in SWITCH_ROWS.values() if label.strip() in printed] == ["gratuitous ARPs sent"]


def test_a_later_failure_of_a_link_no_flow_uses_any_more_switches_no_flow(main, tmp_path):
    # eth0 fails at 0.5 s and the flow moves to eth1 for good (no primary); eth0 fails again at 1.5 s
    failures = "links.0.failures=[{down_s = 0.5, up_s = 1.0}, {down_s = 1.5, up_s = 1.7}]"
    done = main("run", "failover", "--set", "stop_s=2", "--set", failures, "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(tmp_path / "failovers.csv")
    assert list(table["down_at_s"]) == [0.5, 1.5]
    first, second = table.iloc[0], table.iloc[1]
    assert first["switchover_flows"] == 1 and first["switchover_ms"] >= first["detection_ms"]
    assert second["switchover_flows"] == 0 and pd.isna(second["switchover_ms"])
    # The headline is the first failure's: the second switched nothing
    assert _ms(_printed(done.stdout, "switch-over (max)")[0]) == pytest.approx(first["switchover_ms_max"], abs=5e-4)


def test_a_link_failing_without_end_is_counted_past_the_tables_limit(main):
    """A tiny ``mtbf_s`` fails a link hundreds of thousands of times a second: the table keeps the first
    100,000 (memory stays bounded), the summary counts them all and says the table stopped."""
    import bondsim

    r = bondsim.run("failover_udp", ["stop_s=0.3", "links.1.random_failures={mtbf_s=1e-6, mttr_s=1e-6}"])
    s = r.summary
    assert len(r.failovers) == 100_000 and s["failovers"] > 100_000 and s["failovers_truncated"] is True
    # Every listed failure is the failing link's, and the windows follow one another.
    assert (r.failovers["name"] == r.failovers["name"][0]).all()
    assert r.failovers["down_at_s"].is_monotonic_increasing
    done = main(
        "run", "failover_udp", "--set", "stop_s=0.3", "--set", "links.1.random_failures={mtbf_s=1e-6, mttr_s=1e-6}"
    )
    assert done.returncode == 0, done.stderr
    assert _printed(done.stdout, "link failures")[0].startswith(f"{s['failovers']:,} (the table stops at its limit")
    from bondsim.cli.run import FAILOVER_COLUMNS as shown

    more = f"and {s['failovers'] - shown:,} more failures, of which failovers.csv lists {len(r.failovers) - shown:,}"
    assert more in done.stdout
    # A run whose failures all fit says so too.
    assert bondsim.run("failover_udp", ["stop_s=0.3"]).summary["failovers_truncated"] is False


def test_a_tcp_stall_counts_flows_that_had_received_nothing_and_runs_to_the_end(main):
    """``tcp_stall_ms``: a flow in progress at the failure stalls from its start if nothing had reached the
    application yet (here the link fails 20 us in, under the handshake: its ACKs are lost and only the
    SYN-ACK's 1 s timer repairs it); a flow that never resumes stalls until the run ends."""
    import bondsim

    fail = "links.0.failures=[{down_s = 0.00002, up_s = 0.002}]"
    r = bondsim.run(
        "tcp_rr",
        ["workload.file_size.bytes=200000", fail, "bond.mode=active-backup", "bond.miimon=1"],
    )
    s = r.summary
    assert s["tcp_syn_retransmits"] >= 1 and s["makespan_s"] > 1.0
    assert s["tcp_stall_ms_max"] == pytest.approx(1000.0, abs=5.0), "TCP_TIMEOUT_INIT, from the flows' start"
    # active-backup without a monitor never fails over: the flow waits until stop_s.
    never = bondsim.run("failover", ["bond.miimon=0", "stop_s=1.5"])
    start = never.failovers["down_at_s"][0]
    assert never.summary["tcp_stall_ms_max"] >= (1.5 - start) * 1e3 - 1.0


def test_a_frame_cut_by_a_carrier_loss_is_busy_time_only_until_the_cut():
    """issue 39's invariant, busy_s <= duration_s, where the carrier (not stop_s) cuts a frame: 17.6 ms frames on a
    0.5 Mbit/s link, the second cut at 30.1 ms and the run stopped at 31 ms."""
    links = "links=[{rate_mbps=0.5, failures=[{down_s=0.0301, up_s=0.05}]}]"
    r = bondsim.run("thesis", overrides=[links, "workload.requests=3", "stop_s=0.031"])
    busy = r.links["busy_s"].iloc[0]
    assert busy == pytest.approx(0.0301, abs=1e-9), "busy while sending: until the carrier went"
    assert busy <= r.summary["duration_s"]
