//! The thesis's controlled experiment (Figure 9) from Rust: round-robin vs
//! load-based over 4 interfaces, interface 1 slowed to 82 ms.
//!
//! `cargo run --release -p bondsim-core --example thesis`

use bondsim_core::Scenario;

fn main() {
    println!(
        "{:>8} {:>12} {:>8} {:>12} {:>8} {:>10}",
        "requests", "scheduler", "ooo", "ooo_frac", "makespan", "events"
    );
    for requests in [10, 20, 30, 40, 50, 100] {
        for mode in ["rr", "lb"] {
            let scenario = Scenario::from_json(&format!(
                r#"{{"workload": {{"requests": {requests}, "clients": 5000, "file_size": {{"kind": "fixed", "bytes": 102400}}}},
                    "bond": {{"mode": "{mode}"}},
                    "links": [{{"period_ms": 20}}, {{"period_ms": 82}}, {{"period_ms": 20}}, {{"period_ms": 20}}]}}"#
            ))
            .expect("valid scenario");
            let s = bondsim_core::run(&scenario).expect("run").summary;
            println!(
                "{requests:>8} {:>12} {:>8} {:>12.4} {:>8.1} {:>10}",
                s.scheduler,
                s.out_of_order.unwrap(),
                s.ooo_fraction.unwrap(),
                s.makespan_s,
                s.events.unwrap()
            );
        }
    }
}
