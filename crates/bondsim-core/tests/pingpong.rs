//! The ping-pong workload end to end: tokens bounce between each pair's two TCP
//! ends, data flows both ways, ACKs ride on the answers. Every expected figure is
//! derived here from the scenario (token size, MSS, link rate and delay).

use bondsim_core::bond::registry::ALL;
use bondsim_core::{run, RunResult, Scenario};
use serde_json::{json, Value};

const MSS: u64 = 1448;

fn pingpong(pairs: u32, token_bytes: u64, rounds: u32, sender: Value, links: Value) -> Value {
    let mut s = json!({"kind": "tcp"});
    for (k, v) in sender.as_object().unwrap() {
        s[k] = v.clone();
    }
    json!({
        "seed": 3,
        "workload": {"kind": "pingpong", "pairs": pairs, "token_bytes": token_bytes, "rounds": rounds},
        "sender": s,
        "bond": {"mode": "balance-rr"},
        "links": links,
    })
}

fn run_json(value: Value) -> RunResult {
    let scenario = Scenario::from_json(&value.to_string()).unwrap_or_else(|e| panic!("{e}: {value}"));
    run(&scenario).unwrap()
}

fn one_link() -> Value {
    json!([{"rate_mbps": 100.0, "delay_us": 50.0}])
}

/// Segments one token of `bytes` is cut into.
fn segments(bytes: u64) -> u64 {
    bytes.div_ceil(MSS)
}

#[test]
fn every_token_is_delivered_whole_and_in_order_both_ways() {
    // Partial last segments (2000, 8192), a one-byte token, with reordering (two links,
    // every scheduler) and random loss on both directions: TCP repairs what is lost.
    for mode in ALL.iter().map(|s| s.name) {
        for (token, loss) in [(1u64, 0.0), (2000, 0.0), (8192, 0.02)] {
            let (pairs, rounds) = (3u32, 30u32);
            let mut v = pingpong(
                pairs,
                token,
                rounds,
                json!({}),
                json!([{"count": 2, "rate_mbps": 100.0, "delay_us": 50.0, "loss": loss}]),
            );
            v["bond"]["mode"] = json!(mode);
            let r = run_json(v);
            let s = &r.summary;
            let what = format!("{mode}, token {token}, loss {loss}");
            // Each pair: `rounds` tokens each way, read whole.
            assert_eq!(s.count("pingpong_tokens"), Some(2 * u64::from(pairs * rounds)), "{what}");
            assert_eq!(s.count("exchanges"), Some(u64::from(pairs * rounds)), "{what}");
            // The clients' side, as the metrics see it: every segment once, in order.
            let per_flow = u64::from(rounds) * segments(token);
            assert_eq!(s.delivered, u64::from(pairs) * per_flow, "{what}");
            assert_eq!(s.out_of_order, Some(0), "{what}: TCP hands data over in order");
            assert_eq!(s.flows_complete, pairs, "{what}");
            assert_eq!(s.undelivered, Some(0), "{what}");
            if loss > 0.0 {
                assert!(s.count("tcp_retransmits").unwrap() > 0, "{what}: losses were repaired");
            }
        }
    }
}

#[test]
fn acks_ride_on_the_answer_instead_of_waiting_for_the_delayed_ack_timer() {
    let rounds = 50u32;
    let r = run_json(pingpong(1, 100, rounds, json!({}), one_link()));
    let s = &r.summary;
    let data = 2 * u64::from(rounds); // one segment per token, each way
    let pure_acks = s.packets + s.reverse_packets - data;
    // In ping-pong mode no token's ACK leaves alone: only the client's first token (quick-ACK
    // mode: it has not answered yet) and each end's last token (the FIN is ACKed at once).
    assert_eq!(pure_acks, 3, "packets {} + reverse {} for {data} data segments", s.packets, s.reverse_packets);
    // Without delayed ACKs each token is ACKed on its own before the answer leaves.
    let r = run_json(pingpong(1, 100, rounds, json!({"delayed_ack": false}), one_link()));
    assert_eq!(r.summary.packets + r.summary.reverse_packets - data, data);
    // And no exchange waited for a timer: a round trip is two one-way trips of a small frame
    // (100 bytes of payload, 52 of headers, 38 of Ethernet overhead) over a 50 µs link; the
    // slowest (the first) also waits behind the client's quick ACK (90 bytes) on its link.
    let one_way_ms = ((100.0 + 52.0 + 38.0) * 8.0 / 100e6 + 50e-6) * 1e3;
    let ack_ms = 90.0 * 8.0 / 100e6 * 1e3;
    let (mean, p99) = (s.real("exchange_rtt_mean_ms").unwrap(), s.real("exchange_rtt_p99_ms").unwrap());
    assert!((mean - 2.0 * one_way_ms).abs() < ack_ms, "mean {mean} ms vs {one_way_ms} ms each way");
    assert!((p99 - (2.0 * one_way_ms + ack_ms)).abs() < 1e-6, "p99 {p99} ms vs {one_way_ms} ms each way");
}

#[test]
fn token_throughput_is_the_tokens_bytes_over_the_run() {
    let (pairs, token, rounds) = (2u32, 3000u64, 40u32);
    let r = run_json(pingpong(pairs, token, rounds, json!({}), one_link()));
    let s = &r.summary;
    let bytes = 2.0 * f64::from(pairs * rounds) * token as f64;
    let expected = bytes / s.duration_s / 1e6;
    assert!((s.real("token_mbytes_per_s").unwrap() - expected).abs() < 1e-9 * expected);
    // One link carries each direction at most at its payload rate: 3000 bytes are 3
    // segments, 3000 payload bytes in 3·(52+38) bytes more of wire time.
    let wire_per_token = token as f64 + segments(token) as f64 * 90.0;
    let each_way = s.real("token_mbytes_per_s").unwrap() / 2.0;
    assert!(each_way < 100e6 / 8.0 * token as f64 / wire_per_token / 1e6, "{each_way} MB/s each way");
    // The mean round trip is at least two tokens' serialisation and two link delays.
    let floor_ms = 2.0 * (wire_per_token * 8.0 / 100e6 + 50e-6) * 1e3;
    assert!(s.real("exchange_rtt_mean_ms").unwrap() >= floor_ms);
}

#[test]
fn small_tokens_are_latency_bound_so_pairs_add_up() {
    let rate = |pairs: u32| {
        run_json(pingpong(pairs, 64, 40, json!({}), one_link())).summary.real("token_mbytes_per_s").unwrap()
    };
    let (one, six) = (rate(1), rate(6));
    // Six pairs share one link that each uses a few percent of: nearly six times one pair.
    assert!(six > 5.5 * one && six <= 6.0 * one * 1.001, "1 pair {one}, 6 pairs {six}");
}

#[test]
fn same_scenario_same_result() {
    let v = pingpong(3, 5000, 20, json!({}), json!([{"count": 2, "rate_mbps": 100.0, "delay_us": 50.0, "loss": 0.01}]));
    let strip = |mut r: RunResult| {
        r.summary.wall_s = 0.0;
        r.to_json()
    };
    assert_eq!(strip(run_json(v.clone())), strip(run_json(v)));
}
