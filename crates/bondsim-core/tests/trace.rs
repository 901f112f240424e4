//! The `[trace]` time series: what they must agree with (the run's own counters, the scenario's
//! failure times, the monitor's timing), that they bound their memory, and that tracing changes
//! no figure of the run.

use bondsim_core::{run, Error, RunResult, Scenario};
use serde_json::{json, Value};

fn scenario(value: &Value) -> Scenario {
    Scenario::from_json(&value.to_string()).unwrap_or_else(|e| panic!("{e}: {value}"))
}

/// Two Gigabit links, one with a longer wire, 8 flows of 100 frames each sent by a window of 16:
/// the queues build and balance-rr reorders.
fn rate_bond(trace: Value) -> Value {
    json!({
        "seed": 3,
        "workload": {"requests": 8, "clients": 8, "file_size": {"kind": "fixed", "bytes": 144_800}},
        "sender": {"kind": "window", "window_pkts": 16, "chunk_bytes": 1448},
        "bond": {"mode": "balance-rr"},
        "links": [{"rate_mbps": 1000.0, "delay_us": 20.0}, {"rate_mbps": 1000.0, "delay_us": 90.0}],
        "trace": trace,
    })
}

/// The thesis's controlled experiment: 4 paced interfaces at 20 ms (interface 1 at 82 ms, slow),
/// balance-rr, `requests` files of `file_bytes`.
fn thesis_bond(requests: u32, file_bytes: u64, trace: Value) -> Value {
    json!({
        "workload": {"requests": requests, "file_size": {"kind": "fixed", "bytes": file_bytes}},
        "bond": {"mode": "rr"},
        "links": [{"period_ms": 20}, {"period_ms": 82}, {"period_ms": 20}, {"period_ms": 20}],
        "trace": trace,
    })
}

/// Every bucket's utilisation is a share of the bucket: within [0, 1] (to rounding).
fn assert_shares(t: &bondsim_core::trace::LinkTrace) {
    assert!(t.utilisation.iter().all(|&u| (-1e-9..=1.0 + 1e-9).contains(&u)), "{:?}", t.utilisation);
}

fn without_wall(mut r: RunResult) -> Value {
    r.summary.wall_s = 0.0;
    let mut v: Value = serde_json::from_str(&r.to_json()).unwrap();
    for table in ["link_trace", "link_events", "packet_trace"] {
        v.as_object_mut().unwrap().remove(table);
    }
    v["summary"].as_object_mut().unwrap().remove("trace_truncated");
    v
}

#[test]
fn tracing_changes_no_figure_of_the_run() {
    let traced = run(&scenario(&rate_bond(json!({"link_ms": 0.05, "packets": 500})))).unwrap();
    let plain = run(&scenario(&rate_bond(json!({})))).unwrap();
    assert!(traced.link_trace.is_some() && traced.packet_trace.is_some());
    assert!(plain.link_trace.is_none() && plain.packet_trace.is_none() && plain.link_events.is_none());
    assert_eq!(without_wall(traced), without_wall(plain), "same summary (events included) and tables");
}

#[test]
fn link_buckets_add_up_to_the_links_counters() {
    let r = run(&scenario(&rate_bond(json!({"link_ms": 0.05})))).unwrap();
    let t = r.link_trace.as_ref().unwrap();
    for link in 0..2u32 {
        let rows: Vec<usize> = (0..t.link.len()).filter(|&i| t.link[i] == link).collect();
        let bytes: u64 = rows.iter().map(|&i| t.wire_bytes[i]).sum();
        assert_eq!(bytes, r.links.wire_bytes[link as usize], "link {link}: every byte in exactly one bucket");
        // Without per-packet time or slowdowns a frame's wire time is its bits over the rate: the
        // buckets' utilisation times their width adds up to the link's busy time.
        let busy: f64 = rows.iter().map(|&i| t.utilisation[i] * t.width_s[i]).sum();
        assert!((busy - r.links.busy_s[link as usize]).abs() < 1e-9, "{busy} vs {}", r.links.busy_s[link as usize]);
        // Buckets follow each other without gap up to the run's end.
        let mut at = 0.0;
        for &i in &rows {
            assert!((t.t_s[i] - t.width_s[i] - at).abs() < 1e-12);
            at = t.t_s[i];
        }
        assert!((at - r.summary.duration_s).abs() < 1e-12, "the last bucket ends with the run");
        let longest = rows.iter().map(|&i| t.queue_max_pkts[i]).max().unwrap();
        assert_eq!(longest, r.links.max_queue_pkts[link as usize], "the longest queue is seen in some bucket");
        assert!(rows.iter().all(|&i| t.queue_pkts[i] <= t.queue_max_pkts[i]));
    }
    // No failure: no link event, every bucket up.
    assert!(r.link_events.as_ref().unwrap().t_s.is_empty());
    assert!(t.carrier.iter().chain(&t.up).all(|&b| b));
    assert_eq!(r.summary.trace_truncated, Some(false));
}

/// Rows of `link` in `t`.
fn rows_of(t: &bondsim_core::trace::LinkTrace, link: u32) -> Vec<usize> {
    (0..t.link.len()).filter(|&i| t.link[i] == link).collect()
}

#[test]
fn buckets_narrower_than_a_frame_read_the_share_of_it_the_link_was_sending() {
    // 1 µs buckets, 1518-byte frames of 12.3 µs: a frame spans a dozen buckets, each of which the
    // link spent wholly sending (had a bucket counted the frame it ended in, it would read 12).
    let r = run(&scenario(&rate_bond(json!({"link_ms": 0.001})))).unwrap();
    let t = r.link_trace.as_ref().unwrap();
    assert_shares(t);
    assert!(t.utilisation.iter().filter(|&&u| u > 1.0 - 1e-9).count() > 1000, "busy buckets read 1");
    assert!(t.utilisation.iter().any(|&u| u > 0.01 && u < 0.99), "a frame's start or end shares a bucket");
    for link in 0..2u32 {
        let rows = rows_of(t, link);
        let busy: f64 = rows.iter().map(|&i| t.utilisation[i] * t.width_s[i]).sum();
        assert!((busy - r.links.busy_s[link as usize]).abs() < 1e-9, "{busy} vs {}", r.links.busy_s[link as usize]);
    }
}

#[test]
fn a_paced_link_spreads_each_packet_over_the_period_it_used() {
    // The thesis's model: one send per 20 ms period (interface 1: 82 ms), traced in 5 ms buckets.
    // rr keeps every interface's queue filled, so each reads 1 while it sends, bucket by bucket,
    // not 4 in the bucket of a send and 0 in the three after it.
    let doc = thesis_bond(4, 102_400, json!({"link_ms": 5}));
    let r = run(&scenario(&doc)).unwrap();
    let t = r.link_trace.as_ref().unwrap();
    assert_shares(t);
    for link in 0..4u32 {
        let rows = rows_of(t, link);
        let capacity = r.links.capacity_bps[link as usize];
        let carried: f64 = rows.iter().map(|&i| t.utilisation[i] * t.width_s[i] * capacity / 8.0).sum();
        let sent = r.links.bytes_sent[link as usize] as f64;
        let packet = sent / r.links.packets_sent[link as usize] as f64;
        // Every byte sent is carried within the run but the share of the last period that
        // reaches past its end (at most one packet).
        assert!(carried <= sent + 1e-6 && sent - carried <= packet + 1e-6, "link {link}: {carried} of {sent}");
        // The first send is at the interface's wake-up one period in (the one at 0 s comes before
        // the sender's first tick and finds nothing queued); from then on it sends at every
        // wake-up (its queue holds more than the run's first periods). So the buckets before it
        // read 0, the one it starts in the share after it (82 ms: 3 of 5 ms), the next ones 1.
        let period = doc["links"][link as usize]["period_ms"].as_f64().unwrap();
        let u: Vec<f64> = rows.iter().map(|&i| t.utilisation[i]).collect();
        let first = (period / 5.0_f64).floor() as usize;
        let share = ((first + 1) as f64 * 5.0 - period) / 5.0;
        assert!(u[..first].iter().all(|&x| x == 0.0), "link {link}: {u:?}");
        let starts = if share < 1.0 { first + 1 } else { first };
        assert!(share == 1.0 || (u[first] - share).abs() < 1e-9, "link {link}: {u:?}");
        assert!(u[starts..starts + 8].iter().all(|&x| (x - 1.0).abs() < 1e-9), "link {link}: {u:?}");
    }
}

#[test]
fn buckets_merge_in_pairs_past_the_limit_and_still_cover_the_run() {
    let fine = run(&scenario(&rate_bond(json!({"link_ms": 0.001})))).unwrap();
    let coarse = run(&scenario(&rate_bond(json!({"link_ms": 0.001, "link_buckets": 8})))).unwrap();
    let (f, c) = (fine.link_trace.unwrap(), coarse.link_trace.unwrap());
    let per_link = |t: &bondsim_core::trace::LinkTrace| t.link.iter().filter(|&&l| l == 0).count();
    // The run lasts far more than 8 µs-buckets: the fine trace keeps thousands, the coarse one at most 8
    // full buckets and the one the run ended in.
    assert!(per_link(&f) > 100, "{}", per_link(&f));
    assert!(per_link(&c) <= 9, "{}", per_link(&c));
    // The full buckets are 1 µs doubled a whole number of times, just enough to hold the run.
    let width = c.width_s[0];
    let doublings = (width / 1e-6).log2();
    assert!((doublings - doublings.round()).abs() < 1e-9 && doublings >= 1.0, "width {width}");
    assert!(8.0 * width >= coarse.summary.duration_s && 4.0 * width < coarse.summary.duration_s);
    for link in 0..2 {
        let sum = |t: &bondsim_core::trace::LinkTrace| -> u64 {
            (0..t.link.len()).filter(|&i| t.link[i] == link).map(|i| t.wire_bytes[i]).sum()
        };
        assert_eq!(sum(&c), sum(&f), "merging keeps every byte");
        assert_eq!(sum(&c), coarse.links.wire_bytes[link as usize]);
    }
    let longest = |t: &bondsim_core::trace::LinkTrace| t.queue_max_pkts.iter().copied().max();
    assert_eq!(longest(&c), longest(&f), "merging keeps the longest queue");
}

#[test]
fn the_packet_schedule_agrees_with_the_runs_counters() {
    // The thesis's controlled experiment (paced links, interface 1 slow): balance-rr reorders.
    let doc = thesis_bond(6, 20_480, json!({"packets": 1000}));
    let r = run(&scenario(&doc)).unwrap();
    let p = r.packet_trace.as_ref().unwrap();
    let n = r.summary.packets as usize;
    assert!(n < 1000 && p.packet.len() == n, "every packet traced: {} of {n}", p.packet.len());
    assert_eq!(p.packet, (0..n as u64).collect::<Vec<_>>());
    let ooo = p.out_of_order.iter().filter(|&&o| o).count() as u64;
    assert_eq!(ooo, r.summary.wire_out_of_order);
    assert!(ooo > 0, "the slow interface reorders");
    for link in 0..4 {
        let on = p.link.iter().filter(|&&l| l == Some(link as u32)).count() as u64;
        assert_eq!(on, r.links.packets_sent[link]);
    }
    // Round-robin: packet k on link k mod 4 (one global counter, Linux's bond_rr_gen_slave_id).
    assert!(p.link.iter().enumerate().all(|(k, &l)| l == Some((k % 4) as u32)));
    for i in 0..n {
        let (sent, left, arrived) = (p.sent_s[i], p.left_s[i].unwrap(), p.arrived_s[i].unwrap());
        assert!(sent <= left && left <= arrived, "packet {i}: {sent} {left} {arrived}");
    }
    // Asking for fewer keeps the first ones only.
    let mut doc = doc;
    doc["trace"]["packets"] = json!(10);
    let few = run(&scenario(&doc)).unwrap().packet_trace.unwrap();
    assert_eq!(few.packet, (0..10).collect::<Vec<u64>>());
    assert_eq!(few.arrived_s, p.arrived_s[..10].to_vec());
}

#[test]
fn link_events_record_the_carrier_and_the_monitors_view() {
    // the shipped scenario failover_udp: eth0's carrier goes at 1 s and returns at 3 s; miimon 100 ms,
    // downdelay 200 ms, updelay 0 (bonding.rst: a failure is acted on downdelay after the
    // miimon check that sees it; a link that comes back is used at the next check).
    let doc = json!({
        "stop_s": 3.5,
        "workload": {"requests": 2, "clients": 2, "clients_in_turn": true,
                     "file_size": {"kind": "fixed", "bytes": 100_000_000}},
        "sender": {"kind": "cbr", "rate_mbps": 200, "chunk_bytes": 1448},
        "bond": {"mode": "active-backup", "miimon": 100, "downdelay": 200, "updelay": 0},
        "links": [{"name": "eth0", "rate_mbps": 1000, "failures": [{"down_s": 1.0, "up_s": 3.0}]},
                  {"name": "eth1", "rate_mbps": 1000}],
        "trace": {"link_ms": 10.0},
    });
    let r = run(&scenario(&doc)).unwrap();
    let e = r.link_events.as_ref().unwrap();
    let rows: Vec<(f64, u32, bool, bool)> =
        (0..e.t_s.len()).map(|i| (e.t_s[i], e.link[i], e.carrier[i], e.up[i])).collect();
    assert!(rows.iter().all(|r| r.1 == 0), "only eth0 changes: {rows:?}");
    // The carrier's changes (from up at the start); the rows between are the monitor's.
    let mut carrier = Vec::new();
    for &(t, _, c, _) in &rows {
        if c != carrier.last().is_none_or(|&(_, last)| last) {
            carrier.push((t, c));
        }
    }
    assert_eq!(carrier, [(1.0, false), (3.0, true)], "the carrier changes when the scenario says");
    let down = rows.iter().find(|r| !r.3).expect("the monitor sees it go").0;
    let up = rows.iter().find(|r| r.0 > down && r.3).expect("and come back").0;
    assert!((1.2..=1.3).contains(&down), "down after a check and downdelay: {down}");
    assert!((3.0..=3.1).contains(&up), "up at the next check: {up}");
    // The buckets agree: eth0 carries nothing while its carrier is gone, eth1 carries the traffic
    // from the monitor's verdict on (active-backup fails over).
    let t = r.link_trace.as_ref().unwrap();
    // A frame cut off by the carrier's loss counts for the time it had the wire: no bucket reads
    // below 0 or above 1.
    assert_shares(t);
    for i in 0..t.t_s.len() {
        let start = t.t_s[i] - t.width_s[i];
        // Buckets are (start, end]: the one ending at 3 s already holds the carrier's return.
        if t.link[i] == 0 && start >= 1.0 && t.t_s[i] < 3.0 {
            assert!(!t.carrier[i] && t.wire_bytes[i] == 0 && t.utilisation[i] == 0.0, "bucket ending {}", t.t_s[i]);
        }
        if t.link[i] == 1 && start >= 1.3 && t.t_s[i] <= 3.0 {
            assert!(t.wire_bytes[i] > 0, "eth1 carries the traffic, bucket ending {}", t.t_s[i]);
        }
    }
}

#[test]
fn bad_trace_fields_are_errors_naming_them() {
    for (trace, field) in [
        (json!({"link_ms": 0.0}), "trace.link_ms"),
        (json!({"link_ms": 1e-4}), "trace.link_ms"),
        (json!({"link_ms": 1.0, "link_buckets": 7}), "trace.link_buckets"),
        (json!({"link_buckets": 0}), "trace.link_buckets"),
        (json!({"packets": 2_000_000}), "trace.packets"),
        (json!({"pakets": 2}), "trace"),
    ] {
        match Scenario::from_json(&rate_bond(trace.clone()).to_string()) {
            Err(Error::Scenario { path, message }) => {
                assert!(path.starts_with(field), "{trace}: {path}: {message}")
            }
            other => panic!("{trace}: expected an error naming {field}, got {other:?}"),
        }
    }
    // Off by default, and a scenario that asks for nothing is written without it.
    let s = scenario(&rate_bond(json!({})));
    assert!(!serde_json::to_string(&s).unwrap().contains("\"trace\""));
}
