"""Failure kinds and the bond's monitors, end to end through the Python API and the CLI."""

from __future__ import annotations

import pytest

import bondsim

#: the shipped failover_udp: 4 flows x 200 Mbit/s of 1448-byte datagrams on eth0 (active-backup).
RATE_PPS = 4 * 200e6 / (1448 * 8)
SILENT = 'links.0.failures=[{down_s=1.0, up_s=3.0, kind="silent"}]'
ARP = ("bond.miimon=0", "bond.downdelay=0", "bond.arp_interval=100", 'bond.arp_ip_target=["10.0.0.254"]')


def test_miimon_misses_a_silent_port_and_the_arp_monitor_catches_it():
    mii = bondsim.run("failover_udp", [SILENT])
    s = mii.summary
    # The carrier stays: miimon never fails eth0 over, everything it carries from 1 s to 3 s is dropped.
    assert s["drops_silent"] == pytest.approx(2.0 * RATE_PPS, rel=0.01)
    assert s["dropped"] == s["drops_silent"] and s["drops_link_down"] == 0
    assert mii.links.loc[mii.links["name"] == "eth1", "packets_sent"].item() == 0
    arp = bondsim.run("failover_udp", [SILENT, *ARP])
    a = arp.summary
    # Probes every 100 ms: the last one answered left at 0.9 s; eth0 is failed at the first check
    # more than arp_missed_max x 100 + 50 ms after it, 1.2 s: 0.2 s of traffic lost, within
    # (arp_missed_max + 1) x arp_interval of the failure.
    assert a["drops_silent"] == pytest.approx(0.2 * RATE_PPS, rel=0.01)
    assert a["drops_silent"] < s["drops_silent"] / 5
    assert arp.links.loc[arp.links["name"] == "eth1", "packets_sent"].item() > 0
    assert a["arp_probes_sent"] > 0 and 0 < a["arp_replies"] < a["arp_probes_sent"] * 2
    assert a["delivered"] + a["dropped"] + a["undelivered"] == a["packets"], "probes are not the application's"


def test_miimon_zero_without_an_arp_monitor_never_fails_over():
    r = bondsim.run("failover_udp", ["bond.miimon=0", "bond.downdelay=0"])
    assert r.summary["miimon_ms"] == 0
    assert r.links.loc[r.links["name"] == "eth1", "packets_sent"].item() == 0
    # eth0 is dead from 1 s to 3 s and the bond keeps sending there.
    assert r.summary["drops_link_down"] == pytest.approx(2.0 * RATE_PPS, rel=0.01)
    # Linux forces 100 ms in 802.3ad (bond_check_params).
    lacp = bondsim.run("failover_udp", ["bond.miimon=0", "bond.downdelay=0", "bond.mode=802.3ad"])
    assert lacp.summary["miimon_ms"] == 100


def test_a_multicast_arp_target_is_accepted_as_linux_accepts_it():
    # `bond_is_ip_target_ok` refuses only 0.0.0.0/8 and the limited broadcast.
    bondsim.run(
        "failover_udp", [*ARP, 'bond.arp_ip_target=["224.0.0.1"]', "workload.file_size={kind='fixed', bytes=100000}"]
    )


@pytest.mark.parametrize(
    ("overrides", "field", "words"),
    [
        (("bond.arp_interval=100", 'bond.arp_ip_target=["10.0.0.254"]'), "bond.arp_interval", "bond.miimon = 0"),
        (("bond.miimon=0", "bond.downdelay=0", "bond.arp_interval=100"), "bond.arp_ip_target", "bond_check_params"),
        ((*ARP, "bond.mode=balance-alb"), "bond.arp_interval", "bond_mode_uses_arp"),
        ((*ARP, 'bond.arp_ip_target=["0.1.2.3"]'), "bond.arp_ip_target.0", "bond_is_ip_target_ok"),
        ((*ARP, 'bond.arp_ip_target=["10.0.0.254", "255.255.255.255"]'), "bond.arp_ip_target.1", "0.0.0.0/8"),
        (('links.0.failures=[{down_s=1.0, kind="silent", drop=0}]',), "links.0.failures.0.drop", "(0, 1]"),
    ],
)
def test_the_check_refuses_what_linux_refuses(cli, overrides, field, words):
    done = cli("run", "failover_udp", "--quiet", *[x for o in overrides for x in ("--set", o)])
    assert done.returncode != 0
    assert field in done.stderr and words in done.stderr, done.stderr


@pytest.mark.parametrize(("hz", "detection_ms"), [(1000, 6.5), (250, 15.5), (100, 29.5)])
def test_the_monitors_run_on_the_kernels_tick(hz, detection_ms):
    """``bond.hz``: miimon re-arms msecs_to_jiffies(miimon) jiffies ahead (rounded up), and downdelay
    counts checks: miimon 1 ms, downdelay 2 ms, the carrier reported at 1.0045 s (failure at 1.0005 s,
    carrier_latency 4 ms) is seen at the next check and committed two checks later."""
    fail = "links.0.failures=[{down_s = 1.0005, up_s = 3.0}]"
    r = bondsim.run("failover", [fail, "stop_s=1.2", "bond.downdelay=2", f"bond.hz={hz}"])
    assert r.failovers["detection_ms"].item() == pytest.approx(detection_ms, abs=1e-6)
    # The summary says the period the checks ran at: 1 ms in whole jiffies.
    assert r.summary["miimon_ms"] == {1000: 1.0, 250: 4.0, 100: 10.0}[hz]
    # The ARP monitor alike: arp_interval 10 ms probes every 12 ms at 250 (3 jiffies), every 10 at 1000.
    arp = ("bond.miimon=0", "bond.downdelay=0", "bond.arp_interval=10", 'bond.arp_ip_target=["10.0.0.254"]')
    a = bondsim.run("failover_udp", [*arp, "stop_s=0.6", f"bond.hz={hz}"]).summary
    period_ms = {1000: 10, 250: 12, 100: 10}[hz]
    assert a["arp_probes_sent"] == pytest.approx(600 / period_ms, abs=2)
