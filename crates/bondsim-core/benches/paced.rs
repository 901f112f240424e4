//! Speed and memory of the paced (thesis) model, one run per process.
//!
//! `cargo bench -p bondsim-core --bench paced -- PACKETS [balanced|thesis]`
//! prints one JSON line: packets, events, wall time, packets/s, events/s and
//! the process's peak resident memory. `benchmarks/bench_engine.py` runs it
//! for 10^5 … 10^7 packets beside a SimPy model of the same system.
//!
//! `balanced`: 4 links at 20 ms fed 4 packets per 20 ms tick (queues stay
//! short, so memory shows what grows with packets sent). `thesis`: interface 1
//! at 82 ms, so its queue grows with the run.

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
    let requests = 100u64;
    // S // 1024 + 1 packets per file: pick S so that 100 files make `packets` packets.
    let file_bytes = (packets / requests - 1) * 1024;
    let slow = if shape == "thesis" { 82 } else { 20 };
    let scenario = Scenario::from_json(&format!(
        r#"{{"workload": {{"requests": {requests}, "file_size": {{"kind": "fixed", "bytes": {file_bytes}}}}},
            "bond": {{"mode": "{mode}"}},
            "links": [{{"period_ms": 20}}, {{"period_ms": {slow}}}, {{"period_ms": 20}}, {{"period_ms": 20}}]}}"#
    ))
    .expect("valid scenario");
    let started = Instant::now();
    let result = bondsim_core::run(&scenario).expect("run");
    let wall = started.elapsed().as_secs_f64();
    let s = &result.summary;
    println!(
        "{{\"shape\": \"{shape}\", \"mode\": \"{mode}\", \"packets\": {}, \"events\": {}, \"wall_s\": {wall:.6}, \"packets_per_s\": {:.0}, \"events_per_s\": {:.0}, \"peak_rss_kib\": {}, \"ooo_fraction\": {:.6}}}",
        s.packets,
        s.events,
        s.packets as f64 / wall,
        s.events as f64 / wall,
        peak_rss_kib(),
        s.ooo_fraction
    );
}
