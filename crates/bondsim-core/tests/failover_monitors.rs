//! Failure kinds and the bond's monitors, end to end: silent ports, the ARP monitor, 802.3ad
//! LACPDU timeouts, flapping, and the scenario checks that refuse what Linux refuses.

use bondsim_core::{run, RunResult, Scenario};
use serde_json::{json, Value};

/// Two 1 Gbit/s links under a UDP stream of `mbps` for `stop_s`; `bond` and the links' extra
/// fields (`link0`, `link1`) on top.
fn udp(bond: Value, link0: Value, link1: Value, mbps: f64, stop_s: f64) -> Value {
    let mut links = [json!({"rate_mbps": 1000.0, "delay_us": 20.0}), json!({"rate_mbps": 1000.0, "delay_us": 20.0})];
    for (link, extra) in links.iter_mut().zip([link0, link1]) {
        for (k, v) in extra.as_object().unwrap() {
            link[k] = v.clone();
        }
    }
    json!({
        "stop_s": stop_s,
        "network": {"protocol": "udp"},
        "workload": {"requests": 4, "clients": 4, "file_size": {"kind": "fixed", "bytes": 10_000_000_000u64}},
        "sender": {"kind": "cbr", "rate_mbps": mbps, "chunk_bytes": 1448},
        "bond": bond,
        "links": links,
        "trace": {"link_ms": 1000.0},
    })
}

fn go(v: &Value) -> RunResult {
    run(&Scenario::from_json(&v.to_string()).unwrap()).unwrap()
}

fn refused(v: &Value) -> String {
    match Scenario::from_json(&v.to_string()) {
        Err(e) => e.to_string(),
        Ok(s) => bondsim_core::check(&s).unwrap_err().to_string(),
    }
}

/// When the bond's view of `link` first went down, seconds.
fn went_down(r: &RunResult, link: u32) -> Option<f64> {
    let e = r.link_events.as_ref().unwrap();
    (0..e.t_s.len()).find(|&i| e.link[i] == link && !e.up[i]).map(|i| e.t_s[i])
}

fn silent(down_s: f64, extra: Value) -> Value {
    let mut f = json!({"down_s": down_s, "kind": "silent"});
    for (k, v) in extra.as_object().unwrap() {
        f[k] = v.clone();
    }
    json!({"failures": [f]})
}

#[test]
fn the_arp_monitor_catches_the_silent_port_that_miimon_misses() {
    let fail = 1.0;
    let stop = 2.0;
    // miimon alone: the carrier stays, the bond never notices, everything after the failure is dropped.
    let mii =
        go(&udp(json!({"mode": "active-backup", "miimon": 100}), silent(fail, json!({})), json!({}), 100.0, stop));
    let s = &mii.summary;
    assert_eq!(went_down(&mii, 0), None);
    assert_eq!(mii.links.packets_sent[1], 0, "the backup is never used");
    let pps = s.packets as f64 / stop;
    let after = pps * (stop - fail);
    // Give or take the few frames on the wire at the failure or still queued at the stop.
    let tolerance = pps * 1e-3;
    assert!(
        (s.drops_silent.unwrap() as f64 - after).abs() <= tolerance,
        "{} dropped silently, {after} sent after the failure",
        s.drops_silent.unwrap()
    );
    assert_eq!(s.dropped.unwrap(), s.drops_silent.unwrap(), "every loss is the silent port's");
    assert_eq!((s.arp_probes_sent.unwrap(), s.arp_replies.unwrap()), (0, 0));

    // The ARP monitor, every 100 ms: the last probe answered is the one of 0.9 s; the active
    // slave is down at the first check more than missed_max·δ + δ/2 later (1.2 s), within
    // (missed_max + 1)·δ of the failure, and traffic moves to the backup.
    let arp = json!({"mode": "active-backup", "miimon": 0, "arp_interval": 100, "arp_ip_target": ["10.0.0.254"]});
    let r = go(&udp(arp, silent(fail, json!({})), json!({}), 100.0, stop));
    let down = went_down(&r, 0).expect("the ARP monitor fails the silent port");
    assert!(down > fail + 0.2 - 1e-9 && down <= fail + 0.3 + 1e-9, "failed at {down}");
    assert_eq!(went_down(&r, 1), None, "the backup hears the flooded probes: it stays up");
    let s = &r.summary;
    assert_eq!(s.dropped.unwrap(), s.drops_silent.unwrap(), "the lost probes are no drops of the workload's");
    let lost = s.drops_silent.unwrap() as f64;
    assert!((lost - pps * (down - fail)).abs() <= tolerance, "{lost} lost, {pps} pkt/s");
    assert!(r.links.packets_sent[1] as f64 > pps * (stop - down) * 0.99, "the backup carries the rest");
    // Probes: one per 100 ms tick from 0 to 1.9 s (the stop at 2 s comes before that tick's
    // run), 20; all answered but those of 1.0 and 1.1 s on the silent port: at 1.2 s the
    // commit comes first and the probe leaves on the new active slave.
    assert_eq!(s.arp_probes_sent.unwrap(), 20);
    assert_eq!(s.arp_replies.unwrap(), 18);
    // They are no part of the application's figures.
    assert_eq!(s.delivered + s.dropped.unwrap() + s.undelivered.unwrap(), s.packets);
}

#[test]
fn miimon_zero_without_an_arp_monitor_never_fails_over() {
    let r = go(&udp(
        json!({"mode": "active-backup", "miimon": 0}),
        json!({"failures": [{"down_s": 0.5}]}),
        json!({}),
        50.0,
        1.0,
    ));
    assert_eq!(r.summary.miimon_ms.unwrap(), 0.0);
    assert_eq!(went_down(&r, 0), None);
    assert_eq!(r.links.packets_sent[1], 0);
    assert!(r.summary.drops_link_down > 0 && r.summary.delivered < r.summary.packets / 2 + 10);
    // In 802.3ad Linux forces miimon to 100 ms: the same failure is noticed at the next check.
    let r = go(&udp(
        json!({"mode": "802.3ad", "miimon": 0}),
        json!({"failures": [{"down_s": 0.55}]}),
        json!({}),
        50.0,
        1.0,
    ));
    assert_eq!(r.summary.miimon_ms.unwrap(), 100.0);
    assert_eq!(went_down(&r, 0), Some(0.6));
}

#[test]
fn lacp_rate_fast_notices_a_dead_partner_thirty_times_sooner_than_slow() {
    // The partner's LACPDUs stop at 200 s (the port keeps its carrier). The last one came at
    // most one period P before; current_while (3P) then runs out: 2P to 3P after the failure,
    // plus at most one 100 ms state-machine tick. fast: P = 1 s → [2, 3.1] s; slow: P = 30 s →
    // [60, 90.1] s. Over seeds (each with its own LACPDU phase) the ratio of the means is 30.
    let fail = 200.0;
    let mut sums = [0.0, 0.0];
    for seed in 1..=8 {
        for (k, rate) in ["fast", "slow"].into_iter().enumerate() {
            let mut v = udp(
                json!({"mode": "802.3ad", "lacp_rate": rate}),
                json!({}),
                silent(fail, json!({"direction": "in"})),
                0.2,
                fail + 100.0,
            );
            v["seed"] = json!(seed);
            let r = go(&v);
            let detect = went_down(&r, 1).expect("the port leaves the aggregator") - fail;
            let p = if rate == "fast" { 1.0 } else { 30.0 };
            assert!(detect >= 2.0 * p - 1e-9 && detect <= 3.0 * p + 0.1 + 1e-9, "{rate}, seed {seed}: {detect} s");
            assert_eq!(went_down(&r, 0), None);
            sums[k] += detect;
        }
    }
    let ratio = sums[1] / sums[0];
    // Each mean lies in [2P, 3P + 0.1]: the ratio in [60/3.1, 90/2] whatever the phases.
    assert!((60.0 / 3.1..=45.0).contains(&ratio), "slow/fast = {ratio}");
}

#[test]
fn a_fractional_drop_drops_that_fraction() {
    let p = 0.3;
    let r = go(&udp(
        json!({"mode": "balance-rr"}),
        silent(0.0, json!({"drop": p, "direction": "out"})),
        json!({}),
        100.0,
        1.0,
    ));
    let n = r.links.packets_sent[0] as f64;
    let x = r.links.drops_silent[0] as f64;
    // Binomial(n, p): within 5 standard deviations of n·p.
    let sd = (n * p * (1.0 - p)).sqrt();
    assert!(n > 1000.0 && (x - n * p).abs() < 5.0 * sd, "{x} of {n} dropped (expected {})", n * p);
    assert_eq!(r.links.drops_silent[1], 0);
}

/// balance-rr over two links, TCP, the second link silent in one `direction` from 5 ms.
fn tcp_one_way(direction: &str) -> RunResult {
    go(&json!({
        "stop_s": 0.5,
        "workload": {"requests": 8, "clients": 8, "file_size": {"kind": "fixed", "bytes": 2_000_000}},
        "sender": {"kind": "tcp"},
        "bond": {"mode": "balance-rr"},
        "links": [{"rate_mbps": 1000.0, "delay_us": 20.0},
                  {"rate_mbps": 1000.0, "delay_us": 20.0, "failures": [{"down_s": 0.005, "kind": "silent", "direction": direction}]}],
    }))
}

#[test]
fn a_one_way_failure_leaves_the_other_direction_working() {
    let out = tcp_one_way("out");
    assert!(out.links.drops_silent[1] > 0, "data sent on link 1 is dropped");
    assert!(out.links.reverse_packets_sent[1] > 0, "the switch still sends ACKs on link 1");
    assert_eq!(out.links.reverse_drops[1], 0, "and they arrive");
    let inward = tcp_one_way("in");
    assert_eq!(inward.links.drops_silent[1], 0, "data on link 1 arrives");
    assert!(inward.links.reverse_drops[1] > 0, "ACKs the switch sends on link 1 are lost");
    assert_eq!(inward.links.drops_silent[0] + inward.links.reverse_drops[0], 0);
}

#[test]
fn flapping_loses_the_carrier_count_times() {
    let r = go(&udp(
        json!({"mode": "active-backup", "miimon": 10}),
        json!({"flapping": {"start_s": 0.2, "down_ms": 30, "up_ms": 70, "count": 5}}),
        json!({}),
        50.0,
        1.0,
    ));
    assert_eq!(r.links.failures[0], 5);
    let e = r.link_events.as_ref().unwrap();
    // A row per change of carrier or verdict: the carrier's losses are the rows where it went.
    let downs: Vec<f64> = (0..e.t_s.len())
        .filter(|&i| e.link[i] == 0 && !e.carrier[i] && (i == 0 || e.carrier[i - 1]))
        .map(|i| e.t_s[i])
        .collect();
    let expected: Vec<f64> = (0..5).map(|k| 0.2 + 0.1 * f64::from(k)).collect();
    assert_eq!(downs.len(), 5);
    assert!(downs.iter().zip(&expected).all(|(a, b)| (a - b).abs() < 1e-9), "{downs:?}");
}

#[test]
fn the_scenario_check_refuses_what_linux_refuses() {
    let base = |bond: Value| udp(bond, json!({}), json!({}), 10.0, 0.1);
    let e = refused(&base(json!({"mode": "active-backup", "arp_interval": 100, "arp_ip_target": ["10.0.0.9"]})));
    assert!(e.starts_with("bond.arp_interval:") && e.contains("set bond.miimon = 0"), "{e}");
    let e = refused(&base(json!({"mode": "active-backup", "miimon": 0, "arp_interval": 100})));
    assert!(e.starts_with("bond.arp_ip_target:") && e.contains("bond_check_params"), "{e}");
    for mode in ["802.3ad", "balance-tlb", "balance-alb"] {
        let e = refused(&base(json!({"mode": mode, "miimon": 0, "arp_interval": 100, "arp_ip_target": ["10.0.0.9"]})));
        assert!(e.starts_with("bond.arp_interval:") && e.contains(mode) && e.contains("bond_mode_uses_arp"), "{e}");
    }
    let e = refused(&base(
        json!({"mode": "active-backup", "miimon": 0, "arp_interval": 100, "arp_ip_target": ["255.255.255.255"]}),
    ));
    assert!(e.starts_with("bond.arp_ip_target.0:"), "{e}");
    let e = refused(&base(json!({"mode": "active-backup", "arp_missed_max": 0})));
    assert!(e.starts_with("bond.arp_missed_max:"), "{e}");
    let e = refused(&base(json!({"mode": "active-backup", "arp_validate": "sometimes"})));
    assert!(e.contains("bond.arp_validate") && e.contains("filter_active"), "{e}");
    let e = refused(&udp(json!({"mode": "rr"}), silent(0.1, json!({"drop": 1.5})), json!({}), 10.0, 0.2));
    assert!(e.starts_with("links.0.failures.0.drop:"), "{e}");
    let e = refused(&udp(
        json!({"mode": "rr"}),
        json!({"failures": [{"down_s": 0.1, "direction": "in"}]}),
        json!({}),
        10.0,
        0.2,
    ));
    assert!(e.starts_with("links.0.failures.0.direction:") && e.contains("silent"), "{e}");
    let e = refused(&udp(
        json!({"mode": "rr"}),
        json!({"failures": [{"down_s": 0.1, "kind": "cable"}]}),
        json!({}),
        10.0,
        0.2,
    ));
    assert!(e.contains("links.0.failures.0.kind") && e.contains("silent"), "{e}");
    let both =
        json!({"failures": [{"down_s": 0.1}], "flapping": {"start_s": 0.0, "down_ms": 1, "up_ms": 1, "count": 2}});
    let e = refused(&udp(json!({"mode": "rr"}), both, json!({}), 10.0, 0.2));
    assert!(e.starts_with("links.0.flapping:"), "{e}");
}

/// When the bond's view of `link` first came up after being down, seconds.
fn came_up(r: &RunResult, link: u32) -> Option<f64> {
    let e = r.link_events.as_ref().unwrap();
    (0..e.t_s.len()).find(|&i| e.link[i] == link && e.up[i] && i > 0).map(|i| e.t_s[i])
}

#[test]
fn teamds_ethtool_watch_acts_on_the_carrier_at_once_plus_its_delay() {
    let fail = json!({"failures": [{"down_s": 0.5123}]});
    let watch = json!({"mode": "teamd:roundrobin", "link_watch": {"name": "ethtool", "delay_down": 30}});
    let r = go(&udp(watch, fail.clone(), json!({}), 20.0, 1.0));
    let down = went_down(&r, 0).unwrap();
    assert!((down - 0.5423).abs() < 1e-9, "carrier at 0.5123 s + delay_down 30 ms, got {down}");
    assert_eq!(r.summary.miimon_ms.unwrap(), 0.0, "teamd has no miimon");
    // The bonding driver's miimon (100 ms) sees it at its next check instead.
    let mii = go(&udp(json!({"mode": "teamd:roundrobin"}), fail, json!({}), 20.0, 1.0));
    assert_eq!(went_down(&mii, 0), Some(0.6));
}

#[test]
fn teamds_arp_ping_fails_a_silent_port_after_more_than_missed_max_intervals() {
    let watch = json!({"mode": "teamd:roundrobin",
                       "link_watch": {"name": "arp_ping", "interval": 100, "target_host": "10.0.0.254"}});
    let healthy = go(&udp(watch.clone(), json!({}), json!({}), 20.0, 2.0));
    // The switch (a LAG) returns every reply on one link, the one its hash picks for the target;
    // only that port ever comes up (ports start down, up at the first check after a reply).
    let replied: Vec<usize> = (0..2).filter(|&l| healthy.links.reverse_packets_sent[l] > 0).collect();
    assert_eq!(replied.len(), 1);
    let (l, other) = (replied[0], 1 - replied[0]);
    assert_eq!(came_up(&healthy, l as u32), Some(0.1));
    assert_eq!(came_up(&healthy, other as u32), None);
    // That port's replies stop at 1 s: the checks of 1.1 .. 1.3 s miss (≤ missed_max = 3), 1.4 s fails it.
    let mut links = [json!({}), json!({})];
    links[l] = silent(1.0, json!({"direction": "in"}));
    let [a, b] = links;
    let r = go(&udp(watch, a, b, 20.0, 2.0));
    let e = r.link_events.as_ref().unwrap();
    let downs: Vec<f64> = (0..e.t_s.len()).filter(|&i| e.link[i] == l as u32 && !e.up[i]).map(|i| e.t_s[i]).collect();
    assert_eq!(downs, [0.0, 1.4], "down from the start until the first reply, then failed at 1.4 s");
    assert!(r.summary.drops_no_link > 0, "no port left up: the team drops what it is handed");
}

#[test]
fn under_teamds_arp_ping_the_team_sends_on_a_port_without_carrier_until_the_watch_fails_it() {
    // arp_ping enables the port's user linkup (`team_set_port_user_linkup_enabled`): the team
    // driver's `team_port_txable` reads teamd's verdict, not the carrier, so the port keeps
    // being handed frames until arp_ping fails it.
    let watch = json!({"mode": "teamd:roundrobin",
                       "link_watch": {"name": "arp_ping", "interval": 100, "target_host": "10.0.0.254"}});
    let healthy = go(&udp(watch.clone(), json!({}), json!({}), 20.0, 2.0));
    let l = (0..2).find(|&l| healthy.links.reverse_packets_sent[l] > 0).expect("the port with replies");
    let mut links = [json!({}), json!({})];
    links[l] = json!({"failures": [{"down_s": 1.0}]});
    let [a, b] = links;
    let r = go(&udp(watch, a, b, 20.0, 2.0));
    let e = r.link_events.as_ref().unwrap();
    let down = (0..e.t_s.len())
        .find(|&i| e.link[i] == l as u32 && !e.up[i] && e.t_s[i] > 1.0)
        .map(|i| e.t_s[i])
        .expect("arp_ping fails the port");
    assert!(down > 1.1, "the watch needs more than one interval: {down}");
    // The switch now returns the replies on the other port, which comes up at its next check.
    let other_up = (0..e.t_s.len())
        .find(|&i| e.link[i] == 1 - l as u32 && e.up[i] && e.t_s[i] > 1.0)
        .map(|i| e.t_s[i])
        .expect("the other port comes up");
    // Four streams of 20 Mbit/s: all of it into the dead port until the other one came up,
    // then every second packet (round-robin over the two ports up) until the verdict.
    let pps = 4.0 * 20e6 / (1448.0 * 8.0);
    let sent_meanwhile = (other_up - 1.0) * pps + (down - other_up) * pps / 2.0;
    let lost = r.summary.drops_link_down as f64;
    assert!(
        (lost - sent_meanwhile).abs() < 0.02 * sent_meanwhile + 2.0,
        "{lost} into the dead port, {sent_meanwhile} expected"
    );
}

#[test]
fn a_teamd_link_watch_is_refused_where_teamd_does_not_run() {
    let base = |bond: Value| udp(bond, json!({}), json!({}), 10.0, 0.1);
    let e = refused(&base(json!({"mode": "active-backup", "link_watch": {"name": "ethtool"}})));
    assert!(e.starts_with("bond.link_watch:") && e.contains("teamd mode"), "{e}");
    let e = refused(&base(json!({"mode": "teamd:random", "downdelay": 10, "link_watch": {"name": "ethtool"}})));
    assert!(e.starts_with("bond.downdelay:") && e.contains("delay_down"), "{e}");
    let e = refused(&base(json!({"mode": "teamd:random", "link_watch": {"name": "arp_ping", "interval": 100}})));
    assert!(e.contains("target_host"), "{e}");
}
