//! Invariants every registered scheduler must keep, run end to end:
//! nothing lost or invented, determinism, failover that loses only what the
//! failed link held.

use bondsim_core::bond::registry::ALL;
use bondsim_core::{run, RunResult, Scenario};

fn scenario(mode: &str, extra_link: serde_json::Value) -> Scenario {
    scenario_with(mode, &extra_link, &[1])
}

/// Three links (two fast, one slow), `extra` set on those of `on`.
fn scenario_with(mode: &str, extra: &serde_json::Value, on: &[usize]) -> Scenario {
    let mut links = vec![
        serde_json::json!({"rate_mbps": 1000.0, "delay_us": 20.0}),
        serde_json::json!({"rate_mbps": 1000.0, "delay_us": 20.0}),
        serde_json::json!({"rate_mbps": 100.0, "delay_us": 20.0}),
    ];
    for &link in on {
        for (key, value) in extra.as_object().unwrap() {
            links[link][key] = value.clone();
        }
    }
    Scenario::from_json(
        &serde_json::json!({
            "seed": 3,
            "workload": {"requests": 24, "clients": 8, "file_size": {"kind": "fixed", "bytes": 300_000},
                         "arrivals": {"kind": "poisson", "rate_per_s": 200.0}},
            "sender": {"kind": "window", "window_pkts": 16, "chunk_bytes": 1448},
            "bond": {"mode": mode, "miimon": 10.0},
            "links": links,
        })
        .to_string(),
    )
    .unwrap_or_else(|e| panic!("{mode}: {e}"))
}

fn strip_wall(mut r: RunResult) -> String {
    r.summary.wall_s = 0.0;
    r.to_json()
}

#[test]
fn every_scheduler_delivers_everything_once_without_faults() {
    for info in ALL {
        let r = run(&scenario(info.name, serde_json::json!({}))).unwrap();
        let s = &r.summary;
        assert_eq!(s.packets, 24 * 208, "{}", info.name);
        // Conservation from independent counts: what the sender handed to the bond, what the
        // cutter planned per flow, what each flow's receiver saw, and what the links carried.
        let planned: u64 = r.requests.packets.iter().map(|&p| u64::from(p)).sum();
        let received: u64 = r.requests.received.iter().map(|&p| u64::from(p)).sum();
        assert_eq!(planned, s.packets, "{}: the sender sent every planned packet", info.name);
        assert_eq!(received, s.packets, "{}: every packet reached its flow once", info.name);
        assert_eq!(s.dropped.unwrap(), 0, "{}: no faults, big queues, nothing dropped", info.name);
        assert_eq!(s.flows_complete, 24, "{}", info.name);
        let sent: u64 = r.links.packets_sent.iter().sum();
        let copies = if info.name == "broadcast" { 3 } else { 1 };
        // Every copy was sent or dropped by a full queue (broadcast overflows the slow link).
        assert_eq!(sent + s.drops_queue_full, s.packets * copies, "{}: every copy accounted for", info.name);
        assert_eq!(s.duplicates.unwrap(), sent - s.delivered, "{}", info.name);
        if copies == 1 {
            assert_eq!(s.drops_queue_full, 0, "{}", info.name);
        }
        assert!(s.goodput_bps > 0.0 && s.utilisation <= 1.0 + 1e-9, "{}", info.name);
    }
}

#[test]
fn every_scheduler_is_deterministic() {
    for info in ALL {
        let sc = scenario(info.name, serde_json::json!({"jitter": {"kind": "exponential", "mean_us": 30.0}}));
        assert_eq!(strip_wall(run(&sc).unwrap()), strip_wall(run(&sc).unwrap()), "{}", info.name);
    }
}

#[test]
fn every_scheduler_survives_a_link_failure() {
    for info in ALL {
        let sc = scenario(info.name, serde_json::json!({"failures": [{"down_s": 0.01, "up_s": 0.05}]}));
        let r = run(&sc).unwrap();
        let s = &r.summary;
        // Per flow, from the receiver's own tables: every planned packet arrived or was lost.
        for (flow, ((&planned, &got), &lost)) in
            r.requests.packets.iter().zip(&r.requests.received).zip(&r.requests.lost).enumerate()
        {
            assert_eq!(got + lost, planned, "{}: flow {flow}", info.name);
        }
        // What the links lost, plus what had no link, is what the flows lost (copies aside).
        let link_losses: u64 = r.links.drops_link_down.iter().chain(&r.links.drops_queue_full).sum();
        let flow_losses: u64 = r.requests.lost.iter().map(|&l| u64::from(l)).sum();
        if info.name != "broadcast" {
            assert_eq!(link_losses + s.drops_no_link, flow_losses, "{}", info.name);
        }
        assert_eq!(
            s.flows_complete + s.flows_with_loss.unwrap(),
            24,
            "{}: every flow ends (delivered or lost)",
            info.name
        );
        let with_loss = r.requests.lost.iter().filter(|&&l| l > 0).count() as u32;
        assert_eq!(s.flows_with_loss.unwrap(), with_loss, "{}: a flow that lost packets is not complete", info.name);
        // Only packets sent on the failed link (or with no usable link) can be lost.
        let lost_elsewhere: u64 =
            r.links.drops_link_down.iter().enumerate().filter(|(l, _)| *l != 1).map(|(_, d)| d).sum();
        assert_eq!(lost_elsewhere, 0, "{}", info.name);
        assert!(r.links.failures[1] == 1, "{}", info.name);
    }
}

#[test]
fn every_scheduler_conserves_packets_on_lossy_links() {
    for (loss, label) in [
        (serde_json::json!({"loss": 0.02}), "bernoulli"),
        (serde_json::json!({"loss_model": {"kind": "gilbert_elliott", "p": 0.005, "r": 0.2}}), "gilbert-elliott"),
    ] {
        for info in ALL {
            let name = format!("{} ({label})", info.name);
            // Every link lossy (active-backup and friends use one link only), so are their reverse directions.
            let sc = scenario_with(info.name, &loss, &[0, 1, 2]);
            let r = run(&sc).unwrap();
            let s = &r.summary;
            // Conservation from independent counts: the cutter's plan, each flow's receiver
            // (arrived or lost), and the sender's count; nothing is left on the way.
            let planned: u64 = r.requests.packets.iter().map(|&p| u64::from(p)).sum();
            let received: u64 = r.requests.received.iter().map(|&p| u64::from(p)).sum();
            let flow_losses: u64 = r.requests.lost.iter().map(|&l| u64::from(l)).sum();
            assert_eq!(planned, s.packets, "{name}");
            assert_eq!(received + flow_losses, s.packets, "{name}: every packet arrived or was lost");
            assert_eq!((s.delivered, s.dropped.unwrap(), s.undelivered.unwrap()), (received, flow_losses, 0), "{name}");
            assert_eq!(s.flows_complete + s.flows_with_loss.unwrap(), 24, "{name}: every flow ends");
            assert!(s.flows_with_loss.unwrap() > 0, "{name}: flows lost packets, and are not complete");
            // Frames were lost; the summary totals the per-link column.
            assert!(s.drops_random > 0, "{name}");
            assert_eq!(s.drops_random, r.links.drops_random.iter().sum::<u64>(), "{name}");
            // Every copy was put on the wire or dropped by a full queue; of those on the wire, the
            // lost ones never arrived, the rest arrived once each (first copies and duplicates).
            let sent: u64 = r.links.packets_sent.iter().sum();
            let copies = if info.name == "broadcast" { 3 } else { 1 };
            assert_eq!(sent + s.drops_queue_full, s.packets * copies, "{name}");
            assert_eq!(s.delivered + s.duplicates.unwrap() + s.drops_random, sent, "{name}");
            if copies == 1 {
                // What the links lost is what the flows lost.
                let link_losses = s.drops_random + s.drops_queue_full + s.drops_link_down + s.drops_no_link;
                assert_eq!(link_losses, flow_losses, "{name}");
            } else {
                assert!(flow_losses <= s.drops_random, "{name}: a packet is lost only if every copy is");
            }
            // Deterministic.
            assert_eq!(strip_wall(r), strip_wall(run(&sc).unwrap()), "{name}");
        }
    }
}

#[test]
fn broadcast_over_unequal_links_never_uses_more_than_the_capacity() {
    // The slow link's copies leave after the fast link delivered everything: rates are over the
    // whole run, so the bond is never more than fully used (it was 1.8 when taken over the makespan).
    let sc = Scenario::from_json(
        &serde_json::json!({
            "workload": {"requests": 1, "clients": 1, "file_size": {"kind": "fixed", "bytes": 1_448_000}},
            "sender": {"kind": "window", "window_pkts": 32, "chunk_bytes": 1448},
            "bond": {"mode": "broadcast"},
            "links": [{"rate_mbps": 1000.0, "delay_us": 10.0}, {"rate_mbps": 100.0, "delay_us": 10.0}]
        })
        .to_string(),
    )
    .unwrap();
    let r = run(&sc).unwrap();
    let s = &r.summary;
    assert!(s.utilisation <= 1.0 + 1e-9, "utilisation {}", s.utilisation);
    assert!(s.duration_s > 5.0 * s.makespan_s, "the slow link's copies outlast the deliveries");
    // The slow link carried a copy of every packet and was busy for the whole run.
    assert_eq!(r.links.packets_sent[1], s.packets);
    assert!((r.links.busy_s[1] / s.duration_s - 1.0).abs() < 0.01, "{} of {}", r.links.busy_s[1], s.duration_s);
}
