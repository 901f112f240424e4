//! Failover measures end to end (`failovers` table): every expectation is derived here
//! from the scenario (monitor period, delays, carrier latency, send rate), never copied
//! from a run.

use bondsim_core::{run, RunResult, Scenario};
use serde_json::{json, Value};

fn scenario(value: Value) -> Scenario {
    Scenario::from_json(&value.to_string()).unwrap_or_else(|e| panic!("{e}: {value}"))
}

/// A UDP stream of `rate_mbps` (1448-byte datagrams) over two 1 Gbit/s links in `mode`;
/// link 0 fails at `down_s` (moved by up to `jitter_ms`) and comes back at `up_s`.
fn udp(mode: &str, bond: Value, latency_ms: f64, jitter_ms: f64, seed: u64) -> Value {
    let mut b = json!({"mode": mode});
    for (k, v) in bond.as_object().unwrap() {
        b[k] = v.clone();
    }
    json!({
        "seed": seed,
        "stop_s": 0.5,
        "workload": {"requests": 1, "clients": 1, "file_size": {"kind": "fixed", "bytes": 1_000_000_000u64}},
        "sender": {"kind": "cbr", "rate_mbps": RATE_MBPS, "chunk_bytes": 1448},
        "bond": b,
        "links": [
            {"rate_mbps": 1000.0, "delay_us": 10.0, "carrier_latency_ms": latency_ms,
             "failures": [{"down_s": 0.1, "up_s": 0.3, "jitter_ms": jitter_ms}]},
            {"rate_mbps": 1000.0, "delay_us": 10.0, "carrier_latency_ms": latency_ms},
        ],
    })
}

const RATE_MBPS: f64 = 100.0;
/// The stream's packet gap, ms: 1448 payload bytes at RATE_MBPS.
const GAP_MS: f64 = 1448.0 * 8.0 / (RATE_MBPS * 1e3);

/// The UDP stream of [`udp`] over two 1 Gbit/s links failing as `failures` say, `bond` as given.
fn stream_over_two_links(bond: Value, failures: [Value; 2], stop_s: f64) -> Scenario {
    let [f0, f1] = failures;
    scenario(json!({
        "seed": 1,
        "stop_s": stop_s,
        "workload": {"requests": 1, "clients": 1, "file_size": {"kind": "fixed", "bytes": 1_000_000_000u64}},
        "sender": {"kind": "cbr", "rate_mbps": RATE_MBPS, "chunk_bytes": 1448},
        "bond": bond,
        "links": [{"rate_mbps": 1000.0, "failures": f0}, {"rate_mbps": 1000.0, "failures": f1}],
    }))
}

fn only_failure(r: &RunResult) -> &bondsim_core::failover::FailoverTable {
    let f = r.failovers.as_ref().expect("a run whose link fails has a failovers table");
    assert_eq!(f.link, [0], "one failure, of link 0");
    f
}

#[test]
fn active_backup_detects_within_carrier_latency_plus_one_check_plus_downdelay() {
    let (miimon, downdelay, latency) = (10.0, 20.0, 3.0);
    let mut phases = Vec::new();
    for seed in 1..=12 {
        let s = scenario(udp("active-backup", json!({"miimon": miimon, "downdelay": downdelay}), latency, 50.0, seed));
        let r = run(&s).unwrap();
        let f = only_failure(&r);
        let d = f.detection_ms[0].expect("miimon notices the failure");
        assert!(
            d >= latency + downdelay - 1e-9 && d <= latency + miimon + downdelay + 1e-9,
            "seed {seed}: detection {d} ms outside [{}, {}]",
            latency + downdelay,
            latency + miimon + downdelay
        );
        // The jitter moves the failure inside [0.1 s, 0.1 s + 50 ms) and keeps its length.
        let (down, up) = (f.down_at_s[0], f.up_at_s[0].unwrap());
        assert!((0.1..0.15).contains(&down), "seed {seed}: down at {down}");
        assert!((up - down - 0.2).abs() < 1e-9);
        assert_eq!(r.summary.count("failovers"), Some(1));
        assert_eq!(r.summary.real("detection_ms_max"), Some(d));
        phases.push(d);
    }
    // Random instants fall at different phases of the 10 ms check.
    let spread = phases.iter().cloned().fold(f64::MIN, f64::max) - phases.iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread > miimon / 4.0, "detection times barely vary: {phases:?}");
}

#[test]
fn udp_switch_over_is_the_detection_plus_at_most_a_packet_gap_and_a_frame() {
    let latency = 4.0;
    for seed in 1..=6 {
        let r = run(&scenario(udp("active-backup", json!({"miimon": 1.0}), latency, 10.0, seed))).unwrap();
        let f = only_failure(&r);
        let d = f.detection_ms[0].unwrap();
        let fst = f.switchover_ms[0].expect("the stream switched links");
        assert_eq!(f.switchover_flows[0], 1);
        // From the last packet over link 0 (at most a gap before the failure) to the first over
        // link 1 (sent at the verdict or at most a gap later, then a frame's time on the wire and
        // the wire's delay): both ends are within one gap of the failure and of the verdict.
        let frame_ms = (1448.0 + 28.0 + 38.0) * 8.0 / 1e6;
        assert!(fst >= d - GAP_MS, "seed {seed}: FST {fst} below detection {d} minus a gap");
        assert!(fst <= d + 2.0 * GAP_MS + frame_ms + 0.01 + 1e-9, "seed {seed}: FST {fst} vs detection {d}");
        // What the bond sent into the dead link until it knew: about detection / gap packets.
        let expected = d / GAP_MS;
        let lost = f.lost_link_down[0] as f64;
        assert!((lost - expected).abs() <= 2.0, "seed {seed}: lost {lost}, {expected} expected");
    }
}

#[test]
fn load_balancing_modes_leave_a_link_when_its_nic_reports_no_carrier_not_at_the_verdict() {
    // `bond_slave_can_tx` (include/net/bonding.h) tests the NIC's carrier (`bond_slave_is_up`)
    // besides the monitor's `BOND_LINK_UP`: balance-rr's walk skips the link and tlb drops the
    // one packet of a bucket found on it and moves the bucket, as soon as the NIC reports;
    // active-backup sends on its active slave until miimon's verdict and its downdelay.
    let (miimon, downdelay, latency) = (10.0, 20.0, 4.0);
    let bond = json!({"miimon": miimon, "downdelay": downdelay});
    for (mode, share) in [("balance-rr", 0.5), ("balance-tlb", 1.0), ("active-backup", 1.0)] {
        let r = run(&scenario(udp(mode, bond.clone(), latency, 0.0, 1))).unwrap();
        let f = only_failure(&r);
        let d = f.detection_ms[0].expect("miimon notices the failure");
        assert!(d >= latency + downdelay - 1e-9 && d <= latency + miimon + downdelay + 1e-9, "{mode}: detection {d}");
        // Sent into the dead link: the stream's share of link 0 until the bond stopped using it.
        let until_ms = if mode == "active-backup" { d } else { latency };
        let expected = until_ms / GAP_MS * share + if mode == "balance-tlb" { 1.0 } else { 0.0 };
        let lost = (f.lost_link_down[0] + f.lost_no_link[0]) as f64;
        assert!((lost - expected).abs() <= 2.0, "{mode}: lost {lost}, {expected} expected");
    }
}

#[test]
fn updelay_is_skipped_when_nothing_can_send_except_in_balance_rr_and_broadcast() {
    // Both links lose carrier at 0.1 s; link 0 returns at 0.2 s, link 1 at 0.4 s; miimon 10 ms,
    // updelay 50 ms. `bond_miimon_inspect` skips the updelay when the bond has no active slave
    // (active-backup) or an empty usable array (the hash modes); balance-rr and broadcast keep
    // no usable array and wait it out: the stream has no link for 50 ms longer.
    let window_ms = |mode: &str| {
        let bond = json!({"mode": mode, "miimon": 10.0, "updelay": 50.0});
        let failures = [json!([{"down_s": 0.1, "up_s": 0.2}]), json!([{"down_s": 0.1, "up_s": 0.4}])];
        let r = run(&stream_over_two_links(bond, failures, 0.5)).unwrap();
        // From the verdict at 0.1 s the bond has no link until link 0's verdict comes back.
        r.summary.drops_no_link as f64 * GAP_MS
    };
    for (mode, expected) in
        [("active-backup", 100.0), ("balance-xor", 100.0), ("balance-rr", 150.0), ("broadcast", 150.0)]
    {
        let got = window_ms(mode);
        assert!((got - expected).abs() <= 2.0 * GAP_MS, "{mode}: no link for {got} ms, {expected} expected");
    }
}

#[test]
fn a_carrier_back_and_gone_between_two_checks_leaves_the_downdelay_counting() {
    // miimon 10 ms, downdelay 20 ms. The carrier goes at 100.5 ms (seen by the check at 110:
    // BOND_LINK_FAIL), is back at 110.2 and gone again at 115: no check falls between, so the
    // countdown goes on and the verdict comes at 130 ms, not 140 (`bond_miimon_inspect` reads the
    // carrier at its checks only). Active-backup sends into the link until then, except while
    // its carrier was back.
    let bond = json!({"mode": "active-backup", "miimon": 10.0, "downdelay": 20.0});
    let failures = [json!([{"down_s": 0.1005, "up_s": 0.1102}, {"down_s": 0.115, "up_s": 0.25}]), json!([])];
    let r = run(&stream_over_two_links(bond, failures, 0.3)).unwrap();
    let dead_ms = (110.2 - 100.5) + (130.0 - 115.0);
    let lost = r.summary.drops_link_down as f64;
    assert!((lost - dead_ms / GAP_MS).abs() <= 2.0, "lost {lost}, {} expected", dead_ms / GAP_MS);
}

#[test]
fn balance_alb_moves_a_failed_links_clients_and_brings_them_back_only_at_its_verdict() {
    // RLB: `rlb_clear_slave` moves the clients of a failed link to another and the bond's ARP
    // updates move their traffic; they come back only when `rlb_rebalance` reshuffles at the
    // verdict that the link is up (after updelay), not when its carrier returns.
    let run_until = |up_s: f64| {
        let s = scenario(json!({
            "seed": 1,
            "stop_s": 0.25,
            "workload": {"requests": 2, "clients": 2, "file_size": {"kind": "fixed", "bytes": 1_000_000_000u64}},
            "sender": {"kind": "tcp"},
            "bond": {"mode": "balance-alb", "miimon": 10.0, "updelay": 200.0},
            "links": [{"rate_mbps": 1000.0}, {"rate_mbps": 1000.0, "failures": [{"down_s": 0.05, "up_s": up_s}]}],
        }));
        run(&s).unwrap()
    };
    let back = run_until(0.1); // carrier back at 0.1 s, verdict at 0.3 s: after the run
    let never = run_until(10.0);
    assert!(never.links.reverse_packets_sent[1] > 0, "a client's ACKs came in on link 1 before it failed");
    assert_eq!(
        back.links.reverse_packets_sent[1], never.links.reverse_packets_sent[1],
        "no ACK on link 1 between its carrier's return and its verdict"
    );
}

#[test]
fn with_no_link_up_a_link_waiting_out_its_updelay_is_made_active_at_once() {
    // miimon 10 ms, updelay 100 ms. Link 1 fails at 50 ms and its carrier is back at 200 ms
    // (BOND_LINK_BACK, up at 300 ms); link 0 fails at 250 ms. `bond_find_best_slave` finds no
    // slave up and takes the one in BOND_LINK_BACK ("making interface the new active one 50 ms
    // earlier"): the stream goes on over link 1 from 250 ms instead of waiting until 300 ms.
    for mode in ["active-backup", "balance-rr", "balance-xor"] {
        let bond = json!({"mode": mode, "miimon": 10.0, "updelay": 100.0});
        let failures = [json!([{"down_s": 0.25, "up_s": 0.45}]), json!([{"down_s": 0.05, "up_s": 0.2}])];
        let r = run(&stream_over_two_links(bond, failures, 0.5)).unwrap();
        assert!(r.summary.drops_no_link <= 2, "{mode}: {} dropped with no link", r.summary.drops_no_link);
        assert!(r.links.packets_sent[1] as f64 >= 0.2 / (GAP_MS / 1e3) * 0.95, "{mode}: link 1 carried the stream");
    }
}

#[test]
fn of_links_back_together_after_losing_all_only_the_first_skips_its_updelay() {
    // miimon 10 ms, updelay 50 ms; both links lose their carrier at 100 ms (a switch reboots).
    // Link 1's carrier is back at 201.2 ms, link 0's at 205.1 ms: both are seen by the check at
    // 210 ms, where `bond_miimon_inspect` walks link 0 first and gives it `ignore_updelay` (the
    // bond has no active slave); link 1 waits out its updelay. So link 0 is the active slave again
    // and link 1, up from 260 ms, carries nothing; a skip for every link back before that check
    // made link 1 (whose commit came first) active instead.
    let failures = [json!([{"down_s": 0.1, "up_s": 0.2051}]), json!([{"down_s": 0.1, "up_s": 0.2012}])];
    for extra in [json!({}), json!({"primary": "link0", "primary_reselect": "failure"})] {
        let mut bond = json!({"mode": "active-backup", "miimon": 10.0, "updelay": 50.0});
        for (k, v) in extra.as_object().unwrap() {
            bond[k] = v.clone();
        }
        let r = run(&stream_over_two_links(bond, failures.clone(), 0.5)).unwrap();
        assert_eq!(r.links.packets_sent[1], 0, "{extra}: link 0 is active again: {:?}", r.links.packets_sent);
        let after = (0.5 - 0.21) / (GAP_MS / 1e3);
        assert!(r.links.packets_sent[0] as f64 >= (0.1 / (GAP_MS / 1e3) + after) * 0.98, "{:?}", r.links.packets_sent);
    }
}

#[test]
fn without_miimon_active_backup_never_fails_over_and_loses_everything_until_the_link_is_back() {
    let r = run(&scenario(udp("active-backup", json!({"miimon": 0.0}), 0.0, 0.0, 1))).unwrap();
    let f = only_failure(&r);
    assert_eq!(f.detected_at_s[0], None);
    assert_eq!(f.detection_ms[0], None);
    assert_eq!(f.switchover_flows[0], 0, "no flow moved to the backup link");
    assert_eq!(f.switchover_ms[0], None);
    // Everything the stream sent in the 200 ms the link was down was lost to it.
    let sent = 0.2e3 / GAP_MS;
    let lost = f.lost_link_down[0] as f64;
    assert!((lost - sent).abs() <= 2.0, "lost {lost}, {sent} sent while down");
    assert_eq!(f.throughput_bps[0], 0.0);
    assert_eq!(r.links.packets_sent[1], 0, "the backup link never carried anything");
}

#[test]
fn broadcast_loses_nothing_while_one_link_lives() {
    let r = run(&scenario(udp("broadcast", json!({"miimon": 1.0}), 4.0, 0.0, 1))).unwrap();
    let f = only_failure(&r);
    let lost = f.lost_link_down[0]
        + f.lost_no_link[0]
        + f.lost_queue_full[0]
        + f.lost_random[0]
        + f.lost_silent[0]
        + f.lost_switch_port[0];
    assert_eq!(lost, 0, "a packet has its other copy");
    assert_eq!(r.summary.dropped, Some(0));
    assert!(r.summary.drops_link_down > 0, "copies were dropped on the failed link all the same");
    // The application's rate during the failure is the stream's.
    let rate = f.throughput_bps[0] / 1e6;
    assert!((rate - RATE_MBPS).abs() < 0.01 * RATE_MBPS, "{rate} Mbit/s during the failure");
}

#[test]
fn carrier_latency_delays_the_verdict_and_costs_what_was_sent_meanwhile() {
    let lost = |latency: f64| {
        let r = run(&scenario(udp("active-backup", json!({"miimon": 1.0}), latency, 0.0, 1))).unwrap();
        let f = only_failure(&r);
        let d = f.detection_ms[0].unwrap();
        assert!(d >= latency && d <= latency + 1.0, "latency {latency}: detection {d}");
        f.lost_link_down[0] as f64
    };
    let (fast, slow) = (lost(0.0), lost(50.0));
    // 50 ms more of the stream went into the dead link.
    let extra = 50.0 / GAP_MS;
    assert!((slow - fast - extra).abs() <= 2.0, "{fast} then {slow}: {extra} more expected");
}

#[test]
fn tcp_stall_spans_the_failure_and_timeouts_are_counted_in_its_window() {
    let s = scenario(json!({
        "seed": 1,
        "stop_s": 1.0,
        "workload": {"requests": 1, "clients": 1, "file_size": {"kind": "fixed", "bytes": 1_000_000_000u64}},
        "sender": {"kind": "tcp"},
        "bond": {"mode": "active-backup", "miimon": 0.0},
        "links": [{"rate_mbps": 100.0, "failures": [{"down_s": 0.2, "up_s": 0.6}]}, {"rate_mbps": 100.0}],
    }));
    let r = run(&s).unwrap();
    let f = only_failure(&r);
    // No monitor: TCP waits for the link to come back; its delivery stalls at least that long and
    // its timeouts (backed off from 200 ms) fire in the window.
    let stall = f.tcp_stall_ms[0].expect("TCP stalled");
    assert!(stall >= 400.0, "stall {stall} ms shorter than the outage");
    let rtos = f.rtos[0].unwrap();
    assert!(rtos >= 1, "a timeout fired while the link was down");
    assert!(rtos <= r.summary.count("tcp_rtos").unwrap());
    assert_eq!(r.summary.real("tcp_stall_ms_max"), Some(stall));
    // A UDP run has no TCP figures.
    let u = run(&scenario(udp("active-backup", json!({"miimon": 1.0}), 0.0, 0.0, 1))).unwrap();
    let uf = only_failure(&u);
    assert_eq!((uf.tcp_stall_ms[0], uf.rtos[0]), (None, None));
}

#[test]
fn runs_whose_links_cannot_fail_have_no_failover_table() {
    let mut v = udp("active-backup", json!({"miimon": 1.0}), 0.0, 0.0, 1);
    v["links"][0]["failures"] = json!([]);
    let r = run(&scenario(v)).unwrap();
    assert!(r.failovers.is_none());
    assert_eq!(r.summary.count("failovers"), None);
}

#[test]
fn bad_latency_and_jitter_name_their_field() {
    let err = |v: Value| Scenario::from_json(&v.to_string()).unwrap_err().to_string();
    let mut v = udp("active-backup", json!({}), -1.0, 0.0, 1);
    assert!(err(v.clone()).contains("links.0.carrier_latency_ms"), "{}", err(v.clone()));
    v = udp("active-backup", json!({}), 0.0, -5.0, 1);
    assert!(err(v.clone()).contains("links.0.failures.0.jitter_ms"));
    // A jittered failure may end up to jitter_ms after up_s: the next one must start after that.
    v = udp("active-backup", json!({}), 0.0, 0.0, 1);
    v["links"][0]["failures"] = json!([{"down_s": 0.1, "up_s": 0.2, "jitter_ms": 50.0}, {"down_s": 0.22}]);
    assert!(err(v.clone()).contains("links.0.failures.1.down_s"));
    v["links"][0]["failures"][1]["down_s"] = json!(0.25);
    assert!(Scenario::from_json(&v.to_string()).is_ok());
}

/// A silent port (carrier kept, every frame dropped) opens a failover window of kind
/// `silent`: miimon never gives a verdict, the ARP monitor does, and what the port swallowed
/// until then is counted as `lost_silent`.
#[test]
fn a_silent_port_is_measured_as_a_failure_only_the_arp_monitor_detects() {
    let silent = |bond: Value| {
        let mut v = udp("active-backup", bond, 0.0, 0.0, 1);
        v["links"][0]["failures"] = json!([{"down_s": 0.1, "up_s": 0.3, "kind": "silent"}]);
        run(&scenario(v)).unwrap()
    };
    let r = silent(json!({"miimon": 1.0}));
    let f = only_failure(&r);
    assert_eq!(f.kind, ["silent"]);
    assert_eq!(f.detection_ms[0], None, "miimon reads the carrier, which stayed");
    // Everything sent over link 0 in the 200 ms window is lost to the port.
    let expected = 200.0 / GAP_MS;
    assert!((f.lost_silent[0] as f64 - expected).abs() <= 2.0, "{} lost, {expected} sent", f.lost_silent[0]);
    assert_eq!(f.lost_silent[0], r.links.drops_silent[0]);

    let (interval, missed_max) = (10.0, 2.0);
    let r = silent(json!({"miimon": 0.0, "arp_interval": interval, "arp_ip_target": ["10.0.0.254"]}));
    let f = only_failure(&r);
    let d = f.detection_ms[0].expect("the ARP monitor notices the silent port");
    // The last reply came at most one interval before the failure; the link is failed at the
    // first check more than missed_max intervals after it (bond_ab_arp_inspect).
    assert!(d >= (missed_max - 1.0) * interval && d <= (missed_max + 1.0) * interval + 1.0, "detection {d} ms");
    let lost = f.lost_silent[0] as f64;
    assert!(lost > 0.0 && lost <= d / GAP_MS + 2.0, "{lost} lost in {d} ms at one per {GAP_MS} ms");
    assert!(f.switchover_ms[0].is_some(), "the stream moved to link 1");
}

/// active-backup receives on its active slave: once the ARP monitor has failed a silent port
/// over, the ACKs come back on the new active link too, and TCP resumes there long before the
/// port works again (with the ACKs still sent to the silent port, it never would).
#[test]
fn after_a_silent_port_fails_over_tcp_resumes_with_its_acks_on_the_new_active_link() {
    let (rate_mbps, rto_min_s): (f64, f64) = (100.0, 0.2);
    let (txqueuelen, mtu, overhead_bytes) = (1000u32, 1500u32, 38u32);
    let doc = json!({
        "seed": 1,
        "stop_s": 2.5,
        "workload": {"requests": 1, "clients": 1, "file_size": {"kind": "fixed", "bytes": 1_000_000_000u64}},
        "sender": {"kind": "tcp", "rto_min_ms": rto_min_s * 1e3},
        "bond": {"mode": "active-backup", "miimon": 0.0, "arp_interval": 100.0, "arp_ip_target": ["10.0.0.254"]},
        "links": [
            {"rate_mbps": rate_mbps, "txqueuelen": txqueuelen, "mtu": mtu, "overhead_bytes": overhead_bytes,
             "failures": [{"down_s": 1.0, "up_s": 3.0, "kind": "silent"}]},
            {"rate_mbps": rate_mbps, "txqueuelen": txqueuelen, "mtu": mtu, "overhead_bytes": overhead_bytes},
        ],
    });
    let r = run(&scenario(doc)).unwrap();
    let f = only_failure(&r);
    let down = f.down_at_s[0];
    let detected = f.detected_at_s[0].expect("the ARP monitor fails the silent port");
    // TCP resumes with the first retransmission the bond sends on link 1: the retransmission
    // timer's next expiry after the detection. Its expiries fall at t0 + (2^k − 1)·R from the
    // last send before the failure t0 ≤ down (`inet_csk_rto_backoff` doubles each interval),
    // so the interval pending at the detection is at most (detected − t0) + R long, and
    // R = srtt + rttvar (`tcp_set_rto`) with srtt at most the path's longest RTT, a full transmit
    // queue (no propagation delay here), and rttvar, the largest mean deviation of a round trip
    // (`tcp_rtt_estimator`: 2 RTT at the first sample, 3/4 of it + |error| after), at most
    // 4 times that RTT, or tcp_rto_min.
    let rtt_max = f64::from(txqueuelen * (mtu + overhead_bytes)) * 8.0 / (rate_mbps * 1e6);
    let rto_max = rtt_max + rto_min_s.max(4.0 * rtt_max);
    let stall = f.tcp_stall_ms[0].expect("a TCP run measures its stall") / 1e3;
    let resumed = down + stall;
    assert!(
        resumed >= detected && resumed <= detected + (detected - down) + rto_max + rtt_max,
        "resumed at {resumed} s (detected at {detected} s, RTO at most {rto_max} s)"
    );
    // From then on link 1 carries the transfer at a good share of its rate (slow start from
    // one segment reaches the path's BDP in a few milliseconds at this rate).
    let rate = f.throughput_bps[0] / 1e6;
    let resumed_share = (2.5 - resumed) / f.window_s[0];
    assert!(rate > 0.5 * rate_mbps * resumed_share, "{rate} Mbit/s during the failure (resumed at {resumed} s)");
    // ACKs (one per one or two segments) came back on link 1, beyond its ARP replies.
    assert!(r.links.reverse_packets_sent[1] > r.links.packets_sent[1] / 4, "{:?}", r.links.reverse_packets_sent);
}

/// The same failover under a closed loop (each client asks again the instant a request ends):
/// the requests in progress at the failure get their ACKs back on the new active slave, so
/// their clients go on, and the requests they ask for after it arrive on it too. Were the
/// receive link left on the silent port, the requests in progress would never end, and
/// neither would their clients' later ones.
#[test]
fn a_closed_loop_goes_on_across_a_silent_failover() {
    let (requests, clients) = (24u32, 3u32);
    let doc = json!({
        "seed": 3,
        "stop_s": 6.0,
        "workload": {"requests": requests, "clients": clients, "arrivals": {"kind": "closed", "active": 1},
                     "file_size": {"kind": "fixed", "bytes": 2_000_000u64}},
        "sender": {"kind": "tcp"},
        "bond": {"mode": "active-backup", "miimon": 0.0, "arp_interval": 100.0, "arp_ip_target": ["10.0.0.254"]},
        "links": [
            {"rate_mbps": 100.0, "failures": [{"down_s": 0.5, "up_s": 30.0, "kind": "silent"}]},
            {"rate_mbps": 100.0},
        ],
    });
    let r = run(&scenario(doc)).unwrap();
    only_failure(&r).detected_at_s[0].expect("the ARP monitor fails the silent port");
    // 24 transfers of 2 MB take 3.8 s at 100 Mbit/s, plus the failover: all end before 6 s.
    assert_eq!(r.summary.flows_complete, requests, "every request of every client ended");
    assert!(r.links.packets_sent[0] > 0 && r.links.packets_sent[1] > 0, "{:?}", r.links.packets_sent);
}

/// 802.3ad behind a switch that runs LACP (the default for the mode): once a silent port's
/// LACPDUs time out (fast rate: 3 s without one, sent every second) both ends take it out of
/// the aggregator, so the switch stops hashing the ACKs of some flows into it and every transfer
/// completes. A static LAG runs no LACP: no LACPDU is ever heard, so nothing notices the silent
/// port (miimon watches the carrier, which it keeps).
#[test]
fn an_lacp_switch_drops_a_silent_member_a_static_lag_keeps_it() {
    let run_with = |lag: Option<&str>| {
        let mut doc = json!({
            "seed": 1,
            "stop_s": 20.0,
            "workload": {"requests": 8, "clients": 8, "file_size": {"kind": "fixed", "bytes": 20_000_000}},
            "sender": {"kind": "tcp"},
            "bond": {"mode": "802.3ad", "lacp_rate": "fast"},
            "links": [
                {"rate_mbps": 100.0, "failures": [{"down_s": 0.5, "up_s": 30.0, "kind": "silent"}]},
                {"rate_mbps": 100.0},
            ],
        });
        if let Some(lag) = lag {
            doc["switch"] = json!({"lag": lag});
        }
        run(&scenario(doc)).unwrap()
    };
    let (default, lacp, fixed) = (run_with(None), run_with(Some("lacp")), run_with(Some("static")));
    assert_eq!(default.links.packets_sent, lacp.links.packets_sent, "802.3ad's switch runs LACP by default");
    let d = only_failure(&lacp).detection_ms[0].expect("the bond's LACP notices the silent port");
    assert!((1900.0..=3000.0).contains(&d), "detection {d} ms: 30 runs (100 ms) after the last LACPDU, 1 s apart");
    assert_eq!(lacp.summary.flows_complete, 8, "every transfer moved to link 1, ACKs too");
    assert_eq!(only_failure(&fixed).detection_ms[0], None, "no LACPDUs, no LACP timeout");
    assert!(fixed.summary.flows_complete < 8, "the silent port goes on carrying traffic");
}

/// 802.3ad without an LACP partner (a static LAG or an unaware switch): no port hears a LACPDU,
/// so each is an aggregator of its own (`ad_port_selection_logic` joins a port only to an
/// aggregator with a partner) and the bond sends and receives on the active one's port alone,
/// as Linux does when the switch is not set up for LACP. A carrier loss moves it to the other
/// port at the monitor's verdict, with no aggregate wait (`ad_agg_selection_logic` enables a
/// partnerless aggregator's port at once).
#[test]
fn without_an_lacp_partner_802_3ad_uses_one_port() {
    let run_with = |lag: &str, failure: bool| {
        let mut doc = json!({
            "seed": 1,
            "stop_s": 2.0,
            "workload": {"requests": 8, "clients": 8, "file_size": {"kind": "fixed", "bytes": 100_000_000}},
            "sender": {"kind": "tcp"},
            "bond": {"mode": "802.3ad", "xmit_hash_policy": "layer3+4"},
            "switch": {"lag": lag},
            "links": [{"rate_mbps": 100.0}, {"rate_mbps": 100.0}],
        });
        if failure {
            doc["links"][0]["failures"] = json!([{"down_s": 0.5, "up_s": 1.0}]);
        }
        run(&scenario(doc)).unwrap()
    };
    let lacp = run_with("lacp", false);
    assert!(lacp.links.packets_sent.iter().all(|&p| p > 1000), "{:?}", lacp.links.packets_sent);
    for lag in ["static", "none"] {
        let alone = run_with(lag, false);
        assert!(
            alone.links.packets_sent[0] > 1000 && alone.links.packets_sent[1] == 0,
            "{lag}: {:?}",
            alone.links.packets_sent
        );
        assert!(alone.summary.throughput_bps < 0.6 * lacp.summary.throughput_bps, "{lag}: one port's worth");
        let failed = run_with(lag, true);
        let f = only_failure(&failed);
        let (detect, switchover) = (f.detection_ms[0].expect("miimon sees the carrier"), f.switchover_ms[0]);
        assert!(failed.links.packets_sent[1] > 1000, "{lag}: link 1 took over: {:?}", failed.links.packets_sent);
        assert!(
            switchover.is_some_and(|s| s < detect + 50.0),
            "{lag}: no 2 s aggregate wait: {switchover:?} after {detect}"
        );
    }
}
