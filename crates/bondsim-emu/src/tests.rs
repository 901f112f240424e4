//! The emulated links' timing rules, driven with made-up times (no namespaces needed).

use bondsim_core::link::LinkStats;
use bondsim_core::network::Clients;
use bondsim_core::scenario::{LinkModel, Placement};
use bondsim_core::time::SimTime;
use bondsim_core::Scenario;

use crate::fabric::{Delivery, Dest, Fabric};

const SERVER: [u8; 4] = [10, 0, 0, 1];
const CLIENT: [u8; 4] = [10, 1, 0, 1];

/// A fabric for `links` (JSON list) under `bond` (JSON object), one client.
fn fabric(links: serde_json::Value, bond: serde_json::Value) -> Fabric {
    let doc = serde_json::json!({
        "workload": {"clients": 1, "requests": 1, "file_size": {"kind": "fixed", "bytes": 1000}},
        "sender": {"kind": "tcp"},
        "bond": bond,
        "links": links,
    });
    let scenario = Scenario::from_json(&doc.to_string()).unwrap();
    crate::check(&scenario).unwrap();
    let clients = Clients::new(&scenario.network, 1, scenario.seed);
    assert_eq!(clients.ips[0], CLIENT);
    Fabric::new(&scenario, clients).unwrap()
}

/// A fabric as [`fabric`], one TCP client, tracing the first `packets` data packets.
fn traced(links: serde_json::Value, bond: serde_json::Value, packets: u32) -> Fabric {
    let doc = serde_json::json!({
        "workload": {"clients": 1, "requests": 1, "file_size": {"kind": "fixed", "bytes": 1000}},
        "sender": {"kind": "tcp"}, "bond": bond, "links": links, "trace": {"packets": packets},
    });
    let scenario = Scenario::from_json(&doc.to_string()).unwrap();
    Fabric::new(&scenario, Clients::new(&scenario.network, 1, scenario.seed)).unwrap()
}

#[test]
fn the_packet_trace_has_each_data_packets_link_times_and_order_as_the_simulators() {
    // As in the round-robin test above: packets 0 and 2 on the 8 Mbit/s link arrive at t and
    // 2t, 1 and 3 on the 2 Mbit/s one at 4t and 8t: only 1 is out of order. The trace keeps
    // the first three; a copy sent again (seq 0) is a retransmission.
    let links = serde_json::json!([{"rate_mbps": 8}, {"rate_mbps": 2}]);
    let mut f = traced(links, serde_json::json!({"mode": "balance-rr"}), 3);
    for seq in 0..3 {
        f.from_server(SimTime::ZERO, tcp_packet(1000, seq * 960, true), &mut Vec::new());
    }
    f.from_server(ms(1.0), tcp_packet(1000, 0, true), &mut Vec::new());
    run_until(&mut f, ms(100.0));
    let t = &f.trace.rows;
    let (fast, slow) = (tx(1000, 8.0).as_secs_f64(), tx(1000, 2.0).as_secs_f64());
    assert_eq!(t.packet, vec![0, 1, 2]);
    assert_eq!(t.seq, vec![0, 1, 2]);
    assert_eq!(t.link, vec![Some(0), Some(1), Some(0)]);
    assert_eq!(t.out_of_order, vec![false, true, false]);
    assert_eq!(t.arrived_s, vec![Some(fast), Some(slow), Some(2.0 * fast)]);
    assert_eq!(t.left_s, t.arrived_s, "no wire delay");
    assert_eq!(t.retransmit, vec![false; 3]);
    let mut g = traced(serde_json::json!([{"rate_mbps": 8}]), serde_json::json!({"mode": "rr"}), 10);
    for seq in [0, 960, 0] {
        g.from_server(SimTime::ZERO, tcp_packet(1000, seq, true), &mut Vec::new());
    }
    assert_eq!(g.trace.rows.retransmit, vec![false, false, true]);
}

/// An IPv4/TCP packet of `l3` bytes (with `l3 - 52` payload bytes) between the server's
/// port 8000 and the client's port 40000; `from_server` picks the direction.
fn tcp_packet(l3: usize, seq: u32, from_server: bool) -> Vec<u8> {
    let (src, dst, sp, dp) = if from_server { (SERVER, CLIENT, 8000, 40000) } else { (CLIENT, SERVER, 40000, 8000) };
    let builder = etherparse::PacketBuilder::ipv4(src, dst, 64).tcp(sp, dp, seq, 65535).ack(1);
    let payload = vec![0u8; l3 - 40];
    let mut out = Vec::new();
    builder.write(&mut out, &payload).unwrap();
    assert_eq!(out.len(), l3);
    out
}

fn ms(x: f64) -> SimTime {
    SimTime::from_secs_f64(x / 1e3)
}

/// Everything delivered up to `until`.
fn run_until(f: &mut Fabric, until: SimTime) -> Vec<Delivery> {
    let mut out = Vec::new();
    f.advance(until, &mut out);
    out
}

/// Transmit time of an `l3`-byte packet at `mbps` with Ethernet's 38 bytes of frame overhead.
fn tx(l3: u64, mbps: f64) -> SimTime {
    SimTime::from_secs_f64((l3 + 38) as f64 * 8.0 / (mbps * 1e6))
}

fn forward(f: &Fabric) -> Vec<LinkStats> {
    f.forward_stats().cloned().collect()
}

#[test]
fn a_clients_nic_lets_its_frames_go_at_its_moderated_polls_as_the_models_host_does() {
    // 8 Mbit/s: a 1000-byte packet every 1.038 ms from 3 ms on; interrupts at least 3.5 ms apart. The first
    // frame raises one at once; the next two wait for the next poll, 3.5 ms later, and go together; the
    // fourth finds the ring of 2 full (the waiting frame and the one that the poll will find) and is dropped.
    let doc = serde_json::json!({
        "workload": {"clients": 1, "requests": 1, "file_size": {"kind": "fixed", "bytes": 1000}},
        "sender": {"kind": "tcp"}, "bond": {"mode": "rr"}, "links": [{"rate_mbps": 8}],
        "host": {"rx_coalesce_us": 3500, "rx_ring": 2},
    });
    let scenario = Scenario::from_json(&doc.to_string()).unwrap();
    crate::check(&scenario).unwrap();
    let mut f = Fabric::new(&scenario, Clients::new(&scenario.network, 1, scenario.seed)).unwrap();
    let t = tx(1000, 8.0);
    for seq in 0..6 {
        f.from_server(ms(3.0), tcp_packet(1000, seq * 960, true), &mut Vec::new());
    }
    let out = run_until(&mut f, ms(20.0));
    let due: Vec<SimTime> = out.iter().map(|d| d.due).collect();
    let first = ms(3.0) + t;
    let poll = first + ms(3.5);
    assert_eq!(due, vec![first, poll, poll, poll + ms(3.5), poll + ms(3.5)], "{due:?}");
    let seqs: Vec<Vec<u8>> = out.iter().map(|d| d.bytes.clone()).collect();
    let sent = |n: u32| tcp_packet(1000, n * 960, true);
    assert_eq!(seqs, vec![sent(0), sent(1), sent(2), sent(4), sent(5)], "in order; the fourth dropped");
    let counts = f.nic_counts().unwrap();
    assert_eq!((counts.frames, counts.drops, counts.queue_max), (5, 1, 1));
    assert_eq!(f.in_flight(), 0);
}

#[test]
fn a_packet_is_due_after_its_transmit_time_and_the_wire_delay_never_before() {
    let mut f = fabric(serde_json::json!([{"rate_mbps": 8, "delay_us": 1000}]), serde_json::json!({"mode": "rr"}));
    f.from_server(ms(2.0), tcp_packet(1500, 1, true), &mut Vec::new());
    let due = ms(2.0) + tx(1500, 8.0) + ms(1.0);
    assert_eq!(f.next_deadline(), Some(ms(2.0) + tx(1500, 8.0)), "first the end of its transmission");
    assert!(run_until(&mut f, due - SimTime(1)).is_empty());
    let out = run_until(&mut f, due);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].due, out[0].dest, out[0].link), (due, Dest::Client(0), Some(0)));
    assert_eq!(out[0].bytes, tcp_packet(1500, 1, true), "the packet itself");
    assert_eq!(out[0].wire_bytes, 1538);
}

#[test]
fn a_packet_read_late_starts_when_it_was_read_not_when_the_link_fell_idle() {
    // The first packet is out at t; the caller hands over the second at 3 ms without having
    // run the fabric in between: the link was idle from t, so the second starts at 3 ms.
    let mut f = fabric(serde_json::json!([{"rate_mbps": 8}]), serde_json::json!({"mode": "rr"}));
    let mut out = Vec::new();
    f.from_server(SimTime::ZERO, tcp_packet(1500, 0, true), &mut out);
    f.from_server(ms(3.0), tcp_packet(1500, 1, true), &mut out);
    assert_eq!(out.iter().map(|d| d.due).collect::<Vec<_>>(), vec![tx(1500, 8.0)], "the first, on the way in");
    assert_eq!(run_until(&mut f, ms(100.0))[0].due, ms(3.0) + tx(1500, 8.0));
}

#[test]
fn back_to_back_packets_leave_one_transmit_time_apart_and_a_full_queue_drops() {
    let mut f = fabric(
        serde_json::json!([{"rate_mbps": 8, "delay_us": 500, "txqueuelen": 3}]),
        serde_json::json!({"mode": "rr"}),
    );
    for seq in 0..4 {
        f.from_server(SimTime::ZERO, tcp_packet(1000, seq * 960, true), &mut Vec::new());
    }
    let out = run_until(&mut f, ms(100.0));
    let dues: Vec<SimTime> = out.iter().map(|d| d.due).collect();
    let t = tx(1000, 8.0);
    // txqueuelen counts the packet being sent too (the simulator's RateLink): the fourth is dropped.
    assert_eq!(dues, vec![t + ms(0.5), t + t + ms(0.5), t + t + t + ms(0.5)]);
    assert_eq!(forward(&f)[0].drops_queue_full, 1);
}

#[test]
fn round_robin_over_unequal_links_reorders_what_earliest_finish_keeps_in_order() {
    // 8 and 2 Mbit/s: a 1000-byte packet takes t and 4t. Round-robin: packets 0 and 2 on
    // the fast link arrive at t and 2t, packet 1 on the slow one at 4t (after packet 2:
    // one out of order), packet 3 on the slow one at 8t.
    let links = serde_json::json!([{"rate_mbps": 8}, {"rate_mbps": 2}]);
    let mut rr = fabric(links.clone(), serde_json::json!({"mode": "balance-rr"}));
    let mut ef = fabric(links, serde_json::json!({"mode": "earliest-finish"}));
    for f in [&mut rr, &mut ef] {
        for seq in 0..4 {
            f.from_server(SimTime::ZERO, tcp_packet(1000, seq * 960, true), &mut Vec::new());
        }
    }
    let t = tx(1000, 8.0);
    let out = run_until(&mut rr, ms(100.0));
    assert_eq!(out.iter().map(|d| d.link.unwrap()).collect::<Vec<_>>(), vec![0, 0, 1, 1]);
    assert_eq!(
        out.iter().map(|d| d.due).collect::<Vec<_>>(),
        vec![t, t + t, tx(1000, 2.0), tx(1000, 2.0) + tx(1000, 2.0)]
    );
    let flow = rr.flows.values().next().unwrap();
    assert_eq!((flow.packets, flow.delivered, flow.out_of_order, flow.link_switches), (4, 4, 1, 3));
    // Earliest-finish: the slow link would deliver at 4t; the fast one has each next packet
    // out by then (t, 2t, 3t, 4t: a tie, the lowest id), so everything takes the fast link.
    let out = run_until(&mut ef, ms(100.0));
    assert!(out.iter().all(|d| d.link == Some(0)), "{out:?}");
    assert_eq!(ef.flows.values().next().unwrap().out_of_order, 0);
}

#[test]
fn a_segment_that_arrives_again_counts_once_and_not_as_reordering() {
    let mut f = fabric(serde_json::json!([{"rate_mbps": 8}]), serde_json::json!({"mode": "rr"}));
    let mut out = Vec::new();
    for seq in [1000, 2000, 1000, 3000] {
        f.from_server(SimTime::ZERO, tcp_packet(1000, seq, true), &mut out);
    }
    f.advance(ms(100.0), &mut out);
    assert_eq!(out.len(), 4, "every copy reaches the client");
    let flow = f.flows.values().next().unwrap();
    assert_eq!((flow.packets, flow.delivered, flow.out_of_order), (4, 3, 0));
}

#[test]
fn a_failed_link_drops_until_the_monitor_commits_then_active_backup_moves() {
    let mut f = fabric(
        serde_json::json!([{"rate_mbps": 8, "failures": [{"down_s": 0.005}]}, {"rate_mbps": 8}]),
        serde_json::json!({"mode": "active-backup", "miimon": 10}),
    );
    // The ACK of a new flow comes back on the active link (active-backup's rx_link).
    let mut out = Vec::new();
    f.from_server(SimTime::ZERO, tcp_packet(500, 0, true), &mut out);
    f.from_client(ms(1.0), 0, tcp_packet(52, 0, false), &mut out);
    f.advance(ms(4.0), &mut out);
    assert_eq!(out.iter().map(|d| d.dest).collect::<Vec<_>>(), vec![Dest::Client(0), Dest::Server]);
    assert_eq!(f.reverse_stats().map(|s| s.packets_sent).collect::<Vec<_>>(), vec![1, 0]);
    // Carrier lost at 5 ms; the monitor's next check (10 ms) commits it. In between, the bond
    // still sends on link 0 and the packet is lost; after it, link 1 carries both ways.
    run_until(&mut f, ms(6.0));
    assert!(f.monitor_up(0));
    f.from_server(ms(6.0), tcp_packet(500, 1, true), &mut Vec::new());
    run_until(&mut f, ms(10.0));
    assert!(!f.monitor_up(0));
    f.from_server(ms(11.0), tcp_packet(500, 2, true), &mut Vec::new());
    f.from_client(ms(11.0), 0, tcp_packet(52, 0, false), &mut Vec::new());
    let out = run_until(&mut f, ms(20.0));
    // The 52-byte ACK is out before the 500-byte data packet.
    assert_eq!(out.iter().map(|d| d.link).collect::<Vec<_>>(), vec![None, Some(1)]);
    let fwd = forward(&f);
    assert_eq!((fwd[0].drops_link_down, fwd[0].failures, fwd[1].packets_sent), (1, 1, 1));
    assert_eq!(f.reverse_stats().map(|s| s.packets_sent).collect::<Vec<_>>(), vec![1, 1]);
}

/// Packets each reverse link (clients to the bond) has sent.
fn reverse_sent(f: &Fabric) -> Vec<u64> {
    f.reverse_stats().map(|s| s.packets_sent).collect()
}

#[test]
fn active_backup_acks_follow_the_active_slave_after_the_verdict_and_stay_when_the_old_one_returns() {
    // Link 0 loses its carrier at 5 ms and has it back at 30 ms; miimon checks every 10 ms.
    // The switch sends the bond's frames where the bond receives (its active slave, Linux
    // `bond_should_deliver_exact_match`): link 1 from the verdict at 10 ms on, and still link 1
    // after link 0 returns (without a primary the bond keeps its active slave,
    // `bond_choose_primary_or_current`), as the model's `follow_active_slave` has it.
    let mut f = fabric(
        serde_json::json!([{"rate_mbps": 8, "failures": [{"down_s": 0.005, "up_s": 0.030}]}, {"rate_mbps": 8}]),
        serde_json::json!({"mode": "active-backup", "miimon": 10}),
    );
    let mut out = Vec::new();
    f.from_server(SimTime::ZERO, tcp_packet(500, 0, true), &mut out);
    assert_eq!(ack_link(&mut f, 1.0), Some(0), "the active link before the failure");
    run_until(&mut f, ms(12.0));
    assert!(!f.monitor_up(0));
    assert_eq!(ack_link(&mut f, 12.0), Some(1), "the new active slave after the verdict");
    run_until(&mut f, ms(50.0));
    assert!(f.monitor_up(0), "link 0 is back in the bond");
    assert_eq!(ack_link(&mut f, 50.0), Some(1), "still the active slave, not the returned link");
    // A flow that starts now is told the same receive link.
    let mut second = tcp_packet(500, 0, true);
    second[21] = 0x41; // the server's port 8001 (0x1f41): another flow
    f.from_server(ms(51.0), second, &mut Vec::new());
    assert_eq!(f.flows.values().filter(|flow| f.rx_link(flow) == Some(1)).count(), 2);
}

/// The reverse link an ACK the client sends at `t` ms takes (sent whole 0.5 ms later: 90 wire
/// bytes at 8 Mbit/s).
fn ack_link(f: &mut Fabric, t: f64) -> Option<usize> {
    let before = reverse_sent(f);
    f.from_client(ms(t), 0, tcp_packet(52, 0, false), &mut Vec::new());
    run_until(f, ms(t + 0.5));
    reverse_sent(f).iter().zip(&before).position(|(a, b)| a > b)
}

#[test]
fn with_no_link_up_a_link_waiting_out_its_updelay_is_made_up_at_once_as_in_the_model() {
    // Link 0 is back at 30 ms with a 100 ms updelay to wait; link 1 fails at 40 ms. The bonding
    // driver then makes link 0 active at once (`bond_find_best_slave` takes the BOND_LINK_BACK
    // slave), as the model's `World::apply_verdict` does.
    let links = serde_json::json!([
        {"rate_mbps": 8, "failures": [{"down_s": 0.005, "up_s": 0.030}]},
        {"rate_mbps": 8, "failures": [{"down_s": 0.040, "up_s": 1.0}]},
    ]);
    for mode in ["active-backup", "balance-rr"] {
        let mut f = fabric(links.clone(), serde_json::json!({"mode": mode, "miimon": 10, "updelay": 100}));
        run_until(&mut f, ms(35.0));
        assert!(!f.monitor_up(0), "{mode}: link 0 waits out its updelay");
        run_until(&mut f, ms(60.0));
        assert!(!f.monitor_up(1) && f.monitor_up(0), "{mode}: link 0 made up when link 1 went");
    }
}

#[test]
fn balance_alb_clients_follow_the_rlb_table_at_each_verdict_as_in_the_model() {
    // One client, given link 0. Link 0 fails at 5 ms and is back at 30 ms: at the verdicts the
    // RLB table moves the client to link 1, then reshuffles it to link 2 (round-robin after the
    // last link handed out), as the bond's `Bond::link_changed` (its `follow_active_slave`) asks it.
    let mut f = fabric(
        serde_json::json!([{"rate_mbps": 8, "failures": [{"down_s": 0.005, "up_s": 0.030}]}, {"rate_mbps": 8}, {"rate_mbps": 8}]),
        serde_json::json!({"mode": "balance-alb", "miimon": 10}),
    );
    f.from_server(SimTime::ZERO, tcp_packet(500, 0, true), &mut Vec::new());
    assert_eq!(ack_link(&mut f, 1.0), Some(0));
    run_until(&mut f, ms(12.0));
    assert_eq!(ack_link(&mut f, 12.0), Some(1), "moved off the failed link");
    run_until(&mut f, ms(45.0));
    assert!(f.monitor_up(0));
    assert_eq!(ack_link(&mut f, 45.0), Some(2), "reshuffled when link 0 came back, not back on it");
}

/// An IPv4/UDP datagram of `l3` bytes from the server's port 8000 to the client's port 40000.
fn udp_packet(l3: usize) -> Vec<u8> {
    let mut out = Vec::new();
    etherparse::PacketBuilder::ipv4(SERVER, CLIENT, 64).udp(8000, 40000).write(&mut out, &vec![0u8; l3 - 28]).unwrap();
    out
}

#[test]
fn a_datagram_is_numbered_by_its_place_in_its_flow_at_the_bond() {
    // Round-robin over 8 and 2 Mbit/s: datagrams 0 and 2 on the fast link, 1 and 3 on the
    // slow one (4 times as long): 1 arrives after 2, and 3 after 2 too (below the highest).
    let links = serde_json::json!([{"rate_mbps": 8}, {"rate_mbps": 2}]);
    let mut f = fabric(links, serde_json::json!({"mode": "balance-rr"}));
    for _ in 0..4 {
        f.from_server(SimTime::ZERO, udp_packet(1000), &mut Vec::new());
    }
    run_until(&mut f, ms(100.0));
    let flow = f.flows.values().next().unwrap();
    // Without a number of its own every datagram would be "the same segment": 1 delivered.
    assert_eq!((flow.packets, flow.delivered, flow.out_of_order), (4, 4, 1));
}

#[test]
fn packets_of_other_hosts_are_not_bonded() {
    let mut f = fabric(serde_json::json!([{"rate_mbps": 8}]), serde_json::json!({"mode": "rr"}));
    let mut stray = tcp_packet(100, 0, true);
    stray[19] = 99; // destination 10.1.0.99: no such client
    f.from_server(SimTime::ZERO, stray, &mut Vec::new());
    f.from_server(SimTime::ZERO, vec![0x45, 0, 0], &mut Vec::new()); // not an IPv4 packet
    assert!(run_until(&mut f, ms(10.0)).is_empty());
    assert_eq!((f.foreign, f.packets), (2, 0));
}

#[test]
fn the_emulator_names_what_it_cannot_do() {
    let base = serde_json::json!({
        "workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 1000}},
        "sender": {"kind": "tcp"}, "bond": {"mode": "rr"}, "links": [{"rate_mbps": 8}],
        "switch": {"lag": "static"},
    });
    let silent = serde_json::json!({"rate_mbps": 8, "failures": [{"down_s": 0.1, "kind": "silent"}]});
    let flapping =
        serde_json::json!({"rate_mbps": 8, "flapping": {"start_s": 0.1, "down_ms": 5, "up_ms": 5, "count": 2}});
    let arp = serde_json::json!({"mode": "rr", "miimon": 0, "arp_interval": 100, "arp_ip_target": ["10.0.0.9"]});
    let cases = [
        ("/links/0", silent, "links.0.failures.0.kind"),
        ("/links/0", flapping, "links.0.flapping"),
        ("/links/0", serde_json::json!({"rate_mbps": 8, "carrier_latency_ms": 4}), "links.0.carrier_latency_ms"),
        ("/bond", arp, "bond.arp_interval"),
        ("/switch", serde_json::json!({"lag": "none"}), "switch.lag"),
        ("/links/0", serde_json::json!({"period_ms": 20}), "links.0.kind"),
        ("/sender", serde_json::json!({"kind": "window"}), "sender.kind"),
        ("/sender", serde_json::json!({"kind": "tcp", "gso": true}), "sender.gso"),
        ("/workload/requests", serde_json::json!(100000), "workload.requests"),
        ("/links/0", serde_json::json!({"rate_mbps": 8, "tx_coalesce_us": 50}), "links.0.tx_coalesce_us"),
        ("/links/0", serde_json::json!({"rate_mbps": 8, "rx_coalesce_us": 500}), "links.0.rx_coalesce_us"),
    ];
    for (pointer, value, path) in cases {
        let mut doc = base.clone();
        *doc.pointer_mut(pointer).unwrap() = value;
        let scenario = Scenario::from_json(&doc.to_string()).unwrap();
        let err = crate::check(&scenario).unwrap_err().to_string();
        assert!(err.starts_with(&format!("{path}: ")), "{err}");
    }
    // The machines' CPUs are the simulator's model; the emulator's are the kernel's own. Of the clients'
    // hosts it makes the NIC (ring, moderation) and GRO behind it, when moderation gathers frames into polls.
    let hosts = [
        ("server_host", serde_json::json!({"rx_coalesce_us": 100}), "server_host"),
        ("host", serde_json::json!({"rx_packet_us": 5}), "host.rx_packet_us"),
        ("host", serde_json::json!({"rx_coalesce_us": 100, "tx_packet_us": 1}), "host.tx_packet_us"),
        ("host", serde_json::json!({"rx_skb_us": 1, "rx_ring": 64, "gro": true}), "host.rx_skb_us"),
        ("host", serde_json::json!({"rx_coalesce_us": 100, "shared": true}), "host.shared"),
        ("host", serde_json::json!({"rx_coalesce_us": 100, "napi_weight": 16}), "host.napi_weight"),
        ("host", serde_json::json!({"rx_ring": 64, "gro": true}), "host.gro"),
    ];
    for (section, value, path) in hosts {
        let mut doc = base.clone();
        doc[section] = value;
        let err = crate::check(&Scenario::from_json(&doc.to_string()).unwrap()).unwrap_err().to_string();
        assert!(err.starts_with(&format!("{path}: ")), "{err}");
    }
    let mut doc = base.clone();
    doc["host"] = serde_json::json!({"rx_coalesce_us": 100, "rx_ring": 64, "gro": true});
    let scenario = Scenario::from_json(&doc.to_string()).unwrap();
    crate::check(&scenario).unwrap();
    assert_eq!(crate::clients::gro_flush_timeout_ns(&scenario.host), Some(50_000), "half the moderation interval");
    // A TCP stream of messages (netperf's TCP_STREAM in the model): the emulator writes whole files.
    let mut doc = base.clone();
    doc["stop_s"] = serde_json::json!(1.0);
    doc["sender"] = serde_json::json!({"kind": "tcp", "message_bytes": 8});
    let err = crate::check(&Scenario::from_json(&doc.to_string()).unwrap()).unwrap_err().to_string();
    assert!(err.starts_with("sender.message_bytes: "), "{err}");
    // A datagram the kernel would fragment (the model may: network.protocol = "udp").
    let mut doc = base.clone();
    doc["network"] = serde_json::json!({"protocol": "udp"});
    doc["sender"] = serde_json::json!({"kind": "cbr", "rate_mbps": 5, "chunk_bytes": 1473});
    let err = crate::check(&Scenario::from_json(&doc.to_string()).unwrap()).unwrap_err().to_string();
    assert!(err.starts_with("sender.chunk_bytes: the emulator sends whole datagrams: at most 1472 bytes"), "{err}");
}

#[test]
fn traffic_names_list_the_default_first_and_each_names_its_kind() {
    // Python's `--traffic` takes this list (`_core.EMU_TRAFFIC`) and leaves the default to it.
    assert_eq!(crate::Traffic::from_name(crate::Traffic::NAMES[0]).unwrap(), crate::Traffic::default());
    let kinds: Vec<crate::Traffic> =
        crate::Traffic::NAMES.iter().map(|n| crate::Traffic::from_name(n).unwrap()).collect();
    assert_eq!(kinds, [crate::Traffic::Sockets, crate::Traffic::Iperf3]);
    assert!(crate::Traffic::from_name("ns3").unwrap_err().to_string().contains("one of sockets, iperf3"));
}

#[test]
fn the_model_of_the_emulated_host_puts_every_link_beyond_tun() {
    let doc = serde_json::json!({
        "workload": {"requests": 1, "clients": 1, "file_size": {"kind": "fixed", "bytes": 100000}},
        "sender": {"kind": "tcp"},
        "bond": {"mode": "balance-rr"},
        "links": [{"rate_mbps": 10, "delay_us": 2000, "txqueuelen": 64, "loss": 0.01}, {"rate_mbps": 5}]
    });
    let scenario = Scenario::from_json(&doc.to_string()).unwrap();
    let (host, words) = crate::emulated_host(&scenario);
    assert_eq!(words, crate::TUN_PLACEMENT);
    for (before, after) in scenario.links.iter().zip(&host.links) {
        let (bondsim_core::scenario::LinkModel::Rate(b), bondsim_core::scenario::LinkModel::Rate(a)) =
            (&before.model, &after.model)
        else {
            panic!("rate links")
        };
        assert_eq!(a.placement, bondsim_core::scenario::Placement::Tun);
        assert_eq!(bondsim_core::scenario::RateModel { placement: b.placement, ..a.clone() }, *b, "nothing else");
    }
    // It is a scenario the model accepts and runs, and the emulator takes.
    let host = Scenario::from_json(&host.to_json()).unwrap();
    crate::check(&host).unwrap();
    assert!(bondsim_core::run(&host).unwrap().summary.goodput_bps > 0.0);
}

#[test]
fn kernel_queues_take_the_modes_the_kernel_can_run_and_refuse_the_rest_naming_the_field() {
    use crate::placement::{host_queues, HostQueues, Steering};
    let doc = |mode: serde_json::Value, link: serde_json::Value| {
        let doc = serde_json::json!({
            "workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 1000}},
            "sender": {"kind": "tcp"}, "bond": mode, "links": [{"rate_mbps": 8}, link],
        });
        Scenario::from_json(&doc.to_string()).unwrap()
    };
    let shaper = serde_json::json!({"rate_mbps": 4, "placement": "shaper"});
    let line = serde_json::json!({"rate_mbps": 100, "downstream": {"rate_mbps": 4}});
    let rr = serde_json::json!({"mode": "balance-rr"});
    let ef = serde_json::json!({"mode": "earliest-finish"});
    // Which host each gets: nic links behind TUN; a shaper link puts every link in the kernel.
    assert_eq!(host_queues(&doc(rr.clone(), serde_json::json!({"rate_mbps": 4}))).unwrap(), HostQueues::Tun);
    let kernel_rr = HostQueues::Kernel(Steering::RoundRobin { per_slave: 1 });
    assert_eq!(host_queues(&doc(rr.clone(), shaper.clone())).unwrap(), kernel_rr);
    assert_eq!(host_queues(&doc(rr.clone(), line.clone())).unwrap(), kernel_rr);
    let three = serde_json::json!({"mode": "rr", "packets_per_slave": 3});
    let kernel_three = HostQueues::Kernel(Steering::RoundRobin { per_slave: 3 });
    assert_eq!(host_queues(&doc(three, shaper.clone())).unwrap(), kernel_three);
    for mode in ["balance-xor", "802.3ad", "active-backup"] {
        let host = host_queues(&doc(serde_json::json!({"mode": mode}), shaper.clone())).unwrap();
        assert_eq!(host, HostQueues::Kernel(Steering::Flows), "{mode}");
    }
    // A mode the kernel cannot run: a line beyond TUN, a shaper refused.
    assert_eq!(host_queues(&doc(ef.clone(), line.clone())).unwrap(), HostQueues::Tun);
    let (host, words) = crate::emulated_host(&doc(ef.clone(), line));
    assert_eq!(words, crate::TUN_PLACEMENT);
    assert!(host
        .links
        .iter()
        .all(|l| matches!(&l.model, LinkModel::Rate(m) if m.placement == Placement::Tun && m.tx_coalesce_us == 0.0)));
    let (host, words) = crate::emulated_host(&doc(rr.clone(), shaper.clone()));
    assert_eq!(words, crate::KERNEL_PLACEMENT);
    assert!(host.links.iter().all(|l| matches!(&l.model, LinkModel::Rate(m) if m.placement == Placement::Shaper)));
    let refused =
        |bond: serde_json::Value, link: serde_json::Value| crate::check(&doc(bond, link)).unwrap_err().to_string();
    let e = refused(ef, shaper.clone());
    assert!(e.starts_with("links.1.placement: ") && e.contains("balance-rr") && e.contains("earliest-finish"), "{e}");
    let e = refused(serde_json::json!({"mode": "rr", "packets_per_slave": 0}), shaper.clone());
    assert!(e.starts_with("links.1.placement: "), "{e}");
    let with = |field: &str, value: serde_json::Value| {
        let mut link = shaper.clone();
        link[field] = value;
        link
    };
    let e = refused(rr.clone(), with("failures", serde_json::json!([{"down_s": 0.1}])));
    assert!(e.starts_with("links.1.failures: with kernel queues"), "{e}");
    let e = refused(rr.clone(), with("slowdown", serde_json::json!(2.0)));
    assert!(e.starts_with("links.1.slowdown: "), "{e}");
    let e = refused(rr.clone(), with("per_packet_us", serde_json::json!(3.0)));
    assert!(e.starts_with("links.1.per_packet_us: "), "{e}");
    let e = refused(rr, serde_json::json!({"rate_mbps": 4, "tx_coalesce_us": 50}));
    assert!(e.starts_with("links.1.tx_coalesce_us: ") && e.contains("netem"), "{e}");
}

#[cfg(target_os = "linux")]
#[test]
fn each_steering_programs_jumps_land_on_its_fallback() {
    use crate::steer::{flows_program, round_robin_program};
    // A program's conditional jumps (ALU class JMP, op JEQ/JNE) all go to its last two
    // instructions: r0 = the fallback queue, exit.
    for (program, fallback) in
        [(round_robin_program(7, 1, 2), 0), (round_robin_program(7, 3, 4), 0), (flows_program(7, 4), 4)]
    {
        let n = program.len();
        assert_eq!(format!("{:?}", program[n - 2]), format!("{:?}", crate::steer::mov_imm_for_test(0, fallback)));
        let jumps: Vec<usize> = (0..n).filter(|&i| crate::steer::jump_target(&program[i], i).is_some()).collect();
        assert!(!jumps.is_empty());
        for i in jumps {
            assert_eq!(crate::steer::jump_target(&program[i], i), Some(n - 2), "jump at {i}");
        }
    }
    assert_eq!(crate::steer::flow_key([10, 0, 1, 2], 80, 40000), [10, 0, 1, 2, 0, 80, 0x9c, 0x40]);
}

#[test]
fn a_packet_from_a_links_kernel_queue_takes_that_link_and_the_bond_tells_where_it_put_a_flow() {
    // Active-backup puts every packet on link 0; a packet the kernel's queue of link 1 let go
    // goes on link 1 (the mode ran in the kernel), with the flow's bookkeeping all the same.
    let links = serde_json::json!([{"rate_mbps": 8, "placement": "shaper"}, {"rate_mbps": 8, "placement": "shaper"}]);
    let mut f = fabric(links, serde_json::json!({"mode": "active-backup"}));
    let placed = f.from_server(SimTime::ZERO, tcp_packet(1000, 0, true), &mut Vec::new());
    let placed = placed.expect("one link");
    assert_eq!((placed.dst_ip, placed.src_port, placed.dst_port, placed.link), (CLIENT, 8000, 40000, 0));
    f.from_kernel_queue(ms(1.0), 1, tcp_packet(1000, 960, true), &mut Vec::new());
    f.from_kernel_queue(ms(2.0), 1, tcp_packet(1000, 1920, true), &mut Vec::new());
    run_until(&mut f, ms(100.0));
    let sent: Vec<u64> = f.forward_stats().map(|s| s.packets_sent).collect();
    assert_eq!(sent, vec![1, 2]);
    let flow = f.flows.values().next().unwrap();
    assert_eq!((flow.packets, flow.delivered, flow.link_switches), (3, 3, 1));
    // The kernel's queue drops count as the links' own.
    f.count_queue_drops(&[0, 5]);
    let drops: Vec<u64> = f.forward_stats().map(|s| s.drops_queue_full).collect();
    assert_eq!(drops, vec![0, 5]);
}

/// An MPTCP fabric of `links` (JSON list) for `clients` clients, each with `sender` fields added.
fn mptcp_fabric(links: serde_json::Value, clients: u32, sender: serde_json::Value) -> Fabric {
    let mut fields = serde_json::json!({"kind": "mptcp"});
    fields.as_object_mut().unwrap().extend(sender.as_object().unwrap().clone());
    let doc = serde_json::json!({
        "workload": {"clients": clients, "requests": clients, "file_size": {"kind": "fixed", "bytes": 1000}},
        "sender": fields, "bond": {"mode": "balance-rr"}, "links": links,
    });
    let scenario = Scenario::from_json(&doc.to_string()).unwrap();
    crate::check(&scenario).unwrap();
    Fabric::new(&scenario, Clients::new(&scenario.network, clients, scenario.seed)).unwrap()
}

/// A TCP packet of `l3` bytes between the server's port 8000 and `client`'s port 40000.
fn tcp_packet_to(client: [u8; 4], l3: usize, seq: u32, from_server: bool) -> Vec<u8> {
    let (src, dst, sp, dp) = if from_server { (SERVER, client, 8000, 40000) } else { (client, SERVER, 40000, 8000) };
    let mut out = Vec::new();
    etherparse::PacketBuilder::ipv4(src, dst, 64)
        .tcp(sp, dp, seq, 65535)
        .ack(1)
        .write(&mut out, &vec![0u8; l3 - 40])
        .unwrap();
    out
}

#[test]
fn mptcp_subflows_take_the_link_of_their_client_address_both_ways_whatever_the_bond() {
    // Three links, two clients: client c's subflow on link i is from 198.18.i.(c+1) (i >= 1),
    // on link 0 from its own address. Balance-rr would alternate; each subflow keeps its link.
    let links = serde_json::json!([{"rate_mbps": 8}, {"rate_mbps": 8}, {"rate_mbps": 8}]);
    let mut f = mptcp_fabric(links, 2, serde_json::json!({}));
    let second = [10, 1, 0, 2];
    let addr = |link: u8, client: u8| if link == 0 { [10, 1, 0, client + 1] } else { [198, 18, link, client + 1] };
    let mut out = Vec::new();
    for (link, client) in [(2, 1), (2, 1), (0, 0), (1, 1), (1, 0), (2, 0)] {
        f.from_server(SimTime::ZERO, tcp_packet_to(addr(link, client), 500, 0, true), &mut out);
    }
    out.extend(run_until(&mut f, ms(100.0)));
    let to: Vec<(Dest, Option<usize>)> = out.iter().map(|d| (d.dest, d.link)).collect();
    assert_eq!(to.iter().filter(|t| **t == (Dest::Client(1), Some(2))).count(), 2);
    assert_eq!(to.iter().filter(|t| **t == (Dest::Client(0), Some(0))).count(), 1);
    assert_eq!(to.iter().filter(|t| **t == (Dest::Client(1), Some(1))).count(), 1);
    assert_eq!(to.iter().filter(|t| **t == (Dest::Client(0), Some(1))).count(), 1);
    assert_eq!(to.iter().filter(|t| **t == (Dest::Client(0), Some(2))).count(), 1);
    assert_eq!(forward(&f).iter().map(|s| s.packets_sent).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!(f.flows.len(), 5, "each subflow its own flow");
    assert_eq!(f.subflow_link(addr(2, 0)), Some(2));
    assert_eq!(f.subflow_link(second), Some(0));
    // Back: by the client's source address.
    for (link, client, n) in [(0u8, 1u8, 3), (2, 0, 2), (1, 1, 1)] {
        for _ in 0..n {
            f.from_client(ms(200.0), client as usize, tcp_packet_to(addr(link, client), 52, 0, false), &mut out);
        }
    }
    run_until(&mut f, ms(300.0));
    assert_eq!(reverse_sent(&f), vec![3, 1, 2]);
    assert_eq!((f.reverse_packets, f.reverse_delivered, f.foreign), (6, 6, 0));
    // An address of no subflow (a fourth link's, or another network's) is no one's.
    f.from_server(ms(300.0), tcp_packet_to([198, 18, 3, 1], 500, 0, true), &mut Vec::new());
    f.from_client(ms(300.0), 0, tcp_packet_to([10, 9, 9, 9], 52, 0, false), &mut Vec::new());
    assert_eq!(f.foreign, 2);
}

#[test]
fn mptcp_with_fewer_subflows_than_links_leaves_the_other_links_idle() {
    let links = serde_json::json!([{"rate_mbps": 8}, {"rate_mbps": 8}, {"rate_mbps": 8}]);
    let mut f = mptcp_fabric(links, 1, serde_json::json!({"mptcp_subflows": 2}));
    let mut out = Vec::new();
    for a in [CLIENT, [198, 18, 1, 1], [198, 18, 2, 1]] {
        f.from_server(SimTime::ZERO, tcp_packet_to(a, 500, 0, true), &mut out);
    }
    run_until(&mut f, ms(100.0));
    assert_eq!(forward(&f).iter().map(|s| s.packets_sent).collect::<Vec<_>>(), vec![1, 1, 0]);
    assert_eq!(f.foreign, 1, "no subflow has an address on link 2");
}

#[test]
fn a_failed_link_drops_its_subflows_packets_both_ways_and_the_others_carry_on() {
    // Link 1 fails at 5 ms and returns at 20 ms; no monitor moves anything (no bond): its
    // subflow's packets are dropped both ways while it is down, link 0's go through.
    let links = serde_json::json!([
        {"rate_mbps": 8},
        {"rate_mbps": 8, "failures": [{"down_s": 0.005, "up_s": 0.020}]}
    ]);
    let mut f = mptcp_fabric(links, 1, serde_json::json!({}));
    let second = [198, 18, 1, 1];
    let mut out = Vec::new();
    for (t, a) in [(1.0, CLIENT), (1.0, second), (10.0, CLIENT), (10.0, second), (30.0, second)] {
        f.from_server(ms(t), tcp_packet_to(a, 500, 0, true), &mut out);
        f.from_client(ms(t), 0, tcp_packet_to(a, 52, 0, false), &mut out);
    }
    out.extend(run_until(&mut f, ms(100.0)));
    let fwd = forward(&f);
    assert_eq!(fwd.iter().map(|s| s.packets_sent).collect::<Vec<_>>(), vec![2, 2]);
    assert_eq!((fwd[0].drops_link_down, fwd[1].drops_link_down), (0, 1));
    assert_eq!(reverse_sent(&f), vec![2, 2], "the ACK at 10 ms is not carried");
    let at_server = out.iter().filter(|d| d.dest == Dest::Server).count();
    assert_eq!(at_server, 4);
    assert_eq!(out.iter().filter(|d| d.dest == Dest::Client(0)).count(), 4);
}

#[test]
fn mptcp_in_the_emulator_names_what_it_cannot_do_and_takes_kernel_queues_by_address() {
    use crate::placement::{host_queues, HostQueues, Steering};
    let doc = |links: serde_json::Value, network: serde_json::Value| {
        let doc = serde_json::json!({
            "workload": {"requests": 2, "clients": 2, "file_size": {"kind": "fixed", "bytes": 1000}},
            "sender": {"kind": "mptcp"}, "bond": {"mode": "earliest-finish"}, "links": links, "network": network,
        });
        Scenario::from_json(&doc.to_string()).unwrap()
    };
    let two = serde_json::json!([{"rate_mbps": 8}, {"rate_mbps": 8}]);
    assert_eq!(host_queues(&doc(two.clone(), serde_json::json!({}))).unwrap(), HostQueues::Tun);
    // Kernel queues: whatever the mode (none places a subflow), the flows' program.
    let lines = serde_json::json!([
        {"rate_mbps": 100, "downstream": {"rate_mbps": 8}},
        {"rate_mbps": 100, "downstream": {"rate_mbps": 4}}
    ]);
    assert_eq!(host_queues(&doc(lines.clone(), serde_json::json!({}))).unwrap(), HostQueues::Kernel(Steering::Flows));
    let shaped = serde_json::json!([{"rate_mbps": 8, "placement": "shaper"}, {"rate_mbps": 8}]);
    assert_eq!(host_queues(&doc(shaped, serde_json::json!({}))).unwrap(), HostQueues::Kernel(Steering::Flows));
    let (host, words) = crate::emulated_host(&doc(lines, serde_json::json!({})));
    assert_eq!(words, crate::KERNEL_PLACEMENT);
    assert!(host.links.iter().all(|l| matches!(&l.model, LinkModel::Rate(m) if m.placement == Placement::Shaper)));
    // A failure with kernel queues is refused, naming the field and what runs instead.
    let failing =
        serde_json::json!([{"rate_mbps": 8, "placement": "shaper", "failures": [{"down_s": 1}]}, {"rate_mbps": 8}]);
    let e = crate::check(&doc(failing, serde_json::json!({}))).unwrap_err().to_string();
    assert!(e.starts_with("links.0.failures: with kernel queues") && e.contains("placement = \"tun\""), "{e}");
    // Behind TUN a failure is taken.
    let failing = serde_json::json!([{"rate_mbps": 8, "failures": [{"down_s": 1}]}, {"rate_mbps": 8}]);
    crate::check(&doc(failing, serde_json::json!({}))).unwrap();
    // A client address where a subflow's would be.
    let e = crate::check(&doc(two.clone(), serde_json::json!({"client_ips": ["10.1.0.1", "198.18.1.1"]})))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("network.client_ips: ") && e.contains("198.18.1.1"), "{e}");
    let e = crate::check(&doc(two, serde_json::json!({"server_ip": "198.18.1.2"}))).unwrap_err().to_string();
    assert!(e.starts_with("network.server_ip: ") && e.contains("client 1"), "{e}");
}
