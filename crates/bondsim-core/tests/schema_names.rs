//! The names the schema takes are the ones the builders build: the schema checks
//! `sender.tcp_congestion_control` against its own list and imports no builder.

use bondsim_core::scenario::CONGESTION_CONTROLS;
use bondsim_core::transport::tcp::cc;
use bondsim_core::{Error, Scenario};

fn with_cc(name: &str) -> String {
    serde_json::json!({
        "workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 1000}},
        "sender": {"kind": "tcp", "tcp_congestion_control": name},
        "bond": {"mode": "rr"},
        "links": [{"rate_mbps": 100}]
    })
    .to_string()
}

#[test]
fn the_congestion_controls_the_schema_takes_are_the_ones_tcp_builds() {
    for name in CONGESTION_CONTROLS {
        assert!(cc::build(name, true).is_some(), "{name}: in the schema's list, unknown to the registry");
    }
    for name in ["cubic", "reno", "newreno", "vegas", "bbr", "Cubic", ""] {
        let taken = Scenario::from_json(&with_cc(name));
        assert_eq!(taken.is_ok(), cc::build(name, true).is_some(), "{name}: {taken:?}");
        if let Err(Error::Scenario { path, message }) = taken {
            assert_eq!(path, "sender.tcp_congestion_control");
            assert_eq!(message, bondsim_core::bond::error::one_of(CONGESTION_CONTROLS, name));
            assert!(message.starts_with("must be one of `cubic`, `reno`, `bbr`, got "), "{message}");
        }
    }
}
