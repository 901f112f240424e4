"""The switch between the bond and its clients (`[switch]`), end to end."""

from __future__ import annotations

import pytest

from bondsim import ScenarioError
from bondsim.api import run_checked
from bondsim.scenario import apply_overrides

#: Payload bytes of one UDP datagram (one frame).
CHUNK = 1448


def two_links(mode: str, *overrides: str, sender: dict | None = None, nbytes: int = 100_000_000) -> dict:
    """One client fetching ``nbytes`` over two 100 Mbit/s links, miimon 1 ms."""
    doc = {
        "name": "switch",
        "workload": {"clients": 1, "requests": 1, "file_size": {"kind": "fixed", "bytes": nbytes}},
        "sender": sender or {"kind": "tcp"},
        "bond": {"mode": mode, "miimon": 1.0},
        "links": [{"rate_mbps": 100.0, "delay_us": 50.0}, {"rate_mbps": 100.0, "delay_us": 50.0}],
    }
    return apply_overrides(doc, list(overrides))


def summary(doc: dict) -> dict:
    return run_checked(doc).summary


def test_the_default_switch_is_todays_lag_and_its_hash_picks_the_return_link():
    doc = two_links("balance-xor", "stop_s=0.5")
    explicit = "switch={lag = 'static', hash = 'layer2+3', stp = 'none', ageing_s = 300.0, forward_delay_s = 15.0}"
    plain, spelled = summary(doc), summary(apply_overrides(doc, [explicit]))
    assert {k: v for k, v in plain.items() if k != "wall_s"} == {k: v for k, v in spelled.items() if k != "wall_s"}
    # Sixteen clients behind one router: every frame to the bond has the same MAC pair, so the switch's
    # layer2 hash (MACs and EtherType only) sends every ACK down one link; layer3+4 reads the ports too.
    many = apply_overrides(
        two_links("balance-xor", "stop_s=0.2", nbytes=2_000_000),
        ["workload.clients=16", "workload.requests=16", "network.router_mac='02:00:00:00:00:fe'"],
    )
    by_l2 = run_checked(apply_overrides(many, ["switch.hash='layer2'"])).links["reverse_packets_sent"].tolist()
    by_l34 = run_checked(apply_overrides(many, ["switch.hash='layer3+4'"])).links["reverse_packets_sent"].tolist()
    assert min(by_l2) == 0 < max(by_l2)
    assert min(by_l34) > 0


def test_an_unaware_switch_learns_the_bonds_mac_and_balance_rr_moves_it_with_every_frame():
    rr = run_checked(two_links("balance-rr", "stop_s=1", "switch.lag='none'"))
    frames = int(rr.links["packets_sent"].sum())
    # Equal links in lock-step: the bond's frames reach the switch on port 0, 1, 0, 1, ... and the
    # bond's MAC moves with each one after the first.
    moves = rr.summary["switch_mac_moves"]
    assert 0.99 * (frames - 1) <= moves <= frames - 1
    # Nothing is lost: the entry always names a live port the bond receives on.
    assert rr.summary["switch_drops_to_bond"] == rr.summary["bond_drops_inactive_slave"] == 0
    assert rr.summary["reverse_delivered"] >= rr.summary["reverse_packets"] - 2  # at most the ACKs in flight at stop_s
    # One sending slave never moves it; a LAG learns nothing per port.
    assert summary(two_links("active-backup", "stop_s=1", "switch.lag='none'"))["switch_mac_moves"] == 0
    assert summary(two_links("balance-rr", "stop_s=1"))["switch_mac_moves"] == 0


def udp_rr_with_recovery(*overrides: str) -> dict:
    """balance-rr of UDP at 100 Mbit/s of payload over two links; link 1 fails at 1 s, back at 2 s."""
    doc = two_links(
        "balance-rr",
        "stop_s=5",
        "network.protocol='udp'",
        "links.1.failures=[{down_s = 1.0, up_s = 2.0}]",
        sender={"kind": "cbr", "rate_mbps": 100.0, "chunk_bytes": CHUNK},
    )
    return run_checked(apply_overrides(doc, list(overrides)))


def test_spanning_tree_drops_the_bonds_frames_on_a_recovered_port_for_two_forward_delays():
    fd = 1.0
    stp = udp_rr_with_recovery("switch.lag='none'", "switch.stp='stp'", f"switch.forward_delay_s={fd}")
    # The bond takes link 1 back within a miimon period of 2 s and puts every other datagram on it;
    # the switch port listens, then learns, for fd each: all of those are dropped at the switch.
    per_link_pps = 100e6 / (CHUNK * 8) / 2
    drops = stp.links["drops_switch_port"].tolist()
    assert drops[0] == 0
    assert drops[1] == pytest.approx(per_link_pps * 2 * fd, rel=0.01)
    assert stp.summary["drops_switch_port"] == drops[1]
    # RSTP waits as long for a host that sends no BPDUs.
    rstp = udp_rr_with_recovery("switch.lag='none'", "switch.stp='rstp'", f"switch.forward_delay_s={fd}")
    assert rstp.summary["drops_switch_port"] == stp.summary["drops_switch_port"]
    # An edge port forwards at once; a LAG's member joins at once.
    edge = udp_rr_with_recovery(
        "switch.lag='none'", "switch.stp='stp'", f"switch.forward_delay_s={fd}", "switch.edge_ports=[1]"
    )
    assert edge.summary["drops_switch_port"] == 0
    assert udp_rr_with_recovery().summary["drops_switch_port"] == 0


def test_the_bond_sends_num_grat_arp_gratuitous_arps_per_active_backup_failover():
    # Link 0 (the primary) fails at 1 s and comes back at 2 s: two changes of the active slave.
    def arps(mode: str, n: int) -> int:
        doc = two_links(mode, "stop_s=3", "links.0.failures=[{down_s = 1.0, up_s = 2.0}]", f"bond.num_grat_arp={n}")
        if mode == "active-backup":
            doc = apply_overrides(doc, ["bond.primary='link0'"])
        return summary(apply_overrides(doc, ["switch.lag='none'"]))["grat_arps_sent"]

    assert arps("active-backup", 3) == 2 * 3
    assert arps("active-backup", 0) == 0
    assert arps("balance-rr", 3) == 0  # only active-backup notifies peers (bond_change_active_slave)


@pytest.mark.parametrize(
    ("override", "path", "says"),
    [
        ("switch.lag='sometimes'", "switch.lag", 'must be one of `static`, `lacp`, `none`, got "sometimes"'),
        ("switch.hash='layer5'", "switch.hash", "must be one of `layer2`, `layer2+3`, `layer3+4`"),
        ("switch.stp='mstp'", "switch.stp", 'must be one of `none`, `stp`, `rstp`, got "mstp"; did you mean `stp`?'),
        ("switch.stp='stp'", "switch.stp", 'only without a LAG (switch.lag = "none")'),
        ("switch.edge_ports=[2]", "switch.edge_ports", "names link ids 0..1, got 2"),
        ("switch.ageing_s=0", "switch.ageing_s", "must be a duration > 0"),
        ("switch.colour=1", "switch.colour", "unknown field `colour`"),
        ("bond.num_grat_arp=256", "bond.num_grat_arp", "must be 0 to 255"),
    ],
)
def test_a_bad_switch_field_is_named_with_what_is_allowed(override, path, says):
    with pytest.raises(ScenarioError) as info:
        run_checked(two_links("balance-rr", override))
    assert info.value.path == path
    assert says in str(info.value)
