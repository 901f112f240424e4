//! Speed and memory of the engine, one run per process.
//!
//! `cargo bench -p bondsim-core --bench engine -- PACKETS SHAPE MODE` prints
//! one JSON line: packets, events, wall time, packets/s, events/s and the
//! process's peak resident memory. `benchmarks/bench_engine.py` runs it for
//! 10^5 … 10^7 packets beside a SimPy model of the paced system.
//!
//! Shapes: `balanced` — the thesis model, 4 paced links at 20 ms fed 4 packets
//! per 20 ms tick (queues stay short, so memory shows what grows with packets
//! sent); `thesis` — interface 1 at 82 ms, so its queue grows with the run;
//! `rate` — the rate-based link model: 4 × 1 Gbit/s links with 10 µs delay,
//! 16 bulk transfers with a window of 32 packets each; `tcp` — the same bond
//! and transfers over the TCP model (packets = segments the bond sent,
//! retransmissions included; ACKs travel the reverse links); `tcp_rr` — the
//! scenario `tcp_rr.toml` (8 bulk TCP transfers over 3 + 1 slower-wired
//! 1 Gbit/s links, seed 1: reordering), its transfers sized to make `packets` segments.

use std::time::Instant;

use bondsim_core::Scenario;

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l.to_string()))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let packets: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let shape = args.get(1).map(String::as_str).unwrap_or("balanced");
    let mode = args.get(2).map(String::as_str).unwrap_or("rr");
    let scenario = if shape == "tcp" {
        // 16 bulk TCP transfers (Linux defaults: CUBIC, SACK, RACK-TLP, delayed ACKs) over
        // 4 × 1 Gbit/s; file sizes chosen so that they make `packets` segments of 1448 bytes.
        let file_bytes = packets / 16 * 1448;
        Scenario::from_json(&format!(
            r#"{{"workload": {{"requests": 16, "clients": 16, "clients_in_turn": true,
                             "file_size": {{"kind": "fixed", "bytes": {file_bytes}}}}},
                "sender": {{"kind": "tcp"}},
                "bond": {{"mode": "{mode}"}},
                "links": [{{"count": 4, "rate_mbps": 1000, "delay_us": 10}}]}}"#
        ))
    } else if shape == "tcp_rr" {
        // python/bondsim/scenarios/tcp_rr.toml, its 8 files sized so that they make `packets` segments.
        let file_bytes = packets / 8 * 1448;
        Scenario::from_json(&format!(
            r#"{{"name": "tcp_rr", "seed": 1,
                "workload": {{"requests": 8, "clients": 8, "file_size": {{"kind": "fixed", "bytes": {file_bytes}}}}},
                "sender": {{"kind": "tcp"}},
                "bond": {{"mode": "{mode}"}},
                "links": [{{"count": 3, "rate_mbps": 1000, "delay_us": 20}}, {{"rate_mbps": 1000, "delay_us": 120}}]}}"#
        ))
    } else if shape == "rate" {
        // 16 transfers of 1448-byte packets: pick the file size so that they make `packets` packets.
        let file_bytes = packets / 16 * 1448;
        Scenario::from_json(&format!(
            r#"{{"workload": {{"requests": 16, "clients": 16, "clients_in_turn": true,
                             "file_size": {{"kind": "fixed", "bytes": {file_bytes}}}}},
                "sender": {{"kind": "window", "window_pkts": 32, "chunk_bytes": 1448}},
                "bond": {{"mode": "{mode}"}},
                "links": [{{"count": 4, "rate_mbps": 1000, "delay_us": 10}}]}}"#
        ))
    } else {
        let requests = 100u64;
        // S // 1024 + 1 packets per file: pick S so that 100 files make `packets` packets.
        let file_bytes = (packets / requests - 1) * 1024;
        let slow = if shape == "thesis" { 82 } else { 20 };
        Scenario::from_json(&format!(
            r#"{{"workload": {{"requests": {requests}, "file_size": {{"kind": "fixed", "bytes": {file_bytes}}}}},
                "bond": {{"mode": "{mode}"}},
                "links": [{{"period_ms": 20}}, {{"period_ms": {slow}}}, {{"period_ms": 20}}, {{"period_ms": 20}}]}}"#
        ))
    }
    .expect("valid scenario");
    let started = Instant::now();
    let result = bondsim_core::run(&scenario).expect("run");
    let wall = started.elapsed().as_secs_f64();
    let s = &result.summary;
    println!(
        "{{\"shape\": \"{shape}\", \"mode\": \"{mode}\", \"packets\": {}, \"events\": {}, \"wall_s\": {wall:.6}, \"packets_per_s\": {:.0}, \"events_per_s\": {:.0}, \"peak_rss_kib\": {}, \"ooo_fraction\": {:.6}}}",
        s.packets,
        s.events.unwrap(),
        s.packets as f64 / wall,
        s.events.unwrap() as f64 / wall,
        peak_rss_kib(),
        s.ooo_fraction.unwrap()
    );
}
