//! The run guard: no scenario keeps a run going for ever.

use bondsim_core::{Error, Scenario};

#[test]
fn a_run_past_max_events_stops_with_an_error_naming_the_field() {
    let scenario = Scenario::from_json(
        &serde_json::json!({
            "max_events": 1000,
            "workload": {"requests": 1000, "file_size": {"kind": "fixed", "bytes": 1_024_000}},
            "bond": {"mode": "rr"},
            "links": [{"count": 4}]
        })
        .to_string(),
    )
    .unwrap();
    match bondsim_core::run(&scenario) {
        Err(Error::Scenario { path, message }) => {
            assert_eq!(path, "max_events");
            assert!(
                message.contains("raise max_events") && message.contains("more than max_events = 1000"),
                "{message}"
            );
        }
        other => panic!("expected the guard's error, got {:?}", other.map(|r| r.summary.events.unwrap())),
    }
    // The same run with the default guard finishes.
    let mut fine = scenario.clone();
    fine.max_events = bondsim_core::scenario::DEFAULT_MAX_EVENTS;
    let result = bondsim_core::run(&fine).unwrap();
    assert!(result.summary.events.unwrap() > 1000);
}
