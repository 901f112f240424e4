"""Bonding modes and schedulers as a user sees them: through scenarios."""

from __future__ import annotations

import pytest

import bondsim


def summary(scenario: str, *overrides: str) -> dict:
    return bondsim.run(scenario, list(overrides)).summary


def test_earliest_finish_meets_its_target_where_round_robin_reorders():
    eft = summary("hetero", "bond.mode=earliest-finish")
    rr = summary("hetero", "bond.mode=balance-rr")
    assert rr["ooo_fraction"] >= 0.25
    assert eft["ooo_fraction"] <= 0.01
    assert eft["utilisation"] >= 0.99


def test_jitter_breaks_earliest_finish_and_a_guard_restores_order():
    jitter = [f'links.{i}.jitter={{kind = "exponential", mean_us = 20.0}}' for i in (0, 1)]
    plain = summary("hetero", *jitter, "bond.mode=earliest-finish")
    guarded = summary("hetero", *jitter, "bond.mode=earliest-finish[guard_us=80]")
    assert plain["ooo_fraction"] > 0.05
    assert guarded["ooo_fraction"] < 0.01


def test_striping_receiver_resequences():
    raw = summary("hetero", "bond.mode=drr-stripe[resequence=false]")
    reseq = summary("hetero", "bond.mode=drr-stripe")
    assert reseq["ooo_fraction"] == 0 and reseq["reseq_max_held"] > 0
    assert raw["reseq_max_held"] is None
    assert reseq["delay_p99_us"] >= raw["delay_p99_us"]


def test_broadcast_sends_every_packet_on_every_link():
    s = summary("xor_clients", "bond.mode=broadcast", "workload.requests=4")
    assert s["duplicates"] == 3 * s["delivered"]
    assert s["goodput_bps"] < 1e9  # no more than one link's worth of distinct data


def test_lacp_min_links_turns_the_bond_off():
    failing = [
        "links=[{rate_mbps = 100, failures = [{down_s = 0.2, up_s = 0.5}]}, {rate_mbps = 100}]",
        "bond.miimon=10",
    ]
    tolerant = summary("lacp_flows", *failing)
    strict = summary("lacp_flows", *failing, "bond.min_links=2")
    assert tolerant["drops_no_link"] == 0
    # Below min_links from the commit at 0.2 s until the link is back and LACP has waited 2 s.
    assert strict["drops_no_link"] > 0
    assert strict["dropped"] > tolerant["dropped"]


def test_alb_spreads_clients_receive_links_and_tlb_does_not():
    alb = bondsim.run("xor_clients", ["bond.mode=balance-alb"]).requests
    tlb = bondsim.run("xor_clients", ["bond.mode=balance-tlb"]).requests
    assert alb.groupby("client")["rx_link"].nunique().max() == 1  # one receive link per client
    assert sorted(alb.groupby("client")["rx_link"].first()) == [0, 1, 2, 3]
    assert set(tlb["rx_link"]) == {0}


def test_hash_modes_keep_each_flow_on_one_link_and_striping_does_not():
    xor = bondsim.run("xor_clients", ["bond.xmit_hash_policy=layer3+4"]).requests
    rr = bondsim.run("xor_clients", ["bond.mode=balance-rr"]).requests
    assert (xor["link_switches"] == 0).all()
    assert (rr["link_switches"] > 0).all()


def test_tlb_rebalances_flows_by_their_recent_load():
    # Long transfers over 12 s: the 10 s rebalance re-places every bucket.
    base = [
        'workload.file_size={kind = "fixed", bytes = 400000000}',
        "workload.requests=8",
        "bond.mode=balance-tlb",
        "bond.xmit_hash_policy=layer3+4",
    ]
    s = bondsim.run("xor_clients", base)
    assert (s.requests["link_switches"] > 0).any()
    fixed = bondsim.run("xor_clients", [*base, "bond.tlb_dynamic_lb=0"]).requests
    assert (fixed["link_switches"] == 0).all()


@pytest.mark.parametrize("mode", ["teamd:loadbalance[tx_balancer=basic,tx_hash=eth+ipv4+l4]", "ovs:balance-tcp"])
def test_rebalancing_hashers_are_deterministic_and_lossless(mode):
    a = summary("league", f"bond.mode={mode}")
    b = summary("league", f"bond.mode={mode}")
    assert a["dropped"] == 0 and a["delivered"] == a["packets"]
    assert {**a, "wall_s": 0} == {**b, "wall_s": 0}
