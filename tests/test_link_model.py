"""The rate link model, failures and the link monitor, end to end."""

from __future__ import annotations

import pytest

import bondsim


def run(scenario: str, *overrides: str) -> dict:
    return bondsim.run(scenario, list(overrides)).summary


def test_one_link_carries_its_rate_minus_frame_overhead():
    s = run("hetero", "bond.mode=null", "workload.requests=1", 'workload.file_size={kind = "fixed", bytes = 14480000}')
    # 10000 packets of 1448 + 40 header bytes + 38 wire overhead at 1 Gbit/s.
    wire_s = 10_000 * (1448 + 40 + 38) * 8 / 1e9
    assert s["makespan_s"] == pytest.approx(wire_s, rel=1e-3)
    assert s["goodput_bps"] == pytest.approx(14_480_000 * 8 / wire_s, rel=1e-3)
    assert s["utilisation"] == pytest.approx(1000 / 1100, rel=1e-3)  # the FE link idles


def test_propagation_delay_and_drop_tail_queue():
    one = ("bond.mode=null", "workload.requests=1", "sender.window_pkts=1")  # one packet at a time: no queueing
    delayed = run("hetero", *one, "links.0.delay_us=500")
    plain = run("hetero", *one)
    frame_us = (1448 + 40 + 38) * 8 / 1e3
    assert plain["delay_p50_us"] == pytest.approx(frame_us, rel=0.01)
    assert delayed["delay_p50_us"] == pytest.approx(frame_us + 500, rel=0.01)
    full = run("hetero", "bond.mode=null", "links.0.txqueuelen=10", "sender.window_pkts=64")
    assert full["drops_queue_full"] > 0 and full["dropped"] == full["drops_queue_full"]
    assert full["delivered"] + full["dropped"] == full["packets"]


def test_failover_loses_what_the_dead_link_held_until_the_monitor_notices():
    s = bondsim.run("failover_udp")
    summary, links = s.summary, s.links
    # 4 flows x 200 Mbit/s of 1448-byte packets go to eth0 until the monitor gives up on it:
    # carrier lost at 1.0 s, seen at the 1.0 s check, committed after downdelay 200 ms.
    rate_pps = 4 * 200e6 / (1448 * 8)
    assert summary["drops_link_down"] == pytest.approx(0.2 * rate_pps, rel=0.01)
    assert summary["dropped"] == summary["drops_link_down"]
    assert links.loc[links["name"] == "eth1", "packets_sent"].item() > 0
    # No primary: when eth0 comes back at 3 s, traffic stays on eth1.
    quick = bondsim.run("failover_udp", ["bond.downdelay=0"]).summary
    assert quick["drops_link_down"] < summary["drops_link_down"] / 5


def test_failback_to_the_primary():
    back = bondsim.run("failover_udp", ["bond.primary=eth0"])
    late = back.requests["finish_s"].max()
    assert late > 3.0
    sent = back.links.set_index("name")["packets_sent"]
    # eth0 carried traffic before the failure and again after it came back at 3 s.
    assert sent["eth0"] > 1.0 * 4 * 200e6 / (1448 * 8)


def test_round_robin_leaves_a_link_when_its_nic_reports_no_carrier_whatever_the_monitor():
    # The kernel's bond_slave_can_tx (include/net/bonding.h) tests the NIC's carrier on every packet:
    # balance-rr skips the link from the NIC's report on, under a slow monitor or none (miimon = 0).
    # Only what the link held (its queue and wire) is lost, and what was sent while the NIC was late.
    slow = run("failover_udp", "bond.mode=balance-rr", "bond.miimon=300", "bond.downdelay=0")
    blind = run("failover_udp", "bond.mode=balance-rr", "bond.miimon=0", "bond.downdelay=0")
    assert slow["drops_link_down"] == blind["drops_link_down"] <= 4
    late = run("failover_udp", "bond.mode=balance-rr", "bond.miimon=300", "links.0.carrier_latency_ms=50")
    half_rate_pps = 4 * 200e6 / (1448 * 8) / 2
    assert late["drops_link_down"] == pytest.approx(0.05 * half_rate_pps, abs=5)
    # Active-backup sends on its active slave until the monitor's verdict (test above): far more.
    assert run("failover_udp", "bond.miimon=300", "bond.downdelay=0")["drops_link_down"] > 0.1 * half_rate_pps


def test_random_failures_follow_the_seed():
    over = ["links.1.random_failures={mtbf_s = 0.5, mttr_s = 0.1}", "bond.mode=balance-rr"]
    a = bondsim.run("failover_udp", [*over, "seed=4"]).links
    b = bondsim.run("failover_udp", [*over, "seed=4"]).links
    c = bondsim.run("failover_udp", [*over, "seed=5"]).links
    assert a.equals(b)
    assert a["failures"][1] > 2
    assert not a.equals(c)


def test_cbr_sender_offers_its_rate():
    s = run("lacp_flows")
    # 4 flows of 10 Mbit/s payload for 1 MB each: 0.8 s.
    assert s["makespan_s"] == pytest.approx(0.8, rel=0.01)
    assert s["goodput_bps"] == pytest.approx(40e6, rel=0.01)


def test_window_sender_keeps_its_window_in_flight():
    s = bondsim.run("hetero", ["bond.mode=null", "workload.requests=1", "sender.window_pkts=5"])
    assert s.links["max_queue_pkts"].max() == 5


def test_slowdown_halves_a_rate_link():
    slowed = run("hetero", "bond.mode=null", "links.0.slowdown=2", "workload.requests=1")
    plain = run("hetero", "bond.mode=null", "workload.requests=1")
    assert slowed["makespan_s"] == pytest.approx(2 * plain["makespan_s"], rel=1e-3)


def test_link_kind_fields_do_not_mix():
    with pytest.raises(bondsim.ScenarioError) as err:
        bondsim.load("thesis", ["links.0.txqueuelen=5"])
    assert err.value.path == "links.0.txqueuelen" and "rate-link field" in str(err.value)
    with pytest.raises(bondsim.ScenarioError) as err:
        bondsim.load("hetero", ["links.0.period_ms=5"])
    assert err.value.path == "links.0.period_ms"
    with pytest.raises(bondsim.ScenarioError) as err:
        bondsim.load("hetero", ["sender.tick_ms=5"])
    assert err.value.path == "sender.tick_ms" and "only for kind" in str(err.value)
    with pytest.raises(bondsim.ScenarioError) as err:
        bondsim.load("hetero", ["sender.chunk_bytes=1500"])
    assert "exceed links.0.mtu" in str(err.value)
    with pytest.raises(bondsim.ScenarioError) as err:
        bondsim.load("failover_udp", ["links.0.failures=[{down_s = 2.0, up_s = 1.0}]"])
    assert err.value.path == "links.0.failures.0.up_s"
    with pytest.raises(bondsim.ScenarioError) as err:
        bondsim.load("failover_udp", ["bond.primary=eth9"])
    assert err.value.path == "bond.primary" and "eth0, eth1" in str(err.value)
    with pytest.raises(bondsim.ScenarioError) as err:
        bondsim.load("xor_clients", ["network.client_macs.0=00:11"])
    assert err.value.path == "network.client_macs.0"
