use super::build::peer_notif_every;
use super::*;
use crate::link::LinkStats;

/// A client end that acknowledges every packet it gets, as TCP's receiver will.
struct Acker(std::collections::VecDeque<Packet>);

impl Endpoint for Acker {
    fn open(&mut self, _now: SimTime, _flow: u32, _bytes: u64, _out: &mut Vec<Output>) {}
    fn on_packet(&mut self, now: SimTime, packet: Packet, out: &mut Vec<Output>) {
        out.push(Output::Deliver(packet));
        self.0.push_back(Packet::ack(packet.flow, packet.seq + 1, now));
    }
    fn poll_transmit(&mut self, _now: SimTime) -> Option<Packet> {
        self.0.pop_front()
    }
    fn is_idle(&self) -> bool {
        self.0.is_empty()
    }
}

fn world(mode: &str, failures: serde_json::Value) -> World {
    world_with(mode, failures, 0.0)
}

/// Three 1 Gbit/s links (the last with `failures`), every one losing frames with probability `loss`.
fn world_with(mode: &str, failures: serde_json::Value, loss: f64) -> World {
    world_of(serde_json::json!({
        "workload": {"requests": 8, "clients": 8, "file_size": {"kind": "fixed", "bytes": 144_800}},
        "sender": {"kind": "window", "window_pkts": 8, "chunk_bytes": 1448},
        "bond": {"mode": mode, "miimon": 1.0},
        "links": [{"count": 2, "rate_mbps": 1000.0, "delay_us": 50.0, "loss": loss},
                  {"rate_mbps": 1000.0, "delay_us": 50.0, "failures": failures, "loss": loss}],
    }))
}

#[test]
fn gratuitous_arps_are_spaced_in_monitor_ticks_of_whole_jiffies() {
    let every = |bond: serde_json::Value| {
        let v = serde_json::json!({"workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 1000}},
            "bond": bond, "links": [{"rate_mbps": 100.0}]});
        peer_notif_every(&Scenario::from_json(&v.to_string()).unwrap().bond)
    };
    let ms = |x: u64| SimTime(x * 1_000_000);
    let ab = |extra: serde_json::Value| {
        let mut bond = serde_json::json!({"mode": "active-backup"});
        bond.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        every(bond)
    };
    // miimon ticks: max(1, peer_notif_delay / miimon) of them, each msecs_to_jiffies(miimon).
    assert_eq!(ab(serde_json::json!({"miimon": 10})), ms(10));
    assert_eq!(ab(serde_json::json!({"miimon": 10, "hz": 250})), ms(12));
    assert_eq!(ab(serde_json::json!({"miimon": 10, "peer_notif_delay": 25, "hz": 250})), ms(24));
    // The ARP monitor: one per its tick (bond_activebackup_arp_mon), not all at once.
    let arp = serde_json::json!({"miimon": 0, "arp_interval": 10, "arp_ip_target": ["10.0.0.254"], "hz": 250});
    assert_eq!(ab(arp), ms(12));
}

/// The world of `scenario`, its clients acknowledging every packet.
fn world_of(scenario: serde_json::Value) -> World {
    let scenario = Scenario::from_json(&scenario.to_string()).unwrap();
    let mut world = World::build(&scenario).unwrap();
    world.client = End::Custom(Box::new(Acker(Default::default())));
    world
}

/// The result of `scenario` with idle paced links waking outside the event queue
/// (`lazy`), or in it every period as the thesis's interface does.
fn result_of(scenario: &serde_json::Value, lazy: bool) -> RunResult {
    run_of(scenario, lazy, true).0
}

/// A run of `scenario`, idle wake-ups in the queue (`lazy` false) or outside it, idle links
/// frozen when the run drains unless `freeze` is false; with the wake-ups counted in bulk,
/// the links frozen and [`IdleLinks::frozen_ties`].
fn run_of(scenario: &serde_json::Value, lazy: bool, freeze: bool) -> (RunResult, u64, u64, [u64; 4]) {
    let scenario = Scenario::from_json(&scenario.to_string()).unwrap();
    let mut world = World::build(&scenario).unwrap();
    (world.lazy_polls, world.idle.freeze_off) = (lazy, !freeze);
    world.run(&mut |_| true).unwrap();
    let (bulk, frozen, ties) = (world.idle.bulk_polls, world.idle.frozen_links, world.idle.frozen_ties);
    (world.finish(&scenario, 0.0), bulk, frozen, ties)
}

/// The idle links' wake-up keys (time and sequence number) before each event of a run of
/// `scenario` with idle wake-ups outside the queue, counted in bulk or (`bulk_off`) one
/// by one.
fn idle_keys_of(scenario: &serde_json::Value, bulk_off: bool) -> Vec<Vec<u128>> {
    let scenario = Scenario::from_json(&scenario.to_string()).unwrap();
    let mut world = World::build(&scenario).unwrap();
    (world.idle.bulk_off, world.idle.log) = (bulk_off, Some(Vec::new()));
    world.run(&mut |_| true).unwrap();
    world.idle.log.unwrap()
}

/// Every figure of a result but the event count (which idle links waking outside the
/// queue lower).
fn figures(r: &RunResult) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap();
    v["summary"]["events"] = 0.into();
    v
}

#[test]
fn idle_paced_links_waking_outside_the_queue_move_no_figure_and_run_fewer_events() {
    // The thesis's links (one at 82 ms: the others go idle while it drains), and what an idle
    // wake-up touches: arrivals at any time, the bond reading idle times and slowdowns (lb),
    // slowdowns that change between wake-ups, trace intervals, a carrier failure.
    let thesis = |mode: &str, arrivals: serde_json::Value, link0: serde_json::Value| {
        serde_json::json!({
            "workload": {"requests": 30, "arrivals": arrivals,
                         "file_size": {"kind": "uniform", "min_bytes": 1000, "max_bytes": 30000}},
            "sender": {"kind": "paced", "tick_ms": 20, "packets_per_tick": 4, "chunk_bytes": 1024},
            "bond": {"mode": mode, "miimon": 10},
            "links": [link0, {"period_ms": 82, "trace_intervals_s": [0.05, 0.09, 0.02]},
                      {"period_ms": 20, "intermittent": {"slow_s": 0.3, "normal_s": 0.5, "slowdown": 2.5, "random": true}},
                      {"period_ms": 20, "slowdown": 1.5}],
        })
    };
    let poisson = serde_json::json!({"kind": "poisson", "rate_per_s": 20.0});
    let at_start = serde_json::json!({"kind": "at_start"});
    let plain = serde_json::json!({"period_ms": 20});
    let slowed = serde_json::json!({"period_ms": 20, "slow_windows": [{"start_s": 0.5, "end_s": 2.0, "slowdown": 3.0}],
                                    "failures": [{"down_s": 0.4, "up_s": 1.1}]});
    for (mode, arrivals, link0) in
        [("rr", &at_start, &plain), ("rr", &poisson, &slowed), ("lb", &poisson, &slowed), ("lb", &at_start, &plain)]
    {
        let eager = result_of(&thesis(mode, arrivals.clone(), link0.clone()), false);
        let lazy = result_of(&thesis(mode, arrivals.clone(), link0.clone()), true);
        let idle: u64 = eager.links.polls.iter().sum::<u64>() - eager.links.packets_sent.iter().sum::<u64>();
        assert!(idle > 100, "{mode}: the links idle ({idle} idle wake-ups)");
        assert!(lazy.summary.events < eager.summary.events, "{mode}: {:?} events", lazy.summary.events);
        assert_eq!(figures(&lazy), figures(&eager), "{mode} {arrivals}");
    }
}

#[test]
fn idle_links_frozen_while_the_run_drains_move_no_figure() {
    // Once the sender has sent everything, the idle links are frozen and their wake-ups
    // counted at the end (`freeze_idle_links`, `settle_frozen`). Three links of every mix
    // of seven periods (ties in time everywhere: whole milliseconds with many common
    // multiples, against the sender's 20 ms tick), fed 2 and 3 packets a tick, under schedulers that share the packets
    // evenly, by load, by flow and all to one link: the last link to drain is sometimes the
    // slowest, sometimes not, sometimes drains soon after the sender stops; and a frozen
    // link's wake-up at the last event's time comes before it in some runs and after it in
    // others, both when it follows from its step and when it is the first one not run.
    let periods = [4.0, 10.0, 20.0, 25.0, 30.0, 60.0, 82.0];
    let mut cases: Vec<(&str, u32, Vec<f64>)> = Vec::new();
    for mode in ["rr", "lb", "xor", "active-backup"] {
        for i in 0..2 * periods.len().pow(3) {
            let mix = [i % 7, i / 7 % 7, i / 49 % 7].map(|p| periods[p]).to_vec();
            cases.push((mode, 2 + i as u32 / 343, mix));
        }
    }
    // Two links wake at the last event's time, and the last event is the one of the lesser
    // step: a frozen link's step lies between theirs.
    cases.push(("lb", 2, vec![60.0, 20.0, 4.0, 30.0]));
    cases.push(("lb", 2, vec![4.0, 60.0, 20.0, 30.0]));
    let (mut frozen, mut ties) = (0, [0; 4]);
    for (mode, per_tick, mix) in cases {
        let links: Vec<_> = mix.iter().map(|p| serde_json::json!({"period_ms": p})).collect();
        let s = serde_json::json!({
            "workload": {"requests": 12, "file_size": {"kind": "uniform", "min_bytes": 1000, "max_bytes": 30000}},
            "sender": {"kind": "paced", "tick_ms": 20, "packets_per_tick": per_tick, "chunk_bytes": 1024},
            "bond": {"mode": mode},
            "links": links,
        });
        let (lazy, _, links_frozen, run_ties) = run_of(&s, true, true);
        assert_eq!(figures(&lazy), figures(&result_of(&s, false)), "{mode} {per_tick} {mix:?}");
        frozen += links_frozen;
        ties.iter_mut().zip(run_ties).for_each(|(all, run)| *all += run);
    }
    assert!(frozen > 1000, "{frozen} links frozen");
    assert!(ties.iter().all(|&n| n > 0), "wake-ups at the last event's time: {ties:?}");
}

#[test]
fn idle_wake_ups_counted_in_bulk_move_no_figure() {
    // Links that idle at one fixed step take turns in a cycle, and their wake-ups are
    // counted in bulk (`skip_idle_polls_before`). Ties in time everywhere: the sender ticks
    // at 20 ms, the links wake on the same 20 ms grid (a 10 ms period slowed 2 times is a
    // 20 ms step), a 30 ms link meets them every 60 ms (wake-ups of other steps send the
    // bulk path back to one by one), Poisson arrivals wake idle links between ticks, and
    // lb reads every link's idle time and queue.
    let scenario = |mode: &str, arrivals: serde_json::Value, last: serde_json::Value, files: u32| {
        serde_json::json!({
            "workload": {"requests": 40, "arrivals": arrivals,
                         "file_size": {"kind": "uniform", "min_bytes": 1000, "max_bytes": files}},
            "sender": {"kind": "paced", "tick_ms": 20, "packets_per_tick": 4, "chunk_bytes": 1024},
            "bond": {"mode": mode},
            "links": [{"period_ms": 20}, {"period_ms": 82}, {"period_ms": 10, "slowdown": 2.0}, last],
        })
    };
    let poisson = serde_json::json!({"kind": "poisson", "rate_per_s": 5.0});
    let at_start = serde_json::json!({"kind": "at_start"});
    let same = serde_json::json!({"period_ms": 20});
    let other = serde_json::json!({"period_ms": 30});
    for mode in ["rr", "lb", "xor"] {
        for (arrivals, last, files) in [
            (&at_start, &same, 60_000),
            (&poisson, &same, 20_000),
            (&poisson, &other, 20_000),
            (&at_start, &other, 60_000),
        ] {
            let s = scenario(mode, arrivals.clone(), last.clone(), files);
            let eager = result_of(&s, false);
            let (lazy, bulk, _, _) = run_of(&s, true, false);
            // (lb between Poisson arrivals: the sender ticks on and lb keeps the 82 ms link
            // short, so no link idles twice between events: they run one by one.)
            let ticking = mode == "lb" && arrivals == &poisson;
            assert!(bulk > 50 || ticking, "{mode} {arrivals} {last}: {bulk} wake-ups counted in bulk");
            assert_eq!(figures(&lazy), figures(&eager), "{mode} {arrivals} {last}");
            // Each wake-up also holds the very place in the order of its instant (the
            // sequence number) that it holds when run one by one.
            assert_eq!(idle_keys_of(&s, false), idle_keys_of(&s, true), "{mode} {arrivals} {last}");
        }
    }
}

/// One TCP-less transfer over three links behind an unaware switch (`switch.lag = "none"`),
/// the bond sending `num_grat_arp` gratuitous ARPs after a failover.
fn unaware_world(mode: &str, num_grat_arp: u32) -> World {
    world_of(serde_json::json!({
        "workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 144_800}},
        "bond": {"mode": mode, "miimon": 1.0, "num_grat_arp": num_grat_arp},
        "links": [{"count": 3, "rate_mbps": 1000.0}],
        "switch": {"lag": "none"},
    }))
}

#[test]
fn an_unaware_switch_floods_an_unknown_mac_and_the_bond_keeps_the_copy_on_a_slave_it_receives_on() {
    // Nothing sent yet: the switch does not know the bond's MAC and floods to every port.
    let mut rr = unaware_world("balance-rr", 1);
    assert_eq!(rr.peer_link(SimTime::ZERO, 0), Some(0), "every slave of balance-rr receives: the first copy");
    assert_eq!(rr.switch.stats.flooded, 1);
    let mut ab = unaware_world("active-backup[primary=link2]", 1);
    assert_eq!(ab.peer_link(SimTime::ZERO, 0), Some(2), "active-backup keeps only the active slave's copy");
    // The active slave's port without carrier: the flood reaches only inactive slaves, the bond drops it.
    ab.switch.carrier(2, false, SimTime::ZERO);
    assert_eq!(ab.peer_link(SimTime::ZERO, 0), None);
    assert_eq!((ab.switch.stats.flooded, ab.switch.stats.drops_inactive_slave), (2, 1));
}

/// Eight TCP transfers of 3 MB over four Gigabit links of a `mode` bond behind a switch of
/// `lag`, run to the end; balance-tlb and -alb rebalance every 100 ms so that flows spread.
fn tcp_behind(mode: &str, lag: &str) -> World {
    let scenario = Scenario::from_json(
        &serde_json::json!({
            "workload": {"requests": 8, "clients": 8, "file_size": {"kind": "fixed", "bytes": 3_000_000}},
            "sender": {"kind": "tcp"},
            "bond": {"mode": mode, "rebalance_interval_s": 0.1},
            "links": [{"count": 4, "rate_mbps": 1000.0, "delay_us": 10.0}],
            "switch": {"lag": lag},
        })
        .to_string(),
    )
    .unwrap();
    let mut w = World::build(&scenario).unwrap();
    w.run(&mut |_| true).unwrap();
    w
}

#[test]
fn balance_tlb_and_alb_behind_an_unaware_switch_send_from_each_slaves_own_address() {
    for mode in ["balance-tlb", "balance-alb"] {
        let plain = tcp_behind(mode, "none");
        let sent: Vec<u64> = plain.links.iter().map(|l| l.stats().packets_sent).collect();
        assert!(sent.iter().filter(|&&n| n > 0).count() >= 3, "{mode}: flows spread over the slaves: {sent:?}");
        // The bond's address stays on the active slave's port, each other slave's on its own:
        // nothing moves, nothing is flooded or lost (with the bond's address on every frame the
        // switch moved it with each slave's frames and sent ACKs to slaves that drop them).
        let stats = &plain.switch.stats;
        assert_eq!((stats.mac_moves, stats.flooded, stats.drops_inactive_slave), (0, 0, 0), "{mode}");
        assert_eq!(plain.switch.learned(plain.slave_macs.bond()), Some(0), "{mode}");
        for slave in 1..4 {
            assert_eq!(plain.switch.learned(plain.slave_macs.of(slave)), Some(slave), "{mode}");
        }
        // So the clients' frames reach the bond as behind a LAG that knows the mode's receive links.
        let lag = tcp_behind(mode, "static");
        let figures = |w: &World| (w.receiver.delivered, w.receiver.last_delivery, w.reverse_sent, w.reverse_arrived);
        assert_eq!(figures(&plain), figures(&lag), "{mode}");
        let reverse =
            |w: &World| -> Vec<u64> { w.reverse.iter().map(|r| r.as_ref().unwrap().stats.packets_sent).collect() };
        assert_eq!(reverse(&plain), reverse(&lag), "{mode}");
        if mode == "balance-tlb" {
            assert_eq!(reverse(&plain)[1..], [0, 0, 0], "balance-tlb receives on its active slave only");
        } else {
            assert!(reverse(&plain).iter().all(|&n| n > 0), "balance-alb's clients send to their own slaves");
        }
    }
}

#[test]
fn a_new_active_tlb_slave_takes_the_bonds_address_and_teaches_the_switch_at_once() {
    let mut w = unaware_world("balance-tlb", 0);
    let (bond, second) = (w.slave_macs.bond(), w.slave_macs.of(1));
    assert_eq!(w.switch.learned(bond), Some(0), "taught when the first slave became active");
    let t = SimTime::from_millis_f64(1.0);
    w.carrier(t, 0, false);
    while let Some((now, Event { target, token })) = w.events.pop() {
        if target == Target::Monitor(0) {
            w.commit(now, 0, token as u32);
            break;
        }
    }
    assert_eq!(w.bond.scheduler.active_link(), Some(1));
    // Slave 1 holds the bond's address now, slave 0 slave 1's (`alb_swap_mac_addr`), and the
    // switch learned the bond's on port 1 at the change; slave 0's port has no link.
    assert_eq!((w.slave_macs.of(1), w.slave_macs.of(0)), (bond, second));
    assert_eq!((w.switch.learned(bond), w.switch.learned(second)), (Some(1), None));
    // The ALB timer runs only with tlb_dynamic_lb or in balance-alb (`bond_open`): so do the
    // learning packets.
    let learns = |mode: &str| unaware_world(mode, 0).events.pending().any(|e| e.target == Target::Learning);
    assert!(!learns("balance-tlb[tlb_dynamic_lb=0]"));
    assert!(learns("balance-alb[tlb_dynamic_lb=0]"));
    // Learning packets: each slave's own address on its port, every second from 0.9 s.
    let mut w = unaware_world("balance-tlb", 0);
    assert_eq!(w.switch.learned(w.slave_macs.of(2)), None);
    while let Some((now, Event { target, .. })) = w.events.pop() {
        if target == Target::Learning {
            assert_eq!(now, SimTime::from_millis_f64(900.0));
            w.learning_packets(now);
            break;
        }
    }
    assert_eq!(w.switch.learned(w.slave_macs.of(2)), Some(2));
    assert!(w.events.pending().any(|e| e.target == Target::Learning));
}

/// Fails link 0 of an active-backup bond behind an unaware switch at 1 ms and runs the world's
/// events until the monitor commits it (no traffic moves: the test skips the other events).
fn fail_over(num_grat_arp: u32) -> World {
    let mut w = unaware_world("active-backup", num_grat_arp);
    let mac = w.bond.headers[0].src_mac;
    let t = SimTime::from_millis_f64(1.0);
    w.switch.learn(0, mac, t);
    w.carrier(t, 0, false);
    while let Some((now, Event { target, token })) = w.events.pop() {
        if target == Target::Monitor(0) {
            w.commit(now, 0, token as u32);
            break;
        }
    }
    w
}

#[test]
fn gratuitous_arps_move_the_bonds_mac_to_the_new_active_port_at_the_failover() {
    let with = fail_over(2);
    let mac = with.bond.headers[0].src_mac;
    assert_eq!(with.bond.notified(), Some(1));
    assert_eq!(with.switch.learned(mac), Some(1), "learned on the new active slave's port at once");
    assert_eq!(with.switch.stats.grat_arps, 2);
    // Without them the entry went with port 0's link and nothing has taught the switch since.
    let without = fail_over(0);
    assert_eq!(without.switch.learned(mac), None);
    assert_eq!(without.switch.stats.grat_arps, 0);
}

#[test]
fn acknowledgements_travel_the_reverse_links_picked_by_the_peer() {
    let mut w = world("balance-rr", serde_json::json!([]));
    w.run(&mut |_| true).unwrap();
    let reverse: Vec<u64> = w.reverse.iter().map(|r| r.as_ref().unwrap().stats.packets_sent).collect();
    assert_eq!((w.reverse_sent, w.reverse_arrived), (800, 800));
    assert_eq!(reverse.iter().sum::<u64>(), 800);
    // The switch hashes each flow (layer2+3 of the reversed headers) onto one link: 100 acks per flow.
    let expected: Vec<u64> =
        (0..3).map(|l| (0..8).filter(|&f| w.peer_link(SimTime::ZERO, f) == Some(l)).count() as u64 * 100).collect();
    assert_eq!(reverse, expected);
    assert!(expected[2] > 0, "some flows hash onto link 2 (so the failure test below means something)");
    // An acknowledgement takes a frame's time on the wire and the link's delay: it never arrives at once.
    assert!(w.events.now() > SimTime::from_micros_f64(100.0));
}

/// A server end that sends a fixed list of packets at once.
struct Script(std::collections::VecDeque<Packet>);

impl Endpoint for Script {
    fn open(&mut self, _now: SimTime, _flow: u32, _bytes: u64, _out: &mut Vec<Output>) {}
    fn poll_transmit(&mut self, _now: SimTime) -> Option<Packet> {
        self.0.pop_front()
    }
    fn is_idle(&self) -> bool {
        self.0.is_empty()
    }
}

#[test]
fn an_offload_buffer_goes_whole_to_the_link_its_first_segment_took() {
    let sent = |gso: [u8; 5]| {
        let mut w = world("balance-rr", serde_json::json!([]));
        let packets =
            gso.iter().enumerate().map(|(k, &g)| Packet { gso: g, ..Packet::data(0, k as u32, 1448, SimTime::ZERO) });
        w.server = End::Custom(Box::new(Script(packets.collect())));
        w.hears_resolved = false;
        w.run(&mut |_| true).unwrap();
        w.links.iter().map(|l| l.stats().packets_sent).collect::<Vec<_>>()
    };
    // Round-robin places buffers: a buffer of 3, then two of their own.
    assert_eq!(sent([3, 1, 1, 0, 0]), [3, 1, 1]);
    // The same packets as buffers of one each: one per link in turn.
    assert_eq!(sent([0, 0, 0, 0, 0]), [2, 2, 1]);
}

#[test]
fn the_peer_avoids_a_link_without_carrier_and_follows_the_modes_receive_link() {
    let mut w = world("balance-rr", serde_json::json!([{"down_s": 0.0}]));
    w.run(&mut |_| true).unwrap();
    let reverse: Vec<u64> = w.reverse.iter().map(|r| r.as_ref().unwrap().stats.packets_sent).collect();
    assert_eq!(reverse[2], 0, "no acknowledgement on the dead link: {reverse:?}");
    let mut w = world("active-backup", serde_json::json!([]));
    w.run(&mut |_| true).unwrap();
    let reverse: Vec<u64> = w.reverse.iter().map(|r| r.as_ref().unwrap().stats.packets_sent).collect();
    assert_eq!(reverse, [800, 0, 0], "active-backup receives on its active link");
}

#[test]
fn frames_lost_on_the_wire_are_lost_packets_both_ways() {
    let mut w = world_with("balance-rr", serde_json::json!([]), 0.05);
    w.run(&mut |_| true).unwrap();
    assert!(w.is_done(), "the run ends with the fabric empty");
    assert_eq!(w.in_flight, 0);
    let forward: u64 = w.links.iter().map(|l| l.stats().drops_random).sum();
    let reverse: Vec<&LinkStats> = w.reverse.iter().map(|r| &r.as_ref().unwrap().stats).collect();
    let reverse_lost: u64 = reverse.iter().map(|s| s.drops_random).sum();
    // Forward: each lost frame is a lost packet (one copy each), the rest arrived.
    assert!(forward > 0);
    assert_eq!(w.receiver.lost, forward);
    assert_eq!(w.receiver.delivered + w.receiver.lost, w.sent);
    // Backward: every acknowledgement sent either reached the server or was lost on the wire.
    assert!(reverse_lost > 0, "the reverse direction loses frames too");
    assert_eq!(w.reverse_sent, w.reverse_arrived + reverse_lost);
    assert_eq!(w.reverse_sent, w.receiver.delivered, "one acknowledgement per delivered packet");
    assert_eq!(reverse.iter().map(|s| s.packets_sent).sum::<u64>(), w.reverse_sent);
}

#[test]
fn a_closed_loop_client_asks_again_the_instant_a_request_ends() {
    // Two clients, one request outstanding each, over one link: each client's requests
    // follow one another, the next arriving when the previous one's last packet does.
    let scenario = Scenario::from_json(
        &serde_json::json!({
            "workload": {"requests": 6, "clients": 2, "arrivals": {"kind": "closed", "active": 1},
                         "file_size": {"kind": "fixed", "bytes": 14_480}},
            "sender": {"kind": "tcp"},
            "bond": {"mode": "balance-rr"},
            "links": [{"rate_mbps": 100.0, "delay_us": 50.0}],
        })
        .to_string(),
    )
    .unwrap();
    let result = run(&scenario).unwrap();
    let r = &result.requests;
    assert_eq!(result.summary.flows_complete, 6);
    assert_eq!(&r.arrival_s[..2], &[Some(0.0), Some(0.0)]);
    for i in 2..6 {
        assert_eq!(r.client[i], r.client[i - 2]);
        assert_eq!(r.arrival_s[i], r.finish_s[i - 2], "request {i} waits for request {}", i - 2);
    }
    // The client never has two requests open: each starts after its predecessor ended.
    assert!(r.arrival_s[4].unwrap() > r.arrival_s[2].unwrap());
}

#[test]
fn goodput_counts_from_measure_from_s() {
    // Two files a second apart on one idle 100 Mbit/s link: over the whole run the goodput is
    // mostly the idle second; counted from the second file's arrival it is the transfer's own.
    let scenario = |from: Option<f64>| {
        let mut v = serde_json::json!({
            "workload": {"requests": 2, "clients": 1, "arrivals": {"kind": "batches", "size": 1, "every_s": 1.0},
                         "file_size": {"kind": "fixed", "bytes": 144_800}},
            "sender": {"kind": "tcp"},
            "bond": {"mode": "balance-rr"},
            "links": [{"rate_mbps": 100.0, "delay_us": 50.0}],
        });
        if let Some(from) = from {
            v["measure_from_s"] = serde_json::json!(from);
        }
        Scenario::from_json(&v.to_string()).unwrap()
    };
    let whole = run(&scenario(None)).unwrap();
    let late = run(&scenario(Some(1.0))).unwrap();
    let wire = 100e6 * 1448.0 / 1538.0;
    let transfer_s = whole.summary.duration_s - 1.0;
    let expected = 144_800.0 * 8.0 / transfer_s;
    assert!((late.summary.goodput_bps - expected).abs() < 1.0, "{} vs {expected}", late.summary.goodput_bps);
    assert!(late.summary.goodput_bps < wire && late.summary.goodput_bps > 0.5 * wire);
    assert!(whole.summary.goodput_bps < late.summary.goodput_bps / 5.0);
    let refused = Scenario::from_json(
        &serde_json::json!({"stop_s": 1.0, "measure_from_s": 1.0,
            "workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 1}},
            "bond": {"mode": "balance-rr"}, "links": [{"rate_mbps": 100.0}]})
        .to_string(),
    );
    assert!(refused.unwrap_err().to_string().contains("measure_from_s"));
}

#[test]
fn a_link_is_never_busy_longer_than_a_run_stopped_mid_frame() {
    // Issue 39's reproducer: tcp_rr's links at 2.5 Mbit/s (a frame takes 4.92 ms), stopped at 0.1 s
    // while the slow links send their 21st frame: they were busy 0.1033536 s of a 0.1 s run.
    let scenario = Scenario::from_json(
        &serde_json::json!({"stop_s": 0.1, "sender": {"kind": "tcp"}, "bond": {"mode": "balance-rr"},
            "workload": {"requests": 8, "clients": 8, "file_size": {"kind": "fixed", "bytes": 20_000_000}},
            "links": [{"count": 3, "rate_mbps": 2.5, "delay_us": 20}, {"rate_mbps": 1000, "delay_us": 120}]})
        .to_string(),
    )
    .unwrap();
    let result = run(&scenario).unwrap();
    assert_eq!(result.summary.duration_s, 0.1);
    for (link, busy) in result.links.busy_s.iter().enumerate().take(3) {
        // Sending from the start to the end: busy the whole run, not past it.
        assert!((busy - 0.1).abs() < 1e-9, "link {link}: busy {busy} s of 0.1 s");
    }
    assert!(result.links.utilisation.iter().all(|&u| u <= 1.0));
}

#[test]
fn arp_probing_is_refused_over_a_link_without_a_return_path() {
    // The paced interface has no reverse link: the ARP monitor's replies could never come back.
    let doc = |links: serde_json::Value| {
        serde_json::json!({
            "workload": {"requests": 1, "clients": 1, "file_size": {"kind": "fixed", "bytes": 10_000}},
            "bond": {"mode": "active-backup", "miimon": 0, "arp_interval": 100, "arp_ip_target": ["10.0.0.9"]},
            "links": links,
        })
    };
    let mixed = Scenario::from_json(&doc(serde_json::json!([{"rate_mbps": 10}, {"period_ms": 20}])).to_string());
    let Err(e) = crate::run(&mixed.unwrap()) else { panic!("refused") };
    let e = e.to_string();
    assert!(e.starts_with("bond.arp_interval: ARP probing needs rate links"), "{e}");
    let rate = Scenario::from_json(&doc(serde_json::json!([{"rate_mbps": 10}, {"rate_mbps": 10}])).to_string());
    assert!(crate::run(&rate.unwrap()).is_ok());
}
